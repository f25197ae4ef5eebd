//go:build !linux

package runner

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// peakRSS is unknown here: units differ between systems.
func peakRSS(*os.ProcessState) uint64 { return 0 }
