package service

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/store"
)

// The API gets the WebSocket limits of the settings.
func TestAPIConfigCarriesLimits(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"-ws-max-conns", "7", "-ws-max-conns-per-addr", "2", "-ws-msg-rate", "1.5", "-ws-msg-burst", "3", "-base-path", "/bt", "-allowed-hosts", "a.example,b.example", "-read-memory-mb", "64"}} {
		cfg, _, err := config.Load("serve", args, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		api := apiConfig(cfg)
		if api.WSMaxConns != cfg.WSMaxConns || api.WSMaxConnsPerAddr != cfg.WSMaxConnsPerAddr || api.WSMsgRate != cfg.WSMsgRate ||
			api.WSMsgBurst != cfg.WSMsgBurst || api.BasePath != cfg.BasePath || len(api.CORSOrigins) != len(cfg.CORSOrigins) ||
			strings.Join(api.AllowedHosts, ",") != strings.Join(cfg.AllowedHosts, ",") || api.ReadMemory != int64(cfg.ReadMemoryMB)<<20 {
			t.Errorf("API config %+v does not carry %+v", api, cfg)
		}
	}
}

// TestAccountsFor: accounts on need an admin who can sign in, and refuse CORS_ORIGINS=*;
// off beyond loopback starts (with a warning).
func TestAccountsFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	load := func(args ...string) Config {
		cfg, _, err := config.Load("serve", args, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if a, err := accountsFor(ctx, load(), st, quiet); err != nil || a != nil {
		t.Errorf("loopback without users: %v %v, want accounts off", a, err)
	}
	if _, err := accountsFor(ctx, load("-listen", ":8080"), st, quiet); err == nil || !strings.Contains(err.Error(), "backtestd user add") {
		t.Errorf("beyond loopback without an admin: %v, want a refusal naming `backtestd user add`", err)
	}
	if a, err := accountsFor(ctx, load("-listen", ":8080", "-auth", "off"), st, quiet); err != nil || a != nil {
		t.Errorf("AUTH=off beyond loopback: %v %v, want accounts off", a, err)
	}
	if _, err := auth.NewService(st, 0).AddUser(ctx, "root", auth.RoleAdmin, "tiger-lily-9041"); err != nil {
		t.Fatal(err)
	}
	if a, err := accountsFor(ctx, load(), st, quiet); err != nil || a == nil {
		t.Errorf("loopback with users: %v %v, want accounts on", a, err)
	}
	if _, err := accountsFor(ctx, load("-cors-origins", "*"), st, quiet); err == nil || !strings.Contains(err.Error(), "CORS_ORIGINS=*") {
		t.Errorf("accounts on with CORS_ORIGINS=*: %v, want a refusal", err)
	}
}
