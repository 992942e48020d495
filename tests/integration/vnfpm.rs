//! VNF Performance Management (`/vnfpm/v2`) over real HTTP: PM jobs, reports and thresholds,
//! their criteria checks, the Prometheus rule files they get, and what Alertmanager's
//! webhooks (`/pm_event`, `/pm_threshold`) make of alerts: reports, crossings and the
//! notifications a receiver (the NFVO's callback) gets. Every JSON response is checked
//! against vnfpm 2.1.0 by `send`. The real Prometheus and Alertmanager run in
//! `monitoring.rs`.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use solgate::Settings;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{Db, Reply, TestApp, send};
use crate::lcm_support::*;
use crate::notifications::{Receiver, quick};

pub const VERSION: &str = "2.1.0";
pub const TOKEN: &str = "alertmanager-token";

pub fn pm(app: &TestApp, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.request(method, path).header("Version", VERSION).header("Accept", "application/json")
}

/// The performance webhooks on, with a bearer token (what Alertmanager's `http_config` sends).
pub fn webhooks_on(settings: &mut Settings) {
    settings.prometheus_plugin.performance_management = true;
    settings.prometheus_plugin.webhook_token = TOKEN.into();
    quick(settings);
}

/// An instantiated VNF instance of the sample package; returns (id, its VNFCs: the ids of
/// its vnfcResourceInfo).
pub async fn instantiated(app: &TestApp) -> (String, Vec<String>) {
    let vnfd_id = install_sample_package(app);
    let id = create_instance(app, &vnfd_id, "measured").await;
    let op = task(app, &id, "instantiate", instantiate_body()).await;
    wait_op(app, &op, &["COMPLETED"]).await;
    let instance = show_instance(app, &id).await;
    let vnfcs = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|vnfc| vnfc["id"].as_str().unwrap().to_owned())
        .collect();
    (id, vnfcs)
}

pub fn job_request(instance: &str, callback: &str) -> Value {
    json!({
        "objectType": "Vnf",
        "objectInstanceIds": [instance],
        "criteria": {"performanceMetric": [format!("VCpuUsageMeanVnf.{instance}")], "collectionPeriod": 1, "reportingPeriod": 1},
        "callbackUri": callback,
    })
}

pub fn threshold_request(instance: &str, callback: &str, value: f64, hysteresis: f64) -> Value {
    json!({
        "objectType": "Vnf",
        "objectInstanceId": instance,
        "criteria": {"performanceMetric": format!("VMemoryUsageMeanVnf.{instance}"), "thresholdType": "SIMPLE",
            "simpleThresholdDetails": {"thresholdValue": value, "hysteresis": hysteresis}},
        "callbackUri": callback,
    })
}

pub async fn create(app: &TestApp, collection: &str, body: &Value) -> Reply {
    send(pm(app, Method::POST, &format!("/vnfpm/v2/{collection}")).json(body)).await
}

pub async fn created(app: &TestApp, collection: &str, body: &Value) -> Value {
    let reply = create(app, collection, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let resource = reply.json();
    let id = resource["id"].as_str().unwrap();
    assert_eq!(reply.header("location"), Some(format!("{}/vnfpm/v2/{collection}/{id}", app.address).as_str()));
    resource
}

/// An Alertmanager webhook message (version 4) with one alert per `(labels, value)`.
pub fn message(alerts: &[(Value, &str)]) -> Value {
    let alerts: Vec<Value> = alerts
        .iter()
        .enumerate()
        .map(|(i, (labels, value))| {
            let mut labels = labels.clone();
            labels["receiver_type"] = json!("tacker");
            json!({"status": "firing", "labels": labels, "annotations": {"value": value},
                "startsAt": format!("2026-11-26T10:00:{:02}.000Z", i), "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus/graph", "fingerprint": format!("f{i}")})
        })
        .collect();
    json!({"receiver": "solgate", "status": "firing", "version": "4", "groupKey": "{}:{}", "alerts": alerts})
}

pub async fn post_alerts(app: &TestApp, webhook: &str, body: &Value) -> Reply {
    send(app.request(Method::POST, webhook).bearer_auth(TOKEN).json(body)).await
}

fn rule_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn pm_jobs_are_created_listed_shown_modified_and_deleted() {
    let app = TestApp::spawn_with(quick).await;
    let receiver = Receiver::start().await;
    let (instance, _) = instantiated(&app).await;
    let mut request = job_request(&instance, &receiver.url("/pm"));
    request["authentication"] =
        json!({"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "s3cret"}});
    let job = created(&app, "pm_jobs", &request).await;
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(job["objectInstanceIds"], json!([instance]));
    assert_eq!(job["criteria"], request["criteria"]);
    assert_eq!(job["_links"]["self"]["href"], format!("{}/vnfpm/v2/pm_jobs/{id}", app.address));
    assert_eq!(job["_links"]["objects"][0]["href"], format!("{}/vnflcm/v2/vnf_instances/{instance}", app.address));
    assert!(job.get("authentication").is_none() && job.get("reports").is_none(), "{job}");
    // The callback was tested with the credentials notifications will carry and the PM version.
    let test = receiver.gets("/pm").pop().expect("the callback was tested");
    assert_eq!(test.header("version"), Some(VERSION));
    assert!(test.header("authorization").is_some_and(|value| value.starts_with("Basic ")));

    let listed = send(pm(&app, Method::GET, "/vnfpm/v2/pm_jobs?filter=(eq,objectType,Vnf)")).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(listed.json().as_array().unwrap().len(), 1);
    let none = send(pm(&app, Method::GET, "/vnfpm/v2/pm_jobs?filter=(eq,objectType,VnfExtCp)")).await;
    assert_eq!(none.json(), json!([]));
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await;
    assert_eq!(shown.json(), job);
    // Header names are case-insensitive.
    let lower = send(app.request(Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}")).header("version", VERSION)).await;
    assert_eq!(lower.status, 200, "{}", lower.text);
    let unversioned = send(app.request(Method::GET, "/vnfpm/v2/pm_jobs")).await;
    unversioned.problem(400);

    let patch = |body: Value| {
        pm(&app, Method::PATCH, &format!("/vnfpm/v2/pm_jobs/{id}"))
            .header("Content-Type", "application/merge-patch+json")
            .body(body.to_string())
    };
    let reply = send(patch(json!({"callbackUri": receiver.url("/pm2")}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json(), json!({"callbackUri": receiver.url("/pm2")}));
    let tested = receiver.gets("/pm2").pop().expect("the new callback was tested");
    assert!(tested.header("authorization").is_some(), "with the credentials the job keeps");
    let reply = send(patch(json!({"authentication": null}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json(), json!({}), "credentials are never shown");
    assert!(receiver.gets("/pm2").pop().unwrap().header("authorization").is_none());
    assert!(send(patch(json!({}))).await.problem(400).contains("callbackUri or authentication"));
    assert!(send(patch(json!({"callbackUri": null}))).await.problem(400).contains("null"));
    receiver.state().get_status = 404;
    assert!(send(patch(json!({"callbackUri": receiver.url("/gone")}))).await.problem(422).contains("callback"));
    receiver.state().get_status = 204;
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
    assert_eq!(shown["callbackUri"], receiver.url("/pm2"), "a refused PATCH changes nothing");

    let deleted = send(pm(&app, Method::DELETE, &format!("/vnfpm/v2/pm_jobs/{id}"))).await;
    assert_eq!(deleted.status, 204, "{}", deleted.text);
    send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.problem(404);
    send(pm(&app, Method::DELETE, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.problem(404);
    send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}/reports/r1"))).await.problem(404);
}

#[tokio::test]
async fn thresholds_are_created_listed_shown_modified_and_deleted() {
    let app = TestApp::spawn_with(quick).await;
    let receiver = Receiver::start().await;
    let (instance, vnfcs) = instantiated(&app).await;
    let mut request = threshold_request(&instance, &receiver.url("/th"), 0.8, 0.05);
    request["subObjectInstanceIds"] = json!([vnfcs[0]]);
    // Tacker requires Prometheus' SSH credentials in `metadata`; solgate accepts and ignores it.
    request["metadata"] = json!({"monitoring": {"monitorName": "prometheus"}});
    let threshold = created(&app, "thresholds", &request).await;
    let id = threshold["id"].as_str().unwrap().to_owned();
    assert_eq!(threshold["criteria"], request["criteria"]);
    assert_eq!(threshold["subObjectInstanceIds"], json!([vnfcs[0]]));
    assert_eq!(threshold["_links"]["object"]["href"], format!("{}/vnflcm/v2/vnf_instances/{instance}", app.address));
    assert!(threshold.get("metadata").is_none());
    let listed =
        send(pm(&app, Method::GET, &format!("/vnfpm/v2/thresholds?filter=(eq,objectInstanceId,{instance})"))).await;
    assert_eq!(listed.json(), json!([threshold]));
    let reply = send(
        pm(&app, Method::PATCH, &format!("/vnfpm/v2/thresholds/{id}"))
            .header("Content-Type", "application/json")
            .json(&json!({"callbackUri": receiver.url("/th2")})),
    )
    .await;
    assert_eq!(reply.json(), json!({"callbackUri": receiver.url("/th2")}));
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/thresholds/{id}"))).await.json();
    assert_eq!(shown["callbackUri"], receiver.url("/th2"));
    assert_eq!(send(pm(&app, Method::DELETE, &format!("/vnfpm/v2/thresholds/{id}"))).await.status, 204);
    send(pm(&app, Method::GET, &format!("/vnfpm/v2/thresholds/{id}"))).await.problem(404);
    assert_eq!(send(pm(&app, Method::GET, "/vnfpm/v2/thresholds")).await.json(), json!([]));
}

/// Bad input on one backend: each request refused with a clear detail, nothing stored.
async fn bad_input_is_refused_and_nothing_is_stored(db: Db) {
    let rules = tempfile::tempdir().unwrap();
    let dir = rules.path().to_owned();
    let Some(app) = TestApp::spawn_on(db, move |settings| {
        quick(settings);
        settings.vnfpm.rule_dir = dir;
    })
    .await
    else {
        return;
    };
    let receiver = Receiver::start().await;
    let (instance, _) = instantiated(&app).await;
    let vnfd_id = install_sample_package(&app);
    let idle = create_instance(&app, &vnfd_id, "not instantiated").await;
    let callback = receiver.url("/pm");
    let job = |change: &dyn Fn(&mut Value)| {
        let mut body = job_request(&instance, &callback);
        change(&mut body);
        body
    };
    let group = json!({"performanceMetricGroup": ["VirtualisedComputeResource"], "collectionPeriod": 30, "reportingPeriod": 60});
    let cases: Vec<(Value, u16, &str)> = vec![
        (job(&|b| b["criteria"]["performanceMetric"] = json!(["VNetworkUsageVnf.x"])), 400, "VNetworkUsageVnf.x"),
        (job(&|b| b["criteria"]["performanceMetric"] = json!(["VCpuUsageMeanVnf"])), 400, "must name a VNF instance"),
        (
            job(&|b| b["criteria"]["performanceMetric"] = json!(["ByteIncomingVnfIntCp"])),
            400,
            "not a metric of objectType Vnf",
        ),
        (
            job(&|b| b["criteria"]["performanceMetricGroup"] = json!(["VnfInternalCp"])),
            400,
            "VirtualisedComputeResource",
        ),
        (
            job(&|b| {
                b["criteria"].as_object_mut().unwrap().remove("performanceMetric");
            }),
            400,
            "performanceMetric or performanceMetricGroup",
        ),
        (job(&|b| b["objectType"] = json!("VNFC")), 400, "objectType \"VNFC\""),
        // The client's own sample sends periods as strings: the schema refuses them.
        (job(&|b| b["criteria"]["collectionPeriod"] = json!("500")), 400, "collectionPeriod"),
        (job(&|b| b["criteria"]["reportingPeriod"] = json!(-1)), 400, "reportingPeriod"),
        (
            job(&|b| {
                b["criteria"]["collectionPeriod"] = json!(60);
                b["criteria"]["reportingPeriod"] = json!(30);
            }),
            400,
            "shorter",
        ),
        (job(&|b| b["criteria"]["reportingBoundary"] = json!("2022/07/25 10:43:55")), 400, "reportingBoundary"),
        (job(&|b| b["objectInstanceIds"] = json!([])), 400, "at least one"),
        (
            job(&|b| {
                b["objectInstanceIds"] = json!([instance, idle]);
                b["subObjectInstanceIds"] = json!(["x"]);
            }),
            400,
            "exactly one",
        ),
        (job(&|b| b["subObjectInstanceIds"] = json!(["no-such-vnfc"])), 422, "not a VNFC"),
        (job(&|b| b["subObjectInstanceIds"] = json!(["eth0\"}\n or vector(1)"])), 400, "control characters"),
        (
            job(&|b| b["criteria"]["performanceMetric"] = json!([format!("VCpuUsageMeanVnf.{}", "é".repeat(5000))])),
            400,
            "must name a VNF instance",
        ),
        (
            job(&|b| {
                b["objectInstanceIds"] = json!(["00000000-0000-0000-0000-000000000000"]);
                b["criteria"] = group.clone();
            }),
            404,
            "not found",
        ),
        (
            job(&|b| {
                b["objectInstanceIds"] = json!([idle]);
                b["criteria"] = group.clone();
            }),
            409,
            "isn't instantiated",
        ),
        (job(&|b| b["callbackUri"] = json!("http://169.254.169.254/latest")), 422, "egress.deny_networks"),
        (job(&|b| b["authentication"] = json!({"authType": ["OAUTH2_CLIENT_CERT"]})), 400, "OAUTH2_CLIENT_CERT"),
    ];
    for (body, status, detail) in &cases {
        let reply = create(&app, "pm_jobs", body).await;
        let text = reply.problem(*status);
        assert!(text.contains(detail), "{body}: {text}");
    }
    // A callback that fails its test.
    receiver.state().get_status = 500;
    assert!(create(&app, "pm_jobs", &job(&|_| {})).await.problem(422).contains("callback"));
    receiver.state().get_status = 204;
    let threshold = |change: &dyn Fn(&mut Value)| {
        let mut body = threshold_request(&instance, &callback, 1.0, 0.1);
        change(&mut body);
        body
    };
    for (body, status, detail) in [
        (
            threshold(&|b| b["criteria"]["performanceMetric"] = json!("VCpuUsageMeanVnf.other")),
            400,
            "must name a VNF instance",
        ),
        (
            threshold(&|b| {
                b["objectType"] = json!("VnfExtCp");
                b["criteria"]["performanceMetric"] = json!("ByteIncomingVnfExtCp.eth0");
            }),
            400,
            "no suffix",
        ),
        (
            threshold(&|b| {
                b["criteria"].as_object_mut().unwrap().remove("simpleThresholdDetails");
            }),
            400,
            "simpleThresholdDetails",
        ),
        (threshold(&|b| b["criteria"]["thresholdType"] = json!("COMPLEX")), 400, "thresholdType"),
        (threshold(&|b| b["criteria"]["simpleThresholdDetails"]["hysteresis"] = json!(-1)), 400, "hysteresis"),
        (threshold(&|b| b["objectInstanceId"] = json!(idle)), 400, "must name a VNF instance"),
    ] {
        let text = create(&app, "thresholds", &body).await.problem(status);
        assert!(text.contains(detail), "{body}: {text}");
    }
    let mut idle_threshold = threshold_request(&idle, &callback, 1.0, 0.1);
    idle_threshold["criteria"]["performanceMetric"] = json!(format!("VMemoryUsageMeanVnf.{idle}"));
    create(&app, "thresholds", &idle_threshold).await.problem(409);
    // Malformed bodies.
    for (content_type, body) in [("application/json", "{"), ("application/json", "[]"), ("text/plain", "{}")] {
        let reply =
            send(pm(&app, Method::POST, "/vnfpm/v2/pm_jobs").header("Content-Type", content_type).body(body)).await;
        assert!(matches!(reply.status, 400 | 415), "{content_type} {body}: {}", reply.text);
        reply.problem(reply.status);
    }
    assert_eq!(send(pm(&app, Method::GET, "/vnfpm/v2/pm_jobs")).await.json(), json!([]));
    assert_eq!(send(pm(&app, Method::GET, "/vnfpm/v2/thresholds")).await.json(), json!([]));
    assert!(rule_files(rules.path()).is_empty(), "no rule file of a refused job: {:?}", rule_files(rules.path()));
    // Hostile but valid: a sub-object (an interface name, the client's own text) with quotes,
    // PromQL syntax and non-ASCII, at the longest allowed, is stored and shown as given on
    // both backends, and stays inside its string literal in the rule.
    let mut hostile = format!("eth0\"}} or vector(1) # 'ü' \\ {}", "😀".repeat(70));
    while hostile.len() > 255 {
        hostile.pop();
    }
    let request = json!({"objectType": "VnfIntCp", "objectInstanceIds": [instance], "subObjectInstanceIds": [hostile],
        "criteria": {"performanceMetricGroup": ["VnfInternalCp"], "collectionPeriod": 60, "reportingPeriod": 3600},
        "callbackUri": format!("{callback}?q=%22x%22&n=é")});
    let stored = created(&app, "pm_jobs", &request).await;
    assert_eq!(stored["subObjectInstanceIds"], json!([hostile]));
    let id = stored["id"].as_str().unwrap();
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
    assert_eq!(shown, stored);
    let rule_file = rules.path().join(format!("solgate-{id}.json"));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(rule_file).unwrap()).unwrap();
    let rule = &file["groups"][0]["rules"][0];
    assert_eq!(rule["labels"]["sub_object_instance_id"], json!(hostile));
    let expr = rule["expr"].as_str().unwrap();
    assert!(expr.contains(r#"eth0\"\\} or vector\\(1\\)"#), "escaped for the regex and the literal: {expr}");
    assert!(!expr.contains(r#"eth0"} or vector(1)"#), "the quote must not end the string literal: {expr}");
    // Every default template fills in: a job on each compute metric is accepted.
    let every = job(&|b| {
        b["criteria"] = json!({"performanceMetricGroup": ["VirtualisedComputeResource"], "collectionPeriod": 1, "reportingPeriod": 1});
    });
    let accepted = create(&app, "pm_jobs", &every).await;
    assert_eq!(accepted.status, 201, "the default templates cover every metric: {}", accepted.text);
}

#[tokio::test]
async fn bad_input_is_refused_and_nothing_is_stored_on_sqlite() {
    bad_input_is_refused_and_nothing_is_stored(Db::Sqlite).await;
}

#[tokio::test]
async fn bad_input_is_refused_and_nothing_is_stored_on_postgres() {
    bad_input_is_refused_and_nothing_is_stored(Db::Postgres).await;
}

#[tokio::test]
async fn rules_are_written_reloaded_and_removed_and_a_refused_reload_stores_nothing() {
    let prometheus = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/-/reload"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&prometheus)
        .await;
    let rules = tempfile::tempdir().unwrap();
    let (dir, reload) = (rules.path().to_owned(), format!("{}/-/reload", prometheus.uri()));
    let app = TestApp::spawn_with(move |settings| {
        quick(settings);
        settings.vnfpm.rule_dir = dir;
        settings.vnfpm.reload_url = reload;
        settings.vnfpm.promql.insert("VCpuUsageMeanVnf".into(), "avg(cpu{{pod=~\"{pod}\"}})".into());
        settings.vnfpm.threshold_collection_period_secs = 2;
    })
    .await;
    let receiver = Receiver::start().await;
    let (instance, vnfcs) = instantiated(&app).await;
    let job = created(&app, "pm_jobs", &job_request(&instance, &receiver.url("/pm"))).await;
    let id = job["id"].as_str().unwrap();
    assert_eq!(rule_files(rules.path()), [format!("solgate-{id}.json")]);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(rules.path().join(format!("solgate-{id}.json"))).unwrap())
            .unwrap();
    let rule = &file["groups"][0]["rules"][0];
    assert_eq!(
        rule["labels"],
        json!({"receiver_type": "tacker", "function_type": "vnfpm", "job_id": id,
        "object_instance_id": instance, "metric": format!("VCpuUsageMeanVnf.{instance}")})
    );
    assert_eq!(rule["for"], "1s");
    let instance_doc = show_instance(&app, &instance).await;
    let resource = instance_doc["instantiatedVnfInfo"]["vnfcResourceInfo"][0]["computeResource"]["resourceId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(rule["expr"].as_str().unwrap().contains(&resource), "the VNFCs' resources are selected: {rule}");
    assert_eq!(prometheus.received_requests().await.unwrap().len(), 1, "reloaded once");

    let mut threshold = threshold_request(&instance, &receiver.url("/th"), 80.0, 5.0);
    threshold["criteria"]["performanceMetric"] = json!(format!("VCpuUsageMeanVnf.{instance}"));
    threshold["subObjectInstanceIds"] = json!([vnfcs[0]]);
    let threshold = created(&app, "thresholds", &threshold).await;
    let threshold_id = threshold["id"].as_str().unwrap();
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(rules.path().join(format!("solgate-{threshold_id}.json"))).unwrap(),
    )
    .unwrap();
    let rules_of = file["groups"][0]["rules"].as_array().unwrap();
    assert_eq!(rules_of.len(), 2, "one rule per crossing direction");
    assert!(rules_of[0]["expr"].as_str().unwrap().ends_with(">= 85"), "{}", rules_of[0]["expr"]);
    assert!(rules_of[1]["expr"].as_str().unwrap().ends_with("<= 75"), "{}", rules_of[1]["expr"]);
    assert_eq!(rules_of[0]["labels"]["sub_object_instance_id"], json!(vnfcs[0]));
    assert_eq!(rules_of[0]["for"], "2s");

    assert_eq!(send(pm(&app, Method::DELETE, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.status, 204);
    assert_eq!(rule_files(rules.path()), [format!("solgate-{threshold_id}.json")], "the job's rules are gone");
    assert_eq!(prometheus.received_requests().await.unwrap().len(), 3, "reloaded after each change");

    // Prometheus refusing the new rules: 503, nothing stored, no file left behind.
    prometheus.reset().await;
    Mock::given(method("POST"))
        .and(path("/-/reload"))
        .respond_with(ResponseTemplate::new(500).set_body_string("error loading rules"))
        .mount(&prometheus)
        .await;
    let refused = create(&app, "pm_jobs", &job_request(&instance, &receiver.url("/pm"))).await;
    assert!(refused.problem(503).contains("External Monitoring Tool"), "{}", refused.text);
    assert_eq!(rule_files(rules.path()), [format!("solgate-{threshold_id}.json")]);
    let jobs = send(pm(&app, Method::GET, "/vnfpm/v2/pm_jobs")).await.json();
    assert_eq!(jobs, json!([]));
}

#[tokio::test]
async fn pm_events_make_reports_and_notify_the_jobs_callback() {
    let app = TestApp::spawn_with(webhooks_on).await;
    let receiver = Receiver::start().await;
    let (instance, _) = instantiated(&app).await;
    let mut request = job_request(&instance, &receiver.url("/pm"));
    request["criteria"]["reportingPeriod"] = json!(3600);
    request["criteria"]["collectionPeriod"] = json!(60);
    let job = created(&app, "pm_jobs", &request).await;
    let id = job["id"].as_str().unwrap().to_owned();
    let metric = format!("VCpuUsageMeanVnf.{instance}");
    let labels = json!({"function_type": "vnfpm", "job_id": id, "object_instance_id": instance, "metric": metric});

    // The webhook's guard: credentials, then the body.
    send(app.request(Method::POST, "/pm_event").json(&message(&[(labels.clone(), "0.5")]))).await.problem(401);
    send(app.request(Method::POST, "/pm_event").bearer_auth("wrong").json(&json!({}))).await.problem(401);
    let malformed = post_alerts(&app, "/pm_event", &json!({"alerts": [{"status": "firing"}]})).await;
    malformed.problem(400);
    let mut no_value = message(&[(labels.clone(), "0.5")]);
    no_value["alerts"][0]["annotations"] = json!({});
    assert!(post_alerts(&app, "/pm_event", &no_value).await.problem(400).contains("/alerts/0: the annotation value"));
    assert!(post_alerts(&app, "/pm_event", &message(&[(labels.clone(), "NaN")])).await.problem(400).contains("finite"));
    let mut other = labels.clone();
    other["job_id"] = json!("00000000-0000-0000-0000-000000000000");
    let refused = post_alerts(&app, "/pm_event", &message(&[(labels.clone(), "0.5"), (other, "0.5")])).await;
    assert!(refused.problem(422).contains("/alerts/1 names no PM job"), "{}", refused.text);
    let mut foreign = labels.clone();
    foreign["object_instance_id"] = json!("another-instance");
    assert!(
        post_alerts(&app, "/pm_event", &message(&[(foreign, "0.5")])).await.problem(422).contains("does not measure")
    );
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
    assert!(shown.get("reports").is_none(), "refused messages store nothing: {shown}");

    // Tacker's sample alert (api-ref alert_pm.json): a report with the value.
    let reply = post_alerts(&app, "/pm_event", &message(&[(labels.clone(), "0.425")])).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
    let reports = shown["reports"].as_array().expect("a report").clone();
    assert_eq!(reports.len(), 1);
    let href = reports[0]["href"].as_str().unwrap();
    let path = href.strip_prefix(&app.address).unwrap();
    let report = send(pm(&app, Method::GET, path)).await;
    assert_eq!(report.status, 200, "{}", report.text);
    let entry = &report.json()["entries"][0];
    assert_eq!(
        (&entry["objectType"], &entry["objectInstanceId"], &entry["performanceMetric"]),
        (&json!("Vnf"), &json!(instance), &json!(metric))
    );
    assert_eq!(entry["performanceValues"][0]["value"], json!(0.425));
    let notification = receiver.wait_delivered("/pm", 1, Duration::from_secs(10)).await.remove(0);
    assert_eq!(notification.header("version"), Some(VERSION));
    let body = &notification.body;
    assert_eq!(body["notificationType"], "PerformanceInformationAvailableNotification");
    assert_eq!((&body["pmJobId"], &body["objectInstanceId"]), (&json!(id), &json!(instance)));
    assert_eq!(body["_links"]["performanceReport"]["href"], href);
    assert_eq!(body["_links"]["pmJob"]["href"], format!("{}/vnfpm/v2/pm_jobs/{id}", app.address));
    let dictionary = &solgate_schemas::Registry::builtin().unwrap();
    let entry_v = dictionary.newest(solgate_schemas::Api::Vnfpm, 2).unwrap();
    entry_v.dictionary.validate("PerformanceInformationAvailableNotification", body).unwrap();

    // Within the reporting period the same measurement is not reported again.
    assert_eq!(post_alerts(&app, "/pm_event", &message(&[(labels.clone(), "0.9")])).await.status, 204);
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
    assert_eq!(shown["reports"].as_array().unwrap().len(), 1);
    // reports are left out of lists unless asked for (SOL003 clause 6.4.2.3.2).
    let listed = send(pm(&app, Method::GET, "/vnfpm/v2/pm_jobs")).await.json();
    assert!(listed[0].get("reports").is_none(), "{listed}");
    let listed = send(pm(&app, Method::GET, "/vnfpm/v2/pm_jobs?all_fields")).await.json();
    assert_eq!(listed[0]["reports"], shown["reports"]);
    // Alerts of other kinds, and resolved ones, are not this webhook's.
    let mut resolved = message(&[(labels.clone(), "0.1")]);
    resolved["alerts"][0]["status"] = json!("resolved");
    assert_eq!(post_alerts(&app, "/pm_event", &resolved).await.status, 204);

    // Deleting the job takes its reports and its pending notifications with it.
    assert_eq!(send(pm(&app, Method::DELETE, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.status, 204);
    send(pm(&app, Method::GET, path)).await.problem(404);
}

#[tokio::test]
async fn a_webhook_that_is_off_answers_404() {
    let app = TestApp::spawn().await;
    for webhook in ["/pm_event", "/pm_threshold"] {
        let detail = send(app.request(Method::POST, webhook).json(&message(&[]))).await.problem(404);
        assert_eq!(detail, "Performance management API is not enabled.");
    }
}

#[tokio::test]
async fn thresholds_are_crossed_up_and_down_once_each() {
    let app = TestApp::spawn_with(webhooks_on).await;
    let receiver = Receiver::start().await;
    let (instance, _) = instantiated(&app).await;
    let threshold = created(&app, "thresholds", &threshold_request(&instance, &receiver.url("/th"), 80.0, 5.0)).await;
    let id = threshold["id"].as_str().unwrap().to_owned();
    let metric = format!("VMemoryUsageMeanVnf.{instance}");
    let labels = json!({"function_type": "vnfpm_threshold", "threshold_id": id, "object_instance_id": instance, "metric": metric});
    // 90: up; 95: still up; 82: inside the hysteresis band; 86: up again without having been
    // down (Tacker notifies it again); 75: reaches thresholdValue - hysteresis: down.
    for value in ["90", "95", "82", "86", "75"] {
        let reply = post_alerts(&app, "/pm_threshold", &message(&[(labels.clone(), value)])).await;
        assert_eq!(reply.status, 204, "{value}: {}", reply.text);
    }
    receiver.wait_delivered("/th", 2, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let delivered: Vec<Value> = receiver.delivered("/th").into_iter().map(|received| received.body).collect();
    assert_eq!(delivered.len(), 2, "{delivered:?}");
    assert_eq!((&delivered[0]["crossingDirection"], &delivered[0]["performanceValue"]), (&json!("UP"), &json!(90.0)));
    assert_eq!((&delivered[1]["crossingDirection"], &delivered[1]["performanceValue"]), (&json!("DOWN"), &json!(75.0)));
    let registry = solgate_schemas::Registry::builtin().unwrap();
    let dictionary = &registry.newest(solgate_schemas::Api::Vnfpm, 2).unwrap().dictionary;
    for body in &delivered {
        assert_eq!(body["thresholdId"], json!(id));
        assert_eq!(body["_links"]["threshold"]["href"], format!("{}/vnfpm/v2/thresholds/{id}", app.address));
        dictionary.validate("ThresholdCrossedNotification", body).unwrap();
    }
    let mut wrong = labels.clone();
    wrong["metric"] = json!("VCpuUsageMeanVnf.x");
    assert!(
        post_alerts(&app, "/pm_threshold", &message(&[(wrong, "99")])).await.problem(422).contains("does not watch")
    );
}

#[tokio::test]
async fn a_jobs_credentials_are_sealed_at_rest_and_resealed_with_a_new_key() {
    let app = TestApp::spawn_with(quick).await;
    let receiver = Receiver::start().await;
    let (instance, _) = instantiated(&app).await;
    let mut request = job_request(&instance, &receiver.url("/pm"));
    request["authentication"] =
        json!({"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": "pm-s3cret"}});
    let id = created(&app, "pm_jobs", &request).await["id"].as_str().unwrap().to_owned();
    let stored = || {
        let database = app.database();
        let mut conn = database.conn().unwrap();
        let record = solgate_db::repo::vnfpm::find_job(&mut conn, &id).unwrap().unwrap();
        assert!(!record.body.to_string().contains("pm-s3cret"), "the document holds no credentials");
        record.authentication.unwrap()["paramsBasic"]["password"].as_str().unwrap().to_owned()
    };
    let before = stored();
    assert!(before.starts_with("sealed:v1:"), "{before}");
    let new_key = solgate_core::secrets::generate_key().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_solgate"))
        .arg("reseal")
        .arg("--data-dir")
        .arg(&app.data_dir)
        .env_remove("SOLGATE_CONFIG")
        .env("SOLGATE_SECRET_KEY", &new_key)
        .env(
            "SOLGATE__SECRETS__PREVIOUS_KEY_FILES",
            format!("[{:?}]", app.data_dir.join("secret.key").display().to_string()),
        )
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && printed.contains("1 subscription(s)"), "{printed}");
    let after = stored();
    assert!(after.starts_with("sealed:v1:") && after != before, "{after}");
    let new_box = solgate_core::secrets::SecretBox::load(&Default::default(), &app.data_dir, Some(&new_key)).unwrap();
    assert_eq!(new_box.open_text("password", &after).unwrap(), "pm-s3cret");
}

/// The names of the rule groups Prometheus has loaded.
async fn loaded_groups(prometheus_url: &str) -> Vec<String> {
    let rules: Value = reqwest::get(format!("{prometheus_url}/api/v1/rules")).await.unwrap().json().await.unwrap();
    rules["data"]["groups"].as_array().unwrap().iter().map(|group| group["name"].as_str().unwrap().to_owned()).collect()
}

/// The whole loop on one machine, with the real Prometheus and Alertmanager: solgate writes
/// the rules of a PM job and a threshold into the directory Prometheus reads and reloads it;
/// the rules fire; Alertmanager posts them to `/pm_event` and `/pm_threshold` with the webhook
/// token; the job gets reports with the values Prometheus measured and its callback
/// PerformanceInformationAvailableNotifications, the threshold's callback a
/// ThresholdCrossedNotification. The local VIM has no pods to measure, so the PromQL of the
/// two metrics reads what Prometheus really scrapes: solgate's own request counter of
/// `/metrics` (one more each second); the rules' labels still name the VNF instance and VNFC.
#[tokio::test]
async fn real_prometheus_and_alertmanager_make_reports_and_cross_a_threshold() {
    let prometheus_port = crate::monitoring::free_port();
    let rules = tempfile::tempdir().unwrap();
    let dir = rules.path().to_owned();
    let app = TestApp::spawn_with(move |settings| {
        webhooks_on(settings);
        settings.vnfpm.rule_dir = dir;
        settings.vnfpm.reload_url = format!("http://127.0.0.1:{prometheus_port}/-/reload");
        let scraped = r#"sum(solgate_http_requests_total{{route="/metrics"}})"#;
        settings.vnfpm.promql.insert("VCpuUsageMeanVnf".into(), scraped.into());
        settings.vnfpm.promql.insert("VMemoryUsageMeanVnf".into(), scraped.into());
        settings.vnfpm.threshold_collection_period_secs = 1;
    })
    .await;
    let target = app.address.trim_start_matches("http://").to_owned();
    let routes = [("vnfpm", app.url("/pm_event")), ("vnfpm_threshold", app.url("/pm_threshold"))];
    let auth = json!({"authorization": {"type": "Bearer", "credentials": TOKEN}});
    let Some(monitoring) =
        crate::monitoring::Monitoring::start_routed(&target, rules.path(), &routes, auth, "2s", prometheus_port).await
    else {
        return;
    };
    let receiver = Receiver::start().await;
    let (instance, vnfcs) = instantiated(&app).await;
    let mut request = job_request(&instance, &receiver.url("/pm"));
    request["criteria"]["reportingPeriod"] = json!(2);
    let job = created(&app, "pm_jobs", &request).await;
    let job_id = job["id"].as_str().unwrap().to_owned();
    let mut threshold = threshold_request(&instance, &receiver.url("/th"), 0.5, 0.1);
    threshold["subObjectInstanceIds"] = json!([vnfcs[0]]);
    let threshold = created(&app, "thresholds", &threshold).await;
    let threshold_id = threshold["id"].as_str().unwrap().to_owned();
    let groups = loaded_groups(&monitoring.prometheus_url).await;
    assert!(
        groups.contains(&format!("solgate-{job_id}")) && groups.contains(&format!("solgate-{threshold_id}")),
        "Prometheus loaded the rules solgate wrote: {groups:?}\n{}",
        monitoring.logs()
    );

    // Two reports (Alertmanager repeats the firing alert), each announced to the callback.
    let announced = receiver.wait_delivered("/pm", 2, Duration::from_secs(90)).await;
    for notification in &announced {
        assert_eq!(notification.body["notificationType"], "PerformanceInformationAvailableNotification");
        assert_eq!(notification.body["pmJobId"], json!(job_id));
        assert_eq!(notification.body["objectInstanceId"], json!(instance));
        assert_eq!(notification.header("version"), Some(VERSION));
    }
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{job_id}"))).await.json();
    let reports = shown["reports"].as_array().unwrap();
    assert!(reports.len() >= 2, "{shown}");
    let mut values = Vec::new();
    for reference in reports {
        let path = reference["href"].as_str().unwrap().strip_prefix(&app.address).unwrap().to_owned();
        let report = send(pm(&app, Method::GET, &path)).await.json();
        let entry = &report["entries"][0];
        assert_eq!(entry["performanceMetric"], json!(format!("VCpuUsageMeanVnf.{instance}")));
        values.push(entry["performanceValues"][0]["value"].as_f64().expect("a measured number"));
    }
    assert!(values.iter().all(|value| *value >= 1.0), "the scrapes Prometheus counted: {values:?}");
    assert!(values.windows(2).all(|pair| pair[1] >= pair[0]), "a counter only grows: {values:?}");

    // The threshold: the counter is above 0.6 from the start: crossed upwards, once.
    let crossed = receiver.wait_delivered("/th", 1, Duration::from_secs(60)).await;
    let body = &crossed[0].body;
    assert_eq!(
        (&body["notificationType"], &body["crossingDirection"]),
        (&json!("ThresholdCrossedNotification"), &json!("UP"))
    );
    assert_eq!((&body["thresholdId"], &body["subObjectInstanceId"]), (&json!(threshold_id), &json!(vnfcs[0])));
    assert!(body["performanceValue"].as_f64().unwrap() >= 0.6, "{body}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(receiver.delivered("/th").len(), 1, "repeats of the same side cross nothing");

    // Deleting the job removes its rules from Prometheus.
    assert_eq!(send(pm(&app, Method::DELETE, &format!("/vnfpm/v2/pm_jobs/{job_id}"))).await.status, 204);
    let groups = loaded_groups(&monitoring.prometheus_url).await;
    assert!(!groups.contains(&format!("solgate-{job_id}")), "{groups:?}");
    assert!(groups.contains(&format!("solgate-{threshold_id}")));
}

#[tokio::test]
async fn a_job_keeps_its_newest_reports() {
    let app = TestApp::spawn_with(|settings| {
        webhooks_on(settings);
        settings.vnfpm.max_reports_per_job = 2;
        settings.vnfpm.reporting_period_margin_secs = 1;
    })
    .await;
    let receiver = Receiver::start().await;
    let (instance, _) = instantiated(&app).await;
    // reportingPeriod 1 less the 1 s margin: every message makes a report.
    let job = created(&app, "pm_jobs", &job_request(&instance, &receiver.url("/pm"))).await;
    let id = job["id"].as_str().unwrap().to_owned();
    let labels = json!({"function_type": "vnfpm", "job_id": id, "object_instance_id": instance,
        "metric": format!("VCpuUsageMeanVnf.{instance}")});
    let mut hrefs = Vec::new();
    for value in ["1", "2", "3"] {
        assert_eq!(post_alerts(&app, "/pm_event", &message(&[(labels.clone(), value)])).await.status, 204);
        let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
        hrefs.push(shown["reports"].as_array().unwrap().last().unwrap()["href"].as_str().unwrap().to_owned());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let shown = send(pm(&app, Method::GET, &format!("/vnfpm/v2/pm_jobs/{id}"))).await.json();
    let kept: Vec<&str> = shown["reports"].as_array().unwrap().iter().map(|r| r["href"].as_str().unwrap()).collect();
    assert_eq!(kept, [hrefs[1].as_str(), hrefs[2].as_str()]);
    let path = |href: &str| href.strip_prefix(&app.address).unwrap().to_owned();
    send(pm(&app, Method::GET, &path(&hrefs[0]))).await.problem(404);
    let newest = send(pm(&app, Method::GET, &path(&hrefs[2]))).await.json();
    assert_eq!(newest["entries"][0]["performanceValues"][0]["value"], json!(3.0));
    receiver.wait_delivered("/pm", 3, Duration::from_secs(10)).await;
}

#[tokio::test]
async fn the_pm_api_has_its_versions_and_negotiates_them() {
    let app = TestApp::spawn().await;
    let all = send(app.get("/vnfpm/api_versions")).await;
    assert_eq!(all.status, 200, "{}", all.text);
    assert_eq!(
        all.json(),
        json!({"uriPrefix": "/vnfpm", "apiVersions": [{"version": "2.1.0", "isDeprecated": false}]})
    );
    let major = send(app.get("/vnfpm/v2/api_versions")).await;
    assert_eq!(major.json()["uriPrefix"], "/vnfpm/v2");
    assert_eq!(major.header("version"), Some(VERSION));
    send(app.get("/vnfpm/v1/pm_jobs").header("Version", VERSION)).await.problem(404);
    send(app.get("/vnfpm/v2/pm_jobs").header("Version", "2.0.0")).await.problem(406);
    send(app.get("/vnfpm/v2/pm_jobs").header("Version", "two")).await.problem(400);
    let listed = send(app.get("/vnfpm/v2/pm_jobs").header("VERSION", "2.1.0-impl:example.com:nfvo:1")).await;
    assert_eq!((listed.status, listed.header("version")), (200, Some(VERSION)), "{}", listed.text);
    let wrong = send(pm(&app, Method::PUT, "/vnfpm/v2/pm_jobs")).await;
    wrong.problem(405);
    assert_eq!(wrong.header("allow"), Some("GET, POST"));
}
