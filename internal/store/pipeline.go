package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pipeline is a transaction whose statements without a result wait and travel with the
// next statement that has one, or with the commit, in one round trip (a pgx batch): a
// run's completion, a dozen statements, then costs a few round trips instead of one each.
// It is a DBTX, so the generated queries run on it unchanged, with two differences: an
// Exec returns an empty command tag (a query that needs its count must use QueryRow), and
// an Exec's error is returned by the call that sends it (a later QueryRow, Query,
// CopyFrom or the commit), named after its statement. The transaction commits, durably
// as any other, when the function given to WithPipeline returns nil.
type Pipeline struct {
	conn  *pgx.Conn
	batch pgx.Batch
	begun bool // the begin statement has been sent
	err   error
}

var _ DBTX = (*Pipeline)(nil)

// WithPipeline runs fn in a transaction on a Pipeline: the begin goes with fn's first
// statement that has a result, and fn's last statements without one go with the commit.
// The transaction is rolled back when fn or a statement fails.
func (s *Store) WithPipeline(ctx context.Context, fn func(p *Pipeline) error) error {
	c, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a connection: %w", err)
	}
	defer c.Release()
	p := &Pipeline{conn: c.Conn()}
	p.batch.Queue("begin")
	if err := fn(p); err != nil {
		p.rollback(ctx)
		return err
	}
	if p.err != nil {
		p.rollback(ctx)
		return p.err
	}
	p.batch.Queue("commit")
	if err := p.flush(ctx); err != nil {
		p.rollback(ctx)
		return err
	}
	return nil
}

// rollback ends a transaction that failed or whose function failed. Nothing to do when
// nothing was sent.
func (p *Pipeline) rollback(ctx context.Context) {
	if !p.begun || p.conn.PgConn().TxStatus() == 'I' {
		return
	}
	if _, err := p.conn.Exec(ctx, "rollback"); err != nil {
		_ = p.conn.Close(ctx) // the pool then discards the connection
	}
}

// flush sends the queued statements and reads their results.
func (p *Pipeline) flush(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	if p.batch.Len() == 0 {
		return nil
	}
	b := p.batch
	p.batch = pgx.Batch{}
	p.begun = true
	br := p.conn.SendBatch(ctx, &b)
	err := readExecs(br, b.QueuedQueries)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		p.err = err
	}
	return err
}

// readExecs reads the results of queued statements without a result.
func readExecs(br pgx.BatchResults, qs []*pgx.QueuedQuery) error {
	for _, q := range qs {
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("%s: %w", statementName(q.SQL), err)
		}
		if q.SQL == "commit" && tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
	}
	return nil
}

// Exec queues sql to go with the next statement sent.
func (p *Pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.err != nil {
		return pgconn.CommandTag{}, p.err
	}
	p.batch.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// QueryRow sends the queued statements and sql in one round trip.
func (p *Pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if p.err != nil {
		return errRow{p.err}
	}
	qs := p.batch.QueuedQueries
	p.batch.Queue(sql, args...)
	b := p.batch
	p.batch = pgx.Batch{}
	p.begun = true
	br := p.conn.SendBatch(ctx, &b)
	if err := readExecs(br, qs); err != nil {
		_ = br.Close()
		p.err = err
		return errRow{err}
	}
	return &batchRow{p: p, br: br, row: br.QueryRow()}
}

// Query sends the queued statements, then sql.
func (p *Pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.conn.Query(ctx, sql, args...)
}

// CopyFrom sends the queued statements, then the COPY.
func (p *Pipeline) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := p.flush(ctx); err != nil {
		return 0, err
	}
	n, err := p.conn.CopyFrom(ctx, table, cols, src)
	if err != nil {
		p.err = err
	}
	return n, err
}

// batchRow is the row of the last statement of a batch; scanning it closes the batch.
type batchRow struct {
	p   *Pipeline
	br  pgx.BatchResults
	row pgx.Row
}

func (r *batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	cerr := r.br.Close()
	switch {
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		r.p.err = err
	case cerr != nil:
		r.p.err = cerr
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
