//! SOL003 VnfExtCpInfo and ExtLinkPortInfo of an instance: the external CP instances the
//! request's `extVirtualLinks` configure on the flavour's external CPDs, and the ports
//! the driver made for them.

use serde::Deserialize;
use solgate_model::infra::Inventory;
use solgate_model::lcm_request::{CpProtocolData, ExtVirtualLinkData, VnfExtCpConfig};
use solgate_model::vnf_instance::{
    CpProtocolInfo, ExtLinkPort, ExtLinkPortInfo, IpAddressInfo, IpOverEthernetAddressInfo, VnfExtCpInfo, VnfcCpInfo,
};
use solgate_vnfpkg::{Cp, Flavour};

/// A `cpConfig` entry with its key (cpConfigId, or v2.6.1's cpInstanceId or position).
type Config<'a> = (String, &'a VnfExtCpConfig);

/// The ports the driver reports (`Inventory::ext_link_ports`), typed.
pub(super) fn driver_ports(inventory: &Inventory) -> Vec<ExtLinkPort> {
    inventory.ext_link_ports.iter().filter_map(|port| ExtLinkPort::deserialize(port).ok()).collect()
}

/// SOL003 VnfExtCpInfo: one external CP instance per VNFC CP of an external VduCp (each
/// with the `cpConfig` entry the request gave for its CPD, in key order, and the protocol
/// data of that entry), and one per VnfExtCp, on the internal virtual link it exposes.
pub(super) fn ext_cp_info(
    flavour: &Flavour,
    flavour_id: &str,
    links: &[ExtVirtualLinkData],
    inventory: &Inventory,
    ports: &[ExtLinkPort],
) -> Vec<VnfExtCpInfo> {
    let mut out = Vec::new();
    for cp in flavour.cps.iter().filter(|cp| cp.external) {
        // Trunk subports (SOL003 V3.5.1) are CP instances of their own, on the VNFC CP of
        // their parent; the other entries configure the VNFC CPs' own ports.
        let (subports, configs): (Vec<_>, Vec<_>) =
            cp_configs(links, &cp.id).into_iter().partition(|(_, config)| config.is_subport());
        match &cp.vdu {
            Some(vdu) => {
                let first = out.len();
                out.extend(vnfc_ext_cps(cp, vdu, &configs, inventory, ports));
                let parents = out[first..].to_vec();
                out.extend(subport_ext_cps(cp, &subports, &parents, ports));
            }
            None => {
                let link = cp.virtual_link.as_ref().and_then(|desc| {
                    inventory.virtual_links.iter().find(|link| &link.vnf_virtual_link_desc_id == desc)
                });
                if let Some(link) = link {
                    let mut entry = ext_cp(format!("{}-{}", cp.id, short(flavour_id)), &cp.id, configs.first());
                    entry.associated_vnf_virtual_link_id = Some(link.id.clone());
                    out.push(entry);
                }
            }
        }
    }
    out
}

/// The CP instances of an external VduCp: one per VNFC CP of its VDU, the index-th with
/// the index-th configuration (the last one for the rest).
fn vnfc_ext_cps(
    cp: &Cp,
    vdu: &str,
    configs: &[Config<'_>],
    inventory: &Inventory,
    ports: &[ExtLinkPort],
) -> Vec<VnfExtCpInfo> {
    let instances = inventory.vnfc_resources.iter().filter(|vnfc| vnfc.vdu_id == vdu).filter_map(|vnfc| {
        vnfc.vnfc_cp_info
            .iter()
            .filter_map(|info| VnfcCpInfo::deserialize(info).ok())
            .find(|info| info.cpd_id == cp.id)
            .and_then(|info| info.id)
    });
    // A trunk's parent port, which the driver made.
    let parent_port = ports.iter().find(|port| port.cpd_id == cp.id && port.trunk_resource_id.is_some());
    instances
        .enumerate()
        .map(|(index, vnfc_cp_id)| {
            let config = configs.get(index).or(configs.last());
            let mut entry = ext_cp(format!("{}-{vnfc_cp_id}", cp.id), &cp.id, config);
            if let (0, None, Some(port)) = (index, &entry.ext_link_port_id, parent_port) {
                entry.ext_link_port_id = Some(port.id.clone());
            }
            entry.associated_vnfc_cp_id = Some(vnfc_cp_id);
            entry
        })
        .collect()
}

/// The CP instances of a VduCp's trunk subports, on the VNFC CP of their parent (the one
/// their `parentCpConfigId` names, else the first).
fn subport_ext_cps(
    cp: &Cp,
    subports: &[Config<'_>],
    parents: &[VnfExtCpInfo],
    ports: &[ExtLinkPort],
) -> Vec<VnfExtCpInfo> {
    let mut out = Vec::new();
    for (key, config) in subports {
        let parent = parents
            .iter()
            .find(|parent| config.parent_cp_config_id.as_ref().is_some_and(|id| &parent.cp_config_id == id))
            .or(parents.first());
        let Some(parent) = parent else { continue };
        let mut entry = ext_cp(format!("{}-{key}", cp.id), &cp.id, Some(&(key.clone(), *config)));
        entry.associated_vnfc_cp_id = parent.associated_vnfc_cp_id.clone();
        let made = ports.iter().find(|port| port.cpd_id == cp.id && port.cp_config_id.as_deref() == Some(key.as_str()));
        if let (None, Some(port)) = (&entry.ext_link_port_id, made) {
            entry.ext_link_port_id = Some(port.id.clone());
        }
        out.push(entry);
    }
    out
}

/// One external CP instance of CPD `cpd_id` with its configuration (`default` without one).
fn ext_cp(id: String, cpd_id: &str, config: Option<&Config<'_>>) -> VnfExtCpInfo {
    let (config_id, config) = match config {
        Some((config_id, config)) => (config_id.as_str(), Some(*config)),
        None => ("default", None),
    };
    VnfExtCpInfo {
        id,
        cpd_id: cpd_id.to_owned(),
        cp_config_id: config_id.to_owned(),
        cp_protocol_info: config
            .map(|config| config.protocol_data().iter().map(protocol_info).collect())
            .unwrap_or_default(),
        ext_link_port_id: config.and_then(|config| config.link_port_id.clone()),
        ..Default::default()
    }
}

/// ExtLinkPortInfo of the ports the driver made for CP instances configured on `link`: each
/// port names the external CP instance it realizes, and a trunk's parent port its trunk.
pub(super) fn ext_link_ports(
    link: &ExtVirtualLinkData,
    ports: &[ExtLinkPort],
    ext_cp_info: &[VnfExtCpInfo],
) -> Vec<ExtLinkPortInfo> {
    ports
        .iter()
        .filter_map(|port| {
            let cp = ext_cp_info.iter().find(|cp| cp.ext_link_port_id.as_deref() == Some(port.id.as_str()))?;
            let on_link = link
                .ext_cps
                .iter()
                .any(|ext_cp| ext_cp.cpd_id == cp.cpd_id && ext_cp.cp_config.has_key(&cp.cp_config_id));
            on_link.then(|| ExtLinkPortInfo {
                id: port.id.clone(),
                resource_handle: port.resource_handle.clone(),
                cp_instance_id: cp.id.clone(),
                trunk_resource_id: port.trunk_resource_id.clone(),
            })
        })
        .collect()
}

/// The `cpConfig` entries the request's external virtual links give for a CPD: a map keyed
/// by cpConfigId (SOL003 v3) in key order, or a list (v2.6.1, keyed by `cpInstanceId` or
/// position).
fn cp_configs<'a>(links: &'a [ExtVirtualLinkData], cpd_id: &str) -> Vec<Config<'a>> {
    links
        .iter()
        .flat_map(|link| link.ext_cps.iter().filter(|ext_cp| ext_cp.cpd_id == cpd_id))
        .flat_map(|ext_cp| ext_cp.cp_config.entries())
        .collect()
}

/// CpProtocolInfo from the request's CpProtocolData: the addresses asked for, fixed ones as
/// `addresses`, dynamic ones as `isDynamic`.
fn protocol_info(data: &CpProtocolData) -> CpProtocolInfo {
    let ethernet = data.ip_over_ethernet.as_ref();
    let addresses = ethernet
        .and_then(|ethernet| ethernet.ip_addresses.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|address| IpAddressInfo {
            kind: address.kind.clone(),
            addresses: match &address.address_range {
                Some(_) => None,
                None => Some(address.fixed_addresses.clone().unwrap_or_else(|| serde_json::json!([]))),
            },
            address_range: address.address_range.clone(),
            is_dynamic: address.num_dynamic_addresses.is_some().then_some(true),
            subnet_id: address.subnet_id.clone(),
        })
        .collect();
    let info = IpOverEthernetAddressInfo {
        mac_address: ethernet.and_then(|ethernet| ethernet.mac_address.clone()),
        segmentation_id: ethernet.and_then(|ethernet| ethernet.segmentation_id.clone()),
        ip_addresses: addresses,
    };
    CpProtocolInfo {
        layer_protocol: data.layer_protocol.clone().unwrap_or_else(|| "IP_OVER_ETHERNET".to_owned()),
        ip_over_ethernet: (!info.is_empty()).then_some(info),
    }
}

fn short(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).take(8).collect()
}
