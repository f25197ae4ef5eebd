// Package config reads the service's settings from environment variables, with
// command-line flags of the same meaning taking precedence.
package config

import (
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/retention"
)

// Config is every setting of the service. docs/configuration.md lists them.
type Config struct {
	DatabaseURL string // DATABASE_URL; empty starts a private cluster under DataDir
	DataDir     string // BACKTESTD_DATA_DIR: folder for the private cluster and local state
	Listen      string // LISTEN_ADDR
	// MetricsListen is where `backtestd worker` serves /metrics (METRICS_LISTEN); empty:
	// nowhere.
	MetricsListen string
	BasePath      string   // BASE_PATH
	Workers       int      // WORKERS: concurrent backtests per process; 0 disables workers in serve
	CORSOrigins   []string // CORS_ORIGINS, comma-separated; empty: no other origin; "*": any, without credentials (refused with accounts on)
	// AllowedHosts (ALLOWED_HOSTS, comma-separated) are the Host names served besides
	// loopback ones: always checked without accounts, with accounts only when set; "*": any.
	AllowedHosts []string
	// Auth (AUTH) is auto, on or off: whether requests need a user (see AccountsOn).
	Auth       string
	SessionTTL time.Duration // SESSION_TTL: how long a sign-in lasts
	// UserMaxRunning (USER_MAX_RUNNING) is how many units of work of one user (backtests,
	// study batches, walk-forward folds, price-path jobs) run at once over all workers; 0 no limit. Default:
	// half of WORKERS, at least 1.
	UserMaxRunning int
	StrategyDirs   []string      // STRATEGY_DIRS, colon-separated
	LogLevel       slog.Level    // LOG_LEVEL: debug, info, warn, error
	LogDir         string        // LOG_DIR: task logs are also appended to files here
	SampleData     bool          // SAMPLE_DATA: load generated sample bars at start-up
	ImportDir      string        // IMPORT_DIR: watched folder the built-in source refreshes symbols from
	RunTimeout     time.Duration // RUN_TIMEOUT: wall-time limit of one backtest
	RunMemoryMB    int           // RUN_MEMORY_MB: memory budget of one backtest
	RescueAfter    time.Duration // RESCUE_AFTER: run time after which a job counts as stuck (worker died) and runs again; 0 derives it from RunTimeout
	LeaseTimeout   time.Duration // LEASE_TIMEOUT: a running task whose worker has not renewed its lease this long runs again elsewhere
	CPUSlots       int           // CPU_SLOTS: engine runs computing at once in this process; 0 no limit, -1 automatic
	RunnersWarm    int           // RUNNERS_WARM: runner processes kept started and waiting for strategy code
	RunLogLines    int           // RUN_LOG_LINES: log lines one run may write before its log is truncated
	RunLogMB       int           // RUN_LOG_MB: log megabytes one run may write before its log is truncated
	// ShutdownGrace (SHUTDOWN_GRACE) is how long running backtests may take to finish when
	// the process is told to stop; the rest go back to the queue.
	ShutdownGrace time.Duration

	HTTPReadHeaderTimeout time.Duration // HTTP_READ_HEADER_TIMEOUT: time to read a request's headers
	HTTPReadTimeout       time.Duration // HTTP_READ_TIMEOUT: time to read a whole request, body included
	HTTPIdleTimeout       time.Duration // HTTP_IDLE_TIMEOUT: a keep-alive connection idle this long is closed
	HTTPMaxHeaderBytes    int           // HTTP_MAX_HEADER_BYTES: size limit of a request's headers
	WSMaxConns            int           // WS_MAX_CONNS: open WebSocket connections of the process
	WSMaxConnsPerAddr     int           // WS_MAX_CONNS_PER_ADDR: open WebSocket connections from one client address
	WSMsgRate             float64       // WS_MSG_RATE: client messages per second on one WebSocket
	WSMsgBurst            int           // WS_MSG_BURST: client messages one WebSocket may send at once
	// ReadMemoryMB (READ_MEMORY_MB) is the memory, in MiB, that the API's heavy reads
	// (charts, exports and comparisons of long results) may hold at once.
	ReadMemoryMB int
	// Retention (RETENTION, an age such as 180d; 0: off) makes the service delete finished,
	// unpinned runs and studies older than it, once a day.
	Retention time.Duration
}

// Load parses args (without the program and subcommand names) over the environment.
// Flags not given keep the environment's value, then the default.
func Load(name string, args []string, getenv func(string) string) (Config, *flag.FlagSet, error) {
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	var (
		c                             Config
		cors, dirs, level, sample, to string
		hosts                         string
		workers, mem, rescue, slots   string
		warm, logLines, logMB, grace  string
		hdrTO, readTO, idleTO, hdrMax string
		wsMax, wsPerAddr, wsRate      string
		wsBurst, lease, sessionTTL    string
		userMax, readMem, keep        string
	)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty starts a private cluster in the data dir")
	fs.StringVar(&c.DataDir, "data-dir", env("BACKTESTD_DATA_DIR", ".data"), "folder for the private PostgreSQL cluster")
	fs.StringVar(&c.Listen, "listen", env("LISTEN_ADDR", "127.0.0.1:8080"), "HTTP listen address (an address other than loopback turns accounts on, see -auth)")
	if name == "worker" { // serve has /metrics in its API
		fs.StringVar(&c.MetricsListen, "metrics-listen", env("METRICS_LISTEN", ""), "serve /metrics, without authentication, on this address (empty: not served)")
	}
	fs.StringVar(&c.BasePath, "base-path", env("BASE_PATH", ""), "serve the API under this path prefix")
	fs.StringVar(&workers, "workers", env("WORKERS", "10"), "concurrent backtests in this process (0: none)")
	fs.StringVar(&cors, "cors-origins", env("CORS_ORIGINS", ""), "origins other web pages may call the API from, comma-separated (empty: none; *: any, without credentials, refused with accounts on)")
	fs.StringVar(&hosts, "allowed-hosts", env("ALLOWED_HOSTS", ""), "Host names served besides localhost and loopback addresses, comma-separated, e.g. the name a reverse proxy forwards (*: any); checked without accounts, and with accounts when set")
	fs.StringVar(&c.Auth, "auth", env("AUTH", "auto"), "accounts: auto (on when users exist or listening beyond loopback), on, or off (no sign-in: only for one user on a trusted machine)")
	fs.StringVar(&userMax, "user-max-running", env("USER_MAX_RUNNING", "auto"), "units of work of one user running at once over all workers: backtests, study batches and walk-forward folds (auto: half of -workers, at least 1; 0: no limit); the rest wait while others' run")
	fs.StringVar(&sessionTTL, "session-ttl", env("SESSION_TTL", "12h"), "how long a sign-in to the page lasts")
	fs.StringVar(&dirs, "strategy-dirs", env("STRATEGY_DIRS", ""), "folders of *.js strategies to load and watch, colon-separated")
	fs.StringVar(&level, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.StringVar(&c.LogDir, "log-dir", env("LOG_DIR", ""), "append task logs to files in this folder")
	fs.StringVar(&sample, "sample-data", env("SAMPLE_DATA", "true"), "load generated sample data at start-up")
	fs.StringVar(&c.ImportDir, "import-dir", env("IMPORT_DIR", ""), "folder of CSV files the built-in source refreshes symbols from")
	fs.StringVar(&to, "run-timeout", env("RUN_TIMEOUT", "10m"), "wall-time limit of one backtest")
	fs.StringVar(&mem, "run-memory-mb", env("RUN_MEMORY_MB", "1024"), "memory budget of one backtest in MiB")
	fs.StringVar(&rescue, "rescue-after", env("RESCUE_AFTER", "0"), "a job running this long counts as stuck and runs again (0: a margin past -run-timeout)")
	fs.StringVar(&lease, "lease-timeout", env("LEASE_TIMEOUT", "15s"), "a running backtest whose worker has not renewed its lease (every fifth of this) for this long runs again on another worker")
	fs.StringVar(&slots, "cpu-slots", env("CPU_SLOTS", "auto"), "engine runs computing at once (auto: one per CPU, one fewer when serving the API; 0: no limit)")
	fs.StringVar(&warm, "runners-warm", env("RUNNERS_WARM", "2"), "runner processes kept started for strategy code")
	fs.StringVar(&logLines, "run-log-lines", env("RUN_LOG_LINES", "100000"), "log lines one run may write; later lines are dropped after one 'log truncated' line")
	fs.StringVar(&logMB, "run-log-mb", env("RUN_LOG_MB", "50"), "log megabytes one run may write; later lines are dropped after one 'log truncated' line")
	// There is no write timeout: WebSockets and long exports write for as long as they
	// need, and the WebSocket code sets its own deadline on every write.
	fs.StringVar(&hdrTO, "http-read-header-timeout", env("HTTP_READ_HEADER_TIMEOUT", "10s"), "time a client has to send a request's headers")
	fs.StringVar(&readTO, "http-read-timeout", env("HTTP_READ_TIMEOUT", "30s"), "time a client has to send a whole request, body included (not WebSocket traffic)")
	fs.StringVar(&idleTO, "http-idle-timeout", env("HTTP_IDLE_TIMEOUT", "60s"), "a keep-alive connection idle this long is closed")
	fs.StringVar(&hdrMax, "http-max-header-bytes", env("HTTP_MAX_HEADER_BYTES", "65536"), "size limit of a request's headers in bytes")
	fs.StringVar(&wsMax, "ws-max-conns", env("WS_MAX_CONNS", "10000"), "open WebSocket connections in this process; more are refused with 503")
	fs.StringVar(&wsPerAddr, "ws-max-conns-per-addr", env("WS_MAX_CONNS_PER_ADDR", "256"), "open WebSocket connections from one client address; more are refused with 429")
	fs.StringVar(&wsRate, "ws-msg-rate", env("WS_MSG_RATE", "20"), "client messages per second on one WebSocket; a faster client is disconnected (close 1008)")
	fs.StringVar(&wsBurst, "ws-msg-burst", env("WS_MSG_BURST", "100"), "client messages one WebSocket may send at once before -ws-msg-rate applies")
	fs.StringVar(&readMem, "read-memory-mb", env("READ_MEMORY_MB", "160"), "MiB that heavy reads (charts, exports, comparisons of long results) may hold at once; a read waits for its share, then answers 503 with Retry-After, and one larger than all of it 413")
	fs.StringVar(&grace, "shutdown-grace", env("SHUTDOWN_GRACE", "30s"), "on SIGTERM, how long running backtests may take to finish before the rest go back to the queue")
	fs.StringVar(&keep, "retention", env("RETENTION", ""), "once a day, delete finished runs and studies older than this age (e.g. 180d) that nobody pinned; empty: keep everything")
	if err := fs.Parse(args); err != nil {
		return c, fs, err
	}
	var err error
	if keep != "" && keep != "0" {
		if c.Retention, err = ParseAge(keep); err != nil {
			return c, fs, fmt.Errorf("retention: %w", err)
		}
		// The daily prune would refuse it every day (retention.CheckAge); say so at start.
		if c.Retention < retention.MinAge {
			return c, fs, fmt.Errorf("retention: %q is under one day and would delete nearly every finished run: give at least 1d, or leave it empty to keep everything", keep)
		}
	}
	if c.Workers, err = strconv.Atoi(workers); err != nil || c.Workers < 0 {
		return c, fs, fmt.Errorf("workers: want a number >= 0, got %q", workers)
	}
	if c.RunMemoryMB, err = strconv.Atoi(mem); err != nil || c.RunMemoryMB <= 0 {
		return c, fs, fmt.Errorf("run-memory-mb: want a positive number, got %q", mem)
	}
	if c.RunTimeout, err = time.ParseDuration(to); err != nil || c.RunTimeout <= 0 {
		return c, fs, fmt.Errorf("run-timeout: want a duration such as 10m, got %q", to)
	}
	if c.RescueAfter, err = time.ParseDuration(rescue); err != nil || c.RescueAfter < 0 {
		return c, fs, fmt.Errorf("rescue-after: want a duration such as 15m, got %q", rescue)
	}
	if c.LeaseTimeout, err = time.ParseDuration(lease); err != nil || c.LeaseTimeout < time.Second {
		return c, fs, fmt.Errorf("lease-timeout: want a duration of at least 1s such as 15s, got %q", lease)
	}
	if c.RunnersWarm, err = strconv.Atoi(warm); err != nil || c.RunnersWarm < 0 {
		return c, fs, fmt.Errorf("runners-warm: want a number >= 0, got %q", warm)
	}
	if c.RunLogLines, err = strconv.Atoi(logLines); err != nil || c.RunLogLines <= 0 {
		return c, fs, fmt.Errorf("run-log-lines: want a positive number, got %q", logLines)
	}
	if c.RunLogMB, err = strconv.Atoi(logMB); err != nil || c.RunLogMB <= 0 {
		return c, fs, fmt.Errorf("run-log-mb: want a positive number, got %q", logMB)
	}
	if err := c.loadHTTP(hdrTO, readTO, idleTO, hdrMax, wsMax, wsPerAddr, wsRate, wsBurst); err != nil {
		return c, fs, err
	}
	if c.ReadMemoryMB, err = strconv.Atoi(readMem); err != nil || c.ReadMemoryMB < 1 {
		return c, fs, fmt.Errorf("read-memory-mb: want a positive number of MiB, got %q", readMem)
	}
	if c.ShutdownGrace, err = time.ParseDuration(grace); err != nil || c.ShutdownGrace < 0 {
		return c, fs, fmt.Errorf("shutdown-grace: want a duration such as 30s, got %q", grace)
	}
	if c.SessionTTL, err = time.ParseDuration(sessionTTL); err != nil || c.SessionTTL < time.Minute {
		return c, fs, fmt.Errorf("session-ttl: want a duration of at least 1m such as 12h, got %q", sessionTTL)
	}
	c.UserMaxRunning = max(1, c.Workers/2)
	if userMax != "auto" {
		if c.UserMaxRunning, err = strconv.Atoi(userMax); err != nil || c.UserMaxRunning < 0 {
			return c, fs, fmt.Errorf("user-max-running: want auto or a number >= 0 (0: no limit), got %q", userMax)
		}
	}
	if c.Auth != "auto" && c.Auth != "on" && c.Auth != "off" {
		return c, fs, fmt.Errorf("auth: want auto, on or off, got %q", c.Auth)
	}
	c.CPUSlots = -1
	if slots != "auto" {
		if c.CPUSlots, err = strconv.Atoi(slots); err != nil || c.CPUSlots < 0 {
			return c, fs, fmt.Errorf("cpu-slots: want auto or a number >= 0 (0: no limit), got %q", slots)
		}
	}
	if c.SampleData, err = strconv.ParseBool(sample); err != nil {
		return c, fs, fmt.Errorf("sample-data: want true or false, got %q", sample)
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fs, fmt.Errorf("log-level: want debug, info, warn or error, got %q", level)
	}
	c.CORSOrigins = split(cors, ",")
	for _, o := range c.CORSOrigins {
		// Compared with a browser's Origin header, which is scheme://host[:port] exactly; an
		// entry with a path would never match, and the page it names would be refused.
		if u, err := url.Parse(o); o != "*" && (err != nil || u.Scheme == "" || u.Host == "" || strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "") {
			return c, fs, fmt.Errorf("cors-origins: want origins such as https://dash.example.com (scheme and host, no path), or *, got %q", o)
		}
	}
	c.AllowedHosts = split(hosts, ",")
	for _, h := range c.AllowedHosts {
		if strings.ContainsAny(h, "/@ ") {
			return c, fs, fmt.Errorf("allowed-hosts: want host names such as bt.example.com (no scheme or path), got %q", h)
		}
	}
	c.StrategyDirs = split(dirs, ":")
	return c, fs, nil
}

// loadHTTP parses and checks the HTTP server and WebSocket limits. All are required: none
// can be turned off, as each guards the process against one slow or greedy client.
func (c *Config) loadHTTP(hdrTO, readTO, idleTO, hdrMax, wsMax, wsPerAddr, wsRate, wsBurst string) error {
	duration := func(name, v string, dst *time.Duration) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: want a positive duration such as 30s, got %q", name, v)
		}
		*dst = d
		return nil
	}
	count := func(name, v string, minimum int, dst *int) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < minimum {
			return fmt.Errorf("%s: want a number >= %d, got %q", name, minimum, v)
		}
		*dst = n
		return nil
	}
	for _, err := range []error{
		duration("http-read-header-timeout", hdrTO, &c.HTTPReadHeaderTimeout),
		duration("http-read-timeout", readTO, &c.HTTPReadTimeout),
		duration("http-idle-timeout", idleTO, &c.HTTPIdleTimeout),
		count("http-max-header-bytes", hdrMax, 1024, &c.HTTPMaxHeaderBytes),
		count("ws-max-conns", wsMax, 1, &c.WSMaxConns),
		count("ws-max-conns-per-addr", wsPerAddr, 1, &c.WSMaxConnsPerAddr),
		count("ws-msg-burst", wsBurst, 1, &c.WSMsgBurst),
	} {
		if err != nil {
			return err
		}
	}
	// The read timeout runs from the start of the request, headers included.
	if c.HTTPReadTimeout < c.HTTPReadHeaderTimeout {
		return fmt.Errorf("http-read-timeout (%s) must not be shorter than http-read-header-timeout (%s)", c.HTTPReadTimeout, c.HTTPReadHeaderTimeout)
	}
	r, err := strconv.ParseFloat(wsRate, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return fmt.Errorf("ws-msg-rate: want a positive number of messages per second, got %q", wsRate)
	}
	c.WSMsgRate = r
	return nil
}

func split(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Loopback says whether the listen address only accepts connections from this machine.
func (c Config) Loopback() bool {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AccountsOn decides whether requests need a user: AUTH=on or off as told; auto turns
// them on when users exist or when the service listens beyond loopback, where anyone
// who reaches the port could otherwise read, change and delete everything.
func (c Config) AccountsOn(hasUsers bool) bool {
	switch c.Auth {
	case "on":
		return true
	case "off":
		return false
	}
	return hasUsers || !c.Loopback()
}

// ParseAge reads an age such as 180d, 26w, 36h or 90m (Go durations, plus d for days and w
// for weeks). It must be positive.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("invalid age %q: use a number of days, weeks or hours such as 180d, 26w or 36h", s)
	var d time.Duration
	switch {
	case strings.HasSuffix(s, "d"), strings.HasSuffix(s, "w"):
		n, err := strconv.ParseFloat(s[:len(s)-1], 64)
		if err != nil {
			return 0, bad
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(s, "w") {
			unit *= 7
		}
		if n > 1e5 {
			return 0, bad
		}
		d = time.Duration(n * float64(unit))
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}
