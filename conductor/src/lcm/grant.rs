//! The GrantRequest an operation sends an external NFVO (SOL003 v3.3.1 clause 9.5.2.2,
//! v2.6.1 for v1), computed from its stored plan, and what the NFVO's Grant changes in
//! that plan before the driver runs it.

use std::collections::BTreeSet;

use serde_json::Value;
use solgate_core::links::Links;
use solgate_core::operation::{InfraWork, OperationPlan};
use solgate_core::secrets::SecretBox;
use solgate_core::{merge_patch, shapes};
use solgate_db::repo::lcm::{InstanceRecord, LcmMajor, OpOccRecord};
use solgate_drivers::GrantedPlacement;
use solgate_model::LcmOperation;
use solgate_model::grant::{
    Affinity, Change, ConstraintResourceRef, Grant, GrantPrivate, GrantRequest, GrantRequestLinks, IdType, Link,
    PlacementConstraint, ResourceDefinition, ResourceKind,
};
use solgate_model::operation::GrantLists;
use solgate_vnfpkg::Flavour;

use crate::lcm::views::{
    CpConfigs, InstanceView, InstantiatedInfo, LocalCounts, PackageChangeParams, RequestView, VnfcInfo, view,
};

/// What a GrantRequest is made from.
pub struct GrantInputs<'a> {
    pub major: LcmMajor,
    pub links: &'a Links,
    pub instance: &'a InstanceRecord,
    pub op: &'a OpOccRecord,
    pub operation: LcmOperation,
    pub plan: &'a OperationPlan,
    /// The flavour the instance has after the operation.
    pub flavour: Option<&'a Flavour>,
    /// The request's `additionalParams`, opened.
    pub additional: Option<&'a Value>,
}

/// The three lists of ResourceDefinitions, as they are made.
#[derive(Default)]
struct Resources {
    add: Vec<ResourceDefinition>,
    remove: Vec<ResourceDefinition>,
    update: Vec<ResourceDefinition>,
}

/// The GrantRequest of an operation, as Tacker's v2 builds it: per VNFC the plan adds,
/// one COMPUTE ResourceDefinition with a LINKPORT per VDU CP (those the request does not
/// bring as ready link ports) and a STORAGE per virtual storage, all with `vduId` and
/// `resourceTemplateId`; per VNFC it removes (a healed VNFC is both), its COMPUTE, STORAGE and
/// LINKPORT resources with their handles; what the operation's row adds to that
/// ([`GrantLists`]); `placementConstraints` from the flavour's affinity rules; the request's
/// `additionalParams` (`additional`, opened).
pub fn grant_request(inputs: &GrantInputs<'_>) -> GrantRequest {
    let GrantInputs { major, links, instance, op, operation, plan, flavour, additional } = *inputs;
    let params: RequestView = view(&op.body["operationParams"]);
    let instance_view: InstanceView = view(&instance.body);
    let info = &instance_view.instantiated_vnf_info;
    let ready_ports = ready_link_ports(&params);
    let mut resources = vnfc_resources(inputs, info, &ready_ports);
    match operation.grant_lists() {
        GrantLists::Vnfcs => {}
        GrantLists::ExtConnectivity => change_ext_conn_resources(info, &params, &mut resources),
        GrantLists::PackageChange => rolling_update_resources(info, additional, &mut resources),
        GrantLists::NewVirtualLinks => {
            for link in plan.deployment.iter().flat_map(|deployment| &deployment.virtual_links) {
                resources.add.push(ResourceDefinition {
                    id: uuid::Uuid::new_v4().to_string(),
                    kind: ResourceKind::Vl,
                    vdu_id: None,
                    resource_template_id: link.clone(),
                    resource: None,
                });
            }
        }
        GrantLists::RemovedVirtualLinks => {
            for link in &info.vnf_virtual_link_resource_info {
                resources.remove.push(ResourceDefinition {
                    id: link.id.clone(),
                    kind: ResourceKind::Vl,
                    vdu_id: None,
                    resource_template_id: link.vnf_virtual_link_desc_id.clone(),
                    resource: link.network_resource.clone(),
                });
            }
        }
    }
    let flavour_id = plan
        .deployment
        .as_ref()
        .map(|deployment| deployment.flavour_id.clone())
        .or_else(|| info.flavour_id.clone())
        .filter(|flavour_id| !flavour_id.is_empty());
    let placement_constraints = flavour
        .map(|flavour| placement_constraints(flavour, &resources.add, &info.vnfc_resource_info))
        .unwrap_or_default();
    GrantRequest {
        vnf_instance_id: instance.id.clone(),
        vnf_lcm_op_occ_id: op.id.clone(),
        vnfd_id: instance_view.vnfd_id.clone(),
        operation,
        is_automatic_invocation: op.body["isAutomaticInvocation"].as_bool().unwrap_or(false),
        links: GrantRequestLinks {
            vnf_lcm_op_occ: Link { href: links.op_occ(major.number(), &op.id) },
            vnf_instance: Link { href: links.instance(major.number(), &instance.id) },
        },
        flavour_id,
        instantiation_level_id: params.instantiation_level_id.clone(),
        // SOL003 v3.3.1 9.5.2.2: the VNFD the instance changes to (as Tacker sends it).
        dst_vnfd_id: params.vnfd_id.clone().filter(|_| operation.grant_lists() == GrantLists::PackageChange),
        add_resources: resources.add,
        remove_resources: resources.remove,
        update_resources: resources.update,
        placement_constraints,
        additional_params: additional.and_then(Value::as_object).filter(|map| !map.is_empty()).cloned(),
    }
}

/// The VNFCs the plan adds and removes (by the local grant's counts), and those a heal
/// re-creates: each is removed and added again (as Tacker asks).
fn vnfc_resources(inputs: &GrantInputs<'_>, info: &InstantiatedInfo, ready_ports: &BTreeSet<String>) -> Resources {
    let GrantInputs { instance, op, operation, plan, flavour, .. } = *inputs;
    let counts: LocalCounts = view(&plan.local_grant(&instance.body, &instance.id, &op.id, operation.name()));
    let vnfcs = &info.vnfc_resource_info;
    let mut resources = Resources::default();
    for entry in &counts.add_resources {
        for _ in 0..entry.count {
            resources.add.extend(new_vnfc_resources(flavour, &entry.resource_template_id, ready_ports));
        }
    }
    for entry in &counts.remove_resources {
        let count = usize::try_from(entry.count).unwrap_or(0);
        // The newest VNFCs of the VDU go first (as the drivers scale in).
        let of_vdu: Vec<&VnfcInfo> = vnfcs.iter().filter(|vnfc| vnfc.vdu_id == entry.resource_template_id).collect();
        for vnfc in of_vdu.iter().rev().take(count) {
            resources.remove.extend(existing_vnfc_resources(info, vnfc));
        }
    }
    if let Some(InfraWork::Heal { vnfc_resource_ids }) = &plan.infra {
        let healed = |vnfc: &&VnfcInfo| {
            vnfc.id
                .as_deref()
                .is_some_and(|id| vnfc_resource_ids.is_empty() || vnfc_resource_ids.iter().any(|healed| healed == id))
        };
        for vnfc in vnfcs.iter().filter(healed) {
            resources.remove.extend(existing_vnfc_resources(info, vnfc));
            resources.add.extend(new_vnfc_resources(flavour, &vnfc.vdu_id, ready_ports));
        }
    }
    resources
}

/// change_ext_conn (as Tacker asks): each VNFC with a CP on a changed external virtual link
/// is updated (COMPUTE in `updateResources`, with its handle); the link port of each such
/// CP that solgate made is removed, and a new one asked for unless the request brings it.
fn change_ext_conn_resources(info: &InstantiatedInfo, params: &RequestView, resources: &mut Resources) {
    let changed: BTreeSet<&str> =
        params.ext_virtual_links.iter().flat_map(|link| &link.ext_cps).filter_map(|cp| cp.cpd_id.as_deref()).collect();
    let ready_ports = ready_link_ports(params);
    let ext_ports: Vec<_> = info.ext_virtual_link_info.iter().flat_map(|link| &link.ext_link_ports).collect();
    for vnfc in &info.vnfc_resource_info {
        let cps: Vec<_> = vnfc.vnfc_cp_info.iter().filter(|cp| changed.contains(cp.cpd_id.as_str())).collect();
        if cps.is_empty() {
            continue;
        }
        let (old_compute, new_compute) = (uuid::Uuid::new_v4().to_string(), uuid::Uuid::new_v4().to_string());
        let vdu = vnfc.vdu_id.as_str();
        resources.update.push(
            ResourceDefinition::of_vdu(new_compute.clone(), ResourceKind::Compute, vdu, vdu)
                .with_resource(vnfc.compute_resource.clone()),
        );
        for cp in cps {
            let template = cp.cpd_id.as_str();
            if let Some(ext_cp) = &cp.vnf_ext_cp_id {
                let port = ext_ports.iter().find(|port| port.cp_instance_id.as_ref() == Some(ext_cp));
                resources.remove.push(
                    ResourceDefinition::of_vdu(
                        format!("{template}-{old_compute}"),
                        ResourceKind::Linkport,
                        vdu,
                        template,
                    )
                    .with_resource(port.and_then(|port| port.resource_handle.clone())),
                );
            }
            if !ready_ports.contains(template) {
                let id = format!("{template}-{new_compute}");
                resources.add.push(ResourceDefinition::of_vdu(id, ResourceKind::Linkport, vdu, template));
            }
        }
    }
}

/// change_vnfpkg: Tacker asks only for a rolling update's VNFCs to be re-created
/// (`vdu_params`), their COMPUTE and STORAGE removed and asked for anew.
fn rolling_update_resources(info: &InstantiatedInfo, additional: Option<&Value>, resources: &mut Resources) {
    let Some(additional) = additional else { return };
    let change: PackageChangeParams = view(additional);
    if change.upgrade_type.as_deref() != Some("RollingUpdate") {
        return;
    }
    let vdus: Vec<&str> = change.vdu_params.iter().filter_map(|vdu| vdu.vdu_id.as_deref()).collect();
    for vnfc in info.vnfc_resource_info.iter().filter(|vnfc| vdus.contains(&vnfc.vdu_id.as_str())) {
        let removed: Vec<_> = existing_vnfc_resources(info, vnfc)
            .into_iter()
            .filter(|resource| resource.kind != ResourceKind::Linkport)
            .collect();
        let compute = uuid::Uuid::new_v4().to_string();
        for resource in &removed {
            let template = &resource.resource_template_id;
            let id =
                if resource.kind == ResourceKind::Compute { compute.clone() } else { format!("{template}-{compute}") };
            resources.add.push(ResourceDefinition { id, resource: None, ..resource.clone() });
        }
        resources.remove.extend(removed);
    }
}

/// The CPs of `extVirtualLinks[].extCps[]` whose cpConfig names a ready `linkPortId`: the
/// NFVO made those ports, so they are not asked for (Tacker's `_get_link_ports`).
fn ready_link_ports(params: &RequestView) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for cp in params.ext_virtual_links.iter().flat_map(|link| &link.ext_cps) {
        if cp.cp_config.as_ref().is_some_and(CpConfigs::names_a_link_port)
            && let Some(cpd) = &cp.cpd_id
        {
            names.insert(cpd.clone());
        }
    }
    for link in &params.ext_managed_virtual_links {
        if link.vnf_link_port.is_some()
            && let Some(desc) = &link.vnf_virtual_link_desc_id
        {
            names.insert(desc.clone());
        }
    }
    names
}

/// The resources of one new VNFC of `vdu`: COMPUTE, then a LINKPORT per CP and a STORAGE
/// per virtual storage, their ids derived from the COMPUTE's (`{template}-{compute id}`).
fn new_vnfc_resources(flavour: Option<&Flavour>, vdu: &str, ready_ports: &BTreeSet<String>) -> Vec<ResourceDefinition> {
    let compute = uuid::Uuid::new_v4().to_string();
    let mut resources = vec![ResourceDefinition::of_vdu(compute.clone(), ResourceKind::Compute, vdu, vdu)];
    if let Some(node) = flavour.and_then(|flavour| flavour.vdu(vdu)) {
        for cp in node.cps.iter().filter(|cp| !ready_ports.contains(*cp)) {
            resources.push(ResourceDefinition::of_vdu(format!("{cp}-{compute}"), ResourceKind::Linkport, vdu, cp));
        }
        for storage in &node.virtual_storages {
            let id = format!("{storage}-{compute}");
            resources.push(ResourceDefinition::of_vdu(id, ResourceKind::Storage, vdu, storage));
        }
    }
    resources
}

/// The resources of an existing VNFC, with their handles: COMPUTE (its VnfcResourceInfo id),
/// STORAGE per `storageResourceIds`, LINKPORT per CP on a port solgate made.
fn existing_vnfc_resources(info: &InstantiatedInfo, vnfc: &VnfcInfo) -> Vec<ResourceDefinition> {
    let vdu = vnfc.vdu_id.as_str();
    let compute = vnfc.id.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut resources = vec![
        ResourceDefinition::of_vdu(compute.clone(), ResourceKind::Compute, vdu, vdu)
            .with_resource(vnfc.compute_resource.clone()),
    ];
    for id in &vnfc.storage_resource_ids {
        if let Some(storage) = info.virtual_storage_resource_info.iter().find(|storage| storage.id == *id) {
            let template = storage.virtual_storage_desc_id.as_str();
            resources.push(
                ResourceDefinition::of_vdu(format!("{template}-{compute}"), ResourceKind::Storage, vdu, template)
                    .with_resource(storage.storage_resource.clone()),
            );
        }
    }
    let ports: Vec<_> = info.vnf_virtual_link_resource_info.iter().flat_map(|link| &link.vnf_link_ports).collect();
    for cp in &vnfc.vnfc_cp_info {
        // A CP on a port the NFVO made (extLinkPorts) is not solgate's to remove.
        if cp.vnf_link_port_id.is_none() && cp.vnf_ext_cp_id.is_none() {
            continue;
        }
        let template = cp.cpd_id.as_str();
        let port = ports.iter().find(|port| Some(&port.id) == cp.vnf_link_port_id.as_ref());
        resources.push(
            ResourceDefinition::of_vdu(format!("{template}-{compute}"), ResourceKind::Linkport, vdu, template)
                .with_resource(port.and_then(|port| port.resource_handle.clone())),
        );
    }
    resources
}

/// SOL003 PlacementConstraint per affinity rule of the flavour: the new COMPUTE resources
/// of its VDUs (`GRANT`) and the existing VNFCs of those VDUs (`RES_MGMT`), when they are at
/// least two (a constraint relates resources). Unlike Tacker, a rule with no new resource
/// does not stop the rules after it from being sent.
fn placement_constraints(
    flavour: &Flavour,
    add: &[ResourceDefinition],
    vnfcs: &[VnfcInfo],
) -> Vec<PlacementConstraint> {
    let mut constraints = Vec::new();
    for rule in &flavour.placement_rules {
        let in_rule = |vdu: &str| rule.vdus.iter().any(|target| target == vdu);
        let mut refs: Vec<ConstraintResourceRef> = add
            .iter()
            .filter(|resource| {
                resource.kind == ResourceKind::Compute && resource.vdu_id.as_deref().is_some_and(in_rule)
            })
            .map(|resource| ConstraintResourceRef {
                id_type: IdType::Grant,
                resource_id: Some(resource.id.clone()),
                vim_connection_id: None,
            })
            .collect();
        if refs.is_empty() {
            continue;
        }
        for vnfc in vnfcs.iter().filter(|vnfc| in_rule(&vnfc.vdu_id)) {
            let handle = vnfc.compute_resource.as_ref();
            refs.push(ConstraintResourceRef {
                id_type: IdType::ResMgmt,
                resource_id: handle.and_then(|handle| handle.resource_id.clone()),
                vim_connection_id: handle.and_then(|handle| handle.vim_connection_id.clone()),
            });
        }
        if refs.len() < 2 {
            continue;
        }
        constraints.push(PlacementConstraint {
            affinity_or_anti_affinity: if rule.anti_affinity { Affinity::AntiAffinity } else { Affinity::Affinity },
            scope: rule.scope.to_ascii_uppercase(),
            resource: refs,
        });
    }
    constraints
}

/// Records, in the stored Grant, which VDU each COMPUTE resource it was asked for belongs
/// to: applying the Grant later (a retry, a rollback) needs it and the request is not kept.
pub fn remember_requested_vdus(request: &GrantRequest, grant: &mut Grant) {
    let vdus = request
        .add_resources
        .iter()
        .filter(|resource| resource.kind == ResourceKind::Compute)
        .map(|resource| (resource.id.clone(), resource.vdu_id.clone().map_or(Value::Null, Value::String)))
        .collect();
    grant.private.get_or_insert_with(GrantPrivate::default).compute_vdus = vdus;
}

/// A Grant must only speak of resources the request asked for.
pub fn check_grant(request: &GrantRequest, grant: &Grant) -> Result<(), String> {
    for change in Change::ALL {
        let asked: BTreeSet<&str> = request.resources(change).iter().map(|entry| entry.id.as_str()).collect();
        for granted in grant.resources(change) {
            let id = &granted.resource_definition_id;
            if !asked.contains(id.as_str()) {
                return Err(format!(
                    "The NFVO's Grant {} names resource definition {id:?}, which was not requested.",
                    change.key()
                ));
            }
        }
    }
    if grant.vnf_lcm_op_occ_id.as_ref().is_some_and(|id| *id != request.vnf_lcm_op_occ_id) {
        return Err("The NFVO's Grant is for another operation occurrence.".into());
    }
    Ok(())
}

/// A Grant's `vimConnectionInfo` in the instance's shape: a map keyed by id (v2), an
/// array of objects with `id` (v1); an NFVO may answer in either.
fn in_shape_of(major: LcmMajor, vim_connection_info: Option<&Value>) -> Value {
    let Some(vim_connection_info) = vim_connection_info else { return Value::Null };
    match (major, vim_connection_info) {
        (LcmMajor::V2, Value::Array(_)) => solgate_core::convert::vim_connections_to_map(vim_connection_info),
        (LcmMajor::V1, Value::Object(map)) => Value::Array(
            map.iter()
                .map(|(id, entry)| {
                    let mut entry = entry.clone();
                    if let Some(entry) = entry.as_object_mut() {
                        entry.insert("id".to_owned(), Value::String(id.clone()));
                    }
                    entry
                })
                .collect(),
        ),
        _ => vim_connection_info.clone(),
    }
}

/// Applies a Grant to the plan the driver runs: its VIM connections (stored sealed, and
/// the one its added resources name, else its first, runs the work) and its external
/// virtual links. `into_target`: the instance afterwards records the granted VIM
/// connections (not when rolling back).
pub fn apply_grant(major: LcmMajor, secrets: &SecretBox, plan: &mut OperationPlan, grant: &Grant, into_target: bool) {
    let shapes = shapes::for_major(major);
    let mut granted = in_shape_of(major, grant.vim_connection_info.as_ref());
    if !shapes.vim_connections(&granted).is_empty() {
        secrets.seal(&mut granted);
        if into_target && plan.target.is_object() {
            shapes.merge_vim_connections(&mut plan.target, &granted);
        }
        let named = grant.resources(Change::Add).iter().find_map(|info| info.vim_connection_id.as_deref());
        let sealed = shapes.vim_connections(&granted);
        let chosen = named
            .and_then(|id| sealed.iter().find(|connection| connection.id == id).cloned())
            .or_else(|| sealed.into_iter().next());
        if plan.infra.is_some() {
            plan.vim = chosen;
        }
    }
    // SOL003 V4.3.1: for container-based VNFs the NFVO's Grant names the CISM clusters
    // (`cirConnectionInfo`, container image registries) and MCIOP repositories the VNF uses;
    // the instance records them as it does the VIM connections (credentials sealed, never
    // shown). Maps keyed by id, as VimConnectionInfo in v2.
    if into_target
        && major == LcmMajor::V2
        && let Some(target) = plan.target.as_object_mut()
    {
        for (key, given) in
            [("cirConnectionInfo", &grant.cir_connection_info), ("mciopRepositoryInfo", &grant.mciop_repository_info)]
        {
            let mut connections = in_shape_of(major, given.as_ref());
            if let Value::Object(entries) = &mut connections
                && !entries.is_empty()
            {
                secrets.seal(&mut connections);
                merge_patch(target.entry(key).or_insert(Value::Null), &connections);
            }
        }
    }
    if let Some(deployment) = &mut plan.deployment {
        deployment.granted = granted_placement(grant);
        for (given, target) in [
            (&grant.ext_virtual_links, &mut deployment.ext_virtual_links),
            (&grant.ext_managed_virtual_links, &mut deployment.ext_managed_virtual_links),
        ] {
            if let Some(links) = given.as_ref().filter(|links| links.as_array().is_some_and(|links| !links.is_empty()))
            {
                *target = links.clone();
            }
        }
    }
}

/// The zones and VIM assets a Grant gives, per VDU (see [`GrantedPlacement`]).
fn granted_placement(grant: &Grant) -> GrantedPlacement {
    let mut granted = GrantedPlacement::default();
    let zones = grant.zones.as_deref().unwrap_or_default();
    for info in grant.resources(Change::Add) {
        let (Some(vdu), Some(zone)) = (grant.compute_vdu(&info.resource_definition_id), info.zone_id.as_deref()) else {
            continue;
        };
        if let Some(name) =
            zones.iter().find(|entry| entry.id.as_deref() == Some(zone)).and_then(|entry| entry.zone_id.as_deref())
        {
            granted.zones.entry(vdu.to_owned()).or_insert_with(|| name.to_owned());
        }
    }
    if let Some(assets) = &grant.vim_assets {
        for flavour in assets.compute_resource_flavours.iter().flatten() {
            if let (Some(vdu), Some(id)) = (&flavour.vnfd_virtual_compute_desc_id, &flavour.vim_flavour_id) {
                granted.flavours.insert(vdu.clone(), id.clone());
            }
        }
        for image in assets.software_images.iter().flatten() {
            if let (Some(vnfd_image), Some(id)) = (&image.vnfd_software_image_id, &image.vim_software_image_id) {
                granted.images.insert(vnfd_image.clone(), id.clone());
            }
        }
    }
    // The NFVO's own `nfv` parameters, merged last (Tacker's user data merges
    // grant.additionalParams.nfv after the request's).
    if let Some(nfv) =
        grant.additional_params.as_ref().and_then(|params| params.nfv.as_ref()).filter(|nfv| nfv.is_object())
    {
        granted.nfv = nfv.clone();
    }
    granted
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use solgate_core::PRIVATE_KEY;

    use super::*;

    #[test]
    fn the_grants_zone_assets_and_nfv_reach_the_plan() {
        let grant = json!({
            PRIVATE_KEY: {"computeVdus": {"c-1": "VDU1"}},
            "zones": [{"id": "z1", "zoneId": "az-1"}],
            "addResources": [{"resourceDefinitionId": "c-1", "zoneId": "z1"}],
            "vimAssets": {"computeResourceFlavours": [{"vnfdVirtualComputeDescId": "VDU1", "vimFlavourId": "f-1"}],
                "softwareImages": [{"vnfdSoftwareImageId": "VDU1", "vimSoftwareImageId": "i-1"}]},
            "additionalParams": {"nfv": {"CP": {"VDU1_CP1": {"network": "granted-net"}}}}
        });
        let granted = granted_placement(&serde_json::from_value(grant).unwrap());
        assert_eq!(granted.zones["VDU1"], "az-1");
        assert_eq!(granted.flavours["VDU1"], "f-1");
        assert_eq!(granted.images["VDU1"], "i-1");
        assert_eq!(granted.nfv, json!({"CP": {"VDU1_CP1": {"network": "granted-net"}}}));
        assert!(
            granted_placement(&serde_json::from_value(json!({"additionalParams": {"nfv": "x"}})).unwrap()).is_empty()
        );
    }

    #[test]
    fn the_stored_grant_keeps_its_bookkeeping_under_the_private_key() {
        let grant = Grant { private: Some(GrantPrivate::default()), ..Grant::default() };
        let stored = serde_json::to_value(&grant).unwrap();
        assert!(stored.get(PRIVATE_KEY).is_some(), "{stored}");
    }
}
