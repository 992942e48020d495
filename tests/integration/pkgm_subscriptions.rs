//! VNF package subscriptions and notifications (SOL005 v2.6.1 clauses 9.4.8-9.4.10,
//! 9.5.2.6-9.5.2.9) over real HTTP. python-tackerclient has no commands for them, so the
//! tests speak HTTP; the receiver of `notifications.rs` stands in for the OSS/NFVO.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use solgate_db::repo::notifications::{self, NotificationRow};
use solgate_gateway::auth::{AuthMode, Role};

use crate::helpers::{Db, Reply, TestApp, send};
use crate::lcm_support::{create_instance, package_usage, v2};
use crate::notifications::{Received, Receiver, quick};
use crate::tenancy::{as_client, client};

const SUBSCRIPTIONS: &str = "/vnfpkgm/v1/subscriptions";
const PACKAGES: &str = "/vnfpkgm/v1/vnf_packages";

fn request(app: &TestApp, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.request(method, path).header("Accept", "application/json")
}

async fn subscribe(app: &TestApp, body: Value) -> Reply {
    send(request(app, Method::POST, SUBSCRIPTIONS).json(&body)).await
}

/// Subscribes; asserts 201 with `Location` and returns the PkgmSubscription.
async fn subscribed(app: &TestApp, body: Value) -> Value {
    let reply = subscribe(app, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let subscription = reply.json();
    let id = subscription["id"].as_str().unwrap();
    let location = format!("{}{SUBSCRIPTIONS}/{id}", app.address);
    assert_eq!(reply.header("location"), Some(location.as_str()));
    assert_eq!(subscription["_links"]["self"]["href"], location.as_str());
    subscription
}

async fn set_operational_state(app: &TestApp, id: &str, state: &str) {
    let reply = send(
        app.request(Method::PATCH, &format!("{PACKAGES}/{id}"))
            .header("Content-Type", "application/merge-patch+json")
            .body(json!({ "operationalState": state }).to_string()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

async fn delete_package(app: &TestApp, id: &str) {
    let reply = send(app.request(Method::DELETE, &format!("{PACKAGES}/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
}

/// `TYPE[/CHANGE_TYPE[/STATE]]`, for comparing sequences.
fn summary(received: &Received) -> String {
    let body = &received.body;
    let mut text = body["notificationType"].as_str().unwrap_or("?").to_owned();
    for key in ["changeType", "operationalState"] {
        if let Some(value) = body[key].as_str() {
            text.push('/');
            text.push_str(value);
        }
    }
    text
}

fn summaries(received: &[Received]) -> Vec<String> {
    received.iter().map(summary).collect()
}

fn rows(app: &TestApp, subscription_id: &str) -> Vec<NotificationRow> {
    let database = app.database();
    let mut conn = database.conn().unwrap();
    notifications::for_subscription(&mut conn, subscription_id).unwrap()
}

const LIFE: [&str; 3] = [
    "VnfPackageOnboardingNotification",
    "VnfPackageChangeNotification/OP_STATE_CHANGE/DISABLED",
    "VnfPackageChangeNotification/PKG_DELETE",
];

/// Create (201 after the callback test), duplicate (303, not tested again), show, the
/// request checks, credentials never shown, delete (204, then 404).
#[tokio::test]
async fn create_duplicate_show_delete() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(|settings| settings.notifications.callback_test_timeout_secs = 1).await;
    let filter = json!({"notificationTypes": ["VnfPackageChangeNotification", "VnfPackageOnboardingNotification"],
                        "vnfdId": ["b", "a"], "operationalState": ["ENABLED"]});
    let created = subscribed(&app, json!({"callbackUri": receiver.url("/cb"), "filter": filter})).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["callbackUri"], receiver.url("/cb"));
    assert_eq!(created["filter"], filter);
    let keys: HashSet<&str> = created.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, HashSet::from(["id", "filter", "callbackUri", "_links"]), "{created}");
    let tests = receiver.gets("/cb");
    assert_eq!(tests.len(), 1, "the callback is tested once");
    assert_eq!(tests[0].header("version"), Some("1.3.0"));

    // The same callback and filter (arrays in another order): 303 to the first, untested.
    let same = json!({"callbackUri": receiver.url("/cb"),
                      "filter": {"vnfdId": ["a", "b"], "operationalState": ["ENABLED"],
                                 "notificationTypes": ["VnfPackageOnboardingNotification", "VnfPackageChangeNotification"]}});
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let reply = send(no_redirects.post(app.url(SUBSCRIPTIONS)).header("Accept", "application/json").json(&same)).await;
    assert_eq!(reply.status, 303, "{}", reply.text);
    assert_eq!(reply.header("location"), Some(format!("{}{SUBSCRIPTIONS}/{id}", app.address).as_str()));
    assert!(reply.text.is_empty());
    assert_eq!(receiver.gets("/cb").len(), 1, "a duplicate is not tested again");
    let narrower = subscribed(&app, json!({"callbackUri": receiver.url("/cb"), "filter": {"vnfdId": ["a"]}})).await;
    assert_ne!(narrower["id"], created["id"]);

    let show = send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}/{id}"))).await;
    assert_eq!(show.status, 200, "{}", show.text);
    assert_eq!(show.json(), created);
    assert!(show.header("etag").is_some());

    // Request checks: schema (400), callback test (422), egress policy (422).
    subscribe(&app, json!({"filter": {}})).await.problem(400);
    let bad_type = subscribe(
        &app,
        json!({"callbackUri": receiver.url("/x"),
                                          "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}}),
    )
    .await;
    bad_type.problem(400);
    let bad_state =
        subscribe(&app, json!({"callbackUri": receiver.url("/x"), "filter": {"usageState": ["BUSY"]}})).await;
    bad_state.problem(400);
    receiver.state().get_status = 500;
    let detail = subscribe(&app, json!({"callbackUri": receiver.url("/refuses")})).await.problem(422);
    assert_eq!(
        detail,
        "Can't get from notification callback Uri. It answered 500 to a GET; 204 No Content is required."
    );
    receiver.state().get_status = 204;
    let detail = subscribe(&app, json!({"callbackUri": "http://169.254.169.254/cb"})).await.problem(422);
    assert!(detail.contains("egress.deny_networks"), "{detail}");
    let detail = subscribe(&app, json!({"callbackUri": receiver.url("/x"), "authentication": {"authType": ["BASIC"]}}))
        .await
        .problem(400);
    assert_eq!(detail, "paramsBasic must be specified.");

    // BASIC credentials reach the callback test and are never shown.
    let reply = subscribe(
        &app,
        json!({"callbackUri": receiver.url("/basic"),
               "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "oss", "password": "pkg-s3cret"}}}),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(receiver.gets("/basic")[0].header("authorization"), Some("Basic b3NzOnBrZy1zM2NyZXQ="));
    let basic_id = reply.json()["id"].as_str().unwrap().to_owned();
    let shown = send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}/{basic_id}"))).await;
    let list = send(request(&app, Method::GET, SUBSCRIPTIONS)).await;
    for text in [&reply.text, &shown.text, &list.text] {
        assert!(!text.contains("pkg-s3cret") && !text.contains("authentication"), "{text}");
    }
    assert_eq!(list.json().as_array().unwrap().len(), 3, "{}", list.text);

    let reply = send(app.request(Method::DELETE, &format!("{SUBSCRIPTIONS}/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    assert!(reply.text.is_empty());
    let detail = send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}/{id}"))).await.problem(404);
    assert_eq!(detail, format!("PkgmSubscription {id} not found."));
    send(app.request(Method::DELETE, &format!("{SUBSCRIPTIONS}/{id}"))).await.problem(404);
    let allowed = send(app.request(Method::PUT, &format!("{SUBSCRIPTIONS}/{basic_id}")).json(&json!({}))).await;
    allowed.problem(405);
    assert_eq!(allowed.header("allow"), Some("GET, DELETE"));
}

#[tokio::test]
async fn list_with_filter_and_paging() {
    list_filter_paging(Db::Sqlite).await;
}

#[tokio::test]
async fn list_with_filter_and_paging_on_postgres() {
    list_filter_paging(Db::Postgres).await;
}

/// Paging through `Link` (every subscription once, in id order), filters on a column
/// (callbackUri) and inside the document (filter/...), a bad marker is 400.
async fn list_filter_paging(db: Db) {
    let receiver = Receiver::start().await;
    let Some(app) = TestApp::spawn_on(db, |settings| settings.paging.subscription_page_size = 2).await else {
        return;
    };
    let mut ids = Vec::new();
    for n in 0..5 {
        let kind = if n % 2 == 0 { "VnfPackageOnboardingNotification" } else { "VnfPackageChangeNotification" };
        let body = json!({"callbackUri": receiver.url(&format!("/cb/{n}")),
                          "filter": {"notificationTypes": [kind], "vnfdId": [format!("vnfd-{n}")]}});
        ids.push(subscribed(&app, body).await["id"].as_str().unwrap().to_owned());
    }
    ids.sort();

    let mut seen = Vec::new();
    let mut next = Some(app.url(SUBSCRIPTIONS));
    while let Some(url) = next {
        let page = send(app.client.get(&url).header("Accept", "application/json")).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let items = page.json();
        assert!(items.as_array().unwrap().len() <= 2, "{items}");
        seen.extend(items.as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_owned()));
        next = page.header("link").map(|link| {
            assert!(link.ends_with(r#"rel="next""#), "{link}");
            link.trim_start_matches('<').split('>').next().unwrap().to_owned()
        });
    }
    assert_eq!(seen, ids, "every subscription once, in id order");

    let ids_of = |reply: Reply| -> Vec<String> {
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json().as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_owned()).collect()
    };
    let wanted = receiver.url("/cb/3");
    let by_uri =
        ids_of(send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}?filter=(eq,callbackUri,'{wanted}')"))).await);
    assert_eq!(by_uri.len(), 1);
    let shown = send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}/{}", by_uri[0]))).await.json();
    assert_eq!(shown["callbackUri"], wanted.as_str());
    let changes = ids_of(
        send(request(
            &app,
            Method::GET,
            &format!("{SUBSCRIPTIONS}?filter=(eq,filter/notificationTypes,VnfPackageChangeNotification)&all_records"),
        ))
        .await,
    );
    assert_eq!(changes.len(), 2, "{changes:?}");
    let one =
        ids_of(send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}?filter=(eq,filter/vnfdId,vnfd-4)"))).await);
    assert_eq!(one.len(), 1);
    assert!(
        ids_of(send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}?filter=(eq,filter/vnfdId,none)"))).await)
            .is_empty()
    );
    send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}?nextpage_opaque_marker=bogus"))).await.problem(400);
    send(request(&app, Method::GET, &format!("{SUBSCRIPTIONS}?filter=(eq,nosuch,1)"))).await.problem(400);
}

#[tokio::test]
async fn package_notifications_in_order_with_filters() {
    package_notifications(Db::Sqlite).await;
}

#[tokio::test]
async fn package_notifications_in_order_with_filters_on_postgres() {
    package_notifications(Db::Postgres).await;
}

/// The acceptance scenario: onboarding sends VnfPackageOnboardingNotification, disabling
/// and deleting send VnfPackageChangeNotification (OP_STATE_CHANGE, PKG_DELETE), in order,
/// to a real receiver; filters are honoured; usage state changes are not notified (SOL005
/// v2.6.1 has no change type for them).
async fn package_notifications(db: Db) {
    let receiver = Receiver::start().await;
    let Some(app) = TestApp::spawn_on(db, quick).await else { return };
    let all = subscribed(&app, json!({"callbackUri": receiver.url("/all")})).await;
    let changes = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/changes"),
               "filter": {"notificationTypes": ["VnfPackageChangeNotification"]}}),
    )
    .await;
    let enabled =
        subscribed(&app, json!({"callbackUri": receiver.url("/enabled"), "filter": {"operationalState": ["ENABLED"]}}))
            .await;
    subscribed(
        &app,
        json!({"callbackUri": receiver.url("/other"),
               "filter": {"vnfdId": [uuid::Uuid::new_v4().to_string()]}}),
    )
    .await;
    subscribed(&app, json!({"callbackUri": receiver.url("/in-use"), "filter": {"usageState": ["IN_USE"]}})).await;

    let (package_id, vnfd_id) = app.onboard_sample().await;
    let product = send(request(&app, Method::GET, &format!("{PACKAGES}/{package_id}"))).await.json();
    let by_product = subscribed(
        &app,
        json!({"callbackUri": receiver.url("/product"),
               "filter": {"vnfProductsFromProviders": [{"vnfProvider": product["vnfProvider"],
                   "vnfProducts": [{"vnfProductName": product["vnfProductName"],
                       "versions": [{"vnfSoftwareVersion": product["vnfSoftwareVersion"]}]}]}],
                   "vnfPkgId": [package_id]}}),
    )
    .await;
    // An instance makes the package IN_USE and its deletion NOT_IN_USE again: no notification.
    let instance = create_instance(&app, &vnfd_id, "user").await;
    assert_eq!(package_usage(&app, &vnfd_id), "IN_USE");
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{instance}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    assert_eq!(package_usage(&app, &vnfd_id), "NOT_IN_USE");
    set_operational_state(&app, &package_id, "DISABLED").await;
    delete_package(&app, &package_id).await;

    let got = receiver.wait_delivered("/all", LIFE.len(), Duration::from_secs(20)).await;
    assert_eq!(summaries(&got), LIFE);
    let all_id = all["id"].as_str().unwrap();
    let registry = solgate_schemas::Registry::builtin().unwrap();
    let dictionary = &registry.newest(solgate_schemas::Api::Vnfpkgm, 1).unwrap().dictionary;
    let mut ids = HashSet::new();
    for received in &got {
        let body = &received.body;
        let kind = body["notificationType"].as_str().unwrap();
        dictionary.validate(kind, body).unwrap_or_else(|failures| panic!("{kind} is not SOL005 v2.6.1: {failures}"));
        assert_eq!(received.header("version"), Some("1.3.0"), "{body}");
        assert_eq!(received.header("content-type"), Some("application/json"));
        assert!(ids.insert(body["id"].as_str().unwrap().to_owned()), "ids are unique");
        assert_eq!(body["subscriptionId"], all_id);
        assert_eq!(body["vnfPkgId"], package_id.as_str());
        assert_eq!(body["vnfdId"], vnfd_id.as_str());
        let stamp = body["timeStamp"].as_str().unwrap();
        assert!(stamp.len() == 20 && stamp.ends_with('Z'), "timeStamp {stamp}");
        assert_eq!(body["_links"]["vnfPackage"]["href"], format!("{}{PACKAGES}/{package_id}", app.address));
        assert_eq!(body["_links"]["subscription"]["href"], format!("{}{SUBSCRIPTIONS}/{all_id}", app.address));
    }
    println!("captured VnfPackageOnboardingNotification:\n{}", serde_json::to_string_pretty(&got[0].body).unwrap());
    println!("captured VnfPackageChangeNotification:\n{}", serde_json::to_string_pretty(&got[1].body).unwrap());

    let changed = receiver.wait_delivered("/changes", 2, Duration::from_secs(10)).await;
    assert_eq!(summaries(&changed), LIFE[1..]);
    assert!(changed.iter().all(|r| r.body["subscriptionId"] == changes["id"]));
    let on_enabled = receiver.wait_delivered("/enabled", 1, Duration::from_secs(10)).await;
    assert_eq!(on_enabled[0].body["subscriptionId"], enabled["id"]);
    let by_product_got = receiver.wait_delivered("/product", 2, Duration::from_secs(10)).await;
    assert_eq!(summaries(&by_product_got), LIFE[1..], "subscribed after onboarding");
    assert_eq!(by_product_got[0].body["subscriptionId"], by_product["id"]);
    // Give stray deliveries time to arrive before asserting there are none.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(summaries(&receiver.posts("/enabled")), LIFE[..1], "the package was ENABLED only when onboarded");
    assert!(receiver.posts("/other").is_empty(), "another vnfdId hears nothing");
    assert!(receiver.posts("/in-use").is_empty(), "no event happened while the package was IN_USE");
    assert_eq!(receiver.posts("/all").len(), LIFE.len(), "usage state changes are not notified");
}

/// The receiver is down while a package is onboarded, disabled and deleted; nothing is
/// given up, and when it comes back every notification arrives in order.
#[tokio::test]
async fn receiver_outage_loses_nothing() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(|settings| {
        quick(settings);
        settings.notifications.max_attempts = 1000;
        settings.notifications.request_timeout_secs = 2;
    })
    .await;
    let subscription = subscribed(&app, json!({"callbackUri": receiver.url("/oss")})).await;
    let subscription_id = subscription["id"].as_str().unwrap().to_owned();

    receiver.stop().await;
    let (package_id, _) = app.onboard_sample().await;
    set_operational_state(&app, &package_id, "DISABLED").await;
    delete_package(&app, &package_id).await;
    // While down: queued, the head retried, the others waiting, nothing given up.
    let deadline = Instant::now() + Duration::from_secs(20);
    let queued = loop {
        let queued = rows(&app, &subscription_id);
        if queued.first().is_some_and(|head| head.attempts >= 3) {
            break queued;
        }
        assert!(Instant::now() < deadline, "the head is not retried: {queued:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(queued.len(), LIFE.len(), "{queued:?}");
    assert!(queued.iter().all(|row| row.state == notifications::PENDING), "{queued:?}");
    assert!(queued[1..].iter().all(|row| row.attempts == 0), "only the head is attempted");
    assert!(queued.iter().all(|row| row.api == "vnfpkgm"), "{queued:?}");
    assert!(receiver.posts("/oss").is_empty());

    receiver.restart();
    let got = receiver.wait_delivered("/oss", LIFE.len(), Duration::from_secs(20)).await;
    let expected_ids: Vec<String> = queued.iter().map(|row| row.notification_id.clone()).collect();
    let mut seen = HashSet::new();
    let firsts: Vec<&Received> =
        got.iter().filter(|r| seen.insert(r.body["id"].as_str().unwrap().to_owned())).collect();
    let first_ids: Vec<String> = firsts.iter().map(|r| r.body["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(first_ids, expected_ids, "every notification, in order");
    assert_eq!(firsts.iter().map(|r| summary(r)).collect::<Vec<_>>(), LIFE);
    // The receiver records a POST before the notifier has marked its row: wait for the marks.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let rows = rows(&app, &subscription_id);
        if rows.iter().all(|row| row.state == notifications::DELIVERED) {
            break;
        }
        assert!(Instant::now() < deadline, "delivered notifications are not marked so: {rows:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// With authentication: a project's package subscription hears its own project's packages
/// only, and another project cannot see, list or delete it; an administrator's hears all.
#[tokio::test]
async fn package_subscriptions_stay_in_their_project() {
    let app = TestApp::spawn_with(|settings| {
        quick(settings);
        settings.auth.mode = AuthMode::Oauth2;
        settings.auth.clients = vec![
            client("p1-member", Role::Member, "p1"),
            client("p2-member", Role::Member, "p2"),
            client("operator", Role::Admin, "ops"),
        ];
    })
    .await;
    let anonymous = send(request(&app, Method::GET, SUBSCRIPTIONS)).await;
    anonymous.problem(401);
    let (p1, p2, admin) =
        (as_client(&app, "p1-member").await, as_client(&app, "p2-member").await, as_client(&app, "operator").await);
    let receiver = Receiver::start().await;
    // The same request in two projects: two subscriptions, not a 303 to the other's.
    let sub1 = subscribed(&p1, json!({"callbackUri": receiver.url("/shared")})).await;
    let sub2 = subscribed(&p2, json!({"callbackUri": receiver.url("/shared")})).await;
    assert_ne!(sub1["id"], sub2["id"]);
    let sub_admin = subscribed(&admin, json!({"callbackUri": receiver.url("/admin")})).await;
    let list_ids = |reply: Reply| -> Vec<String> {
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json().as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_owned()).collect()
    };
    let sub1_id = sub1["id"].as_str().unwrap().to_owned();
    assert_eq!(list_ids(send(request(&p1, Method::GET, SUBSCRIPTIONS)).await), vec![sub1_id.clone()]);
    let probe = format!("{SUBSCRIPTIONS}?filter=(eq,id,{sub1_id})");
    assert!(list_ids(send(request(&p2, Method::GET, &probe)).await).is_empty());
    assert_eq!(list_ids(send(request(&admin, Method::GET, SUBSCRIPTIONS)).await).len(), 3);
    let other = format!("{SUBSCRIPTIONS}/{sub1_id}");
    send(request(&p2, Method::GET, &other)).await.problem(404);
    send(request(&p2, Method::DELETE, &other)).await.problem(404);
    assert_eq!(send(request(&p1, Method::GET, &other)).await.status, 200);

    let (pkg1, _) = p1.onboard_sample().await;
    let (pkg2, _) = p2.onboard_sample().await;
    let heard = receiver.wait_delivered("/shared", 2, Duration::from_secs(20)).await;
    let heard_admin = receiver.wait_delivered("/admin", 2, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.posts("/shared").len(), 2, "each project's subscription hears its own package only");
    for received in &heard {
        let expected = if received.body["vnfPkgId"] == pkg1.as_str() { &sub1["id"] } else { &sub2["id"] };
        assert_eq!(&received.body["subscriptionId"], expected, "{}", received.body);
    }
    let packages: HashSet<&str> = heard.iter().map(|r| r.body["vnfPkgId"].as_str().unwrap()).collect();
    assert_eq!(packages, HashSet::from([pkg1.as_str(), pkg2.as_str()]));
    let admin_packages: HashSet<&str> = heard_admin.iter().map(|r| r.body["vnfPkgId"].as_str().unwrap()).collect();
    assert_eq!(admin_packages, packages, "the administrator's subscription hears every project");
    assert!(heard_admin.iter().all(|r| r.body["subscriptionId"] == sub_admin["id"]));
}
