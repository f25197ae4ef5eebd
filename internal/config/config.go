// Package config reads the service's settings from environment variables, with
// command-line flags of the same meaning taking precedence.
package config

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the service. The README's configuration table lists them.
type Config struct {
	DatabaseURL  string        // DATABASE_URL; empty starts a private cluster under DataDir
	DataDir      string        // BACKTESTD_DATA_DIR: folder for the private cluster and local state
	Listen       string        // LISTEN_ADDR
	BasePath     string        // BASE_PATH
	Workers      int           // WORKERS: concurrent backtests per process; 0 disables workers in serve
	CORSOrigins  []string      // CORS_ORIGINS, comma-separated; "*" allows any
	StrategyDirs []string      // STRATEGY_DIRS, colon-separated
	LogLevel     slog.Level    // LOG_LEVEL: debug, info, warn, error
	LogDir       string        // LOG_DIR: task logs are also appended to files here
	SampleData   bool          // SAMPLE_DATA: load generated sample bars at start-up
	ImportDir    string        // IMPORT_DIR: watched folder the built-in source refreshes symbols from
	RunTimeout   time.Duration // RUN_TIMEOUT: wall-time limit of one backtest
	RunMemoryMB  int           // RUN_MEMORY_MB: memory budget of one backtest
	RescueAfter  time.Duration // RESCUE_AFTER: run time after which a job counts as stuck (worker died) and runs again; 0 derives it from RunTimeout
	CPUSlots     int           // CPU_SLOTS: engine runs computing at once in this process; 0 no limit, -1 automatic
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
		workers, mem, rescue, slots   string
	)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty starts a private cluster in the data dir")
	fs.StringVar(&c.DataDir, "data-dir", env("BACKTESTD_DATA_DIR", ".data"), "folder for the private PostgreSQL cluster")
	fs.StringVar(&c.Listen, "listen", env("LISTEN_ADDR", ":8080"), "HTTP listen address")
	fs.StringVar(&c.BasePath, "base-path", env("BASE_PATH", ""), "serve the API under this path prefix")
	fs.StringVar(&workers, "workers", env("WORKERS", "10"), "concurrent backtests in this process (0: none)")
	fs.StringVar(&cors, "cors-origins", env("CORS_ORIGINS", "*"), "allowed CORS origins, comma-separated")
	fs.StringVar(&dirs, "strategy-dirs", env("STRATEGY_DIRS", ""), "folders of *.js strategies to load and watch, colon-separated")
	fs.StringVar(&level, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.StringVar(&c.LogDir, "log-dir", env("LOG_DIR", ""), "append task logs to files in this folder")
	fs.StringVar(&sample, "sample-data", env("SAMPLE_DATA", "true"), "load generated sample data at start-up")
	fs.StringVar(&c.ImportDir, "import-dir", env("IMPORT_DIR", ""), "folder of CSV files the built-in source refreshes symbols from")
	fs.StringVar(&to, "run-timeout", env("RUN_TIMEOUT", "10m"), "wall-time limit of one backtest")
	fs.StringVar(&mem, "run-memory-mb", env("RUN_MEMORY_MB", "1024"), "memory budget of one backtest in MiB")
	fs.StringVar(&rescue, "rescue-after", env("RESCUE_AFTER", "0"), "a job running this long counts as stuck and runs again (0: a margin past -run-timeout)")
	fs.StringVar(&slots, "cpu-slots", env("CPU_SLOTS", "auto"), "engine runs computing at once (auto: one per CPU, one fewer when serving the API; 0: no limit)")
	if err := fs.Parse(args); err != nil {
		return c, fs, err
	}
	var err error
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
	c.StrategyDirs = split(dirs, ":")
	return c, fs, nil
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
