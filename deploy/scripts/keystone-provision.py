#!/usr/bin/env python3
"""Creates, in the test Keystone that services.sh runs, what solgate's tests use; safe to
run again (existing projects, users and role assignments are kept, passwords reset).

    keystone-provision.py KEYSTONE_V3_URL PASSWORD [--tacker-endpoint URL]

PASSWORD is the bootstrap admin's and every test user's. --tacker-endpoint points the catalog's
`nfv-orchestration` service (what python-tackerclient looks up with password auth) at a
solgate server. Only the Python standard library is used.
"""

import json
import sys
import urllib.error
import urllib.request

PROJECTS = ["service", "demo", "other"]
# user, project, role
USERS = [
    ("solgate", "service", "admin"),
    ("demo-member", "demo", "member"),
    ("demo-reader", "demo", "reader"),
    ("other-member", "other", "member"),
]


def call(method, url, token=None, body=None, expect=(200, 201, 204)):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("X-Auth-Token", token)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, response.headers, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        if error.code in expect:
            return error.code, error.headers, None
        raise SystemExit(f"{method} {url}: {error.code} {error.read().decode()[:300]}")


def main():
    args = sys.argv[1:]
    endpoint = None
    if "--tacker-endpoint" in args:
        at = args.index("--tacker-endpoint")
        endpoint = args[at + 1]
        del args[at : at + 2]
    base, password = args[0].rstrip("/"), args[1]

    auth = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": "admin", "domain": {"name": "Default"}, "password": password}},
            },
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}},
        }
    }
    _, headers, _ = call("POST", f"{base}/auth/tokens", body=auth)
    token = headers["X-Subject-Token"]

    def find(collection, name, extra=""):
        _, _, body = call("GET", f"{base}/{collection}?name={name}{extra}", token)
        items = body[collection]
        return items[0]["id"] if items else None

    if endpoint is not None:
        service = find("services", "tacker", "&type=nfv-orchestration")
        if service is None:
            _, _, body = call("POST", f"{base}/services", token, {"service": {"name": "tacker", "type": "nfv-orchestration"}})
            service = body["service"]["id"]
        _, _, body = call("GET", f"{base}/endpoints?service_id={service}", token)
        for interface in ["public", "internal", "admin"]:
            found = [e for e in body["endpoints"] if e["interface"] == interface]
            if found:
                call("PATCH", f"{base}/endpoints/{found[0]['id']}", token, {"endpoint": {"url": endpoint}})
            else:
                call("POST", f"{base}/endpoints", token, {"endpoint": {
                    "service_id": service, "interface": interface, "url": endpoint, "region_id": "RegionOne"}})
        print(f"[keystone] nfv-orchestration endpoint: {endpoint}", file=sys.stderr)
        return

    projects = {}
    for name in PROJECTS:
        projects[name] = find("projects", name)
        if projects[name] is None:
            _, _, body = call("POST", f"{base}/projects", token, {"project": {"name": name, "domain_id": "default"}})
            projects[name] = body["project"]["id"]
    roles = {name: find("roles", name) for name in {role for _, _, role in USERS}}
    missing = [name for name, id_ in roles.items() if id_ is None]
    if missing:
        raise SystemExit(f"roles missing after bootstrap: {missing}")
    for user, project, role in USERS:
        user_id = find("users", user)
        if user_id is None:
            _, _, body = call("POST", f"{base}/users", token, {"user": {
                "name": user, "domain_id": "default", "password": password, "default_project_id": projects[project]}})
            user_id = body["user"]["id"]
        else:
            call("PATCH", f"{base}/users/{user_id}", token, {"user": {"password": password}})
        call("PUT", f"{base}/projects/{projects[project]}/users/{user_id}/roles/{roles[role]}", token)
    print(f"[keystone] provisioned projects {', '.join(PROJECTS)} and users "
          f"{', '.join(user for user, _, _ in USERS)}", file=sys.stderr)


if __name__ == "__main__":
    main()
