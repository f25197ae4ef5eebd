-- +goose Up
-- A task runs on one or more feeds: `symbols`, in order (this.datas[i]); `symbol` stays the
-- first, as the spec's single-symbol routes show it. Tasks stored before have '{}', which
-- means their one `symbol`. `timeframe` is the bars' interval, aggregated from finer stored
-- bars when none are stored at it. Both defaults are constants: no table rewrite.
ALTER TABLE tasks ADD COLUMN symbols text[] NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN timeframe text NOT NULL DEFAULT '1d';

-- Executions carry their feed's symbol, as trades do; rows stored before get their task's
-- one symbol.
ALTER TABLE result_executions ADD COLUMN symbol text NOT NULL DEFAULT '';
UPDATE result_executions e SET symbol = t.symbol FROM tasks t WHERE t.id = e.task_id;
UPDATE result_trades rt SET symbol = t.symbol FROM tasks t WHERE t.id = rt.task_id AND rt.symbol = '';

-- Each result keeps its per-feed breakdown (engine.SymbolResult, in feed order): one value
-- written with the result row, no extra statement. Results stored before have '[]'.
ALTER TABLE results ADD COLUMN by_symbol jsonb NOT NULL DEFAULT '[]';

CREATE VIEW bi_symbols AS
SELECT r.task_id, x.ord::integer AS seq, x.s->>'symbol' AS symbol, (x.s->>'pnl')::float8 AS pnl,
       (x.s->>'contribution')::float8 AS contribution, (x.s->>'trades')::integer AS trades,
       (x.s->>'won')::integer AS won, (x.s->>'lost')::integer AS lost,
       (x.s->>'open_trades')::integer AS open_trades, (x.s->>'pnl_closed')::float8 AS pnl_closed,
       (x.s->>'executions')::integer AS executions, (x.s->>'commission')::float8 AS commission,
       (x.s->>'exposure')::float8 AS exposure, (x.s->>'final_size')::float8 AS final_size,
       (x.s->>'final_price')::float8 AS final_price
FROM results r
CROSS JOIN LATERAL jsonb_array_elements(r.by_symbol) WITH ORDINALITY AS x(s, ord);

-- The BI views name each row's own symbol; results gain the feeds and the timeframe, and
-- trades their tradeid (new columns at the end, so existing queries keep working).
CREATE OR REPLACE VIEW bi_executions AS
SELECT e.task_id, e.seq, COALESCE(NULLIF(e.symbol, ''), t.symbol) AS symbol, e.ts, e.side,
       e.exec_type, e.price, e.size, e.value, e.commission, e.pnl
FROM result_executions e
JOIN tasks t ON t.id = e.task_id;

CREATE OR REPLACE VIEW bi_trades AS
SELECT rt.task_id, rt.seq, COALESCE(NULLIF(rt.symbol, ''), t.symbol) AS symbol, rt.is_open,
       rt.open_ts, rt.close_ts, rt.size, rt.entry_price, rt.exit_price, rt.pnl_gross,
       rt.pnl_net, rt.commission, rt.bar_len, rt.tradeid
FROM result_trades rt
JOIN tasks t ON t.id = rt.task_id;

CREATE OR REPLACE VIEW bi_results AS
SELECT r.task_id, t.strategy_id, t.strategy_version, s.name AS strategy_name, t.data_source,
       t.symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate, r.profit_factor, r.avg_win, r.avg_loss,
       r.sqn, r.bars, t.created_at AS task_created_at, r.created_at AS result_created_at,
       CASE WHEN cardinality(t.symbols) = 0 THEN ARRAY[t.symbol] ELSE t.symbols END AS symbols,
       t.timeframe
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id;

-- +goose Down
DROP VIEW bi_symbols, bi_results, bi_trades, bi_executions;
ALTER TABLE results DROP COLUMN by_symbol;
CREATE VIEW bi_results AS
SELECT r.task_id, t.strategy_id, t.strategy_version, s.name AS strategy_name, t.data_source,
       t.symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate, r.profit_factor, r.avg_win, r.avg_loss,
       r.sqn, r.bars, t.created_at AS task_created_at, r.created_at AS result_created_at
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id;
CREATE VIEW bi_trades AS
SELECT rt.task_id, rt.seq, t.symbol, rt.is_open, rt.open_ts, rt.close_ts, rt.size,
       rt.entry_price, rt.exit_price, rt.pnl_gross, rt.pnl_net, rt.commission, rt.bar_len
FROM result_trades rt
JOIN tasks t ON t.id = rt.task_id;
CREATE VIEW bi_executions AS
SELECT e.task_id, e.seq, t.symbol, e.ts, e.side, e.exec_type, e.price, e.size, e.value,
       e.commission, e.pnl
FROM result_executions e
JOIN tasks t ON t.id = e.task_id;
ALTER TABLE result_executions DROP COLUMN symbol;
ALTER TABLE tasks DROP COLUMN timeframe;
ALTER TABLE tasks DROP COLUMN symbols;
