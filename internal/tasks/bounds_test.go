package tasks_test

import (
	"math"
	"testing"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/tasks"
)

// TestCreateBounds checks the bounds of initial_cash, commission, start_date and end_date:
// values just outside are 400s with their detail, values at the edges are accepted.
func TestCreateBounds(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	sma := b.strategy(t, smaCross)
	with := func(f func(*tasks.Request)) tasks.Request {
		r := req(sma)
		f(&r)
		return r
	}
	cash := func(v float64) tasks.Request { return with(func(r *tasks.Request) { r.InitialCash = fp(v) }) }
	comm := func(v float64) tasks.Request { return with(func(r *tasks.Request) { r.Commission = fp(v) }) }
	dates := func(start, end string) tasks.Request {
		return with(func(r *tasks.Request) { r.StartDate, r.EndDate = sp(start), sp(end) })
	}
	const outOfRange = " is out of range: dates must be from 1900-01-01 to 2200-01-01"
	cases := []struct {
		name   string
		req    tasks.Request
		detail string // "" when the request is accepted
	}{
		{"cash default", req(sma), ""},
		{"cash small", cash(0.01), ""},
		{"cash reference", cash(10000), ""},
		{"cash at maximum", cash(1e12), ""},
		{"cash over maximum", cash(2e12), "initial_cash must be at most 1e12 (1,000,000,000,000), got 2e+12"},
		{"cash just over maximum", cash(math.Nextafter(1e12, math.Inf(1))), "initial_cash must be at most 1e12 (1,000,000,000,000), got 1.0000000000000001e+12"},
		{"cash zero", cash(0), "initial_cash must be a positive number, got 0"},
		{"cash negative", cash(-5), "initial_cash must be a positive number, got -5"},
		{"cash NaN", cash(math.NaN()), "initial_cash must be a positive number, got NaN"},
		{"cash infinite", cash(math.Inf(1)), "initial_cash must be a positive number, got +Inf"},
		{"commission zero", comm(0), ""},
		{"commission reference", comm(0.001), ""},
		{"commission high", comm(0.999), ""},
		{"commission one", comm(1), "commission must be less than 1: it is a fraction of the traded value (0.001 is 0.1%), got 1"},
		{"commission percent", comm(10), "commission must be less than 1: it is a fraction of the traded value (0.001 is 0.1%), got 10"},
		{"commission infinite", comm(math.Inf(1)), "commission must be less than 1: it is a fraction of the traded value (0.001 is 0.1%), got +Inf"},
		{"commission negative", comm(-0.001), "commission must be a fraction from 0 up to 1, got -0.001"},
		{"commission NaN", comm(math.NaN()), "commission must be a fraction from 0 up to 1, got NaN"},
		{"dates at the edges", dates("1900-01-01", "2200-01-01"), ""},
		{"start before 1900", dates("1899-12-31", "1983-12-31"), "start_date 1899-12-31" + outOfRange},
		{"start year 1", dates("0001-01-01", "1983-12-31"), "start_date 0001-01-01" + outOfRange},
		{"end after 2200", dates("1970-01-01", "2200-01-02"), "end_date 2200-01-02" + outOfRange},
		{"end year 9999", dates("1970-01-01", "9999-12-31"), "end_date 9999-12-31" + outOfRange},
		{"both outside", dates("1800-01-01", "2300-01-01"), "start_date 1800-01-01" + outOfRange},
	}
	accepted := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task, err := b.svc.Create(b.ctx, c.req)
			if c.detail != "" {
				apiErr(t, err, apperr.KindInvalid, c.detail)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			accepted++
			if c.req.InitialCash != nil && task.InitialCash != *c.req.InitialCash {
				t.Errorf("initial_cash stored as %v, want %v", task.InitialCash, *c.req.InitialCash)
			}
			if c.req.Commission != nil && task.Commission != *c.req.Commission {
				t.Errorf("commission stored as %v, want %v", task.Commission, *c.req.Commission)
			}
			if task.StartDate != *c.req.StartDate || task.EndDate != *c.req.EndDate {
				t.Errorf("dates stored as %s..%s, want %s..%s", task.StartDate, task.EndDate, *c.req.StartDate, *c.req.EndDate)
			}
		})
	}
	if n := b.count(t, `SELECT count(*) FROM tasks`); n != accepted {
		t.Fatalf("%d tasks stored, want %d (one per accepted request)", n, accepted)
	}
}
