-- +goose Up
-- A strategy's runs sorted by a figure. The figure's index (00042) was walked from the top
-- and every row of another strategy dropped after reading it from the table: when the
-- best runs are another strategy's (a strategy that does badly, sorted by return), a page
-- read thousands of rows (2,800 for a first page at 300,000 runs). One index per figure
-- led by the strategy gives the page's 20 rows in order; both directions read it.
CREATE INDEX tasks_list_strategy_total_return ON tasks (strategy_id, fig_total_return, created_at, id) WHERE fig_total_return IS NOT NULL;
CREATE INDEX tasks_list_strategy_max_drawdown ON tasks (strategy_id, fig_max_drawdown_pct, created_at, id) WHERE fig_max_drawdown_pct IS NOT NULL;
CREATE INDEX tasks_list_strategy_sharpe_ratio ON tasks (strategy_id, fig_sharpe_ratio, created_at, id) WHERE fig_sharpe_ratio IS NOT NULL;
CREATE INDEX tasks_list_strategy_total_trades ON tasks (strategy_id, fig_total_trades, created_at, id) WHERE fig_total_trades IS NOT NULL;

-- +goose Down
DROP INDEX tasks_list_strategy_total_trades;
DROP INDEX tasks_list_strategy_sharpe_ratio;
DROP INDEX tasks_list_strategy_max_drawdown;
DROP INDEX tasks_list_strategy_total_return;
