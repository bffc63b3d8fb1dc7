#!/usr/bin/env bash
# redis-py's own test suite, as its sdist on PyPI ships it, against `rocksketch serve`:
# its whole Bloom suite (BF, CF, CMS, TOPK, TDIGEST; sync and asyncio) in RESP2 and RESP3,
# and the tests of the core commands the host answers (selected.txt). The suite's
# sources and its test dependencies, pinned, go under ~/.cache/rocksketch-redis-py.
# Usage: run.sh path/to/rocksketch
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
version=6.4.0
home="${ROCKSKETCH_REDIS_PY:-$HOME/.cache/rocksketch-redis-py}"
venv="$home/venv"
src="$home/redis-$version"
if ! "$venv/bin/python" -c 'import redis, pytest, pytest_asyncio, coverage' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "redis==$version" "pytest==8.4.2" "pytest-asyncio==1.2.0" \
        "packaging==25.0" "coverage==7.10.7"
fi
if [ ! -f "$src/tests/test_bloom.py" ]; then
    "$venv/bin/pip" download -q --no-binary :all: --no-deps -d "$home" "redis==$version"
    tar -xzf "$home/redis-$version.tar.gz" -C "$home"
fi
source "$here/../start-server.sh" "$bin" redis-py-suite
selected=()
while read -r test; do
    case "$test" in '#'* | '') ;; *) selected+=("$test") ;; esac
done <"$here/selected.txt"
cd "$src"
for protocol in 2 3; do
    echo "redis-py's suite, RESP$protocol"
    if ! "$venv/bin/python" -m pytest -q -p no:cacheprovider -rfE \
        --redis-url="redis://127.0.0.1:$port" --redis-mod-url="redis://127.0.0.1:$port" \
        --protocol="$protocol" \
        tests/test_bloom.py tests/test_asyncio/test_bloom.py "${selected[@]}" >"$data/pytest.log" 2>&1; then
        grep -E '^(FAILED|ERROR)|passed|failed' "$data/pytest.log" >&2 || cat "$data/pytest.log" >&2
        echo "redis-py's suite failed in RESP$protocol" >&2
        exit 1
    fi
    tail -n 1 "$data/pytest.log"
done
