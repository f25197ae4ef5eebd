package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/bias"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// errLookahead is bias's answer when the strategy reads the future: the report is printed
// and the command exits with status 1, so a script or CI can act on it.
var errLookahead = errors.New("look-ahead found")

// runBias implements `backtestd bias`: the exact look-ahead check of internal/bias on local
// files, in this process (the code is the user's own, as with `run`).
func runBias(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bias", flag.ContinueOnError)
	fs.SetOutput(stderr)
	strategy := fs.String("strategy", "", "JavaScript strategy file (required)")
	var data, symbols stringList
	fs.Var(&data, "data", "CSV bars (required; repeat for more feeds, this.datas[i] in order)")
	fs.Var(&symbols, "symbol", "symbol name of the --data in the same position (default: the data file's base name)")
	from := fs.String("from", "", "first date to use, YYYY-MM-DD (default: first bar)")
	to := fs.String("to", "", "last date to use, YYYY-MM-DD, inclusive (default: last bar)")
	cash := fs.Float64("cash", 10000, "starting cash")
	commission := fs.Float64("commission", 0.001, "commission as a fraction of traded value")
	asJSON := fs.Bool("json", false, `print the report as JSON: {"lookahead": true|false, "findings": [...], "cuts": N, ...}`)
	timeout := fs.Duration("timeout", jsrt.DefaultWallTimeLimit, "wall-time limit of each run of the check")
	params := paramFlags{}
	fs.Var(params, "param", "strategy parameter name=value (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: backtestd bias --strategy FILE --data CSV [--data CSV ...] [--param k=v ...] [--json]")
		fmt.Fprintln(stderr, "Runs the strategy on the data cut at a few points and compares everything before each cut with the full run; exits with status 1 when something read the future.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *strategy == "" || len(data) == 0 {
		fs.Usage()
		return errors.New("bias: --strategy and --data are required")
	}
	code, info, feeds, err := readLocal(ctx, "bias", *strategy, data, symbols, *from, *to)
	if err != nil {
		return err
	}
	start := time.Now()
	rep, err := jsrt.Lookahead(ctx, jsrt.RunConfig{Code: code, Params: map[string]any(params), Feeds: feeds,
		Cash: *cash, Commission: *commission, WallTimeLimit: *timeout})
	if err != nil {
		return fmt.Errorf("bias %s: %w", info.ClassName, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printBias(stdout, info.ClassName, strings.Join(feedSymbols(feeds), ", "), rep, time.Since(start))
	}
	if rep.Lookahead {
		return errLookahead
	}
	return nil
}

func printBias(w io.Writer, class, symbols string, rep *bias.Report, elapsed time.Duration) {
	fmt.Fprintf(w, "%s on %s: %s, %s at %s %v, %s compared (%.1f runs' work, %s)\n",
		class, symbols, counted(rep.Bars, "bar", "bars"), counted(rep.Cuts, "cut", "cuts"), plural(len(rep.CutBars), "bar", "bars"), rep.CutBars,
		counted(rep.Lines, "line", "lines"), rep.Runs, elapsed.Round(time.Millisecond))
	if !rep.Lookahead {
		fmt.Fprintln(w, "no look-ahead: every line, order and state before each cut equals the full run's, and no code read an ind.Compute input ahead of its bar")
	} else {
		fmt.Fprintf(w, "LOOK-AHEAD: %s after the bar %s computed for\n", counted(len(rep.Findings), "value reads bars", "values read bars"), plural(len(rep.Findings), "it was", "they were"))
		for _, f := range rep.Findings {
			what := f.What
			if f.Call != "" && f.Call != f.What && !strings.HasPrefix(f.What, f.Call) {
				what += " (" + f.Call + ")"
			}
			if f.Kind == "read" { // no cut run: the read itself is the proof
				fmt.Fprintf(w, "  %-6s %s: %s (value %s)\n", f.Kind, what, f.Detail, f.Full)
				continue
			}
			fmt.Fprintf(w, "  %-6s %s: first at bar %d (%s), with the data cut at bar %d: %s, cut run %s\n",
				f.Kind, what, f.Bar, f.Time.Format(time.DateOnly), f.CutAt, f.Full, f.Cut)
		}
	}
	if len(rep.Warmup) > 0 {
		fmt.Fprintf(w, "warm-up (information, not look-ahead): bars until each line stops depending on where the data starts (started at bar %d)\n", rep.WarmupStart)
		for _, x := range rep.Warmup {
			if x.Converged {
				fmt.Fprintf(w, "  %-40s %d\n", x.What, x.Bars)
			} else {
				fmt.Fprintf(w, "  %-40s never (in %d bars)\n", x.What, x.Bars)
			}
		}
	}
}

// plural is one for a count of 1 and many otherwise: "1 line", never "1 lines".
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// counted is n, grouped in thousands, and the noun that fits it ("1 line", "2,400 lines").
func counted(n int, one, many string) string {
	return groupThousands(n) + " " + plural(n, one, many)
}

// groupThousands writes n with a comma between groups of three digits.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
