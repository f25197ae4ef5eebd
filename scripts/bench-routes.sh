#!/usr/bin/env bash
# The task and runs-list routes of this tree beside a BASE build, in one run on the same
# PostgreSQL (PGURL, default the machine's server at 127.0.0.1:5432):
#   scripts/bench-routes.sh [BASE]    (default 421813d, the build before bar versions)
# For each build, COUNT rounds (default 2) alternating: a fresh database, `backtestd serve`
# (WORKERS=4) on it, then this tree's cmd/bench-tasks: `-only latency -runs RUNS` (submit →
# completed of a 5,000-bar backtest, GET of the task; default 50) and `-only year -results
# RESULTS -seeds SEEDS` (runs-list pages over RESULTS completed results; default 2,000 and
# 20). Prints bench-tasks' lines prefixed by the build.
set -euo pipefail
pgurl=${PGURL:-postgres://postgres@127.0.0.1:5432}
base=${1:-421813d}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
serve_pid=
cleanup() {
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true
	git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
(cd "$tmp/base" && go build -o "$tmp/backtestd-before" ./cmd/backtestd)
(cd "$root" && go build -o "$tmp/backtestd-after" ./cmd/backtestd && go build -o "$tmp/bench-tasks" ./cmd/bench-tasks)
port=18471
one() { # one BUILD ROUND
	local db="bench_routes_$1_$2" url
	psql "$pgurl/postgres" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
	url="$pgurl/$db?sslmode=disable"
	DATABASE_URL=$url WORKERS=4 LISTEN_ADDR=127.0.0.1:$port BACKTESTD_DATA_DIR=$tmp/data-$1-$2 \
		"$tmp/backtestd-$1" serve >"$tmp/serve-$1-$2.log" 2>&1 &
	serve_pid=$!
	for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 1; done
	"$tmp/bench-tasks" -api "http://127.0.0.1:$port" -db "$url" -only latency -runs "${RUNS:-50}" 2>&1 | sed "s/^/$1 round $2: /"
	"$tmp/bench-tasks" -api "http://127.0.0.1:$port" -db "$url" -only year -results "${RESULTS:-2000}" -seeds "${SEEDS:-20}" 2>&1 | sed "s/^/$1 round $2: /"
	kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
	psql "$pgurl/postgres" -qc "DROP DATABASE $db WITH (FORCE)"
}
for i in $(seq "${COUNT:-2}"); do
	one before "$i"
	one after "$i"
done
