//go:build !linux

package runner

import (
	"errors"
	"time"
)

// confine is Linux-only; elsewhere a runner is a separate process with the wall-time and
// cancel kills of its parent, but without OS limits.
func confine(uint64, time.Duration) error { return nil }

func rss(int) (uint64, error) { return 0, errors.New("resident memory is only read on Linux") }
