//! VDUs (`tosca.nodes.nfv.Vdu.Compute`), their virtual storages and software images.

use super::nodes::{Node, STORAGE_TYPES, Types, VDU_COMPUTE};
use super::properties::{StorageProps, SwImageData, VduProps};
use super::tosca::ArtifactDef;
use crate::error::CsarError;
use crate::loader::{is_uri, resolve};
use crate::model::{Checksum, SoftwareImage, Vdu, VduProfile, VirtualCompute, VirtualStorage};
use crate::yaml::{as_size, as_u32, scalar_string, text};

const SW_IMAGE_ARTIFACT: &str = "tosca.artifacts.nfv.SwImage";

/// The VDUs of a flavour, with the software images they name.
pub(super) fn vdus(
    nodes: &[Node<'_>],
    flavour: &str,
    types: &Types<'_>,
    images: &mut Vec<SoftwareImage>,
) -> Result<Vec<Vdu>, CsarError> {
    let mut vdus = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VDU_COMPUTE)) {
        let props: VduProps = node.props(types);
        let profile = &props.vdu_profile;
        let (Some(min), Some(max)) =
            (as_u32(&profile.min_number_of_instances), as_u32(&profile.max_number_of_instances))
        else {
            return Err(CsarError::invalid(format!(
                "VDU {} of flavour {flavour} lacks vdu_profile min_number_of_instances/max_number_of_instances",
                node.name
            )));
        };
        if min > max {
            return Err(CsarError::invalid(format!(
                "VDU {} of flavour {flavour}: min_number_of_instances {min} exceeds max_number_of_instances {max}",
                node.name
            )));
        }
        let image = software_image(node, props.sw_image_data.as_ref())?;
        let sw_image = image.as_ref().map(|i| i.id.clone());
        images.extend(image);
        vdus.push(Vdu {
            id: node.name.to_owned(),
            name: text(&props.name).unwrap_or_else(|| node.name.to_owned()),
            description: text(&props.description),
            vdu_profile: VduProfile { min_number_of_instances: min, max_number_of_instances: max },
            initial_delta: None,
            sw_image,
            virtual_storages: node.requirement("virtual_storage"),
            cps: Vec::new(),
            virtual_compute: virtual_compute(node),
        });
    }
    Ok(vdus)
}

/// The virtual storages of a flavour; every storage a VDU requires must be among them.
pub(super) fn virtual_storages(
    nodes: &[Node<'_>],
    flavour: &str,
    types: &Types<'_>,
    vdus: &[Vdu],
    images: &mut Vec<SoftwareImage>,
) -> Result<Vec<VirtualStorage>, CsarError> {
    let mut storages = Vec::new();
    for node in nodes.iter().filter(|n| n.kind.is_some_and(|k| STORAGE_TYPES.contains(&k))) {
        let props: StorageProps = node.props(types);
        let size = props.data().and_then(|d| match &d.size_of_storage {
            Some(_) => as_size(&d.size_of_storage),
            None => as_size(&d.max_size_of_storage),
        });
        let image = software_image(node, props.sw_image_data.as_ref())?;
        let sw_image = image.as_ref().map(|i| i.id.clone());
        images.extend(image);
        storages.push(VirtualStorage {
            id: node.name.to_owned(),
            node_type: node.kind.unwrap_or_default().to_owned(),
            size_of_storage: size,
            sw_image,
        });
    }
    for vdu in vdus {
        if let Some(s) = vdu.virtual_storages.iter().find(|s| !storages.iter().any(|v| &v.id == *s)) {
            return Err(CsarError::invalid(format!(
                "VDU {} of flavour {flavour} requires unknown virtual storage {s}",
                vdu.id
            )));
        }
    }
    Ok(storages)
}

/// The image file of a node: a `tosca.artifacts.nfv.SwImage` artifact, the `sw_image` key
/// Tacker v2 reads, or the short notation `name: file` Tacker v1 accepts.
fn image_file(node: &Node<'_>) -> Option<String> {
    node.def.artifacts.iter().find_map(|(key, art)| match art {
        ArtifactDef::Short(s) => Some(s.clone()),
        ArtifactDef::Full(d) if key == "sw_image" || d.type_name.as_deref() == Some(SW_IMAGE_ARTIFACT) => text(&d.file),
        _ => None,
    })
}

fn software_image(node: &Node<'_>, sw: Option<&SwImageData>) -> Result<Option<SoftwareImage>, CsarError> {
    let Some(sw) = sw else { return Ok(None) };
    let checksum =
        sw.checksum.as_ref().and_then(|c| Some(Checksum { algorithm: text(&c.algorithm)?, hash: text(&c.hash)? }));
    let image_path = match image_file(node) {
        Some(f) if is_uri(&f) => Some(f),
        Some(f) => Some(
            resolve(&node.doc.path, &f)
                .ok_or_else(|| CsarError::PathOutsidePackage { file: node.doc.path.clone(), path: f.clone() })?,
        ),
        None => None,
    };
    Ok(Some(SoftwareImage {
        id: node.name.to_owned(),
        name: text(&sw.name).unwrap_or_else(|| node.name.to_owned()),
        version: text(&sw.version),
        provider: text(&sw.provider),
        checksum,
        container_format: text(&sw.container_format),
        disk_format: text(&sw.disk_format),
        min_disk: as_size(&sw.min_disk),
        min_ram: as_size(&sw.min_ram),
        size: as_size(&sw.size),
        image_path,
    }))
}

fn virtual_compute(node: &Node<'_>) -> Option<VirtualCompute> {
    let props = node.def.capabilities.virtual_compute.properties.as_ref()?;
    let capability_name = props
        .requested_additional_capabilities
        .iter()
        .find_map(|(_, c)| c.requested_additional_capability_name.as_ref().and_then(scalar_string));
    Some(VirtualCompute {
        requested_additional_capability_name: capability_name,
        num_virtual_cpu: as_u32(&props.virtual_cpu.num_virtual_cpu),
        virtual_mem_size: as_size(&props.virtual_memory.virtual_mem_size),
    })
}
