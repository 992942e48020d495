//! Private Prometheus and Alertmanager for the fault and performance management tests: the
//! real programs (Debian's packages, found or installed by deploy/scripts/services.sh, which
//! exports SOLGATE_TEST_PROMETHEUS and SOLGATE_TEST_ALERTMANAGER), each test with its own
//! instances on free ports and temporary storage, stopped when dropped. Prometheus scrapes
//! solgate's own `/metrics` and evaluates the test's rules every second (or the rule files
//! solgate writes for PM jobs and thresholds, reloaded on `POST /-/reload`); Alertmanager sends
//! what fires to the test's webhook (solgate's `/alert`, `/pm_event`, `/pm_threshold`, as
//! Tacker's Prometheus plugin receives them).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One Prometheus and one Alertmanager.
pub struct Monitoring {
    prometheus: Child,
    alertmanager: Child,
    dir: tempfile::TempDir,
    pub prometheus_url: String,
    #[allow(dead_code)]
    pub alertmanager_url: String,
}

fn program(variable: &str) -> Option<PathBuf> {
    match std::env::var_os(variable) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{variable} is not set and CI=true: run the suite with deploy/scripts/test.sh")
        }
        None => {
            eprintln!("skipping a monitoring test: {variable} is not set (deploy/scripts/test.sh sets it)");
            None
        }
    }
}

/// A free TCP port on the loopback interface.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Monitoring {
    /// Starts both: Prometheus scraping `target` (`host:port` of solgate, job `solgate`) with
    /// `rules` (a rule file's YAML), Alertmanager posting every alert group, fired and
    /// resolved, to `webhook` (with `webhook_auth`, Alertmanager's `http_config`, when given).
    /// `None` when the programs are not configured and CI is not set.
    pub async fn start(target: &str, rules: &str, webhook: &str, webhook_auth: Option<Value>) -> Option<Monitoring> {
        let dir = tempfile::tempdir().unwrap();
        // JSON is YAML: the configurations are written as JSON.
        let mut receiver = serde_json::json!({"url": webhook, "send_resolved": true, "max_alerts": 0});
        if let Some(auth) = webhook_auth {
            receiver["http_config"] = auth;
        }
        let alertmanager_config = serde_json::json!({
            "route": {"receiver": "solgate", "group_by": ["alertname"], "group_wait": "1s",
                "group_interval": "1s", "repeat_interval": "1h"},
            "receivers": [{"name": "solgate", "webhook_configs": [receiver]}]
        });
        std::fs::write(dir.path().join("rules.yml"), rules).unwrap();
        let rule_files = vec![dir.path().join("rules.yml").display().to_string()];
        Self::launch(dir, target, rule_files, alertmanager_config, free_port()).await
    }

    /// Starts both for the performance management webhooks: Prometheus (on `prometheus_port`,
    /// reloadable with `POST /-/reload`) reads the rule files solgate writes into `rule_dir`
    /// (`*.json`) and scrapes `target`; Alertmanager posts the alerts labelled
    /// `function_type: <kind>` to the URL `routes` gives that kind, with `webhook_auth`, and
    /// repeats a firing alert every `repeat_interval` (what makes a PM job's next report).
    pub async fn start_routed(
        target: &str,
        rule_dir: &std::path::Path,
        routes: &[(&str, String)],
        webhook_auth: Value,
        repeat_interval: &str,
        prometheus_port: u16,
    ) -> Option<Monitoring> {
        let dir = tempfile::tempdir().unwrap();
        let receivers: Vec<Value> = routes
            .iter()
            .map(|(kind, url)| {
                serde_json::json!({"name": kind, "webhook_configs": [{"url": url, "send_resolved": true,
                    "max_alerts": 0, "http_config": webhook_auth}]})
            })
            .chain([serde_json::json!({"name": "nowhere"})])
            .collect();
        let matched: Vec<Value> = routes
            .iter()
            .map(|(kind, _)| serde_json::json!({"receiver": kind, "matchers": [format!("function_type=\"{kind}\"")]}))
            .collect();
        let alertmanager_config = serde_json::json!({
            "route": {"receiver": "nowhere", "group_by": ["alertname"], "group_wait": "1s",
                "group_interval": "1s", "repeat_interval": repeat_interval, "routes": matched},
            "receivers": receivers
        });
        let rule_files = vec![rule_dir.join("*.json").display().to_string()];
        Self::launch(dir, target, rule_files, alertmanager_config, prometheus_port).await
    }

    async fn launch(
        dir: tempfile::TempDir,
        target: &str,
        rule_files: Vec<String>,
        alertmanager_config: Value,
        prometheus_port: u16,
    ) -> Option<Monitoring> {
        let prometheus_bin = program("SOLGATE_TEST_PROMETHEUS")?;
        let alertmanager_bin = program("SOLGATE_TEST_ALERTMANAGER")?;
        let alertmanager_port = free_port();
        std::fs::write(dir.path().join("alertmanager.yml"), alertmanager_config.to_string()).unwrap();
        let alertmanager = Command::new(&alertmanager_bin)
            .arg(format!("--config.file={}", dir.path().join("alertmanager.yml").display()))
            .arg(format!("--storage.path={}", dir.path().join("alertmanager-data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{alertmanager_port}"))
            // No gossip port: a single private instance.
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("alertmanager.log")).unwrap())
            .spawn()
            .unwrap_or_else(|error| panic!("{}: {error}", alertmanager_bin.display()));

        let prometheus_config = serde_json::json!({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "alerting": {"alertmanagers": [{"static_configs": [{"targets": [format!("127.0.0.1:{alertmanager_port}")]}]}]},
            "rule_files": rule_files,
            "scrape_configs": [{"job_name": "solgate", "static_configs": [{"targets": [target]}]}]
        });
        std::fs::write(dir.path().join("prometheus.yml"), prometheus_config.to_string()).unwrap();
        let prometheus = Command::new(&prometheus_bin)
            .arg(format!("--config.file={}", dir.path().join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("prometheus-data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
            // `POST /-/reload`, as solgate reloads the rules of PM jobs and thresholds.
            .arg("--web.enable-lifecycle")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .unwrap_or_else(|error| panic!("{}: {error}", prometheus_bin.display()));
        let monitoring = Monitoring {
            prometheus,
            alertmanager,
            dir,
            prometheus_url: format!("http://127.0.0.1:{prometheus_port}"),
            alertmanager_url: format!("http://127.0.0.1:{alertmanager_port}"),
        };
        monitoring.wait_ready(&monitoring.alertmanager_url).await;
        monitoring.wait_ready(&monitoring.prometheus_url).await;
        Some(monitoring)
    }

    async fn wait_ready(&self, base: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(reply) = reqwest::get(format!("{base}/-/ready")).await
                && reply.status().is_success()
            {
                return;
            }
            assert!(Instant::now() < deadline, "{base} not ready; logs:\n{}", self.logs());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Both programs' logs, for a failure's message.
    pub fn logs(&self) -> String {
        ["prometheus.log", "alertmanager.log"]
            .iter()
            .map(|name| {
                let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(20).collect();
                format!("--- {name}\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The value of an instant PromQL query (its first sample), once it has one.
    #[allow(dead_code)]
    pub async fn query(&self, promql: &str, within: Duration) -> f64 {
        let deadline = Instant::now() + within;
        loop {
            let encoded = percent_encoding::utf8_percent_encode(promql, percent_encoding::NON_ALPHANUMERIC);
            let reply: Value = reqwest::Client::new()
                .get(format!("{}/api/v1/query?query={encoded}", self.prometheus_url))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if let Some(value) = reply.pointer("/data/result/0/value/1").and_then(Value::as_str) {
                return value.parse().unwrap();
            }
            assert!(Instant::now() < deadline, "no value for {promql}: {reply}\n{}", self.logs());
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Monitoring {
    fn drop(&mut self) {
        for child in [&mut self.prometheus, &mut self.alertmanager] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test]
async fn prometheus_scrapes_solgate_and_alertmanager_delivers_what_fires() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let app = crate::helpers::TestApp::spawn().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST")).and(path("/alert")).respond_with(ResponseTemplate::new(204)).mount(&receiver).await;
    // A rule on solgate's own metrics, with the labels Tacker's Prometheus plugin reads.
    let rules = r#"
groups:
- name: solgate
  rules:
  - alert: SolgateScraped
    expr: up{job="solgate"} == 1 and on() solgate_http_requests_total{route="/metrics"} > 0
    labels:
      receiver_type: tacker
      function_type: vnffm
      vnf_instance_id: 6b1a2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d
      perceived_severity: WARNING
      event_type: EQUIPMENT_ALARM
    annotations:
      probable_cause: solgate is scraped
      fault_type: Server Down
      fault_details: fault details
"#;
    let target = app.address.trim_start_matches("http://").to_owned();
    let Some(monitoring) = Monitoring::start(&target, rules, &format!("{}/alert", receiver.uri()), None).await else {
        return;
    };
    // solgate's /metrics is scraped: Prometheus has its request counter.
    let scraped =
        monitoring.query(r#"sum(solgate_http_requests_total{route="/metrics"})"#, Duration::from_secs(30)).await;
    assert!(scraped >= 1.0);

    let deadline = Instant::now() + Duration::from_secs(30);
    let body: Value = loop {
        let posted = receiver.received_requests().await.unwrap();
        if let Some(request) = posted.first() {
            break serde_json::from_slice(&request.body).unwrap();
        }
        assert!(Instant::now() < deadline, "no alert reached the webhook\n{}", monitoring.logs());
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Alertmanager's webhook payload (version 4), as solgate's /alert receives it.
    assert_eq!(body["version"], "4");
    assert_eq!(body["status"], "firing");
    let alert = &body["alerts"][0];
    assert_eq!(alert["labels"]["function_type"], "vnffm");
    assert_eq!(alert["labels"]["vnf_instance_id"], "6b1a2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    assert_eq!(alert["annotations"]["fault_type"], "Server Down");
    assert!(alert["fingerprint"].as_str().is_some_and(|f| !f.is_empty()));
    assert!(alert["startsAt"].as_str().is_some());
}

/// Alertmanager's `http_config` with the webhook credentials of `vnffm::webhooks_on`.
fn webhook_auth() -> Value {
    use crate::vnffm::{WEBHOOK_PASSWORD, WEBHOOK_USER};
    serde_json::json!({"basic_auth": {"username": WEBHOOK_USER, "password": WEBHOOK_PASSWORD}})
}

/// The whole loop on one machine: a Prometheus rule on solgate's own metrics fires with Tacker's
/// FM labels naming a VNFC of a real instance, Alertmanager posts it to solgate's `/alert` with
/// the webhook credentials, the alarm is stored, and an FM subscriber receives its
/// AlarmNotification.
#[tokio::test]
async fn a_firing_rule_raises_an_alarm_that_a_subscriber_hears_of() {
    use crate::notifications::Receiver;
    use crate::vnffm::{alarms, check_notification, first_vnfc, fm_subscribe, instantiated, webhooks_on};

    let app = crate::helpers::TestApp::spawn_with(webhooks_on).await;
    let receiver = Receiver::start().await;
    let subscribed = fm_subscribe(&app, serde_json::json!({"callbackUri": receiver.url("/fm")})).await;
    assert_eq!(subscribed.status, 201, "{}", subscribed.text);
    let instance = instantiated(&app, serde_json::json!({})).await;
    let instance_id = instance["id"].as_str().unwrap();
    let (vnfc, compute) = first_vnfc(&instance);
    let rules = format!(
        r#"
groups:
- name: solgate-fm
  rules:
  - alert: VnfcDown
    expr: up{{job="solgate"}} == 1
    labels:
      receiver_type: tacker
      function_type: vnffm
      vnf_instance_id: "{instance_id}"
      vnfc_info_id: "{vnfc}"
      perceived_severity: CRITICAL
      event_type: EQUIPMENT_ALARM
    annotations:
      probable_cause: Process Terminated
      fault_type: Server Down
      fault_details: the VNFC stopped answering
"#
    );
    let target = app.address.trim_start_matches("http://").to_owned();
    let Some(monitoring) = Monitoring::start(&target, &rules, &app.url("/alert"), Some(webhook_auth())).await else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let alarm = loop {
        if let Some(alarm) = alarms(&app, "").await.into_iter().next() {
            break alarm;
        }
        assert!(Instant::now() < deadline, "no alarm was raised\n{}", monitoring.logs());
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(alarm["managedObjectId"], instance_id);
    assert_eq!(alarm["vnfcInstanceIds"], serde_json::json!([vnfc]));
    assert_eq!(alarm["rootCauseFaultyResource"]["faultyResource"], compute);
    assert_eq!((&alarm["perceivedSeverity"], &alarm["eventType"]), (&"CRITICAL".into(), &"EQUIPMENT_ALARM".into()));
    assert_eq!(alarm["probableCause"], "Process Terminated");
    assert_eq!(alarm["faultDetails"][1], "detail: the VNFC stopped answering");
    assert!(alarm["faultDetails"][0].as_str().unwrap().starts_with("fingerprint: "));
    let heard = receiver.wait_delivered("/fm", 1, Duration::from_secs(30)).await;
    check_notification(&heard[0]);
    assert_eq!(heard[0].body["notificationType"], "AlarmNotification");
    assert_eq!(heard[0].body["alarm"]["id"], alarm["id"]);
    // Alertmanager keeps the alert firing (and may send it again): still one alarm.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(alarms(&app, "").await.len(), 1);
    assert_eq!(receiver.posts("/fm").len(), 1);
}

/// Auto-heal end to end: a rule with Tacker's auto_heal labels fires, Alertmanager posts it to
/// `/alert/auto_healing`, and the VNFC it names is healed: a HEAL occurrence, automatic,
/// COMPLETED.
#[tokio::test]
async fn a_firing_auto_heal_rule_heals_the_vnfc() {
    use crate::vnffm::{first_vnfc, instantiated, operations, webhooks_on};

    let app = crate::helpers::TestApp::spawn_with(webhooks_on).await;
    let instance = instantiated(&app, serde_json::json!({"isAutohealEnabled": true})).await;
    let instance_id = instance["id"].as_str().unwrap();
    let (vnfc, _) = first_vnfc(&instance);
    let rules = format!(
        r#"
groups:
- name: solgate-heal
  rules:
  - alert: VnfcUnhealthy
    expr: up{{job="solgate"}} == 1
    labels:
      receiver_type: tacker
      function_type: auto_heal
      vnf_instance_id: "{instance_id}"
      vnfc_info_id: "{vnfc}"
"#
    );
    let target = app.address.trim_start_matches("http://").to_owned();
    let webhook = app.url("/alert/auto_healing");
    let Some(monitoring) = Monitoring::start(&target, &rules, &webhook, Some(webhook_auth())).await else { return };
    let deadline = Instant::now() + Duration::from_secs(60);
    let op = loop {
        let ops = operations(&app, instance_id, "HEAL").await;
        if let Some(op) = ops.first().filter(|op| op["operationState"] == "COMPLETED") {
            break op.clone();
        }
        assert!(Instant::now() < deadline, "no completed heal: {ops:?}\n{}", monitoring.logs());
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(op["isAutomaticInvocation"], true);
    let shown = crate::lcm_support::get(&app, op["_links"]["self"]["href"].as_str().unwrap()).await.json();
    assert_eq!(shown["operationParams"]["vnfcInstanceId"], serde_json::json!([vnfc]));
    assert_eq!(shown["operation"], "HEAL");
}
