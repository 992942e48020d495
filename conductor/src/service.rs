//! The conductor's main loop: heartbeats and recovery, the outbox relay, and the RPC
//! consumer dispatching each message by kind and major version.

use std::sync::Arc;
use std::time::Duration;

use solgate_core::work::{ConductorSlot, LocalConductor, TakenUp};
use solgate_db::repo::conductors;
use solgate_db::repo::lcm::LcmMajor;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::context::{ConductorContext, ConductorError, RunningGuard};
use crate::lcm::engine::{self, ClaimedOp};
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

/// A start taken up in its accepting transaction, with its place under the limit.
struct Taken {
    major: LcmMajor,
    claimed: ClaimedOp,
    _permit: OwnedSemaphorePermit,
}

/// The conductor's door for starts accepted in this process (`solgate serve`): a place is
/// one of `max_concurrent_operations`, and what is taken up reaches the service's loop, which
/// runs it like a delivered message's work (and waits for it when it stops).
struct LocalStarts {
    ctx: Arc<ConductorContext>,
    limit: Arc<Semaphore>,
    sender: mpsc::UnboundedSender<Taken>,
}

impl LocalConductor for LocalStarts {
    fn reserve(&self) -> Option<Box<dyn ConductorSlot>> {
        if self.sender.is_closed() {
            return None;
        }
        let permit = self.limit.clone().try_acquire_owned().ok()?;
        Some(Box::new(Slot {
            ctx: self.ctx.clone(),
            owner: self.ctx.id.clone(),
            lease_expires_at: engine::lease_until(&self.ctx),
            running: None,
            permit,
            sender: self.sender.clone(),
        }))
    }
}

struct Slot {
    ctx: Arc<ConductorContext>,
    owner: String,
    lease_expires_at: String,
    running: Option<RunningGuard>,
    permit: OwnedSemaphorePermit,
    sender: mpsc::UnboundedSender<Taken>,
}

impl ConductorSlot for Slot {
    fn owner(&self) -> &str {
        &self.owner
    }

    fn lease_expires_at(&self) -> &str {
        &self.lease_expires_at
    }

    fn enter(&mut self, op_id: &str) {
        self.running = Some(self.ctx.running.enter(op_id));
    }

    fn run(self: Box<Self>, major: LcmMajor, taken: TakenUp) {
        let Slot { ctx, running, permit, sender, .. } = *self;
        let Some(running) = running else { return };
        let claimed = ClaimedOp::taken_up(&ctx, major, taken, running);
        // The service stopped meanwhile: the guard goes with the message, and recovery
        // resumes the occurrence as it does a stopped conductor's.
        let _ = sender.send(Taken { major, claimed, _permit: permit });
    }
}

/// A conductor about to run: its limit on concurrent operations, shared by delivered
/// messages and starts taken up in this process.
pub struct Service {
    ctx: Arc<ConductorContext>,
    limit: Arc<Semaphore>,
    sender: mpsc::UnboundedSender<Taken>,
    taken: mpsc::UnboundedReceiver<Taken>,
}

impl Service {
    pub fn new(ctx: Arc<ConductorContext>) -> Self {
        let limit = Arc::new(Semaphore::new(ctx.settings.max_concurrent_operations.max(1)));
        let (sender, taken) = mpsc::unbounded_channel();
        Self { ctx, limit, sender, taken }
    }

    /// Where the API of this process hands accepted starts to this conductor; `None` with an
    /// external NFVO, whose grant is asked for outside any transaction.
    pub fn local_starts(&self) -> Option<Arc<dyn LocalConductor>> {
        if self.ctx.nfvo.is_some() {
            return None;
        }
        Some(Arc::new(LocalStarts { ctx: self.ctx.clone(), limit: self.limit.clone(), sender: self.sender.clone() }))
    }

    /// Runs the conductor until `stop` is cancelled or the transport closes. In-flight
    /// operations get `drain_timeout` to finish; what does not finish is recovered later.
    pub async fn run(
        self,
        mut consumer: Box<dyn RpcConsumer>,
        stop: CancellationToken,
        drain_timeout: Duration,
    ) -> Result<(), ConductorError> {
        let Service { ctx, limit, sender, mut taken } = self;
        // Only the local starts' senders keep the channel open.
        drop(sender);
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

        let mut running = JoinSet::new();
        // A place is taken before a message: a conductor at its limit leaves messages queued.
        let mut permit = None;
        loop {
            let next = tokio::select! {
                () = stop.cancelled() => break,
                Some(taken) = taken.recv() => Next::Taken(Box::new(taken)),
                acquired = limit.clone().acquire_owned(), if permit.is_none() => match acquired {
                    Ok(acquired) => Next::Permit(acquired),
                    Err(_) => break,
                },
                // Cancel-safe on both transports: a message not yet returned stays queued.
                delivery = consumer.next(), if permit.is_some() => Next::Delivery(delivery),
            };
            match next {
                Next::Taken(taken) => {
                    running.spawn(run_taken(ctx.clone(), *taken));
                }
                Next::Permit(acquired) => permit = Some(acquired),
                Next::Delivery(None) => {
                    tracing::info!("RPC transport closed; conductor stops");
                    break;
                }
                Next::Delivery(Some(delivery)) => {
                    let (ctx, permit) = (ctx.clone(), permit.take());
                    running.spawn(async move {
                        Box::pin(handle(ctx, delivery)).await;
                        drop(permit);
                    });
                }
            }
            // Reap finished tasks so the set does not grow.
            while running.try_join_next().is_some() {}
        }
        // No new local starts; those committed already run now.
        taken.close();
        while let Ok(left) = taken.try_recv() {
            running.spawn(run_taken(ctx.clone(), left));
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
}

enum Next {
    Taken(Box<Taken>),
    Permit(OwnedSemaphorePermit),
    Delivery(Option<Delivery>),
}

async fn run_taken(ctx: Arc<ConductorContext>, taken: Taken) {
    let Taken { major, claimed, _permit } = taken;
    let id = claimed.op.id.clone();
    if let Err(error) = Box::pin(engine::run(&ctx, major, claimed)).await {
        tracing::error!(%error, op = %id, "LCM operation run failed");
    }
}

/// Runs a conductor that takes work by message only (see [`Service::run`]).
pub async fn run(
    ctx: Arc<ConductorContext>,
    consumer: Box<dyn RpcConsumer>,
    stop: CancellationToken,
    drain_timeout: Duration,
) -> Result<(), ConductorError> {
    Service::new(ctx).run(consumer, stop, drain_timeout).await
}
