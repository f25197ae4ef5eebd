#!/usr/bin/env bash
# Builds the web page into web/dist/app when Node is available and the build is missing or
# older than its sources. Without Node it does nothing: the binary then serves a placeholder
# page, so Go builds and backend tests never need npm. Set WEB_BUILD=force to always build.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "web: Node.js not found; serving the placeholder page (install Node 20+ to build the UI)" >&2
	exit 0
fi

stamp=dist/app/index.html
stale() {
	[ "${WEB_BUILD:-}" = force ] && return 0
	[ -f "$stamp" ] || return 0
	[ -n "$(find src index.html package.json package-lock.json vite.config.ts tsconfig.json -newer "$stamp" -print -quit 2>/dev/null)" ]
}

if ! stale; then
	exit 0
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	echo "web: installing packages (npm ci)" >&2
	npm ci --no-audit --no-fund --loglevel=error >&2
fi
echo "web: building the page into web/dist/app" >&2
npm run --silent build >&2
# Pre-compressed copies of the larger assets, served to clients that accept gzip.
find dist/app/assets -type f \( -name '*.js' -o -name '*.css' -o -name '*.svg' \) -size +1k -exec gzip -9 -k -n -f {} \;
