//! Heartbeats and recovery. Each conductor records a heartbeat; an operation left in
//! STARTING / PROCESSING / ROLLING_BACK by a conductor whose heartbeat stopped is moved on
//! per SOL003 (STARTING → ROLLED_BACK, PROCESSING / ROLLING_BACK → FAILED_TEMP) with an
//! error, and a notification. Operations of live conductors are never touched (Tacker
//! flips every such operation at start-up, even those of live peers).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::{conductors, to_text};
use solgate_db::{DbError, write_transaction};
use tokio_util::sync::CancellationToken;

use crate::context::{ConductorContext, ConductorError};
use solgate_core::notify::{self, Event};
use solgate_core::op_occ::{self, FAILED_TEMP, ROLLED_BACK, STARTING};
use solgate_core::{now, without_private};

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
    let links = ctx.links.clone();
    let me = ctx.id.clone();
    let running = ctx.running.clone();
    let recovered = ctx
        .db_run(move |conn| {
            // Ours count as dead too when no task runs them (the task failed).
            let live: Vec<String> = conductors::live(conn, &alive_since)?.into_iter().filter(|id| *id != me).collect();
            let mut recovered = Vec::new();
            for major in [LcmMajor::V1, LcmMajor::V2] {
                for mut op in lcm::ops_owned_by_others(conn, major, &live)? {
                    if op.owner.as_deref() == Some(me.as_str()) && running.contains(&op.id) {
                        continue;
                    }
                    let dead_owner = op.owner.clone();
                    let previous = op.state().to_owned();
                    let target = if previous == STARTING { ROLLED_BACK } else { FAILED_TEMP };
                    let done = write_transaction(conn, |conn| {
                        op_occ::set_state(&mut op.body, target, &now());
                        op_occ::set_error(
                            &mut op.body,
                            Some(op_occ::problem(
                                500,
                                "Internal Server Error",
                                "Failure due to conductor processing error.",
                            )),
                        );
                        op.body["isCancelPending"] = json!(false);
                        op.owner = None;
                        op.lease_expires_at = None;
                        if !lcm::update_op_guarded(conn, major, &op, dead_owner.as_deref(), &previous)? {
                            return Ok(false);
                        }
                        if target == ROLLED_BACK {
                            lcm::delete_grant(conn, major, &op.id)?;
                        }
                        let instance = lcm::find_instance(conn, major, op.vnf_instance_id())?
                            .map(|record| without_private(record.body))
                            .unwrap_or_else(|| json!({"id": op.vnf_instance_id()}));
                        let view = without_private(op.body.clone());
                        notify::enqueue(
                            conn,
                            major,
                            &links,
                            Event::OpOcc { op: &view, instance: &instance, status: "RESULT" },
                        )?;
                        Ok::<_, DbError>(true)
                    })?;
                    if done {
                        recovered.push((op.id.clone(), previous, target, dead_owner));
                    }
                }
            }
            // Forget conductors long dead (their operations are recovered by now).
            conductors::remove_stale(conn, &to_text(chrono::Utc::now() - lease * 10))?;
            Ok(recovered)
        })
        .await?;
    for (id, from, to, owner) in &recovered {
        tracing::warn!(op = %id, from = %from, to = %to, dead_conductor = ?owner, "recovered an operation of a dead conductor");
    }
    Ok(recovered.len())
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
