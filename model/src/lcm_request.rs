//! The SOL003 LCM request bodies, as far as solgate reads them (the gateway validates
//! them against the negotiated version's schema first; members not modelled stay in the
//! stored `operationParams` untouched). Free-form members (`additionalParams`,
//! `extensions`, `vnfConfigurableProperties`, `metadata`) stay JSON values.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// A member read leniently: a value of another shape reads as the default, as the
/// untyped reads it replaces did (`as_array().unwrap_or_default()` and the like).
pub fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(deserializer: D) -> Result<T, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).unwrap_or_default())
}

/// A member whose presence counts, `null` included (`Some(Value::Null)`), as
/// `value.get(key)` had it.
pub fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A request body (or a member of one) as the type `T`; `None` when it has another shape.
pub fn parse<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
}

/// SOL003 ExtVirtualLinkData (clause 4.4.1.11): an external virtual link and the CPs the
/// VNF connects to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtVirtualLinkData {
    #[serde(default)]
    pub id: String,
    #[serde(flatten)]
    pub resource: LinkResource,
    #[serde(default)]
    pub ext_cps: Vec<VnfExtCpData>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The ResourceHandle attributes of link data (SOL003 ExtVirtualLinkData,
/// ExtManagedVirtualLinkData), and the ResourceHandle made of them: only those it has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkResource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_connection_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_provider_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_level_resource_type: Option<String>,
}

/// SOL003 VnfExtCpData: the configurations of one external CPD on a link.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfExtCpData {
    #[serde(default)]
    pub cpd_id: String,
    #[serde(default, skip_serializing_if = "CpConfigs::is_none")]
    pub cp_config: CpConfigs,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `cpConfig`: a map keyed by cpConfigId (SOL003 v3), or a list (v2.6.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CpConfigs {
    Map(BTreeMap<String, VnfExtCpConfig>),
    List(Vec<VnfExtCpConfig>),
    #[default]
    None,
}

impl CpConfigs {
    pub fn is_none(&self) -> bool {
        matches!(self, CpConfigs::None)
    }

    /// The entries with their keys: by cpConfigId in key order, or (v2.6.1) by
    /// `cpInstanceId` or position.
    pub fn entries(&self) -> Vec<(String, &VnfExtCpConfig)> {
        match self {
            CpConfigs::Map(map) => map.iter().map(|(key, config)| (key.clone(), config)).collect(),
            CpConfigs::List(list) => list
                .iter()
                .enumerate()
                .map(|(index, config)| (config.cp_instance_id.clone().unwrap_or_else(|| index.to_string()), config))
                .collect(),
            CpConfigs::None => Vec::new(),
        }
    }

    /// Whether a map entry `key` configures a CP instance (v2.6.1 lists never do).
    pub fn has_key(&self, key: &str) -> bool {
        matches!(self, CpConfigs::Map(map) if map.contains_key(key))
    }
}

/// SOL003 VnfExtCpConfig.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfExtCpConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_cp_config_id: Option<String>,
    /// v2.6.1: the CP instance the entry configures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp_instance_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_port_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp_protocol_data: Option<Vec<CpProtocolData>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl VnfExtCpConfig {
    /// A subport of a trunk (SOL003 V3.5.1): it names its parent's `parentCpConfigId`, or
    /// its protocol data carries the `segmentationId` only a subport has (SOL003
    /// IpOverEthernetAddressData, note 3). The typed twin of `infra::is_subport`.
    pub fn is_subport(&self) -> bool {
        self.parent_cp_config_id.is_some()
            || self
                .protocol_data()
                .iter()
                .any(|data| data.ip_over_ethernet.as_ref().is_some_and(|ethernet| ethernet.segmentation_id.is_some()))
    }

    pub fn protocol_data(&self) -> &[CpProtocolData] {
        self.cp_protocol_data.as_deref().unwrap_or_default()
    }
}

/// SOL003 CpProtocolData.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpProtocolData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_over_ethernet: Option<IpOverEthernetAddressData>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 IpOverEthernetAddressData.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpOverEthernetAddressData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segmentation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_addresses: Option<Vec<IpAddressData>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One entry of IpOverEthernetAddressData `ipAddresses`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpAddressData {
    #[serde(rename = "type", default)]
    pub kind: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_addresses: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_dynamic_addresses: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_range: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 ExtManagedVirtualLinkData.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtManagedVirtualLinkData {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub vnf_virtual_link_desc_id: String,
    #[serde(flatten)]
    pub resource: LinkResource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_managed_multisite_virtual_link_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 ScaleInfo: an aspect at a scale level (`scaleStatus`, `maxScaleLevels`,
/// `scaleInfo`, `targetScaleLevelInfo`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleInfo {
    #[serde(default)]
    pub aspect_id: String,
    /// Signed: a request may ask for a level out of range, which planning refuses.
    #[serde(default = "no_level")]
    pub scale_level: i64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn no_level() -> i64 {
    -1
}

/// The external connectivity members of InstantiateVnfRequest, ChangeVnfFlavourRequest
/// and ChangeExtVnfConnectivityRequest, kept as the request gave them: the plan carries
/// and stores them as they are.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtConnectivityData {
    #[serde(default, deserialize_with = "present")]
    pub ext_virtual_links: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub ext_managed_virtual_links: Option<Value>,
}

/// SOL003 InstantiateVnfRequest (clause 5.5.2.4).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstantiateVnfRequest {
    #[serde(default)]
    pub flavour_id: String,
    #[serde(default)]
    pub instantiation_level_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub target_scale_level_info: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub selected_deployable_module: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub vim_connection_info: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub localization_language: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub vnf_configurable_properties: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub extensions: Option<Value>,
}

/// SOL003 ChangeVnfFlavourRequest (clause 5.5.2.7).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeVnfFlavourRequest {
    #[serde(default)]
    pub new_flavour_id: String,
    #[serde(default)]
    pub instantiation_level_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub target_scale_level_info: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub selected_deployable_module: Option<Value>,
}

/// SOL003 ScaleVnfRequest (clause 5.5.2.5): `type` SCALE_OUT or SCALE_IN.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleVnfRequest {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub aspect_id: String,
    #[serde(default)]
    pub number_of_steps: Option<i64>,
}

/// SOL003 ScaleVnfToLevelRequest (clause 5.5.2.6).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleVnfToLevelRequest {
    #[serde(default)]
    pub instantiation_level_id: Option<String>,
    #[serde(default)]
    pub scale_info: Option<Vec<ScaleInfo>>,
}

/// SOL003 HealVnfRequest (clause 5.5.2.9, v3 members).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HealVnfRequest {
    #[serde(default)]
    pub vnfc_instance_id: Vec<String>,
    #[serde(default)]
    pub additional_params: Option<Map<String, Value>>,
}

/// SOL003 OperateVnfRequest (clause 5.5.2.10).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperateVnfRequest {
    #[serde(default)]
    pub change_state_to: Option<String>,
}

/// SOL003 SelectVnfDeployableModulesRequest (V4.5.1).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectVnfDeployableModulesRequest {
    #[serde(default, deserialize_with = "present")]
    pub selected_deployable_module: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub target_scale_level_info: Option<Value>,
}

/// The members common to the change requests: ChangeExtVnfConnectivityRequest's VIM
/// connections, ChangeCurrentVnfPkgRequest's and VnfInfoModificationRequest's vnfdId, and
/// the certificate configuration (SOL003 V4.5.1) any of them may carry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommonRequestMembers {
    #[serde(default)]
    pub vnfd_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub vim_connection_info: Option<Value>,
    #[serde(default)]
    pub certificate_configuration_data: Option<CertificateConfigurationData>,
}

/// SOL003 VnfInfoModificationRequest (clause 5.5.2.12).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfInfoModificationRequest {
    #[serde(default, deserialize_with = "present")]
    pub vnf_instance_name: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub vnf_instance_description: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub metadata: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub extensions: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub vnf_configurable_properties: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub vim_connection_info: Option<Value>,
    #[serde(default)]
    pub vim_connection_info_delete_ids: Option<Vec<Value>>,
}

/// SOL003 CertificateConfigurationData (V4.5.1).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateConfigurationData {
    #[serde(default, deserialize_with = "present")]
    pub security_policy: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    pub overriding_certificate_profile: Vec<Value>,
    #[serde(default, deserialize_with = "lenient")]
    pub cmf_data: Option<CmfData>,
}

/// SOL003 CmfData.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CmfData {
    #[serde(default, deserialize_with = "present")]
    pub end_point: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub supported_protocol: Option<Value>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn link_data_round_trips_with_its_handle_and_unknown_members() {
        let link = json!({"id": "ext-vl-1", "resourceId": "net-a", "vimConnectionId": "vim-1", "x": {"y": 1},
            "extCps": [{"cpdId": "CP1", "cpConfig": {"b": {"linkPortId": "p"}, "a": {"cpProtocolData": [
                {"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": [
                    {"type": "IPV4", "numDynamicAddresses": 1, "z": true}]}}]}}}]});
        let data = ExtVirtualLinkData::deserialize(&link).unwrap();
        assert_eq!(data.resource.resource_id.as_deref(), Some("net-a"));
        assert_eq!(data.extra, json!({"x": {"y": 1}}).as_object().cloned().unwrap());
        let keys: Vec<String> = data.ext_cps[0].cp_config.entries().into_iter().map(|(key, _)| key).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(serde_json::to_value(&data).unwrap(), link);
    }

    #[test]
    fn v1_config_lists_are_keyed_by_instance_or_position() {
        let configs: CpConfigs = serde_json::from_value(json!([{"cpInstanceId": "i"}, {}])).unwrap();
        let keys: Vec<String> = configs.entries().into_iter().map(|(key, _)| key).collect();
        assert_eq!(keys, ["i", "1"]);
        assert!(!configs.has_key("i"), "only a map entry configures a CP instance by key");
    }

    #[test]
    fn present_members_keep_null() {
        let request: InstantiateVnfRequest =
            serde_json::from_value(json!({"flavourId": "f", "extensions": null})).unwrap();
        assert_eq!(request.extensions, Some(Value::Null));
        assert_eq!(request.vnf_configurable_properties, None);
    }
}
