#!/usr/bin/env python3
"""Bundles ETSI's multi-file SOL003 OpenAPI YAML into one OpenAPI 3.0 JSON document.

    etsi_bundle.py ROOT.yaml OUT.json [--errata ERRATA.json] [--server URL]

ETSI's sources spread one API over several files joined by relative `$ref`s; fuzzers and
validators want one document. Named schemas (`…#/definitions/X`, `…#/components/schemas/X`)
become `#/components/schemas/X`; every other reference (parameters, responses, request
bodies, endpoints) is inlined. The errata named with --apply (entries of solgate's errata file
where the YAML contradicts the published document, which wins) put the document's shape at
their pointer, so that the check holds solgate to the document rather than to the YAML's
known bugs; the other errata are left out, so ETSI's YAML decides. Responses
whose declaration contradicts their own description are corrected as the text says (a body
that "shall be empty", lists that "shall contain in an array", error bodies that SOL013 types
as application/problem+json); the log counts each kind.
"""

import argparse
import copy
import json
import os
import sys

import yaml

SCHEMA_CONTAINERS = ("definitions", "schemas")


class Bundler:
    def __init__(self):
        self.files = {}
        self.schemas = {}
        self.origin = {}

    def load(self, path):
        path = os.path.abspath(path)
        if not os.path.exists(path) and "SOL002_" in os.path.basename(path):
            # The copy holds SOL003's parameter file only; the SOL002 twin the shared
            # endpoints file names declares the same headers.
            path = os.path.join(os.path.dirname(path), os.path.basename(path).replace("SOL002_", "SOL003_"))
        if path not in self.files:
            with open(path, encoding="utf-8") as handle:
                self.files[path] = yaml.safe_load(handle)
        return self.files[path]

    @staticmethod
    def pointer(document, fragment):
        node = document
        for part in [p for p in fragment.lstrip("/").split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            else:
                # YAML reads response codes (`400:`) as integers.
                node = node[part] if part in node else node[int(part)]
        return node

    def resolve(self, node, base):
        if isinstance(node, list):
            return [self.resolve(item, base) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            file_part, _, fragment = ref.partition("#")
            target_file = os.path.normpath(os.path.join(os.path.dirname(base), file_part)) if file_part else base
            parts = [p for p in fragment.split("/") if p]
            if len(parts) >= 2 and parts[-2] in SCHEMA_CONTAINERS:
                name = parts[-1]
                key = (target_file, fragment)
                if name not in self.schemas:
                    self.schemas[name] = None  # placeholder: breaks cycles
                    self.origin[name] = key
                    target = self.pointer(self.load(target_file), fragment)
                    self.schemas[name] = self.resolve(target, target_file)
                elif self.origin[name] != key:
                    other = self.pointer(self.load(target_file), fragment)
                    first = self.pointer(self.load(self.origin[name][0]), self.origin[name][1])
                    if other != first:
                        print(f"note: two different schemas named {name}; using {self.origin[name]}", file=sys.stderr)
                return {"$ref": f"#/components/schemas/{name}"}
            target = self.pointer(self.load(target_file), fragment)
            resolved = self.resolve(target, target_file)
            siblings = {k: self.resolve(v, base) for k, v in node.items() if k != "$ref"}
            if siblings and isinstance(resolved, dict):
                resolved = {**resolved, **siblings}
            return resolved
        return {str(key): self.resolve(value, base) for key, value in node.items()}


def retarget(node):
    """The errata are written in the registry's form (`#/$defs/X`)."""
    if isinstance(node, list):
        return [retarget(item) for item in node]
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                value = "#/components/schemas/" + value[len("#/$defs/"):]
            out[key] = retarget(value)
        return out
    return node


def correct_responses(document):
    """Where the YAML's response declarations contradict their own text (and SOL013), follow
    the text. Returns what was corrected, for the log."""
    corrected = []
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for code, response in operation["responses"].items():
                where = f"{method.upper()} {path} {code}"
                text = response.get("description", "")
                content = response.get("content")
                # "The response body shall be empty", yet a JSON body is declared (e.g. the
                # 202 of PATCH of an individual VNF instance).
                if "body shall be empty" in text and content:
                    del response["content"]
                    corrected.append(f"{where}: empty body")
                    continue
                if not isinstance(content, dict):
                    continue
                # "shall contain in an array the representations", yet one object is declared
                # (the subscription and occurrence lists).
                json_body = content.get("application/json")
                if "in an array" in text and json_body and json_body.get("schema", {}).get("type") != "array":
                    json_body["schema"] = {"type": "array", "items": json_body["schema"]}
                    corrected.append(f"{where}: array")
                # SOL013 clause 6.4: errors are application/problem+json; the YAML says
                # application/json.
                if str(code)[0] in "45" and "application/json" in content and "application/problem+json" not in content:
                    content["application/problem+json"] = content.pop("application/json")
                    corrected.append(f"{where}: problem+json")
    return corrected


def bundle(root, errata_path=None, apply=(), server=None):
    bundler = Bundler()
    document = bundler.load(root)
    out = {key: bundler.resolve(value, os.path.abspath(root)) for key, value in document.items() if key != "components"}
    components = bundler.resolve(document.get("components", {}), os.path.abspath(root))
    # Named schemas and request bodies/responses the main file declares itself.
    for name, schema in (components.get("schemas") or {}).items():
        bundler.schemas.setdefault(name, schema)
    components["schemas"] = bundler.schemas
    out["components"] = components
    applied = []
    if errata_path:
        with open(errata_path, encoding="utf-8") as handle:
            errata = json.load(handle)
        for entry in errata.get("errata", []):
            if entry.get("id") not in apply or entry.get("type") not in bundler.schemas:
                continue
            # The erratum's "ours" replaces what the YAML has at its pointer (absent: removed).
            parts = [p.replace("~1", "/").replace("~0", "~") for p in entry["pointer"].strip("/").split("/")]
            parent = bundler.schemas[entry["type"]]
            for part in parts[:-1]:
                parent = parent.setdefault(part, {})
            if entry.get("ours") is None:
                parent.pop(parts[-1], None)
            else:
                parent[parts[-1]] = retarget(copy.deepcopy(entry["ours"]))
            applied.append(entry["id"])
        missing = sorted(set(apply) - set(applied))
        if missing:
            raise SystemExit(f"errata {', '.join(missing)} not found in {errata_path}")
    corrected = correct_responses(out)
    if server:
        out["servers"] = [{"url": server}]
    return out, applied, corrected


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("out")
    parser.add_argument("--errata")
    parser.add_argument("--apply", default="", help="comma-separated errata ids to apply")
    parser.add_argument("--server")
    args = parser.parse_args()
    document, applied, corrected = bundle(args.root, args.errata, [i for i in args.apply.split(",") if i], args.server)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    kinds = {}
    for entry in corrected:
        kind = entry.rsplit(": ", 1)[1]
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"bundled {len(document['paths'])} paths, {len(document['components']['schemas'])} schemas; "
          f"errata applied: {', '.join(applied) or 'none'}; responses corrected: "
          f"{', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items())) or 'none'}", file=sys.stderr)


if __name__ == "__main__":
    main()
