-- +goose Up
-- The statistics record of a result as GET /api/results/{task_id}/statistics serves it,
-- computed once when the result is stored: the route then reads one row instead of the
-- whole equity curve (10,000 rows for a 10,000-bar run). Results stored before this table
-- existed have no row here; their record is computed from result_equity when asked for.
-- A table of its own (rather than a column of results) keeps `SELECT * FROM results` and
-- the bi_results view as they were.
CREATE TABLE result_statistics (
    task_id text PRIMARY KEY REFERENCES results (task_id) ON DELETE CASCADE,
    record  jsonb NOT NULL
);

-- +goose Down
DROP TABLE result_statistics;
