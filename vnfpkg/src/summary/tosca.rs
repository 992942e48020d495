//! The parts of the TOSCA Simple Profile grammar (TOSCA-Simple-Profile-YAML v1.2 as SOL001
//! uses it) the summary reads, as forgiving serde records (see `crate::yaml`).

use serde::Deserialize;
use serde_yaml_ng::Value;

use crate::yaml::{Entries, Pairs, lenient, mapping, present};

/// One VNFD file (a TOSCA service template).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ServiceTemplate {
    pub node_types: Entries<TypeDef>,
    pub policy_types: Entries<TypeDef>,
    #[serde(deserialize_with = "mapping")]
    pub topology_template: Option<TopologyTemplate>,
}

/// A node or policy type definition: its parent and its properties' defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TypeDef {
    #[serde(deserialize_with = "lenient")]
    pub derived_from: Option<String>,
    pub properties: Entries<PropertyDef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PropertyDef {
    /// `Some(Null)` for `default: ~`, which hides an ancestor's default.
    #[serde(deserialize_with = "present")]
    pub default: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TopologyTemplate {
    pub node_templates: Entries<NodeTemplate>,
    pub policies: Pairs<PolicyTemplate>,
    pub groups: Entries<Group>,
    #[serde(deserialize_with = "mapping")]
    pub substitution_mappings: Option<SubstitutionMappings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NodeTemplate {
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub type_name: Option<String>,
    pub properties: Entries<Value>,
    /// `- req: node` or `- req: {node: node}`.
    #[serde(deserialize_with = "lenient")]
    pub requirements: Vec<Entries<RequirementTarget>>,
    pub artifacts: Entries<ArtifactDef>,
    #[serde(deserialize_with = "lenient")]
    pub interfaces: Interfaces,
    #[serde(deserialize_with = "lenient")]
    pub capabilities: Capabilities,
}

/// The node template a requirement points at.
#[derive(Debug, Default)]
pub(crate) struct RequirementTarget(pub Option<String>);

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RequirementDetail {
    #[serde(deserialize_with = "lenient")]
    node: Option<String>,
}

impl<'de> Deserialize<'de> for RequirementTarget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RequirementTarget(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            other => crate::yaml::read::<RequirementDetail>(other).node,
        }))
    }
}

/// An artifact: the short notation `name: file`, or a definition with `type` and `file`.
#[derive(Debug, Default)]
pub(crate) enum ArtifactDef {
    Short(String),
    Full(ArtifactDetail),
    #[default]
    Other,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ArtifactDetail {
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub type_name: Option<String>,
    pub file: Option<Value>,
}

impl<'de> Deserialize<'de> for ArtifactDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => ArtifactDef::Short(s),
            other @ Value::Mapping(_) => ArtifactDef::Full(crate::yaml::read(other)),
            _ => ArtifactDef::Other,
        })
    }
}

impl ArtifactDef {
    pub(crate) fn detail(&self) -> Option<&ArtifactDetail> {
        match self {
            ArtifactDef::Full(d) => Some(d),
            _ => None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Interfaces {
    /// SOL001 clause 6.7: the `Vnflcm` interface, operation name → its declaration.
    #[serde(rename = "Vnflcm")]
    pub vnflcm: Entries<OperationDef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct OperationDef {
    /// The artifact name (`instantiate: []` declares no implementation).
    #[serde(deserialize_with = "lenient")]
    pub implementation: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Capabilities {
    #[serde(deserialize_with = "lenient")]
    pub virtual_compute: VirtualComputeCapability,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VirtualComputeCapability {
    #[serde(deserialize_with = "present")]
    pub properties: Option<VirtualComputeProps>,
}

/// SOL001 `tosca.datatypes.nfv.VirtualCompute`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VirtualComputeProps {
    pub requested_additional_capabilities: Entries<RequestedCapability>,
    #[serde(deserialize_with = "lenient")]
    pub virtual_cpu: VirtualCpu,
    #[serde(deserialize_with = "lenient")]
    pub virtual_memory: VirtualMemory,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RequestedCapability {
    pub requested_additional_capability_name: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VirtualCpu {
    pub num_virtual_cpu: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VirtualMemory {
    pub virtual_mem_size: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PolicyTemplate {
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub type_name: Option<String>,
    /// Read per policy type (`super::policies`).
    pub properties: Option<Value>,
    pub targets: Option<Value>,
}

/// A `tosca.groups.nfv.PlacementGroup`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Group {
    pub members: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SubstitutionMappings {
    #[serde(deserialize_with = "lenient")]
    pub properties: SubstitutionProperties,
    /// `name: [node, requirement]`, or `name: {mapping: [...]}`.
    pub requirements: Pairs<SubstitutedRequirement>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SubstitutionProperties {
    pub flavour_id: Option<Value>,
}

/// The node template a substituted requirement maps to.
#[derive(Debug, Default)]
pub(crate) struct SubstitutedRequirement(pub Option<String>);

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MappingForm {
    mapping: Option<Value>,
}

impl<'de> Deserialize<'de> for SubstitutedRequirement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let target = match crate::yaml::read::<MappingForm>(value.clone()).mapping {
            Some(inner) if value.is_mapping() => inner,
            _ => value,
        };
        let node = match target {
            Value::Sequence(seq) => seq.into_iter().next().and_then(|v| v.as_str().map(str::to_owned)),
            Value::String(s) => Some(s),
            _ => None,
        };
        Ok(SubstitutedRequirement(node))
    }
}

/// TOSCA intrinsic functions: a property holding one of these has no static value.
const FUNCTIONS: [&str; 9] = [
    "get_input",
    "get_property",
    "get_attribute",
    "get_operation_output",
    "get_artifact",
    "get_nodes_of_type",
    "concat",
    "join",
    "token",
];

/// A static property value: neither `~` nor a TOSCA function call.
pub(crate) fn is_static(v: &Value) -> bool {
    let function = v.as_mapping().is_some_and(|m| {
        m.len() == 1 && m.keys().next().and_then(Value::as_str).is_some_and(|k| FUNCTIONS.contains(&k))
    });
    !v.is_null() && !function
}

/// Not a TOSCA function call (`~` counts as a value).
pub(crate) fn is_not_function(v: &Value) -> bool {
    v.is_null() || is_static(v)
}

/// Reads `properties` of a node template or policy into `P`.
pub(crate) fn properties<P: serde::de::DeserializeOwned + Default>(entries: Vec<(String, Value)>) -> P {
    let map: serde_yaml_ng::Mapping = entries.into_iter().map(|(k, v)| (Value::String(k), v)).collect();
    crate::yaml::read(Value::Mapping(map))
}
