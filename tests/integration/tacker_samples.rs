//! Tacker's own sample packages (`drivers/tests/fixtures/tacker-samples`, unchanged) onboarded
//! over the package API and run through their life cycle with Tacker's requests
//! (`tacker/tests/functional/sol_kubernetes_v2/paramgen.py`):
//! - `test_helm_instantiate` on an `ETSINFV.HELM.V_3` VIM (`helm_instantiate`,
//!   `helm_scale_out`, a heal, `helm_terminate`);
//! - `test_change_vnf_pkg_with_deployment` on an `ETSINFV.KUBERNETES.V_1` VIM
//!   (`change_vnfpkg_instantiate`, a scale out, a heal, `change_vnfpkg_terminate`), then the
//!   same VIM registered without its CA;
//! - the LCM operation user data class of `basic_lcms_max` (`UserData/userdata.py`) in an
//!   OpenStack VNF (`ETSINFV.OPENSTACK_KEYSTONE.V_3`) on the recorded Keystone and Heat
//!   exchanges of `drivers/tests/fixtures/openstack`: instantiate, scale out, scale in, heal
//!   of one VNFC, terminate.
//!
//! Every VIM is reached over HTTPS only: each wiremock server (the Kubernetes API in the
//! shapes of the API reference v1.30, Keystone and Heat as recorded) sits behind the drivers'
//! `TlsFront` (drivers/tests/integration/tls_front.rs), whose certificate a test CA issued,
//! and the VIM connection trusts that CA as a user registers it (`interfaceInfo.ssl_ca_cert`
//! for Kubernetes and Helm, `interfaceInfo.trustedCertificates` for OpenStack). The URLs the
//! answers carry (Keystone's catalog, Heat's links) lead back through the front. No cluster
//! and no helm run here: `helm` is the stand-in of `drivers/tests/fixtures/helm` (answers as
//! helm 3 does, records its calls and the kubeconfig and CA it was given).

use std::path::PathBuf;

use reqwest::Method;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{TestApp, send};
use crate::lcm_support::{create_instance, show_instance, task, v2, vnfc_count, wait_op};
use crate::tls_front::TlsFront;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("drivers/tests/fixtures")
}

/// The fake `helm` in a temporary directory, with its recorded calls.
struct FakeHelm(tempfile::TempDir);

impl FakeHelm {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = std::fs::read_to_string(fixtures().join("helm/fake_helm.py")).unwrap();
        let helm = dir.path().join("helm");
        std::fs::write(
            &helm,
            format!("#!/usr/bin/env python3\n{}", script.replace("@STATE_DIR@", &dir.path().display().to_string())),
        )
        .unwrap();
        std::fs::set_permissions(&helm, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::copy(fixtures().join("helm/test-chart-manifest.yaml"), dir.path().join("manifest.yaml")).unwrap();
        Self(dir)
    }

    /// The calls so far, as recorded.
    fn calls(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.0.path().join("calls.jsonl")).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str::<Value>(line).unwrap()).collect()
    }

    /// The verbs run so far (`get` for `get manifest`).
    fn verbs(&self) -> Vec<String> {
        self.calls().iter().map(|call| call["argv"][0].as_str().unwrap().to_owned()).collect()
    }

    fn last_values(&self) -> Value {
        self.calls().iter().rev().find_map(|c| c.get("values").cloned()).unwrap()
    }
}

/// The id of the VNFC on `resource_id` (a pod, a server): its `vnfcResourceInfo` id, the
/// VNFC id SOL003 shows and a heal request names (`vnfcInstanceId`).
fn vnfc_id(instance: &Value, resource_id: &str) -> String {
    let vnfcs = instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap();
    let vnfc = vnfcs.iter().find(|v| v["computeResource"]["resourceId"] == resource_id);
    vnfc.unwrap_or_else(|| panic!("no VNFC on {resource_id}: {instance}"))["id"].as_str().unwrap().to_owned()
}

/// The resource (pod, server) of VNFC `vnfc_id`.
fn resource_of(instance: &Value, vnfc_id: &str) -> String {
    let vnfcs = instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap();
    let vnfc = vnfcs.iter().find(|v| v["id"] == vnfc_id);
    let vnfc = vnfc.unwrap_or_else(|| panic!("no VNFC {vnfc_id}: {instance}"));
    vnfc["computeResource"]["resourceId"].as_str().unwrap().to_owned()
}

/// Asserts that the VIM was reached through `front` only: TLS handshakes and no failed one.
fn assert_over_tls(front: &TlsFront) {
    assert!(front.handshakes() > 0, "the VIM was reached through the TLS front");
    assert_eq!(front.handshake_failures(), Vec::<String>::new());
}

/// The names of `count` pods of VDU2 in the release.
fn vdu2_pods(release: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("vdu2-{release}-5f6b7c8d9-q8w2{i}")).collect()
}

/// A pod of the chart: both Deployments of the chart select the same pods, by the release's labels.
fn chart_pod(release: &str, name: &str) -> Value {
    let labels = json!({"app.kubernetes.io/name": "test-chart", "app.kubernetes.io/instance": release});
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "default",
        "uid": format!("uid-{name}"), "creationTimestamp": "2026-11-25T06:00:00Z", "labels": labels},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// The release's pods: one of VDU1 and the given ones of VDU2.
fn chart_pods(release: &str, vdu2: &[String]) -> ResponseTemplate {
    let mut items = vec![chart_pod(release, &format!("vdu1-{release}-7d9c8b6f5-x2k4p"))];
    items.extend(vdu2.iter().map(|name| chart_pod(release, name)));
    let list = json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items});
    ResponseTemplate::new(200).set_body_raw(list.to_string(), "application/json")
}

/// The pods of the release listed as solgate lists them (by the release's labels).
fn chart_pod_listing(release: &str) -> wiremock::MockBuilder {
    let selector = format!("app.kubernetes.io/name=test-chart,app.kubernetes.io/instance={release}");
    Mock::given(method("GET"))
        .and(path("/api/v1/namespaces/default/pods"))
        .and(query_param("labelSelector", selector.as_str()))
        .and(query_param_is_missing("watch"))
}

/// The cluster with `vdu2` pods of VDU2 (and one of VDU1).
async fn cluster_with(server: &MockServer, release: &str, vdu2: usize) {
    cluster_with_pods(server, release, &vdu2_pods(release, vdu2)).await;
}

/// The cluster with these pods of VDU2 (and one of VDU1).
async fn cluster_with_pods(server: &MockServer, release: &str, vdu2: &[String]) {
    server.reset().await;
    let labels = json!({"app.kubernetes.io/name": "test-chart", "app.kubernetes.io/instance": release});
    let ok = |body: Value| ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json");
    chart_pod_listing(release).respond_with(chart_pods(release, vdu2)).mount(server).await;
    for (vdu, replicas) in [("vdu1", 1), ("vdu2", vdu2.len())] {
        let name = format!("{vdu}-{release}");
        let deployment = json!({"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": name, "namespace": "default", "generation": 1},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}}},
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                "readyReplicas": replicas, "availableReplicas": replicas}});
        Mock::given(method("GET"))
            .and(path("/apis/apps/v1/namespaces/default/deployments"))
            .and(query_param("fieldSelector", format!("metadata.name={name}").as_str()))
            .and(query_param_is_missing("watch"))
            .respond_with(ok(
                json!({"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {"resourceVersion": "1"},
                "items": [deployment]}),
            ))
            .mount(server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/apis/apps/v1/namespaces/default/deployments/{name}")))
            .respond_with(ok(deployment))
            .mount(server)
            .await;
    }
    let service = json!({"kind": "Service", "apiVersion": "v1",
        "metadata": {"name": format!("{release}-test-chart"), "namespace": "default"},
        "spec": {"type": "NodePort", "selector": labels, "ports": [{"name": "http", "port": 8081, "protocol": "TCP"}]}});
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/namespaces/default/services/{release}-test-chart")))
        .respond_with(ok(service))
        .mount(server)
        .await;
}

/// After `helm uninstall`: no pods, every object 404.
async fn cluster_emptied(server: &MockServer, release: &str) {
    server.reset().await;
    let selector = format!("app.kubernetes.io/name=test-chart,app.kubernetes.io/instance={release}");
    Mock::given(method("GET"))
        .and(path("/api/v1/namespaces/default/pods"))
        .and(query_param("labelSelector", selector.as_str()))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(
                json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "2"}, "items": []})
                    .to_string(),
                "application/json",
            ),
        )
        .mount(server)
        .await;
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404});
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404).set_body_raw(status.to_string(), "application/json"))
        .mount(server)
        .await;
}

#[tokio::test]
async fn tackers_helm_sample_runs_its_life_cycle_through_solgate() {
    let helm = FakeHelm::new();
    let command = helm.0.path().join("helm").display().to_string();
    let app = TestApp::spawn_with(|settings| {
        settings.drivers.helm_command = command;
        settings.drivers.kubernetes_poll_interval_secs = 1;
    })
    .await;
    let csar =
        solgate_vnfpkg::testing::zip_directory(&fixtures().join("tacker-samples/test_helm_instantiate")).unwrap();
    let package_id = app.onboard_package(&csar).await;
    let package = send(app.request(Method::GET, &format!("/vnfpkgm/v1/vnf_packages/{package_id}"))).await.json();
    assert_eq!(package["vnfdId"], "b1bb0ce7-ebca-4fa7-95ed-4840d7000000", "{package}");

    let id = create_instance(&app, "b1bb0ce7-ebca-4fa7-95ed-4840d7000000", "test_helm_instantiate").await;
    let release = format!("vnf{}", id.replace('-', ""));
    let server = MockServer::start().await;
    let front = TlsFront::start(*server.address()).await;
    cluster_with(&server, &release, 1).await;
    let instantiate = json!({
        "flavourId": "simple",
        "vimConnectionInfo": {"vim1": {"vimId": "c3369b54-e376-4423-bb61-afd255900fea", "vimType": "ETSINFV.HELM.V_3",
            "interfaceInfo": {"endpoint": front.uri, "ssl_ca_cert": front.ca_pem},
            "accessInfo": {"bearer_token": "helm-sa-token"}}},
        "additionalParams": {
            "helm_chart_path": "Files/kubernetes/test-chart-0.1.0.tgz",
            "helm_parameters": {"service.port": 8081, "service.type": "NodePort"},
            "helm_value_names": {"VDU1": {"replica": "replicaCountVdu1"}, "VDU2": {"replica": "replicaCountVdu2"}},
            "namespace": "default"
        }
    });
    let op = wait_op(&app, &task(&app, &id, "instantiate", instantiate).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(helm.verbs(), ["status", "install", "get"]);
    assert_eq!(helm.last_values()["service"], json!({"port": 8081, "type": "NodePort"}));
    // solgate read the cluster over TLS; helm is sent to the same HTTPS endpoint with the CA.
    assert_over_tls(&front);
    let install = &helm.calls()[1];
    assert_eq!(install["kubeconfig"]["clusters"][0]["cluster"]["server"], front.uri.as_str(), "{install}");
    assert_eq!(install["clusterCa"].as_str().unwrap().trim(), front.ca_pem.trim(), "{install}");
    let instance = show_instance(&app, &id).await;
    let info = &instance["instantiatedVnfInfo"];
    let vdus: Vec<&str> =
        info["vnfcResourceInfo"].as_array().unwrap().iter().map(|v| v["vduId"].as_str().unwrap()).collect();
    assert_eq!(vdus, ["VDU1", "VDU2"], "{instance}");
    assert_eq!(instance["vimConnectionInfo"]["vim1"]["vimType"], "ETSINFV.HELM.V_3");
    assert!(!instance.to_string().contains("helm-sa-token"), "credentials are never shown");

    // Tacker's helm_scale_out: VDU2 by two steps, an upgrade setting its replica value.
    cluster_with(&server, &release, 3).await;
    let scale = json!({"type": "SCALE_OUT", "aspectId": "vdu2_aspect", "numberOfSteps": 2});
    let op = wait_op(&app, &task(&app, &id, "scale", scale).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(helm.verbs()[3..], ["status", "upgrade", "get"]);
    assert_eq!(helm.last_values()["replicaCountVdu2"], 3);
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap().len(), 4, "{instance}");

    // Heal one VDU2 VNFC: its pod is deleted through the Kubernetes API (helm is not run)
    // and the replacement keeps the VNFC id.
    let before = vdu2_pods(&release, 3);
    let vnfc = vnfc_id(&instance, &before[0]);
    let mut after = before.clone();
    after[0] = format!("vdu2-{release}-5f6b7c8d9-z1x3c");
    cluster_with_pods(&server, &release, &after).await;
    // The listing before the deletion still shows the old pod.
    chart_pod_listing(&release)
        .respond_with(chart_pods(&release, &before))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    let deleted = format!("/api/v1/namespaces/default/pods/{}", before[0]);
    Mock::given(method("DELETE"))
        .and(path(deleted.as_str()))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(chart_pod(&release, &before[0]).to_string(), "application/json"),
        )
        .mount(&server)
        .await;
    let op =
        wait_op(&app, &task(&app, &id, "heal", json!({"vnfcInstanceId": [vnfc]})).await, &["COMPLETED", "FAILED_TEMP"])
            .await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let deletes = deleted_paths(&server).await;
    assert_eq!(deletes, [deleted]);
    assert_eq!(helm.verbs().len(), 6, "heal runs no helm: {:?}", helm.verbs());
    let instance = show_instance(&app, &id).await;
    assert_eq!(resource_of(&instance, &vnfc), after[0], "{instance}");
    assert_eq!(instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap().len(), 4, "{instance}");

    // Tacker's helm_terminate: the release is uninstalled and its objects are waited for.
    cluster_emptied(&server, &release).await;
    let op = wait_op(
        &app,
        &task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await,
        &["COMPLETED", "FAILED_TEMP"],
    )
    .await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(helm.verbs()[6..], ["status", "uninstall"]);
    let reply = send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.json()["instantiationState"], "NOT_INSTANTIATED");
    assert_over_tls(&front);
}

/// The paths the server was sent DELETEs for, in order.
async fn deleted_paths(server: &MockServer) -> Vec<String> {
    let requests = server.received_requests().await.unwrap();
    requests.iter().filter(|r| r.method.as_str() == "DELETE").map(|r| r.url.path().to_owned()).collect()
}

/// Mounts one answer of the fake API server.
async fn answer(server: &MockServer, http: &str, url_path: &str, query: &[(&str, &str)], status: u16, body: Value) {
    let mut mock = Mock::given(method(http)).and(path(url_path));
    for (key, value) in query {
        mock = mock.and(query_param(*key, *value));
    }
    if http == "GET" && !query.iter().any(|(key, _)| *key == "watch") {
        mock = mock.and(query_param_is_missing("watch"));
    }
    let template = ResponseTemplate::new(status).set_body_raw(body.to_string(), "application/json");
    server.register(mock.respond_with(template)).await;
}

const CURRY_DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/curry/deployments";
const CURRY_PODS: &str = "/api/v1/namespaces/curry/pods";

/// The sample's Deployment `vdu2` (label `app: webserver`) as the API server holds it.
fn webserver(replicas: u32, generation: u32) -> Value {
    json!({"kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": "vdu2", "namespace": "curry", "generation": generation, "resourceVersion": "500",
            "uid": "d0000000-0000-4000-8000-000000000002"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "webserver"}},
            "template": {"metadata": {"labels": {"app": "webserver"}}}},
        "status": {"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]}})
}

fn webserver_pod(name: &str) -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "curry",
        "uid": format!("uid-{name}"), "creationTimestamp": "2026-11-25T06:00:00Z", "labels": {"app": "webserver"}},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn pod_list(names: &[&str]) -> Value {
    let items: Vec<Value> = names.iter().map(|name| webserver_pod(name)).collect();
    json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "600"}, "items": items})
}

/// The Deployment rolled out at `replicas` with `pods` running.
async fn webserver_running(server: &MockServer, replicas: u32, generation: u32, pods: &[&str]) {
    let list = json!({"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {"resourceVersion": "500"},
        "items": [webserver(replicas, generation)]});
    answer(server, "GET", CURRY_DEPLOYMENTS, &[("fieldSelector", "metadata.name=vdu2")], 200, list).await;
    answer(server, "GET", &format!("{CURRY_DEPLOYMENTS}/vdu2"), &[], 200, webserver(replicas, generation)).await;
    answer(server, "GET", CURRY_PODS, &[("labelSelector", "app=webserver")], 200, pod_list(pods)).await;
}

#[tokio::test]
async fn tackers_kubernetes_sample_runs_its_life_cycle_through_solgate() {
    let app = TestApp::spawn_with(|settings| settings.drivers.kubernetes_poll_interval_secs = 1).await;
    let csar =
        solgate_vnfpkg::testing::zip_directory(&fixtures().join("tacker-samples/test_change_vnf_pkg_with_deployment"))
            .unwrap();
    let package_id = app.onboard_package(&csar).await;
    let package = send(app.request(Method::GET, &format!("/vnfpkgm/v1/vnf_packages/{package_id}"))).await.json();
    let vnfd_id = package["vnfdId"].as_str().unwrap().to_owned();
    let id = create_instance(&app, &vnfd_id, "test_change_vnf_pkg_with_deployment").await;

    // Tacker's change_vnfpkg_instantiate: a Namespace and a Deployment of VDU2 in namespace curry.
    let server = MockServer::start().await;
    let front = TlsFront::start(*server.address()).await;
    let apply = [("fieldManager", "solgate"), ("force", "true")];
    let namespace = json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "curry", "uid": "n1"},
        "status": {"phase": "Active"}});
    answer(&server, "PATCH", "/api/v1/namespaces/curry", &apply, 201, namespace).await;
    answer(&server, "PATCH", &format!("{CURRY_DEPLOYMENTS}/vdu2"), &apply, 201, webserver(2, 1)).await;
    let (pod_a, pod_b) = ("vdu2-6f7d8c9b5-a1b2c", "vdu2-6f7d8c9b5-d3e4f");
    webserver_running(&server, 2, 1, &[pod_a, pod_b]).await;
    let instantiate = json!({
        "flavourId": "simple",
        "vimConnectionInfo": {"vim1": {"vimId": "9ad61d3f-cd58-4a09-9bb7-3e8bd8e1ac2b",
            "vimType": "ETSINFV.KUBERNETES.V_1", "interfaceInfo": {"endpoint": front.uri, "ssl_ca_cert": front.ca_pem},
            "accessInfo": {"bearer_token": "k8s-sa-token"}, "extra": {"dummy-key": "dummy-val"}}},
        "additionalParams": {
            "lcm-kubernetes-def-files": ["Files/kubernetes/namespace.yaml", "Files/kubernetes/deployment.yaml"],
            "namespace": "curry"
        }
    });
    let op =
        wait_op(&app, &task(&app, &id, "instantiate", instantiate.clone()).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_over_tls(&front);
    let applied = server.received_requests().await.unwrap();
    let deployment = applied.iter().find(|r| r.method.as_str() == "PATCH" && r.url.path().ends_with("/vdu2")).unwrap();
    let deployment: Value = serde_json::from_slice(&deployment.body).unwrap();
    assert_eq!(deployment["metadata"]["namespace"], "curry", "additionalParams.namespace wins over the manifest's");
    assert_eq!(deployment["spec"]["replicas"], 2, "VDU2's instantiation level");
    let instance = show_instance(&app, &id).await;
    // The VNFD describes VDU1-VDU6; the manifests realize only VDU2 (Tacker does the same).
    assert_eq!(vnfc_count(&instance, "VDU2"), 2, "{instance}");
    assert_eq!(instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap().len(), 2, "{instance}");

    // Scale out VDU2 by one step.
    server.reset().await;
    answer(
        &server,
        "PATCH",
        &format!("{CURRY_DEPLOYMENTS}/vdu2/scale"),
        &[],
        200,
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "vdu2", "namespace": "curry"},
            "spec": {"replicas": 3}, "status": {"replicas": 3, "selector": "app=webserver"}}),
    )
    .await;
    let pod_c = "vdu2-6f7d8c9b5-g5h6i";
    webserver_running(&server, 3, 2, &[pod_a, pod_b, pod_c]).await;
    let scale = json!({"type": "SCALE_OUT", "aspectId": "vdu2_aspect", "numberOfSteps": 1});
    let op = wait_op(&app, &task(&app, &id, "scale", scale).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let scaled: Value = serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(scaled, json!({"spec": {"replicas": 3}}));
    let instance = show_instance(&app, &id).await;
    assert_eq!(vnfc_count(&instance, "VDU2"), 3, "{instance}");

    // Heal one VNFC: its pod is deleted and the replacement keeps the VNFC id.
    let vnfc = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["computeResource"]["resourceId"] == pod_a)
        .unwrap()["id"]
        .clone();
    server.reset().await;
    let pod_d = "vdu2-6f7d8c9b5-j7k8l";
    Mock::given(method("GET"))
        .and(path(CURRY_PODS))
        .and(query_param_is_missing("watch"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(pod_list(&[pod_a, pod_b, pod_c]).to_string(), "application/json"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    answer(&server, "DELETE", &format!("{CURRY_PODS}/{pod_a}"), &[], 200, webserver_pod(pod_a)).await;
    webserver_running(&server, 3, 2, &[pod_d, pod_b, pod_c]).await;
    let op =
        wait_op(&app, &task(&app, &id, "heal", json!({"vnfcInstanceId": [vnfc]})).await, &["COMPLETED", "FAILED_TEMP"])
            .await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let instance = show_instance(&app, &id).await;
    let healed = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == vnfc)
        .unwrap()
        .clone();
    assert_eq!(healed["computeResource"]["resourceId"], pod_d, "{instance}");

    // change_vnfpkg_terminate: the objects are deleted, last first, and waited for.
    server.reset().await;
    answer(
        &server,
        "DELETE",
        &format!("{CURRY_DEPLOYMENTS}/vdu2"),
        &[("propagationPolicy", "Foreground")],
        200,
        webserver(3, 2),
    )
    .await;
    answer(
        &server,
        "DELETE",
        "/api/v1/namespaces/curry",
        &[("propagationPolicy", "Foreground")],
        200,
        json!({"kind": "Namespace",
        "apiVersion": "v1", "metadata": {"name": "curry"}, "status": {"phase": "Terminating"}}),
    )
    .await;
    answer(&server, "GET", CURRY_PODS, &[("labelSelector", "app=webserver")], 200, pod_list(&[])).await;
    let gone = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404});
    answer(&server, "GET", &format!("{CURRY_DEPLOYMENTS}/vdu2"), &[], 404, gone.clone()).await;
    answer(&server, "GET", "/api/v1/namespaces/curry", &[], 404, gone).await;
    let op = wait_op(
        &app,
        &task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await,
        &["COMPLETED", "FAILED_TEMP"],
    )
    .await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let deletes = deleted_paths(&server).await;
    assert_eq!(deletes, [format!("{CURRY_DEPLOYMENTS}/vdu2"), "/api/v1/namespaces/curry".to_owned()]);
    assert_over_tls(&front);

    // The same VIM registered without ssl_ca_cert: the cluster's certificate is not trusted,
    // the instantiation fails (FAILED_TEMP) saying so, and nothing reaches the API server.
    let handshakes = front.handshakes();
    let reached = server.received_requests().await.unwrap().len();
    let other = create_instance(&app, &vnfd_id, "without the cluster CA").await;
    let mut untrusting = instantiate;
    untrusting["vimConnectionInfo"]["vim1"]["interfaceInfo"].as_object_mut().unwrap().remove("ssl_ca_cert");
    let op = wait_op(&app, &task(&app, &other, "instantiate", untrusting).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    let detail = op["error"]["detail"].as_str().unwrap();
    assert!(detail.contains("invalid peer certificate"), "the user is told why: {detail}");
    assert!(detail.contains(&front.uri), "and which endpoint: {detail}");
    let failures = front.settled_handshake_failures().await;
    assert!(!failures.is_empty() && failures.iter().all(|f| f.contains("UnknownCA")), "{failures:?}");
    assert_eq!(front.handshakes(), handshakes);
    assert_eq!(server.received_requests().await.unwrap().len(), reached, "nothing reached the API server");
}

/// Recorded OpenStack exchanges of `drivers/tests/fixtures/openstack` (see
/// `drivers/tests/integration/support.rs` for their shape), mounted for the stack of
/// instance `instance_id` (the recordings are of stack `vnf-c8a1e1b4`), with the URLs the
/// answers carry on `base` (the TLS front).
async fn mount_openstack(server: &MockServer, base: &str, instance_id: &str, names: &[&str]) {
    for name in names {
        let file = fixtures().join("openstack").join(name);
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("{{base}}", base)
            .replace("{{token}}", "tok-1")
            .replace("{{expires_at}}", "2099-01-01T00:00:00.000000Z")
            .replace("vnf-c8a1e1b4", &format!("vnf-{instance_id}"));
        let fixture: Value = serde_json::from_str(&text).unwrap();
        for exchange in fixture["exchanges"].as_array().unwrap() {
            let request = &exchange["request"];
            let mut mock =
                Mock::given(method(request["method"].as_str().unwrap())).and(path(request["path"].as_str().unwrap()));
            for (key, value) in request["query"].as_object().into_iter().flatten() {
                let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                mock = mock.and(query_param(key.as_str(), value.as_str()));
            }
            let response = &exchange["response"];
            let mut template = ResponseTemplate::new(u16::try_from(response["status"].as_u64().unwrap()).unwrap());
            for (key, value) in response["headers"].as_object().into_iter().flatten() {
                template = template.insert_header(key.as_str(), value.as_str().unwrap());
            }
            if let Some(body) = response.get("body") {
                template = template.set_body_raw(body.to_string(), "application/json");
            }
            let mut mock = mock.respond_with(template);
            if let Some(times) = exchange["times"].as_u64() {
                mock = mock.up_to_n_times(times);
            }
            server.register(mock).await;
        }
    }
}

const HEAT: &str = "/heat-api/v1/a6944d763bf64ee6a275f1263fae0352";
const STACK_ID: &str = "3095aefc-09fb-4bc7-b1f0-f21a304e864c";
/// The servers of the recorded VDU1 members: the first, the two a scale out adds, and the
/// first's replacement after a heal.
const SERVER1: &str = "9b1f2ad5-7a9e-4d5c-8f2b-3c4d5e6f7a8b";
const SERVER2: &str = "4c8e7f1a-2b3d-4e5f-9a6b-7c8d9e0f1a2b";
const SERVER3: &str = "7d2e9c4b-5a6f-4b8c-9d1e-2f3a4b5c6d7e";
const SERVER1_HEALED: &str = "0e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b";

/// The known stack of instance `instance_id`, answering once that it is settled.
async fn stack_settled(server: &MockServer, base: &str, instance_id: &str) {
    let stack = format!("vnf-{instance_id}");
    let url = format!("{HEAT}/stacks/{stack}/{STACK_ID}");
    Mock::given(method("GET"))
        .and(path(url.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"stack": {
            "id": STACK_ID, "stack_name": stack, "stack_status": "CREATE_COMPLETE",
            "stack_status_reason": "Stack CREATE completed successfully",
            "links": [{"rel": "self", "href": format!("{base}{url}")}]}})))
        .up_to_n_times(1)
        .mount(server)
        .await;
}

/// A new token, and the stack settled, for an operation on the instantiated stack; any
/// `mark_unhealthy` PATCH of a resource answers 200 (the test asserts which were sent).
async fn next_operation(server: &MockServer, front: &TlsFront, id: &str, fixtures: &[&str]) {
    server.reset().await;
    mount_openstack(server, &front.uri, id, &["keystone_auth.json"]).await;
    stack_settled(server, &front.uri, id).await;
    mount_openstack(server, &front.uri, id, fixtures).await;
    Mock::given(method("PATCH"))
        .and(wiremock::matchers::path_regex(r"/resources/[A-Za-z0-9_]+$"))
        .respond_with(ResponseTemplate::new(200))
        .mount(server)
        .await;
}

/// The PATCH requests the server received: (path, body).
async fn patches(server: &MockServer) -> Vec<(String, Value)> {
    let requests = server.received_requests().await.unwrap();
    requests
        .iter()
        .filter(|r| r.method.as_str() == "PATCH")
        .map(|r| (r.url.path().to_owned(), serde_json::from_slice(&r.body).unwrap_or(Value::Null)))
        .collect()
}

/// The VDU1 servers of the instance, in vnfcResourceInfo order.
fn vdu1_servers(instance: &Value) -> Vec<String> {
    instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["vduId"] == "VDU1")
        .map(|v| v["computeResource"]["resourceId"].as_str().unwrap().to_owned())
        .collect()
}

/// Tacker's `basic_lcms_max` user data class (unchanged) in an OpenStack VNF's life cycle
/// over the API, on recorded Keystone and Heat exchanges served over HTTPS: the
/// instantiation runs the class with the conductor's documents (the GrantRequest's COMPUTE
/// resources make `desired_capacity`); a scale out and a scale in without user data keep its
/// template and change only `desired_capacity` (the scale in marking the newest member
/// unhealthy first); a heal of one VNFC marks its server unhealthy and updates the stack
/// with the same parameters; then terminate.
#[tokio::test]
async fn tackers_openstack_user_data_sample_runs_its_life_cycle_through_solgate() {
    let app = TestApp::spawn_with(|settings| settings.drivers.openstack_poll_interval_secs = 1).await;
    let user_data =
        std::fs::read_to_string(fixtures().join("tacker-samples/basic_lcms_max/UserData/userdata.py")).unwrap();
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let csar = solgate_vnfpkg::testing::CsarBuilder::sample()
        .descriptor_id(&vnfd_id)
        .file(
            "BaseHOT/simple/sample_hot.yaml",
            std::fs::read(fixtures().join("openstack/basehot/sample_hot.yaml")).unwrap(),
        )
        .file("BaseHOT/simple/nested/VDU1.yaml", std::fs::read(fixtures().join("openstack/basehot/VDU1.yaml")).unwrap())
        .file("UserData/__init__.py", "")
        .file("UserData/userdata.py", user_data)
        .to_bytes()
        .unwrap();
    app.onboard_package(&csar).await;
    let id = create_instance(&app, &vnfd_id, "basic_lcms_max").await;
    let server = MockServer::start().await;
    let front = TlsFront::start(*server.address()).await;
    mount_openstack(
        &server,
        &front.uri,
        &id,
        &["keystone_auth.json", "heat_stack_absent.json", "heat_stack_create.json", "heat_resources_scaled_in.json"],
    )
    .await;
    let ext_net = "a1e4d3c2-7b6f-4e5d-9c8b-0a1f2e3d4c5b";
    let instantiate = json!({
        "flavourId": "simple",
        "instantiationLevelId": "instantiation_level_1",
        "extVirtualLinks": [{"id": "ext-vl-1", "resourceId": ext_net, "extCps": [{"cpdId": "VDU1_CP1",
            "cpConfig": {"VDU1_CP1_1": {"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET",
                "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}}}]}],
        "vimConnectionInfo": {"vim1": {"vimId": "c3369b54-e376-4423-bb61-afd255900fea",
            "vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
            "interfaceInfo": {"endpoint": format!("{}/identity/v3", front.uri), "trustedCertificates": [front.ca_pem]},
            "accessInfo": {"username": "nfv_user", "password": "devstack", "region": "RegionOne",
                "project": "nfv", "projectDomain": "Default", "userDomain": "Default"}}},
        "additionalParams": {
            "lcm-operation-user-data": "./UserData/userdata.py",
            "lcm-operation-user-data-class": "UserData",
            "nfv": {"VDU": {"VDU2": {"computeFlavourId": "m1.small"}}}
        }
    });
    let op = wait_op(&app, &task(&app, &id, "instantiate", instantiate).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    // Keystone, then Heat at the catalog's URL: all through the front.
    assert_over_tls(&front);
    let requests = server.received_requests().await.unwrap();
    assert!(requests.iter().any(|r| r.url.path() == "/identity/v3/auth/tokens"));
    let posts: Vec<Value> = requests
        .iter()
        .filter(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/stacks"))
        .map(|r| r.body_json().unwrap())
        .collect();
    assert_eq!(posts.len(), 1);
    assert!(posts[0]["template"].is_string(), "the class's YAML text: {}", posts[0]);
    assert_eq!(
        posts[0]["parameters"],
        json!({"nfv": {
            "VDU": {
                "VDU1": {"desired_capacity": 1, "computeFlavourId": "m1.tiny", "vcImageId": "sample-image"},
                "VDU2": {"computeFlavourId": "m1.small", "vcImageId": "sample-image"}
            },
            "CP": {"VDU1_CP1": {"network": ext_net}}
        }})
    );
    let instance = show_instance(&app, &id).await;
    assert_eq!(vdu1_servers(&instance), [SERVER1], "{instance}");
    let first = vnfc_id(&instance, SERVER1);

    let stack_update = format!("{HEAT}/stacks/vnf-{id}/{STACK_ID}");
    // Scale out by two steps without user data: no member is marked, the stack is patched
    // with desired_capacity 3 and no template (the class's stays), the VNFC there keeps its id.
    next_operation(&server, &front, &id, &["heat_stack_update.json", "heat_resources_scaled_out.json"]).await;
    let scale = json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale", "numberOfSteps": 2});
    let op = wait_op(&app, &task(&app, &id, "scale", scale).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let sent = patches(&server).await;
    assert!(!sent.iter().any(|(url, _)| url.contains("/resources/")), "{sent:?}");
    let update = &sent.iter().find(|(url, _)| *url == stack_update).unwrap().1;
    assert!(update.get("template").is_none() && update.get("files").is_none(), "{update}");
    assert_eq!(update["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 3, "{update}");
    assert_eq!(update["parameters"]["nfv"]["VDU"]["VDU2"]["computeFlavourId"], "m1.small");
    assert_eq!(update["parameters"]["nfv"]["CP"]["VDU1_CP1"]["network"], ext_net);
    let instance = show_instance(&app, &id).await;
    assert_eq!(vdu1_servers(&instance), [SERVER1, SERVER2, SERVER3], "{instance}");
    assert_eq!(vnfc_id(&instance, SERVER1), first);
    let levels = instance["instantiatedVnfInfo"]["scaleStatus"].as_array().unwrap();
    let level = levels.iter().find(|l| l["aspectId"] == "VDU1_scale").unwrap();
    assert_eq!(level["scaleLevel"], 2, "{instance}");

    // Scale in by one step: the newest member (SERVER3's) is marked unhealthy, then the
    // stack patched with desired_capacity 2, so that Heat removes that member.
    next_operation(&server, &front, &id, &["heat_stack_update.json", "heat_resources_vnf.json"]).await;
    let scale = json!({"type": "SCALE_IN", "aspectId": "VDU1_scale", "numberOfSteps": 1});
    let op = wait_op(&app, &task(&app, &id, "scale", scale).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let sent = patches(&server).await;
    let group = format!("{HEAT}/stacks/vnf-{id}-VDU1_scale_group-dmqpxbs6jnzp/a1b2c3d4-0000-4000-8000-000000000001");
    let marked: Vec<&(String, Value)> = sent.iter().filter(|(url, _)| url.contains("/resources/")).collect();
    assert_eq!(
        marked,
        [&(
            format!("{group}/resources/r5t9w2y6u8io"),
            json!({"mark_unhealthy": true, "resource_status_reason": "marked by solgate for scale-in"})
        )]
    );
    let update = sent.iter().position(|(url, _)| *url == stack_update).unwrap();
    assert!(sent.iter().position(|(url, _)| url.contains("/resources/")).unwrap() < update, "marked first");
    assert!(sent[update].1.get("template").is_none(), "{}", sent[update].1);
    assert_eq!(sent[update].1["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 2);
    assert_eq!(sent[update].1["parameters"]["nfv"]["VDU"]["VDU2"]["computeFlavourId"], "m1.small");
    let instance = show_instance(&app, &id).await;
    assert_eq!(vdu1_servers(&instance), [SERVER1, SERVER2], "{instance}");

    // Heal SERVER1's VNFC: its server resource in the member stack is read, marked
    // unhealthy, and the stack updated with the same parameters; Heat's replacement server
    // keeps the VNFC id.
    let second = vnfc_id(&instance, SERVER2);
    next_operation(
        &server,
        &front,
        &id,
        &["heat_stack_update.json", "heat_member_heal.json", "heat_resources_healed.json"],
    )
    .await;
    let op = wait_op(
        &app,
        &task(&app, &id, "heal", json!({"vnfcInstanceId": [first]})).await,
        &["COMPLETED", "FAILED_TEMP"],
    )
    .await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let member = format!(
        "{HEAT}/stacks/vnf-{id}-VDU1_scale_group-dmqpxbs6jnzp-ohlbrvzj4qet-6x5nhmbxsf6a/b2c3d4e5-0000-4000-8000-000000000002/resources/VDU1"
    );
    let sent = patches(&server).await;
    let marked: Vec<&(String, Value)> = sent.iter().filter(|(url, _)| url.contains("/resources/")).collect();
    assert_eq!(
        marked,
        [&(member.clone(), json!({"mark_unhealthy": true, "resource_status_reason": "marked by solgate for heal"}))]
    );
    let update = &sent.iter().find(|(url, _)| *url == stack_update).unwrap().1;
    assert!(update.get("template").is_none(), "{update}");
    assert_eq!(update["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 2, "the same capacity: {update}");
    let requests = server.received_requests().await.unwrap();
    let read = requests.iter().position(|r| r.method.as_str() == "GET" && r.url.path() == member);
    let mark = requests.iter().position(|r| r.method.as_str() == "PATCH" && r.url.path() == member);
    assert!(read.is_some() && read < mark, "the server resource is read before it is marked");
    let instance = show_instance(&app, &id).await;
    assert_eq!(vdu1_servers(&instance), [SERVER1_HEALED, SERVER2], "{instance}");
    assert_eq!(resource_of(&instance, &first), SERVER1_HEALED, "the healed VNFC keeps its id");
    assert_eq!(resource_of(&instance, &second), SERVER2, "the other VNFC is untouched");
    assert_eq!(vnfc_count(&instance, "VDU2"), 1, "{instance}");

    server.reset().await;
    mount_openstack(&server, &front.uri, &id, &["keystone_auth.json", "heat_stack_delete.json"]).await;
    let op = wait_op(
        &app,
        &task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await,
        &["COMPLETED", "FAILED_TEMP"],
    )
    .await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(deleted_paths(&server).await.len(), 1);
    let reply = send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.json()["instantiationState"], "NOT_INSTANTIATED");
    assert_over_tls(&front);
}
