#!/usr/bin/env python3
"""Derive the vnflcm 2.0.0 (ETSI GS NFV-SOL 003 V3.3.1) base dictionary from ETSI's OpenAPI bundle.

Run once, by hand, when the 2.0.0 base is (re)built; the JSON it writes is the source of truth
afterwards and is frozen by the golden files. It is kept so a reviewer can reproduce the data:

    python3 schemas/tools/derive_vnflcm_2_0_0.py ../shared/etsi/sol003-v3.3.1-vnflcm-openapi.json

What it does, in order:
1. takes every request body and response schema from the bundle and strips the prose
   (`description`): the structure is what interoperability needs, the ETSI text stays in ETSI's
   documents;
2. applies the errata in data/vnflcm/etsi-sol003-v3.3.1-errata.json (also written here), each a
   whole-subtree replacement with its reason and clause. The Rust test
   `v2_dictionary_matches_etsi_bundle` applies the same file to the bundle and checks that
   expanding our $refs gives back exactly the bundle's schemas;
3. factors the types the bundle inlines into named `$defs` (ETSI type names), replacing every
   structurally identical subtree by a `$ref`;
4. adds the types the bundle does not carry (CancelMode, the three notifications and LccnLinks,
   which live in the separate notification API of SOL003 V3.3.1 clauses 5.5.2.14 and
   5.5.2.17-19, 5.5.3.16; cross-checked with Tacker's tacker/sol_refactored/objects/v2).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "vnflcm")

DOC_ONLY = {"description", "example", "examples"}


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in DOC_ONLY}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def canon(node):
    return json.dumps(node, sort_keys=True, separators=(",", ":"))


def at(node, path):
    for part in path.strip("/").split("/"):
        if part:
            node = node[int(part)] if isinstance(node, list) else node[part]
    return node


# Bundle roots: dictionary name -> where the bundle keeps its schema.
REQUESTS = [
    "CreateVnfRequest",
    "InstantiateVnfRequest",
    "TerminateVnfRequest",
    "ScaleVnfRequest",
    "ScaleVnfToLevelRequest",
    "HealVnfRequest",
    "ChangeExtVnfConnectivityRequest",
    "ChangeCurrentVnfPkgRequest",
    "ChangeVnfFlavourRequest",
    "OperateVnfRequest",
    "VnfInfoModificationRequest",
    "LccnSubscriptionRequest",
]
RESPONSES = {
    "VnfInstance": "IndividualVnfInstance.Get.200",
    "VnfLcmOpOcc": "IndividualVnfLcmOpOcc.Get.200",
    "LccnSubscription": "IndividualSubscription.Get.200",
}


def bundle_roots(bundle):
    roots = {}
    for name in REQUESTS:
        roots[name] = strip(bundle["components"]["requestBodies"][name]["content"]["application/json"]["schema"])
    for name, response in RESPONSES.items():
        roots[name] = strip(bundle["components"]["responses"][response]["content"]["application/json"]["schema"])
    api = bundle["paths"]["/api_versions"]["get"]["responses"]["200"]
    roots["ApiVersionInformation"] = strip(api["content"]["application/json"]["schema"])
    error = bundle["paths"]["/vnf_instances"]["post"]["responses"]["400"]
    roots["ProblemDetails"] = strip(error["content"]["application/json"]["schema"])
    return roots


def build_errata(roots):
    """Known defects of the bundle, fixed as whole-subtree replacements."""
    errata = []
    inst = roots["InstantiateVnfRequest"]
    cp_data = at(inst, "properties/extVirtualLinks/items/properties/extCps/items/properties/cpConfig/"
                       "additionalProperties/properties/cpProtocolData/items")
    ioe_data = cp_data["properties"]["ipOverEthernet"]
    fixed = json.loads(json.dumps(ioe_data))
    one_of = fixed.pop("oneOf")
    assert one_of == [{"required": ["fixedAddresses"]}, {"required": ["numDynamicAddresses"]},
                      {"required": ["ipAddressRange"]}], one_of
    fixed["properties"]["ipAddresses"]["items"]["oneOf"] = [
        {"required": ["fixedAddresses"]},
        {"required": ["numDynamicAddresses"]},
        {"required": ["addressRange"]},
    ]
    errata.append({
        "id": "E1",
        "type": "IpOverEthernetAddressData",
        "clause": "ETSI GS NFV-SOL 003 V3.3.1 clause 4.4.1.10c, table note on ipAddresses",
        "reason": "The bundle puts the one-of (fixedAddresses | numDynamicAddresses | addressRange) on "
                  "ipOverEthernet instead of on each ipAddresses entry and misspells addressRange as "
                  "ipAddressRange, so every real request fails it. Moved to the entries (as Tacker's "
                  "common_types.IpOverEthernetAddressData does).",
        "match": ioe_data,
        "replace": fixed,
    })

    vnf = roots["VnfInstance"]
    cp_info = at(vnf, "properties/instantiatedVnfInfo/properties/extCpInfo/items/properties/cpProtocolInfo/items")
    ioe_info = cp_info["properties"]["ipOverEthernet"]
    fixed = json.loads(json.dumps(ioe_info))
    one_of = fixed.pop("oneOf")
    assert one_of == [{"required": ["addresses"]}, {"required": ["addressRange"]}], one_of
    fixed["properties"]["ipAddresses"]["items"]["oneOf"] = one_of
    errata.append({
        "id": "E2",
        "type": "IpOverEthernetAddressInfo",
        "clause": "ETSI GS NFV-SOL 003 V3.3.1, IpOverEthernetAddressInfo, note on ipAddresses",
        "reason": "Same defect as E1 on the run-time info type: the one-of (addresses | addressRange) "
                  "belongs to each ipAddresses entry.",
        "match": ioe_info,
        "replace": fixed,
    })

    filt = at(roots["LccnSubscriptionRequest"], "properties/filter/properties/vnfInstanceSubscriptionFilter")
    fixed = json.loads(json.dumps(filt))
    any_of = fixed.pop("anyOf")
    assert any_of[0]["oneOf"][0] == {"required": ["vnfdId"]}, any_of
    fixed["not"] = {"anyOf": [
        {"required": ["vnfdIds", "vnfProductsFromProviders"]},
        {"required": ["vnfInstanceIds", "vnfInstanceNames"]},
    ]}
    errata.append({
        "id": "E3",
        "type": "VnfInstanceSubscriptionFilter",
        "clause": "ETSI GS NFV-SOL 003 V3.3.1 clause 4.4.1.5, table note (alternatives)",
        "reason": "The bundle demands one of vnfdId (sic, the attribute is vnfdIds) or "
                  "vnfProductsFromProviders or one of vnfInstanceIds or vnfInstanceNames, which rejects a "
                  "filter by vnfdIds. The note only says the alternatives shall not both be present.",
        "match": filt,
        "replace": fixed,
    })

    op = roots["VnfLcmOpOcc"]
    fixed = json.loads(json.dumps(op))
    one_of = fixed.pop("oneOf")
    assert one_of == [{"required": ["changedInfo"]}, {"required": ["modificationsTriggeredByVnfPkgChange"]}]
    fixed["not"] = {"required": ["changedInfo", "modificationsTriggeredByVnfPkgChange"]}
    errata.append({
        "id": "E4",
        "type": "VnfLcmOpOcc",
        "clause": "ETSI GS NFV-SOL 003 V3.3.1 clause 5.5.2.13, table note on changedInfo",
        "reason": "The bundle requires exactly one of changedInfo and modificationsTriggeredByVnfPkgChange, "
                  "so every operation occurrence without changes (e.g. INSTANTIATE in STARTING) fails. "
                  "The note only forbids both at once.",
        "match": op,
        "replace": fixed,
    })

    mod = roots["VnfInfoModificationRequest"]
    fixed = json.loads(json.dumps(mod))
    props = fixed["properties"]
    rebuilt = {}
    for key, value in props.items():
        rebuilt[key] = value
        if key == "vnfInstanceDescription":
            rebuilt["vnfdId"] = {"type": "string"}
    fixed["properties"] = rebuilt
    errata.append({
        "id": "E5",
        "type": "VnfInfoModificationRequest",
        "clause": "ETSI GS NFV-SOL 003 V3.3.1 clause 5.5.2.12 (vnfdId)",
        "reason": "The bundle still names the package attribute vnfPkgId (SOL003 V2.4.1); V3.3.1 modifies "
                  "the VNFD through vnfdId, as VnfInfoModifications in the same bundle does. vnfdId is "
                  "added; vnfPkgId is kept so the schema stays a superset of the bundle.",
        "match": mod,
        "replace": fixed,
    })

    info = at(roots["VnfInstance"], "properties/instantiatedVnfInfo")
    fixed = json.loads(json.dumps(info))
    props = fixed["properties"]
    rebuilt = {}
    for key, value in props.items():
        rebuilt[key] = value
        if key == "virtualLinkResourceInfo":
            rebuilt["vnfVirtualLinkResourceInfo"] = json.loads(json.dumps(value))
    assert "vnfVirtualLinkResourceInfo" in rebuilt, list(props)
    fixed["properties"] = rebuilt
    errata.append({
        "id": "E6",
        "type": "InstantiatedVnfInfo",
        "clause": "ETSI GS NFV-SOL 003 V3.3.1 clause 5.5.2.2, table 5.5.2.2-1 (instantiatedVnfInfo > vnfVirtualLinkResourceInfo)",
        "reason": "The bundle names the internal VL resources virtualLinkResourceInfo; SOL003 (V2.6.1 here as "
                  "API 1.3.0, and V3.3.1 as implemented by Tacker's InstantiatedVnfInfo objects) names them "
                  "vnfVirtualLinkResourceInfo, which is what clients read. vnfVirtualLinkResourceInfo is added; "
                  "virtualLinkResourceInfo is kept so the schema stays a superset of the bundle.",
        "match": info,
        "replace": fixed,
    })
    return errata


def apply_errata(node, table):
    key = canon(node) if isinstance(node, dict) else None
    if key is not None and key in table:
        node = json.loads(json.dumps(table[key]))
        # A replacement may itself contain fixable subtrees (E4 contains E1/E2 types).
    if isinstance(node, dict):
        return {k: apply_errata(v, table) for k, v in node.items()}
    if isinstance(node, list):
        return [apply_errata(v, table) for v in node]
    return node


def errata_table(errata):
    return {canon(e["match"]): e["replace"] for e in errata}


# Named types: ETSI type name -> (root, path). The first match defines the body; every
# structurally identical subtree anywhere becomes a $ref.
NAMED = [
    ("ResourceHandle", "VnfInstance", "properties/instantiatedVnfInfo/properties/extVirtualLinkInfo/items/properties/resourceHandle"),
    ("Link", "VnfInstance", "properties/_links/properties/self"),
    ("VimConnectionInfo", "VnfInstance", "properties/vimConnectionInfo/additionalProperties"),
    ("ScaleInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/scaleStatus/items"),
    ("IpOverEthernetAddressInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extCpInfo/items/properties/cpProtocolInfo/items/properties/ipOverEthernet"),
    ("CpProtocolInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extCpInfo/items/properties/cpProtocolInfo/items"),
    ("VnfExtCpInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extCpInfo/items"),
    ("IpOverEthernetAddressData", "InstantiateVnfRequest", "properties/extVirtualLinks/items/properties/extCps/items/properties/cpConfig/additionalProperties/properties/cpProtocolData/items/properties/ipOverEthernet"),
    ("CpProtocolData", "InstantiateVnfRequest", "properties/extVirtualLinks/items/properties/extCps/items/properties/cpConfig/additionalProperties/properties/cpProtocolData/items"),
    ("VnfExtCpConfig", "InstantiateVnfRequest", "properties/extVirtualLinks/items/properties/extCps/items/properties/cpConfig/additionalProperties"),
    ("VnfExtCpData", "InstantiateVnfRequest", "properties/extVirtualLinks/items/properties/extCps/items"),
    ("ExtLinkPortData", "InstantiateVnfRequest", "properties/extVirtualLinks/items/properties/extLinkPorts/items"),
    ("ExtVirtualLinkData", "InstantiateVnfRequest", "properties/extVirtualLinks/items"),
    ("VnfLinkPortData", "InstantiateVnfRequest", "properties/extManagedVirtualLinks/items/properties/vnfLinkPort/items"),
    ("ExtManagedVirtualLinkData", "InstantiateVnfRequest", "properties/extManagedVirtualLinks/items"),
    ("ExtLinkPortInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extVirtualLinkInfo/items/properties/extLinkPorts/items"),
    ("ExtVirtualLinkInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extVirtualLinkInfo/items"),
    ("VnfLinkPortInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extManagedVirtualLinkInfo/items/properties/vnfLinkPorts/items"),
    ("ExtManagedVirtualLinkInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/extManagedVirtualLinkInfo/items"),
    ("MonitoringParameter", "VnfInstance", "properties/instantiatedVnfInfo/properties/monitoringParameters/items"),
    ("VnfcCpInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/vnfcResourceInfo/items/properties/vnfcCpInfo/items"),
    ("VnfcResourceInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/vnfcResourceInfo/items"),
    ("VnfVirtualLinkResourceInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/virtualLinkResourceInfo/items"),
    ("VirtualStorageResourceInfo", "VnfInstance", "properties/instantiatedVnfInfo/properties/virtualStorageResourceInfo/items"),
    ("InstantiatedVnfInfo", "VnfInstance", "properties/instantiatedVnfInfo"),
    ("VnfInstanceSubscriptionFilter", "LccnSubscriptionRequest", "properties/filter/properties/vnfInstanceSubscriptionFilter"),
    ("LifecycleChangeNotificationsFilter", "LccnSubscriptionRequest", "properties/filter"),
    ("SubscriptionAuthentication", "LccnSubscriptionRequest", "properties/authentication"),
    ("AffectedVnfc", "VnfLcmOpOcc", "properties/resourceChanges/properties/affectedVnfcs/items"),
    ("AffectedVirtualLink", "VnfLcmOpOcc", "properties/resourceChanges/properties/affectedVirtualLinks/items"),
    ("AffectedExtLinkPort", "VnfLcmOpOcc", "properties/resourceChanges/properties/affectedExtLinkPorts/items"),
    ("AffectedVirtualStorage", "VnfLcmOpOcc", "properties/resourceChanges/properties/affectedVirtualStorages/items"),
    ("VnfInfoModifications", "VnfLcmOpOcc", "properties/changedInfo"),
    ("ModificationsTriggeredByVnfPkgChange", "VnfLcmOpOcc", "properties/modificationsTriggeredByVnfPkgChange"),
    ("ProblemDetails", "ProblemDetails", ""),
]

ENUMS = {
    # Enumerations whose ETSI type name is worth a $def because several types share them.
    "LcmOperationType": ("VnfLcmOpOcc", "properties/operation"),
    "LcmOperationStateType": ("VnfLcmOpOcc", "properties/operationState"),
}


def factor(roots):
    named = {}
    order = []
    for name, root, path in NAMED:
        body = at(roots[root], path)
        named[canon(body)] = name
        order.append((name, body))
    for name, (root, path) in ENUMS.items():
        body = at(roots[root], path)
        named[canon(body)] = name
        order.append((name, body))

    def replace(node, top_name=None):
        if isinstance(node, dict):
            key = canon(node)
            if key in named and named[key] != top_name:
                return {"$ref": "#/$defs/" + named[key]}
            return {k: replace(v) for k, v in node.items()}
        if isinstance(node, list):
            return [replace(v) for v in node]
        return node

    defs = {}
    for name, body in order:
        defs[name] = replace(body, top_name=name)
    for name, body in roots.items():
        if name not in defs:
            defs[name] = replace(body, top_name=name)
    return defs


def link_ref():
    return {"$ref": "#/$defs/Link"}


def hand_written(defs):
    """Types the LCM bundle does not carry (SOL003 V3.3.1 notification interface)."""
    # 5.5.4.6 CancelModeType; 5.5.2.14 CancelMode.
    defs["CancelMode"] = {
        "type": "object",
        "required": ["cancelMode"],
        "properties": {"cancelMode": {"type": "string", "enum": ["GRACEFUL", "FORCEFUL"]}},
    }
    # 5.5.3.16 LccnLinks; NotificationLink has the same shape as Link (SOL013 clause 8.3.2).
    defs["LccnLinks"] = {
        "type": "object",
        "required": ["vnfInstance", "subscription"],
        "properties": {"vnfInstance": link_ref(), "subscription": link_ref(), "vnfLcmOpOcc": link_ref()},
    }
    # 5.5.2.17
    defs["VnfLcmOperationOccurrenceNotification"] = {
        "type": "object",
        "required": ["id", "notificationType", "subscriptionId", "timeStamp", "notificationStatus",
                     "operationState", "vnfInstanceId", "operation", "isAutomaticInvocation",
                     "vnfLcmOpOccId", "_links"],
        "properties": {
            "id": {"type": "string"},
            "notificationType": {"type": "string", "enum": ["VnfLcmOperationOccurrenceNotification"]},
            "subscriptionId": {"type": "string"},
            "timeStamp": {"type": "string", "format": "date-time"},
            "notificationStatus": {"type": "string", "enum": ["START", "RESULT"]},
            "operationState": {"$ref": "#/$defs/LcmOperationStateType"},
            "vnfInstanceId": {"type": "string"},
            "operation": {"$ref": "#/$defs/LcmOperationType"},
            "isAutomaticInvocation": {"type": "boolean"},
            "verbosity": {"type": "string", "enum": ["FULL", "SHORT"]},
            "vnfLcmOpOccId": {"type": "string"},
            "affectedVnfcs": {"type": "array", "items": {"$ref": "#/$defs/AffectedVnfc"}},
            "affectedVirtualLinks": {"type": "array", "items": {"$ref": "#/$defs/AffectedVirtualLink"}},
            "affectedExtLinkPorts": {"type": "array", "items": {"$ref": "#/$defs/AffectedExtLinkPort"}},
            "affectedVirtualStorages": {"type": "array", "items": {"$ref": "#/$defs/AffectedVirtualStorage"}},
            "changedInfo": {"$ref": "#/$defs/VnfInfoModifications"},
            "changedExtConnectivity": {"type": "array", "items": {"$ref": "#/$defs/ExtVirtualLinkInfo"}},
            "modificationsTriggeredByVnfPkgChange": {"$ref": "#/$defs/ModificationsTriggeredByVnfPkgChange"},
            "error": {"$ref": "#/$defs/ProblemDetails"},
            "_links": {"$ref": "#/$defs/LccnLinks"},
        },
    }
    for name in ("VnfIdentifierCreationNotification", "VnfIdentifierDeletionNotification"):
        # 5.5.2.18 / 5.5.2.19
        defs[name] = {
            "type": "object",
            "required": ["id", "notificationType", "subscriptionId", "timeStamp", "vnfInstanceId", "_links"],
            "properties": {
                "id": {"type": "string"},
                "notificationType": {"type": "string", "enum": [name]},
                "subscriptionId": {"type": "string"},
                "timeStamp": {"type": "string", "format": "date-time"},
                "vnfInstanceId": {"type": "string"},
                "_links": {"$ref": "#/$defs/LccnLinks"},
            },
        }


DICTIONARY = REQUESTS + [
    "CancelMode",
    "VnfInstance",
    "VnfLcmOpOcc",
    "VnfInfoModifications",
    "LccnSubscription",
    "VnfLcmOperationOccurrenceNotification",
    "VnfIdentifierCreationNotification",
    "VnfIdentifierDeletionNotification",
    "ApiVersionInformation",
    "ProblemDetails",
]


def main():
    bundle_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "etsi",
                                                                      "sol003-v3.3.1-vnflcm-openapi.json")
    with open(bundle_path) as f:
        bundle = json.load(f)
    roots = bundle_roots(bundle)
    errata = build_errata(roots)
    table = errata_table(errata)
    fixed_roots = {name: apply_errata(root, table) for name, root in roots.items()}
    defs = factor(fixed_roots)
    hand_written(defs)
    document = {
        "api": "vnflcm",
        "version": "2.0.0",
        "etsiDocument": "ETSI GS NFV-SOL 003 V3.3.1",
        "provenance": "Derived by schemas/tools/derive_vnflcm_2_0_0.py from ETSI's SOL003 V3.3.1 VNF LCM "
                      "OpenAPI bundle (API 2.0.0), prose stripped, errata etsi-sol003-v3.3.1-errata.json "
                      "applied; notifications and CancelMode from SOL003 V3.3.1 clauses 5.5.2.14, "
                      "5.5.2.17-19 and 5.5.3.16.",
        "dictionary": DICTIONARY,
        "$defs": dict(sorted(defs.items())),
    }
    missing = [n for n in DICTIONARY if n not in document["$defs"]]
    assert not missing, missing
    with open(os.path.join(DATA, "etsi-sol003-v3.3.1-errata.json"), "w") as f:
        json.dump({"bundle": "sol003-v3.3.1-vnflcm-openapi.json", "errata": errata}, f, indent=1)
        f.write("\n")
    with open(os.path.join(DATA, "2.0.0.json"), "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
