#!/usr/bin/env bash
# Reads measured with wrk (a lighter load generator than solgate-bench, so more of the two
# cores are left to the server): GET one VNF instance, GET a list of 100, GET api_versions,
# against embedded `solgate serve` on SQLite.
#   bench/wrk.sh [connections] [seconds]      e.g. bench/wrk.sh 16 10
# SOLGATE_BENCH_SERVER=path measures another solgate binary. Needs wrk (Debian package wrk).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
connections=${1:-16}
seconds=${2:-10}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
source bench/lib.sh
start_serve "$work/data"
# The package and 100 instances.
"$bin/solgate-bench" --target "$url" --connections 1 --duration 1 show >/dev/null
id=$(curl -sf -H 'Version: 2.0.0' "$url/vnflcm/v2/vnf_instances" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
for path in "/vnflcm/v2/vnf_instances/$id" "/vnflcm/v2/vnf_instances" "/vnflcm/api_versions"; do
    printf '%-52s ' "GET ${path/$id/{id\}}"
    wrk -t 2 -c "$connections" -d "${seconds}s" -H 'Version: 2.0.0' -H 'Accept: application/json' "$url$path" |
        awk '/Requests\/sec/ {rate=$2} /Latency/ {lat=$2} END {printf "%10.0f req/s  mean latency %s\n", rate, lat}'
done
echo "peak RSS: $(peak_rss)"
