//! The VnfInstance document as solgate stores it (SOL003 v3.3.1 clause 5.5.2.2; v1's
//! documents differ only in `vimConnectionInfo`, which stays a JSON value here and is read
//! through core's shapes), and its `instantiatedVnfInfo`. Members solgate does not model
//! are kept in `extra` and round-trip unchanged; absent members stay absent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::infra::{VirtualLinkResource, VirtualStorageResource, VnfcResource};
use crate::lcm_request::{LinkResource, ScaleInfo, VnfExtCpData, lenient, present};

/// The key of solgate's own bookkeeping in stored documents, never shown to clients.
pub const PRIVATE_KEY: &str = "_solgate";

/// SOL003 InstantiationState.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InstantiationState {
    #[default]
    NotInstantiated,
    Instantiated,
}

/// SOL003 VnfInstance, as stored (with solgate's private part).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfInstance {
    #[serde(default)]
    pub id: String,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub vnf_instance_name: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub vnf_instance_description: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnfd_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_product_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_software_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnfd_version: Option<String>,
    /// Free-form (the VNFD's configurable properties).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub vnf_configurable_properties: Option<Value>,
    /// A list (v1) or a map by connection id (v2): read through core's shapes.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub vim_connection_info: Option<Value>,
    #[serde(default)]
    pub instantiation_state: InstantiationState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instantiated_vnf_info: Option<InstantiatedVnfInfo>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
    /// SOL003 V4.5.1 CertificateInfo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_info: Option<CertificateInfo>,
    #[serde(rename = "_solgate", default, skip_serializing_if = "Option::is_none")]
    pub private: Option<InstancePrivate>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl VnfInstance {
    pub fn is_instantiated(&self) -> bool {
        self.instantiation_state == InstantiationState::Instantiated
    }

    /// `instantiatedVnfInfo`, or an empty one when not instantiated.
    pub fn info(&self) -> &InstantiatedVnfInfo {
        static EMPTY: std::sync::OnceLock<InstantiatedVnfInfo> = std::sync::OnceLock::new();
        self.instantiated_vnf_info.as_ref().unwrap_or_else(|| EMPTY.get_or_init(InstantiatedVnfInfo::default))
    }

    /// The private part, or an empty one.
    pub fn private(&self) -> &InstancePrivate {
        static EMPTY: std::sync::OnceLock<InstancePrivate> = std::sync::OnceLock::new();
        self.private.as_ref().unwrap_or_else(|| EMPTY.get_or_init(InstancePrivate::default))
    }

    pub fn private_mut(&mut self) -> &mut InstancePrivate {
        self.private.get_or_insert_with(InstancePrivate::default)
    }
}

/// What solgate keeps of an instance for itself (`_solgate`): the external connectivity
/// it was given, and the driver's state and ports behind ExtLinkPortInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstancePrivate {
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub ext_virtual_links: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub ext_managed_virtual_links: Option<Value>,
    /// Driver-private state (a Heat stack id, a Kubernetes namespace, ...).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub vim_state: Option<Value>,
    /// The driver's ports (infra `Inventory::ext_link_ports`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_link_ports: Option<Vec<Value>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 InstantiatedVnfInfo (v3.3.1 shape, shared with v2.6.1 for these members). Lists
/// of another shape read as absent, as the untyped reads had it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstantiatedVnfInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavour_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_state: Option<String>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub scale_status: Vec<ScaleInfo>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub max_scale_levels: Option<Vec<ScaleInfo>>,
    /// 1..N in SOL003: a flavour that exposes no external CP has none to list.
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub ext_cp_info: Vec<VnfExtCpInfo>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub ext_virtual_link_info: Vec<ExtVirtualLinkInfo>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub ext_managed_virtual_link_info: Vec<ExtManagedVirtualLinkInfo>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub vnfc_resource_info: Option<Vec<VnfcResource>>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub vnf_virtual_link_resource_info: Option<Vec<VirtualLinkResource>>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub virtual_storage_resource_info: Option<Vec<VirtualStorageResource>>,
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub vnfc_info: Option<Vec<VnfcInfo>>,
    /// SOL003 V4.3.1 VirtualCpInfo (what the CISM reports).
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub virtual_cp_info: Vec<Value>,
    /// SOL003 V3.5.1 VipCpInfo.
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub vip_cp_info: Vec<Value>,
    /// SOL003 V4.3.1 McioInfo.
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Vec::is_empty")]
    pub mcio_info: Vec<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub localization_language: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// SOL003 V4.5.1: the deployable modules selected.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub selected_deployable_module: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InstantiatedVnfInfo {
    pub fn vnfc_resources(&self) -> &[VnfcResource] {
        self.vnfc_resource_info.as_deref().unwrap_or_default()
    }

    pub fn vnfcs(&self) -> &[VnfcInfo] {
        self.vnfc_info.as_deref().unwrap_or_default()
    }

    /// The modules selected (`selectedDeployableModule`), ids of another type skipped.
    pub fn selected_modules(&self) -> Vec<String> {
        self.selected_deployable_module
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|id| id.as_str().map(str::to_owned))
            .collect()
    }
}

/// SOL003 VnfExtCpInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfExtCpInfo {
    pub id: String,
    pub cpd_id: String,
    pub cp_config_id: String,
    #[serde(default)]
    pub cp_protocol_info: Vec<CpProtocolInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_link_port_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub associated_vnfc_cp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub associated_vnf_virtual_link_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 CpProtocolInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpProtocolInfo {
    pub layer_protocol: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_over_ethernet: Option<IpOverEthernetAddressInfo>,
}

/// SOL003 IpOverEthernetAddressInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpOverEthernetAddressInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segmentation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<IpAddressInfo>,
}

impl IpOverEthernetAddressInfo {
    pub fn is_empty(&self) -> bool {
        self.mac_address.is_none() && self.segmentation_id.is_none() && self.ip_addresses.is_empty()
    }
}

/// One entry of IpOverEthernetAddressInfo `ipAddresses`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpAddressInfo {
    #[serde(rename = "type", default)]
    pub kind: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_range: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_dynamic: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet_id: Option<String>,
}

/// SOL003 ExtVirtualLinkInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtVirtualLinkInfo {
    pub id: String,
    pub resource_handle: LinkResource,
    #[serde(default)]
    pub current_vnf_ext_cp_data: Vec<VnfExtCpData>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ext_link_ports: Vec<ExtLinkPortInfo>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 ExtLinkPortInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtLinkPortInfo {
    pub id: String,
    pub resource_handle: Value,
    pub cp_instance_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trunk_resource_id: Option<String>,
}

/// A port of an external CP the driver made (infra `Inventory::ext_link_ports`): a
/// trunk's parent port (with its trunk) or a subport's (with the cpConfigId it realizes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtLinkPort {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub cpd_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp_config_id: Option<String>,
    #[serde(default)]
    pub resource_handle: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trunk_resource_id: Option<String>,
}

/// SOL003 ExtManagedVirtualLinkInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtManagedVirtualLinkInfo {
    pub id: String,
    pub vnf_virtual_link_desc_id: String,
    pub network_resource: LinkResource,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vnf_link_ports: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_managed_multisite_virtual_link_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 VnfcInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfcInfo {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub vdu_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnfc_resource_info_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnfc_state: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 VnfcCpInfo, as a driver reports it in VnfcResourceInfo `vnfcCpInfo`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfcCpInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub cpd_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_ext_cp_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 V4.5.1 CertificateInfo: solgate keeps the configuration only (it issues no
/// certificates, so `certificateContents` is never produced).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateInfo {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub certificate_configuration_info: CertificateConfigurationInfo,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 V4.5.1 CertificateConfigurationInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateConfigurationInfo {
    #[serde(default)]
    pub security_policy: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_base_profile: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmf_info: Option<CmfInfo>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 V4.5.1 CmfInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CmfInfo {
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_point: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_protocols: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
