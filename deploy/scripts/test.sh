#!/usr/bin/env bash
# Runs solgate's whole test suite: starts PostgreSQL, RabbitMQ, an OAuth 2.0 authorization
# server (oidc-provider) and Keystone if they are not running (installing them when missing),
# runs every test of every crate with every feature, then drives the server with the real
# python-tackerclient (installed into target/ on first use) over HTTP, HTTPS and with Keystone
# tokens, then validates and fuzzes the OpenAPI description of every served version.
# Arguments are passed to `cargo test` (a filter skips the tackerclient check).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=services.sh
source deploy/scripts/services.sh
ensure_services
# ETSI's SOL003 OpenAPI bundle is third-party data kept beside the checkout, not in it; when it is
# there, the schema tests must find and check against it.
if [ -z "${SOLGATE_ETSI_DIR:-}" ] && [ -f ../shared/etsi/sol003-v3.3.1-vnflcm-openapi.json ]; then
    SOLGATE_ETSI_DIR="$(cd ../shared/etsi && pwd)"
    export SOLGATE_ETSI_DIR
fi
echo "ETSI bundle check: ${SOLGATE_ETSI_DIR:-not available (../shared/etsi missing), skipped}"
cargo test --workspace --all-features --locked "$@"
if [ "$#" -eq 0 ]; then
    bin="${CARGO_TARGET_DIR:-target}/debug/solgate"
    deploy/scripts/tackerclient-check.sh "$bin"
    deploy/scripts/tackerclient-check.sh --tls "$bin"
    deploy/scripts/tackerclient-check.sh --keystone "$bin"
    deploy/scripts/openapi-check.sh "$bin"
fi
