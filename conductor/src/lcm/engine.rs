//! The SOL003 operation state machine, shared by `VnflcmDriverV1` and `VnflcmDriverV2`.
//!
//! STARTING → PROCESSING → COMPLETED | FAILED_TEMP; a failure before PROCESSING (the
//! grant check) → ROLLED_BACK; retry: FAILED_TEMP → PROCESSING → …; rollback:
//! FAILED_TEMP → ROLLING_BACK → ROLLED_BACK | FAILED_TEMP; cancel: STARTING →
//! ROLLED_BACK, PROCESSING / ROLLING_BACK → FAILED_TEMP. Every transition is one
//! transaction that writes the occurrence (`stateEnteredTime` included), the instance
//! when it changes, and the notification outbox rows; it only succeeds while this
//! conductor still owns the occurrence.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor, OpOccRecord};
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::repo::{outbox, to_text};
use solgate_db::{DbError, write_transaction};
use solgate_drivers::{DeploymentPlan, InfraAction, InfraContext, InfraDriver, Inventory, VimConnection};
use solgate_vnfpkg::{PackageContents, Vnfd};

use crate::context::{ConductorContext, ConductorError};
use solgate_core::instance::{self, inventory_of, resource_changes};
use solgate_core::merge_patch;
use solgate_core::notify::{self, Event};
use solgate_core::op_occ::{self, COMPLETED, FAILED_TEMP, PROCESSING, ROLLED_BACK, ROLLING_BACK, STARTING};
use solgate_core::plan::{self, ExtConnectivity, PlanError};
use solgate_core::shapes::{self, LcmShapes};
use solgate_core::{PRIVATE_KEY, now, vnfd, without_private};

/// An occurrence this conductor took up, and which work it took up. While it lives, the
/// occurrence counts as running here (recovery leaves it alone).
pub struct Claimed {
    pub op: OpOccRecord,
    pub action: String,
    _running: crate::context::RunningGuard,
}

fn lease_until(ctx: &ConductorContext) -> String {
    let lease = chrono::Duration::seconds(i64::try_from(ctx.settings.lease_timeout_secs).unwrap_or(30));
    to_text(chrono::Utc::now() + lease)
}

/// Claims the pending work of an occurrence (idempotent: a repeated message claims
/// nothing) and drops its outbox rows, in one transaction. The RPC message may be
/// acknowledged once this returns.
pub async fn claim(ctx: &ConductorContext, major: LcmMajor, op_id: &str) -> Result<Option<Claimed>, ConductorError> {
    // Marked running before the claim commits, so recovery never sees it owned by us
    // and not running.
    let running = ctx.running.enter(op_id);
    let id = op_id.to_owned();
    let owner = ctx.id.clone();
    let lease = lease_until(ctx);
    ctx.db_run(move |conn| {
        write_transaction(conn, |conn| {
            let claimed = lcm::claim_op(conn, major, &id, &owner, &lease)?;
            let stale =
                claimed.is_none() && lcm::find_op(conn, major, &id)?.is_none_or(|op| op.pending_action.is_none());
            if claimed.is_some() || stale {
                outbox::complete(conn, &id)?;
            }
            Ok::<_, DbError>(claimed.map(|mut op| {
                // The row no longer has pending work; neither may the record we write back.
                let action = op.pending_action.take().unwrap_or_default();
                (op, action)
            }))
        })
    })
    .await
    .map(|claimed| claimed.map(|(op, action)| Claimed { op, action, _running: running }))
}

/// Everything one run needs.
struct Job {
    ctx: Arc<ConductorContext>,
    shapes: &'static dyn LcmShapes,
    major: LcmMajor,
    op: OpOccRecord,
    instance: InstanceRecord,
    package: Option<(PackageRecord, PackageContents)>,
}

/// What an operation does, worked out before it starts.
struct Prepared {
    /// The infra work, with the driver and VIM connection chosen.
    infra: Option<(Arc<dyn InfraDriver>, VimConnection, PreparedAction)>,
    /// The instance document after success, except `instantiatedVnfInfo`'s inventory part.
    target: Value,
    /// The plan the instance follows afterwards (None when not instantiated afterwards).
    plan: Option<DeploymentPlan>,
    /// The VNFD (and package) the instance uses afterwards.
    package: Option<(PackageRecord, PackageContents)>,
    /// `changedInfo` of MODIFY_INFO / CHANGE_VNFPKG.
    changed_info: Option<Value>,
    /// Whether the operation changes external connectivity (CHANGE_EXT_CONN).
    changes_ext_connectivity: bool,
}

enum PreparedAction {
    Realize(DeploymentPlan),
    Heal(DeploymentPlan, Vec<String>),
    Operate(String),
    Teardown,
}

/// Why an operation cannot go on; becomes the occurrence's `error`.
struct Failure {
    status: u16,
    title: &'static str,
    detail: String,
}

impl Failure {
    fn bad(detail: impl Into<String>) -> Self {
        Self { status: 422, title: "Unprocessable Entity", detail: detail.into() }
    }

    fn internal(detail: impl Into<String>) -> Self {
        Self { status: 500, title: "Internal Server Error", detail: detail.into() }
    }

    fn problem(&self) -> Value {
        op_occ::problem(self.status, self.title, &self.detail)
    }
}

impl From<PlanError> for Failure {
    fn from(error: PlanError) -> Self {
        Failure::bad(error.to_string())
    }
}

pub async fn run(ctx: &Arc<ConductorContext>, major: LcmMajor, claimed: Claimed) -> Result<(), ConductorError> {
    let shapes = shapes::for_major(major);
    let instance_id = claimed.op.vnf_instance_id().to_owned();
    let loaded = ctx
        .db_run(move |conn| {
            let Some(instance) = lcm::find_instance(conn, major, &instance_id)? else { return Ok(None) };
            let package = vnfd::load(conn, &instance.vnf_pkg_id)?;
            Ok(Some((instance, package)))
        })
        .await?;
    ctx.metrics.running.inc();
    let result = match loaded {
        None => {
            // Deleting an instance with an operation in flight is refused, so this is a bug
            // or manual database surgery; leave the occurrence retryable.
            let job_op = claimed.op.clone();
            tracing::error!(op = %job_op.id, "VNF instance of the operation is gone");
            Ok(())
        }
        Some((instance, package)) => {
            let job = Job { ctx: ctx.clone(), shapes, major, op: claimed.op, instance, package };
            match claimed.action.as_str() {
                op_occ::ACTION_START => Box::pin(start(job)).await,
                op_occ::ACTION_RETRY => Box::pin(retry(job)).await,
                op_occ::ACTION_ROLLBACK => Box::pin(rollback(job)).await,
                other => {
                    tracing::warn!(action = other, "unknown pending action");
                    Ok(())
                }
            }
        }
    };
    ctx.metrics.running.dec();
    result
}

async fn start(mut job: Job) -> Result<(), ConductorError> {
    let state = job.op.state().to_owned();
    if state == STARTING {
        if job.op.body["isCancelPending"] == true {
            let failure = Failure::internal("The LCM operation was cancelled.");
            return transition(&mut job, ROLLED_BACK, Some(failure), None).await;
        }
        let prepared = match prepare(&job).await {
            Ok(prepared) => prepared,
            // The local NFVO's grant refused it: nothing was done, so ROLLED_BACK.
            Err(failure) => return transition(&mut job, ROLLED_BACK, Some(failure), None).await,
        };
        let grant = grant_for(&job, &prepared);
        job.op.body["grantId"] = grant["id"].clone();
        transition(&mut job, PROCESSING, None, Some(grant)).await?;
        let current = inventory_of(&job.instance.body);
        execute(job, prepared, current).await
    } else if state == PROCESSING {
        // MODIFY_INFO is created in PROCESSING.
        match prepare(&job).await {
            Ok(prepared) => {
                let current = inventory_of(&job.instance.body);
                execute(job, prepared, current).await
            }
            Err(failure) => transition(&mut job, FAILED_TEMP, Some(failure), None).await,
        }
    } else {
        tracing::warn!(op = %job.op.id, %state, "start requested in an unexpected state");
        Ok(())
    }
}

async fn retry(mut job: Job) -> Result<(), ConductorError> {
    if job.op.state() != FAILED_TEMP {
        return Ok(());
    }
    job.op.attempt += 1;
    let current = partial_inventory(&job.op).unwrap_or_else(|| inventory_of(&job.instance.body));
    let prepared = prepare(&job).await;
    transition(&mut job, PROCESSING, None, None).await?;
    match prepared {
        Ok(prepared) => execute(job, prepared, current).await,
        Err(failure) => transition(&mut job, FAILED_TEMP, Some(failure), None).await,
    }
}

async fn rollback(mut job: Job) -> Result<(), ConductorError> {
    if job.op.state() != FAILED_TEMP {
        return Ok(());
    }
    transition(&mut job, ROLLING_BACK, None, None).await?;
    let current = partial_inventory(&job.op).unwrap_or_else(|| inventory_of(&job.instance.body));
    match prepare_rollback(&job) {
        Ok(prepared) => execute(job, prepared, current).await,
        Err(failure) => transition(&mut job, FAILED_TEMP, Some(failure), None).await,
    }
}

fn partial_inventory(op: &OpOccRecord) -> Option<Inventory> {
    serde_json::from_value(op.body[PRIVATE_KEY]["inventory"].clone()).ok()
}

/// The VIM connection an operation uses: the first of the instance's (after the
/// request's are merged in), or the local simulated VIM when it has none.
fn choose_vim(job: &Job, target: &Value) -> Result<(Arc<dyn InfraDriver>, VimConnection), Failure> {
    let connections = job.shapes.vim_connections(&target["vimConnectionInfo"]);
    let vim = connections.into_iter().next().unwrap_or_else(|| VimConnection {
        id: "local".to_owned(),
        vim_type: solgate_drivers::infra::VIM_TYPE_LOCAL.to_owned(),
        ..VimConnection::default()
    });
    let driver = job
        .ctx
        .infra
        .get(vim.normalized_vim_type())
        .ok_or_else(|| Failure::bad(format!("vimType {} is not supported.", vim.vim_type)))?;
    Ok((driver, vim))
}

/// The instance's own plan: its flavour, VDU counts and scale levels as recorded.
fn recorded_plan(vnfd: &Vnfd, instance: &Value) -> Result<DeploymentPlan, Failure> {
    let info = &instance["instantiatedVnfInfo"];
    let flavour = plan::flavour(vnfd, info["flavourId"].as_str().unwrap_or_default())?;
    let ext = recorded_ext(instance);
    Ok(plan::plan(flavour, plan::current_counts(info), plan::current_levels(info), &ext)?)
}

fn recorded_ext(instance: &Value) -> ExtConnectivity {
    let private = &instance[PRIVATE_KEY];
    ExtConnectivity {
        ext_virtual_links: private.get("extVirtualLinks").cloned().unwrap_or_else(|| json!([])),
        ext_managed_virtual_links: private.get("extManagedVirtualLinks").cloned().unwrap_or_else(|| json!([])),
    }
}

fn record_ext(target: &mut Value, ext: &ExtConnectivity) {
    if !target[PRIVATE_KEY].is_object() {
        target[PRIVATE_KEY] = json!({});
    }
    target[PRIVATE_KEY]["extVirtualLinks"] = ext.ext_virtual_links.clone();
    target[PRIVATE_KEY]["extManagedVirtualLinks"] = ext.ext_managed_virtual_links.clone();
}

async fn load_package_by_vnfd(job: &Job, vnfd_id: &str) -> Result<(PackageRecord, PackageContents), Failure> {
    let wanted = vnfd_id.to_owned();
    job.ctx
        .db_run(move |conn| vnfd::load_by_vnfd_id(conn, &wanted))
        .await
        .map_err(|error| Failure::internal(error.to_string()))?
        .ok_or_else(|| Failure::bad(format!("VnfPackage of vnfdId {vnfd_id} is not found or not operational.")))
}

fn apply_package(target: &mut Value, contents: &PackageContents) {
    let vnfd = &contents.vnfd;
    target["vnfdId"] = json!(vnfd.descriptor_id);
    target["vnfProvider"] = json!(vnfd.provider);
    target["vnfProductName"] = json!(vnfd.product_name);
    target["vnfSoftwareVersion"] = json!(vnfd.software_version);
    target["vnfdVersion"] = json!(vnfd.descriptor_version);
}

async fn prepare(job: &Job) -> Result<Prepared, Failure> {
    let params = job.op.body["operationParams"].clone();
    let operation = job.op.operation().to_owned();
    let mut target = job.instance.body.clone();
    let Some((_, contents)) = job.package.clone() else {
        return Err(Failure::bad("The VNF package of the instance is not onboarded."));
    };
    let vnfd = contents.vnfd.clone();
    let mut package = job.package.clone();
    let mut changed_info = None;
    let mut changes_ext_connectivity = false;

    let (action, plan) = match operation.as_str() {
        "INSTANTIATE" => {
            job.shapes.merge_vim_connections(&mut target, &params["vimConnectionInfo"]);
            for key in ["vnfConfigurableProperties", "extensions"] {
                if let Some(patch) = params.get(key) {
                    merge_patch(&mut target[key], patch);
                }
            }
            let ext = ExtConnectivity::from_params(&params);
            let plan = plan::for_instantiation(
                &vnfd,
                params["flavourId"].as_str().unwrap_or_default(),
                params["instantiationLevelId"].as_str(),
                &ext,
            )?;
            record_ext(&mut target, &ext);
            target["instantiationState"] = json!("INSTANTIATED");
            let mut previous = json!({});
            if let Some(language) = params.get("localizationLanguage") {
                previous["localizationLanguage"] = language.clone();
            }
            target["instantiatedVnfInfo"] = previous;
            (Some(PreparedAction::Realize(plan.clone())), Some(plan))
        }
        "TERMINATE" => {
            target["instantiationState"] = json!("NOT_INSTANTIATED");
            if let Value::Object(map) = &mut target {
                map.shift_remove("instantiatedVnfInfo");
                if let Some(Value::Object(private)) = map.get_mut(PRIVATE_KEY) {
                    private.clear();
                }
            }
            (Some(PreparedAction::Teardown), None)
        }
        "SCALE" | "SCALE_TO_LEVEL" => {
            let info = &job.instance.body["instantiatedVnfInfo"];
            let flavour = plan::flavour(&vnfd, info["flavourId"].as_str().unwrap_or_default())?;
            let current = plan::current_levels(info);
            let levels = if operation == "SCALE" {
                plan::scaled_levels(flavour, &current, &params)?
            } else {
                plan::levels_to(flavour, &current, &params)?
            };
            let counts = match params["instantiationLevelId"].as_str() {
                Some(level) if operation == "SCALE_TO_LEVEL" => {
                    flavour.initial_vdu_instances(Some(level)).unwrap_or_default()
                }
                _ => plan::rescaled_counts(flavour, &plan::current_counts(info), &current, &levels),
            };
            let plan = plan::plan(flavour, counts, levels, &recorded_ext(&job.instance.body))?;
            (Some(PreparedAction::Realize(plan.clone())), Some(plan))
        }
        "HEAL" => {
            let plan = recorded_plan(&vnfd, &job.instance.body)?;
            let info = &job.instance.body["instantiatedVnfInfo"];
            let requested: Vec<&str> =
                params["vnfcInstanceId"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            // vnfcInstanceId names vnfcResourceInfo entries (or, Tacker's way, vnfcInfo
            // entries, which point to them); the driver heals those resources.
            let resource_ids: Vec<String> = info["vnfcResourceInfo"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|vnfc| vnfc["id"].as_str())
                .filter(|id| {
                    requested.is_empty()
                        || requested.contains(id)
                        || info["vnfcInfo"].as_array().into_iter().flatten().any(|entry| {
                            entry["vnfcResourceInfoId"] == *id
                                && requested.contains(&entry["id"].as_str().unwrap_or_default())
                        })
                })
                .map(str::to_owned)
                .collect();
            (Some(PreparedAction::Heal(plan.clone(), resource_ids)), Some(plan))
        }
        "OPERATE" => {
            let plan = recorded_plan(&vnfd, &job.instance.body)?;
            let state = params["changeStateTo"].as_str().unwrap_or("STARTED").to_owned();
            (Some(PreparedAction::Operate(state)), Some(plan))
        }
        "CHANGE_FLAVOUR" => {
            let ext = recorded_ext(&job.instance.body);
            let plan = plan::for_instantiation(
                &vnfd,
                params["newFlavourId"].as_str().unwrap_or_default(),
                params["instantiationLevelId"].as_str(),
                &ext,
            )?;
            (Some(PreparedAction::Realize(plan.clone())), Some(plan))
        }
        "CHANGE_EXT_CONN" => {
            job.shapes.merge_vim_connections(&mut target, &params["vimConnectionInfo"]);
            let ext = ExtConnectivity::from_params(&params);
            let info = &job.instance.body["instantiatedVnfInfo"];
            let flavour = plan::flavour(&vnfd, info["flavourId"].as_str().unwrap_or_default())?;
            let plan = plan::plan(flavour, plan::current_counts(info), plan::current_levels(info), &ext)?;
            record_ext(&mut target, &ext);
            changes_ext_connectivity = true;
            (Some(PreparedAction::Realize(plan.clone())), Some(plan))
        }
        "CHANGE_VNFPKG" => {
            let new_vnfd_id = params["vnfdId"].as_str().unwrap_or_default();
            let (record, new_contents) = load_package_by_vnfd(job, new_vnfd_id).await?;
            let info = &job.instance.body["instantiatedVnfInfo"];
            let flavour = plan::flavour(&new_contents.vnfd, info["flavourId"].as_str().unwrap_or_default())?;
            let plan = plan::plan(
                flavour,
                plan::current_counts(info),
                plan::current_levels(info),
                &recorded_ext(&job.instance.body),
            )?;
            apply_package(&mut target, &new_contents);
            changed_info = Some(json!({
                "vnfdId": new_contents.vnfd.descriptor_id,
                "vnfProvider": new_contents.vnfd.provider,
                "vnfProductName": new_contents.vnfd.product_name,
                "vnfSoftwareVersion": new_contents.vnfd.software_version,
                "vnfdVersion": new_contents.vnfd.descriptor_version,
            }));
            package = Some((record, new_contents));
            (Some(PreparedAction::Realize(plan.clone())), Some(plan))
        }
        "MODIFY_INFO" => {
            let mut changed = serde_json::Map::new();
            for key in ["vnfInstanceName", "vnfInstanceDescription"] {
                if let Some(value) = params.get(key) {
                    target[key] = value.clone();
                    changed.insert(key.to_owned(), value.clone());
                }
            }
            for key in ["metadata", "extensions", "vnfConfigurableProperties"] {
                if let Some(patch) = params.get(key) {
                    merge_patch(&mut target[key], patch);
                    changed.insert(key.to_owned(), patch.clone());
                }
            }
            if let Some(requested) = params.get("vimConnectionInfo") {
                job.shapes.merge_vim_connections(&mut target, requested);
                changed.insert("vimConnectionInfo".to_owned(), requested.clone());
            }
            if let Some(ids) = params["vimConnectionInfoDeleteIds"].as_array()
                && let Some(list) = target["vimConnectionInfo"].as_array_mut()
            {
                list.retain(|entry| !ids.contains(&entry["id"]));
                changed.insert("vimConnectionInfoDeleteIds".to_owned(), json!(ids));
            }
            if let Some(new_vnfd_id) = params["vnfdId"].as_str()
                && new_vnfd_id != job.instance.body["vnfdId"].as_str().unwrap_or_default()
            {
                let (record, new_contents) = load_package_by_vnfd(job, new_vnfd_id).await?;
                apply_package(&mut target, &new_contents);
                for key in ["vnfdId", "vnfProvider", "vnfProductName", "vnfSoftwareVersion", "vnfdVersion"] {
                    changed.insert(key.to_owned(), target[key].clone());
                }
                package = Some((record, new_contents));
            }
            changed_info = Some(Value::Object(changed));
            let plan = if job.instance.body["instantiationState"] == "INSTANTIATED" {
                recorded_plan(&vnfd, &job.instance.body).ok()
            } else {
                None
            };
            (None, plan)
        }
        other => return Err(Failure::bad(format!("Operation {other} is not supported."))),
    };

    let infra = match action {
        Some(action) => {
            // Termination uses the connection the instance was instantiated with.
            let (driver, vim) = choose_vim(job, &target)?;
            Some((driver, vim, action))
        }
        None => None,
    };
    Ok(Prepared { infra, target, plan, package, changed_info, changes_ext_connectivity })
}

/// Rollback: make the VIM match the instance as recorded before the operation (nothing,
/// when it was not instantiated).
fn prepare_rollback(job: &Job) -> Result<Prepared, Failure> {
    let params = &job.op.body["operationParams"];
    if !op_occ::rollback_supported(job.op.operation(), params) {
        return Err(Failure::bad(format!("Rollback of {} is not supported.", job.op.operation())));
    }
    let target = job.instance.body.clone();
    let Some((_, contents)) = job.package.clone() else {
        return Err(Failure::bad("The VNF package of the instance is not onboarded."));
    };
    if job.op.operation() == "MODIFY_INFO" {
        return Ok(Prepared {
            infra: None,
            target,
            plan: None,
            package: job.package.clone(),
            changed_info: None,
            changes_ext_connectivity: false,
        });
    }
    let instantiated = target["instantiationState"] == "INSTANTIATED";
    let (action, plan) = if instantiated {
        let plan = recorded_plan(&contents.vnfd, &target)?;
        (PreparedAction::Realize(plan.clone()), Some(plan))
    } else {
        (PreparedAction::Teardown, None)
    };
    // An instantiation that failed may have left its VIM connection only in the request.
    let mut vim_source = target.clone();
    job.shapes.merge_vim_connections(&mut vim_source, &params["vimConnectionInfo"]);
    let (driver, vim) = choose_vim(job, &vim_source)?;
    Ok(Prepared {
        infra: Some((driver, vim, action)),
        target,
        plan,
        package: job.package.clone(),
        changed_info: None,
        changes_ext_connectivity: false,
    })
}

/// The local NFVO's grant: which resources the operation adds and removes (SOL003 Grant,
/// simplified), kept while the occurrence is not final.
fn grant_for(job: &Job, prepared: &Prepared) -> Value {
    let before = plan::current_counts(&job.instance.body["instantiatedVnfInfo"]);
    let after: BTreeMap<String, u32> = match &prepared.infra {
        Some((_, _, PreparedAction::Teardown)) => BTreeMap::new(),
        _ => prepared
            .plan
            .as_ref()
            .map(|plan| plan.vdus.iter().map(|vdu| (vdu.vdu_id.clone(), vdu.count)).collect())
            .unwrap_or_else(|| before.clone()),
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
        "id": uuid::Uuid::new_v4().to_string(),
        "vnfInstanceId": job.instance.id,
        "vnfLcmOpOccId": job.op.id,
        "operation": job.op.operation(),
        "addResources": add,
        "removeResources": remove,
    })
}

/// Runs the infra work (watching for a cancel request) and records the outcome.
async fn execute(mut job: Job, prepared: Prepared, current: Inventory) -> Result<(), ConductorError> {
    let rolling_back = job.op.state() == ROLLING_BACK;
    let outcome = match &prepared.infra {
        None => Ok(current.clone()),
        Some((driver, vim, action)) => {
            let cancelled = Arc::new(AtomicBool::new(false));
            let watcher = spawn_cancel_watcher(&job, cancelled.clone());
            let vnfd = prepared.package.as_ref().map(|(_, contents)| contents.vnfd.clone());
            let package_dir = prepared.package.as_ref().map(|(record, _)| job.ctx.package_dir(&record.id));
            let additional = job.op.body["operationParams"]["additionalParams"].clone();
            let additional = if additional.is_object() { additional } else { json!({}) };
            let flag = cancelled.clone();
            let is_cancelled = move || flag.load(Ordering::Relaxed);
            let result = match vnfd {
                None => Err(solgate_drivers::DriverError::new("The VNF package of the instance is not onboarded.")),
                Some(vnfd) => {
                    let ctx = InfraContext {
                        instance_id: &job.instance.id,
                        vim,
                        vnfd: &vnfd,
                        package_dir: package_dir.as_deref(),
                        current: &current,
                        additional_params: &additional,
                        attempt: u32::try_from(job.op.attempt.max(1)).unwrap_or(1),
                        cancelled: &is_cancelled,
                    };
                    let action = match action {
                        PreparedAction::Realize(plan) => InfraAction::Realize { plan },
                        PreparedAction::Heal(plan, ids) => InfraAction::Heal { plan, vnfc_ids: ids },
                        PreparedAction::Operate(state) => InfraAction::Operate { change_state_to: state },
                        PreparedAction::Teardown => InfraAction::Teardown,
                    };
                    tracing::info!(op = %job.op.id, operation = job.op.operation(), action = action.name(), vim = %vim.id, "running infra action");
                    driver.execute(ctx, action).await
                }
            };
            watcher.abort();
            result
        }
    };
    match outcome {
        Ok(inventory) => finish(&mut job, prepared, current, inventory, rolling_back).await,
        Err(error) => {
            let partial = error.partial.map(|boxed| *boxed).unwrap_or(current);
            job.op.body[PRIVATE_KEY] = json!({ "inventory": partial });
            let failure = if error.cancelled {
                Failure::internal(format!("The LCM operation was cancelled: {}", error.message))
            } else {
                Failure::internal(error.message)
            };
            transition(&mut job, FAILED_TEMP, Some(failure), None).await
        }
    }
}

fn spawn_cancel_watcher(job: &Job, cancelled: Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    let ctx = job.ctx.clone();
    let major = job.major;
    let op_id = job.op.id.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let id = op_id.clone();
            if let Ok(Some(op)) = ctx.db_run(move |conn| lcm::find_op(conn, major, &id)).await
                && op.body["isCancelPending"] == true
            {
                cancelled.store(true, Ordering::Relaxed);
                return;
            }
        }
    })
}

/// Success: the instance takes its new shape and the occurrence becomes COMPLETED (or
/// ROLLED_BACK after a rollback).
async fn finish(
    job: &mut Job,
    prepared: Prepared,
    before: Inventory,
    inventory: Inventory,
    rolling_back: bool,
) -> Result<(), ConductorError> {
    let mut target = prepared.target;
    if target["instantiationState"] == "INSTANTIATED"
        && let (Some(plan), Some((_, contents))) = (&prepared.plan, &prepared.package)
    {
        let previous = target["instantiatedVnfInfo"].clone();
        let previous = if previous.is_object() { previous } else { job.instance.body["instantiatedVnfInfo"].clone() };
        target["instantiatedVnfInfo"] = instance::instantiated_info(&contents.vnfd, plan, &inventory, &previous);
        instance::set_vim_state(&mut target, &inventory);
    }
    let original = inventory_of(&job.instance.body);
    let changes = resource_changes(if rolling_back { &original } else { &before }, &inventory);
    if !inventory.is_empty() || !before.is_empty() || !original.is_empty() {
        job.op.body["resourceChanges"] = changes;
    }
    if let Some(changed) = prepared.changed_info {
        job.op.body["changedInfo"] = changed;
    }
    if prepared.changes_ext_connectivity {
        job.op.body["changedExtConnectivity"] = target["instantiatedVnfInfo"]["extVirtualLinkInfo"].clone();
    }
    if let Value::Object(map) = &mut job.op.body {
        map.shift_remove(PRIVATE_KEY);
    }
    let old_package = job.instance.vnf_pkg_id.clone();
    let new_package =
        prepared.package.as_ref().map(|(record, _)| record.id.clone()).unwrap_or_else(|| old_package.clone());
    let mut instance = job.instance.clone();
    instance.body = target;
    instance.vnf_pkg_id = new_package.clone();
    let final_state = if rolling_back { ROLLED_BACK } else { COMPLETED };
    let packages = if old_package == new_package { vec![old_package] } else { vec![old_package, new_package] };
    transition_with(job, final_state, None, None, Some((instance, packages))).await
}

/// A transition without an instance change.
async fn transition(
    job: &mut Job,
    state: &str,
    failure: Option<Failure>,
    grant: Option<Value>,
) -> Result<(), ConductorError> {
    transition_with(job, state, failure, grant, None).await
}

/// One state change in one transaction: the occurrence (only while this conductor owns
/// it in the expected state), the instance and package usage when given, the grant, and
/// the notification rows.
async fn transition_with(
    job: &mut Job,
    state: &str,
    failure: Option<Failure>,
    grant: Option<Value>,
    instance_change: Option<(InstanceRecord, Vec<String>)>,
) -> Result<(), ConductorError> {
    let previous_state = job.op.state().to_owned();
    let now = now();
    op_occ::set_state(&mut job.op.body, state, &now);
    match failure {
        Some(failure) => {
            tracing::warn!(op = %job.op.id, state, detail = %failure.detail, "LCM operation failed");
            op_occ::set_error(&mut job.op.body, Some(failure.problem()));
        }
        None if state == PROCESSING || state == COMPLETED => op_occ::set_error(&mut job.op.body, None),
        None => {}
    }
    let running = matches!(state, STARTING | PROCESSING | ROLLING_BACK);
    if !running {
        job.op.owner = None;
        job.op.lease_expires_at = None;
        // A cancel request is answered by leaving the state it was made in.
        job.op.body["isCancelPending"] = json!(false);
    }
    if op_occ::is_final(state) {
        job.op.body.as_object_mut().map(|map| map.shift_remove("cancelMode"));
    }
    let major = job.major;
    let links = job.ctx.links.clone();
    let record = job.op.clone();
    let owner = job.ctx.id.clone();
    let instance_for_event =
        instance_change.as_ref().map(|(record, _)| record.body.clone()).unwrap_or_else(|| job.instance.body.clone());
    let status = op_occ::notification_status(state, job.op.operation(), Some(&previous_state));
    let attempt = || {
        let record = record.clone();
        let owner = owner.clone();
        let previous_state = previous_state.clone();
        let links = links.clone();
        let grant = grant.clone();
        let instance_change = instance_change.clone();
        let instance_for_event = instance_for_event.clone();
        job.ctx.db_run(move |conn| {
            write_transaction(conn, |conn| {
                if !lcm::update_op_guarded(conn, major, &record, Some(&owner), &previous_state)? {
                    return Ok(false);
                }
                if let Some(grant) = &grant {
                    lcm::insert_grant(conn, major, &record.id, grant)?;
                }
                if op_occ::is_final(record.state()) {
                    lcm::delete_grant(conn, major, &record.id)?;
                }
                if let Some((instance, packages)) = &instance_change {
                    lcm::update_instance(conn, major, instance)?;
                    for package in packages {
                        vnf_packages::refresh_usage_state(conn, package)?;
                    }
                }
                let op_view = without_private(record.body.clone());
                let instance_view = without_private(instance_for_event.clone());
                notify::enqueue(conn, major, &links, Event::OpOcc { op: &op_view, instance: &instance_view, status })?;
                Ok::<_, DbError>(true)
            })
        })
    };
    // A transient database failure must not strand the occurrence: try again a few times;
    // if it still fails, the run ends and recovery moves the orphaned occurrence on.
    let mut tries = 0u32;
    let applied = loop {
        match attempt().await {
            Ok(applied) => break applied,
            Err(error) if tries < 5 => {
                tries += 1;
                tracing::warn!(op = %job.op.id, state, %error, tries, "recording a transition failed; retrying");
                tokio::time::sleep(Duration::from_millis(200 * u64::from(tries))).await;
            }
            Err(error) => return Err(error),
        }
    };
    if applied {
        job.ctx.metrics.operations.with_label_values(&[&major.number().to_string(), job.op.operation(), state]).inc();
        tracing::info!(op = %job.op.id, operation = job.op.operation(), state, "LCM operation state changed");
        Ok(())
    } else {
        tracing::warn!(op = %job.op.id, state, "the operation is no longer ours (recovered by another conductor?); stopping");
        Err(ConductorError::Other(format!("lost ownership of {}", job.op.id)))
    }
}
