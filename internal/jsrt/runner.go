package jsrt

import (
	"context"
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
)

// Runner implements engine.Runner for JavaScript strategies.
type Runner struct {
	// Symbols lists tradable symbols (for example from the bar store).
	Symbols       func(ctx context.Context) ([]string, error)
	WallTimeLimit time.Duration
	MemoryLimit   uint64
	OnProgress    func(current, total int)
	OnLog         func(engine.LogEntry)
}

var _ engine.Runner = (*Runner)(nil)

// GetSymbols implements engine.Runner.
func (r *Runner) GetSymbols(ctx context.Context) ([]string, error) {
	if r.Symbols == nil {
		return []string{}, nil
	}
	return r.Symbols(ctx)
}

// GetParameters implements engine.Runner; errors are *LoadError.
func (r *Runner) GetParameters(ctx context.Context, code string, _ []string) ([]engine.ParamInfo, error) {
	info, err := Inspect(ctx, code)
	if err != nil {
		return nil, err
	}
	out := make([]engine.ParamInfo, len(info.Params))
	for i, p := range info.Params {
		out[i] = engine.ParamInfo{Name: p.Name, Value: p.Default, Type: p.Type, Default: p.Default, Description: p.Description}
	}
	return out, nil
}

// Setup implements engine.Runner.
func (r *Runner) Setup(cash float64) engine.Setup {
	if cash == 0 {
		cash = 10000
	}
	return engine.Setup{Cash: cash, Analyzers: engine.AnalyzerNames}
}

// Run implements engine.Runner; errors are as for the package-level Run.
func (r *Runner) Run(ctx context.Context, spec engine.RunSpec) (*engine.Result, error) {
	if len(spec.Feeds) != len(spec.Symbols) && len(spec.Symbols) > 0 {
		return nil, fmt.Errorf("run: %d symbols but %d feeds", len(spec.Symbols), len(spec.Feeds))
	}
	feeds := spec.Feeds
	for i := range feeds {
		if feeds[i].Symbol == "" && i < len(spec.Symbols) {
			feeds[i].Symbol = spec.Symbols[i]
		}
	}
	return Run(ctx, RunConfig{
		Code: spec.Code, Params: spec.Params, Feeds: feeds,
		Cash: r.Setup(spec.Cash).Cash, Commission: spec.Commission,
		WallTimeLimit: r.WallTimeLimit, MemoryLimit: r.MemoryLimit,
		OnProgress: r.OnProgress, OnLog: r.OnLog,
	})
}
