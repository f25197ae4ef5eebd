package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Counter is a pgx tracer that counts what a pool sends PostgreSQL: round trips (a query,
// a pipelined batch or a COPY each count one), statements by name (sqlc's and River's
// "-- name:" comment, else the first words) and commits. Tests use it to pin how many
// statements a piece of work costs (Open's tracers).
type Counter struct {
	mu      sync.Mutex
	trips   int
	commits int
	byName  map[string]int
	byTrip  map[string]int
}

// Counts is a Counter's tally at one moment.
type Counts struct {
	RoundTrips, Commits, Statements int
	ByName                          map[string]int // statements by name
	// Round trips by what they carried: the names of their statements joined by "+".
	ByTrip map[string]int
}

// String lists the tally, most frequent statements first.
func (c Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d round trips, %d statements, %d commits; round trips:", c.RoundTrips, c.Statements, c.Commits)
	for _, n := range mostFirst(c.ByTrip) {
		fmt.Fprintf(&b, "\n  %5d %s", c.ByTrip[n], n)
	}
	return b.String()
}

func mostFirst(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

// Snapshot returns the tally so far.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Counts{RoundTrips: c.trips, Commits: c.commits, ByName: make(map[string]int, len(c.byName)), ByTrip: make(map[string]int, len(c.byTrip))}
	for n, k := range c.byName {
		out.ByName[n] = k
		out.Statements += k
	}
	for n, k := range c.byTrip {
		out.ByTrip[n] = k
	}
	return out
}

// Since is the tally between before and now.
func (c Counts) Since(before Counts) Counts {
	out := Counts{RoundTrips: c.RoundTrips - before.RoundTrips, Commits: c.Commits - before.Commits,
		Statements: c.Statements - before.Statements, ByName: map[string]int{}, ByTrip: map[string]int{}}
	for n, k := range c.ByName {
		if d := k - before.ByName[n]; d != 0 {
			out.ByName[n] = d
		}
	}
	for n, k := range c.ByTrip {
		if d := k - before.ByTrip[n]; d != 0 {
			out.ByTrip[n] = d
		}
	}
	return out
}

func (c *Counter) note(trip bool, sqls ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName, c.byTrip = map[string]int{}, map[string]int{}
	}
	if trip {
		c.trips++
	}
	names := make([]string, len(sqls))
	for i, s := range sqls {
		n := statementName(s)
		if n == "commit" {
			c.commits++
		}
		c.byName[n]++
		names[i] = n
	}
	c.byTrip[strings.Join(names, "+")]++
}

// statementName names a statement by its "-- name: X" comment, else its first three words.
func statementName(sql string) string {
	s := strings.TrimSpace(sql)
	if i := strings.Index(s, "-- name: "); i >= 0 {
		rest := s[i+len("-- name: "):]
		if f := strings.Fields(rest); len(f) > 0 {
			return f[0]
		}
	}
	f := strings.Fields(strings.ToLower(s))
	return strings.Join(f[:min(len(f), 3)], " ")
}

// TraceQueryStart implements pgx.QueryTracer.
func (c *Counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.note(true, d.SQL)
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (c *Counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer: a batch is one round trip.
func (c *Counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	sqls := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		sqls[i] = q.SQL
	}
	c.note(true, sqls...)
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (c *Counter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (c *Counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TraceCopyFromStart implements pgx.CopyFromTracer.
func (c *Counter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	c.note(true, "copy "+d.TableName.Sanitize())
	return ctx
}

// TraceCopyFromEnd implements pgx.CopyFromTracer.
func (c *Counter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}
