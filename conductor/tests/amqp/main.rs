//! The AMQP transport against a real RabbitMQ: the machine's shared broker
//! (`SOLGATE_TEST_AMQP_URL`, unique queues per test) and, for outages, a private node each
//! test starts and stops itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test helpers fail loudly")]

mod outage;
mod support;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use lapin::BasicProperties;
use lapin::options::{BasicGetOptions, BasicNackOptions, BasicPublishOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use solgate_conductor::RpcSettings;
use solgate_conductor::rpc::amqp::{AmqpOptions, AmqpTransport};
use solgate_conductor::rpc::{RpcConsumer, RpcError, RpcMessage, RpcPublisher};

use support::{Queues, assert_no_delivery, next_delivery, shared_broker_url};

const SOON: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_consume_ack_round_trip_with_persistent_messages() {
    let Some(url) = shared_broker_url() else { return };
    let queues = Queues::new(&url);
    let transport = queues.transport().await;
    let message = RpcMessage::lcm("op-round-trip", 2);
    transport.publisher().publish(&message).await.unwrap();

    // What the broker holds: a persistent JSON message with the id and major only.
    let (connection, channel) = queues.raw().await;
    let got = channel.basic_get(queues.lcm(2).into(), BasicGetOptions::default()).await.unwrap().unwrap();
    assert_eq!(got.delivery.properties.delivery_mode(), &Some(2));
    let content_type = got.delivery.properties.content_type().as_ref().map(|value| value.as_str().to_owned());
    assert_eq!(content_type.as_deref(), Some("application/json"));
    let body: serde_json::Value = serde_json::from_slice(&got.delivery.data).unwrap();
    assert_eq!(body, serde_json::json!({"kind": "lcm_op_occ", "id": "op-round-trip", "major": 2}));
    got.delivery.acker.nack(BasicNackOptions { multiple: false, requeue: true }).await.unwrap();

    // The queue is durable: declaring it transient is refused.
    let other = connection.create_channel().await.unwrap();
    let transient = other.queue_declare(queues.lcm(2).into(), QueueDeclareOptions::default(), FieldTable::default());
    assert!(transient.await.is_err(), "the queue is not durable");

    let mut consumer = transport.consumer();
    let delivery = next_delivery(&mut consumer, SOON).await;
    assert_eq!(delivery.message, message);
    delivery.acker.ack().await.unwrap();
    transport.shutdown().await;
    // Acked: nothing comes back to the queue once the consumer's connection is gone.
    assert_eq!(queues.ready(&queues.lcm(2)).await, 0);
    assert!(!transport.is_connected());
    assert!(matches!(transport.publisher().publish(&message).await, Err(RpcError::Closed)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_major_has_its_own_queue() {
    let Some(url) = shared_broker_url() else { return };
    let queues = Queues::new(&url);
    let transport = queues.transport().await;
    let publisher = transport.publisher();
    let messages = [RpcMessage::lcm("op-v1", 1), RpcMessage::lcm("op-v2", 2), RpcMessage::package("pkg-1")];
    for message in &messages {
        publisher.publish(message).await.unwrap();
    }
    let (_connection, channel) = queues.raw().await;
    for message in &messages {
        let queue = message.queue(&queues.prefix);
        let got = channel.basic_get(queue.as_str().into(), BasicGetOptions { no_ack: true }).await.unwrap();
        let got = got.unwrap_or_else(|| panic!("nothing in {queue}"));
        assert_eq!(serde_json::from_slice::<RpcMessage>(&got.delivery.data).unwrap(), *message, "in {queue}");
        assert!(channel.basic_get(queue.as_str().into(), BasicGetOptions { no_ack: true }).await.unwrap().is_none());
    }
    transport.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_not_given_at_connect_is_declared_on_first_publish() {
    let Some(url) = shared_broker_url() else { return };
    let mut queues = Queues::new(&url);
    queues.extra.push(queues.lcm(3));
    let transport = queues.transport().await;
    transport.publisher().publish(&RpcMessage::lcm("op-v3", 3)).await.unwrap();
    assert_eq!(queues.ready(&queues.lcm(3)).await, 1);
    transport.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_consumers_share_a_queue_without_double_delivery() {
    let Some(url) = shared_broker_url() else { return };
    let queues = Queues::new(&url);
    let first = queues.transport().await;
    let second = queues.transport().await;
    let (sender, mut received) = tokio::sync::mpsc::unbounded_channel();
    for (name, transport) in [("first", &first), ("second", &second)] {
        let mut consumer = transport.consumer();
        let sender = sender.clone();
        tokio::spawn(async move {
            // Until nothing comes for 3 s: a double delivery would show up in that time.
            while let Ok(Some(delivery)) = tokio::time::timeout(Duration::from_secs(3), consumer.next()).await {
                let id = delivery.message.id.clone();
                delivery.acker.ack().await.unwrap();
                sender.send((name, id)).unwrap();
            }
        });
    }
    drop(sender);
    queues.await_consumers(&queues.lcm(2), 2).await;

    let publisher = first.publisher();
    let count = 40;
    for n in 0..count {
        publisher.publish(&RpcMessage::lcm(format!("op-{n:02}"), 2)).await.unwrap();
    }
    let mut deliveries: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    while let Some((name, id)) = received.recv().await {
        deliveries.entry(id).or_default().push(name);
    }
    let expected: Vec<String> = (0..count).map(|n| format!("op-{n:02}")).collect();
    assert_eq!(deliveries.keys().cloned().collect::<Vec<_>>(), expected);
    let doubles: Vec<_> = deliveries.iter().filter(|(_, names)| names.len() > 1).collect();
    assert!(doubles.is_empty(), "delivered more than once: {doubles:?}");
    for name in ["first", "second"] {
        assert!(deliveries.values().any(|names| names[0] == name), "the {name} consumer got no work");
    }
    assert_eq!(queues.ready(&queues.lcm(2)).await, 0);
    first.shutdown().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeued_message_is_delivered_again() {
    let Some(url) = shared_broker_url() else { return };
    let queues = Queues::new(&url);
    let transport = queues.transport().await;
    let mut consumer = transport.consumer();
    let message = RpcMessage::package("pkg-requeue");
    transport.publisher().publish(&message).await.unwrap();

    let first = next_delivery(&mut consumer, SOON).await;
    assert_eq!(first.message, message);
    first.acker.requeue().await.unwrap();
    let again = next_delivery(&mut consumer, SOON).await;
    assert_eq!(again.message, message);
    again.acker.ack().await.unwrap();
    assert_no_delivery(&mut consumer, Duration::from_secs(1)).await;
    transport.shutdown().await;
    assert_eq!(queues.ready(&message.queue(&queues.prefix)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unacked_message_goes_to_another_consumer_when_the_first_disconnects() {
    let Some(url) = shared_broker_url() else { return };
    let queues = Queues::new(&url);
    let first = queues.transport().await;
    let mut first_consumer = first.consumer();
    let message = RpcMessage::lcm("op-orphan", 1);
    first.publisher().publish(&message).await.unwrap();
    let held = next_delivery(&mut first_consumer, SOON).await;
    assert_eq!(held.message, message);

    let second = queues.transport().await;
    let mut second_consumer = second.consumer();
    queues.await_consumers(&queues.lcm(1), 2).await;
    // The first conductor holds it: the second has nothing to do.
    assert_no_delivery(&mut second_consumer, Duration::from_secs(1)).await;

    // The first conductor goes away without acking (as if it died mid-operation).
    first.shutdown().await;
    let redelivered = next_delivery(&mut second_consumer, SOON).await;
    assert_eq!(redelivered.message, message);
    redelivered.acker.ack().await.unwrap();
    // The dead connection's acknowledgement cannot count any more.
    assert!(held.acker.ack().await.is_err());
    assert!(first_consumer.next().await.is_none(), "a shut-down consumer ends");
    second.shutdown().await;
    assert_eq!(queues.ready(&queues.lcm(1)).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_message_is_dropped_and_not_redelivered() {
    let Some(url) = shared_broker_url() else { return };
    let queues = Queues::new(&url);
    let transport = queues.transport().await;
    let (_connection, channel) = queues.raw().await;
    let properties = BasicProperties::default().with_delivery_mode(2);
    let publish = channel.basic_publish(
        "".into(),
        queues.lcm(1).into(),
        BasicPublishOptions::default(),
        b"{not json",
        properties,
    );
    publish.await.unwrap().await.unwrap();
    let good = RpcMessage::lcm("op-after-garbage", 1);
    transport.publisher().publish(&good).await.unwrap();

    let mut consumer = transport.consumer();
    let delivery = next_delivery(&mut consumer, SOON).await;
    assert_eq!(delivery.message, good);
    delivery.acker.ack().await.unwrap();
    assert_no_delivery(&mut consumer, Duration::from_secs(1)).await;
    transport.shutdown().await;
    assert_eq!(queues.ready(&queues.lcm(1)).await, 0, "the malformed message came back");
}

/// Needs no broker: this is what the gateway sees while RabbitMQ is down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_fails_fast_when_the_broker_is_unreachable() {
    support::init_tracing();
    // A port nobody listens on (connection refused) and one that accepts TCP and never
    // speaks AMQP (the handshake times out).
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    for port in [closed, silent_port] {
        let settings = RpcSettings {
            amqp_url: format!("amqp://guest:guest@127.0.0.1:{port}/%2f"),
            queue_prefix: "solgate-unreachable".to_owned(),
            ..RpcSettings::default()
        };
        let options = AmqpOptions { connect_timeout: Duration::from_secs(1), ..support::options() };
        let started = Instant::now();
        let transport =
            AmqpTransport::connect_with(&settings, vec!["solgate-unreachable.vnflcm.v2".to_owned()], options)
                .await
                .unwrap();
        assert!(started.elapsed() < Duration::from_secs(3), "connect waited {:?}", started.elapsed());
        assert!(!transport.is_connected());
        let publisher = transport.publisher();
        assert!(!publisher.is_connected());

        let started = Instant::now();
        let error = publisher.publish(&RpcMessage::lcm("op-1", 2)).await.unwrap_err();
        assert!(matches!(error, RpcError::NotConnected(_)), "{error}");
        assert!(started.elapsed() < Duration::from_millis(500), "publish waited {:?}", started.elapsed());

        // The consumer waits for the broker instead of ending.
        let mut consumer = transport.consumer();
        assert_no_delivery(&mut consumer, Duration::from_millis(500)).await;
        let started = Instant::now();
        transport.shutdown().await;
        assert!(started.elapsed() < Duration::from_secs(3), "shutdown waited {:?}", started.elapsed());
        assert!(consumer.next().await.is_none());
    }
    drop(silent);
}
