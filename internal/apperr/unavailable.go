package apperr

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DatabaseRetryAfter is the Retry-After of a request refused because the database could
// not be reached: about how long a restarting PostgreSQL or a failover takes.
const DatabaseRetryAfter = 5 * time.Second

// DatabaseUnavailableDetail is the detail of such a refusal.
const DatabaseUnavailableDetail = "The database is unreachable: try again shortly"

// DatabaseUnreachable says whether err means that the database could not be reached, as
// opposed to a query that failed: a connection that could not be made (refused, timed
// out, or a database that accepts no connections), one the server or the network closed
// under the query (administrator shutdown, crash, reset), or a wait for a connection that
// ran out of time. The API answers these with 503 and Retry-After instead of 500: nothing
// is wrong with the request, and it will succeed once the database is back.
func DatabaseUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var (
		connect *pgconn.ConnectError
		op      *net.OpError
		pg      *pgconn.PgError
	)
	switch {
	case errors.As(err, &connect), errors.As(err, &op), errors.Is(err, pgconn.ErrConnClosed):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &pg):
		switch {
		case len(pg.Code) == 5 && pg.Code[:2] == "08": // connection_exception
			return true
		case pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		case pg.Code == "53300": // too_many_connections
			return true
		}
		return false
	case errors.Is(err, context.DeadlineExceeded):
		// A request's context that ran out waiting for a pool connection or a connect: the
		// client did not leave (that is context.Canceled), the database did not answer.
		return true
	}
	return false
}

// DatabaseUnavailable is the 503 answer for err when DatabaseUnreachable(err), with err kept as
// the logged cause.
func DatabaseUnavailable(err error) *Error {
	return &Error{Kind: KindUnavailable, Detail: DatabaseUnavailableDetail, Err: err, RetryAfter: DatabaseRetryAfter}
}
