#!/usr/bin/env bash
# Bar versions against the build before them, in one run on the same PostgreSQL
# (TEST_DATABASE_URL, default the pgtest one at 127.0.0.1:5432):
#   scripts/bench-versions.sh [BASE]    (BASE: the commit before bar versions, default 421813d)
# Runs internal/marketdata's versions_bench_test.go (a 1,000,000-bar one-minute import, a
# re-import changing one bar, a 10,000-bar read) on BASE and on this tree, alternating,
# then BenchmarkReadVersion10k (reading the older version) on this tree.
set -euo pipefail
base=${1:-421813d}
root=$(cd "$(dirname "$0")/.." && pwd)
wt=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"' EXIT
git -C "$root" worktree add --detach "$wt" "$base" >/dev/null
cp "$root/internal/marketdata/versions_bench_test.go" "$wt/internal/marketdata/"
bench='^(BenchmarkImportIntraday|BenchmarkRead10k)$'
count=${COUNT:-2}
for i in $(seq "$count"); do
	echo "== before ($base), round $i"
	(cd "$wt" && go test -run '^$' -bench "$bench" -benchtime 3x ./internal/marketdata/ | grep -E '^Benchmark')
	echo "== after ($(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet -- internal db || echo +changes)), round $i"
	(cd "$root" && go test -run '^$' -bench "$bench" -benchtime 3x ./internal/marketdata/ | grep -E '^Benchmark')
done
echo "== after: reading version 1"
(cd "$root" && go test -run '^$' -bench '^BenchmarkReadVersion10k$' -benchtime 200x ./internal/marketdata/ | grep -E '^Benchmark')
