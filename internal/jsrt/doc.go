// Package jsrt hosts JavaScript trading strategies in a sandboxed goja
// runtime.
//
// A strategy is a JavaScript class that extends the global Strategy class.
// Inspect loads strategy code and extracts its class name and parameters;
// ValidateParams checks user-supplied parameter overrides; Run executes a
// backtest on the engine in internal/engine, with indicators computed in Go.
//
// The runtime exposes only the strategy API: there is no file system,
// network, timers or module loader. A run is interrupted when its context
// ends, when it exceeds its wall-time limit or when the process heap grows
// beyond its memory budget.
package jsrt
