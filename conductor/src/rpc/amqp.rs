//! AMQP 0-9-1 transport through lapin (RabbitMQ), for a gateway and conductors that run as
//! separate processes.
//!
//! - One durable queue per API and major (`RpcMessage::queue`), declared on every
//!   (re)connection; messages go to the default exchange with the queue name as routing key.
//! - Messages are persistent and published on a confirm-mode channel: `publish` is `Ok` only
//!   once the broker confirmed a routed message. Anything else is an `Err` within
//!   `AmqpOptions::publish_timeout`, and the outbox row stays for the relay to publish again.
//! - Consumers ack manually (the conductor acks after committing the new state) under a
//!   prefetch limit; what a dead connection held unacked is delivered again by the broker.
//! - A supervisor task owns the connection and reconnects with exponential backoff, so a
//!   broker outage delays work and loses none. The transport never fails because the broker
//!   is down at start.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lapin::uri::{AMQPScheme, AMQPUri};
use tokio::sync::watch;
use tokio::task::JoinHandle;

mod consumer;
mod link;
mod publisher;
#[cfg(feature = "test-support")]
pub mod testing;

pub use consumer::AmqpConsumer;
pub use publisher::AmqpPublisher;

use super::RpcError;
use crate::settings::RpcSettings;
use link::Link;

/// Tuning of the AMQP transport beyond what `RpcSettings` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmqpOptions {
    /// Longest wait for the broker to confirm one message. The outbox relay republishes
    /// what was not confirmed, so failing fast is better than waiting long.
    pub publish_timeout: Duration,
    /// Longest wait for one connection attempt (TCP, AMQP handshake, queue declarations).
    pub connect_timeout: Duration,
    /// First wait before reconnecting; it doubles after each failed attempt.
    pub initial_backoff: Duration,
    /// Longest wait between reconnection attempts.
    pub max_backoff: Duration,
    /// Heartbeat proposed when the URL has no `heartbeat=` parameter: a broker that vanished
    /// without closing the TCP connection is noticed after about twice this long.
    pub heartbeat_secs: u16,
    /// Shown in the RabbitMQ management UI.
    pub connection_name: String,
}

impl AmqpOptions {
    pub fn from_settings(settings: &RpcSettings) -> Self {
        Self { max_backoff: Duration::from_secs(settings.max_reconnect_backoff_secs.max(1)), ..Self::default() }
    }
}

impl Default for AmqpOptions {
    fn default() -> Self {
        Self {
            publish_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(10),
            heartbeat_secs: 15,
            connection_name: "solgate".to_owned(),
        }
    }
}

/// A connection to the broker, kept up by a background task. Cheap handles to it:
/// `publisher()` for the gateway and the outbox relay, `consumer()` for the conductor.
///
/// The transport stops when `shutdown` is called or when every clone of it and every
/// publisher and consumer made from it are dropped.
#[derive(Clone)]
pub struct AmqpTransport {
    shared: Arc<Shared>,
    keepalive: Arc<Keepalive>,
}

impl AmqpTransport {
    /// Starts the transport for `queues` (usually `rpc::all_queues`): every one is declared
    /// durable on each connection, and consumers consume all of them.
    ///
    /// Waits for the first connection attempt (at most `connect_timeout`), so a reachable
    /// broker is connected when this returns; an unreachable one is retried in the
    /// background and `is_connected()` stays false meanwhile. Only a malformed URL (or an
    /// `amqps://` one: this build has no TLS) is an error.
    pub async fn connect(settings: &RpcSettings, queues: Vec<String>) -> Result<Self, RpcError> {
        Self::connect_with(settings, queues, AmqpOptions::from_settings(settings)).await
    }

    pub async fn connect_with(
        settings: &RpcSettings,
        queues: Vec<String>,
        options: AmqpOptions,
    ) -> Result<Self, RpcError> {
        let mut uri: AMQPUri = settings
            .amqp_url
            .parse()
            .map_err(|error: String| RpcError::Transport(format!("invalid AMQP URL: {error}")))?;
        if uri.scheme == AMQPScheme::AMQPS {
            // lapin is built without TLS (`default-features = false`, see ../shared/reference/rust-crates.md).
            return Err(RpcError::Transport("amqps:// URLs need TLS support, which this build lacks".to_owned()));
        }
        if uri.query.heartbeat.is_none() {
            uri.query.heartbeat = Some(options.heartbeat_secs);
        }
        let endpoint = endpoint(&uri);
        let connect_timeout = options.connect_timeout;
        let shared = Arc::new(Shared {
            uri,
            endpoint,
            prefix: settings.queue_prefix.clone(),
            prefetch: settings.prefetch,
            options,
            declared: Mutex::new(queues.iter().cloned().collect()),
            consumed: queues,
            link: watch::Sender::new(None),
            shutdown: watch::Sender::new(false),
            attempts: watch::Sender::new(0),
            tasks: Mutex::new(Vec::new()),
        });
        let mut attempts = shared.attempts.subscribe();
        // Before the first await: if this future is dropped, the supervisor stops with it.
        let keepalive = Arc::new(Keepalive(Arc::clone(&shared)));
        let supervisor = tokio::spawn(link::supervise(Arc::clone(&shared)));
        shared.track(supervisor);
        // A small margin over the attempt's own timeout: the attempt always ends first.
        let first_attempt = attempts.wait_for(|count| *count > 0);
        let _ = tokio::time::timeout(connect_timeout + Duration::from_secs(1), first_attempt).await;
        Ok(Self { shared, keepalive })
    }

    pub fn publisher(&self) -> AmqpPublisher {
        AmqpPublisher::new(Arc::clone(&self.shared), Arc::clone(&self.keepalive))
    }

    /// A consumer of every queue given to `connect`, on its own channel. Several consumers
    /// (in this or other processes) on the same queues share the messages. Must be called
    /// inside a tokio runtime (it starts the consuming task).
    pub fn consumer(&self) -> AmqpConsumer {
        AmqpConsumer::start(&self.shared, Arc::clone(&self.keepalive))
    }

    pub fn is_connected(&self) -> bool {
        self.shared.current_link().is_some()
    }

    /// Waits until the transport is connected, at most `timeout`; whether it is.
    pub async fn wait_connected(&self, timeout: Duration) -> bool {
        let mut links = self.shared.link.subscribe();
        let connected = links.wait_for(|link| link.as_ref().is_some_and(|link| link.is_alive()));
        matches!(tokio::time::timeout(timeout, connected).await, Ok(Ok(_)))
    }

    /// The queues consumers consume, as given to `connect`.
    pub fn queues(&self) -> &[String] {
        &self.shared.consumed
    }

    /// Closes the connection cleanly (the broker requeues whatever consumers hold unacked)
    /// and stops the background tasks. Publishing fails and consumers end afterwards.
    pub async fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        let tasks = std::mem::take(&mut *lock(&self.shared.tasks));
        for mut task in tasks {
            if tokio::time::timeout(Duration::from_secs(5), &mut task).await.is_err() {
                tracing::warn!("an AMQP transport task did not stop within 5 s; aborting it");
                task.abort();
            }
        }
    }
}

/// State shared by the supervisor, the publishers and the consumers of one transport.
struct Shared {
    uri: AMQPUri,
    /// `host:port/vhost`, for logs (the URL may hold a password).
    endpoint: String,
    prefix: String,
    prefetch: u16,
    options: AmqpOptions,
    /// Queues declared on each (re)connection: those given to `connect` plus any a
    /// publisher needed since.
    declared: Mutex<BTreeSet<String>>,
    /// Queues consumers consume.
    consumed: Vec<String>,
    /// The current connection; `None` while (re)connecting.
    link: watch::Sender<Option<Arc<Link>>>,
    shutdown: watch::Sender<bool>,
    /// Connection attempts finished so far (successful or not).
    attempts: watch::Sender<u64>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    /// The current connection if it is usable.
    fn current_link(&self) -> Option<Arc<Link>> {
        self.link.borrow().as_ref().filter(|link| link.is_alive()).cloned()
    }

    fn is_shut_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    fn declared_queues(&self) -> Vec<String> {
        lock(&self.declared).iter().cloned().collect()
    }

    fn remember_queue(&self, queue: &str) {
        lock(&self.declared).insert(queue.to_owned());
    }

    fn track(&self, task: JoinHandle<()>) {
        let mut tasks = lock(&self.tasks);
        tasks.retain(|task| !task.is_finished());
        tasks.push(task);
    }
}

/// Held by the transport and every publisher and consumer: when the last one goes, the
/// background tasks stop and the connection closes.
struct Keepalive(Arc<Shared>);

impl Drop for Keepalive {
    fn drop(&mut self) {
        self.0.shutdown.send_replace(true);
    }
}

/// Resolves once the transport is shut down.
async fn shut_down(shutdown: &mut watch::Receiver<bool>) {
    // An error means the sender is gone, which only happens once everything is dropped.
    let _ = shutdown.wait_for(|down| *down).await;
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data stays consistent even if a holder panicked (plain inserts/removes).
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn endpoint(uri: &AMQPUri) -> String {
    format!("{}:{}/{}", uri.authority.host, uri.authority.port, uri.vhost)
}

/// Exponential backoff between reconnection attempts.
#[derive(Debug, Clone)]
struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    fn new(options: &AmqpOptions) -> Self {
        let max = options.max_backoff.max(options.initial_backoff);
        Self { initial: options.initial_backoff, max, next: options.initial_backoff }
    }

    fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(self.max);
        delay
    }

    fn reset(&mut self) {
        self.next = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum_and_resets() {
        let options = AmqpOptions {
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(1),
            ..AmqpOptions::default()
        };
        let mut backoff = Backoff::new(&options);
        let delays: Vec<u128> = (0..5).map(|_| backoff.next_delay().as_millis()).collect();
        assert_eq!(delays, [200, 400, 800, 1000, 1000]);
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(200));
    }

    #[test]
    fn maximum_backoff_comes_from_the_settings() {
        let settings = RpcSettings { max_reconnect_backoff_secs: 30, ..RpcSettings::default() };
        assert_eq!(AmqpOptions::from_settings(&settings).max_backoff, Duration::from_secs(30));
        // 0 would make the supervisor spin: at least one second.
        let settings = RpcSettings { max_reconnect_backoff_secs: 0, ..RpcSettings::default() };
        assert_eq!(AmqpOptions::from_settings(&settings).max_backoff, Duration::from_secs(1));
    }

    #[test]
    fn endpoint_for_logs_has_no_password() {
        let uri: AMQPUri = "amqp://solgate:s3cret@broker.example:5673/%2f".parse().unwrap();
        let endpoint = endpoint(&uri);
        assert_eq!(endpoint, "broker.example:5673//");
        assert!(!endpoint.contains("s3cret"));
    }

    #[tokio::test]
    async fn malformed_or_tls_url_is_refused() {
        for url in ["http://nowhere", "amqps://guest:guest@127.0.0.1:5671/%2f"] {
            let settings = RpcSettings { amqp_url: url.to_owned(), ..RpcSettings::default() };
            let error = AmqpTransport::connect(&settings, vec!["q".to_owned()]).await.err().unwrap();
            assert!(matches!(error, RpcError::Transport(_)), "{url}: {error}");
        }
    }
}
