-- +goose Up
-- Monte Carlo on price paths (internal/pricepaths): one row per result and request (runs,
-- seed, block; the defaults resolved), made by the first GET that asks and worked by a River
-- job that reruns the strategy on each path. done counts the reruns for progress; answer is
-- the montecarlo.Answer once completed; error the reason a failed one gives. The answer is
-- a function of the result and the request, so a repeated request reads it here.
CREATE TABLE montecarlo_paths (
    task_id    text NOT NULL REFERENCES results (task_id) ON DELETE CASCADE,
    runs       integer NOT NULL CHECK (runs > 0),
    seed       bigint NOT NULL CHECK (seed >= 0),
    block      integer NOT NULL CHECK (block > 0),
    status     text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    done       integer NOT NULL DEFAULT 0,
    answer     jsonb,
    error      text,
    created_by text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (task_id, runs, seed, block)
);

-- +goose Down
DROP TABLE montecarlo_paths;
