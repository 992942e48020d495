//! Helpers of the AMQP transport tests: where the broker is, unique queues per test and
//! their removal afterwards.

use std::time::Duration;

use lapin::options::{QueueDeclareOptions, QueueDeleteOptions};
use lapin::types::FieldTable;
use lapin::{Channel, Connection, ConnectionProperties};
use solgate_conductor::RpcSettings;
use solgate_conductor::RpcTransportKind;
use solgate_conductor::rpc::amqp::{AmqpConsumer, AmqpOptions, AmqpTransport};
use solgate_conductor::rpc::{Delivery, RpcConsumer, all_queues};

/// The machine's shared RabbitMQ (`SOLGATE_TEST_AMQP_URL`). Without it the test is skipped
/// with a note, except under CI, where a missing broker is a failure.
pub fn shared_broker_url() -> Option<String> {
    init_tracing();
    match std::env::var("SOLGATE_TEST_AMQP_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "SOLGATE_TEST_AMQP_URL is not set: CI must run the AMQP tests against RabbitMQ"
            );
            eprintln!("note: SOLGATE_TEST_AMQP_URL is not set; skipping this RabbitMQ test");
            None
        }
    }
}

/// `RUST_LOG=solgate_conductor=debug` shows the transport's logs of a failing test.
pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// Short timeouts so that the tests notice a broken transport quickly.
pub fn options() -> AmqpOptions {
    AmqpOptions {
        publish_timeout: Duration::from_secs(3),
        connect_timeout: Duration::from_secs(5),
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_secs(1),
        connection_name: "solgate-conductor-tests".to_owned(),
        ..AmqpOptions::default()
    }
}

/// The queues of one test: a unique prefix, majors 1 and 2; deleted when dropped.
pub struct Queues {
    pub url: String,
    pub prefix: String,
    pub names: Vec<String>,
    /// Queues the test created beyond `names` (also deleted).
    pub extra: Vec<String>,
    cleanup: bool,
}

impl Queues {
    pub fn new(url: &str) -> Self {
        let prefix = format!("solgate-test-{}", uuid::Uuid::new_v4().simple());
        let names = all_queues(&prefix, &[1, 2]);
        Self { url: url.to_owned(), prefix, names, extra: Vec::new(), cleanup: true }
    }

    /// On a private broker that dies with the test: nothing to clean up.
    pub fn on_private_broker(url: &str) -> Self {
        let mut queues = Self::new(url);
        queues.cleanup = false;
        queues
    }

    pub fn lcm(&self, major: u64) -> String {
        format!("{}.vnflcm.v{major}", self.prefix)
    }

    pub fn settings(&self) -> RpcSettings {
        RpcSettings {
            transport: RpcTransportKind::Amqp,
            amqp_url: self.url.clone(),
            queue_prefix: self.prefix.clone(),
            prefetch: 8,
            max_reconnect_backoff_secs: 1,
            ..RpcSettings::default()
        }
    }

    /// A connected transport for these queues.
    pub async fn transport(&self) -> AmqpTransport {
        let transport = AmqpTransport::connect_with(&self.settings(), self.names.clone(), options()).await.unwrap();
        assert!(transport.wait_connected(Duration::from_secs(10)).await, "not connected to {}", self.url);
        transport
    }

    /// A plain lapin channel, to look at the queues from outside the transport.
    pub async fn raw(&self) -> (Connection, Channel) {
        let connection = Connection::connect(&self.url, ConnectionProperties::default()).await.unwrap();
        let channel = connection.create_channel().await.unwrap();
        (connection, channel)
    }

    /// Messages ready in `queue` (not counting those delivered and unacked).
    pub async fn ready(&self, queue: &str) -> u32 {
        let (_connection, channel) = self.raw().await;
        let options = QueueDeclareOptions { passive: true, ..QueueDeclareOptions::default() };
        channel.queue_declare(queue.into(), options, FieldTable::default()).await.unwrap().message_count()
    }

    /// Waits until `queue` has `count` consumers.
    pub async fn await_consumers(&self, queue: &str, count: u32) {
        let (_connection, channel) = self.raw().await;
        let options = QueueDeclareOptions { passive: true, ..QueueDeclareOptions::default() };
        for _ in 0..100 {
            let declared = channel.queue_declare(queue.into(), options, FieldTable::default()).await.unwrap();
            if declared.consumer_count() == count {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{queue} never had {count} consumers");
    }
}

impl Drop for Queues {
    fn drop(&mut self) {
        if !self.cleanup {
            return;
        }
        let url = self.url.clone();
        let queues: Vec<String> = self.names.iter().chain(&self.extra).cloned().collect();
        // A thread with its own runtime: this may run while the test's runtime unwinds.
        let cleanup = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            runtime.block_on(async move {
                let connect = Connection::connect(&url, ConnectionProperties::default());
                let Ok(Ok(connection)) = tokio::time::timeout(Duration::from_secs(5), connect).await else {
                    eprintln!("cannot connect to {url} to delete the test queues {queues:?}");
                    return;
                };
                if let Ok(channel) = connection.create_channel().await {
                    for queue in &queues {
                        let _ = channel.queue_delete(queue.as_str().into(), QueueDeleteOptions::default()).await;
                    }
                }
                let _ = connection.close(200, "test done".into()).await;
            });
        });
        let _ = cleanup.join();
    }
}

/// The next delivery, which must come within `within`.
pub async fn next_delivery(consumer: &mut AmqpConsumer, within: Duration) -> Delivery {
    match tokio::time::timeout(within, consumer.next()).await {
        Ok(Some(delivery)) => delivery,
        Ok(None) => panic!("the consumer ended"),
        Err(_) => panic!("no delivery within {within:?}"),
    }
}

/// Asserts that nothing is delivered within `within`.
pub async fn assert_no_delivery(consumer: &mut AmqpConsumer, within: Duration) {
    if let Ok(delivery) = tokio::time::timeout(within, consumer.next()).await {
        panic!("unexpected delivery: {delivery:?}");
    }
}
