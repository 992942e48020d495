//! Durable operations (embedded, SQLite): an operation a dead conductor had claimed is
//! resumed and completed by a live conductor (not ROLLED_BACK or FAILED_TEMP as Tacker
//! does), also across a `kill -9` of the real `solgate serve`; transient VIM failures are
//! retried by the conductor itself.

use std::time::Duration;

use serde_json::{Value, json};
use solgate_db::repo::lcm::{self, LcmMajor};

use crate::helpers::{TestApp, send};
use crate::lcm_support::*;
use crate::processes::spawn_embedded;

/// An instantiate accepted straight in the database (no work message is sent) and claimed
/// by a conductor that no longer exists, as if it died right after its claim; `resumes`:
/// how often it was queued again before. Returns the app, the instance id and the
/// occurrence's URL.
async fn orphaned_instantiate(resumes: u64) -> (TestApp, String, String) {
    let app = TestApp::spawn_with(|settings| {
        settings.conductor.heartbeat_interval_secs = 1;
        settings.conductor.lease_timeout_secs = 2;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let instance_id = create_instance(&app, &vnfd_id, "orphan").await;
    let url = orphaned_instantiate_of(&app, &instance_id, |op| {
        if resumes > 0 {
            op.body["_solgate"]["resumes"] = json!(resumes);
        }
    });
    (app, instance_id, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_conductors_unstarted_operation_is_resumed_not_rolled_back() {
    let (app, instance_id, url) = orphaned_instantiate(0).await;
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let op_id = url.rsplit('/').next().unwrap().to_owned();
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        wait_op(&app, &url, &["COMPLETED", "ROLLED_BACK", "FAILED_TEMP"]),
    )
    .await
    .expect("the orphaned operation is taken on within 30 s");
    assert_eq!(done["operationState"], "COMPLETED", "{done}");
    assert!(done.get("error").is_none(), "{done}");
    // Without recovery it would stay STARTING for ever; Tacker's rule made it ROLLED_BACK.
    let stored = lcm::find_op(&mut conn, LcmMajor::V2, &op_id).unwrap().unwrap();
    assert_ne!(stored.owner.as_deref(), Some("conductor-that-died"));
    assert_eq!(vnfc_count(&show_instance(&app, &instance_id).await, "VDU1"), 1, "instantiated once");
}

/// One that was queued again as often as allowed (its conductors kept dying on it) is
/// ROLLED_BACK instead of looping for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_resumed_too_often_is_rolled_back() {
    let (app, _, url) = orphaned_instantiate(solgate_conductor::recovery::MAX_RESUMES).await;
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        wait_op(&app, &url, &["COMPLETED", "ROLLED_BACK", "FAILED_TEMP"]),
    )
    .await
    .expect("the orphaned operation is taken on within 30 s");
    assert_eq!(done["operationState"], "ROLLED_BACK", "{done}");
    let detail = done["error"]["detail"].as_str().unwrap();
    assert!(detail.contains("stopped 3 times before the operation began"), "{detail}");
}

/// The run of the Durability issue: `solgate serve` (embedded), 200 instances, 200
/// concurrent instantiates, `kill -9` once a random number of them (40-160) had answered
/// 202, restart on the same data directory: every accepted operation COMPLETED (none
/// ROLLED_BACK or FAILED_TEMP), every instance with its VNFCs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_serve_killed_mid_burst_finishes_every_accepted_operation() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const INSTANCES: usize = 200;
    let data_dir = tempfile::tempdir().unwrap();
    let database_url = format!("sqlite://{}", data_dir.path().join("solgate.db").display());
    let mut first = spawn_embedded(data_dir.path());
    let app = TestApp::remote(first.base_url(), database_url.clone(), None);
    let vnfd_id = install_sample_package(&app);
    let mut instances = Vec::new();
    for i in 0..INSTANCES {
        instances.push(create_instance(&app, &vnfd_id, &format!("burst-{i}")).await);
    }
    let kill_after = usize::try_from(uuid::Uuid::new_v4().as_u128() % 121).unwrap() + 40;
    let accepted = Arc::new(AtomicUsize::new(0));
    let body = json!({"flavourId": "simple", "additionalParams": {"localVim": {"delayMs": 40}}});
    let mut sends = Vec::new();
    for instance in &instances {
        let request = app
            .request(reqwest::Method::POST, &format!("/vnflcm/v2/vnf_instances/{instance}/instantiate"))
            .header("Version", "2.0.0")
            .json(&body);
        let accepted = accepted.clone();
        let instance = instance.clone();
        sends.push(tokio::spawn(async move {
            let response = request.send().await.ok()?;
            if response.status() != 202 {
                return None;
            }
            let location = response.headers().get("location")?.to_str().ok()?.to_owned();
            accepted.fetch_add(1, Ordering::SeqCst);
            Some((instance, location))
        }));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while accepted.load(Ordering::SeqCst) < kill_after {
        assert!(std::time::Instant::now() < deadline, "only {} accepted", accepted.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    first.kill9();
    let mut taken = Vec::new();
    for send in sends {
        if let Some(done) = send.await.unwrap() {
            taken.push(done);
        }
    }
    assert!(taken.len() >= kill_after, "{} accepted before the kill", taken.len());

    let second = spawn_embedded(data_dir.path());
    let restarted = TestApp::remote(second.base_url(), database_url, None);
    let mut completed = 0;
    for (instance, location) in &taken {
        let url = location.replace(&app.address, &restarted.address);
        let op = tokio::time::timeout(Duration::from_secs(90), wait_settled(&restarted, &url))
            .await
            .unwrap_or_else(|_| panic!("{url} did not settle"));
        assert_eq!(op["operationState"], "COMPLETED", "accepted, so finished: {op}");
        let shown = show_instance(&restarted, instance).await;
        assert_eq!(vnfc_count(&shown, "VDU1"), 1, "no VNFC made twice: {shown}");
        assert_eq!(vnfc_count(&shown, "VDU2"), 1, "no VNFC made twice: {shown}");
        completed += 1;
    }
    assert_eq!(completed, taken.len());
    drop(second);
}

/// The occurrence once it is in a final or failed state (it may wait for recovery first).
async fn wait_settled(app: &TestApp, url: &str) -> Value {
    let path = url.trim_start_matches(&app.address).to_owned();
    loop {
        let reply = send(app.request(reqwest::Method::GET, &path).header("Version", "2.0.0")).await;
        let op = reply.json();
        if ["COMPLETED", "FAILED_TEMP", "ROLLED_BACK", "FAILED"].contains(&op["operationState"].as_str().unwrap_or(""))
        {
            return op;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn retries_counted(app: &TestApp) -> u64 {
    let text = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("solgate_vim_retries_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}

/// A VIM that fails for a moment (transiently) costs the client nothing: the conductor
/// retries by itself, and counts it.
#[tokio::test]
async fn a_transient_vim_failure_is_retried_without_the_client() {
    let app = TestApp::spawn_with(|settings| settings.conductor.vim_retry_backoff_ms = 10).await;
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "flaky-vim").await;
    let before = retries_counted(&app).await;
    let body = json!({"flavourId": "simple",
        "additionalParams": {"localVim": {"failAt": "create_vnfc", "transient": true, "failRuns": 2}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert!(op.get("error").is_none(), "{op}");
    assert_eq!(retries_counted(&app).await - before, 2, "two automatic retries");
    // The occurrence records both as warnings (SOL003 V3.5.1 VnfLcmOpOcc.warnings), which
    // 2.0.0 (V3.3.1) does not show.
    assert!(op.get("warnings").is_none(), "{op}");
    let op_id = op["id"].as_str().unwrap();
    let database = app.database();
    let stored = lcm::find_op(&mut database.conn().unwrap(), LcmMajor::V2, op_id).unwrap().unwrap().body;
    let warnings: Vec<&str> = stored["warnings"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(warnings.len(), 2, "{stored}");
    assert!(
        warnings[0].contains("run 1 of attempt 1") && warnings[0].contains("injected failure at step create_vnfc"),
        "{warnings:?}"
    );
    let instance = show_instance(&app, &id).await;
    assert_eq!(vnfc_count(&instance, "VDU1"), 1, "{instance}");
    assert_eq!(vnfc_count(&instance, "VDU2"), 1, "{instance}");
}

/// A VIM that keeps failing: FAILED_TEMP after the configured retries, with the VIM's error;
/// once the VIM is back, retry from the API completes. A failure that is not transient is
/// not retried at all.
#[tokio::test]
async fn a_vim_that_keeps_failing_ends_failed_temp_and_retry_completes_once_it_is_back() {
    let app = TestApp::spawn_with(|settings| {
        settings.conductor.vim_retries = 2;
        settings.conductor.vim_retry_backoff_ms = 10;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "down-vim").await;
    let before = retries_counted(&app).await;
    // Down for the whole first attempt.
    let body = json!({"flavourId": "simple",
        "additionalParams": {"localVim": {"failAt": "create_vnfc", "transient": true, "failAttempts": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    let detail = op["error"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("injected failure at step create_vnfc (attempt 1, run 3)"),
        "the last run's error: {detail}"
    );
    assert_eq!(retries_counted(&app).await - before, 2, "vim_retries = 2");
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    let path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(reqwest::Method::POST, &format!("{path}/retry")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op = wait_op_after(&app, &op_url, &["COMPLETED", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 1);

    // Not transient: no automatic retry.
    let id = create_instance(&app, &vnfd_id, "broken-vim").await;
    let before = retries_counted(&app).await;
    let body = json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc"}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert!(op["error"]["detail"].as_str().unwrap().contains("(attempt 1, run 1)"), "{op}");
    assert_eq!(retries_counted(&app).await, before);
}

/// PostgreSQL dropped every connection of the app (a restart, a failover, an
/// administrator's `pg_terminate_backend`): the next requests and LCM operations get fresh
/// connections instead of errors. A pooled connection is checked again when its last check
/// is over a second old (not before every use: that was a round trip per database call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_connections_the_server_dropped_are_replaced() {
    use diesel::{Connection, RunQueryDsl};
    let Some(app) = TestApp::spawn_on(crate::helpers::Db::Postgres, |_| {}).await else { return };
    let vnfd_id = install_sample_package(&app);
    let first = create_instance(&app, &vnfd_id, "before").await;
    // Several requests at once: several pooled connections.
    let lists = (0..6).map(|_| send(v2(&app, reqwest::Method::GET, "/vnflcm/v2/vnf_instances")));
    for reply in futures::future::join_all(lists).await {
        assert_eq!(reply.status, 200, "{}", reply.text);
    }
    let name = app.database_url.rsplit('/').next().unwrap().to_owned();
    let admin_url = std::env::var("SOLGATE_TEST_POSTGRES_URL").unwrap();
    let mut admin = diesel::PgConnection::establish(&admin_url).unwrap();
    #[derive(diesel::QueryableByName)]
    struct Terminated {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        count: i64,
    }
    let terminated = diesel::sql_query(format!(
        "SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity WHERE datname = '{name}'"
    ))
    .get_result::<Terminated>(&mut admin)
    .unwrap();
    assert!(terminated.count > 0, "the app had no connection to drop");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for n in 0..10 {
        let reply = send(v2(&app, reqwest::Method::GET, &format!("/vnflcm/v2/vnf_instances/{first}"))).await;
        assert_eq!(reply.status, 200, "read {n} after the connections were dropped: {}", reply.text);
    }
    let second = create_instance(&app, &vnfd_id, "after").await;
    let op_url = task(&app, &second, "instantiate", json!({"flavourId": "simple"})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
}
