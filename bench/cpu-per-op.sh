#!/usr/bin/env bash
# Server CPU time per LCM operation: `solgate serve` (SQLite, synchronous = FULL, local
# simulated VIM with zero delay) driven by `solgate-bench lcm`; the server's utime + stime
# from /proc/<pid>/stat, read when the load driver has finished its setup and again when it
# is done, divided by the operations that reached COMPLETED. CPU per operation, unlike
# operations per second, hardly depends on what else the shared machine runs. Also the thread
# switches per operation (voluntary and involuntary, summed over the server's threads from
# /proc/<pid>/task/*/status): each costs kernel time, and more on a virtual machine.
#   bench/cpu-per-op.sh [connections] [seconds] [rounds]
# SOLGATE_BENCH_SERVER=path measures another solgate binary (e.g. a build of an earlier
# commit) with this tree's load driver; SOLGATE_BENCH_POSTGRES=1 uses a fresh database on
# the test PostgreSQL (deploy/scripts/services.sh starts it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
connections=${1:-16}
seconds=${2:-10}
rounds=${3:-1}
source bench/lib.sh
if [ "${SOLGATE_BENCH_POSTGRES:-}" = 1 ]; then
    source deploy/scripts/services.sh
    ensure_postgres >/dev/null
fi
ticks=$(getconf CLK_TCK)
cpu_ms() { awk -v hz="$ticks" '{ print ($14 + $15) * 1000 / hz }' "/proc/$pid/stat"; }
switches() { cat /proc/"$pid"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'; }
for round in $(seq 1 "$rounds"); do
    if [ "${SOLGATE_BENCH_POSTGRES:-}" = 1 ]; then
        name="solgate_cpu_$RANDOM$RANDOM"
        psql "$SOLGATE_TEST_POSTGRES_URL" -qc "CREATE DATABASE $name" >/dev/null
        export SOLGATE_DATABASE_URL="${SOLGATE_TEST_POSTGRES_URL%/*}/$name"
    fi
    start_serve "$work/data-$round"
    out="$work/bench-$round.out"
    "$bin/solgate-bench" --target "$url" --connections "$connections" --duration "$seconds" lcm >"$out" 2>&1 &
    bench=$!
    # The header is printed after the setup (onboarding, 100 instances): the LCM load starts.
    until grep -q '^solgate-bench:' "$out" 2>/dev/null; do
        kill -0 "$bench" 2>/dev/null || { cat "$out" >&2; exit 1; }
        sleep 0.05
    done
    before=$(cpu_ms) switched=$(switches)
    wait "$bench"
    after=$(cpu_ms) switched=$(( $(switches) - switched ))
    operations=$(awk '/LCM operation, 202 to COMPLETED/ { print $6 }' "$out")
    grep -E 'errors [1-9]' "$out" >&2 || true
    awk -v r="$round" -v ops="$operations" -v b="$before" -v a="$after" -v c="$connections" -v s="$switched" 'BEGIN {
        n = ops > 0 ? ops : 1
        printf "round %d, %d clients: %d operations, server CPU %.0f ms, %.2f ms and %.1f thread switches per operation\n",
            r, c, ops, a - b, (a - b) / n, s / n }'
    stop_serve
    if [ "${SOLGATE_BENCH_POSTGRES:-}" = 1 ]; then
        drop_postgres_database "$name"
    fi
done
