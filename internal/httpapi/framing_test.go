package httpapi

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveRaw serves the API (without a database: the routes used here need none) on a
// loopback port, with GuardFraming when guard is set, and returns its address.
func serveRaw(t *testing.T, guard bool, basePath string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: New(Config{BasePath: basePath}, Deps{Logger: quietLogger()}), ReadHeaderTimeout: 10 * time.Second}
	served := ln
	if guard {
		served = GuardFraming(srv, ln)
	}
	go func() { _ = srv.Serve(served) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// exchange writes raw to a new connection and reads every response the server sends
// until it closes the connection or goes quiet for a second (then closed is false).
func exchange(t *testing.T, addr, raw string) (resps []*http.Response, bodies []string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for {
		// Generous for the first answer; a second of silence afterwards means the server
		// has nothing more to say and keeps the connection open.
		wait := time.Second
		if len(resps) == 0 {
			wait = 30 * time.Second
		}
		_ = c.SetReadDeadline(time.Now().Add(wait))
		if _, err := br.Peek(1); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return resps, bodies, false
			}
			return resps, bodies, true // EOF or reset: closed
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading response %d: %v", len(resps)+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resps, bodies = append(resps, resp), append(bodies, string(b))
	}
}

// TestAmbiguousFraming sends requests over raw TCP. What net/http does alone (several
// differing Content-Length: 400 and close; Content-Length with Transfer-Encoding: served,
// connection kept, the request smuggled behind it answered) and what GuardFraming adds:
// 400 with Connection: close, and nothing behind it answered.
func TestAmbiguousFraming(t *testing.T) {
	t.Parallel()
	const next = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" // the request "smuggled" behind
	cases := []struct {
		name   string
		guard  bool
		base   string // BASE_PATH
		raw    string
		status []int // the answers, in order
		closed bool
		detail string // in the last answer's body
	}{
		{"net/http alone: both lengths are served and the next request too", false, "",
			"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]int{404, 200}, false, ""},
		{"net/http alone: differing lengths are 400 and closed", false, "",
			"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello" + next,
			[]int{400}, true, ""},
		{"Content-Length and Transfer-Encoding", true, "",
			"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]int{400}, true, "both Content-Length and Transfer-Encoding"},
		{"Transfer-Encoding first, lower case", true, "",
			"POST /api/backtests HTTP/1.1\r\nHost: 127.0.0.1\r\ntransfer-encoding: chunked\r\ncontent-length: 40\r\n\r\n0\r\n\r\n" + next,
			[]int{400}, true, "ambiguous message framing"},
		{"differing lengths", true, "",
			"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello" + next,
			[]int{400}, true, ""},
		{"an ambiguous request behind clean ones", true, "",
			"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello" +
				"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n" +
				"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]int{404, 404, 400}, true, "both Content-Length"},
		{"clean requests keep the connection", true, "",
			"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello" +
				"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + next,
			[]int{404, 404, 200}, false, ""},
		{"after an Upgrade that was not taken the next request is refused", true, "",
			"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: upgrade\r\nUpgrade: foo\r\n\r\n" + next,
			[]int{200, 400}, true, "could not follow"},
		{"under BASE_PATH, each request counted once, outside it too", true, "/bt",
			"POST /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi" +
				"GET /bt/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" +
				"POST /bt/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]int{404, 200, 400}, true, "both Content-Length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resps, bodies, closed := exchange(t, serveRaw(t, c.guard, c.base), c.raw)
			var got []int
			for _, r := range resps {
				got = append(got, r.StatusCode)
			}
			if !equalInts(got, c.status) || closed != c.closed {
				t.Fatalf("answers %v, closed %v; want %v, closed %v (%q)", got, closed, c.status, c.closed, bodies)
			}
			last := resps[len(resps)-1]
			// ReadResponse turns "Connection: close" into Close.
			if c.closed && (!last.Close || !strings.Contains(bodies[len(bodies)-1], c.detail)) {
				t.Errorf("last answer: Connection: close %v, body %q; want close and %q", last.Close, bodies[len(bodies)-1], c.detail)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
