//! The in-process transport of `solgate serve`: an unbounded channel. Nothing is
//! durable here; the outbox relay republishes work whose message died with the process.

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
}

/// A connected publisher/consumer pair.
pub fn channel() -> (InProcessPublisher, InProcessConsumer) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (InProcessPublisher { sender }, InProcessConsumer { receiver: Arc::new(Mutex::new(receiver)) })
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

struct NoAck;

impl Acker for NoAck {
    fn ack(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>> {
        Box::pin(async { Ok(()) })
    }

    fn requeue(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>> {
        // Nothing to return the message to; the outbox relay brings it back.
        Box::pin(async { Ok(()) })
    }
}

impl RpcConsumer for InProcessConsumer {
    fn next(&mut self) -> BoxFuture<'_, Option<Delivery>> {
        Box::pin(async move {
            let message = self.receiver.lock().await.recv().await?;
            Some(Delivery { message, acker: Box::new(NoAck) })
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
}
