//! The outbox relay: publishes work whose message was never confirmed, and republishes
//! work whose message was published long ago but never taken up (lost with a process or
//! a broker). A broker outage therefore delays work and loses none.

use std::sync::Arc;
use std::time::Duration;

use solgate_db::repo::outbox::{self, OutboxRow};
use solgate_db::repo::to_text;
use tokio_util::sync::CancellationToken;

use crate::context::ConductorContext;
use solgate_core::work::{RpcMessage, RpcPublisher, message_of};

/// Publishes one outbox row's message and records the outcome.
pub async fn publish_row(ctx: &ConductorContext, publisher: &dyn RpcPublisher, row: &OutboxRow) -> bool {
    let Some(message) = message_of(row) else {
        tracing::error!(row = row.id, kind = %row.kind, "outbox row of an unknown kind");
        return false;
    };
    let id = row.id;
    match publisher.publish(&message).await {
        Ok(()) => {
            ctx.metrics.outbox_republished.with_label_values(&["published"]).inc();
            if let Err(error) = ctx.db_run(move |conn| outbox::mark_published(conn, &[id])).await {
                tracing::warn!(%error, "could not mark an outbox row published");
            }
            true
        }
        Err(error) => {
            ctx.metrics.outbox_republished.with_label_values(&["failed"]).inc();
            tracing::debug!(%error, row = id, "publishing from the outbox failed; will retry");
            let _ = ctx.db_run(move |conn| outbox::mark_failed_attempt(conn, id)).await;
            false
        }
    }
}

/// Publishes the message of an outbox row this process has just written (the row stays
/// for the relay should this fail).
pub async fn publish_new(ctx: &ConductorContext, outbox_id: i64, message: &RpcMessage) {
    match ctx.publisher.publish(message).await {
        Ok(()) if ctx.publisher.in_process() => {}
        Ok(()) => {
            if let Err(error) = ctx.db_run(move |conn| outbox::mark_published(conn, &[outbox_id])).await {
                tracing::warn!(%error, "could not mark an outbox row published");
            }
        }
        Err(error) => tracing::debug!(%error, row = outbox_id, "publishing failed; the outbox relay will retry"),
    }
}

/// One pass: everything due, oldest first. Stops at the first failure (the transport is
/// down; the next pass tries again). `started`: when this process started.
pub async fn relay_once(ctx: &ConductorContext, started: chrono::DateTime<chrono::Utc>) -> usize {
    let now = chrono::Utc::now();
    let republish_after = chrono::Duration::seconds(i64::try_from(ctx.rpc_settings.republish_after_secs).unwrap_or(30));
    let (unpublished_before, republish_before) = if ctx.publisher.in_process() {
        // Messages live in this process's memory and their rows are not marked when they
        // are published: a row's message is gone if the row was written before this process
        // started, or has been left untaken for `republish_after_secs` (requeued).
        let gone_before = to_text(started.max(now - republish_after));
        (gone_before.clone(), gone_before)
    } else {
        let grace = chrono::Duration::from_std(solgate_core::work::UNPUBLISHED_GRACE).unwrap_or_default();
        (to_text(now - grace), to_text(now - republish_after))
    };
    let rows = match ctx.db_run(move |conn| outbox::due(conn, &unpublished_before, &republish_before, 200)).await {
        Ok(rows) => rows,
        Err(error) => {
            tracing::warn!(%error, "outbox relay cannot read the outbox");
            return 0;
        }
    };
    let mut published = 0;
    for row in &rows {
        if !publish_row(ctx, ctx.publisher.as_ref(), row).await {
            break;
        }
        published += 1;
    }
    if published > 0 {
        tracing::info!(published, "outbox relay published pending work");
    }
    published
}

pub async fn run(ctx: Arc<ConductorContext>, stop: CancellationToken) {
    let started = chrono::Utc::now();
    let interval = Duration::from_secs(ctx.rpc_settings.relay_interval_secs.max(1));
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
        relay_once(&ctx, started).await;
    }
}
