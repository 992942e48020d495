#!/usr/bin/env bash
# A throwaway RabbitMQ node of your own, beside the machine's shared one: its own node
# name, ports, config, data and logs under DIR. For trying broker outages by hand (the
# tests use the same recipe through `solgate_conductor::rpc::amqp::testing::PrivateBroker`).
#
#   deploy/scripts/private-rabbitmq.sh start DIR [PORT]   # prints the AMQP URL
#   deploy/scripts/private-rabbitmq.sh stop DIR           # graceful stop; DIR keeps the data
#   deploy/scripts/private-rabbitmq.sh start DIR          # again: same port, queues and messages
#
# Only ever stops the node it started (the pid in DIR/pid). epmd is shared, which is harmless.
set -euo pipefail

log() { printf '[private-rabbitmq] %s\n' "$*" >&2; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Debian's /usr/sbin/rabbitmq-server switches to the shared node's user and directories.
server=${SOLGATE_RABBITMQ_SERVER:-/usr/lib/rabbitmq/bin/rabbitmq-server}
[ -x "$server" ] || server=rabbitmq-server

start() {
    local dir=$1 port=${2:-}
    mkdir -p "$dir"/{home,mnesia,log}
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
        log "already running: amqp://guest:guest@127.0.0.1:$(cat "$dir/port")/%2f"
        return 0
    fi
    [ -n "$port" ] || port=$(cat "$dir/port" 2>/dev/null || free_port)
    local dist_port
    dist_port=$(cat "$dir/dist_port" 2>/dev/null || free_port)
    echo "$port" >"$dir/port"
    echo "$dist_port" >"$dir/dist_port"
    [ -f "$dir/node" ] || echo "solgate-private-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')@localhost" >"$dir/node"
    : >"$dir/rabbitmq-env.conf" # not /etc/rabbitmq/rabbitmq-env.conf, which names the shared node
    echo '[].' >"$dir/enabled_plugins"
    printf 'listeners.tcp.1 = 127.0.0.1:%s\ndisk_free_limit.absolute = 1MB\n' "$port" >"$dir/rabbitmq.conf"

    # A session of its own, so that `stop` can signal the whole node.
    env HOME="$dir/home" \
        RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" \
        RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
        RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
        RABBITMQ_MNESIA_BASE="$dir/mnesia" \
        RABBITMQ_LOG_BASE="$dir/log" \
        RABBITMQ_NODENAME="$(cat "$dir/node")" \
        RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
        RABBITMQ_NODE_PORT="$port" \
        RABBITMQ_DIST_PORT="$dist_port" \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}' \
        ERL_EPMD_ADDRESS=127.0.0.1 \
        setsid "$server" >>"$dir/log/console.log" 2>&1 </dev/null &
    echo $! >"$dir/pid"

    local i
    for ((i = 0; i < 240; i++)); do
        port_open "$port" && break
        kill -0 "$(cat "$dir/pid")" 2>/dev/null || { tail -n 40 "$dir/log/console.log" >&2; log "the node exited"; return 1; }
        sleep 0.25
    done
    port_open "$port" || { tail -n 40 "$dir/log/console.log" >&2; log "not up within 60 s"; return 1; }
    echo "amqp://guest:guest@127.0.0.1:$port/%2f"
}

stop() {
    local dir=$1 pid
    pid=$(cat "$dir/pid" 2>/dev/null) || { log "no node started in $dir"; return 0; }
    if kill -0 "$pid" 2>/dev/null; then
        # SIGTERM to rabbitmq-server's shell: it stops the Erlang VM gracefully.
        kill -TERM "$pid"
        local i
        for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && { log "still running after 30 s; killing it"; kill -KILL -- "-$pid" || true; }
    fi
    rm -f "$dir/pid"
    log "stopped (data kept in $dir)"
}

case ${1:-} in
start) start "${2:?usage: $0 start DIR [PORT]}" "${3:-}" ;;
stop) stop "${2:?usage: $0 stop DIR}" ;;
*) echo "usage: $0 start DIR [PORT] | stop DIR" >&2; exit 2 ;;
esac
