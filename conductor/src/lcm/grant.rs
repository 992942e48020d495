//! The GrantRequest an operation sends an external NFVO (SOL003 v3.3.1 clause 9.5.2.2,
//! v2.6.1 for v1), computed from its stored plan, and what the NFVO's Grant changes in
//! that plan before the driver runs it.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use solgate_core::links::{Links, href};
use solgate_core::operation::{InfraWork, OperationPlan};
use solgate_core::secrets::SecretBox;
use solgate_core::shapes;
use solgate_db::repo::lcm::{InstanceRecord, LcmMajor, OpOccRecord};

/// The GrantRequest of an operation: one ResourceDefinition per VNFC (COMPUTE, with
/// `vduId` and `resourceTemplateId`) the plan adds or removes (a healed VNFC is both), and
/// the internal virtual links (VL) an instantiation creates or a termination removes.
pub fn grant_request(
    major: LcmMajor,
    links: &Links,
    instance: &InstanceRecord,
    op: &OpOccRecord,
    plan: &OperationPlan,
) -> Value {
    let operation = op.operation();
    let counts = plan.local_grant(&instance.body, &instance.id, &op.id, operation);
    let vnfcs = instance.body["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().cloned().unwrap_or_default();
    let mut add = Vec::new();
    for entry in counts["addResources"].as_array().into_iter().flatten() {
        let vdu = entry["resourceTemplateId"].as_str().unwrap_or_default();
        for _ in 0..entry["count"].as_u64().unwrap_or(0) {
            add.push(json!({
                "id": uuid::Uuid::new_v4().to_string(),
                "type": "COMPUTE",
                "vduId": vdu,
                "resourceTemplateId": vdu,
            }));
        }
    }
    let mut remove = Vec::new();
    for entry in counts["removeResources"].as_array().into_iter().flatten() {
        let vdu = entry["resourceTemplateId"].as_str().unwrap_or_default();
        let count = usize::try_from(entry["count"].as_u64().unwrap_or(0)).unwrap_or(0);
        // The newest VNFCs of the VDU go first (as the drivers scale in).
        let of_vdu: Vec<&Value> = vnfcs.iter().filter(|vnfc| vnfc["vduId"] == vdu).collect();
        for vnfc in of_vdu.iter().rev().take(count) {
            remove.push(json!({
                "id": vnfc["id"].as_str().map(str::to_owned).unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                "type": "COMPUTE",
                "vduId": vdu,
                "resourceTemplateId": vdu,
                "resource": vnfc["computeResource"],
            }));
        }
    }
    // Healing re-creates VNFCs: each is removed and added again (as Tacker asks).
    if let Some(InfraWork::Heal { vnfc_resource_ids }) = &plan.infra {
        for vnfc in vnfcs.iter().filter(|vnfc| {
            vnfc["id"]
                .as_str()
                .is_some_and(|id| vnfc_resource_ids.is_empty() || vnfc_resource_ids.iter().any(|healed| healed == id))
        }) {
            let vdu = &vnfc["vduId"];
            remove.push(json!({
                "id": vnfc["id"], "type": "COMPUTE", "vduId": vdu, "resourceTemplateId": vdu,
                "resource": vnfc["computeResource"],
            }));
            add.push(json!({
                "id": uuid::Uuid::new_v4().to_string(), "type": "COMPUTE", "vduId": vdu, "resourceTemplateId": vdu,
            }));
        }
    }
    let existing_links =
        instance.body["instantiatedVnfInfo"]["vnfVirtualLinkResourceInfo"].as_array().cloned().unwrap_or_default();
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
    let params = &op.body["operationParams"];
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
    let flavour = plan
        .deployment
        .as_ref()
        .map(|deployment| deployment.flavour_id.clone())
        .or_else(|| instance.body["instantiatedVnfInfo"]["flavourId"].as_str().map(str::to_owned));
    if let Some(flavour) = flavour.filter(|flavour| !flavour.is_empty()) {
        request["flavourId"] = json!(flavour);
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
    if !add.is_empty() {
        request["addResources"] = Value::Array(add);
    }
    if !remove.is_empty() {
        request["removeResources"] = Value::Array(remove);
    }
    request
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
    if let Some(deployment) = &mut plan.deployment {
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
