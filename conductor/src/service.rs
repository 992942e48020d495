//! The conductor's main loop: heartbeats and recovery, the outbox relay, and the RPC
//! consumer dispatching each message by kind and major version.

use std::sync::Arc;
use std::time::Duration;

use solgate_db::repo::conductors;
use solgate_db::repo::lcm::LcmMajor;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::context::{ConductorContext, ConductorError};
use crate::lcm::engine;
use crate::rpc::{Delivery, RpcConsumer, WorkKind};
use crate::{notifier, onboarding, recovery, relay};

/// Handles one delivery: claim the work, acknowledge the message once the claim is
/// committed, then run it.
async fn handle(ctx: Arc<ConductorContext>, delivery: Delivery) {
    let Delivery { message, acker } = delivery;
    match message.kind {
        WorkKind::LcmOpOcc => {
            let Some(major) = LcmMajor::from_major(message.major) else {
                tracing::error!(?message, "RPC for an unknown major version");
                let _ = acker.ack().await;
                return;
            };
            let claimed = match engine::claim(&ctx, major, &message.id).await {
                Ok(claimed) => claimed,
                Err(error) => {
                    // The database is unreachable: let the message come back later.
                    tracing::warn!(%error, op = %message.id, "cannot claim; requeueing");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    let _ = acker.requeue().await;
                    return;
                }
            };
            if let Err(error) = acker.ack().await {
                tracing::warn!(%error, "ack failed (the message may come again; that is harmless)");
            }
            let Some(claimed) = claimed else { return };
            let result = Box::pin(engine::run(&ctx, major, claimed)).await;
            if let Err(error) = result {
                tracing::error!(%error, op = %message.id, "LCM operation run failed");
            }
        }
        WorkKind::VnfPackage => {
            let result = onboarding::process(&ctx, &message.id).await;
            if let Err(error) = &result {
                tracing::error!(%error, package = %message.id, "onboarding failed to run");
            }
            let _ = acker.ack().await;
        }
    }
}

/// Runs the conductor until `stop` is cancelled or the transport closes. In-flight
/// operations get `drain_timeout` to finish; what does not finish is recovered later.
pub async fn run(
    ctx: Arc<ConductorContext>,
    mut consumer: Box<dyn RpcConsumer>,
    stop: CancellationToken,
    drain_timeout: Duration,
) -> Result<(), ConductorError> {
    recovery::heartbeat(&ctx).await?;
    tracing::info!(conductor = %ctx.id, "conductor started");
    if let Err(error) = onboarding::resume_interrupted(&ctx).await {
        tracing::warn!(%error, "could not resume interrupted onboardings");
    }
    let background_stop = stop.child_token();
    let mut background = JoinSet::new();
    background.spawn(recovery::run(ctx.clone(), background_stop.clone()));
    background.spawn(relay::run(ctx.clone(), background_stop.clone()));
    background.spawn(notifier::run(ctx.clone(), background_stop.clone()));

    let limit = Arc::new(Semaphore::new(ctx.settings.max_concurrent_operations.max(1)));
    let mut running = JoinSet::new();
    loop {
        let permit = tokio::select! {
            () = stop.cancelled() => break,
            permit = limit.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let delivery = tokio::select! {
            () = stop.cancelled() => break,
            delivery = consumer.next() => delivery,
        };
        let Some(delivery) = delivery else {
            tracing::info!("RPC transport closed; conductor stops");
            break;
        };
        let ctx = ctx.clone();
        running.spawn(async move {
            Box::pin(handle(ctx, delivery)).await;
            drop(permit);
        });
        // Reap finished tasks so the set does not grow.
        while running.try_join_next().is_some() {}
    }
    background_stop.cancel();
    if tokio::time::timeout(drain_timeout, async { while running.join_next().await.is_some() {} }).await.is_err() {
        tracing::warn!(left = running.len(), "operations still running at shutdown; they will be recovered");
        running.abort_all();
    }
    while background.join_next().await.is_some() {}
    let id = ctx.id.clone();
    // Leaving the table tells peers at once that our unfinished work needs recovery.
    let _ = ctx.db_run(move |conn| conductors::unregister(conn, &id)).await;
    tracing::info!(conductor = %ctx.id, "conductor stopped");
    Ok(())
}
