-- +goose Up
-- The bar versions a task runs on, by symbol (feeds and benchmark), when it names them: a
-- request with as_of, and a reproduction (the versions its original recorded). A task
-- without rows runs on the latest bars.
CREATE TABLE task_data_versions (
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    symbol  text NOT NULL,
    version integer NOT NULL CHECK (version > 0),
    PRIMARY KEY (task_id, symbol)
);

-- +goose Down
DROP TABLE task_data_versions;
