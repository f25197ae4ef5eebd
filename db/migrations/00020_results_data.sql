-- +goose Up

-- One default symbol per source (the task route's default `symbol`).
CREATE UNIQUE INDEX symbols_one_default ON symbols (source) WHERE is_default;

-- Symbol search by ticker or name prefix/substring stays an index-assisted scan on small
-- registries; lower() keeps it case-insensitive.
CREATE INDEX symbols_source_lower ON symbols (source, lower(symbol));

-- Stable views for BI tools (documented in the README). Columns are only ever added.
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

CREATE VIEW bi_equity AS
SELECT e.task_id, e.seq, e.ts, e.value, e.cash, e.ret, e.drawdown_pct, e.drawdown_money
FROM result_equity e;

-- +goose Down
DROP VIEW bi_equity, bi_executions, bi_trades, bi_results;
DROP INDEX symbols_source_lower;
DROP INDEX symbols_one_default;
