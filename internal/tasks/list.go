package tasks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// ListFilter selects and orders tasks for List.
type ListFilter struct {
	Status     string
	StrategyID string
	Symbol     string // any of the task's feeds
	Sort       string // one of ListSorts; empty is created_at
	Ascending  bool   // the default is descending: newest, highest first
	Count      bool   // count the matches too (up to CountCap)
	Cursor     string // where the previous page ended (Page.Next); empty: the start
	Skip       int    // rows skipped (after the cursor, if any)
	Limit      int
}

// ListSorts are what the runs list sorts by: creation time or a key figure of the result.
var ListSorts = []string{"created_at", "total_return", "max_drawdown", "sharpe_ratio", "total_trades"}

// Figures are a finished run's key figures, as the runs list shows them.
type Figures struct {
	TotalReturn    float64  `json:"total_return"`     // percent
	MaxDrawdownPct float64  `json:"max_drawdown_pct"` // percent
	SharpeRatio    *float64 `json:"sharpe_ratio"`     // nil when undefined
	TotalTrades    int      `json:"total_trades"`
	FinalValue     float64  `json:"final_value"`
}

// CountCap is the most tasks List counts: past it the count is a lower bound (Page.Capped).
const CountCap = 10000

// Page is a page of the runs list.
type Page struct {
	Tasks []Task
	// Total is how many tasks the filter matches, up to CountCap (-1: not counted); Capped
	// says it reached the cap, so there are at least that many.
	Total  int
	Capped bool
	// Next is the cursor of the page after this one; empty when this page is the last.
	Next string
}

// cursor is where a page ended: the order it was read in (sort and direction must match
// the next request's), the part (0: tasks with the sort's figure, 1: those without) and the
// last row's keys.
type cursor struct {
	Sort    string    `json:"s"`
	Asc     bool      `json:"a,omitempty"`
	Tail    bool      `json:"t,omitempty"`
	Fig     *float64  `json:"f,omitempty"`
	Created time.Time `json:"c"`
	ID      string    `json:"i"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, f ListFilter) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" || c.Created.IsZero() {
		return c, apperr.Invalid("Invalid cursor: pass the X-Next-Cursor of the previous page as it is")
	}
	if c.Sort != sortOf(f) || c.Asc != f.Ascending {
		return c, apperr.Invalid("Invalid cursor: it continues a list sorted by %s; ask with the same sort and order", c.Sort)
	}
	return c, nil
}

func sortOf(f ListFilter) string {
	if f.Sort == "" {
		return "created_at"
	}
	return f.Sort
}

// List returns a page of tasks, each completed one with its key figures, and, when f.Count,
// how many tasks the filter matches (up to CountCap). Every order is read from an index and
// a cursor continues where the previous page ended, so a page costs the same at any depth;
// Skip counts rows read and dropped, for the spec's offset paging.
func (s *Service) List(ctx context.Context, f ListFilter) (Page, error) {
	page := Page{Total: -1}
	var after cursor
	if f.Cursor != "" {
		var err error
		if after, err = decodeCursor(f.Cursor, f); err != nil {
			return page, err
		}
	}
	var status, strategy, symbol *string
	if f.Status != "" {
		status = &f.Status
	}
	if f.StrategyID != "" {
		strategy = &f.StrategyID
	}
	if f.Symbol != "" {
		symbol = &f.Symbol
	}
	var rows []listRow
	err := s.db.WithSnapshot(ctx, func(tx pgx.Tx) error {
		// Planned for these values: a generic plan of the "$1 IS NULL OR ..." filters
		// scans for all of them at once.
		if err := s.q.ListPlansCustom(ctx, tx); err != nil {
			return err
		}
		var err error
		if rows, err = s.listRows(ctx, tx, f, after, status, strategy, symbol); err != nil {
			return err
		}
		if f.Count {
			n, err := s.q.CountTasks(ctx, tx, store.CountTasksParams{Status: status, StrategyID: strategy, Symbol: symbol, Cap: CountCap})
			if err != nil {
				return fmt.Errorf("count tasks: %w", err)
			}
			page.Total, page.Capped = int(n), n >= CountCap
		}
		return nil
	})
	if err != nil {
		return page, fmt.Errorf("list tasks: %w", err)
	}
	page.Tasks = make([]Task, len(rows))
	for i, r := range rows {
		page.Tasks[i] = fromRow(r.Task)
		t := r.Task
		if t.FigTotalReturn != nil {
			page.Tasks[i].Figures = &Figures{TotalReturn: *t.FigTotalReturn, MaxDrawdownPct: deref(t.FigMaxDrawdownPct),
				SharpeRatio: t.FigSharpeRatio, TotalTrades: int(deref(t.FigTotalTrades)), FinalValue: deref(t.FigFinalValue)}
		}
	}
	if len(rows) == f.Limit && f.Limit > 0 {
		last := rows[len(rows)-1]
		page.Next = cursor{Sort: sortOf(f), Asc: f.Ascending, Tail: last.Part == 1, Fig: figureOf(last.Task, f.Sort),
			Created: last.Task.CreatedAt, ID: last.Task.ID}.encode()
	}
	return page, nil
}

// listRow is a row of every list query: the task and the part it came from.
type listRow = store.ListTasksRow

// figureOf is the task's value of the figure sort sorts by (nil: none, or a time sort).
func figureOf(t store.Task, sort string) *float64 {
	switch sort {
	case "total_return":
		return t.FigTotalReturn
	case "max_drawdown":
		return t.FigMaxDrawdownPct
	case "sharpe_ratio":
		return t.FigSharpeRatio
	case "total_trades":
		if t.FigTotalTrades != nil {
			v := float64(*t.FigTotalTrades)
			return &v
		}
	}
	return nil
}

// listRows runs the query of f's order: one per sort and direction, each served by its
// index (db/queries/runs_list.sql).
func (s *Service) listRows(ctx context.Context, tx pgx.Tx, f ListFilter, after cursor, status, strategy, symbol *string) ([]listRow, error) {
	skip, lim := int32(f.Skip), int32(f.Limit)
	if f.Sort == "" || f.Sort == "created_at" {
		p := store.ListTasksParams{AfterID: after.ID, Status: status, StrategyID: strategy, Symbol: symbol, Skip: skip, Lim: lim}
		if after.ID != "" {
			p.AfterCreated = &after.Created
		}
		if f.Ascending {
			return convert(s.q.ListTasksOldest(ctx, tx, store.ListTasksOldestParams(p)))
		}
		return s.q.ListTasks(ctx, tx, p)
	}
	p := store.ListTasksByTotalReturnDescParams{AfterTail: after.Tail, AfterFig: after.Fig, AfterCreated: after.Created, AfterID: after.ID,
		Status: status, StrategyID: strategy, Symbol: symbol, Skip: skip, Lim: lim}
	switch {
	case f.Sort == "total_return" && !f.Ascending:
		return convert(s.q.ListTasksByTotalReturnDesc(ctx, tx, p))
	case f.Sort == "total_return":
		return convert(s.q.ListTasksByTotalReturnAsc(ctx, tx, store.ListTasksByTotalReturnAscParams(p)))
	case f.Sort == "max_drawdown" && !f.Ascending:
		return convert(s.q.ListTasksByMaxDrawdownDesc(ctx, tx, store.ListTasksByMaxDrawdownDescParams(p)))
	case f.Sort == "max_drawdown":
		return convert(s.q.ListTasksByMaxDrawdownAsc(ctx, tx, store.ListTasksByMaxDrawdownAscParams(p)))
	case f.Sort == "sharpe_ratio" && !f.Ascending:
		return convert(s.q.ListTasksBySharpeRatioDesc(ctx, tx, store.ListTasksBySharpeRatioDescParams(p)))
	case f.Sort == "sharpe_ratio":
		return convert(s.q.ListTasksBySharpeRatioAsc(ctx, tx, store.ListTasksBySharpeRatioAscParams(p)))
	case f.Sort == "total_trades" && !f.Ascending:
		return convert(s.q.ListTasksByTotalTradesDesc(ctx, tx, store.ListTasksByTotalTradesDescParams(p)))
	case f.Sort == "total_trades":
		return convert(s.q.ListTasksByTotalTradesAsc(ctx, tx, store.ListTasksByTotalTradesAscParams(p)))
	}
	return nil, apperr.Invalid("Invalid sort '%s'", f.Sort)
}

// convert turns the rows of the other list queries, which have ListTasks' columns, into
// its rows.
func convert[R ~struct {
	Task store.Task `json:"task"`
	Part int32      `json:"part"`
}](rs []R, err error) ([]listRow, error) {
	out := make([]listRow, len(rs))
	for i, r := range rs {
		out[i] = listRow(r)
	}
	return out, err
}
