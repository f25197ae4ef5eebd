// Package mcpserver serves the API's research tools over the Model Context Protocol, so an
// AI agent can list and write strategies, run backtests and studies, and read their results.
//
// Every tool is one or two calls of the service's own HTTP API, made in-process through the
// API's handler with the caller's credentials: the API's validation, roles, audit log and
// answers are the tools' too (one owner per rule). A call the API refuses is a tool error
// carrying the API's status and detail, which an agent can act on.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the server version reported to clients at initialization.
const Version = "1.0.0"

// credentialHeaders are the request headers that say who calls: an MCP request over HTTP
// passes its own on to the API, so each tool call is checked by the API as the caller.
var credentialHeaders = []string{"Authorization", "Cookie", "X-CSRF-Token"}

// Options configure a Server.
type Options struct {
	// Header is sent with every API call whose MCP request carries no HTTP header (stdio):
	// e.g. "Authorization: Bearer <token>" when the service has accounts.
	Header http.Header
	// BasePath is the prefix api serves under (the service's BASE_PATH); empty for none.
	BasePath string
	// Poll is how often a waiting tool reads a task's state; 0 means 500 ms.
	Poll time.Duration
}

// caller makes one in-process API call.
type caller struct {
	api    http.Handler
	header http.Header
	base   string
	poll   time.Duration
}

// New is the MCP server whose tools call api, the service's HTTP handler.
func New(api http.Handler, o Options) *mcp.Server {
	c := &caller{api: api, header: o.Header, base: strings.TrimRight(o.BasePath, "/"), poll: o.Poll}
	if c.poll <= 0 {
		c.poll = 500 * time.Millisecond
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "backtestd", Version: Version}, &mcp.ServerOptions{
		Instructions: "backtestd runs backtests of JavaScript trading strategies on stored market data. " +
			"Typical flow: list_strategies (or save_strategy), run_backtest with wait_seconds, then " +
			"get_result_summary, get_result_statistics and get_result_trades on the task id. " +
			"Studies (start_study, get_study) sweep a strategy's parameters.",
	})
	addTools(s, c)
	return s
}

// HTTPHandler serves the tools over the streamable HTTP transport. It is stateless (no
// session is kept between requests), so every request is authenticated by the API's own
// middleware in front of it and its credentials are those its tool calls carry. Host and
// origin checks are the API's (hostGuard, refuseCrossSite), not the SDK's.
func HTTPHandler(srv *mcp.Server, maxBody int64) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBody,
	})
}

// apiError is an API answer of 400 or more, as a tool error an agent reads.
type apiError struct {
	status int
	detail string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, http.StatusText(e.status), e.detail)
}

// call makes one API call and returns the answer's body, or an apiError for a status of
// 400 or more. body, when not nil, is sent as JSON.
func (c *caller) call(ctx context.Context, req *mcp.CallToolRequest, method, path string, query url.Values, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	// Over HTTP, ctx descends from the MCP request's: without this the router would route
	// the call by that request's routing state (chi reuses a context's RouteContext).
	ctx = context.WithValue(ctx, chi.RouteCtxKey, (*chi.Context)(nil))
	r, err := http.NewRequestWithContext(ctx, method, "http://localhost"+u, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	r.RemoteAddr = "127.0.0.1:0"
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Accept", "application/json")
	from := c.header
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		from = req.Extra.Header
	}
	for _, h := range credentialHeaders {
		for _, v := range from.Values(h) {
			r.Header.Add(h, v)
		}
	}
	w := httptest.NewRecorder()
	c.api.ServeHTTP(w, r)
	if w.Code >= 400 {
		return nil, &apiError{status: w.Code, detail: detailOf(w.Body.Bytes())}
	}
	return w.Body.Bytes(), nil
}

// detailOf is the API error body's detail, or the body itself when it has none.
func detailOf(b []byte) string {
	var e struct {
		Detail  any    `json:"detail"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil {
		switch d := e.Detail.(type) {
		case string:
			if d != "" {
				return d
			}
		case nil:
		default:
			if j, err := json.Marshal(d); err == nil {
				return string(j)
			}
		}
		if e.Message != "" {
			return e.Message
		}
	}
	return strings.TrimSpace(string(b))
}

// data is the API envelope's data ({"code":"ok","data":...}), or the body when it has none.
func data(b json.RawMessage) json.RawMessage {
	var env struct {
		Code string          `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b, &env) == nil && env.Code == "ok" && env.Data != nil {
		return env.Data
	}
	return b
}

// result is a tool's answer: the API's JSON as text, or err as a tool error (the agent sees
// it and may correct its arguments; a protocol error would end the call).
func result(b json.RawMessage, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		return r, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data(b))}}}, nil, nil
}

// invalid is a tool error for an argument the tool itself checks before calling the API.
func invalid(format string, args ...any) (*mcp.CallToolResult, any, error) {
	return result(nil, fmt.Errorf("invalid argument: "+format, args...))
}

// seg is one path segment from an argument, escaped, or an error naming the argument.
func seg(name, v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("invalid argument: %s is required", name)
	}
	return url.PathEscape(v), nil
}

// terminal says whether a task or study state is final.
func terminal(status string) bool {
	switch status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

// waitFor reads path until its status is final or wait passes, and returns the last answer.
func (c *caller) waitFor(ctx context.Context, req *mcp.CallToolRequest, path string, wait time.Duration) (json.RawMessage, error) {
	deadline := time.Now().Add(wait)
	for {
		b, err := c.call(ctx, req, http.MethodGet, path, nil, nil)
		if err != nil {
			return nil, err
		}
		var st struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(data(b), &st); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if terminal(st.Status) || !time.Now().Before(deadline) {
			return b, nil
		}
		t := time.NewTimer(min(c.poll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return b, nil
		case <-t.C:
		}
	}
}

// maxWait bounds a tool's wait_seconds, so a call cannot hold a request open for long.
const maxWait = 600

func waitArg(s int) (time.Duration, error) {
	if s < 0 || s > maxWait {
		return 0, fmt.Errorf("invalid argument: wait_seconds must be from 0 to %d, got %d", maxWait, s)
	}
	return time.Duration(s) * time.Second, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// taskID is the task_id of an API answer (a task, bare or in the envelope).
func taskID(b []byte) (string, error) {
	var t struct {
		TaskID string `json:"task_id"`
	}
	if err := json.Unmarshal(data(b), &t); err != nil || t.TaskID == "" {
		return "", fmt.Errorf("the API's answer names no task: %s", strings.TrimSpace(string(b)))
	}
	return t.TaskID, nil
}

// joinJSON is one JSON object of the named documents.
func joinJSON(parts map[string][]byte) (json.RawMessage, error) {
	m := make(map[string]json.RawMessage, len(parts))
	for k, v := range parts {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("join answers: %w", err)
	}
	return b, nil
}
