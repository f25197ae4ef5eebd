package jsrt

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/reftest"
)

// referenceDir finds ../shared/reference beside the repository, or
// BACKTESTD_REFERENCE_DIR.
func referenceDir(t testing.TB) string {
	t.Helper()
	return reftest.Dir(t)
}

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

type expected struct {
	Strategy      string         `json:"strategy"`
	StrategyClass string         `json:"strategy_class"`
	Params        map[string]any `json:"params"`
	Data          string         `json:"data"`
	Datas         []string       `json:"datas"` // several feeds, in order (Data is the first)
	Range         struct {
		From *string `json:"fromdate"`
		To   *string `json:"todate"`
	} `json:"range"`
	Bars         int     `json:"bars"`        // strategy steps (the equity curve's points)
	DataBars     int     `json:"data_bars"`   // bars of the data, where they differ (a resampled feed's last bar comes in a step of its own)
	SourceBars   int     `json:"source_bars"` // bars of the data file, where a filter (Renko) drops some
	FinalValue   float64 `json:"final_value"`
	FinalCash    float64 `json:"final_cash"`
	FinalPosSize float64 `json:"final_position_size"`
	FirstNextBar struct {
		Bar  int    `json:"bar"`
		Date string `json:"date"`
	} `json:"first_next_bar"`
	Sharpe struct {
		DailyAnnualized *float64 `json:"daily_annualized"`
		Default         *float64 `json:"default"`
	} `json:"sharpe"`
	Drawdown      engine.DrawdownResult      `json:"drawdown"`
	SQN           engine.SQNResult           `json:"sqn"`
	TradeAnalyzer engine.TradeAnalyzerResult `json:"trade_analyzer"`
	Trades        []struct {
		Data       string  `json:"data"` // the feed's name, with several feeds
		TradeID    int     `json:"tradeid"`
		OpenDate   string  `json:"open_date"`
		CloseDate  string  `json:"close_date"`
		Size       float64 `json:"size"`
		EntryPrice float64 `json:"entry_price"`
		ExitPrice  float64 `json:"exit_price"`
		PnLGross   float64 `json:"pnl_gross"`
		PnLNet     float64 `json:"pnl_net"`
		Commission float64 `json:"commission"`
		BarLen     int     `json:"barlen"`
	} `json:"trades"`
	Executions []struct {
		Data       string  `json:"data"` // the feed's name, with several feeds
		Ref        int     `json:"ref"`
		Date       string  `json:"date"`
		Side       string  `json:"side"`
		ExecType   string  `json:"exectype"`
		Price      float64 `json:"price"`
		Size       float64 `json:"size"`
		Value      float64 `json:"value"`
		Commission float64 `json:"commission"`
		PnL        float64 `json:"pnl"`
		Created    string  `json:"created_date"`
	} `json:"executions"`
	OrderEvents []struct {
		Ref      int     `json:"ref"`
		Side     string  `json:"side"`
		ExecType string  `json:"exectype"`
		Status   string  `json:"status"`
		Created  string  `json:"created_date"`
		Price    float64 `json:"created_price"`
		Size     float64 `json:"requested_size"`
		BarDate  string  `json:"bar_date"`
	} `json:"order_events"`
	OpenAtEnd []struct {
		Ref      int     `json:"ref"`
		Side     string  `json:"side"`
		ExecType string  `json:"exectype"`
		Status   string  `json:"status"`
		Created  string  `json:"created_date"`
		Price    float64 `json:"price"`
		Size     float64 `json:"size"`
	} `json:"orders_open_at_end"`
	Equity [][2]any `json:"equity"`
}

func day(t time.Time) string { return t.Format("2006-01-02") }

// stamp is t as the fixture writes want: a date, or a date and time for intraday bars.
func stamp(t time.Time, want string) string {
	if len(want) > 10 {
		return t.Format("2006-01-02 15:04:05")
	}
	return day(t)
}

// near compares to a relative tolerance (absolute near zero).
func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(a - b)
	return d <= rel*math.Max(math.Abs(a), math.Abs(b)) || d <= 1e-12
}

func nearPtr(a, b *float64, rel float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return near(*a, *b, rel)
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func filterRange(t testing.TB, bars []engine.Bar, from, to *string) []engine.Bar {
	var lo, hi time.Time
	if from != nil {
		lo, _ = time.Parse("2006-01-02", (*from)[:10])
	}
	if to != nil {
		hi, _ = time.Parse("2006-01-02", (*to)[:10])
	}
	out := bars[:0:0]
	for _, b := range bars {
		if (from == nil || !b.Time.Before(lo)) && (to == nil || !b.Time.After(hi)) {
			out = append(out, b)
		}
	}
	return out
}

func TestParity(t *testing.T) {
	ref := referenceDir(t)
	files, _ := filepath.Glob(filepath.Join(ref, "expected", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no expected files in %s", ref)
	}
	root := repoRoot(t)
	// The shared fixtures run the strategies of examples/; the project's own (made by
	// testdata/backtrader/gen.py on the shared data) run their twins in testdata, or the
	// example of the same name when it has none.
	code := map[string]string{}
	for _, f := range files {
		code[f] = filepath.Join(root, "examples")
	}
	own, _ := filepath.Glob(filepath.Join(root, "testdata", "backtrader", "expected", "*.json"))
	if len(own) == 0 {
		t.Fatal("no fixtures in testdata/backtrader/expected")
	}
	for _, f := range own {
		code[f] = filepath.Join(root, "testdata", "backtrader", "strategies")
		files = append(files, f)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var exp expected
			if err := json.Unmarshal(raw, &exp); err != nil {
				t.Fatal(err)
			}
			code, err := os.ReadFile(filepath.Join(code[file], exp.Strategy+".js"))
			if errors.Is(err, fs.ErrNotExist) {
				code, err = os.ReadFile(filepath.Join(root, "examples", exp.Strategy+".js"))
			}
			if err != nil {
				t.Fatal(err)
			}
			info, err := Inspect(context.Background(), string(code))
			if err != nil {
				t.Fatal(err)
			}
			if info.ClassName != exp.StrategyClass {
				t.Errorf("class %s, want %s", info.ClassName, exp.StrategyClass)
			}
			// backtrader writes each default as Python has it (2.0 a float, 2 an int): the
			// literal's form gives the type the strategy's parameter must have.
			var literals struct {
				Params map[string]json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(raw, &literals); err != nil {
				t.Fatal(err)
			}
			for _, p := range info.Params {
				want, ok := exp.Params[p.Name]
				if !ok {
					t.Errorf("param %s not in expected params", p.Name)
					continue
				}
				if fmt.Sprint(want) != fmt.Sprint(p.Default) {
					t.Errorf("param %s default %v, want %v", p.Name, p.Default, want)
				}
				if lit := string(literals.Params[p.Name]); p.Type == "int" || p.Type == "float" {
					if wantType := map[bool]string{true: "float", false: "int"}[strings.ContainsAny(lit, ".eE")]; p.Type != wantType {
						t.Errorf("param %s is %s, backtrader's %s is %s", p.Name, p.Type, lit, wantType)
					}
				}
			}
			var feeds []engine.Feed
			datas := exp.Datas
			if len(datas) == 0 {
				datas = []string{exp.Data}
			}
			for _, d := range datas {
				path := filepath.Join(root, "testdata", "backtrader", "data", d) // the project's own data first
				if _, err := os.Stat(path); err != nil {
					path = filepath.Join(ref, "data", d)
				}
				bars := filterRange(t, reftest.Bars(t, path), exp.Range.From, exp.Range.To)
				feeds = append(feeds, engine.Feed{Symbol: strings.TrimSuffix(d, ".csv"), Bars: bars})
			}
			if want := cmp.Or(exp.SourceBars, exp.DataBars, exp.Bars); len(feeds[0].Bars) != want && !joined(raw) { // a joined feed: checkRolls
				t.Fatalf("bars %d, want %d", len(feeds[0].Bars), want)
			}
			res, err := Run(context.Background(), RunConfig{
				Code: string(code), Params: exp.Params, Feeds: feeds, Cash: 10000, Commission: 0.001,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !checkStrategies(t, &exp, raw, res) {
				checkParity(t, &exp, res)
			}
			checkMoreAnalyzers(t, raw, res)
			checkTimerCalls(t, raw, res)
			checkRolls(t, raw, res)
		})
	}
}

func checkParity(t *testing.T, exp *expected, res *engine.Result) {
	t.Helper()
	const rel = 1e-9
	if res.FirstNext != exp.FirstNextBar.Bar {
		t.Errorf("first next bar %d, want %d", res.FirstNext, exp.FirstNextBar.Bar)
	}
	// executions
	if len(res.Executions) != len(exp.Executions) {
		t.Errorf("executions: %d, want %d", len(res.Executions), len(exp.Executions))
	}
	for i := 0; i < min(len(res.Executions), len(exp.Executions)); i++ {
		g, w := res.Executions[i], exp.Executions[i]
		if stamp(g.Time, w.Date) != w.Date || g.Side != w.Side || g.ExecType != w.ExecType || g.Price != w.Price || g.Size != w.Size ||
			!near(g.Commission, w.Commission, rel) || !near(g.Value, w.Value, rel) || !near(g.PnL, w.PnL, rel) || g.Ref != w.Ref || stamp(g.CreatedTime, w.Created) != w.Created ||
			(w.Data != "" && g.Symbol != w.Data) {
			t.Errorf("execution %d:\n got %+v\nwant %+v", i, g, w)
			break
		}
	}
	// closed trades
	var closed []engine.Trade
	for _, tr := range res.Trades {
		if !tr.IsOpen {
			closed = append(closed, tr)
		}
	}
	if len(closed) != len(exp.Trades) {
		t.Errorf("closed trades: %d, want %d", len(closed), len(exp.Trades))
	}
	for i := 0; i < min(len(closed), len(exp.Trades)); i++ {
		g, w := closed[i], exp.Trades[i]
		if stamp(g.OpenTime, w.OpenDate) != w.OpenDate || stamp(*g.CloseTime, w.CloseDate) != w.CloseDate || g.Size != w.Size || g.EntryPrice != w.EntryPrice ||
			g.ExitPrice != w.ExitPrice || !near(g.PnLGross, w.PnLGross, rel) || !near(g.PnLNet, w.PnLNet, rel) ||
			!near(g.Commission, w.Commission, rel) || g.BarLen != w.BarLen || g.TradeID != w.TradeID || (w.Data != "" && g.Symbol != w.Data) {
			t.Errorf("trade %d:\n got %+v\nwant %+v", i, g, w)
			break
		}
	}
	// equity
	if len(res.Equity) != len(exp.Equity) {
		t.Errorf("equity points %d, want %d", len(res.Equity), len(exp.Equity))
	}
	for i := 0; i < min(len(res.Equity), len(exp.Equity)); i++ {
		g := res.Equity[i]
		wd, _ := exp.Equity[i][0].(string)
		wv, _ := exp.Equity[i][1].(float64)
		if stamp(g.Time, wd) != wd || g.Value != wv {
			t.Errorf("equity %d: got %s %v, want %s %v", i, stamp(g.Time, wd), g.Value, wd, wv)
			break
		}
	}
	if res.FinalValue != exp.FinalValue || res.FinalCash != exp.FinalCash {
		t.Errorf("final value/cash %v/%v, want %v/%v", res.FinalValue, res.FinalCash, exp.FinalValue, exp.FinalCash)
	}
	if res.Positions[0].Size != exp.FinalPosSize {
		t.Errorf("final position %v, want %v", res.Positions[0].Size, exp.FinalPosSize)
	}
	a := res.Analyzers
	if !nearPtr(a.Sharpe.DailyAnnualized, exp.Sharpe.DailyAnnualized, rel) || !nearPtr(a.Sharpe.Default, exp.Sharpe.Default, rel) {
		t.Errorf("sharpe %s/%s, want %s/%s", fmtPtr(a.Sharpe.DailyAnnualized), fmtPtr(a.Sharpe.Default), fmtPtr(exp.Sharpe.DailyAnnualized), fmtPtr(exp.Sharpe.Default))
	}
	d, wd := a.Drawdown, exp.Drawdown
	if !near(d.MaxPct, wd.MaxPct, rel) || !near(d.MaxMoney, wd.MaxMoney, rel) || d.MaxLenBars != wd.MaxLenBars ||
		!near(d.FinalPct, wd.FinalPct, rel) || !near(d.FinalMoney, wd.FinalMoney, rel) || d.FinalLenBars != wd.FinalLenBars {
		t.Errorf("drawdown\n got %+v\nwant %+v", d, wd)
	}
	if !near(a.SQN.Value, exp.SQN.Value, rel) || a.SQN.Trades != exp.SQN.Trades {
		t.Errorf("sqn %+v, want %+v", a.SQN, exp.SQN)
	}
	g, w := a.TradeAnalyzer, exp.TradeAnalyzer
	if g.Total != w.Total || g.Open != w.Open || g.Closed != w.Closed || g.Won != w.Won || g.Lost != w.Lost ||
		!nearPtr(g.PnLNetTotal, w.PnLNetTotal, rel) || !nearPtr(g.PnLGrossTotal, w.PnLGrossTotal, rel) ||
		!nearPtr(g.WonPnLAverage, w.WonPnLAverage, rel) || !nearPtr(g.LostPnLAverage, w.LostPnLAverage, rel) ||
		!nearPtr(g.WonPnLTotal, w.WonPnLTotal, rel) || !nearPtr(g.LostPnLTotal, w.LostPnLTotal, rel) ||
		g.StreakWonLongest != w.StreakWonLongest || g.StreakLostLongest != w.StreakLostLongest || g.LenTotalBars != w.LenTotalBars {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		t.Errorf("trade analyzer\n got %s\nwant %s", gj, wj)
	}
	// order events
	if len(res.OrderEvents) != len(exp.OrderEvents) {
		t.Errorf("order events %d, want %d", len(res.OrderEvents), len(exp.OrderEvents))
	}
	for i := 0; i < min(len(res.OrderEvents), len(exp.OrderEvents)); i++ {
		g, w := res.OrderEvents[i], exp.OrderEvents[i]
		if g.Ref != w.Ref || g.Side != w.Side || g.ExecType != w.ExecType || g.Status != w.Status || stamp(g.CreatedTime, w.Created) != w.Created ||
			g.CreatedPrice != w.Price || g.Size != w.Size || stamp(g.Time, w.BarDate) != w.BarDate {
			t.Errorf("order event %d:\n got %+v\nwant %+v", i, g, w)
			break
		}
	}
	if len(res.OpenOrders) != len(exp.OpenAtEnd) {
		t.Errorf("open orders %d, want %d", len(res.OpenOrders), len(exp.OpenAtEnd))
	}
	for i := 0; i < min(len(res.OpenOrders), len(exp.OpenAtEnd)); i++ {
		g, w := res.OpenOrders[i], exp.OpenAtEnd[i]
		if g.Ref != w.Ref || g.Side != w.Side || g.ExecType != w.ExecType || g.Status != w.Status || stamp(g.CreatedTime, w.Created) != w.Created ||
			g.Price != w.Price || g.Size != w.Size {
			t.Errorf("open order %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// TestSymbolResultsSumToTotals checks the per-feed breakdown against the portfolio: the
// feeds' pnl sum to the final value less the initial cash, their contributions to the total
// return, their fills and round trips to the run's; for two feeds and for a futures scheme
// (cash settled at every close).
func TestSymbolResultsSumToTotals(t *testing.T) {
	ref := referenceDir(t)
	root := repoRoot(t)
	orcl, nvda := reftest.Bars(t, filepath.Join(ref, "data", "orcl.csv")), reftest.Bars(t, filepath.Join(ref, "data", "nvda.csv"))
	cases := []struct {
		name, file string
		feeds      []engine.Feed
	}{
		{"pairs", filepath.Join(root, "examples", "pairs.js"), []engine.Feed{{Symbol: "ORCL", Bars: orcl}, {Symbol: "NVDA", Bars: nvda}}},
		{"futures", filepath.Join(root, "testdata", "backtrader", "strategies", "comm_futures.js"), []engine.Feed{{Symbol: "ORCL", Bars: orcl}}},
		{"sma cross on the second of two feeds", filepath.Join(root, "examples", "sma_cross.js"), []engine.Feed{{Symbol: "NVDA", Bars: nvda}, {Symbol: "ORCL", Bars: orcl}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), RunConfig{Code: string(code), Feeds: c.feeds, Cash: 10000, Commission: 0.001})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Symbols) != len(c.feeds) {
				t.Fatalf("%d symbol results for %d feeds", len(res.Symbols), len(c.feeds))
			}
			var pnl, contrib, comm float64
			var execs, trades, open int
			for i, s := range res.Symbols {
				if s.Symbol != c.feeds[i].Symbol {
					t.Errorf("symbol result %d is %s, want %s", i, s.Symbol, c.feeds[i].Symbol)
				}
				if s.Exposure < 0 || s.Exposure > 1 || s.Won+s.Lost != s.Trades {
					t.Errorf("%s: exposure %v, won %d + lost %d of %d trades", s.Symbol, s.Exposure, s.Won, s.Lost, s.Trades)
				}
				if s.Executions > 0 && s.Exposure == 0 {
					t.Errorf("%s: %d fills but never held", s.Symbol, s.Executions)
				}
				pnl += s.PnL
				contrib += s.Contribution
				comm += s.Commission
				execs += s.Executions
				trades += s.Trades
				open += s.OpenTrades
			}
			if execs == 0 {
				t.Fatal("no fills: nothing compared")
			}
			want := res.FinalValue - res.InitialCash
			if math.Abs(pnl-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("pnl of the symbols %v, final value less initial cash %v", pnl, want)
			}
			if math.Abs(contrib-res.Summary.TotalReturn) > 1e-9 {
				t.Errorf("contributions %v, total return %v", contrib, res.Summary.TotalReturn)
			}
			var wantComm float64
			for _, x := range res.Executions {
				wantComm += x.Commission
			}
			if execs != len(res.Executions) || math.Abs(comm-wantComm) > 1e-9*math.Max(1, wantComm) {
				t.Errorf("fills %d (commission %v), run %d (%v)", execs, comm, len(res.Executions), wantComm)
			}
			if trades+open != len(res.Trades) {
				t.Errorf("round trips %d closed + %d open, run %d", trades, open, len(res.Trades))
			}
		})
	}
}
