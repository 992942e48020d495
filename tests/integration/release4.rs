//! SOL003 Release 3/4 attributes solgate produces from driver state: `mcioInfo` and
//! `virtualCpInfo` of a Kubernetes VNF (V4.3.1, VNF LCM 2.10.0), the select_depl_mods task
//! (V4.5.1, VNF LCM 2.12.0) and the local VIM's `vipCpInfo` (V3.5.1, VNF LCM 2.1.0). The
//! Kubernetes API server is a wiremock server answering recorded exchanges: the real API's
//! request/response shapes (drivers/tests/fixtures/kubernetes, Kubernetes API reference
//! v1.30), the scaled state inline in the same shapes.
//!
//! Tests reading at 2.10.0 / 2.12.0 need those minors in the schema registry.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use solgate_vnfpkg::testing::CsarBuilder;
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{Reply, TestApp, send};
use crate::lcm_support::{create_instance, task};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const PODS: &str = "/api/v1/namespaces/default/pods";

const VDU1_MANIFEST: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vdu1\n  labels:\n    app: vdu1\n\
spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: vdu1\n  template:\n    metadata:\n      labels:\n        \
app: vdu1\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n---\napiVersion: v1\nkind: Service\n\
metadata:\n  name: vdu1-svc\nspec:\n  selector:\n    app: vdu1\n  ports:\n  - name: http\n    port: 80\n    targetPort: 80\n";
const VDU2_MANIFEST: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: vdu2\n  labels:\n    app: vdu2\n\
spec:\n  replicas: 1\n  serviceName: vdu2\n  selector:\n    matchLabels:\n      app: vdu2\n  template:\n    metadata:\n      \
labels:\n        app: vdu2\n    spec:\n      containers:\n      - name: db\n        image: postgres:16\n";

/// Mounts recorded exchanges (the drivers' fixture format) at `priority` (1 wins over 5).
async fn mount(server: &MockServer, exchanges: &Value, priority: u8) {
    for exchange in exchanges.as_array().unwrap() {
        let request = &exchange["request"];
        let mut mock =
            Mock::given(method(request["method"].as_str().unwrap())).and(path(request["path"].as_str().unwrap()));
        for (key, value) in request["query"].as_object().into_iter().flatten() {
            mock = mock.and(query_param(key.as_str(), value.as_str().unwrap()));
        }
        for key in request["query_absent"].as_array().into_iter().flatten() {
            mock = mock.and(query_param_is_missing(key.as_str().unwrap()));
        }
        let response = &exchange["response"];
        let body = match (&response["body"], &response["body_ndjson"]) {
            (Value::Null, Value::Array(events)) => events.iter().map(|event| format!("{event}\n")).collect(),
            (body, _) => body.to_string(),
        };
        let template = ResponseTemplate::new(u16::try_from(response["status"].as_u64().unwrap()).unwrap())
            .set_body_raw(body, "application/json");
        server.register(mock.respond_with(template).with_priority(priority)).await;
    }
}

async fn mount_fixture(server: &MockServer, name: &str, instance_id: &str) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("drivers/tests/fixtures/kubernetes").join(name);
    let text = std::fs::read_to_string(&file).unwrap().replace("{{instance}}", instance_id);
    let fixture: Value = serde_json::from_str(&text).unwrap();
    mount(server, &fixture["exchanges"], 5).await;
}

fn at(app: &TestApp, method: Method, path: &str, version: &str) -> reqwest::RequestBuilder {
    app.request(method, path).header("Version", version).header("Accept", "application/json")
}

async fn get_at(app: &TestApp, url: &str, version: &str) -> Reply {
    send(app.client.get(url).header("Version", version)).await
}

async fn wait_op_at(app: &TestApp, url: &str, version: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let op = get_at(app, url, version).await.json();
        if matches!(op["operationState"].as_str(), Some("COMPLETED" | "FAILED_TEMP" | "ROLLED_BACK")) {
            return op;
        }
        assert!(Instant::now() < deadline, "operation stuck: {op}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A Kubernetes VNF instantiated (VDU1: Deployment of 2, VDU2: StatefulSet of 1, Service
/// vdu1-svc) and scaled out to 3 VDU1 pods, on recorded exchanges; the instance id.
async fn kubernetes_vnf_scaled(app: &TestApp, server: &MockServer) -> String {
    // VDU1 starts with the two pods of the recorded exchanges.
    let csar = CsarBuilder::sample()
        .descriptor_id(&uuid::Uuid::new_v4().to_string())
        .vdu1_virtual_cp()
        .edit(solgate_vnfpkg::testing::SAMPLE_DF_SIMPLE, |text| {
            text.replacen(
                "            instantiation_level_1:\n              number_of_instances: 1",
                "            instantiation_level_1:\n              number_of_instances: 2",
                1,
            )
        })
        .file("Files/kubernetes/vdu1.yaml", VDU1_MANIFEST)
        .file("Files/kubernetes/vdu2.yaml", VDU2_MANIFEST)
        .to_bytes()
        .unwrap();
    let package_id = app.onboard_package(&csar).await;
    let vnfd_id =
        send(app.request(Method::GET, &format!("/vnfpkgm/v1/vnf_packages/{package_id}"))).await.json()["vnfdId"]
            .as_str()
            .unwrap()
            .to_owned();
    let id = create_instance(app, &vnfd_id, "cnf").await;
    for name in [
        "apply_deployment_service.json",
        "apply_statefulset.json",
        "watch_deployment.json",
        "pods_running.json",
        "read_workloads.json",
    ] {
        mount_fixture(server, name, &id).await;
    }
    let body = json!({
        "flavourId": "simple",
        "vimConnectionInfo": {"k8s": {"vimId": "8a3adb69-0784-43c7-833e-aab0b6ab4470",
            "vimType": "ETSINFV.KUBERNETES.V_1", "interfaceInfo": {"endpoint": server.uri()},
            "accessInfo": {"bearer_token": "sa-token"}}},
        "additionalParams": {"lcm-kubernetes-def-files": ["Files/kubernetes/vdu1.yaml", "Files/kubernetes/vdu2.yaml"]}
    });
    let op = wait_op_at(app, &task(app, &id, "instantiate", body).await, "2.0.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");

    // The cluster after the scale: three pods, the Deployment wants and has three.
    let pod = |name: &str, created: &str| {
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "default",
            "uid": format!("uid-{name}"), "creationTimestamp": created, "labels": {"app": "vdu1"}},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
    };
    let deployment = |generation: u32| {
        json!({"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "vdu1", "namespace": "default", "generation": generation, "resourceVersion": "2100"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "vdu1"}},
                "template": {"metadata": {"labels": {"app": "vdu1"}}}},
            "status": {"observedGeneration": generation, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
                "availableReplicas": 3}})
    };
    let scaled = json!([
        {"request": {"method": "PATCH", "path": format!("{DEPLOYMENTS}/vdu1/scale")},
         "response": {"status": 200, "body": {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": "vdu1", "namespace": "default"}, "spec": {"replicas": 3}, "status": {"replicas": 3}}}},
        {"request": {"method": "PATCH", "path": "/apis/apps/v1/namespaces/default/statefulsets/vdu2/scale"},
         "response": {"status": 200, "body": {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": "vdu2", "namespace": "default"}, "spec": {"replicas": 1}, "status": {"replicas": 1}}}},
        {"request": {"method": "GET", "path": DEPLOYMENTS, "query": {"fieldSelector": "metadata.name=vdu1"},
            "query_absent": ["watch"]},
         "response": {"status": 200, "body": {"kind": "DeploymentList", "apiVersion": "apps/v1",
            "metadata": {"resourceVersion": "2100"}, "items": [deployment(2)]}}},
        {"request": {"method": "GET", "path": format!("{DEPLOYMENTS}/vdu1")},
         "response": {"status": 200, "body": deployment(2)}},
        {"request": {"method": "GET", "path": PODS, "query": {"labelSelector": "app=vdu1"}, "query_absent": ["watch"]},
         "response": {"status": 200, "body": {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "2101"},
            "items": [pod("vdu1-5d4b9c8f7d-8kx2p", "2026-11-22T03:00:01Z"), pod("vdu1-5d4b9c8f7d-q7wzn", "2026-11-22T03:00:02Z"),
                pod("vdu1-5d4b9c8f7d-z9d4h", "2026-11-22T03:30:00Z")]}}}
    ]);
    mount(server, &scaled, 1).await;
    let op = task(app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})).await;
    let op = wait_op_at(app, &op, "2.0.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    id
}

fn stored_instance(app: &TestApp, id: &str) -> Value {
    let database = app.database();
    let mut conn = database.conn().unwrap();
    solgate_db::repo::lcm::find_instance(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, id).unwrap().unwrap().body
}

fn deployment_mcio(info: &Value) -> &Value {
    info["mcioInfo"]
        .as_array()
        .and_then(|list| list.iter().find(|m| m["mcioId"] == "Deployment/vdu1"))
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn kubernetes_mcio_info_is_stored_after_scale_and_absent_under_2_0_0() {
    let app = TestApp::spawn().await;
    let server = MockServer::start().await;
    let id = kubernetes_vnf_scaled(&app, &server).await;

    let stored = stored_instance(&app, &id);
    let mcio = deployment_mcio(&stored["instantiatedVnfInfo"]);
    assert_eq!(
        (mcio["desiredInstances"].as_u64(), mcio["availableInstances"].as_u64()),
        (Some(3), Some(3)),
        "{stored}"
    );
    assert_eq!(mcio["cismId"], "8a3adb69-0784-43c7-833e-aab0b6ab4470");
    assert_eq!(stored["instantiatedVnfInfo"]["virtualCpInfo"][0]["cpdId"], "VDU1_VCP");

    // SOL003 V3.3.1 has neither attribute: a 2.0.0 client never sees them.
    let shown = get_at(&app, &format!("{}/vnflcm/v2/vnf_instances/{id}", app.address), "2.0.0").await.json();
    assert_eq!(shown["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap().len(), 4, "{shown}");
    assert!(shown["instantiatedVnfInfo"].get("mcioInfo").is_none(), "{shown}");
    assert!(shown["instantiatedVnfInfo"].get("virtualCpInfo").is_none(), "{shown}");
}

/// Needs VNF LCM 2.10.0 in the registry.
#[tokio::test]
async fn kubernetes_mcio_info_shows_desired_and_available_instances_at_2_10_0() {
    let app = TestApp::spawn().await;
    let server = MockServer::start().await;
    let id = kubernetes_vnf_scaled(&app, &server).await;

    let reply = get_at(&app, &format!("{}/vnflcm/v2/vnf_instances/{id}", app.address), "2.10.0").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.header("version"), Some("2.10.0"));
    let info = &reply.json()["instantiatedVnfInfo"];
    assert_eq!(
        *deployment_mcio(info),
        json!({"mcioId": "Deployment/vdu1", "mcioName": "vdu1", "mcioNamespace": "default", "vduId": "VDU1",
            "cismId": "8a3adb69-0784-43c7-833e-aab0b6ab4470", "mcioType": "Deployment",
            "desiredInstances": 3, "availableInstances": 3})
    );
    let cp = &info["virtualCpInfo"][0];
    assert_eq!((cp["cpInstanceId"].as_str(), cp["cpdId"].as_str()), (Some("vdu1-svc"), Some("VDU1_VCP")));
    assert_eq!(cp["vduIds"], json!(["VDU1"]));
}

/// A local-VIM instance of a package with two deployable modules, instantiated with none
/// selected; (instance id, vnfdId).
async fn modular_instance(app: &TestApp) -> String {
    let vnfd_id = crate::lcm_support::install_package(app, CsarBuilder::sample().two_deployable_modules());
    let id = create_instance(app, &vnfd_id, "modular").await;
    let op = wait_op_at(app, &task(app, &id, "instantiate", json!({"flavourId": "simple"})).await, "2.0.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    id
}

fn vnfcs_of(instance: &Value, vdu: &str) -> usize {
    instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["vduId"] == vdu)
        .count()
}

#[tokio::test]
async fn select_depl_mods_is_no_resource_before_2_12_0_and_modules_start_unselected() {
    let app = TestApp::spawn().await;
    let id = modular_instance(&app).await;
    // IFA011 7.1.8.24: a module's VNFCs exist only once it is selected.
    let stored = stored_instance(&app, &id);
    assert_eq!((vnfcs_of(&stored, "VDU1"), vnfcs_of(&stored, "VDU2")), (0, 0), "{stored}");

    let path = format!("/vnflcm/v2/vnf_instances/{id}/select_depl_mods");
    let reply =
        send(at(&app, Method::POST, &path, "2.0.0").json(&json!({"selectedDeployableModule": ["front_module"]}))).await;
    assert_eq!(reply.status, 404, "{}", reply.text);
    assert!(reply.problem(404).contains("could not be found"), "{}", reply.text);
    assert_eq!(vnfcs_of(&stored_instance(&app, &id), "VDU1"), 0, "nothing ran");
}

/// Needs VNF LCM 2.12.0 in the registry.
#[tokio::test]
async fn select_depl_mods_deploys_the_selected_modules_and_removes_the_others_at_2_12_0() {
    let app = TestApp::spawn().await;
    let id = modular_instance(&app).await;
    let path = format!("/vnflcm/v2/vnf_instances/{id}/select_depl_mods");
    let select = |modules: Value| {
        send(at(&app, Method::POST, &path, "2.12.0").json(&json!({"selectedDeployableModule": modules})))
    };

    let reply = select(json!(["front_module"])).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op = wait_op_at(&app, reply.header("location").unwrap(), "2.12.0").await;
    assert_eq!(
        (op["operationState"].as_str(), op["operation"].as_str()),
        (Some("COMPLETED"), Some("SELECT_DEPL_MODS")),
        "{op}"
    );
    let added: Vec<&Value> = op["resourceChanges"]["affectedVnfcs"].as_array().unwrap().iter().collect();
    assert!(added.len() == 1 && added[0]["vduId"] == "VDU1" && added[0]["changeType"] == "ADDED", "{op}");
    let instance = get_at(&app, &format!("{}/vnflcm/v2/vnf_instances/{id}", app.address), "2.12.0").await.json();
    assert_eq!(instance["instantiatedVnfInfo"]["selectedDeployableModule"], json!(["front_module"]));
    assert_eq!((vnfcs_of(&instance, "VDU1"), vnfcs_of(&instance, "VDU2")), (1, 0));

    // The other module instead: VDU1's VNFC goes, VDU2 gets one.
    let reply = select(json!(["back_module"])).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op = wait_op_at(&app, reply.header("location").unwrap(), "2.12.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let instance = get_at(&app, &format!("{}/vnflcm/v2/vnf_instances/{id}", app.address), "2.12.0").await.json();
    assert_eq!((vnfcs_of(&instance, "VDU1"), vnfcs_of(&instance, "VDU2")), (0, 1));
    assert_eq!(instance["instantiatedVnfInfo"]["selectedDeployableModule"], json!(["back_module"]));

    // Refusals: no module named (400), an unknown module (400).
    assert_eq!(select(json!([])).await.status, 400);
    let reply = send(at(&app, Method::POST, &path, "2.12.0").json(&json!({}))).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert!(select(json!(["nope"])).await.problem(400).contains("nope"));
}

/// Needs VNF LCM 2.12.0 in the registry.
#[tokio::test]
async fn select_depl_mods_refuses_a_vnfd_without_modules_and_an_instance_not_instantiated() {
    let app = TestApp::spawn().await;
    let vnfd_id = crate::lcm_support::install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "plain").await;
    let path = format!("/vnflcm/v2/vnf_instances/{id}/select_depl_mods");
    let body = json!({"selectedDeployableModule": ["front_module"]});
    let reply = send(at(&app, Method::POST, &path, "2.12.0").json(&body)).await;
    assert_eq!(reply.status, 409, "NOT_INSTANTIATED: {}", reply.text);
    let op = wait_op_at(&app, &task(&app, &id, "instantiate", json!({"flavourId": "simple"})).await, "2.0.0").await;
    assert_eq!(op["operationState"], "COMPLETED");
    let reply = send(at(&app, Method::POST, &path, "2.12.0").json(&body)).await;
    assert!(reply.problem(409).contains("declares no deployable modules"), "{}", reply.text);
}

/// The instantiate of a Kubernetes VNF adds its Service as a virtual CP: the occurrence and
/// its RESULT notification say so (`affectedVirtualCps`, V4.3.1) to a subscriber of 2.12.0,
/// and a subscriber of 2.0.0 gets the same notification without any Release 4 attribute.
#[tokio::test]
async fn kubernetes_notifications_carry_release_4_attributes_only_for_release_4_subscribers() {
    use crate::notifications::Receiver;

    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(crate::notifications::quick).await;
    for (version, path) in [("2.0.0", "/r3"), ("2.12.0", "/r4")] {
        let body = json!({"callbackUri": receiver.url(path),
            "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}});
        let reply = send(at(&app, Method::POST, "/vnflcm/v2/subscriptions", version).json(&body)).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }
    let server = MockServer::start().await;
    let id = kubernetes_vnf_scaled(&app, &server).await;

    let ops = send(at(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs?all_fields", "2.12.0")).await.json();
    let instantiate = ops.as_array().unwrap().iter().find(|op| op["operation"] == "INSTANTIATE").unwrap();
    assert_eq!(
        instantiate["affectedVirtualCps"],
        json!([{"cpInstanceId": "vdu1-svc", "cpdId": "VDU1_VCP", "changeType": "ADDED"}]),
        "{instantiate}"
    );
    let older = send(at(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs?all_fields", "2.0.0")).await.json();
    assert!(older.as_array().unwrap().iter().all(|op| op.get("affectedVirtualCps").is_none()), "{older}");

    // START, PROCESSING and RESULT of the instantiate and of the scale, on both.
    let within = Duration::from_secs(20);
    let r4 = receiver.wait_delivered("/r4", 6, within).await;
    let r3 = receiver.wait_delivered("/r3", 6, within).await;
    let result_of = |received: &[crate::notifications::Received]| {
        received
            .iter()
            .map(|r| r.body.clone())
            .find(|body| body["operation"] == "INSTANTIATE" && body["operationState"] == "COMPLETED")
            .unwrap()
    };
    let (newer, older) = (result_of(&r4), result_of(&r3));
    assert_eq!(newer["vnfInstanceId"], id.as_str());
    assert_eq!(newer["affectedVirtualCps"], instantiate["affectedVirtualCps"], "{newer}");
    assert!(r4.iter().all(|r| r.header("version") == Some("2.12.0")));
    assert!(older.get("affectedVirtualCps").is_none(), "{older}");
    assert!(r3.iter().all(|r| r.header("version") == Some("2.0.0")));
    // Apart from what Release 4 adds (and the ids of the two deliveries), the bodies agree.
    let strip = |mut body: Value| {
        for key in ["id", "subscriptionId", "_links", "affectedVirtualCps", "timeStamp"] {
            body.as_object_mut().unwrap().remove(key);
        }
        body
    };
    assert_eq!(strip(newer), strip(older));
}

/// SOL003 V3.5.1 (VNF LCM 2.1.0) VipCps on the local VIM: the instance shows the VipCp's
/// address (the last host of internalVL1's 192.168.10.0/24) and the VNFC CPs sharing it; the
/// occurrences say when it was added, changed (a scale-out adds a sharing CP) and removed.
/// Under 2.0.0, which has neither attribute, both are left out; so in the RESULT notification.
#[tokio::test]
async fn vip_cps_show_their_address_and_sharing_cps_from_2_1_0_on() {
    use crate::notifications::Receiver;

    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(crate::notifications::quick).await;
    for (version, path) in [("2.0.0", "/old"), ("2.1.0", "/new")] {
        let body = json!({"callbackUri": receiver.url(path),
            "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}});
        let reply = send(at(&app, Method::POST, "/vnflcm/v2/subscriptions", version).json(&body)).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }
    let vnfd_id = crate::lcm_support::install_package(&app, CsarBuilder::sample().internal_vip_cp());
    let id = create_instance(&app, &vnfd_id, "vip").await;
    let instantiate = task(&app, &id, "instantiate", json!({"flavourId": "simple"})).await;
    let op = wait_op_at(&app, &instantiate, "2.1.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");

    let path = format!("/vnflcm/v2/vnf_instances/{id}");
    let instance = send(at(&app, Method::GET, &path, "2.1.0")).await.json();
    let info = &instance["instantiatedVnfInfo"];
    let sharing = |info: &Value| -> Vec<String> {
        let mut ids: Vec<String> = info["vnfcResourceInfo"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|vnfc| vnfc["vnfcCpInfo"].as_array().unwrap().iter())
            .filter(|cp| cp["cpdId"] == "VDU1_CP2" || cp["cpdId"] == "VDU2_CP1")
            .map(|cp| cp["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    let vips = info["vipCpInfo"].as_array().unwrap_or_else(|| panic!("{info}"));
    assert_eq!(vips.len(), 1, "{info}");
    let vip = &vips[0];
    assert_eq!(vip["cpdId"], "VIP_CP");
    assert_eq!(
        vip["cpProtocolInfo"],
        json!([{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {
            "ipAddresses": [{"type": "IPV4", "addresses": ["192.168.10.254"], "isDynamic": true}]}}])
    );
    let mut associated: Vec<String> =
        vip["associatedVnfcCpIds"].as_array().unwrap().iter().map(|id| id.as_str().unwrap().to_owned()).collect();
    associated.sort();
    assert_eq!(associated, sharing(info));
    assert_eq!(associated.len(), 2, "one VDU1 and one VDU2 VNFC: {info}");
    let vip_id = vip["cpInstanceId"].clone();
    let added = json!([{"cpInstanceId": vip_id, "cpdId": "VIP_CP", "changeType": "ADDED"}]);
    assert_eq!(op["affectedVipCps"], added, "{op}");

    let older = send(at(&app, Method::GET, &path, "2.0.0")).await.json();
    assert!(older["instantiatedVnfInfo"].get("vipCpInfo").is_none(), "{older}");
    assert!(older["instantiatedVnfInfo"]["vnfcResourceInfo"].is_array());
    let older_op = wait_op_at(&app, &instantiate, "2.0.0").await;
    assert!(older_op.get("affectedVipCps").is_none(), "{older_op}");
    // START, PROCESSING and RESULT of the instantiate, to each subscriber.
    let within = Duration::from_secs(20);
    let result_of = |received: Vec<crate::notifications::Received>| {
        received.into_iter().map(|r| r.body).find(|body| body["operationState"] == "COMPLETED").unwrap()
    };
    let newer = result_of(receiver.wait_delivered("/new", 3, within).await);
    assert_eq!(newer["affectedVipCps"], added, "{newer}");
    let older = result_of(receiver.wait_delivered("/old", 3, within).await);
    assert!(older.get("affectedVipCps").is_none(), "{older}");

    // A second VDU1 VNFC shares the address too.
    let scale = task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})).await;
    let op = wait_op_at(&app, &scale, "2.1.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(op["affectedVipCps"], json!([{"cpInstanceId": vip_id, "cpdId": "VIP_CP", "changeType": "MODIFIED"}]));
    let info = send(at(&app, Method::GET, &path, "2.1.0")).await.json()["instantiatedVnfInfo"].clone();
    assert_eq!(info["vipCpInfo"][0]["associatedVnfcCpIds"].as_array().unwrap().len(), 3, "{info}");
    assert_eq!(info["vipCpInfo"][0]["cpInstanceId"], vip_id, "the same VipCp instance");

    let terminate = task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await;
    let op = wait_op_at(&app, &terminate, "2.1.0").await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(op["affectedVipCps"], json!([{"cpInstanceId": vip_id, "cpdId": "VIP_CP", "changeType": "REMOVED"}]));
}

/// SELECT_DEPL_MODS is an operation type only 2.12.0 defines: a client of an earlier minor
/// never meets its occurrence (left out of the list, 406 when read) and a subscriber of an
/// earlier minor is not sent its notifications, while it still gets the instantiate's.
#[tokio::test]
async fn a_select_depl_mods_occurrence_is_never_shown_to_an_earlier_minor() {
    use crate::notifications::Receiver;

    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(crate::notifications::quick).await;
    for (version, path) in [("2.10.0", "/older"), ("2.12.0", "/newer")] {
        let body = json!({"callbackUri": receiver.url(path),
            "filter": {"notificationTypes": ["VnfLcmOperationOccurrenceNotification"]}});
        let reply = send(at(&app, Method::POST, "/vnflcm/v2/subscriptions", version).json(&body)).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }
    let id = modular_instance(&app).await;
    let path = format!("/vnflcm/v2/vnf_instances/{id}/select_depl_mods");
    let reply =
        send(at(&app, Method::POST, &path, "2.12.0").json(&json!({"selectedDeployableModule": ["front_module"]})))
            .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op_url = reply.header("location").unwrap().to_owned();
    assert_eq!(wait_op_at(&app, &op_url, "2.12.0").await["operationState"], "COMPLETED");

    let operations = |list: Value| -> Vec<String> {
        list.as_array().unwrap().iter().map(|op| op["operation"].as_str().unwrap().to_owned()).collect()
    };
    let newer = send(at(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs", "2.12.0")).await.json();
    let mut seen = operations(newer);
    seen.sort();
    assert_eq!(seen, ["INSTANTIATE", "SELECT_DEPL_MODS"]);
    let older = send(at(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs", "2.10.0")).await.json();
    assert_eq!(operations(older), ["INSTANTIATE"]);
    let reply = get_at(&app, &op_url, "2.10.0").await;
    assert!(reply.problem(406).contains("SELECT_DEPL_MODS"), "{}", reply.text);

    // START, PROCESSING and RESULT of both operations for 2.12.0; only the instantiate's for 2.10.0.
    let newer = receiver.wait_delivered("/newer", 6, Duration::from_secs(20)).await;
    assert_eq!(newer.iter().filter(|r| r.body["operation"] == "SELECT_DEPL_MODS").count(), 3);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let older = receiver.posts("/older");
    assert_eq!(older.len(), 3, "{:?}", older.iter().map(|r| &r.body).collect::<Vec<_>>());
    assert!(older.iter().all(|r| r.body["operation"] == "INSTANTIATE"));
}
