//! The OpenStack infra driver: one Heat stack per VNF instance, built from the flavour's
//! BaseHOT the way Tacker's v2 driver (`sol_refactored/infra_drivers/openstack`) with its
//! default user data (`userdata_default.DefaultUserData`) does it.
//!
//! - Realize: the first one creates stack `vnf-<instance id>` from `BaseHOT/<flavourId>/*.yaml`
//!   (nested templates from `BaseHOT/<flavourId>/nested/` go in `files`, keyed by file name),
//!   after looking the name up (`GET /stacks/vnf-<instance id>`) as Tacker does; later ones
//!   PATCH the stack. The only parameter is Tacker's `nfv` map, built from the
//!   `get_param: [nfv, ...]` paths the top template uses: `VDU.<id>.desired_capacity` (the
//!   plan's count), `computeFlavourId` (requested_additional_capability_name), `vcImageId`
//!   (sw_image_data name), `CP.<cpd>.network` / `fixed_ips` (extVirtualLinks); then
//!   `additionalParams.nfv` is merged over it (JSON merge patch, kept for later operations).
//!   Scale-in first marks the newest VNFCs' scaling-group members unhealthy so Heat removes
//!   those (Tacker's `scale`). `extManagedVirtualLinks` replace the template's networks.
//!   Each VipCp of the flavour (SOL001 V3.5.1) becomes an `OS::Neutron::Port` named after it
//!   on its virtual link's network, and every port of its target VduCps allows that port's
//!   address (`allowed_address_pairs`); a target port in a nested template gets the address
//!   through a `<VipCp>_address` parameter, passed by each use of the template.
//!   An external CP whose `cpConfig` has subport entries (SOL003 V3.5.1: `parentCpConfigId`,
//!   or a `segmentationId` with `segmentationType` VLAN, the default) gets an
//!   `OS::Neutron::Trunk` `<cpd>_trunk` with its own port (a top-level resource named after
//!   the CPD) as parent and one `vlan` subport per entry: the pre-created port of the entry's
//!   `linkPortId` (the `extLinkPorts` entry's resource), else a new port `<cpd>_<cpConfigId>`
//!   on the entry's external network; servers then take the parent port from the trunk
//!   (`get_attr: [<cpd>_trunk, port_id]`, as Heat advises for Open vSwitch). Heat's trunk
//!   takes only `vlan` subports, so `INHERIT` is refused; so is a subport without a port
//!   (`createExtLinkPort` false and no `linkPortId`).
//! - Heal: marks the VNFCs' servers unhealthy and updates the stack (Tacker's heal without
//!   `all`); the replacement server keeps the VNFC id (same nested stack and resource name).
//!   The stack is first waited for while an update runs on it; each server resource is
//!   then read (`GET .../resources/<name>`) and only marked while it still holds the server
//!   the inventory knows (see Re-runs).
//! - Operate: Nova `os-stop` / `os-start` on every VNFC server (Heat has no power state).
//! - Teardown: delete the stack, wait until Heat answers 404.
//!
//! After each stack operation the resources are listed (`nested_depth=2`) and mapped:
//! `OS::Nova::Server` → VnfcResourceInfo, `OS::Cinder::Volume` → VirtualStorageResourceInfo,
//! `OS::Neutron::Net` → VnfVirtualLinkResourceInfo, `OS::Neutron::Port` of a VduCp → the
//! VNFC's vnfcCpInfo and the link port of its internal VL, the port of a VipCp → its
//! VipCpInfo (the address read from the port resource's `fixed_ips` attribute) and a link
//! port of its VL. Only resources named as VNFD nodes of the flavour count (Tacker's
//! `_get_checked_reses`). `vim_state` holds the stack
//! name and id, the flavour and template digest last sent, and the `nfv` parameter.
//!
//! Re-runs. After a conductor crash another conductor runs the same action again from the
//! pre-operation inventory, which does not know what the crashed run made; every action
//! finds it again instead of making it twice:
//! - a realize without a stack id looks the deterministic name up before any `POST /stacks`.
//!   A stack in `CREATE_IN_PROGRESS` (the crash came between "create stack" and "stack
//!   complete") is waited for, with no update; one in `CREATE_COMPLETE` with this
//!   operation's `nfv` is taken as it is; one with other parameters or in a failed state
//!   is updated with the template and parameters, as a known stack would be. A stack that
//!   Heat is rolling back (`ROLLBACK_IN_PROGRESS`, or another action of its own) is first
//!   waited for until it leaves `*_IN_PROGRESS` (Heat refuses an update meanwhile), then
//!   decided on as it then is: gone → created, `ROLLBACK_COMPLETE`/`_FAILED` → updated; one
//!   in `DELETE_IN_PROGRESS` is waited for until it is deleted, then created. A `409` on
//!   the POST (created in between) adopts and updates the stack the same way;
//! - a realize with a stack id first reads the stack (one `GET`; it is mostly settled) and,
//!   while it is in `*_IN_PROGRESS` (the earlier run's update is still running), polls
//!   until it leaves it, since Heat refuses (409) an update meanwhile; then it PATCHes it
//!   again: Heat converges on the same parameters, and a scale-in member that the earlier
//!   update already removed (404 on `mark_unhealthy`) is skipped;
//! - a heal first waits the same way for the stack to settle (the lookup by name tells its
//!   status when the id is not known; else one `GET`): while the earlier run's update is
//!   running the resources may still show the old server. Then it skips a VNFC whose
//!   server resource (`GET .../resources/<name>`) now holds another server than the
//!   inventory's (the earlier run's update replaced it) or is gone (404): marking it would
//!   mark the replacement and have Heat replace it again. When no target is left to mark,
//!   the stack is not updated either; the resources are listed again and the replacement
//!   keeps the VNFC id;
//! - a teardown whose stack is gone (404 on `DELETE`) succeeds; a re-run of a wait just waits.
//!
//! Failures. A failure that asking again may cure is reported transient
//! (`DriverError::transient`, retried by the conductor with backoff): Keystone, Heat or Nova
//! unreachable, a connection reset or request timeout, HTTP 429 and 500/502/503/504. Not
//! transient: other 4xx (a bad template's 400, a quota's 403/413, a 404 of something
//! expected), bad credentials (401 after a fresh token), an untrusted certificate, a stack
//! that Heat put into `CREATE_FAILED`/`UPDATE_FAILED`, and a wait that ran out of time.

use solgate_sol013::merge_patch;
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::path::Path;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use solgate_vnfpkg::{CpKind, Flavour, Vnfd};
use tokio::time::Instant;

use super::user_data::{self, StackFields};
use super::{
    CreateStackRequest, HeatClient, NovaClient, OpenStackError, Stack, StackResource, UpdateStackRequest,
    VimCredentials, WaitOptions, parse_hot,
};
use crate::infra::{
    DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, ResourceHandle, VIM_TYPE_OPENSTACK,
    VirtualLinkResource, VirtualStorageResource, VnfcResource,
};
use crate::run::{ActionRun, CancelGuard, Halt, failed, run_action, vim_failure, vnfd_flavour};
use crate::script;

const SERVER: &str = "OS::Nova::Server";
const VOLUME: &str = "OS::Cinder::Volume";
const NETWORK: &str = "OS::Neutron::Net";
const PORT: &str = "OS::Neutron::Port";
const TRUNK: &str = "OS::Neutron::Trunk";
const SCALING_GROUP: &str = "OS::Heat::AutoScalingGroup";

/// Heat-backed infra driver for `ETSINFV.OPENSTACK_KEYSTONE.V_3` VIMs.
#[derive(Debug, Clone)]
pub struct OpenStackDriver {
    /// Polling of stack operations (Tacker polls every 5 s).
    pub wait: WaitOptions,
    /// How often a running wait checks whether the operation was cancelled.
    pub cancel_poll: Duration,
    /// `timeout_mins` of stack create and update (Tacker: `openstack_vim_stack_create_timeout`, 20).
    pub stack_timeout_mins: u32,
    /// Extra trust anchors and whether a VIM may skip certificate checks (`[tls]`).
    pub trust: crate::VimTrust,
    /// How a package's LCM operation user data runs (`[drivers] python_command`,
    /// `script_timeout_secs`).
    pub scripts: script::ScriptSettings,
}

impl Default for OpenStackDriver {
    fn default() -> Self {
        crate::DriverSettings::default().openstack(&crate::VimTrust::default())
    }
}

/// What the driver remembers in `Inventory::vim_state`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct StackState {
    stack_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack_id: Option<String>,
    /// Flavour and BaseHOT digest of the template the stack was last given: a change
    /// (change_flavour, change_vnfpkg) sends the template again.
    #[serde(skip_serializing_if = "Option::is_none")]
    flavour_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    template_digest: Option<String>,
    /// `additionalParams.nfv` of the requests so far, merged over the computed `nfv`.
    #[serde(skip_serializing_if = "Value::is_null")]
    nfv_overrides: Value,
    /// The `nfv` parameter last sent (Tacker keeps it in instantiatedVnfInfo.metadata).
    #[serde(skip_serializing_if = "Value::is_null")]
    nfv: Value,
    /// The stack's template came from LCM operation user data: an operation without user
    /// data keeps it and changes only the VDUs' `desired_capacity` (Tacker's default user
    /// data for a stack it did not make).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    user_data: bool,
}

impl StackState {
    fn of(current: &Inventory, instance_id: &str) -> Self {
        let mut state: StackState = serde_json::from_value(current.vim_state.clone()).unwrap_or_default();
        if state.stack_name.is_empty() {
            // Tacker's heat_utils.get_stack_name.
            state.stack_name = format!("vnf-{instance_id}");
        }
        state
    }

    /// `name/id` when the id is known (no redirect), else the name.
    fn identifier(&self) -> String {
        match &self.stack_id {
            Some(id) => format!("{}/{id}", self.stack_name),
            None => self.stack_name.clone(),
        }
    }
}

/// The flavour's BaseHOT as Heat takes it.
struct BaseHot {
    template: Value,
    files: BTreeMap<String, String>,
    digest: String,
}

impl BaseHot {
    /// `BaseHOT/<flavourId>/`: the first `*.yaml`/`*.yml` (by name) is the top template,
    /// `nested/*.yaml` are the files it refers to by file name (Tacker's vnfd_utils.get_base_hot).
    fn load(package_dir: Option<&Path>, flavour_id: &str) -> Result<Self, Halt> {
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

/// The `nfv` skeleton of a HOT: every `get_param: [nfv, a, b, ..., leaf]` of the top
/// template's resource properties becomes `{a: {b: {... leaf: null}}}` (Tacker's
/// common_script_utils.init_nfv_dict).
fn nfv_skeleton(template: &Value) -> Value {
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
    let mut paths = Vec::new();
    if let Some(resources) = template.get("resources").and_then(Value::as_object) {
        for resource in resources.values() {
            collect(resource.get("properties").unwrap_or(&Value::Null), &mut paths);
        }
    }
    let key = |item: &Value| match item {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
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

/// `cpConfig` values (a map in SOL003 v3, a list in v2.6.1), but for trunk subports: those
/// are ports of their own, not addresses of the CP's port.
fn cp_configs(ext_cp: &Value) -> Vec<&Value> {
    let configs: Vec<&Value> = match ext_cp.get("cpConfig") {
        Some(Value::Object(map)) => map.values().collect(),
        Some(Value::Array(items)) => items.iter().collect(),
        _ => Vec::new(),
    };
    configs.into_iter().filter(|config| !crate::infra::is_subport(config)).collect()
}

/// The `extVirtualLinks` entry and `extCps` entry of an external CPD (the one that
/// configures the CP's own port, not only subports).
fn ext_cp<'p>(plan: &'p DeploymentPlan, cpd_id: &str) -> Option<(&'p Value, &'p Value)> {
    plan.ext_virtual_links.as_array()?.iter().find_map(|vl| {
        let cp = vl.get("extCps")?.as_array()?.iter().find(|cp| {
            let all_subports = cp["cpConfig"]
                .as_object()
                .is_some_and(|map| !map.is_empty() && map.values().all(crate::infra::is_subport));
            cp["cpdId"] == cpd_id && !all_subports
        })?;
        Some((vl, cp))
    })
}

/// The VIM resource of the first `linkPortId` the CP's own configuration names (an
/// `extLinkPorts` entry of its external virtual link).
fn link_port_resource(link: &Value, ext_cp: &Value) -> Option<Value> {
    let id = cp_configs(ext_cp).into_iter().find_map(|config| config["linkPortId"].as_str())?;
    link["extLinkPorts"]
        .as_array()?
        .iter()
        .find(|port| port["id"] == id)?
        .pointer("/resourceHandle/resourceId")
        .cloned()
}

/// `fixed_ips` of a CP: one entry per requested address (first fixed address and subnet),
/// as Tacker's `_get_fixed_ips_from_extcp` reads `cpProtocolData`.
fn fixed_ips(ext_cp: &Value) -> Vec<Value> {
    cp_configs(ext_cp).into_iter().flat_map(addresses_of).collect()
}

/// The `fixed_ips` entries of one `VnfExtCpConfig`.
fn addresses_of(config: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for protocol in config.get("cpProtocolData").and_then(Value::as_array).into_iter().flatten() {
        let addresses = protocol.pointer("/ipOverEthernet/ipAddresses").and_then(Value::as_array);
        for address in addresses.into_iter().flatten() {
            let mut entry = Map::new();
            if let Some(ip) = address.pointer("/fixedAddresses/0") {
                entry.insert("ip_address".into(), ip.clone());
            }
            if let Some(subnet) = address.get("subnetId") {
                entry.insert("subnet".into(), subnet.clone());
            }
            if !entry.is_empty() {
                out.push(Value::Object(entry));
            }
        }
    }
    out
}

/// The Grant's `vimSoftwareImageId` for a VDU or storage node: keyed by the node (as Tacker's
/// samples name images) or by the software image it uses.
fn granted_image(plan: &DeploymentPlan, flavour: &Flavour, node: &str) -> Option<String> {
    let images = &plan.granted.images;
    if let Some(image) = images.get(node) {
        return Some(image.clone());
    }
    let image_id = flavour
        .vdu(node)
        .and_then(|vdu| vdu.sw_image.clone())
        .or_else(|| flavour.virtual_storages.iter().find(|s| s.id == node).and_then(|s| s.sw_image.clone()))?;
    images.get(&image_id).cloned()
}

/// Fills the `nfv` skeleton from the VNFD and the plan (userdata_default.instantiate).
fn build_nfv(template: &Value, vnfd: &Vnfd, flavour: &Flavour, plan: &DeploymentPlan) -> Value {
    let mut nfv = nfv_skeleton(template);
    let image_name = |node: &str| {
        let image_id = flavour
            .vdu(node)
            .and_then(|vdu| vdu.sw_image.clone())
            .or_else(|| flavour.virtual_storages.iter().find(|s| s.id == node).and_then(|s| s.sw_image.clone()))?;
        vnfd.software_image(&image_id).map(|image| image.name.clone())
    };
    if let Some(vdus) = nfv.get_mut("VDU").and_then(Value::as_object_mut) {
        for (node, values) in vdus.iter_mut() {
            let Some(values) = values.as_object_mut() else { continue };
            for (key, value) in values.iter_mut() {
                match key.as_str() {
                    // A VDU the plan leaves out (another flavour's) has no instance.
                    "desired_capacity" => {
                        let count = plan.vdus.iter().find(|t| &t.vdu_id == node).map_or(0, |t| t.count);
                        *value = json!(count);
                    }
                    // The NFVO's vimAssets win over the VNFD (Tacker's get_param_flavor/_image).
                    "computeFlavourId" => {
                        *value = plan
                            .granted
                            .flavours
                            .get(node)
                            .cloned()
                            .or_else(|| {
                                flavour
                                    .vdu(node)
                                    .and_then(|vdu| vdu.virtual_compute.as_ref())
                                    .and_then(|compute| compute.requested_additional_capability_name.clone())
                            })
                            .map_or(Value::Null, Value::String);
                    }
                    "vcImageId" => {
                        *value = granted_image(plan, flavour, node)
                            .or_else(|| image_name(node))
                            .map_or(Value::Null, Value::String);
                    }
                    // The zone the Grant placed the VDU's VNFCs in (Tacker's get_param_zone).
                    "locationConstraints" => {
                        *value = plan.granted.zones.get(node).cloned().map_or(Value::Null, Value::String);
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some(cps) = nfv.get_mut("CP").and_then(Value::as_object_mut) {
        for (cpd_id, values) in cps.iter_mut() {
            let Some(values) = values.as_object_mut() else { continue };
            let found = ext_cp(plan, cpd_id);
            if let Some(network) = values.get_mut("network") {
                *network = found.and_then(|(vl, _)| vl.get("resourceId").cloned()).unwrap_or(Value::Null);
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
    }
    nfv
}

/// `extManagedVirtualLinks`: the NFVO's network replaces the template's own — its
/// `OS::Neutron::Net` and subnets go, `{get_resource: <VL>}` becomes the network id
/// (Tacker's common_script_utils.apply_ext_managed_vls).
fn apply_ext_managed_vls(template: &mut Value, links: &Value) {
    fn replace(value: &mut Value, reference: &Value, network: &Value) {
        if value == reference {
            *value = network.clone();
            return;
        }
        match value {
            Value::Object(map) => map.values_mut().for_each(|item| replace(item, reference, network)),
            Value::Array(items) => items.iter_mut().for_each(|item| replace(item, reference, network)),
            _ => {}
        }
    }
    for link in links.as_array().into_iter().flatten() {
        let (Some(vl), Some(network)) = (link["vnfVirtualLinkDescId"].as_str(), link.get("resourceId")) else {
            continue;
        };
        let reference = json!({"get_resource": vl});
        let Some(resources) = template.get_mut("resources").and_then(Value::as_object_mut) else { return };
        resources.retain(|name, resource| {
            let subnet_of_vl = resource["type"] == "OS::Neutron::Subnet"
                && resource.pointer("/properties/network/get_resource").and_then(Value::as_str) == Some(vl);
            name != vl && !subnet_of_vl
        });
        resources.values_mut().for_each(|resource| replace(resource, &reference, network));
    }
}

/// VipCps (see the module documentation): their ports, and the address pairs that let the
/// target VduCps' ports answer on the VIP. Files it changes are sent as JSON text (Heat
/// takes a JSON template as it takes YAML).
fn apply_vip_cps(template: &mut Value, files: &mut BTreeMap<String, String>, flavour: &Flavour) -> Result<(), Halt> {
    fn allow(port: &mut Value, address: &Value) {
        let pairs = &mut port["properties"]["allowed_address_pairs"];
        if !pairs.is_array() {
            *pairs = json!([]);
        }
        if let Some(pairs) = pairs.as_array_mut() {
            pairs.push(json!({"ip_address": address.clone()}));
        }
    }
    for vip in &flavour.vip_cps {
        let address = json!({"get_attr": [vip.id, "fixed_ips", 0, "ip_address"]});
        let parameter = format!("{}_address", vip.id);
        let Some(resources) = template.get_mut("resources").and_then(Value::as_object_mut) else {
            return Err(failed("the BaseHOT top template has no resources"));
        };
        resources.insert(
            vip.id.clone(),
            json!({"type": PORT, "properties": {"network": {"get_resource": vip.virtual_link}}}),
        );
        for target in &vip.targets {
            if let Some(port) = resources.get_mut(target).filter(|res| res["type"] == PORT) {
                allow(port, &address);
                continue;
            }
            for (name, text) in files.iter_mut() {
                let mut nested = parse_hot(text).map_err(|error| failed(format!("BaseHOT nested {name}: {error}")))?;
                let Some(port) = nested.pointer_mut(&format!("/resources/{target}")).filter(|res| res["type"] == PORT)
                else {
                    continue;
                };
                allow(port, &json!({"get_param": parameter}));
                nested["parameters"][&parameter] = json!({"type": "string"});
                *text = serde_json::to_string_pretty(&nested).unwrap_or_default();
                // Each use of the nested template, directly or as a scaling group's member.
                for resource in resources.values_mut() {
                    let user = if resource["type"] == name.as_str() {
                        Some(resource)
                    } else {
                        resource.pointer_mut("/properties/resource").filter(|member| member["type"] == name.as_str())
                    };
                    if let Some(user) = user {
                        user["properties"][&parameter] = address.clone();
                    }
                }
            }
        }
    }
    Ok(())
}

/// Subports of external CPs: see the module documentation.
fn apply_trunks(template: &mut Value, flavour: &Flavour, plan: &DeploymentPlan) -> Result<(), Halt> {
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
    for cp in flavour.cps.iter().filter(|cp| cp.external && cp.kind == CpKind::VduCp) {
        let mut keys = Vec::new();
        let mut subports = Vec::new();
        for link in plan.ext_virtual_links.as_array().into_iter().flatten() {
            for ext_cp in link["extCps"].as_array().into_iter().flatten().filter(|ext_cp| ext_cp["cpdId"] == cp.id) {
                for (key, config) in ext_cp["cpConfig"].as_object().into_iter().flatten() {
                    keys.push(key.clone());
                    if crate::infra::is_subport(config) {
                        subports.push((key, config, link));
                    }
                }
            }
        }
        if subports.is_empty() {
            continue;
        }
        let Some(resources) = template.get_mut("resources").and_then(Value::as_object_mut) else {
            return Err(failed("the BaseHOT top template has no resources"));
        };
        if !resources.get(&cp.id).is_some_and(|res| res["type"] == PORT) {
            return Err(failed(format!(
                "external CP {} has trunk subports, but the BaseHOT top template has no port {} to be their parent",
                cp.id, cp.id
            )));
        }
        let mut sub_ports = Vec::new();
        for (key, config, link) in subports {
            if let Some(parent) = config["parentCpConfigId"].as_str()
                && !keys.iter().any(|k| k == parent)
            {
                return Err(failed(format!(
                    "cpConfig {key} of external CP {}: parentCpConfigId {parent} names no cpConfig of that CP",
                    cp.id
                )));
            }
            let ethernet = config["cpProtocolData"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|data| &data["ipOverEthernet"])
                .find(|ethernet| ethernet.get("segmentationId").is_some());
            let ethernet = ethernet.unwrap_or(&Value::Null);
            if ethernet["segmentationType"].as_str().is_some_and(|kind| kind != "VLAN") {
                return Err(failed(format!(
                    "cpConfig {key} of external CP {}: segmentationType {} is not possible with Heat's \
                     OS::Neutron::Trunk, which takes only vlan subports",
                    cp.id, ethernet["segmentationType"]
                )));
            }
            let segmentation_id = ethernet["segmentationId"]
                .as_str()
                .and_then(|id| id.parse::<u16>().ok())
                .filter(|id| (1..=4094).contains(id))
                .ok_or_else(|| {
                    failed(format!(
                        "cpConfig {key} of external CP {}: a VLAN subport needs a segmentationId 1-4094",
                        cp.id
                    ))
                })?;
            let port = match config["linkPortId"].as_str() {
                Some(link_port) => link["extLinkPorts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|port| port["id"] == link_port)
                    .and_then(|port| port.pointer("/resourceHandle/resourceId"))
                    .cloned()
                    .ok_or_else(|| {
                        failed(format!(
                            "cpConfig {key} of external CP {}: linkPortId {link_port} is not in the extLinkPorts of \
                             external virtual link {}",
                            cp.id, link["id"]
                        ))
                    })?,
                None if config["createExtLinkPort"] == false => {
                    return Err(failed(format!(
                        "cpConfig {key} of external CP {}: a subport needs a port, but createExtLinkPort is false \
                         and no linkPortId is given",
                        cp.id
                    )));
                }
                None => {
                    let name = format!("{}_{key}", cp.id);
                    let mut properties = json!({"network": link["resourceId"]});
                    let ips = addresses_of(config);
                    if !ips.is_empty() {
                        properties["fixed_ips"] = json!(ips);
                    }
                    if let Some(mac) = ethernet.get("macAddress") {
                        properties["mac_address"] = mac.clone();
                    }
                    resources.insert(name.clone(), json!({"type": PORT, "properties": properties}));
                    json!({"get_resource": name})
                }
            };
            sub_ports.push(json!({"port": port, "segmentation_type": "vlan", "segmentation_id": segmentation_id}));
        }
        let trunk = format!("{}_trunk", cp.id);
        let reference = json!({"get_resource": cp.id});
        let from_trunk = json!({"get_attr": [trunk, "port_id"]});
        for server in resources.values_mut().filter(|res| res["type"] == SERVER) {
            replace(&mut server["properties"]["networks"], &reference, &from_trunk);
        }
        resources.insert(
            trunk,
            json!({"type": TRUNK, "properties": {"port": {"get_resource": cp.id}, "sub_ports": sub_ports}}),
        );
    }
    Ok(())
}

/// The VDU a server belongs to: its resource name, else its parent's name (with a
/// userdata_standard `-<index>` suffix removed).
fn vdu_of(resource: &StackResource, flavour: &Flavour) -> Option<String> {
    if flavour.vdu(&resource.resource_name).is_some() {
        return Some(resource.resource_name.clone());
    }
    let parent = resource.parent_resource.as_deref()?;
    [Some(parent), parent.rsplit_once('-').map(|(base, _)| base)]
        .into_iter()
        .flatten()
        .find(|name| flavour.vdu(name).is_some())
        .map(str::to_owned)
}

fn meta_str<'v>(vnfc: &'v VnfcResource, key: &str) -> Option<&'v str> {
    vnfc.metadata.as_ref()?.get(key)?.as_str()
}

/// The stack's `nfv` parameter: Heat shows a `json` parameter as its JSON text.
fn nfv_parameter(stack: &Stack) -> Option<Value> {
    match stack.parameters.get("nfv")? {
        Value::String(text) => serde_json::from_str(text).ok(),
        other => Some(other.clone()),
    }
}

/// Maps a stack's resources to an inventory, keeping the ids `previous` gave them.
///
/// A server keeps its VNFC id when its physical id is known, or when it took the place of
/// a server that is gone (same nested stack and resource name: a heal, or any update that
/// replaced the server). Other servers are new VNFCs, appended oldest first.
fn map_resources(
    resources: &[StackResource],
    flavour: &Flavour,
    previous: &Inventory,
    vim_connection_id: Option<&str>,
) -> Inventory {
    let handle = |res: &StackResource| ResourceHandle {
        vim_connection_id: vim_connection_id.map(str::to_owned),
        resource_id: res.physical_resource_id.clone(),
        vim_level_resource_type: Some(res.resource_type.clone()),
    };
    let live = |res: &&StackResource| !res.physical_resource_id.is_empty();
    let by_name = |name: &str| resources.iter().find(|res| res.resource_name == name);

    // Virtual storages.
    let mut storages = Vec::new();
    let mut storage_stacks = Vec::new();
    for res in resources.iter().filter(live).filter(|res| res.resource_type == VOLUME) {
        if !flavour.virtual_storages.iter().any(|s| s.id == res.resource_name) {
            continue;
        }
        let id = previous
            .virtual_storages
            .iter()
            .find(|s| s.storage_resource.resource_id == res.physical_resource_id)
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), |s| s.id.clone());
        storage_stacks.push(res.stack_identifier());
        storages.push(VirtualStorageResource {
            id,
            virtual_storage_desc_id: res.resource_name.clone(),
            storage_resource: handle(res),
        });
    }

    // Servers.
    let servers: Vec<(&StackResource, String)> = resources
        .iter()
        .filter(live)
        .filter(|res| res.resource_type == SERVER)
        .filter_map(|res| vdu_of(res, flavour).map(|vdu| (res, vdu)))
        .collect();
    let live_ids: BTreeSet<&str> = servers.iter().map(|(res, _)| res.physical_resource_id.as_str()).collect();
    let mut taken = BTreeSet::new();
    let mut mapped: Vec<(Option<usize>, VnfcResource, &StackResource)> = Vec::new();
    for (res, vdu_id) in &servers {
        let stack_id = res.stack_identifier();
        let resource_name = res.resource_name.as_str();
        let same_server =
            previous.vnfc_resources.iter().position(|v| v.compute_resource.resource_id == res.physical_resource_id);
        let same_slot = || {
            previous.vnfc_resources.iter().enumerate().position(|(index, v)| {
                !taken.contains(&index)
                    && !live_ids.contains(v.compute_resource.resource_id.as_str())
                    && v.vdu_id == *vdu_id
                    && meta_str(v, "stack_id") == stack_id.as_deref()
                    && meta_str(v, "resource_name").unwrap_or(&v.vdu_id) == resource_name
            })
        };
        let index = same_server.or_else(same_slot);
        if let Some(index) = index {
            taken.insert(index);
        }
        let id = index.map_or_else(|| uuid::Uuid::new_v4().to_string(), |i| previous.vnfc_resources[i].id.clone());

        let mut metadata = Map::new();
        if let Some(created) = &res.creation_time {
            metadata.insert("creation_time".into(), json!(created));
        }
        metadata.insert("stack_id".into(), json!(stack_id));
        metadata.insert("resource_name".into(), json!(resource_name));
        // A member of a scaling group: scale-in marks the member unhealthy (Tacker's
        // parent_stack_id / parent_resource_name).
        if let Some(parent) = res.parent_resource.as_deref().and_then(by_name) {
            let grandparent = parent.parent_resource.as_deref().and_then(by_name);
            if grandparent.is_some_and(|g| g.resource_type == SCALING_GROUP) {
                metadata.insert("parent_stack_id".into(), json!(parent.stack_identifier()));
                metadata.insert("parent_resource_name".into(), json!(parent.resource_name));
            } else if let Some(index) =
                parent.resource_name.rsplit_once('-').and_then(|(_, index)| index.parse::<u32>().ok())
            {
                // A VDU resource `<VDU>-<n>` of the top template (Tacker's userdata_standard).
                metadata.insert("vdu_idx".into(), json!(index));
            }
        }

        let vdu = flavour.vdu(vdu_id);
        let storage_resource_ids = storages
            .iter()
            .zip(&storage_stacks)
            .filter(|(storage, stack)| {
                **stack == stack_id
                    && vdu.is_some_and(|v| v.virtual_storages.contains(&storage.virtual_storage_desc_id))
            })
            .map(|(storage, _)| storage.id.clone())
            .collect();
        let mut cp_info = Vec::new();
        for cpd_id in vdu.map(|v| v.cps.as_slice()).unwrap_or_default() {
            let mut info = json!({"id": format!("{cpd_id}-{id}"), "cpdId": cpd_id});
            // Only ports on an internal VL are VNF link ports (SOL003 VnfLinkPortInfo); an
            // external CP's port belongs to the extVirtualLink.
            let internal = flavour.cps.iter().any(|cp| &cp.id == cpd_id && cp.virtual_link.is_some());
            let port = resources
                .iter()
                .filter(live)
                .find(|p| p.resource_type == PORT && &p.resource_name == cpd_id && p.stack_identifier() == stack_id);
            if let (true, Some(port)) = (internal, port) {
                info["vnfLinkPortId"] = json!(port.physical_resource_id);
            }
            cp_info.push(info);
        }
        mapped.push((
            index,
            VnfcResource {
                id,
                vdu_id: vdu_id.clone(),
                compute_resource: handle(res),
                storage_resource_ids,
                vnfc_cp_info: cp_info,
                zone_id: None,
                metadata: Some(Value::Object(metadata)),
            },
            res,
        ));
    }
    // Known VNFCs in their previous order, then new ones by creation time (scale-in takes
    // the newest, from the end).
    mapped.sort_by(|(a, _, ra), (b, _, rb)| match (a, b) {
        (Some(a), Some(b)) => a.cmp(b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => {
            (&ra.creation_time, &ra.physical_resource_id).cmp(&(&rb.creation_time, &rb.physical_resource_id))
        }
    });
    let vnfcs: Vec<VnfcResource> = mapped.into_iter().map(|(_, vnfc, _)| vnfc).collect();

    // Internal virtual links, with the VNFC ports attached to them.
    let mut links = Vec::new();
    for res in resources.iter().filter(live).filter(|res| res.resource_type == NETWORK) {
        if !flavour.virtual_links.iter().any(|vl| vl.id == res.resource_name) {
            continue;
        }
        let id = previous
            .virtual_links
            .iter()
            .find(|vl| vl.network_resource.resource_id == res.physical_resource_id)
            .or_else(|| previous.virtual_links.iter().find(|vl| vl.vnf_virtual_link_desc_id == res.resource_name))
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), |vl| vl.id.clone());
        let mut ports = Vec::new();
        for vnfc in &vnfcs {
            for info in &vnfc.vnfc_cp_info {
                let (Some(cpd_id), Some(port_id)) = (info["cpdId"].as_str(), info["vnfLinkPortId"].as_str()) else {
                    continue;
                };
                let on_this_vl = flavour.cps.iter().any(|cp| {
                    cp.id == cpd_id
                        && cp.kind == CpKind::VduCp
                        && cp.virtual_link.as_deref() == Some(&res.resource_name)
                });
                let port = resources.iter().find(|p| p.resource_type == PORT && p.physical_resource_id == port_id);
                if let (true, Some(port)) = (on_this_vl, port) {
                    ports.push(json!({
                        "id": port_id,
                        "resourceHandle": handle(port),
                        "cpInstanceId": info["id"],
                        "cpInstanceType": "VNFC_CP",
                    }));
                }
            }
        }
        links.push(VirtualLinkResource {
            id,
            vnf_virtual_link_desc_id: res.resource_name.clone(),
            network_resource: handle(res),
            vnf_link_ports: ports,
        });
    }

    Inventory {
        vnfc_resources: vnfcs,
        virtual_links: links,
        virtual_storages: storages,
        vim_state: previous.vim_state.clone(),
        vnf_state: previous.vnf_state.clone(),
        ..Inventory::default()
    }
}

/// SOL003 VipCpInfo of a VipCp's port, whose addresses the port resource's `fixed_ips`
/// attribute gives; the port becomes a link port of the VipCp's virtual link.
fn vip_cp_info(
    vip: &solgate_vnfpkg::VipCpd,
    port: &StackResource,
    fixed_ips: Option<&Value>,
    inventory: &mut Inventory,
    vim_connection_id: Option<&str>,
) -> Value {
    let cp_instance_id = format!("{}-{}", vip.id, port.physical_resource_id.chars().take(8).collect::<String>());
    let addresses: Vec<Value> = fixed_ips
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|fixed| {
            let ip = fixed["ip_address"].as_str()?;
            let mut address =
                json!({"type": if ip.contains(':') { "IPV6" } else { "IPV4" }, "addresses": [ip], "isDynamic": true});
            if let Some(subnet) = fixed["subnet_id"].as_str() {
                address["subnetId"] = json!(subnet);
            }
            Some(address)
        })
        .collect();
    let associated: Vec<&Value> = inventory
        .vnfc_resources
        .iter()
        .flat_map(|vnfc| vnfc.vnfc_cp_info.iter())
        .filter(|cp| cp["cpdId"].as_str().is_some_and(|cpd| vip.targets.iter().any(|target| target == cpd)))
        .map(|cp| &cp["id"])
        .collect();
    let mut info = json!({
        "cpInstanceId": cp_instance_id,
        "cpdId": vip.id,
        "associatedVnfcCpIds": associated,
    });
    if !addresses.is_empty() {
        info["cpProtocolInfo"] =
            json!([{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": addresses}}]);
    }
    if let Some(link) = inventory.virtual_links.iter_mut().find(|vl| vl.vnf_virtual_link_desc_id == vip.virtual_link) {
        let handle = ResourceHandle {
            vim_connection_id: vim_connection_id.map(str::to_owned),
            resource_id: port.physical_resource_id.clone(),
            vim_level_resource_type: Some(port.resource_type.clone()),
        };
        link.vnf_link_ports.push(json!({
            "id": port.physical_resource_id,
            "resourceHandle": handle,
            "vipCpInstanceId": cp_instance_id,
        }));
        info["vnfLinkPortId"] = json!(port.physical_resource_id);
    }
    info
}

/// The parent port of each trunk `<cpd>_trunk` (with the trunk) and the subport ports
/// `<cpd>_<cpConfigId>` made for it, all in the top stack.
fn trunk_ports(resources: &[StackResource], flavour: &Flavour, vim_connection_id: Option<&str>) -> Vec<Value> {
    let top = |res: &&StackResource| res.parent_resource.is_none() && !res.physical_resource_id.is_empty();
    let describe = |res: &StackResource| {
        let handle = ResourceHandle {
            vim_connection_id: vim_connection_id.map(str::to_owned),
            resource_id: res.physical_resource_id.clone(),
            vim_level_resource_type: Some(res.resource_type.clone()),
        };
        json!({"id": res.physical_resource_id, "resourceHandle": handle})
    };
    let mut out = Vec::new();
    for cp in flavour.cps.iter().filter(|cp| cp.external && cp.kind == CpKind::VduCp) {
        let trunk_name = format!("{}_trunk", cp.id);
        let Some(trunk) =
            resources.iter().filter(top).find(|res| res.resource_type == TRUNK && res.resource_name == trunk_name)
        else {
            continue;
        };
        let prefix = format!("{}_", cp.id);
        for port in resources.iter().filter(top).filter(|res| res.resource_type == PORT) {
            let mut entry = describe(port);
            entry["cpdId"] = json!(cp.id);
            if port.resource_name == cp.id {
                entry["trunkResourceId"] = json!(trunk.physical_resource_id);
            } else if let Some(key) = port.resource_name.strip_prefix(&prefix) {
                entry["cpConfigId"] = json!(key);
            } else {
                continue;
            }
            out.push(entry);
        }
    }
    out
}

/// One run of an action against the VNF's Heat stack.
struct HeatRun<'c, 'a> {
    driver: &'c OpenStackDriver,
    ctx: &'c InfraContext<'a>,
    cancel: CancelGuard<'c>,
    creds: VimCredentials,
    heat: HeatClient,
    state: StackState,
    inventory: Inventory,
    /// Flavour whose VNFD nodes name the stack's resources.
    flavour_id: Option<String>,
    /// Stack parameters besides `nfv` that LCM operation user data gave for a new stack.
    extra_parameters: Map<String, Value>,
}

impl HeatRun<'_, '_> {
    fn vim_connection_id(&self) -> Option<&str> {
        Some(self.ctx.vim.id.as_str()).filter(|id| !id.is_empty())
    }

    async fn wait_stack(&self, target: &str) -> Result<(), Halt> {
        let stack = self.state.identifier();
        let what = format!("waiting for Heat stack {} to reach {target}", self.state.stack_name);
        self.cancel.guard(&what, self.heat.wait_for(&stack, target, &self.driver.wait)).await.map(drop)
    }

    /// The `nfv` parameter for `plan`, with the requests' `additionalParams.nfv` over it.
    fn nfv_for(&mut self, template: &Value, plan: &DeploymentPlan) -> Result<Value, Halt> {
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        let computed = build_nfv(template, self.ctx.vnfd, flavour, plan);
        if let Some(extra) = self.ctx.additional_params.get("nfv").filter(|v| v.is_object()) {
            // Tacker's inst_utils.json_merge_patch: RFC 7396.
            merge_patch(&mut self.state.nfv_overrides, extra);
        }
        let mut nfv = computed;
        if self.state.nfv_overrides.is_object() {
            merge_patch(&mut nfv, &self.state.nfv_overrides);
        }
        if plan.granted.nfv.is_object() {
            merge_patch(&mut nfv, &plan.granted.nfv);
        }
        Ok(nfv)
    }

    /// The Heat stack fields of the request's LCM operation user data (`None` when it
    /// declares none): the class's method for the operation (`<operation>_rollback` while
    /// rolling back), given the operation's documents as Tacker gives them.
    async fn user_data_fields(&self) -> Result<Option<StackFields>, Halt> {
        let Some(declared) = user_data::declared(self.ctx.additional_params).map_err(Halt::UserData)? else {
            return Ok(None);
        };
        let input = self.ctx.lcm_input.ok_or_else(|| {
            failed("the request declares LCM operation user data, but the operation's documents were not given")
        })?;
        let package = self.ctx.package_dir.ok_or_else(|| {
            failed("the request declares LCM operation user data, but the VNF package is not at hand")
        })?;
        let mut input = input.clone();
        let stack_id = self.state.stack_id.as_ref().map(|_| self.state.identifier());
        input.vnf_instance =
            user_data::script_instance(&input.vnf_instance, &self.inventory, stack_id.as_deref(), &self.state.nfv);
        let run = script::run_user_data(
            &self.driver.scripts,
            package,
            &declared.module,
            &declared.class,
            &input,
            self.ctx.rolling_back,
        );
        // Not through the VIM-failure mapping: the package's failure, in the script's words.
        let what = "running LCM operation user data";
        let ran = self.cancel.guard(what, async { Ok::<_, Infallible>(run.await) }).await?;
        let fields = ran.map_err(|error| Halt::UserData(error.to_string()))?;
        StackFields::parse(&fields).map(Some).map_err(|error| {
            Halt::UserData(format!(
                "LCM operation user data {} ({}) returned unusable fields: {error}",
                declared.module, declared.class
            ))
        })
    }

    /// Realize with the fields of LCM operation user data: a new stack is created with them
    /// as they are (Tacker sends the class's template text and files unchanged); a known
    /// stack is updated with them as Tacker's `_update_fields` does.
    async fn realize_with_user_data(&mut self, plan: &DeploymentPlan, fields: StackFields) -> Result<(), Halt> {
        if self.state.stack_id.is_none() {
            let template = fields
                .template
                .clone()
                .ok_or_else(|| failed("LCM operation user data returned no template for the new Heat stack"))?;
            let mut digest = Sha256::new();
            digest.update(template.to_string().as_bytes());
            for (name, text) in &fields.files {
                digest.update(name.as_bytes());
                digest.update(text.as_bytes());
            }
            let digest = format!("user-data:{}", hex::encode(digest.finalize()));
            let mut parameters = fields.parameters;
            let nfv = parameters.remove("nfv").unwrap_or_else(|| json!({}));
            self.extra_parameters = parameters;
            self.state.user_data = true;
            self.create(template, fields.files, &digest, plan, nfv).await?;
        } else {
            self.wait_until_settled(None).await?;
            self.mark_scale_in_members(plan).await?;
            self.update_with_fields(fields).await?;
            self.state.flavour_id = Some(plan.flavour_id.clone());
            self.sync_vim_state();
        }
        self.refresh().await?;
        self.check_counts(plan)
    }

    /// Updates the known stack with user data fields (Tacker's `_update_fields` and
    /// `update_stack`): `existing: false` replaces the stack's template, files and
    /// parameters (PUT); otherwise the `nfv` given is merged (RFC 7396) over the stack's
    /// current one and the template given over its current template, and the stack is
    /// patched (PATCH), keeping what the fields leave out.
    async fn update_with_fields(&mut self, fields: StackFields) -> Result<(), Halt> {
        let identifier = self.state.identifier();
        let name = self.state.stack_name.clone();
        let mut request =
            UpdateStackRequest { timeout_mins: Some(self.driver.stack_timeout_mins), ..Default::default() };
        let what = format!("updating Heat stack {name}");
        if fields.existing {
            let mut parameters = fields.parameters.clone();
            if let Some(patch) = parameters.get_mut("nfv") {
                let reading = format!("reading the parameters of Heat stack {name}");
                let stack = self.cancel.guard(&reading, self.heat.get_stack(&identifier)).await?;
                let mut nfv = stack.as_ref().and_then(nfv_parameter).unwrap_or_else(|| self.state.nfv.clone());
                merge_patch(&mut nfv, patch);
                *patch = nfv;
            }
            if let Some(document) = fields.template_document().map_err(failed)? {
                let reading = format!("reading the template of Heat stack {name}");
                let mut template = self.cancel.guard(&reading, self.heat.get_template(&identifier)).await?;
                merge_patch(&mut template, &document);
                request.template = Some(template);
            }
            request.files = fields.files;
            request.parameters = parameters;
            self.cancel.guard(&what, self.heat.update_stack(&identifier, &request)).await?;
        } else {
            request.template = fields.template;
            request.files = fields.files;
            request.parameters = fields.parameters;
            self.cancel.guard(&what, self.heat.replace_stack(&identifier, &request)).await?;
        }
        if let Some(nfv) = request.parameters.get("nfv") {
            self.state.nfv = nfv.clone();
        }
        self.sync_vim_state();
        self.wait_stack("UPDATE_COMPLETE").await
    }

    /// The `nfv` for an operation without user data on a stack whose template user data
    /// made: the last one sent with each VDU's `desired_capacity` the BaseHOT takes from
    /// `nfv` set to the plan's count (Tacker's default user data `scale`).
    fn capacities_over_user_data(&self, template: &Value, plan: &DeploymentPlan) -> Value {
        let skeleton = nfv_skeleton(template);
        let mut capacities = Map::new();
        for (vdu, values) in skeleton["VDU"].as_object().into_iter().flatten() {
            if values.get("desired_capacity").is_some() {
                let count = plan.vdus.iter().find(|t| &t.vdu_id == vdu).map_or(0, |t| t.count);
                capacities.insert(vdu.clone(), json!({"desired_capacity": count}));
            }
        }
        let mut nfv = if self.state.nfv.is_object() { self.state.nfv.clone() } else { json!({}) };
        merge_patch(&mut nfv, &json!({"VDU": capacities}));
        nfv
    }

    /// Realize when the state knows no stack: the stack is looked up by its name first
    /// (Tacker's create does so too) and only created when Heat has none. A run that finds
    /// one is a re-run of this operation from the pre-operation inventory (the conductor
    /// crashed, or lost Heat's answer), so it carries on with what the earlier run made:
    /// see [`HeatRun::resume_create`].
    async fn create(
        &mut self,
        template: Value,
        files: BTreeMap<String, String>,
        digest: &str,
        plan: &DeploymentPlan,
        nfv: Value,
    ) -> Result<(), Halt> {
        let name = self.state.stack_name.clone();
        let lookup = format!("looking up Heat stack {name}");
        let mut found = self.cancel.guard(&lookup, self.heat.get_stack(&name)).await?;
        // Heat is acting on the stack on its own (a rollback): it refuses an update until
        // that is over, and what follows depends on how it ends. An earlier run's create or
        // update is waited for by `resume_create`, a delete below.
        if let Some(stack) = &found
            && let Some(action) = stack.stack_status.strip_suffix("_IN_PROGRESS")
            && !matches!(action, "CREATE" | "UPDATE" | "DELETE")
        {
            let identifier = stack.stack_ref().to_string();
            let what = format!("waiting for Heat stack {name} to finish its {}", stack.stack_status);
            tracing::info!(stack = %name, status = %stack.stack_status, "waiting for the Heat stack to settle");
            found = self.cancel.guard(&what, self.heat.wait_settled(&identifier, &self.driver.wait)).await?;
        }
        self.state.flavour_id = Some(plan.flavour_id.clone());
        self.state.template_digest = Some(digest.to_owned());
        if let Some(stack) = found {
            if !stack.stack_status.starts_with("DELETE_") {
                return self.resume_create(stack, template, files, nfv).await;
            }
            // A stack of this name being deleted (an earlier rollback): its name is free
            // once it is gone.
            let identifier = stack.stack_ref().to_string();
            let what = format!("waiting for the deleted Heat stack {name} to be gone");
            self.cancel.guard(&what, self.heat.wait_for(&identifier, "DELETE_COMPLETE", &self.driver.wait)).await?;
        }

        let mut request = CreateStackRequest::new(&name, template.clone())
            .with_parameter("nfv", nfv.clone())
            .with_timeout_mins(self.driver.stack_timeout_mins);
        request.parameters.extend(self.extra_parameters.clone());
        request.files = files.clone();
        let what = format!("creating Heat stack {name}");
        self.cancel.check(&what)?;
        // Not `guard`: once Heat accepted the create, its id must be kept even if a
        // cancel comes in meanwhile.
        let created = self.heat.create_stack(&request).await;
        self.state.nfv = nfv.clone();
        match created {
            Ok(stack) => {
                self.state.stack_id = Some(stack.id);
                self.sync_vim_state();
                self.wait_stack("CREATE_COMPLETE").await
            }
            Err(OpenStackError::Api { status: 409, .. }) => {
                // Created between the lookup and the POST (a concurrent run): adopt it and
                // give it this operation's template and parameters.
                let found = self.cancel.guard(&lookup, self.heat.get_stack(&name)).await?;
                let stack =
                    found.ok_or_else(|| failed(format!("{what}: Heat reports the name in use but no stack")))?;
                tracing::info!(stack = %name, id = %stack.id, "adopting the existing Heat stack");
                self.state.stack_id = Some(stack.id);
                self.sync_vim_state();
                self.update(Some((template, files)), nfv).await
            }
            Err(error) => Err(vim_failure(&what, &error)),
        }
    }

    /// Carries on with the stack `vnf-<instance id>` that Heat has although the state knows
    /// none: an earlier run of this operation created it and its answer (or the conductor)
    /// was lost. Nothing is created twice:
    ///
    /// - `CREATE_IN_PROGRESS` (the crash came between "create stack" and "stack complete")
    ///   or `UPDATE_IN_PROGRESS`: the earlier run's create, or its adopting update, is
    ///   still running with this operation's template and parameters (they follow from the
    ///   request and the plan). The run waits for it to complete and sends nothing.
    /// - `CREATE_COMPLETE` or `UPDATE_COMPLETE` with the `nfv` parameter this run would
    ///   send: the earlier run's create finished; nothing to send either.
    /// - other parameters, or another state (`CREATE_FAILED`, `UPDATE_FAILED`,
    ///   `ROLLBACK_COMPLETE`, `ROLLBACK_FAILED`; [`HeatRun::create`] has waited for a
    ///   `ROLLBACK_IN_PROGRESS` to end): a stack that another attempt left behind. It gets
    ///   this operation's template, files and parameters with an update, as a known stack
    ///   would (Heat retries what failed).
    async fn resume_create(
        &mut self,
        stack: Stack,
        template: Value,
        files: BTreeMap<String, String>,
        nfv: Value,
    ) -> Result<(), Halt> {
        let name = self.state.stack_name.clone();
        let status = stack.stack_status.clone();
        tracing::info!(stack = %name, id = %stack.id, %status, "found the Heat stack of an earlier run");
        self.state.stack_id = Some(stack.id.clone());
        self.sync_vim_state();
        let (action, state) = status.split_once('_').unwrap_or((status.as_str(), ""));
        let settled = match state {
            "IN_PROGRESS" if matches!(action, "CREATE" | "UPDATE") => {
                self.wait_stack(&format!("{action}_COMPLETE")).await?;
                true
            }
            // A completed rollback undid what was sent: send it again.
            "COMPLETE" if matches!(action, "CREATE" | "UPDATE") => nfv_parameter(&stack).as_ref() == Some(&nfv),
            _ => false,
        };
        if settled {
            self.state.nfv = nfv;
            self.sync_vim_state();
            Ok(())
        } else {
            self.update(Some((template, files)), nfv).await
        }
    }

    async fn update(&mut self, template: Option<(Value, BTreeMap<String, String>)>, nfv: Value) -> Result<(), Halt> {
        let mut request =
            UpdateStackRequest { timeout_mins: Some(self.driver.stack_timeout_mins), ..Default::default() };
        request.parameters.insert("nfv".into(), nfv.clone());
        request.parameters.extend(self.extra_parameters.clone());
        if let Some((template, files)) = template {
            request.template = Some(template);
            request.files = files;
        }
        let stack = self.state.identifier();
        let what = format!("updating Heat stack {}", self.state.stack_name);
        self.cancel.guard(&what, self.heat.update_stack(&stack, &request)).await?;
        self.state.nfv = nfv;
        self.sync_vim_state();
        self.wait_stack("UPDATE_COMPLETE").await
    }

    /// Scale-in: the newest VNFCs beyond the plan's count go. Marking their scaling-group
    /// member unhealthy makes Heat remove that member rather than one of its own choice
    /// (Tacker's scale, SCALE_IN).
    async fn mark_scale_in_members(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        let mut members = Vec::new();
        for target in &plan.vdus {
            let vnfcs: Vec<&VnfcResource> =
                self.inventory.vnfc_resources.iter().filter(|v| v.vdu_id == target.vdu_id).collect();
            let surplus = vnfcs.len().saturating_sub(target.count as usize);
            for vnfc in vnfcs.iter().rev().take(surplus) {
                if let (Some(stack), Some(member)) =
                    (meta_str(vnfc, "parent_stack_id"), meta_str(vnfc, "parent_resource_name"))
                {
                    members.push((stack.to_owned(), member.to_owned()));
                }
            }
        }
        for (stack, member) in members {
            let what = format!("marking scaling-group member {member} unhealthy");
            let mark = async {
                match self.heat.mark_resource_unhealthy(&stack, &member, "marked by solgate for scale-in").await {
                    // A re-run of a scale-in whose update already removed the member.
                    Err(OpenStackError::Api { status: 404, .. } | OpenStackError::StackNotFound { .. }) => {
                        tracing::info!(%stack, %member, "scaling-group member already gone");
                        Ok(())
                    }
                    other => other,
                }
            };
            self.cancel.guard(&what, mark).await?;
        }
        Ok(())
    }

    /// Lists the stack's resources and maps them.
    async fn refresh(&mut self) -> Result<(), Halt> {
        let stack = self.state.identifier();
        let what = format!("listing the resources of Heat stack {}", self.state.stack_name);
        let resources = self.cancel.guard(&what, self.heat.list_resources(&stack, 2)).await?;
        let flavour_id = self.flavour_id.clone().unwrap_or_default();
        let flavour = vnfd_flavour(self.ctx.vnfd, &flavour_id)?;
        let mut inventory = map_resources(&resources, flavour, &self.inventory, self.vim_connection_id());
        inventory.vim_state = serde_json::to_value(&self.state).unwrap_or(Value::Null);
        for vip in &flavour.vip_cps {
            // The VipCp's port, in the top stack.
            let Some(port) = resources.iter().find(|res| {
                res.resource_type == PORT
                    && res.resource_name == vip.id
                    && res.parent_resource.is_none()
                    && !res.physical_resource_id.is_empty()
            }) else {
                continue;
            };
            let what = format!("reading port resource {} of Heat stack {}", vip.id, self.state.stack_name);
            let shown = self.cancel.guard(&what, self.heat.get_resource(&stack, &vip.id)).await?;
            let fixed_ips =
                shown.as_ref().and_then(|res| res.extra.get("attributes")).map(|attributes| &attributes["fixed_ips"]);
            let info = vip_cp_info(vip, port, fixed_ips, &mut inventory, self.vim_connection_id());
            inventory.vip_cp_info.push(info);
        }
        inventory.ext_link_ports = trunk_ports(&resources, flavour, self.vim_connection_id());
        self.inventory = inventory;
        Ok(())
    }

    /// A VDU whose count the BaseHOT does not take from `nfv` cannot follow the plan.
    fn check_counts(&self, plan: &DeploymentPlan) -> Result<(), Halt> {
        for target in &plan.vdus {
            let held = self.inventory.vnfc_resources.iter().filter(|v| v.vdu_id == target.vdu_id).count();
            if held != target.count as usize {
                return Err(failed(format!(
                    "Heat stack {} holds {held} server(s) of VDU {} where {} are needed; \
                     BaseHOT/{} should set the VDU's desired_capacity from nfv.VDU.{}.desired_capacity",
                    self.state.stack_name, target.vdu_id, target.count, plan.flavour_id, target.vdu_id
                )));
            }
        }
        Ok(())
    }

    /// The stack id from the name when the inventory does not know it; the stack as that
    /// lookup found it (`None` when the id was known and nothing was asked).
    async fn resolve_stack(&mut self) -> Result<Option<Stack>, Halt> {
        if self.state.stack_id.is_some() {
            return Ok(None);
        }
        let name = self.state.stack_name.clone();
        let found = self.cancel.guard(&format!("looking up Heat stack {name}"), self.heat.get_stack(&name)).await?;
        let stack = found.ok_or_else(|| failed(format!("Heat stack {name} does not exist")))?;
        self.state.stack_id = Some(stack.id.clone());
        self.sync_vim_state();
        Ok(Some(stack))
    }

    /// Waits until no action runs on the known stack (its status is not `*_IN_PROGRESS`)
    /// before this run changes it: a re-run may find the earlier run's update still going,
    /// and Heat refuses (409) a new update meanwhile. Whatever it then settles
    /// in (`UPDATE_COMPLETE`, `UPDATE_FAILED`, a rollback's end) the caller goes on as
    /// planned; a stack that is gone is a failure.
    ///
    /// Requests: none when `seen` (the stack as a lookup of this run just answered) is
    /// already settled; otherwise one `GET` of the stack when it is settled, and one more
    /// per poll interval while it is not.
    async fn wait_until_settled(&self, seen: Option<&Stack>) -> Result<(), Halt> {
        if seen.is_some_and(|stack| !stack.stack_status.ends_with("_IN_PROGRESS")) {
            return Ok(());
        }
        let name = &self.state.stack_name;
        let what = format!("waiting for Heat stack {name} to leave *_IN_PROGRESS");
        let settled =
            self.cancel.guard(&what, self.heat.wait_settled(&self.state.identifier(), &self.driver.wait)).await?;
        let stack = settled.ok_or_else(|| failed(format!("Heat stack {name} does not exist")))?;
        tracing::debug!(stack = %name, status = %stack.stack_status, "Heat stack settled");
        Ok(())
    }
}

impl ActionRun for HeatRun<'_, '_> {
    fn sync_vim_state(&mut self) {
        self.inventory.vim_state = serde_json::to_value(&self.state).unwrap_or(Value::Null);
    }

    async fn realize(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        self.cancel.check("changing the Heat stack")?;
        self.flavour_id = Some(plan.flavour_id.clone());
        if let Some(fields) = self.user_data_fields().await? {
            return self.realize_with_user_data(plan, fields).await;
        }
        let hot = BaseHot::load(self.ctx.package_dir, &plan.flavour_id)?;
        let mut template = hot.template;
        let mut files = hot.files;
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        apply_vip_cps(&mut template, &mut files, flavour)?;
        apply_trunks(&mut template, flavour, plan)?;
        apply_ext_managed_vls(&mut template, &plan.ext_managed_virtual_links);
        let nfv = if self.state.user_data && self.state.stack_id.is_some() {
            self.capacities_over_user_data(&template, plan)
        } else {
            self.nfv_for(&template, plan)?
        };

        if self.state.stack_id.is_none() {
            self.create(template, files, &hot.digest, plan, nfv).await?;
        } else {
            // A re-run of an update (a scale) whose PATCH the earlier run sent may find it
            // still running: wait for it, or Heat refuses this one. One GET when the stack
            // is settled, as it mostly is.
            self.wait_until_settled(None).await?;
            self.mark_scale_in_members(plan).await?;
            // A template from user data stays (Tacker's default user data sends none).
            let same_template = self.state.user_data
                || (self.state.flavour_id.as_deref() == Some(plan.flavour_id.as_str())
                    && self.state.template_digest.as_deref() == Some(hot.digest.as_str()));
            let replace = (!same_template).then_some((template, files));
            self.update(replace, nfv).await?;
            self.state.flavour_id = Some(plan.flavour_id.clone());
            if !self.state.user_data {
                self.state.template_digest = Some(hot.digest);
            }
            self.sync_vim_state();
        }
        self.refresh().await?;
        self.check_counts(plan)
    }

    async fn heal(&mut self, plan: &DeploymentPlan, vnfc_ids: &[String]) -> Result<(), Halt> {
        self.cancel.check("healing")?;
        self.flavour_id = Some(plan.flavour_id.clone());
        let looked_up = self.resolve_stack().await?;
        // A re-run while the earlier run's update is still replacing the servers: the
        // resources may still show the old servers, and marking them would have Heat
        // refuse the update (409) or replace them twice. Once it has settled, the reads
        // below show the replacements. No extra request when the lookup saw it settled.
        self.wait_until_settled(looked_up.as_ref()).await?;
        // Tacker asks the user data for the fields before it marks anything.
        let fields = self.user_data_fields().await?;
        // (nested stack, resource name, server the inventory knows) of each target VNFC.
        let targets: Vec<(String, String, String)> = self
            .inventory
            .vnfc_resources
            .iter()
            .filter(|v| vnfc_ids.is_empty() || vnfc_ids.contains(&v.id))
            .map(|v| {
                let stack = meta_str(v, "stack_id")
                    .ok_or_else(|| failed(format!("VNFC {} has no Heat stack in its metadata", v.id)))?;
                let resource = meta_str(v, "resource_name").unwrap_or(&v.vdu_id);
                Ok((stack.to_owned(), resource.to_owned(), v.compute_resource.resource_id.clone()))
            })
            .collect::<Result<_, Halt>>()?;
        let mut marked = 0;
        for (stack, resource, server) in &targets {
            // A re-run of this heal from the pre-operation inventory: if the earlier run's
            // update already replaced the server, marking the resource now would mark the
            // replacement and have Heat replace it once more.
            let what = format!("reading server resource {resource} of Heat stack {stack}");
            let found = self.cancel.guard(&what, self.heat.get_resource(stack, resource)).await?;
            match found {
                Some(current) if current.physical_resource_id == *server => {}
                Some(current) => {
                    tracing::info!(%stack, %resource, %server, replacement = %current.physical_resource_id,
                        "server already replaced; not marking it again");
                    continue;
                }
                None => {
                    tracing::info!(%stack, %resource, %server, "server resource gone; not marking it");
                    continue;
                }
            }
            let what = format!("marking server {resource} unhealthy");
            self.cancel
                .guard(&what, self.heat.mark_resource_unhealthy(stack, resource, "marked by solgate for heal"))
                .await?;
            marked += 1;
        }
        if marked == 0 {
            // Nothing left to replace: the inventory is read again (the replacements keep
            // their VNFC ids).
            return self.refresh().await;
        }
        if let Some(fields) = fields {
            self.update_with_fields(fields).await?;
            return self.refresh().await;
        }
        // Same parameters: the update only replaces what is marked unhealthy.
        let nfv = if self.state.nfv.is_object() {
            self.state.nfv.clone()
        } else {
            let hot = BaseHot::load(self.ctx.package_dir, &plan.flavour_id)?;
            self.nfv_for(&hot.template, plan)?
        };
        self.update(None, nfv).await?;
        self.refresh().await
    }

    /// Nova `os-stop` / `os-start` on every VNFC server, then waits for SHUTOFF / ACTIVE.
    async fn operate(&mut self, change_state_to: &str) -> Result<(), Halt> {
        let (action, target) = match change_state_to {
            "STOPPED" => ("os-stop", "SHUTOFF"),
            "STARTED" => ("os-start", "ACTIVE"),
            other => return Err(failed(format!("changeStateTo {other} is not STARTED or STOPPED"))),
        };
        let nova = NovaClient::new(self.creds.clone()).map_err(|error| failed(error.to_string()))?;
        let servers: Vec<String> =
            self.inventory.vnfc_resources.iter().map(|v| v.compute_resource.resource_id.clone()).collect();
        for server in &servers {
            let what = format!("reading server {server}");
            let found = self.cancel.guard(&what, nova.get_server(server)).await?;
            let status = found.ok_or_else(|| failed(format!("server {server} does not exist")))?.status;
            if status != target {
                self.cancel.guard(&format!("{action} of server {server}"), nova.server_action(server, action)).await?;
            }
        }
        let deadline = Instant::now() + self.driver.wait.timeout;
        for server in &servers {
            loop {
                let what = format!("waiting for server {server} to become {target}");
                let current = self
                    .cancel
                    .guard(&what, nova.get_server(server))
                    .await?
                    .ok_or_else(|| failed(format!("server {server} disappeared while {what}")))?;
                if current.status == target && current.task_state.is_none() {
                    break;
                }
                if current.status == "ERROR" {
                    let fault = current.fault.as_ref().and_then(|f| f["message"].as_str()).unwrap_or("no fault");
                    return Err(failed(format!("server {server} went to ERROR: {fault}")));
                }
                if Instant::now() + self.driver.wait.poll_interval > deadline {
                    return Err(failed(format!("timed out {what} (last status {})", current.status)));
                }
                self.cancel.pause(&what, self.driver.wait.poll_interval).await?;
            }
        }
        self.inventory.vnf_state = change_state_to.to_owned();
        Ok(())
    }

    async fn teardown(&mut self) -> Result<(), Halt> {
        let stack = self.state.identifier();
        let what = format!("deleting Heat stack {}", self.state.stack_name);
        let existed = self.cancel.guard(&what, self.heat.delete_stack(&stack)).await?;
        if existed {
            self.wait_stack("DELETE_COMPLETE").await?;
        }
        self.inventory = Inventory { vnf_state: self.inventory.vnf_state.clone(), ..Inventory::default() };
        Ok(())
    }

    /// The stack's resources, listed once more (when the stack and flavour are known).
    async fn reread_after_failure(&mut self) {
        if self.state.stack_id.is_some()
            && let Some(flavour) = self.flavour_id.as_deref().and_then(|id| self.ctx.vnfd.flavour(id))
            && let Ok(resources) = self.heat.list_resources(&self.state.identifier(), 2).await
        {
            let state = self.inventory.vim_state.clone();
            let mut vips = std::mem::take(&mut self.inventory.vip_cp_info);
            self.inventory = map_resources(&resources, flavour, &self.inventory, self.vim_connection_id());
            self.inventory.vim_state = state;
            self.inventory.ext_link_ports = trunk_ports(&resources, flavour, self.vim_connection_id());
            // The VipCps whose port is still there, as last read.
            vips.retain(|vip| {
                resources.iter().any(|res| Some(res.physical_resource_id.as_str()) == vip["vnfLinkPortId"].as_str())
            });
            self.inventory.vip_cp_info = vips;
        }
    }

    fn into_inventory(self) -> Inventory {
        self.inventory
    }
}

impl InfraDriver for OpenStackDriver {
    fn vim_type(&self) -> &'static str {
        VIM_TYPE_OPENSTACK
    }

    fn execute<'a>(
        &'a self,
        ctx: InfraContext<'a>,
        action: InfraAction<'a>,
    ) -> BoxFuture<'a, Result<Inventory, DriverError>> {
        Box::pin(async move {
            let mut creds =
                VimCredentials::from_vim_connection(ctx.vim).map_err(|e| DriverError::new(e.to_string()))?;
            creds.tls.trust = self.trust.clone();
            let heat = HeatClient::new(creds.clone()).map_err(|error| DriverError::new(error.to_string()))?;
            let state = StackState::of(ctx.current, ctx.instance_id);
            let flavour_id = state.flavour_id.clone();
            let cancel = CancelGuard::new(ctx.cancelled, self.cancel_poll);
            let inventory = ctx.current.clone();
            let run = HeatRun {
                driver: self,
                ctx: &ctx,
                cancel,
                creds,
                heat,
                state,
                inventory,
                flavour_id,
                extra_parameters: Map::new(),
            };
            run_action(run, action).await
        })
    }
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
