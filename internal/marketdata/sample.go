package marketdata

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/store"
)

// DefaultSymbol is the built-in source's default ticker (symbols.is_default), one of the
// generated sample symbols.
const DefaultSymbol = "ACME"

// SampleSymbol describes one generated sample series. Real market data cannot ship with
// the code, so these are synthetic, deterministic and named "(sample data)".
type SampleSymbol struct {
	Symbol    string
	Name      string
	Timeframe string
	Start     time.Time // first bar (daily) or first trading day (intraday)
	Days      int       // trading days (Monday to Friday)
	Price     float64   // starting price
	Drift     float64   // yearly drift of the log price
	Vol       float64   // yearly volatility
}

// Samples is the sample data loaded at first start: ten years of daily bars for five
// symbols and three months of 5-minute bars for one.
var Samples = []SampleSymbol{
	{DefaultSymbol, "Acme Corp (sample data)", "1d", day(2015, 1, 2), 2608, 42, 0.09, 0.24},
	{"GLOBEX", "Globex Corporation (sample data)", "1d", day(2015, 1, 2), 2608, 118, 0.05, 0.18},
	{"INITECH", "Initech Software (sample data)", "1d", day(2015, 1, 2), 2608, 23, 0.14, 0.38},
	{"UMBRELLA", "Umbrella Pharma (sample data)", "1d", day(2015, 1, 2), 2608, 76, -0.02, 0.30},
	{"HOOLI", "Hooli Index Fund (sample data)", "1d", day(2015, 1, 2), 2608, 250, 0.07, 0.15},
	{"ACME5M", "Acme Corp 5-minute bars (sample data)", "5m", day(2024, 10, 1), 65, 51, 0.09, 0.24},
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// Generate returns the sample's bars: a geometric random walk seeded by the ticker, so every
// installation gets the same series. Daily bars fall on weekdays; 5-minute bars cover
// 14:30-21:00 UTC (the New York session) of each weekday.
func (s SampleSymbol) Generate() []engine.Bar {
	h := fnv.New64a()
	h.Write([]byte(s.Symbol))
	seed := h.Sum64()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	perDay := 1
	if s.Timeframe == "5m" {
		perDay = 78
	}
	step := 1.0 / (252 * float64(perDay))
	mu, sigma := (s.Drift-s.Vol*s.Vol/2)*step, s.Vol*math.Sqrt(step)
	bars := make([]engine.Bar, 0, s.Days*perDay)
	p := s.Price
	d := s.Start
	for n := 0; n < s.Days; d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		n++
		for k := 0; k < perDay; k++ {
			t := d
			if perDay > 1 {
				t = d.Add(14*time.Hour + 30*time.Minute + time.Duration(5*k)*time.Minute)
			}
			open := p
			if k == 0 {
				open = p * math.Exp(r.NormFloat64()*sigma*0.3) // overnight gap
			}
			p = open * math.Exp(mu+sigma*r.NormFloat64())
			hi := math.Max(open, p) * (1 + math.Abs(r.NormFloat64())*sigma*0.4)
			lo := math.Min(open, p) * (1 - math.Abs(r.NormFloat64())*sigma*0.4)
			vol := int64(float64(800_000/perDay) * math.Exp(0.4*r.NormFloat64()))
			bars = append(bars, engine.Bar{Time: t, Open: round2(open), High: round2(hi), Low: round2(lo), Close: round2(p), Volume: vol})
			p = round2(p)
		}
	}
	for i := range bars { // rounding must not break high >= open, close >= low
		b := &bars[i]
		b.High = math.Max(b.High, math.Max(b.Open, b.Close))
		b.Low = math.Min(b.Low, math.Min(b.Open, b.Close))
	}
	return bars
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// EnsureBuiltin registers the built-in source as the default data source and, when sample
// is true, loads the sample symbols unless they are already there. It is idempotent and
// safe when several processes start at once; with the data present it costs two queries.
func EnsureBuiltin(ctx context.Context, st *store.Store, sample bool) error {
	if _, err := q.GetDataSource(ctx, st.Pool, BuiltinSource); err == nil && !sample {
		return nil
	}
	if sample {
		if n, err := q.CountSampleSymbols(ctx, st.Pool, BuiltinSource); err == nil && int(n) >= len(Samples) {
			return nil
		}
	}
	return st.WithTx(ctx, func(tx pgx.Tx) error {
		if err := q.LockDataSource(ctx, tx, BuiltinSource); err != nil {
			return fmt.Errorf("lock data source: %w", err)
		}
		_, err := q.DefaultDataSource(ctx, tx)
		hasDefault := err == nil
		if err := q.UpsertDataSource(ctx, tx, store.UpsertDataSourceParams{
			Name: BuiltinSource, Description: BuiltinDescription, IsDefault: !hasDefault, Config: []byte(`{}`),
		}); err != nil {
			return fmt.Errorf("register built-in source: %w", err)
		}
		if !sample {
			return nil
		}
		_, err = q.DefaultSymbol(ctx, tx, BuiltinSource)
		hasDefaultSymbol := err == nil
		for _, s := range Samples {
			if _, err := q.GetSymbol(ctx, tx, store.GetSymbolParams{Source: BuiltinSource, Symbol: s.Symbol}); err == nil {
				continue // present (a sample, or the user's own data under that name): leave it
			}
			if err := q.UpsertSymbol(ctx, tx, store.UpsertSymbolParams{
				Source: BuiltinSource, Symbol: s.Symbol, Name: s.Name, IsSample: true,
				IsDefault: s.Symbol == DefaultSymbol && !hasDefaultSymbol, Timezone: DefaultZone,
			}); err != nil {
				return fmt.Errorf("register sample %s: %w", s.Symbol, err)
			}
			var res ImportResult
			if err := q.LockSymbolBars(ctx, tx, store.LockSymbolBarsParams{Source: BuiltinSource, Symbol: s.Symbol}); err != nil {
				return fmt.Errorf("lock sample %s: %w", s.Symbol, err)
			}
			if err := storeBars(ctx, tx, BuiltinSource, s.Symbol, s.Timeframe, s.Generate(), &res); err != nil {
				return fmt.Errorf("sample %s: %w", s.Symbol, err)
			}
		}
		return nil
	})
}
