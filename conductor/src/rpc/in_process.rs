//! The in-process transport of `solgate serve`: an unbounded channel. Nothing is
//! durable here; the outbox relay republishes work whose message died with the process. A
//! requeued message goes back into the channel.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::{Mutex, mpsc};

use super::{Acker, Delivery, RpcConsumer, RpcError, RpcMessage, RpcPublisher};

#[derive(Clone)]
pub struct InProcessPublisher {
    sender: mpsc::UnboundedSender<RpcMessage>,
}

pub struct InProcessConsumer {
    receiver: Arc<Mutex<mpsc::UnboundedReceiver<RpcMessage>>>,
    /// For requeued messages; weak, so the channel still closes when the publishers are gone.
    requeue: mpsc::WeakUnboundedSender<RpcMessage>,
}

/// A connected publisher/consumer pair.
pub fn channel() -> (InProcessPublisher, InProcessConsumer) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let requeue = sender.downgrade();
    (InProcessPublisher { sender }, InProcessConsumer { receiver: Arc::new(Mutex::new(receiver)), requeue })
}

impl RpcPublisher for InProcessPublisher {
    fn publish<'a>(&'a self, message: &'a RpcMessage) -> BoxFuture<'a, Result<(), RpcError>> {
        let result = self.sender.send(message.clone()).map_err(|_| RpcError::Closed);
        Box::pin(async move { result })
    }

    fn is_connected(&self) -> bool {
        !self.sender.is_closed()
    }

    fn in_process(&self) -> bool {
        true
    }
}

/// Acknowledging is a no-op; requeueing sends the message again (a conductor that could
/// not claim its work, the database being unreachable, tries again soon instead of when
/// the outbox relay republishes it).
struct InProcessAck {
    message: RpcMessage,
    requeue: mpsc::WeakUnboundedSender<RpcMessage>,
}

impl Acker for InProcessAck {
    fn ack(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }

    fn requeue(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>> {
        let sent = match self.requeue.upgrade() {
            Some(sender) => sender.send(self.message).map_err(|_| RpcError::Closed),
            None => Err(RpcError::Closed),
        };
        Box::pin(async move { sent })
    }
}

impl RpcConsumer for InProcessConsumer {
    fn next(&mut self) -> BoxFuture<'_, Option<Delivery>> {
        Box::pin(async move {
            let message = self.receiver.lock().await.recv().await?;
            let acker = Box::new(InProcessAck { message: message.clone(), requeue: self.requeue.clone() });
            Some(Delivery { message, acker })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn delivers_in_order() {
        let (publisher, mut consumer) = channel();
        publisher.publish(&RpcMessage::lcm("a", 2)).await.unwrap();
        publisher.publish(&RpcMessage::package("p")).await.unwrap();
        assert_eq!(consumer.next().await.unwrap().message, RpcMessage::lcm("a", 2));
        assert_eq!(consumer.next().await.unwrap().message, RpcMessage::package("p"));
        assert!(publisher.is_connected());
        drop(consumer);
        assert!(!publisher.is_connected());
    }

    /// A requeued message is delivered again; the consumer does not keep the channel open.
    #[tokio::test]
    async fn a_requeued_message_comes_back() {
        let (publisher, mut consumer) = channel();
        publisher.publish(&RpcMessage::lcm("a", 2)).await.unwrap();
        publisher.publish(&RpcMessage::lcm("b", 2)).await.unwrap();
        let first = consumer.next().await.unwrap();
        first.acker.requeue().await.unwrap();
        consumer.next().await.unwrap().acker.ack().await.unwrap();
        let again = tokio::time::timeout(std::time::Duration::from_secs(5), consumer.next()).await;
        assert_eq!(again.expect("the requeued message is delivered again").unwrap().message, RpcMessage::lcm("a", 2));
        drop(publisher);
        assert!(consumer.next().await.is_none(), "the channel closes with its publishers");
    }
}
