//! The NFVO's VNF package notifications (`[nfvo] package_notifications = true`): solgate
//! subscribes once at the test NFVO (`/vnfpkgm/v2/subscriptions`), and the NFVO's
//! notifications to `/nfvo/v1/package_notifications` disable, enable or delete the packages
//! solgate took from it, and nothing else.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Db, Reply, TestApp, send};
use crate::lcm_support::*;
use crate::nfvo::{Decision, NfvoPackage, Seen, TestNfvo, base64_encode, external, local_packages, try_create};
use crate::notifications::Receiver;

const CALLBACK_PATH: &str = "/nfvo/v1/package_notifications";
const NOTIFIER: &str = "nfvo-notifier";
const NOTIFIER_PASSWORD: &str = "notifier-secret";

/// solgate in external mode with package notifications on; `public_endpoint` when given.
async fn app_with_notifications(db: Db, nfvo: &TestNfvo, public_endpoint: Option<&str>) -> Option<TestApp> {
    let endpoint = nfvo.endpoint();
    let public_endpoint = public_endpoint.map(str::to_owned);
    TestApp::spawn_on(db, move |settings| configure(settings, endpoint, public_endpoint)).await
}

fn configure(settings: &mut solgate::Settings, endpoint: String, public_endpoint: Option<String>) {
    settings.nfvo = external(endpoint);
    settings.nfvo.package_notifications = true;
    settings.nfvo.notification_user_name = NOTIFIER.into();
    settings.nfvo.notification_password = NOTIFIER_PASSWORD.into();
    crate::notifications::quick(settings);
    if let Some(public_endpoint) = public_endpoint {
        settings.http.public_endpoint = public_endpoint;
    }
}

/// The subscription requests the NFVO has received, once `done` holds of them (at most 20 s).
async fn subscription_requests(nfvo: &TestNfvo, done: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen = nfvo.state.lock().unwrap().subscription_requests.clone();
        if done(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "the NFVO did not get the expected subscription requests: {seen:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn posts(seen: &[Seen]) -> Vec<&Seen> {
    seen.iter().filter(|seen| seen.method == "POST").collect()
}

fn basic(user_name: &str, password: &str) -> String {
    format!("Basic {}", base64_encode(&format!("{user_name}:{password}")))
}

/// A notification to the callback, as the NFVO sends it (HTTP Basic, JSON, a `Version`).
async fn notify(app: &TestApp, notification: &Value) -> Reply {
    send(
        app.request(Method::POST, CALLBACK_PATH)
            .header("Authorization", basic(NOTIFIER, NOTIFIER_PASSWORD))
            .header("Version", "2.1.0")
            .json(notification),
    )
    .await
}

/// A VnfPackageChangeNotification (SOL003 v3.3.1 clause 10.5.2.9) for `vnfd_id`.
fn change(vnfd_id: &str, change_type: &str, operational_state: Option<&str>) -> Value {
    let mut notification = json!({
        "id": uuid::Uuid::new_v4().to_string(),
        "notificationType": "VnfPackageChangeNotification",
        "subscriptionId": "nfvo-subscription",
        "timeStamp": "2026-01-01T00:00:00Z",
        "vnfPkgId": uuid::Uuid::new_v4().to_string(),
        "vnfdId": vnfd_id,
        "changeType": change_type,
        "_links": {
            "vnfPackage": {"href": "http://nfvo/vnfpkgm/v2/vnf_packages/x"},
            "subscription": {"href": "http://nfvo/vnfpkgm/v2/subscriptions/nfvo-subscription"},
        },
    });
    if let Some(state) = operational_state {
        notification["operationalState"] = json!(state);
    }
    notification
}

async fn accepted(app: &TestApp, notification: &Value) {
    let reply = notify(app, notification).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
}

/// The cached package of `vnfd_id` over `GET /vnfpkgm/v1/vnf_packages/{id}`.
async fn show_package(app: &TestApp, id: &str) -> Reply {
    send(app.request(Method::GET, &format!("/vnfpkgm/v1/vnf_packages/{id}"))).await
}

async fn package_id(app: &TestApp, vnfd_id: &str) -> String {
    let local = local_packages(app, vnfd_id).await;
    assert_eq!(local.len(), 1, "{local:?}");
    local[0]["id"].as_str().unwrap().to_owned()
}

async fn delete_instance(app: &TestApp, id: &str) {
    let reply = send(v2(app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
}

#[tokio::test]
async fn sqlite_the_nfvo_is_subscribed_to_once() {
    let nfvo = TestNfvo::start(Decision::Grant);
    // The NFVO is not ready at first: solgate asks again, later.
    nfvo.state.lock().unwrap().refuse_subscriptions = 2;
    let public = "http://solgate.example:9890";
    let first = app_with_notifications(Db::Sqlite, &nfvo, Some(public)).await.unwrap();
    let seen = subscription_requests(&nfvo, |seen| !posts(seen).is_empty()).await;
    // Two refused, then the list (without solgate's subscription), then the subscription.
    assert_eq!(seen.iter().filter(|seen| seen.method == "GET").count(), 3, "{seen:?}");
    for request in &seen {
        assert_eq!(request.version, "2.1.0", "{request:?}");
        assert_eq!(request.authorization, basic("vnfm", "vnfm-password"), "the NFVO's own credentials");
    }
    let posted = posts(&seen);
    assert_eq!(posted.len(), 1, "{seen:?}");
    assert_eq!(
        posted[0].body,
        json!({
            "filter": {"notificationTypes": ["VnfPackageChangeNotification"]},
            "callbackUri": format!("{public}{CALLBACK_PATH}"),
            "authentication": {
                "authType": ["BASIC"],
                "paramsBasic": {"userName": NOTIFIER, "password": NOTIFIER_PASSWORD},
            },
        })
    );

    // Started again on the same data: the subscription is found, not made twice.
    let endpoint = nfvo.endpoint();
    let _second = TestApp::spawn_with_data_dir(&first.data_dir, move |settings| {
        configure(settings, endpoint, Some(public.to_owned()));
    })
    .await;
    subscription_requests(&nfvo, |seen| seen.iter().filter(|seen| seen.method == "GET").count() >= 4).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = nfvo.state.lock().unwrap().subscription_requests.clone();
    assert_eq!(posts(&seen).len(), 1, "{seen:?}");
    assert_eq!(nfvo.state.lock().unwrap().subscriptions.len(), 1);
}

#[tokio::test]
async fn sqlite_the_nfvo_notifications_change_the_packages_taken_from_it() {
    the_nfvo_notifications_change_the_packages_taken_from_it(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_the_nfvo_notifications_change_the_packages_taken_from_it() {
    the_nfvo_notifications_change_the_packages_taken_from_it(Db::Postgres).await;
}

async fn the_nfvo_notifications_change_the_packages_taken_from_it(db: Db) {
    let nfvo = TestNfvo::start(Decision::Grant);
    let (unused, used) = (uuid::Uuid::new_v4().to_string(), uuid::Uuid::new_v4().to_string());
    nfvo.state.lock().unwrap().packages.extend([NfvoPackage::sample(&unused), NfvoPackage::sample(&used)]);
    let Some(app) = app_with_notifications(db, &nfvo, None).await else { return };
    // solgate's own package subscriber, to hear what the NFVO's notifications changed here.
    let receiver = Receiver::start().await;
    let subscription = json!({
        "callbackUri": receiver.url("/packages"),
        "filter": {"notificationTypes": ["VnfPackageChangeNotification"]},
    });
    let reply = send(app.request(Method::POST, "/vnfpkgm/v1/subscriptions").json(&subscription)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);

    // The callback: tested with GET, refused without the notification credentials.
    let reply =
        send(app.request(Method::GET, CALLBACK_PATH).header("Authorization", basic(NOTIFIER, NOTIFIER_PASSWORD))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    let without = send(app.request(Method::POST, CALLBACK_PATH).json(&change(&unused, "PKG_DELETE", None))).await;
    without.problem(401);
    assert_eq!(without.header("www-authenticate"), Some("Basic realm=\"solgate\""));
    for authorization in [basic(NOTIFIER, "wrong"), basic("vnfm", "vnfm-password"), "Bearer x".into()] {
        let reply =
            send(app.request(Method::POST, CALLBACK_PATH).header("Authorization", authorization).json(&change(
                &unused,
                "PKG_DELETE",
                None,
            )))
            .await;
        reply.problem(401);
        assert_eq!(reply.header("www-authenticate"), Some("Basic realm=\"solgate\""));
    }
    send(app.request(Method::GET, CALLBACK_PATH)).await.problem(401);
    // Not a notification: 400.
    notify(&app, &json!(["not", "an", "object"])).await.problem(400);
    let detail = notify(&app, &json!({"notificationType": "VnfPackageChangeNotification"})).await.problem(400);
    assert!(detail.contains("vnfdId"), "{detail}");
    notify(&app, &change(&unused, "SOMETHING_ELSE", None)).await.problem(400);
    // Nothing here for that vnfdId yet: ignored.
    accepted(&app, &change(&unused, "OP_STATE_CHANGE", Some("DISABLED"))).await;

    // Both packages taken from the NFVO; `unused` ends up used by no instance.
    let instance = create_instance(&app, &unused, "short-lived").await;
    delete_instance(&app, &instance).await;
    let unused_id = package_id(&app, &unused).await;
    let in_use = create_instance(&app, &used, "long-lived").await;
    let used_id = package_id(&app, &used).await;
    // A package onboarded here, not taken from the NFVO.
    let local = install_sample_package(&app);
    let local_id = package_id(&app, &local).await;

    // Disabled at the NFVO: disabled here, and no new instance of it.
    accepted(&app, &change(&unused, "OP_STATE_CHANGE", Some("DISABLED"))).await;
    let package = show_package(&app, &unused_id).await.json();
    assert_eq!(package["operationalState"], "DISABLED", "{package}");
    assert!(package.get("_solgate").is_none(), "the private marker is never shown: {package}");
    let detail = try_create(&app, &unused).await.problem(422);
    assert!(detail.ends_with("is not ENABLED."), "{detail}");
    // Told twice: no change, no error.
    accepted(&app, &change(&unused, "OP_STATE_CHANGE", Some("DISABLED"))).await;

    // Enabled again: instances can be created again (without asking the NFVO for it).
    accepted(&app, &change(&unused, "OP_STATE_CHANGE", Some("ENABLED"))).await;
    assert_eq!(show_package(&app, &unused_id).await.json()["operationalState"], "ENABLED");
    let instance = create_instance(&app, &unused, "again").await;
    delete_instance(&app, &instance).await;

    // Deleted at the NFVO, used by no instance: deleted here, files too.
    let files = app.data_dir.join("packages").join(&unused_id);
    assert!(files.is_dir(), "{}", files.display());
    accepted(&app, &change(&unused, "PKG_DELETE", None)).await;
    show_package(&app, &unused_id).await.problem(404);
    assert!(local_packages(&app, &unused).await.is_empty());
    assert!(!files.exists(), "the package's files are removed too");

    // Deleted at the NFVO while an instance uses it: disabled; the instance stays.
    accepted(&app, &change(&used, "PKG_DELETE", None)).await;
    let package = show_package(&app, &used_id).await.json();
    assert_eq!(package["operationalState"], "DISABLED", "{package}");
    assert_eq!(package["usageState"], "IN_USE", "{package}");
    assert_eq!(show_instance(&app, &in_use).await["vnfdId"], used.as_str());
    try_create(&app, &used).await.problem(422);

    // The package onboarded here is the operator's: the NFVO changes nothing of it.
    accepted(&app, &change(&local, "OP_STATE_CHANGE", Some("DISABLED"))).await;
    accepted(&app, &change(&local, "PKG_DELETE", None)).await;
    let package = show_package(&app, &local_id).await.json();
    assert_eq!(package["operationalState"], "ENABLED", "{package}");
    create_instance(&app, &local, "local").await;

    // An onboarding notification asks for nothing.
    let onboarded = json!({
        "id": uuid::Uuid::new_v4().to_string(),
        "notificationType": "VnfPackageOnboardingNotification",
        "subscriptionId": "nfvo-subscription",
        "timeStamp": "2026-01-01T00:00:00Z",
        "vnfPkgId": uuid::Uuid::new_v4().to_string(),
        "vnfdId": uuid::Uuid::new_v4().to_string(),
        "_links": {"vnfPackage": {"href": "http://nfvo/x"}, "subscription": {"href": "http://nfvo/s"}},
    });
    accepted(&app, &onboarded).await;

    // solgate's package subscribers heard of each change, as if an operator had made it.
    let heard = receiver.wait_delivered("/packages", 4, Duration::from_secs(20)).await;
    let mut heard: Vec<(String, String)> = heard
        .iter()
        .map(|received| {
            let body = &received.body;
            let state = body["operationalState"].as_str().map(|state| format!("/{state}")).unwrap_or_default();
            (body["vnfdId"].as_str().unwrap().to_owned(), format!("{}{state}", body["changeType"].as_str().unwrap()))
        })
        .collect();
    heard.sort();
    let mut expected = vec![
        (unused.clone(), "OP_STATE_CHANGE/DISABLED".to_owned()),
        (unused.clone(), "OP_STATE_CHANGE/ENABLED".to_owned()),
        (unused.clone(), "PKG_DELETE".to_owned()),
        (used.clone(), "OP_STATE_CHANGE/DISABLED".to_owned()),
    ];
    expected.sort();
    assert_eq!(heard, expected);
}

#[tokio::test]
async fn the_callback_needs_no_token_under_oauth2_but_the_api_does() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let endpoint = nfvo.endpoint();
    let app = TestApp::spawn_with(move |settings| {
        configure(settings, endpoint, None);
        settings.auth.mode = solgate_gateway::auth::AuthMode::Oauth2;
    })
    .await;
    let reply =
        send(app.request(Method::GET, CALLBACK_PATH).header("Authorization", basic(NOTIFIER, NOTIFIER_PASSWORD))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    accepted(&app, &change(&uuid::Uuid::new_v4().to_string(), "PKG_DELETE", None)).await;
    let refused = send(app.request(Method::POST, CALLBACK_PATH).json(&change("x", "PKG_DELETE", None))).await;
    refused.problem(401);
    assert_eq!(refused.header("www-authenticate"), Some("Basic realm=\"solgate\""));
    // The APIs still need a token.
    let reply = send(app.request(Method::GET, "/vnfpkgm/v1/vnf_packages")).await;
    reply.problem(401);
    assert!(reply.header("www-authenticate").unwrap().starts_with("Bearer"), "{:?}", reply.header("www-authenticate"));
}
