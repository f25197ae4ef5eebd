package runner

import (
	"fmt"
	"os"
	"strconv"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// niceness of a runner: the kernel gives the service's own threads (HTTP, events,
// database) the CPU first when strategies compete for it.
const niceness = 10

// deniedSyscalls fail with EPERM in a runner: nothing in a backtest opens files or
// sockets, starts programs or changes the system. The Go runtime needs none of them
// after start-up.
var deniedSyscalls = []string{
	"open", "openat", "openat2", "creat", "truncate", "ftruncate", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link", "linkat",
	"symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat",
	"lchown", "mknod", "mknodat",
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv",
	"process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"reboot", "kexec_load", "init_module", "finit_module", "delete_module", "bpf",
	"perf_event_open", "keyctl", "add_key", "request_key", "setuid", "setgid", "setreuid",
	"setregid", "setresuid", "setresgid", "setgroups", "chdir", "fchdir", "setrlimit", "prlimit64",
	"setpriority",
}

// limit sets the resource limits of this process at start: address space (mem bytes; 0
// or a race-detector build leaves it alone), CPU seconds (cpu), no files written, no core
// dumps, few descriptors.
func limit(mem uint64, cpu time.Duration) error {
	_ = time.Now().Local() // load the time zone while files can still be opened
	limits := []struct {
		res int
		val uint64
	}{
		{unix.RLIMIT_FSIZE, 0},
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_NOFILE, 32},
	}
	if cpu > 0 {
		limits = append(limits, struct {
			res int
			val uint64
		}{unix.RLIMIT_CPU, uint64((cpu + time.Second - 1) / time.Second)})
	}
	if mem > 0 && !raceEnabled { // the race detector reserves terabytes of address space
		limits = append(limits, struct {
			res int
			val uint64
		}{unix.RLIMIT_AS, mem})
	}
	for _, l := range limits {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.val, Max: l.val}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", l.res, err)
		}
	}
	return nil
}

// lockDown runs once the request has been read, before any strategy code: a lower
// priority for every thread, no new privileges, and the seccomp filter refusing the calls
// above.
func lockDown() error {
	renice()
	if !seccomp.Supported() {
		return seccomp.SetNoNewPrivs()
	}
	return seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.ActionErrno,
				Names:  deniedSyscalls,
				// clone is how the Go runtime starts threads; without CLONE_THREAD it would
				// start a process. clone3 (glibc's pthread_create) passes its flags in
				// memory a filter cannot read, so it stays allowed: execve is refused anyway.
				NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: []seccomp.Condition{
					{Argument: 0, Operation: seccomp.BitsNotSet, Value: unix.CLONE_THREAD},
				}}},
			}},
		},
	})
}

// renice lowers the priority of every thread of the process (Linux keeps it per thread;
// threads started later inherit it).
func renice() {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			_ = unix.Setpriority(unix.PRIO_PROCESS, tid, niceness)
		}
	}
}

// growPipe makes the pipe of f hold 1 MiB (the usual maximum for unprivileged processes);
// best effort.
func growPipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil { // not f.Fd(), which makes f blocking
		_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
	}
}

// lowerPriority gives a just-started child the runners' niceness from the parent's side,
// so its start-up and warm-up already yield to the service (its threads, started later,
// inherit it; an unprivileged process could not lower it again).
func lowerPriority(pid int) {
	_ = unix.Setpriority(unix.PRIO_PROCESS, pid, niceness)
}
