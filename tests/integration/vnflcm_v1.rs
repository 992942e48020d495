//! VNF LCM v1 (API 1.3.0, SOL003 v2.6.1) beside v2: its own tables and shapes, the
//! Release-2 client quirks, and `solgate migrate-v1-to-v2`.

use std::process::Command;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Db, TestApp, send};
use crate::lcm_support::{install_sample_package, wait_op, wait_op_after};

/// A v1 request as python-tackerclient sends it: no `Version` header at all.
fn v1(app: &TestApp, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.request(method, &format!("/vnflcm/v1{path}")).header("Accept", "application/json")
}

async fn v1_task(app: &TestApp, id: &str, task: &str, body: Value) -> String {
    let reply = send(v1(app, Method::POST, &format!("/vnf_instances/{id}/{task}")).json(&body)).await;
    assert_eq!(reply.status, 202, "{task}: {}", reply.text);
    let location = reply.header("location").unwrap().to_owned();
    assert!(location.contains("/vnflcm/v1/vnf_lcm_op_occs/"), "{location}");
    location
}

async fn v1_create(app: &TestApp, vnfd_id: &str, name: &str) -> String {
    let reply =
        send(v1(app, Method::POST, "/vnf_instances").json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": name}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.json()["id"].as_str().unwrap().to_owned()
}

fn v1_instantiate() -> Value {
    json!({"flavourId": "simple", "vimConnectionInfo": [{
        "id": "vim1", "vimType": "SOLGATE.LOCAL.V_1", "accessInfo": {"username": "admin", "password": "v1-sekrit"}
    }]})
}

macro_rules! on_both_databases {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test] async fn $scenario() { super::$scenario(super::Db::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $scenario() { super::$scenario(super::Db::Postgres).await })*
        }
    };
}

on_both_databases!(v1_instance_flow_beside_v2);

async fn v1_instance_flow_beside_v2(db: Db) {
    let Some(app) = TestApp::spawn_on(db, |_| {}).await else { return };
    let vnfd_id = install_sample_package(&app);
    let reply =
        send(v1(&app, Method::POST, "/vnf_instances").json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": "r2"}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.header("version"), Some("1.3.0"), "no Version asked: the newest v1 minor answers");
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    assert!(reply.header("location").unwrap().ends_with(&format!("/vnflcm/v1/vnf_instances/{id}")));

    // Per-major resources: a v1 instance is not a v2 one.
    let reply =
        send(app.request(Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 404);

    let op = v1_task(&app, &id, "instantiate", v1_instantiate()).await;
    let op = wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let instance = send(v1(&app, Method::GET, &format!("/vnf_instances/{id}"))).await.json();
    assert_eq!(instance["instantiationState"], "INSTANTIATED");
    // SOL003 v2.6.1 shape: vimConnectionInfo is an array; no v3-only attributes.
    assert_eq!(instance["vimConnectionInfo"][0]["id"], "vim1");
    assert_eq!(instance["vimConnectionInfo"][0]["accessInfo"], json!({"username": "admin"}), "password scrubbed");
    assert!(instance["instantiatedVnfInfo"].get("maxScaleLevels").is_none(), "maxScaleLevels is v3.x only");
    assert_eq!(instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap().len(), 2);

    let op = v1_task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let op = v1_task(&app, &id, "heal", json!({"cause": "test"})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    // change_vnfpkg does not exist in SOL003 v2.6.1.
    let reply =
        send(v1(&app, Method::POST, &format!("/vnf_instances/{id}/change_vnfpkg")).json(&json!({"vnfdId": vnfd_id})))
            .await;
    assert_eq!(
        reply.problem(404),
        format!("The resource /vnflcm/v1/vnf_instances/{id}/change_vnfpkg could not be found.")
    );

    // python-tackerclient's `op list --exclude-fields operationParams` (hyphen), no Version.
    let reply = send(v1(
        &app,
        Method::GET,
        "/vnf_lcm_op_occs?exclude-fields=operationParams&filter=%28eq%2CoperationState%2CCOMPLETED%29",
    ))
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let ops = reply.json();
    assert_eq!(ops.as_array().unwrap().len(), 3);
    assert!(ops.as_array().unwrap().iter().all(|op| op.get("operationParams").is_none()));
    // The v2 list does not see v1 occurrences.
    let v2_ops = send(app.request(Method::GET, "/vnflcm/v2/vnf_lcm_op_occs").header("Version", "2.0.0")).await.json();
    assert!(v2_ops.as_array().unwrap().is_empty());
    // retry/rollback/fail without Content-Type and without body, as the client sends them.
    let op_id = ops[0]["id"].as_str().unwrap();
    let reply = send(v1(&app, Method::POST, &format!("/vnf_lcm_op_occs/{op_id}/fail"))).await;
    assert_eq!(reply.problem(409), format!("LCM operation {op_id} not FAILED_TEMP."));

    let op = v1_task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await;
    assert_eq!(wait_op(&app, &op, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let reply = send(v1(&app, Method::DELETE, &format!("/vnf_instances/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
}

fn run_migration(app: &TestApp, dry_run: bool) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_solgate"));
    command.arg("migrate-v1-to-v2").arg("--data-dir").arg(&app.data_dir).env("SOLGATE_DATABASE_URL", &app.database_url);
    if dry_run {
        command.arg("--dry-run");
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn migrate_v1_to_v2_dry_run_then_copy_idempotently() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let idle = v1_create(&app, &vnfd_id, "idle").await;
    let running = v1_create(&app, &vnfd_id, "running").await;
    let op = v1_task(&app, &running, "instantiate", v1_instantiate()).await;
    wait_op(&app, &op, &["COMPLETED"]).await;
    let stuck = v1_create(&app, &vnfd_id, "stuck").await;
    let mut body = v1_instantiate();
    body["additionalParams"] = json!({"localVim": {"failAt": "create_vnfc"}});
    let op = v1_task(&app, &stuck, "instantiate", body).await;
    wait_op(&app, &op, &["FAILED_TEMP"]).await;

    let report = run_migration(&app, true);
    assert!(report.contains("3 v1 VNF instance(s) (dry run, nothing changed)"), "{report}");
    assert!(report.lines().any(|l| l.contains(&idle) && l.contains("would copy with 0 operation")), "{report}");
    assert!(report.lines().any(|l| l.contains(&running) && l.contains("would copy with 1 operation")), "{report}");
    assert!(
        report.lines().any(|l| l.contains(&stuck) && l.contains("skipped: operation INSTANTIATE is FAILED_TEMP")),
        "{report}"
    );
    let v2 = |path: String| send(app.request(Method::GET, &path).header("Version", "2.0.0"));
    assert_eq!(v2(format!("/vnflcm/v2/vnf_instances/{running}")).await.status, 404, "a dry run changes nothing");

    let report = run_migration(&app, false);
    assert!(report.lines().any(|l| l.contains(&running) && l.contains("copied with 1 operation")), "{report}");
    let instance = v2(format!("/vnflcm/v2/vnf_instances/{running}")).await;
    assert_eq!(instance.status, 200, "{}", instance.text);
    let instance = instance.json();
    assert_eq!(instance["instantiationState"], "INSTANTIATED");
    assert_eq!(instance["vimConnectionInfo"]["vim1"]["vimType"], "SOLGATE.LOCAL.V_1", "v2 shape: a map by id");
    assert_eq!(v2(format!("/vnflcm/v2/vnf_instances/{idle}")).await.status, 200);
    assert_eq!(v2(format!("/vnflcm/v2/vnf_instances/{stuck}")).await.status, 404);
    let ops = v2(format!("/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,{running})")).await.json();
    assert_eq!(ops.as_array().unwrap().len(), 1);
    assert!(ops[0]["operationParams"].is_null() || ops[0].get("operationParams").is_none());

    // The migrated instance works through v2: terminate it there.
    let reply = send(
        app.request(Method::POST, &format!("/vnflcm/v2/vnf_instances/{running}/terminate"))
            .header("Version", "2.0.0")
            .json(&json!({"terminationType": "FORCEFUL"})),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op = reply.header("location").unwrap().to_owned();
    let op = wait_op_after(&app, &op, &["COMPLETED", "FAILED_TEMP"], "").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");

    // Again: nothing new.
    let report = run_migration(&app, false);
    assert!(report.lines().filter(|l| l.contains("already in v2, unchanged")).count() == 2, "{report}");
    assert!(report.lines().any(|l| l.contains(&stuck) && l.contains("skipped")), "{report}");
}
