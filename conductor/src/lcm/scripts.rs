//! What a VNF package's own scripts take part in an operation, as Tacker v2 runs them:
//! the management scripts of the VNFD's `Vnflcm` interface before and after the infra work
//! (`<operation>_start`, `<operation>_end`; `<operation>_rollback_start`/`_end` while
//! rolling back; Tacker's `_exec_mgmt_driver_script`), and the documents they and the
//! OpenStack driver's LCM operation user data are given: the request, the VNF instance,
//! the GrantRequest and the Grant. The scripts run through `solgate_drivers::script`.
//!
//! Nothing here runs for an operation whose package declares no script for it and whose
//! request declares no user data.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use solgate_core::PRIVATE_KEY;
use solgate_core::operation::OperationPlan;
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor, OpOccRecord};
use solgate_drivers::script::{self, ScriptInput};
use solgate_model::LcmOperation;
use solgate_model::grant::{Change, Grant, GrantInfo, GrantRequest, ResourceKind};
use solgate_vnfpkg::PackageContents;

use crate::context::ConductorContext;
use crate::lcm::grant::{self, GrantInputs};
use crate::lcm::views::{InstanceView, view};

/// The scripts of one run of an operation.
pub(crate) struct OperationScripts {
    pub input: ScriptInput,
    /// The flavour's `Vnflcm` scripts for this operation: (start, end).
    hooks: Hooks,
    package_dir: PathBuf,
}

/// Whether the request declares LCM operation user data (both keys checked by the driver).
fn declares_user_data(additional: &Value) -> bool {
    additional.get("lcm-operation-user-data").is_some() || additional.get("lcm-operation-user-data-class").is_some()
}

/// The flavour's `Vnflcm` scripts of the run: (start, end), each `(operation, file)`.
type Hooks = (Option<(String, String)>, Option<(String, String)>);

/// The flavour the instance has after the operation: the plan's, else the instance's.
fn flavour_id(plan: &OperationPlan, instance: &InstanceRecord) -> Option<String> {
    plan.deployment
        .as_ref()
        .map(|deployment| deployment.flavour_id.clone())
        .or_else(|| view::<InstanceView>(&instance.body).flavour_id().map(str::to_owned))
}

fn hooks_of(
    plan: &OperationPlan,
    instance: &InstanceRecord,
    operation: LcmOperation,
    package: &PackageContents,
    rolling_back: bool,
) -> Option<Hooks> {
    let flavour = package.vnfd.flavour(&flavour_id(plan, instance)?)?;
    let name = operation.script_name();
    let phase = if rolling_back { format!("{name}_rollback") } else { name.to_owned() };
    let hook = |suffix: &str| {
        let operation = format!("{phase}_{suffix}");
        flavour.lcm_scripts.get(&operation).map(|file| (operation, file.clone()))
    };
    Some((hook("start"), hook("end")))
}

/// Whether any script takes part in the run (a cheap check before [`prepare`]).
pub(crate) fn may_take_part(
    plan: &OperationPlan,
    instance: &InstanceRecord,
    operation: LcmOperation,
    package: &PackageContents,
    additional: &Value,
    rolling_back: bool,
) -> bool {
    declares_user_data(additional)
        || hooks_of(plan, instance, operation, package, rolling_back).is_some_and(|h| h.0.is_some() || h.1.is_some())
}

/// What the package's scripts need for this run, or `None` when none takes part; an error
/// when their inputs cannot be had (the scripts never run on made-up inputs).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn prepare(
    ctx: &ConductorContext,
    major: LcmMajor,
    instance: &InstanceRecord,
    op: &OpOccRecord,
    operation: LcmOperation,
    plan: &OperationPlan,
    package: &PackageContents,
    package_dir: &Path,
    additional: &Value,
    rolling_back: bool,
) -> Result<Option<OperationScripts>, String> {
    let hooks = hooks_of(plan, instance, operation, package, rolling_back).unwrap_or_default();
    if hooks.0.is_none() && hooks.1.is_none() && !declares_user_data(additional) {
        return Ok(None);
    }
    let flavour_id = flavour_id(plan, instance);
    let flavour = flavour_id.and_then(|id| package.vnfd.flavour(&id));
    let mut request = op.body["operationParams"].clone();
    if !request.is_object() {
        request = json!({});
    }
    if let Some(request) = request.as_object_mut() {
        request.insert("additionalParams".to_owned(), additional.clone());
    }
    let grant_request = grant::grant_request(&GrantInputs {
        major,
        links: &ctx.links,
        instance,
        op,
        operation,
        plan,
        flavour,
        additional: Some(additional).filter(|a| a.is_object()),
    });
    let stored = if ctx.nfvo.is_some() {
        let (id, db_major) = (op.id.clone(), major);
        // The NFVO's Grant, never a local stand-in for it when it cannot be read.
        ctx.db_run(move |conn| lcm::find_grant(conn, db_major, &id))
            .await
            .map_err(|error| format!("The Grant of the operation cannot be read for the package's scripts: {error}"))?
    } else {
        None
    };
    let (grant_request, grant) = match stored {
        Some(granted) => {
            let typed: Grant = serde_json::from_value(granted.clone()).map_err(|error| {
                format!("The Grant of the operation cannot be read for the package's scripts: {error}")
            })?;
            (matching_ids(grant_request, &typed), without_secrets(granted))
        }
        None => {
            let grant = local_grant(&grant_request);
            (grant_request, json!(grant))
        }
    };
    Ok(Some(OperationScripts {
        input: ScriptInput {
            request,
            vnf_instance: without_secrets(instance.body.clone()),
            grant_request: json!(grant_request),
            grant,
        },
        hooks,
        package_dir: package_dir.to_owned(),
    }))
}

impl OperationScripts {
    /// Runs the `_start` (`start`) or `_end` script of the operation, if the VNFD declares
    /// one; its failure (with its message) is the operation's.
    pub(crate) async fn hook(&self, ctx: &ConductorContext, start: bool) -> Result<(), String> {
        let Some((operation, file)) = (if start { &self.hooks.0 } else { &self.hooks.1 }) else {
            return Ok(());
        };
        tracing::info!(%operation, script = %file, "running the VNF package's management script");
        script::run_mgmt_script(&ctx.scripts, &self.package_dir, file, operation, &self.input)
            .await
            .map_err(|error| error.to_string())
    }
}

/// A document as a script sees it: no solgate bookkeeping, no VIM credentials (unlike
/// Tacker, which hands scripts the VIM's password; a script that needs access to a VIM
/// brings its own).
fn without_secrets(mut document: Value) -> Value {
    if let Some(map) = document.as_object_mut() {
        map.shift_remove(PRIVATE_KEY);
    }
    for key in ["vimConnectionInfo", "vimConnections"] {
        match document.get_mut(key) {
            Some(Value::Object(map)) => map.values_mut().for_each(strip_access),
            Some(Value::Array(list)) => list.iter_mut().for_each(strip_access),
            _ => {}
        }
    }
    document
}

fn strip_access(connection: &mut Value) {
    if let Some(map) = connection.as_object_mut() {
        map.shift_remove("accessInfo");
    }
}

/// The Grant of solgate's local NFVO as Tacker's local NFVO answers: every resource
/// granted as asked, by its definition id, with no zone and no VIM assets (the scripts
/// then take flavours and images from the VNFD).
fn local_grant(request: &GrantRequest) -> Grant {
    let granted = |change: Change| -> Option<Vec<GrantInfo>> {
        let list: Vec<GrantInfo> =
            request.resources(change).iter().map(|resource| GrantInfo::granted(&resource.id)).collect();
        (!list.is_empty()).then_some(list)
    };
    Grant {
        id: uuid::Uuid::new_v4().to_string(),
        vnf_instance_id: Some(request.vnf_instance_id.clone()),
        vnf_lcm_op_occ_id: Some(request.vnf_lcm_op_occ_id.clone()),
        add_resources: granted(Change::Add),
        remove_resources: granted(Change::Remove),
        update_resources: granted(Change::Update),
        ..Grant::default()
    }
}

/// The GrantRequest, made again for the scripts, with the ids of its new COMPUTE
/// resources (and their ports and storage) set to those the NFVO granted (recorded with the
/// Grant per VDU), so that `get_param_zone` finds the granted zones.
fn matching_ids(mut request: GrantRequest, granted: &Grant) -> GrantRequest {
    let mut by_vdu: Vec<(&str, &str)> = granted.compute_vdus().map(|(id, vdu)| (vdu, id)).collect();
    let mut renamed = Vec::new();
    for resource in request.add_resources.iter_mut().filter(|resource| resource.kind == ResourceKind::Compute) {
        let vdu = resource.vdu_id.as_deref().unwrap_or_default();
        if let Some(position) = by_vdu.iter().position(|(granted_vdu, _)| *granted_vdu == vdu) {
            let (_, id) = by_vdu.remove(position);
            renamed.push((std::mem::replace(&mut resource.id, id.to_owned()), id));
        }
    }
    for resource in request.add_resources.iter_mut().filter(|resource| resource.kind != ResourceKind::Compute) {
        let id = &resource.id;
        if let Some((old, new)) = renamed.iter().find(|(old, _)| id.ends_with(&format!("-{old}"))) {
            resource.id = format!("{}{new}", &id[..id.len() - old.len()]);
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GrantRequest with these members besides those every one has.
    fn request_with(members: &Value) -> GrantRequest {
        let mut request = json!({"vnfInstanceId": "i", "vnfLcmOpOccId": "o", "vnfdId": "d", "operation": "SCALE",
            "isAutomaticInvocation": false, "_links": {"vnfLcmOpOcc": {"href": "o"}, "vnfInstance": {"href": "i"}}});
        solgate_core::merge_patch(&mut request, members);
        serde_json::from_value(request).unwrap()
    }

    #[test]
    fn operations_have_their_interface_names() {
        assert_eq!(LcmOperation::Instantiate.script_name(), "instantiate");
        assert_eq!(LcmOperation::ModifyInfo.script_name(), "modify_information");
        assert_eq!(LcmOperation::ChangeExtConn.script_name(), "change_external_connectivity");
        assert_eq!(LcmOperation::ChangeVnfpkg.script_name(), "change_current_package");
    }

    #[test]
    fn scripts_see_no_credentials_or_bookkeeping() {
        let inst = without_secrets(json!({"id": "i", PRIVATE_KEY: {"x": 1},
            "vimConnectionInfo": {"vim1": {"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
                "interfaceInfo": {"endpoint": "https://keystone"}, "accessInfo": {"password": "secret"}}}}));
        assert_eq!(
            inst,
            json!({"id": "i", "vimConnectionInfo": {"vim1": {"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
            "interfaceInfo": {"endpoint": "https://keystone"}}}})
        );
    }

    #[test]
    fn the_local_grant_grants_every_resource_by_its_definition() {
        let request = request_with(&json!({"vnfInstanceId": "i", "vnfLcmOpOccId": "o",
            "addResources": [{"id": "c1", "type": "COMPUTE", "resourceTemplateId": "VDU1"},
                {"id": "CP1-c1", "type": "LINKPORT", "resourceTemplateId": "CP1"}]}));
        let grant = json!(local_grant(&request));
        assert_eq!(grant["addResources"], json!([{"resourceDefinitionId": "c1"}, {"resourceDefinitionId": "CP1-c1"}]));
        assert!(grant.get("removeResources").is_none());
    }

    #[test]
    fn granted_compute_ids_replace_the_fresh_ones() {
        let request = request_with(&json!({"addResources": [
            {"id": "new-1", "type": "COMPUTE", "vduId": "VDU1", "resourceTemplateId": "VDU1"},
            {"id": "VDU1_CP1-new-1", "type": "LINKPORT", "vduId": "VDU1", "resourceTemplateId": "VDU1_CP1"},
            {"id": "new-2", "type": "COMPUTE", "vduId": "VDU2", "resourceTemplateId": "VDU2"}]}));
        let granted = json!({PRIVATE_KEY: {"computeVdus": {"g-1": "VDU1", "g-2": "VDU2"}}});
        let request = json!(matching_ids(request, &serde_json::from_value(granted).unwrap()));
        let ids: Vec<&str> =
            request["addResources"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["g-1", "VDU1_CP1-g-1", "g-2"]);
    }
}
