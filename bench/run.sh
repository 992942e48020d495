#!/usr/bin/env bash
# Benchmarks solgate on this machine (release build, real HTTP over loopback, the load
# generator on the same cores): embedded on SQLite, embedded on PostgreSQL, and scaled out
# (gateway + conductor processes, PostgreSQL + RabbitMQ).
#   bench/run.sh ["connection counts"] [seconds]      e.g. bench/run.sh "2 16" 10
#   bench/run.sh tls ["connection counts"] [seconds]  GET one instance, HTTP vs HTTPS (keep-alive)
#   bench/run.sh auth ["connection counts"] [seconds] GET one instance, no auth vs a bearer token
# SOLGATE_BENCH_SERVER=path measures another solgate binary with this tree's load driver;
# SOLGATE_BENCH_BURST (default 200) is the LCM burst's client count.
# Needs PostgreSQL and RabbitMQ for the last two (deploy/scripts/services.sh starts them); the
# databases and durable queues it makes are dropped when it ends.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=all
if [ "${1:-}" = tls ] || [ "${1:-}" = auth ]; then mode=$1; shift; fi
connections=${1:-2 16}
seconds=${2:-10}
source deploy/scripts/services.sh
# Only the services the bench uses (the tests' authorization servers are not needed).
ensure_postgres >/dev/null
ensure_rabbitmq >/dev/null
cargo build --release -q -p solgate -p solgate-bench
# A burst of this many concurrent LCM clients ends the SQLite run (peak memory under load).
burst=${SOLGATE_BENCH_BURST:-200}
bin=target/release
# The solgate binary to measure (e.g. a build of an earlier commit, for before/after).
server=${SOLGATE_BENCH_SERVER:-$bin/solgate}
work=$(mktemp -d)
pids=()
stop_servers() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # Only our servers: a bare `wait` would also wait for services started by services.sh.
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
dbs=()
prefix=
# Drops what the run made outside its work directory: databases and durable queues.
cleanup() {
    stop_servers
    for name in "${dbs[@]}"; do drop_postgres_database "$name"; done
    if [ -n "$prefix" ]; then delete_rabbitmq_queues "$prefix"; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Starts `solgate <role>` with extra env and sets `url` to its base URL. Not run in a command
# substitution: the server would hold its pipe open, and `pids` must reach the cleanup.
# Processes of one deployment share a data directory (the package store).
start() { # name data-dir role env...
    local name=$1 data=$2 role=$3; shift 3
    env "$@" SOLGATE_LOG_FORMAT=json SOLGATE__LOG__ACCESS_LOG=false \
        "$server" "$role" --listen 127.0.0.1:0 --data-dir "$work/$data" >/dev/null 2>"$work/$name.log" &
    pids+=($!)
    for _ in $(seq 1 200); do
        local address
        address=$(grep -o '"address":"[^"]*"' "$work/$name.log" 2>/dev/null | head -n 1 | cut -d'"' -f4 || true)
        if [ -n "$address" ]; then url="${scheme:-http}://$address"; return 0; fi
        sleep 0.1
    done
    echo "solgate $role did not start:" >&2; cat "$work/$name.log" >&2; return 1
}

peak_rss() { # prints the peak resident memory of the running servers (VmHWM)
    for pid in "${pids[@]}"; do
        [ -r "/proc/$pid/status" ] || continue
        echo "peak RSS of pid $pid: $(awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status")"
    done
}

pg_db() { # creates a database, prints its URL
    local name="solgate_bench_$RANDOM$RANDOM"
    psql "$SOLGATE_TEST_POSTGRES_URL" -qc "CREATE DATABASE $name" >/dev/null
    echo "${SOLGATE_TEST_POSTGRES_URL%/*}/$name"
}

if [ "$mode" = tls ]; then
    # A test CA and a server certificate for 127.0.0.1 (P-256, as a typical deployment).
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=bench CA" \
        -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/server.ext"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
        -extfile "$work/server.ext" -out "$work/server.pem" 2>/dev/null
    echo "== embedded, SQLite, plain HTTP"
    start http http serve
    for c in $connections; do "$bin/solgate-bench" --target "$url" --connections "$c" --duration "$seconds" --label "http c=$c" show; done
    stop_servers
    echo "== embedded, SQLite, HTTPS (TLS 1.3, keep-alive: one handshake per connection)"
    scheme=https start https https serve SOLGATE__HTTP__TLS__CERT_FILE="$work/server.pem" SOLGATE__HTTP__TLS__KEY_FILE="$work/server.key"
    for c in $connections; do "$bin/solgate-bench" --target "$url" --ca-file "$work/ca.pem" --connections "$c" --duration "$seconds" --label "https c=$c" show; done
    exit 0
fi

if [ "$mode" = auth ]; then
    echo "== embedded, SQLite, [auth] mode = none"
    start none none serve
    for c in $connections; do "$bin/solgate-bench" --target "$url" --connections "$c" --duration "$seconds" --label "no auth c=$c" show; done
    stop_servers
    echo "== embedded, SQLite, [auth] mode = oauth2 (every request carries a bearer token; verified once, then cached)"
    start oauth2 oauth2 serve SOLGATE__AUTH__MODE=oauth2 \
        SOLGATE__AUTH__CLIENTS='[{id = "bench", secret = "bench-secret", roles = ["admin"], project = "bench"}]'
    for c in $connections; do "$bin/solgate-bench" --target "$url" --client bench:bench-secret --connections "$c" --duration "$seconds" --label "bearer c=$c" show; done
    exit 0
fi

echo "== embedded, SQLite (synchronous=FULL)"
"$bin/solgate-bare" 127.0.0.1:0 >"$work/bare.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q address "$work/bare.out" && break; sleep 0.1; done
bare="http://$(grep -o '"address":"[^"]*"' "$work/bare.out" | head -n 1 | cut -d'"' -f4)"
bare_pid=${pids[-1]}
start sqlite sqlite serve
for c in $connections; do "$bin/solgate-bench" --target "$url" --bare "$bare" --connections "$c" --duration "$seconds" --label "sqlite c=$c" all; done
"$bin/solgate-bench" --target "$url" --connections "$burst" --duration "$seconds" --label "sqlite burst c=$burst" lcm
kill "$bare_pid" 2>/dev/null || true
peak_rss

stop_servers
echo "== embedded, SQLite with database.sqlite_synchronous = normal (durable across a crash, not a power loss)"
start sqlite-normal sqlite-normal serve SOLGATE__DATABASE__SQLITE_SYNCHRONOUS=normal
for c in $connections; do "$bin/solgate-bench" --target "$url" --connections "$c" --duration "$seconds" --label "sqlite-normal c=$c" create; done
for c in $connections; do "$bin/solgate-bench" --target "$url" --connections "$c" --duration "$seconds" --label "sqlite-normal c=$c" lcm; done
peak_rss

stop_servers
echo "== embedded, PostgreSQL"
db=$(pg_db)
dbs+=("${db##*/}")
start pg pg serve SOLGATE_DATABASE_URL="$db"
for c in $connections; do "$bin/solgate-bench" --target "$url" --connections "$c" --duration "$seconds" --label "postgres c=$c" all; done
peak_rss

stop_servers
echo "== scaled out: gateway + conductor processes, PostgreSQL + RabbitMQ"
db=$(pg_db)
dbs+=("${db##*/}")
prefix="solgate-bench-$RANDOM"
common=(SOLGATE_DATABASE_URL="$db" SOLGATE__CONDUCTOR__LOCAL_VIM=true SOLGATE__RPC__TRANSPORT=amqp SOLGATE__RPC__AMQP_URL="$SOLGATE_TEST_AMQP_URL" SOLGATE__RPC__QUEUE_PREFIX="$prefix")
env "${common[@]}" "$server" migrate --data-dir "$work/so" >/dev/null 2>&1
start so-conductor so conductor "${common[@]}"
start so-gateway so gateway "${common[@]}"
for c in $connections; do "$bin/solgate-bench" --target "$url" --connections "$c" --duration "$seconds" --label "scaled-out c=$c" all; done
peak_rss
