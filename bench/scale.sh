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
source bench/lib.sh

for n in $counts; do
    data="$work/n$n"
    # Setup through the API (package, 100 instances), then copies up to N while stopped.
    start_serve "$data"
    "$bin/solgate-bench" --target "$url" --connections 1 --duration 1 show >/dev/null
    stop_serve
    python3 bench/fill_instances.py "$data/solgate.db" "$n"
    start_serve "$data"
    echo "== $n VNF instances: start-up ${started_ms} ms (launch to listening)"
    "$bin/solgate-bench" --target "$url" --connections 16 --duration "$seconds" --label "$n instances" page | tail -n 1
    echo "peak RSS: $(peak_rss)"
    stop_serve
done
