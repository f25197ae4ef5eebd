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
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/httpapi"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/strategy"
	"github.com/backtestd/backtestd/internal/strategydir"
)

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, _, err := config.Load("serve", args, getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	// The built-in data source (the default of a task's data_source) and, unless
	// SAMPLE_DATA=false, its generated sample symbols: created once, skipped when present.
	if err := marketdata.EnsureBuiltin(ctx, db.Store, cfg.SampleData); err != nil {
		return fmt.Errorf("built-in data source: %w", err)
	}
	// Strategy code is loaded and run only in runner processes from this pool.
	runners, err := newRunners(cfg, log)
	if err != nil {
		return err
	}
	defer runners.Close()
	strategies := strategy.NewService(db.Store, runners, log)
	if len(cfg.StrategyDirs) > 0 {
		sw, err := strategydir.Start(ctx, cfg.StrategyDirs, strategies, strategydir.Options{Logger: log})
		if err != nil {
			return err
		}
		defer sw.Close()
	}

	// Tasks: River workers unless -workers 0, and the one LISTEN connection feeding the
	// WebSocket hub. Shutdown order: HTTP, River (soft, then hard), listener, pools.
	taskRT, err := startTaskRuntime(ctx, cfg, db.URL, runners, log, true)
	if err != nil {
		return err
	}
	hub := events.NewHub()
	stopListener := startListener(db.URL, hub, taskRT.svc, log)

	api := httpapi.New(apiConfig(cfg), httpapi.Deps{
		Store:      db.Store,
		Logger:     log,
		Tasks:      taskRT.svc,
		Hub:        hub,
		Strategies: strategies,
		Data:       marketdata.NewService(db.Store, taskRT.client),
		Results:    results.NewService(db.Store.Pool),
	})
	err = listenAndServe(ctx, cfg.Listen, newHTTPServer(cfg, api), log)
	taskRT.stopWorkers()
	stopListener()
	taskRT.close()
	return err
}

// apiConfig is the API's share of the settings.
func apiConfig(cfg config.Config) httpapi.Config {
	return httpapi.Config{
		BasePath:          cfg.BasePath,
		CORSOrigins:       cfg.CORSOrigins,
		WSMaxConns:        cfg.WSMaxConns,
		WSMaxConnsPerAddr: cfg.WSMaxConnsPerAddr,
		WSMsgRate:         cfg.WSMsgRate,
		WSMsgBurst:        cfg.WSMsgBurst,
	}
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
