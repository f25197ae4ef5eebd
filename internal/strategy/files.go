package strategy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/store"
)

// SyncResult says what SyncFile did.
type SyncResult int

const (
	Unchanged SyncResult = iota // the file's content is the current version already
	Created                     // a new strategy was created from the file
	Updated                     // a new version was appended (or a deleted strategy came back)
)

func (r SyncResult) String() string {
	switch r {
	case Created:
		return "created"
	case Updated:
		return "updated"
	}
	return "unchanged"
}

// SyncFile makes the strategy whose origin is path (an absolute file path) match code:
// a new strategy when there is none, a new version when the content hash differs from the
// current version, nothing otherwise. A strategy deleted earlier comes back under its id
// when its file is synced again. Code that cannot be loaded is a *CodeError and changes
// nothing, so the previous version stays in place. The strategy's name is the class name
// (the file's base name when the class has none).
func (s *Service) SyncFile(ctx context.Context, path, code string) (*Strategy, SyncResult, error) {
	info, err := s.Load(ctx, code)
	if err != nil {
		return nil, Unchanged, err
	}
	name := info.ClassName
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	hash := ContentHash(code)
	var (
		out    *Strategy
		result SyncResult
	)
	sync := func(tx pgx.Tx) error {
		row, err := s.store.GetStrategyByOrigin(ctx, tx, path)
		switch {
		case errors.Is(err, store.ErrNotFound):
			out, err = s.insert(ctx, tx, name, info.Description, code, path, info, nil)
			result = Created
			return err
		case err != nil:
			return fmt.Errorf("strategy of %s: %w", path, err)
		}
		id := row.Strategy.ID
		if row.Strategy.DeletedAt != nil {
			if _, err := s.store.RestoreStrategy(ctx, tx, id); err != nil {
				return fmt.Errorf("restore strategy %s: %w", id, err)
			}
			result = Updated
		}
		if row.ContentHash == hash {
			out, err = s.get(ctx, tx, id)
			return err
		}
		out, err = s.replace(ctx, tx, nil, id, name, info.Description, code, path, info, nil)
		result = Updated
		return err
	}
	err = s.store.WithTx(ctx, sync)
	if err != nil && store.IsUniqueViolation(err) {
		// Another process created the strategy of this file at the same moment.
		result = Unchanged
		err = s.store.WithTx(ctx, sync)
	}
	if err != nil {
		return nil, Unchanged, err
	}
	return out, result, nil
}

// RemoveFile soft-deletes the live strategy loaded from path, if any, and reports
// whether there was one. Its versions stay; the strategy comes back under the same id
// when the file reappears.
func (s *Service) RemoveFile(ctx context.Context, path string) (string, bool, error) {
	row, err := s.store.GetStrategyByOrigin(ctx, s.store.Pool, path)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("strategy of %s: %w", path, err)
	}
	if row.Strategy.DeletedAt != nil {
		return row.Strategy.ID, false, nil
	}
	n, err := s.store.SoftDeleteStrategy(ctx, s.store.Pool, row.Strategy.ID)
	if err != nil {
		return "", false, fmt.Errorf("delete strategy %s: %w", row.Strategy.ID, err)
	}
	return row.Strategy.ID, n > 0, nil
}

// FileOrigins returns the origins (file paths) of the live strategies loaded from files.
func (s *Service) FileOrigins(ctx context.Context) ([]string, error) {
	rows, err := s.store.ListLiveFileStrategies(ctx, s.store.Pool)
	if err != nil {
		return nil, fmt.Errorf("list file strategies: %w", err)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Origin)
	}
	return out, nil
}
