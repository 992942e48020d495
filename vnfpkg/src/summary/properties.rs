//! The properties the summary reads, per SOL001 node type (clause 6.8 node types, clause 6.2
//! data types). Scalars stay YAML values: TOSCA writes numbers as text and sizes as
//! `scalar-unit.size`, converted by `crate::yaml`.

use serde::Deserialize;
use serde_yaml_ng::Value;

use crate::yaml::{Seq, lenient, mapping, present};

/// `tosca.nodes.nfv.VNF` (SOL001 clause 6.8.1).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VnfProps {
    pub descriptor_id: Option<Value>,
    pub provider: Option<Value>,
    pub product_name: Option<Value>,
    pub software_version: Option<Value>,
    pub descriptor_version: Option<Value>,
    pub vnfm_info: Option<Value>,
    /// Free-form per VNF (`tosca.datatypes.nfv.VnfConfigurableProperties` and its extensions).
    pub configurable_properties: Option<Value>,
    pub flavour_id: Option<Value>,
    pub flavour_description: Option<Value>,
}

/// `tosca.nodes.nfv.Vdu.Compute` (SOL001 clause 6.8.6).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VduProps {
    pub name: Option<Value>,
    pub description: Option<Value>,
    #[serde(deserialize_with = "lenient")]
    pub vdu_profile: VduProfileProps,
    #[serde(deserialize_with = "mapping")]
    pub sw_image_data: Option<SwImageData>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VduProfileProps {
    pub min_number_of_instances: Option<Value>,
    pub max_number_of_instances: Option<Value>,
}

/// The `tosca.nodes.nfv.Vdu.Virtual*Storage` types (SOL001 clauses 6.8.7 to 6.8.9).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StorageProps {
    #[serde(deserialize_with = "present")]
    pub virtual_block_storage_data: Option<StorageData>,
    #[serde(deserialize_with = "present")]
    pub virtual_file_storage_data: Option<StorageData>,
    #[serde(deserialize_with = "present")]
    pub virtual_object_storage_data: Option<StorageData>,
    #[serde(deserialize_with = "mapping")]
    pub sw_image_data: Option<SwImageData>,
}

impl StorageProps {
    /// The storage data of whichever of the three kinds the node has.
    pub(crate) fn data(&self) -> Option<&StorageData> {
        self.virtual_block_storage_data
            .as_ref()
            .or(self.virtual_file_storage_data.as_ref())
            .or(self.virtual_object_storage_data.as_ref())
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StorageData {
    /// `size_of_storage: ~` hides `max_size_of_storage` (object storage's name for it).
    #[serde(deserialize_with = "present")]
    pub size_of_storage: Option<Value>,
    pub max_size_of_storage: Option<Value>,
}

/// `tosca.datatypes.nfv.SwImageData` (SOL001 clause 6.2.43).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SwImageData {
    pub name: Option<Value>,
    pub version: Option<Value>,
    pub provider: Option<Value>,
    #[serde(deserialize_with = "present")]
    pub checksum: Option<ChecksumData>,
    pub container_format: Option<Value>,
    pub disk_format: Option<Value>,
    pub min_disk: Option<Value>,
    pub min_ram: Option<Value>,
    pub size: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChecksumData {
    pub algorithm: Option<Value>,
    pub hash: Option<Value>,
}

/// `tosca.nodes.nfv.VnfVirtualLink` (SOL001 clause 6.8.2).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VirtualLinkProps {
    pub description: Option<Value>,
    #[serde(deserialize_with = "lenient")]
    pub connectivity_type: ConnectivityType,
    #[serde(deserialize_with = "lenient")]
    pub vl_profile: VlProfile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConnectivityType {
    pub layer_protocols: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VlProfile {
    pub virtual_link_protocol_data: Seq<ProtocolData>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ProtocolData {
    #[serde(deserialize_with = "present")]
    pub l3_protocol_data: Option<L3Data>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct L3Data {
    pub ip_version: Option<Value>,
    pub cidr: Option<Value>,
}

/// `tosca.nodes.nfv.VduCp`, `VnfExtCp` and `VipCp` (SOL001 clauses 6.8.3, 6.8.4, and
/// V3.5.1 for VipCp), and the `name`/`description` of a `DeployableModule`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CpProps {
    pub layer_protocols: Option<Value>,
    pub order: Option<Value>,
    pub vip_function: Option<Value>,
    pub dedicated_ip_address: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NamedProps {
    pub name: Option<Value>,
    pub description: Option<Value>,
}
