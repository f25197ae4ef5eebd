package httpapi

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/engine"
)

// figuresMulti is a file of two strategies on one broker (docs/strategy-api.md, "Several
// strategies"): each keeps its own holding.
const figuresMulti = `
class SmaCross extends Strategy {
  static params = { fast: 10, slow: 30, size: 10 };
  init() { this.cross = ind.CrossOver(ind.SMA(this.data.close, this.p.fast), ind.SMA(this.data.close, this.p.slow)); this.held = 0; }
  next() {
    if (this.cross[0] > 0 && !this.held) { this.buy({ size: this.p.size }); this.held = this.p.size; }
    else if (this.cross[0] < 0 && this.held) { this.sell({ size: this.held }); this.held = 0; }
  }
}
const strategies = [SmaCross, { strategy: SmaCross, params: { fast: 5, slow: 20, size: 5 } }];`

// TestFiguresAgreeEverywhere runs a daily, weekly, monthly, 5-minute, several-symbol and
// several-strategy backtest through the service (API, River workers, the sandboxed runner,
// PostgreSQL) and checks that each figure is one value wherever it is shown: the summary,
// the statistics record, the runs list, the comparison (JSON and CSV), the HTML report,
// Monte Carlo's "this run" in each method, bi_results, and the leaderboard row and objective
// of a study of the same combination; and that it is the value this test
// computes itself from the equity curve (the JSON export's) and the round trips (the trades
// route): the Sharpe ratio annualised by the bar frequency, CAGR, Calmar, the signed recovery
// factor, the max drawdown and its duration, the win rate over closed trades, and the trades
// counted closed and open.
func TestFiguresAgreeEverywhere(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 2)
	ctx := context.Background()

	// A second daily symbol, and a 5-minute one: 78 bars a session (14:30 to 20:55 UTC) on
	// 20 weekdays.
	copyBars := func(symbol, timeframe string, bars []engine.Bar) {
		t.Helper()
		if _, err := e.st.Pool.Exec(ctx, `INSERT INTO symbols (source, symbol, name) VALUES ('testsrc', $1, $1)`, symbol); err != nil {
			t.Fatal(err)
		}
		rows := make([][]any, len(bars))
		for i, x := range bars {
			rows[i] = []any{"testsrc", symbol, timeframe, x.Time, x.Open, x.High, x.Low, x.Close, x.Volume}
		}
		if _, err := e.st.Pool.CopyFrom(ctx, pgx.Identifier{"bars"}, []string{"source", "symbol", "timeframe", "ts", "open", "high", "low", "close", "volume"}, pgx.CopyFromRows(rows)); err != nil {
			t.Fatal(err)
		}
	}
	copyBars("BBB", "1d", engine.RandomWalk(3000, 5))
	five := engine.RandomWalk(20*78, 11)
	day := time.Date(1971, 1, 4, 14, 30, 0, 0, time.UTC) // a Monday
	for i := range five {
		if i > 0 && i%78 == 0 {
			day = day.AddDate(0, 0, 1)
			for day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
				day = day.AddDate(0, 0, 1)
			}
		}
		five[i].Time = day.Add(time.Duration(i%78) * 5 * time.Minute)
	}
	copyBars("FIVE", "5m", five)

	upload, _ := json.Marshal(map[string]string{"name": "TwoCrosses", "code": figuresMulti})
	status, body := e.do(t, "POST", "/api/strategies", string(upload))
	multi, _ := field(body, "id").(string)
	if status != 200 || multi == "" {
		t.Fatalf("create strategy: %d %v", status, body)
	}

	daily := `"start_date":"1970-01-01","end_date":"1979-12-31","data_source":"testsrc"`
	cases := []struct {
		name    string
		request string
		perYear float64 // the bars a year the figures must be annualised with
		symbols int
	}{
		{"daily", `{"strategy_id":"str_1","symbol":"AAA",` + daily + `}`, 252, 1},
		{"weekly", `{"strategy_id":"str_1","symbol":"AAA","timeframe":"1w","strategy_params":{"fast":4,"slow":12},` + daily + `}`, 52, 1},
		{"monthly", `{"strategy_id":"str_1","symbol":"AAA","timeframe":"1M","strategy_params":{"fast":2,"slow":5},` + daily + `}`, 12, 1},
		{"5 minutes", `{"strategy_id":"str_1","symbol":"FIVE","timeframe":"5m","start_date":"1971-01-01","end_date":"1971-02-28","data_source":"testsrc"}`, 252 * 78, 1},
		{"several symbols", `{"strategy_id":"str_1","symbols":["AAA","BBB"],` + daily + `}`, 252, 2},
		{"several strategies", `{"strategy_id":"` + multi + `","symbol":"AAA",` + daily + `}`, 252, 1},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		status, body := e.do(t, "POST", "/api/backtests", c.request)
		id, _ := field(body, "task_id").(string)
		if status != 200 || id == "" {
			t.Fatalf("%s: submit %d %v", c.name, status, body)
		}
		ids[i] = id
	}
	// Each run of one strategy again as a study of that one combination: its trial's figures
	// and its objective (sharpe_ratio, the default) must be the run's.
	studies := make([]string, len(cases))
	for i, c := range cases {
		var req map[string]any
		if err := json.Unmarshal([]byte(c.request), &req); err != nil {
			t.Fatal(err)
		}
		if req["strategy_id"] != "str_1" {
			continue
		}
		params, _ := req["strategy_params"].(map[string]any)
		fast, slow := 10.0, 30.0
		if params != nil {
			fast, slow = params["fast"].(float64), params["slow"].(float64)
		}
		delete(req, "strategy_params")
		req["space"] = map[string]any{"fast": []float64{fast}, "slow": []float64{slow}}
		raw, _ := json.Marshal(req)
		status, body := e.do(t, "POST", "/api/studies", string(raw))
		if status != 200 {
			t.Fatalf("%s: study %d %v", c.name, status, body)
		}
		studies[i] = field(body, "id").(string)
	}
	for i, c := range cases {
		waitFor(t, 5*time.Minute, func() bool {
			_, b := e.do(t, "GET", "/api/backtests/"+ids[i], "")
			switch s := field(b, "status"); s {
			case "failed", "cancelled":
				t.Fatalf("%s: task %s %v: %v", c.name, ids[i], s, field(b, "error"))
			case "completed":
				return true
			}
			return false
		})
	}

	// The runs list, once: every run's figures.
	var list []struct {
		TaskID  string             `json:"task_id"`
		Figures map[string]float64 `json:"figures"`
	}
	getJSONInto(t, e.srv.URL+"/api/backtests?limit=100", &list)

	for i, c := range cases {
		id := ids[i]
		t.Run(c.name, func(t *testing.T) {
			// Our own computation, from the equity curve and the round trips.
			var export struct {
				Equity []struct {
					Date  string  `json:"date"`
					Value float64 `json:"value"`
				} `json:"equity_curve"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/"+id+"/export?format=json", &export)
			times := make([]time.Time, len(export.Equity))
			values := make([]float64, len(export.Equity))
			for j, p := range export.Equity {
				times[j], values[j] = parseAPITime(t, p.Date), p.Value
			}
			var trips struct {
				Data struct {
					Total  int `json:"total"`
					Trades []struct {
						IsOpen bool    `json:"is_open"`
						PnLNet float64 `json:"pnl_net"`
					} `json:"trades"`
				} `json:"data"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/"+id+"/trades?kind=round_trips&limit=1000", &trips)
			if trips.Data.Total != len(trips.Data.Trades) {
				t.Fatalf("%d round trips, read %d", trips.Data.Total, len(trips.Data.Trades))
			}
			want := independentFigures(t, 10000, times, values, c.perYear)
			closed, won, open := 0, 0, 0
			for _, r := range trips.Data.Trades {
				switch {
				case r.IsOpen:
					open++
				case r.PnLNet >= 0:
					closed++
					won++
				default:
					closed++
				}
			}
			if closed < 2 {
				t.Fatalf("%d closed trades: too few to test the trade figures", closed)
			}
			want["win_rate"] = float64(won) / float64(closed) * 100
			want["total_trades"] = float64(closed + open)

			// The summary: each figure, against ours.
			var sum struct {
				Data map[string]*float64 `json:"data"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/"+id+"/summary", &sum)
			s := func(k string) float64 {
				if sum.Data[k] == nil {
					t.Fatalf("summary %s is null", k)
				}
				return *sum.Data[k]
			}
			for _, k := range []struct {
				summary, ours string
				rel           float64
			}{
				{"total_return", "total_return", 1e-12}, {"annual_return", "cagr", 1e-9}, {"sharpe_ratio", "sharpe_ratio", 1e-9},
				{"max_drawdown_pct", "max_drawdown_pct", 1e-12}, {"max_drawdown", "max_drawdown", 1e-12},
				{"win_rate", "win_rate", 1e-12}, {"total_trades", "total_trades", 0},
			} {
				if got, w := s(k.summary), want[k.ours]; math.Abs(got-w) > k.rel*math.Max(1, math.Abs(w)) {
					t.Errorf("summary %s = %v, computed from the equity and trades routes %v", k.summary, got, w)
				}
			}

			// The statistics record: the same stored numbers.
			var stats struct {
				Data engine.Statistics `json:"data"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/"+id+"/statistics", &stats)
			stat := func(k string) float64 {
				m := stats.Data.Get(k)
				if m == nil || m.Value == nil {
					t.Fatalf("statistics %s missing or null", k)
				}
				return *m.Value
			}
			same := func(where, key string, got, w float64) {
				t.Helper()
				if got != w {
					t.Errorf("%s %s = %v, summary %v", where, key, got, w)
				}
			}
			for _, k := range [][2]string{{"total_return", "total_return"}, {"cagr", "annual_return"}, {"sharpe_ratio", "sharpe_ratio"},
				{"max_drawdown", "max_drawdown_pct"}, {"win_rate", "win_rate"}, {"total_trades", "total_trades"}} {
				same("statistics", k[0], stat(k[0]), s(k[1]))
			}
			for _, k := range []struct {
				key string
				rel float64
			}{{"max_drawdown_duration", 0}, {"calmar_ratio", 1e-9}, {"recovery_factor", 1e-12}} {
				if got, w := stat(k.key), want[k.key]; math.Abs(got-w) > k.rel*math.Max(1, math.Abs(w)) {
					t.Errorf("statistics %s = %v, computed %v", k.key, got, w)
				}
			}
			if n := stats.Data.Get("sharpe_ratio").Explanation; !strings.Contains(n, strconv.FormatFloat(math.Round(c.perYear), 'f', -1, 64)) && c.perYear <= 252 {
				t.Errorf("the Sharpe ratio's explanation does not name N = %v: %q", c.perYear, n)
			}
			// The drawdown table (its 100 deepest rows): none is longer than the duration, and
			// when it lists every fall, its longest row is the duration.
			var dds struct {
				Data []struct {
					Days float64 `json:"days"`
				} `json:"data"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/"+id+"/drawdowns?limit=100", &dds)
			longest := 0.0
			for _, p := range dds.Data {
				longest = math.Max(longest, p.Days)
			}
			if d := stat("max_drawdown_duration"); math.Round(longest) > d || (len(dds.Data) < 100 && math.Round(longest) != d) {
				t.Errorf("drawdown table's longest fall %v days (%d rows), statistics %v", longest, len(dds.Data), d)
			}

			// The runs list.
			j := slices.IndexFunc(list, func(x struct {
				TaskID  string             `json:"task_id"`
				Figures map[string]float64 `json:"figures"`
			}) bool {
				return x.TaskID == id
			})
			if j < 0 || list[j].Figures == nil {
				t.Fatalf("run %s not in the runs list with figures", id)
			}
			for _, k := range []string{"total_return", "max_drawdown_pct", "sharpe_ratio", "total_trades", "final_value"} {
				same("runs list", k, list[j].Figures[k], s(k))
			}

			// bi_results, through SQL.
			var bi struct {
				totalReturn, annual, sharpe, maxDD, maxDDPct, winRatePct, calmar, recovery float64
				duration, trades, won, lost                                                int
			}
			if err := e.st.Pool.QueryRow(ctx, `SELECT total_return, annual_return, sharpe_ratio, max_drawdown, max_drawdown_pct,
				win_rate_pct, calmar_ratio, recovery_factor, max_drawdown_duration, total_trades, won, lost FROM bi_results WHERE task_id = $1`, id).
				Scan(&bi.totalReturn, &bi.annual, &bi.sharpe, &bi.maxDD, &bi.maxDDPct, &bi.winRatePct, &bi.calmar, &bi.recovery, &bi.duration, &bi.trades, &bi.won, &bi.lost); err != nil {
				t.Fatalf("bi_results: %v", err)
			}
			same("bi_results", "total_return", bi.totalReturn, s("total_return"))
			same("bi_results", "annual_return", bi.annual, s("annual_return"))
			same("bi_results", "sharpe_ratio", bi.sharpe, s("sharpe_ratio"))
			same("bi_results", "max_drawdown", bi.maxDD, s("max_drawdown"))
			same("bi_results", "max_drawdown_pct", bi.maxDDPct, s("max_drawdown_pct"))
			same("bi_results", "win_rate_pct", bi.winRatePct, s("win_rate"))
			same("bi_results", "total_trades", float64(bi.trades), s("total_trades"))
			same("bi_results", "calmar_ratio", bi.calmar, stat("calmar_ratio"))
			same("bi_results", "recovery_factor", bi.recovery, stat("recovery_factor"))
			same("bi_results", "max_drawdown_duration", float64(bi.duration), stat("max_drawdown_duration"))
			if bi.won != won || bi.lost != closed-won || bi.trades != closed+open {
				t.Errorf("bi_results counts %d trades, %d won, %d lost; the round trips %d closed (%d won) and %d open", bi.trades, bi.won, bi.lost, closed, won, open)
			}

			// The comparison, JSON and CSV, beside another run.
			other := ids[0]
			if other == id {
				other = ids[1]
			}
			var cmpJSON struct {
				Data struct {
					Tasks []struct {
						TaskID string `json:"task_id"`
					} `json:"tasks"`
					Metrics []struct {
						Key    string     `json:"key"`
						Values []*float64 `json:"values"`
					} `json:"metrics"`
				} `json:"data"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/compare?task_ids="+other+","+id, &cmpJSON)
			var cmpCSV struct {
				Data string `json:"data"`
			}
			getJSONInto(t, e.srv.URL+"/api/results/compare?format=csv&task_ids="+other+","+id, &cmpCSV)
			cr := csv.NewReader(strings.NewReader(cmpCSV.Data))
			cr.FieldsPerRecord = -1 // the equity section after the metrics has other columns
			rows, err := cr.ReadAll()
			if err != nil {
				t.Fatalf("comparison CSV: %v", err)
			}
			csvRow := map[string][]string{}
			for _, r := range rows {
				csvRow[r[0]] = r
			}
			if len(cmpJSON.Data.Tasks) != 2 || cmpJSON.Data.Tasks[1].TaskID != id || len(rows) == 0 || rows[0][2] != id {
				t.Fatalf("comparison columns %v / %v, want %s second", cmpJSON.Data.Tasks, rows[0], id)
			}
			compared := map[string]float64{}
			for _, m := range cmpJSON.Data.Metrics {
				if m.Values[1] == nil {
					continue
				}
				compared[m.Key] = *m.Values[1]
				cell := csvRow[m.Key]
				if len(cell) < 3 {
					t.Errorf("comparison CSV lacks %s", m.Key)
					continue
				}
				if v, err := strconv.ParseFloat(cell[2], 64); err != nil || v != *m.Values[1] {
					t.Errorf("comparison CSV %s = %q, JSON %v", m.Key, cell[2], *m.Values[1])
				}
			}
			for _, k := range []string{"total_return", "annual_return", "sharpe_ratio", "max_drawdown", "max_drawdown_pct", "win_rate", "total_trades", "final_value"} {
				same("comparison", k, compared[k], s(k))
			}
			for _, k := range []string{"max_drawdown_duration", "calmar_ratio", "recovery_factor", "cagr"} {
				same("comparison", k, compared[k], stat(k))
			}

			// The study of the same combination: its leaderboard row and objective.
			if studies[i] != "" {
				e.waitStudy(t, studies[i], "completed")
				var board struct {
					Trials []map[string]any `json:"trials"`
				}
				getJSONInto(t, e.srv.URL+"/api/studies/"+studies[i]+"/results", &board)
				if len(board.Trials) != 1 || board.Trials[0]["status"] != "completed" {
					t.Fatalf("study %s: %v", studies[i], board.Trials)
				}
				row := board.Trials[0]
				for _, k := range []string{"total_return", "annual_return", "sharpe_ratio", "max_drawdown_pct", "max_drawdown", "win_rate", "total_trades", "final_value"} {
					v, _ := row[k].(float64)
					same("study leaderboard", k, v, s(k))
				}
				if v, _ := row["objective"].(float64); v != s("sharpe_ratio") {
					t.Errorf("study objective %v, the run's sharpe_ratio %v", row["objective"], s("sharpe_ratio"))
				}
				if v, _ := row["max_drawdown_duration"].(float64); v != stat("max_drawdown_duration") {
					t.Errorf("study max_drawdown_duration %v, statistics %v", row["max_drawdown_duration"], stat("max_drawdown_duration"))
				}
			}

			// Monte Carlo's "this run", in each method.
			for _, method := range []string{"shuffle", "bootstrap", "block"} {
				var mc struct {
					Data struct {
						Original struct {
							FinalValue     float64  `json:"final_value"`
							CAGR           *float64 `json:"cagr"`
							MaxDrawdownPct float64  `json:"max_drawdown_pct"`
						} `json:"original"`
					} `json:"data"`
				}
				getJSONInto(t, e.srv.URL+"/api/results/"+id+"/montecarlo?runs=10&method="+method, &mc)
				o := mc.Data.Original
				same("Monte Carlo "+method, "final_value", o.FinalValue, s("final_value"))
				same("Monte Carlo "+method, "max_drawdown_pct", o.MaxDrawdownPct, s("max_drawdown_pct"))
				if o.CAGR == nil {
					t.Errorf("Monte Carlo %s: no CAGR", method)
				} else {
					same("Monte Carlo "+method, "cagr", *o.CAGR, s("annual_return"))
				}
			}

			// The HTML report: the headline cards and the statistics table show these
			// numbers, to the digits they print.
			html := getText(t, e.srv.URL+"/api/results/"+id+"/export?format=html")
			for _, k := range []struct {
				key   string
				card  bool
				value float64 // as displayed: percents of fractions
			}{
				{"total_return", true, s("total_return") * 100}, {"annual_return", true, s("annual_return") * 100},
				{"sharpe_ratio", true, s("sharpe_ratio")}, {"max_drawdown_pct", true, s("max_drawdown_pct")},
				{"win_rate", true, s("win_rate")}, {"total_trades", true, s("total_trades")},
				{"cagr", false, s("annual_return") * 100}, {"sharpe_ratio", false, s("sharpe_ratio")},
				{"max_drawdown", false, s("max_drawdown_pct")}, {"win_rate", false, s("win_rate")},
				{"max_drawdown_duration", false, stat("max_drawdown_duration")},
				{"calmar_ratio", false, stat("calmar_ratio")}, {"recovery_factor", false, stat("recovery_factor")},
			} {
				text, ok := reportValue(html, k.key, k.card)
				if !ok {
					t.Errorf("HTML report: no %s (card %v)", k.key, k.card)
					continue
				}
				if v, digits, ok := parseShown(text); !ok || math.Abs(v-k.value) > 0.5*math.Pow(10, -float64(digits))+1e-9 {
					t.Errorf("HTML report %s (card %v) shows %q, the API %v", k.key, k.card, text, k.value)
				}
			}
		})
	}
}

// independentFigures computes, from a run's equity curve alone, the figures the service
// shows: its own rules, written out again (docs/backtests.md, "What each figure means").
func independentFigures(t *testing.T, cash float64, times []time.Time, values []float64, wantPerYear float64) map[string]float64 {
	t.Helper()
	n := len(values)
	if n < 3 {
		t.Fatalf("%d equity points", n)
	}
	// Bars a year from the median gap (and, intraday, the bars per day with a bar).
	gaps := make([]time.Duration, n-1)
	for i := 1; i < n; i++ {
		gaps[i-1] = times[i].Sub(times[i-1])
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	var perYear float64
	switch g := gaps[len(gaps)/2]; {
	case g >= 20*24*time.Hour:
		perYear = 12
	case g >= 4*24*time.Hour:
		perYear = 52
	case g >= 20*time.Hour:
		perYear = 252
	default:
		dates := map[string]bool{}
		for _, tm := range times {
			dates[tm.UTC().Format(time.DateOnly)] = true
		}
		perYear = 252 * float64(n) / float64(len(dates))
	}
	if perYear != wantPerYear {
		t.Fatalf("the curve's bars make %v a year, want %v", perYear, wantPerYear)
	}
	// Returns per period: per bar, two points of one calendar day as one on daily or longer bars.
	var rets []float64
	prev := cash
	for i, v := range values {
		r := v/prev - 1
		prev = v
		if perYear <= 252 && i > 0 && times[i].UTC().Format(time.DateOnly) == times[i-1].UTC().Format(time.DateOnly) {
			rets[len(rets)-1] = (1+rets[len(rets)-1])*(1+r) - 1
			continue
		}
		rets = append(rets, r)
	}
	var mean, ss float64
	for _, r := range rets {
		mean += r
	}
	mean /= float64(len(rets))
	for _, r := range rets {
		ss += (r - mean) * (r - mean)
	}
	out := map[string]float64{"sharpe_ratio": mean / math.Sqrt(ss/float64(len(rets))) * math.Sqrt(perYear)}
	final := values[n-1]
	out["total_return"] = final/cash - 1
	out["cagr"] = math.Pow(final/cash, 365.25/(times[n-1].Sub(times[0]).Hours()/24)) - 1
	// Drawdowns from the curve's own peaks; the longest fall from its peak to the first point
	// back at it, or to the last point.
	peak, peakAt := values[0], 0
	var maxDD, maxDDMoney, longest float64
	for i, v := range values {
		if v >= peak {
			if i > peakAt+1 { // the points between were below the peak
				longest = math.Max(longest, times[i].Sub(times[peakAt]).Hours()/24)
			}
			peak, peakAt = v, i
			continue
		}
		maxDD = math.Max(maxDD, 100*(peak-v)/peak)
		maxDDMoney = math.Max(maxDDMoney, peak-v)
		if i == n-1 {
			longest = math.Max(longest, times[i].Sub(times[peakAt]).Hours()/24)
		}
	}
	out["max_drawdown_pct"], out["max_drawdown"] = maxDD, maxDDMoney
	out["max_drawdown_duration"] = math.Round(longest)
	out["calmar_ratio"] = out["cagr"] / (maxDD / 100)
	out["recovery_factor"] = out["total_return"] / (maxDD / 100)
	return out
}

func parseAPITime(t *testing.T, s string) time.Time {
	t.Helper()
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if tm, err := time.Parse(layout, s); err == nil {
			return tm
		}
	}
	t.Fatalf("time %q", s)
	return time.Time{}
}

// getJSONInto GETs url and decodes its JSON answer into v; anything but a 200 fails.
func getJSONInto(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return string(raw)
}

// reportValue is the text the HTML report shows for key: its headline card's (card) or its
// statistics row's.
func reportValue(html, key string, card bool) (string, bool) {
	re := regexp.MustCompile(`<td data-key="` + regexp.QuoteMeta(key) + `">([^<]*)</td>`)
	if card {
		re = regexp.MustCompile(`<li class="card" data-key="` + regexp.QuoteMeta(key) + `"><span class="label">[^<]*</span><span class="value[^"]*">([^<]*)</span>`)
	}
	m := re.FindStringSubmatch(html)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// parseShown reads a number as the report prints it ("−1,234.50%", "12 days") and the digits
// it shows after the point.
func parseShown(text string) (float64, int, bool) {
	s := strings.NewReplacer("−", "-", ",", "", "%", "", " days", "").Replace(strings.TrimSpace(text))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, 0, false
	}
	digits := 0
	if _, frac, ok := strings.Cut(s, "."); ok {
		digits = len(frac)
	}
	return v, digits, true
}
