//! The Heat template of a VNF: the flavour's BaseHOT ([`BaseHot`]) and the `nfv` parameter
//! built for it ([`build_nfv`]), the way Tacker's default user data
//! (`userdata_default.DefaultUserData`) does it, and what solgate changes in it.
//!
//! - The only parameter is Tacker's `nfv` map, built from the `get_param: [nfv, ...]` paths
//!   the top template uses: `VDU.<id>.desired_capacity` (the plan's count),
//!   `computeFlavourId` (requested_additional_capability_name), `vcImageId` (sw_image_data
//!   name), `CP.<cpd>.network` / `fixed_ips` (extVirtualLinks).
//! - `extManagedVirtualLinks` replace the template's networks ([`apply_ext_managed_vls`]).
//! - Each VipCp of the flavour (SOL001 V3.5.1) becomes an `OS::Neutron::Port` named after it
//!   on its virtual link's network, and every port of its target VduCps allows that port's
//!   address (`allowed_address_pairs`); a target port in a nested template gets the address
//!   through a `<VipCp>_address` parameter, passed by each use of the template.
//! - An external CP whose `cpConfig` has subport entries (SOL003 V3.5.1: `parentCpConfigId`,
//!   or a `segmentationId` with `segmentationType` VLAN, the default) gets an
//!   `OS::Neutron::Trunk` `<cpd>_trunk` with its own port (a top-level resource named after
//!   the CPD) as parent and one `vlan` subport per entry: the pre-created port of the entry's
//!   `linkPortId` (the `extLinkPorts` entry's resource), else a new port `<cpd>_<cpConfigId>`
//!   on the entry's external network; servers then take the parent port from the trunk
//!   (`get_attr: [<cpd>_trunk, port_id]`, as Heat advises for Open vSwitch). Heat's trunk
//!   takes only `vlan` subports, so `INHERIT` is refused; so is a subport without a port
//!   (`createExtLinkPort` false and no `linkPortId`).
//!
//! The templates are the package's own, free-form documents: they are read and changed as
//! JSON. The request's `extVirtualLinks` are read as SOL003 records.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use solgate_vnfpkg::{Cp, CpKind, Flavour, Vnfd};

use super::parse_hot;
use crate::infra::{DeploymentPlan, ExtVirtualLinkData, VnfExtCpConfig, VnfExtCpData};
use crate::run::{Halt, failed};

pub(super) const SERVER: &str = "OS::Nova::Server";
pub(super) const VOLUME: &str = "OS::Cinder::Volume";
pub(super) const NETWORK: &str = "OS::Neutron::Net";
pub(super) const PORT: &str = "OS::Neutron::Port";
pub(super) const TRUNK: &str = "OS::Neutron::Trunk";
pub(super) const SCALING_GROUP: &str = "OS::Heat::AutoScalingGroup";

/// The flavour's BaseHOT as Heat takes it.
pub(super) struct BaseHot {
    pub(super) template: Value,
    pub(super) files: BTreeMap<String, String>,
    pub(super) digest: String,
}

impl BaseHot {
    /// `BaseHOT/<flavourId>/`: the first `*.yaml`/`*.yml` (by name) is the top template,
    /// `nested/*.yaml` are the files it refers to by file name (Tacker's vnfd_utils.get_base_hot).
    pub(super) fn load(package_dir: Option<&Path>, flavour_id: &str) -> Result<Self, Halt> {
        let missing = || failed(format!("the VNF package has no BaseHOT/{flavour_id}/ template for the OpenStack VIM"));
        let dir = package_dir.ok_or_else(missing)?.join("BaseHOT").join(flavour_id);
        let top = yaml_files(&dir).into_iter().next().ok_or_else(missing)?;
        let text = read_text(&dir.join(&top))?;
        let template = parse_hot(&text).map_err(|error| failed(format!("BaseHOT/{flavour_id}/{top}: {error}")))?;
        let mut digest = Sha256::new();
        digest.update(text.as_bytes());
        let mut files = BTreeMap::new();
        let nested = dir.join("nested");
        for name in yaml_files(&nested) {
            let content = read_text(&nested.join(&name))?;
            digest.update(name.as_bytes());
            digest.update(content.as_bytes());
            files.insert(name, content);
        }
        Ok(Self { template, files, digest: hex::encode(digest.finalize()) })
    }
}

fn yaml_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().is_file())
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|name| name.ends_with(".yaml") || name.ends_with(".yml"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn read_text(path: &Path) -> Result<String, Halt> {
    std::fs::read_to_string(path).map_err(|error| failed(format!("reading {}: {error}", path.display())))
}

/// Whether a HOT resource is of `kind` (its `type`).
pub(super) fn is_type(resource: &Value, kind: &str) -> bool {
    resource.get("type").and_then(Value::as_str) == Some(kind)
}

/// The `resources` of a template.
fn resources_mut(template: &mut Value) -> Result<&mut Map<String, Value>, Halt> {
    template
        .get_mut("resources")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| failed("the BaseHOT top template has no resources"))
}

/// Replaces every occurrence of `reference` in `value` by `by`.
fn replace(value: &mut Value, reference: &Value, by: &Value) {
    if value == reference {
        *value = by.clone();
        return;
    }
    match value {
        Value::Object(map) => map.values_mut().for_each(|item| replace(item, reference, by)),
        Value::Array(items) => items.iter_mut().for_each(|item| replace(item, reference, by)),
        _ => {}
    }
}

/// The `nfv` skeleton of a HOT: every `get_param: [nfv, a, b, ..., leaf]` of the top
/// template's resource properties becomes `{a: {b: {... leaf: null}}}` (Tacker's
/// common_script_utils.init_nfv_dict).
pub(super) fn nfv_skeleton(template: &Value) -> Value {
    fn collect<'v>(value: &'v Value, out: &mut Vec<&'v [Value]>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map {
                    match (key.as_str(), item) {
                        ("get_param", Value::Array(path)) => out.push(path),
                        _ => collect(item, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
            _ => {}
        }
    }
    fn insert(node: &mut Map<String, Value>, keys: &[String]) {
        match keys {
            [] => {}
            [leaf] => {
                node.entry(leaf.clone()).or_insert(Value::Null);
            }
            [first, rest @ ..] => {
                let child = node.entry(first.clone()).or_insert_with(|| Value::Object(Map::new()));
                if child.is_null() {
                    *child = Value::Object(Map::new());
                }
                if let Value::Object(child) = child {
                    insert(child, rest);
                }
            }
        }
    }
    let mut paths = Vec::new();
    let resources = template.get("resources").and_then(Value::as_object).into_iter().flatten();
    for (_, resource) in resources {
        collect(resource.get("properties").unwrap_or(&Value::Null), &mut paths);
    }
    let key = |item: &Value| match item {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut nfv = Map::new();
    for path in paths {
        if path.len() < 4 || path[0] != "nfv" {
            continue;
        }
        let keys: Vec<String> = path[1..].iter().map(key).collect();
        insert(&mut nfv, &keys);
    }
    Value::Object(nfv)
}

/// The `cpConfig` entries of an external CP but for trunk subports: those are ports of
/// their own, not addresses of the CP's port.
fn cp_configs(ext_cp: &VnfExtCpData) -> impl Iterator<Item = &VnfExtCpConfig> {
    ext_cp.cp_config.values().filter(|config| !config.is_subport())
}

/// The `extVirtualLinks` entry and `extCps` entry of an external CPD (the one that
/// configures the CP's own port, not only subports).
fn ext_cp<'p>(links: &'p [ExtVirtualLinkData], cpd_id: &str) -> Option<(&'p ExtVirtualLinkData, &'p VnfExtCpData)> {
    links.iter().find_map(|vl| {
        let cp = vl.ext_cps.iter().find(|cp| {
            let mut keyed = cp.cp_config.keyed().peekable();
            let all_subports = keyed.peek().is_some() && keyed.all(|(_, config)| config.is_subport());
            cp.cpd_id.as_deref() == Some(cpd_id) && !all_subports
        })?;
        Some((vl, cp))
    })
}

/// The VIM resource of the first `linkPortId` the CP's own configuration names (an
/// `extLinkPorts` entry of its external virtual link).
fn link_port_resource(link: &ExtVirtualLinkData, ext_cp: &VnfExtCpData) -> Option<Value> {
    let id = cp_configs(ext_cp).find_map(|config| config.link_port_id.as_deref())?;
    link.link_port_resource(id).cloned()
}

/// A `fixed_ips` entry of a Neutron port.
#[derive(Serialize)]
struct FixedIp<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    ip_address: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subnet: Option<&'a Value>,
}

/// `fixed_ips` of a CP: one entry per requested address (first fixed address and subnet),
/// as Tacker's `_get_fixed_ips_from_extcp` reads `cpProtocolData`.
fn fixed_ips(ext_cp: &VnfExtCpData) -> Vec<Value> {
    cp_configs(ext_cp).flat_map(addresses_of).collect()
}

/// The `fixed_ips` entries of one `VnfExtCpConfig`.
fn addresses_of(config: &VnfExtCpConfig) -> Vec<Value> {
    let ethernet = config.cp_protocol_data.iter().filter_map(|protocol| protocol.ip_over_ethernet.as_ref());
    ethernet
        .flat_map(|ethernet| &ethernet.ip_addresses)
        .map(|address| FixedIp { ip_address: address.fixed_addresses.first(), subnet: address.subnet_id.as_ref() })
        .filter(|entry| entry.ip_address.is_some() || entry.subnet.is_some())
        .map(|entry| json!(entry))
        .collect()
}

/// The software image a VDU or storage node uses.
fn sw_image_of(flavour: &Flavour, node: &str) -> Option<String> {
    flavour
        .vdu(node)
        .and_then(|vdu| vdu.sw_image.clone())
        .or_else(|| flavour.virtual_storages.iter().find(|s| s.id == node).and_then(|s| s.sw_image.clone()))
}

/// The Grant's `vimSoftwareImageId` for a VDU or storage node: keyed by the node (as Tacker's
/// samples name images) or by the software image it uses.
fn granted_image(plan: &DeploymentPlan, flavour: &Flavour, node: &str) -> Option<String> {
    let images = &plan.granted.images;
    if let Some(image) = images.get(node) {
        return Some(image.clone());
    }
    images.get(&sw_image_of(flavour, node)?).cloned()
}

/// The value of `nfv.VDU.<node>.<key>`, `None` for a key solgate does not fill.
fn vdu_value(key: &str, node: &str, vnfd: &Vnfd, flavour: &Flavour, plan: &DeploymentPlan) -> Option<Value> {
    let text = |value: Option<String>| value.map_or(Value::Null, Value::String);
    Some(match key {
        // A VDU the plan leaves out (another flavour's) has no instance.
        "desired_capacity" => json!(plan.vdus.iter().find(|t| t.vdu_id == node).map_or(0, |t| t.count)),
        // The NFVO's vimAssets win over the VNFD (Tacker's get_param_flavor/_image).
        "computeFlavourId" => text(plan.granted.flavours.get(node).cloned().or_else(|| {
            flavour
                .vdu(node)
                .and_then(|vdu| vdu.virtual_compute.as_ref())
                .and_then(|compute| compute.requested_additional_capability_name.clone())
        })),
        "vcImageId" => text(granted_image(plan, flavour, node).or_else(|| {
            let image_id = sw_image_of(flavour, node)?;
            vnfd.software_image(&image_id).map(|image| image.name.clone())
        })),
        // The zone the Grant placed the VDU's VNFCs in (Tacker's get_param_zone).
        "locationConstraints" => text(plan.granted.zones.get(node).cloned()),
        _ => return None,
    })
}

/// Fills `nfv.CP.<cpd>` from the CP's external virtual link.
fn fill_cp(values: &mut Map<String, Value>, found: Option<(&ExtVirtualLinkData, &VnfExtCpData)>) {
    if let Some(network) = values.get_mut("network") {
        *network = found.and_then(|(vl, _)| vl.resource_id.clone()).unwrap_or(Value::Null);
    }
    if let Some(ips) = values.get_mut("fixed_ips") {
        *ips = Value::Array(found.map(|(_, cp)| fixed_ips(cp)).unwrap_or_default());
    }
    // A pre-created link port (`linkPortId`): the CP uses it instead of a port of its
    // own (SOL003 VnfExtCpConfig note 3; Tacker's `nfv.CP.<cpd>.port`).
    if let Some(port) = values.get_mut("port") {
        *port = found.and_then(|(vl, cp)| link_port_resource(vl, cp)).unwrap_or(Value::Null);
    }
}

/// Fills the `nfv` skeleton from the VNFD and the plan (userdata_default.instantiate).
pub(super) fn build_nfv(template: &Value, vnfd: &Vnfd, flavour: &Flavour, plan: &DeploymentPlan) -> Value {
    let mut nfv = nfv_skeleton(template);
    if let Some(vdus) = nfv.get_mut("VDU").and_then(Value::as_object_mut) {
        for (node, values) in vdus.iter_mut() {
            let Some(values) = values.as_object_mut() else { continue };
            for (key, value) in values.iter_mut() {
                if let Some(filled) = vdu_value(key, node, vnfd, flavour, plan) {
                    *value = filled;
                }
            }
        }
    }
    let links = ExtVirtualLinkData::list(&plan.ext_virtual_links);
    if let Some(cps) = nfv.get_mut("CP").and_then(Value::as_object_mut) {
        for (cpd_id, values) in cps.iter_mut() {
            if let Some(values) = values.as_object_mut() {
                fill_cp(values, ext_cp(&links, cpd_id));
            }
        }
    }
    nfv
}

/// An `extManagedVirtualLinks` entry (SOL003 ExtManagedVirtualLinkData), as far as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExtManagedVirtualLink {
    vnf_virtual_link_desc_id: String,
    resource_id: Value,
}

/// `extManagedVirtualLinks`: the NFVO's network replaces the template's own — its
/// `OS::Neutron::Net` and subnets go, `{get_resource: <VL>}` becomes the network id
/// (Tacker's common_script_utils.apply_ext_managed_vls).
pub(super) fn apply_ext_managed_vls(template: &mut Value, links: &Value) {
    let links = links.as_array().into_iter().flatten();
    for link in links.filter_map(|link| ExtManagedVirtualLink::deserialize(link).ok()) {
        let vl = link.vnf_virtual_link_desc_id.as_str();
        let reference = json!({"get_resource": vl});
        let Ok(resources) = resources_mut(template) else { return };
        resources.retain(|name, resource| {
            let subnet_of_vl = is_type(resource, "OS::Neutron::Subnet")
                && resource.pointer("/properties/network/get_resource").and_then(Value::as_str) == Some(vl);
            name != vl && !subnet_of_vl
        });
        resources.values_mut().for_each(|resource| replace(resource, &reference, &link.resource_id));
    }
}

/// Lets `port` answer on `address` too (`allowed_address_pairs`).
fn allow(port: &mut Value, address: &Value) {
    let pairs = &mut port["properties"]["allowed_address_pairs"];
    if !pairs.is_array() {
        *pairs = json!([]);
    }
    if let Some(pairs) = pairs.as_array_mut() {
        pairs.push(json!({"ip_address": address.clone()}));
    }
}

/// VipCps (see the module documentation): their ports, and the address pairs that let the
/// target VduCps' ports answer on the VIP. Files it changes are sent as JSON text (Heat
/// takes a JSON template as it takes YAML).
pub(super) fn apply_vip_cps(
    template: &mut Value,
    files: &mut BTreeMap<String, String>,
    flavour: &Flavour,
) -> Result<(), Halt> {
    for vip in &flavour.vip_cps {
        let address = json!({"get_attr": [vip.id, "fixed_ips", 0, "ip_address"]});
        let resources = resources_mut(template)?;
        resources.insert(
            vip.id.clone(),
            json!({"type": PORT, "properties": {"network": {"get_resource": vip.virtual_link}}}),
        );
        for target in &vip.targets {
            if let Some(port) = resources.get_mut(target).filter(|res| is_type(res, PORT)) {
                allow(port, &address);
                continue;
            }
            let parameter = format!("{}_address", vip.id);
            for (name, text) in files.iter_mut() {
                allow_in_nested(name, text, target, &parameter, resources, &address)?;
            }
        }
    }
    Ok(())
}

/// A VipCp's target port in the nested template `name`: it allows the address given by
/// the parameter `parameter`, which each use of the template passes.
fn allow_in_nested(
    name: &str,
    text: &mut String,
    target: &str,
    parameter: &str,
    resources: &mut Map<String, Value>,
    address: &Value,
) -> Result<(), Halt> {
    let mut nested = parse_hot(text).map_err(|error| failed(format!("BaseHOT nested {name}: {error}")))?;
    let Some(port) = nested.pointer_mut(&format!("/resources/{target}")).filter(|res| is_type(res, PORT)) else {
        return Ok(());
    };
    allow(port, &json!({"get_param": parameter}));
    nested["parameters"][parameter] = json!({"type": "string"});
    *text = serde_json::to_string_pretty(&nested).unwrap_or_default();
    // Each use of the nested template, directly or as a scaling group's member.
    for resource in resources.values_mut() {
        let user = if is_type(resource, name) {
            Some(resource)
        } else {
            resource.pointer_mut("/properties/resource").filter(|member| is_type(member, name))
        };
        if let Some(user) = user {
            user["properties"][parameter] = address.clone();
        }
    }
    Ok(())
}

/// A subport entry of an external CP's `cpConfig`: its key, configuration and link.
type Subport<'l> = (&'l str, &'l VnfExtCpConfig, &'l ExtVirtualLinkData);

/// The keys of every `cpConfig` entry of the external CP `cp`, and its subport entries.
fn subports_of<'l>(links: &'l [ExtVirtualLinkData], cp: &Cp) -> (Vec<&'l str>, Vec<Subport<'l>>) {
    let mut keys = Vec::new();
    let mut subports = Vec::new();
    for link in links {
        for ext_cp in link.ext_cps.iter().filter(|ext_cp| ext_cp.cpd_id.as_deref() == Some(cp.id.as_str())) {
            for (key, config) in ext_cp.cp_config.keyed() {
                keys.push(key);
                if config.is_subport() {
                    subports.push((key, config, link));
                }
            }
        }
    }
    (keys, subports)
}

/// The properties of a port made for a subport.
#[derive(Serialize)]
struct SubportPort<'a> {
    network: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixed_ips: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mac_address: Option<&'a Value>,
}

/// One `sub_ports` entry of the trunk of `cp_id`; a port it needs is added to `resources`.
fn trunk_subport(
    cp_id: &str,
    (key, config, link): Subport<'_>,
    keys: &[&str],
    resources: &mut Map<String, Value>,
) -> Result<Value, Halt> {
    let refuse = |why: String| failed(format!("cpConfig {key} of external CP {cp_id}: {why}"));
    if let Some(parent) = config.parent_cp_config_id.as_deref()
        && !keys.contains(&parent)
    {
        return Err(refuse(format!("parentCpConfigId {parent} names no cpConfig of that CP")));
    }
    let ethernet = config
        .cp_protocol_data
        .iter()
        .filter_map(|data| data.ip_over_ethernet.as_ref())
        .find(|ethernet| ethernet.segmentation_id.is_some());
    let kind = ethernet.and_then(|ethernet| ethernet.segmentation_type.as_ref());
    if let Some(kind) = kind.filter(|kind| kind.as_str().is_some_and(|kind| kind != "VLAN")) {
        return Err(refuse(format!(
            "segmentationType {kind} is not possible with Heat's OS::Neutron::Trunk, which takes only vlan subports"
        )));
    }
    let segmentation_id = ethernet
        .and_then(|ethernet| ethernet.segmentation_id.as_ref()?.as_str()?.parse::<u16>().ok())
        .filter(|id| (1..=4094).contains(id))
        .ok_or_else(|| refuse("a VLAN subport needs a segmentationId 1-4094".into()))?;
    let port = match config.link_port_id.as_deref() {
        Some(link_port) => link.link_port_resource(link_port).cloned().ok_or_else(|| {
            refuse(format!("linkPortId {link_port} is not in the extLinkPorts of external virtual link {}", link.id))
        })?,
        None if config.create_ext_link_port == Some(false) => {
            return Err(refuse(
                "a subport needs a port, but createExtLinkPort is false and no linkPortId is given".into(),
            ));
        }
        None => {
            let name = format!("{cp_id}_{key}");
            let properties = SubportPort {
                network: link.resource_id.clone().unwrap_or(Value::Null),
                fixed_ips: addresses_of(config),
                mac_address: ethernet.and_then(|ethernet| ethernet.mac_address.as_ref()),
            };
            resources.insert(name.clone(), json!({"type": PORT, "properties": properties}));
            json!({"get_resource": name})
        }
    };
    Ok(json!({"port": port, "segmentation_type": "vlan", "segmentation_id": segmentation_id}))
}

/// Subports of external CPs: see the module documentation.
pub(super) fn apply_trunks(template: &mut Value, flavour: &Flavour, plan: &DeploymentPlan) -> Result<(), Halt> {
    let links = ExtVirtualLinkData::list(&plan.ext_virtual_links);
    for cp in flavour.cps.iter().filter(|cp| cp.external && cp.kind == CpKind::VduCp) {
        let (keys, subports) = subports_of(&links, cp);
        if subports.is_empty() {
            continue;
        }
        let resources = resources_mut(template)?;
        if !resources.get(&cp.id).is_some_and(|res| is_type(res, PORT)) {
            return Err(failed(format!(
                "external CP {} has trunk subports, but the BaseHOT top template has no port {} to be their parent",
                cp.id, cp.id
            )));
        }
        let sub_ports = subports
            .into_iter()
            .map(|subport| trunk_subport(&cp.id, subport, &keys, resources))
            .collect::<Result<Vec<_>, _>>()?;
        let trunk = format!("{}_trunk", cp.id);
        let reference = json!({"get_resource": cp.id});
        let from_trunk = json!({"get_attr": [trunk, "port_id"]});
        for server in resources.values_mut().filter(|res| is_type(res, SERVER)) {
            replace(&mut server["properties"]["networks"], &reference, &from_trunk);
        }
        resources.insert(
            trunk,
            json!({"type": TRUNK, "properties": {"port": {"get_resource": cp.id}, "sub_ports": sub_ports}}),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfv_skeleton_takes_the_nfv_paths_of_the_top_template() {
        let hot = json!({"resources": {
            "VDU1_scale_group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                "desired_capacity": {"get_param": ["nfv", "VDU", "VDU1", "desired_capacity"]},
                "resource": {"type": "VDU1.yaml", "properties": {
                    "flavor": {"get_param": ["nfv", "VDU", "VDU1", "computeFlavourId"]},
                    "net1": {"get_param": ["nfv", "CP", "VDU1_CP1", "network"]},
                    "subnet": {"get_param": ["nfv", "CP", "VDU1_CP1", "fixed_ips", 0, "subnet"]}}}}},
            "other": {"type": "OS::Heat::None", "properties": {"x": {"get_param": "plain"},
                "y": {"get_param": ["nfv", "short"]}}}
        }});
        assert_eq!(
            nfv_skeleton(&hot),
            json!({"VDU": {"VDU1": {"desired_capacity": null, "computeFlavourId": null}},
                "CP": {"VDU1_CP1": {"network": null, "fixed_ips": {"0": {"subnet": null}}}}})
        );
    }

    #[test]
    fn the_grants_zone_flavour_and_image_win_over_the_vnfd() {
        let csar = solgate_vnfpkg::testing::CsarBuilder::sample().to_tempfile().unwrap();
        let contents = solgate_vnfpkg::inspect(csar.path(), &solgate_vnfpkg::Limits::default()).unwrap();
        let flavour = contents.vnfd.flavour("simple").unwrap();
        let hot = json!({"resources": {"VDU1_scale_group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "resource": {"type": "VDU1.yaml", "properties": {
                "flavor": {"get_param": ["nfv", "VDU", "VDU1", "computeFlavourId"]},
                "image": {"get_param": ["nfv", "VDU", "VDU1", "vcImageId"]},
                "zone": {"get_param": ["nfv", "VDU", "VDU1", "locationConstraints"]}}}}},
            "VDU2": {"type": "VDU2.yaml", "properties": {
                "flavor": {"get_param": ["nfv", "VDU", "VDU2", "computeFlavourId"]},
                "zone": {"get_param": ["nfv", "VDU", "VDU2", "locationConstraints"]}}}}});
        let mut plan = DeploymentPlan {
            flavour_id: "simple".into(),
            vdus: Vec::new(),
            virtual_links: Vec::new(),
            ext_virtual_links: json!([]),
            ext_managed_virtual_links: json!([]),
            scale_levels: BTreeMap::new(),
            granted: crate::infra::GrantedPlacement::default(),
        };
        // Without a Grant: the VNFD's flavour and image name, no zone.
        let nfv = build_nfv(&hot, &contents.vnfd, flavour, &plan);
        assert_eq!(
            nfv["VDU"]["VDU1"],
            json!({"computeFlavourId": "m1.tiny", "vcImageId": "sample-image",
            "locationConstraints": null})
        );
        plan.granted.zones.insert("VDU1".into(), "az-1".into());
        plan.granted.flavours.insert("VDU1".into(), "nfvo-flavour-small".into());
        plan.granted.images.insert("VDU1".into(), "glance-image-id".into());
        let nfv = build_nfv(&hot, &contents.vnfd, flavour, &plan);
        assert_eq!(
            nfv["VDU"]["VDU1"],
            json!({"computeFlavourId": "nfvo-flavour-small",
            "vcImageId": "glance-image-id", "locationConstraints": "az-1"})
        );
        // A VDU the Grant says nothing about keeps the VNFD's values.
        assert_eq!(nfv["VDU"]["VDU2"]["locationConstraints"], Value::Null);
    }

    #[test]
    fn a_given_link_port_is_the_cps_port() {
        let csar = solgate_vnfpkg::testing::CsarBuilder::sample().to_tempfile().unwrap();
        let contents = solgate_vnfpkg::inspect(csar.path(), &solgate_vnfpkg::Limits::default()).unwrap();
        let flavour = contents.vnfd.flavour("simple").unwrap();
        let hot = json!({"resources": {"VDU1": {"type": "VDU1.yaml", "properties": {
            "port": {"get_param": ["nfv", "CP", "VDU1_CP1", "port"]}}}}});
        let plan = DeploymentPlan {
            flavour_id: "simple".into(),
            vdus: Vec::new(),
            virtual_links: Vec::new(),
            ext_virtual_links: json!([{"id": "ext-1", "resourceId": "net-1",
                "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"a": {"linkPortId": "elp-1"}}}],
                "extLinkPorts": [{"id": "elp-1", "resourceHandle": {"resourceId": "neutron-port-1"}}]}]),
            ext_managed_virtual_links: json!([]),
            scale_levels: BTreeMap::new(),
            granted: crate::infra::GrantedPlacement::default(),
        };
        let nfv = build_nfv(&hot, &contents.vnfd, flavour, &plan);
        assert_eq!(nfv["CP"]["VDU1_CP1"], json!({"port": "neutron-port-1"}));
    }

    #[test]
    fn ext_managed_vl_replaces_the_templates_network() {
        let mut hot = json!({"resources": {
            "internalVL1": {"type": "OS::Neutron::Net"},
            "internalVL1_subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "internalVL1"}}},
            "VDU2_CP1": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "internalVL1"}}}
        }});
        apply_ext_managed_vls(
            &mut hot,
            &json!([{"id": "m1", "vnfVirtualLinkDescId": "internalVL1", "resourceId": "net-9"}]),
        );
        assert_eq!(
            hot,
            json!({"resources": {"VDU2_CP1": {"type": "OS::Neutron::Port", "properties": {"network": "net-9"}}}})
        );
    }
}
