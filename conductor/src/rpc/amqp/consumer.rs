//! Consuming every queue on one channel with manual acks, across reconnections.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, SelectAll};
use futures::{FutureExt, StreamExt};
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions, BasicRejectOptions};
use lapin::types::FieldTable;
use lapin::{Channel, message::Delivery as LapinDelivery};
use tokio::sync::{mpsc, watch};
use tracing::{debug, info, warn};

use super::link::{Link, STATE_POLL, declare_queue};
use super::{Backoff, Keepalive, Shared, shut_down};
use crate::rpc::{Acker, Delivery, RpcConsumer, RpcError, RpcMessage};

/// The deliveries of all queues, merged. `None` marks the end of one queue's consumer
/// (cancelled by the broker or its channel closed).
type Deliveries = SelectAll<BoxStream<'static, Option<lapin::Result<LapinDelivery>>>>;

/// A delivery on its way from the consuming task to `next()`.
struct Inbound {
    message: RpcMessage,
    acker: lapin::Acker,
}

/// Deliveries of every queue of the transport. Dropping it closes its channel: the broker
/// returns what it held unacked to the queues.
pub struct AmqpConsumer {
    receiver: mpsc::Receiver<Inbound>,
    shutdown: watch::Receiver<bool>,
    _keepalive: Arc<Keepalive>,
}

impl AmqpConsumer {
    pub(super) fn start(shared: &Arc<Shared>, keepalive: Arc<Keepalive>) -> Self {
        let (sender, receiver) = mpsc::channel(usize::from(shared.prefetch.max(1)));
        let shutdown = shared.shutdown.subscribe();
        let task = tokio::spawn(consume(Arc::clone(shared), sender));
        shared.track(task);
        Self { receiver, shutdown, _keepalive: keepalive }
    }
}

impl RpcConsumer for AmqpConsumer {
    fn next(&mut self) -> BoxFuture<'_, Option<Delivery>> {
        Box::pin(async move {
            loop {
                if *self.shutdown.borrow() {
                    return None;
                }
                let inbound = tokio::select! {
                    biased;
                    () = shut_down(&mut self.shutdown) => return None,
                    inbound = self.receiver.recv() => inbound?,
                };
                if inbound.acker.poisoned() {
                    // Its channel died after it was received; the broker delivers it again.
                    debug!(message = ?inbound.message, "skipping a delivery of a closed channel");
                    continue;
                }
                return Some(Delivery { message: inbound.message, acker: Box::new(AmqpAcker(inbound.acker)) });
            }
        })
    }
}

struct AmqpAcker(lapin::Acker);

impl Acker for AmqpAcker {
    fn ack(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>> {
        async move { settled(self.0.ack(BasicAckOptions::default()).await) }.boxed()
    }

    fn requeue(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>> {
        async move { settled(self.0.nack(BasicNackOptions { multiple: false, requeue: true }).await) }.boxed()
    }
}

fn settled(result: lapin::Result<bool>) -> Result<(), RpcError> {
    match result {
        Ok(true) => Ok(()),
        // lapin says `false` when the delivery's channel is gone: the broker has taken the
        // message back and delivers it again, so the work will be looked at once more.
        Ok(false) => Err(RpcError::NotConnected("the channel of this delivery is closed".to_owned())),
        Err(error) => Err(RpcError::Transport(error.to_string())),
    }
}

/// How a consuming session ended.
enum Ended {
    Stop,
    Lost(String),
}

/// The consuming task: opens a session on each connection the supervisor establishes and
/// forwards deliveries until the consumer is dropped or the transport shut down.
async fn consume(shared: Arc<Shared>, sender: mpsc::Sender<Inbound>) {
    let mut links = shared.link.subscribe();
    let mut shutdown = shared.shutdown.subscribe();
    let mut backoff = Backoff::new(&shared.options);
    let tag = format!("solgate.{}", uuid::Uuid::new_v4().simple());
    loop {
        let link = tokio::select! {
            () = shut_down(&mut shutdown) => return,
            () = sender.closed() => return,
            link = live_link(&mut links) => link,
        };
        let ended = match open(&shared, &link, &tag).await {
            Ok((channel, mut deliveries)) => {
                backoff.reset();
                info!(queues = ?shared.consumed, generation = link.generation, "consuming RPC queues");
                // Dropping `channel` afterwards closes it: the broker requeues what it held unacked.
                pump(&mut deliveries, &channel, &sender, &mut shutdown).await
            }
            Err(error) => Ended::Lost(format!("cannot start consuming: {error}")),
        };
        match ended {
            Ended::Stop => return,
            Ended::Lost(reason) => warn!(%reason, "stopped consuming RPC queues; resuming when the broker is back"),
        }
        // Wait before the next session: the connection may be alive while this channel
        // keeps failing (e.g. a queue declared with other arguments).
        let delay = backoff.next_delay().max(Duration::from_millis(100));
        tokio::select! {
            () = shut_down(&mut shutdown) => return,
            () = sender.closed() => return,
            () = tokio::time::sleep(delay) => {}
        }
    }
}

/// The next usable connection (the current one if it is still alive).
async fn live_link(links: &mut watch::Receiver<Option<Arc<Link>>>) -> Arc<Link> {
    loop {
        let current = links.borrow_and_update().as_ref().filter(|link| link.is_alive()).cloned();
        if let Some(link) = current {
            return link;
        }
        tokio::select! {
            changed = links.changed() => {
                if changed.is_err() {
                    // The transport is gone; the caller's other branches end the task.
                    std::future::pending::<()>().await;
                }
            }
            // A link may die without the supervisor having replaced it yet.
            () = tokio::time::sleep(STATE_POLL) => {}
        }
    }
}

/// Opens a channel with the prefetch limit and consumes every queue on it.
async fn open(shared: &Shared, link: &Link, tag: &str) -> lapin::Result<(Channel, Deliveries)> {
    let channel = link.connection.create_channel().await?;
    // RabbitMQ reads `global: false` as a limit per consumer, i.e. per queue here (its
    // reinterpretation of basic.qos). Per-channel QoS (`global: true`) is the deprecated
    // feature `global_qos`, refused by default since RabbitMQ 4.3. The conductor's own
    // concurrency limit bounds the work in progress.
    channel.basic_qos(shared.prefetch, BasicQosOptions { global: false }).await?;
    let mut deliveries: Deliveries = SelectAll::new();
    for queue in &shared.consumed {
        declare_queue(&channel, queue).await?;
        let consumer = channel
            .basic_consume(
                queue.as_str().into(),
                format!("{tag}.{queue}").into(),
                BasicConsumeOptions::default(), // manual ack, not exclusive: conductors share the queue
                FieldTable::default(),
            )
            .await?;
        deliveries.push(consumer.map(Some).chain(stream::once(async { None })).boxed());
    }
    Ok((channel, deliveries))
}

async fn pump(
    deliveries: &mut Deliveries,
    channel: &Channel,
    sender: &mpsc::Sender<Inbound>,
    shutdown: &mut watch::Receiver<bool>,
) -> Ended {
    let mut poll = tokio::time::interval(STATE_POLL);
    loop {
        let next = tokio::select! {
            () = shut_down(shutdown) => return Ended::Stop,
            () = sender.closed() => return Ended::Stop,
            _ = poll.tick() => None,
            next = deliveries.next() => Some(next),
        };
        let Some(next) = next else {
            if !channel.status().connected() {
                return Ended::Lost("the consuming channel is closed".to_owned());
            }
            continue;
        };
        let delivery = match next {
            Some(Some(Ok(delivery))) => delivery,
            Some(Some(Err(error))) => return Ended::Lost(error.to_string()),
            Some(None) => return Ended::Lost("the broker cancelled a queue's consumer".to_owned()),
            None => return Ended::Lost("no queue to consume".to_owned()),
        };
        let LapinDelivery { data, acker, routing_key, redelivered, .. } = delivery;
        match serde_json::from_slice::<RpcMessage>(&data) {
            Ok(message) => {
                debug!(queue = %routing_key, ?message, redelivered, "RPC message received");
                let inbound = Inbound { message, acker };
                tokio::select! {
                    () = shut_down(shutdown) => return Ended::Stop,
                    sent = sender.send(inbound) => if sent.is_err() { return Ended::Stop },
                }
            }
            Err(error) => {
                warn!(queue = %routing_key, %error, body = %String::from_utf8_lossy(&data), "malformed RPC message dropped");
                // Rejected, not requeued: a body nobody can read would otherwise come back forever.
                if let Err(error) = acker.reject(BasicRejectOptions { requeue: false }).await {
                    warn!(%error, "rejecting a malformed RPC message failed");
                }
            }
        }
    }
}
