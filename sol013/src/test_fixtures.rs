//! Hand-written schemas and resources shaped like SOL003 v3.3.1 VnfInstance and VnfLcmOpOcc
//! (trimmed to the members the tests need).

use serde_json::{Value, json};

/// VnfInstance, draft 2020-12 style (`$defs`).
pub fn vnf_instance_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["id", "vnfdId", "vnfProvider", "vnfProductName", "vnfSoftwareVersion", "vnfdVersion",
                     "instantiationState", "_links"],
        "properties": vnf_instance_properties(),
        "$defs": vnf_instance_defs()
    })
}

fn vnf_instance_properties() -> Value {
    json!({
        "id": {"$ref": "#/$defs/Identifier"},
        "vnfInstanceName": {"type": "string"},
        "vnfInstanceDescription": {"type": "string"},
        "vnfdId": {"$ref": "#/$defs/Identifier"},
        "vnfProvider": {"type": "string"},
        "vnfProductName": {"type": "string"},
        "vnfSoftwareVersion": {"type": "string"},
        "vnfdVersion": {"type": "string"},
        "vnfConfigurableProperties": {"$ref": "#/$defs/KeyValuePairs"},
        "vimConnectionInfo": {
            "type": "object",
            "additionalProperties": {"$ref": "#/$defs/VimConnectionInfo"}
        },
        "instantiationState": {"type": "string", "enum": ["NOT_INSTANTIATED", "INSTANTIATED"]},
        "instantiatedVnfInfo": {
            "type": "object",
            "required": ["flavourId", "vnfState"],
            "properties": {
                "flavourId": {"$ref": "#/$defs/Identifier"},
                "vnfState": {"type": "string", "enum": ["STARTED", "STOPPED"]},
                "scaleStatus": {"type": "array", "items": {"$ref": "#/$defs/ScaleInfo"}},
                "maxScaleLevels": {"type": "array", "items": {"$ref": "#/$defs/ScaleInfo"}},
                "vnfcResourceInfo": {"type": "array", "items": {"$ref": "#/$defs/VnfcResourceInfo"}},
                "localizationLanguage": {"type": "string"}
            }
        },
        "metadata": {"$ref": "#/$defs/KeyValuePairs"},
        "extensions": {"$ref": "#/$defs/KeyValuePairs"},
        "_links": {
            "type": "object",
            "required": ["self"],
            "properties": {
                "self": {"$ref": "#/$defs/Link"},
                "instantiate": {"$ref": "#/$defs/Link"},
                "terminate": {"$ref": "#/$defs/Link"}
            }
        }
    })
}

fn vnf_instance_defs() -> Value {
    json!({
        "Identifier": {"type": "string"},
        "KeyValuePairs": {"type": "object"},
        "Link": {"type": "object", "required": ["href"], "properties": {"href": {"type": "string"}}},
        "ScaleInfo": {
            "type": "object",
            "required": ["aspectId", "scaleLevel"],
            "properties": {
                "aspectId": {"$ref": "#/$defs/Identifier"},
                "scaleLevel": {"type": "integer"}
            }
        },
        "VimConnectionInfo": {
            "type": "object",
            "required": ["vimType"],
            "properties": {
                "vimId": {"$ref": "#/$defs/Identifier"},
                "vimType": {"type": "string"},
                "interfaceInfo": {"$ref": "#/$defs/KeyValuePairs"},
                "accessInfo": {"$ref": "#/$defs/KeyValuePairs"},
                "extra": {"$ref": "#/$defs/KeyValuePairs"}
            }
        },
        "VnfcResourceInfo": {
            "type": "object",
            "required": ["id", "vduId", "computeResource"],
            "properties": {
                "id": {"$ref": "#/$defs/Identifier"},
                "vduId": {"$ref": "#/$defs/Identifier"},
                "computeResource": {
                    "type": "object",
                    "required": ["resourceId"],
                    "properties": {
                        "vimConnectionId": {"$ref": "#/$defs/Identifier"},
                        "resourceId": {"$ref": "#/$defs/Identifier"},
                        "vimLevelResourceType": {"type": "string"}
                    }
                },
                "storageResourceIds": {"type": "array", "items": {"$ref": "#/$defs/Identifier"}},
                "metadata": {"$ref": "#/$defs/KeyValuePairs"}
            }
        }
    })
}

/// VnfLcmOpOcc, draft-07 style (`definitions`).
pub fn vnf_lcm_op_occ_schema() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "id": {"$ref": "#/definitions/Identifier"},
            "operationState": {"type": "string"},
            "stateEnteredTime": {"$ref": "#/definitions/DateTime"},
            "startTime": {"$ref": "#/definitions/DateTime"},
            "vnfInstanceId": {"$ref": "#/definitions/Identifier"},
            "grantId": {"$ref": "#/definitions/Identifier"},
            "operation": {"type": "string"},
            "isAutomaticInvocation": {"type": "boolean"},
            "operationParams": {"type": "object"},
            "isCancelPending": {"type": "boolean"},
            "error": {"$ref": "#/definitions/ProblemDetails"},
            "resourceChanges": {"type": "object"},
            "_links": {"type": "object", "properties": {"self": {"type": "object"}}}
        },
        "definitions": {
            "Identifier": {"type": "string"},
            "DateTime": {"type": "string", "format": "date-time"},
            "ProblemDetails": {
                "type": "object",
                "properties": {
                    "status": {"type": "integer"},
                    "detail": {"type": "string"},
                    "title": {"type": "string"}
                }
            }
        }
    })
}

/// An instantiated VnfInstance as a v2 list would hold it.
pub fn instantiated_vnf_instance() -> Value {
    json!({
        "id": "5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01",
        "vnfInstanceName": "vnf-edge-01",
        "vnfInstanceDescription": "edge router, it's the primary",
        "vnfdId": "b1bb0ce7-ebca-4fa7-95ed-4840d7000000",
        "vnfProvider": "Company",
        "vnfProductName": "Sample VNF",
        "vnfSoftwareVersion": "1.0",
        "vnfdVersion": "1.0",
        "vnfConfigurableProperties": {"isAutoscaleEnabled": true},
        "vimConnectionInfo": {
            "vim1": {
                "vimId": "a6f3e2b5-3d1c-4a55-8f61-0e2f5f7c8d90",
                "vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
                "interfaceInfo": {"endpoint": "http://192.0.2.10/identity/v3"},
                "accessInfo": {"region": "RegionOne", "project": "nfv", "username": "nfv_user"}
            },
            "k8s/west": {"vimType": "kubernetes"}
        },
        "instantiationState": "INSTANTIATED",
        "instantiatedVnfInfo": {
            "flavourId": "simple",
            "vnfState": "STARTED",
            "scaleStatus": [
                {"aspectId": "VDU1_scale", "scaleLevel": 2},
                {"aspectId": "VDU2_scale", "scaleLevel": 0}
            ],
            "maxScaleLevels": [
                {"aspectId": "VDU1_scale", "scaleLevel": 5}
            ],
            "vnfcResourceInfo": [
                {
                    "id": "vnfc-1",
                    "vduId": "VDU1",
                    "computeResource": {
                        "vimConnectionId": "vim1",
                        "resourceId": "3e6cf1a1-0f1b-4b7c-b2e6-2c5b2f0c1a11",
                        "vimLevelResourceType": "OS::Nova::Server"
                    },
                    "storageResourceIds": ["vol-1", "vol-2"],
                    "metadata": {"zone": "az-1"}
                },
                {
                    "id": "vnfc-2",
                    "vduId": "VDU2",
                    "computeResource": {
                        "vimConnectionId": "vim1",
                        "resourceId": "9a1d2f3e-4b5c-4d6e-8f70-a1b2c3d4e5f6",
                        "vimLevelResourceType": "OS::Nova::Server"
                    }
                }
            ]
        },
        "metadata": {
            "tenant": "team a",
            "priority": 2.5,
            "replicas": 3,
            "critical": false,
            "tags": ["edge", "5g"],
            "notes": null
        },
        "extensions": {"site": "tokyo"},
        "_links": {
            "self": {"href": "http://127.0.0.1:9890/vnflcm/v2/vnf_instances/5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01"},
            "terminate": {"href": "http://127.0.0.1:9890/vnflcm/v2/vnf_instances/5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01/terminate"}
        }
    })
}

/// A freshly created VnfInstance: no instantiatedVnfInfo, no metadata, no name.
pub fn not_instantiated_vnf_instance() -> Value {
    json!({
        "id": "0b7c7b0e-1111-4e3a-9d2b-6a8f0c0d0e02",
        "vnfdId": "b1bb0ce7-ebca-4fa7-95ed-4840d7000000",
        "vnfProvider": "Company",
        "vnfProductName": "Sample VNF",
        "vnfSoftwareVersion": "1.0",
        "vnfdVersion": "1.0",
        "instantiationState": "NOT_INSTANTIATED",
        "_links": {
            "self": {"href": "http://127.0.0.1:9890/vnflcm/v2/vnf_instances/0b7c7b0e-1111-4e3a-9d2b-6a8f0c0d0e02"},
            "instantiate": {"href": "http://127.0.0.1:9890/vnflcm/v2/vnf_instances/0b7c7b0e-1111-4e3a-9d2b-6a8f0c0d0e02/instantiate"}
        }
    })
}

/// A completed instantiate operation occurrence.
pub fn completed_lcm_op_occ() -> Value {
    json!({
        "id": "c7b2d9a4-5e6f-4a1b-8c9d-0e1f2a3b4c5d",
        "operationState": "COMPLETED",
        "stateEnteredTime": "2026-11-22T01:34:40.123456Z",
        "startTime": "2026-11-22T01:30:00Z",
        "vnfInstanceId": "5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01",
        "grantId": "d1e2f3a4-0000-4000-8000-000000000001",
        "operation": "INSTANTIATE",
        "isAutomaticInvocation": false,
        "operationParams": {"flavourId": "simple"},
        "isCancelPending": false,
        "resourceChanges": {"affectedVnfcs": []},
        "_links": {"self": {"href": "http://127.0.0.1:9890/vnflcm/v2/vnf_lcm_op_occs/c7b2d9a4-5e6f-4a1b-8c9d-0e1f2a3b4c5d"}}
    })
}
