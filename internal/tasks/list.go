package tasks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
			fig := &Figures{TotalReturn: *t.FigTotalReturn, SharpeRatio: t.FigSharpeRatio}
			if t.FigMaxDrawdownPct != nil {
				fig.MaxDrawdownPct = *t.FigMaxDrawdownPct
			}
			if t.FigTotalTrades != nil {
				fig.TotalTrades = int(*t.FigTotalTrades)
			}
			if t.FigFinalValue != nil {
				fig.FinalValue = *t.FigFinalValue
			}
			page.Tasks[i].Figures = fig
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

// listRows runs the query of f's order, each served by its index (migration 00042): newest
// or oldest first from db/queries/runs_list.sql, a figure's order from figureQuery.
func (s *Service) listRows(ctx context.Context, tx pgx.Tx, f ListFilter, after cursor, status, strategy, symbol *string) ([]listRow, error) {
	skip, lim := int32(f.Skip), int32(f.Limit)
	if f.Sort == "" || f.Sort == "created_at" {
		p := store.ListTasksParams{AfterID: after.ID, Status: status, StrategyID: strategy, Symbol: symbol, Skip: skip, Lim: lim}
		if after.ID != "" {
			p.AfterCreated = &after.Created
		}
		if f.Ascending {
			rs, err := s.q.ListTasksOldest(ctx, tx, store.ListTasksOldestParams(p))
			out := make([]listRow, len(rs))
			for i, r := range rs {
				out[i] = listRow(r)
			}
			return out, err
		}
		return s.q.ListTasks(ctx, tx, p)
	}
	fig, ok := figures[f.Sort]
	if !ok {
		return nil, apperr.Invalid("Invalid sort '%s'", f.Sort)
	}
	dir := descending
	if f.Ascending {
		dir = ascending
	}
	sql, args := figureQuery(fig, dir, after, status, strategy, symbol, skip, lim)
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	rs, err := pgx.CollectRows(rows, pgx.RowToStructByName[figureRow])
	out := make([]listRow, len(rs))
	for i, r := range rs {
		out[i] = listRow{Task: r.Task, Part: r.Part}
	}
	return out, err
}

// figure is a figure sort's column of tasks (each with two partial indexes, migration
// 00042: the rows with the figure by it, those without by creation) and whether it is an
// integer, which a cursor's figure is rounded to.
type figure struct {
	column  string
	integer bool
}

// figures are the figure sorts by their name in ListSorts: the only text figureQuery takes
// into its SQL, never the request's own.
var figures = map[string]figure{
	"total_return": {column: "fig_total_return"},
	"max_drawdown": {column: "fig_max_drawdown_pct"},
	"sharpe_ratio": {column: "fig_sharpe_ratio"},
	"total_trades": {column: "fig_total_trades", integer: true},
}

// direction is the order of a figure sort.
type direction int

const (
	descending direction = iota // highest first, ties newest first
	ascending                   // lowest first, ties oldest first
)

// sql is the direction's keyword and the comparison that keeps the rows after a cursor.
func (d direction) sql() (keyword, after string) {
	if d == ascending {
		return "ASC", ">"
	}
	return "DESC", "<"
}

// figureRow is a row of figureQuery: the task's columns, then its part.
type figureRow struct {
	store.Task
	Part int32
}

// figureQuery is the query of a figure's order and its arguments. Part 0 is the runs with
// the figure in fig's order, part 1 those without it, newest first; a cursor in part 1
// (after.Tail) skips part 0. Only the filters given are written, so each query is planned
// for the indexes its values can use (no "$1 IS NULL OR ..."). Values are parameters; the
// text comes from figures and direction only.
func figureQuery(fig figure, dir direction, after cursor, status, strategy, symbol *string, skip, lim int32) (string, []any) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var conds []string // the filters given, for the alias %[1]s
	if status != nil {
		conds = append(conds, "%[1]s.status = "+arg(*status))
	}
	if strategy != nil {
		conds = append(conds, "%[1]s.strategy_id = "+arg(*strategy))
	}
	if symbol != nil {
		conds = append(conds, "%[1]s.symbols @> ARRAY["+arg(*symbol)+"::text]")
	}
	filters := func(alias string) string {
		var b strings.Builder
		for _, c := range conds {
			b.WriteString(" AND ")
			b.WriteString(fmt.Sprintf(c, alias))
		}
		return b.String()
	}
	top := arg(skip + lim) // the most rows either part gives
	kw, op := dir.sql()
	col := fig.column
	var parts []string
	if !after.Tail {
		where := fmt.Sprintf("a.%s IS NOT NULL", col)
		if after.Fig != nil {
			v := arg(*after.Fig) + "::float8"
			if fig.integer {
				v = "round(" + v + ")::integer"
			}
			where += fmt.Sprintf(" AND (a.%s, a.created_at, a.id) %s (%s, %s::timestamptz, %s::text)", col, op, v, arg(after.Created), arg(after.ID))
		}
		order := fmt.Sprintf("a.%[1]s %[2]s, a.created_at %[2]s, a.id %[2]s", col, kw)
		parts = append(parts, fmt.Sprintf(`(SELECT a.id, 0 AS part, row_number() OVER (ORDER BY %[1]s) AS ord
   FROM tasks a WHERE %[2]s%[3]s
   ORDER BY %[1]s LIMIT %[4]s)`, order, where, filters("a"), top))
	}
	where := fmt.Sprintf("b.%s IS NULL", col)
	if after.Tail {
		where += fmt.Sprintf(" AND (b.created_at, b.id) < (%s::timestamptz, %s::text)", arg(after.Created), arg(after.ID))
	}
	parts = append(parts, fmt.Sprintf(`(SELECT b.id, 1 AS part, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS ord
   FROM tasks b WHERE %[1]s%[2]s
   ORDER BY b.created_at DESC, b.id DESC LIMIT %[3]s)`, where, filters("b"), top))
	// The page's ids first, skipped in the indexes, then its rows of tasks: an offset costs
	// index entries, not rows.
	sql := fmt.Sprintf(`SELECT t.*, x.part FROM (
  SELECT u.id, u.part, u.ord FROM (
  %s
  ) u
  ORDER BY u.part, u.ord
  OFFSET %s LIMIT %s
) x
JOIN tasks t ON t.id = x.id
ORDER BY x.part, x.ord`, strings.Join(parts, "\n  UNION ALL\n  "), arg(skip), arg(lim))
	return sql, args
}
