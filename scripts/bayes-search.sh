#!/usr/bin/env bash
# Model-based (bayes) against random search on the study of docs/studies.md: SMA crossover
# over fast=2:101:1 × slow=50:400:5 (7,100 combinations) on orcl.csv up to 2009, ranked by
# Sharpe ratio. Prints the grid's best, then for seeds 1–5 the best Sharpe that 150
# samples found with --method bayes and with --method random, as a share of the grid's,
# and the medians. Needs jq. Usage: scripts/bayes-search.sh [reference dir] [samples]
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-${BACKTESTD_REFERENCE_DIR:-../shared/reference}}
samples=${2:-150}
bin=$(mktemp -d)/backtestd
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/backtestd

study=(--strategy examples/sma_cross.js --data "$ref/data/orcl.csv" --to 2009-12-31
	--param fast=2:101:1 --param slow=50:400:5 --objective sharpe_ratio --blocks 2)
best() { "$bin" sweep "${study[@]}" "$@" --json 2>/dev/null | jq -r '.trials[0] | "\(.objective) \(.params.fast) \(.params.slow)"'; }

read -r grid gf gs < <(best --method grid)
printf 'grid (7100 combinations): best Sharpe %.4f at fast=%s slow=%s\n' "$grid" "$gf" "$gs"
printf '%-5s %-28s %-28s\n' seed "bayes $samples" "random $samples"
b_shares=() r_shares=()
for seed in 1 2 3 4 5; do
	read -r b bf bs < <(best --method bayes --samples "$samples" --seed "$seed")
	read -r r rf rs < <(best --method random --samples "$samples" --seed "$seed")
	bshare=$(jq -n "$b / $grid") rshare=$(jq -n "$r / $grid")
	b_shares+=("$bshare") r_shares+=("$rshare")
	printf '%-5s %.4f (%5.1f%%) %3s/%-3s    %.4f (%5.1f%%) %3s/%-3s\n' "$seed" "$b" "$(jq -n "$bshare*100")" "$bf" "$bs" \
		"$r" "$(jq -n "$rshare*100")" "$rf" "$rs"
done
median() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
printf 'median share of the grid best: bayes %.1f%%, random %.1f%%\n' \
	"$(jq -n "$(median "${b_shares[@]}")*100")" "$(jq -n "$(median "${r_shares[@]}")*100")"
