package runner

import (
	"encoding/gob"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// request is what the parent sends a runner child: one inspection or one run.
type request struct {
	Inspect     bool
	Code        string
	Params      map[string]any
	Feeds       []engine.Feed
	Cash        float64
	Commission  float64
	TimeLimit   time.Duration
	MemoryLimit uint64
	// MaxLogLines and MaxLogBytes let the child stop sending log lines the parent would
	// drop anyway (the parent enforces the cap itself).
	MaxLogLines int
	MaxLogBytes int
}

// message is one frame from the child: exactly one field is set. A child sends Started
// when it has read its request, then any number of Progress and Log frames, and ends with
// one of Info, LoadErr, RunErr or Result.
type message struct {
	Started  bool
	Progress *progress
	Log      *engine.LogEntry
	Info     *jsrt.StrategyInfo
	LoadErr  *jsrt.LoadError
	RunErr   *runError
	Result   *engine.Result
}

type progress struct{ Current, Total int }

// runError is jsrt.RunError on the wire (its cause does not cross processes).
type runError struct {
	Kind    string
	Message string
	Line    int
}

func init() {
	// Parameter values and defaults are JSON-like values carried in interfaces.
	gob.Register([]any{})
	gob.Register(map[string]any{})
}
