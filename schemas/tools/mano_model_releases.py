#!/usr/bin/env python3
"""List what each SOL003 release adds to the VNF LCM data model, from generated Java models.

Evidence for the vnflcm 2.x deltas (data/vnflcm/2.*.delta.json). GitHub openmsa/etsi-mano-model
holds openapi-generator models of each SOL002/SOL003 release (folders 3.3.1, 3.5.1, 3.6.1, 4.3.1,
4.5.1); this script reads them from a bare mirror (default /work/.mirror/openmsa+etsi-mano-model/repo,
or the first argument), walks every attribute reachable from the LCM requests, resources and
notifications, and prints per pair of consecutive releases the attributes, required members and
enumeration values that appear or disappear. Attribute paths use JSON names
(`VnfInstance/instantiatedVnfInfo/vipCpInfo[]/cpdId`), so the generator's class names (e.g.
VnfInstanceInstantiatedVnfInfo) do not matter. 3.3.1 is the calibration baseline: its output,
compared with data/vnflcm/2.0.0.json, shows the model's quirks (SOL002 flavour of some requests,
Map<String,String> for KeyValuePairs), so only differences between releases are used as evidence.

    python3 schemas/tools/mano_model_releases.py [MIRROR] [--paths RELEASE]

Facts only are taken from the models (attribute names, required flags, enum values); shapes come
from ETSI's V3.7.1 OpenAPI where it has them and from the model's field types otherwise.
"""

import re
import subprocess
import sys

MIRROR = "/work/.mirror/openmsa+etsi-mano-model/repo"
RELEASES = ["3.3.1", "3.5.1", "3.6.1", "4.3.1", "4.5.1"]
ROOTS = [
    "CreateVnfRequest", "InstantiateVnfRequest", "TerminateVnfRequest", "ScaleVnfRequest",
    "ScaleVnfToLevelRequest", "HealVnfRequest", "ChangeExtVnfConnectivityRequest",
    "ChangeCurrentVnfPkgRequest", "ChangeVnfFlavourRequest", "OperateVnfRequest",
    "VnfInfoModificationRequest", "LccnSubscriptionRequest", "CancelMode", "VnfInstance", "VnfLcmOpOcc",
    "VnfInfoModifications", "LccnSubscription", "VnfLcmOperationOccurrenceNotification",
    "VnfIdentifierCreationNotification", "VnfIdentifierDeletionNotification",
    "SelectVnfDeployableModulesRequest",
]
# Where the generator put the VNF LCM types; other packages are used only when a field's import
# points there (e.g. VimConnectionInfo in vnfm/grant).
LCM_PACKAGES = ["em/vnflcm", "vnfm/vnflcm", "nfvo/vnflcm", "em"]
SCALARS = {"String": "string", "Integer": "integer", "Long": "integer", "Boolean": "boolean",
           "BigDecimal": "number", "Float": "number", "Double": "number", "OffsetDateTime": "date-time",
           "Object": "any", "URI": "string", "LocalDate": "string"}


def git(mirror, *args):
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True, text=True).stdout


class Release:
    def __init__(self, mirror, release):
        self.mirror = mirror
        self.release = release
        base = f"{release}/model/src/main/java/com/ubiqube/etsi/mano/v{release.replace('.', '')}/model/"
        self.base = base
        self.files = {}
        for path in git(mirror, "ls-tree", "-r", "--name-only", "HEAD", base).split():
            if path.endswith(".java"):
                rel = path[len(base):]
                pkg, _, cls = rel.rpartition("/")
                self.files.setdefault(cls[:-5], []).append((pkg, path))
        self.cache = {}

    def source(self, name, importer_pkg=None, imports=()):
        candidates = self.files.get(name, [])
        if not candidates:
            return None, None
        for pkg, path in candidates:
            if any(i.endswith(f".{pkg.replace('/', '.')}.{name}") for i in imports):
                return pkg, path
        for want in ([importer_pkg] if importer_pkg else []) + LCM_PACKAGES:
            for pkg, path in candidates:
                if pkg == want:
                    return pkg, path
        return candidates[0]

    def text(self, path):
        if path not in self.cache:
            self.cache[path] = git(self.mirror, "show", f"HEAD:{path}")
        return self.cache[path]


def enum_values(body):
    head = body.split(";", 1)[0]
    return re.findall(r'\b[A-Z0-9_]+\s*\(\s*"([^"]*)"\s*\)', head)


def parse_class(text):
    """Fields (json name -> java type), required json names, inner enums, imports."""
    imports = re.findall(r"^import\s+([\w.]+);", text, re.M)
    fields = {}
    for m in re.finditer(r'@JsonProperty\("([^"]+)"\)\s*(?:@\w+(?:\([^)]*\))?\s*)*private\s+([\w.<>, ?]+?)\s+(\w+)\s*=', text):
        fields[m.group(1)] = (m.group(2).replace(" ", ""), m.group(3))
    required = set()
    for json_name, (_, var) in fields.items():
        getter = re.search(r"public\s+[\w.<>, ?]+\s+(?:get|is)" + re.escape(var[0].upper() + var[1:]) + r"\s*\(", text)
        if not getter:
            continue
        before = text[:getter.start()]
        block = before[max(before.rfind("}"), before.rfind(";")) + 1:]
        if "@NotNull" in block or "RequiredMode.REQUIRED" in block or "required = true" in block:
            required.add(json_name)
    enums = {}
    for m in re.finditer(r"public\s+enum\s+(\w+)\s*\{", text):
        enums[m.group(1)] = enum_values(text[m.end():])
    top_enum = re.search(r"^public\s+enum\s+(\w+)", text, re.M)
    return fields, required, enums, imports, bool(top_enum)


def walk(rel, name, prefix, out, seen, pkg_hint=None, imports=()):
    pkg, path = rel.source(name, pkg_hint, imports)
    if path is None:
        out[prefix] = f"? {name}"
        return
    fields, required, enums, imports, is_enum = parse_class(rel.text(path))
    if is_enum:
        out[prefix] = "enum " + ",".join(sorted(enum_values(rel.text(path).split("enum", 1)[1].split("{", 1)[1])))
        return
    if name in seen:
        out[prefix] = f"-> {name}"
        return
    seen = seen | {name}
    out[prefix] = "object"
    for json_name, (jtype, _) in fields.items():
        here = f"{prefix}/{json_name}" + ("!" if json_name in required else "")
        describe(rel, jtype, here, out, seen, pkg, imports, enums)


def describe(rel, jtype, here, out, seen, pkg, imports, enums):
    m = re.fullmatch(r"(?:List|Set)<(.+)>", jtype)
    if m:
        describe(rel, m.group(1), here + "[]", out, seen, pkg, imports, enums)
        return
    m = re.fullmatch(r"Map<String,(.+)>", jtype)
    if m:
        if m.group(1) in ("String", "Object"):
            out[here] = "map"  # KeyValuePairs
        else:
            describe(rel, m.group(1), here + "{}", out, seen, pkg, imports, enums)
        return
    if jtype in SCALARS:
        out[here] = SCALARS[jtype]
    elif jtype in enums:
        out[here] = "enum " + ",".join(sorted(enums[jtype]))
    else:
        walk(rel, jtype.split(".")[-1], here, out, seen, pkg, imports)


def paths(mirror, release):
    rel = Release(mirror, release)
    out = {}
    for root in ROOTS:
        walk(rel, root, root, out, frozenset())
    return {k: v for k, v in out.items() if not (k in ROOTS and v.startswith("?"))}


def strip_required(path):
    return path.replace("!", "")


def diff(old, new):
    old_plain = {strip_required(k): v for k, v in old.items()}
    new_plain = {strip_required(k): v for k, v in new.items()}
    lines = []
    for key in sorted(set(new_plain) - set(old_plain)):
        lines.append(f"+ {key}: {new_plain[key]}")
    for key in sorted(set(old_plain) - set(new_plain)):
        lines.append(f"- {key}: {old_plain[key]}")
    for key in sorted(set(old_plain) & set(new_plain)):
        if old_plain[key] != new_plain[key]:
            lines.append(f"~ {key}: {old_plain[key]} -> {new_plain[key]}")
    req_old = {strip_required(k) for k in old if k.endswith("!")}
    req_new = {strip_required(k) for k in new if k.endswith("!")}
    for key in sorted((req_new - req_old) & set(old_plain)):
        lines.append(f"! {key}: now required")
    for key in sorted((req_old - req_new) & set(new_plain)):
        lines.append(f"? {key}: now optional")
    return lines


def main():
    args = sys.argv[1:]
    mirror = args.pop(0) if args and not args[0].startswith("--") else MIRROR
    if args[:1] == ["--paths"]:
        for key, value in sorted(paths(mirror, args[1]).items()):
            print(f"{key}: {value}")
        return
    models = {r: paths(mirror, r) for r in RELEASES}
    for old, new in zip(RELEASES, RELEASES[1:]):
        print(f"=== {old} -> {new}")
        for line in diff(models[old], models[new]):
            print(line)


if __name__ == "__main__":
    main()
