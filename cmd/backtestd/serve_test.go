package main

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/httpapi"
)

func TestNewHTTPServer(t *testing.T) {
	t.Parallel()
	noEnv := func(string) string { return "" }
	tests := []struct {
		name string
		args []string
	}{
		{"defaults", nil},
		{"flags", []string{"-http-read-header-timeout", "3s", "-http-read-timeout", "4s", "-http-idle-timeout", "5s", "-http-max-header-bytes", "2048",
			"-ws-max-conns", "7", "-ws-max-conns-per-addr", "2", "-ws-msg-rate", "1.5", "-ws-msg-burst", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := config.Load("serve", tt.args, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			srv := newHTTPServer(cfg, http.NotFoundHandler())
			if srv.ReadHeaderTimeout != cfg.HTTPReadHeaderTimeout || srv.ReadTimeout != cfg.HTTPReadTimeout ||
				srv.IdleTimeout != cfg.HTTPIdleTimeout || srv.MaxHeaderBytes != cfg.HTTPMaxHeaderBytes {
				t.Errorf("server %+v does not carry config %+v", srv, cfg)
			}
			if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
				t.Errorf("a limit is off: %+v", srv)
			}
			if srv.WriteTimeout != 0 {
				t.Errorf("WriteTimeout %v would cut WebSockets and long exports", srv.WriteTimeout)
			}
		})
	}
}

// TestHTTPServerLimits serves the API with short limits and checks that they end slow and
// idle connections, but not WebSockets.
func TestHTTPServerLimits(t *testing.T) {
	t.Parallel()
	const limit = time.Second
	cfg, _, err := config.Load("serve", []string{"-http-read-header-timeout", limit.String(), "-http-read-timeout", limit.String(),
		"-http-idle-timeout", limit.String(), "-http-max-header-bytes", "1024"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	mux.Handle("/", httpapi.New(httpapi.Config{}, httpapi.Deps{Logger: quiet}))
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(cfg, mux)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	// open sends raw bytes and returns the connection.
	open := func(t *testing.T, raw string) net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// closedByServer reads r until the server ends the connection, failing the test when
	// it is still open after a deadline far beyond limit.
	closedByServer := func(t *testing.T, c net.Conn, r io.Reader) string {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(r)
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatalf("the server still holds the connection (read %q)", b)
		}
		return string(b)
	}

	t.Run("slow headers are cut off", func(t *testing.T) {
		t.Parallel()
		c := open(t, "GET /upload HTTP/1.1\r\nHost: x\r\n")
		closedByServer(t, c, c)
	})
	t.Run("a slow body is cut off", func(t *testing.T) {
		t.Parallel()
		c := open(t, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
		if got := closedByServer(t, c, c); strings.Contains(got, " 204 ") {
			t.Fatalf("a partial body was served: %q", got)
		}
	})
	t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
		t.Parallel()
		c := open(t, "GET /upload HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Close {
			t.Fatalf("first request: %d, close %v", resp.StatusCode, resp.Close)
		}
		closedByServer(t, c, br)
	})
	t.Run("large headers are refused", func(t *testing.T) {
		t.Parallel()
		req, _ := http.NewRequest("GET", "http://"+addr+"/upload", nil)
		req.Header.Set("X-Big", strings.Repeat("x", 16<<10))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d, want 431", resp.StatusCode)
		}
	})
	t.Run("a WebSocket outlives the read and idle timeouts", func(t *testing.T) {
		t.Parallel()
		conn, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws/logs", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		read := func() string {
			t.Helper()
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			var f struct{ Event string }
			if err := conn.ReadJSON(&f); err != nil {
				t.Fatal(err)
			}
			return f.Event
		}
		if ev := read(); ev != "connected" {
			t.Fatalf("first frame %q", ev)
		}
		time.Sleep(3 * limit) // silent well past every HTTP timeout
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"event":"ping"}`)); err != nil {
			t.Fatal(err)
		}
		if ev := read(); ev != "pong" {
			t.Fatalf("after the wait: %q", ev)
		}
	})
}
