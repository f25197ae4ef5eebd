package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// Paging bounds of the list routes (api/openapi.yaml documents them). skip is an SQL
// OFFSET, so at most the largest int4 (store.MaxOffset); limit is 1 to the route's maximum.
const (
	maxSkip = store.MaxOffset

	symbolsDefaultLimit  = 100
	tradesDefaultLimit   = 100
	tradesMaxLimit       = 1000
	taskListDefaultLimit = 100
	taskListMaxLimit     = 1000
	taskLogDefaultLimit  = 1000
	taskLogMaxLimit      = 10000
)

// queryInt reads the integer query parameter name, def when absent or blank. A value that is
// not an integer from lo to hi is a 400: `Invalid <name> '<value>': expected an integer from
// <lo> to <hi>`. It is the one parser of integer query parameters.
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	raw := r.URL.Query().Get(name)
	v := strings.TrimSpace(raw)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, apperr.Invalid("Invalid %s '%s': expected an integer from %d to %d", name, raw, lo, hi)
	}
	return n, nil
}

// queryTime reads the time query parameter name: RFC 3339 or a date (YYYY-MM-DD), which
// as the end of a range (endOfDay) includes the whole day. Absent or blank is the zero time.
func queryTime(r *http.Request, name string, endOfDay bool) (time.Time, error) {
	raw := r.URL.Query().Get(name)
	v := strings.TrimSpace(raw)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, apperr.Invalid("Invalid %s '%s': expected a date (YYYY-MM-DD) or an RFC 3339 time", name, raw)
	}
	if endOfDay {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
}

// paging reads skip (0 to maxSkip, default 0) and limit (1 to maxLimit, default defLimit).
func paging(r *http.Request, defLimit, maxLimit int) (skip, limit int, err error) {
	if skip, err = queryInt(r, "skip", 0, 0, maxSkip); err != nil {
		return 0, 0, err
	}
	if limit, err = queryInt(r, "limit", defLimit, 1, maxLimit); err != nil {
		return 0, 0, err
	}
	return skip, limit, nil
}
