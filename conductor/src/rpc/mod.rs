//! RPC transports between gateways and conductors (AMQP through lapin, or an in-process
//! channel). The messages and the publisher interface are the domain's
//! ([`solgate_core::work`]); acknowledging and consuming are the conductor's.

pub mod amqp;
pub mod in_process;

use std::fmt;

use futures::future::BoxFuture;
pub use solgate_core::work::{RpcError, RpcMessage, RpcPublisher, WorkKind, all_queues};

/// Acknowledges (or returns) one delivered message.
pub trait Acker: Send + 'static {
    /// The work is done or durably recorded: the message may go.
    fn ack(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>>;
    /// The work could not be taken now: deliver the message again later.
    fn requeue(self: Box<Self>) -> BoxFuture<'static, Result<(), RpcError>>;
}

pub struct Delivery {
    pub message: RpcMessage,
    pub acker: Box<dyn Acker>,
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery").field("message", &self.message).finish()
    }
}

/// The conductor side: a stream of deliveries from every queue it consumes.
pub trait RpcConsumer: Send + 'static {
    /// The next delivery; `None` once the transport is shut down for good. Transient
    /// broker outages are handled inside (reconnect with backoff), not surfaced here.
    fn next(&mut self) -> BoxFuture<'_, Option<Delivery>>;
}
