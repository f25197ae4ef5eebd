package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/service"
)

func init() {
	extraCommands["worker"] = workerCommand
}

// serve is `backtestd serve`: the API, the WebSocket hub and (unless -workers 0) workers.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, _, err := config.Load("serve", args, getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	svc, err := service.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	// Shutdown order: HTTP, then the service (workers softly, then hard; listener; pools).
	err = listenAndServe(ctx, cfg.Listen, newHTTPServer(cfg, svc.Handler()), log)
	svc.Close()
	return err
}

// workerCommand is `backtestd worker`: River workers only, no HTTP.
func workerCommand(ctx context.Context, args []string, getenv func(string) string, _, stderr io.Writer) error {
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
	<-ctx.Done()
	log.Info("worker stopping")
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

// listenAndServe serves with srv on addr until ctx ends, then shuts down gracefully.
func listenAndServe(ctx context.Context, addr string, srv *http.Server, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving", "addr", "http://"+displayAddr(ln.Addr()))
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
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
