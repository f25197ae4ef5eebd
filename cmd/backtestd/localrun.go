package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtestd/backtestd/backtest"
	"github.com/backtestd/backtestd/examples"
	"github.com/backtestd/backtestd/internal/barcsv"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
)

// paramFlags collects repeatable --param k=v flags.
type paramFlags map[string]any

func (p paramFlags) String() string { return "" }

func (p paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	var val any = v
	if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
		var j any
		if json.Unmarshal([]byte(v), &j) == nil {
			val = j
		}
	}
	p[strings.TrimSpace(k)] = val
	return nil
}

// stringList collects a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// runLocal implements `backtestd run`: one backtest from files, no
// database. Several --data files are several feeds (this.datas[i]), in order.
func runLocal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	strategy := fs.String("strategy", "", "JavaScript strategy file (required)")
	var data, symbols stringList
	fs.Var(&data, "data", "CSV bars: date,open,high,low,close,volume or Yahoo layout (required; repeat for more feeds, this.datas[i] in order)")
	from := fs.String("from", "", "first date to use, YYYY-MM-DD (default: first bar)")
	to := fs.String("to", "", "last date to use, YYYY-MM-DD, inclusive (default: last bar)")
	cash := fs.Float64("cash", 10000, "starting cash")
	commission := fs.Float64("commission", 0.001, "commission as a fraction of traded value")
	fs.Var(&symbols, "symbol", "symbol name of the --data in the same position (default: the data file's base name)")
	asJSON := fs.Bool("json", false, "print the full result as JSON")
	timeout := fs.Duration("timeout", jsrt.DefaultWallTimeLimit, "wall-time limit of the run")
	quiet := fs.Bool("quiet", false, "do not echo strategy log lines to stderr")
	params := paramFlags{}
	fs.Var(params, "param", "strategy parameter name=value (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: backtestd run --strategy FILE --data CSV [--data CSV ...] [--from YYYY-MM-DD --to YYYY-MM-DD --cash 10000 --commission 0.001 --param k=v ... --json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *strategy == "" || len(data) == 0 {
		fs.Usage()
		return errors.New("run: --strategy and --data are required")
	}
	code, info, feeds, err := readLocal(ctx, "run", *strategy, data, symbols, *from, *to)
	if err != nil {
		return err
	}
	cfg := backtest.Config{
		Code: code, Params: map[string]any(params),
		Feeds: feeds,
		Cash:  *cash, Commission: *commission, TimeLimit: *timeout,
	}
	if !*quiet {
		cfg.QuietEngine = true // only the strategy's lines are printed
		cfg.OnLog = func(l backtest.LogEntry) {
			if l.Source == "strategy" {
				fmt.Fprintf(stderr, "%s %-7s %s\n", l.Time.Format("2006-01-02"), l.Level, l.Message)
			}
		}
	}
	start := time.Now()
	res, err := backtest.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("run %s: %w", info.ClassName, err)
	}
	elapsed := time.Since(start)
	if *asJSON {
		out := struct {
			Strategy   string            `json:"strategy"`
			Params     []jsrt.Param      `json:"params"`
			Overrides  map[string]any    `json:"overrides"`
			Symbol     string            `json:"symbol"`
			Symbols    []string          `json:"symbols"`
			Statistics engine.Statistics `json:"statistics"`
			Result     *engine.Result    `json:"result"`
		}{info.ClassName, info.Params, params, feeds[0].Symbol, feedSymbols(feeds), backtest.ComputeStatisticsAgainst(res, feeds[0]), res}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	printSummary(stdout, info, strings.Join(feedSymbols(feeds), ", "), feeds[0].Bars, res, elapsed)
	return nil
}

// readLocal reads what `run` and `sweep` (cmd) run: the --strategy file and its declared
// parameters, and the --data files, named by --symbol or their base names, within the date
// range.
func readLocal(ctx context.Context, cmd, strategy string, data, symbols []string, from, to string) (string, *jsrt.StrategyInfo, []backtest.Feed, error) {
	if len(symbols) > len(data) {
		return "", nil, nil, fmt.Errorf("%s: %d --symbol for %d --data: give at most one per data file", cmd, len(symbols), len(data))
	}
	code, err := os.ReadFile(strategy)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	// The strategy is inspected while the bars are read: each takes a millisecond or two,
	// which a sweep on many cores would otherwise spend on one.
	var feeds []backtest.Feed
	var feedsErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		feeds, feedsErr = readFeeds(data, symbols, from, to)
	}()
	info, err := jsrt.Inspect(ctx, string(code))
	<-read
	if err != nil {
		var le *jsrt.LoadError
		if errors.As(err, &le) && le.Line > 0 {
			return "", nil, nil, fmt.Errorf("%s:%d: %s", strategy, le.Line, le.Message)
		}
		return "", nil, nil, fmt.Errorf("%s: %w", strategy, err)
	}
	if feedsErr != nil {
		return "", nil, nil, feedsErr
	}
	return string(code), info, feeds, nil
}

func readFeeds(data, symbols []string, from, to string) ([]backtest.Feed, error) {
	feeds := make([]backtest.Feed, len(data))
	for i, path := range data {
		bars, err := readFeed(path, from, to)
		if err != nil {
			return nil, err
		}
		feeds[i] = backtest.Feed{Symbol: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Bars: bars}
		if i < len(symbols) {
			feeds[i].Symbol = symbols[i]
		}
	}
	return feeds, nil
}

// readFeed reads one --data file within the date range; no bars there is an error.
func readFeed(path, from, to string) ([]engine.Bar, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	var bars []engine.Bar
	if isParquet(path) {
		bars, err = marketdata.ParseParquet(f, time.UTC)
	} else {
		bars, err = barcsv.ParseFile(f, st.Size(), time.UTC)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if bars, err = dateRange(bars, from, to); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if len(bars) == 0 {
		return nil, fmt.Errorf("run: %s has no bars in the selected date range", path)
	}
	return bars, nil
}

func feedSymbols(feeds []backtest.Feed) []string {
	out := make([]string, len(feeds))
	for i, f := range feeds {
		out[i] = f.Symbol
	}
	return out
}

func dateRange(bars []engine.Bar, from, to string) ([]engine.Bar, error) {
	var lo, hi time.Time
	var err error
	if from != "" {
		if lo, err = time.Parse("2006-01-02", from); err != nil {
			return nil, fmt.Errorf("--from %q: want YYYY-MM-DD", from)
		}
	}
	if to != "" {
		if hi, err = time.Parse("2006-01-02", to); err != nil {
			return nil, fmt.Errorf("--to %q: want YYYY-MM-DD", to)
		}
		hi = hi.AddDate(0, 0, 1)
	}
	// The bars are in time order (barcsv checks it): the range is a subslice.
	i, j := 0, len(bars)
	if from != "" {
		i = sort.Search(len(bars), func(k int) bool { return !bars[k].Time.Before(lo) })
	}
	if to != "" {
		j = sort.Search(len(bars), func(k int) bool { return !bars[k].Time.Before(hi) })
	}
	if j < i {
		j = i
	}
	return bars[i:j], nil
}

func fmtOpt(p *float64, format string) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *p)
}

func printSummary(w io.Writer, info *jsrt.StrategyInfo, sym string, bars []engine.Bar, res *engine.Result, elapsed time.Duration) {
	s := res.Summary
	fmt.Fprintf(w, "%s on %s: %d bars, %s to %s (%.0f ms)\n", info.ClassName, sym, len(bars),
		bars[0].Time.Format("2006-01-02"), bars[len(bars)-1].Time.Format("2006-01-02"), float64(elapsed.Microseconds())/1000)
	rows := [][2]string{
		{"initial cash", fmt.Sprintf("%.2f", s.InitialCash)},
		{"final value", fmt.Sprintf("%.2f", s.FinalValue)},
		{"total return", fmt.Sprintf("%.2f%%", s.TotalReturn*100)},
		{"annual return", fmtOpt(mul100(s.AnnualReturn), "%.2f%%")},
		{"sharpe ratio", fmtOpt(s.SharpeRatio, "%.4f")},
		{"max drawdown", fmt.Sprintf("%.2f (%.2f%%)", s.MaxDrawdown, s.MaxDrawdownPct)},
		{"max drawdown duration", fmt.Sprintf("%d days", s.MaxDrawdownDuration)},
		{"trades", tradeCounts(s)},
		{"win rate", fmt.Sprintf("%.2f%% of closed", s.WinRate)},
		{"profit factor", fmtOpt(s.ProfitFactor, "%.3f")},
		{"avg win / avg loss", fmtOpt(s.AvgWin, "%.2f") + " / " + fmtOpt(s.AvgLoss, "%.2f")},
		{"sqn", fmt.Sprintf("%.3f", s.SQN)},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-22s %s\n", r[0], r[1])
	}
	if n := len(res.OrderEvents); n > 0 {
		fmt.Fprintf(w, "  %-22s %d (rejections and cancellations)\n", "order events", n)
	} // a run of several strategies: each one's own part (the figures above are the run's)
	for i, st := range res.Strategies {
		fmt.Fprintf(w, "  strategy %d %-12s %d orders, %d fills, trades %d (won %d, lost %d), net pnl %.2f, sqn %.3f\n",
			i, st.Name, st.Orders, st.Executions, st.Trades, st.Won, st.Lost, st.PnLClosed, st.SQN.Value)
	}
}

// tradeCounts is the summary's trades as every place counts them: the total includes a trade
// still open at the end, which is neither won nor lost.
func tradeCounts(s engine.Summary) string {
	closed := s.Won + s.Lost
	if open := s.TotalTrades - closed; open > 0 {
		return fmt.Sprintf("%d (won %d, lost %d, %d open)", s.TotalTrades, s.Won, s.Lost, open)
	}
	return fmt.Sprintf("%d (won %d, lost %d)", s.TotalTrades, s.Won, s.Lost)
}

func mul100(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p * 100
	return &v
}

// peakRSS returns the process's peak resident set (Linux VmHWM), or 0.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// runBench implements `backtestd bench`: the SMA crossover over generated
// daily bars, reporting bars per second and peak memory.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("bars", 1_000_000, "number of generated daily bars")
	seed := fs.Uint64("seed", 42, "random-walk seed")
	runs := fs.Int("runs", 1, "number of timed runs (the best is reported)")
	procs := fs.Int("procs", 1, "GOMAXPROCS during the run (1 = one core)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed runs to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 100 {
		return errors.New("bench: --bars must be at least 100")
	}
	if *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}
	bars := engine.RandomWalk(*n, *seed)
	runtime.GC()

	var peakHeap uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peakHeap = max(peakHeap, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	code, err := examples.FS.ReadFile("sma_cross.js")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	best := time.Duration(0)
	var res *engine.Result
	for i := 0; i < max(*runs, 1); i++ {
		res = nil // let the previous run's result go before timing the next
		runtime.GC()
		start := time.Now()
		r, err := jsrt.Run(ctx, jsrt.RunConfig{
			Code: string(code), Feeds: []engine.Feed{{Symbol: "RW", Bars: bars}}, Commission: 0.001,
		})
		if err != nil {
			close(done)
			wg.Wait()
			return fmt.Errorf("bench: %w", err)
		}
		d := time.Since(start)
		if best == 0 || d < best {
			best = d
		}
		res = r
	}
	close(done)
	wg.Wait()
	mu.Lock()
	heap := peakHeap
	mu.Unlock()
	fmt.Fprintf(stdout, "SMA crossover (10/30) over %d generated daily bars, GOMAXPROCS=%d, %s/%s, %s\n", *n, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(stdout, "  time        %.3f s (best of %d)\n", best.Seconds(), max(*runs, 1))
	fmt.Fprintf(stdout, "  speed       %.0f bars/s\n", float64(*n)/best.Seconds())
	fmt.Fprintf(stdout, "  trades      %d, final value %.2f\n", res.Summary.TotalTrades, res.FinalValue)
	fmt.Fprintf(stdout, "  peak heap   %.1f MiB (live objects, incl. the generated bars)\n", float64(heap)/(1<<20))
	if rss := peakRSS(); rss > 0 {
		fmt.Fprintf(stdout, "  peak RSS    %.1f MiB\n", float64(rss)/(1<<20))
	}
	return nil
}
