#!/usr/bin/env bash
# Times migrations' Up on a filled database, in one transaction that is rolled back:
#   scripts/time-migrations.sh 'postgres://...' 00041 00042 00043 00061 00066 00070 00071
# It runs the Down of each given migration, newest first (so views built on each other
# come apart in order), then times each Up, oldest first, and rolls everything back: the
# database is left as it was. Each Up runs on the real tables as an upgrade would, after
# its own Down in the same transaction (whose dead rows it may meet). Stop the service
# first: the transaction locks the tables it changes.
#
# 00044 (equity times as steps) is timed on a sample instead: its Down and Up each rewrite
# every equity series through SQL functions (hours at 300,000 results), so the script
# times its Up's UPDATE on SAMPLE (20,000) series turned back into timestamps in a
# temporary table, and prints the time per series and for the table's rows.
set -euo pipefail
url=$1; shift
dir=$(cd "$(dirname "$0")/../db/migrations" && pwd)
section() { # section FILE Up|Down: the statements of one direction
	awk -v want="$2" '/^-- \+goose (Up|Down)/ { on = ($3 == want); next } on' "$1"
}
sample=${SAMPLE:-20000}
versions=()
for v in "$@"; do
	if [ "$v" = 00044 ]; then
		psql -X -q "$url" <<SQL
\set ON_ERROR_STOP on
BEGIN;
CREATE TEMP TABLE eq ON COMMIT DROP AS
  SELECT task_id, equity_times(ts_first, ts_steps) AS ts, NULL::timestamptz AS ts_first, NULL::bigint[] AS ts_steps
  FROM result_equity_series LIMIT $sample;
SELECT clock_timestamp() AS t0 \gset
UPDATE eq SET ts_first = ts[1], ts_steps = equity_steps(ts);
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric * 1000 / NULLIF(count(*), 0), 2) AS ms, count(*) AS n,
       round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric / NULLIF(count(*), 0) * (SELECT count(*) FROM result_equity_series) / 60, 1) AS minutes,
       (SELECT count(*) FROM result_equity_series) AS total FROM eq \gset
\echo migration 00044 up :ms ms a series on :n series: about :minutes min for the :total series here
ROLLBACK;
SQL
	else
		versions+=("$v")
	fi
done
[ ${#versions[@]} -gt 0 ] || exit 0
set -- "${versions[@]}"
script=$(mktemp)
trap 'rm -f "$script"' EXIT
{
	echo '\set ON_ERROR_STOP on'
	echo 'BEGIN;'
	for v in $(printf '%s\n' "$@" | sort -r); do
		section "$dir/$v"_*.sql Down
	done
	for v in $(printf '%s\n' "$@" | sort); do
		echo "SELECT clock_timestamp() AS t0 \\gset"
		section "$dir/$v"_*.sql Up
		echo "SELECT '$v' AS migration, round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2) AS up_seconds \\gset"
		echo "\\echo migration :migration up :up_seconds s"
	done
	echo 'ROLLBACK;'
} >"$script"
psql -X -q "$url" -f "$script"
