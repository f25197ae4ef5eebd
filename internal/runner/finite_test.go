package runner

import (
	"math"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

func TestNonFinite(t *testing.T) {
	tests := []struct {
		name string
		res  engine.Result
		want string
	}{
		{"all finite", engine.Result{FinalValue: 1, Positions: []engine.PositionOut{{Size: 2}}}, ""},
		{"top level", engine.Result{FinalCash: math.Inf(1)}, "result.final_cash"},
		{"in a slice", engine.Result{Positions: []engine.PositionOut{{Size: 1}, {Size: 2, Price: math.NaN()}}}, "result.positions[1].price"},
		{"first of two", engine.Result{Positions: []engine.PositionOut{{Size: math.NaN()}}, FinalValue: math.NaN()}, "result.final_value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nonFinite(&tt.res); got != tt.want {
				t.Errorf("nonFinite = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEquityRoundTrip(t *testing.T) {
	t0 := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	eq := []engine.EquityPoint{
		{Time: t0, Value: 100, Cash: 50, Return: 0.01, Drawdown: 0, DrawdownMoney: 0},
		{Time: t0.AddDate(0, 0, 1), Value: 99, Cash: 50, Return: -0.01, Drawdown: 1, DrawdownMoney: 1},
	}
	got, bad := toWireEquity(eq).points()
	if bad != "" || len(got) != 2 || got[1] != eq[1] || !got[0].Time.Equal(t0) {
		t.Fatalf("points = %+v, %q; want %+v", got, bad, eq)
	}
	eq[1].Drawdown = math.Inf(-1)
	if _, bad := toWireEquity(eq).points(); bad != "result.equity[1].drawdown" {
		t.Errorf("bad = %q, want result.equity[1].drawdown", bad)
	}
	feeds := fromWireFeeds(toWireFeeds([]engine.Feed{{Symbol: "X", Bars: []engine.Bar{{Time: t0, Open: 1, High: 2, Low: 0.5, Close: 1.5, Volume: 7}}}}))
	if b := feeds[0].Bars[0]; feeds[0].Symbol != "X" || b.Close != 1.5 || b.Volume != 7 || !b.Time.Equal(t0) {
		t.Errorf("feed round trip = %+v", feeds[0])
	}
}
