#!/usr/bin/env bash
# Starts (and if missing, installs) the services solgate's tests need: PostgreSQL,
# RabbitMQ and an OAuth 2.0 authorization server (npm `oidc-provider`). Sourced by test.sh;
# usable alone: `deploy/scripts/services.sh`.
# Exports SOLGATE_TEST_POSTGRES_URL, SOLGATE_TEST_AMQP_URL and SOLGATE_TEST_OIDC_URL for the
# tests. Never stops or changes a service it did not start; tests use their own databases and
# queue names, unique per run, and drop them afterwards.
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
    SOLGATE_OIDC_HOME="$dir" nohup node "$root/deploy/scripts/oidc-provider.mjs" 0 "$dir/url" >"$dir/server.log" 2>&1 &
    local pid=$!
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

ensure_services() {
    local failed=0
    ensure_postgres || failed=1
    ensure_rabbitmq || failed=1
    ensure_oidc_provider || failed=1
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
