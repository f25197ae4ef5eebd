package runner

import (
	"os"
	"syscall"
)

// sysProcAttr: the child dies with the service (no orphan keeps running a strategy) and
// has its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// peakRSS is the most resident memory an ended child had, in bytes (Linux counts KiB).
func peakRSS(st *os.ProcessState) uint64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 0 {
		return uint64(ru.Maxrss) << 10
	}
	return 0
}
