//! Publishing with publisher confirms.

use std::sync::Arc;

use futures::future::BoxFuture;
use lapin::options::BasicPublishOptions;
use lapin::{BasicProperties, Confirmation};
use tracing::debug;

use super::link::{Link, declare_queue};
use super::{Keepalive, Shared};
use crate::rpc::{RpcError, RpcMessage, RpcPublisher};

/// AMQP delivery mode of a message the broker writes to disk.
const PERSISTENT: u8 = 2;

/// Publishes RPC messages; clones share the transport's connection and confirm channel.
#[derive(Clone)]
pub struct AmqpPublisher {
    shared: Arc<Shared>,
    _keepalive: Arc<Keepalive>,
}

impl AmqpPublisher {
    pub(super) fn new(shared: Arc<Shared>, keepalive: Arc<Keepalive>) -> Self {
        Self { shared, _keepalive: keepalive }
    }

    async fn publish_message(&self, message: &RpcMessage) -> Result<(), RpcError> {
        if self.shared.is_shut_down() {
            return Err(RpcError::Closed);
        }
        // Without a connection, fail at once: the outbox relay publishes the message later.
        let link = self.shared.current_link().ok_or_else(|| {
            RpcError::NotConnected(format!("no connection to the AMQP broker at {}", self.shared.endpoint))
        })?;
        let queue = message.queue(&self.shared.prefix);
        let body = serde_json::to_vec(message).map_err(|error| RpcError::Malformed(error.to_string()))?;
        let timeout = self.shared.options.publish_timeout;
        match tokio::time::timeout(timeout, self.confirmed(&link, &queue, &body)).await {
            Ok(result) => result,
            Err(_) => Err(RpcError::NotConfirmed(format!("no confirmation from the broker within {timeout:?}"))),
        }
    }

    async fn confirmed(&self, link: &Link, queue: &str, body: &[u8]) -> Result<(), RpcError> {
        let channel = &link.publish_channel;
        if !link.is_declared(queue) {
            // A queue not given to `connect` (e.g. a major added later): declare it now and on
            // every reconnection, so the message is never published into the void.
            declare_queue(channel, queue).await.map_err(|error| transport(&error))?;
            self.shared.remember_queue(queue);
            link.set_declared(queue, true);
        }
        // `mandatory`: an unroutable message comes back instead of vanishing, and is an error.
        let options = BasicPublishOptions { mandatory: true, immediate: false };
        let confirmation = channel
            .basic_publish("".into(), queue.into(), options, body, properties())
            .await
            .map_err(|error| transport(&error))?
            .await
            .map_err(|error| transport(&error))?;
        match confirmation {
            Confirmation::Ack(None) => {
                debug!(%queue, "RPC message confirmed");
                Ok(())
            }
            Confirmation::Ack(Some(returned)) => {
                // The queue vanished (deleted by someone): declare it again next time.
                link.set_declared(queue, false);
                Err(RpcError::NotConfirmed(format!(
                    "the broker returned the message for queue {queue}: {} {}",
                    returned.reply_code, returned.reply_text
                )))
            }
            Confirmation::Nack(_) => {
                Err(RpcError::NotConfirmed(format!("the broker refused the message for queue {queue}")))
            }
            Confirmation::NotRequested => {
                Err(RpcError::NotConfirmed("the publishing channel is not in confirm mode".to_owned()))
            }
        }
    }
}

fn properties() -> BasicProperties {
    BasicProperties::default().with_delivery_mode(PERSISTENT).with_content_type("application/json".into())
}

fn transport(error: &lapin::Error) -> RpcError {
    RpcError::Transport(error.to_string())
}

impl RpcPublisher for AmqpPublisher {
    fn publish<'a>(&'a self, message: &'a RpcMessage) -> BoxFuture<'a, Result<(), RpcError>> {
        Box::pin(self.publish_message(message))
    }

    fn is_connected(&self) -> bool {
        self.shared.current_link().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_persistent_json() {
        let properties = properties();
        assert_eq!(properties.delivery_mode(), &Some(2));
        assert_eq!(properties.content_type().as_ref().map(|value| value.as_str()), Some("application/json"));
    }
}
