//go:build !linux

package runner

import (
	"errors"
	"os"
	"time"
)

// limit and lockDown are Linux-only; elsewhere a runner is a separate process with the
// wall-time, memory and cancel kills of its parent, but without OS limits.
func limit(uint64, time.Duration) error { return nil }

func lockDown() error { return nil }

func growPipe(*os.File) {}

func lowerPriority(int) {}

func cpuTime(int) (time.Duration, error) {
	return 0, errors.New("CPU time is only read on Linux")
}

func rss(int) (uint64, error) { return 0, errors.New("resident memory is only read on Linux") }
