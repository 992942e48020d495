//! The VnfLcmOpOcc document (SOL003 clause 5.5.2.13) where solgate writes it: a new
//! occurrence, its state members, and the resources an operation changed
//! (`resourceChanges`, `affectedVirtualCps`, `affectedVipCps`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::infra::ResourceHandle;

/// A new occurrence as first stored (SOL003 VnfLcmOpOcc: not automatic, not
/// cancel-pending). Later members are set by the state machine and the conductor.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewVnfLcmOpOcc<'a> {
    pub id: &'a str,
    #[serde(flatten)]
    pub state: OpOccState<'a>,
    pub start_time: &'a str,
    pub vnf_instance_id: &'a str,
    pub operation: &'a str,
    pub is_automatic_invocation: bool,
    pub operation_params: &'a Value,
    #[serde(flatten)]
    pub cancel: CancelState<'a>,
}

/// `operationState` and `stateEnteredTime`, which change together on every transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpOccState<'a> {
    pub operation_state: &'a str,
    pub state_entered_time: &'a str,
}

/// `isCancelPending` and the `cancelMode` asked for while it is pending.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelState<'a> {
    pub is_cancel_pending: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_mode: Option<&'a str>,
}

/// SOL003 ChangeType of an affected resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChangeType {
    Added,
    Removed,
    Modified,
}

/// VnfLcmOpOcc `resourceChanges`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceChanges {
    pub affected_vnfcs: Vec<AffectedVnfc>,
    pub affected_virtual_links: Vec<AffectedVirtualLink>,
    pub affected_virtual_storages: Vec<AffectedVirtualStorage>,
}

/// SOL003 AffectedVnfc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AffectedVnfc {
    pub id: String,
    pub vdu_id: String,
    pub change_type: ChangeType,
    pub compute_resource: ResourceHandle,
    pub affected_vnfc_cp_ids: Vec<String>,
    pub added_storage_resource_ids: Vec<String>,
    pub removed_storage_resource_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
}

/// SOL003 AffectedVirtualLink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AffectedVirtualLink {
    pub id: String,
    pub vnf_virtual_link_desc_id: String,
    pub change_type: ChangeType,
    pub network_resource: ResourceHandle,
}

/// SOL003 AffectedVirtualStorage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AffectedVirtualStorage {
    pub id: String,
    pub virtual_storage_desc_id: String,
    pub change_type: ChangeType,
    pub storage_resource: ResourceHandle,
}

/// SOL003 AffectedVirtualCp (V4.3.1) and AffectedVipCp (V3.5.1): a CP instance an
/// operation added, removed or changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AffectedCp {
    pub cp_instance_id: Value,
    pub cpd_id: Value,
    pub change_type: ChangeType,
}

/// The identity of a CP instance in VirtualCpInfo or VipCpInfo (the rest of the entry is
/// compared as a whole).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpInstanceRef {
    #[serde(default)]
    pub cp_instance_id: Value,
    #[serde(default)]
    pub cpd_id: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The VNFD identity attributes of a VnfInstance (`vnfdId`, provider, product, versions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageIdentity {
    pub vnfd_id: String,
    pub vnf_provider: String,
    pub vnf_product_name: String,
    pub vnf_software_version: String,
    pub vnfd_version: String,
}

impl PackageIdentity {
    /// The instance now uses the package of this identity.
    pub fn apply(&self, instance: &mut crate::vnf_instance::VnfInstance) {
        instance.vnfd_id = Some(self.vnfd_id.clone());
        instance.vnf_provider = Some(self.vnf_provider.clone());
        instance.vnf_product_name = Some(self.vnf_product_name.clone());
        instance.vnf_software_version = Some(self.vnf_software_version.clone());
        instance.vnfd_version = Some(self.vnfd_version.clone());
    }
}

/// SOL003 VnfInfoModifications: VnfLcmOpOcc `changedInfo` of MODIFY_INFO (the members the
/// request changed) and CHANGE_VNFPKG (the package identity).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfInfoModifications {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnf_instance_name: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnf_instance_description: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnf_configurable_properties: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vim_connection_info: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vim_connection_info_delete_ids: Option<Vec<Value>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackageIdentity>,
}
