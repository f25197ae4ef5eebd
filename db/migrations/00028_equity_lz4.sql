-- +goose Up
-- Equity series compressed with lz4 (fast enough to cost less than the bytes it saves):
-- cash is constant between trades, returns and drawdowns are zero while flat, so a
-- result's arrays shrink by about a third, and with them the write-ahead log a flood of
-- results writes (257 MB for 1,000 results of 5,000 bars uncompressed).
ALTER TABLE result_equity_series
    ALTER ts SET STORAGE EXTENDED, ALTER value SET STORAGE EXTENDED,
    ALTER cash SET STORAGE EXTENDED, ALTER ret SET STORAGE EXTENDED,
    ALTER drawdown_pct SET STORAGE EXTENDED, ALTER drawdown_money SET STORAGE EXTENDED,
    ALTER ts SET COMPRESSION lz4, ALTER value SET COMPRESSION lz4,
    ALTER cash SET COMPRESSION lz4, ALTER ret SET COMPRESSION lz4,
    ALTER drawdown_pct SET COMPRESSION lz4, ALTER drawdown_money SET COMPRESSION lz4;

-- +goose Down
ALTER TABLE result_equity_series
    ALTER ts SET STORAGE EXTERNAL, ALTER value SET STORAGE EXTERNAL,
    ALTER cash SET STORAGE EXTERNAL, ALTER ret SET STORAGE EXTERNAL,
    ALTER drawdown_pct SET STORAGE EXTERNAL, ALTER drawdown_money SET STORAGE EXTERNAL,
    ALTER ts SET COMPRESSION default, ALTER value SET COMPRESSION default,
    ALTER cash SET COMPRESSION default, ALTER ret SET COMPRESSION default,
    ALTER drawdown_pct SET COMPRESSION default, ALTER drawdown_money SET COMPRESSION default;
