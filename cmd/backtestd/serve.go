package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/httpapi"
	"github.com/backtestd/backtestd/service"
)

// serve is `backtestd serve`: the API, the WebSocket hub and (unless -workers 0) workers.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, _, err := config.Load("serve", args, getenv)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, cfg, newLogger(stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
}

// app is `backtestd serve` as a value, so a test boots the whole program on ":0": openApp
// builds the service and binds the listener, Addr says where it listens, Run serves until
// ctx ends, Close stops HTTP first, then the service (workers softly, then hard; the
// listener; the pools).
type app struct {
	svc *service.Service
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

func openApp(ctx context.Context, cfg config.Config, log *slog.Logger) (*app, error) {
	svc, err := service.New(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		svc.Close()
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("listen %s: %w (another program uses the port; choose another with LISTEN_ADDR=127.0.0.1:8081 or --listen)", cfg.Listen, err)
		}
		return nil, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	srv := newHTTPServer(cfg, svc.Handler())
	// Requests with ambiguous framing (Content-Length and Transfer-Encoding) are refused
	// and their connection closed (see httpapi.GuardFraming).
	return &app{svc: svc, srv: srv, ln: httpapi.GuardFraming(srv, ln), log: log}, nil
}

// Addr is the address the app listens on, with the port the system chose for ":0".
func (a *app) Addr() net.Addr { return a.ln.Addr() }

// Run serves until ctx ends, then shuts HTTP down gracefully (10 s for requests in flight).
func (a *app) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(a.ln) }()
	a.log.Info("serving", "addr", "http://"+displayAddr(a.Addr()))
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// Close stops the service; the HTTP server is closed too when Run did not shut it down.
func (a *app) Close() {
	_ = a.srv.Close()
	a.svc.Close()
}

// worker is `backtestd worker`: River workers only, no HTTP.
func worker(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, _, err := config.Load("worker", args, getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	svc, err := service.NewWorker(ctx, cfg, log)
	if err != nil {
		return err
	}
	log.Info("worker running", "workers", cfg.Workers)
	var metrics *http.Server
	if cfg.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", svc.MetricsHandler())
		metrics = &http.Server{Addr: cfg.MetricsListen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		ln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			svc.Close()
			return fmt.Errorf("metrics: %w", err)
		}
		log.Info("serving /metrics", "addr", ln.Addr().String())
		go func() {
			if err := metrics.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server", "err", err)
			}
		}()
	}
	<-ctx.Done()
	log.Info("worker stopping")
	if metrics != nil {
		_ = metrics.Close()
	}
	svc.Close()
	return nil
}

// migrate is `backtestd migrate`: apply the migrations and exit.
func migrate(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, _, err := config.Load("migrate", args, getenv)
	if err != nil {
		return err
	}
	return service.Migrate(ctx, cfg, newLogger(stderr, cfg.LogLevel))
}

// newHTTPServer is the server for h with the configured limits, so that a client sending
// slowly, or keeping a connection open doing nothing, cannot hold it (and its file
// descriptor) for long. ReadTimeout bounds reading the request, headers and body; once
// the body is read net/http clears the deadline, and upgrading to a WebSocket clears it
// too (httpapi sets the socket's own read deadlines and pings), so neither long responses
// nor WebSockets are cut by it. There is deliberately no WriteTimeout: it would end long
// exports and every WebSocket, whose writes carry their own deadlines.
func newHTTPServer(cfg config.Config, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout,
		ReadTimeout:       cfg.HTTPReadTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		MaxHeaderBytes:    cfg.HTTPMaxHeaderBytes,
	}
}

func displayAddr(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return fmt.Sprintf("localhost:%d", tcp.Port)
	}
	return a.String()
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
