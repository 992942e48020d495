//! Heartbeats and recovery. Each conductor records a heartbeat; an operation left by a
//! conductor whose heartbeat stopped is resumed by a live one: queued again with its work
//! (STARTING and PROCESSING: start; ROLLING_BACK: rollback), so that it runs on from its
//! stored plan and grant. A re-run is safe because every driver finds what an earlier run
//! of the same operation made (deterministic names, the simulated VIM holds nothing
//! outside the database) and a grant asked for before is waited for, not asked again.
//! An operation whose conductors keep dying on it is resumed at most [`MAX_RESUMES`]
//! times; then STARTING → ROLLED_BACK (nothing was done), PROCESSING / ROLLING_BACK →
//! FAILED_TEMP with an error that names the step. Operations of live conductors are never
//! touched (Tacker flips every such operation at start-up, even those of live peers, and
//! turns PROCESSING into FAILED_TEMP with "Failure due to conductor processing error.").

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use solgate_core::PRIVATE_KEY;
use solgate_core::lifecycle::{self, StateChange};
use solgate_core::op_occ::{
    ACTION_ROLLBACK, ACTION_START, FAILED_TEMP, PROCESSING, ROLLED_BACK, ROLLING_BACK, STARTING,
};
use solgate_core::work::{RpcMessage, WorkKind, kind_name};
use solgate_db::repo::conductors;
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::outbox;
use solgate_db::repo::to_text;
use solgate_db::write_transaction;
use tokio_util::sync::CancellationToken;

use crate::context::{ConductorContext, ConductorError};

/// Registers (or refreshes) this conductor's heartbeat.
pub async fn heartbeat(ctx: &ConductorContext) -> Result<(), ConductorError> {
    let id = ctx.id.clone();
    let hostname = ctx.hostname.clone();
    ctx.db_run(move |conn| conductors::heartbeat(conn, &id, &hostname)).await
}

/// Recovers the operations of dead conductors (and this conductor's orphans); returns
/// how many.
pub async fn recover_once(ctx: &ConductorContext) -> Result<usize, ConductorError> {
    let lease = chrono::Duration::seconds(i64::try_from(ctx.settings.lease_timeout_secs).unwrap_or(30));
    let alive_since = to_text(chrono::Utc::now() - lease);
    let me = ctx.id.clone();
    let running = ctx.running.clone();
    let orphans = ctx
        .db_run(move |conn| {
            // Ours count as dead too when no task runs them (the task failed).
            let live: Vec<String> = conductors::live(conn, &alive_since)?.into_iter().filter(|id| *id != me).collect();
            let mut orphans = Vec::new();
            for major in [LcmMajor::V1, LcmMajor::V2] {
                for op in lcm::ops_owned_by_others(conn, major, &live)? {
                    if !(op.owner.as_deref() == Some(me.as_str()) && running.contains(&op.id)) {
                        orphans.push((major, op));
                    }
                }
            }
            // Forget conductors long dead (their operations are recovered by now).
            conductors::remove_stale(conn, &to_text(chrono::Utc::now() - lease * 10))?;
            Ok(orphans)
        })
        .await?;
    let mut recovered = 0;
    for (major, mut op) in orphans {
        let dead_owner = op.owner.clone();
        let previous = op.state().to_owned();
        let resumes = op.body[PRIVATE_KEY]["resumes"].as_u64().unwrap_or(0);
        let action = match previous.as_str() {
            STARTING | PROCESSING => Some(ACTION_START),
            ROLLING_BACK => Some(ACTION_ROLLBACK),
            _ => None,
        };
        if let Some(action) = action.filter(|_| resumes < MAX_RESUMES) {
            if resume(ctx, major, op.clone(), dead_owner.clone(), resumes + 1, action).await? {
                recovered += 1;
                tracing::warn!(op = %op.id, state = %previous, dead_conductor = ?dead_owner, resumes = resumes + 1,
                    "an operation of a dead conductor is resumed");
            }
            continue;
        }
        let target = if previous == STARTING { ROLLED_BACK } else { FAILED_TEMP };
        let who = dead_owner.as_deref().unwrap_or("unknown");
        // Say what happened instead of Tacker's "Failure due to conductor processing error.".
        let step = match previous.as_str() {
            STARTING => "before the operation began (granting)",
            PROCESSING => "while it ran its infra action on the VIM",
            _ => "while it rolled the operation back on the VIM",
        };
        let detail = format!(
            "Conductors stopped {resumes} times {step} (the last was {who}); it was not resumed again{}.",
            if previous == STARTING { "" } else { ": retry or roll back the operation" }
        );
        let change = StateChange::to(target).with_error(500, &detail);
        if ctx.machine.transition(major, &mut op, dead_owner.as_deref(), change, None).await? {
            recovered += 1;
            tracing::warn!(op = %op.id, from = %previous, to = %target, dead_conductor = ?dead_owner, "recovered an operation of a dead conductor");
        }
    }
    Ok(recovered)
}

/// An operation is resumed at most this often (a conductor that dies on it every time must
/// not make it loop forever).
pub const MAX_RESUMES: u64 = 3;

/// Gives a dead conductor's operation back to the queue: no owner, `action` pending again,
/// a journal entry and a new outbox row, in one transaction that holds only while the dead
/// owner still has it in the same state; then publishes its message.
async fn resume(
    ctx: &ConductorContext,
    major: LcmMajor,
    mut op: lcm::OpOccRecord,
    dead_owner: Option<String>,
    resumes: u64,
    action: &'static str,
) -> Result<bool, ConductorError> {
    if !op.body.get(PRIVATE_KEY).is_some_and(serde_json::Value::is_object) {
        op.body[PRIVATE_KEY] = json!({});
    }
    op.body[PRIVATE_KEY]["resumes"] = json!(resumes);
    let state = op.state().to_owned();
    lifecycle::journal(
        &mut op.body,
        json!({"resumed": state, "deadConductor": dead_owner, "by": ctx.id, "at": solgate_core::now()}),
    );
    op.owner = None;
    op.lease_expires_at = None;
    op.pending_action = Some(action.to_owned());
    let message = RpcMessage::lcm(op.id.clone(), major.number());
    let queued = ctx
        .db_run(move |conn| {
            write_transaction(conn, |conn| {
                if !lcm::update_op_guarded(conn, major, &op, dead_owner.as_deref(), &state)? {
                    return Ok(None);
                }
                Ok(Some(outbox::enqueue(conn, kind_name(WorkKind::LcmOpOcc), &op.id, major.number())?))
            })
        })
        .await?;
    let Some(outbox_id) = queued else { return Ok(false) };
    crate::relay::publish_new(ctx, outbox_id, &message).await;
    Ok(true)
}

pub async fn run(ctx: Arc<ConductorContext>, stop: CancellationToken) {
    let interval = Duration::from_secs(ctx.settings.heartbeat_interval_secs.max(1));
    loop {
        if let Err(error) = heartbeat(&ctx).await {
            tracing::warn!(%error, "heartbeat failed");
        }
        if let Err(error) = recover_once(&ctx).await {
            tracing::warn!(%error, "recovery pass failed");
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}
