//! The infra driver interface. The conductor works out *what* a VNF should look like
//! (a [`DeploymentPlan`] from the VNFD, the flavour, the scale levels and the request);
//! an infra driver makes a VIM look like that and reports the resources it holds
//! (an [`Inventory`], in SOL003 `instantiatedVnfInfo` shapes).

use std::collections::BTreeMap;
use std::path::Path;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use solgate_vnfpkg::Vnfd;

/// `vimConnectionInfo.vimType` values (SOL003 v3.3.1 registry, Tacker's spelling).
pub const VIM_TYPE_OPENSTACK: &str = "ETSINFV.OPENSTACK_KEYSTONE.V_3";
pub const VIM_TYPE_KUBERNETES: &str = "ETSINFV.KUBERNETES.V_1";
/// A Kubernetes cluster whose VNF is a Helm chart of the package (Tacker's Helm driver).
pub const VIM_TYPE_HELM: &str = "ETSINFV.HELM.V_3";
/// solgate's simulated VIM (embedded default and tests).
pub const VIM_TYPE_LOCAL: &str = "SOLGATE.LOCAL.V_1";

/// One VIM connection (SOL003 VimConnectionInfo), credentials included.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VimConnection {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub vim_id: Option<String>,
    pub vim_type: String,
    #[serde(default)]
    pub interface_info: Value,
    #[serde(default)]
    pub access_info: Value,
    #[serde(default)]
    pub extra: Value,
}

impl VimConnection {
    /// Tacker rewrites the legacy `kubernetes` type; so do we.
    pub fn normalized_vim_type(&self) -> &str {
        match self.vim_type.as_str() {
            "kubernetes" => VIM_TYPE_KUBERNETES,
            "openstack" => VIM_TYPE_OPENSTACK,
            other => other,
        }
    }
}

/// What one VDU should have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VduTarget {
    pub vdu_id: String,
    pub count: u32,
}

/// The shape a VNF should have after an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeploymentPlan {
    pub flavour_id: String,
    pub vdus: Vec<VduTarget>,
    /// Internal virtual links to exist (VNFD VnfVirtualLink ids).
    pub virtual_links: Vec<String>,
    /// `extVirtualLinks` of the request or the instance (SOL003 ExtVirtualLinkData[]).
    pub ext_virtual_links: Value,
    /// `extManagedVirtualLinks`.
    pub ext_managed_virtual_links: Value,
    /// aspect id → scale level.
    pub scale_levels: BTreeMap<String, u32>,
    /// What the NFVO's Grant decided for the VIM (external mode; empty otherwise).
    #[serde(default, skip_serializing_if = "GrantedPlacement::is_empty")]
    pub granted: GrantedPlacement,
}

/// The placement and VIM assets of a Grant (SOL003 v3.3.1 9.5.2.3), per VDU, as Tacker's
/// drivers use them: the zone of the VDU's first granted COMPUTE resource, and the
/// `vimAssets` flavour (by `vnfdVirtualComputeDescId`) and image (by `vnfdSoftwareImageId`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantedPlacement {
    /// VDU id → the VIM's zone name (`zones[].zoneId`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub zones: BTreeMap<String, String>,
    /// VDU (virtual compute descriptor) id → `vimFlavourId`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub flavours: BTreeMap<String, String>,
    /// VDU or software image id → `vimSoftwareImageId`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, String>,
    /// The Grant's `additionalParams.nfv`: merged (RFC 7396) over the OpenStack `nfv`
    /// parameter after the request's, as Tacker's user data does.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub nfv: Value,
}

impl GrantedPlacement {
    pub fn is_empty(&self) -> bool {
        self.zones.is_empty() && self.flavours.is_empty() && self.images.is_empty() && self.nfv.is_null()
    }
}

/// A compute resource in the VIM (SOL003 ResourceHandle).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceHandle {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vim_connection_id: Option<String>,
    pub resource_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vim_level_resource_type: Option<String>,
}

/// SOL003 VnfcResourceInfo (the fields solgate fills).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfcResource {
    pub id: String,
    pub vdu_id: String,
    pub compute_resource: ResourceHandle,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage_resource_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vnfc_cp_info: Vec<Value>,
    /// The zone the VNFC was placed in (SOL003 v3.3.1; shown from VNF LCM 2.0.0 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// SOL003 VnfVirtualLinkResourceInfo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualLinkResource {
    pub id: String,
    pub vnf_virtual_link_desc_id: String,
    pub network_resource: ResourceHandle,
    #[serde(default)]
    pub vnf_link_ports: Vec<Value>,
}

/// SOL003 VirtualStorageResourceInfo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualStorageResource {
    pub id: String,
    pub virtual_storage_desc_id: String,
    pub storage_resource: ResourceHandle,
}

/// The resources a VNF holds in its VIM.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inventory {
    pub vnfc_resources: Vec<VnfcResource>,
    pub virtual_links: Vec<VirtualLinkResource>,
    pub virtual_storages: Vec<VirtualStorageResource>,
    /// Driver-private state (a Heat stack id, a Kubernetes namespace, ...).
    #[serde(default)]
    pub vim_state: Value,
    /// `vnfState` of the VNF (STARTED / STOPPED).
    #[serde(default = "started")]
    pub vnf_state: String,
    /// SOL003 V4.3.1 McioInfo: the MCIOs (Kubernetes workloads) realizing the VDUs, as the
    /// CISM reported them after the action (desired and available instances).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcio_info: Vec<Value>,
    /// SOL003 V4.3.1 VirtualCpInfo: the virtual CPs (Kubernetes Services) of the VNF.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub virtual_cp_info: Vec<Value>,
    /// SOL003 V3.5.1 VipCpInfo: the virtual IP addresses of the VNF's VipCps, with the VNFC
    /// CPs that share each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vip_cp_info: Vec<Value>,
    /// Ports of external CPs that the instance reports as ExtLinkPortInfo: `{cpdId,
    /// cpConfigId?, id, resourceHandle, trunkResourceId?}` — a trunk's parent port (with its
    /// trunk) and the subport ports the driver made (with the cpConfigId they realize).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ext_link_ports: Vec<Value>,
}

fn started() -> String {
    "STARTED".to_owned()
}

impl Inventory {
    pub fn is_empty(&self) -> bool {
        self.vnfc_resources.is_empty() && self.virtual_links.is_empty() && self.virtual_storages.is_empty()
    }
}

/// A `VnfExtCpConfig` (SOL003 V3.5.1) for a subport of a trunk: it names its parent's
/// `parentCpConfigId`, or its protocol data carries the `segmentationId` only a subport has
/// (SOL003 IpOverEthernetAddressData, note 3).
pub fn is_subport(config: &Value) -> bool {
    VnfExtCpConfig::deserialize(config).is_ok_and(|config| config.is_subport())
}

/// The members of SOL003 ExtVirtualLinkData that the drivers read; others are tolerated.
/// Values the drivers pass on to the VIM unchanged (`resourceId`, addresses) stay JSON.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExtVirtualLinkData {
    pub id: Value,
    pub resource_id: Option<Value>,
    #[serde(deserialize_with = "lenient")]
    pub ext_cps: Vec<VnfExtCpData>,
    #[serde(deserialize_with = "lenient")]
    pub ext_link_ports: Vec<ExtLinkPortData>,
}

impl ExtVirtualLinkData {
    /// The entries of an `extVirtualLinks` array that have the shape of ExtVirtualLinkData.
    pub fn list(links: &Value) -> Vec<Self> {
        links.as_array().into_iter().flatten().filter_map(|link| Self::deserialize(link).ok()).collect()
    }

    /// The VIM resource of the `extLinkPorts` entry `id`.
    pub fn link_port_resource(&self, id: &str) -> Option<&Value> {
        let port = self.ext_link_ports.iter().find(|port| port.id.as_deref() == Some(id))?;
        port.resource_handle.as_ref()?.resource_id.as_ref()
    }
}

/// SOL003 VnfExtCpData: `cpConfig` is a map in SOL003 v3, a list in v2.6.1.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VnfExtCpData {
    #[serde(deserialize_with = "lenient")]
    pub cpd_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub cp_config: CpConfigs,
}

/// `cpConfig` of a VnfExtCpData in its order: keyed in SOL003 v3, a list in v2.6.1. An
/// entry that is no VnfExtCpConfig counts as an empty one.
#[derive(Debug, Clone, Default)]
pub struct CpConfigs(Vec<(Option<String>, VnfExtCpConfig)>);

impl<'de> Deserialize<'de> for CpConfigs {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let config = |value: Value| VnfExtCpConfig::deserialize(value).unwrap_or_default();
        Ok(CpConfigs(match Value::deserialize(deserializer)? {
            Value::Object(map) => map.into_iter().map(|(key, value)| (Some(key), config(value))).collect(),
            Value::Array(items) => items.into_iter().map(|value| (None, config(value))).collect(),
            _ => Vec::new(),
        }))
    }
}

impl CpConfigs {
    /// The configurations with their keys (none for a v2.6.1 list).
    pub fn keyed(&self) -> impl Iterator<Item = (&str, &VnfExtCpConfig)> {
        self.0.iter().filter_map(|(key, config)| Some((key.as_deref()?, config)))
    }

    pub fn values(&self) -> impl Iterator<Item = &VnfExtCpConfig> {
        self.0.iter().map(|(_, config)| config)
    }
}

/// SOL003 VnfExtCpConfig (V3.5.1).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VnfExtCpConfig {
    #[serde(deserialize_with = "lenient")]
    pub parent_cp_config_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub link_port_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub create_ext_link_port: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    pub cp_protocol_data: Vec<CpProtocolData>,
}

impl VnfExtCpConfig {
    /// See [`is_subport`].
    pub fn is_subport(&self) -> bool {
        self.parent_cp_config_id.is_some()
            || self.cp_protocol_data.iter().any(|data| {
                data.ip_over_ethernet
                    .as_ref()
                    .and_then(|eth| eth.segmentation_id.as_ref())
                    .is_some_and(Value::is_string)
            })
    }
}

/// SOL003 CpProtocolData.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CpProtocolData {
    #[serde(deserialize_with = "lenient")]
    pub ip_over_ethernet: Option<IpOverEthernetAddressData>,
}

/// SOL003 IpOverEthernetAddressData.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IpOverEthernetAddressData {
    pub mac_address: Option<Value>,
    pub segmentation_type: Option<Value>,
    pub segmentation_id: Option<Value>,
    #[serde(deserialize_with = "lenient")]
    pub ip_addresses: Vec<IpAddressData>,
}

/// An `ipAddresses` entry of IpOverEthernetAddressData.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IpAddressData {
    #[serde(deserialize_with = "lenient")]
    pub fixed_addresses: Vec<Value>,
    pub subnet_id: Option<Value>,
}

/// SOL003 ExtLinkPortData.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExtLinkPortData {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub resource_handle: Option<ExtResourceHandle>,
}

/// The `resourceHandle` of an ExtLinkPortData.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExtResourceHandle {
    pub resource_id: Option<Value>,
}

/// A member of a request document read as `T` when it has that shape and as
/// `T::default()` when not: a driver skips what it cannot use, as it did reading the JSON.
fn lenient<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned + Default>(
    deserializer: D,
) -> Result<T, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).unwrap_or_default())
}

/// What the driver is asked to do.
#[derive(Debug, Clone, Copy)]
pub enum InfraAction<'a> {
    /// Make the VIM match the plan (instantiate, scale, change flavour/ext conn/package).
    Realize { plan: &'a DeploymentPlan },
    /// Recreate the resources of these VNFCs (all if empty), keeping their ids.
    Heal { plan: &'a DeploymentPlan, vnfc_ids: &'a [String] },
    /// Start or stop the VNF (`changeStateTo`: STARTED / STOPPED).
    Operate { change_state_to: &'a str },
    /// Remove every resource.
    Teardown,
}

impl InfraAction<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            InfraAction::Realize { .. } => "realize",
            InfraAction::Heal { .. } => "heal",
            InfraAction::Operate { .. } => "operate",
            InfraAction::Teardown => "teardown",
        }
    }
}

/// Everything a driver may read.
pub struct InfraContext<'a> {
    pub instance_id: &'a str,
    pub vim: &'a VimConnection,
    pub vnfd: &'a Vnfd,
    /// The extracted VNF package (HOT templates, Kubernetes manifests), if any.
    pub package_dir: Option<&'a Path>,
    /// The resources held now.
    pub current: &'a Inventory,
    /// The request's `additionalParams` (or `{}`).
    pub additional_params: &'a Value,
    /// 1 for the first run, 2 for the first retry, ...
    pub attempt: u32,
    /// Within the attempt: 1 for the first run, 2 after one automatic retry of a transient
    /// failure, ...
    pub run: u32,
    /// True once the operation was cancelled; drivers check it between steps.
    pub cancelled: &'a (dyn Fn() -> bool + Send + Sync),
    /// The action undoes a failed operation (ROLLING_BACK): a driver that keeps revisions
    /// (Helm) returns to the one before the operation instead of making a new one.
    pub rolling_back: bool,
    /// The operation's request, the instance before it, the GrantRequest and the Grant, in
    /// the shapes Tacker gives a package's LCM operation user data (OpenStack). Given when
    /// the request's `additionalParams` declare user data; `None` otherwise.
    pub lcm_input: Option<&'a ScriptInput>,
}

/// A failed infra action, with what the VIM holds after it (so a retry or a rollback
/// knows what to clean up).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct DriverError {
    pub message: String,
    pub partial: Option<Box<Inventory>>,
    /// The failure is the operation being cancelled.
    pub cancelled: bool,
    /// The VIM may answer otherwise if asked again (connection refused, a 5xx, a timeout):
    /// the conductor retries the action with backoff before the operation fails.
    pub transient: bool,
    /// The VNF package refused the operation (its LCM operation user data or a management
    /// script failed): the operation's error is a 422 with this title (Tacker's
    /// `UserdataExecutionFailed`, `MgmtDriverExecutionFailed`), not a 500.
    pub refused_by_package: Option<&'static str>,
}

impl DriverError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), partial: None, cancelled: false, transient: false, refused_by_package: None }
    }

    /// A failure of the VNF package's own script (see [`DriverError::refused_by_package`]).
    pub fn by_package(title: &'static str, message: impl Into<String>) -> Self {
        Self { refused_by_package: Some(title), ..Self::new(message) }
    }

    /// A failure worth retrying (see [`DriverError::transient`]).
    pub fn transient(message: impl Into<String>) -> Self {
        Self { transient: true, ..Self::new(message) }
    }

    pub fn with_partial(mut self, partial: Inventory) -> Self {
        self.partial = Some(Box::new(partial));
        self
    }
}

/// An infra driver: one per `vimType`.
pub trait InfraDriver: Send + Sync {
    fn vim_type(&self) -> &'static str;
    fn execute<'a>(
        &'a self,
        ctx: InfraContext<'a>,
        action: InfraAction<'a>,
    ) -> BoxFuture<'a, Result<Inventory, DriverError>>;
}

/// The inputs Tacker gives a user data class or management script (dicts of SOL003 shapes).
#[derive(Debug, Clone, Default)]
pub struct ScriptInput {
    /// The operation's request (`operationParams`), additionalParams opened.
    pub request: Value,
    /// The VNF instance before the operation.
    pub vnf_instance: Value,
    /// The GrantRequest of the operation (`operation` names it).
    pub grant_request: Value,
    /// The Grant.
    pub grant: Value,
}
