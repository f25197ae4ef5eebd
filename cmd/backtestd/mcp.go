package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/mcpserver"
	"github.com/backtestd/backtestd/service"
)

// mcpCmd is `backtestd mcp`: the MCP tools over stdio (one client, usually an agent that
// started this process), calling the same API handler `serve` serves, in-process, against
// the configured database. Its workers (-workers, 0 for none) run backtests beside the
// service's. With accounts on, BACKTESTD_TOKEN is the API token the tools act with.
func mcpCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, _, err := config.Load("mcp", args, getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel) // stdout carries the protocol
	svc, err := service.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer svc.Close()
	header := http.Header{}
	if tok := getenv("BACKTESTD_TOKEN"); tok != "" {
		header.Set("Authorization", "Bearer "+tok)
	}
	srv := mcpserver.New(svc.Handler(), mcpserver.Options{Header: header, BasePath: cfg.BasePath})
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
