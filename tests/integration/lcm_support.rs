//! Helpers for the VNF LCM tests: an onboarded package, v2 requests, waiting for an
//! operation occurrence to settle.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_vnfpkg::testing::CsarBuilder;

use crate::helpers::{Reply, TestApp, send};

/// Puts an onboarded, ENABLED copy of the sample package (fresh vnfdId) straight into the
/// database; returns its vnfdId. (The package API's own tests onboard over HTTP.)
pub fn install_sample_package(app: &TestApp) -> String {
    install_package(app, CsarBuilder::sample())
}

/// As [`install_sample_package`], for a package built by `builder` (given a fresh vnfdId).
pub fn install_package(app: &TestApp, builder: CsarBuilder) -> String {
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let csar = builder.descriptor_id(&vnfd_id).to_tempfile().unwrap();
    let contents = solgate_vnfpkg::inspect(csar.path(), &solgate_vnfpkg::Limits::default()).unwrap();
    let id = uuid::Uuid::new_v4().to_string();
    let now = solgate_db::repo::now_text();
    let vnfd = &contents.vnfd;
    let record = PackageRecord {
        id: id.clone(),
        body: json!({
            "id": id, "onboardingState": "ONBOARDED", "operationalState": "ENABLED", "usageState": "NOT_IN_USE",
            "vnfdId": vnfd.descriptor_id, "vnfProvider": vnfd.provider, "vnfProductName": vnfd.product_name,
            "vnfSoftwareVersion": vnfd.software_version, "vnfdVersion": vnfd.descriptor_version,
        }),
        vnfd: Some(serde_json::to_value(&contents).unwrap()),
        upload_source: None,
        created_at: now.clone(),
        updated_at: now,
        row_version: 0,
        project: String::new(),
    };
    let database = app.database();
    let mut conn = database.conn().unwrap();
    vnf_packages::insert(&mut conn, &record).unwrap();
    vnf_packages::refresh_usage_state(&mut conn, &id).unwrap();
    vnfd_id
}

pub fn package_usage(app: &TestApp, vnfd_id: &str) -> String {
    let database = app.database();
    let mut conn = database.conn().unwrap();
    vnf_packages::find_by_vnfd_id(&mut conn, vnfd_id).unwrap().unwrap().usage_state().to_owned()
}

pub fn v2(app: &TestApp, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.request(method, path).header("Version", "2.0.0").header("Accept", "application/json")
}

/// Creates an instance of the package; returns its id.
pub async fn create_instance(app: &TestApp, vnfd_id: &str, name: &str) -> String {
    let reply = send(
        v2(app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": name})),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.json()["id"].as_str().unwrap().to_owned()
}

/// POSTs a task; asserts 202 and returns the occurrence URL (Location).
pub async fn task(app: &TestApp, instance_id: &str, task: &str, body: Value) -> String {
    let reply =
        send(v2(app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{instance_id}/{task}")).json(&body)).await;
    assert_eq!(reply.status, 202, "{task}: {}", reply.text);
    assert!(reply.text.is_empty(), "202 has an empty body");
    assert_eq!(reply.header("content-type"), None, "no Content-Type on an empty body");
    reply.header("location").expect("202 carries Location").to_owned()
}

/// GET an absolute URL; v2 resources get `Version: 2.0.0`, v1 ones none (as Release-2
/// clients send).
pub async fn get(app: &TestApp, url: &str) -> Reply {
    let request = app.client.get(url);
    let request = if url.contains("/vnflcm/v2/") { request.header("Version", "2.0.0") } else { request };
    send(request).await
}

/// Polls an occurrence until it is in one of `states` (20 s at most).
pub async fn wait_op(app: &TestApp, url: &str, states: &[&str]) -> Value {
    wait_op_after(app, url, states, "").await
}

/// As [`wait_op`], for a state entered after `since` (a previous `stateEnteredTime`):
/// after a retry or rollback request the occurrence is still in its old state for a while.
pub async fn wait_op_after(app: &TestApp, url: &str, states: &[&str], since: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let op = get(app, url).await.json();
        if states.contains(&op["operationState"].as_str().unwrap_or_default())
            && op["stateEnteredTime"].as_str().unwrap_or_default() > since
        {
            return op;
        }
        assert!(Instant::now() < deadline, "operation stuck: {op}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

pub async fn show_instance(app: &TestApp, id: &str) -> Value {
    let reply = send(v2(app, Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json()
}

pub fn vnfc_count(instance: &Value, vdu: &str) -> usize {
    instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .map(|list| list.iter().filter(|vnfc| vnfc["vduId"] == vdu).count())
        .unwrap_or(0)
}

pub fn instantiate_body() -> Value {
    json!({"flavourId": "simple"})
}

/// An instantiate of `instance_id` accepted straight in the database (no work message is
/// sent) and claimed by a conductor that no longer exists, as if it died right after its
/// claim; `orphan` may change the occurrence before it is stored (what the dead conductor
/// had recorded). Returns the occurrence's URL.
pub fn orphaned_instantiate_of(
    app: &TestApp,
    instance_id: &str,
    orphan: impl FnOnce(&mut solgate_db::repo::lcm::OpOccRecord),
) -> String {
    use solgate_core::operation::LcmOperation;
    use solgate_core::requests::{self, TaskRequest};
    use solgate_db::repo::lcm::{self, LcmMajor};

    let database = app.database();
    let mut conn = database.conn().unwrap();
    let links = solgate_core::links::Links::new(&app.address);
    let params = json!({"flavourId": "simple"});
    let vim_types = [solgate_drivers::infra::VIM_TYPE_LOCAL];
    let accepted = requests::accept(
        &mut conn,
        &TaskRequest {
            major: LcmMajor::V2,
            operation: LcmOperation::Instantiate,
            instance_id,
            params: &params,
            shapes: solgate_core::shapes::for_major(LcmMajor::V2),
            vim_types: &vim_types,
            links: &links,
            scope: None,
            if_match: None,
            automatic: false,
        },
    )
    .unwrap();
    let mut op = accepted.op;
    op.owner = Some("conductor-that-died".into());
    op.lease_expires_at = Some(solgate_db::repo::now_text());
    op.pending_action = None;
    orphan(&mut op);
    assert!(lcm::update_op_guarded(&mut conn, LcmMajor::V2, &op, None, "STARTING").unwrap());
    solgate_db::repo::outbox::complete(&mut conn, &op.id).unwrap();
    format!("{}/vnflcm/v2/vnf_lcm_op_occs/{}", app.address, op.id)
}
