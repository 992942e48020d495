#!/usr/bin/env python3
"""Bundles ETSI's multi-file SOL003 OpenAPI YAML into one OpenAPI 3.0 JSON document.

    etsi_bundle.py ROOT.yaml OUT.json [--errata ERRATA.json] [--server URL]

ETSI's sources spread one API over several files joined by relative `$ref`s; fuzzers and
validators want one document. Named schemas (`…#/definitions/X`, `…#/components/schemas/X`)
become `#/components/schemas/X`; every other reference (parameters, responses, request
bodies, endpoints) is inlined. The errata solgate keeps for the YAML (the published document
wins where the YAML is wrong, see the errata file) replace the named types they correct, so
that the check holds solgate to the document rather than to the YAML's known bugs.
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


def bundle(root, errata_path=None, server=None):
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
    if errata_path and os.path.exists(errata_path):
        with open(errata_path, encoding="utf-8") as handle:
            errata = json.load(handle)
        for entry in errata.get("errata", []):
            name, replacement = entry.get("type"), entry.get("replace")
            if name in bundler.schemas and isinstance(replacement, dict):
                bundler.schemas[name] = retarget(copy.deepcopy(replacement))
                applied.append(entry.get("id", name))
    if server:
        out["servers"] = [{"url": server}]
    return out, applied


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("out")
    parser.add_argument("--errata")
    parser.add_argument("--server")
    args = parser.parse_args()
    document, applied = bundle(args.root, args.errata, args.server)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    print(f"bundled {len(document['paths'])} paths, {len(document['components']['schemas'])} schemas; "
          f"errata applied: {', '.join(applied) or 'none'}", file=sys.stderr)


if __name__ == "__main__":
    main()
