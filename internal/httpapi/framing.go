package httpapi

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// HTTP/1.1 request smuggling lives in ambiguous framing: a request whose body length two
// parsers read differently. net/http already refuses several Content-Length headers that
// differ (400, connection closed) but serves a request with both Content-Length and
// Transfer-Encoding: chunked by the chunked framing and keeps the connection open, after
// deleting Content-Length from the header a handler sees. RFC 9112 (section 6.1) says a
// server must close the connection after answering such a request, as a proxy in front
// may have read its body by the other length and sent what follows as a second request.
//
// GuardFraming watches the bytes of each connection: it follows the requests' framing
// (headers, then a body by Content-Length or by chunks) and notes each request whose
// header holds both Content-Length and Transfer-Encoding, or Content-Length values that
// differ. The API (checkFraming) answers such a request 400 with Connection: close, so
// net/http closes the connection after the answer and nothing sent behind it is served.
// Where it cannot follow a connection (an Upgrade, a Transfer-Encoding other than
// chunked, an overlong line), it answers any later request on that connection the same
// way rather than serve a request it could not check.

// framingLineMax bounds a header or chunk-size line the tracker keeps; net/http refuses
// header blocks over the server's MaxHeaderBytes, so a longer line is already refused.
const framingLineMax = 64 << 10

// GuardFraming wraps l so that the API built by New refuses requests with ambiguous
// framing, and sets srv.ConnContext (keeping one already set) to hand each connection's
// record to its requests. Serve srv on the listener it returns.
func GuardFraming(srv *http.Server, l net.Listener) net.Listener {
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		if fc, ok := c.(*framedConn); ok {
			ctx = context.WithValue(ctx, framedConnKey{}, fc)
		}
		return ctx
	}
	return framingListener{l}
}

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framedConn{Conn: c, t: framingTracker{ambiguous: map[int]string{}, offAfter: -1}}, nil
}

type framedConnKey struct{}

// framedConn is a connection whose read bytes feed a framingTracker.
type framedConn struct {
	net.Conn
	mu     sync.Mutex
	t      framingTracker
	served int // requests the API has been handed on this connection, in order
}

func (c *framedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.t.feed(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// next says why the next request the API is handed on c must be refused ("" if not).
// net/http hands a connection's requests to the handler one at a time, in order, so the
// n-th call is the n-th request the tracker read (an "OPTIONS *", which net/http answers
// itself, is not counted by either).
func (c *framedConn) next() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.served
	c.served++
	if why, bad := c.t.ambiguous[i]; bad {
		return why
	}
	if c.t.offAfter >= 0 && i > c.t.offAfter {
		return "the service could not follow this connection's framing after an earlier request (" + c.t.offWhy + ")"
	}
	return ""
}

type framingCheckedKey struct{}

// checkFraming answers 400 with Connection: close to a request GuardFraming found
// ambiguous. Requests on connections GuardFraming does not watch (a program that mounts
// the API in its own server) pass.
func checkFraming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		fc, ok := ctx.Value(framedConnKey{}).(*framedConn)
		if !ok || ctx.Value(framingCheckedKey{}) != nil || r.ProtoMajor != 1 {
			next.ServeHTTP(w, r)
			return
		}
		if why := fc.next(); why != "" {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusBadRequest, map[string]string{"detail": "Bad Request: ambiguous message framing: " + why + "; the connection is closed"})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, framingCheckedKey{}, true)))
	})
}

type framingState int

const (
	inHeader framingState = iota
	inBody
	inChunkSize
	inChunkData
	inTrailer
	off
)

// framingTracker follows HTTP/1.1 requests through a connection's bytes.
type framingTracker struct {
	state     framingState
	line      []byte
	remaining int64 // bytes left of a body or chunk (with its CRLF)

	// the header block being read
	started, upgrade, optionsStar bool
	lengths, encodings            []string

	requests  int            // header blocks read (requests net/http hands on)
	ambiguous map[int]string // request index → why its framing is ambiguous
	offAfter  int            // the last request before the tracker stopped following; -1
	offWhy    string
}

// stop gives up following the connection: every request from the next one the tracker
// has not finished reading the header of is refused.
func (t *framingTracker) stop(why string) {
	t.state = off
	t.offAfter = t.requests - 1
	t.offWhy = why
}

func (t *framingTracker) feed(p []byte) {
	for len(p) > 0 && t.state != off {
		switch t.state {
		case inBody, inChunkData:
			n := min(int64(len(p)), t.remaining)
			t.remaining -= n
			p = p[n:]
			if t.remaining == 0 {
				if t.state == inBody {
					t.state = inHeader
				} else {
					t.state = inChunkSize
				}
			}
		default:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				t.line = append(t.line, p...)
				p = nil
			} else {
				t.line = append(t.line, p[:i]...)
				p = p[i+1:]
			}
			if len(t.line) > framingLineMax {
				// The request being read, if any, and all after it are refused.
				t.stop("a line over 64 KiB")
				return
			}
			if i >= 0 {
				line := string(bytes.TrimSuffix(t.line, []byte{'\r'}))
				t.line = t.line[:0]
				t.endLine(line)
			}
		}
	}
}

func (t *framingTracker) endLine(line string) {
	switch t.state {
	case inTrailer:
		if line == "" {
			t.state = inHeader
		}
	case inChunkSize:
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		switch {
		case err != nil || n < 0:
			t.stop("a malformed chunk size")
		case n == 0:
			t.state = inTrailer
		default:
			t.state, t.remaining = inChunkData, n+2 // the chunk and its CRLF
		}
	case inHeader:
		if !t.started {
			if line == "" {
				return // empty lines before a request line are allowed
			}
			t.started = true
			t.optionsStar = strings.HasPrefix(line, "OPTIONS * ")
			return
		}
		if line != "" {
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimSpace(value)
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "content-length":
				t.lengths = append(t.lengths, value)
			case "transfer-encoding":
				t.encodings = append(t.encodings, value)
			case "upgrade":
				t.upgrade = true
			}
			return
		}
		t.endHeader()
	}
}

// endHeader decides the framing of the request whose header block just ended.
func (t *framingTracker) endHeader() {
	idx := t.requests
	if !t.optionsStar { // net/http answers "OPTIONS *" itself: the API never sees it
		t.requests++
	}
	lengths, encodings, upgrade, optionsStar := t.lengths, t.encodings, t.upgrade, t.optionsStar
	t.started, t.upgrade, t.optionsStar, t.lengths, t.encodings = false, false, false, nil, nil
	why := ""
	switch {
	case len(lengths) > 0 && len(encodings) > 0:
		why = "the request has both Content-Length and Transfer-Encoding"
	case len(lengths) > 1:
		for _, l := range lengths[1:] {
			if l != lengths[0] {
				why = "the request has Content-Length headers that differ"
			}
		}
	}
	if why != "" {
		if optionsStar { // not ours to refuse: refuse the next request instead
			t.stop(why)
			return
		}
		t.ambiguous[idx] = why
	}
	switch {
	case upgrade:
		t.stop("an Upgrade request")
	case len(encodings) > 0:
		codings := strings.Split(strings.Join(encodings, ","), ",")
		if !strings.EqualFold(strings.TrimSpace(codings[len(codings)-1]), "chunked") {
			t.stop("a Transfer-Encoding other than chunked")
			return
		}
		t.state = inChunkSize
	case len(lengths) > 0:
		n, err := strconv.ParseInt(lengths[0], 10, 64)
		if err != nil || n < 0 {
			t.stop("a malformed Content-Length")
			return
		}
		if n > 0 {
			t.state, t.remaining = inBody, n
		}
	}
}
