#!/usr/bin/env bash
# The reads' cost on the server, as CPU time per request rather than requests per second
# (throughput on a shared machine says more about the neighbours than about the server):
# starts embedded `solgate serve` on SQLite, creates the package and 100 instances, drives
# each read with wrk for a fixed time and reads the server's utime+stime (/proc/<pid>/stat)
# before and after, and its resident memory (VmRSS, VmHWM).
#   bench/cpu.sh [connections] [seconds] [rounds]     e.g. bench/cpu.sh 16 5 3
# SOLGATE_BENCH_SERVER=path measures another solgate binary. Needs wrk.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
connections=${1:-16}
seconds=${2:-5}
rounds=${3:-1}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
source bench/lib.sh
start_serve "$work/data"
memory() { awk '/VmRSS|VmHWM/ {printf "%s %.1f MiB  ", $1, $2 / 1024}' "/proc/$pid/status"; }
echo "after start:    $(memory)"
"$bin/solgate-bench" --target "$url" --connections 1 --duration 1 show >/dev/null
id=$(curl -sf -H 'Version: 2.0.0' "$url/vnflcm/v2/vnf_instances" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
echo "after the fill: $(memory)"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
for round in $(seq 1 "$rounds"); do
    for path in "/vnflcm/v2/vnf_instances/$id" "/vnflcm/v2/vnf_instances" "/vnflcm/api_versions"; do
        before=$(ticks)
        out=$(wrk -t 2 -c "$connections" -d "${seconds}s" -H 'Version: 2.0.0' -H 'Accept: application/json' "$url$path")
        after=$(ticks)
        requests=$(awk '/requests in/ {print $1}' <<<"$out")
        rate=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
        printf 'round %s  GET %-32s %8s requests %9.0f req/s  %6.1f µs CPU/request\n' "$round" "${path/$id/{id\}}" \
            "$requests" "$rate" "$(echo "($after - $before) * 1000000 / $hz / $requests" | bc -l)"
    done
done
echo "at the end:     $(memory)"
