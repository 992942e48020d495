//! The LCM operations (SOL003 LcmOperationType), one table: per operation its request
//! schema, its task route, the instance state it needs, and its plan, which is also its
//! request-time check. The gateway accepts a task by planning it and stores the plan
//! with the occurrence; the conductor executes that stored plan. Adding an operation is
//! one variant here and its arm in each method.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solgate_db::AnyConnection;
use solgate_db::repo::vnf_packages::PackageRecord;
use solgate_model::infra::VIM_TYPE_LOCAL;
use solgate_model::infra::{DeploymentPlan, VimConnection};
use solgate_model::lcm_op_occ::{PackageIdentity, VnfInfoModifications};
use solgate_model::lcm_request::{
    ChangeVnfFlavourRequest, CommonRequestMembers, HealVnfRequest, InstantiateVnfRequest, OperateVnfRequest,
    ScaleVnfRequest, ScaleVnfToLevelRequest, SelectVnfDeployableModulesRequest, VnfInfoModificationRequest,
};
use solgate_model::vnf_instance::{InstancePrivate, InstantiatedVnfInfo, InstantiationState, VnfInstance};
use solgate_vnfpkg::{PackageContents, Vnfd};

use crate::plan::{self, ExtConnectivity, PlanError, TargetSize};
use crate::shapes::LcmShapes;
use crate::{CoreError, merge_patch, vnfd};

pub use solgate_model::operation::{LcmOperation, Precondition};

use LcmOperation::*;

/// Plans the operation on an instance: checks the request against the instance, its
/// VNFD and the VIM types we can drive (400/409/422 now rather than a ROLLED_BACK
/// later, Tacker's defect 23), and works out what it will do. Runs inside the
/// accepting transaction.
pub fn plan(
    operation: LcmOperation,
    conn: &mut AnyConnection,
    request: &PlanRequest<'_>,
) -> Result<OperationPlan, CoreError> {
    let PlanRequest { instance, package_id, params, shapes, vim_types, scope } = *request;
    let instance: VnfInstance = stored_instance(instance)?;
    let common: CommonRequestMembers = request_as(params)?;
    check_vim_types(&instance, &common, shapes, vim_types)?;
    let current = |conn: &mut AnyConnection| -> Result<Arc<PackageContents>, CoreError> {
        let (_, contents) =
            vnfd::load(conn, package_id)?.ok_or_else(|| not_operational(instance.vnfd_id.as_deref()))?;
        Ok(contents)
    };
    let mut planner = Planner { instance: &instance, params, shapes, target: instance.clone(), package: None };
    if let Some(data) = &common.certificate_configuration_data {
        let previous = instance.certificate_info.as_ref();
        planner.target.certificate_info = Some(crate::certificates::configured(data, previous));
    }
    let plan = match operation {
        Instantiate => planner.instantiate(&current(conn)?.vnfd)?,
        Terminate => planner.terminate(),
        Scale | ScaleToLevel => planner.scale(&current(conn)?.vnfd, operation == ScaleToLevel)?,
        Heal => planner.heal(&current(conn)?.vnfd)?,
        ChangeFlavour => planner.change_flavour(&current(conn)?.vnfd)?,
        Operate => planner.operate(&current(conn)?.vnfd)?,
        ChangeExtConn => planner.change_ext_conn(&current(conn)?.vnfd)?,
        SelectDeplMods => planner.select_depl_mods(&current(conn)?.vnfd)?,
        ChangeVnfpkg => {
            let vnfd_id = common.vnfd_id.as_deref().unwrap_or_default();
            let (record, contents) = enabled_package(conn, scope, vnfd_id)?;
            planner.change_vnfpkg(record, &contents)?
        }
        ModifyInfo => {
            // A named package must be usable even when it is the current one.
            let new_package = match common.vnfd_id.as_deref() {
                Some(vnfd_id) => {
                    let package = enabled_package(conn, scope, vnfd_id)?;
                    (Some(vnfd_id) != instance.vnfd_id.as_deref()).then_some(package)
                }
                None => None,
            };
            let contents = vnfd::load(conn, package_id)?.map(|(_, contents)| contents);
            planner.modify_info(contents.as_ref().map(|contents| &contents.vnfd), new_package)?
        }
    };
    plan.check_vim(vim_types)?;
    Ok(plan)
}

/// The instance document as stored, typed.
fn stored_instance(instance: &Value) -> Result<VnfInstance, CoreError> {
    VnfInstance::deserialize(instance)
        .map_err(|error| CoreError::Unprocessable(format!("The VnfInstance document cannot be read: {error}.")))
}

/// The request body as the operation's request type (the gateway validated it against
/// the negotiated version's schema before).
fn request_as<T: DeserializeOwned>(params: &Value) -> Result<T, CoreError> {
    // No body reads as an empty one, as the untyped reads had it.
    let empty = Value::Object(Default::default());
    T::deserialize(if params.is_null() { &empty } else { params })
        .map_err(|error| CoreError::BadRequest(format!("The request body is invalid: {error}.")))
}

/// What planning an operation needs.
#[derive(Clone, Copy)]
pub struct PlanRequest<'a> {
    /// The instance document as stored.
    pub instance: &'a Value,
    /// The package the instance uses now.
    pub package_id: &'a str,
    /// The request body.
    pub params: &'a Value,
    pub shapes: &'a dyn LcmShapes,
    /// `vimType`s solgate has drivers for.
    pub vim_types: &'a [&'a str],
    /// Whose packages the request may name (a new vnfdId); `None`: any project's.
    pub scope: crate::tenancy::ProjectScope<'a>,
}

/// What an operation does, worked out when it is accepted and stored with its
/// occurrence (`_solgate.plan`); the conductor executes it as it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationPlan {
    /// The infra work, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infra: Option<InfraWork>,
    /// The instance document after success, except `instantiatedVnfInfo`'s inventory part.
    pub target: Value,
    /// The deployment the instance has afterwards (none when not instantiated afterwards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentPlan>,
    /// The package the instance uses afterwards, when it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_package_id: Option<String>,
    /// `changedInfo` of MODIFY_INFO / CHANGE_VNFPKG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_info: Option<Value>,
    /// Whether the operation changes external connectivity (`changedExtConnectivity`).
    #[serde(default)]
    pub changes_ext_connectivity: bool,
    /// The VIM connection the infra work uses: the instance's first, after the request's
    /// are merged in; none means the local simulated VIM, where that is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim: Option<VimConnection>,
}

/// The infra driver action of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum InfraWork {
    /// Make the VIM hold `deployment`.
    Realize,
    /// Heal these VNFC resources (all when empty) within `deployment`.
    Heal {
        vnfc_resource_ids: Vec<String>,
    },
    Operate {
        change_state_to: String,
    },
    Teardown,
}

/// Why infra work without a VIM connection is refused where the simulator is off.
/// Not a VIM type: in the list of usable VIM types, it says that an external NFVO's grant
/// supplies the VIM (`[nfvo] mode = "external"`), so infra work may be accepted without one.
pub const VIM_FROM_GRANT: &str = "SOLGATE.NFVO_GRANT";

pub const NO_VIM: &str = "The VNF instance has no vimConnectionInfo, and the local simulated VIM is not enabled.";

impl OperationPlan {
    /// Rollback: make the VIM match the instance as recorded before the operation
    /// (nothing, when it was not instantiated). Planned when the rollback is requested.
    pub fn rollback(
        operation: LcmOperation,
        instance: &Value,
        vnfd: &Vnfd,
        params: &Value,
        shapes: &dyn LcmShapes,
    ) -> Result<Self, CoreError> {
        if !operation.rollback_supported(params) {
            return Err(CoreError::Unprocessable(format!("Rollback of {} is not supported.", operation.name())));
        }
        if operation == ModifyInfo {
            return Ok(Self::without_infra(instance.clone(), None));
        }
        let recorded = stored_instance(instance)?;
        let (work, deployment) = if recorded.is_instantiated() {
            (
                InfraWork::Realize,
                Some(recorded_plan(vnfd, &recorded).map_err(|error| CoreError::Unprocessable(error.to_string()))?),
            )
        } else {
            (InfraWork::Teardown, None)
        };
        // An instantiation that failed may have left its VIM connection only in the request.
        let requested: CommonRequestMembers = request_as(params)?;
        let mut vim_source = recorded.vim_connection_info;
        shapes
            .merge_vim_connection_info(&mut vim_source, requested.vim_connection_info.as_ref().unwrap_or(&Value::Null));
        let vim = shapes.vim_connections(vim_source.as_ref().unwrap_or(&Value::Null)).into_iter().next();
        Ok(Self { infra: Some(work), vim, ..Self::without_infra(instance.clone(), deployment) })
    }

    fn without_infra(target: Value, deployment: Option<DeploymentPlan>) -> Self {
        Self {
            infra: None,
            target,
            deployment,
            new_package_id: None,
            changed_info: None,
            changes_ext_connectivity: false,
            vim: None,
        }
    }

    /// Infra work needs a VIM: one of the instance's, or the local simulated VIM where
    /// it is enabled; an instance is never run on the simulator otherwise.
    fn check_vim(&self, vim_types: &[&str]) -> Result<(), CoreError> {
        if self.infra.is_some()
            && self.vim.is_none()
            && !vim_types.contains(&VIM_TYPE_LOCAL)
            && !vim_types.contains(&VIM_FROM_GRANT)
        {
            return Err(CoreError::Unprocessable(NO_VIM.into()));
        }
        Ok(())
    }

    /// The local NFVO's grant: which compute resources the operation adds and removes
    /// (SOL003 Grant, simplified), kept while the occurrence is not final.
    pub fn local_grant(&self, instance: &Value, instance_id: &str, op_id: &str, operation: &str) -> Value {
        /// The member of the instance the grant is worked out from.
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase")]
        struct Recorded {
            #[serde(default)]
            instantiated_vnf_info: InstantiatedVnfInfo,
        }
        let recorded = Recorded::deserialize(instance).unwrap_or_default();
        let before = plan::current_counts(&recorded.instantiated_vnf_info);
        let after: BTreeMap<String, u32> = match (&self.infra, &self.deployment) {
            (Some(InfraWork::Teardown), _) => BTreeMap::new(),
            (_, Some(deployment)) => deployment.vdus.iter().map(|vdu| (vdu.vdu_id.clone(), vdu.count)).collect(),
            (_, None) => before.clone(),
        };
        let mut add = Vec::new();
        let mut remove = Vec::new();
        for vdu in before.keys().chain(after.keys()).collect::<std::collections::BTreeSet<_>>() {
            let (old, new) = (before.get(vdu).copied().unwrap_or(0), after.get(vdu).copied().unwrap_or(0));
            if new > old {
                add.push(json!({"type": "COMPUTE", "resourceTemplateId": vdu, "count": new - old}));
            } else if old > new {
                remove.push(json!({"type": "COMPUTE", "resourceTemplateId": vdu, "count": old - new}));
            }
        }
        json!({
            "id": solgate_db::new_id(),
            "vnfInstanceId": instance_id,
            "vnfLcmOpOccId": op_id,
            "operation": operation,
            "addResources": add,
            "removeResources": remove,
        })
    }
}

/// A request the VNFD cannot satisfy is the client's mistake.
impl From<PlanError> for CoreError {
    fn from(error: PlanError) -> Self {
        CoreError::BadRequest(error.to_string())
    }
}

fn not_operational(vnfd_id: Option<&str>) -> CoreError {
    CoreError::Unprocessable(format!(
        "VnfPackage of vnfdId {} is not found or not operational.",
        vnfd_id.unwrap_or_default()
    ))
}

/// The onboarded and ENABLED package of a vnfdId, if the request may use it.
fn enabled_package(
    conn: &mut AnyConnection,
    scope: crate::tenancy::ProjectScope<'_>,
    vnfd_id: &str,
) -> Result<vnfd::Loaded, CoreError> {
    let (record, contents) = vnfd::load_by_vnfd_id(conn, vnfd_id)?
        .filter(|(record, _)| crate::tenancy::visible(scope, &record.project))
        .ok_or_else(|| not_operational(Some(vnfd_id)))?;
    if record.operational_state() != "ENABLED" {
        return Err(CoreError::Unprocessable(format!("VnfPackage of vnfdId {vnfd_id} is not ENABLED.")));
    }
    Ok((record, contents))
}

/// Every VIM connection the instance will have after the request must be of a type we
/// can drive.
fn check_vim_types(
    instance: &VnfInstance,
    request: &CommonRequestMembers,
    shapes: &dyn LcmShapes,
    vim_types: &[&str],
) -> Result<(), CoreError> {
    let Some(requested) = &request.vim_connection_info else { return Ok(()) };
    let mut merged = instance.vim_connection_info.clone();
    shapes.merge_vim_connection_info(&mut merged, requested);
    for connection in shapes.vim_connections(merged.as_ref().unwrap_or(&Value::Null)) {
        let vim_type = connection.normalized_vim_type();
        if vim_type == VIM_FROM_GRANT || !vim_types.contains(&vim_type) {
            let supported: Vec<&str> = vim_types.iter().copied().filter(|known| *known != VIM_FROM_GRANT).collect();
            return Err(CoreError::Unprocessable(format!(
                "vimType {} is not supported; supported: {}.",
                connection.vim_type,
                supported.join(", ")
            )));
        }
    }
    Ok(())
}

/// `selectedDeployableModule` of an InstantiateVnfRequest or ChangeVnfFlavourRequest
/// (SOL003 V4.5.1), checked against the flavour; none selected when absent.
fn requested_modules(vnfd: &Vnfd, flavour_id: &str, selected: Option<&Value>) -> Result<Vec<String>, CoreError> {
    let Some(flavour) = vnfd.flavour(flavour_id) else { return Ok(Vec::new()) };
    Ok(plan::requested_modules(flavour, selected)?.unwrap_or_default())
}

fn first_vim(shapes: &dyn LcmShapes, instance: &VnfInstance) -> Option<VimConnection> {
    shapes.vim_connections(instance.vim_connection_info.as_ref().unwrap_or(&Value::Null)).into_iter().next()
}

/// The instance's own deployment: its flavour, VDU counts and scale levels as recorded.
pub fn recorded_plan(vnfd: &Vnfd, instance: &VnfInstance) -> Result<DeploymentPlan, PlanError> {
    let info = instance.info();
    let flavour = plan::flavour(vnfd, info.flavour_id.as_deref().unwrap_or_default())?;
    let counts = plan::current_counts(info);
    plan::replan(flavour, &counts, counts.clone(), plan::current_levels(info), &recorded_ext(instance))
}

fn recorded_ext(instance: &VnfInstance) -> ExtConnectivity {
    let private = instance.private();
    ExtConnectivity {
        ext_virtual_links: private.ext_virtual_links.clone().unwrap_or_else(|| json!([])),
        ext_managed_virtual_links: private.ext_managed_virtual_links.clone().unwrap_or_else(|| json!([])),
    }
}

/// Works out one operation's plan; each method is one operation.
struct Planner<'a> {
    instance: &'a VnfInstance,
    params: &'a Value,
    shapes: &'a dyn LcmShapes,
    target: VnfInstance,
    package: Option<String>,
}

impl<'a> Planner<'a> {
    fn info(&self) -> &'a InstantiatedVnfInfo {
        self.instance.info()
    }

    fn flavour_id(&self) -> &'a str {
        self.info().flavour_id.as_deref().unwrap_or_default()
    }

    fn record_ext(&mut self, ext: &ExtConnectivity) {
        let private = self.target.private_mut();
        private.ext_virtual_links = Some(ext.ext_virtual_links.clone());
        private.ext_managed_virtual_links = Some(ext.ext_managed_virtual_links.clone());
    }

    fn merge_vim_connections(&mut self, requested: Option<&Value>) {
        let requested = requested.unwrap_or(&Value::Null);
        self.shapes.merge_vim_connection_info(&mut self.target.vim_connection_info, requested);
    }

    fn realize(self, deployment: DeploymentPlan) -> OperationPlan {
        self.finish(Some(InfraWork::Realize), Some(deployment))
    }

    fn finish(self, infra: Option<InfraWork>, deployment: Option<DeploymentPlan>) -> OperationPlan {
        // Termination uses the connection the instance was instantiated with.
        let vim = infra.as_ref().and_then(|_| first_vim(self.shapes, &self.target));
        let target = serde_json::to_value(&self.target).unwrap_or_default();
        OperationPlan { infra, new_package_id: self.package, vim, ..OperationPlan::without_infra(target, deployment) }
    }

    fn instantiate(mut self, vnfd: &Vnfd) -> Result<OperationPlan, CoreError> {
        let request: InstantiateVnfRequest = request_as(self.params)?;
        self.merge_vim_connections(request.vim_connection_info.as_ref());
        for (member, patch) in [
            (&mut self.target.vnf_configurable_properties, &request.vnf_configurable_properties),
            (&mut self.target.extensions, &request.extensions),
        ] {
            if let Some(patch) = patch {
                merge_patch(member.get_or_insert(Value::Null), patch);
            }
        }
        let ext = ExtConnectivity::from_params(self.params);
        let flavour_id = request.flavour_id.as_str();
        let modules = requested_modules(vnfd, flavour_id, request.selected_deployable_module.as_ref())?;
        let size = TargetSize {
            instantiation_level_id: request.instantiation_level_id.as_deref(),
            target_scale_level_info: request.target_scale_level_info.as_ref(),
        };
        let deployment = plan::for_target_size(vnfd, flavour_id, size, &ext, &modules)?;
        self.record_ext(&ext);
        self.target.instantiation_state = InstantiationState::Instantiated;
        self.target.instantiated_vnf_info = Some(InstantiatedVnfInfo {
            localization_language: request.localization_language.clone(),
            selected_deployable_module: (!modules.is_empty()).then(|| json!(modules)),
            ..Default::default()
        });
        Ok(self.realize(deployment))
    }

    fn terminate(mut self) -> OperationPlan {
        self.target.instantiation_state = InstantiationState::NotInstantiated;
        self.target.instantiated_vnf_info = None;
        if let Some(private) = &mut self.target.private {
            *private = InstancePrivate::default();
        }
        self.finish(Some(InfraWork::Teardown), None)
    }

    fn scale(self, vnfd: &Vnfd, to_level: bool) -> Result<OperationPlan, CoreError> {
        let flavour = plan::flavour(vnfd, self.flavour_id())?;
        let info = self.info();
        let current = plan::current_levels(info);
        let (levels, level_id) = if to_level {
            let request: ScaleVnfToLevelRequest = request_as(self.params)?;
            let level_id = request.instantiation_level_id.as_deref();
            (
                plan::levels_to(flavour, &current, level_id, request.scale_info.as_deref())?,
                request.instantiation_level_id,
            )
        } else {
            (plan::scaled_levels(flavour, &current, &request_as::<ScaleVnfRequest>(self.params)?)?, None)
        };
        let held = plan::current_counts(info);
        let mut counts = match level_id {
            Some(level) => flavour.initial_vdu_instances(Some(&level)).unwrap_or_default(),
            None => plan::rescaled_counts(flavour, &held, &current, &levels),
        };
        // A module that is not selected stays without VNFCs, whatever the levels.
        plan::deselect(flavour, &mut counts, &plan::current_modules(info));
        let deployment = plan::replan(flavour, &held, counts, levels, &recorded_ext(self.instance))?;
        Ok(self.realize(deployment))
    }

    fn heal(self, vnfd: &Vnfd) -> Result<OperationPlan, CoreError> {
        let request: HealVnfRequest = request_as(self.params)?;
        // `additionalParams` is free-form; Tacker's `all` (heal storage too) must be a bool.
        if let Some(all) = request.additional_params.as_ref().and_then(|params| params.get("all"))
            && !all.is_boolean()
        {
            return Err(CoreError::BadRequest("additionalParams['all'] must be bool.".into()));
        }
        let info = self.info();
        // SOL003 v3.3.1 shows VNFCs as vnfcResourceInfo; Tacker (and SOL002) name them by
        // vnfcInfo ids. Either is accepted; the driver heals the resources they name.
        let vnfc_info = info.vnfcs();
        let resources: Vec<&str> = info.vnfc_resources().iter().map(|vnfc| vnfc.id.as_str()).collect();
        let requested: Vec<&str> = request.vnfc_instance_id.iter().map(String::as_str).collect();
        for id in &requested {
            if !resources.contains(id) && !vnfc_info.iter().any(|entry| entry.id == *id) {
                return Err(CoreError::BadRequest(format!("vnfcInstanceId({id}) does not exist.")));
            }
        }
        let vnfc_resource_ids = resources
            .into_iter()
            .filter(|id| {
                requested.is_empty()
                    || requested.contains(id)
                    || vnfc_info.iter().any(|entry| {
                        entry.vnfc_resource_info_id.as_deref() == Some(*id) && requested.contains(&entry.id.as_str())
                    })
            })
            .map(str::to_owned)
            .collect();
        let deployment = recorded_plan(vnfd, self.instance)?;
        Ok(self.finish(Some(InfraWork::Heal { vnfc_resource_ids }), Some(deployment)))
    }

    fn operate(self, vnfd: &Vnfd) -> Result<OperationPlan, CoreError> {
        let request: OperateVnfRequest = request_as(self.params)?;
        let target = request.change_state_to.unwrap_or_else(|| "STARTED".to_owned());
        let current = self.info().vnf_state.as_deref().unwrap_or("STARTED");
        if target == current {
            return Err(CoreError::Conflict(format!("The VNF is already {current}.")));
        }
        let deployment = recorded_plan(vnfd, self.instance)?;
        Ok(self.finish(Some(InfraWork::Operate { change_state_to: target }), Some(deployment)))
    }

    fn change_flavour(mut self, vnfd: &Vnfd) -> Result<OperationPlan, CoreError> {
        let request: ChangeVnfFlavourRequest = request_as(self.params)?;
        let flavour_id = request.new_flavour_id.as_str();
        if flavour_id == self.flavour_id() {
            return Err(CoreError::BadRequest(format!("The VNF instance already has flavour {flavour_id}.")));
        }
        let modules = requested_modules(vnfd, flavour_id, request.selected_deployable_module.as_ref())?;
        let size = TargetSize {
            instantiation_level_id: request.instantiation_level_id.as_deref(),
            target_scale_level_info: request.target_scale_level_info.as_ref(),
        };
        let deployment = plan::for_target_size(vnfd, flavour_id, size, &recorded_ext(self.instance), &modules)?;
        if let Some(info) = &mut self.target.instantiated_vnf_info {
            info.selected_deployable_module = (!modules.is_empty()).then(|| json!(modules));
        }
        Ok(self.realize(deployment))
    }

    /// SELECT_DEPL_MODS (SOL003 V4.5.1): the selected modules' VDUs get VNFCs (as many as
    /// the scale levels, `targetScaleLevelInfo` applied, give them), the VDUs of modules no
    /// longer selected lose theirs.
    fn select_depl_mods(mut self, vnfd: &Vnfd) -> Result<OperationPlan, CoreError> {
        let flavour = plan::flavour(vnfd, self.flavour_id())?;
        if flavour.deployable_modules.is_empty() {
            return Err(CoreError::Conflict(format!(
                "Flavour {} of the VNFD declares no deployable modules.",
                flavour.id
            )));
        }
        let request: SelectVnfDeployableModulesRequest = request_as(self.params)?;
        let Some(selected) = plan::requested_modules(flavour, request.selected_deployable_module.as_ref())? else {
            return Err(CoreError::BadRequest("selectedDeployableModule is required.".into()));
        };
        let info = self.info();
        let current = plan::current_levels(info);
        let levels = match &request.target_scale_level_info {
            Some(scale_info) => plan::levels_to(flavour, &current, None, plan::scale_infos(scale_info).as_deref())?,
            None => current,
        };
        let mut counts = plan::current_counts(info);
        let at_levels = flavour.vdu_instances_at(&levels).unwrap_or_default();
        let was_selected = plan::module_vdus(flavour, &plan::current_modules(info));
        for vdu_id in plan::module_vdus(flavour, &selected) {
            if !was_selected.contains(&vdu_id) || counts.get(&vdu_id).copied().unwrap_or(0) == 0 {
                let min = flavour.vdu(&vdu_id).map_or(1, |vdu| vdu.vdu_profile.min_number_of_instances);
                counts.insert(vdu_id.clone(), at_levels.get(&vdu_id).copied().unwrap_or(min).max(min));
            }
        }
        plan::deselect(flavour, &mut counts, &selected);
        let deployment =
            plan::replan(flavour, &plan::current_counts(info), counts, levels, &recorded_ext(self.instance))?;
        self.target.instantiated_vnf_info.get_or_insert_with(Default::default).selected_deployable_module =
            Some(json!(selected));
        Ok(self.realize(deployment))
    }

    fn change_ext_conn(mut self, vnfd: &Vnfd) -> Result<OperationPlan, CoreError> {
        let request: CommonRequestMembers = request_as(self.params)?;
        self.merge_vim_connections(request.vim_connection_info.as_ref());
        let ext = ExtConnectivity::from_params(self.params);
        let flavour = plan::flavour(vnfd, self.flavour_id())?;
        let info = self.info();
        let counts = plan::current_counts(info);
        let deployment = plan::replan(flavour, &counts, counts.clone(), plan::current_levels(info), &ext)?;
        self.record_ext(&ext);
        let mut plan = self.realize(deployment);
        plan.changes_ext_connectivity = true;
        Ok(plan)
    }

    fn change_vnfpkg(mut self, record: PackageRecord, contents: &PackageContents) -> Result<OperationPlan, CoreError> {
        let flavour_id = self.flavour_id();
        let vnfd_id = &contents.vnfd.descriptor_id;
        let Some(flavour) = contents.vnfd.flavour(flavour_id) else {
            return Err(CoreError::BadRequest(format!(
                "The VNFD of vnfdId {vnfd_id} has no flavour {flavour_id}, the instance's flavour."
            )));
        };
        let info = self.info();
        let counts = plan::current_counts(info);
        let deployment =
            plan::replan(flavour, &counts, counts.clone(), plan::current_levels(info), &recorded_ext(self.instance))?;
        let identity = package_identity(&contents.vnfd);
        identity.apply(&mut self.target);
        self.package = Some(record.id);
        let mut plan = self.realize(deployment);
        plan.changed_info = Some(changed_info(&VnfInfoModifications { package: Some(identity), ..Default::default() }));
        Ok(plan)
    }

    /// MODIFY_INFO changes documents only. Tacker refuses vimConnectionInfo changes of a
    /// NOT_INSTANTIATED instance; SOL003 allows them, and so do we.
    fn modify_info(
        mut self,
        vnfd: Option<&Vnfd>,
        new_package: Option<vnfd::Loaded>,
    ) -> Result<OperationPlan, CoreError> {
        let request: VnfInfoModificationRequest = request_as(self.params)?;
        let mut changed = VnfInfoModifications::default();
        if let Some(name) = &request.vnf_instance_name {
            self.target.vnf_instance_name = Some(name.clone());
            changed.vnf_instance_name = Some(name.clone());
        }
        if let Some(description) = &request.vnf_instance_description {
            self.target.vnf_instance_description = Some(description.clone());
            changed.vnf_instance_description = Some(description.clone());
        }
        for (member, patch, change) in [
            (&mut self.target.metadata, &request.metadata, &mut changed.metadata),
            (&mut self.target.extensions, &request.extensions, &mut changed.extensions),
            (
                &mut self.target.vnf_configurable_properties,
                &request.vnf_configurable_properties,
                &mut changed.vnf_configurable_properties,
            ),
        ] {
            if let Some(patch) = patch {
                merge_patch(member.get_or_insert(Value::Null), patch);
                *change = Some(patch.clone());
            }
        }
        if let Some(requested) = &request.vim_connection_info {
            self.merge_vim_connections(Some(requested));
            changed.vim_connection_info = Some(requested.clone());
        }
        if let Some(ids) = &request.vim_connection_info_delete_ids
            && let Some(list) = self.target.vim_connection_info.as_mut().and_then(Value::as_array_mut)
        {
            list.retain(|entry| !ids.contains(&crate::shapes::entry_id(entry)));
            changed.vim_connection_info_delete_ids = Some(ids.clone());
        }
        if let Some((record, contents)) = new_package {
            let identity = package_identity(&contents.vnfd);
            identity.apply(&mut self.target);
            changed.package = Some(identity);
            self.package = Some(record.id);
        }
        let deployment = match vnfd {
            Some(vnfd) if self.instance.is_instantiated() => recorded_plan(vnfd, self.instance).ok(),
            _ => None,
        };
        let mut plan = self.finish(None, deployment);
        plan.changed_info = Some(changed_info(&changed));
        Ok(plan)
    }
}

/// `changedInfo` (SOL003 VnfInfoModifications) as the occurrence's JSON.
fn changed_info(changed: &VnfInfoModifications) -> Value {
    serde_json::to_value(changed).unwrap_or_default()
}

/// The VNFD identity attributes of a VnfInstance.
fn package_identity(vnfd: &Vnfd) -> PackageIdentity {
    PackageIdentity {
        vnfd_id: vnfd.descriptor_id.clone(),
        vnf_provider: vnfd.provider.clone(),
        vnf_product_name: vnfd.product_name.clone(),
        vnf_software_version: vnfd.software_version.clone(),
        vnfd_version: vnfd.descriptor_version.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PRIVATE_KEY;

    #[test]
    fn plans_survive_storage() {
        let plan = OperationPlan {
            infra: Some(InfraWork::Heal { vnfc_resource_ids: vec!["a".into()] }),
            target: json!({"id": "i"}),
            deployment: None,
            new_package_id: Some("p".into()),
            changed_info: None,
            changes_ext_connectivity: false,
            vim: None,
        };
        let mut op = json!({"id": "o", PRIVATE_KEY: {"inventory": {}}});
        plan.store(&mut op, false);
        assert_eq!(OperationPlan::stored(&op, false), Some(plan));
        assert_eq!(OperationPlan::stored(&op, true), None);
        assert!(op[PRIVATE_KEY].get("inventory").is_some(), "storing keeps other bookkeeping");
    }
}
