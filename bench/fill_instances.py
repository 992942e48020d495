#!/usr/bin/env python3
"""Copies the VNF instances of a stopped solgate's SQLite database until it holds COUNT
(new ids, same documents): the data set of the large-inventory benchmark.

    bench/fill_instances.py DATA_DIR/solgate.db COUNT
"""
import json
import sqlite3
import sys
import uuid

def main():
    path, count = sys.argv[1], int(sys.argv[2])
    db = sqlite3.connect(path)
    columns = [row[1] for row in db.execute("PRAGMA table_info(vnf_instances_v2)")]
    templates = db.execute(f"SELECT {', '.join(columns)} FROM vnf_instances_v2").fetchall()
    if not templates:
        sys.exit("no instance to copy: run the bench's setup first")
    have = len(templates)
    at = {name: i for i, name in enumerate(columns)}
    rows = []
    for n in range(have, count):
        row = list(templates[n % have])
        new_id = str(uuid.uuid4())
        body = json.loads(row[at["body"]])
        body["id"] = new_id
        body["vnfInstanceName"] = f"fill-{n}"
        row[at["id"]], row[at["body"]] = new_id, json.dumps(body, separators=(",", ":"))
        if "vnf_instance_name" in at:
            row[at["vnf_instance_name"]] = f"fill-{n}"
        rows.append(row)
    with db:
        db.executemany(
            f"INSERT INTO vnf_instances_v2 ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows
        )
    print(f"{path}: {db.execute('SELECT COUNT(*) FROM vnf_instances_v2').fetchone()[0]} VNF instances")

if __name__ == "__main__":
    main()
