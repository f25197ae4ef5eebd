package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/backtestd/backtestd/internal/store"
)

// StrategyVersion is the stored strategy version a result's task ran: what a report names
// so the run can be reproduced.
type StrategyVersion struct {
	Name        string
	ClassName   string
	ContentHash string          // sha256 of the code, hex
	Params      json.RawMessage // the declared parameters (name, default, type, description)
}

// StrategyVersion returns version of strategy id; nil, without error, when it is not
// stored (a result saved without its strategy, as some tests do). Versions outlive a
// deleted strategy, so a result can always name its code.
func (svc *Service) StrategyVersion(ctx context.Context, id string, version int) (*StrategyVersion, error) {
	v, err := q.GetStrategyVersion(ctx, svc.db, store.GetStrategyVersionParams{StrategyID: id, Version: int32(version)})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("strategy version %s v%d: %w", id, version, err)
	}
	return &StrategyVersion{Name: v.Name, ClassName: v.ClassName, ContentHash: v.ContentHash, Params: v.Params}, nil
}
