#!/usr/bin/env bash
# node-redis's own scanDump/loadChunk helpers against `rocksketch serve` (dump.mjs).
# Installs node-redis (pinned in package.json) under ~/.cache/rocksketch-node.
# Usage: run.sh path/to/rocksketch
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
deps="${ROCKSKETCH_NODE:-$HOME/.cache/rocksketch-node}"
command -v node >/dev/null 2>&1 || { echo "node-redis: node is missing (scripts/setup installs it)" >&2; exit 1; }
mkdir -p "$deps"
if ! cmp -s "$here/package.json" "$deps/package.json" || [ ! -d "$deps/node_modules/redis" ]; then
    cp "$here/package.json" "$deps/package.json"
    (cd "$deps" && npm install --silent --no-audit --no-fund >/dev/null)
fi
cp "$here/dump.mjs" "$deps/dump.mjs"
source "$here/../start-server.sh" "$bin" node-redis
node "$deps/dump.mjs" "$port"
