#!/usr/bin/env bash
# machine-ceiling.sh: how much of N× a machine with N cores gives work that shares nothing,
# beside what `backtestd sweep --jobs N` gets.
#
#   scripts/machine-ceiling.sh BACKTESTD ORCL_CSV
#
# Each round (RUNS, default 5) times, one after the other: an awk loop of arithmetic alone
# and N copies of it at once (N = the number of cores); the study of sweep-scaling.sh with
# one job; the same study cut into N independent one-job processes, each a share of the
# values of fast; and `sweep --jobs N`. Needs bash, coreutils and awk besides the binary, the
# CSV and this checkout's examples/sma_cross.js. On a VM whose cores share a host, N copies
# of arithmetic can do well under N times the work of one: no program scales beyond that.
set -euo pipefail

# The strategy: examples/sma_cross.js of this repository.
strategy=$(cd "$(dirname "$0")/.." && pwd)/examples/sma_cross.js

if [ $# -ne 2 ]; then
	echo "usage: $0 BACKTESTD ORCL_CSV" >&2
	exit 2
fi
bin=$1 csv=$2
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
[ -r "$csv" ] || { echo "$0: cannot read $csv" >&2; exit 2; }
runs=${RUNS:-5}
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
study=(sweep --strategy "$strategy" --data "$csv" --from 2000-01-01 --to 2009-12-31 --param slow=60:250:10)
# The values of fast, 2..51, in cores shares as even as whole numbers allow.
shares=()
for ((k = 0; k < cores; k++)); do
	lo=$((2 + k * 50 / cores)) hi=$((1 + (k + 1) * 50 / cores))
	[ "$lo" -le "$hi" ] && shares+=("$lo:$hi")
done

now() { date +%s%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
spin() { awk 'BEGIN { for (i = 0; i < 5e6; i++) s += i * 1.000001; print s }' >/dev/null; }
sweep() { "$bin" "${study[@]}" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }; }

echo "machine: $cores cores, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "the study: 1,000 combinations of sweep-scaling.sh; $cores processes of shares of fast: ${shares[*]}"
for ((r = 1; r <= runs; r++)); do
	a=$(now); spin; b=$(now); one=$(ms "$a" "$b")
	a=$(now)
	for ((i = 0; i < cores; i++)); do spin & done
	wait
	b=$(now); all=$(ms "$a" "$b")
	a=$(now); sweep --param fast=2:51:1 --jobs 1; b=$(now); j1=$(ms "$a" "$b")
	a=$(now)
	for s in "${shares[@]}"; do sweep --param "fast=${s%:*}:${s#*:}:1" --jobs 1 & done
	wait
	b=$(now); split=$(ms "$a" "$b")
	a=$(now); sweep --param fast=2:51:1 --jobs "$cores"; b=$(now); jn=$(ms "$a" "$b")
	echo "round $r: arithmetic: one $one ms, $cores at once $all ms, $(ratio "$(awk -v o="$one" -v c="$cores" 'BEGIN { print o * c }')" "$all")x of $cores;" \
		"study: one job $j1 ms, $cores processes $split ms ($(ratio "$j1" "$split")x), --jobs $cores $jn ms ($(ratio "$j1" "$jn")x)"
done
