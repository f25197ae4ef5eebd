-- +goose Up
-- The PyFolio positions of a result (one row per equity point: each feed's position value,
-- then the cash) were 80% of its analyzers document: about 160 KB of JSON for 5,000 bars,
-- which the service encoded, PostgreSQL parsed into jsonb numerics and compressed with
-- pglz, for every run. Their cash column is the equity curve's cash, stored already; the
-- feeds' values are kept here as packed numbers (row by row, one per feed) and the
-- analyzers document of such a result has an empty positions list that reading restores
-- (results.RestorePositions). NULL: the document holds them itself (results stored before
-- this, or positions whose cash differs from the curve's).
ALTER TABLE result_equity_series ADD COLUMN positions float8[];
ALTER TABLE result_equity_series ALTER positions SET STORAGE EXTENDED, ALTER positions SET COMPRESSION lz4;
-- lz4 rather than pglz for what every result still writes as documents: pglz was PostgreSQL's
-- largest single cost in a flood of results (issue 35).
ALTER TABLE results ALTER analyzers SET COMPRESSION lz4;
ALTER TABLE result_statistics ALTER record SET COMPRESSION lz4;

-- +goose Down
ALTER TABLE result_statistics ALTER record SET COMPRESSION default;
ALTER TABLE results ALTER analyzers SET COMPRESSION default;
ALTER TABLE result_equity_series DROP COLUMN positions;
