package engine

import "context"

// Analyzer names the runner contract attaches in Setup, as in the spec.
var AnalyzerNames = []string{"pyfolio", "drawdown", "SQN", "trades"}

// RunSpec is one backtest request for a Runner.
type RunSpec struct {
	Symbols    []string
	Feeds      []Feed // bars for Symbols, in the same order
	Cash       float64
	Commission float64
	Code       string // strategy source
	Params     map[string]any
}

// ParamInfo describes one strategy parameter for display.
type ParamInfo struct {
	Name        string `json:"name"`
	Value       any    `json:"value"`
	Type        string `json:"type"`
	Default     any    `json:"default"`
	Description string `json:"description"`
}

// Runner is the spec's backtest runner contract. Setup prepares a run with
// starting cash and the analyzers named in AnalyzerNames; Run executes it.
// The implementation for JavaScript strategies lives in package jsrt.
type Runner interface {
	// GetSymbols lists the tradable symbols.
	GetSymbols(ctx context.Context) ([]string, error)
	// GetParameters returns the strategy's parameters for display.
	GetParameters(ctx context.Context, code string, symbols []string) ([]ParamInfo, error)
	// Setup returns a runner state with starting cash and the analyzers.
	Setup(cash float64) Setup
	// Run executes a backtest.
	Run(ctx context.Context, spec RunSpec) (*Result, error)
}

// Setup is the engine configuration a Runner's Setup produces.
type Setup struct {
	Cash      float64
	Analyzers []string
}
