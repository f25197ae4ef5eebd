package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' inputs. Field descriptions are what an agent reads in each tool's input schema.

type noInput struct{}

type strategyRef struct {
	StrategyID string `json:"strategy_id" jsonschema:"the strategy's id, e.g. str_1 (from list_strategies)"`
}

type saveStrategyInput struct {
	StrategyID  string `json:"strategy_id,omitempty" jsonschema:"an existing strategy's id to replace its code (a new version); leave out to create a strategy"`
	Name        string `json:"name" jsonschema:"the strategy's name"`
	Description string `json:"description,omitempty" jsonschema:"what the strategy does"`
	Code        string `json:"code" jsonschema:"the strategy's JavaScript source (see get_strategy on an existing one, or docs/strategies.md)"`
}

// backtestFields are POST /api/backtests's body (api/openapi.yaml's BacktestRequest; the
// API checks them), each optional in the schema: the API names what is missing.
type backtestFields struct {
	StrategyID      *string        `json:"strategy_id,omitempty" jsonschema:"the strategy to run (required by the API)"`
	StrategyVersion *int           `json:"strategy_version,omitempty" jsonschema:"an earlier version of the strategy; default the current one"`
	StrategyParams  map[string]any `json:"strategy_params,omitempty" jsonschema:"parameter values over the strategy's defaults, e.g. {\"fast\": 10}"`
	DataSource      *string        `json:"data_source,omitempty" jsonschema:"the data source, default builtin"`
	Symbol          *string        `json:"symbol,omitempty" jsonschema:"the symbol to run on (or symbols)"`
	Symbols         []string       `json:"symbols,omitempty" jsonschema:"several feeds, in order, instead of symbol"`
	Timeframe       *string        `json:"timeframe,omitempty" jsonschema:"bar interval, default 1d"`
	Benchmark       *string        `json:"benchmark,omitempty" jsonschema:"the symbol to measure against, default the first feed"`
	StartDate       *string        `json:"start_date,omitempty" jsonschema:"first day, YYYY-MM-DD"`
	EndDate         *string        `json:"end_date,omitempty" jsonschema:"last day, YYYY-MM-DD"`
	InitialCash     *float64       `json:"initial_cash,omitempty" jsonschema:"starting cash"`
	Commission      *float64       `json:"commission,omitempty" jsonschema:"commission rate per trade, e.g. 0.001"`
	AsOf            *string        `json:"as_of,omitempty" jsonschema:"RFC 3339 time: run on the bar versions current then"`
}

// runInput is a backtest request and how long to wait for the run to end.
type runInput struct {
	backtestFields
	WaitSeconds int `json:"wait_seconds,omitempty" jsonschema:"seconds to wait for the run to end (0 to 600); 0 returns the queued task at once, to poll with get_task"`
}

type taskRef struct {
	TaskID      string `json:"task_id" jsonschema:"the backtest task's id, e.g. task_…"`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"seconds to wait for the task to end (0 to 600); 0 reads its state now"`
}

type resultRef struct {
	TaskID string `json:"task_id" jsonschema:"the completed backtest task's id"`
}

type tradesInput struct {
	TaskID string `json:"task_id" jsonschema:"the completed backtest task's id"`
	Skip   int    `json:"skip,omitempty" jsonschema:"trades to skip (paging), default 0"`
	Limit  int    `json:"limit,omitempty" jsonschema:"trades to return, default 100"`
	Kind   string `json:"kind,omitempty" jsonschema:"trades (closed round trips, default) or executions (fills)"`
}

// studyInput is POST /api/studies's body: a backtest request plus the parameter space.
type studyInput struct {
	backtestFields
	Name       *string        `json:"name,omitempty" jsonschema:"the study's name"`
	Space      map[string]any `json:"space" jsonschema:"per parameter, a list of values or {start, stop, step} (stop included), e.g. {\"fast\": [5, 10], \"slow\": {\"start\": 20, \"stop\": 40, \"step\": 10}}"`
	Method     *string        `json:"method,omitempty" jsonschema:"grid (default), random or bayes"`
	Samples    *int           `json:"samples,omitempty" jsonschema:"of random and bayes: how many combinations"`
	Seed       *int64         `json:"seed,omitempty" jsonschema:"of random and bayes: the same seed gives the same trials"`
	Constraint *string        `json:"constraint,omitempty" jsonschema:"an expression over the parameters a combination must satisfy, e.g. fast < slow"`
	Objective  *string        `json:"objective,omitempty" jsonschema:"the statistic to rank by, default sharpe_ratio"`
	Direction  *string        `json:"direction,omitempty" jsonschema:"max (default) or min"`
	Validation map[string]any `json:"validation,omitempty" jsonschema:"a combinatorial purged cross-validation to declare, e.g. {\"method\": \"cpcv\", \"groups\": 6, \"test_groups\": 2, \"embargo_bars\": 5}"`
}

type studyRef struct {
	StudyID     string `json:"study_id" jsonschema:"the study's id"`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"seconds to wait for the study to end (0 to 600); 0 reads it now"`
	Skip        int    `json:"skip,omitempty" jsonschema:"combinations to skip (paging), default 0"`
	Limit       int    `json:"limit,omitempty" jsonschema:"combinations to return (best first by the objective)"`
}

type lookaheadInput struct {
	backtestFields
	Version int `json:"version" jsonschema:"the strategy version to check (from list_versions)"`
}

type diffInput struct {
	TaskID  string `json:"task_id" jsonschema:"one completed backtest task"`
	Against string `json:"against" jsonschema:"the completed backtest task to compare it with"`
}

func addTools(s *mcp.Server, c *caller) {
	get := func(ctx context.Context, req *mcp.CallToolRequest, path string, q url.Values) (*mcp.CallToolResult, any, error) {
		return result(c.call(ctx, req, http.MethodGet, path, q, nil))
	}

	mcp.AddTool(s, &mcp.Tool{Name: "list_strategies", Description: "List the stored strategies: id, name, description, current version, default parameters and code."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, any, error) {
			return get(ctx, req, "/api/strategies/", nil)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "get_strategy", Description: "Read one strategy: its code, default parameters and current version."},
		func(ctx context.Context, req *mcp.CallToolRequest, in strategyRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("strategy_id", in.StrategyID)
			if err != nil {
				return result(nil, err)
			}
			return get(ctx, req, "/api/strategies/"+id, nil)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "list_versions", Description: "List a strategy's versions (each change of its code is a new version; runs record the version they ran)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in strategyRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("strategy_id", in.StrategyID)
			if err != nil {
				return result(nil, err)
			}
			return get(ctx, req, "/api/strategies/"+id+"/versions", nil)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "save_strategy", Description: "Create a strategy, or, with strategy_id, replace an existing one's code as a new version. The code is checked when saved: an error names the line and column."},
		func(ctx context.Context, req *mcp.CallToolRequest, in saveStrategyInput) (*mcp.CallToolResult, any, error) {
			body := map[string]string{"name": in.Name, "description": in.Description, "code": in.Code}
			if in.StrategyID == "" {
				return result(c.call(ctx, req, http.MethodPost, "/api/strategies/", nil, body))
			}
			id, err := seg("strategy_id", in.StrategyID)
			if err != nil {
				return result(nil, err)
			}
			return result(c.call(ctx, req, http.MethodPut, "/api/strategies/"+id, nil, body))
		})

	mcp.AddTool(s, &mcp.Tool{Name: "run_backtest", Description: "Run a backtest of a strategy on stored bars (strategy_id and symbol or symbols are required; dates are YYYY-MM-DD). With wait_seconds it waits for the run to end and returns the task; otherwise it returns the queued task to poll with get_task. When the task's status is completed, read its result with get_result_summary, get_result_statistics and get_result_trades."},
		func(ctx context.Context, req *mcp.CallToolRequest, in runInput) (*mcp.CallToolResult, any, error) {
			wait, err := waitArg(in.WaitSeconds)
			if err != nil {
				return result(nil, err)
			}
			b, err := c.call(ctx, req, http.MethodPost, "/api/backtests/", nil, in.backtestFields)
			if err != nil || wait == 0 {
				return result(b, err)
			}
			return c.waitTask(ctx, req, b, wait)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "get_task", Description: "Read a backtest task's state (pending, running, completed, failed, cancelled), progress and error; with wait_seconds, wait for it to end first."},
		func(ctx context.Context, req *mcp.CallToolRequest, in taskRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("task_id", in.TaskID)
			if err != nil {
				return result(nil, err)
			}
			wait, err := waitArg(in.WaitSeconds)
			if err != nil {
				return result(nil, err)
			}
			return result(c.waitFor(ctx, req, "/api/backtests/"+id, wait))
		})

	mcp.AddTool(s, &mcp.Tool{Name: "get_result_summary", Description: "Read a completed backtest's summary: final value, return, Sharpe ratio, drawdown, trade counts."},
		func(ctx context.Context, req *mcp.CallToolRequest, in resultRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("task_id", in.TaskID)
			if err != nil {
				return result(nil, err)
			}
			return get(ctx, req, "/api/results/"+id+"/summary", nil)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "get_result_statistics", Description: "Read a completed backtest's full statistics (returns, risk, ratios, trade analysis)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in resultRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("task_id", in.TaskID)
			if err != nil {
				return result(nil, err)
			}
			return get(ctx, req, "/api/results/"+id+"/statistics", nil)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "get_result_trades", Description: "Read a completed backtest's trades, a page at a time (skip, limit); the answer says the total."},
		func(ctx context.Context, req *mcp.CallToolRequest, in tradesInput) (*mcp.CallToolResult, any, error) {
			id, err := seg("task_id", in.TaskID)
			if err != nil {
				return result(nil, err)
			}
			q := url.Values{}
			if in.Skip != 0 {
				q.Set("skip", itoa(in.Skip))
			}
			if in.Limit != 0 {
				q.Set("limit", itoa(in.Limit))
			}
			if in.Kind != "" {
				q.Set("kind", in.Kind)
			}
			return get(ctx, req, "/api/results/"+id+"/trades", q)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "start_study", Description: "Start a parameter study: the backtest request (strategy_id, symbol, dates) run once per combination of the space. Returns the study; read it with get_study."},
		func(ctx context.Context, req *mcp.CallToolRequest, in studyInput) (*mcp.CallToolResult, any, error) {
			if len(in.Space) == 0 {
				return invalid("space is required: per parameter, a list of values or {start, stop, step}")
			}
			return result(c.call(ctx, req, http.MethodPost, "/api/studies/", nil, in))
		})

	mcp.AddTool(s, &mcp.Tool{Name: "get_study", Description: "Read a study's state and, best first, its combinations with their parameters and statistics (paged with skip, limit); with wait_seconds, wait for it to end first."},
		func(ctx context.Context, req *mcp.CallToolRequest, in studyRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("study_id", in.StudyID)
			if err != nil {
				return result(nil, err)
			}
			wait, err := waitArg(in.WaitSeconds)
			if err != nil {
				return result(nil, err)
			}
			st, err := c.waitFor(ctx, req, "/api/studies/"+id, wait)
			if err != nil {
				return result(nil, err)
			}
			q := url.Values{}
			if in.Skip != 0 {
				q.Set("skip", itoa(in.Skip))
			}
			if in.Limit != 0 {
				q.Set("limit", itoa(in.Limit))
			}
			res, err := c.call(ctx, req, http.MethodGet, "/api/studies/"+id+"/results", q, nil)
			if err != nil {
				return result(nil, err)
			}
			return result(joinJSON(map[string][]byte{"study": data(st), "results": data(res)}))
		})

	mcp.AddTool(s, &mcp.Tool{Name: "check_lookahead", Description: "Check a strategy version for look-ahead (use of future bars): runs it on the given data and answers the verdict. Give the version and the backtest fields (symbol, dates) to check on."},
		func(ctx context.Context, req *mcp.CallToolRequest, in lookaheadInput) (*mcp.CallToolResult, any, error) {
			id, err := seg("strategy_id", deref(in.StrategyID))
			if err != nil {
				return result(nil, err)
			}
			if in.Version < 1 {
				return invalid("version must be 1 or more, got %d", in.Version)
			}
			body := in.backtestFields
			body.StrategyID, body.StrategyVersion = nil, nil
			return result(c.call(ctx, req, http.MethodPost, fmt.Sprintf("/api/strategies/%s/versions/%d/lookahead", id, in.Version), nil, body))
		})

	mcp.AddTool(s, &mcp.Tool{Name: "reproduce_run", Description: "Run a finished backtest again with exactly what it recorded (strategy version, data, parameters); with wait_seconds, wait for the new run. Compare the two with diff_runs."},
		func(ctx context.Context, req *mcp.CallToolRequest, in taskRef) (*mcp.CallToolResult, any, error) {
			id, err := seg("task_id", in.TaskID)
			if err != nil {
				return result(nil, err)
			}
			wait, err := waitArg(in.WaitSeconds)
			if err != nil {
				return result(nil, err)
			}
			b, err := c.call(ctx, req, http.MethodPost, "/api/backtests/"+id+"/reproduce", nil, nil)
			if err != nil || wait == 0 {
				return result(b, err)
			}
			return c.waitTask(ctx, req, b, wait)
		})

	mcp.AddTool(s, &mcp.Tool{Name: "diff_runs", Description: "Compare two completed backtests: what differs in their inputs (code version, data, parameters) and in their results."},
		func(ctx context.Context, req *mcp.CallToolRequest, in diffInput) (*mcp.CallToolResult, any, error) {
			id, err := seg("task_id", in.TaskID)
			if err != nil {
				return result(nil, err)
			}
			if in.Against == "" {
				return invalid("against is required: the task to compare with")
			}
			return get(ctx, req, "/api/results/"+id+"/diff", url.Values{"against": {in.Against}})
		})
}

// waitTask waits for the task in created (an API answer holding task_id) to end.
func (c *caller) waitTask(ctx context.Context, req *mcp.CallToolRequest, created []byte, wait time.Duration) (*mcp.CallToolResult, any, error) {
	id, err := taskID(created)
	if err != nil {
		return result(nil, err)
	}
	return result(c.waitFor(ctx, req, "/api/backtests/"+url.PathEscape(id), wait))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
