//! Broker outages, on a private RabbitMQ node each test starts, stops and restarts itself
//! (stopping the machine's shared broker would break everybody else's tests).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use solgate_conductor::rpc::amqp::AmqpConsumer;
use solgate_conductor::rpc::amqp::testing::PrivateBroker;
use solgate_conductor::rpc::{RpcConsumer, RpcError, RpcMessage, RpcPublisher};

use crate::support::{self, Queues, assert_no_delivery, next_delivery, shared_broker_url};

/// Generous: the node reboots in 8-10 s on 2 cores, the transport reconnects within 1 s.
const RECOVERY: Duration = Duration::from_secs(45);

async fn start_broker() -> PrivateBroker {
    match PrivateBroker::start().await {
        Ok(broker) => broker,
        Err(error) => panic!("{error:?}"),
    }
}

/// Receives and acks deliveries until `expected` ids came (each once) and nothing more. A
/// timeout names what came and shows the broker's log (its "Recovering N queues" line tells
/// whether a queue itself was lost).
async fn drain(consumer: &mut AmqpConsumer, expected: &[&str], broker: &PrivateBroker) {
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + RECOVERY;
    while seen.len() < expected.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Some(delivery)) = tokio::time::timeout(left, consumer.next()).await else {
            panic!("only {seen:?} of {expected:?} delivered within {RECOVERY:?}\n{}", broker.logs());
        };
        assert!(seen.insert(delivery.message.id.clone()), "{} delivered twice", delivery.message.id);
        delivery.acker.ack().await.unwrap();
    }
    let expected: BTreeSet<String> = expected.iter().map(|id| (*id).to_owned()).collect();
    assert_eq!(seen, expected);
    assert_no_delivery(consumer, Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_outage_delays_work_and_loses_none() {
    // The shared broker's variable says RabbitMQ is installed here.
    if shared_broker_url().is_none() {
        return;
    }
    let mut broker = start_broker().await;
    let queues = Queues::on_private_broker(&broker.url());
    let gateway = queues.transport().await;
    let conductor = queues.transport().await;
    let publisher = gateway.publisher();
    let mut consumer = conductor.consumer();

    publisher.publish(&RpcMessage::lcm("op-0", 2)).await.unwrap();
    let delivery = next_delivery(&mut consumer, Duration::from_secs(10)).await;
    assert_eq!(delivery.message.id, "op-0");
    delivery.acker.ack().await.unwrap();

    // op-1 is being worked on (delivered, not acked) and op-2 waits when the broker stops.
    publisher.publish(&RpcMessage::lcm("op-1", 2)).await.unwrap();
    publisher.publish(&RpcMessage::lcm("op-2", 2)).await.unwrap();
    let held = next_delivery(&mut consumer, Duration::from_secs(10)).await;
    assert_eq!(held.message.id, "op-1");

    broker.stop().await.unwrap();
    // The gateway keeps answering: publishing fails within the publish timeout, and at
    // once as soon as the transport knows the broker is gone.
    let started = Instant::now();
    assert!(publisher.publish(&RpcMessage::lcm("op-lost", 2)).await.is_err());
    assert!(started.elapsed() < support::options().publish_timeout + Duration::from_secs(1));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!gateway.is_connected());
    assert!(!publisher.is_connected());
    let started = Instant::now();
    let error = publisher.publish(&RpcMessage::lcm("op-lost", 2)).await.unwrap_err();
    assert!(matches!(error, RpcError::NotConnected(_)), "{error}");
    assert!(started.elapsed() < Duration::from_millis(500));

    // The conductor waits: no delivery, and the held message's ack cannot count.
    assert!(held.acker.ack().await.is_err());
    assert_no_delivery(&mut consumer, Duration::from_secs(2)).await;

    broker.restart().await.unwrap();
    assert!(gateway.wait_connected(RECOVERY).await, "the gateway did not reconnect\n{}", broker.logs());
    assert!(conductor.wait_connected(RECOVERY).await, "the conductor did not reconnect\n{}", broker.logs());
    // Both persistent messages survived the stop; the unacked one comes again.
    drain(&mut consumer, &["op-1", "op-2"], &broker).await;
    publisher.publish(&RpcMessage::lcm("op-3", 2)).await.unwrap();
    drain(&mut consumer, &["op-3"], &broker).await;

    gateway.shutdown().await;
    conductor.shutdown().await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmed_messages_survive_a_broker_crash() {
    if shared_broker_url().is_none() {
        return;
    }
    let mut broker = start_broker().await;
    let queues = Queues::on_private_broker(&broker.url());
    // The queues are declared, then put on disk by a clean stop, before the crash under test.
    // A node that just booted can lose to SIGKILL a queue declared in its first seconds: CI
    // saw 2 of 3 queues recovered, the third's confirmed message gone with it (RabbitMQ 3.10
    // does not always sync its metadata log before declare-ok). solgate copes: the transport
    // declares every queue again on reconnection, and the outbox relay republishes work left
    // untaken. This test is about messages on queues that exist.
    queues.transport().await.shutdown().await;
    broker.stop().await.unwrap();
    broker.restart().await.unwrap();
    let gateway = queues.transport().await;
    let publisher = gateway.publisher();
    for id in ["op-a", "op-b"] {
        publisher.publish(&RpcMessage::lcm(id, 1)).await.unwrap();
    }
    publisher.publish(&RpcMessage::package("pkg-a")).await.unwrap();

    // SIGKILL: only what the broker wrote to disk before confirming survives.
    broker.kill().await.unwrap();
    broker.restart().await.unwrap();

    let conductor = queues.transport().await;
    let mut consumer = conductor.consumer();
    drain(&mut consumer, &["op-a", "op-b", "pkg-a"], &broker).await;
    assert!(gateway.wait_connected(RECOVERY).await, "the gateway did not reconnect");
    publisher.publish(&RpcMessage::lcm("op-c", 1)).await.unwrap();
    drain(&mut consumer, &["op-c"], &broker).await;

    gateway.shutdown().await;
    conductor.shutdown().await;
}
