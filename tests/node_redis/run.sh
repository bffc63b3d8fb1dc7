#!/usr/bin/env bash
# node-redis's own scanDump/loadChunk helpers against `rocksketch serve` (dump.mjs), and
# its cluster client against three cluster-mode nodes (cluster.mjs).
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
cp "$here/dump.mjs" "$here/cluster.mjs" "$deps/"
source "$here/../start-server.sh" "$bin" node-redis
node "$deps/dump.mjs" "$port"

# Three cluster nodes beside the single server, stopped with it.
nodes=()
pids=()
for n in 1 2 3; do
    "$bin" serve --dir "$data/node$n" --port 0 --cluster-enabled >"$data/node$n.log" 2>&1 &
    pids+=("$!")
done
trap 'kill "$server" "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$data"' EXIT
for n in 1 2 3; do
    for _ in $(seq 100); do
        grep -q "listening on" "$data/node$n.log" && break
        sleep 0.1
    done
    nodes+=("$(sed -n 's/.*listening on [^ ]*:\([0-9]*\) .*/\1/p' "$data/node$n.log")")
done
node "$deps/cluster.mjs" "$port" "${nodes[@]}"
