#!/usr/bin/env bash
# Checks the OpenAPI description of every version a fresh embedded solgate serves
# (`GET /{api}/v{N}/openapi.json` with `Version`): it must validate as OpenAPI 3.0
# (openapi-spec-validator), and a schema-driven fuzzer run against it (schemathesis) must
# find no 5xx, no response that violates the description, no wrong content type or header.
#   deploy/scripts/openapi-check.sh [path/to/solgate]
# The tools are installed once into target/openapi-venv (pinned). SOLGATE_OPENAPI_EXAMPLES
# sets the fuzzer's examples per operation (default 25). Fails on the first problem. The zip
# upload (PUT package_content) is left out: the fuzzer cannot generate zip bodies; the
# package tests upload real and broken zips. The generator's own health checks (too slow, too
# many rejected examples) say nothing about solgate and fail at random on a loaded machine,
# so they are off.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin=${1:-target/debug/solgate}
venv=target/openapi-venv
examples=${SOLGATE_OPENAPI_EXAMPLES:-25}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

if [ ! -x "$venv/bin/schemathesis" ] || [ ! -x "$venv/bin/openapi-spec-validator" ]; then
    echo "[openapi] installing openapi-spec-validator and schemathesis into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'openapi-spec-validator==0.9.0' 'schemathesis==4.32.5'
fi

SOLGATE_LOG_FORMAT=json "$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" 2>"$work/solgate.log" &
pid=$!
for _ in $(seq 1 100); do
    address=$(grep -o '"address":"[^"]*"' "$work/solgate.log" 2>/dev/null | head -n 1 | cut -d'"' -f4 || true)
    [ -n "${address:-}" ] && break
    sleep 0.1
done
[ -n "${address:-}" ] || { cat "$work/solgate.log" >&2; echo "solgate did not start" >&2; exit 1; }

checked=0
for api in vnflcm vnfpkgm vnffm vnfpm; do
    # Every served version, from the API's own api_versions.
    versions=$(curl -fsS "http://$address/$api/api_versions" \
        | python3 -c 'import json,sys; print(" ".join(v["version"] for v in json.load(sys.stdin)["apiVersions"]))')
    for version in $versions; do
        major=${version%%.*}
        doc="$work/$api-$version.json"
        curl -fsS -H "Version: $version" "http://$address/$api/v$major/openapi.json" -o "$doc"
        served=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["info"]["version"])' "$doc")
        [ "$served" = "$version" ] || { echo "FAIL: Version: $version gave the description of $served" >&2; exit 1; }
        "$venv/bin/openapi-spec-validator" "$doc" >/dev/null || { echo "FAIL: $api $version is not valid OpenAPI" >&2; "$venv/bin/openapi-spec-validator" "$doc" >&2; exit 1; }
        echo "[openapi] $api $version: valid OpenAPI 3.0; fuzzing ($examples examples per operation)" >&2
        if ! "$venv/bin/schemathesis" run "$doc" --url "http://$address/$api/v$major" \
            -H "Version: $version" -H "Accept: application/json" \
            -c not_a_server_error,response_schema_conformance,content_type_conformance,response_headers_conformance \
            -n "$examples" --phases examples,fuzzing --seed 1 --suppress-health-check all \
            --exclude-operation-id put_vnf_packages_vnfPkgId_package_content >"$work/fuzz.log" 2>&1; then
            tail -n 80 "$work/fuzz.log" >&2
            echo "FAIL: schemathesis found problems in $api $version" >&2
            exit 1
        fi
        grep -E 'generated, ' "$work/fuzz.log" | sed "s/^/[openapi] $api $version: /" >&2 || true
        checked=$((checked + 1))
    done
done
[ "$checked" -ge 10 ] || { echo "FAIL: only $checked versions described" >&2; exit 1; }
echo "[openapi] $checked versions: valid, and the fuzzer found nothing" >&2

# ETSI's own OpenAPI of SOL003 V3.7.1 (API 2.3.0), kept beside the checkout: the same fuzzer
# against ETSI's description instead of ours, then a whole life cycle whose VnfInstance and
# VnfLcmOpOcc bodies must validate against it. Only the YAML's bugs are corrected, from the
# registry's errata file (the entries where the published document wins: the IpOverEthernet
# one-ofs, ScaleInfo.scaleLevel, VnfInfoModificationRequest.vnfdId, the VnfLcmOpOcc one-of). Third-party data, not part of the
# checkout: without it the check is skipped, as the schema tests' ETSI comparison is.
etsi=${SOLGATE_ETSI_DIR:-../shared/etsi}/sol003-v3.7.1
if [ -f "$etsi/SOL003/VNFLifecycleManagement/VNFLifecycleManagement.yaml" ]; then
    "$venv/bin/python" deploy/scripts/etsi_bundle.py "$etsi/SOL003/VNFLifecycleManagement/VNFLifecycleManagement.yaml" \
        "$work/etsi-2.3.0.json" --errata schemas/data/vnflcm/etsi-sol003-v3.7.1-errata.json \
        --apply D1,D2,D3,D4,D6,D7,D11,D17,D18 \
        --server "http://$address/vnflcm/v2"
    "$venv/bin/openapi-spec-validator" "$work/etsi-2.3.0.json" >/dev/null \
        || { echo "FAIL: the ETSI V3.7.1 bundle is not valid OpenAPI" >&2; exit 1; }
    echo "[openapi] ETSI SOL003 V3.7.1 with Version 2.3.0: fuzzing ($examples examples per operation)" >&2
    if ! "$venv/bin/schemathesis" run "$work/etsi-2.3.0.json" --url "http://$address/vnflcm/v2" \
        -H "Version: 2.3.0" -H "Accept: application/json" \
        -c not_a_server_error,response_schema_conformance,content_type_conformance \
        -n "$examples" --phases examples,fuzzing --seed 1 --suppress-health-check all >"$work/fuzz-etsi.log" 2>&1; then
        tail -n 80 "$work/fuzz-etsi.log" >&2
        echo "FAIL: schemathesis found problems against ETSI's SOL003 V3.7.1 OpenAPI" >&2
        exit 1
    fi
    grep -E 'generated, ' "$work/fuzz-etsi.log" | sed "s/^/[openapi] ETSI V3.7.1 2.3.0: /" >&2 || true
    "$venv/bin/python" deploy/scripts/etsi_lifecycle.py "http://$address" "$work/etsi-2.3.0.json" 2.3.0 deploy/sample-package
else
    echo "[openapi] ETSI SOL003 V3.7.1 OpenAPI not at $etsi: its check is skipped" >&2
fi
