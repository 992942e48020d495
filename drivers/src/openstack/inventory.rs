//! A Heat stack's resources as an inventory (`nested_depth=2` listing):
//! `OS::Nova::Server` → VnfcResourceInfo, `OS::Cinder::Volume` → VirtualStorageResourceInfo,
//! `OS::Neutron::Net` → VnfVirtualLinkResourceInfo, `OS::Neutron::Port` of a VduCp → the
//! VNFC's vnfcCpInfo and the link port of its internal VL, the port of a VipCp → its
//! VipCpInfo (the address read from the port resource's `fixed_ips` attribute) and a link
//! port of its VL. Only resources named as VNFD nodes of the flavour count (Tacker's
//! `_get_checked_reses`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solgate_vnfpkg::{CpKind, Flavour, VipCpd};

use super::StackResource;
use super::hot::{NETWORK, PORT, SCALING_GROUP, SERVER, TRUNK, VOLUME};
use crate::infra::{Inventory, ResourceHandle, VirtualLinkResource, VirtualStorageResource, VnfcResource};

/// What a VNFC's `metadata` records of its server resource (Tacker's names).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct VnfcMetadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) creation_time: Option<String>,
    /// The nested stack that holds the server (null when Heat gives no link to it).
    pub(super) stack_id: Option<String>,
    pub(super) resource_name: Option<String>,
    /// A member of a scaling group: scale-in marks the member unhealthy (Tacker's
    /// parent_stack_id / parent_resource_name). Null when Heat gives no link to its stack.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parent_stack_id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parent_resource_name: Option<String>,
    /// A VDU resource `<VDU>-<n>` of the top template (Tacker's userdata_standard).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vdu_idx: Option<u32>,
}

impl VnfcMetadata {
    /// The metadata of `vnfc` (empty when it has none of this shape).
    pub(super) fn of(vnfc: &VnfcResource) -> Self {
        vnfc.metadata.as_ref().and_then(|metadata| Self::deserialize(metadata).ok()).unwrap_or_default()
    }
}

/// SOL003 VnfcCpInfo as this driver fills it.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct VnfcCpInfo {
    id: String,
    cpd_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    vnf_link_port_id: Option<String>,
}

impl VnfcCpInfo {
    fn of(info: &Value) -> Self {
        Self::deserialize(info).unwrap_or_default()
    }
}

/// SOL003 VnfLinkPortInfo.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VnfLinkPort<'a> {
    id: &'a str,
    resource_handle: ResourceHandle,
    #[serde(skip_serializing_if = "Option::is_none")]
    cp_instance_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cp_instance_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vip_cp_instance_id: Option<&'a str>,
}

/// The ResourceHandle of a stack resource.
fn handle(res: &StackResource, vim_connection_id: Option<&str>) -> ResourceHandle {
    ResourceHandle {
        vim_connection_id: vim_connection_id.map(str::to_owned),
        resource_id: res.physical_resource_id.clone(),
        vim_level_resource_type: Some(res.resource_type.clone()),
    }
}

fn live(res: &&StackResource) -> bool {
    !res.physical_resource_id.is_empty()
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
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

/// What the mapping reads: the stack's resources, the flavour naming them, the inventory
/// before.
struct Mapping<'a> {
    resources: &'a [StackResource],
    flavour: &'a Flavour,
    previous: &'a Inventory,
    vim_connection_id: Option<&'a str>,
}

/// Maps a stack's resources to an inventory, keeping the ids `previous` gave them.
///
/// A server keeps its VNFC id when its physical id is known, or when it took the place of
/// a server that is gone (same nested stack and resource name: a heal, or any update that
/// replaced the server). Other servers are new VNFCs, appended oldest first.
pub(super) fn map_resources(
    resources: &[StackResource],
    flavour: &Flavour,
    previous: &Inventory,
    vim_connection_id: Option<&str>,
) -> Inventory {
    let mapping = Mapping { resources, flavour, previous, vim_connection_id };
    let (storages, storage_stacks) = mapping.storages();
    let vnfcs = mapping.servers(&storages, &storage_stacks);
    let links = mapping.links(&vnfcs);
    Inventory {
        vnfc_resources: vnfcs,
        virtual_links: links,
        virtual_storages: storages,
        vim_state: previous.vim_state.clone(),
        vnf_state: previous.vnf_state.clone(),
        ..Inventory::default()
    }
}

impl Mapping<'_> {
    fn handle(&self, res: &StackResource) -> ResourceHandle {
        handle(res, self.vim_connection_id)
    }

    fn by_name(&self, name: &str) -> Option<&StackResource> {
        self.resources.iter().find(|res| res.resource_name == name)
    }

    /// The volumes of VNFD storages, with the stack that holds each.
    fn storages(&self) -> (Vec<VirtualStorageResource>, Vec<Option<String>>) {
        let mut storages = Vec::new();
        let mut storage_stacks = Vec::new();
        for res in self.resources.iter().filter(live).filter(|res| res.resource_type == VOLUME) {
            if !self.flavour.virtual_storages.iter().any(|s| s.id == res.resource_name) {
                continue;
            }
            let id = self
                .previous
                .virtual_storages
                .iter()
                .find(|s| s.storage_resource.resource_id == res.physical_resource_id)
                .map_or_else(new_id, |s| s.id.clone());
            storage_stacks.push(res.stack_identifier());
            storages.push(VirtualStorageResource {
                id,
                virtual_storage_desc_id: res.resource_name.clone(),
                storage_resource: self.handle(res),
            });
        }
        (storages, storage_stacks)
    }

    /// The VNFCs: known ones in their previous order, then new ones by creation time
    /// (scale-in takes the newest, from the end).
    fn servers(&self, storages: &[VirtualStorageResource], storage_stacks: &[Option<String>]) -> Vec<VnfcResource> {
        let servers: Vec<(&StackResource, String)> = self
            .resources
            .iter()
            .filter(live)
            .filter(|res| res.resource_type == SERVER)
            .filter_map(|res| vdu_of(res, self.flavour).map(|vdu| (res, vdu)))
            .collect();
        let live_ids: BTreeSet<&str> = servers.iter().map(|(res, _)| res.physical_resource_id.as_str()).collect();
        let mut taken = BTreeSet::new();
        let mut mapped: Vec<(Option<usize>, VnfcResource, &StackResource)> = Vec::new();
        for (res, vdu_id) in &servers {
            let index = self.previous_vnfc(res, vdu_id, &live_ids, &taken);
            if let Some(index) = index {
                taken.insert(index);
            }
            let id = index.map_or_else(new_id, |i| self.previous.vnfc_resources[i].id.clone());
            let vnfc = self.vnfc(res, vdu_id, id, storages, storage_stacks);
            mapped.push((index, vnfc, res));
        }
        mapped.sort_by(|(a, _, ra), (b, _, rb)| match (a, b) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => {
                (&ra.creation_time, &ra.physical_resource_id).cmp(&(&rb.creation_time, &rb.physical_resource_id))
            }
        });
        mapped.into_iter().map(|(_, vnfc, _)| vnfc).collect()
    }

    /// The previous VNFC a server is: the one with this server, else one whose server is
    /// gone from the same slot (nested stack and resource name) and not taken yet.
    fn previous_vnfc(
        &self,
        res: &StackResource,
        vdu_id: &str,
        live_ids: &BTreeSet<&str>,
        taken: &BTreeSet<usize>,
    ) -> Option<usize> {
        let vnfcs = &self.previous.vnfc_resources;
        let same_server = vnfcs.iter().position(|v| v.compute_resource.resource_id == res.physical_resource_id);
        let stack_id = res.stack_identifier();
        let same_slot = || {
            vnfcs.iter().enumerate().position(|(index, v)| {
                let metadata = VnfcMetadata::of(v);
                !taken.contains(&index)
                    && !live_ids.contains(v.compute_resource.resource_id.as_str())
                    && v.vdu_id == vdu_id
                    && metadata.stack_id == stack_id
                    && metadata.resource_name.as_deref().unwrap_or(&v.vdu_id) == res.resource_name
            })
        };
        same_server.or_else(same_slot)
    }

    /// The metadata of a server's VNFC.
    fn metadata(&self, res: &StackResource) -> VnfcMetadata {
        let mut metadata = VnfcMetadata {
            creation_time: res.creation_time.clone(),
            stack_id: res.stack_identifier(),
            resource_name: Some(res.resource_name.clone()),
            ..VnfcMetadata::default()
        };
        if let Some(parent) = res.parent_resource.as_deref().and_then(|name| self.by_name(name)) {
            let grandparent = parent.parent_resource.as_deref().and_then(|name| self.by_name(name));
            if grandparent.is_some_and(|g| g.resource_type == SCALING_GROUP) {
                metadata.parent_stack_id = Some(json!(parent.stack_identifier()));
                metadata.parent_resource_name = Some(parent.resource_name.clone());
            } else {
                metadata.vdu_idx =
                    parent.resource_name.rsplit_once('-').and_then(|(_, index)| index.parse::<u32>().ok());
            }
        }
        metadata
    }

    /// The VNFC `id` of a server of `vdu_id`, with its storages and CPs.
    fn vnfc(
        &self,
        res: &StackResource,
        vdu_id: &str,
        id: String,
        storages: &[VirtualStorageResource],
        storage_stacks: &[Option<String>],
    ) -> VnfcResource {
        let stack_id = res.stack_identifier();
        let vdu = self.flavour.vdu(vdu_id);
        let storage_resource_ids = storages
            .iter()
            .zip(storage_stacks)
            .filter(|(storage, stack)| {
                **stack == stack_id
                    && vdu.is_some_and(|v| v.virtual_storages.contains(&storage.virtual_storage_desc_id))
            })
            .map(|(storage, _)| storage.id.clone())
            .collect();
        let mut cp_info = Vec::new();
        for cpd_id in vdu.map(|v| v.cps.as_slice()).unwrap_or_default() {
            // Only ports on an internal VL are VNF link ports (SOL003 VnfLinkPortInfo); an
            // external CP's port belongs to the extVirtualLink.
            let internal = self.flavour.cps.iter().any(|cp| &cp.id == cpd_id && cp.virtual_link.is_some());
            let port =
                self.resources.iter().filter(live).find(|p| {
                    p.resource_type == PORT && &p.resource_name == cpd_id && p.stack_identifier() == stack_id
                });
            let info = VnfcCpInfo {
                id: format!("{cpd_id}-{id}"),
                cpd_id: cpd_id.clone(),
                vnf_link_port_id: port.filter(|_| internal).map(|port| port.physical_resource_id.clone()),
            };
            cp_info.push(json!(info));
        }
        VnfcResource {
            id,
            vdu_id: vdu_id.to_owned(),
            compute_resource: self.handle(res),
            storage_resource_ids,
            vnfc_cp_info: cp_info,
            zone_id: None,
            metadata: Some(json!(self.metadata(res))),
        }
    }

    /// Internal virtual links, with the VNFC ports attached to them.
    fn links(&self, vnfcs: &[VnfcResource]) -> Vec<VirtualLinkResource> {
        let mut links = Vec::new();
        for res in self.resources.iter().filter(live).filter(|res| res.resource_type == NETWORK) {
            if !self.flavour.virtual_links.iter().any(|vl| vl.id == res.resource_name) {
                continue;
            }
            let previous = &self.previous.virtual_links;
            let id = previous
                .iter()
                .find(|vl| vl.network_resource.resource_id == res.physical_resource_id)
                .or_else(|| previous.iter().find(|vl| vl.vnf_virtual_link_desc_id == res.resource_name))
                .map_or_else(new_id, |vl| vl.id.clone());
            let ports = vnfcs.iter().flat_map(|vnfc| &vnfc.vnfc_cp_info).filter_map(|info| self.link_port(info, res));
            links.push(VirtualLinkResource {
                id,
                vnf_virtual_link_desc_id: res.resource_name.clone(),
                network_resource: self.handle(res),
                vnf_link_ports: ports.collect(),
            });
        }
        links
    }

    /// The link port of a VNFC CP on the network `network`, if it is on it.
    fn link_port(&self, info: &Value, network: &StackResource) -> Option<Value> {
        let info = VnfcCpInfo::of(info);
        let port_id = info.vnf_link_port_id.as_deref()?;
        let on_this_vl = self.flavour.cps.iter().any(|cp| {
            cp.id == info.cpd_id
                && cp.kind == CpKind::VduCp
                && cp.virtual_link.as_deref() == Some(&network.resource_name)
        });
        let port = self.resources.iter().find(|p| p.resource_type == PORT && p.physical_resource_id == port_id)?;
        on_this_vl.then(|| {
            json!(VnfLinkPort {
                id: port_id,
                resource_handle: self.handle(port),
                cp_instance_id: Some(&info.id),
                cp_instance_type: Some("VNFC_CP"),
                vip_cp_instance_id: None,
            })
        })
    }
}

/// A `fixed_ips` entry of a Neutron port's attributes.
#[derive(Deserialize)]
struct PortFixedIp {
    ip_address: Value,
    #[serde(default)]
    subnet_id: Value,
}

/// SOL003 IpAddress of a VipCpInfo.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VipAddress<'a> {
    r#type: &'static str,
    addresses: [&'a str; 1],
    is_dynamic: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    subnet_id: Option<&'a str>,
}

/// SOL003 VipCpInfo as this driver fills it.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct VipCpInfo {
    cp_instance_id: String,
    cpd_id: String,
    associated_vnfc_cp_ids: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cp_protocol_info: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vnf_link_port_id: Option<String>,
}

/// SOL003 VipCpInfo of a VipCp's port, whose addresses the port resource's `fixed_ips`
/// attribute gives; the port becomes a link port of the VipCp's virtual link.
pub(super) fn vip_cp_info(
    vip: &VipCpd,
    port: &StackResource,
    fixed_ips: Option<&Value>,
    inventory: &mut Inventory,
    vim_connection_id: Option<&str>,
) -> Value {
    let cp_instance_id = format!("{}-{}", vip.id, port.physical_resource_id.chars().take(8).collect::<String>());
    let fixed_ips: Vec<PortFixedIp> = fixed_ips
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|fixed| PortFixedIp::deserialize(fixed).ok())
        .collect();
    let addresses: Vec<VipAddress<'_>> = fixed_ips
        .iter()
        .filter_map(|fixed| {
            let ip = fixed.ip_address.as_str()?;
            let r#type = if ip.contains(':') { "IPV6" } else { "IPV4" };
            Some(VipAddress { r#type, addresses: [ip], is_dynamic: true, subnet_id: fixed.subnet_id.as_str() })
        })
        .collect();
    let associated = inventory
        .vnfc_resources
        .iter()
        .flat_map(|vnfc| vnfc.vnfc_cp_info.iter().map(VnfcCpInfo::of))
        .filter(|cp| vip.targets.contains(&cp.cpd_id))
        .map(|cp| cp.id)
        .collect();
    let mut info = VipCpInfo {
        cp_instance_id: cp_instance_id.clone(),
        cpd_id: vip.id.clone(),
        associated_vnfc_cp_ids: associated,
        cp_protocol_info: (!addresses.is_empty())
            .then(|| json!([{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": addresses}}])),
        vnf_link_port_id: None,
    };
    if let Some(link) = inventory.virtual_links.iter_mut().find(|vl| vl.vnf_virtual_link_desc_id == vip.virtual_link) {
        link.vnf_link_ports.push(json!(VnfLinkPort {
            id: &port.physical_resource_id,
            resource_handle: handle(port, vim_connection_id),
            cp_instance_id: None,
            cp_instance_type: None,
            vip_cp_instance_id: Some(&cp_instance_id),
        }));
        info.vnf_link_port_id = Some(port.physical_resource_id.clone());
    }
    json!(info)
}

/// An ExtLinkPortInfo of a trunk's parent port or a subport port (`Inventory::ext_link_ports`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrunkPort<'a> {
    id: &'a str,
    resource_handle: ResourceHandle,
    cpd_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    trunk_resource_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cp_config_id: Option<&'a str>,
}

/// The parent port of each trunk `<cpd>_trunk` (with the trunk) and the subport ports
/// `<cpd>_<cpConfigId>` made for it, all in the top stack.
pub(super) fn trunk_ports(
    resources: &[StackResource],
    flavour: &Flavour,
    vim_connection_id: Option<&str>,
) -> Vec<Value> {
    let top = |res: &&StackResource| res.parent_resource.is_none() && !res.physical_resource_id.is_empty();
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
            let mut entry = TrunkPort {
                id: &port.physical_resource_id,
                resource_handle: handle(port, vim_connection_id),
                cpd_id: &cp.id,
                trunk_resource_id: None,
                cp_config_id: None,
            };
            if port.resource_name == cp.id {
                entry.trunk_resource_id = Some(&trunk.physical_resource_id);
            } else if let Some(key) = port.resource_name.strip_prefix(&prefix) {
                entry.cp_config_id = Some(key);
            } else {
                continue;
            }
            out.push(json!(entry));
        }
    }
    out
}
