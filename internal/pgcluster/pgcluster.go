// Package pgcluster runs a private PostgreSQL cluster in a folder of its own, so that
// `make run` and `make test` work on a machine where nothing is configured beyond
// PostgreSQL's server binaries. The cluster listens on a Unix socket inside its folder only.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ErrNoServer means PostgreSQL's server binaries could not be found.
var ErrNoServer = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found: install them (Debian: apt-get install postgresql) or set DATABASE_URL")

// Port is the port number of the private cluster's socket. With TCP switched off it only
// names the socket file, so it cannot clash with another server.
const Port = 5432

// Cluster is a private PostgreSQL cluster living in Dir.
type Cluster struct {
	Dir string // cluster root; data in Dir/data, socket in Dir
	// Fast trades durability for speed (fsync off, no sync at initdb): for test clusters
	// only, whose data a crash may lose. The default cluster is durable.
	Fast   bool
	binDir string
	cred   *syscall.Credential // run server binaries as this user when we are root
}

// New locates the server binaries for a cluster in dir. It does not touch the disk.
func New(dir string) (*Cluster, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cluster dir: %w", err)
	}
	bin, err := findBinDir(exec.LookPath, "/usr/lib/postgresql/*/bin")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: abs, binDir: bin}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		cred, err := unprivileged()
		if err != nil {
			return nil, err
		}
		c.cred = cred
	}
	return c, nil
}

// findBinDir finds pg_ctl and initdb on the PATH (lookPath), else in the newest of the
// folders matching debianGlob.
func findBinDir(lookPath func(string) (string, error), debianGlob string) (string, error) {
	if p, err := lookPath("pg_ctl"); err == nil {
		if _, err := lookPath("initdb"); err == nil {
			// Resolve symlinks so we find postgres beside them.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Dir(real), nil
			}
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob(debianGlob)
	// Newest major version first.
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoServer
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")
}

func (c *Cluster) dataDir() string { return filepath.Join(c.Dir, "data") }

// URL is the connection string of database name in the cluster.
func (c *Cluster) URL(name string) string {
	q := url.Values{"host": {c.Dir}, "port": {strconv.Itoa(Port)}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + name, RawQuery: q.Encode()}).String()
}

// Start creates the cluster if its folder is empty and starts it unless it is running.
// It reports whether this call started the server.
func (c *Cluster) Start(ctx context.Context) (started bool, err error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", c.Dir, err)
	}
	if err := c.chown(c.Dir); err != nil {
		return false, err
	}
	// The socket directory must be reachable by the server user.
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		args := []string{"-D", c.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
		if c.Fast {
			args = append(args, "--no-sync")
		}
		if err := c.run(ctx, "initdb", args...); err != nil {
			return false, fmt.Errorf("initdb: %w", err)
		}
	}
	if c.Running(ctx) {
		return false, nil
	}
	opts := fmt.Sprintf("-c listen_addresses='' -k %s -p %d -c max_connections=300", c.Dir, Port)
	if c.Fast {
		opts += " -c fsync=off"
	}
	if err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", c.dataDir(), "-l", filepath.Join(c.Dir, "server.log"), "-o", opts); err != nil {
		return false, fmt.Errorf("pg_ctl start (see %s): %w", filepath.Join(c.Dir, "server.log"), err)
	}
	return true, nil
}

// Running reports whether the cluster's server is up.
func (c *Cluster) Running(ctx context.Context) bool {
	if _, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid")); err != nil {
		return false
	}
	return c.run(ctx, "pg_ctl", "status", "-D", c.dataDir()) == nil
}

// Stop shuts the server down (fast mode: open sessions are ended).
func (c *Cluster) Stop(ctx context.Context) error {
	if !c.Running(ctx) {
		return nil
	}
	if err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", c.dataDir()); err != nil {
		return fmt.Errorf("pg_ctl stop: %w", err)
	}
	return nil
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Own process group: a Ctrl-C in the terminal must not reach the server directly;
	// we stop it ourselves, after the service has closed its connections.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	cmd.Dir = c.Dir
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (c *Cluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	if err := os.Lchown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
		return fmt.Errorf("hand %s to the server user: %w", path, err)
	}
	return nil
}

// Tool is the path of one of PostgreSQL's programs (pg_dump, pg_restore, pg_basebackup…)
// from the server binaries the cluster uses, so that a dump is made by the server's own
// version.
func Tool(name string) (string, error) {
	bin, err := findBinDir(exec.LookPath, "/usr/lib/postgresql/*/bin")
	if err != nil {
		return "", err
	}
	p := filepath.Join(bin, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found beside pg_ctl in %s: %w", name, bin, err)
	}
	return p, nil
}
