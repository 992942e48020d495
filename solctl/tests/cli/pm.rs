//! `vnfpm job …`, `vnfpm report show` and `vnfpm threshold …` (python-tackerclient's
//! `openstack vnfpm`): a PM job created, listed (filter, selectors), shown and updated, a report
//! made through Alertmanager's webhook (`/pm_event`) and shown, a threshold's life cycle, an
//! unknown metric refused with its name.

use serde_json::json;

use crate::helpers::{Receiver, Server};

#[tokio::test]
async fn pm_jobs_reports_and_thresholds() {
    let server = Server::start_with(|settings| {
        settings.prometheus_plugin.performance_management = true;
        settings.prometheus_plugin.webhook_token = "cli-pm-token".into();
    })
    .await;
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    server.onboard_sample(&vnfd_id).await;
    let instantiate = server.file("instantiate.json", json!({"flavourId": "simple"}).to_string());
    let args =
        ["vnflcm", "create", &vnfd_id, "--I", instantiate.to_str().unwrap(), "--wait", "-f", "value", "-c", "ID"];
    // `--wait` prints the instance, then the occurrence it waited for.
    let created = server.ok(&args).await.value();
    let instance = created.lines().next().unwrap().to_owned();
    let callback = Receiver::start();

    let metric = format!("VCpuUsageMeanVnf.{instance}");
    let request = json!({"objectType": "Vnf", "objectInstanceIds": [instance], "callbackUri": callback.url,
        "criteria": {"performanceMetric": [metric], "collectionPeriod": 30, "reportingPeriod": 60}});
    let file = server.file("pm-job.json", request.to_string());
    let job = server.ok(&["vnfpm", "job", "create", file.to_str().unwrap(), "-f", "json"]).await.json();
    let job_id = job["ID"].as_str().unwrap().to_owned();
    assert_eq!(job["Object Type"], "Vnf");
    assert_eq!(job["Object Instance Ids"], json!([instance]));
    assert_eq!(job["Criteria"], request["criteria"]);
    let listed = server.ok(&["vnfpm", "job", "list"]).await;
    for heading in ["ID", "Object Type", "Links"] {
        assert!(listed.stdout.contains(&format!(" {heading} ")), "{heading}: {listed:?}");
    }
    let filtered = server.ok(&["vnfpm", "job", "list", "--filter", "(eq,objectType,VnfExtCp)", "-f", "json"]).await;
    assert_eq!(filtered.json(), json!([]));
    let all = server.ok(&["vnfpm", "job", "list", "--all_fields", "-f", "json"]).await.json();
    assert_eq!(all[0]["Criteria"], request["criteria"]);
    let update = server.file("pm-job-update.json", json!({"callbackUri": format!("{}/2", callback.url)}).to_string());
    let updated = server.ok(&["vnfpm", "job", "update", &job_id, update.to_str().unwrap(), "-f", "json"]).await;
    assert_eq!(updated.json(), json!({"Callback URI": format!("{}/2", callback.url)}));

    // A report, made as Alertmanager makes it.
    let alert = json!({"alerts": [{"status": "firing", "labels": {"receiver_type": "tacker", "function_type": "vnfpm",
        "job_id": job_id, "object_instance_id": instance, "metric": metric},
        "annotations": {"value": "0.375"}, "startsAt": "2026-11-26T10:00:00Z", "fingerprint": "cli-pm"}]});
    let posted = reqwest::Client::new()
        .post(format!("{}/pm_event", server.endpoint))
        .bearer_auth("cli-pm-token")
        .json(&alert)
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 204, "{}", posted.text().await.unwrap());
    let shown = server.ok(&["vnfpm", "job", "show", &job_id, "-f", "json"]).await.json();
    let href = shown["Reports"][0]["href"].as_str().unwrap();
    let report_id = href.rsplit('/').next().unwrap();
    let report = server.ok(&["vnfpm", "report", "show", &job_id, report_id, "-f", "json"]).await.json();
    assert_eq!(report["Entries"][0]["performanceValues"][0]["value"], json!(0.375));
    let missing = server.solctl(&["vnfpm", "report", "show", &job_id, "no-such-report"]).await;
    assert_eq!(missing.code, 1, "{missing:?}");

    // A threshold.
    let request = json!({"objectType": "Vnf", "objectInstanceId": instance, "callbackUri": callback.url,
        "criteria": {"performanceMetric": format!("VMemoryUsageMeanVnf.{instance}"), "thresholdType": "SIMPLE",
            "simpleThresholdDetails": {"thresholdValue": 0.8, "hysteresis": 0.05}}});
    let file = server.file("threshold.json", request.to_string());
    let threshold = server.ok(&["vnfpm", "threshold", "create", file.to_str().unwrap(), "-f", "json"]).await.json();
    let threshold_id = threshold["ID"].as_str().unwrap().to_owned();
    assert_eq!(threshold["Object Instance Id"], instance.as_str());
    let filter = format!("(eq,objectInstanceId,{instance})");
    let ids = server.ok(&["vnfpm", "threshold", "list", "--filter", &filter, "-f", "value", "-c", "ID"]).await;
    assert_eq!(ids.value(), threshold_id);
    let shown = server.ok(&["vnfpm", "threshold", "show", &threshold_id, "-f", "value", "-c", "Criteria"]).await;
    assert!(shown.stdout.contains("SIMPLE"), "{shown:?}");
    let updated =
        server.ok(&["vnfpm", "threshold", "update", &threshold_id, update.to_str().unwrap(), "-f", "value"]).await;
    assert_eq!(updated.value(), format!("{}/2", callback.url));
    let deleted = server.ok(&["vnfpm", "threshold", "delete", &threshold_id]).await;
    assert!(deleted.stdout.contains("is deleted successfully"), "{deleted:?}");

    // The server's 400 for an unknown metric, with its detail.
    let bad = json!({"objectType": "Vnf", "objectInstanceIds": [instance], "callbackUri": callback.url,
        "criteria": {"performanceMetric": ["VNetworkUsage.x"], "collectionPeriod": 30, "reportingPeriod": 60}});
    let file = server.file("bad.json", bad.to_string());
    let refused = server.solctl(&["vnfpm", "job", "create", file.to_str().unwrap()]).await;
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("VNetworkUsage.x"), "{refused:?}");

    let deleted = server.ok(&["vnfpm", "job", "delete", &job_id]).await;
    assert!(deleted.stdout.contains("is deleted successfully"), "{deleted:?}");
    let gone = server.solctl(&["vnfpm", "job", "show", &job_id]).await;
    assert!(gone.code == 1 && gone.stderr.contains(&format!("PmJob {job_id} not found.")), "{gone:?}");
    let versions = server.ok(&["versions", "-f", "json"]).await.json();
    assert!(versions.as_array().unwrap().iter().any(|row| row["URI Prefix"] == "/vnfpm/v2"), "{versions}");
}
