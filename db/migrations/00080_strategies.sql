-- +goose Up
-- A run may hold several strategies on one broker (backtrader's addstrategy called more
-- than once): each fill and round trip keeps the index of the strategy whose order made it
-- (0 for the first, and for every run of one strategy), and the result keeps each
-- strategy's own figures (engine.StrategyResult), empty for a run of one.
ALTER TABLE result_executions ADD COLUMN strategy smallint NOT NULL DEFAULT 0;
ALTER TABLE result_trades ADD COLUMN strategy smallint NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN by_strategy jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE results DROP COLUMN by_strategy;
ALTER TABLE result_trades DROP COLUMN strategy;
ALTER TABLE result_executions DROP COLUMN strategy;
