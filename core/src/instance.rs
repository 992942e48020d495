//! VnfInstance documents: `instantiatedVnfInfo` from a plan and an inventory, the
//! inventory back from a document, and the resource changes between two inventories
//! (VnfLcmOpOcc `resourceChanges`, notifications' `affected*`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use solgate_drivers::{DeploymentPlan, Inventory};
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
    // External CPs of the flavour, connected to the external virtual links given.
    let ext_cp_info: Vec<Value> = flavour
        .map(|flavour| {
            flavour
                .cps
                .iter()
                .filter(|cp| cp.external)
                .map(|cp| json!({ "id": format!("{}-{}", cp.id, short(&plan.flavour_id)), "cpdId": cp.id, "cpConfigId": "default", "cpProtocolInfo": [] }))
                .collect()
        })
        .unwrap_or_default();
    let ext_virtual_link_info: Vec<Value> = plan
        .ext_virtual_links
        .as_array()
        .into_iter()
        .flatten()
        .map(|link| {
            json!({
                "id": link["id"],
                "resourceHandle": { "vimConnectionId": link["vimConnectionId"], "resourceId": link["resourceId"] },
                "currentVnfExtCpData": link["extCps"].clone(),
            })
        })
        .collect();
    let mut info = Map::new();
    info.insert("flavourId".into(), json!(plan.flavour_id));
    info.insert("vnfState".into(), json!(inventory.vnf_state));
    if !scale_status.is_empty() {
        info.insert("scaleStatus".into(), json!(scale_status));
        info.insert("maxScaleLevels".into(), json!(max_levels));
    }
    info.insert("extCpInfo".into(), json!(ext_cp_info));
    if !ext_virtual_link_info.is_empty() {
        info.insert("extVirtualLinkInfo".into(), json!(ext_virtual_link_info));
    }
    if plan.ext_managed_virtual_links.as_array().is_some_and(|links| !links.is_empty()) {
        info.insert("extManagedVirtualLinkInfo".into(), plan.ext_managed_virtual_links.clone());
    }
    info.insert("vnfcResourceInfo".into(), serde_json::to_value(&inventory.vnfc_resources).unwrap_or_default());
    info.insert(
        "vnfVirtualLinkResourceInfo".into(),
        serde_json::to_value(&inventory.virtual_links).unwrap_or_default(),
    );
    info.insert(
        "virtualStorageResourceInfo".into(),
        serde_json::to_value(&inventory.virtual_storages).unwrap_or_default(),
    );
    info.insert("vnfcInfo".into(), json!(vnfc_info));
    for keep in ["localizationLanguage", "metadata"] {
        if let Some(value) = previous.get(keep) {
            info.insert(keep.into(), value.clone());
        }
    }
    Value::Object(info)
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
            json!({
                "id": vnfc.id,
                "vduId": vnfc.vdu_id,
                "changeType": change,
                "computeResource": vnfc.compute_resource,
                "affectedVnfcCpIds": vnfc.vnfc_cp_info.iter().filter_map(|cp| cp["id"].as_str()).collect::<Vec<_>>(),
                "addedStorageResourceIds": if change == "ADDED" { vnfc.storage_resource_ids.clone() } else { Vec::new() },
                "removedStorageResourceIds": if change == "REMOVED" { vnfc.storage_resource_ids.clone() } else { Vec::new() },
            })
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
