//! What the alert webhooks read of a VNF instance (SOL002/SOL003 VnfInstance, v1 and v2
//! alike for these members): its state, its switches and its VNFCs and aspects.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct InstanceView {
    pub instantiation_state: String,
    /// Free-form (the VNFD's configurable properties); the webhooks read its switches.
    pub vnf_configurable_properties: Map<String, Value>,
    pub instantiated_vnf_info: InstantiatedInfo,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct InstantiatedInfo {
    pub vnfc_resource_info: Vec<VnfcResource>,
    pub vnfc_info: Vec<VnfcInfo>,
    pub scale_status: Vec<ScaleStatus>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VnfcResource {
    pub id: String,
    pub compute_resource: Option<ComputeResource>,
}

/// A ResourceHandle, kept whole for FaultyResourceInfo.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ComputeResource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VnfcInfo {
    pub id: String,
    pub vnfc_resource_info_id: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ScaleStatus {
    pub aspect_id: String,
}

impl InstanceView {
    /// The view of a stored instance document (members it lacks are empty).
    pub fn of(body: &Value) -> Self {
        InstanceView::deserialize(body).unwrap_or_default()
    }

    pub fn is_instantiated(&self) -> bool {
        self.instantiation_state == "INSTANTIATED"
    }

    /// Whether a `vnfConfigurableProperties` switch is `true`.
    pub fn switched_on(&self, switch: &str) -> bool {
        self.vnf_configurable_properties.get(switch) == Some(&Value::Bool(true))
    }
}

impl InstantiatedInfo {
    /// Whether `id` names a VNFC: a `vnfcInfo` or a `vnfcResourceInfo` id.
    pub fn has_vnfc(&self, id: &str) -> bool {
        self.vnfc_info.iter().any(|entry| entry.id == id) || self.vnfc_resource_info.iter().any(|entry| entry.id == id)
    }

    pub fn has_aspect(&self, aspect_id: &str) -> bool {
        self.scale_status.iter().any(|status| status.aspect_id == aspect_id)
    }
}
