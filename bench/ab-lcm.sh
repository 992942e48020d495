#!/usr/bin/env bash
# LCM operations per second of two solgate builds, measured alternately in one run on this
# machine (embedded `solgate serve`, SQLite with synchronous = FULL, local simulated VIM with
# zero delay): instantiate + terminate pairs driven to COMPLETED by solgate-bench.
#   bench/ab-lcm.sh BIN_DIR_A BIN_DIR_B ["connection counts"] [seconds] [rounds]
# Each BIN_DIR holds a release `solgate` and `solgate-bench` (e.g. target/release of two
# checkouts). Prints every round; compare the medians. With SOLGATE_BENCH_POSTGRES=1 each
# measurement gets a database of its own on the test PostgreSQL instead of SQLite
# (deploy/scripts/services.sh starts it). With SOLGATE_BENCH_SCALED=1, each build runs scaled
# out instead: a `solgate conductor` and a `solgate gateway` process on a database of their own
# and RabbitMQ (as bench/run.sh's last deployment).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
a=$1 b=$2
connections=${3:-2 16}
seconds=${4:-10}
rounds=${5:-3}
work=$(mktemp -d)
pid=
conductor=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    [ -n "$conductor" ] && kill "$conductor" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
scaled=${SOLGATE_BENCH_SCALED:-}
[ "$scaled" = 1 ] && SOLGATE_BENCH_POSTGRES=1
if [ "${SOLGATE_BENCH_POSTGRES:-}" = 1 ]; then
    source deploy/scripts/services.sh
    ensure_postgres >/dev/null
    [ "$scaled" = 1 ] && ensure_rabbitmq >/dev/null
fi
listening() { # log file: prints the address once the process listens
    local address=
    for _ in $(seq 1 200); do
        address=$(grep -o '"address":"[^"]*"' "$1" 2>/dev/null | head -n 1 | cut -d'"' -f4 || true)
        [ -n "$address" ] && break
        sleep 0.1
    done
    echo "$address"
}
measure() { # label bin-dir connections
    local label=$1 bin=$2 c=$3 data name
    data=$(mktemp -d -p "$work")
    if [ "${SOLGATE_BENCH_POSTGRES:-}" = 1 ]; then
        name="solgate_ab_$RANDOM$RANDOM"
        psql "$SOLGATE_TEST_POSTGRES_URL" -qc "CREATE DATABASE $name" >/dev/null
        export SOLGATE_DATABASE_URL="${SOLGATE_TEST_POSTGRES_URL%/*}/$name"
    fi
    local role=serve
    if [ "$scaled" = 1 ]; then
        role=gateway
        export SOLGATE__CONDUCTOR__LOCAL_VIM=true SOLGATE__RPC__TRANSPORT=amqp \
            SOLGATE__RPC__AMQP_URL="$SOLGATE_TEST_AMQP_URL" SOLGATE__RPC__QUEUE_PREFIX="solgate-ab-$RANDOM$RANDOM"
        "$bin/solgate" migrate --data-dir "$data" >/dev/null 2>&1
        SOLGATE_LOG_FORMAT=json SOLGATE__LOG__ACCESS_LOG=false \
            "$bin/solgate" conductor --listen 127.0.0.1:0 --data-dir "$data" >/dev/null 2>"$data/conductor.log" &
        conductor=$!
        [ -n "$(listening "$data/conductor.log")" ] || { cat "$data/conductor.log" >&2; exit 1; }
    fi
    SOLGATE_LOG_FORMAT=json SOLGATE__LOG__ACCESS_LOG=false \
        "$bin/solgate" "$role" --listen 127.0.0.1:0 --data-dir "$data" >/dev/null 2>"$data/log" &
    pid=$!
    local url
    url=$(listening "$data/log")
    "$bin/solgate-bench" --target "http://$url" --connections "$c" --duration "$seconds" --label "$label c=$c" lcm
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    if [ -n "$conductor" ]; then kill "$conductor"; wait "$conductor" 2>/dev/null || true; conductor=; fi
    if [ "${SOLGATE_BENCH_POSTGRES:-}" = 1 ]; then
        drop_postgres_database "$name"
    fi
    if [ "$scaled" = 1 ]; then delete_rabbitmq_queues "$SOLGATE__RPC__QUEUE_PREFIX"; fi
}
for round in $(seq 1 "$rounds"); do
    for c in $connections; do
        echo "== round $round, $c connections"
        measure A "$a" "$c"
        measure B "$b" "$c"
    done
done
