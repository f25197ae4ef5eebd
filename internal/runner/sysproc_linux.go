package runner

import "syscall"

// sysProcAttr: the child dies with the service (no orphan keeps running a strategy) and
// has its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
