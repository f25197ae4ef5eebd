-- +goose Up
-- An equity series keeps its times, values and cash only. Each point's return and drawdown
-- are functions of the values and the initial cash (engine.DeriveEquity), and were half of
-- what every completed backtest sent and wrote (three float arrays of its length that barely
-- compress). Readers derive them as the run did; the views compute them with the same
-- floating-point operations in the same order, so bi_equity keeps its shape, meaning and
-- values to the bit — but where the run divided by zero (a previous value or a peak of 0:
-- nothing left), which gave NaN or an infinity, the view says NULL (PostgreSQL refuses to
-- divide by zero).
CREATE OR REPLACE VIEW result_equity AS
SELECT e.task_id, u.seq::integer AS seq, u.ts, u.value, u.cash,
       u.value / NULLIF(COALESCE(lag(u.value) OVER w, r.initial_cash), 0) - 1.0::float8 AS ret,
       100.0::float8 * (max(u.value) OVER w - u.value) / NULLIF(max(u.value) OVER w, 0) AS drawdown_pct,
       max(u.value) OVER w - u.value AS drawdown_money
FROM result_equity_series e
JOIN results r ON r.task_id = e.task_id
CROSS JOIN LATERAL unnest(e.ts, e.value, e.cash) WITH ORDINALITY AS u (ts, value, cash, seq)
WINDOW w AS (PARTITION BY e.task_id ORDER BY u.seq);

ALTER TABLE result_equity_series DROP COLUMN ret, DROP COLUMN drawdown_pct, DROP COLUMN drawdown_money;

-- +goose Down
ALTER TABLE result_equity_series ADD COLUMN ret float8[], ADD COLUMN drawdown_pct float8[],
    ADD COLUMN drawdown_money float8[];
UPDATE result_equity_series s SET ret = d.ret, drawdown_pct = d.drawdown_pct, drawdown_money = d.drawdown_money
FROM (SELECT task_id, array_agg(ret ORDER BY seq) AS ret, array_agg(drawdown_pct ORDER BY seq) AS drawdown_pct,
             array_agg(drawdown_money ORDER BY seq) AS drawdown_money
      FROM result_equity GROUP BY task_id) d
WHERE d.task_id = s.task_id;
ALTER TABLE result_equity_series ALTER ret SET NOT NULL, ALTER drawdown_pct SET NOT NULL,
    ALTER drawdown_money SET NOT NULL,
    ALTER ret SET STORAGE EXTENDED, ALTER drawdown_pct SET STORAGE EXTENDED, ALTER drawdown_money SET STORAGE EXTENDED,
    ALTER ret SET COMPRESSION lz4, ALTER drawdown_pct SET COMPRESSION lz4, ALTER drawdown_money SET COMPRESSION lz4;
CREATE OR REPLACE VIEW result_equity AS
SELECT e.task_id, u.seq::integer AS seq, u.ts, u.value, u.cash, u.ret, u.drawdown_pct, u.drawdown_money
FROM result_equity_series e
CROSS JOIN LATERAL unnest(e.ts, e.value, e.cash, e.ret, e.drawdown_pct, e.drawdown_money)
    WITH ORDINALITY AS u (ts, value, cash, ret, drawdown_pct, drawdown_money, seq);
