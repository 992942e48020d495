#!/usr/bin/env bash
# Drives a fresh embedded solgate with the real python-tackerclient (through the
# `openstack` CLI, no Keystone) and checks every v1 and v2 command the client offers for
# VNF packages, VNF LCM, operation occurrences and subscriptions (../shared/reference/clients.md),
# VNF FM alarms and FM subscriptions (an alarm raised through Alertmanager's webhook, /alert),
# VNF PM jobs, reports and thresholds (a report made through Alertmanager's webhook, /pm_event),
# and (default mode) the VIM registry against the test Keystone of services.sh
# (SOLGATE_TEST_KEYSTONE_URL, started here when not set).
#   deploy/scripts/tackerclient-check.sh [--tls | --keystone] [path/to/solgate]
# With --tls solgate serves HTTPS with a CA and certificate made here (openssl), and the
# client reaches it with OS_ENDPOINT=https://... and OS_CACERT.
# With --keystone solgate runs with [auth] mode = "keystone" against the test Keystone of
# services.sh (started here when it is not running), and the client logs in with
# OS_AUTH_TYPE=password as a member of project demo, finding solgate in Keystone's catalog
# (service type nfv-orchestration, pointed at this run's server).
# The client is installed once into target/tackerclient-venv (pinned versions). Every
# command and its exit code is logged to target/tackerclient-check.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tls=false
keystone=false
if [ "${1:-}" = "--tls" ]; then tls=true; shift; fi
if [ "${1:-}" = "--keystone" ]; then keystone=true; shift; fi
bin=${1:-target/debug/solgate}
venv=target/tackerclient-venv
log=target/tackerclient-check.log
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p target
: >"$log"

if [ ! -x "$venv/bin/openstack" ]; then
    echo "[tackerclient] installing python-tackerclient 2.6.0 into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'python-tackerclient==2.6.0' 'python-openstackclient==10.5.0' 'osc-lib==4.7.0' \
        'keystoneauth1==5.18.1' 'cliff==4.17.0' 'openstacksdk==4.22.0'
fi
openstack="$venv/bin/openstack"

scheme=http
if [ "$tls" = true ]; then
    # A test CA and a server certificate for 127.0.0.1 signed by it.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=solgate test CA" \
        -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$work/server.ext"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
        -extfile "$work/server.ext" -out "$work/server.pem" 2>/dev/null
    export SOLGATE__HTTP__TLS__CERT_FILE="$work/server.pem" SOLGATE__HTTP__TLS__KEY_FILE="$work/server.key"
    export OS_CACERT="$work/ca.pem"
    scheme=https
fi

# Alertmanager's PM webhooks (/pm_event, /pm_threshold) on, with a bearer token: the vnfpm
# report command needs a report.
pm_webhook_token=tackerclient-check-pm-token
export SOLGATE__PROMETHEUS_PLUGIN__PERFORMANCE_MANAGEMENT=true SOLGATE__PROMETHEUS_PLUGIN__WEBHOOK_TOKEN="$pm_webhook_token"

if [ "$keystone" = true ]; then
    # shellcheck source=services.sh
    source deploy/scripts/services.sh
    ensure_keystone || { echo "FAIL: no Keystone for the --keystone check" >&2; exit 1; }
    export SOLGATE__AUTH__MODE=keystone SOLGATE__AUTH__KEYSTONE__AUTH_URL="$SOLGATE_TEST_KEYSTONE_URL" \
        SOLGATE__AUTH__KEYSTONE__USERNAME=solgate SOLGATE__AUTH__KEYSTONE__PASSWORD="$SOLGATE_TEST_KEYSTONE_PASSWORD"
fi

default_mode=false
if [ "$tls" = false ] && [ "$keystone" = false ]; then default_mode=true; fi
if [ "$default_mode" = true ] && [ -z "${SOLGATE_TEST_KEYSTONE_URL:-}" ]; then
    # `openstack vim register` is checked against a real Keystone (test.sh exports its URL).
    # shellcheck source=services.sh
    source deploy/scripts/services.sh
    ensure_keystone || { echo "FAIL: no Keystone for the vim commands" >&2; exit 1; }
fi

# Alertmanager's FM webhook (/alert) on, with its credentials: the vnffm commands need an alarm.
webhook_password=tackerclient-check-webhook
export SOLGATE__PROMETHEUS_PLUGIN__FAULT_MANAGEMENT=true SOLGATE__PROMETHEUS_PLUGIN__WEBHOOK_USER_NAME=alertmanager \
    SOLGATE__PROMETHEUS_PLUGIN__WEBHOOK_PASSWORD="$webhook_password"

# solgate, embedded, on a free port.
SOLGATE_LOG_FORMAT=json "$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" 2>"$work/solgate.log" &
pids+=($!)
for _ in $(seq 1 100); do
    address=$(grep -o '"address":"[^"]*"' "$work/solgate.log" 2>/dev/null | head -n 1 | cut -d'"' -f4 || true)
    [ -n "${address:-}" ] && break
    sleep 0.1
done
[ -n "${address:-}" ] || { cat "$work/solgate.log" >&2; echo "solgate did not start" >&2; exit 1; }
if [ "$keystone" = true ]; then
    python3 deploy/scripts/keystone-provision.py "$SOLGATE_TEST_KEYSTONE_URL" "$SOLGATE_TEST_KEYSTONE_PASSWORD" \
        --tacker-endpoint "$scheme://$address"
    unset OS_ENDPOINT OS_TOKEN OS_CLOUD
    export OS_AUTH_TYPE=password OS_AUTH_URL="$SOLGATE_TEST_KEYSTONE_URL" OS_IDENTITY_API_VERSION=3 \
        OS_USERNAME=demo-member OS_PASSWORD="$SOLGATE_TEST_KEYSTONE_PASSWORD" OS_PROJECT_NAME=demo \
        OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne OS_INTERFACE=public
else
    export OS_AUTH_TYPE=none OS_ENDPOINT="$scheme://$address"
fi
unset OS_TACKER_API_VERSION

# A notification receiver answering 204 (the subscription callback test and deliveries).
python3 - "$work/receiver.port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self): self.send_response(204); self.end_headers()
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0))); self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.serve_forever()
PY
pids+=($!)
for _ in $(seq 1 50); do [ -s "$work/receiver.port" ] && break; sleep 0.1; done
callback="http://127.0.0.1:$(cat "$work/receiver.port")/notify"

failures=0
# run EXPECTED_EXIT description -- command...; stdout kept in $out.
run() {
    local expected=$1 what=$2; shift 3
    set +e
    out=$("$@" 2>"$work/stderr")
    local code=$?
    set -e
    printf '%s\n  $ %s\n  exit %s\n' "$what" "$*" "$code" >>"$log"
    if [ "$code" != "$expected" ]; then
        failures=$((failures + 1))
        echo "FAIL: $what: exit $code (expected $expected): $* " >&2
        sed 's/^/    /' "$work/stderr" >&2
        echo "$out" | head -n 20 | sed 's/^/    /' >&2
    fi
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
wait_state() { # command... until output contains $want
    local want=$1; shift
    for _ in $(seq 1 100); do
        if "$@" 2>/dev/null | grep -q "$want"; then return 0; fi
        sleep 0.2
    done
    failures=$((failures + 1)); echo "FAIL: never reached $want: $*" >&2
}

# ---- VNF packages (API version 1, no Version header) ----
run 0 "vnf package create" -- $openstack vnf package create --user-data owner=tests -f json
pkg=$(echo "$out" | json 'd["ID"]')
(cd deploy/sample-package && python3 -m zipfile -c "$work/sample-vnf.zip" TOSCA-Metadata Definitions Scripts)
run 0 "vnf package upload --path" -- $openstack vnf package upload "$pkg" --path "$work/sample-vnf.zip"
wait_state ONBOARDED $openstack vnf package show "$pkg" -f value -c "Onboarding State"
# Onboarding leaves the package ENABLED (as Tacker); disable and enable it again.
run 0 "vnf package update --operational-state DISABLED" -- $openstack vnf package update "$pkg" --operational-state DISABLED -f json
run 1 "vnf package update (no change: 409, exit 1)" -- $openstack vnf package update "$pkg" --operational-state DISABLED
run 0 "vnf package update --operational-state ENABLED --user-data" -- $openstack vnf package update "$pkg" --operational-state ENABLED --user-data stage=test -f json
run 0 "vnf package show" -- $openstack vnf package show "$pkg" -f json
vnfd_id=$(echo "$out" | json 'd["VNFD ID"]')
run 0 "vnf package list" -- $openstack vnf package list
run 0 "vnf package list --filter --all_fields" -- $openstack vnf package list --filter '(eq,onboardingState,ONBOARDED)' --all_fields
run 0 "vnf package list --fields --exclude_default" -- $openstack vnf package list --fields softwareImages --exclude_default
run 0 "vnf package list --exclude_fields" -- $openstack vnf package list --exclude_fields checksum
run 0 "vnf package download" -- $openstack vnf package download "$pkg" --file "$work/downloaded.zip"
run 0 "vnf package download --vnfd --type both" -- $openstack vnf package download "$pkg" --vnfd --type both --file "$work/vnfd.zip"
run 0 "vnf package artifact download" -- $openstack vnf package artifact download "$pkg" Scripts/install.sh --file "$work/install.sh"
cmp -s "$work/install.sh" deploy/sample-package/Scripts/install.sh || { failures=$((failures + 1)); echo "FAIL: artifact content differs" >&2; }

# ---- VNF LCM v1 ----
cat >"$work/inst-v1.json" <<JSON
{"flavourId": "simple", "vimConnectionInfo": [{"id": "vim1", "vimType": "SOLGATE.LOCAL.V_1", "accessInfo": {"username": "u", "password": "p"}}]}
JSON
cat >"$work/inst-fail.json" <<JSON
{"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 1}}}
JSON
echo '{"vnfInstanceName": "renamed", "vnfInstanceDescription": "changed"}' >"$work/update.json"
# SOL003 v2.6.1 shape (cpConfig is an array); v2 uses a map.
echo '{"extVirtualLinks": [{"id": "ext1", "resourceId": "net-1", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}]}]}]}' >"$work/ext.json"
echo "{\"callbackUri\": \"$callback\"}" >"$work/subsc.json"

run 0 "vnflcm versions" -- $openstack vnflcm versions
run 0 "vnflcm versions --major-version 1" -- $openstack vnflcm versions --major-version 1
run 0 "vnflcm versions --major-version 2" -- $openstack vnflcm versions --major-version 2
run 0 "vnflcm subsc create" -- $openstack vnflcm subsc create "$work/subsc.json" -f json
subsc=$(echo "$out" | json 'd["ID"]')
run 0 "vnflcm subsc list" -- $openstack vnflcm subsc list
run 0 "vnflcm subsc show" -- $openstack vnflcm subsc show "$subsc"
run 0 "vnflcm create" -- $openstack vnflcm create "$vnfd_id" --name v1-inst --description first -f json
inst=$(echo "$out" | json 'd["ID"]')
run 0 "vnflcm list" -- $openstack vnflcm list
run 0 "vnflcm show" -- $openstack vnflcm show "$inst"
run 0 "vnflcm instantiate" -- $openstack vnflcm instantiate "$inst" "$work/inst-v1.json"
wait_state '"INSTANTIATED"' $openstack vnflcm show "$inst" -f json
run 0 "vnflcm scale SCALE_OUT" -- $openstack vnflcm scale "$inst" --type SCALE_OUT --aspect-id VDU1_scale --number-of-steps 1
sleep 1
run 0 "vnflcm op list --filter" -- $openstack vnflcm op list --filter '(eq,operation,SCALE)'
run 0 "vnflcm heal" -- $openstack vnflcm heal "$inst" --cause test
sleep 1
run 0 "vnflcm update" -- $openstack vnflcm update "$inst" --I "$work/update.json"
sleep 1
run 0 "vnflcm change-ext-conn" -- $openstack vnflcm change-ext-conn "$inst" "$work/ext.json"
sleep 1
run 0 "vnflcm op list --exclude-fields" -- $openstack vnflcm op list --exclude-fields operationParams -f json
op=$(echo "$out" | json 'd[0]["ID"]')
run 0 "vnflcm op show" -- $openstack vnflcm op show "$op"
run 0 "vnflcm op list --fields" -- $openstack vnflcm op list --fields operationParams,error
run 0 "vnflcm terminate --D" -- $openstack vnflcm terminate "$inst" --termination-type FORCEFUL --D

# FAILED_TEMP for retry / rollback / fail.
run 0 "vnflcm create (retry)" -- $openstack vnflcm create "$vnfd_id" --name v1-retry -f json
inst=$(echo "$out" | json 'd["ID"]')
run 0 "vnflcm instantiate (fails once)" -- $openstack vnflcm instantiate "$inst" "$work/inst-fail.json"
wait_state FAILED_TEMP $openstack vnflcm op list --filter "(eq,vnfInstanceId,$inst)"
op=$($openstack vnflcm op list --filter "(eq,vnfInstanceId,$inst)" -f value -c ID)
run 0 "vnflcm op retry" -- $openstack vnflcm op retry "$op"
wait_state COMPLETED $openstack vnflcm op show "$op" -f value -c "Operation State"
run 0 "vnflcm terminate" -- $openstack vnflcm terminate "$inst"
sleep 1
run 0 "vnflcm create (rollback)" -- $openstack vnflcm create "$vnfd_id" --name v1-rollback -f json
inst2=$(echo "$out" | json 'd["ID"]')
run 0 "vnflcm instantiate (fails)" -- $openstack vnflcm instantiate "$inst2" "$work/inst-fail.json"
wait_state FAILED_TEMP $openstack vnflcm op list --filter "(eq,vnfInstanceId,$inst2)"
op=$($openstack vnflcm op list --filter "(eq,vnfInstanceId,$inst2)" -f value -c ID)
run 0 "vnflcm op rollback" -- $openstack vnflcm op rollback "$op"
wait_state ROLLED_BACK $openstack vnflcm op show "$op" -f value -c "Operation State"
run 0 "vnflcm instantiate (fails again)" -- $openstack vnflcm instantiate "$inst2" "$work/inst-fail.json"
sleep 1
wait_state FAILED_TEMP $openstack vnflcm op list --filter "(eq,operationState,FAILED_TEMP)"
op=$($openstack vnflcm op list --filter "(eq,operationState,FAILED_TEMP)" -f value -c ID)
run 0 "vnflcm op fail" -- $openstack vnflcm op fail "$op"
# cancel: the client sends no Version and crashes after printing "accepted" (its bug):
# exit 1, but solgate must have accepted (202) — checked through the occurrence.
echo '{"flavourId": "simple", "additionalParams": {"localVim": {"delayMs": 6000}}}' >"$work/inst-slow.json"
run 0 "vnflcm instantiate (slow)" -- $openstack vnflcm instantiate "$inst2" "$work/inst-slow.json"
wait_state PROCESSING $openstack vnflcm op list --filter "(eq,operationState,PROCESSING)"
op=$($openstack vnflcm op list --filter "(eq,operationState,PROCESSING)" -f value -c ID)
run 1 "vnflcm op cancel (client crashes after 202)" -- $openstack vnflcm op cancel "$op" --cancel-mode FORCEFUL
grep -q "Cancel request for LCM operation $op has been accepted" "$work/stderr" <<<"" || grep -q "accepted" <<<"$out" || true
wait_state FAILED_TEMP $openstack vnflcm op show "$op" -f value -c "Operation State"
run 0 "vnflcm op fail (cancelled)" -- $openstack vnflcm op fail "$op"
run 0 "vnflcm delete" -- $openstack vnflcm delete "$inst" "$inst2"
run 1 "vnflcm show (unknown id: error detail, exit 1)" -- $openstack vnflcm show 00000000-0000-0000-0000-000000000000
run 0 "vnflcm subsc delete" -- $openstack vnflcm subsc delete "$subsc"

# ---- VNF LCM v2 ----
export OS_TACKER_API_VERSION=2
echo '{"flavourId": "simple"}' >"$work/inst-v2.json"
run 0 "v2 vnflcm create" -- $openstack vnflcm create "$vnfd_id" --name v2-inst -f json
inst=$(echo "$out" | json 'd["ID"]')
run 0 "v2 vnflcm list" -- $openstack vnflcm list
run 0 "v2 vnflcm show" -- $openstack vnflcm show "$inst"
run 0 "v2 vnflcm update" -- $openstack vnflcm update "$inst" --I "$work/update.json"
sleep 1
run 0 "v2 vnflcm instantiate" -- $openstack vnflcm instantiate "$inst" "$work/inst-v2.json"
wait_state '"INSTANTIATED"' $openstack vnflcm show "$inst" -f json
run 0 "v2 vnflcm scale" -- $openstack vnflcm scale "$inst" --type SCALE_OUT --aspect-id VDU1_scale
sleep 1
run 0 "v2 vnflcm heal" -- $openstack vnflcm heal "$inst"
sleep 1
run 0 "v2 vnflcm op list" -- $openstack vnflcm op list -f json
op=$(echo "$out" | json 'd[0]["ID"]')
run 0 "v2 vnflcm op show" -- $openstack vnflcm op show "$op"
echo "{\"vnfdId\": \"$vnfd_id\", \"additionalParams\": {\"upgrade_type\": \"RollingUpdate\"}}" >"$work/pkg.json"
run 0 "v2 vnflcm change-vnfpkg" -- $openstack vnflcm change-vnfpkg "$inst" "$work/pkg.json"
sleep 1

# ---- VNF PM (vnfpm, API 2.1.0) on the instantiated v2 instance ----
cat >"$work/pm-job.json" <<JSON
{"objectType": "Vnf", "objectInstanceIds": ["$inst"], "callbackUri": "$callback",
 "criteria": {"performanceMetric": ["VCpuUsageMeanVnf.$inst"], "collectionPeriod": 30, "reportingPeriod": 60}}
JSON
run 0 "vnfpm job create" -- $openstack vnfpm job create "$work/pm-job.json" -f json
pm_job=$(echo "$out" | json 'd["ID"]')
run 0 "vnfpm job list" -- $openstack vnfpm job list
run 0 "vnfpm job list --filter" -- $openstack vnfpm job list --filter "(eq,objectType,Vnf)" -f json
[ "$(echo "$out" | json 'len(d)')" = 1 ] || { failures=$((failures + 1)); echo "FAIL: vnfpm job list --filter: $out" >&2; }
run 0 "vnfpm job list --all_fields" -- $openstack vnfpm job list --all_fields
run 0 "vnfpm job list --fields --exclude_default" -- $openstack vnfpm job list --fields reports --exclude_default
run 0 "vnfpm job list --exclude_fields" -- $openstack vnfpm job list --exclude_fields criteria
run 0 "vnfpm job show" -- $openstack vnfpm job show "$pm_job" -f json
echo "{\"callbackUri\": \"$callback/pm\"}" >"$work/pm-job-update.json"
run 0 "vnfpm job update" -- $openstack vnfpm job update "$pm_job" "$work/pm-job-update.json" -f json
[ "$(echo "$out" | json 'd["Callback Uri"]')" = "$callback/pm" ] || { failures=$((failures + 1)); echo "FAIL: vnfpm job update: $out" >&2; }
# A report, made as Alertmanager makes it (outside [auth], with the webhook's token).
cat >"$work/pm-alert.json" <<JSON
{"receiver": "tacker", "status": "firing", "version": "4", "alerts": [{"status": "firing",
 "labels": {"alertname": "PmJob", "receiver_type": "tacker", "function_type": "vnfpm", "job_id": "$pm_job",
            "object_instance_id": "$inst", "metric": "VCpuUsageMeanVnf.$inst"},
 "annotations": {"value": "0.42"},
 "startsAt": "2026-11-26T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "00000000000000aa"}]}
JSON
pm_curl_tls=()
if [ "$tls" = true ]; then pm_curl_tls=(--cacert "$OS_CACERT"); fi
run 0 "POST /pm_event (Alertmanager's webhook)" -- curl -s "${pm_curl_tls[@]}" -o /dev/null -w '%{http_code}' \
    -H "Authorization: Bearer $pm_webhook_token" -H 'Content-Type: application/json' --data-binary @"$work/pm-alert.json" \
    "$scheme://$address/pm_event"
[ "$out" = 204 ] || { failures=$((failures + 1)); echo "FAIL: /pm_event answered $out" >&2; }
run 0 "vnfpm job show (a report)" -- $openstack vnfpm job show "$pm_job" -f json
pm_report=$(echo "$out" | json 'd["Reports"][0]["href"].rsplit("/", 1)[1]')
run 0 "vnfpm report show" -- $openstack vnfpm report show "$pm_job" "$pm_report" -f json
[ "$(echo "$out" | json 'd["Entries"][0]["performanceValues"][0]["value"]')" = 0.42 ] || { failures=$((failures + 1)); echo "FAIL: vnfpm report show: $out" >&2; }
run 1 "vnfpm report show (unknown id: 404, exit 1)" -- $openstack vnfpm report show "$pm_job" 00000000-0000-0000-0000-000000000000
cat >"$work/pm-threshold.json" <<JSON
{"objectType": "Vnf", "objectInstanceId": "$inst", "callbackUri": "$callback",
 "criteria": {"performanceMetric": "VMemoryUsageMeanVnf.$inst", "thresholdType": "SIMPLE",
              "simpleThresholdDetails": {"thresholdValue": 0.8, "hysteresis": 0.05}}}
JSON
run 0 "vnfpm threshold create" -- $openstack vnfpm threshold create "$work/pm-threshold.json" -f json
pm_threshold=$(echo "$out" | json 'd["ID"]')
run 0 "vnfpm threshold list" -- $openstack vnfpm threshold list
run 0 "vnfpm threshold list --filter" -- $openstack vnfpm threshold list --filter "(eq,objectInstanceId,$inst)" -f json
[ "$(echo "$out" | json 'len(d)')" = 1 ] || { failures=$((failures + 1)); echo "FAIL: vnfpm threshold list --filter: $out" >&2; }
run 0 "vnfpm threshold show" -- $openstack vnfpm threshold show "$pm_threshold" -f json
echo "{\"callbackUri\": \"$callback/threshold\"}" >"$work/pm-threshold-update.json"
run 0 "vnfpm threshold update" -- $openstack vnfpm threshold update "$pm_threshold" "$work/pm-threshold-update.json" -f json
[ "$(echo "$out" | json 'd["Callback Uri"]')" = "$callback/threshold" ] || { failures=$((failures + 1)); echo "FAIL: vnfpm threshold update: $out" >&2; }
echo '{"objectType": "Vnf", "objectInstanceIds": ["x"], "callbackUri": "http://x", "criteria": {"performanceMetric": ["VNetworkUsage.x"], "collectionPeriod": 30, "reportingPeriod": 60}}' >"$work/pm-job-bad.json"
run 1 "vnfpm job create (unknown metric: 400, exit 1)" -- $openstack vnfpm job create "$work/pm-job-bad.json"
grep -q "VNetworkUsage" "$work/stderr" || { failures=$((failures + 1)); echo "FAIL: the unknown metric was not named" >&2; }
run 0 "vnfpm threshold delete" -- $openstack vnfpm threshold delete "$pm_threshold"
run 1 "vnfpm threshold show (deleted: 404, exit 1)" -- $openstack vnfpm threshold show "$pm_threshold"
run 0 "vnfpm job delete" -- $openstack vnfpm job delete "$pm_job"
run 1 "vnfpm job show (deleted: 404, exit 1)" -- $openstack vnfpm job show "$pm_job"
run 0 "v2 vnflcm subsc create" -- $openstack vnflcm subsc create "$work/subsc.json" -f json
subsc=$(echo "$out" | json 'd["ID"]')
run 0 "v2 vnflcm subsc list" -- $openstack vnflcm subsc list
run 0 "v2 vnflcm subsc show" -- $openstack vnflcm subsc show "$subsc"
run 0 "v2 vnflcm subsc delete" -- $openstack vnflcm subsc delete "$subsc"

# ---- VNF FM (vnffm, API 1.3.0) on the instantiated v2 instance ----
echo "{\"callbackUri\": \"$callback\", \"filter\": {\"perceivedSeverities\": [\"CRITICAL\"], \"vnfInstanceSubscriptionFilter\": {\"vnfInstanceIds\": [\"$inst\"]}}}" >"$work/fm-subsc.json"
run 0 "vnffm sub create" -- $openstack vnffm sub create "$work/fm-subsc.json" -f json
fm_subsc=$(echo "$out" | json 'd["ID"]')
run 0 "vnffm sub list" -- $openstack vnffm sub list
run 0 "vnffm sub list --filter" -- $openstack vnffm sub list --filter "(eq,id,$fm_subsc)" -f json
[ "$(echo "$out" | json 'len(d)')" = 1 ] || { failures=$((failures + 1)); echo "FAIL: vnffm sub list --filter: $out" >&2; }
run 0 "vnffm sub show" -- $openstack vnffm sub show "$fm_subsc" -f json
# An alarm, raised as Alertmanager raises it (outside [auth], with the webhook's credentials).
cat >"$work/alert.json" <<JSON
{"receiver": "tacker", "status": "firing", "version": "4", "alerts": [{"status": "firing",
 "labels": {"alertname": "VnfDown", "receiver_type": "tacker", "function_type": "vnffm", "vnf_instance_id": "$inst",
            "perceived_severity": "CRITICAL", "event_type": "PROCESSING_ERROR_ALARM"},
 "annotations": {"probable_cause": "Process Terminated", "fault_type": "Server Down", "fault_details": "check"},
 "startsAt": "2026-11-26T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "0123456789abcdef"}]}
JSON
curl_tls=()
if [ "$tls" = true ]; then curl_tls=(--cacert "$OS_CACERT"); fi
run 0 "POST /alert (Alertmanager's webhook)" -- curl -s "${curl_tls[@]}" -o /dev/null -w '%{http_code}' -u "alertmanager:$webhook_password" \
    -H 'Content-Type: application/json' --data-binary @"$work/alert.json" "$scheme://$address/alert"
[ "$out" = 204 ] || { failures=$((failures + 1)); echo "FAIL: /alert answered $out" >&2; }
run 0 "vnffm alarm list" -- $openstack vnffm alarm list
run 0 "vnffm alarm list --filter" -- $openstack vnffm alarm list --filter "(eq,managedObjectId,$inst)" -f json
alarm=$(echo "$out" | json 'd[0]["ID"]')
run 0 "vnffm alarm show" -- $openstack vnffm alarm show "$alarm" -f json
[ "$(echo "$out" | json 'd["Probable Cause"]')" = "Process Terminated" ] || { failures=$((failures + 1)); echo "FAIL: vnffm alarm show: $out" >&2; }
run 0 "vnffm alarm update --ack-state ACKNOWLEDGED" -- $openstack vnffm alarm update "$alarm" --ack-state ACKNOWLEDGED -f json
[ "$(echo "$out" | json 'd["Ack State"]')" = ACKNOWLEDGED ] || { failures=$((failures + 1)); echo "FAIL: vnffm alarm update: $out" >&2; }
run 1 "vnffm alarm update (same state: 409, exit 1)" -- $openstack vnffm alarm update "$alarm" --ack-state ACKNOWLEDGED
grep -q "cannot specify the same value" "$work/stderr" || { failures=$((failures + 1)); echo "FAIL: the 409 detail was not shown" >&2; }
run 0 "vnffm alarm update --ack-state UNACKNOWLEDGED" -- $openstack vnffm alarm update "$alarm" --ack-state UNACKNOWLEDGED
run 1 "vnffm alarm show (unknown id: 404, exit 1)" -- $openstack vnffm alarm show 00000000-0000-0000-0000-000000000000
run 0 "vnffm sub delete" -- $openstack vnffm sub delete "$fm_subsc"
run 1 "vnffm sub show (deleted: 404, exit 1)" -- $openstack vnffm sub show "$fm_subsc"
run 0 "v2 vnflcm terminate --D" -- $openstack vnflcm terminate "$inst" --D
unset OS_TACKER_API_VERSION

# ---- VIM registry (Tacker's /v1.0/vims), checked against the test Keystone ----
# `openstack vim register --config-file` files naming the test Keystone's admin.
vim_password="${SOLGATE_TEST_KEYSTONE_PASSWORD:-solgate-keystone-test}"
vim_config() { # password
    printf 'auth_url: %s\nusername: admin\npassword: %s\nproject_name: admin\n' "${SOLGATE_TEST_KEYSTONE_URL:-}" "$1"
    printf "project_domain_name: Default\nuser_domain_name: Default\ncert_verify: 'True'\n"
}
vim_config "$vim_password" >"$work/vim.yaml"
vim_config wrong-password >"$work/vim-wrong.yaml"
if [ "$default_mode" = true ]; then
    run 0 "vim register --is-default" -- $openstack vim register --config-file "$work/vim.yaml" --description first --is-default vim0 -f json
    vim=$(echo "$out" | json 'd["id"]')
    if grep -q -- "$vim_password" <<<"$out"; then failures=$((failures + 1)); echo "FAIL: vim register shows the password" >&2; fi
    [ "$(echo "$out" | json 'd["status"]')" = ACTIVE ] || { failures=$((failures + 1)); echo "FAIL: the VIM is not ACTIVE: $out" >&2; }
    run 1 "vim register (wrong password: 422, exit 1)" -- $openstack vim register --config-file "$work/vim-wrong.yaml" vim-wrong
    grep -q "refused the credentials" "$work/stderr" || { failures=$((failures + 1)); echo "FAIL: the refusal was not explained" >&2; }
    run 1 "vim register (same name: 409, exit 1)" -- $openstack vim register --config-file "$work/vim.yaml" vim0
    run 0 "vim list" -- $openstack vim list
    run 0 "vim list --long" -- $openstack vim list --long -f json
    [ "$(echo "$out" | json 'd[0]["Is Default"]')" = True ] || { failures=$((failures + 1)); echo "FAIL: vim0 is not the default: $out" >&2; }
    run 0 "vim show (name)" -- $openstack vim show vim0 -f json
    run 0 "vim show (id)" -- $openstack vim show "$vim" -f json
    if grep -q -- "$vim_password" <<<"$out"; then failures=$((failures + 1)); echo "FAIL: vim show shows the password" >&2; fi
    # An instantiation without vimConnectionInfo runs on the default VIM: the test Keystone
    # has no Heat, so it ends FAILED_TEMP, its parameters naming the VIM.
    run 0 "vnflcm create (default VIM)" -- $openstack vnflcm create "$vnfd_id" --name on-default-vim -f json
    inst=$(echo "$out" | json 'd["ID"]')
    run 0 "vnflcm instantiate (default VIM)" -- $openstack vnflcm instantiate "$inst" "$work/inst-v2.json"
    wait_state FAILED_TEMP $openstack vnflcm op list --filter "(eq,vnfInstanceId,$inst)"
    op=$($openstack vnflcm op list --filter "(eq,vnfInstanceId,$inst)" -f value -c ID)
    run 0 "vnflcm op show (default VIM)" -- $openstack vnflcm op show "$op" -f json
    grep -q "$vim" <<<"$out" || { failures=$((failures + 1)); echo "FAIL: the instantiation did not use the default VIM: $out" >&2; }
    run 0 "vnflcm op fail (default VIM)" -- $openstack vnflcm op fail "$op"
    run 0 "vnflcm delete (default VIM)" -- $openstack vnflcm delete "$inst"
    run 0 "vim set --name --description --is-default False" -- $openstack vim set vim0 --name vim0-renamed --description changed --is-default False -f json
    [ "$(echo "$out" | json 'd["name"]')" = vim0-renamed ] || { failures=$((failures + 1)); echo "FAIL: vim set did not rename: $out" >&2; }
    run 0 "vim set --config-file" -- $openstack vim set --config-file "$work/vim.yaml" vim0-renamed -f json
    run 1 "vim set --config-file (wrong password: 422, exit 1)" -- $openstack vim set --config-file "$work/vim-wrong.yaml" vim0-renamed
    run 0 "vim delete" -- $openstack vim delete vim0-renamed
    run 1 "vim show (deleted: 404, exit 1)" -- $openstack vim show "$vim"
fi
run 0 "vnf package update DISABLED" -- $openstack vnf package update "$pkg" --operational-state DISABLED
run 0 "vnf package delete" -- $openstack vnf package delete "$pkg"

if [ "$keystone" = true ]; then
    # Keystone's answers as the client shows them: a reader may read but not create, a
    # wrong password gets no token, and solgate refuses a request without a token.
    OS_USERNAME=demo-reader run 0 "keystone reader: vnflcm list" -- $openstack vnflcm list
    OS_USERNAME=demo-reader run 1 "keystone reader: vnflcm create (403)" -- $openstack vnflcm create "$vnfd_id"
    grep -q "Policy doesn't allow" "$work/stderr" || { failures=$((failures + 1)); echo "FAIL: the reader's 403 detail was not shown" >&2; }
    OS_PASSWORD=wrong run 1 "keystone wrong password" -- $openstack vnflcm list
    # The VIM registry with Keystone tokens: Tacker's rules (a reader may not create_vim).
    OS_USERNAME=demo-reader run 1 "keystone reader: vim register (403)" -- $openstack vim register --config-file "$work/vim.yaml" vim-reader
    grep -q "create_vim" "$work/stderr" || { failures=$((failures + 1)); echo "FAIL: the reader's create_vim 403 was not shown" >&2; }
    run 0 "keystone member: vim register" -- $openstack vim register --config-file "$work/vim.yaml" --is-default vim-demo -f json
    OS_USERNAME=demo-reader run 0 "keystone reader: vim show" -- $openstack vim show vim-demo -f json
    run 0 "keystone member: vim delete" -- $openstack vim delete vim-demo
    run 0 "keystone no token: 401" -- curl -s -o /dev/null -w '%{http_code}' "$scheme://$address/vnflcm/v1/vnf_instances"
    [ "$out" = 401 ] || { failures=$((failures + 1)); echo "FAIL: no token answered $out, not 401" >&2; }
fi

mode=$([ "$keystone" = true ] && echo " with Keystone tokens" || true)
echo "[tackerclient] $(grep -c '^  \$' "$log") commands run over $scheme$mode, $failures failure(s); log in $log" >&2
[ "$failures" = 0 ]
