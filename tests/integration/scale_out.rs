//! Scale-out: separate gateway and conductor processes (the real binary) sharing
//! PostgreSQL and RabbitMQ. Two conductors share the work; a conductor killed with
//! SIGKILL mid-operation leaves nothing stuck; a broker outage during a burst delays work
//! and loses none, nor does a message the broker confirmed and then lost.

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;
use solgate_conductor::rpc::amqp::testing::PrivateBroker;

use crate::helpers::{PgDatabase, TestApp, send};
use crate::lcm_support::*;
use crate::processes::{Cluster, amqp_url};

fn cluster(database_url: &str, amqp_url: &str, data_dir: &std::path::Path) -> Cluster {
    Cluster {
        database_url: database_url.to_owned(),
        amqp_url: amqp_url.to_owned(),
        queue_prefix: format!("solgate-test-{}", uuid::Uuid::new_v4().simple()),
        data_dir: data_dir.to_owned(),
        extra_env: Vec::new(),
    }
}

/// `solgate migrate` first, as an operator would before starting the processes.
fn migrate(cluster: &Cluster) {
    let status = Command::new(env!("CARGO_BIN_EXE_solgate"))
        .args(["migrate", "--data-dir"])
        .arg(&cluster.data_dir)
        .env("SOLGATE_DATABASE_URL", &cluster.database_url)
        .env("SOLGATE_LOG_FORMAT", "json")
        .status()
        .unwrap();
    assert!(status.success());
}

async fn wait_ready(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(response) = app.client.get(app.url("/readyz")).send().await
            && response.status() == 200
        {
            return;
        }
        assert!(Instant::now() < deadline, "{} never became ready", app.address);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Deletes the test's queues from the shared broker.
async fn delete_queues(amqp_url: &str, prefix: &str) {
    if let Ok(connection) = lapin::Connection::connect(amqp_url, lapin::ConnectionProperties::default()).await
        && let Ok(channel) = connection.create_channel().await
    {
        for queue in solgate_conductor::rpc::all_queues(prefix, &[1, 2]) {
            let _ = channel.queue_delete(queue.as_str().into(), lapin::options::QueueDeleteOptions::default()).await;
        }
        let _ = connection.close(0, "done".into()).await;
    }
}

fn op_owner(app: &TestApp, op_url: &str) -> Option<String> {
    let id = op_url.rsplit('/').next().unwrap();
    let database = app.database();
    let mut conn = database.conn().unwrap();
    solgate_db::repo::lcm::find_op(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, id).unwrap().unwrap().owner
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conductors_share_work_and_survive_a_crash() {
    let Some(amqp) = amqp_url() else { return };
    let Some(postgres) = PgDatabase::create() else { return };
    let data_dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&postgres.url, &amqp, data_dir.path());
    migrate(&cluster);
    let gateway = cluster.spawn("gateway");
    let mut conductors = vec![cluster.spawn("conductor"), cluster.spawn("conductor")];
    let ids: Vec<String> = conductors.iter().map(|c| c.conductor_id()).collect();
    let database_url = postgres.url.clone();
    let app = TestApp::remote(gateway.base_url(), database_url, Some(postgres));
    wait_ready(&app).await;
    let vnfd_id = install_sample_package(&app);

    // The full flow through separate processes.
    let id = create_instance(&app, &vnfd_id, "scaled-out").await;
    let op = task(&app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let op = task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale", "numberOfSteps": 2})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 3);
    let op = task(&app, &id, "scale", json!({"type": "SCALE_IN", "aspectId": "VDU1_scale"})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let op = task(&app, &id, "heal", json!({})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let op = task(&app, &id, "terminate", json!({"terminationType": "GRACEFUL"})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);

    // The same through v1 (no Version header, v2.6.1 shapes): VnflcmDriverV1 in the conductors.
    let v1 = |method: Method, path: &str| app.request(method, &format!("/vnflcm/v1{path}"));
    let reply = send(v1(Method::POST, "/vnf_instances").json(&json!({"vnfdId": vnfd_id}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let v1_id = reply.json()["id"].as_str().unwrap().to_owned();
    for (task_name, body) in [
        (
            "instantiate",
            json!({"flavourId": "simple", "vimConnectionInfo": [{"id": "vim1", "vimType": "SOLGATE.LOCAL.V_1"}]}),
        ),
        ("scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})),
        ("heal", json!({})),
        ("terminate", json!({"terminationType": "FORCEFUL"})),
    ] {
        let reply = send(v1(Method::POST, &format!("/vnf_instances/{v1_id}/{task_name}")).json(&body)).await;
        assert_eq!(reply.status, 202, "{task_name}: {}", reply.text);
        let op = wait_op(&app, reply.header("location").unwrap(), &["COMPLETED", "FAILED_TEMP"]).await;
        assert_eq!(op["operationState"], "COMPLETED", "v1 {task_name}: {op}");
    }
    let reply = send(v1(Method::DELETE, &format!("/vnf_instances/{v1_id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);

    // A burst: both conductors take part, nothing runs twice (one occurrence each, every
    // instance instantiated exactly once).
    let mut instances = Vec::new();
    for i in 0..16 {
        instances.push(create_instance(&app, &vnfd_id, &format!("burst-{i}")).await);
    }
    let body = json!({"flavourId": "simple", "additionalParams": {"localVim": {"delayMs": 20}}});
    let mut ops = Vec::new();
    for instance in &instances {
        ops.push(task(&app, instance, "instantiate", body.clone()).await);
    }
    for op in &ops {
        assert_eq!(wait_op(&app, op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    }
    for (conductor, id) in conductors.iter().zip(&ids) {
        assert!(conductor.log_contains("LCM operation state changed"), "conductor {id} did no work");
    }
    for instance in &instances {
        let list =
            send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,{instance})")))
                .await;
        assert_eq!(list.json().as_array().unwrap().len(), 1);
        assert_eq!(vnfc_count(&show_instance(&app, instance).await, "VDU1"), 1, "instantiated once");
    }

    // kill -9 of a conductor mid-burst: what it had taken on (PROCESSING) is resumed by the
    // survivor and COMPLETED, none ROLLED_BACK or FAILED_TEMP, no VNFC twice.
    let mut burst = Vec::new();
    for i in 0..12 {
        burst.push(create_instance(&app, &vnfd_id, &format!("crash-{i}")).await);
    }
    let slow = json!({"flavourId": "simple", "instantiationLevelId": "instantiation_level_2",
        "additionalParams": {"localVim": {"delayMs": 150}}});
    let mut op_urls = Vec::new();
    for instance in &burst {
        op_urls.push(task(&app, instance, "instantiate", slow.clone()).await);
    }
    let processing = wait_op(&app, &op_urls[0], &["PROCESSING"]).await;
    assert_eq!(processing["operationState"], "PROCESSING");
    let owner = op_owner(&app, &op_urls[0]).expect("a PROCESSING operation has an owner");
    let index = ids.iter().position(|id| *id == owner).expect("owned by one of ours");
    conductors[index].kill9();
    let restarted = cluster.spawn("conductor");
    restarted.conductor_id();
    for (op_url, instance) in op_urls.iter().zip(&burst) {
        let op = wait_op(&app, op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
        assert_eq!(op["operationState"], "COMPLETED", "{op}");
        assert!(op.get("error").is_none(), "{op}");
        let shown = show_instance(&app, instance).await;
        assert_eq!(vnfc_count(&shown, "VDU1"), 3, "no VNFC made twice: {shown}");
        assert_eq!(vnfc_count(&shown, "VDU2"), 1, "no VNFC made twice: {shown}");
    }
    let survivor = if index == 0 { &conductors[1] } else { &conductors[0] };
    assert!(
        survivor.log_contains("an operation of a dead conductor is resumed")
            || restarted.log_contains("an operation of a dead conductor is resumed"),
        "the dead conductor's work was resumed by a live one"
    );

    drop(restarted);
    drop(conductors);
    drop(gateway);
    delete_queues(&amqp, &cluster.queue_prefix).await;
}

/// Messages ready in `queue` (delivered ones not counted).
async fn ready_messages(channel: &lapin::Channel, queue: &str) -> u32 {
    let options = lapin::options::QueueDeclareOptions { passive: true, ..Default::default() };
    channel.queue_declare(queue.into(), options, lapin::types::FieldTable::default()).await.unwrap().message_count()
}

/// A gateway with no conductor yet (accepted work waits in its queue), ready, with the
/// sample package onboarded; `None` where the services are not configured and CI is not set.
struct GatewayAlone {
    amqp: String,
    _data_dir: tempfile::TempDir,
    cluster: Cluster,
    gateway: crate::processes::Process,
    app: TestApp,
    vnfd_id: String,
}

async fn gateway_alone() -> Option<GatewayAlone> {
    let amqp = amqp_url()?;
    let postgres = PgDatabase::create()?;
    let data_dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&postgres.url, &amqp, data_dir.path());
    migrate(&cluster);
    let gateway = cluster.spawn("gateway");
    let app = TestApp::remote(gateway.base_url(), postgres.url.clone(), Some(postgres));
    wait_ready(&app).await;
    let vnfd_id = install_sample_package(&app);
    Some(GatewayAlone { amqp, _data_dir: data_dir, cluster, gateway, app, vnfd_id })
}

/// Work the broker confirmed and then lost (a crashed RabbitMQ node can lose a queue it had
/// declared in its first seconds, with its messages): the outbox relay publishes it again
/// once it has been left untaken, and the operation completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_the_broker_confirmed_then_lost_is_published_again() {
    let Some(GatewayAlone { amqp, _data_dir, cluster, gateway, app, vnfd_id }) = gateway_alone().await else { return };
    let instance = create_instance(&app, &vnfd_id, "lost-message").await;

    // No conductor yet: the accepted operation's message waits in its queue. Then the queue
    // goes, and the message with it.
    let op = task(&app, &instance, "instantiate", instantiate_body()).await;
    let connection = lapin::Connection::connect(&amqp, lapin::ConnectionProperties::default()).await.unwrap();
    let channel = connection.create_channel().await.unwrap();
    let queue = format!("{}.vnflcm.v2", cluster.queue_prefix);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ready_messages(&channel, &queue).await == 0 {
        assert!(Instant::now() < deadline, "the gateway never published the operation's message");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let lost = channel.queue_delete(queue.as_str().into(), lapin::options::QueueDeleteOptions::default()).await;
    assert_eq!(lost.unwrap(), 1, "exactly the operation's message was lost");
    let _ = connection.close(0, "done".into()).await;

    let conductor = cluster.spawn("conductor");
    conductor.conductor_id();
    let settled = wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(settled["operationState"], "COMPLETED", "{settled}");
    assert_eq!(vnfc_count(&show_instance(&app, &instance).await, "VDU1"), 1);
    assert!(conductor.log_contains("outbox relay published pending work"), "the relay published it again");

    drop(conductor);
    drop(gateway);
    delete_queues(&amqp, &cluster.queue_prefix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_outage_during_a_burst_loses_nothing() {
    // Needs RabbitMQ installed (a private node is started); the shared one is left alone.
    if amqp_url().is_none() {
        return;
    }
    let Some(postgres) = PgDatabase::create() else { return };
    let mut broker = PrivateBroker::start().await.expect("a private RabbitMQ node starts");
    let data_dir = tempfile::tempdir().unwrap();
    let cluster = cluster(&postgres.url, &broker.url(), data_dir.path());
    migrate(&cluster);
    let gateway = cluster.spawn("gateway");
    let conductor = cluster.spawn("conductor");
    conductor.conductor_id();
    let database_url = postgres.url.clone();
    let app = TestApp::remote(gateway.base_url(), database_url, Some(postgres));
    wait_ready(&app).await;
    let vnfd_id = install_sample_package(&app);
    let mut instances = Vec::new();
    for i in 0..50 {
        instances.push(create_instance(&app, &vnfd_id, &format!("outage-{i}")).await);
    }

    broker.stop().await.unwrap();
    let stopped_at = Instant::now();
    // The gateway keeps answering 202: the work is in the database and its outbox.
    let mut ops = Vec::new();
    for instance in &instances {
        ops.push(task(&app, instance, "instantiate", instantiate_body()).await);
    }
    let readyz = send(app.get("/readyz")).await;
    assert_eq!(readyz.status, 503, "readiness reports the broker down: {}", readyz.text);
    // Keep it down for 10 s.
    tokio::time::sleep(Duration::from_secs(10).saturating_sub(stopped_at.elapsed())).await;
    for op in &ops {
        assert_eq!(get(&app, op).await.json()["operationState"], "STARTING", "nothing runs without the broker");
    }
    broker.restart().await.unwrap();

    for op in &ops {
        let op = wait_op(&app, op, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
        assert_eq!(op["operationState"], "COMPLETED", "{op}");
    }
    drop(conductor);
    drop(gateway);
}

/// Two conductors given the same message race for its work on PostgreSQL. The second one's
/// claim waits for the first's to commit, then takes nothing, even though the work it was
/// sent for was pending when it began. A claim reports the work it took as its statement
/// saw it: work queued again meanwhile (a retry) is left for its own message.
#[test]
fn a_claim_that_waited_for_another_conductors_takes_nothing() {
    use diesel::RunQueryDsl;
    use solgate_db::repo::lcm::{self, LcmMajor, OpOccRecord};

    let Some(pg) = PgDatabase::create() else { return };
    let settings = solgate_db::DatabaseSettings { pool_size: 2, ..Default::default() };
    let database = solgate_db::Database::connect(&pg.url, &settings).unwrap();
    database.migrate().unwrap();
    let major = LcmMajor::V2;
    let now = solgate_db::repo::now_text();
    for (id, requeued) in [("op-raced", false), ("op-requeued", true)] {
        let record = OpOccRecord {
            id: id.to_owned(),
            body: json!({
                "id": id, "vnfInstanceId": format!("instance-{id}"), "operation": "INSTANTIATE",
                "operationState": "STARTING", "stateEnteredTime": now, "startTime": now,
            }),
            pending_action: Some("start".into()),
            owner: None,
            lease_expires_at: None,
            attempt: 1,
            created_at: now.clone(),
            updated_at: now.clone(),
            project: String::new(),
        };
        let mut first = database.conn().unwrap();
        lcm::insert_op(&mut first, major, &record).unwrap();
        diesel::sql_query("BEGIN").execute(&mut *first).unwrap();
        let taken =
            lcm::claim_op(&mut first, major, id, "conductor-a", &now).unwrap().expect("unclaimed work is taken");
        assert_eq!(taken.pending_action.as_deref(), Some("start"), "the claim names the work it took");
        assert_eq!(taken.owner.as_deref(), Some("conductor-a"));
        // The second conductor's claim, started while the first holds the row.
        let (sender, receiver) = std::sync::mpsc::channel();
        let second_database = database.clone();
        let second = std::thread::spawn(move || {
            let mut conn = second_database.conn().unwrap();
            sender.send(lcm::claim_op(&mut conn, major, id, "conductor-b", &solgate_db::repo::now_text())).unwrap();
        });
        assert!(
            receiver.recv_timeout(Duration::from_millis(300)).is_err(),
            "the second claim waits for the first to commit"
        );
        if requeued {
            diesel::sql_query(format!("UPDATE vnf_lcm_op_occs_v2 SET pending_action = 'retry' WHERE id = '{id}'"))
                .execute(&mut *first)
                .unwrap();
        }
        diesel::sql_query("COMMIT").execute(&mut *first).unwrap();
        let raced = receiver.recv_timeout(Duration::from_secs(10)).expect("the second claim ends").unwrap();
        second.join().unwrap();
        assert!(raced.is_none(), "{id}: the work was taken once, by the first conductor: {raced:?}");
        let stored = lcm::find_op(&mut first, major, id).unwrap().unwrap();
        assert_eq!(stored.owner.as_deref(), Some("conductor-a"), "{id}");
        let left = if requeued { Some("retry") } else { None };
        assert_eq!(stored.pending_action.as_deref(), left, "{id}: queued work stays for its own message");
        if requeued {
            let retried =
                lcm::claim_op(&mut first, major, id, "conductor-b", &now).unwrap().expect("the retry's claim");
            assert_eq!(retried.pending_action.as_deref(), Some("retry"));
        }
    }
}

/// A gateway marks the outbox rows of the messages the broker confirmed before the outbox
/// relay's grace runs out, so no conductor's relay publishes that work a second time; the
/// marks of a burst are written together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmed_work_is_marked_published_within_the_relays_grace() {
    use solgate_db::repo::outbox;

    let Some(GatewayAlone { amqp, _data_dir, cluster, gateway, app, vnfd_id }) = gateway_alone().await else { return };
    let mut ops = Vec::new();
    let mut instances = Vec::new();
    for i in 0..5 {
        instances.push(create_instance(&app, &vnfd_id, &format!("marked-{i}")).await);
    }
    // No conductor yet: the work stays in the outbox and in its queue.
    for instance in &instances {
        ops.push(task(&app, instance, "instantiate", instantiate_body()).await);
    }
    let accepted = Instant::now();
    let database = app.database();
    let rows = |unpublished_before: &'static str, republish_before: &'static str| {
        let mut conn = database.conn().unwrap();
        outbox::due(&mut conn, unpublished_before, republish_before, 100).unwrap()
    };
    // Unmarked rows, then every row, whatever its mark.
    let (unmarked, all) = (|| rows("9999", "0000"), || rows("9999", "9999"));
    while !unmarked().is_empty() {
        assert!(
            accepted.elapsed() < solgate_core::work::UNPUBLISHED_GRACE,
            "still unmarked when the relay would publish them again: {:?}",
            unmarked()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let marked = all();
    assert_eq!(marked.len(), 5, "one row per operation, none taken up yet: {marked:?}");
    assert!(marked.iter().all(|row| row.published_at.is_some() && row.publish_attempts == 1), "{marked:?}");

    let conductor = cluster.spawn("conductor");
    conductor.conductor_id();
    for op in &ops {
        let settled = wait_op(&app, op, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
        assert_eq!(settled["operationState"], "COMPLETED", "{settled}");
    }
    assert!(all().is_empty(), "taken-up work leaves no outbox row");
    drop(conductor);
    drop(gateway);
    delete_queues(&amqp, &cluster.queue_prefix).await;
}
