// Package service builds the backtest service for a Go program that mounts it in its own
// HTTP server: the API and WebSocket handler (the same as `backtestd serve`'s, under a
// path prefix of your choice), the backtest workers and the database they share. It is
// what `backtestd serve` and `backtestd worker` run.
//
// Strategy code runs in runner processes that are the program itself, re-executed: the
// program's main must call RunnerMain before anything else.
//
//	func main() {
//		service.RunnerMain()
//		cfg, err := service.LoadConfig(os.Getenv)
//		...
//		cfg.BasePath = "/bt"
//		svc, err := service.New(ctx, cfg, slog.Default())
//		...
//		defer svc.Close()
//		mux.Handle("/bt/", svc.Handler())
//	}
package service

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/httpapi"
	"github.com/backtestd/backtestd/internal/lookahead"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results"
	"github.com/backtestd/backtestd/internal/retention"
	"github.com/backtestd/backtestd/internal/runner"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
	"github.com/backtestd/backtestd/internal/strategydir"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is the service's settings: those of `backtestd serve`, each documented with its
// flag and environment variable in docs/configuration.md. Start from
// LoadConfig.
type Config = config.Config

// LoadConfig returns the settings `backtestd serve` would run with given this environment
// (getenv is usually os.Getenv): the defaults, overridden by the environment variables.
func LoadConfig(getenv func(string) string) (Config, error) {
	cfg, _, err := config.Load("service", nil, getenv)
	return cfg, err
}

// RunnerMain makes this process a runner when the service started it as one: it runs
// strategy code as told and exits. Otherwise it returns at once. Call it first in main.
func RunnerMain() {
	if runner.IsChild() {
		os.Exit(runner.ChildMain())
	}
}

// Service is a running service: its database (migrated), runner processes, workers
// (unless Config.Workers is 0), the LISTEN connection feeding WebSocket clients and the
// HTTP handler. Close stops it.
type Service struct {
	db      *database
	runners *runner.Pool
	watcher *strategydir.Watcher
	tasks   *taskRuntime
	stopHub func()
	handler http.Handler
	metrics *prometheus.Registry
	log     *slog.Logger
}

// New opens the database (cfg.DatabaseURL, or a private cluster in cfg.DataDir when it is
// empty), applies migrations, loads the built-in data source and starts the workers. The
// handler serves under cfg.BasePath. A nil log is slog.Default().
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Service, error) {
	log = orDefault(log)
	s, err := open(ctx, cfg, log, true)
	if err != nil {
		return nil, err
	}
	strategies := strategy.NewService(s.db.Store, s.runners, log)
	if len(cfg.StrategyDirs) > 0 {
		if s.watcher, err = strategydir.Start(ctx, cfg.StrategyDirs, strategies, strategydir.Options{Logger: log}); err != nil {
			s.Close()
			return nil, err
		}
	}
	hub := events.NewHub()
	s.stopHub = startListener(s.db.URL, hub, s.tasks.svc, log)
	accounts, err := accountsFor(ctx, cfg, s.db.Store, log)
	if err != nil {
		s.Close()
		return nil, err
	}
	data := marketdata.NewService(s.db.Store, s.tasks.client)
	res := results.NewService(s.db.Store.Pool)
	s.handler = httpapi.New(apiConfig(cfg), httpapi.Deps{
		Auth:    accounts,
		Store:   s.db.Store,
		Logger:  log,
		Tasks:   s.tasks.svc,
		Studies: s.tasks.studies,
		Paths:   s.tasks.paths,
		Lookahead: lookahead.New(lookahead.Config{Runner: s.runners, RunTimeout: cfg.RunTimeout,
			MemoryLimit: uint64(cfg.RunMemoryMB) << 20}, s.db.Store, s.tasks.svc),
		Hub:        hub,
		Strategies: strategies,
		Data:       data,
		Results:    res,
		Report:     report.New(res, data.Bars),
		Metrics:    s.metrics,
	})
	return s, nil
}

// NewWorker is New without the HTTP side: workers only (cfg.Workers must be at least 1),
// as `backtestd worker` runs. Its Handler is nil.
func NewWorker(ctx context.Context, cfg Config, log *slog.Logger) (*Service, error) {
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("worker: -workers must be at least 1")
	}
	return open(ctx, cfg, orDefault(log), false)
}

func open(ctx context.Context, cfg Config, log *slog.Logger, serving bool) (*Service, error) {
	s := &Service{log: log}
	var err error
	if s.db, err = openDatabase(ctx, cfg, log); err != nil {
		return nil, err
	}
	if serving {
		// The built-in data source (the default of a task's data_source) and, unless
		// SampleData is false, its generated sample symbols: created once, skipped when
		// present, before any worker runs a task.
		if err := marketdata.EnsureBuiltin(ctx, s.db.Store, cfg.SampleData); err != nil {
			s.Close()
			return nil, fmt.Errorf("built-in data source: %w", err)
		}
	}
	// Strategy code is loaded and run only in runner processes from this pool.
	if s.runners, err = newRunners(cfg, log, serving); err != nil {
		s.Close()
		return nil, err
	}
	if s.tasks, err = startTaskRuntime(ctx, cfg, s.db.URL, s.runners, log); err != nil {
		s.Close()
		return nil, err
	}
	s.metrics = s.newRegistry(cfg.Workers, serving)
	return s, nil
}

// Migrate applies the database migrations (starting the private cluster when
// cfg.DatabaseURL is empty) and returns.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	db, err := openDatabase(ctx, cfg, orDefault(log))
	if err != nil {
		return err
	}
	db.Close()
	return nil
}

// Handler is the API and WebSocket handler, serving under Config.BasePath.
func (s *Service) Handler() http.Handler { return s.handler }

// Close stops the service after the HTTP server using Handler has shut down: the workers
// stop taking jobs, running backtests may finish within Config.ShutdownGrace and the rest
// go back to the queue for another worker; then the listener, the runner processes and the
// database (a private cluster this process started is stopped).
func (s *Service) Close() {
	if s.tasks != nil {
		s.tasks.stopWorkers()
	}
	if s.stopHub != nil {
		s.stopHub()
	}
	if s.tasks != nil {
		s.tasks.close()
	}
	if s.watcher != nil {
		s.watcher.Close()
	}
	if s.runners != nil {
		s.runners.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
}

func orDefault(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}

// accountsFor is the accounts service when accounts are on (Config.AccountsOn), nil when
// off. It refuses to start with accounts on and no admin who could sign in, and with
// CORS_ORIGINS=* (any page would be let in with a user's credentials).
func accountsFor(ctx context.Context, cfg Config, st *store.Store, log *slog.Logger) (*auth.Service, error) {
	accounts := auth.NewService(st, cfg.SessionTTL)
	has, err := accounts.HasUsers(ctx)
	if err != nil {
		return nil, err
	}
	if !cfg.AccountsOn(has) {
		if !cfg.Loopback() {
			log.Warn("ACCOUNTS ARE OFF (AUTH=off) on an address beyond loopback: anyone who can reach " + cfg.Listen + " can read, change and delete every strategy and result")
		}
		return nil, nil
	}
	if len(cfg.CORSOrigins) == 1 && cfg.CORSOrigins[0] == "*" {
		return nil, fmt.Errorf("CORS_ORIGINS=* is refused with accounts on: list the origins allowed to call the API, or leave it empty for none")
	}
	admins, err := accounts.ActiveAdmins(ctx)
	if err != nil {
		return nil, err
	}
	if admins == 0 {
		why := "AUTH=on"
		if cfg.Auth == "auto" {
			why = "listening on " + cfg.Listen + ", beyond loopback,"
		}
		return nil, fmt.Errorf("accounts are on (%s) but no admin can sign in: add one with `backtestd user add --name NAME --role admin`, or listen on 127.0.0.1, or set AUTH=off to run without accounts (only on a trusted network)", why)
	}
	log.Info("accounts on: requests need a signed-in user or an API token", "admins", admins)
	return accounts, nil
}

// Accounts opens the database (migrated) for `backtestd user` and `backtestd token`: the
// accounts service, and a function that closes what was opened.
func Accounts(ctx context.Context, cfg Config, log *slog.Logger) (*auth.Service, func(), error) {
	db, err := openDatabase(ctx, cfg, orDefault(log))
	if err != nil {
		return nil, nil, err
	}
	return auth.NewService(db.Store, cfg.SessionTTL), db.Close, nil
}

// apiConfig is the API's share of the settings.
func apiConfig(cfg config.Config) httpapi.Config {
	return httpapi.Config{
		BasePath:          cfg.BasePath,
		CORSOrigins:       cfg.CORSOrigins,
		AllowedHosts:      cfg.AllowedHosts,
		WSMaxConns:        cfg.WSMaxConns,
		WSMaxConnsPerAddr: cfg.WSMaxConnsPerAddr,
		WSMsgRate:         cfg.WSMsgRate,
		WSMsgBurst:        cfg.WSMsgBurst,
		ReadMemory:        int64(cfg.ReadMemoryMB) << 20,
	}
}

// ImportResult counts what an import did.
type ImportResult = marketdata.ImportResult

// Import stores bars of symbol in a data source, all or nothing, as POST
// /api/data/{source}/{symbol}/bars does (the `backtestd import` command): bars new to the
// symbol are added and stored ones updated; the symbol is registered (named name) when
// new. tf is the bars' timeframe, inferred from their spacing when empty. read parses the
// bars, reading times of day without an offset in the time zone named zone (the symbol's
// when empty, UTC for a new symbol).
func Import(ctx context.Context, cfg Config, log *slog.Logger, source, symbol, name, tf, zone string, read func(*time.Location) ([]engine.Bar, error)) (ImportResult, error) {
	db, err := openDatabase(ctx, cfg, orDefault(log))
	if err != nil {
		return ImportResult{}, err
	}
	defer db.Close()
	if err := marketdata.EnsureBuiltin(ctx, db.Store, false); err != nil {
		return ImportResult{}, fmt.Errorf("built-in data source: %w", err)
	}
	md := marketdata.NewService(db.Store, nil)
	loc, err := md.ImportZone(ctx, source, symbol, zone)
	if err != nil {
		return ImportResult{}, err
	}
	bars, err := read(loc)
	if err != nil {
		return ImportResult{}, err
	}
	return md.Import(ctx, source, symbol, name, tf, loc, bars)
}

// CreateBIRole creates or updates a PostgreSQL login role that reads only the bi_* views,
// with the limits of o (`backtestd bi-role create`), and returns the views it may read.
func CreateBIRole(ctx context.Context, cfg Config, log *slog.Logger, name, password string, o store.BIRoleOptions) (store.BIRole, error) {
	db, err := openDatabase(ctx, cfg, orDefault(log))
	if err != nil {
		return store.BIRole{}, err
	}
	defer db.Close()
	return db.Store.CreateBIRole(ctx, name, password, o)
}

// Prune deletes finished, unpinned runs and studies as o says (`backtestd prune`; see
// internal/retention).
func Prune(ctx context.Context, cfg Config, log *slog.Logger, o retention.Options) (retention.Report, error) {
	db, err := openDatabase(ctx, cfg, orDefault(log))
	if err != nil {
		return retention.Report{}, err
	}
	defer db.Close()
	return retention.New(db.Store, log).Prune(ctx, o)
}
