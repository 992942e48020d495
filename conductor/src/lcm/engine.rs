//! Running LCM operations: a conductor claims an occurrence's pending work and executes
//! the plan stored with it (made when the API accepted it) on the infra driver of its
//! VIM; every state change goes through the domain's one state machine
//! (`solgate_core::lifecycle`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use solgate_core::instance::{self, inventory_of, resource_changes};
use solgate_core::lifecycle::{self, InstanceChange, StateChange};
use solgate_core::op_occ::{self, COMPLETED, FAILED_TEMP, PROCESSING, ROLLED_BACK, ROLLING_BACK, STARTING};
use solgate_core::operation::{InfraWork, NO_VIM, OperationPlan, PlanRequest};
use solgate_core::requests::{CANCELLED, plan_rollback};
use solgate_core::work::TakenUp;
use solgate_core::{CoreError, shapes, vnfd};
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor, OpOccRecord};
use solgate_db::repo::{outbox, to_text};
use solgate_drivers::infra::VIM_TYPE_LOCAL;
use solgate_drivers::{DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VimConnection};
use solgate_model::grant::Grant;
use solgate_vnfpkg::PackageContents;

use crate::context::{ConductorContext, ConductorError};
use crate::lcm::granting::{apply_stored_grant, external_grant};
use crate::lcm::job::{Job, Stop, cancel_pending};
use crate::lcm::scripts;
use crate::lcm::views::{InstanceState, PartialInventory, private_of, set_private, view};
use crate::nfvo::GrantError;

/// An occurrence this conductor took up, and which work it took up. While it lives, the
/// occurrence counts as running here (recovery leaves it alone).
pub struct ClaimedOp {
    pub op: OpOccRecord,
    pub action: String,
    /// Started in the claim's own transaction: its instance and plan (the occurrence is
    /// PROCESSING, with its local grant).
    started: Option<(InstanceRecord, OperationPlan)>,
    _running: crate::context::RunningGuard,
}

pub(crate) fn lease_until(ctx: &ConductorContext) -> String {
    let lease = chrono::Duration::seconds(i64::try_from(ctx.settings.lease_timeout_secs).unwrap_or(30));
    to_text(chrono::Utc::now() + lease)
}

/// Claims the pending work of an occurrence (idempotent: a repeated message claims
/// nothing) and drops its outbox rows, in one transaction. The RPC message may be
/// acknowledged once this returns. A start that needs nothing from outside (a stored plan,
/// a local grant, no cancel requested) also enters PROCESSING in that transaction: one
/// commit fewer, and the instance read with it.
pub async fn claim(ctx: &ConductorContext, major: LcmMajor, op_id: &str) -> Result<Option<ClaimedOp>, ConductorError> {
    // Marked running before the claim commits, so recovery never sees it owned by us
    // and not running.
    let running = ctx.running.enter(op_id);
    let id = op_id.to_owned();
    let owner = ctx.id.clone();
    let lease = lease_until(ctx);
    let (machine, local_grants) = (ctx.machine.clone(), ctx.nfvo.is_none());
    let claimed = solgate_core::db_write(&ctx.db, move |conn| -> Result<_, CoreError> {
        let claimed = lcm::claim_op(conn, major, &id, &owner, &lease)?;
        let stale = claimed.is_none() && lcm::find_op(conn, major, &id)?.is_none_or(|op| op.pending_action.is_none());
        if claimed.is_some() || stale {
            outbox::complete(conn, &id)?;
        }
        let Some(mut op) = claimed else { return Ok(None) };
        // The row no longer has pending work; neither may the record we write back.
        let action = op.pending_action.take().unwrap_or_default();
        let started = if action == op_occ::ACTION_START && local_grants {
            start_in_claim(conn, &machine, major, &mut op, &owner)?
        } else {
            None
        };
        Ok(Some((op, action, started)))
    })
    .await?;
    Ok(claimed.map(|(op, action, started)| {
        ctx.metrics.work_taken.with_label_values(&["message"]).inc();
        if started.is_some() {
            ctx.machine.applied(major, &op, &StateChange::to(PROCESSING));
        }
        ClaimedOp { op, action, started, _running: running }
    }))
}

impl ClaimedOp {
    /// A start the conductor took up in its accepting transaction
    /// ([`solgate_core::requests::accept_taken_in`]), committed; counted as [`claim`] counts
    /// its start.
    pub fn taken_up(
        ctx: &ConductorContext,
        major: LcmMajor,
        taken: TakenUp,
        running: crate::context::RunningGuard,
    ) -> Self {
        ctx.metrics.work_taken.with_label_values(&["accept"]).inc();
        if taken.started.is_some() {
            ctx.machine.applied(major, &taken.op, &StateChange::to(PROCESSING));
        }
        Self { op: taken.op, action: op_occ::ACTION_START.to_owned(), started: taken.started, _running: running }
    }
}

/// STARTING → PROCESSING inside the claim's transaction, when the stored plan and a local
/// grant are all it needs (as [`start`] would do it next): the instance and plan on success,
/// `None` (and no transition written) when [`start`] must take its usual way.
fn start_in_claim(
    conn: &mut solgate_db::AnyConnection,
    machine: &lifecycle::StateMachine,
    major: LcmMajor,
    op: &mut OpOccRecord,
    owner: &str,
) -> Result<Option<(InstanceRecord, OperationPlan)>, CoreError> {
    if op.state() != STARTING || cancel_pending(op) {
        return Ok(None);
    }
    let Some(instance) = lcm::find_instance(conn, major, op.vnf_instance_id())? else { return Ok(None) };
    Ok(machine.start_in(conn, major, op, &instance, owner)?.map(|plan| (instance, plan)))
}

/// The grant an operation starts with: an external NFVO's, stored with the transition, or
/// the local NFVO's, which is not ([`lifecycle::use_local_grant`]).
enum Granted {
    Stored(Box<Grant>),
    Local(Value),
}

pub async fn run(ctx: &Arc<ConductorContext>, major: LcmMajor, claimed: ClaimedOp) -> Result<(), ConductorError> {
    if let Some((instance, plan)) = claimed.started {
        ctx.metrics.running.inc();
        let current = inventory_of(&instance.body);
        let job = Job { ctx: ctx.clone(), major, op: claimed.op, instance };
        let result = Box::pin(execute(job, plan, current)).await;
        ctx.metrics.running.dec();
        return result;
    }
    let instance_id = claimed.op.vnf_instance_id().to_owned();
    let instance = ctx.db_read(move |conn| lcm::find_instance(conn, major, &instance_id)).await?;
    let Some(instance) = instance else {
        // Deleting an instance with an operation in flight is refused, so this is a bug
        // or manual database surgery; leave the occurrence retryable.
        tracing::error!(op = %claimed.op.id, "VNF instance of the operation is gone");
        return Ok(());
    };
    ctx.metrics.running.inc();
    let job = Job { ctx: ctx.clone(), major, op: claimed.op, instance };
    let result = match claimed.action.as_str() {
        op_occ::ACTION_START => Box::pin(start(job)).await,
        op_occ::ACTION_RETRY => Box::pin(retry(job)).await,
        op_occ::ACTION_ROLLBACK => Box::pin(rollback(job)).await,
        other => {
            tracing::warn!(action = other, "unknown pending action");
            Ok(())
        }
    };
    ctx.metrics.running.dec();
    result
}

async fn start(mut job: Job) -> Result<(), ConductorError> {
    let state = job.op.state().to_owned();
    if state == STARTING {
        if cancel_pending(&job.op) {
            let change = StateChange::to(ROLLED_BACK).with_error(409, CANCELLED);
            return transition(&mut job, change).await;
        }
        let mut plan = match plan_of(&job).await {
            Ok(plan) => plan,
            // Nothing was done, so ROLLED_BACK.
            Err(stop) => return transition(&mut job, stop.change(ROLLED_BACK)).await,
        };
        let grant = if job.needs_external_grant() {
            match external_grant(&job, &mut plan, true).await {
                Ok(grant) => grant.map(|grant| Granted::Stored(Box::new(grant))),
                // The NFVO said no: nothing was done (SOL003: ROLLED_BACK before processing).
                Err(GrantError::Rejected(problem)) => {
                    let mut change = StateChange::to(ROLLED_BACK);
                    change.error = Some(problem.to_value());
                    return transition(&mut job, change).await;
                }
                // The NFVO may come back: the client retries (or rolls back).
                Err(GrantError::Unavailable(detail)) => {
                    return transition(&mut job, StateChange::to(FAILED_TEMP).with_error(503, &detail)).await;
                }
            }
        } else {
            Some(Granted::Local(plan.local_grant(
                &job.instance.body,
                &job.instance.id,
                &job.op.id,
                job.op.operation_name(),
            )))
        };
        let mut change = StateChange::to(PROCESSING);
        match grant {
            Some(Granted::Stored(grant)) => record_grant(&mut job, &mut change, &grant),
            Some(Granted::Local(grant)) => lifecycle::use_local_grant(&mut job.op.body, &grant),
            None => {}
        }
        transition(&mut job, change).await?;
        let current = inventory_of(&job.instance.body);
        Box::pin(execute(job, plan, current)).await
    } else if state == PROCESSING {
        // An operation without a grant (MODIFY_INFO) is created in PROCESSING; any other is
        // here because its conductor stopped while it ran: it runs again from the
        // instance's inventory before the operation, on the stored grant (the drivers find
        // what the stopped run made).
        match plan_of(&job).await {
            Ok(mut plan) => {
                if job.needs_external_grant()
                    && let Err(error) = apply_stored_grant(&job, &mut plan).await
                {
                    return transition(&mut job, Stop::internal(error).change(FAILED_TEMP)).await;
                }
                let current = inventory_of(&job.instance.body);
                Box::pin(execute(job, plan, current)).await
            }
            Err(stop) => transition(&mut job, stop.change(FAILED_TEMP)).await,
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
    let mut grant = None;
    let plan = match plan_of(&job).await {
        Ok(mut plan) if job.needs_external_grant() => match external_grant(&job, &mut plan, true).await {
            Ok(granted) => {
                grant = granted;
                Ok(plan)
            }
            Err(GrantError::Rejected(problem)) => Err(Stop { status: problem.status, detail: problem.detail }),
            Err(GrantError::Unavailable(detail)) => Err(Stop { status: 503, detail }),
        },
        other => other,
    };
    let mut change = StateChange::to(PROCESSING);
    if let Some(grant) = grant {
        record_grant(&mut job, &mut change, &grant);
    }
    transition(&mut job, change).await?;
    match plan {
        Ok(plan) => Box::pin(execute(job, plan, current)).await,
        Err(stop) => transition(&mut job, stop.change(FAILED_TEMP)).await,
    }
}

async fn rollback(mut job: Job) -> Result<(), ConductorError> {
    match job.op.state() {
        FAILED_TEMP => transition(&mut job, StateChange::to(ROLLING_BACK)).await?,
        // Its conductor stopped while rolling back: the rollback runs again.
        ROLLING_BACK => {}
        _ => return Ok(()),
    }
    let current = partial_inventory(&job.op).unwrap_or_else(|| inventory_of(&job.instance.body));
    let plan = match OperationPlan::stored(&job.op.body, true) {
        Some(mut plan) => {
            // The rollback undoes the work on the VIM the grant gave (never asks again).
            if job.needs_external_grant() {
                let _ = external_grant(&job, &mut plan, false).await;
                // Never granted (the NFVO was unreachable) and nothing made: nothing to undo,
                // on no VIM.
                if plan.vim.is_none() && current.is_empty() {
                    plan.infra = None;
                }
            }
            Ok(plan)
        }
        // Requested before plans were stored with rollbacks: plan it now, the same way.
        None => {
            let (major, op) = (job.major, job.op.clone());
            job.ctx
                .db_run(move |conn| Ok(plan_rollback(conn, major, shapes::for_major(major), &op)))
                .await
                .map_err(Stop::from)
                .and_then(|planned| planned.map_err(Stop::from))
        }
    };
    match plan {
        Ok(plan) => Box::pin(execute(job, plan, current)).await,
        Err(stop) => transition(&mut job, stop.change(FAILED_TEMP)).await,
    }
}

/// The plan stored when the operation was accepted; an occurrence accepted before plans
/// were stored is planned now, by the same function.
async fn plan_of(job: &Job) -> Result<OperationPlan, Stop> {
    if let Some(plan) = OperationPlan::stored(&job.op.body, false) {
        return Ok(plan);
    }
    let operation = job.operation().ok_or_else(|| Stop {
        status: 422,
        detail: format!("Operation {} is not supported.", job.op.operation_name()),
    })?;
    let (major, instance, params) = (job.major, job.instance.clone(), job.op.body["operationParams"].clone());
    let mut vim_types = job.ctx.infra.vim_types();
    if job.ctx.nfvo.is_some() {
        vim_types.push(solgate_core::operation::VIM_FROM_GRANT);
    }
    let planned = job
        .ctx
        .db_run(move |conn| {
            let request = PlanRequest {
                instance: &instance.body,
                package_id: &instance.vnf_pkg_id,
                params: &params,
                shapes: shapes::for_major(major),
                vim_types: &vim_types,
                // Checked when the request was accepted.
                scope: None,
            };
            Ok(solgate_core::operation::plan(operation, conn, &request))
        })
        .await?;
    Ok(planned?)
}

fn partial_inventory(op: &OpOccRecord) -> Option<Inventory> {
    view::<PartialInventory>(private_of(&op.body)).inventory
}

/// The NFVO's new Grant goes with the transition, its id into the occurrence.
fn record_grant(job: &mut Job, change: &mut StateChange, grant: &Grant) {
    job.op.body["grantId"] = json!(grant.id);
    change.grant = Some(json!(grant));
}

/// The driver of the plan's VIM connection; the local simulated VIM when the plan names
/// none and it is enabled.
fn driver_for(job: &Job, vim: Option<&VimConnection>) -> Result<(Arc<dyn InfraDriver>, VimConnection), Stop> {
    let mut vim = vim.cloned().unwrap_or_else(|| VimConnection {
        id: "local".to_owned(),
        vim_type: VIM_TYPE_LOCAL.to_owned(),
        ..VimConnection::default()
    });
    // The credentials are stored sealed; the driver gets them open, in memory only.
    for part in [&mut vim.access_info, &mut vim.interface_info, &mut vim.extra] {
        job.ctx
            .secrets
            .open(part)
            .map_err(|error| Stop { status: 500, detail: format!("vimConnectionInfo: {error}") })?;
    }
    let driver = job.ctx.infra.get(vim.normalized_vim_type()).ok_or_else(|| Stop {
        status: 422,
        detail: if vim.vim_type == VIM_TYPE_LOCAL {
            NO_VIM.to_owned()
        } else {
            format!("vimType {} is not supported.", vim.vim_type)
        },
    })?;
    Ok((driver, vim))
}

/// Runs the infra work (watching for a cancel request) and records the outcome.
async fn execute(mut job: Job, plan: OperationPlan, current: Inventory) -> Result<(), ConductorError> {
    let rolling_back = job.op.state() == ROLLING_BACK;
    let package = match job.package(&plan).await {
        Ok(package) => package,
        Err(stop) => return transition(&mut job, stop.change(FAILED_TEMP)).await,
    };
    // The package's own scripts (Vnflcm management hooks, LCM operation user data).
    let scripts = match Box::pin(package_scripts(&job, &plan, &package.1, rolling_back)).await {
        Ok(scripts) => scripts,
        Err(error) => return transition(&mut job, Stop::internal(error).change(FAILED_TEMP)).await,
    };
    let started = match &scripts {
        Some(scripts) => Box::pin(scripts.hook(&job.ctx, true)).await,
        None => Ok(()),
    };
    let outcome = match (&plan.infra, started) {
        (_, Err(error)) => Err(DriverError::by_package(MGMT_FAILED, error)),
        (None, Ok(())) => Ok(current.clone()),
        (Some(work), Ok(())) => {
            let run = Box::pin(run_infra(&mut job, work, &plan, &package, &current, scripts.as_deref(), rolling_back));
            match run.await {
                Ok(outcome) => outcome,
                Err(stop) => return transition(&mut job, stop.change(FAILED_TEMP)).await,
            }
        }
    };
    let outcome = match (outcome, &scripts) {
        (Ok(inventory), Some(scripts)) => match Box::pin(scripts.hook(&job.ctx, false)).await {
            Ok(()) => Ok(inventory),
            Err(error) => Err(DriverError::by_package(MGMT_FAILED, error).with_partial(inventory)),
        },
        (other, _) => other,
    };
    match outcome {
        Ok(inventory) => finish(&mut job, plan, package, current, inventory, rolling_back).await,
        Err(error) => {
            let change = failure(&mut job, error, current);
            transition(&mut job, change).await
        }
    }
}

/// The infra action of the plan on the driver of its VIM: the driver's outcome, or why it
/// could not start.
async fn run_infra(
    job: &mut Job,
    work: &InfraWork,
    plan: &OperationPlan,
    package: &vnfd::Loaded,
    current: &Inventory,
    scripts: Option<&scripts::OperationScripts>,
    rolling_back: bool,
) -> Result<Result<Inventory, DriverError>, Stop> {
    let (driver, vim) = driver_for(job, plan.vim.as_ref())?;
    let action = infra_action(work, plan)
        .ok_or_else(|| Stop::internal("The stored plan has no deployment for its infra work."))?;
    let mut additional = job.additional_params();
    job.ctx
        .secrets
        .open(&mut additional)
        .map_err(|error| Stop { status: 500, detail: format!("additionalParams: {error}") })?;
    let cancelled = Arc::new(AtomicBool::new(false));
    let watcher = spawn_cancel_watcher(job, cancelled.clone());
    let is_cancelled = move || cancelled.load(Ordering::Relaxed);
    let package_dir = job.ctx.package_dir(&package.0.id);
    // A transient failure (the VIM unreachable, a 5xx, a timeout) is retried with backoff
    // from where the run got, `vim_retries` times; then it is the operation's failure, with
    // the VIM's last error.
    let settings = &job.ctx.settings;
    let (mut now, mut run, mut warnings) = (current.clone(), 1, Vec::new());
    let result = loop {
        let ctx = InfraContext {
            instance_id: &job.instance.id,
            vim: &vim,
            vnfd: &package.1.vnfd,
            package_dir: Some(&package_dir),
            current: &now,
            additional_params: &additional,
            attempt: u32::try_from(job.op.attempt.max(1)).unwrap_or(1),
            run,
            cancelled: &is_cancelled,
            rolling_back,
            lcm_input: scripts.map(|scripts| &scripts.input),
        };
        tracing::info!(op = %job.op.id, operation = job.op.operation_name(), action = action.name(), vim = %vim.id, run, "running infra action");
        match driver.execute(ctx, action).await {
            Err(error) if error.transient && !error.cancelled && run <= settings.vim_retries => {
                let backoff = retry_backoff(settings.vim_retry_backoff_ms, run);
                job.ctx.metrics.vim_retries.inc();
                tracing::warn!(op = %job.op.id, run, error = %error.message, ?backoff, "transient VIM failure; retrying");
                warnings.push(format!(
                    "The VIM failed transiently on run {run} of attempt {} and the {} was run again: {}",
                    job.op.attempt.max(1),
                    action.name(),
                    error.message
                ));
                if let Some(partial) = error.partial {
                    now = *partial;
                }
                tokio::time::sleep(backoff).await;
                run += 1;
            }
            other => break other,
        }
    };
    watcher.abort();
    add_warnings(&mut job.op.body, warnings);
    Ok(result)
}

/// The change a failed run makes: FAILED_TEMP, with what it made kept for the retry or
/// the rollback.
fn failure(job: &mut Job, error: DriverError, current: Inventory) -> StateChange {
    let partial = error.partial.map(|boxed| *boxed).unwrap_or(current);
    set_private(&mut job.op.body, "inventory", json!(partial));
    if error.cancelled {
        StateChange::to(FAILED_TEMP).with_error(409, &format!("{CANCELLED} {}", error.message))
    } else if let Some(title) = error.refused_by_package {
        // The package's script refused: a 422 with Tacker's title, not a 500.
        let mut change = StateChange::to(FAILED_TEMP);
        change.error = Some(op_occ::problem(422, title, &error.message));
        change
    } else {
        Stop::internal(error.message).change(FAILED_TEMP)
    }
}

/// The title of a management script's failure (Tacker's `MgmtDriverExecutionFailed`).
const MGMT_FAILED: &str = "Mgmt driver execution failed";

/// The package's scripts that take part in this run (`None`, at no cost, when it declares
/// none for the operation and the request no user data); an error when their inputs cannot
/// be had, which fails the operation rather than running it without its scripts.
async fn package_scripts(
    job: &Job,
    plan: &OperationPlan,
    package: &PackageContents,
    rolling_back: bool,
) -> Result<Option<Box<scripts::OperationScripts>>, String> {
    let Some(operation) = job.operation() else { return Ok(None) };
    let mut additional = job.additional_params();
    if !scripts::may_take_part(plan, &job.instance, operation, package, &additional, rolling_back) {
        return Ok(None);
    }
    job.ctx
        .secrets
        .open(&mut additional)
        .map_err(|error| format!("additionalParams cannot be opened for the package's scripts: {error}"))?;
    let package_dir = job.ctx.package_dir(&job.instance.vnf_pkg_id);
    let package_dir = plan.new_package_id.as_deref().map_or(package_dir, |id| job.ctx.package_dir(id));
    scripts::prepare(
        &job.ctx,
        job.major,
        &job.instance,
        &job.op,
        operation,
        plan,
        package,
        &package_dir,
        &additional,
        rolling_back,
    )
    .await
    .map(|scripts| scripts.map(Box::new))
}

/// VnfLcmOpOcc `warnings` (SOL003 V3.5.1 on, VNF LCM 2.1.0): what went wrong in the
/// operation without failing it, added to those of earlier attempts.
fn add_warnings(op: &mut Value, warnings: Vec<String>) {
    if warnings.is_empty() {
        return;
    }
    let mut list: Vec<Value> = op["warnings"].as_array().cloned().unwrap_or_default();
    list.extend(warnings.into_iter().map(Value::String));
    op["warnings"] = Value::Array(list);
}

/// The wait before automatic retry `run` (1-based): `base_ms` doubling, at most 30 s.
fn retry_backoff(base_ms: u64, run: u32) -> Duration {
    let factor = 1_u64 << run.saturating_sub(1).min(16);
    Duration::from_millis(base_ms.saturating_mul(factor).min(30_000))
}

fn infra_action<'p>(work: &'p InfraWork, plan: &'p OperationPlan) -> Option<InfraAction<'p>> {
    Some(match work {
        InfraWork::Realize => InfraAction::Realize { plan: plan.deployment.as_ref()? },
        InfraWork::Heal { vnfc_resource_ids } => {
            InfraAction::Heal { plan: plan.deployment.as_ref()?, vnfc_ids: vnfc_resource_ids }
        }
        InfraWork::Operate { change_state_to } => InfraAction::Operate { change_state_to },
        InfraWork::Teardown => InfraAction::Teardown,
    })
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
                && cancel_pending(&op)
            {
                cancelled.store(true, Ordering::Relaxed);
                return;
            }
        }
    })
}

/// The members of VnfLcmOpOcc (SOL003 clause 5.5.2.13) a successful run sets, when it has them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunResults {
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_changes: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed_info: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed_ext_connectivity: Option<Value>,
}

/// Success: the instance takes its new shape and the occurrence becomes COMPLETED (or
/// ROLLED_BACK after a rollback).
async fn finish(
    job: &mut Job,
    plan: OperationPlan,
    package: vnfd::Loaded,
    before: Inventory,
    inventory: Inventory,
    rolling_back: bool,
) -> Result<(), ConductorError> {
    let mut target = plan.target;
    if view::<InstanceState>(&target).instantiation_state == "INSTANTIATED"
        && let Some(deployment) = &plan.deployment
    {
        let previous = target["instantiatedVnfInfo"].clone();
        let previous = if previous.is_object() { previous } else { job.instance.body["instantiatedVnfInfo"].clone() };
        target["instantiatedVnfInfo"] = instance::instantiated_info(&package.1.vnfd, deployment, &inventory, &previous);
        instance::set_vim_state(&mut target, &inventory);
    }
    let original = inventory_of(&job.instance.body);
    let baseline = if rolling_back { &original } else { &before };
    let results = RunResults {
        resource_changes: (!inventory.is_empty() || !before.is_empty() || !original.is_empty())
            .then(|| resource_changes(baseline, &inventory)),
        changed_info: plan.changed_info,
        changed_ext_connectivity: plan
            .changes_ext_connectivity
            .then(|| target["instantiatedVnfInfo"]["extVirtualLinkInfo"].clone()),
    };
    if let (Some(body), Value::Object(results)) = (job.op.body.as_object_mut(), json!(results)) {
        body.extend(results);
        // Set from this attempt only: a retried or rolled-back occurrence must not keep an
        // earlier attempt's list.
        for (key, affected) in [
            ("affectedVirtualCps", instance::affected_virtual_cps(baseline, &inventory)),
            ("affectedVipCps", instance::affected_vip_cps(baseline, &inventory)),
        ] {
            if affected.is_empty() {
                body.shift_remove(key);
            } else {
                body.insert(key.to_owned(), Value::Array(affected));
            }
        }
    }
    let old_package = job.instance.vnf_pkg_id.clone();
    let new_package = package.0.id;
    let mut record = job.instance.clone();
    record.body = target;
    record.vnf_pkg_id = new_package.clone();
    // Only a change of package changes packages' usage: the instance exists before and after.
    let packages = if old_package == new_package { Vec::new() } else { vec![old_package, new_package] };
    let mut change = StateChange::to(if rolling_back { ROLLED_BACK } else { COMPLETED });
    change.instance = Some(InstanceChange { record, packages });
    transition(job, change).await
}

/// One state change through the domain's state machine, while this conductor owns the
/// occurrence; losing ownership (another conductor recovered it) ends the run.
async fn transition(job: &mut Job, change: StateChange) -> Result<(), ConductorError> {
    let owner = job.ctx.id.clone();
    let state = change.to;
    // A change that carries the instance notifies with that one.
    let instance = change.instance.is_none().then(|| job.instance.body.clone());
    if job.ctx.machine.transition(job.major, &mut job.op, Some(&owner), change, instance).await? {
        Ok(())
    } else {
        tracing::warn!(op = %job.op.id, state, "the operation is no longer ours (recovered by another conductor?); stopping");
        Err(ConductorError::Other(format!("lost ownership of {}", job.op.id)))
    }
}
