//! Turns the loaded VNFD YAML files into a [`Vnfd`] summary (SOL001 v2.6.1 data model).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_yaml_ng::Value;

use crate::error::CsarError;
use crate::loader::{Doc, is_uri, resolve};
use crate::model::{
    Checksum, Cp, CpKind, DeployableModule, Flavour, InstantiationLevel, L3ProtocolData, PlacementRule, ScalingAspect,
    SoftwareImage, Vdu, VduProfile, VipCpd, VirtualCompute, VirtualCpd, VirtualLink, VirtualStorage, Vnfd,
};
use crate::units::parse_size;

const VNF: &str = "tosca.nodes.nfv.VNF";
const VDU_COMPUTE: &str = "tosca.nodes.nfv.Vdu.Compute";
const STORAGE_TYPES: [&str; 3] = [
    "tosca.nodes.nfv.Vdu.VirtualBlockStorage",
    "tosca.nodes.nfv.Vdu.VirtualObjectStorage",
    "tosca.nodes.nfv.Vdu.VirtualFileStorage",
];
const VNF_VIRTUAL_LINK: &str = "tosca.nodes.nfv.VnfVirtualLink";
const VDU_CP: &str = "tosca.nodes.nfv.VduCp";
const VNF_EXT_CP: &str = "tosca.nodes.nfv.VnfExtCp";
/// SOL001 V4.3.1: a CP giving access to a set of VNFC instances (a Kubernetes Service).
const VIRTUAL_CP: &str = "tosca.nodes.nfv.VirtualCp";
/// SOL001 V3.5.1: a virtual IP address shared by VduCps (properties `vip_function`,
/// `dedicated_ip_address`; requirements `virtual_link` (VipVirtualLinksTo, exactly one) and
/// `target` (DependsOn a VduCp, one or more)).
const VIP_CP: &str = "tosca.nodes.nfv.VipCp";
/// SOL001 V4.5.1: a set of optional VDUs (properties `name`, `description`; requirement
/// `member`, one per VDU).
const DEPLOYABLE_MODULE: &str = "tosca.nodes.nfv.DeployableModule";
const NODE_TYPES: [&str; 11] = [
    VNF,
    VDU_COMPUTE,
    STORAGE_TYPES[0],
    STORAGE_TYPES[1],
    STORAGE_TYPES[2],
    VNF_VIRTUAL_LINK,
    VDU_CP,
    VNF_EXT_CP,
    VIRTUAL_CP,
    VIP_CP,
    DEPLOYABLE_MODULE,
];

const SCALING_ASPECTS: &str = "tosca.policies.nfv.ScalingAspects";
const VDU_INITIAL_DELTA: &str = "tosca.policies.nfv.VduInitialDelta";
const VDU_SCALING_ASPECT_DELTAS: &str = "tosca.policies.nfv.VduScalingAspectDeltas";
const INSTANTIATION_LEVELS: &str = "tosca.policies.nfv.InstantiationLevels";
const VDU_INSTANTIATION_LEVELS: &str = "tosca.policies.nfv.VduInstantiationLevels";
const AFFINITY_RULE: &str = "tosca.policies.nfv.AffinityRule";
const ANTI_AFFINITY_RULE: &str = "tosca.policies.nfv.AntiAffinityRule";
const POLICY_TYPES: [&str; 7] = [
    SCALING_ASPECTS,
    VDU_INITIAL_DELTA,
    VDU_SCALING_ASPECT_DELTAS,
    INSTANTIATION_LEVELS,
    VDU_INSTANTIATION_LEVELS,
    AFFINITY_RULE,
    ANTI_AFFINITY_RULE,
];

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

fn is_function(v: &Value) -> bool {
    v.as_mapping().is_some_and(|m| {
        m.len() == 1 && m.keys().next().and_then(Value::as_str).is_some_and(|k| FUNCTIONS.contains(&k))
    })
}

fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar_string(&t.value),
        _ => None,
    }
}

fn as_u32(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|x| u32::try_from(x).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_size(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => parse_size(s),
        _ => None,
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn string_at(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(scalar_string)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Sequence(seq)) => seq.iter().filter_map(scalar_string).collect(),
        Some(other) => scalar_string(other).into_iter().collect(),
        None => Vec::new(),
    }
}

fn entries(v: Option<&Value>) -> impl Iterator<Item = (&str, &Value)> {
    v.and_then(Value::as_mapping).into_iter().flat_map(|m| m.iter()).filter_map(|(k, v)| Some((k.as_str()?, v)))
}

/// Node and policy type definitions found in the package, for `derived_from` chains and
/// property defaults.
struct Types<'a> {
    nodes: HashMap<&'a str, &'a Value>,
    policies: HashMap<&'a str, &'a Value>,
}

impl<'a> Types<'a> {
    fn new(docs: &'a [Doc]) -> Self {
        let mut nodes = HashMap::new();
        let mut policies = HashMap::new();
        for doc in docs {
            for (name, def) in entries(doc.value.get("node_types")) {
                nodes.entry(name).or_insert(def);
            }
            for (name, def) in entries(doc.value.get("policy_types")) {
                policies.entry(name).or_insert(def);
            }
        }
        Types { nodes, policies }
    }

    /// The SOL001 normative type `type_name` is (or derives from), if any in `known`.
    fn normative(defs: &HashMap<&'a str, &'a Value>, type_name: &str, known: &[&'static str]) -> Option<&'static str> {
        let mut current = type_name;
        // Bounded walk: a derived_from cycle must not hang onboarding.
        for _ in 0..64 {
            if let Some(k) = known.iter().find(|k| **k == current) {
                return Some(k);
            }
            current = defs.get(current).and_then(|d| str_at(d, "derived_from"))?;
        }
        None
    }

    fn node_kind(&self, type_name: &str) -> Option<&'static str> {
        Self::normative(&self.nodes, type_name, &NODE_TYPES)
    }

    fn policy_kind(&self, type_name: &str) -> Option<&'static str> {
        Self::normative(&self.policies, type_name, &POLICY_TYPES)
    }

    /// `default` of property `prop` in the node type or the nearest ancestor defining it.
    fn default(&self, type_name: &str, prop: &str) -> Option<&'a Value> {
        let mut current = type_name;
        for _ in 0..64 {
            let def = self.nodes.get(current)?;
            if let Some(d) = def.get("properties").and_then(|p| p.get(prop)).and_then(|p| p.get("default")) {
                return Some(d);
            }
            current = str_at(def, "derived_from")?;
        }
        None
    }
}

#[derive(Clone, Copy)]
struct Node<'a> {
    name: &'a str,
    def: &'a Value,
    type_name: &'a str,
    kind: Option<&'static str>,
    doc: &'a Doc,
}

impl<'a> Node<'a> {
    /// A static property value: the node's own, else the type default (functions such as
    /// `get_input` do not count as a value).
    fn prop(&self, types: &Types<'a>, name: &str) -> Option<&'a Value> {
        self.def
            .get("properties")
            .and_then(|p| p.get(name))
            .filter(|v| !v.is_null() && !is_function(v))
            .or_else(|| types.default(self.type_name, name).filter(|v| !v.is_null() && !is_function(v)))
    }

    /// Targets of requirement `req` (`- req: node` or `- req: {node: node}`).
    fn requirement(&self, req: &str) -> Vec<String> {
        let Some(list) = self.def.get("requirements").and_then(Value::as_sequence) else { return Vec::new() };
        list.iter()
            .flat_map(|item| entries(Some(item)))
            .filter(|(k, _)| *k == req)
            .filter_map(|(_, v)| v.as_str().or_else(|| str_at(v, "node")).map(str::to_owned))
            .collect()
    }
}

struct Topology<'a> {
    doc: &'a Doc,
    tt: &'a Value,
}

impl<'a> Topology<'a> {
    fn nodes(&self, types: &Types<'a>) -> Vec<Node<'a>> {
        entries(self.tt.get("node_templates"))
            .filter_map(|(name, def)| {
                let type_name = str_at(def, "type")?;
                Some(Node { name, def, type_name, kind: types.node_kind(type_name), doc: self.doc })
            })
            .collect()
    }

    /// TOSCA 1.2 writes policies as a list of single-entry maps; a plain map is accepted too.
    fn policies(&self) -> Vec<(&'a str, &'a Value)> {
        match self.tt.get("policies") {
            Some(Value::Sequence(seq)) => seq.iter().flat_map(|item| entries(Some(item))).collect(),
            other => entries(other).collect(),
        }
    }

    /// The members of group `name` (`tosca.groups.nfv.PlacementGroup`), if it is one.
    fn group_members(&self, name: &str) -> Option<Vec<String>> {
        let group = self.tt.get("groups")?.get(name)?;
        Some(strings(group.get("members")))
    }

    fn substitution_mappings(&self) -> Option<&'a Value> {
        self.tt.get("substitution_mappings").filter(|v| v.is_mapping())
    }

    /// Node templates exposed through `substitution_mappings.requirements`
    /// (`name: [node, requirement]`, or `name: {mapping: [...]}`), with the requirement name.
    fn external_requirements(&self) -> HashMap<String, String> {
        let mut out = HashMap::new();
        let reqs = self.substitution_mappings().and_then(|sm| sm.get("requirements"));
        let pairs: Vec<(&str, &Value)> = match reqs {
            Some(Value::Sequence(seq)) => seq.iter().flat_map(|i| entries(Some(i))).collect(),
            other => entries(other).collect(),
        };
        for (req_name, target) in pairs {
            let target = target.get("mapping").unwrap_or(target);
            let node = match target {
                Value::Sequence(seq) => seq.first().and_then(Value::as_str),
                other => other.as_str(),
            };
            if let Some(node) = node {
                out.entry(node.to_owned()).or_insert_with(|| req_name.to_owned());
            }
        }
        out
    }
}

fn invalid(msg: impl Into<String>) -> CsarError {
    CsarError::InvalidVnfd(msg.into())
}

pub(crate) fn summarise(docs: &[Doc]) -> Result<Vnfd, CsarError> {
    let types = Types::new(docs);
    let topologies: Vec<Topology<'_>> = docs
        .iter()
        .filter_map(|doc| doc.value.get("topology_template").filter(|t| t.is_mapping()).map(|tt| Topology { doc, tt }))
        .collect();
    let vnf_nodes: Vec<Node<'_>> =
        topologies.iter().flat_map(|t| t.nodes(&types)).filter(|n| n.kind == Some(VNF)).collect();

    let vnf_prop = |name: &str| -> Option<&Value> {
        vnf_nodes
            .iter()
            .find_map(|n| n.def.get("properties").and_then(|p| p.get(name)).filter(|v| !v.is_null() && !is_function(v)))
            .or_else(|| vnf_nodes.iter().find_map(|n| n.prop(&types, name)))
    };
    let required = |name: &'static str| -> Result<String, CsarError> {
        vnf_prop(name)
            .and_then(scalar_string)
            .filter(|s| !s.trim().is_empty())
            .ok_or(CsarError::MissingVnfProperty { property: name })
    };
    let descriptor_id = required("descriptor_id")?;
    let provider = required("provider")?;
    let product_name = required("product_name")?;
    let software_version = required("software_version")?;
    let descriptor_version = required("descriptor_version")?;
    let vnfm_info = strings(vnf_prop("vnfm_info"));
    let configurable_properties = vnf_prop("configurable_properties").and_then(|v| serde_json::to_value(v).ok());

    let mut flavours: Vec<Flavour> = Vec::new();
    let mut images: Vec<SoftwareImage> = Vec::new();
    for (topology, flavour_id) in flavour_topologies(&topologies, &types)? {
        if flavours.iter().any(|f| f.id == flavour_id) {
            return Err(invalid(format!("deployment flavour {flavour_id} is defined more than once")));
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
        vnfm_info,
        configurable_properties,
        flavours,
        software_images: images,
    })
}

/// SOL001 clause 6.8: each deployment flavour is a topology template substituting the VNF
/// node, with `flavour_id` in `substitution_mappings.properties` (or the VNF node). A
/// single-file VNFD without substitution has one flavour taken from its VNF node.
fn flavour_topologies<'a>(
    topologies: &[Topology<'a>],
    types: &Types<'a>,
) -> Result<Vec<(Topology<'a>, String)>, CsarError> {
    let vnf_flavour_id = |t: &Topology<'a>| {
        t.nodes(types)
            .into_iter()
            .filter(|n| n.kind == Some(VNF))
            .find_map(|n| n.prop(types, "flavour_id").and_then(scalar_string))
    };
    let mut out = Vec::new();
    let mut unresolved = Vec::new();
    for t in topologies.iter().filter(|t| t.substitution_mappings().is_some()) {
        let from_mapping = t
            .substitution_mappings()
            .and_then(|sm| sm.get("properties"))
            .and_then(|p| p.get("flavour_id"))
            .filter(|v| !is_function(v))
            .and_then(scalar_string);
        match from_mapping.or_else(|| vnf_flavour_id(t)) {
            Some(id) => out.push((Topology { doc: t.doc, tt: t.tt }, id)),
            None => unresolved.push(t.doc.path.clone()),
        }
    }
    if out.is_empty() {
        // No substitution: the entry file's own topology is the only flavour.
        if let Some(t) = topologies.first()
            && let Some(id) = vnf_flavour_id(t)
        {
            out.push((Topology { doc: t.doc, tt: t.tt }, id));
        }
    }
    if out.is_empty() {
        let detail = if unresolved.is_empty() {
            "no deployment flavour found (no topology template with a flavour_id)".to_owned()
        } else {
            format!("no flavour_id in substitution_mappings of {}", unresolved.join(", "))
        };
        return Err(invalid(detail));
    }
    Ok(out)
}

fn software_image(node: &Node<'_>, types: &Types<'_>) -> Result<Option<SoftwareImage>, CsarError> {
    let Some(sw) = node.prop(types, "sw_image_data").filter(|v| v.is_mapping()) else { return Ok(None) };
    let checksum = sw
        .get("checksum")
        .and_then(|c| Some(Checksum { algorithm: string_at(c, "algorithm")?, hash: string_at(c, "hash")? }));
    // SwImage artifact: `type: tosca.artifacts.nfv.SwImage`, the `sw_image` key Tacker v2
    // reads, or the short notation `name: file` Tacker v1 accepts.
    let file = entries(node.def.get("artifacts")).find_map(|(key, art)| match art {
        Value::String(s) => Some(s.clone()),
        _ if key == "sw_image" || str_at(art, "type") == Some("tosca.artifacts.nfv.SwImage") => string_at(art, "file"),
        _ => None,
    });
    let image_path = match file {
        Some(f) if is_uri(&f) => Some(f),
        Some(f) => Some(
            resolve(&node.doc.path, &f)
                .ok_or_else(|| CsarError::PathOutsidePackage { file: node.doc.path.clone(), path: f.clone() })?,
        ),
        None => None,
    };
    Ok(Some(SoftwareImage {
        id: node.name.to_owned(),
        name: string_at(sw, "name").unwrap_or_else(|| node.name.to_owned()),
        version: string_at(sw, "version"),
        provider: string_at(sw, "provider"),
        checksum,
        container_format: string_at(sw, "container_format"),
        disk_format: string_at(sw, "disk_format"),
        min_disk: sw.get("min_disk").and_then(as_size),
        min_ram: sw.get("min_ram").and_then(as_size),
        size: sw.get("size").and_then(as_size),
        image_path,
    }))
}

fn virtual_compute(node: &Node<'_>) -> Option<VirtualCompute> {
    let props = node.def.get("capabilities")?.get("virtual_compute")?.get("properties")?;
    let capability_name = entries(props.get("requested_additional_capabilities"))
        .find_map(|(_, c)| string_at(c, "requested_additional_capability_name"));
    Some(VirtualCompute {
        requested_additional_capability_name: capability_name,
        num_virtual_cpu: props.get("virtual_cpu").and_then(|c| c.get("num_virtual_cpu")).and_then(as_u32),
        virtual_mem_size: props.get("virtual_memory").and_then(|m| m.get("virtual_mem_size")).and_then(as_size),
    })
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
        .find_map(|n| n.prop(types, "flavour_description").and_then(scalar_string));
    let external = topology.external_requirements();
    let mut images = Vec::new();

    let mut vdus = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VDU_COMPUTE)) {
        let profile = node.prop(types, "vdu_profile");
        let bound = |key: &str| profile.and_then(|p| p.get(key)).and_then(as_u32);
        let (Some(min), Some(max)) = (bound("min_number_of_instances"), bound("max_number_of_instances")) else {
            return Err(invalid(format!(
                "VDU {} of flavour {id} lacks vdu_profile min_number_of_instances/max_number_of_instances",
                node.name
            )));
        };
        if min > max {
            return Err(invalid(format!(
                "VDU {} of flavour {id}: min_number_of_instances {min} exceeds max_number_of_instances {max}",
                node.name
            )));
        }
        let image = software_image(node, types)?;
        let sw_image = image.as_ref().map(|i| i.id.clone());
        images.extend(image);
        vdus.push(Vdu {
            id: node.name.to_owned(),
            name: node.prop(types, "name").and_then(scalar_string).unwrap_or_else(|| node.name.to_owned()),
            description: node.prop(types, "description").and_then(scalar_string),
            vdu_profile: VduProfile { min_number_of_instances: min, max_number_of_instances: max },
            initial_delta: None,
            sw_image,
            virtual_storages: node.requirement("virtual_storage"),
            cps: Vec::new(),
            virtual_compute: virtual_compute(node),
        });
    }

    let mut virtual_storages = Vec::new();
    for node in nodes.iter().filter(|n| n.kind.is_some_and(|k| STORAGE_TYPES.contains(&k))) {
        let data = ["virtual_block_storage_data", "virtual_file_storage_data", "virtual_object_storage_data"]
            .iter()
            .find_map(|k| node.prop(types, k));
        let size =
            data.and_then(|d| d.get("size_of_storage").or_else(|| d.get("max_size_of_storage"))).and_then(as_size);
        let image = software_image(node, types)?;
        let sw_image = image.as_ref().map(|i| i.id.clone());
        images.extend(image);
        virtual_storages.push(VirtualStorage {
            id: node.name.to_owned(),
            node_type: node.kind.unwrap_or_default().to_owned(),
            size_of_storage: size,
            sw_image,
        });
    }
    for vdu in &vdus {
        if let Some(s) = vdu.virtual_storages.iter().find(|s| !virtual_storages.iter().any(|v| &v.id == *s)) {
            return Err(invalid(format!("VDU {} of flavour {id} requires unknown virtual storage {s}", vdu.id)));
        }
    }

    let virtual_links: Vec<VirtualLink> = nodes
        .iter()
        .filter(|n| n.kind == Some(VNF_VIRTUAL_LINK))
        .map(|node| VirtualLink {
            id: node.name.to_owned(),
            description: node.prop(types, "description").and_then(scalar_string),
            layer_protocols: strings(node.prop(types, "connectivity_type").and_then(|c| c.get("layer_protocols"))),
            l3_protocol_data: node
                .prop(types, "vl_profile")
                .and_then(|p| p.get("virtual_link_protocol_data"))
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
                .filter_map(|d| d.get("l3_protocol_data"))
                .map(|l3| L3ProtocolData { ip_version: string_at(l3, "ip_version"), cidr: string_at(l3, "cidr") })
                .collect(),
        })
        .collect();

    let mut cps = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VDU_CP) || n.kind == Some(VNF_EXT_CP)) {
        let (kind, vdu, virtual_link) = if node.kind == Some(VDU_CP) {
            (
                CpKind::VduCp,
                node.requirement("virtual_binding").into_iter().next(),
                node.requirement("virtual_link").into_iter().next(),
            )
        } else {
            (CpKind::VnfExtCp, None, node.requirement("internal_virtual_link").into_iter().next())
        };
        if let Some(v) = &vdu
            && !vdus.iter().any(|d| &d.id == v)
        {
            return Err(invalid(format!("CP {} of flavour {id} is bound to unknown VDU {v}", node.name)));
        }
        if let Some(vl) = &virtual_link
            && !virtual_links.iter().any(|l| &l.id == vl)
        {
            return Err(invalid(format!("CP {} of flavour {id} links to unknown virtual link {vl}", node.name)));
        }
        let external_requirement = external.get(node.name).cloned();
        cps.push(Cp {
            id: node.name.to_owned(),
            kind,
            vdu,
            virtual_link,
            layer_protocols: strings(node.prop(types, "layer_protocols")),
            order: node.prop(types, "order").and_then(as_u32),
            external: external_requirement.is_some() || kind == CpKind::VnfExtCp,
            external_requirement,
        });
    }
    let mut virtual_cps = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VIRTUAL_CP)) {
        let targets = node.requirement("target");
        if let Some(v) = targets.iter().find(|v| !vdus.iter().any(|d| &d.id == *v)) {
            return Err(invalid(format!("VirtualCp {} of flavour {id} targets unknown VDU {v}", node.name)));
        }
        virtual_cps.push(VirtualCpd { id: node.name.to_owned(), vdus: targets });
    }
    let mut vip_cps = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VIP_CP)) {
        let Some(vip_function) = node.prop(types, "vip_function").and_then(scalar_string) else {
            return Err(invalid(format!("VipCp {} of flavour {id} lacks vip_function", node.name)));
        };
        if !["high_availability", "load_balance"].contains(&vip_function.as_str()) {
            return Err(invalid(format!(
                "VipCp {} of flavour {id}: vip_function {vip_function} is neither high_availability nor load_balance",
                node.name
            )));
        }
        let Some(virtual_link) = node.requirement("virtual_link").into_iter().next() else {
            return Err(invalid(format!("VipCp {} of flavour {id} has no virtual_link", node.name)));
        };
        if !virtual_links.iter().any(|l| l.id == virtual_link) {
            return Err(invalid(format!(
                "VipCp {} of flavour {id} links to unknown virtual link {virtual_link}",
                node.name
            )));
        }
        let targets = node.requirement("target");
        if targets.is_empty() {
            return Err(invalid(format!("VipCp {} of flavour {id} has no target VduCp", node.name)));
        }
        if let Some(t) = targets.iter().find(|t| !cps.iter().any(|c| &c.id == *t && c.kind == CpKind::VduCp)) {
            return Err(invalid(format!("VipCp {} of flavour {id} targets unknown VduCp {t}", node.name)));
        }
        vip_cps.push(VipCpd {
            id: node.name.to_owned(),
            vip_function,
            virtual_link,
            targets,
            layer_protocols: strings(node.prop(types, "layer_protocols")),
            dedicated_ip_address: node.prop(types, "dedicated_ip_address").and_then(Value::as_bool).unwrap_or(true),
        });
    }
    let mut deployable_modules = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(DEPLOYABLE_MODULE)) {
        let members = node.requirement("member");
        if members.is_empty() {
            return Err(invalid(format!("DeployableModule {} of flavour {id} has no member VDU", node.name)));
        }
        if let Some(v) = members.iter().find(|v| !vdus.iter().any(|d| &d.id == *v)) {
            return Err(invalid(format!("DeployableModule {} of flavour {id} names unknown VDU {v}", node.name)));
        }
        deployable_modules.push(DeployableModule {
            id: node.name.to_owned(),
            name: node.prop(types, "name").and_then(scalar_string).unwrap_or_else(|| node.name.to_owned()),
            description: node.prop(types, "description").and_then(scalar_string),
            vdus: members,
        });
    }
    for vdu in &mut vdus {
        vdu.cps = cps.iter().filter(|c| c.vdu.as_deref() == Some(vdu.id.as_str())).map(|c| c.id.clone()).collect();
    }

    let lcm_scripts = lcm_scripts(&nodes, &id)?;
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
    apply_policies(&mut flavour, topology, types)?;
    Ok((flavour, images))
}

/// The VNF node's `Vnflcm` interface: operation → its Python artifact's file (Tacker's
/// `get_interface_script`). An operation without `implementation` (`instantiate: []`) has
/// no script; one naming an artifact the node lacks, or one of another type than
/// `tosca.artifacts.Implementation.Python` (the only kind Tacker and solgate run), is a
/// broken package.
fn lcm_scripts(nodes: &[Node<'_>], flavour: &str) -> Result<BTreeMap<String, String>, CsarError> {
    let mut scripts = BTreeMap::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VNF)) {
        for (operation, declared) in entries(node.def.get("interfaces").and_then(|i| i.get("Vnflcm"))) {
            let Some(artifact) = declared.get("implementation").and_then(Value::as_str) else { continue };
            let definition = node.def.get("artifacts").and_then(|artifacts| artifacts.get(artifact));
            let Some(definition) = definition else {
                return Err(invalid(format!(
                    "flavour {flavour}: Vnflcm operation {operation} names artifact {artifact}, which node {} does not define",
                    node.name
                )));
            };
            let kind = str_at(definition, "type").unwrap_or_default();
            if kind != "tosca.artifacts.Implementation.Python" {
                return Err(invalid(format!(
                    "flavour {flavour}: artifact {artifact} of Vnflcm operation {operation} is of type {kind:?}; \
                     only tosca.artifacts.Implementation.Python scripts run"
                )));
            }
            let Some(file) = string_at(definition, "file") else {
                return Err(invalid(format!("flavour {flavour}: artifact {artifact} has no file")));
            };
            scripts.insert(operation.to_owned(), file);
        }
    }
    Ok(scripts)
}

struct Policy<'a> {
    name: &'a str,
    kind: &'static str,
    properties: Option<&'a Value>,
    targets: Vec<String>,
}

impl<'a> Policy<'a> {
    fn prop(&self, key: &str) -> Option<&'a Value> {
        self.properties.and_then(|p| p.get(key))
    }
}

fn check_vdu_targets(policy: &Policy<'_>, flavour: &Flavour) -> Result<(), CsarError> {
    match policy.targets.iter().find(|t| flavour.vdu(t).is_none()) {
        Some(t) => {
            Err(invalid(format!("policy {} of flavour {} targets {t}, which is not a VDU", policy.name, flavour.id)))
        }
        None => Ok(()),
    }
}

fn apply_policies(flavour: &mut Flavour, topology: &Topology<'_>, types: &Types<'_>) -> Result<(), CsarError> {
    let policies: Vec<Policy<'_>> = topology
        .policies()
        .into_iter()
        .filter_map(|(name, def)| {
            let kind = types.policy_kind(str_at(def, "type")?)?;
            Some(Policy { name, kind, properties: def.get("properties"), targets: strings(def.get("targets")) })
        })
        .collect();
    let of_kind = |kind: &'static str| policies.iter().filter(move |p| p.kind == kind);
    let fid = flavour.id.clone();

    for policy in of_kind(SCALING_ASPECTS) {
        for (aspect_id, aspect) in entries(policy.prop("aspects")) {
            let Some(max_scale_level) = aspect.get("max_scale_level").and_then(as_u32) else {
                return Err(invalid(format!("scaling aspect {aspect_id} of flavour {fid} lacks max_scale_level")));
            };
            flavour.scaling_aspects.push(ScalingAspect {
                id: aspect_id.to_owned(),
                name: string_at(aspect, "name"),
                description: string_at(aspect, "description"),
                max_scale_level,
                step_deltas: strings(aspect.get("step_deltas")),
                vdu_deltas: BTreeMap::new(),
            });
        }
    }

    for policy in of_kind(VDU_SCALING_ASPECT_DELTAS) {
        check_vdu_targets(policy, flavour)?;
        let aspect_id = policy.prop("aspect").and_then(scalar_string).unwrap_or_default();
        let deltas: BTreeMap<String, u32> = entries(policy.prop("deltas"))
            .map(|(d, v)| {
                v.get("number_of_instances")
                    .and_then(as_u32)
                    .map(|n| (d.to_owned(), n))
                    .ok_or_else(|| invalid(format!("policy {}: delta {d} lacks number_of_instances", policy.name)))
            })
            .collect::<Result<_, _>>()?;
        let Some(aspect) = flavour.scaling_aspects.iter_mut().find(|a| a.id == aspect_id) else {
            return Err(invalid(format!("policy {} refers to unknown scaling aspect {aspect_id:?}", policy.name)));
        };
        // Tacker only notices a missing delta when scaling (DeltaMissingInVnfd); refuse it at
        // onboarding instead.
        if let Some(d) = aspect.step_deltas.iter().find(|d| !deltas.contains_key(*d)) {
            return Err(invalid(format!(
                "policy {} does not define delta {d} used by scaling aspect {aspect_id}",
                policy.name
            )));
        }
        for vdu in &policy.targets {
            aspect.vdu_deltas.entry(vdu.clone()).or_default().extend(deltas.clone());
        }
    }

    // SOL001 6.10.7/6.10.8: the VDUs (directly, or as members of a placement group) whose
    // VNFCs the NFVO is to place together or apart; sent as the GrantRequest's
    // placementConstraints.
    for policy in of_kind(AFFINITY_RULE).chain(of_kind(ANTI_AFFINITY_RULE)) {
        let mut vdus = Vec::new();
        for target in &policy.targets {
            let members = topology.group_members(target).unwrap_or_else(|| vec![target.clone()]);
            for member in members {
                if flavour.vdu(&member).is_none() {
                    return Err(invalid(format!(
                        "policy {} of flavour {fid} targets {member}, which is not a VDU",
                        policy.name
                    )));
                }
                if !vdus.contains(&member) {
                    vdus.push(member);
                }
            }
        }
        let Some(scope) = policy.prop("scope").and_then(scalar_string) else {
            return Err(invalid(format!("policy {} of flavour {fid} lacks its scope", policy.name)));
        };
        flavour.placement_rules.push(PlacementRule {
            id: policy.name.to_owned(),
            anti_affinity: policy.kind == ANTI_AFFINITY_RULE,
            scope,
            vdus,
        });
    }

    for policy in of_kind(VDU_INITIAL_DELTA) {
        check_vdu_targets(policy, flavour)?;
        let Some(n) = policy.prop("initial_delta").and_then(|d| d.get("number_of_instances")).and_then(as_u32) else {
            return Err(invalid(format!("policy {} lacks initial_delta.number_of_instances", policy.name)));
        };
        for vdu in flavour.vdus.iter_mut().filter(|v| policy.targets.contains(&v.id)) {
            vdu.initial_delta = Some(n);
        }
    }

    if let Some(policy) = of_kind(INSTANTIATION_LEVELS).next() {
        for (level_id, level) in entries(policy.prop("levels")) {
            let mut scale_info = BTreeMap::new();
            for (aspect_id, info) in entries(level.get("scale_info")) {
                let scale_level = info.get("scale_level").and_then(as_u32).unwrap_or(0);
                let Some(aspect) = flavour.scaling_aspect(aspect_id) else {
                    return Err(invalid(format!(
                        "instantiation level {level_id} refers to unknown scaling aspect {aspect_id}"
                    )));
                };
                if scale_level > aspect.max_scale_level {
                    return Err(invalid(format!(
                        "instantiation level {level_id}: scale_level {scale_level} of aspect {aspect_id} exceeds max_scale_level {}",
                        aspect.max_scale_level
                    )));
                }
                scale_info.insert(aspect_id.to_owned(), scale_level);
            }
            flavour.instantiation_levels.push(InstantiationLevel {
                id: level_id.to_owned(),
                description: string_at(level, "description"),
                scale_info,
                vdu_instances: BTreeMap::new(),
            });
        }
        flavour.default_level = policy.prop("default_level").and_then(scalar_string);
        if let Some(default) = &flavour.default_level
            && flavour.instantiation_level(default).is_none()
        {
            return Err(invalid(format!(
                "default_level {default} of flavour {fid} is not among the defined levels {}",
                level_ids(flavour)
            )));
        }
    }

    for policy in of_kind(VDU_INSTANTIATION_LEVELS) {
        check_vdu_targets(policy, flavour)?;
        if flavour.instantiation_levels.is_empty() {
            return Err(invalid(format!(
                "policy {} needs a tosca.policies.nfv.InstantiationLevels policy in flavour {fid}",
                policy.name
            )));
        }
        let mut unknown = BTreeSet::new();
        for (level_id, level) in entries(policy.prop("levels")) {
            let n = level.get("number_of_instances").and_then(as_u32).ok_or_else(|| {
                invalid(format!("policy {}: level {level_id} lacks number_of_instances", policy.name))
            })?;
            match flavour.instantiation_levels.iter_mut().find(|l| l.id == level_id) {
                Some(l) => policy.targets.iter().for_each(|vdu| {
                    l.vdu_instances.insert(vdu.clone(), n);
                }),
                None => {
                    unknown.insert(level_id);
                }
            }
        }
        // Wording follows Tacker's "Level(s) X not found in defined levels Y".
        if !unknown.is_empty() {
            return Err(invalid(format!(
                "policy {}: level(s) {} not found in defined levels {}",
                policy.name,
                unknown.into_iter().collect::<Vec<_>>().join(","),
                level_ids(flavour)
            )));
        }
    }
    Ok(())
}

fn level_ids(flavour: &Flavour) -> String {
    flavour.instantiation_levels.iter().map(|l| l.id.as_str()).collect::<Vec<_>>().join(",")
}
