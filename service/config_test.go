package service

import (
	"testing"

	"github.com/backtestd/backtestd/internal/config"
)

// The API gets the WebSocket limits of the settings.
func TestAPIConfigCarriesLimits(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"-ws-max-conns", "7", "-ws-max-conns-per-addr", "2", "-ws-msg-rate", "1.5", "-ws-msg-burst", "3", "-base-path", "/bt"}} {
		cfg, _, err := config.Load("serve", args, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		api := apiConfig(cfg)
		if api.WSMaxConns != cfg.WSMaxConns || api.WSMaxConnsPerAddr != cfg.WSMaxConnsPerAddr || api.WSMsgRate != cfg.WSMsgRate ||
			api.WSMsgBurst != cfg.WSMsgBurst || api.BasePath != cfg.BasePath || len(api.CORSOrigins) != len(cfg.CORSOrigins) {
			t.Errorf("API config %+v does not carry %+v", api, cfg)
		}
	}
}
