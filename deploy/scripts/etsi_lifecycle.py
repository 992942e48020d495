#!/usr/bin/env python3
"""Drives one whole VNF life cycle under one vnflcm v2 version and holds every VnfInstance
and VnfLcmOpOcc body to ETSI's own OpenAPI (a bundle made by etsi_bundle.py).

    etsi_lifecycle.py BASE_URL BUNDLE.json VERSION PACKAGE_DIR

Onboards PACKAGE_DIR (zipped) through vnfpkgm v1, then under `Version: VERSION`: create,
instantiate, scale out, scale in, heal, terminate, delete. After each step it reads the
instance and the occurrence (and the lists) and validates them against the bundle's
VnfInstance / VnfLcmOpOcc schemas. Exits non-zero on the first failure.
"""

import io
import json
import os
import sys
import time
import urllib.error
import urllib.request
import zipfile

import jsonschema

BASE, BUNDLE, VERSION, PACKAGE_DIR = sys.argv[1:5]
checked = {"VnfInstance": 0, "VnfLcmOpOcc": 0}


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def call(method, path, body=None, version=None, content_type="application/json", raw=None):
    headers = {"Accept": "application/json"}
    if version:
        headers["Version"] = version
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(BASE + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return response.status, dict(response.headers), (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, dict(error.headers), (json.loads(text) if text else None)


with open(BUNDLE, encoding="utf-8") as handle:
    bundle = json.load(handle)
components = bundle["components"]["schemas"]


def validate(name, body, where):
    schema = {"$ref": f"#/components/schemas/{name}", "components": {"schemas": components}}
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(body), key=lambda e: list(e.path))
    if errors:
        for error in errors[:10]:
            print(f"  at /{'/'.join(map(str, error.path))}: {error.message[:300]}", file=sys.stderr)
        fail(f"{where}: the {name} body does not validate against ETSI's OpenAPI")
    checked[name] += 1


def expect(status, wanted, body, what):
    if status != wanted:
        fail(f"{what}: HTTP {status} (wanted {wanted}): {json.dumps(body)[:500]}")


def onboard():
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for folder, _, files in os.walk(PACKAGE_DIR):
            for name in files:
                path = os.path.join(folder, name)
                zipped.write(path, os.path.relpath(path, PACKAGE_DIR))
    status, _, package = call("POST", "/vnfpkgm/v1/vnf_packages", {})
    expect(status, 201, package, "create package")
    status, _, body = call(
        "PUT", f"/vnfpkgm/v1/vnf_packages/{package['id']}/package_content",
        raw=archive.getvalue(), content_type="application/zip",
    )
    expect(status, 202, body, "upload package")
    for _ in range(300):
        _, _, package = call("GET", f"/vnfpkgm/v1/vnf_packages/{package['id']}")
        if package.get("onboardingState") == "ONBOARDED":
            return package["vnfdId"]
        time.sleep(0.1)
    fail("package not onboarded")


def check_instance(instance_id, where):
    status, _, instance = call("GET", f"/vnflcm/v2/vnf_instances/{instance_id}", version=VERSION)
    expect(status, 200, instance, where)
    validate("VnfInstance", instance, where)
    status, _, listed = call("GET", "/vnflcm/v2/vnf_instances?all_fields", version=VERSION)
    expect(status, 200, listed, where + " (list)")
    for entry in listed:
        validate("VnfInstance", entry, where + " (list)")
    return instance


def task(instance_id, path, body, where):
    status, headers, problem = call("POST", f"/vnflcm/v2/vnf_instances/{instance_id}/{path}", body, VERSION)
    expect(status, 202, problem, where)
    location = {k.lower(): v for k, v in headers.items()}["location"]
    op_path = location[location.index("/vnflcm/"):]
    for _ in range(600):
        status, _, op = call("GET", op_path, version=VERSION)
        expect(status, 200, op, where + " (occurrence)")
        validate("VnfLcmOpOcc", op, where + " (occurrence)")
        if op["operationState"] in ("COMPLETED", "FAILED_TEMP", "FAILED", "ROLLED_BACK"):
            break
        time.sleep(0.05)
    if op["operationState"] != "COMPLETED":
        fail(f"{where}: operation ended {op['operationState']}: {json.dumps(op.get('error'))}")
    status, _, listed = call("GET", "/vnflcm/v2/vnf_lcm_op_occs?all_fields", version=VERSION)
    expect(status, 200, listed, where + " (occurrence list)")
    for entry in listed:
        validate("VnfLcmOpOcc", entry, where + " (occurrence list)")
    return check_instance(instance_id, where)


vnfd_id = onboard()
status, _, instance = call("POST", "/vnflcm/v2/vnf_instances", {"vnfdId": vnfd_id, "vnfInstanceName": "etsi"}, VERSION)
expect(status, 201, instance, "create")
validate("VnfInstance", instance, "create")
instance_id = instance["id"]
check_instance(instance_id, "after create")
task(instance_id, "instantiate", {"flavourId": "simple"}, "instantiate")
task(instance_id, "scale", {"type": "SCALE_OUT", "aspectId": "VDU1_scale"}, "scale out")
task(instance_id, "scale", {"type": "SCALE_IN", "aspectId": "VDU1_scale"}, "scale in")
task(instance_id, "heal", {}, "heal")
task(instance_id, "terminate", {"terminationType": "FORCEFUL"}, "terminate")
status, _, body = call("DELETE", f"/vnflcm/v2/vnf_instances/{instance_id}", version=VERSION)
expect(status, 204, body, "delete")
print(f"[etsi] life cycle under {VERSION}: {checked['VnfInstance']} VnfInstance and "
      f"{checked['VnfLcmOpOcc']} VnfLcmOpOcc bodies valid against ETSI's OpenAPI", file=sys.stderr)
