//! Typed read-only views of the stored documents an operation's run reads: the parts of
//! the VNF instance (SOL003 VnfInstance, `instantiatedVnfInfo`) and of the operation's
//! request that the GrantRequest and the package's scripts are made from. Every member
//! is optional here: a view of a document that lacks one reads as empty, as the JSON
//! indexing it replaces did.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use solgate_core::PRIVATE_KEY;
use solgate_model::grant::Handle;

/// The view of `document`, empty when it is not of the view's shape.
pub(crate) fn view<T: DeserializeOwned + Default>(document: &Value) -> T {
    T::deserialize(document).unwrap_or_default()
}

/// A member read with its view's defaults when it is absent, `null` or of another shape,
/// so that it spoils no other member of the document.
pub(crate) fn lenient<'de, D: serde::Deserializer<'de>, T: DeserializeOwned + Default>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(view(&Value::deserialize(deserializer)?))
}

/// SOL003 VnfInstance, the members read here.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct InstanceView {
    pub vnfd_id: String,
    #[serde(deserialize_with = "lenient")]
    pub instantiated_vnf_info: InstantiatedInfo,
}

impl InstanceView {
    /// The flavour the instance has now, when it has one.
    pub fn flavour_id(&self) -> Option<&str> {
        self.instantiated_vnf_info.flavour_id.as_deref()
    }
}

/// SOL003 VnfInstance `instantiationState`, alone.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct InstanceState {
    pub instantiation_state: String,
}

/// SOL003 InstantiatedVnfInfo.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct InstantiatedInfo {
    pub flavour_id: Option<String>,
    pub vnfc_resource_info: Vec<VnfcInfo>,
    pub vnf_virtual_link_resource_info: Vec<VirtualLinkInfo>,
    pub virtual_storage_resource_info: Vec<StorageInfo>,
    pub ext_virtual_link_info: Vec<ExtVirtualLinkInfo>,
}

/// SOL003 VnfcResourceInfo.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VnfcInfo {
    pub id: Option<String>,
    pub vdu_id: String,
    pub compute_resource: Option<Handle>,
    pub storage_resource_ids: Vec<String>,
    pub vnfc_cp_info: Vec<VnfcCpInfo>,
}

/// SOL003 VnfcResourceInfo `vnfcCpInfo`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VnfcCpInfo {
    pub cpd_id: String,
    pub vnf_ext_cp_id: Option<String>,
    pub vnf_link_port_id: Option<String>,
}

/// SOL003 VnfVirtualLinkResourceInfo.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VirtualLinkInfo {
    pub id: String,
    pub vnf_virtual_link_desc_id: String,
    pub network_resource: Option<Handle>,
    pub vnf_link_ports: Vec<LinkPortInfo>,
}

/// SOL003 VnfLinkPortInfo (and ExtLinkPortInfo: `cpInstanceId` names its CP).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LinkPortInfo {
    pub id: String,
    pub cp_instance_id: Option<String>,
    pub resource_handle: Option<Handle>,
}

/// SOL003 VirtualStorageResourceInfo.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct StorageInfo {
    pub id: String,
    pub virtual_storage_desc_id: String,
    pub storage_resource: Option<Handle>,
}

/// SOL003 ExtVirtualLinkInfo.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ExtVirtualLinkInfo {
    pub ext_link_ports: Vec<LinkPortInfo>,
}

/// The operation's request (`operationParams`), the members read here.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RequestView {
    pub instantiation_level_id: Option<String>,
    /// CHANGE_VNFPKG: the VNFD the instance changes to.
    pub vnfd_id: Option<String>,
    pub ext_virtual_links: Vec<ExtVirtualLinkData>,
    pub ext_managed_virtual_links: Vec<ExtManagedVirtualLinkData>,
}

/// SOL003 ExtVirtualLinkData.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ExtVirtualLinkData {
    pub ext_cps: Vec<VnfExtCpData>,
}

/// SOL003 VnfExtCpData: `cpConfig` is a map keyed by id (v2) or an array (v1).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VnfExtCpData {
    pub cpd_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub cp_config: Option<CpConfigs>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum CpConfigs {
    Keyed(serde_json::Map<String, Value>),
    Listed(Vec<Value>),
}

/// SOL003 VnfExtCpConfig, the member read here.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CpConfig {
    link_port_id: Option<Value>,
}

impl CpConfigs {
    /// Whether one of the configs names a ready link port (`linkPortId`).
    pub fn names_a_link_port(&self) -> bool {
        let configs: Vec<&Value> = match self {
            Self::Keyed(map) => map.values().collect(),
            Self::Listed(list) => list.iter().collect(),
        };
        configs.into_iter().any(|config| view::<CpConfig>(config).link_port_id.is_some())
    }
}

/// SOL003 ExtManagedVirtualLinkData.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ExtManagedVirtualLinkData {
    pub vnf_virtual_link_desc_id: Option<String>,
    pub vnf_link_port: Option<Value>,
}

/// Tacker's CHANGE_VNFPKG `additionalParams` (free-form for SOL003), the members read here.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PackageChangeParams {
    pub upgrade_type: Option<String>,
    pub vdu_params: Vec<VduParams>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VduParams {
    pub vdu_id: Option<String>,
}

/// The VNFC counts of the local grant solgate-core computes from a plan
/// (`OperationPlan::local_grant`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LocalCounts {
    pub add_resources: Vec<VduCount>,
    pub remove_resources: Vec<VduCount>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct VduCount {
    pub resource_template_id: String,
    pub count: u64,
}

/// solgate's bookkeeping in a VnfLcmOpOcc (under `PRIVATE_KEY`): the inventory a failed
/// run left, read alone (a damaged member spoils no other).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PartialInventory {
    pub inventory: Option<solgate_model::infra::Inventory>,
}

/// solgate's bookkeeping in a VnfLcmOpOcc: the asynchronous grant a conductor waits for.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct AwaitedGrant {
    pub pending_grant: PendingGrant,
}

/// Where the NFVO's asynchronous Grant is to be fetched, and the request (sealed) it answers.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct PendingGrant {
    pub location: Option<String>,
    pub request: Option<Value>,
}

/// solgate's bookkeeping in a stored document (under `PRIVATE_KEY`, an object).
pub(crate) fn private_of(document: &Value) -> &Value {
    &document[PRIVATE_KEY]
}

/// Sets one member of a stored document's bookkeeping.
pub(crate) fn set_private(document: &mut Value, key: &str, value: Value) {
    if !document[PRIVATE_KEY].is_object() {
        document[PRIVATE_KEY] = Value::Object(serde_json::Map::new());
    }
    if let Some(private) = document[PRIVATE_KEY].as_object_mut() {
        private.insert(key.to_owned(), value);
    }
}
