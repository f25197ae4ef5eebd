#!/usr/bin/env bash
# sweep-scaling.sh: how `backtestd sweep` scales with --jobs on this machine.
#
#   scripts/sweep-scaling.sh BACKTESTD ORCL_CSV [BASELINE_BACKTESTD]
#
# Runs the study of docs/performance.md (SMA crossover, fast 2..51 × slow 60..250 by 10,
# 1,000 combinations, orcl.csv 2000-01-01 to 2009-12-31) with --jobs 1, 2, 4, … up to the
# number of cores, and prints the wall time of the whole process (best of RUNS rounds,
# default 3, each round timing every row once) and the speedup over the first row (one
# job). With a second binary (an earlier build), each of its runs is taken alternately with
# the first's, so both see the same machine, and the table adds its times, its speedup over
# its own one job, and how many times faster the first binary is. Needs only bash,
# coreutils and awk besides the binary, the CSV and this checkout's examples/sma_cross.js:
# no Go, no database, no network. Environment: RUNS (repetitions), JOBS (e.g. "1 2 16"
# instead of the powers of two), TMPDIR.
set -euo pipefail

# The strategy: examples/sma_cross.js of this repository.
strategy=$(cd "$(dirname "$0")/.." && pwd)/examples/sma_cross.js

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 BACKTESTD ORCL_CSV [BASELINE_BACKTESTD]" >&2
	exit 2
fi
bin=$1 csv=$2 base=${3:-}
runs=${RUNS:-3}
for f in "$bin" ${base:+"$base"}; do
	[ -x "$f" ] || { echo "$0: $f is not an executable" >&2; exit 2; }
done
[ -r "$csv" ] || { echo "$0: cannot read $csv" >&2; exit 2; }

cores=$(nproc)
if [ -n "${JOBS:-}" ]; then
	jobs_list=$JOBS
else
	jobs_list=""
	for ((j = 1; j < cores; j *= 2)); do jobs_list="$jobs_list $j"; done
	jobs_list="$jobs_list $cores"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

study=(sweep --strategy "$strategy" --data "$csv" --from 2000-01-01 --to 2009-12-31
	--param fast=2:51:1 --param slow=60:250:10)

# seconds BINARY JOBS [ARGS…]: the wall time of one sweep, output discarded.
seconds() {
	local b=$1 j=$2 t0 t1
	shift 2
	t0=$(date +%s.%N)
	"$b" "${study[@]}" --jobs "$j" "$@" >"$work/out" 2>"$work/err" || {
		echo "$0: $b sweep --jobs $j failed:" >&2
		cat "$work/err" >&2
		exit 1
	}
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "backtestd sweep scaling: 1,000 combinations (fast 2..51 x slow 60..250/10), $(basename "$csv") 2000-2009"
echo "machine: $cores cores${cpu:+, $cpu}; $(uname -sr)"
echo "binary: $bin${base:+; baseline: $base}"
echo "best of $runs rounds; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# The results do not depend on --jobs: the JSON of one job and of the most, less the time.
# report BINARY JOBS FILE
report() {
	"$1" "${study[@]}" --jobs "$2" --json >"$work/report" 2>"$work/err" || {
		echo "$0: $1 sweep --jobs $2 failed:" >&2
		cat "$work/err" >&2
		exit 1
	}
	grep -v '"seconds"' "$work/report" >"$3"
}
fewest=${jobs_list%% *} fewest=${fewest:-1} most=${jobs_list##* }
report "$bin" "$fewest" "$work/a.json"
report "$bin" "$most" "$work/b.json"
if cmp -s "$work/a.json" "$work/b.json"; then same="identical"; else same="DIFFERENT"; fi
if [ -n "$base" ]; then
	report "$base" "$fewest" "$work/c.json"
	if cmp -s "$work/a.json" "$work/c.json"; then same="$same; the baseline's: identical"; else same="$same; the baseline's: DIFFERENT"; fi
fi

if [ -n "$base" ]; then
	printf '%5s %10s %8s %12s %8s %13s\n' jobs seconds speedup baseline speedup "vs baseline"
else
	printf '%5s %10s %8s\n' jobs seconds speedup
fi
# Each round times every row once, so that a busy spell of the machine does not fall on one
# row's runs only; each row keeps its best.
declare -A best bbest
for ((r = 0; r < runs; r++)); do
	for j in $jobs_list; do
		t=$(seconds "$bin" "$j") # a failed run stops the script here
		best[$j]=$(least "$t" "${best[$j]:-}")
		if [ -n "$base" ]; then
			t=$(seconds "$base" "$j")
			bbest[$j]=$(least "$t" "${bbest[$j]:-}")
		fi
	done
done
one=${best[$fewest]} bone=${bbest[$fewest]:-}
for j in $jobs_list; do
	if [ -n "$base" ]; then
		awk -v j="$j" -v t="${best[$j]}" -v o="$one" -v bt="${bbest[$j]}" -v bo="$bone" \
			'BEGIN { printf "%5d %10.3f %7.2fx %12.3f %7.2fx %12.2fx\n", j, t, o / t, bt, bo / bt, bt / t }'
	else
		awk -v j="$j" -v t="${best[$j]}" -v o="$one" 'BEGIN { printf "%5d %10.3f %7.2fx\n", j, t, o / t }'
	fi
done
echo
echo "results with --jobs $fewest and --jobs $most: $same"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
