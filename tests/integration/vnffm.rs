//! VNF Fault Management (`/vnffm/v1`) and Alertmanager's webhooks over real HTTP, on SQLite and
//! PostgreSQL: alarms raised, repeated and cleared by alerts on `/alert`, listed, filtered and
//! acknowledged; FM subscriptions and their notifications (received by the test receiver of
//! `notifications.rs`, every body checked against vnffm 1.3.0); what a bad alert gets (nothing
//! stored); the webhooks' switches and credentials; tenancy; auto-heal and auto-scale through
//! the LCM path with `isAutomaticInvocation`. The same with the real Prometheus and
//! Alertmanager: `monitoring.rs`.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use solgate::Settings;
use solgate_db::repo::notifications;
use solgate_gateway::auth::{AuthMode, Role};
use solgate_schemas::{Api, Registry};

use crate::helpers::{Db, Reply, TestApp, send};
use crate::lcm_support::*;
use crate::notifications::{Received, Receiver, quick};
use crate::tenancy::{as_client, client};

pub(crate) const WEBHOOK_USER: &str = "alertmanager";
pub(crate) const WEBHOOK_PASSWORD: &str = "webhook-s3cret";

/// Every webhook on, with Basic credentials stored hashed (as `solgate hash-secret` prints them).
pub(crate) fn webhooks_on(settings: &mut Settings) {
    quick(settings);
    let plugin = &mut settings.prometheus_plugin;
    plugin.fault_management = true;
    plugin.auto_healing = true;
    plugin.auto_scaling = true;
    plugin.webhook_user_name = WEBHOOK_USER.into();
    plugin.webhook_password = solgate_gateway::auth::secret::hash(WEBHOOK_PASSWORD).unwrap();
}

/// A request of VNF FM API 1.3.0 (python-tackerclient sends `Version: 1.3.0`).
pub(crate) fn fm(app: &TestApp, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.request(method, path).header("Version", "1.3.0").header("Accept", "application/json")
}

/// POSTs Alertmanager's message to a webhook with the webhook credentials.
pub(crate) async fn post_alerts(app: &TestApp, path: &str, alerts: Vec<Value>) -> Reply {
    let message = json!({"receiver": "solgate", "status": "firing", "version": "4", "groupKey": "{}:{}",
        "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {}, "externalURL": "http://alertmanager",
        "truncatedAlerts": 0, "alerts": alerts});
    send(app.request(Method::POST, path).basic_auth(WEBHOOK_USER, Some(WEBHOOK_PASSWORD)).json(&message)).await
}

/// One alert as Alertmanager sends it.
pub(crate) fn alert(status: &str, fingerprint: &str, labels: Value, annotations: Value) -> Value {
    let mut all = json!({"alertname": "VnfFault", "receiver_type": "tacker"});
    if let Value::Object(labels) = labels {
        for (key, value) in labels {
            all[key] = value;
        }
    }
    let ends_at = if status == "resolved" { "2026-11-26T10:25:00.5Z" } else { "0001-01-01T00:00:00Z" };
    let mut alert = json!({"status": status, "startsAt": "2026-11-26T10:21:00.123Z", "endsAt": ends_at,
        "generatorURL": "http://prometheus/graph", "fingerprint": fingerprint});
    alert["labels"] = all;
    alert["annotations"] = annotations;
    alert
}

fn fault(instance_id: &str, extra: Value) -> Value {
    let mut labels = json!({"function_type": "vnffm", "vnf_instance_id": instance_id,
        "perceived_severity": "CRITICAL", "event_type": "PROCESSING_ERROR_ALARM"});
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            labels[key] = value;
        }
    }
    labels
}

/// An INSTANTIATED v2 instance of the sample package with these vnfConfigurableProperties.
pub(crate) async fn instantiated(app: &TestApp, properties: Value) -> Value {
    let vnfd_id = install_sample_package(app);
    let id = create_instance(app, &vnfd_id, "faulty").await;
    let op =
        task(app, &id, "instantiate", json!({"flavourId": "simple", "vnfConfigurableProperties": properties})).await;
    wait_op(app, &op, &["COMPLETED"]).await;
    show_instance(app, &id).await
}

/// The id (`vnfcResourceInfo`, what a SOL003 client sees) and compute resource of a VDU1 VNFC.
pub(crate) fn first_vnfc(instance: &Value) -> (String, Value) {
    let resource = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .find(|resource| resource["vduId"] == "VDU1")
        .unwrap_or_else(|| panic!("no VDU1 VNFC: {instance}"));
    (resource["id"].as_str().unwrap().to_owned(), resource["computeResource"].clone())
}

pub(crate) async fn alarms(app: &TestApp, query: &str) -> Vec<Value> {
    let reply = send(fm(app, Method::GET, &format!("/vnffm/v1/alarms{query}"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json().as_array().unwrap().clone()
}

pub(crate) async fn fm_subscribe(app: &TestApp, body: Value) -> Reply {
    send(fm(app, Method::POST, "/vnffm/v1/subscriptions").json(&body)).await
}

fn registry() -> Registry {
    Registry::builtin().unwrap()
}

/// A notification as delivered: valid for vnffm 1.3.0, which its `Version` names.
pub(crate) fn check_notification(received: &Received) {
    assert_eq!(received.header("version"), Some("1.3.0"));
    let registry = registry();
    let entry = registry.newest(Api::Vnffm, 1).unwrap();
    let kind = received.body["notificationType"].as_str().unwrap();
    if let Err(failures) = entry.dictionary.validate(kind, &received.body) {
        panic!("{kind} violates vnffm 1.3.0: {failures}\n{}", received.body);
    }
}

fn outbox_rows(app: &TestApp) -> i64 {
    let database = app.database();
    let mut conn = database.conn().unwrap();
    [notifications::PENDING, notifications::DELIVERED, notifications::GIVEN_UP]
        .iter()
        .map(|state| notifications::count_by_state(&mut conn, state).unwrap())
        .sum()
}

#[tokio::test]
async fn vnffm_versions_and_the_version_header() {
    let app = TestApp::spawn().await;
    for path in ["/vnffm/api_versions", "/vnffm/v1/api_versions"] {
        let reply = send(app.get(path)).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(reply.json()["apiVersions"], json!([{"version": "1.3.0", "isDeprecated": false}]));
    }
    assert_eq!(send(app.get("/vnffm/v1/api_versions")).await.json()["uriPrefix"], "/vnffm/v1");
    // A Release 3 API: Version is required, and only 1.3.0 is served.
    let missing = send(app.get("/vnffm/v1/alarms")).await.problem(400);
    assert_eq!(missing, "'Version' HTTP header missing.");
    send(app.get("/vnffm/v1/alarms").header("Version", "1.2.0")).await.problem(406);
    send(app.get("/vnffm/v2/alarms").header("Version", "1.3.0")).await.problem(404);
    let reply = send(app.get("/vnffm/v1/openapi.json").header("Version", "1.3.0")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["info"]["version"], "1.3.0");
    // Header names are case-insensitive.
    let reply = send(app.get("/vnffm/v1/alarms").header("vErSiOn", "1.3.0")).await;
    assert_eq!((reply.status, reply.header("version")), (200, Some("1.3.0")));
    assert_eq!(reply.text, "[]");
    send(fm(&app, Method::DELETE, "/vnffm/v1/alarms")).await.problem(405);
}

#[tokio::test]
async fn alerts_raise_and_clear_alarms_on_sqlite() {
    alerts_raise_and_clear_alarms(Db::Sqlite).await;
}

#[tokio::test]
async fn alerts_raise_and_clear_alarms_on_postgres() {
    alerts_raise_and_clear_alarms(Db::Postgres).await;
}

/// An alert raises one alarm (repeats change nothing), subscribers hear of it as their filters
/// say, the alarm is listed, filtered, acknowledged, and cleared when the alert is resolved.
async fn alerts_raise_and_clear_alarms(db: Db) {
    let Some(app) = TestApp::spawn_on(db, webhooks_on).await else { return };
    let receiver = Receiver::start().await;
    for (path, filter) in [
        ("/all", Value::Null),
        ("/warning", json!({"perceivedSeverities": ["WARNING"]})),
        ("/cleared", json!({"notificationTypes": ["AlarmClearedNotification"]})),
        ("/network", json!({"faultyResourceTypes": ["NETWORK"]})),
    ] {
        let mut body = json!({"callbackUri": receiver.url(path)});
        if !filter.is_null() {
            body["filter"] = filter;
        }
        assert_eq!(fm_subscribe(&app, body).await.status, 201);
    }
    let instance = instantiated(&app, json!({})).await;
    let instance_id = instance["id"].as_str().unwrap();
    let (vnfc, compute) = first_vnfc(&instance);

    let firing = alert(
        "firing",
        "5ef77f1f8a3ecb8d",
        fault(instance_id, json!({"vnfc_info_id": vnfc})),
        json!({"probable_cause": "Server is down.", "fault_type": "Server Down", "fault_details": "no answer", "value": 1}),
    );
    let reply = post_alerts(&app, "/alert", vec![firing.clone()]).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    let listed = alarms(&app, "").await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let alarm = &listed[0];
    let alarm_id = alarm["id"].as_str().unwrap().to_owned();
    assert_eq!(alarm["managedObjectId"], instance_id);
    assert_eq!(alarm["vnfcInstanceIds"], json!([vnfc]));
    assert_eq!(alarm["rootCauseFaultyResource"], json!({"faultyResource": compute, "faultyResourceType": "COMPUTE"}));
    assert_eq!(alarm["ackState"], "UNACKNOWLEDGED");
    assert_eq!(
        (&alarm["perceivedSeverity"], &alarm["eventType"]),
        (&json!("CRITICAL"), &json!("PROCESSING_ERROR_ALARM"))
    );
    assert_eq!((&alarm["probableCause"], &alarm["faultType"]), (&json!("Server is down."), &json!("Server Down")));
    assert_eq!(alarm["faultDetails"], json!(["fingerprint: 5ef77f1f8a3ecb8d", "detail: no answer"]));
    assert_eq!(alarm["eventTime"], "2026-11-26T10:21:00.123Z");
    assert_eq!(alarm["isRootCause"], false);
    assert!(alarm.get("alarmClearedTime").is_none() && alarm.get("alarmAcknowledgedTime").is_none());
    assert_eq!(alarm["_links"]["self"]["href"], app.url(&format!("/vnffm/v1/alarms/{alarm_id}")));
    assert_eq!(alarm["_links"]["objectInstance"]["href"], app.url(&format!("/vnflcm/v2/vnf_instances/{instance_id}")));

    // Alertmanager repeats a firing alert: no second alarm, no second notification.
    assert_eq!(post_alerts(&app, "/alert", vec![firing.clone()]).await.status, 204);
    assert_eq!(alarms(&app, "").await.len(), 1);
    let heard = receiver.wait_delivered("/all", 1, Duration::from_secs(20)).await;
    check_notification(&heard[0]);
    assert_eq!(heard[0].body["notificationType"], "AlarmNotification");
    assert_eq!(heard[0].body["alarm"], *alarm);
    assert_eq!(
        heard[0].body["_links"]["subscription"]["href"],
        app.url(&format!("/vnffm/v1/subscriptions/{}", heard[0].body["subscriptionId"].as_str().unwrap()))
    );

    // SOL013 filters.
    assert_eq!(alarms(&app, "?filter=(eq,perceivedSeverity,WARNING)").await.len(), 0);
    assert_eq!(alarms(&app, &format!("?filter=(eq,managedObjectId,{instance_id})")).await.len(), 1);
    assert_eq!(alarms(&app, "?filter=(eq,rootCauseFaultyResource/faultyResourceType,COMPUTE)").await.len(), 1);
    assert_eq!(alarms(&app, "?filter=(cont,probableCause,down)").await.len(), 1);
    send(fm(&app, Method::GET, "/vnffm/v1/alarms?filter=(eq,noSuchAttribute,1)")).await.problem(400);

    // Acknowledgement (SOL003 clause 7.4.3.3.4).
    let path = format!("/vnffm/v1/alarms/{alarm_id}");
    let shown = send(fm(&app, Method::GET, &path)).await;
    assert_eq!(shown.json(), *alarm);
    let tag = shown.header("etag").unwrap().to_owned();
    let ack = |state: &str| json!({"ackState": state});
    let patch = |tag: Option<&str>, body: Value| {
        let mut request = fm(&app, Method::PATCH, &path).header("Content-Type", "application/merge-patch+json");
        if let Some(tag) = tag {
            request = request.header("If-Match", tag);
        }
        send(request.body(body.to_string()))
    };
    let reply = patch(Some(&tag), ack("ACKNOWLEDGED")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json(), ack("ACKNOWLEDGED"));
    let new_tag = reply.header("etag").unwrap().to_owned();
    assert_ne!(new_tag, tag);
    let detail = patch(None, ack("ACKNOWLEDGED")).await.problem(409);
    assert_eq!(detail, "The ackState of alarm cannot specify the same value.");
    patch(Some(&tag), ack("UNACKNOWLEDGED")).await.problem(412);
    let shown = send(fm(&app, Method::GET, &path)).await;
    assert_eq!(shown.header("etag"), Some(new_tag.as_str()));
    assert!(shown.json()["alarmAcknowledgedTime"].is_string());
    // python-tackerclient sends application/json.
    let reply = send(fm(&app, Method::PATCH, &path).json(&ack("UNACKNOWLEDGED"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(send(fm(&app, Method::GET, &path)).await.json().get("alarmAcknowledgedTime").is_none());
    patch(None, ack("SILENCED")).await.problem(400);
    patch(None, json!({})).await.problem(400);
    send(fm(&app, Method::PATCH, "/vnffm/v1/alarms/no-such-alarm").json(&ack("ACKNOWLEDGED"))).await.problem(404);

    // Resolved: the alarm is cleared, and subscribers hear of it.
    let mut resolved = firing.clone();
    resolved["status"] = json!("resolved");
    resolved["endsAt"] = json!("2026-11-26T10:25:00.5Z");
    assert_eq!(post_alerts(&app, "/alert", vec![resolved.clone()]).await.status, 204);
    let cleared = send(fm(&app, Method::GET, &path)).await.json();
    assert_eq!(cleared["alarmClearedTime"], "2026-11-26T10:25:00.500Z");
    assert!(cleared["alarmChangedTime"].is_string());
    // Resolved again (Alertmanager repeats): nothing more to clear.
    assert_eq!(post_alerts(&app, "/alert", vec![resolved]).await.status, 204);
    let heard = receiver.wait_delivered("/all", 2, Duration::from_secs(20)).await;
    let cleared_notice = &heard[1].body;
    check_notification(&heard[1]);
    assert_eq!(cleared_notice["notificationType"], "AlarmClearedNotification");
    assert_eq!(
        (&cleared_notice["alarmId"], &cleared_notice["alarmClearedTime"]),
        (&json!(alarm_id), &cleared["alarmClearedTime"])
    );
    assert_eq!(cleared_notice["_links"]["alarm"]["href"], app.url(&path));
    let only_cleared = receiver.wait_delivered("/cleared", 1, Duration::from_secs(20)).await;
    assert_eq!(only_cleared[0].body["notificationType"], "AlarmClearedNotification");

    // The same alert firing again is a new fault: a new alarm.
    assert_eq!(post_alerts(&app, "/alert", vec![firing]).await.status, 204);
    assert_eq!(alarms(&app, "").await.len(), 2);
    assert_eq!(alarms(&app, "?filter=(eq,ackState,UNACKNOWLEDGED)").await.len(), 2);
    receiver.wait_delivered("/all", 3, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.posts("/all").len(), 3, "one notification per raise and per clear");
    assert!(receiver.posts("/warning").is_empty(), "a CRITICAL alarm is not a WARNING one");
    assert_eq!(receiver.posts("/cleared").len(), 1);
    assert!(receiver.posts("/network").is_empty(), "the faulty resource is COMPUTE");
}

#[tokio::test]
async fn the_same_alert_posted_at_once_raises_one_alarm_on_sqlite() {
    the_same_alert_posted_at_once_raises_one_alarm(Db::Sqlite).await;
}

#[tokio::test]
async fn the_same_alert_posted_at_once_raises_one_alarm_on_postgres() {
    the_same_alert_posted_at_once_raises_one_alarm(Db::Postgres).await;
}

/// Two Alertmanagers of a cluster (or a retry) post the same alert at the same moment: every
/// request succeeds, one alarm is raised, one notification sent.
async fn the_same_alert_posted_at_once_raises_one_alarm(db: Db) {
    let Some(app) = TestApp::spawn_on(db, webhooks_on).await else { return };
    let receiver = Receiver::start().await;
    assert_eq!(fm_subscribe(&app, json!({"callbackUri": receiver.url("/all")})).await.status, 201);
    let instance = instantiated(&app, json!({})).await;
    let firing = alert("firing", "twice", fault(instance["id"].as_str().unwrap(), json!({})), json!({}));
    let posts: Vec<_> = (0..6).map(|_| post_alerts(&app, "/alert", vec![firing.clone()])).collect();
    for reply in futures::future::join_all(posts).await {
        assert_eq!(reply.status, 204, "{}", reply.text);
    }
    assert_eq!(alarms(&app, "").await.len(), 1);
    receiver.wait_delivered("/all", 1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.posts("/all").len(), 1);
}

#[tokio::test]
async fn bad_alerts_store_nothing_on_sqlite() {
    bad_alerts_store_nothing(Db::Sqlite).await;
}

#[tokio::test]
async fn bad_alerts_store_nothing_on_postgres() {
    bad_alerts_store_nothing(Db::Postgres).await;
}

/// Malformed messages are 400, alerts naming what does not exist 422 — each naming the
/// alert — and neither stores an alarm or queues a notification, even beside a good alert.
/// Hostile text is stored and shown as given, alike on both backends.
async fn bad_alerts_store_nothing(db: Db) {
    let Some(app) = TestApp::spawn_on(db, webhooks_on).await else { return };
    let receiver = Receiver::start().await;
    assert_eq!(fm_subscribe(&app, json!({"callbackUri": receiver.url("/all")})).await.status, 201);
    let instance = instantiated(&app, json!({})).await;
    let instance_id = instance["id"].as_str().unwrap();
    let good = alert("firing", "good", fault(instance_id, json!({})), json!({}));

    let unknown = alert("firing", "f-unknown", fault("00000000-0000-0000-0000-000000000000", json!({})), json!({}));
    let detail = post_alerts(&app, "/alert", vec![good.clone(), unknown]).await.problem(422);
    assert!(detail.contains("alert 1 (fingerprint f-unknown) names VNF instance 00000000-0000-0000-0000-000000000000, which does not exist"), "{detail}");
    let no_vnfc = alert("firing", "f-vnfc", fault(instance_id, json!({"vnfc_info_id": "VNFC-nope"})), json!({}));
    let detail = post_alerts(&app, "/alert", vec![no_vnfc]).await.problem(422);
    assert!(detail.contains("names VNFC VNFC-nope"), "{detail}");
    let no_pod = alert("firing", "f-pod", fault(instance_id, json!({"pod": "nginx-[0-9a-f]+"})), json!({}));
    assert!(post_alerts(&app, "/alert", vec![no_pod]).await.problem(422).contains("matches no VNFC"));

    for (what, alerts) in [
        (
            "not a regular expression",
            vec![alert("firing", "f", fault(instance_id, json!({"pod": "(unclosed"})), json!({}))],
        ),
        ("event_type", vec![alert("firing", "f", fault(instance_id, json!({"event_type": "SOMETHING"})), json!({}))]),
        (
            "perceived_severity",
            vec![alert("firing", "f", fault(instance_id, json!({"perceived_severity": "BAD"})), json!({}))],
        ),
        ("receiver_type", vec![alert("firing", "f", fault(instance_id, json!({"receiver_type": "other"})), json!({}))]),
        (
            "vnf_instance_id",
            vec![alert(
                "firing",
                "f",
                json!({"function_type": "vnffm", "perceived_severity": "CRITICAL", "event_type": "QOS_ALARM"}),
                json!({}),
            )],
        ),
        (
            "startsAt",
            vec![{
                let mut a = good.clone();
                a["startsAt"] = json!("yesterday");
                a
            }],
        ),
        (
            "fingerprint",
            vec![{
                let mut a = good.clone();
                a.as_object_mut().unwrap().remove("fingerprint");
                a
            }],
        ),
    ] {
        let mut all = vec![good.clone()];
        all.extend(alerts);
        let detail = post_alerts(&app, "/alert", all).await.problem(400);
        assert!(detail.contains(what), "{what}: {detail}");
    }
    let raw = |body: &str| {
        send(
            app.request(Method::POST, "/alert")
                .basic_auth(WEBHOOK_USER, Some(WEBHOOK_PASSWORD))
                .header("Content-Type", "application/json")
                .body(body.to_owned()),
        )
    };
    assert!(raw("{\"alerts\": [").await.problem(400).starts_with("Malformed request body"));
    raw("[]").await.problem(400);
    raw("{\"alerts\": {}}").await.problem(400);
    raw("").await.problem(400);
    let nul = good.to_string().replace("\"good\"", "\"go\\u0000od\"");
    raw(&format!("{{\"alerts\": [{nul}]}}")).await.problem(400);
    // Credentials first: without them nothing is read.
    let anonymous = send(app.request(Method::POST, "/alert").json(&json!({"alerts": [good.clone()]}))).await;
    anonymous.problem(401);
    assert_eq!(anonymous.header("www-authenticate"), Some("Basic realm=\"solgate\""));
    let wrong = send(
        app.request(Method::POST, "/alert")
            .basic_auth(WEBHOOK_USER, Some("guess"))
            .json(&json!({"alerts": [good.clone()]})),
    )
    .await;
    wrong.problem(401);
    assert!(alarms(&app, "").await.is_empty(), "nothing stored");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(outbox_rows(&app), 0, "no notification queued");

    // Hostile text, stored and shown as given on both backends.
    let hostile = format!("'; DROP TABLE alarms_v1; -- \u{1F525} \"quoted\" \\ \t\n{}", "x".repeat(64 * 1024));
    let stored = alert(
        "firing",
        "hostile \u{e9}",
        fault(instance_id, json!({})),
        json!({"probable_cause": hostile, "fault_type": "\u{202e}rtl"}),
    );
    assert_eq!(post_alerts(&app, "/alert", vec![stored]).await.status, 204);
    let listed = alarms(&app, "").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["probableCause"], hostile.as_str());
    assert_eq!(listed[0]["faultType"], "\u{202e}rtl");
    assert_eq!(listed[0]["faultDetails"], json!(["fingerprint: hostile \u{e9}"]));
    let notice = receiver.wait_delivered("/all", 1, Duration::from_secs(20)).await;
    assert_eq!(notice[0].body["alarm"]["probableCause"], hostile.as_str());
    // Alerts of other functions are not this webhook's.
    let pm = alert("firing", "pm", json!({"function_type": "vnfpm", "job_id": "j"}), json!({"value": 3}));
    assert_eq!(post_alerts(&app, "/alert", vec![pm]).await.status, 204);
    assert_eq!(alarms(&app, "").await.len(), 1);
}

#[tokio::test]
async fn the_webhooks_are_off_by_default() {
    let app = TestApp::spawn().await;
    for (path, name) in [
        ("/alert", "Fault management"),
        ("/alert/auto_healing", "Auto healing"),
        ("/alert/auto_scaling", "Auto scaling"),
    ] {
        let detail = post_alerts(&app, path, vec![]).await.problem(404);
        assert_eq!(detail, format!("{name} API is not enabled."));
        send(app.request(Method::GET, path)).await.problem(405);
    }
    // Switching one on leaves the others off; without credentials the server does not start.
    let app = TestApp::spawn_with(|settings| {
        webhooks_on(settings);
        settings.prometheus_plugin.auto_scaling = false;
    })
    .await;
    post_alerts(&app, "/alert/auto_scaling", vec![]).await.problem(404);
    assert_eq!(post_alerts(&app, "/alert", vec![]).await.status, 204);
    let mut open = Settings::default();
    open.prometheus_plugin.fault_management = true;
    assert!(open.validate().unwrap_err().to_string().contains("prometheus_plugin"));
}

#[tokio::test]
async fn a_bearer_token_works_as_well() {
    let app = TestApp::spawn_with(|settings| {
        settings.prometheus_plugin.fault_management = true;
        settings.prometheus_plugin.webhook_token = solgate_gateway::auth::secret::hash("am-token").unwrap();
    })
    .await;
    let message = json!({"alerts": []});
    let reply = send(app.request(Method::POST, "/alert").bearer_auth("am-token").json(&message)).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    let reply = send(app.request(Method::POST, "/alert").bearer_auth("other").json(&message)).await;
    reply.problem(401);
    assert_eq!(reply.header("www-authenticate"), Some("Bearer realm=\"solgate\""));
}

#[tokio::test]
async fn fm_subscriptions_create_duplicate_show_delete() {
    let app = TestApp::spawn_with(webhooks_on).await;
    let receiver = Receiver::start().await;
    let filter = json!({"perceivedSeverities": ["WARNING", "CRITICAL"], "eventTypes": ["EQUIPMENT_ALARM"]});
    let body = json!({"callbackUri": receiver.url("/fm"), "filter": filter,
        "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "callback-s3cret"}}});
    let reply = fm_subscribe(&app, body.clone()).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let created = reply.json();
    let id = created["id"].as_str().unwrap().to_owned();
    let location = app.url(&format!("/vnffm/v1/subscriptions/{id}"));
    assert_eq!(reply.header("location"), Some(location.as_str()));
    assert_eq!(created["filter"], filter);
    assert_eq!(created["_links"]["self"]["href"], location);
    assert!(created.get("authentication").is_none() && !reply.text.contains("callback-s3cret"));
    // The callback was tested with the credentials and the version notifications will carry.
    let test = &receiver.gets("/fm")[0];
    assert_eq!(test.header("version"), Some("1.3.0"));
    assert!(test.header("authorization").is_some_and(|value| value.starts_with("Basic ")));

    // The same callback and filter (in another order): 303 to the existing one.
    let same = json!({"callbackUri": receiver.url("/fm"),
        "filter": {"eventTypes": ["EQUIPMENT_ALARM"], "perceivedSeverities": ["CRITICAL", "WARNING"]}});
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let reply = send(
        no_redirects
            .post(app.url("/vnffm/v1/subscriptions"))
            .header("Version", "1.3.0")
            .header("Accept", "application/json")
            .json(&same),
    )
    .await;
    assert_eq!((reply.status, reply.header("location")), (303, Some(location.as_str())));
    assert!(reply.text.is_empty());
    assert_eq!(receiver.gets("/fm").len(), 1, "a duplicate is not tested again");
    let listed = send(fm(&app, Method::GET, "/vnffm/v1/subscriptions")).await;
    assert_eq!(listed.json(), json!([created]));
    let filtered = send(fm(&app, Method::GET, "/vnffm/v1/subscriptions?filter=(eq,filter/eventTypes,QOS_ALARM)")).await;
    assert_eq!(filtered.json(), json!([]));
    let shown = send(fm(&app, Method::GET, &format!("/vnffm/v1/subscriptions/{id}"))).await;
    assert_eq!(shown.json(), created);
    assert!(shown.header("etag").is_some());

    // Refusals: a failing callback test, an address the SSRF guard denies, a bad filter.
    receiver.state().get_status = 500;
    let detail = fm_subscribe(&app, json!({"callbackUri": receiver.url("/other")})).await.problem(422);
    assert!(detail.starts_with("Can't get from notification callback Uri."), "{detail}");
    receiver.state().get_status = 204;
    let detail = fm_subscribe(&app, json!({"callbackUri": "http://169.254.169.254/latest"})).await.problem(422);
    assert!(detail.contains("callbackUri"), "{detail}");
    fm_subscribe(&app, json!({"callbackUri": receiver.url("/x"), "filter": {"perceivedSeverities": ["LOUD"]}}))
        .await
        .problem(400);
    fm_subscribe(&app, json!({"filter": {}})).await.problem(400);
    let detail =
        fm_subscribe(&app, json!({"callbackUri": receiver.url("/x"), "authentication": {"authType": ["BASIC"]}}))
            .await
            .problem(400);
    assert_eq!(detail, "paramsBasic must be specified.");

    // Notifications carry the subscription's credentials.
    let instance = instantiated(&app, json!({})).await;
    let warning = alert(
        "firing",
        "w1",
        fault(
            instance["id"].as_str().unwrap(),
            json!({"perceived_severity": "WARNING", "event_type": "EQUIPMENT_ALARM"}),
        ),
        json!({}),
    );
    assert_eq!(post_alerts(&app, "/alert", vec![warning]).await.status, 204);
    let heard = receiver.wait_delivered("/fm", 1, Duration::from_secs(20)).await;
    check_notification(&heard[0]);
    assert_eq!(heard[0].body["subscriptionId"], id.as_str());
    use base64::Engine;
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("nfvo:callback-s3cret"));
    assert_eq!(heard[0].header("authorization"), Some(basic.as_str()));

    let reply = send(fm(&app, Method::DELETE, &format!("/vnffm/v1/subscriptions/{id}"))).await;
    assert_eq!(reply.status, 204);
    send(fm(&app, Method::GET, &format!("/vnffm/v1/subscriptions/{id}"))).await.problem(404);
    let detail = send(fm(&app, Method::DELETE, &format!("/vnffm/v1/subscriptions/{id}"))).await.problem(404);
    assert_eq!(detail, format!("FmSubscription {id} not found."));
    assert_eq!(send(fm(&app, Method::GET, "/vnffm/v1/subscriptions")).await.json(), json!([]));
}

#[tokio::test]
async fn identical_subscriptions_at_once_make_one_on_sqlite() {
    identical_subscriptions_at_once_make_one(Db::Sqlite).await;
}

#[tokio::test]
async fn identical_subscriptions_at_once_make_one_on_postgres() {
    identical_subscriptions_at_once_make_one(Db::Postgres).await;
}

/// The same subscription requested several times at once: one 201, the others 303 to it.
async fn identical_subscriptions_at_once_make_one(db: Db) {
    let Some(app) = TestApp::spawn_on(db, webhooks_on).await else { return };
    let receiver = Receiver::start().await;
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let body = json!({"callbackUri": receiver.url("/same"), "filter": {"eventTypes": ["QOS_ALARM"]}});
    let posts: Vec<_> = (0..6)
        .map(|_| {
            send(
                no_redirects
                    .post(app.url("/vnffm/v1/subscriptions"))
                    .header("Version", "1.3.0")
                    .header("Accept", "application/json")
                    .json(&body),
            )
        })
        .collect();
    let replies = futures::future::join_all(posts).await;
    let mut statuses: Vec<u16> = replies.iter().map(|reply| reply.status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 303, 303, 303, 303, 303], "{:?}", replies.iter().map(|r| &r.text).collect::<Vec<_>>());
    let listed = send(fm(&app, Method::GET, "/vnffm/v1/subscriptions")).await.json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let location = replies.iter().find(|reply| reply.status == 201).unwrap().header("location").unwrap().to_owned();
    assert!(replies.iter().all(|reply| reply.header("location") == Some(location.as_str())));
}

#[tokio::test]
async fn alarms_stay_in_their_instances_project() {
    let app = TestApp::spawn_with(|settings| {
        webhooks_on(settings);
        settings.auth.mode = AuthMode::Oauth2;
        settings.auth.clients = vec![
            client("p1-member", Role::Member, "p1"),
            client("p2-member", Role::Member, "p2"),
            client("operator", Role::Admin, "ops"),
        ];
    })
    .await;
    let (p1, p2, admin) =
        (as_client(&app, "p1-member").await, as_client(&app, "p2-member").await, as_client(&app, "operator").await);
    send(fm(&app, Method::GET, "/vnffm/v1/alarms")).await.problem(401);
    let receiver = Receiver::start().await;
    for (who, path) in [(&p1, "/p1"), (&p2, "/p2"), (&admin, "/admin")] {
        assert_eq!(fm_subscribe(who, json!({"callbackUri": receiver.url(path)})).await.status, 201);
    }
    let (_, vnfd_id) = p1.onboard_sample().await;
    let instance_id = create_instance(&p1, &vnfd_id, "p1-instance").await;
    let op = task(&p1, &instance_id, "instantiate", instantiate_body()).await;
    wait_op(&p1, &op, &["COMPLETED"]).await;

    // The webhook is outside [auth]: Alertmanager has its own credentials, no token.
    let reply =
        post_alerts(&app, "/alert", vec![alert("firing", "t1", fault(&instance_id, json!({})), json!({}))]).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    let mine = alarms(&p1, "").await;
    assert_eq!(mine.len(), 1);
    let path = format!("/vnffm/v1/alarms/{}", mine[0]["id"].as_str().unwrap());
    assert!(alarms(&p2, "").await.is_empty());
    assert!(alarms(&p2, &format!("?filter=(eq,managedObjectId,{instance_id})")).await.is_empty());
    send(fm(&p2, Method::GET, &path)).await.problem(404);
    send(fm(&p2, Method::PATCH, &path).json(&json!({"ackState": "ACKNOWLEDGED"}))).await.problem(404);
    assert_eq!(alarms(&admin, "").await.len(), 1);
    assert_eq!(send(fm(&p1, Method::PATCH, &path).json(&json!({"ackState": "ACKNOWLEDGED"}))).await.status, 200);
    receiver.wait_delivered("/p1", 1, Duration::from_secs(20)).await;
    receiver.wait_delivered("/admin", 1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(receiver.posts("/p2").is_empty(), "another project's subscription hears nothing of it");
}

/// The HEAL operations of an instance, oldest first.
pub(crate) async fn operations(app: &TestApp, instance_id: &str, operation: &str) -> Vec<Value> {
    let path = format!("/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,{instance_id});(eq,operation,{operation})");
    let reply = send(v2(app, Method::GET, &path)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let mut ops = reply.json().as_array().unwrap().clone();
    ops.sort_by(|a, b| a["startTime"].as_str().cmp(&b["startTime"].as_str()));
    ops
}

async fn wait_ops(app: &TestApp, instance_id: &str, operation: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ops = operations(app, instance_id, operation).await;
        if ops.len() >= count && ops.iter().all(|op| op["operationState"] == "COMPLETED") {
            return ops;
        }
        assert!(Instant::now() < deadline, "{operation} of {instance_id} not completed: {ops:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_burst_of_auto_heal_alerts_heals_once() {
    let app = TestApp::spawn_with(|settings| {
        webhooks_on(settings);
        // Slow enough that the burst arrives while the heal is in flight.
        settings.conductor.local_vim_delay_ms = 300;
    })
    .await;
    let receiver = Receiver::start().await;
    let subscription = json!({"callbackUri": receiver.url("/lcm"), "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"], "operationTypes": ["HEAL"]}});
    assert_eq!(send(v2(&app, Method::POST, "/vnflcm/v2/subscriptions").json(&subscription)).await.status, 201);
    let instance = instantiated(&app, json!({"isAutohealEnabled": true})).await;
    let instance_id = instance["id"].as_str().unwrap();
    let (vnfc, _) = first_vnfc(&instance);
    let heal = alert(
        "firing",
        "h1",
        json!({"function_type": "auto_heal", "vnf_instance_id": instance_id, "vnfc_info_id": vnfc}),
        json!({}),
    );

    let burst: Vec<_> = (0..4).map(|_| post_alerts(&app, "/alert/auto_healing", vec![heal.clone()])).collect();
    for reply in futures::future::join_all(burst).await {
        assert_eq!(reply.status, 204, "{}", reply.text);
    }
    let ops = wait_ops(&app, instance_id, "HEAL", 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ops_after = operations(&app, instance_id, "HEAL").await;
    assert_eq!(ops_after.len(), 1, "one operation for the burst: {ops_after:?}");
    let op = &ops[0];
    assert_eq!(op["isAutomaticInvocation"], true);
    let shown = get(&app, op["_links"]["self"]["href"].as_str().unwrap()).await.json();
    assert_eq!(shown["operationParams"]["vnfcInstanceId"], json!([vnfc]));
    // Its notifications say so too (START, PROCESSING and RESULT).
    let heard = receiver.wait_delivered("/lcm", 3, Duration::from_secs(20)).await;
    assert!(
        heard.iter().all(|notice| notice.body["isAutomaticInvocation"] == true),
        "{:?}",
        heard.iter().map(|n| &n.body).collect::<Vec<_>>()
    );

    // Two VNFCs named in one request: one heal of both (after a scale-out gave a second VNFC).
    let scaled = task(&app, instance_id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})).await;
    wait_op(&app, &scaled, &["COMPLETED"]).await;
    let instance = show_instance(&app, instance_id).await;
    let vnfcs: Vec<String> = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|info| info["vduId"] == "VDU1")
        .map(|info| info["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(vnfcs.len() >= 2, "{vnfcs:?}");
    let both: Vec<Value> = vnfcs
        .iter()
        .take(2)
        .enumerate()
        .map(|(i, id)| {
            alert(
                "firing",
                &format!("h2-{i}"),
                json!({"function_type": "auto_heal", "vnf_instance_id": instance_id, "vnfc_info_id": id}),
                json!({}),
            )
        })
        .collect();
    assert_eq!(post_alerts(&app, "/alert/auto_healing", both).await.status, 204);
    let ops = wait_ops(&app, instance_id, "HEAL", 2).await;
    let second = get(&app, ops[1]["_links"]["self"]["href"].as_str().unwrap()).await.json();
    assert_eq!(second["operationParams"]["vnfcInstanceId"], json!(vnfcs[..2]));

    // An unknown VNFC or instance starts nothing (422); an instance without isAutohealEnabled
    // is left alone.
    let unknown = alert(
        "firing",
        "h3",
        json!({"function_type": "auto_heal", "vnf_instance_id": instance_id, "vnfc_info_id": "VNFC-nope"}),
        json!({}),
    );
    assert!(post_alerts(&app, "/alert/auto_healing", vec![unknown]).await.problem(422).contains("no VNFC VNFC-nope"));
    let nowhere = alert(
        "firing",
        "h4",
        json!({"function_type": "auto_heal", "vnf_instance_id": "nowhere", "vnfc_info_id": vnfc}),
        json!({}),
    );
    assert!(
        post_alerts(&app, "/alert/auto_healing", vec![nowhere]).await.problem(422).contains("nowhere does not exist")
    );
    let missing =
        alert("firing", "h5", json!({"function_type": "auto_heal", "vnf_instance_id": instance_id}), json!({}));
    assert!(post_alerts(&app, "/alert/auto_healing", vec![missing]).await.problem(400).contains("vnfc_info_id"));
    let manual = instantiated(&app, json!({})).await;
    let (manual_vnfc, _) = first_vnfc(&manual);
    let ignored = alert(
        "firing",
        "h6",
        json!({"function_type": "auto_heal", "vnf_instance_id": manual["id"], "vnfc_info_id": manual_vnfc}),
        json!({}),
    );
    assert_eq!(post_alerts(&app, "/alert/auto_healing", vec![ignored]).await.status, 204);
    // Resolved alerts heal nothing either.
    let mut resolved = heal.clone();
    resolved["status"] = json!("resolved");
    assert_eq!(post_alerts(&app, "/alert/auto_healing", vec![resolved]).await.status, 204);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(operations(&app, manual["id"].as_str().unwrap(), "HEAL").await.is_empty());
    assert_eq!(operations(&app, instance_id, "HEAL").await.len(), 2);
}

#[tokio::test]
async fn auto_scale_alerts_scale_out_and_in() {
    let app = TestApp::spawn_with(webhooks_on).await;
    let instance = instantiated(&app, json!({"isAutoscaleEnabled": true})).await;
    let instance_id = instance["id"].as_str().unwrap();
    let before = vnfc_count(&instance, "VDU1");
    let scale = |kind: &str, fingerprint: &str| {
        alert(
            "firing",
            fingerprint,
            json!({"function_type": "auto_scale", "vnf_instance_id": instance_id,
            "auto_scale_type": kind, "aspect_id": "VDU1_scale"}),
            json!({}),
        )
    };
    assert_eq!(post_alerts(&app, "/alert/auto_scaling", vec![scale("SCALE_OUT", "s1")]).await.status, 204);
    let ops = wait_ops(&app, instance_id, "SCALE", 1).await;
    assert_eq!(ops[0]["isAutomaticInvocation"], true);
    assert_eq!(vnfc_count(&show_instance(&app, instance_id).await, "VDU1"), before + 1);
    assert_eq!(post_alerts(&app, "/alert/auto_scaling", vec![scale("SCALE_IN", "s2")]).await.status, 204);
    wait_ops(&app, instance_id, "SCALE", 2).await;
    assert_eq!(vnfc_count(&show_instance(&app, instance_id).await, "VDU1"), before);
    // What the instance does not have is a 422; a bad label value a 400.
    let mut other = scale("SCALE_OUT", "s3");
    other["labels"]["aspect_id"] = json!("nope");
    assert!(
        post_alerts(&app, "/alert/auto_scaling", vec![other]).await.problem(422).contains("no scaling aspect nope")
    );
    let mut bad = scale("SCALE_OUT", "s4");
    bad["labels"]["auto_scale_type"] = json!("SCALE_UP");
    post_alerts(&app, "/alert/auto_scaling", vec![bad]).await.problem(400);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(operations(&app, instance_id, "SCALE").await.len(), 2);
}
