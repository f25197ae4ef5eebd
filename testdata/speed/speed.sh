#!/usr/bin/env bash
# `backtestd run` against backtrader on the same file and strategy, in one run (issue 11's
# 50× target). Not run by CI. From the repository root, with backtrader's source unpacked
# (see ../backtrader/README.md):
#
#   BACKTRADER=/tmp/bt-py testdata/speed/speed.sh [bars]
#
# backtestd: the whole process (start-up, CSV parse, run, report), best of 5.
# backtrader: CSV parse and run, without interpreter start-up and imports, best of 3.
set -euo pipefail
cd "$(dirname "$0")/../.."
bars=${1:-100000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 testdata/speed/gen_bars.py "$bars" > "$dir/bars.csv"
go build -o "$dir/backtestd" ./cmd/backtestd

best() { sort -g | head -1; }
ours=$(for _ in 1 2 3 4 5; do
	s=$(date +%s.%N); "$dir/backtestd" run --strategy examples/sma_cross.js --data "$dir/bars.csv" > "$dir/ours.txt"; e=$(date +%s.%N)
	echo "$e - $s" | bc -l
done | best)
theirs=$(for _ in 1 2 3; do python3 testdata/speed/bt_sma_cross.py "$dir/bars.csv" | tee "$dir/theirs.txt" | cut -d' ' -f1; done | best)
printf 'bars %d\nbacktestd run (whole process) %.3f s\nbacktrader (parse + run)      %.3f s\nratio                          %.1fx\n' \
	"$bars" "$ours" "$theirs" "$(echo "$theirs / $ours" | bc -l)"
printf 'final value: backtestd %s, backtrader %s\n' "$(grep -m1 'final value' "$dir/ours.txt" | awk '{print $3}')" "$(cut -d' ' -f2 "$dir/theirs.txt")"
