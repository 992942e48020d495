#!/usr/bin/env bash
# A large inventory: `solgate serve` (embedded, SQLite) holding N VNF instances; its start-up
# time (launch to listening, data directory already migrated) and the first list page's
# latency, for each N.
#   bench/scale.sh ["instance counts"] [seconds]      e.g. bench/scale.sh "1000 100000" 10
# SOLGATE_BENCH_SERVER=path measures another solgate binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
counts=${1:-1000 100000}
seconds=${2:-10}
cargo build --release -q -p solgate -p solgate-bench
bin=target/release
server=${SOLGATE_BENCH_SERVER:-$bin/solgate}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

start() { # data-dir; sets url, pid and started_ms (launch to listening)
    local begin=$(date +%s%N)
    SOLGATE_LOG_FORMAT=json SOLGATE__LOG__ACCESS_LOG=false \
        "$server" serve --listen 127.0.0.1:0 --data-dir "$1" >/dev/null 2>"$1.log" &
    pid=$!
    for _ in $(seq 1 3000); do
        local address
        address=$(grep -o '"address":"[^"]*"' "$1.log" 2>/dev/null | head -n 1 | cut -d'"' -f4 || true)
        if [ -n "$address" ]; then
            url="http://$address"
            started_ms=$(( ($(date +%s%N) - begin) / 1000000 ))
            return 0
        fi
        sleep 0.01
    done
    echo "solgate did not start:" >&2; cat "$1.log" >&2; return 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

for n in $counts; do
    data="$work/n$n"
    # Setup through the API (package, 100 instances), then copies up to N while stopped.
    start "$data"
    "$bin/solgate-bench" --target "$url" --connections 1 --duration 1 show >/dev/null
    stop
    python3 bench/fill_instances.py "$data/solgate.db" "$n"
    start "$data"
    echo "== $n VNF instances: start-up ${started_ms} ms (launch to listening)"
    "$bin/solgate-bench" --target "$url" --connections 16 --duration "$seconds" --label "$n instances" page | tail -n 1
    echo "peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status")"
    stop
done
