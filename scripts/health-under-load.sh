#!/usr/bin/env bash
# health-under-load.sh [BASE] [ROUNDS] [HOGS]: GET /health while six full-resolution
# candlestick charts of a 300,000-bar result are read at once (issue 46 item 7), on this
# working tree (AFTER=HEAD: the last commit instead, untouched by edits under way) and on BASE
# (a commit; default 4118a94, the build before /health checked on a connection of its own and
# heavy reads were bounded below GOMAXPROCS), alternately, ROUNDS times (default 3), with HOGS
# busy loops (default 0) taking CPUs as a loaded machine's other work would. Each line is one
# run of BenchmarkHealthUnderHeavyReads: /health's p50, p99 and max, and the p99 and max of a
# ping through the pool at the same moments.
set -euo pipefail
base=${1:-4118a94}
rounds=${2:-3}
hogs=${3:-0}
root=$(git rev-parse --show-toplevel)
tree=$(mktemp -d)
after=$root
pids=""
cleanup() {
	[ -n "$pids" ] && kill $pids 2>/dev/null || true
	git -C "$root" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
	if [ "$after" != "$root" ]; then git -C "$root" worktree remove --force "$after" 2>/dev/null || rm -rf "$after"; fi
}
trap cleanup EXIT INT TERM
git -C "$root" worktree add --quiet --detach "$tree" "$base"
# The benchmark itself is this tree's; it uses nothing the earlier build lacks.
cp "$root/internal/httpapi/health_bench_test.go" "$tree/internal/httpapi/"
if [ -n "${AFTER:-}" ]; then
	after=$(mktemp -d)
	git -C "$root" worktree add --quiet --detach "$after" "$AFTER"
fi
# Both builds' tests on one PostgreSQL: TEST_DATABASE_URL, else the machine's.
export TEST_DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
for _ in $(seq "$hogs"); do
	yes >/dev/null &
	pids="$pids $!"
done
bench() {
	(cd "$1" && go test -count=1 -run x -bench HealthUnderHeavyReads -benchtime 1x ./internal/httpapi) |
		awk -v label="$2" '/^BenchmarkHealthUnderHeavyReads/ {
			for (i = 1; i <= NF; i++) if ($i ~ /_ms$/) m[$i] = $(i-1)
			printf "%-6s /health p50 %s ms, p99 %s ms, max %s ms; pool ping p99 %s ms, max %s ms\n", label,
				m["health_p50_ms"], m["health_p99_ms"], m["health_max_ms"], m["poolping_p99_ms"], m["poolping_max_ms"] }'
}
echo "before: $(git -C "$tree" log -1 --format=%h); after: $(git -C "$after" log -1 --format=%h)$([ "$after" = "$root" ] && echo ' plus the working tree'); $hogs CPU hogs on $(nproc) CPUs"
for r in $(seq "$rounds"); do
	bench "$tree" "before"
	bench "$after" "after"
done
