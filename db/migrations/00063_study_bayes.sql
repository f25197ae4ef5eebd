-- +goose Up
-- Model-based studies (method 'bayes'): their trials are proposed in rounds, each round's
-- rows inserted when the one before has run, so total is the budget (samples) rather than
-- the rows there are; it is lowered when the space (or the constraint) allows no more.
ALTER TABLE studies DROP CONSTRAINT studies_method_check;
ALTER TABLE studies ADD CONSTRAINT studies_method_check CHECK (method IN ('grid', 'random', 'bayes'));

-- +goose Down
DELETE FROM studies WHERE method = 'bayes';
ALTER TABLE studies DROP CONSTRAINT studies_method_check;
ALTER TABLE studies ADD CONSTRAINT studies_method_check CHECK (method IN ('grid', 'random'));
