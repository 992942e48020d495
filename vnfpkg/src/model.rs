//! The serde-serialisable result of onboarding: what the gateway reports in VnfPkgInfo and what
//! the conductor needs for LCM checks. Field names follow SOL001 (snake_case); the gateway maps
//! them to the camelCase SOL005/SOL003 attributes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// SOL005 `Checksum`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checksum {
    pub algorithm: String,
    pub hash: String,
}

/// Everything learnt from a VNF package by [`crate::inspect`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackageContents {
    /// sha-512 of the whole zip, reported as `{"algorithm": "sha512", "hash": ...}` like Tacker.
    pub checksum: Checksum,
    /// Size of the zip in bytes.
    pub size: u64,
    /// False for a SOL004 "option 2" CSAR (single YAML at the root, no TOSCA-Metadata).
    pub has_tosca_metadata: bool,
    /// Package path of the main VNFD file.
    pub entry_definitions: String,
    /// Package path of the manifest (`ETSI-Entry-Manifest`, or `<root yaml>.mf` for option 2).
    pub entry_manifest: Option<String>,
    /// The VNFD YAML files inside the package, entry file first, then in import order.
    pub vnfd_files: Vec<String>,
    /// More than one VNFD YAML file: SOL005 `GET .../vnfd` then needs `Accept: application/zip`.
    pub multi_file_vnfd: bool,
    pub vnfd: Vnfd,
    /// Artifacts with a declared checksum (TOSCA.meta blocks and manifest), all verified.
    pub artifacts: Vec<Artifact>,
    /// Every regular file of the package with its real size.
    pub files: Vec<PackageFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageFile {
    pub path: String,
    pub size: u64,
}

/// A package artifact (SOL005 `VnfPackageArtifactInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// Path inside the package, or the URI of an external artifact.
    pub path: String,
    pub checksum: Checksum,
    /// The artifact is the image file of a software image. SOL005 lists those under
    /// `softwareImages`, not `additionalArtifacts`.
    pub software_image: bool,
    /// Declared by URI outside the package; its checksum could not be verified offline.
    pub external: bool,
}

/// Summary of a SOL001 VNFD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vnfd {
    /// `descriptor_id`, the SOL003/SOL005 `vnfdId`.
    pub descriptor_id: String,
    pub provider: String,
    pub product_name: String,
    pub software_version: String,
    pub descriptor_version: String,
    pub vnfm_info: Vec<String>,
    /// `configurable_properties` of the VNF node, as JSON.
    pub configurable_properties: Option<serde_json::Value>,
    pub flavours: Vec<Flavour>,
    /// Software images of all flavours, one per id (SOL005 `softwareImages`).
    pub software_images: Vec<SoftwareImage>,
}

/// A deployment flavour (one topology template with its `flavour_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flavour {
    pub id: String,
    pub description: Option<String>,
    /// VNFD file that holds the flavour's topology template.
    pub file: String,
    pub vdus: Vec<Vdu>,
    pub virtual_storages: Vec<VirtualStorage>,
    pub virtual_links: Vec<VirtualLink>,
    pub cps: Vec<Cp>,
    pub scaling_aspects: Vec<ScalingAspect>,
    pub instantiation_levels: Vec<InstantiationLevel>,
    pub default_level: Option<String>,
    /// Affinity and anti-affinity rules (absent in packages onboarded before they were read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_rules: Vec<PlacementRule>,
    /// `tosca.nodes.nfv.VirtualCp` nodes (SOL001 V4.3.1): CPs that give access to the VNFCs of
    /// their target VDUs as one service (a Kubernetes Service).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub virtual_cps: Vec<VirtualCpd>,
    /// `tosca.nodes.nfv.VipCp` nodes (SOL001 V3.5.1): a virtual IP address on an internal
    /// virtual link, shared by the VNFC CPs of its target VduCps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vip_cps: Vec<VipCpd>,
    /// `tosca.nodes.nfv.DeployableModule` nodes (SOL001 V4.5.1): sets of optional VDUs whose
    /// VNFCs exist only while the module is selected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deployable_modules: Vec<DeployableModule>,
    /// The management scripts of the VNF node's `Vnflcm` interface (Tacker's management
    /// driver hooks): operation (`instantiate_start`, `scale_end`, ...) → the file of its
    /// `tosca.artifacts.Implementation.Python` artifact, relative to `Definitions/`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lcm_scripts: BTreeMap<String, String>,
}

/// A `tosca.nodes.nfv.VirtualCp` node; `id` is the node template name (the cpdId).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualCpd {
    pub id: String,
    /// The VDUs of its `target` requirements.
    pub vdus: Vec<String>,
}

/// A `tosca.nodes.nfv.VipCp` node; `id` is the node template name (the cpdId).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VipCpd {
    pub id: String,
    /// `vip_function`: `high_availability` (one target CP holds the address at a time) or
    /// `load_balance` (all of them do).
    pub vip_function: String,
    /// The internal virtual link of its `virtual_link` requirement (VipVirtualLinksTo).
    pub virtual_link: String,
    /// The VduCps of its `target` requirements (the CPs the address floats over).
    pub targets: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layer_protocols: Vec<String>,
    /// `dedicated_ip_address` (default true): the address is not one of the targets' own.
    #[serde(default = "yes")]
    pub dedicated_ip_address: bool,
}

fn yes() -> bool {
    true
}

/// A `tosca.nodes.nfv.DeployableModule` node; `id` is the node template name, the
/// identifier `selectedDeployableModule` uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployableModule {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The VDUs of its `member` requirements.
    pub vdus: Vec<String>,
}

/// A `tosca.policies.nfv.AffinityRule` or `AntiAffinityRule`, its targets resolved to VDUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementRule {
    /// The policy's name.
    pub id: String,
    pub anti_affinity: bool,
    /// SOL001 scope: `nfvi_node`, `zone`, `zone_group`, `nfvi_pop`, `network_link_and_node`.
    pub scope: String,
    pub vdus: Vec<String>,
}

/// A `tosca.nodes.nfv.Vdu.Compute` node; `id` is the node template name (the VNFD's vduId).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vdu {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub vdu_profile: VduProfile,
    /// `VduInitialDelta` number_of_instances, if a policy targets this VDU.
    pub initial_delta: Option<u32>,
    /// Id of the software image (see [`Vnfd::software_images`]).
    pub sw_image: Option<String>,
    pub virtual_storages: Vec<String>,
    pub cps: Vec<String>,
    pub virtual_compute: Option<VirtualCompute>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VduProfile {
    pub min_number_of_instances: u32,
    pub max_number_of_instances: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtualCompute {
    /// `requested_additional_capabilities.*.requested_additional_capability_name` (Tacker reads
    /// the compute flavour name from here).
    pub requested_additional_capability_name: Option<String>,
    pub num_virtual_cpu: Option<u32>,
    /// `virtual_mem_size` in bytes.
    pub virtual_mem_size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtualStorage {
    pub id: String,
    /// Normative SOL001 node type, e.g. `tosca.nodes.nfv.Vdu.VirtualBlockStorage`.
    pub node_type: String,
    /// `size_of_storage` in bytes.
    pub size_of_storage: Option<u64>,
    pub sw_image: Option<String>,
}

/// An internal `tosca.nodes.nfv.VnfVirtualLink`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtualLink {
    pub id: String,
    pub description: Option<String>,
    pub layer_protocols: Vec<String>,
    pub l3_protocol_data: Vec<L3ProtocolData>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct L3ProtocolData {
    pub ip_version: Option<String>,
    pub cidr: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CpKind {
    VduCp,
    VnfExtCp,
}

/// A connection point node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cp {
    pub id: String,
    pub kind: CpKind,
    /// VDU of a VduCp (`virtual_binding` requirement).
    pub vdu: Option<String>,
    /// Internal virtual link (`virtual_link` of a VduCp, `internal_virtual_link` of a VnfExtCp).
    pub virtual_link: Option<String>,
    pub layer_protocols: Vec<String>,
    pub order: Option<u32>,
    /// An external CP of the VNF (its extCpd id is the CP id): exposed through
    /// `substitution_mappings.requirements`, or a VnfExtCp.
    pub external: bool,
    /// Name of the substituted requirement, e.g. `virtual_link_external`.
    pub external_requirement: Option<String>,
}

/// A `ScalingAspects` entry with the per-VDU deltas of its `VduScalingAspectDeltas` policies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScalingAspect {
    pub id: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub max_scale_level: u32,
    /// Delta ids applied at each step (one element = uniform delta).
    pub step_deltas: Vec<String>,
    /// vdu id → delta id → number_of_instances.
    pub vdu_deltas: BTreeMap<String, BTreeMap<String, u32>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstantiationLevel {
    pub id: String,
    pub description: Option<String>,
    /// aspect id → scale_level.
    pub scale_info: BTreeMap<String, u32>,
    /// vdu id → number_of_instances (from `VduInstantiationLevels`).
    pub vdu_instances: BTreeMap<String, u32>,
}

/// `sw_image_data` of a VDU or virtual storage (SOL005 `SoftwareImageInformation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoftwareImage {
    /// Node template name, which Tacker also uses as the software image id.
    pub id: String,
    pub name: String,
    pub version: Option<String>,
    pub provider: Option<String>,
    pub checksum: Option<Checksum>,
    pub container_format: Option<String>,
    pub disk_format: Option<String>,
    /// In bytes (SOL005 reports minDisk in GB and minRam in MB; convert there).
    pub min_disk: Option<u64>,
    pub min_ram: Option<u64>,
    pub size: Option<u64>,
    /// Image file inside the package (resolved against the VNFD file), or a URI.
    pub image_path: Option<String>,
}
