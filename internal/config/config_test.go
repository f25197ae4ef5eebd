package config

import (
	"log/slog"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	env := map[string]string{"WORKERS": "4", "STRATEGY_DIRS": "a:b:", "LOG_LEVEL": "debug", "CORS_ORIGINS": "http://x, http://y"}
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
			if c.Listen != ":8080" || c.RunTimeout != 10*time.Minute || !c.SampleData || c.CPUSlots != -1 || c.RescueAfter != 0 {
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
	for _, bad := range [][]string{{"-workers", "x"}, {"-log-level", "loud"}, {"-run-timeout", "soon"}, {"-sample-data", "maybe"}, {"-cpu-slots", "-2"}, {"-rescue-after", "soon"}} {
		if _, _, err := Load("serve", bad, getenv); err == nil {
			t.Errorf("Load(%v) accepted bad input", bad)
		}
	}
}
