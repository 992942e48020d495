//! Turns the loaded VNFD YAML files into a [`Vnfd`] summary (SOL001 v2.6.1 data model).

mod connectivity;
mod modules;
mod nodes;
mod policies;
mod properties;
mod scripts;
mod tosca;
mod vdu;

use serde_yaml_ng::Value;

use crate::error::CsarError;
use crate::loader::Doc;
use crate::model::{Flavour, SoftwareImage, Vnfd};
use crate::yaml::{normalise, read, strings, text};
use nodes::{Node, Topology, Types, VNF};
use properties::VnfProps;
use tosca::{ServiceTemplate, is_not_function};

/// The VNF nodes of all topologies: a property is taken from the first node that sets it,
/// else from the first whose type gives it a default.
struct VnfNodes {
    own: Vec<VnfProps>,
    merged: Vec<VnfProps>,
}

impl VnfNodes {
    fn pick(&self, field: impl Fn(&VnfProps) -> &Option<Value>) -> Option<&Value> {
        self.own.iter().chain(&self.merged).find_map(|p| field(p).as_ref())
    }

    fn required(
        &self,
        property: &'static str,
        field: impl Fn(&VnfProps) -> &Option<Value>,
    ) -> Result<String, CsarError> {
        self.pick(field)
            .and_then(crate::yaml::scalar_string)
            .filter(|s| !s.trim().is_empty())
            .ok_or(CsarError::MissingVnfProperty { property })
    }
}

pub(crate) fn summarise(docs: &[Doc]) -> Result<Vnfd, CsarError> {
    let templates: Vec<ServiceTemplate> = docs.iter().map(|d| read(normalise(d.value.clone()))).collect();
    let types = Types::new(&templates);
    let topologies: Vec<Topology<'_>> = docs
        .iter()
        .zip(&templates)
        .filter_map(|(doc, t)| t.topology_template.as_ref().map(|tt| Topology { doc, tt }))
        .collect();
    let vnf_nodes: Vec<Node<'_>> =
        topologies.iter().flat_map(|t| t.nodes(&types)).filter(|n| n.kind == Some(VNF)).collect();
    let vnf = VnfNodes {
        own: vnf_nodes.iter().map(Node::own_props).collect(),
        merged: vnf_nodes.iter().map(|n| n.props(&types)).collect(),
    };

    let mut flavours: Vec<Flavour> = Vec::new();
    let mut images: Vec<SoftwareImage> = Vec::new();
    let descriptor_id = vnf.required("descriptor_id", |p| &p.descriptor_id)?;
    let provider = vnf.required("provider", |p| &p.provider)?;
    let product_name = vnf.required("product_name", |p| &p.product_name)?;
    let software_version = vnf.required("software_version", |p| &p.software_version)?;
    let descriptor_version = vnf.required("descriptor_version", |p| &p.descriptor_version)?;
    for (topology, flavour_id) in flavour_topologies(&topologies, &types)? {
        if flavours.iter().any(|f| f.id == flavour_id) {
            return Err(CsarError::invalid(format!("deployment flavour {flavour_id} is defined more than once")));
        }
        let (flavour, flavour_images) = build_flavour(&topology, flavour_id, &types)?;
        for image in flavour_images {
            if !images.iter().any(|i| i.id == image.id) {
                images.push(image);
            }
        }
        flavours.push(flavour);
    }

    Ok(Vnfd {
        descriptor_id,
        provider,
        product_name,
        software_version,
        descriptor_version,
        vnfm_info: strings(&vnf.pick(|p| &p.vnfm_info).cloned()),
        configurable_properties: vnf.pick(|p| &p.configurable_properties).and_then(|v| serde_json::to_value(v).ok()),
        flavours,
        software_images: images,
    })
}

/// The flavour id a topology's VNF node declares.
fn vnf_flavour_id(t: &Topology<'_>, types: &Types<'_>) -> Option<String> {
    t.nodes(types)
        .into_iter()
        .filter(|n| n.kind == Some(VNF))
        .find_map(|n| text(&n.props::<VnfProps>(types).flavour_id))
}

/// SOL001 clause 6.8: each deployment flavour is a topology template substituting the VNF
/// node, with `flavour_id` in `substitution_mappings.properties` (or the VNF node). A
/// single-file VNFD without substitution has one flavour taken from its VNF node.
fn flavour_topologies<'a>(
    topologies: &[Topology<'a>],
    types: &Types<'a>,
) -> Result<Vec<(Topology<'a>, String)>, CsarError> {
    let mut out = Vec::new();
    let mut unresolved = Vec::new();
    for t in topologies {
        let Some(sm) = &t.tt.substitution_mappings else { continue };
        let from_mapping =
            sm.properties.flavour_id.as_ref().filter(|v| is_not_function(v)).and_then(crate::yaml::scalar_string);
        match from_mapping.or_else(|| vnf_flavour_id(t, types)) {
            Some(id) => out.push((*t, id)),
            None => unresolved.push(t.doc.path.clone()),
        }
    }
    if out.is_empty() {
        // No substitution: the entry file's own topology is the only flavour.
        if let Some(t) = topologies.first()
            && let Some(id) = vnf_flavour_id(t, types)
        {
            out.push((*t, id));
        }
    }
    if out.is_empty() {
        let detail = if unresolved.is_empty() {
            "no deployment flavour found (no topology template with a flavour_id)".to_owned()
        } else {
            format!("no flavour_id in substitution_mappings of {}", unresolved.join(", "))
        };
        return Err(CsarError::invalid(detail));
    }
    Ok(out)
}

fn build_flavour<'a>(
    topology: &Topology<'a>,
    id: String,
    types: &Types<'a>,
) -> Result<(Flavour, Vec<SoftwareImage>), CsarError> {
    let nodes = topology.nodes(types);
    let description = nodes
        .iter()
        .filter(|n| n.kind == Some(VNF))
        .find_map(|n| text(&n.props::<VnfProps>(types).flavour_description));
    let mut images = Vec::new();
    let mut vdus = vdu::vdus(&nodes, &id, types, &mut images)?;
    let virtual_storages = vdu::virtual_storages(&nodes, &id, types, &vdus, &mut images)?;
    let virtual_links = connectivity::virtual_links(&nodes, types);
    let scope = connectivity::Scope { flavour: &id, vdus: &vdus, virtual_links: &virtual_links };
    let cps = connectivity::cps(&nodes, types, &scope, &topology.external_requirements())?;
    let virtual_cps = connectivity::virtual_cps(&nodes, &scope)?;
    let vip_cps = connectivity::vip_cps(&nodes, types, &scope, &cps)?;
    let deployable_modules = modules::deployable_modules(&nodes, &id, types, &vdus)?;
    for vdu in &mut vdus {
        vdu.cps = cps.iter().filter(|c| c.vdu.as_deref() == Some(vdu.id.as_str())).map(|c| c.id.clone()).collect();
    }
    let lcm_scripts = scripts::lcm_scripts(&nodes, &id)?;
    let mut flavour = Flavour {
        id,
        description,
        file: topology.doc.path.clone(),
        vdus,
        virtual_storages,
        virtual_links,
        cps,
        scaling_aspects: Vec::new(),
        instantiation_levels: Vec::new(),
        default_level: None,
        placement_rules: Vec::new(),
        virtual_cps,
        vip_cps,
        deployable_modules,
        lcm_scripts,
    };
    policies::apply_policies(&mut flavour, topology, types)?;
    Ok((flavour, images))
}
