//! `vnffm alarm …` and `vnffm sub …` (python-tackerclient's `openstack vnffm`): an alarm raised
//! through Alertmanager's webhook (`/alert`), listed, filtered, shown and acknowledged; FM
//! subscriptions created, listed, shown and deleted.

use serde_json::json;

use crate::helpers::{Receiver, Server};

#[tokio::test]
async fn alarms_and_fm_subscriptions() {
    let server = Server::start_with(|settings| {
        settings.prometheus_plugin.fault_management = true;
        settings.prometheus_plugin.webhook_token = "cli-webhook-token".into();
    })
    .await;
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    server.onboard_sample(&vnfd_id).await;
    let instantiate = server.file("instantiate.json", json!({"flavourId": "simple"}).to_string());
    let args =
        ["vnflcm", "create", &vnfd_id, "--I", instantiate.to_str().unwrap(), "--wait", "-f", "value", "-c", "ID"];
    // `--wait` prints the instance, then the occurrence it waited for.
    let created = server.ok(&args).await.value();
    let instance_id = created.lines().next().unwrap().to_owned();

    // Subscriptions.
    let callback = Receiver::start();
    let request = json!({"callbackUri": callback.url, "filter": {"perceivedSeverities": ["MAJOR"]}});
    let file = server.file("fm-sub.json", request.to_string());
    let created = server.ok(&["vnffm", "sub", "create", file.to_str().unwrap(), "-f", "json"]).await.json();
    let sub_id = created["ID"].as_str().unwrap().to_owned();
    assert_eq!(created["Callback URI"], callback.url.as_str());
    assert_eq!(created["Filter"], json!({"perceivedSeverities": ["MAJOR"]}));
    let listed = server.ok(&["vnffm", "sub", "list"]).await;
    assert!(listed.stdout.contains(&sub_id) && listed.stdout.contains("| Callback URI"), "{listed:?}");
    let shown = server.ok(&["vnffm", "sub", "show", &sub_id, "-f", "value", "-c", "ID"]).await;
    assert_eq!(shown.value(), sub_id);

    // An alarm, raised as Alertmanager raises it.
    let alert = json!({"alerts": [{"status": "firing", "labels": {"receiver_type": "tacker", "function_type": "vnffm",
        "vnf_instance_id": instance_id, "perceived_severity": "MAJOR", "event_type": "QOS_ALARM"},
        "annotations": {"probable_cause": "Latency too high"}, "startsAt": "2026-11-26T10:00:00Z",
        "fingerprint": "cli-fingerprint"}]});
    let posted = reqwest::Client::new()
        .post(format!("{}/alert", server.endpoint))
        .bearer_auth("cli-webhook-token")
        .json(&alert)
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 204, "{instance_id}: {}", posted.text().await.unwrap());

    let list = server.ok(&["vnffm", "alarm", "list"]).await;
    for heading in ["ID", "Managed Object Id", "Ack State", "Event Type", "Perceived Severity", "Probable Cause"] {
        assert!(list.stdout.contains(&format!(" {heading} ")), "{heading}: {list:?}");
    }
    let filter = format!("(eq,managedObjectId,{instance_id})");
    let alarm_id = server.ok(&["vnffm", "alarm", "list", "--filter", &filter, "-f", "value", "-c", "ID"]).await.value();
    assert_eq!(alarm_id.lines().count(), 1, "{alarm_id}");
    let none = server.ok(&["vnffm", "alarm", "list", "--filter", "(eq,perceivedSeverity,MINOR)", "-f", "json"]).await;
    assert_eq!(none.json(), json!([]));
    let alarm = server.ok(&["vnffm", "alarm", "show", &alarm_id, "-f", "json"]).await.json();
    assert_eq!(alarm["Managed Object Id"], instance_id.as_str());
    assert_eq!(alarm["Probable Cause"], "Latency too high");
    assert_eq!(alarm["Ack State"], "UNACKNOWLEDGED");
    let updated =
        server.ok(&["vnffm", "alarm", "update", &alarm_id, "--ack-state", "ACKNOWLEDGED", "-f", "json"]).await;
    assert_eq!(updated.json(), json!({"Ack State": "ACKNOWLEDGED"}));
    // The same state again: the server's 409, exit 1 with its detail.
    let again = server.solctl(&["vnffm", "alarm", "update", &alarm_id, "--ack-state", "ACKNOWLEDGED"]).await;
    assert_eq!(again.code, 1, "{again:?}");
    assert!(again.stderr.contains("cannot specify the same value"), "{again:?}");
    let bad = server.solctl(&["vnffm", "alarm", "update", &alarm_id, "--ack-state", "MAYBE"]).await;
    assert_eq!(bad.code, 2, "a usage error: {bad:?}");

    let deleted = server.ok(&["vnffm", "sub", "delete", &sub_id]).await;
    assert!(deleted.stdout.contains("is deleted successfully"), "{deleted:?}");
    let gone = server.solctl(&["vnffm", "sub", "show", &sub_id]).await;
    assert_eq!(gone.code, 1, "{gone:?}");
    assert!(gone.stderr.contains(&format!("FmSubscription {sub_id} not found.")), "{gone:?}");

    // `versions` lists vnffm too.
    let versions = server.ok(&["versions", "-f", "json"]).await.json();
    assert!(versions.as_array().unwrap().iter().any(|row| row["URI Prefix"] == "/vnffm/v1"), "{versions}");
}
