-- +goose Up
-- Every task lists its feeds: tasks stored with '{}' (before 00030) get their one symbol, and
-- a check keeps `symbol` the first of `symbols`, so no reader has to fill the list in.
UPDATE tasks SET symbols = ARRAY[symbol] WHERE cardinality(symbols) = 0;
ALTER TABLE tasks ALTER COLUMN symbols DROP DEFAULT;
ALTER TABLE tasks ADD CONSTRAINT tasks_symbols_check CHECK (cardinality(symbols) >= 1 AND symbols[1] = symbol);

CREATE OR REPLACE VIEW bi_results AS
SELECT r.task_id, t.strategy_id, t.strategy_version, s.name AS strategy_name, t.data_source,
       t.symbol, t.start_date, t.end_date, t.strategy_params, t.commission, r.attempt,
       r.initial_cash, r.final_value, r.final_cash, r.total_return, r.annual_return,
       r.sharpe_ratio, r.max_drawdown, r.max_drawdown_pct, r.max_drawdown_duration,
       r.total_trades, r.won, r.lost, r.win_rate, r.profit_factor, r.avg_win, r.avg_loss,
       r.sqn, r.bars, t.created_at AS task_created_at, r.created_at AS result_created_at,
       t.symbols, t.timeframe
FROM results r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN strategies s ON s.id = t.strategy_id;

-- +goose Down
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
ALTER TABLE tasks DROP CONSTRAINT tasks_symbols_check;
ALTER TABLE tasks ALTER COLUMN symbols SET DEFAULT '{}';
