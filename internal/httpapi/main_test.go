package httpapi

import (
	"testing"

	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
)

func TestMain(m *testing.M) { runnertest.Main(m) }

// StrategiesForTest is the strategy service over st, loading code in runner processes.
// Exported for the package's external tests.
func StrategiesForTest(t *testing.T, st *store.Store) *strategy.Service {
	return strategy.NewService(st, runnertest.Pool(t), nil)
}
