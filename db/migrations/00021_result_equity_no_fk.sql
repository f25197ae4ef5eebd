-- +goose Up
-- result_equity holds one row per bar (10,000+ per result). A foreign key checks every row
-- on COPY and more than doubled the time to store a result; only results.Save writes these
-- rows (after inserting the results row, in one transaction), so the key is replaced by a
-- trigger that keeps the cascade on delete.
ALTER TABLE result_equity DROP CONSTRAINT result_equity_task_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION results_delete_equity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM result_equity WHERE task_id = OLD.task_id;
    RETURN OLD;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER results_delete_equity AFTER DELETE ON results
    FOR EACH ROW EXECUTE FUNCTION results_delete_equity();

-- +goose Down
DROP TRIGGER results_delete_equity ON results;
DROP FUNCTION results_delete_equity();
DELETE FROM result_equity e WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.task_id = e.task_id);
ALTER TABLE result_equity ADD FOREIGN KEY (task_id) REFERENCES results (task_id) ON DELETE CASCADE;
