//! The connection supervisor: connects, declares the queues, opens the confirm-mode
//! publishing channel, watches the connection and reconnects with backoff when it drops.
//!
//! Reconnection is ours rather than lapin's `enable_auto_recover`: lapin gives up after a
//! fixed number of attempts, and an outage of any length must only delay work.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_compat::CompatExt;
use futures::{Stream, StreamExt};
use lapin::options::{ConfirmSelectOptions, QueueDeclareOptions};
use lapin::tcp::AsyncTcpStream;
use lapin::types::FieldTable;
use lapin::uri::AMQPUri;
use lapin::{Channel, Connection, ConnectionProperties, Event};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use super::{Backoff, Shared, lock, shut_down};

/// How often the supervisor and consumers look at lapin's connection and channel state
/// (a closed connection does not always come with an error event).
pub(super) const STATE_POLL: Duration = Duration::from_millis(200);

/// One established connection with its publishing channel.
pub(super) struct Link {
    /// Counts connections of this transport, 1 for the first.
    pub(super) generation: u64,
    pub(super) connection: Connection,
    /// In confirm mode (publisher confirms).
    pub(super) publish_channel: Channel,
    /// Queues declared on this connection.
    declared: Mutex<HashSet<String>>,
}

impl Link {
    pub(super) fn is_alive(&self) -> bool {
        self.connection.status().connected() && self.publish_channel.status().connected()
    }

    pub(super) fn is_declared(&self, queue: &str) -> bool {
        lock(&self.declared).contains(queue)
    }

    pub(super) fn set_declared(&self, queue: &str, declared: bool) {
        let mut set = lock(&self.declared);
        if declared {
            set.insert(queue.to_owned());
        } else {
            set.remove(queue);
        }
    }
}

/// Declares `queue` durable, idempotently (the same arguments every time).
pub(super) async fn declare_queue(channel: &Channel, queue: &str) -> lapin::Result<()> {
    channel.queue_declare(queue.into(), QueueDeclareOptions::durable(), FieldTable::default()).await.map(drop)
}

type Events = Pin<Box<dyn Stream<Item = Event> + Send>>;

/// A second handle on the socket of the attempt in progress. lapin's I/O thread would wait
/// for a peer that accepted TCP and never speaks AMQP for ever (one leaked thread per
/// attempt); shutting this handle down when the attempt times out ends that thread.
type Socket = Arc<Mutex<Option<std::net::TcpStream>>>;

/// Cuts the socket of a timed-out attempt (see `Socket`).
fn cut(socket: &Socket) {
    if let Some(stream) = lock(socket).take() {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

async fn establish(shared: &Shared, generation: u64, socket: &Socket) -> lapin::Result<(Link, Events)> {
    let properties =
        ConnectionProperties::default().with_connection_name(shared.options.connection_name.as_str().into());
    let connection = connect(shared, properties, Arc::clone(socket)).await?;
    // Established: lapin owns the socket now; closing our duplicate leaves it open.
    drop(lock(socket).take());
    let events: Events = Box::pin(connection.events_listener());
    let channel = connection.create_channel().await?;
    let queues = shared.declared_queues();
    for queue in &queues {
        declare_queue(&channel, queue).await?;
    }
    channel.confirm_select(ConfirmSelectOptions::default()).await?;
    let link =
        Link { generation, connection, publish_channel: channel, declared: Mutex::new(queues.into_iter().collect()) };
    Ok((link, events))
}

/// `Connection::connect` with a TCP connection of our own: bounded in time, and with a
/// duplicate handle in `socket` so that a stalled handshake can be cut. Plain TCP only
/// (`AmqpTransport::connect` refuses `amqps://`).
async fn connect(shared: &Shared, properties: ConnectionProperties, socket: Socket) -> lapin::Result<Connection> {
    let timeout = shared.options.connect_timeout;
    let runtime = lapin::runtime::default_runtime()?;
    let open_socket = async move |uri: AMQPUri, _runtime| -> lapin::Result<_> {
        let address = (uri.authority.host.as_str(), uri.authority.port);
        let stream = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(address))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "TCP connection timed out"))??;
        stream.set_nodelay(true)?;
        let stream = stream.into_std()?;
        *lock(&socket) = Some(stream.try_clone()?);
        let stream = tokio::net::TcpStream::from_std(stream)?;
        Ok(AsyncTcpStream::Plain(stream.compat()))
    };
    Connection::connector(shared.uri.clone(), runtime, open_socket, properties).await
}

/// Why the supervisor stopped watching a connection.
enum Watch {
    Lost(String),
    ShutDown,
}

async fn watch_link(link: &Link, events: &mut Events, shutdown: &mut watch::Receiver<bool>) -> Watch {
    let mut poll = tokio::time::interval(STATE_POLL);
    loop {
        tokio::select! {
            () = shut_down(shutdown) => return Watch::ShutDown,
            event = events.next() => match event {
                Some(Event::Error(error)) => return Watch::Lost(error.to_string()),
                Some(Event::ConnectionBlocked(reason)) => {
                    // Publishing waits (and times out) until the broker unblocks: resource alarm.
                    warn!(%reason, "the AMQP broker blocked this connection");
                }
                Some(Event::ConnectionUnblocked) => info!("the AMQP broker unblocked this connection"),
                Some(other) => debug!(event = ?other, "AMQP connection event"),
                None => return Watch::Lost("the connection's event stream ended".to_owned()),
            },
            _ = poll.tick() => {
                if !link.connection.status().connected() {
                    return Watch::Lost("the connection is closed".to_owned());
                }
                if !link.publish_channel.status().connected() {
                    return Watch::Lost("the publishing channel is closed".to_owned());
                }
            }
        }
    }
}

/// Keeps the transport connected until it is shut down.
pub(super) async fn supervise(shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    let mut backoff = Backoff::new(&shared.options);
    let mut generation = 0_u64;
    let mut failures = 0_u32;
    let endpoint = shared.endpoint.as_str();
    loop {
        if shared.is_shut_down() {
            break;
        }
        debug!(%endpoint, "connecting to the AMQP broker");
        let socket = Socket::default();
        let attempt = tokio::time::timeout(shared.options.connect_timeout, establish(&shared, generation + 1, &socket));
        let outcome = tokio::select! {
            () = shut_down(&mut shutdown) => {
                cut(&socket);
                break;
            }
            outcome = attempt => outcome,
        };
        cut(&socket);
        shared.attempts.send_modify(|count| *count += 1);
        let delay = match outcome {
            Ok(Ok((link, mut events))) => {
                generation += 1;
                if failures > 0 {
                    info!(%endpoint, failed_attempts = failures, "reconnected to the AMQP broker");
                } else {
                    info!(%endpoint, "connected to the AMQP broker");
                }
                failures = 0;
                backoff.reset();
                let link = Arc::new(link);
                shared.link.send_replace(Some(Arc::clone(&link)));
                let watched = watch_link(&link, &mut events, &mut shutdown).await;
                shared.link.send_replace(None);
                match watched {
                    Watch::ShutDown => {
                        close(&link).await;
                        break;
                    }
                    Watch::Lost(reason) => {
                        warn!(%endpoint, %reason, "lost the connection to the AMQP broker; reconnecting");
                    }
                }
                backoff.next_delay()
            }
            Ok(Err(error)) => {
                failures += 1;
                let delay = backoff.next_delay();
                report_failure(endpoint, failures, delay, &error.to_string());
                delay
            }
            Err(_elapsed) => {
                failures += 1;
                let delay = backoff.next_delay();
                let reason = format!("no answer within {:?}", shared.options.connect_timeout);
                report_failure(endpoint, failures, delay, &reason);
                delay
            }
        };
        tokio::select! {
            () = shut_down(&mut shutdown) => break,
            () = tokio::time::sleep(delay) => {}
        }
    }
    shared.link.send_replace(None);
    info!(%endpoint, "AMQP transport shut down");
}

fn report_failure(endpoint: &str, failures: u32, retry_in: Duration, reason: &str) {
    // Warn on the first failure and then now and again; a long outage must not flood the log.
    if failures == 1 || failures.is_multiple_of(10) {
        warn!(%endpoint, attempt = failures, ?retry_in, %reason, "cannot connect to the AMQP broker");
    } else {
        info!(%endpoint, attempt = failures, ?retry_in, %reason, "cannot connect to the AMQP broker");
    }
}

async fn close(link: &Link) {
    if !link.connection.status().connected() {
        return;
    }
    let closing = link.connection.close(lapin::protocol::constants::REPLY_SUCCESS, "shutdown".into());
    match tokio::time::timeout(Duration::from_secs(2), closing).await {
        Ok(Ok(())) => debug!("AMQP connection closed"),
        Ok(Err(error)) => debug!(%error, "closing the AMQP connection failed"),
        Err(_) => debug!("the broker did not answer connection.close within 2 s"),
    }
}
