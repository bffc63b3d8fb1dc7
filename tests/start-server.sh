# Sourced by the client tests' run.sh: starts `rocksketch serve` (the binary $1) on a
# fresh data directory and a free port, sets `data`, `server` and `port`, and stops the
# server and removes the directory when the script exits.
# Usage: source tests/start-server.sh path/to/rocksketch name-for-errors
data="$(mktemp -d)"
log="$data/server.log"
"$1" serve --dir "$data/db" --port 0 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$log" && break
    sleep 0.1
done
port="$(sed -n 's/.*listening on [^ ]*:\([0-9]*\) .*/\1/p' "$log")"
if [ -z "$port" ]; then
    echo "$2: the server did not start" >&2
    cat "$log" >&2
    exit 1
fi
