//! The GrantRequest an operation sends an external NFVO (SOL003 v3.3.1 clause 9.5.2.2,
//! v2.6.1 for v1), computed from its stored plan, and what the NFVO's Grant changes in
//! that plan before the driver runs it.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use solgate_core::links::{Links, href};
use solgate_core::operation::{InfraWork, OperationPlan};
use solgate_core::secrets::SecretBox;
use solgate_core::{PRIVATE_KEY, merge_patch, shapes};
use solgate_db::repo::lcm::{InstanceRecord, LcmMajor, OpOccRecord};
use solgate_drivers::GrantedPlacement;
use solgate_vnfpkg::Flavour;

/// The GrantRequest of an operation, as Tacker's v2 builds it: per VNFC the plan adds,
/// one COMPUTE ResourceDefinition with a LINKPORT per VDU CP (those the request does not
/// bring as ready link ports) and a STORAGE per virtual storage, all with `vduId` and
/// `resourceTemplateId`; per VNFC it removes (a healed VNFC is both), its COMPUTE, STORAGE and
/// LINKPORT resources with their handles; the internal virtual links (VL) an instantiation
/// creates or a termination removes; `placementConstraints` from the flavour's affinity
/// rules; `dstVnfdId` for CHANGE_VNFPKG; the request's `additionalParams` (`additional`,
/// opened).
pub fn grant_request(
    major: LcmMajor,
    links: &Links,
    instance: &InstanceRecord,
    op: &OpOccRecord,
    plan: &OperationPlan,
    flavour: Option<&Flavour>,
    additional: Option<&Value>,
) -> Value {
    let operation = op.operation().map_or("", |operation| operation.name());
    let params = &op.body["operationParams"];
    let counts = plan.local_grant(&instance.body, &instance.id, &op.id, operation);
    let info = &instance.body["instantiatedVnfInfo"];
    let vnfcs = info["vnfcResourceInfo"].as_array().cloned().unwrap_or_default();
    let ready_ports = ready_link_ports(params);
    let mut add = Vec::new();
    for entry in counts["addResources"].as_array().into_iter().flatten() {
        let vdu = entry["resourceTemplateId"].as_str().unwrap_or_default();
        for _ in 0..entry["count"].as_u64().unwrap_or(0) {
            add.extend(new_vnfc_resources(flavour, vdu, &ready_ports));
        }
    }
    let mut remove = Vec::new();
    for entry in counts["removeResources"].as_array().into_iter().flatten() {
        let vdu = entry["resourceTemplateId"].as_str().unwrap_or_default();
        let count = usize::try_from(entry["count"].as_u64().unwrap_or(0)).unwrap_or(0);
        // The newest VNFCs of the VDU go first (as the drivers scale in).
        let of_vdu: Vec<&Value> = vnfcs.iter().filter(|vnfc| vnfc["vduId"] == vdu).collect();
        for vnfc in of_vdu.iter().rev().take(count) {
            remove.extend(existing_vnfc_resources(info, vnfc));
        }
    }
    // Healing re-creates VNFCs: each is removed and added again (as Tacker asks).
    if let Some(InfraWork::Heal { vnfc_resource_ids }) = &plan.infra {
        for vnfc in vnfcs.iter().filter(|vnfc| {
            vnfc["id"]
                .as_str()
                .is_some_and(|id| vnfc_resource_ids.is_empty() || vnfc_resource_ids.iter().any(|healed| healed == id))
        }) {
            remove.extend(existing_vnfc_resources(info, vnfc));
            add.extend(new_vnfc_resources(flavour, vnfc["vduId"].as_str().unwrap_or_default(), &ready_ports));
        }
    }
    let mut update = Vec::new();
    match operation {
        "CHANGE_EXT_CONN" => change_ext_conn_resources(info, &vnfcs, params, &mut add, &mut remove, &mut update),
        // Tacker asks only for a rolling update's VNFCs to be re-created (`vdu_params`).
        "CHANGE_VNFPKG" if additional.is_some_and(|params| params["upgrade_type"] == "RollingUpdate") => {
            let vdus: Vec<&str> = additional
                .and_then(|params| params["vdu_params"].as_array())
                .into_iter()
                .flatten()
                .filter_map(|vdu| vdu["vdu_id"].as_str())
                .collect();
            for vnfc in vnfcs.iter().filter(|vnfc| vnfc["vduId"].as_str().is_some_and(|vdu| vdus.contains(&vdu))) {
                let removed = existing_vnfc_resources(info, vnfc);
                let compute = uuid::Uuid::new_v4().to_string();
                for resource in removed.iter().filter(|resource| resource["type"] != "LINKPORT") {
                    let template = resource["resourceTemplateId"].as_str().unwrap_or_default();
                    let id =
                        if resource["type"] == "COMPUTE" { compute.clone() } else { format!("{template}-{compute}") };
                    add.push(json!({
                        "id": id, "type": resource["type"], "vduId": resource["vduId"], "resourceTemplateId": template,
                    }));
                }
                remove.extend(removed.into_iter().filter(|resource| resource["type"] != "LINKPORT"));
            }
        }
        _ => {}
    }
    let existing_links = info["vnfVirtualLinkResourceInfo"].as_array().cloned().unwrap_or_default();
    match (operation, &plan.deployment) {
        ("INSTANTIATE", Some(deployment)) => {
            for link in &deployment.virtual_links {
                add.push(json!({
                    "id": uuid::Uuid::new_v4().to_string(),
                    "type": "VL",
                    "resourceTemplateId": link,
                }));
            }
        }
        ("TERMINATE", _) => {
            for link in &existing_links {
                remove.push(json!({
                    "id": link["id"],
                    "type": "VL",
                    "resourceTemplateId": link["vnfVirtualLinkDescId"],
                    "resource": link["networkResource"],
                }));
            }
        }
        _ => {}
    }
    let mut request = json!({
        "vnfInstanceId": instance.id,
        "vnfLcmOpOccId": op.id,
        "vnfdId": instance.body["vnfdId"],
        "operation": operation,
        "isAutomaticInvocation": op.body["isAutomaticInvocation"].as_bool().unwrap_or(false),
        "_links": {
            "vnfLcmOpOcc": href(&links.op_occ(major.number(), &op.id)),
            "vnfInstance": href(&links.instance(major.number(), &instance.id)),
        },
    });
    let flavour_id = plan
        .deployment
        .as_ref()
        .map(|deployment| deployment.flavour_id.clone())
        .or_else(|| info["flavourId"].as_str().map(str::to_owned));
    if let Some(flavour_id) = flavour_id.filter(|flavour_id| !flavour_id.is_empty()) {
        request["flavourId"] = json!(flavour_id);
    }
    if let Some(level) = params["instantiationLevelId"].as_str() {
        request["instantiationLevelId"] = json!(level);
    }
    // SOL003 v3.3.1 9.5.2.2: the VNFD the instance changes to (as Tacker sends it).
    if operation == "CHANGE_VNFPKG"
        && let Some(destination) = params["vnfdId"].as_str()
    {
        request["dstVnfdId"] = json!(destination);
    }
    let constraints = flavour.map(|flavour| placement_constraints(flavour, &add, &vnfcs)).unwrap_or_default();
    if !add.is_empty() {
        request["addResources"] = Value::Array(add);
    }
    if !remove.is_empty() {
        request["removeResources"] = Value::Array(remove);
    }
    if !update.is_empty() {
        request["updateResources"] = Value::Array(update);
    }
    if !constraints.is_empty() {
        request["placementConstraints"] = Value::Array(constraints);
    }
    if let Some(additional) = additional.filter(|value| value.as_object().is_some_and(|map| !map.is_empty())) {
        request["additionalParams"] = additional.clone();
    }
    request
}

/// change_ext_conn (as Tacker asks): each VNFC with a CP on a changed external virtual link
/// is updated (COMPUTE in `updateResources`, with its handle); the link port of each such
/// CP that solgate made is removed, and a new one asked for unless the request brings it.
fn change_ext_conn_resources(
    info: &Value,
    vnfcs: &[Value],
    params: &Value,
    add: &mut Vec<Value>,
    remove: &mut Vec<Value>,
    update: &mut Vec<Value>,
) {
    let changed: BTreeSet<&str> = params["extVirtualLinks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|link| link["extCps"].as_array().into_iter().flatten())
        .filter_map(|cp| cp["cpdId"].as_str())
        .collect();
    let ready_ports = ready_link_ports(params);
    let ext_ports: Vec<&Value> = info["extVirtualLinkInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|link| link["extLinkPorts"].as_array().into_iter().flatten())
        .collect();
    for vnfc in vnfcs {
        let cps: Vec<&Value> = vnfc["vnfcCpInfo"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|cp| cp["cpdId"].as_str().is_some_and(|cpd| changed.contains(cpd)))
            .collect();
        if cps.is_empty() {
            continue;
        }
        let (old_compute, new_compute) = (uuid::Uuid::new_v4().to_string(), uuid::Uuid::new_v4().to_string());
        let vdu = &vnfc["vduId"];
        update.push(json!({
            "id": new_compute, "type": "COMPUTE", "vduId": vdu, "resourceTemplateId": vdu,
            "resource": vnfc["computeResource"],
        }));
        for cp in cps {
            let template = cp["cpdId"].as_str().unwrap_or_default();
            if let Some(ext_cp) = cp.get("vnfExtCpId") {
                let mut resource = json!({
                    "id": format!("{template}-{old_compute}"), "type": "LINKPORT", "vduId": vdu,
                    "resourceTemplateId": template,
                });
                if let Some(port) = ext_ports.iter().find(|port| port["cpInstanceId"] == *ext_cp) {
                    resource["resource"] = port["resourceHandle"].clone();
                }
                remove.push(resource);
            }
            if !ready_ports.contains(template) {
                add.push(json!({
                    "id": format!("{template}-{new_compute}"), "type": "LINKPORT", "vduId": vdu,
                    "resourceTemplateId": template,
                }));
            }
        }
    }
}

/// The CPs of `extVirtualLinks[].extCps[]` whose cpConfig names a ready `linkPortId`: the
/// NFVO made those ports, so they are not asked for (Tacker's `_get_link_ports`).
fn ready_link_ports(params: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for link in params["extVirtualLinks"].as_array().into_iter().flatten() {
        for cp in link["extCps"].as_array().into_iter().flatten() {
            let configs: Vec<&Value> = match &cp["cpConfig"] {
                Value::Object(map) => map.values().collect(),
                Value::Array(list) => list.iter().collect(),
                _ => Vec::new(),
            };
            if configs.iter().any(|config| config.get("linkPortId").is_some())
                && let Some(cpd) = cp["cpdId"].as_str()
            {
                names.insert(cpd.to_owned());
            }
        }
    }
    for link in params["extManagedVirtualLinks"].as_array().into_iter().flatten() {
        if link.get("vnfLinkPort").is_some()
            && let Some(desc) = link["vnfVirtualLinkDescId"].as_str()
        {
            names.insert(desc.to_owned());
        }
    }
    names
}

/// The resources of one new VNFC of `vdu`: COMPUTE, then a LINKPORT per CP and a STORAGE
/// per virtual storage, their ids derived from the COMPUTE's (`{template}-{compute id}`).
fn new_vnfc_resources(flavour: Option<&Flavour>, vdu: &str, ready_ports: &BTreeSet<String>) -> Vec<Value> {
    let compute = uuid::Uuid::new_v4().to_string();
    let mut resources = vec![json!({"id": compute, "type": "COMPUTE", "vduId": vdu, "resourceTemplateId": vdu})];
    if let Some(node) = flavour.and_then(|flavour| flavour.vdu(vdu)) {
        for cp in node.cps.iter().filter(|cp| !ready_ports.contains(*cp)) {
            resources.push(json!({
                "id": format!("{cp}-{compute}"), "type": "LINKPORT", "vduId": vdu, "resourceTemplateId": cp,
            }));
        }
        for storage in &node.virtual_storages {
            resources.push(json!({
                "id": format!("{storage}-{compute}"), "type": "STORAGE", "vduId": vdu, "resourceTemplateId": storage,
            }));
        }
    }
    resources
}

/// The resources of an existing VNFC, with their handles: COMPUTE (its VnfcResourceInfo id),
/// STORAGE per `storageResourceIds`, LINKPORT per CP on a port solgate made.
fn existing_vnfc_resources(info: &Value, vnfc: &Value) -> Vec<Value> {
    let vdu = &vnfc["vduId"];
    let compute = vnfc["id"].as_str().map(str::to_owned).unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut resources = vec![json!({
        "id": compute, "type": "COMPUTE", "vduId": vdu, "resourceTemplateId": vdu, "resource": vnfc["computeResource"],
    })];
    let storages = info["virtualStorageResourceInfo"].as_array().cloned().unwrap_or_default();
    for id in vnfc["storageResourceIds"].as_array().into_iter().flatten() {
        if let Some(storage) = storages.iter().find(|storage| storage["id"] == *id) {
            let template = storage["virtualStorageDescId"].as_str().unwrap_or_default();
            resources.push(json!({
                "id": format!("{template}-{compute}"), "type": "STORAGE", "vduId": vdu,
                "resourceTemplateId": template, "resource": storage["storageResource"],
            }));
        }
    }
    let ports: Vec<&Value> = info["vnfVirtualLinkResourceInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|link| link["vnfLinkPorts"].as_array().into_iter().flatten())
        .collect();
    for cp in vnfc["vnfcCpInfo"].as_array().into_iter().flatten() {
        // A CP on a port the NFVO made (extLinkPorts) is not solgate's to remove.
        if cp.get("vnfLinkPortId").is_none() && cp.get("vnfExtCpId").is_none() {
            continue;
        }
        let template = cp["cpdId"].as_str().unwrap_or_default();
        let mut resource = json!({
            "id": format!("{template}-{compute}"), "type": "LINKPORT", "vduId": vdu, "resourceTemplateId": template,
        });
        if let Some(port) = ports.iter().find(|port| port["id"] == cp["vnfLinkPortId"]) {
            resource["resource"] = port["resourceHandle"].clone();
        }
        resources.push(resource);
    }
    resources
}

/// SOL003 PlacementConstraint per affinity rule of the flavour: the new COMPUTE resources
/// of its VDUs (`GRANT`) and the existing VNFCs of those VDUs (`RES_MGMT`), when they are at
/// least two (a constraint relates resources). Unlike Tacker, a rule with no new resource
/// does not stop the rules after it from being sent.
fn placement_constraints(flavour: &Flavour, add: &[Value], vnfcs: &[Value]) -> Vec<Value> {
    let mut constraints = Vec::new();
    for rule in &flavour.placement_rules {
        let in_rule = |vdu: &Value| vdu.as_str().is_some_and(|vdu| rule.vdus.iter().any(|target| target == vdu));
        let mut refs: Vec<Value> = add
            .iter()
            .filter(|resource| resource["type"] == "COMPUTE" && in_rule(&resource["vduId"]))
            .map(|resource| json!({"idType": "GRANT", "resourceId": resource["id"]}))
            .collect();
        if refs.is_empty() {
            continue;
        }
        for vnfc in vnfcs.iter().filter(|vnfc| in_rule(&vnfc["vduId"])) {
            let handle = &vnfc["computeResource"];
            let mut reference = json!({"idType": "RES_MGMT", "resourceId": handle["resourceId"]});
            if let Some(vim) = handle["vimConnectionId"].as_str() {
                reference["vimConnectionId"] = json!(vim);
            }
            refs.push(reference);
        }
        if refs.len() < 2 {
            continue;
        }
        constraints.push(json!({
            "affinityOrAntiAffinity": if rule.anti_affinity { "ANTI_AFFINITY" } else { "AFFINITY" },
            "scope": rule.scope.to_ascii_uppercase(),
            "resource": refs,
        }));
    }
    constraints
}

/// Records, in the stored Grant, which VDU each COMPUTE resource it was asked for belongs
/// to: applying the Grant later (a retry, a rollback) needs it and the request is not kept.
pub fn remember_requested_vdus(request: &Value, grant: &mut Value) {
    let vdus: serde_json::Map<String, Value> = request["addResources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|resource| resource["type"] == "COMPUTE")
        .filter_map(|resource| Some((resource["id"].as_str()?.to_owned(), resource["vduId"].clone())))
        .collect();
    if !grant[PRIVATE_KEY].is_object() {
        grant[PRIVATE_KEY] = json!({});
    }
    grant[PRIVATE_KEY]["computeVdus"] = Value::Object(vdus);
}

/// A Grant must only speak of resources the request asked for.
pub fn check_grant(request: &Value, grant: &Value) -> Result<(), String> {
    for key in ["addResources", "removeResources", "updateResources"] {
        let asked: BTreeSet<&str> =
            request[key].as_array().into_iter().flatten().filter_map(|entry| entry["id"].as_str()).collect();
        for granted in grant[key].as_array().into_iter().flatten() {
            let id = granted["resourceDefinitionId"].as_str().unwrap_or_default();
            if !asked.contains(id) {
                return Err(format!(
                    "The NFVO's Grant {key} names resource definition {id:?}, which was not requested."
                ));
            }
        }
    }
    if grant["vnfLcmOpOccId"].as_str().is_some_and(|id| request["vnfLcmOpOccId"].as_str() != Some(id)) {
        return Err("The NFVO's Grant is for another operation occurrence.".into());
    }
    Ok(())
}

/// A Grant's `vimConnectionInfo` in the instance's shape: a map keyed by id (v2), an
/// array of objects with `id` (v1); an NFVO may answer in either.
fn in_shape_of(major: LcmMajor, vim_connection_info: &Value) -> Value {
    match (major, vim_connection_info) {
        (LcmMajor::V2, Value::Array(_)) => solgate_core::convert::vim_connections_to_map(vim_connection_info),
        (LcmMajor::V1, Value::Object(map)) => Value::Array(
            map.iter()
                .map(|(id, entry)| {
                    let mut entry = entry.clone();
                    entry["id"] = json!(id);
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
pub fn apply_grant(major: LcmMajor, secrets: &SecretBox, plan: &mut OperationPlan, grant: &Value, into_target: bool) {
    let shapes = shapes::for_major(major);
    let mut granted = in_shape_of(major, &grant["vimConnectionInfo"]);
    let connections = shapes.vim_connections(&granted);
    if !connections.is_empty() {
        secrets.seal(&mut granted);
        if into_target && plan.target.is_object() {
            shapes.merge_vim_connections(&mut plan.target, &granted);
        }
        let named = grant["addResources"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|info| info["vimConnectionId"].as_str())
            .map(str::to_owned);
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
    if into_target && major == LcmMajor::V2 && plan.target.is_object() {
        for key in ["cirConnectionInfo", "mciopRepositoryInfo"] {
            let mut connections = in_shape_of(major, &grant[key]);
            if let Value::Object(entries) = &mut connections
                && !entries.is_empty()
            {
                secrets.seal(&mut connections);
                merge_patch(&mut plan.target[key], &connections);
            }
        }
    }
    if let Some(deployment) = &mut plan.deployment {
        deployment.granted = granted_placement(grant);
        for (grant_key, target) in [
            ("extVirtualLinks", &mut deployment.ext_virtual_links),
            ("extManagedVirtualLinks", &mut deployment.ext_managed_virtual_links),
        ] {
            if grant[grant_key].as_array().is_some_and(|links| !links.is_empty()) {
                *target = grant[grant_key].clone();
            }
        }
    }
}

/// The zones and VIM assets a Grant gives, per VDU (see [`GrantedPlacement`]).
fn granted_placement(grant: &Value) -> GrantedPlacement {
    let mut granted = GrantedPlacement::default();
    let vdus = &grant[PRIVATE_KEY]["computeVdus"];
    let zones = grant["zones"].as_array().cloned().unwrap_or_default();
    for info in grant["addResources"].as_array().into_iter().flatten() {
        let (Some(vdu), Some(zone)) =
            (vdus[info["resourceDefinitionId"].as_str().unwrap_or_default()].as_str(), info["zoneId"].as_str())
        else {
            continue;
        };
        if let Some(name) = zones.iter().find(|entry| entry["id"] == zone).and_then(|entry| entry["zoneId"].as_str()) {
            granted.zones.entry(vdu.to_owned()).or_insert_with(|| name.to_owned());
        }
    }
    let assets = &grant["vimAssets"];
    for flavour in assets["computeResourceFlavours"].as_array().into_iter().flatten() {
        if let (Some(vdu), Some(id)) = (flavour["vnfdVirtualComputeDescId"].as_str(), flavour["vimFlavourId"].as_str())
        {
            granted.flavours.insert(vdu.to_owned(), id.to_owned());
        }
    }
    for image in assets["softwareImages"].as_array().into_iter().flatten() {
        if let (Some(vnfd_image), Some(id)) =
            (image["vnfdSoftwareImageId"].as_str(), image["vimSoftwareImageId"].as_str())
        {
            granted.images.insert(vnfd_image.to_owned(), id.to_owned());
        }
    }
    // The NFVO's own `nfv` parameters, merged last (Tacker's user data merges
    // grant.additionalParams.nfv after the request's).
    if let Some(nfv) = grant.pointer("/additionalParams/nfv").filter(|nfv| nfv.is_object()) {
        granted.nfv = nfv.clone();
    }
    granted
}

#[cfg(test)]
mod tests {
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
        let granted = granted_placement(&grant);
        assert_eq!(granted.zones["VDU1"], "az-1");
        assert_eq!(granted.flavours["VDU1"], "f-1");
        assert_eq!(granted.images["VDU1"], "i-1");
        assert_eq!(granted.nfv, json!({"CP": {"VDU1_CP1": {"network": "granted-net"}}}));
        assert!(granted_placement(&json!({"additionalParams": {"nfv": "x"}})).is_empty());
    }
}
