#!/usr/bin/env bash
# Bar versions against the build before them, in one run on the same PostgreSQL
# (TEST_DATABASE_URL, default the machine's server at 127.0.0.1:5432):
#   scripts/bench-versions.sh [BASE]    (BASE: the commit before bar versions, default 421813d)
# Runs internal/marketdata's versions_bench_test.go (a 1,000,000-bar one-minute import, a
# re-import changing one bar, a 10,000-bar read of the latest bars) on BASE and on this
# tree, COUNT rounds (default 2) in alternating order, and on this tree BenchmarkReadVersion10k
# (the same read of the older version). READS_ONLY=1 leaves out the imports.
set -euo pipefail
export TEST_DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
base=${1:-421813d}
root=$(cd "$(dirname "$0")/.." && pwd)
wt=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"' EXIT
git -C "$root" worktree add --detach "$wt" "$base" >/dev/null
cp "$root/internal/marketdata/versions_bench_test.go" "$wt/internal/marketdata/"
count=${COUNT:-2}
run() { # run DIR: the import (once per round: 1,000,000 bars; READS_ONLY=1 skips it) and the reads (200 times)
	[ -n "${READS_ONLY:-}" ] || (cd "$1" && go test -run '^$' -timeout 30m -bench '^BenchmarkImportIntraday$' -benchtime 1x ./internal/marketdata/ | grep -E '^Benchmark')
	(cd "$1" && go test -run '^$' -timeout 30m -bench '^BenchmarkRead10k$' -benchtime 200x ./internal/marketdata/ | grep -E '^Benchmark')
	if [ "$1" = "$root" ]; then
		(cd "$1" && go test -run '^$' -timeout 30m -bench '^BenchmarkReadVersion10k$' -benchtime 200x ./internal/marketdata/ | grep -E '^Benchmark')
	fi
}
# Odd rounds run the base first, even rounds this tree first, so that neither build always
# runs second, after the other's writes (checkpoints, autovacuum).
for i in $(seq "$count"); do
	if [ $((i % 2)) = 1 ]; then order="$wt $root"; else order="$root $wt"; fi
	for d in $order; do
		if [ "$d" = "$wt" ]; then echo "== before ($base), round $i"; else echo "== after ($(git -C "$root" rev-parse --short HEAD)), round $i"; fi
		run "$d"
	done
done
