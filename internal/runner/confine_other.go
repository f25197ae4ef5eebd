//go:build !linux

package runner

import (
	"os"
	"time"
)

// limit and lockDown are Linux-only; elsewhere a runner is a separate process with the
// wall-time, memory and cancel kills of its parent, but without OS limits.
func limit(uint64, time.Duration) error { return nil }

func lockDown() error { return nil }

func growPipe(*os.File) {}

func lowerPriority(int) {}
