package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/apperr"
)

// TestErrorsQuoteAtMost200Bytes: a 400 that echoes what the client sent (study spaces,
// parameters, methods, constraints, backtest parameters) quotes at most apperr.MaxQuote
// bytes of it, and a grid too large to run gives its real size.
func TestErrorsQuoteAtMost200Bytes(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, 0)
	long := strings.Repeat("x", 20<<10)
	tooLong := strings.Repeat("x", apperr.MaxQuote+1)
	study := func(extra string) string {
		return `{"strategy_id":"str_1","start_date":"1970-01-01","end_date":"1979-12-31"` + extra + `}`
	}
	for _, tt := range []struct {
		name, path, body string
		want             string // in the detail
	}{
		{"a long value in the space", "/api/studies", study(`,"space":{"fast":["` + long + `"]}`), "fast"},
		{"a long parameter name in the space", "/api/studies", study(`,"space":{"` + long + `":[1,2]}`), "the strategy has no parameter"},
		{"a long method", "/api/studies", study(`,"space":{"fast":[1,2]},"method":"` + long + `"`), "method must be grid, random or bayes"},
		{"a long objective", "/api/studies", study(`,"space":{"fast":[1,2]},"objective":"` + long + `"`), "unknown objective"},
		{"a long direction", "/api/studies", study(`,"space":{"fast":[1,2]},"direction":"` + long + `"`), "direction must be max or min"},
		{"a long fixed parameter", "/api/studies", study(`,"space":{"fast":[1,2]},"strategy_params":{"slow":"` + long + `"}`), "slow"},
		{"a long unknown fixed parameter", "/api/studies", study(`,"space":{"fast":[1,2]},"strategy_params":{"` + long + `":1}`), "nknown"},
		{"a long constraint", "/api/studies", study(`,"space":{"fast":[1,2]},"constraint":"` + long + `"`), "onstraint"},
		{"a long backtest parameter", "/api/backtests", study(`,"strategy_params":{"fast":"` + long + `"}`), "fast"},
		{"a long unknown backtest parameter", "/api/backtests", study(`,"strategy_params":{"` + long + `":1}`), "nknown"},
		{"strategy code naming a long identifier", "/api/strategies", `{"name":"Long","code":"class Long extends Strategy { next() {} }\n` + long + `;"}`, "Invalid strategy code"},
		{"strategy code throwing a long message", "/api/strategies", `{"name":"Long","code":"throw new Error('` + long + `');"}`, "Invalid strategy code"},
		{"a grid of 10^12 combinations", "/api/studies", study(`,"space":{"fast":{"start":1,"stop":10000,"step":1},"slow":{"start":1,"stop":10000,"step":1}},"strategy_params":{}`),
			"100000000 combinations"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := e.do(t, "POST", tt.path, tt.body)
			detail := fmt.Sprint(body.(map[string]any)["detail"])
			if code != 400 || !strings.Contains(detail, tt.want) {
				t.Errorf("%d %.600q, want 400 with %q", code, detail, tt.want)
			}
			if strings.Contains(detail, tooLong) {
				t.Errorf("the detail quotes more than %d bytes of the input (%d bytes in all)", apperr.MaxQuote, len(detail))
			}
		})
	}
}
