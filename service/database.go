package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/pgcluster"
	"github.com/backtestd/backtestd/internal/store"
)

// database is an open, migrated database and, when DATABASE_URL was unset, the private
// cluster it lives in (stopped again by Close if this process started it).
type database struct {
	*store.Store
	URL     string
	cluster *pgcluster.Cluster
	started bool
	log     *slog.Logger
}

// openDatabase connects to cfg.DatabaseURL, or starts a private cluster in cfg.DataDir,
// and applies migrations.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (*database, error) {
	d := &database{URL: cfg.DatabaseURL, log: log}
	if d.URL == "" {
		if err := d.startCluster(ctx, cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if err := store.Migrate(ctx, d.URL, log); err != nil {
		d.stopCluster()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	s, err := store.Open(ctx, d.URL, 0)
	if err != nil {
		d.stopCluster()
		return nil, err
	}
	d.Store = s
	return d, nil
}

func (d *database) startCluster(ctx context.Context, dataDir string) error {
	c, err := pgcluster.New(filepath.Join(dataDir, "pg"))
	if err != nil {
		if errors.Is(err, pgcluster.ErrNoServer) {
			return err // already one clear line
		}
		return fmt.Errorf("private cluster: %w", err)
	}
	d.log.Info("DATABASE_URL is unset: using a private PostgreSQL cluster", "dir", c.Dir)
	started, err := c.Start(ctx)
	if err != nil {
		return fmt.Errorf("private cluster: %w", err)
	}
	d.cluster, d.started = c, started
	// The service's own database inside the cluster.
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		d.stopCluster()
		return fmt.Errorf("private cluster: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'backtestd')").Scan(&exists); err != nil {
		d.stopCluster()
		return fmt.Errorf("private cluster: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE backtestd"); err != nil {
			d.stopCluster()
			return fmt.Errorf("private cluster: create database: %w", err)
		}
	}
	d.URL = c.URL("backtestd")
	d.log.Info("private cluster ready", "url", d.URL)
	return nil
}

// Close closes the pool and stops the private cluster if this process started it.
func (d *database) Close() {
	if d.Store != nil {
		d.Store.Close()
	}
	d.stopCluster()
}

func (d *database) stopCluster() {
	if d.cluster == nil || !d.started {
		return
	}
	if err := d.cluster.Stop(context.Background()); err != nil {
		d.log.Error("stop private cluster", "err", err)
		return
	}
	d.log.Info("private cluster stopped")
}
