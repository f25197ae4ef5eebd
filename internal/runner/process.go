package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/backtestd/backtestd/internal/jsrt"
)

// child is one started runner process.
type child struct {
	cmd       *exec.Cmd
	stdin     *os.File
	stdout    *os.File
	enc       *gob.Encoder // of stdin and
	dec       *gob.Decoder // of stdout: one gob stream each way for the child's whole life
	stderr    *headBuffer
	exited    chan struct{}
	once      sync.Once
	key       [sha256.Size]byte // the hash of the code it last ran
	runs      int
	idleTimer *time.Timer // ends it while it waits for a run of the same code
}

func (p *Pool) spawn(zone string) (*child, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("runner: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("runner: pipe: %w", err)
	}
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	cmd.Env = p.childEnv(zone)
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout = inR, outW
	c := &child{cmd: cmd, stdin: inW, stdout: outR, enc: gob.NewEncoder(inW), dec: gob.NewDecoder(outR), stderr: &headBuffer{max: 8 << 10}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	cmd.SysProcAttr = sysProcAttr()
	// A request or a result of a few hundred kilobytes passes in one write, not in 64 KiB
	// turns of the two processes.
	growPipe(inW)
	growPipe(outR)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("runner: start %s: %w", p.cfg.Command[0], err)
	}
	lowerPriority(cmd.Process.Pid)
	p.live.Add(1)
	go func() {
		_ = cmd.Wait()
		p.live.Add(-1)
		close(c.exited)
	}()
	return c, nil
}

// childEnv is all a child sees of the environment: no database URL, no secrets. Its local
// time zone is zone ("": UTC), never the service's, so a run's result does not depend on
// the host.
func (p *Pool) childEnv(zone string) []string {
	if zone == "" {
		zone = "UTC"
	}
	env := []string{
		childEnv + "=1",
		fmt.Sprintf("%s=%d", envMemory, p.cfg.MemoryLimit+asHeadroom),
		fmt.Sprintf("%s=%s", envCPU, 2*p.cfg.TimeLimit+cpuMargin),
		"TZ=" + zone,
	}
	for _, k := range []string{"GORACE", "GOCOVERDIR", "GOMAXPROCS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (c *child) kill() { _ = c.cmd.Process.Kill() }

// discard ends the child (whatever state it is in) and releases its pipes.
func (c *child) discard() {
	c.once.Do(func() {
		c.stdin.Close()
		c.kill()
		go func() {
			<-c.exited
			c.stdout.Close()
		}()
	})
}

// classify says why a child ended without a final frame. Everything a child can die of
// while running strategy code is the strategy's failure.
func (c *child) classify(req request) *jsrt.RunError {
	st := c.cmd.ProcessState
	text := c.stderr.String()
	switch {
	case strings.Contains(text, "out of memory") || strings.Contains(text, "cannot allocate memory") ||
		strings.Contains(text, "pthread_create failed"):
		return outOfMemory(req.MemoryLimit)
	case strings.Contains(text, "stack overflow") || strings.Contains(text, "stack exceeds"):
		return &jsrt.RunError{Kind: jsrt.KindStrategy, Message: "strategy process crashed: stack overflow (code nested or recursing too deeply)"}
	}
	if st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU {
				if st.UserTime()+st.SystemTime() >= 2*req.TimeLimit {
					return &jsrt.RunError{Kind: jsrt.KindTimeout, Message: fmt.Sprintf("strategy used more than its CPU time limit (%s)", 2*req.TimeLimit)}
				}
			}
			return &jsrt.RunError{Kind: jsrt.KindStrategy, Message: "strategy process crashed: killed by signal " + ws.Signal().String()}
		}
	}
	if line := firstLine(text, "fatal error:", "panic:", "runtime:"); line != "" {
		return &jsrt.RunError{Kind: jsrt.KindStrategy, Message: "strategy process crashed: " + line}
	}
	if st != nil {
		return &jsrt.RunError{Kind: jsrt.KindStrategy, Message: fmt.Sprintf("strategy process crashed: exit status %d", st.ExitCode())}
	}
	return &jsrt.RunError{Kind: jsrt.KindStrategy, Message: "strategy process crashed"}
}

// firstLine is the first line of text starting with one of the prefixes, shortened.
func firstLine(text string, prefixes ...string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				if len(line) > 200 {
					line = strings.ToValidUTF8(line[:200], "") + "…"
				}
				return line
			}
		}
	}
	return ""
}

// headBuffer keeps the first max bytes written to it (a crash's cause is at the top).
type headBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}

var _ io.Writer = (*headBuffer)(nil)
