//go:build !linux

// Package procstat reads a process's resource use from /proc: what the runner's watchdog
// checks its children against and what GET /health?detail=1 reports of the service.
package procstat

import (
	"errors"
	"time"
)

// CPU is only read on Linux.
func CPU(int) (time.Duration, error) { return 0, errors.New("CPU time is only read on Linux") }

// RSS is only read on Linux.
func RSS(int) (uint64, error) { return 0, errors.New("resident memory is only read on Linux") }
