# Sourced by the bench scripts that drive one embedded `solgate serve`: builds the release
# binaries, picks the server to measure (SOLGATE_BENCH_SERVER=path for another build),
# makes a work directory removed on exit, and starts/stops the server.
cargo build --release -q -p solgate -p solgate-bench
bin=target/release
server=${SOLGATE_BENCH_SERVER:-$bin/solgate}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

start_serve() { # data-dir; sets url, pid and started_ms (launch to listening)
    local begin address
    begin=$(date +%s%N)
    SOLGATE_LOG_FORMAT=json SOLGATE__LOG__ACCESS_LOG=false \
        "$server" serve --listen 127.0.0.1:0 --data-dir "$1" >/dev/null 2>"$1.log" &
    pid=$!
    for _ in $(seq 1 3000); do
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

stop_serve() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

peak_rss() { awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }
