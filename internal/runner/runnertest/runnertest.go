// Package runnertest gives tests real runner processes: the test binary itself,
// re-executed, serves as the runner child.
package runnertest

import (
	"os"
	"testing"

	"github.com/backtestd/backtestd/internal/runner"
)

// Main runs the package's tests, or serves as a runner child when the test binary was
// started as one. Call it from TestMain: func TestMain(m *testing.M) { runnertest.Main(m) }.
func Main(m *testing.M) {
	if runner.IsChild() {
		os.Exit(runner.ChildMain())
	}
	os.Exit(m.Run())
}

// Pool is a runner pool for one test, closed when the test ends, without a limit on the
// runs computing at once. Its package's TestMain must call Main.
func Pool(t testing.TB) *runner.Pool {
	t.Helper()
	return PoolSlots(t, 0)
}

// PoolSlots is Pool with cpuSlots CPU places (runner.Config.CPUSlots; 0: no limit).
func PoolSlots(t testing.TB, cpuSlots int) *runner.Pool {
	t.Helper()
	p, err := runner.New(runner.Config{Warm: 1, CPUSlots: cpuSlots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
