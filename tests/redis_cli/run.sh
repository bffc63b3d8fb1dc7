#!/usr/bin/env bash
# A redis-cli session against `rocksketch serve`: session.txt goes in line by line,
# and the output must equal expected.txt (redis-cli prints a blank line after each
# error when its output is not a terminal). Usage: run.sh path/to/rocksketch
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
source "$here/../start-server.sh" "$bin" "redis-cli smoke"
actual="$(redis-cli -p "$port" <"$here/session.txt")"
if ! diff -u "$here/expected.txt" <(printf '%s\n' "$actual"); then
    echo "redis-cli smoke: output differs from expected.txt" >&2
    exit 1
fi
redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
wait "$server"
echo "redis-cli smoke: $(wc -l <"$here/session.txt") commands, output as expected"
