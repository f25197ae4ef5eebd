#!/usr/bin/env bash
# The runs list over RESULTS (default 100,000) results, this tree beside BASE (default
# 421813d, the build before bar versions), on one database and the machine's PostgreSQL
# (PGURL, default 127.0.0.1:5432):
#   scripts/bench-list-versions.sh [BASE]
# 1. BASE's `serve` migrates a fresh database; this tree's cmd/bench-tasks fills it (`-only
#    year -results RESULTS -seeds SEEDS`: real runs cloned in SQL) and times the runs-list
#    pages, the BI queries and the bytes per result;
# 2. this tree's `serve` migrates the filled database (its log's "migration applied" lines
#    give each migration's time) and the same figures are taken again (`-fill=false`);
# 3. BASE's `serve` runs on the migrated schema (migrations only add) and they are taken a
#    third time, so that neither build is only measured first.
# The database is dropped at the end (KEEP=1 keeps it).
set -euo pipefail
pgurl=${PGURL:-postgres://postgres@127.0.0.1:5432}
base=${1:-421813d}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
db=bench_list_versions
serve_pid=
cleanup() {
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true
	git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
	[ -n "${KEEP:-}" ] || psql "$pgurl/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
(cd "$tmp/base" && go build -o "$tmp/backtestd-before" ./cmd/backtestd)
(cd "$root" && go build -o "$tmp/backtestd-after" ./cmd/backtestd && go build -o "$tmp/bench-tasks" ./cmd/bench-tasks)
psql "$pgurl/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
url="$pgurl/$db?sslmode=disable"
port=18473
one() { # one BUILD STEP FILL
	DATABASE_URL=$url WORKERS=2 SAMPLE_DATA=false LISTEN_ADDR=127.0.0.1:$port BACKTESTD_DATA_DIR=$tmp/data \
		"$tmp/backtestd-$1" serve >"$tmp/serve-$2.log" 2>&1 &
	serve_pid=$!
	for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 1; done
	grep -o 'msg="migration applied".*' "$tmp/serve-$2.log" | sed "s/^/$1 step $2: /" || true
	"$tmp/bench-tasks" -api "http://127.0.0.1:$port" -db "$url" -only year -results "${RESULTS:-100000}" \
		-seeds "${SEEDS:-300}" -fill="$3" 2>&1 | sed "s/^/$1 step $2: /"
	kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
}
one before 1 true
one after 2 false
one before 3 false
