package jsrt

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// moreAnalyzers is a fixture's "analyzers_more" block (testdata/backtrader/gen.py's
// more_analyzers_out): backtrader's Returns, VWR, Calmar, AnnualReturn, TimeReturn by month
// and year, SharpeRatio_A and PyFolio, on the strategies that ask gen.py for them.
type moreAnalyzers struct {
	Returns struct {
		Total     *float64 `json:"rtot"`
		Average   *float64 `json:"ravg"`
		Normal    *float64 `json:"rnorm"`
		Normal100 *float64 `json:"rnorm100"`
	} `json:"returns"`
	VWR    *float64 `json:"vwr"`
	Calmar struct {
		Value   *float64 `json:"calmar"`
		ByMonth [][2]any `json:"by_month"`
	} `json:"calmar"`
	AnnualReturn [][2]any `json:"annual_return"`
	TimeReturn   struct {
		Months [][2]any `json:"months"`
		Years  [][2]any `json:"years"`
	} `json:"time_return"`
	SharpeAnnualized        *float64 `json:"sharpe_annualized"`
	SharpeMonthlyAnnualized *float64 `json:"sharpe_monthly_annualized"`
	PyFolio                 struct {
		Symbols      []string `json:"symbols"`
		Positions    [][]any  `json:"positions"`    // date, each feed's value, cash
		Transactions [][]any  `json:"transactions"` // date, amount, price, sid, symbol, value
	} `json:"pyfolio"`
}

// checkMoreAnalyzers compares the analyzers of the returns family and the PyFolio report
// with the fixture's, to 1e-9 relative, when the fixture has them.
func checkMoreAnalyzers(t *testing.T, raw []byte, res *engine.Result) {
	t.Helper()
	var wrap struct {
		More *moreAnalyzers `json:"analyzers_more"`
	}
	if err := json.Unmarshal(raw, &wrap); err != nil {
		t.Fatal(err)
	}
	w := wrap.More
	if w == nil {
		return
	}
	const rel = 1e-9
	a := res.Analyzers
	ptrs := []struct {
		name      string
		got, want *float64
	}{
		{"returns.rtot", a.Returns.Total, w.Returns.Total},
		{"returns.ravg", a.Returns.Average, w.Returns.Average},
		{"returns.rnorm", a.Returns.Normal, w.Returns.Normal},
		{"returns.rnorm100", a.Returns.Normal100, w.Returns.Normal100},
		{"vwr", a.VWR, w.VWR},
		{"calmar", a.Calmar.Value, w.Calmar.Value},
		{"sharpe annualized", a.Sharpe.Annualized, w.SharpeAnnualized},
		{"sharpe monthly annualized", a.Sharpe.MonthlyAnnualized, w.SharpeMonthlyAnnualized},
	}
	for _, p := range ptrs {
		if !nearPtr(p.got, p.want, rel) {
			t.Errorf("%s %s, want %s", p.name, fmtPtr(p.got), fmtPtr(p.want))
		}
	}
	periods := func(name string, got []engine.PeriodValue, want [][2]any) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d periods, want %d", name, len(got), len(want))
		}
		for i := 0; i < min(len(got), len(want)); i++ {
			wk, _ := want[i][0].(string)
			var wv *float64
			if f, ok := want[i][1].(float64); ok {
				wv = &f
			}
			if got[i].Period != wk || !nearPtr(got[i].Value, wv, rel) {
				t.Errorf("%s %d: got %s %s, want %s %s", name, i, got[i].Period, fmtPtr(got[i].Value), wk, fmtPtr(wv))
				return
			}
		}
	}
	periods("calmar by month", a.Calmar.ByMonth, w.Calmar.ByMonth)
	periods("annual return", a.AnnualReturn, w.AnnualReturn)
	periods("time return by month", a.TimeReturn.Months, w.TimeReturn.Months)
	periods("time return by year", a.TimeReturn.Years, w.TimeReturn.Years)

	pf := a.PyFolio
	// backtrader names the feeds by their file; the symbols here are the files' base names.
	if len(pf.Symbols) != len(w.PyFolio.Symbols) {
		t.Errorf("pyfolio symbols %v, want %v", pf.Symbols, w.PyFolio.Symbols)
	}
	if pf.Positions.Len() != len(w.PyFolio.Positions) {
		t.Errorf("pyfolio positions: %d rows, want %d", pf.Positions.Len(), len(w.PyFolio.Positions))
	}
	for i := 0; i < min(pf.Positions.Len(), len(w.PyFolio.Positions)); i++ {
		g, wr := pf.Positions.Row(i), w.PyFolio.Positions[i]
		bad := len(g) != len(wr)-1 || day(res.Equity[i].Time) != wr[0]
		for j := 0; !bad && j < len(g); j++ {
			f, _ := wr[j+1].(float64)
			bad = !near(g[j], f, rel)
		}
		if bad {
			t.Errorf("pyfolio position row %d: got %s %v, want %v", i, day(res.Equity[i].Time), g, wr)
			break
		}
	}
	if len(pf.Transactions) != len(w.PyFolio.Transactions) {
		t.Errorf("pyfolio transactions: %d, want %d", len(pf.Transactions), len(w.PyFolio.Transactions))
	}
	for i := 0; i < min(len(pf.Transactions), len(w.PyFolio.Transactions)); i++ {
		g, wr := pf.Transactions[i], w.PyFolio.Transactions[i]
		amount, _ := wr[1].(float64)
		price, _ := wr[2].(float64)
		sid, _ := wr[3].(float64)
		sym, _ := wr[4].(string)
		value, _ := wr[5].(float64)
		if day(g.Time) != wr[0] || g.Amount != amount || !near(g.Price, price, rel) || g.SID != int(sid) || g.Symbol != sym ||
			!near(g.Value, value, rel) {
			t.Errorf("pyfolio transaction %d:\n got %+v\nwant %v", i, g, wr)
			break
		}
	}
}

// checkTimerCalls compares the "timer <tid> <when>" lines a strategy logs from notifyTimer,
// and the bars they were logged on, with the fixture's timer_calls, when it has them.
func checkTimerCalls(t *testing.T, raw []byte, res *engine.Result) {
	t.Helper()
	var wrap struct {
		Calls *[][3]any `json:"timer_calls"`
	}
	if err := json.Unmarshal(raw, &wrap); err != nil {
		t.Fatal(err)
	}
	if wrap.Calls == nil {
		return
	}
	var got [][2]string
	for _, l := range res.Logs {
		if l.Source == "strategy" && strings.HasPrefix(l.Message, "timer ") {
			got = append(got, [2]string{l.Message, day(l.Time)})
		}
	}
	want := *wrap.Calls
	if len(got) != len(want) {
		t.Errorf("timer calls: %d, want %d", len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		w := fmt.Sprintf("timer %v %v", want[i][0], want[i][1])
		if got[i][0] != w || got[i][1] != want[i][2] {
			t.Errorf("timer call %d: %q on %s, want %q on %s", i, got[i][0], got[i][1], w, want[i][2])
			break
		}
	}
}
