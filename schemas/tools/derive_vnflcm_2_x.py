#!/usr/bin/env python3
"""Write the vnflcm 2.1.0, 2.2.0, 2.3.0, 2.10.0 and 2.12.0 deltas (data/vnflcm/<v>.delta.json).

Run by hand from the workspace root when the deltas are (re)built; the JSON it writes is the source
of truth afterwards and is frozen by the golden files:

    python3 schemas/tools/derive_vnflcm_2_x.py [ETSI_DIR]

Which release adds what comes from `mano_model_releases.py` (attributes present in one
etsi-mano-model release and absent in the previous one), checked by hand against the V3.7.1 YAML.
Shapes of SOL003 V3.x attributes are taken from ETSI's V3.7.1 OpenAPI (ETSI_DIR, default
../shared/etsi) with prose stripped, ETSI's scalar aliases (Identifier, DateTime, ...) inlined and
references to types the registry names kept as `$ref`s; Release 4 shapes (no YAML here) are written
below from the etsi-mano-model 4.3.1 / 4.5.1 field types and @NotNull flags. Every op carries its
source. The test `v2_3_0_matches_etsi_sol003_v3_7_1` then compares the composed 2.3.0 with the YAML
type by type; what differs is listed with its reason in data/vnflcm/etsi-sol003-v3.7.1-errata.json.
"""

import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "vnflcm")
DOC_ONLY = {"description", "example", "examples"}
YAML_FILES = [
    "SOL003/VNFLifecycleManagement/definitions/SOL003VNFLifecycleManagement_def.yaml",
    "SOL003/General_Definitions/SOL003_def.yaml",
    "SOL003/VNFLifecycleManagementNotification/definitions/SOL003VNFLifecycleManagementNotification_def.yaml",
]
MODEL = "openmsa/etsi-mano-model"


class Yaml:
    def __init__(self, etsi_dir):
        root = os.path.join(etsi_dir, "sol003-v3.7.1")
        self.defs = {}
        for rel in YAML_FILES:
            with open(os.path.join(root, rel)) as f:
                for name, schema in yaml.safe_load(f)["definitions"].items():
                    self.defs[name] = schema

    def shape(self, node, named):
        """Prose stripped; $refs to `named` types kept as #/$defs refs, every other $ref inlined."""
        if isinstance(node, dict):
            if "$ref" in node:
                target = node["$ref"].rsplit("/", 1)[-1]
                if target in named:
                    return {"$ref": "#/$defs/" + target}
                return self.shape(self.defs[target], named)
            return {k: self.shape(v, named) for k, v in node.items() if k not in DOC_ONLY}
        if isinstance(node, list):
            return [self.shape(v, named) for v in node]
        return node

    def prop(self, type_name, *path, named):
        node = self.defs[type_name]
        for part in path:
            node = node["properties"][part] if part != "items" else node["items"]
        return self.shape(node, named)


def ref(name):
    return {"$ref": "#/$defs/" + name}


def array_of(name):
    return {"type": "array", "items": ref(name)}


STRINGS = {"type": "array", "items": {"type": "string"}}


def delta(version, base, document, ops):
    return {"api": "vnflcm", "version": version, "base": base, "etsiDocument": document, "breaking": False,
            "ops": ops}


def add_property(target, name, schema, source):
    return {"op": "add_property", "target": target, "name": name, "schema": schema, "source": source}


def add_type(name, schema, source, export=False):
    op = {"op": "add_type", "name": name, "schema": schema, "source": source}
    if export:
        op["export"] = True
    return op


def add_enum_value(target, value, source):
    return {"op": "add_enum_value", "target": target, "value": value, "source": source}


def add_alternative(target, keyword, schema, source):
    return {"op": "add_alternative", "target": target, "keyword": keyword, "schema": schema, "source": source}


def model(release, where):
    prev = {"3.5.1": "3.3.1", "3.6.1": "3.5.1", "4.3.1": "3.6.1", "4.5.1": "4.3.1"}[release]
    return f"present in {MODEL} {release} {where}, absent in {prev}"


def v2_1_0(y, existing):
    named = set(existing) | {"VipCpInfo", "AffectedVipCp"}
    doc = "ETSI GS NFV-SOL 003 V3.5.1"
    old = json.load(open(os.path.join(DATA, "2.1.0.delta.json")))
    auth_ops = [op for op in old["ops"] if "OAUTH2_CLIENT_CERT" in op["source"] or "paramsOauth2ClientCert" in op["source"]]
    assert len(auth_ops) == 2, auth_ops
    vip = y.shape(y.defs["VipCpInfo"], named)
    del vip["properties"]["vnfdId"]  # added by V3.6.1 (2.2.0)
    lcm = "VnfLcmOpOcc (clause 5.5.2.13)"
    ops = auth_ops + [
        add_type("VipCpInfo", vip, f"{doc} clause 5.5.3.28 VipCpInfo (shape: V3.7.1 OpenAPI VipCpInfo without vnfdId, "
                 f"which V3.6.1 added); {model('3.5.1', 'em/vnflcm/VipCpInfo')}."),
        add_property("/$defs/InstantiatedVnfInfo", "vipCpInfo", y.prop("VnfInstance", "instantiatedVnfInfo", "vipCpInfo", named=named),
                     f"{doc} clause 5.5.2.2 VnfInstance.instantiatedVnfInfo.vipCpInfo; {model('3.5.1', 'VnfInstanceInstantiatedVnfInfo')}."),
        add_type("AffectedVipCp", y.shape(y.defs["AffectedVipCp"], named),
                 f"{doc} AffectedVipCp (V3.7.1 OpenAPI AffectedVipCp); {model('3.5.1', 'em/vnflcm/AffectedVipCp (changeType ADDED, REMOVED, MODIFIED)')}."),
        add_property("/$defs/VnfLcmOpOcc", "affectedVipCps", array_of("AffectedVipCp"),
                     f"{doc} {lcm} affectedVipCps; {model('3.5.1', 'VnfLcmOpOcc')}; V3.7.1 OpenAPI keeps it at the top level of VnfLcmOpOcc."),
        add_property("/$defs/VnfLcmOperationOccurrenceNotification", "affectedVipCps", array_of("AffectedVipCp"),
                     f"{doc} clause 5.5.2.17 VnfLcmOperationOccurrenceNotification.affectedVipCps; {model('3.5.1', 'vnfm/vnflcm/VnfLcmOperationOccurrenceNotification')}."),
        add_property("/$defs/VnfLcmOpOcc", "lcmCoordinations", y.prop("VnfLcmOpOcc", "lcmCoordinations", named=named),
                     f"{doc} {lcm} lcmCoordinations (LCM coordination, SOL002 clause 10); {model('3.5.1', 'VnfLcmOpOcc (VnfLcmOpOccLcmCoordinations)')}; shape from the V3.7.1 OpenAPI."),
        add_property("/$defs/VnfLcmOpOcc", "rejectedLcmCoordinations", y.prop("VnfLcmOpOcc", "rejectedLcmCoordinations", named=named),
                     f"{doc} {lcm} rejectedLcmCoordinations; {model('3.5.1', 'VnfLcmOpOcc (VnfLcmOpOccRejectedLcmCoordinations)')}; shape from the V3.7.1 OpenAPI."),
        add_property("/$defs/VnfLcmOpOcc", "warnings", y.prop("VnfLcmOpOcc", "warnings", named=named),
                     f"{doc} {lcm} warnings; {model('3.5.1', 'VnfLcmOpOcc')}."),
        add_property("/$defs/VnfExtCpConfig", "createExtLinkPort", {"type": "boolean"},
                     f"{doc} clause 4.4.1.10b VnfExtCpConfig.createExtLinkPort; {model('3.5.1', 'VnfExtCpConfig')}."),
        add_property("/$defs/ExtLinkPortData", "trunkResourceId", {"type": "string"},
                     f"{doc} clause 4.4.1.14 ExtLinkPortData.trunkResourceId; {model('3.5.1', 'ExtLinkPortData')}."),
        add_property("/$defs/ExtLinkPortInfo", "trunkResourceId", {"type": "string"},
                     f"{doc} ExtLinkPortInfo.trunkResourceId; {model('3.5.1', 'ExtLinkPortInfo')}."),
        add_property("/$defs/ExtLinkPortInfo", "secondaryCpInstanceId", {"type": "string"},
                     f"{doc} ExtLinkPortInfo.secondaryCpInstanceId; {model('3.5.1', 'ExtLinkPortInfo')}."),
        add_property("/$defs/VnfLinkPortInfo", "trunkResourceId", {"type": "string"},
                     f"{doc} VnfLinkPortInfo.trunkResourceId; {model('3.5.1', 'VnfLinkPortInfo')}."),
        add_property("/$defs/VnfLinkPortInfo", "vipCpInstanceId", {"type": "string"},
                     f"{doc} VnfLinkPortInfo.vipCpInstanceId; {model('3.5.1', 'VnfLinkPortInfo')}."),
        add_property("/$defs/IpOverEthernetAddressData", "segmentationType",
                     y.prop("IpOverEthernetAddressData", "segmentationType", named=named),
                     f"{doc} clause 4.4.1.10c IpOverEthernetAddressData.segmentationType (VLAN, INHERIT); {model('3.5.1', 'IpOverEthernetAddressData')}."),
        add_property("/$defs/VnfcCpInfo", "parentCpId", {"type": "string"},
                     f"{doc} clause 5.5.3.5 VnfcResourceInfo.vnfcCpInfo.parentCpId (trunk parent port of a VNFC CP); {model('3.5.1', 'VnfcResourceInfoVnfcCpInfo')}. The V3.7.1 OpenAPI indents it one level too high (erratum)."),
        add_property("/$defs/VnfExtCpInfo", "associatedVipCpId", {"type": "string"},
                     f"{doc} VnfExtCpInfo.associatedVipCpId; {model('3.5.1', 'VnfExtCpInfo')}."),
        add_alternative("/$defs/VnfExtCpInfo", "oneOf", {"required": ["associatedVipCpId"]},
                        f"{doc} VnfExtCpInfo note 1: associatedVnfcCpId, associatedVipCpId and associatedVnfVirtualLinkId are mutually exclusive, exactly one present (V3.7.1 OpenAPI oneOf)."),
    ]
    return delta("2.1.0", "2.0.0", doc, ops)


def v2_2_0(y, existing):
    doc = "ETSI GS NFV-SOL 003 V3.6.1"
    return delta("2.2.0", "2.1.0", doc, [
        add_property("/$defs/VipCpInfo", "vnfdId", {"type": "string"},
                     f"{doc} clause 5.5.3.28 VipCpInfo.vnfdId; {model('3.6.1', 'VipCpInfo')}."),
        add_property("/$defs/VnfInstance/properties/_links", "changeCurrentVnfPkg", ref("Link"),
                     f"{doc} clause 5.5.2.2 VnfInstance._links.changeCurrentVnfPkg; {model('3.6.1', 'VnfInstanceLinks')}."),
        add_property("/$defs/ModificationsTriggeredByVnfPkgChange", "vimConnectionInfo",
                     {"type": "object", "additionalProperties": ref("VimConnectionInfo")},
                     f"{doc} ModificationsTriggeredByVnfPkgChange.vimConnectionInfo (map of VimConnectionInfo); {model('3.6.1', 'ModificationsTriggeredByVnfPkgChange')}."),
    ])


def v2_3_0(y, existing):
    doc = "ETSI GS NFV-SOL 003 V3.7.1"
    return delta("2.3.0", "2.2.0", doc, [
        add_enum_value("/$defs/AffectedExtLinkPort/properties/changeType", "MODIFIED",
                       f"{doc} AffectedExtLinkPort.changeType MODIFIED (V3.7.1 OpenAPI AffectedExtLinkPort; "
                       f"absent in {MODEL} 3.6.1)."),
    ])


RESOURCE_HANDLE_R4 = "ETSI GS NFV-SOL 003 V4.3.1"


def v2_10_0():
    doc = "ETSI GS NFV-SOL 003 V4.3.1"
    m = lambda where: model("4.3.1", where)
    ip_type = {"type": "string", "enum": ["IPV4", "IPV6"]}
    ops = [
        add_type("AdditionalResourceInfo", {"type": "object", "properties": {
            "hostName": {"type": "string"}, "persistentVolume": {"type": "string"}, "additionalInfo": {"type": "object"}}},
            f"{doc} clause 4.4.1.7a AdditionalResourceInfo (hostName, persistentVolume, additionalInfo); {m('AdditionalResourceInfo')}."),
        add_property("/$defs/ResourceHandle", "containerNamespace", {"type": "string"},
                     f"{doc} clause 4.4.1.7 ResourceHandle.containerNamespace; {m('ResourceHandle')}."),
        add_property("/$defs/ResourceHandle", "vimLevelAdditionalResourceInfo", ref("AdditionalResourceInfo"),
                     f"{doc} clause 4.4.1.7 ResourceHandle.vimLevelAdditionalResourceInfo; {m('ResourceHandle')}."),
        add_type("VirtualCpAddressData", {"type": "object", "required": ["type"], "properties": {
            "type": ip_type, "loadBalancerIp": {"type": "string"}}},
            f"{doc} VirtualCpAddressData (type IPV4/IPV6, loadBalancerIp); {m('em/vnflcm/VirtualCpAddressData')}."),
        add_enum_value("/$defs/CpProtocolData/properties/layerProtocol", "IP_FOR_VIRTUAL_CP",
                       f"{doc} CpProtocolData.layerProtocol IP_FOR_VIRTUAL_CP; {m('CpProtocolData')}."),
        add_property("/$defs/CpProtocolData", "virtualCpAddress", ref("VirtualCpAddressData"),
                     f"{doc} CpProtocolData.virtualCpAddress; {m('CpProtocolData')}."),
        add_type("VirtualCpAddressInfo", {"type": "object", "required": ["type"], "properties": {
            "type": ip_type, "loadBalancerIp": {"type": "string"}}},
            f"{doc} VirtualCpAddressInfo (type IPV4/IPV6, loadBalancerIp); {m('em/vnflcm/VirtualCpAddressInfo')}."),
        add_enum_value("/$defs/CpProtocolInfo/properties/layerProtocol", "IP_FOR_VIRTUAL_CP",
                       f"{doc} CpProtocolInfo.layerProtocol IP_FOR_VIRTUAL_CP; {m('CpProtocolInfo')}."),
        add_property("/$defs/CpProtocolInfo", "virtualCpAddress", ref("VirtualCpAddressInfo"),
                     f"{doc} CpProtocolInfo.virtualCpAddress; {m('CpProtocolInfo')}."),
        add_property("/$defs/VnfExtCpConfig", "netAttDefResourceId", STRINGS,
                     f"{doc} clause 4.4.1.10b VnfExtCpConfig.netAttDefResourceId (secondary container cluster network attachment); {m('VnfExtCpConfig')}."),
        add_alternative("/$defs/VnfExtCpConfig", "anyOf", {"required": ["netAttDefResourceId"]},
                        f"{doc} clause 4.4.1.10b VnfExtCpConfig note: linkPortId, cpProtocolData or netAttDefResourceId (the V3.7.1 OpenAPI already lists this alternative)."),
        add_type("NetAttDefResourceData", {"type": "object", "required": ["netAttDefResourceId", "resourceHandle"], "properties": {
            "netAttDefResourceId": {"type": "string"}, "resourceHandle": ref("ResourceHandle")}},
            f"{doc} clause 4.4.1.20 NetAttDefResourceData; {m('NetAttDefResourceData')}."),
        add_property("/$defs/ExtVirtualLinkData", "extNetAttDefResourceData", array_of("NetAttDefResourceData"),
                     f"{doc} clause 4.4.1.11 ExtVirtualLinkData.extNetAttDefResourceData; {m('ExtVirtualLinkData')}."),
        add_property("/$defs/InstantiateVnfRequest", "targetScaleLevelInfo", array_of("ScaleInfo"),
                     f"{doc} clause 5.5.2.4 InstantiateVnfRequest.targetScaleLevelInfo (alternative to instantiationLevelId); {m('InstantiateVnfRequest')}."),
        add_property("/$defs/ChangeVnfFlavourRequest", "targetScaleLevelInfo", array_of("ScaleInfo"),
                     f"{doc} clause 5.5.2.7 ChangeVnfFlavourRequest.targetScaleLevelInfo; {m('ChangeVnfFlavourRequest')}."),
        add_property("/$defs/VnfInstance", "cirConnectionInfo", {"type": "object", "additionalProperties": ref("VimConnectionInfo")},
                     f"{doc} clause 5.5.2.2 VnfInstance.cirConnectionInfo (map of VimConnectionInfo for container infrastructure repositories); {m('VnfInstance')}."),
        add_property("/$defs/VnfInstance", "mciopRepositoryInfo", {"type": "object", "additionalProperties": ref("VimConnectionInfo")},
                     f"{doc} clause 5.5.2.2 VnfInstance.mciopRepositoryInfo (map of VimConnectionInfo for MCIOP repositories); {m('VnfInstance')}."),
        add_property("/$defs/VnfExtCpInfo", "associatedVirtualCpId", {"type": "string"},
                     f"{doc} VnfExtCpInfo.associatedVirtualCpId; {m('VnfExtCpInfo')}."),
        add_alternative("/$defs/VnfExtCpInfo", "oneOf", {"required": ["associatedVirtualCpId"]},
                        f"{doc} VnfExtCpInfo note 1: associatedVnfcCpId, associatedVipCpId, associatedVirtualCpId and associatedVnfVirtualLinkId are mutually exclusive ({MODEL} 4.3.1 VnfExtCpInfo description)."),
        add_property("/$defs/VnfExtCpInfo", "netAttDefResourceId", STRINGS,
                     f"{doc} VnfExtCpInfo.netAttDefResourceId; {m('VnfExtCpInfo')}."),
        add_type("NetAttDefResourceInfo", {"type": "object", "required": ["netAttDefResourceInfoId", "netAttDefResource"], "properties": {
            "netAttDefResourceInfoId": {"type": "string"}, "netAttDefResource": ref("ResourceHandle"),
            "associatedExtCpId": STRINGS, "associatedVnfcCpId": STRINGS}},
            f"{doc} NetAttDefResourceInfo; {m('NetAttDefResourceInfo')}."),
        add_property("/$defs/ExtVirtualLinkInfo", "extNetAttDefResource", array_of("NetAttDefResourceInfo"),
                     f"{doc} ExtVirtualLinkInfo.extNetAttDefResource; {m('ExtVirtualLinkInfo')}."),
        add_property("/$defs/ExtManagedVirtualLinkInfo", "vnfNetAttDefResource", array_of("NetAttDefResourceInfo"),
                     f"{doc} ExtManagedVirtualLinkInfo.vnfNetAttDefResource; {m('ExtManagedVirtualLinkInfo')}."),
        add_property("/$defs/VnfcCpInfo", "netAttDefResourceId", STRINGS,
                     f"{doc} clause 5.5.3.5 VnfcResourceInfo.vnfcCpInfo.netAttDefResourceId; {m('VnfcResourceInfoVnfcCpInfo')}."),
        add_type("McioInfo", {"type": "object",
                              "required": ["mcioId", "mcioName", "mcioNamespace", "vduId", "cismId", "mcioType",
                                           "desiredInstances", "availableInstances"],
                              "properties": {
                                  "mcioId": {"type": "string"}, "mcioName": {"type": "string"},
                                  "mcioNamespace": {"type": "string"}, "vduId": {"type": "string"},
                                  "cismId": {"type": "string"},
                                  # The text names Deployment and StatefulSet and permits
                                  # additional values: an open string, not an enum.
                                  "mcioType": {"type": "string"},
                                  "desiredInstances": {"type": "integer"}, "availableInstances": {"type": "integer"},
                                  "additionalInfo": {"type": "object"}}},
                 f"{doc} McioInfo (managed container infrastructure object; mcioType e.g. Deployment, StatefulSet, additional values permitted); {m('em/vnflcm/McioInfo')}."),
        add_property("/$defs/InstantiatedVnfInfo", "mcioInfo", array_of("McioInfo"),
                     f"{doc} clause 5.5.2.2 VnfInstance.instantiatedVnfInfo.mcioInfo; {m('VnfInstanceInstantiatedVnfInfo')}."),
        add_type("AdditionalServiceInfo", {"type": "object", "required": ["portInfo"], "properties": {
            "portInfo": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["name", "port", "portConfigurable"], "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"},
                    "protocol": {"type": "string", "enum": ["TCP", "UDP", "SCTP"]},
                    "portConfigurable": {"type": "boolean"}}}},
            "serviceInfo": {"type": "object"}}},
            f"{doc} AdditionalServiceInfo (portInfo: name, port, protocol, portConfigurable; serviceInfo); {m('AdditionalServiceInfo')}."),
        add_type("VirtualCpInfo", {"type": "object", "required": ["cpInstanceId", "cpdId", "resourceHandle", "vduIds"], "properties": {
            "cpInstanceId": {"type": "string"}, "cpdId": {"type": "string"}, "resourceHandle": ref("ResourceHandle"),
            "vnfExtCpId": {"type": "string"}, "cpProtocolInfo": array_of("CpProtocolInfo"),
            "vduIds": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "additionalServiceInfo": array_of("AdditionalServiceInfo"), "metadata": {"type": "object"}}},
            f"{doc} VirtualCpInfo; {m('em/vnflcm/VirtualCpInfo')}."),
        add_property("/$defs/InstantiatedVnfInfo", "virtualCpInfo", array_of("VirtualCpInfo"),
                     f"{doc} clause 5.5.2.2 VnfInstance.instantiatedVnfInfo.virtualCpInfo; {m('VnfInstanceInstantiatedVnfInfo')}."),
        add_type("AffectedVirtualCp", {"type": "object", "required": ["cpInstanceId", "cpdId", "changeType"], "properties": {
            "cpInstanceId": {"type": "string"}, "cpdId": {"type": "string"}, "vnfdId": {"type": "string"},
            "changeType": {"type": "string", "enum": ["ADDED", "REMOVED", "MODIFIED"]}}},
            f"{doc} AffectedVirtualCp; {m('em/vnflcm/AffectedVirtualCp')}."),
        add_property("/$defs/VnfLcmOpOcc", "affectedVirtualCps", array_of("AffectedVirtualCp"),
                     f"{doc} clause 5.5.2.13 VnfLcmOpOcc.affectedVirtualCps, beside affectedVipCps. The {MODEL} 4.3.1 VnfLcmOpOcc class lacks it while its notification has it (generator gap assumed)."),
        add_property("/$defs/VnfLcmOperationOccurrenceNotification", "affectedVirtualCps", array_of("AffectedVirtualCp"),
                     f"{doc} clause 5.5.2.17 VnfLcmOperationOccurrenceNotification.affectedVirtualCps; {m('VnfLcmOperationOccurrenceNotification')}."),
    ]
    return delta("2.10.0", "2.3.0", doc, ops)


def v2_12_0():
    doc = "ETSI GS NFV-SOL 003 V4.5.1"
    m = lambda where: model("4.5.1", where)
    subject = {"type": "object", "properties": {k: {"type": "string"} for k in
                                                 ["commonName", "organization", "country", "state", "locality", "emailAddress"]}}
    profile = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "string"}, "issuer": {"type": "string"}, "issuerUniqueIdentifier": {"type": "string"},
        "subject": subject, "subjectUniqueIdentifier": {"type": "string"}, "basicConstraints": {"type": "string"},
        "issuerAltName": STRINGS, "subjectAltName": STRINGS, "nameConstraints": STRINGS}}
    policy = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "string"}, "maxValidityPeriod": {"type": "integer"}, "allowedAlgorithm": {"type": "string"},
        "minimumKeyLength": {"type": "integer"}}}
    protocols = {"type": "string", "enum": ["CMP", "CMPv2", "EST", "SCEP"]}
    endpoint = {"type": "object", "required": ["ipAddress", "link"], "properties": {
        "ipAddress": {"type": "string"}, "link": ref("Link")}}
    cert_conf = {"type": "object", "required": ["securityPolicy"], "properties": {
        "cmfData": {"type": "object", "required": ["endPoint", "supportedProtocol"], "properties": {
            "endPoint": endpoint, "supportedProtocol": {"type": "array", "items": protocols}}},
        "overridingCertificateProfile": {"type": "array", "items": profile},
        "securityPolicy": {"type": "array", "items": policy}}}
    cert_info = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "string"},
        "certificateConfigurationInfo": {"type": "object", "required": ["securityPolicy"], "properties": {
            "certificateBaseProfile": profile,
            "securityPolicy": {"type": "array", "items": policy},
            "delegationSupportedCertificateManagements": {"type": "object"},
            "cmfInfo": {"type": "object", "required": ["id", "endPoint"], "properties": {
                "id": {"type": "string"}, "endPoint": endpoint,
                "supportedProtocols": {"type": "array", "items": protocols},
                "certificateChain": {"type": "object"}}}}},
        "certificateContents": {"type": "array", "items": {
            "type": "object", "required": ["id", "certificateType"], "properties": {
                "id": {"type": "string"}, "certficateDescId": {"type": "string"},
                "certificateType": {"type": "string", "enum": ["VNFCI_CERT", "VNFOAM_CERT"]},
                "supportedCertificateManagements": {"type": "object"}, "version": {"type": "string"},
                "serialNumber": {"type": "integer"}, "signatureAlgorithm": {"type": "string"},
                "issuer": {"type": "string"}, "notBefore": {"type": "string", "format": "date-time"},
                "notAfter": {"type": "string", "format": "date-time"}, "subject": {"type": "string"},
                "publicKeyAlgorithm": {"type": "string"}, "publicKey": {"type": "string"},
                "certificateExtensions": {"type": "object"}}}}}}
    modules = {"type": "array", "items": {"type": "string"}}
    ops = [
        add_property("/$defs/VirtualCpAddressData", "addressPoolName", {"type": "string"},
                     f"{doc} VirtualCpAddressData.addressPoolName; {m('VirtualCpAddressData')}."),
        add_property("/$defs/VirtualCpAddressInfo", "addressPoolName", {"type": "string"},
                     f"{doc} VirtualCpAddressInfo.addressPoolName; {m('VirtualCpAddressInfo')}."),
        add_enum_value("/$defs/LcmOperationType", "SELECT_DEPL_MODS",
                       f"{doc} clause 5.5.4.5 LcmOperationType SELECT_DEPL_MODS (select deployable modules); {m('em/vnflcm/LcmOperationType')} (used by VnfLcmOpOcc.operation, the notification and the subscription filter)."),
        add_type("SelectVnfDeployableModulesRequest", {"type": "object", "properties": {
            "selectedDeployableModule": modules, "targetScaleLevelInfo": array_of("ScaleInfo"),
            "additionalParams": {"type": "object"}}},
            f"{doc} SelectVnfDeployableModulesRequest (task resource select_depl_mods; no mandatory attribute); {m('em/vnflcm/SelectVnfDeployableModulesRequest')}.",
            export=True),
        add_property("/$defs/InstantiateVnfRequest", "selectedDeployableModule", modules,
                     f"{doc} clause 5.5.2.4 InstantiateVnfRequest.selectedDeployableModule; {m('InstantiateVnfRequest')}."),
        add_property("/$defs/ChangeVnfFlavourRequest", "selectedDeployableModule", modules,
                     f"{doc} clause 5.5.2.7 ChangeVnfFlavourRequest.selectedDeployableModule; {m('ChangeVnfFlavourRequest')}."),
        add_property("/$defs/ChangeCurrentVnfPkgRequest", "selectedDeployableModule", modules,
                     f"{doc} ChangeCurrentVnfPkgRequest.selectedDeployableModule; {m('ChangeCurrentVnfPkgRequest')}."),
        add_property("/$defs/InstantiatedVnfInfo", "selectedDeployableModule", modules,
                     f"{doc} clause 5.5.2.2 VnfInstance.instantiatedVnfInfo.selectedDeployableModule; {m('VnfInstanceInstantiatedVnfInfo')}."),
        add_type("CertificateConfigurationData", cert_conf,
                 f"{doc} CertificateConfigurationData (cmfData, overridingCertificateProfile, securityPolicy); {m('em/vnflcm/CertificateConfigurationData')}."),
    ]
    for request in ["CreateVnfRequest", "ChangeVnfFlavourRequest", "ChangeExtVnfConnectivityRequest", "ChangeCurrentVnfPkgRequest"]:
        ops.append(add_property(f"/$defs/{request}", "certificateConfigurationData", ref("CertificateConfigurationData"),
                                f"{doc} {request}.certificateConfigurationData; {m(request)}."))
    ops += [
        add_type("CertificateInfo", cert_info,
                 f"{doc} CertificateInfo (certificateConfigurationInfo, certificateContents); {m('em/vnflcm/CertificateInfo')}."),
        add_property("/$defs/VnfInstance", "certificateInfo", ref("CertificateInfo"),
                     f"{doc} clause 5.5.2.2 VnfInstance.certificateInfo; {m('VnfInstance')}."),
    ]
    for target, where in [("VnfExtCpInfo", "VnfExtCpInfo"), ("McioInfo", "McioInfo"), ("VnfcResourceInfo", "VnfcResourceInfo"),
                          ("VnfcCpInfo", "VnfcResourceInfoVnfcCpInfo")]:
        ops.append(add_property(f"/$defs/{target}", "certificateContentId", {"type": "string"},
                                f"{doc} {target}.certificateContentId; {m(where)}."))
    ops += [
        add_type("PaasServiceInfo", {"type": "object", "required": ["id", "paasServiceId", "paasServiceType", "paasServiceRequestId", "paasServiceHandle"], "properties": {
            "id": {"type": "string"}, "paasServiceId": {"type": "string"}, "paasServiceType": {"type": "string"},
            "paasServiceVersion": {"type": "string"}, "paasServiceRequestId": {"type": "string"},
            "paasServiceHandle": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string"}, "interfaceInfo": {"type": "object"}, "accessInfo": {"type": "object"},
                "extra": {"type": "object"}}},
            "additionalInfo": {"type": "object"}}},
            f"{doc} PaasServiceInfo (paasServiceHandle: PaasServiceHandle); {m('em/vnflcm/PaasServiceInfo')}."),
        add_property("/$defs/InstantiatedVnfInfo", "vnfPaasServiceInfo", array_of("PaasServiceInfo"),
                     f"{doc} clause 5.5.2.2 VnfInstance.instantiatedVnfInfo.vnfPaasServiceInfo; {m('VnfInstanceInstantiatedVnfInfo')}."),
        add_type("AffectedCertificate", {"type": "object", "required": ["certificateInfoId", "changeType"], "properties": {
            "certificateInfoId": {"type": "string"}, "cmfInfoId": {"type": "string"},
            "certificateBaseProfileId": {"type": "string"}, "securityPolicyId": {"type": "string"},
            "certificateContentId": {"type": "string"},
            "changeType": {"type": "string", "enum": ["ADD", "REMOVE", "MODIFY"]}}},
            f"{doc} AffectedCertificate; {m('AffectedCertificate')}."),
        add_property("/$defs/VnfLcmOperationOccurrenceNotification", "affectedCertificates", array_of("AffectedCertificate"),
                     f"{doc} clause 5.5.2.17 VnfLcmOperationOccurrenceNotification.affectedCertificates; {m('VnfLcmOperationOccurrenceNotification')}."),
    ]
    return delta("2.12.0", "2.10.0", doc, ops)


def main():
    etsi_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "etsi")
    y = Yaml(etsi_dir)
    with open(os.path.join(DATA, "2.0.0.json")) as f:
        existing = set(json.load(f)["$defs"])
    for d in [v2_1_0(y, existing), v2_2_0(y, existing), v2_3_0(y, existing), v2_10_0(), v2_12_0()]:
        with open(os.path.join(DATA, f"{d['version']}.delta.json"), "w") as f:
            json.dump(d, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
