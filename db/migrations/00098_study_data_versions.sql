-- +goose Up
-- The bar versions a study runs on, by symbol, when its request named a time (as_of): every
-- batch and fold of it reads those versions. A study without rows reads the latest bars.
CREATE TABLE study_data_versions (
    study_id text NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    symbol   text NOT NULL,
    version  integer NOT NULL CHECK (version > 0),
    PRIMARY KEY (study_id, symbol)
);

-- +goose Down
DROP TABLE study_data_versions;
