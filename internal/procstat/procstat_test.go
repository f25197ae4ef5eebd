package procstat_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/procstat"
)

func TestOwnProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pid := os.Getpid()
	n, err := procstat.RSS(pid)
	if err != nil || n < 1<<20 {
		t.Fatalf("RSS %d, %v: a Go test binary is resident for more than 1 MiB", n, err)
	}
	before, err := procstat.CPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the clock-tick counter moves (10 ms ticks; generous deadline).
	for deadline := time.Now().Add(time.Minute); ; {
		x := 0
		for i := 0; i < 1e6; i++ {
			x += i
		}
		_ = x
		now, err := procstat.CPU(pid)
		if err != nil {
			t.Fatal(err)
		}
		if now > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed at %v", before)
		}
	}
	if _, err := procstat.CPU(1 << 30); err == nil {
		t.Error("CPU of a process that does not exist gave no error")
	}
}
