//! The resources an operation changed, between the inventories before and after it:
//! VnfLcmOpOcc `resourceChanges`, `affectedVirtualCps` and `affectedVipCps` (SOL003
//! clause 5.5.2.13), which notifications carry too.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use solgate_model::infra::Inventory;
use solgate_model::lcm_op_occ::{
    AffectedCp, AffectedVirtualLink, AffectedVirtualStorage, AffectedVnfc, ChangeType, CpInstanceRef, ResourceChanges,
};
use solgate_model::vnf_instance::VnfcCpInfo;

/// `resourceChanges` between two inventories, as the occurrence's JSON.
pub fn resource_changes(before: &Inventory, after: &Inventory) -> Value {
    serde_json::to_value(changes(before, after)).unwrap_or_default()
}

/// VNFCs, virtual links and storages that were added, removed or modified (a healed VNFC
/// keeps its id but changes its resource).
fn changes(before: &Inventory, after: &Inventory) -> ResourceChanges {
    let affected_vnfcs = diff(
        &before.vnfc_resources,
        &after.vnfc_resources,
        |vnfc| vnfc.id.clone(),
        |vnfc, change| AffectedVnfc {
            id: vnfc.id.clone(),
            vdu_id: vnfc.vdu_id.clone(),
            change_type: change,
            compute_resource: vnfc.compute_resource.clone(),
            affected_vnfc_cp_ids: vnfc
                .vnfc_cp_info
                .iter()
                .filter_map(|cp| VnfcCpInfo::deserialize(cp).ok()?.id)
                .collect(),
            added_storage_resource_ids: storages_if(change == ChangeType::Added, &vnfc.storage_resource_ids),
            removed_storage_resource_ids: storages_if(change == ChangeType::Removed, &vnfc.storage_resource_ids),
            zone_id: vnfc.zone_id.clone(),
        },
        |old, new| old.compute_resource != new.compute_resource,
    );
    let affected_virtual_links = diff(
        &before.virtual_links,
        &after.virtual_links,
        |vl| vl.id.clone(),
        |vl, change| AffectedVirtualLink {
            id: vl.id.clone(),
            vnf_virtual_link_desc_id: vl.vnf_virtual_link_desc_id.clone(),
            change_type: change,
            network_resource: vl.network_resource.clone(),
        },
        |old, new| old.network_resource != new.network_resource,
    );
    let affected_virtual_storages = diff(
        &before.virtual_storages,
        &after.virtual_storages,
        |storage| storage.id.clone(),
        |storage, change| AffectedVirtualStorage {
            id: storage.id.clone(),
            virtual_storage_desc_id: storage.virtual_storage_desc_id.clone(),
            change_type: change,
            storage_resource: storage.storage_resource.clone(),
        },
        |old, new| old.storage_resource != new.storage_resource,
    );
    ResourceChanges { affected_vnfcs, affected_virtual_links, affected_virtual_storages }
}

fn storages_if(applies: bool, ids: &[String]) -> Vec<String> {
    if applies { ids.to_vec() } else { Vec::new() }
}

/// ADDED and MODIFIED items of `after` in key order, then REMOVED ones of `before`.
fn diff<T, K: Ord + Clone, A>(
    before: &[T],
    after: &[T],
    key: impl Fn(&T) -> K,
    describe: impl Fn(&T, ChangeType) -> A,
    changed: impl Fn(&T, &T) -> bool,
) -> Vec<A> {
    let old: BTreeMap<K, &T> = before.iter().map(|item| (key(item), item)).collect();
    let new: BTreeMap<K, &T> = after.iter().map(|item| (key(item), item)).collect();
    let mut out = Vec::new();
    for (k, item) in &new {
        match old.get(k) {
            None => out.push(describe(item, ChangeType::Added)),
            Some(previous) if changed(previous, item) => out.push(describe(item, ChangeType::Modified)),
            _ => {}
        }
    }
    for (k, item) in &old {
        if !new.contains_key(k) {
            out.push(describe(item, ChangeType::Removed));
        }
    }
    out
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

/// ADDED, MODIFIED and REMOVED CP instances between two lists, by `cpInstanceId`; an entry
/// changed when anything in it did.
fn affected_cps(before: &[Value], after: &[Value]) -> Vec<Value> {
    let entries = |list: &[Value]| -> Vec<(CpInstanceRef, Value)> {
        list.iter().map(|cp| (CpInstanceRef::deserialize(cp).unwrap_or_default(), cp.clone())).collect()
    };
    let key = |(cp, _): &(CpInstanceRef, Value)| cp.cp_instance_id.as_str().unwrap_or_default().to_owned();
    let describe = |(cp, _): &(CpInstanceRef, Value), change| AffectedCp {
        cp_instance_id: cp.cp_instance_id.clone(),
        cpd_id: cp.cpd_id.clone(),
        change_type: change,
    };
    diff(&entries(before), &entries(after), key, describe, |(_, old), (_, new)| old != new)
        .into_iter()
        .filter_map(|affected| serde_json::to_value(affected).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use solgate_model::infra::{ResourceHandle, VnfcResource};

    use super::*;

    #[test]
    fn an_added_vnfc_lists_its_cps_and_storages() {
        let after = Inventory {
            vnfc_resources: vec![VnfcResource {
                id: "vnfc-1".into(),
                vdu_id: "VDU1".into(),
                compute_resource: ResourceHandle {
                    vim_connection_id: None,
                    resource_id: "server-1".into(),
                    vim_level_resource_type: None,
                },
                storage_resource_ids: vec!["st-1".into()],
                vnfc_cp_info: vec![json!({"id": "cp-1", "cpdId": "VDU1_CP1"}), json!({"cpdId": "no-id"})],
                zone_id: None,
                metadata: None,
            }],
            virtual_cp_info: vec![json!({"cpInstanceId": "svc-1", "cpdId": "VCP1", "address": "a"})],
            ..Inventory::default()
        };
        assert_eq!(
            resource_changes(&Inventory::default(), &after),
            json!({"affectedVnfcs": [{"id": "vnfc-1", "vduId": "VDU1", "changeType": "ADDED",
                "computeResource": {"resourceId": "server-1"}, "affectedVnfcCpIds": ["cp-1"],
                "addedStorageResourceIds": ["st-1"], "removedStorageResourceIds": []}],
                "affectedVirtualLinks": [], "affectedVirtualStorages": []})
        );
        assert_eq!(
            resource_changes(&after, &Inventory::default())["affectedVnfcs"][0]["removedStorageResourceIds"],
            json!(["st-1"])
        );
        let mut changed = after.clone();
        changed.virtual_cp_info[0]["address"] = json!("b");
        assert_eq!(
            affected_virtual_cps(&after, &changed),
            [json!({"cpInstanceId": "svc-1", "cpdId": "VCP1", "changeType": "MODIFIED"})]
        );
        assert_eq!(affected_vip_cps(&after, &changed), Vec::<Value>::new());
    }
}
