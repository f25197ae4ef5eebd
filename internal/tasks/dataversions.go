package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/store"
)

// asOfVersions resolves a request's as_of (RFC 3339) to the bar version of each symbol
// (feeds and benchmark) current at that time; nil without as_of. A malformed time, and one
// before a symbol's first version, is a 400.
func (s *Service) asOfVersions(ctx context.Context, raw *string, source string, symbols []string) (map[string]int, error) {
	if raw == nil || strings.TrimSpace(*raw) == "" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*raw))
	if err != nil {
		return nil, apperr.Invalid("Invalid as_of '%s': expected an RFC 3339 time such as 2024-05-01T12:00:00Z", *raw)
	}
	out := make(map[string]int, len(symbols))
	for _, sym := range symbols {
		if out[sym], err = marketdata.VersionAt(ctx, s.db.Pool, source, sym, at); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recordedVersions are the bar versions a run's provenance names, by symbol; nil when it
// names none (runs made before versions).
func recordedVersions(p *provenance.Provenance) map[string]int {
	if p == nil {
		return nil
	}
	var out map[string]int
	for _, f := range p.Data {
		if f.Version > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[f.Symbol] = f.Version
		}
	}
	return out
}

// saveDataVersions records the versions task id runs on, inside tx.
func (s *Service) saveDataVersions(ctx context.Context, tx pgx.Tx, id string, versions map[string]int) error {
	if len(versions) == 0 {
		return nil
	}
	p := store.InsertTaskDataVersionsParams{TaskID: id}
	for sym, v := range versions {
		p.Symbols = append(p.Symbols, sym)
		p.Versions = append(p.Versions, int32(v))
	}
	if err := s.q.InsertTaskDataVersions(ctx, tx, p); err != nil {
		return fmt.Errorf("record data versions of %s: %w", id, err)
	}
	return nil
}
