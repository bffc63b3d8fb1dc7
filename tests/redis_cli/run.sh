#!/usr/bin/env bash
# A redis-cli session against `rocksketch serve`: session.txt goes in line by line,
# and the output must equal expected.txt (redis-cli prints a blank line after each
# error when its output is not a terminal). Usage: run.sh path/to/rocksketch
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
data="$(mktemp -d)"
log="$data/server.log"
"$bin" serve --dir "$data/db" --port 0 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$log" && break
    sleep 0.1
done
port="$(sed -n 's/.*listening on [^ ]*:\([0-9]*\) .*/\1/p' "$log")"
if [ -z "$port" ]; then
    echo "redis-cli smoke: the server did not start" >&2
    cat "$log" >&2
    exit 1
fi
actual="$(redis-cli -p "$port" <"$here/session.txt")"
if ! diff -u "$here/expected.txt" <(printf '%s\n' "$actual"); then
    echo "redis-cli smoke: output differs from expected.txt" >&2
    exit 1
fi
redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
wait "$server"
echo "redis-cli smoke: $(wc -l <"$here/session.txt") commands, output as expected"
