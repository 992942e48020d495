//! Test support (feature `test-support`): build VNF packages in code.
//!
//! ```text
//! let csar = CsarBuilder::sample().descriptor_id("0f0e...").to_tempfile()?;
//! let contents = solgate_vnfpkg::inspect(csar.path(), &Limits::default())?;
//! ```
//!
//! [`CsarBuilder::sample`] is a multi-file SOL004 package shaped like Tacker's samples
//! (top VNFD + types + one file per flavour); TOSCA.meta is generated at build time with the
//! SHA-256 of every artifact added through [`CsarBuilder::artifact`], so tests can change
//! files freely and still get a valid package, or override a hash to get an invalid one.

use std::io::{self, Cursor, Write};
use std::path::Path;

use sha2::Digest;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// `descriptor_id` (vnfdId) of [`CsarBuilder::sample`] and [`CsarBuilder::single_file`].
pub const SAMPLE_VNFD_ID: &str = "5ad7b0a4-1c1e-4a8e-9f63-2b7d6f0e9c11";

pub const SAMPLE_TOP: &str = "Definitions/sample_top.vnfd.yaml";
pub const SAMPLE_TYPES: &str = "Definitions/sample_types.yaml";
pub const SAMPLE_DF_SIMPLE: &str = "Definitions/sample_df_simple.yaml";
pub const SAMPLE_DF_SMALL: &str = "Definitions/sample_df_small.yaml";
pub const SAMPLE_INSTALL_SH: &str = "Scripts/install.sh";
pub const SAMPLE_DEPLOYMENT: &str = "Files/kubernetes/deployment.yaml";
pub const SAMPLE_IMAGE: &str = "Files/images/sample-image.img";
pub const SINGLE_VNFD: &str = "Definitions/single.vnfd.yaml";

fn sha256_hex(data: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(data))
}

#[derive(Debug, Clone)]
struct ArtifactSpec {
    path: String,
    algorithm: String,
    hash: Option<String>,
}

#[derive(Debug, Clone)]
enum Item {
    File(Vec<u8>),
    Dir,
    Symlink(String),
}

/// Builds a CSAR zip. Entry names are written exactly as given (unsafe names included), so
/// it can also build the hostile packages the reader must refuse.
#[derive(Debug, Clone)]
pub struct CsarBuilder {
    entries: Vec<(String, Item)>,
    entry_definitions: Option<String>,
    manifest: Option<String>,
    artifacts: Vec<ArtifactSpec>,
    descriptor_id: String,
    compression: CompressionMethod,
}

impl Default for CsarBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl CsarBuilder {
    /// An empty package without TOSCA.meta.
    pub fn new() -> Self {
        CsarBuilder {
            entries: Vec::new(),
            entry_definitions: None,
            manifest: None,
            artifacts: Vec::new(),
            descriptor_id: SAMPLE_VNFD_ID.to_owned(),
            compression: CompressionMethod::Deflated,
        }
    }

    /// The valid multi-file sample: flavours `simple` (VDU1 scalable by aspect `VDU1_scale`
    /// up to level 3, VDU2 with a block storage, instantiation levels 1 and 2, external CP
    /// VDU1_CP1) and `small` (VDU1 only); artifacts Scripts/install.sh,
    /// Files/kubernetes/deployment.yaml and a software image file, all hashed in TOSCA.meta.
    pub fn sample() -> Self {
        let image: &[u8] = b"not really a qcow2 image, just bytes to hash\n";
        let image_hash = sha256_hex(image);
        CsarBuilder::new()
            .entry_definitions(SAMPLE_TOP)
            .file(SAMPLE_TOP, SAMPLE_TOP_YAML)
            .file(SAMPLE_TYPES, SAMPLE_TYPES_YAML)
            .file(SAMPLE_DF_SIMPLE, SAMPLE_DF_SIMPLE_YAML.replace("@IMAGE_SHA256@", &image_hash))
            .file(SAMPLE_DF_SMALL, SAMPLE_DF_SMALL_YAML.replace("@IMAGE_SHA256@", &image_hash))
            .artifact(SAMPLE_INSTALL_SH, SAMPLE_INSTALL_SH_TEXT)
            .artifact(SAMPLE_DEPLOYMENT, SAMPLE_DEPLOYMENT_YAML)
            .artifact(SAMPLE_IMAGE, image)
    }

    /// A valid package whose VNFD is one YAML file (TOSCA.meta + Definitions/single.vnfd.yaml).
    pub fn single_file() -> Self {
        CsarBuilder::new().entry_definitions(SINGLE_VNFD).file(SINGLE_VNFD, SINGLE_VNFD_YAML)
    }

    /// Generates TOSCA-Metadata/TOSCA.meta naming `path` as Entry-Definitions.
    pub fn entry_definitions(mut self, path: &str) -> Self {
        self.entry_definitions = Some(path.to_owned());
        self
    }

    /// Adds `ETSI-Entry-Manifest: path` to the generated TOSCA.meta.
    pub fn entry_manifest(mut self, path: &str) -> Self {
        self.manifest = Some(path.to_owned());
        self
    }

    /// Generates no TOSCA.meta (SOL004 option 2, or a broken package).
    pub fn without_tosca_meta(mut self) -> Self {
        self.entry_definitions = None;
        self
    }

    /// Sets the VNFD `descriptor_id` (vnfdId): every occurrence of the current id in text
    /// files is replaced at build time. Gateway tests need one per uploaded package.
    /// The sample with an anti-affinity rule for VDU1's VNFCs in flavour `simple` (SOL001
    /// `tosca.policies.nfv.AntiAffinityRule`, `scope`), as Tacker's sample packages write it.
    pub fn vdu1_anti_affinity(self, scope: &str) -> Self {
        let rule = format!(
            "  policies:\n    - policy_antiaffinity_vdu1:\n        type: tosca.policies.nfv.AntiAffinityRule\n        \
             targets: [ VDU1 ]\n        properties:\n          scope: {scope}\n\n"
        );
        self.edit(SAMPLE_DF_SIMPLE, |text| text.replacen("  policies:\n", &rule, 1))
    }

    /// The sample with a `tosca.nodes.nfv.VirtualCp` `VDU1_VCP` targeting VDU1 in flavour
    /// `simple` (SOL001 V4.3.1: the service a Kubernetes Service gives the VDU's pods).
    pub fn vdu1_virtual_cp(self) -> Self {
        let node = "    VDU1_VCP:\n      type: tosca.nodes.nfv.VirtualCp\n      properties:\n        \
                    layer_protocols: [ ipv4 ]\n      requirements:\n        - target: VDU1\n\n";
        self.edit(SAMPLE_DF_SIMPLE, |text| text.replacen("    VDU1_CP1:\n", &format!("{node}    VDU1_CP1:\n"), 1))
    }

    /// The sample with a `tosca.nodes.nfv.VipCp` `VIP_CP` in flavour `simple` (SOL001 V3.5.1):
    /// a high-availability address on internalVL1 shared by VDU1_CP2 and VDU2_CP1.
    pub fn internal_vip_cp(self) -> Self {
        let node = "    VIP_CP:\n      type: tosca.nodes.nfv.VipCp\n      properties:\n        \
                    layer_protocols: [ ipv4 ]\n        vip_function: high_availability\n      requirements:\n        \
                    - virtual_link: internalVL1\n        - target: VDU1_CP2\n        - target: VDU2_CP1\n\n";
        self.edit(SAMPLE_DF_SIMPLE, |text| text.replacen("    VDU1_CP1:\n", &format!("{node}    VDU1_CP1:\n"), 1))
    }

    /// The sample with two `tosca.nodes.nfv.DeployableModule`s in flavour `simple` (SOL001
    /// V4.5.1): `front_module` (VDU1) and `back_module` (VDU2).
    pub fn two_deployable_modules(self) -> Self {
        let nodes = "    front_module:\n      type: tosca.nodes.nfv.DeployableModule\n      properties:\n        \
                     name: front\n        description: The front end\n      requirements:\n        - member: VDU1\n\n    \
                     back_module:\n      type: tosca.nodes.nfv.DeployableModule\n      properties:\n        \
                     name: back\n      requirements:\n        - member: VDU2\n\n";
        self.edit(SAMPLE_DF_SIMPLE, |text| text.replacen("    VDU1_CP1:\n", &format!("{nodes}    VDU1_CP1:\n"), 1))
    }

    pub fn descriptor_id(mut self, id: &str) -> Self {
        self.descriptor_id = id.to_owned();
        self
    }

    /// Stores entries uncompressed instead of deflated.
    pub fn stored(mut self) -> Self {
        self.compression = CompressionMethod::Stored;
        self
    }

    /// Adds or replaces a file.
    pub fn file(mut self, path: &str, content: impl AsRef<[u8]>) -> Self {
        let item = Item::File(content.as_ref().to_vec());
        match self.entries.iter_mut().find(|(p, _)| p == path) {
            Some(slot) => slot.1 = item,
            None => self.entries.push((path.to_owned(), item)),
        }
        self
    }

    /// Adds or replaces a file and declares it in TOSCA.meta with its SHA-256.
    pub fn artifact(mut self, path: &str, content: impl AsRef<[u8]>) -> Self {
        if !self.artifacts.iter().any(|a| a.path == path) {
            self.artifacts.push(ArtifactSpec { path: path.to_owned(), algorithm: "SHA-256".into(), hash: None });
        }
        self.file(path, content)
    }

    /// Declares `hash` (instead of the computed one) for an artifact, with `algorithm`.
    pub fn artifact_hash(mut self, path: &str, algorithm: &str, hash: &str) -> Self {
        match self.artifacts.iter_mut().find(|a| a.path == path) {
            Some(a) => {
                a.algorithm = algorithm.to_owned();
                a.hash = Some(hash.to_owned());
            }
            None => self.artifacts.push(ArtifactSpec {
                path: path.to_owned(),
                algorithm: algorithm.to_owned(),
                hash: Some(hash.to_owned()),
            }),
        }
        self
    }

    /// Rewrites a text file (no-op when absent).
    pub fn edit(mut self, path: &str, f: impl FnOnce(&str) -> String) -> Self {
        if let Some((_, Item::File(data))) = self.entries.iter_mut().find(|(p, _)| p == path) {
            *data = f(&String::from_utf8_lossy(data)).into_bytes();
        }
        self
    }

    /// Removes a file or directory entry and any artifact declaration of it.
    pub fn remove(mut self, path: &str) -> Self {
        self.entries.retain(|(p, _)| p != path);
        self.artifacts.retain(|a| a.path != path);
        self
    }

    pub fn dir(mut self, path: &str) -> Self {
        self.entries.push((path.to_owned(), Item::Dir));
        self
    }

    pub fn symlink(mut self, path: &str, target: &str) -> Self {
        self.entries.push((path.to_owned(), Item::Symlink(target.to_owned())));
        self
    }

    /// Content of a file as it will be written (before the descriptor id substitution).
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.entries.iter().find_map(|(p, item)| match item {
            Item::File(data) if p == path => Some(data.as_slice()),
            _ => None,
        })
    }

    fn substituted(&self, data: &[u8]) -> Vec<u8> {
        if self.descriptor_id == SAMPLE_VNFD_ID {
            return data.to_vec();
        }
        match std::str::from_utf8(data) {
            Ok(text) => text.replace(SAMPLE_VNFD_ID, &self.descriptor_id).into_bytes(),
            Err(_) => data.to_vec(),
        }
    }

    fn tosca_meta(&self, entry: &str) -> String {
        let mut meta = format!(
            "TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: solgate tests\nEntry-Definitions: {entry}\n"
        );
        if let Some(m) = &self.manifest {
            meta.push_str(&format!("ETSI-Entry-Manifest: {m}\n"));
        }
        for a in &self.artifacts {
            let hash =
                a.hash.clone().unwrap_or_else(|| sha256_hex(&self.substituted(self.get(&a.path).unwrap_or_default())));
            meta.push_str(&format!(
                "\nName: {}\nContent-Type: application/octet-stream\nAlgorithm: {}\nHash: {hash}\n",
                a.path, a.algorithm
            ));
        }
        meta
    }

    /// The zip bytes.
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        let zip_err = |e: zip::result::ZipError| io::Error::other(e.to_string());
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        let options = SimpleFileOptions::default().compression_method(self.compression);
        let explicit_meta = self.entries.iter().any(|(p, _)| p == crate::meta::TOSCA_META);
        if let (Some(entry), false) = (&self.entry_definitions, explicit_meta) {
            zip.start_file(crate::meta::TOSCA_META, options).map_err(zip_err)?;
            zip.write_all(self.tosca_meta(entry).as_bytes())?;
        }
        for (path, item) in &self.entries {
            match item {
                Item::File(data) => {
                    zip.start_file(path.as_str(), options).map_err(zip_err)?;
                    zip.write_all(&self.substituted(data))?;
                }
                Item::Dir => zip.add_directory(path.as_str(), options).map_err(zip_err)?,
                Item::Symlink(target) => zip.add_symlink(path.as_str(), target.as_str(), options).map_err(zip_err)?,
            }
        }
        Ok(zip.finish().map_err(zip_err)?.into_inner())
    }

    pub fn write_to(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.to_bytes()?)
    }

    /// The package in a temporary `.zip` file, deleted when the handle drops.
    pub fn to_tempfile(&self) -> io::Result<tempfile::NamedTempFile> {
        let mut file = tempfile::Builder::new().suffix(".zip").tempfile()?;
        file.write_all(&self.to_bytes()?)?;
        file.flush()?;
        Ok(file)
    }
}

/// Zips the regular files below `dir` (paths relative to it, `/`-separated, sorted), as
/// `python3 -m zipfile -c` would for a package folder.
pub fn zip_directory(dir: &Path) -> io::Result<Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, std::path::PathBuf)>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(base, &path, out)?;
            } else {
                let rel = path.strip_prefix(base).map_err(io::Error::other)?;
                let name: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                out.push((name.join("/"), path));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    let zip_err = |e: zip::result::ZipError| io::Error::other(e.to_string());
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, path) in files {
        zip.start_file(name, options).map_err(zip_err)?;
        zip.write_all(&std::fs::read(path)?)?;
    }
    Ok(zip.finish().map_err(zip_err)?.into_inner())
}

const SAMPLE_TOP_YAML: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_2

description: Sample VNF used by solgate tests (top-level VNFD)

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
  - sample_types.yaml
  - sample_df_simple.yaml
  - sample_df_small.yaml

topology_template:
  inputs:
    selected_flavour:
      type: string
      description: Deployment flavour chosen in the InstantiateVnfRequest

  node_templates:
    VNF:
      type: solgate.sample.VNF
      properties:
        flavour_id: { get_input: selected_flavour }
        configurable_properties:
          is_autoscale_enabled: false
          is_autoheal_enabled: false
"#;

const SAMPLE_TYPES_YAML: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_2

description: Node types of the solgate sample VNF

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml

node_types:
  solgate.sample.BaseVNF:
    derived_from: tosca.nodes.nfv.VNF
    properties:
      provider:
        type: string
        default: Solgate
      vnfm_info:
        type: list
        entry_schema:
          type: string
        default: [ Tacker ]

  solgate.sample.VNF:
    derived_from: solgate.sample.BaseVNF
    properties:
      descriptor_id:
        type: string
        constraints: [ valid_values: [ 5ad7b0a4-1c1e-4a8e-9f63-2b7d6f0e9c11 ] ]
        default: 5ad7b0a4-1c1e-4a8e-9f63-2b7d6f0e9c11
      descriptor_version:
        type: string
        default: '1.0'
      product_name:
        type: string
        default: Sample VNF
      software_version:
        type: string
        default: '1.0'
      flavour_id:
        type: string
        constraints: [ valid_values: [ simple, small ] ]
        default: simple
      flavour_description:
        type: string
        default: ''
    requirements:
      - virtual_link_external:
          capability: tosca.capabilities.nfv.VirtualLinkable
    interfaces:
      Vnflcm:
        type: tosca.interfaces.nfv.Vnflcm
"#;

const SAMPLE_DF_SIMPLE_YAML: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_2

description: Simple deployment flavour of the sample VNF

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
  - sample_types.yaml

topology_template:
  inputs:
    descriptor_id:
      type: string
    flavour_id:
      type: string
    flavour_description:
      type: string

  substitution_mappings:
    node_type: solgate.sample.VNF
    properties:
      flavour_id: simple
    requirements:
      virtual_link_external: [ VDU1_CP1, virtual_link ]

  node_templates:
    VNF:
      type: solgate.sample.VNF
      properties:
        flavour_description: Simple flavour with a scalable front end
      artifacts:
        install-script:
          description: Post-install configuration script
          type: tosca.artifacts.Implementation.Bash
          file: ../Scripts/install.sh

    VDU1:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: VDU1
        description: Front end, scaled by VDU1_scale
        vdu_profile:
          min_number_of_instances: 1
          max_number_of_instances: 4
        sw_image_data:
          name: sample-image
          version: '0.5.2'
          checksum:
            algorithm: sha-256
            hash: @IMAGE_SHA256@
          container_format: bare
          disk_format: qcow2
          min_disk: 1 GB
          min_ram: 256 MB
          size: 12 GB
      artifacts:
        sw_image:
          type: tosca.artifacts.nfv.SwImage
          file: ../Files/images/sample-image.img
      capabilities:
        virtual_compute:
          properties:
            requested_additional_capabilities:
              properties:
                requested_additional_capability_name: m1.tiny
                support_mandatory: true
                target_performance_parameters:
                  entry_schema: test
            virtual_memory:
              virtual_mem_size: 512 MB
            virtual_cpu:
              num_virtual_cpu: 1
            virtual_local_storage:
              - size_of_storage: 1 GB

    VDU2:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: VDU2
        description: Back end with a data volume
        vdu_profile:
          min_number_of_instances: 1
          max_number_of_instances: 1
        sw_image_data:
          name: sample-image
          version: '0.5.2'
          checksum:
            algorithm: sha-256
            hash: @IMAGE_SHA256@
          container_format: bare
          disk_format: qcow2
          min_disk: 1 GB
          size: 12 GB
      capabilities:
        virtual_compute:
          properties:
            virtual_memory:
              virtual_mem_size: 1 GiB
            virtual_cpu:
              num_virtual_cpu: 2
      requirements:
        - virtual_storage: VirtualStorage

    VirtualStorage:
      type: tosca.nodes.nfv.Vdu.VirtualBlockStorage
      properties:
        virtual_block_storage_data:
          size_of_storage: 2 GB
          rdma_enabled: false

    VDU1_CP1:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
        order: 0
      requirements:
        - virtual_binding: VDU1

    VDU1_CP2:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
        order: 1
      requirements:
        - virtual_binding: VDU1
        - virtual_link: internalVL1

    VDU2_CP1:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
        order: 0
      requirements:
        - virtual_binding: VDU2
        - virtual_link: internalVL1

    internalVL1:
      type: tosca.nodes.nfv.VnfVirtualLink
      properties:
        connectivity_type:
          layer_protocols: [ ipv4 ]
        description: Internal network between VDU1 and VDU2
        vl_profile:
          max_bitrate_requirements:
            root: 1048576
            leaf: 1048576
          min_bitrate_requirements:
            root: 1048576
            leaf: 1048576
          virtual_link_protocol_data:
            - associated_layer_protocol: ipv4
              l3_protocol_data:
                ip_version: ipv4
                cidr: 192.168.10.0/24

  policies:
    - scaling_aspects:
        type: tosca.policies.nfv.ScalingAspects
        properties:
          aspects:
            VDU1_scale:
              name: VDU1_scale
              description: Adds or removes VDU1 instances
              max_scale_level: 3
              step_deltas:
                - delta_1

    - VDU1_initial_delta:
        type: tosca.policies.nfv.VduInitialDelta
        properties:
          initial_delta:
            number_of_instances: 1
        targets: [ VDU1 ]

    - VDU2_initial_delta:
        type: tosca.policies.nfv.VduInitialDelta
        properties:
          initial_delta:
            number_of_instances: 1
        targets: [ VDU2 ]

    - VDU1_scaling_aspect_deltas:
        type: tosca.policies.nfv.VduScalingAspectDeltas
        properties:
          aspect: VDU1_scale
          deltas:
            delta_1:
              number_of_instances: 1
        targets: [ VDU1 ]

    - instantiation_levels:
        type: tosca.policies.nfv.InstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              description: Smallest size
              scale_info:
                VDU1_scale:
                  scale_level: 0
            instantiation_level_2:
              description: Largest size
              scale_info:
                VDU1_scale:
                  scale_level: 2
          default_level: instantiation_level_1

    - VDU1_instantiation_levels:
        type: tosca.policies.nfv.VduInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              number_of_instances: 1
            instantiation_level_2:
              number_of_instances: 3
        targets: [ VDU1 ]

    - VDU2_instantiation_levels:
        type: tosca.policies.nfv.VduInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              number_of_instances: 1
            instantiation_level_2:
              number_of_instances: 1
        targets: [ VDU2 ]
"#;

const SAMPLE_DF_SMALL_YAML: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_2

description: Single-VM deployment flavour of the sample VNF

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
  - sample_types.yaml

topology_template:
  substitution_mappings:
    node_type: solgate.sample.VNF
    properties:
      flavour_id: small

  node_templates:
    VNF:
      type: solgate.sample.VNF
      properties:
        flavour_description: One VM, no scaling

    VDU1:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: VDU1
        description: All-in-one VM
        vdu_profile:
          min_number_of_instances: 1
          max_number_of_instances: 1
        sw_image_data:
          name: sample-image
          version: '0.5.2'
          checksum:
            algorithm: sha-256
            hash: @IMAGE_SHA256@
          container_format: bare
          disk_format: qcow2
          size: 12 GB
"#;

const SAMPLE_INSTALL_SH_TEXT: &str =
    "#!/bin/sh\n# Post-install configuration of the sample VNF.\necho \"configured $(hostname)\"\n";

const SAMPLE_DEPLOYMENT_YAML: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: vdu1
spec:
  replicas: 1
  selector:
    matchLabels:
      app: vdu1
  template:
    metadata:
      labels:
        app: vdu1
    spec:
      containers:
        - name: web
          image: nginx
          ports:
            - containerPort: 80
"#;

const SINGLE_VNFD_YAML: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_2

description: Single-file VNFD

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml

topology_template:
  node_templates:
    VNF:
      type: tosca.nodes.nfv.VNF
      properties:
        descriptor_id: 5ad7b0a4-1c1e-4a8e-9f63-2b7d6f0e9c11
        descriptor_version: '2.1'
        provider: Solgate
        product_name: Single File VNF
        software_version: 1.0
        vnfm_info: Tacker
        flavour_id: simple
        flavour_description: The only flavour

    VDU1:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: VDU1
        vdu_profile:
          min_number_of_instances: 1
          max_number_of_instances: 2

    CP1:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
      requirements:
        - virtual_binding: VDU1
"#;
