// Command backtestd is the backtest management service and its tools.
//
//	backtestd serve     HTTP API, WebSocket hub and (unless -workers 0) backtest workers
//	backtestd worker    backtest workers only
//	backtestd migrate   apply database migrations and exit
//	backtestd import    import one file of bars into the database
//	backtestd run       run one backtest locally from files, no database
//	backtestd bench     measure the engine's speed
//	backtestd user      manage accounts (team mode)
//	backtestd token     manage API tokens
//	backtestd bi-role   create a read-only PostgreSQL role for BI tools
//	backtestd prune     delete finished runs and studies older than an age
//	backtestd mcp       the MCP tools over stdio, for an AI agent
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/backtestd/backtestd/internal/runner"
)

func main() {
	if runner.IsChild() { // started by the runner pool to run strategy code: nothing else
		os.Exit(runner.ChildMain())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "backtestd:", err)
		}
		os.Exit(1)
	}
}

const usage = `usage: backtestd <command> [flags]

commands:
  serve     run the HTTP API, WebSocket hub and backtest workers
  worker    run backtest workers only
  migrate   apply database migrations and exit
  import    import bars: import --symbol X [--source S] [--timeframe tf] FILE.csv|FILE.json
  run       run one backtest locally: run --strategy s.js --data bars.csv
  sweep     run a parameter study locally on all cores: sweep --strategy s.js --data bars.csv --param fast=5:50:5
  bias      check a strategy for look-ahead, exactly: bias --strategy s.js --data bars.csv [--json]
  bench     measure the engine's speed on generated bars
  user      manage accounts: user add|list|set-role|set-password|disable|enable
  token     manage API tokens: token create|list|revoke
  bi-role   create a PostgreSQL role that reads only the bi_* views: bi-role create NAME
  prune     delete finished, unpinned runs and studies: prune --older-than 180d [--export FILE]
  mcp       serve the MCP tools over stdio for an AI agent (docs/mcp.md)

Run 'backtestd <command> -h' for a command's flags.
`

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		collectLess(getenv, true)
		return serve(ctx, rest, getenv, stderr)
	case "worker":
		collectLess(getenv, false)
		return worker(ctx, rest, getenv, stderr)
	case "migrate":
		return migrate(ctx, rest, getenv, stderr)
	case "import":
		return importBars(ctx, rest, getenv, stdout, stderr)
	case "run":
		collectLate(getenv)
		return runLocal(ctx, rest, stdout, stderr)
	case "sweep":
		// A study allocates about 160 KB per combination and keeps only the trials'
		// returns: at Go's default pacing it collected every few runs, and 16 jobs on 16
		// cores gave a quarter of them to the collector's mark workers (write barriers,
		// assists) while one job had idle cores for it.
		collectEvery(getenv, studyHeadroom)
		return runSweep(ctx, rest, stdout, stderr)
	case "bias":
		collectLate(getenv)
		return runBias(ctx, rest, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, stdout, stderr)
	case "user":
		return userCmd(ctx, rest, getenv, stdin, stdout, stderr)
	case "token":
		return tokenCmd(ctx, rest, getenv, stdout, stderr)
	case "bi-role":
		return biRoleCmd(ctx, rest, getenv, stdin, stdout, stderr)
	case "prune":
		return pruneCmd(ctx, rest, getenv, stdout, stderr)
	case "mcp":
		return mcpCmd(ctx, rest, getenv, stdin, stdout, stderr)
	case "pgctl":
		return pgctl(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
