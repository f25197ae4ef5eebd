#!/usr/bin/env bash
# Runs the page's unit tests (Vitest) when Node is available; without Node it says so and
# exits 0, like build.sh. Set CI=1 to make a missing Node an error instead.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	if [ -n "${CI:-}" ]; then
		echo "web: Node.js is required under CI to run the page's unit tests" >&2
		exit 1
	fi
	echo "web: Node.js not found; skipping the page's unit tests" >&2
	exit 0
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error >&2
fi
npx vitest run
