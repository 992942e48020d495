#!/usr/bin/env bash
# Starts (and if missing, installs) the services solgate's tests need: PostgreSQL,
# RabbitMQ, an OAuth 2.0 authorization server (npm `oidc-provider`), OpenStack Keystone
# (PyPI), and the Prometheus and Alertmanager programs (Debian). Sourced by test.sh; usable alone: `deploy/scripts/services.sh`.
# Exports SOLGATE_TEST_POSTGRES_URL, SOLGATE_TEST_AMQP_URL, SOLGATE_TEST_OIDC_URL and
# SOLGATE_TEST_KEYSTONE_URL (with SOLGATE_TEST_KEYSTONE_PASSWORD) for the tests.
# Never stops or changes a service it did not start; tests use their own databases and
# queue names, unique per run, and drop them afterwards. The authorization server and
# Keystone are the project's own, under target/: when sourced, one this run started is
# stopped when the caller exits.
set -euo pipefail

log() { printf '[services] %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi
}

apt_install() {
    command -v apt-get >/dev/null || { log "no apt-get: install $* by hand"; return 1; }
    log "installing $* with apt-get"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 \
        || { as_root apt-get update -q >/dev/null 2>&1 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
    local i
    for ((i = 0; i < $2 * 4; i++)); do port_open "$1" && return 0; sleep 0.25; done
    return 1
}

ensure_postgres() {
    local port=${SOLGATE_TEST_PG_PORT:-5432}
    if ! port_open "$port"; then
        if ! command -v pg_ctlcluster >/dev/null && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
            apt_install postgresql || return 1
        fi
        log "starting PostgreSQL"
        local version
        version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
        if [ -n "$version" ]; then
            as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null \
                || as_root pg_ctlcluster "$version" main start || true
        fi
        wait_port "$port" 30 || { log "PostgreSQL did not come up on port $port"; return 1; }
    fi
    # A superuser the tests can create databases with: trust auth as postgres, else a
    # role of our own created through the local socket.
    local url="postgres://postgres@127.0.0.1:$port/postgres"
    if ! PGCONNECT_TIMEOUT=5 psql "$url" -Atqc 'select 1' >/dev/null 2>&1; then
        url="postgres://solgate_test:solgate_test@127.0.0.1:$port/postgres"
        if ! PGCONNECT_TIMEOUT=5 psql "$url" -Atqc 'select 1' >/dev/null 2>&1; then
            log "creating role solgate_test"
            as_root su postgres -c "psql -q -c \"CREATE ROLE solgate_test LOGIN SUPERUSER PASSWORD 'solgate_test'\"" >/dev/null 2>&1 || true
            PGCONNECT_TIMEOUT=5 psql "$url" -Atqc 'select 1' >/dev/null 2>&1 || { log "cannot log in to PostgreSQL"; return 1; }
        fi
    fi
    export SOLGATE_TEST_POSTGRES_URL="${SOLGATE_TEST_POSTGRES_URL:-$url}"
    log "PostgreSQL ready: ${SOLGATE_TEST_POSTGRES_URL%%@*}@..."
}

ensure_rabbitmq() {
    local port=${SOLGATE_TEST_AMQP_PORT:-5672}
    if ! port_open "$port"; then
        command -v rabbitmq-server >/dev/null || [ -x /usr/sbin/rabbitmq-server ] || apt_install rabbitmq-server || return 1
        log "starting RabbitMQ"
        as_root rabbitmq-server -detached >/dev/null 2>&1 || true
        as_root timeout 60 rabbitmqctl await_startup >/dev/null 2>&1 || true
        wait_port "$port" 60 || { log "RabbitMQ did not come up on port $port"; return 1; }
    fi
    export SOLGATE_TEST_AMQP_URL="${SOLGATE_TEST_AMQP_URL:-amqp://guest:guest@127.0.0.1:$port/%2f}"
    log "RabbitMQ ready on port $port"
}

# Drops a database a benchmark created on the test PostgreSQL (its connections are closed first).
drop_postgres_database() { # name
    psql "$SOLGATE_TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null 2>&1 ||
        log "could not drop database $1"
}

# Deletes the durable queues a benchmark declared under its prefix (solgate's queues persist
# across restarts by design). Only a broker on this machine, through rabbitmqctl; elsewhere it
# says which prefix to delete by hand.
delete_rabbitmq_queues() { # prefix
    local prefix=$1 queue
    if ! command -v rabbitmqctl >/dev/null && [ ! -x /usr/sbin/rabbitmqctl ]; then
        log "no rabbitmqctl here: delete the queues named $prefix.* by hand"
        return 0
    fi
    # The list is read first: rabbitmqctl reads its standard input, which would eat a piped list.
    for queue in $(PATH="$PATH:/usr/sbin" as_root rabbitmqctl list_queues -q --no-table-headers name 2>/dev/null); do
        case "$queue" in
            "$prefix".*) PATH="$PATH:/usr/sbin" as_root rabbitmqctl delete_queue -q "$queue" </dev/null >/dev/null 2>&1 || true ;;
        esac
    done
}

# The OAuth 2.0 authorization server of the `[[auth.issuers]]` tests: oidc-provider (pinned)
# installed with npm under target/oidc-provider/, started by deploy/scripts/oidc-provider.mjs on
# a free port. One already running (its URL in target/oidc-provider/url, answering) is reused;
# one started here is stopped when the sourcing script exits (left running when run alone).
OIDC_PROVIDER_VERSION=9.13.3

oidc_answers() { # issuer URL
    if command -v curl >/dev/null; then
        curl -fsS -m 2 "$1/jwks" >/dev/null 2>&1
    else
        port_open "${1##*:}"
    fi
}

ensure_oidc_provider() {
    if [ -n "${SOLGATE_TEST_OIDC_URL:-}" ]; then
        log "OAuth 2.0 server given: $SOLGATE_TEST_OIDC_URL"
        return 0
    fi
    local root dir
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    dir="$root/target/oidc-provider"
    mkdir -p "$dir"
    if [ -f "$dir/url" ] && oidc_answers "$(cat "$dir/url")"; then
        export SOLGATE_TEST_OIDC_URL
        SOLGATE_TEST_OIDC_URL=$(cat "$dir/url")
        log "OAuth 2.0 server (oidc-provider) already running: $SOLGATE_TEST_OIDC_URL"
        return 0
    fi
    command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm || return 1
    if ! grep -qs "\"version\": \"$OIDC_PROVIDER_VERSION\"" "$dir/node_modules/oidc-provider/package.json"; then
        log "installing oidc-provider@$OIDC_PROVIDER_VERSION with npm into target/oidc-provider"
        [ -f "$dir/package.json" ] || printf '{"name": "solgate-test-oidc-provider", "private": true}\n' >"$dir/package.json"
        (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "oidc-provider@$OIDC_PROVIDER_VERSION" >/dev/null) \
            || { log "npm could not install oidc-provider"; return 1; }
    fi
    rm -f "$dir/url"
    # Detached (not a child of the caller, whose `wait` must not wait for it).
    (SOLGATE_OIDC_HOME="$dir" nohup node "$root/deploy/scripts/oidc-provider.mjs" 0 "$dir/url" >"$dir/server.log" 2>&1 </dev/null &
        echo $! >"$dir/pid")
    local pid
    pid=$(cat "$dir/pid")
    local i
    for ((i = 0; i < 80; i++)); do [ -s "$dir/url" ] && break; sleep 0.25; done
    if [ ! -s "$dir/url" ]; then
        log "oidc-provider did not start (target/oidc-provider/server.log):"
        tail -n 5 "$dir/server.log" >&2 || true
        kill "$pid" 2>/dev/null || true
        return 1
    fi
    export SOLGATE_TEST_OIDC_URL
    SOLGATE_TEST_OIDC_URL=$(cat "$dir/url")
    log "OAuth 2.0 server (oidc-provider $OIDC_PROVIDER_VERSION) ready: $SOLGATE_TEST_OIDC_URL"
    if [ "${BASH_SOURCE[0]}" != "$0" ]; then
        SOLGATE_OIDC_PID=$pid
        SOLGATE_OIDC_URL_FILE="$dir/url"
        local previous
        previous=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
        # shellcheck disable=SC2064
        trap "${previous:+$previous; }stop_oidc_provider" EXIT
    fi
}

stop_oidc_provider() {
    if [ -n "${SOLGATE_OIDC_PID:-}" ]; then
        kill "$SOLGATE_OIDC_PID" 2>/dev/null || true
        rm -f "${SOLGATE_OIDC_URL_FILE:-}"
        SOLGATE_OIDC_PID=
    fi
}

# ---- OpenStack Keystone (PyPI), for `[auth] mode = "keystone"` ----
# Installed once into target/keystone-venv (pinned), configured under target/keystone/ with
# SQLite and fernet tokens, served by uwsgi on a port chosen once and kept in
# target/keystone/port. Provisioned with what the tests use (all passwords are
# $SOLGATE_TEST_KEYSTONE_PASSWORD; names fixed, tests/integration/auth.rs knows them):
#   project service: user solgate (admin)    — solgate's service credentials
#   project demo:    demo-member (member), demo-reader (reader)
#   project other:   other-member (member)   — a second tenant
KEYSTONE_VERSION=30.0.0
UWSGI_VERSION=2.0.31
KEYSTONE_PROVISION_STAMP=v1
keystone_root() { echo "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Appends a command to the EXIT trap, keeping what is there.
add_exit_trap() {
    local existing
    existing=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
    # shellcheck disable=SC2064
    trap "${existing:+$existing; }$1" EXIT
}

stop_keystone() {
    local run=$1
    [ -f "$run/uwsgi.pid" ] || return 0
    local pid
    pid=$(cat "$run/uwsgi.pid")
    # uwsgi's master reloads on SIGTERM; SIGINT stops it.
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    rm -f "$run/uwsgi.pid"
}

ensure_keystone() {
    local target venv run
    target=$(keystone_root)
    venv="$target/keystone-venv"
    run="$target/keystone"
    export SOLGATE_TEST_KEYSTONE_PASSWORD="${SOLGATE_TEST_KEYSTONE_PASSWORD:-solgate-keystone-test}"
    if [ ! -x "$venv/bin/keystone-manage" ] || [ ! -x "$venv/bin/uwsgi" ] \
        || ! "$venv/bin/pip" show keystone 2>/dev/null | grep -x "Version: $KEYSTONE_VERSION" >/dev/null; then
        command -v python3 >/dev/null || apt_install python3 || return 1
        python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv python3-dev gcc && python3 -m venv "$venv"; } || return 1
        log "installing keystone $KEYSTONE_VERSION and uwsgi $UWSGI_VERSION into $venv (about a minute)"
        "$venv/bin/pip" install -q "keystone==$KEYSTONE_VERSION" "uwsgi==$UWSGI_VERSION" >&2 \
            || { log "pip could not install keystone"; return 1; }
    fi
    mkdir -p "$run/fernet-keys" "$run/credential-keys"
    local port
    port=$(cat "$run/port" 2>/dev/null || true)
    local url="http://127.0.0.1:${port:-0}/v3"
    # Already serving (this run or an earlier one): reuse it.
    if [ -n "$port" ] && curl -fsS -m 3 "$url" 2>/dev/null | grep '"id": *"v3' >/dev/null; then
        export SOLGATE_TEST_KEYSTONE_URL="$url"
    else
        if [ -z "$port" ] || port_open "$port"; then port=$(free_port); fi
        echo "$port" >"$run/port"
        url="http://127.0.0.1:$port/v3"
        cat >"$run/keystone.conf" <<CONF
[DEFAULT]
log_file = $run/keystone.log
[database]
connection = sqlite:///$run/keystone.db
[token]
provider = fernet
expiration = 3600
[fernet_tokens]
key_repository = $run/fernet-keys
[credential]
key_repository = $run/credential-keys
CONF
        local manage=("$venv/bin/keystone-manage" --config-file "$run/keystone.conf")
        if [ ! -f "$run/keystone.db" ] || [ ! -f "$run/fernet-keys/0" ]; then
            log "setting up Keystone under $run"
            rm -f "$run/keystone.db" "$run/provisioned" "$run/bootstrapped"
            "${manage[@]}" db_sync >>"$run/setup.log" 2>&1 \
                && "${manage[@]}" fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)" >>"$run/setup.log" 2>&1 \
                && "${manage[@]}" credential_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)" >>"$run/setup.log" 2>&1 \
                || { log "keystone-manage failed: see $run/setup.log"; return 1; }
        fi
        # bootstrap is idempotent; run again when the port changed, so the catalog names it.
        if [ "$(cat "$run/bootstrapped" 2>/dev/null)" != "$url" ]; then
            "${manage[@]}" bootstrap --bootstrap-password "$SOLGATE_TEST_KEYSTONE_PASSWORD" \
                --bootstrap-public-url "$url/" --bootstrap-internal-url "$url/" --bootstrap-admin-url "$url/" \
                --bootstrap-region-id RegionOne >>"$run/setup.log" 2>&1 || { log "keystone bootstrap failed: see $run/setup.log"; return 1; }
            echo "$url" >"$run/bootstrapped"
        fi
        log "starting Keystone (uwsgi) on 127.0.0.1:$port"
        # Detached (not a child of the caller, whose `wait` must not wait for it); the pid file
        # names the master for stop_keystone.
        (OS_KEYSTONE_CONFIG_FILES="$run/keystone.conf" nohup "$venv/bin/uwsgi" --http11-socket "127.0.0.1:$port" \
            --module keystone.wsgi.api:application --master --processes 1 --threads 4 --die-on-term \
            --pidfile "$run/uwsgi.pid" >"$run/uwsgi.log" 2>&1 </dev/null &)
        local i up=false
        for ((i = 0; i < 240; i++)); do
            if curl -fsS -m 3 "$url" 2>/dev/null | grep '"id": *"v3' >/dev/null; then up=true; break; fi
            sleep 0.25
        done
        [ "$up" = true ] || { log "Keystone did not come up on port $port: see $run/uwsgi.log"; stop_keystone "$run"; return 1; }
        export SOLGATE_TEST_KEYSTONE_URL="$url"
        # Stopped when the sourcing script exits; left running when run alone.
        if [ "${BASH_SOURCE[0]}" != "$0" ]; then add_exit_trap "stop_keystone '$run'"; fi
    fi
    if [ "$(cat "$run/provisioned" 2>/dev/null)" != "$KEYSTONE_PROVISION_STAMP" ]; then
        python3 "$(dirname "${BASH_SOURCE[0]}")/keystone-provision.py" "$url" "$SOLGATE_TEST_KEYSTONE_PASSWORD" >&2 \
            || { log "provisioning Keystone failed"; return 1; }
        echo "$KEYSTONE_PROVISION_STAMP" >"$run/provisioned"
    fi
    log "Keystone ready: $url"
}

# Prometheus and Alertmanager (Debian's packages): the fault and performance management
# tests start private instances of their own (free ports, temporary data), so only the
# programs are needed here. Exports SOLGATE_TEST_PROMETHEUS and SOLGATE_TEST_ALERTMANAGER.
find_program() { # names...
    local name
    for name in "$@"; do
        command -v "$name" 2>/dev/null && return 0
        [ -x "/usr/bin/$name" ] && { echo "/usr/bin/$name"; return 0; }
    done
    return 1
}

ensure_monitoring() {
    if ! find_program prometheus >/dev/null || ! find_program prometheus-alertmanager alertmanager >/dev/null; then
        apt_install --no-install-recommends prometheus prometheus-alertmanager || return 1
    fi
    SOLGATE_TEST_PROMETHEUS="${SOLGATE_TEST_PROMETHEUS:-$(find_program prometheus)}" || return 1
    SOLGATE_TEST_ALERTMANAGER="${SOLGATE_TEST_ALERTMANAGER:-$(find_program prometheus-alertmanager alertmanager)}" || return 1
    export SOLGATE_TEST_PROMETHEUS SOLGATE_TEST_ALERTMANAGER
    log "Prometheus $("$SOLGATE_TEST_PROMETHEUS" --version 2>&1 | head -n 1 | awk '{print $3}') and Alertmanager ready"
}

# VNF package scripts (LCM operation user data, Vnflcm management scripts) run with the
# system python3 ([drivers] python_command); Tacker's sample scripts import PyYAML.
ensure_python_scripts() {
    python3 -c 'import yaml' 2>/dev/null && return 0
    log "installing python3 and python3-yaml for VNF package scripts"
    apt_install python3 python3-yaml && python3 -c 'import yaml'
}

ensure_services() {
    local failed=0
    ensure_python_scripts || failed=1
    ensure_postgres || failed=1
    ensure_rabbitmq || failed=1
    ensure_oidc_provider || failed=1
    ensure_keystone || failed=1
    ensure_monitoring || failed=1
    if [ "$failed" = 1 ]; then
        if [ "${CI:-}" = true ]; then
            log "a service the tests need is unavailable and CI=true: failing"
            return 1
        fi
        log "WARNING: a service is unavailable; the tests that need it will be skipped (they fail when CI=true)"
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    ensure_services
fi
