//! What the API asks of LCM operations: accept a task on an instance, retry or roll back
//! a FAILED_TEMP occurrence, fail it, cancel a running one. Each is checked against the
//! stored state in a transaction; the gateway validates the body before and publishes the
//! work after.

use serde_json::Value;
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor, OpOccRecord};
use solgate_db::repo::outbox;
use solgate_db::{AnyConnection, write_transaction};
use solgate_model::lcm_op_occ::CancelState;

use crate::lifecycle::{StateChange, StateMachine, is_running, load_op, notification_status};
use crate::links::Links;
use crate::notify::{self, Event};
use crate::op_occ::{self, ACTION_ROLLBACK, ACTION_START, FAILED, FAILED_TEMP, ROLLED_BACK, STARTING};
use crate::operation::{LcmOperation, OperationPlan, PlanRequest, Precondition};
use crate::shapes::LcmShapes;
use crate::tenancy::{ProjectScope, visible};
use crate::work::{ConductorSlot, TakenUp, WorkKind, kind_name};
use crate::{CoreError, db_run, now, vnfd};

/// The detail of every cancelled occurrence's `error`.
pub const CANCELLED: &str = "The LCM operation was cancelled.";

/// An accepted task: the new occurrence and the outbox row of its work message.
#[derive(Debug)]
pub struct Accepted {
    pub op: OpOccRecord,
    pub outbox_id: i64,
}

pub fn instance_not_found(id: &str) -> CoreError {
    CoreError::NotFound(format!("VnfInstance {id} not found."))
}

pub fn in_progress(id: &str) -> CoreError {
    CoreError::Conflict(format!("Other LCM operation of vnfInstance {id} is in progress."))
}

fn not_failed_temp(id: &str) -> CoreError {
    CoreError::Conflict(format!("LCM operation {id} not FAILED_TEMP."))
}

/// An `If-Match` precondition (RFC 9110 clause 13.1.1) on the instance, as the row
/// versions its entity-tags name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfMatch {
    /// `*`: any current representation.
    Any,
    /// The versions the tags name; empty when none can match (weak or foreign tags).
    Versions(Vec<i64>),
}

impl IfMatch {
    pub fn matches(&self, row_version: i64) -> bool {
        match self {
            IfMatch::Any => true,
            IfMatch::Versions(versions) => versions.contains(&row_version),
        }
    }
}

pub fn precondition_failed(what: &str) -> CoreError {
    CoreError::PreconditionFailed(format!(
        "{what} has changed since the representation named by If-Match was read; GET it again."
    ))
}

/// What accepting a task needs besides the connection.
pub struct TaskRequest<'a> {
    pub major: LcmMajor,
    pub operation: LcmOperation,
    pub instance_id: &'a str,
    pub params: &'a Value,
    pub shapes: &'a dyn LcmShapes,
    pub vim_types: &'a [&'a str],
    pub links: &'a Links,
    /// Whose instances (and packages, for change_vnfpkg) the request may use.
    pub scope: ProjectScope<'a>,
    /// A PATCH's `If-Match`, checked against the instance in the accepting transaction.
    pub if_match: Option<&'a IfMatch>,
    /// Started by the VNFM itself (auto-heal, auto-scale), not by an API request: the
    /// occurrence's `isAutomaticInvocation`.
    pub automatic: bool,
}

/// Accepts a task on an instance in one transaction: locks the instance, checks its state,
/// refuses a second operation in flight (the database's unique index is the final word),
/// plans the operation, and writes the occurrence with its plan, its outbox row and the
/// START notification.
pub fn accept(conn: &mut AnyConnection, request: &TaskRequest<'_>) -> Result<Accepted, CoreError> {
    write_transaction(conn, |conn| accept_in(conn, request))
}

/// [`accept`] in the caller's write transaction ([`solgate_db::Database::write`]), which an
/// error must abort: no savepoint of its own (on PostgreSQL two round trips fewer).
pub fn accept_in(conn: &mut AnyConnection, request: &TaskRequest<'_>) -> Result<Accepted, CoreError> {
    let (op, _) = write_accepted(conn, request, None)?;
    let outbox_id = outbox::enqueue(conn, kind_name(WorkKind::LcmOpOcc), &op.id, request.major.number())?;
    Ok(Accepted { op, outbox_id })
}

/// [`accept_in`], the occurrence taken up by the conductor holding `slot` in the same
/// transaction, as its claim would (owner and lease set, no work pending), and started
/// there when it can be ([`StateMachine::start_in`]): one transaction and one commit per
/// operation fewer than a claim after a message. Call [`ConductorSlot::run`] once it commits.
pub fn accept_taken_in(
    conn: &mut AnyConnection,
    request: &TaskRequest<'_>,
    machine: &StateMachine,
    slot: &mut dyn ConductorSlot,
) -> Result<TakenUp, CoreError> {
    let (mut op, instance) = write_accepted(conn, request, Some(&*slot))?;
    slot.enter(&op.id);
    let started = machine.start_in(conn, request.major, &mut op, &instance, slot.owner())?;
    Ok(TakenUp { op, started: started.map(|plan| (instance, plan)) })
}

/// Checks and writes an accepted task: the occurrence (claimed by `slot`'s conductor when
/// given, else with its work pending) and its START notification; the instance as locked.
fn write_accepted(
    conn: &mut AnyConnection,
    request: &TaskRequest<'_>,
    slot: Option<&dyn ConductorSlot>,
) -> Result<(OpOccRecord, InstanceRecord), CoreError> {
    let TaskRequest { major, operation, instance_id, params, shapes, vim_types, links, scope, if_match, automatic } =
        *request;
    // The row lock serialises this with DELETE and other tasks on PostgreSQL; SQLite's
    // BEGIN IMMEDIATE already serialises writers. The instance comes back with it.
    let (instance, seen) = lcm::lock_and_find_instance_seen(conn, major, instance_id)?
        .filter(|(instance, _)| visible(scope, &instance.project))
        .ok_or_else(|| instance_not_found(instance_id))?;
    // The lock above moved the row version on by one.
    if if_match.is_some_and(|condition| !condition.matches(instance.row_version - 1)) {
        return Err(precondition_failed(&format!("VnfInstance {instance_id}")));
    }
    if !operation.allowed_on(&instance.body) {
        let state = if operation.precondition() == Precondition::NotInstantiated { "is" } else { "isn't" };
        return Err(CoreError::Conflict(format!("VnfInstance {instance_id} {state} instantiated.")));
    }
    if lcm::in_flight_op(conn, major, instance_id)?.is_some() {
        return Err(in_progress(instance_id));
    }
    let plan = crate::operation::plan(
        operation,
        conn,
        &PlanRequest { instance: &instance.body, package_id: &instance.vnf_pkg_id, params, shapes, vim_types, scope },
    )?;
    let now = now();
    let id = solgate_db::new_id();
    let initial = operation.initial_state();
    let mut document = op_occ::new_document(&id, instance_id, operation.name(), params, initial, &now, automatic);
    plan.store(&mut document, false);
    let op = OpOccRecord {
        id,
        body: document,
        // Taken up here: as the conductor's claim leaves it.
        pending_action: if slot.is_some() { None } else { Some(ACTION_START.to_owned()) },
        owner: slot.map(|slot| slot.owner().to_owned()),
        lease_expires_at: slot.map(|slot| slot.lease_expires_at().to_owned()),
        attempt: 1,
        created_at: now.clone(),
        updated_at: now,
        project: instance.project.clone(),
    };
    lcm::insert_op(conn, major, &op)
        .map_err(|error| if error.is_unique_violation() { in_progress(instance_id) } else { error.into() })?;
    let status = notification_status(initial, operation.name(), None);
    // A notification takes only named attributes of the documents, never their private part.
    let event = Event::OpOcc { op: &op.body, instance: &instance.body, status };
    notify::enqueue_seen(conn, major, links, &op.project, event, seen)?;
    Ok((op, instance))
}

/// Retry or rollback of a FAILED_TEMP occurrence: records the request for a conductor
/// and returns the outbox row of its work message. A rollback is planned now.
pub fn request_action(
    conn: &mut AnyConnection,
    major: LcmMajor,
    shapes: &dyn LcmShapes,
    scope: ProjectScope<'_>,
    id: &str,
    action: &'static str,
) -> Result<i64, CoreError> {
    write_transaction(conn, |conn| {
        let mut op = load_visible_op(conn, major, scope, id)?;
        if op.state() != FAILED_TEMP {
            return Err(not_failed_temp(id));
        }
        if let Some(pending) = &op.pending_action {
            return Err(CoreError::Conflict(format!("A {pending} of LCM operation {id} is already requested.")));
        }
        if action == ACTION_ROLLBACK {
            let plan = plan_rollback(conn, major, shapes, &op)?;
            plan.store(&mut op.body, true);
        }
        op.pending_action = Some(action.to_owned());
        if !lcm::update_op_guarded(conn, major, &op, None, FAILED_TEMP)? {
            return Err(not_failed_temp(id));
        }
        Ok(outbox::enqueue(conn, kind_name(WorkKind::LcmOpOcc), id, major.number())?)
    })
}

/// The plan of rolling an occurrence back, from the instance as recorded before it.
pub fn plan_rollback(
    conn: &mut AnyConnection,
    major: LcmMajor,
    shapes: &dyn LcmShapes,
    op: &OpOccRecord,
) -> Result<OperationPlan, CoreError> {
    let operation = op.operation().ok_or_else(|| {
        let name = op.body["operation"].as_str().unwrap_or_default();
        CoreError::Unprocessable(format!("Rollback of {name} is not supported."))
    })?;
    let params = &op_occ::operation_params(&op.body);
    if !operation.rollback_supported(params) {
        return Err(CoreError::Unprocessable(format!("Rollback of {} is not supported.", operation.name())));
    }
    let instance = lcm::find_instance(conn, major, op.vnf_instance_id())?
        .ok_or_else(|| instance_not_found(op.vnf_instance_id()))?;
    let (_, contents) = vnfd::load(conn, &instance.vnf_pkg_id)?
        .ok_or_else(|| CoreError::Unprocessable("The VNF package of the instance is not onboarded.".to_owned()))?;
    OperationPlan::rollback(operation, &instance.body, &contents.vnfd, params, shapes)
}

/// Fail: FAILED_TEMP → FAILED at once (no conductor involved); the occurrence as it is now.
pub async fn fail(
    machine: &StateMachine,
    major: LcmMajor,
    scope: ProjectScope<'_>,
    id: &str,
) -> Result<OpOccRecord, CoreError> {
    let (lookup, scope_owned) = (id.to_owned(), scope.map(str::to_owned));
    let mut op = db_run(&machine.db, move |conn| load_visible_op(conn, major, scope_owned.as_deref(), &lookup)).await?;
    if op.state() != FAILED_TEMP || op.pending_action.is_some() {
        return Err(not_failed_temp(id));
    }
    if !machine.transition(major, &mut op, None, StateChange::to(FAILED), None).await? {
        return Err(not_failed_temp(id));
    }
    Ok(op)
}

/// Cancel (SOL003): an unclaimed STARTING occurrence is rolled back at once; otherwise the
/// running conductor sees `isCancelPending` between steps and moves PROCESSING /
/// ROLLING_BACK to FAILED_TEMP (STARTING to ROLLED_BACK).
pub async fn cancel(
    machine: &StateMachine,
    major: LcmMajor,
    scope: ProjectScope<'_>,
    id: &str,
    mode: &str,
) -> Result<(), CoreError> {
    let (lookup, scope_owned) = (id.to_owned(), scope.map(str::to_owned));
    let mut op = db_run(&machine.db, move |conn| load_visible_op(conn, major, scope_owned.as_deref(), &lookup)).await?;
    let current = op.state().to_owned();
    if !is_running(&current) {
        return Err(CoreError::Conflict(format!(
            "LCM operation {id} is {current}; only STARTING, PROCESSING or ROLLING_BACK operations can be cancelled."
        )));
    }
    if op_occ::is_cancel_pending(&op.body) {
        return Err(CoreError::Conflict(format!("LCM operation {id} is already being cancelled.")));
    }
    let changed = || CoreError::Conflict(format!("LCM operation {id} changed meanwhile; try again."));
    if current == STARTING && op.owner.is_none() {
        // Not taken up yet: nobody else will touch it, finish it here.
        let change = StateChange::to(ROLLED_BACK).with_error(409, CANCELLED);
        return if machine.transition(major, &mut op, None, change, None).await? { Ok(()) } else { Err(changed()) };
    }
    op_occ::set_cancel(&mut op.body, CancelState { is_cancel_pending: true, cancel_mode: Some(mode) });
    let owner = op.owner.clone();
    let marked = db_run(&machine.db, move |conn| {
        lcm::update_op_guarded(conn, major, &op, owner.as_deref(), &current).map_err(CoreError::from)
    })
    .await;
    if marked? { Ok(()) } else { Err(changed()) }
}

/// An occurrence the request may see, or the same 404 as for one that does not exist.
fn load_visible_op(
    conn: &mut AnyConnection,
    major: LcmMajor,
    scope: ProjectScope<'_>,
    id: &str,
) -> Result<OpOccRecord, CoreError> {
    let op = load_op(conn, major, id)?;
    if visible(scope, &op.project) { Ok(op) } else { Err(crate::lifecycle::op_not_found(id)) }
}
