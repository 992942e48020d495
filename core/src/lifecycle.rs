//! The SOL003 operation state machine, the one place an occurrence changes state, for
//! both doors: the conductor running an operation and the API's fail and cancel.
//!
//! STARTING → PROCESSING → COMPLETED | FAILED_TEMP; a failure before PROCESSING → ROLLED_BACK;
//! retry: FAILED_TEMP → PROCESSING → …; rollback: FAILED_TEMP → ROLLING_BACK → ROLLED_BACK |
//! FAILED_TEMP; fail: FAILED_TEMP → FAILED; cancel: STARTING → ROLLED_BACK, PROCESSING /
//! ROLLING_BACK → FAILED_TEMP. Every transition is one transaction that writes the
//! occurrence (`stateEnteredTime` included) only while it is still in the state and with
//! the owner it was read with, the instance when it changes, the grant, and the
//! notification outbox rows; a transient database failure is retried, and every applied
//! transition is counted in `solgate_lcm_operations_total`.

use std::sync::Arc;
use std::time::Duration;

use prometheus::{IntCounterVec, Opts, Registry};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor, OpOccRecord};
use solgate_db::repo::{outbox, vnf_packages};
use solgate_db::{AnyConnection, Database, DbResult};
use solgate_model::lcm_op_occ::CancelState;

use crate::links::Links;
use crate::notify::{self, Event};
use crate::op_occ::{self, COMPLETED, FAILED_TEMP, OpOccPrivate, PROCESSING, ROLLING_BACK, STARTING};
use crate::operation::LcmOperation;
use crate::{CoreError, PRIVATE_KEY, now};

/// Counts applied transitions, wherever they are made.
#[derive(Clone)]
pub struct LcmMetrics {
    operations: IntCounterVec,
}

impl LcmMetrics {
    /// Counters registered in `registry` (fails when it has them already).
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let operations = IntCounterVec::new(
            Opts::new(
                "solgate_lcm_operations_total",
                "LCM operation occurrences that reached a state, by major, operation and state",
            ),
            &["major", "operation", "state"],
        )?;
        registry.register(Box::new(operations.clone()))?;
        Ok(Self { operations })
    }

    fn count(&self, major: LcmMajor, operation: &str, state: &str) {
        self.operations.with_label_values(&[&major.number().to_string(), operation, state]).inc();
    }
}

/// The instance an operation leaves behind, and the packages whose usage state it changes.
#[derive(Debug, Clone)]
pub struct InstanceChange {
    pub record: InstanceRecord,
    pub packages: Vec<String>,
}

/// One state change of an occurrence.
#[derive(Debug, Clone)]
pub struct StateChange {
    pub to: &'static str,
    /// The occurrence's `error` (a ProblemDetails); entering PROCESSING or COMPLETED
    /// without one clears it, other states keep the previous one.
    pub error: Option<Value>,
    /// The local NFVO's grant, recorded with the change.
    pub grant: Option<Value>,
    pub instance: Option<InstanceChange>,
}

impl StateChange {
    pub fn to(state: &'static str) -> Self {
        Self { to: state, error: None, grant: None, instance: None }
    }

    pub fn with_error(mut self, status: u16, detail: &str) -> Self {
        let title = solgate_sol013::reason_phrase(status).unwrap_or("Error");
        self.error = Some(op_occ::problem(status, title, detail));
        self
    }
}

/// Whether an occurrence in `state` is being worked on (it has an owner, or is waiting
/// for one).
pub fn is_running(state: &str) -> bool {
    matches!(state, STARTING | PROCESSING | ROLLING_BACK)
}

/// Whether the notification for entering `state` is a START or a RESULT one. START marks
/// the start of work: STARTING, MODIFY_INFO's first PROCESSING, PROCESSING entered by a
/// retry and ROLLING_BACK (SOL003's texts for retry and rollback; Tacker sends RESULT
/// there).
pub fn notification_status(state: &str, operation: &str, previous_state: Option<&str>) -> &'static str {
    match (state, previous_state) {
        (STARTING, _) | (ROLLING_BACK, _) => "START",
        (PROCESSING, None) if LcmOperation::from_name(operation).is_some_and(|op| op.initial_state() == PROCESSING) => {
            "START"
        }
        (PROCESSING, Some(FAILED_TEMP)) => "START",
        _ => "RESULT",
    }
}

/// The rules of entering a state, applied to the record in memory.
fn enter(op: &mut OpOccRecord, change: &StateChange, now: &str) {
    op_occ::set_state(&mut op.body, change.to, now);
    OpOccPrivate::update(&mut op.body, |private| {
        journal_entry(private, json!({"state": change.to, "at": now}));
        if change.to == PROCESSING {
            // The Grant is stored with this transition: nothing is pending any more.
            private.pending_grant = None;
        }
        if change.grant.is_some() {
            // A stored Grant replaces a local one (an NFVO configured since).
            private.local_grant = None;
        }
    });
    match &change.error {
        Some(error) => op_occ::set_error(&mut op.body, Some(error.clone())),
        None if matches!(change.to, PROCESSING | COMPLETED) => op_occ::set_error(&mut op.body, None),
        None => {}
    }
    if !is_running(change.to) {
        op.owner = None;
        op.lease_expires_at = None;
        op.pending_action = None;
        // A cancel request is answered by leaving the state it was made in.
        op_occ::set_cancel(&mut op.body, CancelState { is_cancel_pending: false, cancel_mode: None });
    }
    if op_occ::is_final(change.to)
        && let Value::Object(map) = &mut op.body
    {
        map.shift_remove("cancelMode");
        map.shift_remove(PRIVATE_KEY);
    }
}

/// Gives the occurrence the local NFVO's `grant`, which is not stored: nothing reads a local
/// grant back (an external NFVO's Grant is stored, for retries and resumption), so its
/// occurrence writes no grant row when it starts and deletes none when it ends.
pub fn use_local_grant(body: &mut Value, grant: &Value) {
    /// The grant's `id` ...
    #[derive(Deserialize, Default)]
    struct Grant {
        #[serde(default)]
        id: Value,
    }
    /// ... which the occurrence names as its `grantId`.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct GrantRef {
        grant_id: Value,
    }
    crate::overlay(body, &GrantRef { grant_id: Grant::deserialize(grant).unwrap_or_default().id });
    OpOccPrivate::update(body, |private| private.local_grant = Some(true));
}

/// Whether a grant row may exist for the occurrence (read before its transition: a final
/// state drops the private part). An occurrence from before local grants went unstored
/// does not say, and may have one.
fn may_have_grant_row(op: &OpOccRecord) -> bool {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Flag {
        #[serde(default, deserialize_with = "solgate_model::lcm_request::lenient")]
        local_grant: Option<bool>,
    }
    crate::private_part::<Flag>(&op.body).local_grant != Some(true)
}

/// How many journal entries an occurrence keeps (the newest).
const JOURNAL_ENTRIES: usize = 32;

/// Appends an entry to the occurrence's journal (`_solgate.journal`, never shown): the
/// steps it went through, and who resumed it after which crash. It is written with the
/// occurrence, so it costs no commit of its own.
pub fn journal(body: &mut Value, entry: Value) {
    OpOccPrivate::update(body, |private| journal_entry(private, entry));
}

fn journal_entry(private: &mut OpOccPrivate, entry: Value) {
    let entries = private.journal.get_or_insert_with(Vec::new);
    entries.push(entry);
    let excess = entries.len().saturating_sub(JOURNAL_ENTRIES);
    entries.drain(..excess);
}

/// The transaction half of a transition, in the caller's transaction: false (and nothing
/// written) when the occurrence is no longer in `from` with `owner`.
#[allow(clippy::too_many_arguments)]
fn record(
    conn: &mut AnyConnection,
    major: LcmMajor,
    links: &Links,
    op: &OpOccRecord,
    from: &str,
    owner: Option<&str>,
    change: &StateChange,
    drop: Drops,
    status: &'static str,
    instance: Option<&Value>,
) -> DbResult<bool> {
    let Some(seen) = lcm::update_op_seen(conn, major, op, owner, from)? else {
        return Ok(false);
    };
    if let Some(grant) = &change.grant {
        lcm::insert_grant(conn, major, &op.id, grant)?;
    }
    if drop.grant {
        lcm::delete_grant(conn, major, &op.id)?;
    }
    if drop.work {
        outbox::complete(conn, &op.id)?;
    }
    if let Some(InstanceChange { record, packages }) = &change.instance {
        lcm::update_instance(conn, major, record)?;
        for package in packages {
            vnf_packages::refresh_usage_state(conn, package)?;
        }
    }
    // The documents as they are: a notification takes only named attributes of them (never
    // the private part), so no copy without it is needed.
    let found;
    let instance = match (&change.instance, instance) {
        (Some(change), _) => &change.record.body,
        (None, Some(instance)) => instance,
        (None, None) => {
            found = lcm::find_instance(conn, major, op.vnf_instance_id())?
                .map(|record| record.body)
                .unwrap_or_else(|| json!({ "id": op.vnf_instance_id() }));
            &found
        }
    };
    notify::enqueue_seen(conn, major, links, &op.project, Event::OpOcc { op: &op.body, instance, status }, seen)?;
    Ok(true)
}

/// What a transition removes besides changing the occurrence: its work's outbox rows (its
/// pending work ends), its grant row (it ends, and may have one).
#[derive(Debug, Clone, Copy)]
struct Drops {
    work: bool,
    grant: bool,
}

impl Drops {
    /// For `op` as read, entering `to`.
    fn of(op: &OpOccRecord, to: &str) -> Self {
        Self {
            work: op.pending_action.is_some() && !is_running(to),
            grant: op_occ::is_final(to) && may_have_grant_row(op),
        }
    }
}

/// Makes transitions: the database, the links notifications carry, the metrics.
#[derive(Clone)]
pub struct StateMachine {
    pub db: Database,
    pub links: Links,
    pub metrics: LcmMetrics,
}

impl StateMachine {
    /// Moves `op` (as read, owned by `owner`) to a new state. `instance` is the instance
    /// document for the notification when the caller has it (not needed when the change
    /// carries the instance). Returns false when the occurrence changed meanwhile (another
    /// conductor recovered it, or an API request came first): nothing was written.
    pub async fn transition(
        &self,
        major: LcmMajor,
        op: &mut OpOccRecord,
        owner: Option<&str>,
        change: StateChange,
        instance: Option<Value>,
    ) -> Result<bool, CoreError> {
        let from = op.state().to_owned();
        let drop = Drops::of(op, change.to);
        let status =
            notification_status(change.to, op.operation().map_or("", |operation| operation.name()), Some(&from));
        let mut next = op.clone();
        enter(&mut next, &change, &now());
        // Shared by the attempts, not copied for each: the documents may be large.
        let shared = Arc::new(Transition { next, from, owner: owner.map(str::to_owned), change, instance });
        let attempt = || {
            let (links, shared) = (self.links.clone(), shared.clone());
            crate::db_write(&self.db, move |conn| -> Result<bool, CoreError> {
                let Transition { next, from, owner, change, instance } = &*shared;
                Ok(record(conn, major, &links, next, from, owner.as_deref(), change, drop, status, instance.as_ref())?)
            })
        };
        let to = shared.change.to;
        // A transient database failure must not strand the occurrence: try again a few
        // times; if it still fails, recovery moves the orphaned occurrence on.
        let mut tries = 0u32;
        let applied = loop {
            match attempt().await {
                Ok(applied) => break applied,
                Err(error) if tries < 5 => {
                    tries += 1;
                    tracing::warn!(op = %op.id, state = to, %error, tries, "recording a transition failed; retrying");
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(tries))).await;
                }
                Err(error) => return Err(error),
            }
        };
        if applied {
            self.applied(major, op, &shared.change);
            // The attempts' closures are gone: the record is ours again without a copy.
            *op = match Arc::try_unwrap(shared) {
                Ok(transition) => transition.next,
                Err(shared) => shared.next.clone(),
            };
        }
        Ok(applied)
    }
}

impl StateMachine {
    /// A transition recorded in the caller's write transaction, beside writes of its own
    /// (the same rules and guard as [`StateMachine::transition`]): the occurrence as it is
    /// afterwards, `None` when it was no longer in its state with `owner`. Once the
    /// transaction committed, call [`StateMachine::applied`].
    #[allow(clippy::too_many_arguments)]
    pub fn record_in(
        &self,
        conn: &mut AnyConnection,
        major: LcmMajor,
        op: &OpOccRecord,
        owner: Option<&str>,
        change: &StateChange,
        instance: Option<&Value>,
    ) -> Result<Option<OpOccRecord>, CoreError> {
        let from = op.state();
        let drop = Drops::of(op, change.to);
        let status =
            notification_status(change.to, op.operation().map_or("", |operation| operation.name()), Some(from));
        let mut next = op.clone();
        enter(&mut next, change, &now());
        let applied = record(conn, major, &self.links, &next, from, owner, change, drop, status, instance)?;
        Ok(applied.then_some(next))
    }

    /// STARTING → PROCESSING in the caller's write transaction, when the stored plan and
    /// a local grant are all the start needs (no external NFVO, no cancel asked for): the
    /// plan when it applied (`op` is then as committed), `None` and no transition written
    /// when the start must take the conductor's usual way. Once the transaction committed, call
    /// [`StateMachine::applied`].
    pub fn start_in(
        &self,
        conn: &mut AnyConnection,
        major: LcmMajor,
        op: &mut OpOccRecord,
        instance: &InstanceRecord,
        owner: &str,
    ) -> Result<Option<crate::operation::OperationPlan>, CoreError> {
        if op.state() != STARTING || op_occ::is_cancel_pending(&op.body) {
            return Ok(None);
        }
        let Some(plan) = crate::operation::OperationPlan::stored(&op.body, false) else { return Ok(None) };
        let grant = plan.local_grant(
            &instance.body,
            &instance.id,
            &op.id,
            op.operation().map_or("", |operation| operation.name()),
        );
        // Should the transition not apply, the conductor's start sets it again with its own.
        use_local_grant(&mut op.body, &grant);
        let change = StateChange::to(PROCESSING);
        match self.record_in(conn, major, op, Some(owner), &change, Some(&instance.body))? {
            Some(next) => {
                *op = next;
                Ok(Some(plan))
            }
            None => Ok(None),
        }
    }

    /// Counts and logs a committed transition of `op` (as it is afterwards).
    pub fn applied(&self, major: LcmMajor, op: &OpOccRecord, change: &StateChange) {
        if let Some(error) = &change.error {
            let detail = solgate_sol013::problem::ProblemDetails::deserialize(error).map(|problem| problem.detail);
            tracing::warn!(op = %op.id, state = change.to, detail = %detail.unwrap_or_default(), "LCM operation failed");
        }
        self.metrics.count(major, op.operation().map_or("", |operation| operation.name()), change.to);
        tracing::info!(op = %op.id, operation = op.operation().map_or("", |operation| operation.name()), state = change.to, "LCM operation state changed");
    }
}

/// What every attempt at recording a transition writes.
struct Transition {
    next: OpOccRecord,
    from: String,
    owner: Option<String>,
    change: StateChange,
    instance: Option<Value>,
}

/// Reads an occurrence for a request on it (404 when unknown).
pub fn load_op(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> Result<OpOccRecord, CoreError> {
    lcm::find_op(conn, major, id)?.ok_or_else(|| op_not_found(id))
}

pub fn op_not_found(id: &str) -> CoreError {
    CoreError::NotFound(format!("VnfLcmOpOcc {id} not found."))
}
