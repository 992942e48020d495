//! VnfInstance documents: `instantiatedVnfInfo` from a plan and an inventory, the
//! inventory back from a document, and the resource changes between two inventories
//! (VnfLcmOpOcc `resourceChanges`, notifications' `affected*`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use solgate_model::infra::is_subport;
use solgate_model::infra::{DeploymentPlan, Inventory};
use solgate_vnfpkg::Vnfd;

use crate::PRIVATE_KEY;

/// The inventory an instance document records (empty when not instantiated).
pub fn inventory_of(instance: &Value) -> Inventory {
    let info = &instance["instantiatedVnfInfo"];
    let list = |key: &str| info.get(key).cloned().unwrap_or_else(|| json!([]));
    Inventory {
        vnfc_resources: serde_json::from_value(list("vnfcResourceInfo")).unwrap_or_default(),
        virtual_links: serde_json::from_value(list("vnfVirtualLinkResourceInfo")).unwrap_or_default(),
        virtual_storages: serde_json::from_value(list("virtualStorageResourceInfo")).unwrap_or_default(),
        vim_state: instance[PRIVATE_KEY]["vimState"].clone(),
        vnf_state: info["vnfState"].as_str().unwrap_or("STARTED").to_owned(),
        mcio_info: serde_json::from_value(list("mcioInfo")).unwrap_or_default(),
        virtual_cp_info: serde_json::from_value(list("virtualCpInfo")).unwrap_or_default(),
        vip_cp_info: serde_json::from_value(list("vipCpInfo")).unwrap_or_default(),
        ext_link_ports: instance[PRIVATE_KEY]["extLinkPorts"].as_array().cloned().unwrap_or_default(),
    }
}

/// `instantiatedVnfInfo` (SOL003 v3.3.1 shape, shared with v2.6.1 for these members).
pub fn instantiated_info(vnfd: &Vnfd, plan: &DeploymentPlan, inventory: &Inventory, previous: &Value) -> Value {
    let flavour = vnfd.flavour(&plan.flavour_id);
    let scale_status: Vec<Value> =
        plan.scale_levels.iter().map(|(aspect, level)| json!({ "aspectId": aspect, "scaleLevel": level })).collect();
    let max_levels: Vec<Value> = flavour
        .map(|flavour| {
            flavour
                .scaling_aspects
                .iter()
                .map(|aspect| json!({ "aspectId": aspect.id, "scaleLevel": aspect.max_scale_level }))
                .collect()
        })
        .unwrap_or_default();
    // Keep VNFC states from before (OPERATE changes them all at once).
    let vnfc_state = inventory.vnf_state.clone();
    let vnfc_info: Vec<Value> = inventory
        .vnfc_resources
        .iter()
        .map(|vnfc| {
            json!({
                "id": format!("VNFC-{}", vnfc.id),
                "vduId": vnfc.vdu_id,
                "vnfcResourceInfoId": vnfc.id,
                "vnfcState": vnfc_state,
            })
        })
        .collect();
    let ext_cp_info = flavour.map(|flavour| ext_cp_info(flavour, plan, inventory)).unwrap_or_default();
    let ext_virtual_link_info: Vec<Value> = plan
        .ext_virtual_links
        .as_array()
        .into_iter()
        .flatten()
        .map(|link| {
            let mut info = json!({
                "id": link["id"],
                "resourceHandle": resource_handle(link),
                "currentVnfExtCpData": link.get("extCps").cloned().unwrap_or_else(|| json!([])),
            });
            let ports = ext_link_ports(link, inventory, &ext_cp_info);
            if !ports.is_empty() {
                info["extLinkPorts"] = json!(ports);
            }
            info
        })
        .collect();
    let ext_managed_virtual_link_info: Vec<Value> = plan
        .ext_managed_virtual_links
        .as_array()
        .into_iter()
        .flatten()
        .map(|link| ext_managed_virtual_link_info(link, inventory))
        .collect();
    let mut info = Map::new();
    info.insert("flavourId".into(), json!(plan.flavour_id));
    info.insert("vnfState".into(), json!(inventory.vnf_state));
    if !scale_status.is_empty() {
        info.insert("scaleStatus".into(), json!(scale_status));
        info.insert("maxScaleLevels".into(), json!(max_levels));
    }
    // 1..N in SOL003: a flavour that exposes no external CP has none to list, so none at all.
    if !ext_cp_info.is_empty() {
        info.insert("extCpInfo".into(), json!(ext_cp_info));
    }
    if !ext_virtual_link_info.is_empty() {
        info.insert("extVirtualLinkInfo".into(), json!(ext_virtual_link_info));
    }
    if !ext_managed_virtual_link_info.is_empty() {
        info.insert("extManagedVirtualLinkInfo".into(), json!(ext_managed_virtual_link_info));
    }
    let mut vnfc_resources = serde_json::to_value(&inventory.vnfc_resources).unwrap_or_default();
    link_vnfc_cps_to_ext_cps(&mut vnfc_resources, &ext_cp_info);
    info.insert("vnfcResourceInfo".into(), vnfc_resources);
    info.insert(
        "vnfVirtualLinkResourceInfo".into(),
        serde_json::to_value(&inventory.virtual_links).unwrap_or_default(),
    );
    info.insert(
        "virtualStorageResourceInfo".into(),
        serde_json::to_value(&inventory.virtual_storages).unwrap_or_default(),
    );
    info.insert("vnfcInfo".into(), json!(vnfc_info));
    // SOL003 V4.3.1 (VNF LCM 2.10.0): what the CISM reports, only where the VIM is one.
    if !inventory.virtual_cp_info.is_empty() {
        info.insert("virtualCpInfo".into(), json!(inventory.virtual_cp_info));
    }
    // SOL003 V3.5.1 (VNF LCM 2.1.0): the VipCps' addresses, as the VIM allocated them.
    if !inventory.vip_cp_info.is_empty() {
        info.insert("vipCpInfo".into(), json!(inventory.vip_cp_info));
    }
    if !inventory.mcio_info.is_empty() {
        info.insert("mcioInfo".into(), json!(inventory.mcio_info));
    }
    for keep in ["localizationLanguage", "metadata", "selectedDeployableModule"] {
        if let Some(value) = previous.get(keep) {
            info.insert(keep.into(), value.clone());
        }
    }
    Value::Object(info)
}

/// SOL003 VnfExtCpInfo: one external CP instance per VNFC CP of an external VduCp (each
/// with the `cpConfig` entry the request gave for its CPD, in key order, and the protocol
/// data of that entry), and one per VnfExtCp, on the internal virtual link it exposes.
fn ext_cp_info(flavour: &solgate_vnfpkg::Flavour, plan: &DeploymentPlan, inventory: &Inventory) -> Vec<Value> {
    let mut out = Vec::new();
    for cp in flavour.cps.iter().filter(|cp| cp.external) {
        // Trunk subports (SOL003 V3.5.1) are CP instances of their own, on the VNFC CP of
        // their parent; the other entries configure the VNFC CPs' own ports.
        let (subports, configs): (Vec<_>, Vec<_>) =
            cp_configs(&plan.ext_virtual_links, &cp.id).into_iter().partition(|(_, config)| is_subport(config));
        let config_for = |index: usize| configs.get(index).or(configs.last());
        let entry = |id: String, config: Option<&(String, Value)>| {
            let mut entry = Map::new();
            entry.insert("id".into(), json!(id));
            entry.insert("cpdId".into(), json!(cp.id));
            let (config_id, config) = match config {
                Some((config_id, config)) => (config_id.as_str(), config),
                None => ("default", &Value::Null),
            };
            entry.insert("cpConfigId".into(), json!(config_id));
            let protocols: Vec<Value> =
                config["cpProtocolData"].as_array().into_iter().flatten().map(protocol_info).collect();
            entry.insert("cpProtocolInfo".into(), json!(protocols));
            if let Some(port) = config.get("linkPortId").filter(|port| port.is_string()) {
                entry.insert("extLinkPortId".into(), port.clone());
            }
            entry
        };
        match &cp.vdu {
            Some(vdu) => {
                let instances = inventory.vnfc_resources.iter().filter(|vnfc| &vnfc.vdu_id == vdu).filter_map(|vnfc| {
                    vnfc.vnfc_cp_info
                        .iter()
                        .find(|info| info["cpdId"] == cp.id.as_str())
                        .and_then(|info| info["id"].as_str())
                });
                let first = out.len();
                for (index, vnfc_cp_id) in instances.enumerate() {
                    let mut entry = entry(format!("{}-{vnfc_cp_id}", cp.id), config_for(index));
                    entry.insert("associatedVnfcCpId".into(), json!(vnfc_cp_id));
                    // A trunk's parent port, which the driver made.
                    let parent_port = inventory
                        .ext_link_ports
                        .iter()
                        .find(|port| port["cpdId"] == cp.id.as_str() && port.get("trunkResourceId").is_some());
                    if let (0, None, Some(port)) = (index, entry.get("extLinkPortId"), parent_port) {
                        entry.insert("extLinkPortId".into(), port["id"].clone());
                    }
                    out.push(Value::Object(entry));
                }
                let parents: Vec<Value> = out[first..].to_vec();
                for (key, config) in &subports {
                    let parent = parents
                        .iter()
                        .find(|parent| config.get("parentCpConfigId").is_some_and(|id| parent["cpConfigId"] == *id))
                        .or(parents.first());
                    let Some(parent) = parent else { continue };
                    let mut entry = entry(format!("{}-{key}", cp.id), Some(&(key.clone(), config.clone())));
                    entry.insert("associatedVnfcCpId".into(), parent["associatedVnfcCpId"].clone());
                    let made = inventory
                        .ext_link_ports
                        .iter()
                        .find(|port| port["cpdId"] == cp.id.as_str() && port["cpConfigId"] == key.as_str());
                    if let (None, Some(port)) = (entry.get("extLinkPortId"), made) {
                        entry.insert("extLinkPortId".into(), port["id"].clone());
                    }
                    out.push(Value::Object(entry));
                }
            }
            None => {
                let link = cp.virtual_link.as_ref().and_then(|desc| {
                    inventory.virtual_links.iter().find(|link| &link.vnf_virtual_link_desc_id == desc)
                });
                if let Some(link) = link {
                    let mut entry = entry(format!("{}-{}", cp.id, short(&plan.flavour_id)), config_for(0));
                    entry.insert("associatedVnfVirtualLinkId".into(), json!(link.id));
                    out.push(Value::Object(entry));
                }
            }
        }
    }
    out
}

/// ExtLinkPortInfo of the ports the driver made for CP instances configured on `link`: each
/// port names the external CP instance it realizes, and a trunk's parent port its trunk.
fn ext_link_ports(link: &Value, inventory: &Inventory, ext_cp_info: &[Value]) -> Vec<Value> {
    inventory
        .ext_link_ports
        .iter()
        .filter_map(|port| {
            let cp = ext_cp_info.iter().find(|cp| cp["extLinkPortId"] == port["id"])?;
            let config_id = cp["cpConfigId"].as_str()?;
            let on_link = link["extCps"].as_array().into_iter().flatten().any(|ext_cp| {
                ext_cp["cpdId"] == cp["cpdId"] && ext_cp["cpConfig"].get(config_id).is_some_and(Value::is_object)
            });
            if !on_link {
                return None;
            }
            let mut info = Map::new();
            info.insert("id".into(), port["id"].clone());
            info.insert("resourceHandle".into(), port["resourceHandle"].clone());
            info.insert("cpInstanceId".into(), cp["id"].clone());
            if let Some(trunk) = port.get("trunkResourceId") {
                info.insert("trunkResourceId".into(), trunk.clone());
            }
            Some(Value::Object(info))
        })
        .collect()
}

/// The `cpConfig` entries the request's external virtual links give for a CPD: a map keyed
/// by cpConfigId (SOL003 v3) in key order, or a list (v2.6.1, keyed by `cpInstanceId` or
/// position).
fn cp_configs(ext_virtual_links: &Value, cpd_id: &str) -> Vec<(String, Value)> {
    let mut configs = Vec::new();
    for ext_cp in ext_virtual_links
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|link| link["extCps"].as_array().into_iter().flatten().filter(|ext_cp| ext_cp["cpdId"] == cpd_id))
    {
        match &ext_cp["cpConfig"] {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().map(|(key, value)| (key.clone(), value.clone())).collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                configs.extend(entries);
            }
            Value::Array(list) => configs.extend(list.iter().enumerate().map(|(index, value)| {
                let key = value["cpInstanceId"].as_str().map_or_else(|| index.to_string(), str::to_owned);
                (key, value.clone())
            })),
            _ => {}
        }
    }
    configs
}

/// CpProtocolInfo from the request's CpProtocolData: the addresses asked for, fixed ones as
/// `addresses`, dynamic ones as `isDynamic`.
fn protocol_info(data: &Value) -> Value {
    let mut info = Map::new();
    info.insert(
        "layerProtocol".into(),
        data.get("layerProtocol").cloned().unwrap_or_else(|| json!("IP_OVER_ETHERNET")),
    );
    let ethernet = &data["ipOverEthernet"];
    let mut out = Map::new();
    for key in ["macAddress", "segmentationId"] {
        if let Some(value) = ethernet.get(key).filter(|value| !value.is_null()) {
            out.insert(key.into(), value.clone());
        }
    }
    let addresses: Vec<Value> = ethernet["ipAddresses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|address| {
            let mut item = Map::new();
            item.insert("type".into(), address["type"].clone());
            match address.get("addressRange").filter(|range| range.is_object()) {
                Some(range) => {
                    item.insert("addressRange".into(), range.clone());
                }
                None => {
                    item.insert(
                        "addresses".into(),
                        address.get("fixedAddresses").cloned().unwrap_or_else(|| json!([])),
                    );
                }
            }
            if address.get("numDynamicAddresses").is_some_and(Value::is_number) {
                item.insert("isDynamic".into(), json!(true));
            }
            if let Some(subnet) = address.get("subnetId").filter(|subnet| subnet.is_string()) {
                item.insert("subnetId".into(), subnet.clone());
            }
            Value::Object(item)
        })
        .collect();
    if !addresses.is_empty() {
        out.insert("ipAddresses".into(), json!(addresses));
    }
    if !out.is_empty() {
        info.insert("ipOverEthernet".into(), Value::Object(out));
    }
    Value::Object(info)
}

/// A ResourceHandle from a request's link data: only the attributes it has.
fn resource_handle(link: &Value) -> Value {
    let mut handle = Map::new();
    for key in ["vimConnectionId", "resourceProviderId", "resourceId", "vimLevelResourceType"] {
        if let Some(value) = link.get(key).filter(|value| value.is_string()) {
            handle.insert(key.into(), value.clone());
        }
    }
    Value::Object(handle)
}

/// ExtManagedVirtualLinkInfo from the request's ExtManagedVirtualLinkData, with the ports
/// the VNF has on it.
fn ext_managed_virtual_link_info(link: &Value, inventory: &Inventory) -> Value {
    let mut info = Map::new();
    info.insert("id".into(), link["id"].clone());
    info.insert("vnfVirtualLinkDescId".into(), link["vnfVirtualLinkDescId"].clone());
    info.insert("networkResource".into(), resource_handle(link));
    let ports = inventory
        .virtual_links
        .iter()
        .find(|vl| link["vnfVirtualLinkDescId"] == vl.vnf_virtual_link_desc_id.as_str())
        .map(|vl| vl.vnf_link_ports.clone())
        .unwrap_or_default();
    if !ports.is_empty() {
        info.insert("vnfLinkPorts".into(), json!(ports));
    }
    if let Some(multisite) = link.get("extManagedMultisiteVirtualLinkId").filter(|id| id.is_string()) {
        info.insert("extManagedMultisiteVirtualLinkId".into(), multisite.clone());
    }
    Value::Object(info)
}

/// VnfcCpInfo.vnfExtCpId: each VNFC CP that is an external CP instance names it.
fn link_vnfc_cps_to_ext_cps(vnfc_resources: &mut Value, ext_cp_info: &[Value]) {
    let by_vnfc_cp: BTreeMap<&str, &Value> = ext_cp_info
        .iter()
        .filter_map(|ext_cp| ext_cp["associatedVnfcCpId"].as_str().map(|vnfc_cp| (vnfc_cp, &ext_cp["id"])))
        .collect();
    for vnfc in vnfc_resources.as_array_mut().into_iter().flatten() {
        // `get_mut`, not indexing: indexing would add `"vnfcCpInfo": null` to a VNFC
        // without CPs (a Kubernetes pod).
        for cp in vnfc.get_mut("vnfcCpInfo").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(ext_cp_id) = cp["id"].as_str().and_then(|id| by_vnfc_cp.get(id)) {
                cp["vnfExtCpId"] = (*ext_cp_id).clone();
            }
        }
    }
}

fn short(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).take(8).collect()
}

/// Stores the inventory's private VIM state in the instance document.
pub fn set_vim_state(instance: &mut Value, inventory: &Inventory) {
    if instance.get(PRIVATE_KEY).is_none() {
        instance[PRIVATE_KEY] = json!({});
    }
    instance[PRIVATE_KEY]["vimState"] = inventory.vim_state.clone();
    // The driver's ports behind ExtLinkPortInfo, read back by `inventory_of`.
    if inventory.ext_link_ports.is_empty() {
        if let Some(private) = instance[PRIVATE_KEY].as_object_mut() {
            private.remove("extLinkPorts");
        }
    } else {
        instance[PRIVATE_KEY]["extLinkPorts"] = json!(inventory.ext_link_ports);
    }
}

/// `resourceChanges` between two inventories: VNFCs, virtual links and storages that were
/// added, removed or modified (a healed VNFC keeps its id but changes its resource).
pub fn resource_changes(before: &Inventory, after: &Inventory) -> Value {
    fn diff<T, K: Ord + Clone>(
        before: &[T],
        after: &[T],
        key: impl Fn(&T) -> K,
        describe: impl Fn(&T, &str) -> Value,
        changed: impl Fn(&T, &T) -> bool,
    ) -> Vec<Value> {
        let old: BTreeMap<K, &T> = before.iter().map(|item| (key(item), item)).collect();
        let new: BTreeMap<K, &T> = after.iter().map(|item| (key(item), item)).collect();
        let mut out = Vec::new();
        for (k, item) in &new {
            match old.get(k) {
                None => out.push(describe(item, "ADDED")),
                Some(previous) if changed(previous, item) => out.push(describe(item, "MODIFIED")),
                _ => {}
            }
        }
        for (k, item) in &old {
            if !new.contains_key(k) {
                out.push(describe(item, "REMOVED"));
            }
        }
        out
    }
    let vnfcs = diff(
        &before.vnfc_resources,
        &after.vnfc_resources,
        |vnfc| vnfc.id.clone(),
        |vnfc, change| {
            let mut affected = json!({
                "id": vnfc.id,
                "vduId": vnfc.vdu_id,
                "changeType": change,
                "computeResource": vnfc.compute_resource,
                "affectedVnfcCpIds": vnfc.vnfc_cp_info.iter().filter_map(|cp| cp["id"].as_str()).collect::<Vec<_>>(),
                "addedStorageResourceIds": if change == "ADDED" { vnfc.storage_resource_ids.clone() } else { Vec::new() },
                "removedStorageResourceIds": if change == "REMOVED" { vnfc.storage_resource_ids.clone() } else { Vec::new() },
            });
            if let Some(zone) = &vnfc.zone_id {
                affected["zoneId"] = json!(zone);
            }
            affected
        },
        |old, new| old.compute_resource != new.compute_resource,
    );
    let links = diff(
        &before.virtual_links,
        &after.virtual_links,
        |vl| vl.id.clone(),
        |vl, change| {
            json!({
                "id": vl.id,
                "vnfVirtualLinkDescId": vl.vnf_virtual_link_desc_id,
                "changeType": change,
                "networkResource": vl.network_resource,
            })
        },
        |old, new| old.network_resource != new.network_resource,
    );
    let storages = diff(
        &before.virtual_storages,
        &after.virtual_storages,
        |storage| storage.id.clone(),
        |storage, change| {
            json!({
                "id": storage.id,
                "virtualStorageDescId": storage.virtual_storage_desc_id,
                "changeType": change,
                "storageResource": storage.storage_resource,
            })
        },
        |old, new| old.storage_resource != new.storage_resource,
    );
    json!({ "affectedVnfcs": vnfcs, "affectedVirtualLinks": links, "affectedVirtualStorages": storages })
}

/// `affectedVirtualCps` (SOL003 V4.3.1 AffectedVirtualCp) between two inventories: the
/// virtual CPs (Kubernetes Services) an operation added, removed or changed. A member of the
/// occurrence itself, not of `resourceChanges`.
pub fn affected_virtual_cps(before: &Inventory, after: &Inventory) -> Vec<Value> {
    affected_cps(&before.virtual_cp_info, &after.virtual_cp_info)
}

/// `affectedVipCps` (SOL003 V3.5.1 AffectedVipCp) between two inventories: the VipCps an
/// operation added, removed or changed (another address, or other VNFC CPs sharing it). A
/// member of the occurrence itself.
pub fn affected_vip_cps(before: &Inventory, after: &Inventory) -> Vec<Value> {
    affected_cps(&before.vip_cp_info, &after.vip_cp_info)
}

/// ADDED, MODIFIED and REMOVED CP instances between two lists, by `cpInstanceId`.
fn affected_cps(before: &[Value], after: &[Value]) -> Vec<Value> {
    let key = |cp: &Value| cp["cpInstanceId"].as_str().unwrap_or_default().to_owned();
    let old: BTreeMap<String, &Value> = before.iter().map(|cp| (key(cp), cp)).collect();
    let new: BTreeMap<String, &Value> = after.iter().map(|cp| (key(cp), cp)).collect();
    let describe = |cp: &Value, change: &str| json!({"cpInstanceId": cp["cpInstanceId"], "cpdId": cp["cpdId"], "changeType": change});
    let mut out: Vec<Value> = new
        .iter()
        .filter_map(|(id, cp)| match old.get(id) {
            None => Some(describe(cp, "ADDED")),
            Some(previous) if previous != cp => Some(describe(cp, "MODIFIED")),
            Some(_) => None,
        })
        .collect();
    out.extend(old.iter().filter(|(id, _)| !new.contains_key(*id)).map(|(_, cp)| describe(cp, "REMOVED")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use solgate_model::infra::{ResourceHandle, VnfcResource};
    use solgate_vnfpkg::testing::CsarBuilder;

    fn port(id: &str) -> Value {
        json!({"vimConnectionId": "vim-1", "resourceId": id, "vimLevelResourceType": "OS::Neutron::Port"})
    }

    /// VDU1_CP1 configured by `parent` on ext-vl-1, with subports `sub100` (a port the driver
    /// made, on ext-vl-2) and `sub200` (the NFVO's port elp-200, on ext-vl-3).
    #[test]
    fn trunk_subports_are_external_cp_instances_and_the_parent_port_names_its_trunk() {
        let csar = CsarBuilder::sample().to_tempfile().unwrap();
        let vnfd = solgate_vnfpkg::inspect(csar.path(), &solgate_vnfpkg::Limits::default()).unwrap().vnfd;
        let subport = |id: &str| {
            json!({"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"segmentationId": id,
                "ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}})
        };
        let plan = DeploymentPlan {
            flavour_id: "simple".into(),
            vdus: Vec::new(),
            virtual_links: Vec::new(),
            ext_virtual_links: json!([
                {"id": "ext-vl-1", "resourceId": "net-a", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"parent": {
                    "cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET",
                        "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}}}]},
                {"id": "ext-vl-2", "resourceId": "net-b", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"sub100": {
                    "parentCpConfigId": "parent", "cpProtocolData": [subport("100")]}}}]},
                {"id": "ext-vl-3", "resourceId": "net-c", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"sub200": {
                    "parentCpConfigId": "parent", "linkPortId": "elp-200", "cpProtocolData": [subport("200")]}}}]}
            ]),
            ext_managed_virtual_links: json!([]),
            scale_levels: BTreeMap::new(),
            granted: Default::default(),
        };
        let inventory = Inventory {
            vnfc_resources: vec![VnfcResource {
                id: "vnfc-1".into(),
                vdu_id: "VDU1".into(),
                compute_resource: ResourceHandle {
                    vim_connection_id: None,
                    resource_id: "server-1".into(),
                    vim_level_resource_type: None,
                },
                storage_resource_ids: Vec::new(),
                vnfc_cp_info: vec![json!({"id": "cp-1", "cpdId": "VDU1_CP1"})],
                zone_id: None,
                metadata: None,
            }],
            ext_link_ports: vec![
                json!({"id": "port-parent", "cpdId": "VDU1_CP1", "trunkResourceId": "trunk-1",
                    "resourceHandle": port("port-parent")}),
                json!({"id": "port-100", "cpdId": "VDU1_CP1", "cpConfigId": "sub100", "resourceHandle": port("port-100")}),
            ],
            ..Inventory::default()
        };
        let info = instantiated_info(&vnfd, &plan, &inventory, &json!({}));

        let ext_cps: Vec<(&str, &str, &str, Option<&str>)> = info["extCpInfo"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cp| {
                (
                    cp["id"].as_str().unwrap(),
                    cp["cpConfigId"].as_str().unwrap(),
                    cp["associatedVnfcCpId"].as_str().unwrap(),
                    cp["extLinkPortId"].as_str(),
                )
            })
            .collect();
        assert_eq!(
            ext_cps,
            [
                ("VDU1_CP1-cp-1", "parent", "cp-1", Some("port-parent")),
                ("VDU1_CP1-sub100", "sub100", "cp-1", Some("port-100")),
                ("VDU1_CP1-sub200", "sub200", "cp-1", Some("elp-200")),
            ]
        );
        assert_eq!(info["extCpInfo"][1]["cpProtocolInfo"][0]["ipOverEthernet"]["segmentationId"], "100");
        let links = info["extVirtualLinkInfo"].as_array().unwrap();
        assert_eq!(
            links[0]["extLinkPorts"],
            json!([{"id": "port-parent", "resourceHandle": port("port-parent"), "cpInstanceId": "VDU1_CP1-cp-1",
                "trunkResourceId": "trunk-1"}])
        );
        assert_eq!(
            links[1]["extLinkPorts"],
            json!([{"id": "port-100", "resourceHandle": port("port-100"), "cpInstanceId": "VDU1_CP1-sub100"}])
        );
        assert!(links[2].get("extLinkPorts").is_none(), "the NFVO's port is not one the VNFM made");
    }
}
