#!/usr/bin/env python3
"""The kill -9 run of the Durability issue, against a real `solgate serve`.

solgate serve (embedded: SQLite with synchronous = FULL, in-process work, the local
simulated VIM), N instances, N concurrent instantiates, kill -9 of the server once a random
number of them (N/5 to 4N/5) had answered 202, restart on the same data directory, then wait
for every accepted operation to settle and count the outcomes. Repeated `runs` times.

    bench/durability.py BINARY [instances] [runs]

Prints one line per run and exits non-zero if an accepted operation did not complete or a
VNFC was made twice. Standard library only.
"""

import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "deploy", "sample-package")


def request(base, method, path, body=None, headers=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Version", "2.0.0" if path.startswith("/vnflcm/v2") else "1.3.0")
    req.add_header("Accept", "application/json")
    if body is not None:
        req.add_header("Content-Type", "application/json")
    for key, value in (headers or {}).items():
        req.add_header(key, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            text = response.read()
            return response.status, response.headers, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, error.headers, None


def start(binary, data_dir):
    env = dict(os.environ, SOLGATE_LOG_FORMAT="json", SOLGATE__CONDUCTOR__HEARTBEAT_INTERVAL_SECS="1",
               SOLGATE__CONDUCTOR__LEASE_TIMEOUT_SECS="3", SOLGATE__RPC__RELAY_INTERVAL_SECS="1",
               SOLGATE__RPC__REPUBLISH_AFTER_SECS="2")
    env.pop("SOLGATE_DATABASE_URL", None)
    process = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    for line in process.stderr:
        match = re.search(r'"address":"([^"]+)"', line)
        if "listening" in line and match:
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, "http://" + match.group(1)
    raise SystemExit("solgate did not start")


def onboard_sample(base):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, _, files in os.walk(SAMPLE):
            for name in files:
                path = os.path.join(root, name)
                archive.write(path, os.path.relpath(path, SAMPLE))
    _, _, package = request(base, "POST", "/vnfpkgm/v1/vnf_packages", {})
    status, _, _ = request(base, "PUT", f"/vnfpkgm/v1/vnf_packages/{package['id']}/package_content",
                           raw=buffer.getvalue(), headers={"Content-Type": "application/zip"})
    assert status == 202, status
    for _ in range(600):
        _, _, shown = request(base, "GET", f"/vnfpkgm/v1/vnf_packages/{package['id']}")
        if shown["onboardingState"] == "ONBOARDED":
            return shown["vnfdId"]
        time.sleep(0.05)
    raise SystemExit("the sample package was not onboarded")


def one_run(binary, instances):
    data_dir = tempfile.mkdtemp(prefix="solgate-durability-")
    try:
        process, base = start(binary, data_dir)
        vnfd_id = onboard_sample(base)
        ids = []
        for i in range(instances):
            _, _, created = request(base, "POST", "/vnflcm/v2/vnf_instances", {"vnfdId": vnfd_id,
                                                                              "vnfInstanceName": f"d-{i}"})
            ids.append(created["id"])
        kill_after = random.randint(instances // 5, instances * 4 // 5)
        accepted, lock = [], threading.Lock()
        body = {"flavourId": "simple", "additionalParams": {"localVim": {"delayMs": 20}}}

        def instantiate(instance_id):
            try:
                status, headers, _ = request(base, "POST", f"/vnflcm/v2/vnf_instances/{instance_id}/instantiate", body)
            except OSError:
                return
            if status == 202:
                with lock:
                    accepted.append((instance_id, headers["Location"].split("/")[-1]))

        threads = [threading.Thread(target=instantiate, args=(i,)) for i in ids]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        while True:
            with lock:
                if len(accepted) >= kill_after:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(accepted)} instantiates were accepted")
            time.sleep(0.001)
        process.send_signal(signal.SIGKILL)
        process.wait()
        for thread in threads:
            thread.join()
        started = time.monotonic()
        process, base = start(binary, data_dir)
        outcomes = {}
        settle_by = time.monotonic() + 300
        for instance_id, op_id in list(accepted):
            while time.monotonic() < settle_by:
                _, _, op = request(base, "GET", f"/vnflcm/v2/vnf_lcm_op_occs/{op_id}")
                state = op["operationState"]
                if state in ("COMPLETED", "FAILED_TEMP", "ROLLED_BACK", "FAILED"):
                    break
                time.sleep(0.1)
            else:
                state = "not settled in 300 s"
            outcomes[state] = outcomes.get(state, 0) + 1
            _, _, instance = request(base, "GET", f"/vnflcm/v2/vnf_instances/{instance_id}")
            vnfcs = instance.get("instantiatedVnfInfo", {}).get("vnfcResourceInfo", [])
            for vdu in ("VDU1", "VDU2"):
                if state == "COMPLETED" and sum(1 for v in vnfcs if v["vduId"] == vdu) != 1:
                    outcomes["duplicate VNFC"] = outcomes.get("duplicate VNFC", 0) + 1
        settled = time.monotonic() - started
        process.send_signal(signal.SIGTERM)
        process.wait()
        return len(accepted), kill_after, outcomes, settled
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main():
    binary = sys.argv[1]
    instances = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    failed = False
    for run in range(1, runs + 1):
        accepted, kill_after, outcomes, settled = one_run(binary, instances)
        print(f"run {run}: {instances} instantiates, kill -9 after {kill_after} answered 202; "
              f"{accepted} accepted; outcomes {json.dumps(outcomes, sort_keys=True)}; "
              f"all settled {settled:.1f} s after the restart")
        if outcomes.get("COMPLETED", 0) != accepted or "duplicate VNFC" in outcomes:
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
