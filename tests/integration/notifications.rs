//! LCM subscriptions and notification delivery over real HTTP: a receiver (an actix-web
//! server on port 0 that records what it gets and can fail, hang or go away) stands in
//! for the NFVO's callback and OAuth 2.0 token endpoint.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use reqwest::Method;
use serde_json::{Value, json};
use solgate::Settings;
use solgate_db::repo::notifications::{self, NotificationRow};

use crate::helpers::{Db, Reply, TestApp, send};
use crate::lcm_support::*;

// ---------------------------------------------------------------------------------------
// The receiver.

/// What the receiver answers to POSTs on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Accept,
    Fail(u16),
    /// The first attempt of each notification id fails with this status, later ones pass.
    FailFirst(u16),
    /// Never answers (the client times out).
    Hang,
}

#[derive(Debug, Clone)]
pub(crate) struct Received {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    pub(crate) body: Value,
    status: u16,
    at: Instant,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

pub(crate) struct ReceiverState {
    log: Vec<Received>,
    pub(crate) get_status: u16,
    get_delay: Duration,
    answers: HashMap<String, Answer>,
    seen_ids: HashSet<String>,
    tokens_issued: u32,
    token_requests: Vec<Received>,
    /// When set, POSTs and GETs must carry `Bearer <token>` (else 401).
    valid_token: Option<String>,
    oauth: bool,
}

type Shared = Arc<Mutex<ReceiverState>>;

pub(crate) struct Receiver {
    port: u16,
    state: Shared,
    handle: Mutex<Option<actix_web::dev::ServerHandle>>,
}

async fn receive(req: HttpRequest, body: web::Bytes, state: web::Data<Mutex<ReceiverState>>) -> HttpResponse {
    let headers = req
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap_or_default().to_owned()))
        .collect::<BTreeMap<_, _>>();
    let parsed = serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
    let mut record = Received {
        method: req.method().to_string(),
        path: req.path().to_owned(),
        headers,
        body: parsed,
        status: 0,
        at: Instant::now(),
    };
    if record.path == "/token" {
        let mut state = state.lock().unwrap();
        state.tokens_issued += 1;
        let token = format!("tok-{}", state.tokens_issued);
        state.valid_token = Some(token.clone());
        record.status = 200;
        state.token_requests.push(record);
        return HttpResponse::Ok().json(json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}));
    }
    let (status, delay) = {
        let mut state = state.lock().unwrap();
        let authorised = !state.oauth
            || state
                .valid_token
                .as_ref()
                .is_some_and(|token| record.header("authorization") == Some(&format!("Bearer {token}")));
        let (status, delay) = if !authorised {
            (401, Duration::ZERO)
        } else if record.method == "GET" {
            (state.get_status, state.get_delay)
        } else {
            match state.answers.get(&record.path).copied().unwrap_or(Answer::Accept) {
                Answer::Accept => (204, Duration::ZERO),
                Answer::Fail(status) => (status, Duration::ZERO),
                Answer::FailFirst(status) => {
                    let id = record.body["id"].as_str().unwrap_or_default().to_owned();
                    if state.seen_ids.insert(id) { (status, Duration::ZERO) } else { (204, Duration::ZERO) }
                }
                Answer::Hang => (204, Duration::from_secs(3600)),
            }
        };
        record.status = status;
        state.log.push(record);
        (status, delay)
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap()).finish()
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        let state = Arc::new(Mutex::new(ReceiverState {
            log: Vec::new(),
            get_status: 204,
            get_delay: Duration::ZERO,
            answers: HashMap::new(),
            seen_ids: HashSet::new(),
            tokens_issued: 0,
            token_requests: Vec::new(),
            valid_token: None,
            oauth: false,
        }));
        let receiver = Receiver { port: 0, state, handle: Mutex::new(None) };
        let port = receiver.serve(0);
        Receiver { port, ..receiver }
    }

    /// Binds (SO_REUSEADDR, so the port can be taken again after a stop) and serves.
    fn serve(&self, port: u16) -> u16 {
        let data = web::Data::from(self.state.clone());
        let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(receive)))
            .workers(1)
            .shutdown_timeout(0)
            .bind(("127.0.0.1", port))
            .unwrap();
        let port = server.addrs()[0].port();
        let server = server.run();
        *self.handle.lock().unwrap() = Some(server.handle());
        tokio::spawn(server);
        port
    }

    /// Goes away: connections are refused until [`Receiver::restart`].
    pub(crate) async fn stop(&self) {
        let handle = self.handle.lock().unwrap().take();
        if let Some(handle) = handle {
            handle.stop(false).await;
        }
    }

    pub(crate) fn restart(&self) {
        self.serve(self.port);
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn answer(&self, path: &str, answer: Answer) {
        self.state.lock().unwrap().answers.insert(path.to_owned(), answer);
    }

    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, ReceiverState> {
        self.state.lock().unwrap()
    }

    /// Notifications POSTed to `path` (every attempt, answered or not), in arrival order.
    pub(crate) fn posts(&self, path: &str) -> Vec<Received> {
        self.state().log.iter().filter(|r| r.method == "POST" && r.path == path).cloned().collect()
    }

    pub(crate) fn gets(&self, path: &str) -> Vec<Received> {
        self.state().log.iter().filter(|r| r.method == "GET" && r.path == path).cloned().collect()
    }

    /// Notifications accepted (204) on `path`.
    pub(crate) fn delivered(&self, path: &str) -> Vec<Received> {
        self.posts(path).into_iter().filter(|r| r.status == 204).collect()
    }

    /// Waits until `path` has accepted `count` notifications; returns them.
    pub(crate) async fn wait_delivered(&self, path: &str, count: usize, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let delivered = self.delivered(path);
            if delivered.len() >= count {
                return delivered;
            }
            assert!(
                Instant::now() < deadline,
                "{path}: {} of {count} notifications delivered: {:#?}",
                delivered.len(),
                self.posts(path).iter().map(summary).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Helpers.

/// Settings for quick tests: retries soon after a failure.
pub(crate) fn quick(settings: &mut Settings) {
    settings.notifications.initial_backoff_ms = 100;
    settings.notifications.max_backoff_secs = 1;
    settings.notifications.poll_interval_ms = 50;
}

async fn subscribe(app: &TestApp, body: Value) -> Reply {
    send(v2(app, Method::POST, "/vnflcm/v2/subscriptions").json(&body)).await
}

/// Subscribes; asserts 201 and returns the subscription.
async fn subscribed(app: &TestApp, body: Value) -> Value {
    let reply = subscribe(app, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let subscription = reply.json();
    let id = subscription["id"].as_str().unwrap();
    assert_eq!(reply.header("location"), Some(format!("{}/vnflcm/v2/subscriptions/{id}", app.address).as_str()));
    subscription
}

/// `TYPE[/STATUS/STATE/OPERATION]`, for comparing sequences.
fn summary(received: &Received) -> String {
    let body = &received.body;
    match body["notificationType"].as_str() {
        Some("VnfLcmOperationOccurrenceNotification") => format!(
            "{}/{}/{}",
            body["notificationStatus"].as_str().unwrap(),
            body["operationState"].as_str().unwrap(),
            body["operation"].as_str().unwrap()
        ),
        Some(other) => other.to_owned(),
        None => format!("{body}"),
    }
}

/// What one instance's create, instantiate, terminate and delete send to a subscriber of
/// everything.
const FULL_LIFECYCLE: [&str; 8] = [
    "VnfIdentifierCreationNotification",
    "START/STARTING/INSTANTIATE",
    "RESULT/PROCESSING/INSTANTIATE",
    "RESULT/COMPLETED/INSTANTIATE",
    "START/STARTING/TERMINATE",
    "RESULT/PROCESSING/TERMINATE",
    "RESULT/COMPLETED/TERMINATE",
    "VnfIdentifierDeletionNotification",
];

/// Create, instantiate, terminate, delete; returns the instance id.
async fn full_lifecycle(app: &TestApp, vnfd_id: &str) -> String {
    let id = create_instance(app, vnfd_id, "notified").await;
    let op = task(app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(wait_op(app, &op, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"], "COMPLETED");
    let op = task(app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await;
    assert_eq!(wait_op(app, &op, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"], "COMPLETED");
    let reply = send(v2(app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    id
}

fn rows(app: &TestApp, subscription_id: &str) -> Vec<NotificationRow> {
    let database = app.database();
    let mut conn = database.conn().unwrap();
    notifications::for_subscription(&mut conn, subscription_id).unwrap()
}

/// The distinct notification ids in order of first arrival.
fn first_arrivals(received: &[Received]) -> Vec<String> {
    let mut seen = HashSet::new();
    received
        .iter()
        .filter_map(|r| r.body["id"].as_str().map(str::to_owned))
        .filter(|id| seen.insert(id.clone()))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Tests.

#[tokio::test]
async fn lifecycle_notifications_in_order_with_filters() {
    lifecycle_notifications(Db::Sqlite).await;
}

#[tokio::test]
async fn lifecycle_notifications_in_order_with_filters_on_postgres() {
    lifecycle_notifications(Db::Postgres).await;
}

/// The acceptance scenario: a full instantiate/terminate sends the expected notifications
/// in order; filters are honoured (another vnfdId gets nothing); SHORT omits affected*.
async fn lifecycle_notifications(db: Db) {
    let receiver = Receiver::start().await;
    let Some(app) = TestApp::spawn_on(db, quick).await else { return };
    let vnfd_id = install_sample_package(&app);

    let all = subscribed(&app, json!({"callbackUri": receiver.url("/all")})).await;
    assert_eq!(all["verbosity"], "FULL", "verbosity defaults to FULL: {all}");
    assert_eq!(all["callbackUri"], receiver.url("/all"));
    assert!(all.get("filter").is_none());
    assert_eq!(
        all["_links"]["self"]["href"],
        format!("{}/vnflcm/v2/subscriptions/{}", app.address, all["id"].as_str().unwrap())
    );
    assert_eq!(receiver.gets("/all").len(), 1, "the callback is tested once");
    assert_eq!(receiver.gets("/all")[0].header("version"), Some("2.0.0"));
    let other_vnfd = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/other"),
               "filter": {"vnfInstanceSubscriptionFilter": {"vnfdIds": [uuid::Uuid::new_v4().to_string()]}}}),
    )
    .await;
    let short = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/short"), "verbosity": "SHORT",
               "filter": {"vnfInstanceSubscriptionFilter": {"vnfdIds": [vnfd_id]},
                          "notificationTypes": ["VnfLcmOperationOccurrenceNotification"],
                          "operationStates": ["COMPLETED"]}}),
    )
    .await;
    let terminate_only = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/terminate"),
               "filter": {"operationTypes": ["TERMINATE"], "operationStates": ["STARTING", "COMPLETED"]}}),
    )
    .await;
    let creations = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/created"),
               "filter": {"notificationTypes": ["VnfIdentifierCreationNotification"]}}),
    )
    .await;

    // A subscription made with the newest minor gets that minor's Version header.
    let newest = crate::helpers::newest(solgate_schemas::Api::Vnflcm, 2);
    assert_ne!(newest, "2.0.0", "the registry serves a second v2 minor");
    let reply = send(
        app.request(Method::POST, "/vnflcm/v2/subscriptions")
            .header("Version", &newest)
            .header("Accept", "application/json")
            .json(&json!({"callbackUri": receiver.url("/newest"),
                          "filter": {"notificationTypes": ["VnfIdentifierCreationNotification"]}})),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(receiver.gets("/newest")[0].header("version"), Some(newest.as_str()));

    let instance_id = full_lifecycle(&app, &vnfd_id).await;

    let got = receiver.wait_delivered("/all", FULL_LIFECYCLE.len(), Duration::from_secs(20)).await;
    assert_eq!(got.iter().map(summary).collect::<Vec<_>>(), FULL_LIFECYCLE);
    let all_id = all["id"].as_str().unwrap();
    let mut ids = HashSet::new();
    for received in &got {
        let body = &received.body;
        assert_eq!(received.header("version"), Some("2.0.0"), "{body}");
        assert_eq!(received.header("content-type"), Some("application/json"));
        assert_eq!(received.header("accept"), Some("application/json"));
        assert!(received.header("authorization").is_none());
        assert!(ids.insert(body["id"].as_str().unwrap().to_owned()), "ids are unique");
        assert_eq!(body["subscriptionId"], all_id);
        assert_eq!(body["vnfInstanceId"], instance_id.as_str());
        let stamp = body["timeStamp"].as_str().unwrap();
        assert!(stamp.len() == 20 && stamp.ends_with('Z'), "timeStamp {stamp}");
        assert_eq!(
            body["_links"]["vnfInstance"]["href"],
            format!("{}/vnflcm/v2/vnf_instances/{instance_id}", app.address)
        );
        assert_eq!(body["_links"]["subscription"]["href"], format!("{}/vnflcm/v2/subscriptions/{all_id}", app.address));
        if body["notificationType"] == "VnfLcmOperationOccurrenceNotification" {
            assert_eq!(body["verbosity"], "FULL");
            assert_eq!(body["isAutomaticInvocation"], false);
            let op_id = body["vnfLcmOpOccId"].as_str().unwrap();
            assert_eq!(
                body["_links"]["vnfLcmOpOcc"]["href"],
                format!("{}/vnflcm/v2/vnf_lcm_op_occs/{op_id}", app.address)
            );
            // SOL003: the changes only in RESULT notifications.
            let has_changes = body.get("affectedVnfcs").is_some();
            let completed = body["operationState"] == "COMPLETED";
            assert_eq!(has_changes, completed, "affectedVnfcs only in the RESULT of a completed operation: {body}");
            assert!(body.get("error").is_none());
        } else {
            assert!(body["_links"].get("vnfLcmOpOcc").is_none());
        }
    }
    // The sample in the report.
    println!("captured START notification:\n{}", serde_json::to_string_pretty(&got[1].body).unwrap());
    println!("captured RESULT notification:\n{}", serde_json::to_string_pretty(&got[3].body).unwrap());
    println!("headers: {:?}", got[3].headers);

    let short_got = receiver.wait_delivered("/short", 2, Duration::from_secs(10)).await;
    assert_eq!(
        short_got.iter().map(summary).collect::<Vec<_>>(),
        ["RESULT/COMPLETED/INSTANTIATE", "RESULT/COMPLETED/TERMINATE"]
    );
    for received in &short_got {
        assert_eq!(received.body["verbosity"], "SHORT");
        assert!(received.body.get("affectedVnfcs").is_none(), "SHORT omits affected*: {}", received.body);
        assert_eq!(received.body["subscriptionId"], short["id"]);
    }
    // Operation filters narrow operation notifications only (SOL003: operationTypes and
    // operationStates apply to VnfLcmOperationOccurrenceNotification).
    let terminate_got = receiver.wait_delivered("/terminate", 4, Duration::from_secs(10)).await;
    assert_eq!(
        terminate_got.iter().map(summary).collect::<Vec<_>>(),
        [
            "VnfIdentifierCreationNotification",
            "START/STARTING/TERMINATE",
            "RESULT/COMPLETED/TERMINATE",
            "VnfIdentifierDeletionNotification"
        ]
    );
    let newest_got = receiver.wait_delivered("/newest", 1, Duration::from_secs(10)).await;
    assert_eq!(newest_got[0].header("version"), Some(newest.as_str()));
    let created_got = receiver.wait_delivered("/created", 1, Duration::from_secs(10)).await;
    assert_eq!(created_got.len(), 1);
    assert_eq!(summary(&created_got[0]), "VnfIdentifierCreationNotification");

    // A subscription for another vnfdId gets nothing, not even a queued row.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.posts("/other").is_empty());
    assert!(rows(&app, other_vnfd["id"].as_str().unwrap()).is_empty());
    assert_eq!(receiver.posts("/terminate").len(), 4);
    assert_eq!(receiver.posts("/created").len(), 1);
    assert_eq!(rows(&app, creations["id"].as_str().unwrap()).len(), 1);
    assert!(rows(&app, terminate_only["id"].as_str().unwrap()).iter().all(|row| row.state == notifications::DELIVERED));
}

/// The receiver is down for 20 s while an instance goes through its whole life; when it
/// comes back every notification arrives, in order, none lost, a repeat keeping its id.
#[tokio::test]
async fn receiver_outage_loses_nothing() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(|settings| {
        quick(settings);
        settings.notifications.max_attempts = 1000;
        settings.notifications.request_timeout_secs = 2;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let subscription = subscribed(&app, json!({"callbackUri": receiver.url("/nfvo")})).await;
    let subscription_id = subscription["id"].as_str().unwrap().to_owned();

    receiver.stop().await;
    let down_at = Instant::now();
    full_lifecycle(&app, &vnfd_id).await;
    // While down: everything is queued, the head is being retried, nothing is given up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let queued = rows(&app, &subscription_id);
    assert_eq!(queued.len(), FULL_LIFECYCLE.len());
    assert!(queued.iter().all(|row| row.state == notifications::PENDING), "{queued:?}");
    assert!(queued[0].attempts >= 2, "the head is retried: {:?}", queued[0]);
    assert!(queued[1..].iter().all(|row| row.attempts == 0), "only the head is attempted");
    tokio::time::sleep(Duration::from_secs(20).saturating_sub(down_at.elapsed())).await;
    assert!(rows(&app, &subscription_id).iter().all(|row| row.state == notifications::PENDING));

    receiver.restart();
    let got = receiver.wait_delivered("/nfvo", FULL_LIFECYCLE.len(), Duration::from_secs(20)).await;
    let expected_ids: Vec<String> = queued.iter().map(|row| row.notification_id.clone()).collect();
    assert_eq!(first_arrivals(&got), expected_ids, "every notification, in order");
    // Duplicates (if any) carry the id of the notification they repeat.
    let posted = receiver.posts("/nfvo");
    assert!(posted.iter().all(|r| expected_ids.contains(&r.body["id"].as_str().unwrap().to_owned())));
    let mut seen = HashSet::new();
    let firsts: Vec<String> =
        got.iter().filter(|r| seen.insert(r.body["id"].as_str().unwrap().to_owned())).map(summary).collect();
    assert_eq!(firsts, FULL_LIFECYCLE);
    let metrics = send(app.get("/metrics")).await.text;
    let retried = metric(&metrics, r#"solgate_notifications_total{result="retried"}"#);
    assert!(retried >= 10.0, "{metrics}");
    assert_eq!(metric(&metrics, r#"solgate_notifications_total{result="given_up"}"#), 0.0);
}

fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series).map(|value| value.trim().parse::<f64>().unwrap()))
        .unwrap_or(0.0)
}

/// A callback that fails its test is a 422 naming the cause in client terms (never a
/// 500 and no internal host, port or error text); the test can be switched off.
#[tokio::test]
async fn callback_test_failures_are_422() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(|settings| settings.notifications.callback_test_timeout_secs = 1).await;

    receiver.state().get_status = 500;
    let detail = subscribe(&app, json!({"callbackUri": receiver.url("/cb")})).await.problem(422);
    assert_eq!(
        detail,
        "Can't get from notification callback Uri. It answered 500 to a GET; 204 No Content is required."
    );

    // Unreachable: a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = format!("http://127.0.0.1:{port}/cb");
    let detail = subscribe(&app, json!({"callbackUri": unreachable})).await.problem(422);
    assert_eq!(detail, "Can't get from notification callback Uri. The callback URI could not be reached.");
    assert!(!detail.contains(&port.to_string()) && !detail.contains("127.0.0.1"));

    receiver.state().get_status = 204;
    receiver.state().get_delay = Duration::from_secs(5);
    let started = Instant::now();
    let detail = subscribe(&app, json!({"callbackUri": receiver.url("/slow")})).await.problem(422);
    assert_eq!(detail, "Can't get from notification callback Uri. The callback URI did not answer within 1 seconds.");
    assert!(started.elapsed() < Duration::from_secs(4), "the test is bounded by its timeout");

    // Nothing was stored.
    let list = send(v2(&app, Method::GET, "/vnflcm/v2/subscriptions")).await;
    assert_eq!(list.json(), json!([]));

    // Request checks come before the callback test.
    let detail = subscribe(&app, json!({"callbackUri": "http://169.254.169.254/cb"})).await.problem(422);
    assert!(detail.contains("169.254.0.0/16") && detail.contains("egress.deny_networks"), "{detail}");
    let detail = subscribe(&app, json!({"callbackUri": "cb"})).await.problem(400);
    assert_eq!(detail, "callbackUri cb is not an absolute URI.");
    subscribe(&app, json!({"filter": {}})).await.problem(400);
    let detail =
        subscribe(&app, json!({"callbackUri": receiver.url("/cb"), "authentication": {"authType": ["BASIC"]}}))
            .await
            .problem(400);
    assert_eq!(detail, "paramsBasic must be specified.");
    let detail =
        subscribe(&app, json!({"callbackUri": receiver.url("/cb"), "authentication": {"authType": ["TLS_CERT"]}}))
            .await
            .problem(422);
    assert!(detail.contains("TLS_CERT"), "{detail}");

    // Operators can switch the test off.
    let untested = TestApp::spawn_with(|settings| settings.notifications.test_callback_uri = false).await;
    let reply = subscribe(&untested, json!({"callbackUri": unreachable})).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
}

/// The same callback and filter again is 303 See Other to the existing subscription
/// (and its callback is not tested again); another verbosity is another subscription.
#[tokio::test]
async fn duplicate_subscription_is_303() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn().await;
    let filter = json!({"vnfInstanceSubscriptionFilter": {"vnfdIds": ["a", "b"]}, "operationTypes": ["INSTANTIATE", "TERMINATE"]});
    let first = subscribed(&app, json!({"callbackUri": receiver.url("/cb"), "filter": filter})).await;
    let location = format!("{}/vnflcm/v2/subscriptions/{}", app.address, first["id"].as_str().unwrap());

    let same = json!({"callbackUri": receiver.url("/cb"), "verbosity": "FULL",
        "filter": {"operationTypes": ["TERMINATE", "INSTANTIATE"], "vnfInstanceSubscriptionFilter": {"vnfdIds": ["b", "a"]}}});
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let request = no_redirects
        .post(app.url("/vnflcm/v2/subscriptions"))
        .header("Version", "2.0.0")
        .header("Accept", "application/json")
        .json(&same);
    let reply = send(request).await;
    assert_eq!(reply.status, 303, "{}", reply.text);
    assert_eq!(reply.header("location"), Some(location.as_str()));
    assert_eq!(reply.header("version"), Some("2.0.0"));
    assert!(reply.text.is_empty());
    assert_eq!(reply.header("content-type"), None);
    assert_eq!(receiver.gets("/cb").len(), 1, "a duplicate is not tested again");
    // A client that follows the redirect (reqwest's default) lands on the existing one.
    let followed = subscribe(&app, same).await;
    assert_eq!(followed.status, 200, "{}", followed.text);
    assert_eq!(followed.json(), first);

    let short =
        subscribed(&app, json!({"callbackUri": receiver.url("/cb"), "filter": filter, "verbosity": "SHORT"})).await;
    assert_ne!(short["id"], first["id"]);
    let narrower =
        subscribed(&app, json!({"callbackUri": receiver.url("/cb"), "filter": {"operationTypes": ["INSTANTIATE"]}}))
            .await;
    assert_ne!(narrower["id"], first["id"]);
    let list = send(v2(&app, Method::GET, "/vnflcm/v2/subscriptions")).await.json();
    assert_eq!(list.as_array().unwrap().len(), 3);
}

/// BASIC credentials reach the callback (test and notifications); no response ever
/// shows them.
#[tokio::test]
async fn basic_auth_reaches_the_callback_and_never_leaves() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(quick).await;
    let vnfd_id = install_sample_package(&app);
    let reply = subscribe(
        &app,
        json!({"callbackUri": receiver.url("/basic"),
               "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "s3cret"}}}),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let second = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/basic2"),
               "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "s3cret"}},
               "filter": {"notificationTypes": ["VnfIdentifierDeletionNotification"]}}),
    )
    .await;
    let expected = Some("Basic bmZ2bzpzM2NyZXQ=");
    assert_eq!(receiver.gets("/basic")[0].header("authorization"), expected);

    let instance = create_instance(&app, &vnfd_id, "auth").await;
    let got = receiver.wait_delivered("/basic", 1, Duration::from_secs(10)).await;
    assert_eq!(got[0].header("authorization"), expected);
    assert_eq!(got[0].body["vnfInstanceId"], instance.as_str());

    let show = send(v2(&app, Method::GET, &format!("/vnflcm/v2/subscriptions/{id}"))).await;
    let list = send(v2(&app, Method::GET, "/vnflcm/v2/subscriptions")).await;
    let filtered =
        send(v2(&app, Method::GET, "/vnflcm/v2/subscriptions?filter=(eq,authentication/paramsBasic/userName,nfvo)"))
            .await;
    for text in [&reply.text, &show.text, &list.text, &serde_json::to_string(&second).unwrap()] {
        assert!(
            !text.contains("s3cret") && !text.contains("authentication") && !text.contains("paramsBasic"),
            "{text}"
        );
    }
    // Credentials cannot be probed through a filter either: the attribute does not exist.
    assert_eq!(filtered.status, 400, "{}", filtered.text);
    assert!(!filtered.text.contains(&id), "{}", filtered.text);
}

/// OAuth 2.0 client credentials: one token, fetched once (for the callback test) and
/// reused for every notification; a 401 from the callback renews it once.
#[tokio::test]
async fn oauth2_token_is_fetched_once_and_renewed_on_401() {
    let receiver = Receiver::start().await;
    receiver.state().oauth = true;
    let app = TestApp::spawn_with(quick).await;
    let vnfd_id = install_sample_package(&app);
    let reply = subscribe(
        &app,
        json!({"callbackUri": receiver.url("/oauth"),
               "authentication": {"authType": ["OAUTH2_CLIENT_CREDENTIALS"], "paramsOauth2ClientCredentials":
                   {"clientId": "client-1", "clientPassword": "cl1ent-s3cret", "tokenEndpoint": receiver.url("/token")}}}),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert!(!reply.text.contains("cl1ent-s3cret") && !reply.text.contains("authentication"), "{}", reply.text);
    {
        let state = receiver.state();
        assert_eq!(state.token_requests.len(), 1);
        let request = &state.token_requests[0];
        assert_eq!(request.header("authorization"), Some("Basic Y2xpZW50LTE6Y2wxZW50LXMzY3JldA=="));
        assert_eq!(request.header("content-type"), Some("application/x-www-form-urlencoded"));
        assert_eq!(request.body, json!("grant_type=client_credentials"));
    }
    assert_eq!(receiver.gets("/oauth")[0].header("authorization"), Some("Bearer tok-1"));

    let first = create_instance(&app, &vnfd_id, "o1").await;
    let second = create_instance(&app, &vnfd_id, "o2").await;
    let got = receiver.wait_delivered("/oauth", 2, Duration::from_secs(10)).await;
    assert!(got.iter().all(|r| r.header("authorization") == Some("Bearer tok-1")));
    assert_eq!(receiver.state().token_requests.len(), 1, "the token is reused");

    // The NFVO revokes the token: the next POST gets 401, a new token is fetched once.
    receiver.state().valid_token = Some("revoked-everything".into());
    let third = create_instance(&app, &vnfd_id, "o3").await;
    let got = receiver.wait_delivered("/oauth", 3, Duration::from_secs(10)).await;
    assert_eq!(got[2].header("authorization"), Some("Bearer tok-2"));
    assert_eq!(receiver.state().token_requests.len(), 2);
    let instances: Vec<&str> = got.iter().map(|r| r.body["vnfInstanceId"].as_str().unwrap()).collect();
    assert_eq!(instances, [first.as_str(), second.as_str(), third.as_str()]);
    let rejected = receiver.posts("/oauth").iter().filter(|r| r.status == 401).count();
    assert_eq!(rejected, 1);
}

/// List with filter and paging, show, delete (204, then 404); deleting a subscription
/// drops its undelivered notifications.
#[tokio::test]
async fn list_show_delete() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(|settings| {
        settings.paging.subscription_page_size = 2;
        settings.notifications.initial_backoff_ms = 60_000;
    })
    .await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let verbosity = if n % 2 == 0 { "FULL" } else { "SHORT" };
        let created =
            subscribed(&app, json!({"callbackUri": receiver.url(&format!("/cb/{n}")), "verbosity": verbosity})).await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    ids.sort();

    let mut seen = Vec::new();
    let mut next = Some(format!("{}/vnflcm/v2/subscriptions", app.address));
    while let Some(url) = next {
        let page = send(app.client.get(&url).header("Version", "2.0.0")).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let items = page.json();
        assert!(items.as_array().unwrap().len() <= 2);
        seen.extend(items.as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_owned()));
        next = page.header("link").map(|link| {
            assert!(link.ends_with(r#"rel="next""#), "{link}");
            link.trim_start_matches('<').split('>').next().unwrap().to_owned()
        });
    }
    assert_eq!(seen, ids, "every subscription once, in id order");

    let wanted = receiver.url("/cb/3");
    let filtered =
        send(v2(&app, Method::GET, &format!("/vnflcm/v2/subscriptions?filter=(eq,callbackUri,'{wanted}')"))).await;
    let filtered = filtered.json();
    assert_eq!(filtered.as_array().unwrap().len(), 1, "{filtered}");
    assert_eq!(filtered[0]["callbackUri"], wanted.as_str());
    let short = send(v2(&app, Method::GET, "/vnflcm/v2/subscriptions?filter=(eq,verbosity,SHORT)")).await;
    assert_eq!(short.json().as_array().unwrap().len(), 2);
    let bogus = send(v2(&app, Method::GET, "/vnflcm/v2/subscriptions?nextpage_opaque_marker=bogus")).await;
    bogus.problem(400);

    let show = send(v2(&app, Method::GET, &format!("/vnflcm/v2/subscriptions/{}", ids[0]))).await;
    assert_eq!(show.status, 200);
    assert_eq!(show.json()["id"], ids[0].as_str());
    assert!(show.json().get("_solgate").is_none(), "private bookkeeping stays private");

    // A subscription with an undelivered notification.
    receiver.answer("/dead", Answer::Fail(503));
    let dead = subscribed(&app, json!({"callbackUri": receiver.url("/dead")})).await;
    let dead_id = dead["id"].as_str().unwrap().to_owned();
    let vnfd_id = install_sample_package(&app);
    create_instance(&app, &vnfd_id, "pending").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while receiver.posts("/dead").is_empty() {
        assert!(Instant::now() < deadline, "no delivery attempt");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(rows(&app, &dead_id).len(), 1);

    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/subscriptions/{dead_id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    assert!(reply.text.is_empty());
    assert!(rows(&app, &dead_id).is_empty(), "pending notifications go with the subscription");
    let detail = send(v2(&app, Method::GET, &format!("/vnflcm/v2/subscriptions/{dead_id}"))).await.problem(404);
    assert_eq!(detail, format!("LccnSubscription {dead_id} not found."));
    send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/subscriptions/{dead_id}"))).await.problem(404);
}

/// A callback that always fails: each notification is given up after max_attempts (a
/// counter at /metrics, the row GIVEN_UP with its last error) and the next one proceeds.
#[tokio::test]
async fn give_up_after_max_attempts() {
    let receiver = Receiver::start().await;
    receiver.answer("/broken", Answer::Fail(500));
    let app = TestApp::spawn_with(|settings| {
        quick(settings);
        settings.notifications.initial_backoff_ms = 50;
        settings.notifications.max_attempts = 3;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let subscription = subscribed(&app, json!({"callbackUri": receiver.url("/broken")})).await;
    let subscription_id = subscription["id"].as_str().unwrap().to_owned();
    let instance = create_instance(&app, &vnfd_id, "doomed").await;
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{instance}"))).await;
    assert_eq!(reply.status, 204);

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let queue = rows(&app, &subscription_id);
        if queue.len() == 2 && queue.iter().all(|row| row.state == notifications::GIVEN_UP) {
            for row in &queue {
                assert_eq!(row.attempts, 3, "{row:?}");
                assert_eq!(row.last_error.as_deref(), Some("the callback answered HTTP 500"));
            }
            break;
        }
        assert!(Instant::now() < deadline, "not given up: {queue:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // In order: three attempts at the creation, then three at the deletion.
    let attempts: Vec<String> = receiver.posts("/broken").iter().map(summary).collect();
    let mut expected = vec!["VnfIdentifierCreationNotification"; 3];
    expected.extend(["VnfIdentifierDeletionNotification"; 3]);
    assert_eq!(attempts, expected);
    let ids: Vec<String> =
        receiver.posts("/broken").iter().map(|r| r.body["id"].as_str().unwrap().to_owned()).collect();
    assert!(ids[..3].iter().all(|id| *id == ids[0]) && ids[3..].iter().all(|id| *id == ids[3]), "stable ids: {ids:?}");

    let metrics = send(app.get("/metrics")).await.text;
    assert_eq!(metric(&metrics, r#"solgate_notifications_total{result="given_up"}"#), 2.0, "{metrics}");
    assert_eq!(metric(&metrics, r#"solgate_notifications_total{result="retried"}"#), 4.0, "{metrics}");
    assert!(metrics.contains("solgate_notifications_pending"), "{metrics}");
}

/// Per-subscription order under retries, and isolation: a callback that fails the first
/// attempt of each notification still gets them in order; one that hangs holds up only
/// its own queue (its head), while a healthy one gets everything at once.
#[tokio::test]
async fn order_under_retries_and_a_hanging_callback_delays_nobody_else() {
    let receiver = Receiver::start().await;
    receiver.answer("/flaky", Answer::FailFirst(503));
    let app = TestApp::spawn_with(|settings| {
        quick(settings);
        settings.notifications.request_timeout_secs = 3;
        settings.notifications.claim_timeout_secs = 10;
        settings.notifications.max_attempts = 1000;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let healthy = subscribed(&app, json!({"callbackUri": receiver.url("/healthy")})).await;
    subscribed(&app, json!({"callbackUri": receiver.url("/flaky")})).await;
    let hanging = subscribed(&app, json!({"callbackUri": receiver.url("/hang")})).await;
    receiver.answer("/hang", Answer::Hang);

    let started = Instant::now();
    full_lifecycle(&app, &vnfd_id).await;
    let lifecycle_done = started.elapsed();
    let got = receiver.wait_delivered("/healthy", FULL_LIFECYCLE.len(), Duration::from_secs(10)).await;
    assert_eq!(got.iter().map(summary).collect::<Vec<_>>(), FULL_LIFECYCLE);
    let healthy_done = got.last().unwrap().at.duration_since(started);

    let flaky = receiver.wait_delivered("/flaky", FULL_LIFECYCLE.len(), Duration::from_secs(20)).await;
    assert_eq!(flaky.iter().map(summary).collect::<Vec<_>>(), FULL_LIFECYCLE);
    // Each notification: one 503, then 204 with the same id, before the next one starts.
    let attempts = receiver.posts("/flaky");
    assert_eq!(attempts.len(), 2 * FULL_LIFECYCLE.len());
    for pair in attempts.chunks(2) {
        assert_eq!((pair[0].status, pair[1].status), (503, 204));
        assert_eq!(pair[0].body["id"], pair[1].body["id"]);
    }

    // The hanging callback only ever saw its head, retried after each timeout.
    let hung = receiver.posts("/hang");
    assert!(!hung.is_empty());
    assert!(
        hung.iter().all(|r| summary(r) == "VnfIdentifierCreationNotification" && r.body["id"] == hung[0].body["id"])
    );
    let queue = rows(&app, hanging["id"].as_str().unwrap());
    assert_eq!(queue.len(), FULL_LIFECYCLE.len());
    assert!(queue.iter().all(|row| row.state == notifications::PENDING));
    let healthy_rows = rows(&app, healthy["id"].as_str().unwrap());
    assert!(healthy_rows.iter().all(|row| row.state == notifications::DELIVERED && row.attempts == 1));
    // The healthy subscriber was not held up by the hanging one (each attempt there takes
    // the 3 s timeout): its last notification came right after the lifecycle ended.
    assert!(
        healthy_done < lifecycle_done + Duration::from_secs(2),
        "healthy done after {healthy_done:?}, lifecycle took {lifecycle_done:?}"
    );
}

/// Error handling: FAILED_TEMP and ROLLED_BACK carry `error`; the PROCESSING a retry
/// enters and ROLLING_BACK are START notifications (SOL003; Tacker sends RESULT, its
/// defect 16) and repeat none of the failed attempt's changes.
#[tokio::test]
async fn retry_and_rollback_notifications() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(quick).await;
    let vnfd_id = install_sample_package(&app);
    subscribed(
        &app,
        json!({"callbackUri": receiver.url("/ops"),
               "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}}),
    )
    .await;

    // Fails once, then retried to COMPLETED.
    let id = create_instance(&app, &vnfd_id, "retried").await;
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let failed = wait_op(&app, &op_url, &["FAILED_TEMP"]).await;
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(Method::POST, &format!("{op_path}/retry")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    wait_op_after(&app, &op_url, &["COMPLETED"], failed["stateEnteredTime"].as_str().unwrap()).await;

    // Always fails, then rolled back.
    let id = create_instance(&app, &vnfd_id, "rolled-back").await;
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAfter": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let failed = wait_op(&app, &op_url, &["FAILED_TEMP"]).await;
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(Method::POST, &format!("{op_path}/rollback")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    wait_op_after(&app, &op_url, &["ROLLED_BACK"], failed["stateEnteredTime"].as_str().unwrap()).await;

    let got = receiver.wait_delivered("/ops", 10, Duration::from_secs(20)).await;
    assert_eq!(
        got.iter().map(summary).collect::<Vec<_>>(),
        [
            "START/STARTING/INSTANTIATE",
            "RESULT/PROCESSING/INSTANTIATE",
            "RESULT/FAILED_TEMP/INSTANTIATE",
            "START/PROCESSING/INSTANTIATE",
            "RESULT/COMPLETED/INSTANTIATE",
            "START/STARTING/INSTANTIATE",
            "RESULT/PROCESSING/INSTANTIATE",
            "RESULT/FAILED_TEMP/INSTANTIATE",
            "START/ROLLING_BACK/INSTANTIATE",
            "RESULT/ROLLED_BACK/INSTANTIATE",
        ]
    );
    for received in &got {
        let body = &received.body;
        let state = body["operationState"].as_str().unwrap();
        let with_error = matches!(state, "FAILED_TEMP" | "FAILED" | "ROLLED_BACK");
        assert_eq!(body.get("error").is_some(), with_error, "error only in failure states: {body}");
        if with_error {
            assert!(body["error"]["detail"].as_str().unwrap().contains("injected failure"), "{body}");
        }
        if body["notificationStatus"] == "START" {
            for key in ["affectedVnfcs", "affectedVirtualLinks", "affectedVirtualStorages", "changedInfo"] {
                assert!(body.get(key).is_none(), "no {key} in a START notification: {body}");
            }
        }
    }
    assert!(got[4].body["affectedVnfcs"].is_array(), "the retried operation's RESULT lists its changes");
}

#[tokio::test]
async fn two_conductors_deliver_each_notification_once_in_order() {
    two_conductors_share_the_outbox(Db::Sqlite).await;
}

#[tokio::test]
async fn two_conductors_deliver_each_notification_once_in_order_on_postgres() {
    two_conductors_share_the_outbox(Db::Postgres).await;
}

/// Two processes' delivery workers on one database race for the same outbox: the claims
/// keep each notification to one sender and each subscription in order.
async fn two_conductors_share_the_outbox(db: Db) {
    let receiver = Receiver::start().await;
    let Some(first) = TestApp::spawn_on(db, quick).await else { return };
    let url = first.database_url.clone();
    let second = TestApp::spawn_with(move |settings| {
        quick(settings);
        settings.database.url = url;
    })
    .await;
    let vnfd_id = install_sample_package(&first);
    let paths: Vec<String> = (0..4).map(|n| format!("/shared/{n}")).collect();
    for path in &paths {
        // Subscribed through either gateway: the table is the same.
        subscribed(&second, json!({"callbackUri": receiver.url(path)})).await;
    }
    receiver.answer(&paths[0], Answer::FailFirst(503));
    full_lifecycle(&first, &vnfd_id).await;
    full_lifecycle(&second, &vnfd_id).await;
    let expected: Vec<&str> = FULL_LIFECYCLE.iter().chain(FULL_LIFECYCLE.iter()).copied().collect();
    for path in &paths {
        let got = receiver.wait_delivered(path, expected.len(), Duration::from_secs(20)).await;
        assert_eq!(got.iter().map(summary).collect::<Vec<_>>(), expected, "{path}");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for path in &paths[1..] {
        assert_eq!(receiver.posts(path).len(), expected.len(), "{path}: each notification sent once");
    }
    let retried = receiver.posts(&paths[0]);
    assert_eq!(retried.len(), 2 * expected.len(), "one failure and one delivery each");
    for pair in retried.chunks(2) {
        assert_eq!((pair[0].status, pair[1].status), (503, 204));
        assert_eq!(pair[0].body["id"], pair[1].body["id"]);
    }
}

/// v1 subscriptions: no `Version` needed (Release-2 clients), 303 on duplicates (as Tacker
/// v1), notifications of v1 instances only, in the v1 shape with `Version: 1.3.0`; a v2
/// subscription hears nothing of v1 instances.
#[tokio::test]
async fn v1_subscriptions_hear_v1_instances_in_v1_shape() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(quick).await;
    let vnfd_id = install_sample_package(&app);
    let v1 = |method: Method, path: &str| {
        app.request(method, &format!("/vnflcm/v1{path}")).header("Accept", "application/json")
    };
    let reply = send(v1(Method::POST, "/subscriptions").json(&json!({"callbackUri": receiver.url("/v1")}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.header("version"), Some("1.3.0"));
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    assert!(reply.header("location").unwrap().ends_with(&format!("/vnflcm/v1/subscriptions/{id}")));
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let duplicate =
        send(no_redirects.post(app.url("/vnflcm/v1/subscriptions")).json(&json!({"callbackUri": receiver.url("/v1")})))
            .await;
    assert_eq!(duplicate.status, 303, "{}", duplicate.text);
    subscribed(&app, json!({"callbackUri": receiver.url("/v2")})).await;
    assert_eq!(send(v1(Method::GET, "/subscriptions")).await.json().as_array().unwrap().len(), 1, "per-major lists");

    let reply = send(v1(Method::POST, "/vnf_instances").json(&json!({"vnfdId": vnfd_id}))).await;
    let instance = reply.json()["id"].as_str().unwrap().to_owned();
    let reply =
        send(v1(Method::POST, &format!("/vnf_instances/{instance}/instantiate")).json(&json!({"flavourId": "simple"})))
            .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
    let delivered = receiver.wait_delivered("/v1", 4, Duration::from_secs(20)).await;
    assert_eq!(
        delivered.iter().map(|r| r.body["notificationType"].as_str().unwrap().to_owned()).collect::<Vec<_>>()[0],
        "VnfIdentifierCreationNotification"
    );
    for received in &delivered {
        assert_eq!(received.header("version"), Some("1.3.0"), "{received:?}");
        assert!(received.body.get("verbosity").is_none(), "SOL003 v2.6.1 notifications have no verbosity");
        assert!(
            received.body["_links"]["subscription"]["href"].as_str().unwrap().contains("/vnflcm/v1/subscriptions/")
        );
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.posts("/v2").is_empty(), "a v2 subscription hears nothing of v1 instances");
}

/// API 2.1.0 (SOL003 V3.5.1) added `OAUTH2_CLIENT_CERT`: under 2.0.0 the schema refuses it
/// (400 naming the pointer); under 2.1.0 the body is valid and reaches the semantic checks.
#[tokio::test]
async fn a_body_valid_only_in_the_newer_minor_is_400_under_the_older() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn().await;
    let body = json!({"callbackUri": receiver.url("/cb"), "authentication": {"authType": ["OAUTH2_CLIENT_CERT"],
        "paramsOauth2ClientCert": {"clientId": "nfvo", "certificateRef": {"type": "x5t#S256", "value": "7d2f5b3c"},
        "tokenEndpoint": "http://127.0.0.1:1/token"}}});
    let older =
        send(app.request(Method::POST, "/vnflcm/v2/subscriptions").header("Version", "2.0.0").json(&body)).await;
    assert!(older.problem(400).contains("/authentication/authType/0"), "{}", older.text);
    let newer =
        send(app.request(Method::POST, "/vnflcm/v2/subscriptions").header("Version", "2.1.0").json(&body)).await;
    assert_ne!(newer.status, 400, "{}", newer.text);
    assert_eq!(newer.header("version"), Some("2.1.0"));
}

#[tokio::test]
async fn identical_lcm_subscriptions_at_once_make_one_on_sqlite() {
    identical_subscriptions_at_once_make_one(Db::Sqlite).await;
}

#[tokio::test]
async fn identical_lcm_subscriptions_at_once_make_one_on_postgres() {
    identical_subscriptions_at_once_make_one(Db::Postgres).await;
}

/// The same LCM subscription requested several times at once, on each major: one 201, the
/// others 303 to it (the unique index decides the race; on PostgreSQL the loser must still
/// read the winner after its failed insert).
async fn identical_subscriptions_at_once_make_one(db: Db) {
    let receiver = Receiver::start().await;
    let Some(app) = TestApp::spawn_on(db, quick).await else { return };
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for (major, version) in [(1, "1.3.0"), (2, "2.0.0")] {
        let body = json!({"callbackUri": receiver.url(&format!("/same-v{major}")),
                          "filter": {"operationTypes": ["INSTANTIATE"]}});
        let posts = (0..6).map(|_| {
            send(
                no_redirects
                    .post(app.url(&format!("/vnflcm/v{major}/subscriptions")))
                    .header("Version", version)
                    .header("Accept", "application/json")
                    .json(&body),
            )
        });
        let replies = futures::future::join_all(posts).await;
        let mut statuses: Vec<u16> = replies.iter().map(|reply| reply.status).collect();
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [201, 303, 303, 303, 303, 303],
            "v{major}: {:?}",
            replies.iter().map(|reply| &reply.text).collect::<Vec<_>>()
        );
        let created = replies.iter().find(|reply| reply.status == 201).unwrap().header("location").unwrap().to_owned();
        assert!(replies.iter().all(|reply| reply.header("location") == Some(created.as_str())), "v{major}");
        let listed = send(
            app.request(Method::GET, &format!("/vnflcm/v{major}/subscriptions"))
                .header("Version", version)
                .header("Accept", "application/json"),
        )
        .await
        .json();
        assert_eq!(listed.as_array().unwrap().len(), 1, "v{major}: {listed}");
    }
}

#[tokio::test]
async fn subscriptions_changed_between_operations_are_heard_from_the_next_one() {
    subscriptions_changed_between_operations(Db::Sqlite).await;
}

#[tokio::test]
async fn subscriptions_changed_between_operations_are_heard_from_the_next_one_on_postgres() {
    subscriptions_changed_between_operations(Db::Postgres).await;
}

/// On PostgreSQL a transition reuses the subscriptions read before at the generation its
/// first statement saw. A subscription made or deleted between two operations still counts
/// from the next operation's first notification, whatever was read before.
async fn subscriptions_changed_between_operations(db: Db) {
    let receiver = Receiver::start().await;
    let Some(app) = TestApp::spawn_on(db, quick).await else { return };
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "heard").await;
    let run = |task_name: &'static str, body: Value| {
        let (app, id) = (&app, id.clone());
        async move {
            let op = task(app, &id, task_name, body).await;
            let done = wait_op(app, &op, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
            assert_eq!(done["operationState"], "COMPLETED", "{done}");
        }
    };
    // Heard by nobody: the (empty) subscriptions of this generation are read and kept.
    run("instantiate", instantiate_body()).await;

    let first = subscribed(&app, json!({"callbackUri": receiver.url("/first")})).await;
    run("terminate", json!({"terminationType": "FORCEFUL"})).await;
    let heard = receiver.wait_delivered("/first", 3, Duration::from_secs(10)).await;
    let expected = ["START/STARTING/TERMINATE", "RESULT/PROCESSING/TERMINATE", "RESULT/COMPLETED/TERMINATE"];
    assert_eq!(heard.iter().map(summary).collect::<Vec<_>>(), expected);

    let first_id = first["id"].as_str().unwrap();
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/subscriptions/{first_id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    subscribed(&app, json!({"callbackUri": receiver.url("/second")})).await;
    run("instantiate", instantiate_body()).await;
    let heard = receiver.wait_delivered("/second", 3, Duration::from_secs(10)).await;
    let expected = ["START/STARTING/INSTANTIATE", "RESULT/PROCESSING/INSTANTIATE", "RESULT/COMPLETED/INSTANTIATE"];
    assert_eq!(heard.iter().map(summary).collect::<Vec<_>>(), expected);
    // The notifications of the last operation were all queued before it completed.
    assert_eq!(receiver.posts("/first").len(), 3, "a deleted subscription hears nothing more");
}
