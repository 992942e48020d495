#!/usr/bin/env bash
# Starts (and if missing, installs) the services solgate's tests need: PostgreSQL and
# RabbitMQ. Sourced by test.sh; usable alone: `deploy/scripts/services.sh`.
# Exports SOLGATE_TEST_POSTGRES_URL and SOLGATE_TEST_AMQP_URL for the tests.
# Never stops or changes a service it did not start; tests use their own databases and
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

ensure_services() {
    local failed=0
    ensure_postgres || failed=1
    ensure_rabbitmq || failed=1
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
