package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	env := map[string]string{"WORKERS": "4", "STRATEGY_DIRS": "a:b:", "LOG_LEVEL": "debug", "CORS_ORIGINS": "http://x, http://y", "ALLOWED_HOSTS": "bt.example.com, bt.internal"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c Config)
	}{
		{"env values", nil, func(t *testing.T, c Config) {
			if c.Workers != 4 || len(c.StrategyDirs) != 2 || c.LogLevel != slog.LevelDebug || c.CORSOrigins[1] != "http://y" {
				t.Errorf("got %+v", c)
			}
			if len(c.AllowedHosts) != 2 || c.AllowedHosts[1] != "bt.internal" {
				t.Errorf("ALLOWED_HOSTS: %q", c.AllowedHosts)
			}
			if c.Listen != "127.0.0.1:8080" || c.Auth != "auto" || c.SessionTTL != 12*time.Hour || c.RunTimeout != 10*time.Minute || !c.SampleData || c.CPUSlots != -1 || c.RescueAfter != 0 {
				t.Errorf("defaults not applied: %+v", c)
			}
		}},
		{"flags override env", []string{"-workers", "0", "-listen", ":0", "-cpu-slots", "3", "-rescue-after", "90s"}, func(t *testing.T, c Config) {
			if c.Workers != 0 || c.Listen != ":0" || c.CPUSlots != 3 || c.RescueAfter != 90*time.Second {
				t.Errorf("got %+v", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := Load("serve", tt.args, getenv)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
	for _, bad := range [][]string{{"-workers", "x"}, {"-log-level", "loud"}, {"-run-timeout", "soon"}, {"-sample-data", "maybe"}, {"-cpu-slots", "-2"}, {"-rescue-after", "soon"}, {"-allowed-hosts", "https://bt.example.com"}, {"-allowed-hosts", "bt.example.com/ui"}, {"-read-memory-mb", "0"}, {"-read-memory-mb", "lots"},
		{"-cors-origins", "dash.example.com"}, {"-cors-origins", "https://dash.example.com/app"}, {"-cors-origins", "https://a.example, *x"}} {
		if _, _, err := Load("serve", bad, getenv); err == nil {
			t.Errorf("Load(%v) accepted bad input", bad)
		}
	}
}

func TestLoadHTTPLimits(t *testing.T) {
	t.Parallel()
	t.Run("defaults", func(t *testing.T) {
		c, _, err := Load("serve", nil, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTPReadHeaderTimeout != 10*time.Second || c.HTTPReadTimeout != 30*time.Second || c.HTTPIdleTimeout != time.Minute || c.HTTPMaxHeaderBytes != 64<<10 {
			t.Errorf("HTTP defaults: %+v", c)
		}
		if c.WSMaxConns != 10000 || c.WSMaxConnsPerAddr != 256 || c.WSMsgRate != 20 || c.WSMsgBurst != 100 {
			t.Errorf("WebSocket defaults: %+v", c)
		}
		if c.ReadMemoryMB != 160 {
			t.Errorf("read memory default %d MiB, want 160", c.ReadMemoryMB)
		}
	})
	env := map[string]string{
		"HTTP_READ_HEADER_TIMEOUT": "2s", "HTTP_READ_TIMEOUT": "5s", "HTTP_IDLE_TIMEOUT": "7s", "HTTP_MAX_HEADER_BYTES": "8192",
		"WS_MAX_CONNS": "500", "WS_MAX_CONNS_PER_ADDR": "5", "WS_MSG_RATE": "2.5", "WS_MSG_BURST": "10", "READ_MEMORY_MB": "48",
	}
	getenv := func(k string) string { return env[k] }
	t.Run("environment", func(t *testing.T) {
		c, _, err := Load("serve", nil, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTPReadHeaderTimeout != 2*time.Second || c.HTTPReadTimeout != 5*time.Second || c.HTTPIdleTimeout != 7*time.Second || c.HTTPMaxHeaderBytes != 8192 ||
			c.WSMaxConns != 500 || c.WSMaxConnsPerAddr != 5 || c.WSMsgRate != 2.5 || c.WSMsgBurst != 10 || c.ReadMemoryMB != 48 {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("flags override the environment", func(t *testing.T) {
		c, _, err := Load("serve", []string{
			"-http-read-header-timeout", "1s", "-http-read-timeout", "1m", "-http-idle-timeout", "2m", "-http-max-header-bytes", "1024",
			"-ws-max-conns", "1", "-ws-max-conns-per-addr", "1", "-ws-msg-rate", "0.5", "-ws-msg-burst", "1",
		}, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTPReadHeaderTimeout != time.Second || c.HTTPReadTimeout != time.Minute || c.HTTPIdleTimeout != 2*time.Minute || c.HTTPMaxHeaderBytes != 1024 ||
			c.WSMaxConns != 1 || c.WSMaxConnsPerAddr != 1 || c.WSMsgRate != 0.5 || c.WSMsgBurst != 1 {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("bad values are refused", func(t *testing.T) {
		for _, bad := range [][]string{
			{"-http-read-header-timeout", "0s"}, {"-http-read-header-timeout", "10"}, {"-http-read-timeout", "-1s"},
			{"-http-idle-timeout", "0"}, {"-http-idle-timeout", "soon"},
			{"-http-read-header-timeout", "20s", "-http-read-timeout", "10s"}, // the read timeout includes the headers
			{"-http-max-header-bytes", "100"}, {"-http-max-header-bytes", "1M"},
			{"-ws-max-conns", "0"}, {"-ws-max-conns", "-1"}, {"-ws-max-conns-per-addr", "0"}, {"-ws-max-conns-per-addr", "x"},
			{"-ws-msg-rate", "0"}, {"-ws-msg-rate", "-3"}, {"-ws-msg-rate", "NaN"}, {"-ws-msg-rate", "Inf"}, {"-ws-msg-rate", "fast"},
			{"-ws-msg-burst", "0"}, {"-ws-msg-burst", "1.5"},
		} {
			if _, _, err := Load("serve", bad, func(string) string { return "" }); err == nil {
				t.Errorf("Load(%v) accepted bad input", bad)
			}
		}
	})
}

// TestAccountsOn: auto turns accounts on beyond loopback or once users exist; on and off
// are obeyed.
func TestAccountsOn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		listen, auth string
		users        bool
		loopback, on bool
	}{
		{"127.0.0.1:8080", "auto", false, true, false},
		{"localhost:8080", "auto", false, true, false},
		{"[::1]:8080", "auto", false, true, false},
		{"127.0.0.1:8080", "auto", true, true, true},
		{":8080", "auto", false, false, true},
		{"0.0.0.0:8080", "auto", false, false, true},
		{"192.168.1.5:8080", "auto", false, false, true},
		{":8080", "off", true, false, false},
		{"127.0.0.1:8080", "on", false, true, true},
		{"nonsense", "auto", false, false, true},
	} {
		c := Config{Listen: tt.listen, Auth: tt.auth}
		if got := c.Loopback(); got != tt.loopback {
			t.Errorf("%s: Loopback() = %v, want %v", tt.listen, got, tt.loopback)
		}
		if got := c.AccountsOn(tt.users); got != tt.on {
			t.Errorf("%s, AUTH=%s, users %v: AccountsOn = %v, want %v", tt.listen, tt.auth, tt.users, got, tt.on)
		}
	}
	if _, _, err := Load("serve", []string{"-auth", "maybe"}, func(string) string { return "" }); err == nil {
		t.Error("AUTH=maybe accepted")
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"180d", 180 * 24 * time.Hour, true},
		{"26w", 26 * 7 * 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{" 1.5d ", 36 * time.Hour, true},
		{"0d", 0, false},
		{"-3d", 0, false},
		{"d", 0, false},
		{"180", 0, false},
		{"soon", 0, false},
		{"1e9d", 0, false},
	} {
		got, err := ParseAge(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
	c, _, err := Load("serve", []string{"-retention", "180d"}, func(string) string { return "" })
	if err != nil || c.Retention != 180*24*time.Hour {
		t.Errorf("-retention 180d: %v, %v", c.Retention, err)
	}
	if _, _, err := Load("serve", nil, func(k string) string {
		if k == "RETENTION" {
			return "forever"
		}
		return ""
	}); err == nil {
		t.Error("RETENTION=forever was accepted")
	}
	// Under a day the daily prune would delete nearly every finished run: refused at start.
	for _, age := range []string{"1ns", "1e-9d", "23h", "0.5d"} {
		if _, _, err := Load("serve", []string{"-retention", age}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "under one day") {
			t.Errorf("-retention %s: %v, want a refusal", age, err)
		}
	}
	if c, _, err := Load("serve", []string{"-retention", "1d"}, func(string) string { return "" }); err != nil || c.Retention != 24*time.Hour {
		t.Errorf("-retention 1d: %v, %v", c.Retention, err)
	}
}
