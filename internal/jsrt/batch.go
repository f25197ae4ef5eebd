package jsrt

import (
	"context"

	"github.com/backtestd/backtestd/internal/engine"
)

// Batch runs one strategy's code on one set of feeds with many parameter sets (a study's
// combinations) at the cost of little more than the runs themselves: the code is parsed
// and compiled once, and the data columns and the indicators of equal inputs are computed
// once and shared read-only by every run instead of being built again per combination.
// Each run still gets a fresh runtime, so nothing a run's code does (globals, prototypes,
// state in closures) reaches another run, and a run's result is the one Run would give.
// Run may be called from several goroutines at once.
type Batch struct {
	cfg RunConfig
}

// NewBatch prepares the runs of cfg's code on cfg's feeds. cfg.Params is ignored (each
// run has its own); cfg.OnLog and cfg.OnProgress, when set, are called by every run, from
// whichever goroutine runs it.
func NewBatch(cfg RunConfig) *Batch {
	if cfg.Compiled == nil || cfg.Compiled.code != cfg.Code {
		cfg.Compiled = Compile(cfg.Code)
	}
	if cfg.Memo == nil {
		cfg.Memo = NewMemo()
	}
	cfg.Params = nil
	return &Batch{cfg: cfg}
}

// Run runs the batch's code with params, as Run would with the batch's configuration.
func (b *Batch) Run(ctx context.Context, params map[string]any) (*engine.Result, error) {
	cfg := b.cfg
	cfg.Params = params
	return Run(ctx, cfg)
}
