#!/usr/bin/env python3
"""Write the vnflcm 1.3.0 (ETSI GS NFV-SOL 003 V2.6.1) base dictionary.

No machine-readable SOL003 V2.6.1 is available here, so 1.3.0 is written out from the V3.3.1 types
(data/vnflcm/2.0.0.json) by taking away, one by one, what SOL003 V3.3.1 added or reshaped. Run once;
the JSON written is the source of truth afterwards and frozen by the golden files:

    python3 schemas/tools/derive_vnflcm_1_3_0.py

Evidence for each step is given beside it. "Tacker v1" is OpenStack Tacker's legacy VNF LCM API,
which implements SOL003 V2.6.1 (tacker/api/schemas/vnf_lcm.py, tacker/objects/); "Tacker
migration" is tacker/db/migration/migrate_to_v2.py, whose notes list what V2.6.1 lacks; "ETSI
V2.4.1" is ETSI's SOL003 V2.4.1 notification OpenAPI as vendored by ONAP
(so-adapters-so-etsi-sol003-adapter, SOL003-VNFLifecycleManagementNotification-API.json).
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "vnflcm")


def ref(name):
    return {"$ref": "#/$defs/" + name}


def drop(defs, type_name, *props):
    schema = defs[type_name]
    for prop in props:
        assert prop in schema["properties"], (type_name, prop)
        del schema["properties"][prop]
        if prop in schema.get("required", []):
            schema["required"].remove(prop)
    if "required" in schema and not schema["required"]:
        del schema["required"]


def vim_list(node):
    """A V3.3.1 map of VimConnectionInfo becomes the V2.6.1 array (4.4.1.6; Tacker v1)."""
    if isinstance(node, dict):
        if node == {"type": "object", "additionalProperties": ref("VimConnectionInfo")}:
            return {"type": "array", "items": ref("VimConnectionInfo")}
        return {k: vim_list(v) for k, v in node.items()}
    if isinstance(node, list):
        return [vim_list(v) for v in node]
    return node


def main():
    with open(os.path.join(DATA, "2.0.0.json")) as f:
        v2 = json.load(f)
    defs = v2["$defs"]

    # Release 3 additions that V2.6.1 does not have at all: change current VNF package (granting
    # lists CHANGE_VNFPKG "since 1.4.0" = SOL003 V3.3.1, Tacker v1 routes no change_vnfpkg) and
    # VNF snapshots.
    del defs["ChangeCurrentVnfPkgRequest"]
    del defs["ModificationsTriggeredByVnfPkgChange"]
    del defs["VnfLinkPortData"]
    for enum_name in ("LcmOperationType",):
        defs[enum_name]["enum"] = [v for v in defs[enum_name]["enum"]
                                   if v not in ("CREATE_SNAPSHOT", "REVERT_TO_SNAPSHOT", "CHANGE_VNFPKG")]

    # 4.4.1.6: entries of the vimConnectionInfo array carry their own id (required); V3.3.1 moved
    # the id to the map key.
    vim = defs["VimConnectionInfo"]
    vim["required"] = ["id"] + vim["required"]
    vim["properties"] = {"id": {"type": "string"}, **vim["properties"]}
    defs = vim_list(defs)

    # 4.4.1.10 / 4.4.1.10a: cpConfig is an array of VnfExtCpConfig identified by cpInstanceId
    # (Tacker v1 schema _vnfExtCpConfig); parentCpConfigId (trunking) and the map keyed by
    # cpConfigId are V3.3.1.
    defs["VnfExtCpData"]["properties"]["cpConfig"] = {"type": "array", "items": ref("VnfExtCpConfig")}
    cfg = defs["VnfExtCpConfig"]
    cfg.pop("anyOf")
    cfg["properties"] = {
        "cpInstanceId": {"type": "string"},
        "linkPortId": {"type": "string"},
        "cpProtocolData": cfg["properties"]["cpProtocolData"],
    }
    # segmentationId is V3.3.1 (not in Tacker v1 _ipOverEthernetAddressData).
    drop(defs, "IpOverEthernetAddressData", "segmentationId")
    drop(defs, "IpOverEthernetAddressInfo", "segmentationId")
    # Multi-site and externally managed link ports are V3.3.1 (Tacker v1 _extManagedVirtualLinkData).
    drop(defs, "ExtManagedVirtualLinkData", "vnfLinkPort", "extManagedMultisiteVirtualLinkId")
    drop(defs, "ExtManagedVirtualLinkInfo", "vnfdId", "extManagedMultisiteVirtualLinkId")

    # Run-time information. vnfdId on nested entries exists for change current VNF package
    # (V3.3.1); Tacker migration: "cpConfigId is not defined in SOL003 v2.6.1", "CurrentVnfExtCpData
    # is not defined in SOL003 v2.6.1", "maxScaleLevels is not defined in SOL003 v2.6.1",
    # "cpInstanceType is not defined in the v1 vnfLinkPortInfo".
    drop(defs, "ScaleInfo", "vnfdId")
    drop(defs, "MonitoringParameter", "vnfdId")
    ext_cp = defs["VnfExtCpInfo"]
    drop(defs, "VnfExtCpInfo", "cpConfigId", "vnfdId", "associatedVnfVirtualLinkId")
    ext_cp.pop("oneOf")
    drop(defs, "ExtVirtualLinkInfo", "currentVnfExtCpData")
    drop(defs, "VnfLinkPortInfo", "cpInstanceType")
    drop(defs, "VnfcResourceInfo", "vnfdId", "zoneId")
    drop(defs, "VnfVirtualLinkResourceInfo", "vnfdId", "zoneId")
    drop(defs, "VirtualStorageResourceInfo", "vnfdId", "zoneId")
    info = defs["InstantiatedVnfInfo"]
    drop(defs, "InstantiatedVnfInfo", "maxScaleLevels")
    # V2.6.1 names the array vnfVirtualLinkResourceInfo (Tacker v1 objects and migration).
    info["properties"] = {("vnfVirtualLinkResourceInfo" if k == "virtualLinkResourceInfo" else k): v
                          for k, v in info["properties"].items()}
    links = defs["VnfInstance"]["properties"]["_links"]["properties"]
    del links["createSnapshot"]
    del links["revertToSnapshot"]

    # Operation occurrences: no snapshot, no package change, and the V3.3.1 resource-change
    # attributes that Tacker migration fills with None ("v1 -> v2": vnfdId, resourceDefinitionId,
    # zoneId, vnfLinkPortIds, affectedExtLinkPorts).
    op = defs["VnfLcmOpOcc"]
    drop(defs, "VnfLcmOpOcc", "modificationsTriggeredByVnfPkgChange", "vnfSnapshotInfoId")
    op.pop("not")
    del op["properties"]["_links"]["properties"]["vnfSnapshot"]
    del op["properties"]["resourceChanges"]["properties"]["affectedExtLinkPorts"]
    del defs["AffectedExtLinkPort"]
    drop(defs, "AffectedVnfc", "vnfdId", "resourceDefinitionId", "zoneId")
    drop(defs, "AffectedVirtualLink", "vnfdId", "vnfLinkPortIds", "resourceDefinitionId", "zoneId")
    drop(defs, "AffectedVirtualStorage", "vnfdId", "resourceDefinitionId", "zoneId")

    # Requests. V2.6.1 5.5.2.12 deletes VIM connections through vimConnectionInfoDeleteIds (the
    # V3.3.1 map is merge-patched with null instead) and modifies the VNFD through vnfdId;
    # vnfPkgId was dropped in V2.6.1 (tacker-specs victoria enhance-vnf-lcm-api-support).
    mod = defs["VnfInfoModificationRequest"]
    drop(defs, "VnfInfoModificationRequest", "vnfPkgId")
    mod["properties"]["vimConnectionInfoDeleteIds"] = {"type": "array", "items": {"type": "string"}}
    # extensions / vnfConfigurableProperties at instantiation and flavour change are V3.3.1
    # additions (Tacker v1 instantiate schema has neither).
    drop(defs, "InstantiateVnfRequest", "extensions", "vnfConfigurableProperties")
    drop(defs, "ChangeVnfFlavourRequest", "extensions", "vnfConfigurableProperties")

    # Notifications: verbosity (FULL/SHORT) is V3.3.1 (not in ETSI V2.4.1, not in Tacker v1
    # subscriptions); subscriptionId of the identifier notifications is optional in ETSI V2.4.1.
    drop(defs, "LccnSubscriptionRequest", "verbosity")
    drop(defs, "LccnSubscription", "verbosity")
    drop(defs, "VnfLcmOperationOccurrenceNotification", "verbosity", "affectedExtLinkPorts",
         "modificationsTriggeredByVnfPkgChange")
    for name in ("VnfIdentifierCreationNotification", "VnfIdentifierDeletionNotification"):
        defs[name]["required"].remove("subscriptionId")

    dictionary = [n for n in v2["dictionary"] if n != "ChangeCurrentVnfPkgRequest"]
    document = {
        "api": "vnflcm",
        "version": "1.3.0",
        "etsiDocument": "ETSI GS NFV-SOL 003 V2.6.1",
        "provenance": "Written by schemas/tools/derive_vnflcm_1_3_0.py from the V3.3.1 types minus the "
                      "V3.3.1 additions and reshapes; evidence per step in that script (Tacker v1 "
                      "schemas and objects, Tacker's v1->v2 migration notes, ETSI SOL003 V2.4.1 "
                      "notification OpenAPI).",
        "dictionary": dictionary,
        "$defs": dict(sorted(defs.items())),
    }
    text = json.dumps(document, indent=1)
    for gone in ("ChangeCurrentVnfPkgRequest", "ModificationsTriggeredByVnfPkgChange", "VnfLinkPortData",
                 "AffectedExtLinkPort"):
        assert '"#/$defs/' + gone + '"' not in text, gone
    with open(os.path.join(DATA, "1.3.0.json"), "w") as f:
        f.write(text)
        f.write("\n")


if __name__ == "__main__":
    main()
