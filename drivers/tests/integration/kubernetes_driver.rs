//! `KubernetesDriver` through `InfraDriver::execute`, against recorded API-server exchanges
//! (tests/fixtures/kubernetes) and inline ones built with the same shapes (Kubernetes API
//! reference v1.30: DeploymentList, PodList, Scale, Status). The package is the vnfpkg
//! sample (flavour `simple`: VDU1, VDU2) with CNF manifests added: Deployment `vdu1` with a
//! Service, StatefulSet `vdu2` — matched to VDU1/VDU2 by name, ignoring case.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use solgate_drivers::infra::{DeploymentPlan, VduTarget};
use solgate_drivers::kubernetes::{KubernetesDriver, WaitOptions};
use solgate_drivers::{DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VimConnection};
use solgate_vnfpkg::testing::CsarBuilder;
use solgate_vnfpkg::{Limits, Vnfd};
use wiremock::MockServer;

use crate::support::{TlsFront, mount_exchanges, mount_fixture, query_of, received};

const INSTANCE: &str = "2c5e8a1f-7b3d-4e6a-9c0f-1d2e3f4a5b6c";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const STATEFULSETS: &str = "/apis/apps/v1/namespaces/default/statefulsets";
const SERVICES: &str = "/api/v1/namespaces/default/services";
const PODS: &str = "/api/v1/namespaces/default/pods";
const POD_A: &str = "vdu1-5d4b9c8f7d-8kx2p";
const POD_B: &str = "vdu1-5d4b9c8f7d-q7wzn";

const VDU1_MANIFEST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vdu1
  labels:
    app: vdu1
spec:
  replicas: 1
  selector:
    matchLabels:
      app: vdu1
  template:
    metadata:
      labels:
        app: vdu1
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: vdu1-svc
spec:
  selector:
    app: vdu1
  ports:
  - name: http
    port: 80
    targetPort: 80
";

const VDU2_MANIFEST: &str = "\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vdu2
  labels:
    app: vdu2
spec:
  replicas: 1
  serviceName: vdu2
  selector:
    matchLabels:
      app: vdu2
  template:
    metadata:
      labels:
        app: vdu2
    spec:
      containers:
      - name: db
        image: postgres:16
        ports:
        - containerPort: 5432
";

struct Package {
    _dir: tempfile::TempDir,
    path: PathBuf,
    vnfd: Vnfd,
}

fn package() -> Package {
    let csar = CsarBuilder::sample()
        .vdu1_virtual_cp()
        .file("Files/kubernetes/vdu1.yaml", VDU1_MANIFEST)
        .file("Files/kubernetes/vdu2.yaml", VDU2_MANIFEST)
        .to_tempfile()
        .unwrap();
    let vnfd = solgate_vnfpkg::inspect(csar.path(), &Limits::default()).unwrap().vnfd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("package");
    solgate_vnfpkg::extract(csar.path(), &path, &Limits::default()).unwrap();
    Package { _dir: dir, path, vnfd }
}

/// A bearer-token VimConnectionInfo as Tacker's vim_utils.vim_to_conn_info writes it, with
/// the legacy vimType Tacker still accepts.
fn vim(server: &MockServer) -> VimConnection {
    VimConnection {
        id: "vim-k8s-1".into(),
        vim_id: Some("8a3adb69-0784-43c7-833e-aab0b6ab4470".into()),
        vim_type: "kubernetes".into(),
        interface_info: json!({"endpoint": server.uri()}),
        access_info: json!({"bearer_token": "eyJhbGciOiJSUzI1NiIsImtpZCI6InNvbGdhdGUifQ.sa-token"}),
        extra: json!({}),
    }
}

fn driver() -> KubernetesDriver {
    KubernetesDriver {
        wait: WaitOptions { timeout: Duration::from_secs(10), poll_interval: Duration::from_millis(20) },
        cancel_poll: Duration::from_millis(10),
        trust: solgate_drivers::VimTrust::default(),
    }
}

fn plan(vdu1: u32) -> DeploymentPlan {
    DeploymentPlan {
        flavour_id: "simple".into(),
        vdus: vec![VduTarget { vdu_id: "VDU1".into(), count: vdu1 }, VduTarget { vdu_id: "VDU2".into(), count: 1 }],
        virtual_links: vec![],
        ext_virtual_links: json!([]),
        ext_managed_virtual_links: json!([]),
        scale_levels: BTreeMap::from([("VDU1_scale".to_owned(), vdu1.saturating_sub(1))]),
        granted: Default::default(),
    }
}

fn def_files() -> Value {
    json!({"lcm-kubernetes-def-files": ["Files/kubernetes/vdu1.yaml", "Files/kubernetes/vdu2.yaml"]})
}

async fn execute(
    server: &MockServer,
    pkg: &Package,
    current: &Inventory,
    params: Value,
    action: InfraAction<'_>,
    cancelled: &(dyn Fn() -> bool + Send + Sync),
) -> Result<Inventory, DriverError> {
    execute_on(&driver(), &vim(server), pkg, current, params, action, cancelled).await
}

async fn execute_on(
    driver: &KubernetesDriver,
    vim: &VimConnection,
    pkg: &Package,
    current: &Inventory,
    params: Value,
    action: InfraAction<'_>,
    cancelled: &(dyn Fn() -> bool + Send + Sync),
) -> Result<Inventory, DriverError> {
    let ctx = InfraContext {
        instance_id: INSTANCE,
        vim,
        vnfd: &pkg.vnfd,
        package_dir: Some(&pkg.path),
        current,
        additional_params: &params,
        attempt: 1,
        run: 1,
        cancelled,
        rolling_back: false,
        lcm_input: None,
    };
    driver.execute(ctx, action).await
}

fn never() -> impl Fn() -> bool + Send + Sync {
    || false
}

/// A pod of `app` as the API server lists it (shape of tests/fixtures/kubernetes/pods_running.json).
fn pod(name: &str, uid: &str, app: &str, created: &str, deleting: bool) -> Value {
    let mut pod = json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "2001",
            "creationTimestamp": created, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], "nodeName": "worker-1"},
        "status": {"phase": "Running", "podIP": "10.244.1.40", "startTime": created,
            "conditions": [{"type": "Ready", "status": "True"}]}
    });
    if deleting {
        pod["metadata"]["deletionTimestamp"] = json!("2026-11-22T04:00:00Z");
        pod["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    }
    pod
}

fn pod_list(resource_version: &str, items: &[Value]) -> Value {
    json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": resource_version}, "items": items})
}

/// GET pods?labelSelector=app=<app> (not a watch) answering `body`, at most `times` times.
fn pods_exchange(app: &str, body: &Value, times: Option<u64>) -> Value {
    json!({"request": {"method": "GET", "path": PODS, "query": {"labelSelector": format!("app={app}")},
            "query_absent": ["watch"]},
           "response": {"status": 200, "body": body}, "times": times})
}

/// The Deployment list a wait reads, the rollout done at `replicas`.
fn deployment_available(replicas: u32, generation: u32) -> Value {
    let status = if replicas == 0 {
        json!({"observedGeneration": generation})
    } else {
        json!({"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]})
    };
    json!({"request": {"method": "GET", "path": DEPLOYMENTS, "query": {"fieldSelector": "metadata.name=vdu1"},
            "query_absent": ["watch"]},
           "response": {"status": 200, "body": {"kind": "DeploymentList", "apiVersion": "apps/v1",
               "metadata": {"resourceVersion": "2100"},
               "items": [{"kind": "Deployment", "apiVersion": "apps/v1",
                   "metadata": {"name": "vdu1", "namespace": "default", "generation": generation,
                       "resourceVersion": "2100", "labels": {"app": "vdu1"}},
                   "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "vdu1"}}},
                   "status": status}]}}})
}

/// PATCH .../<kind>/<name>/scale answering the autoscaling/v1 Scale.
fn scale_exchange(collection: &str, name: &str, replicas: u32) -> Value {
    json!({"request": {"method": "PATCH", "path": format!("{collection}/{name}/scale")},
           "response": {"status": 200, "body": {"kind": "Scale", "apiVersion": "autoscaling/v1",
               "metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas},
               "status": {"replicas": replicas, "selector": format!("app={name}")}}}})
}

/// A server answering the instantiate flow: apply, the Deployment's watch, the pods.
async fn instantiate_server() -> MockServer {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/apply_deployment_service.json", &[]).await;
    mount_fixture(&server, "kubernetes/apply_statefulset.json", &[("instance", INSTANCE)]).await;
    mount_fixture(&server, "kubernetes/watch_deployment.json", &[]).await;
    mount_fixture(&server, "kubernetes/pods_running.json", &[]).await;
    mount_fixture(&server, "kubernetes/read_workloads.json", &[]).await;
    server
}

async fn instantiated(pkg: &Package) -> (MockServer, Inventory) {
    let server = instantiate_server().await;
    let plan = plan(2);
    let inventory =
        execute(&server, pkg, &Inventory::default(), def_files(), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();
    (server, inventory)
}

fn pods_of(inventory: &Inventory, vdu: &str) -> Vec<(String, String)> {
    inventory
        .vnfc_resources
        .iter()
        .filter(|v| v.vdu_id == vdu)
        .map(|v| (v.id.clone(), v.compute_resource.resource_id.clone()))
        .collect()
}

#[tokio::test]
async fn instantiate_applies_the_manifests_with_the_plans_replicas_and_maps_one_vnfc_per_pod() {
    let pkg = package();
    let (server, inventory) = instantiated(&pkg).await;

    // Server-side apply of every document, in file order, labelled with the instance.
    let requests = server.received_requests().await.unwrap();
    let applied: Vec<_> =
        requests.iter().filter(|r| r.method.as_str() == "PATCH").map(|r| r.url.path().to_owned()).collect();
    assert_eq!(
        applied,
        [format!("{DEPLOYMENTS}/vdu1"), format!("{SERVICES}/vdu1-svc"), format!("{STATEFULSETS}/vdu2")]
    );
    let deployment: Value = received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1")).await[0].body_json().unwrap();
    assert_eq!(deployment["spec"]["replicas"], 2, "the manifest says 1, the plan 2");
    assert_eq!(deployment["metadata"]["labels"], json!({"app": "vdu1", "tacker_vnf_instance_id": INSTANCE}));
    let service: Value = received(&server, "PATCH", &format!("{SERVICES}/vdu1-svc")).await[0].body_json().unwrap();
    assert_eq!(service["metadata"]["labels"]["tacker_vnf_instance_id"], INSTANCE);
    // The Deployment was waited for through its watch, the pods by the workloads' selectors.
    let watches = received(&server, "GET", DEPLOYMENTS).await;
    assert!(watches.iter().any(|r| query_of(r).contains(&("watch".to_owned(), "true".to_owned()))));

    assert_eq!(pods_of(&inventory, "VDU1").iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), [POD_A, POD_B]);
    let vdu2 = inventory.vnfc_resources.iter().find(|v| v.vdu_id == "VDU2").unwrap();
    assert_eq!(vdu2.compute_resource.resource_id, "vdu2-0");
    assert_eq!(vdu2.compute_resource.vim_level_resource_type.as_deref(), Some("StatefulSet"));
    assert_eq!(vdu2.compute_resource.vim_connection_id.as_deref(), Some("vim-k8s-1"));
    assert_eq!(inventory.vnfc_resources[0].compute_resource.vim_level_resource_type.as_deref(), Some("Deployment"));
    assert_eq!(inventory.vim_state["namespace"], "default");
    assert_eq!(inventory.vim_state["files"], def_files()["lcm-kubernetes-def-files"]);
    assert_eq!(
        inventory.vim_state["objects"],
        json!([
            {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "vdu1"},
            {"apiVersion": "v1", "kind": "Service", "namespace": "default", "name": "vdu1-svc"},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "namespace": "default", "name": "vdu2"}
        ])
    );
    assert_eq!(inventory.vim_state["vdus"]["VDU1"]["selector"], "app=vdu1");
}

#[tokio::test]
async fn scale_out_patches_the_scale_subresource_and_adds_a_vnfc_for_the_new_pod() {
    let pkg = package();
    let (_, before) = instantiated(&pkg).await;
    let server = MockServer::start().await;
    let new_pod = "vdu1-5d4b9c8f7d-z9d4h";
    mount_exchanges(
        &server,
        json!([
            scale_exchange(DEPLOYMENTS, "vdu1", 3),
            scale_exchange(STATEFULSETS, "vdu2", 1),
            deployment_available(3, 2),
            pods_exchange(
                "vdu1",
                &pod_list(
                    "2200",
                    &[
                        pod(POD_A, "a1", "vdu1", "2026-11-22T03:00:01Z", false),
                        pod(new_pod, "a3", "vdu1", "2026-11-22T03:30:00Z", false),
                        pod(POD_B, "a2", "vdu1", "2026-11-22T03:00:02Z", false)
                    ]
                ),
                None
            ),
            pods_exchange(
                "vdu2",
                &pod_list("2201", &[pod("vdu2-0", "b1", "vdu2", "2026-11-22T03:00:03Z", false)]),
                None
            )
        ]),
    )
    .await;

    // The scale request names no def files: the recorded workloads are scaled, nothing re-applied.
    let plan = plan(3);
    let after =
        execute(&server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan }, &never()).await.unwrap();

    let scaled = received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1/scale")).await;
    assert_eq!(scaled.len(), 1);
    assert_eq!(scaled[0].body_json::<Value>().unwrap(), json!({"spec": {"replicas": 3}}));
    assert!(received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1")).await.is_empty());
    let old = pods_of(&before, "VDU1");
    let new = pods_of(&after, "VDU1");
    assert_eq!(new[..2], old[..]);
    assert_eq!(new[2].1, new_pod);
    assert!(!old.iter().any(|(id, _)| *id == new[2].0));
    assert_eq!(pods_of(&after, "VDU2"), pods_of(&before, "VDU2"));
}

/// The Deployment `vdu1` as `GET .../deployments/vdu1` returns it (shape of
/// tests/fixtures/kubernetes/read_workloads.json) with `replicas` desired and `available`.
fn deployment_read(replicas: u32, available: u32) -> Value {
    json!({"request": {"method": "GET", "path": format!("{DEPLOYMENTS}/vdu1")},
           "response": {"status": 200, "body": {"kind": "Deployment", "apiVersion": "apps/v1",
               "metadata": {"name": "vdu1", "namespace": "default", "generation": 2, "resourceVersion": "2210"},
               "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "vdu1"}},
                   "template": {"metadata": {"labels": {"app": "vdu1"}}}},
               "status": {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": replicas,
                   "readyReplicas": available, "availableReplicas": available}}}})
}

fn mcio<'i>(inventory: &'i Inventory, id: &str) -> &'i Value {
    inventory.mcio_info.iter().find(|m| m["mcioId"] == id).unwrap_or_else(|| panic!("no McioInfo {id}: {inventory:?}"))
}

#[tokio::test]
async fn instantiate_and_scale_report_each_workloads_desired_and_available_instances() {
    let pkg = package();
    // Recorded exchanges: the real API server's request/response shapes (read_workloads.json).
    let (server, inventory) = instantiated(&pkg).await;
    assert_eq!(received(&server, "GET", &format!("{DEPLOYMENTS}/vdu1")).await.len(), 1, "read once, after the rollout");
    assert_eq!(
        *mcio(&inventory, "Deployment/vdu1"),
        json!({"mcioId": "Deployment/vdu1", "mcioName": "vdu1", "mcioNamespace": "default", "vduId": "VDU1",
            "cismId": "8a3adb69-0784-43c7-833e-aab0b6ab4470", "mcioType": "Deployment",
            "desiredInstances": 2, "availableInstances": 2})
    );
    let statefulset = mcio(&inventory, "StatefulSet/vdu2");
    assert_eq!((statefulset["vduId"].as_str(), statefulset["desiredInstances"].as_u64()), (Some("VDU2"), Some(1)));
    assert_eq!(statefulset["availableInstances"], 1);
    // The Service fronting VDU1's pods is the VNFD's VirtualCp VDU1_VCP.
    assert_eq!(
        inventory.virtual_cp_info,
        [json!({"cpInstanceId": "vdu1-svc", "cpdId": "VDU1_VCP",
            "resourceHandle": {"vimConnectionId": "vim-k8s-1", "resourceId": "vdu1-svc", "vimLevelResourceType": "Service"},
            "cpProtocolInfo": [{"layerProtocol": "IP_FOR_VIRTUAL_CP", "virtualCpAddress": {"type": "IPV4"}}],
            "vduIds": ["VDU1"],
            "additionalServiceInfo": [{"portInfo": [{"name": "http", "protocol": "TCP", "port": 80, "portConfigurable": false}]}],
            "metadata": {"namespace": "default", "serviceType": "ClusterIP", "clusterIP": "10.96.120.15"}})]
    );

    // Scale out: the workload is read again; its controller now wants 3 and has 3.
    let server = MockServer::start().await;
    mount_exchanges(
        &server,
        json!([
            scale_exchange(DEPLOYMENTS, "vdu1", 3),
            scale_exchange(STATEFULSETS, "vdu2", 1),
            deployment_available(3, 2),
            deployment_read(3, 3),
            pods_exchange(
                "vdu1",
                &pod_list(
                    "2200",
                    &[
                        pod(POD_A, "a1", "vdu1", "2026-11-22T03:00:01Z", false),
                        pod(POD_B, "a2", "vdu1", "2026-11-22T03:00:02Z", false),
                        pod("vdu1-5d4b9c8f7d-z9d4h", "a3", "vdu1", "2026-11-22T03:30:00Z", false)
                    ]
                ),
                None
            ),
            pods_exchange(
                "vdu2",
                &pod_list("2201", &[pod("vdu2-0", "b1", "vdu2", "2026-11-22T03:00:03Z", false)]),
                None
            )
        ]),
    )
    .await;
    mount_fixture(&server, "kubernetes/read_workloads.json", &[]).await;
    let plan = plan(3);
    let after =
        execute(&server, &pkg, &inventory, json!({}), InfraAction::Realize { plan: &plan }, &never()).await.unwrap();
    let deployment = mcio(&after, "Deployment/vdu1");
    assert_eq!(
        (deployment["desiredInstances"].as_u64(), deployment["availableInstances"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(mcio(&after, "StatefulSet/vdu2")["desiredInstances"], 1);
    assert_eq!(after.mcio_info.len(), 2);
}

#[tokio::test]
async fn scale_in_drops_the_vnfc_of_the_pod_kubernetes_removed() {
    let pkg = package();
    let (_, before) = instantiated(&pkg).await;
    let server = MockServer::start().await;
    mount_exchanges(
        &server,
        json!([
            scale_exchange(DEPLOYMENTS, "vdu1", 1),
            scale_exchange(STATEFULSETS, "vdu2", 1),
            deployment_available(1, 3),
            pods_exchange("vdu1", &pod_list("2300", &[pod(POD_B, "a2", "vdu1", "2026-11-22T03:00:02Z", false)]), None),
            pods_exchange(
                "vdu2",
                &pod_list("2301", &[pod("vdu2-0", "b1", "vdu2", "2026-11-22T03:00:03Z", false)]),
                None
            )
        ]),
    )
    .await;

    let plan = plan(1);
    let after =
        execute(&server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan }, &never()).await.unwrap();

    let scaled = received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1/scale")).await;
    assert_eq!(scaled[0].body_json::<Value>().unwrap(), json!({"spec": {"replicas": 1}}));
    assert_eq!(pods_of(&after, "VDU1"), pods_of(&before, "VDU1")[1..]);
}

#[tokio::test]
async fn heal_deletes_the_pod_and_its_replacement_keeps_the_vnfc_id() {
    let pkg = package();
    let (_, before) = instantiated(&pkg).await;
    let server = MockServer::start().await;
    let replacement = "vdu1-5d4b9c8f7d-m3x8r";
    mount_exchanges(
        &server,
        json!([
            // Before the delete, then after it (the ReplicaSet made a new pod).
            pods_exchange("vdu1", &pod_list("2400", &[
                pod(POD_A, "0b1c2d3e-0000-4000-8000-00000000a1", "vdu1", "2026-11-22T03:00:01Z", false),
                pod(POD_B, "0b1c2d3e-0000-4000-8000-00000000a2", "vdu1", "2026-11-22T03:00:02Z", false)]), Some(1)),
            pods_exchange("vdu1", &pod_list("2410", &[
                pod(POD_B, "0b1c2d3e-0000-4000-8000-00000000a2", "vdu1", "2026-11-22T03:00:02Z", false),
                pod(replacement, "0b1c2d3e-0000-4000-8000-00000000a9", "vdu1", "2026-11-22T04:00:05Z", false)]), None),
            {"request": {"method": "DELETE", "path": format!("{PODS}/{POD_A}")},
             "response": {"status": 200, "body": pod(POD_A, "0b1c2d3e-0000-4000-8000-00000000a1", "vdu1",
                "2026-11-22T03:00:01Z", true)}},
            deployment_available(2, 1)
        ]),
    )
    .await;

    let healed = before.vnfc_resources.iter().find(|v| v.compute_resource.resource_id == POD_A).unwrap().id.clone();
    let plan = plan(2);
    let ids = [healed.clone()];
    let after = execute(&server, &pkg, &before, json!({}), InfraAction::Heal { plan: &plan, vnfc_ids: &ids }, &never())
        .await
        .unwrap();

    let deletes = received(&server, "DELETE", &format!("{PODS}/{POD_A}")).await;
    assert_eq!(deletes.len(), 1);
    assert!(received(&server, "DELETE", &format!("{PODS}/{POD_B}")).await.is_empty());
    let mut expected = pods_of(&before, "VDU1");
    expected[0] = (healed, replacement.to_owned());
    assert_eq!(pods_of(&after, "VDU1"), expected);
    assert_eq!(pods_of(&after, "VDU2"), pods_of(&before, "VDU2"));
}

#[tokio::test]
async fn terminate_deletes_in_reverse_order_and_waits_until_pods_and_objects_are_gone() {
    let pkg = package();
    let (_, before) = instantiated(&pkg).await;
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/delete.json", &[]).await;
    let not_found = |kind: &str, name: &str| {
        json!({"status": 404, "body": {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("{kind} \"{name}\" not found"), "reason": "NotFound", "code": 404}})
    };
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "DELETE", "path": format!("{STATEFULSETS}/vdu2")},
             "response": {"status": 200, "body": {"kind": "StatefulSet", "apiVersion": "apps/v1",
                "metadata": {"name": "vdu2", "namespace": "default", "deletionTimestamp": "2026-11-22T05:00:00Z",
                    "finalizers": ["foregroundDeletion"]}}}},
            pods_exchange("vdu1", &pod_list("2500", &[]), None),
            pods_exchange("vdu2", &pod_list("2501", &[]), None),
            {"request": {"method": "GET", "path": format!("{DEPLOYMENTS}/vdu1")}, "response": not_found("deployments.apps", "vdu1")},
            {"request": {"method": "GET", "path": format!("{SERVICES}/vdu1-svc")}, "response": not_found("services", "vdu1-svc")},
            {"request": {"method": "GET", "path": format!("{STATEFULSETS}/vdu2")}, "response": not_found("statefulsets.apps", "vdu2")}
        ]),
    )
    .await;

    let after = execute(&server, &pkg, &before, json!({}), InfraAction::Teardown, &never()).await.unwrap();

    assert!(after.is_empty());
    let deletes: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "DELETE")
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(
        deletes,
        [format!("{STATEFULSETS}/vdu2"), format!("{SERVICES}/vdu1-svc"), format!("{DEPLOYMENTS}/vdu1")]
    );
    for request in server.received_requests().await.unwrap().iter().filter(|r| r.method.as_str() == "DELETE") {
        assert_eq!(query_of(request), [("propagationPolicy".to_owned(), "Foreground".to_owned())]);
    }
    assert_eq!(received(&server, "GET", &format!("{DEPLOYMENTS}/vdu1")).await.len(), 1);
}

#[tokio::test]
async fn an_api_error_is_reported_with_the_status_message_and_what_is_recorded() {
    let pkg = package();
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/apply_invalid.json", &[]).await;

    let plan = plan(2);
    let error =
        execute(&server, &pkg, &Inventory::default(), def_files(), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();

    assert!(!error.cancelled);
    assert!(
        error.message.starts_with("applying Deployment default/vdu1: Kubernetes API returned HTTP 422 (Invalid)"),
        "{}",
        error.message
    );
    assert!(error.message.contains("`selector` does not match template `labels`"), "{}", error.message);
    assert!(!error.transient, "an invalid manifest stays invalid");
    // Nothing was applied, but a rollback knows the def files and workloads.
    let partial = error.partial.unwrap();
    assert!(partial.vnfc_resources.is_empty());
    assert_eq!(partial.vim_state["objects"], json!([]));
    assert_eq!(partial.vim_state["files"], def_files()["lcm-kubernetes-def-files"]);
    assert_eq!(partial.vim_state["vdus"]["VDU2"]["kind"], "StatefulSet");
}

#[tokio::test]
async fn a_resumed_apply_adopts_the_objects_that_exist() {
    let pkg = package();
    // A re-run after a crash: the earlier run's objects exist. The Deployment's apply lost a
    // create race to it (409 AlreadyExists, mounted before the recorded exchanges so that it
    // answers first); sent again, the apply updates it.
    let server = MockServer::start().await;
    let already = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "deployments.apps \"vdu1\" already exists", "reason": "AlreadyExists",
        "details": {"name": "vdu1", "group": "apps", "kind": "deployments"}, "code": 409});
    mount_exchanges(
        &server,
        json!([{"request": {"method": "PATCH", "path": format!("{DEPLOYMENTS}/vdu1")},
                "response": {"status": 409, "body": already}, "times": 1}]),
    )
    .await;
    mount_fixture(&server, "kubernetes/apply_deployment_service.json", &[]).await;
    mount_fixture(&server, "kubernetes/apply_statefulset.json", &[("instance", INSTANCE)]).await;
    mount_fixture(&server, "kubernetes/watch_deployment.json", &[]).await;
    mount_fixture(&server, "kubernetes/pods_running.json", &[]).await;

    let plan = plan(2);
    let inventory =
        execute(&server, &pkg, &Inventory::default(), def_files(), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();

    let applies = received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1")).await;
    assert_eq!(applies.len(), 2, "applied again after 409 AlreadyExists");
    assert_eq!(applies[0].body, applies[1].body);
    assert_eq!(query_of(&applies[1]), query_of(&applies[0]));
    assert_eq!(received(&server, "PATCH", &format!("{SERVICES}/vdu1-svc")).await.len(), 1);
    assert_eq!(received(&server, "PATCH", &format!("{STATEFULSETS}/vdu2")).await.len(), 1);
    assert!(received(&server, "POST", DEPLOYMENTS).await.is_empty());
    assert_eq!(pods_of(&inventory, "VDU1").iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), [POD_A, POD_B]);
    assert_eq!(
        inventory.vim_state["objects"],
        json!([
            {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "vdu1"},
            {"apiVersion": "v1", "kind": "Service", "namespace": "default", "name": "vdu1-svc"},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "namespace": "default", "name": "vdu2"}
        ])
    );
}

#[tokio::test]
async fn a_kubernetes_api_503_is_transient() {
    let pkg = package();
    let server = MockServer::start().await;
    let unavailable = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server is currently unable to handle the request", "reason": "ServiceUnavailable",
        "code": 503});
    mount_exchanges(
        &server,
        json!([{"request": {"method": "PATCH", "path": format!("{DEPLOYMENTS}/vdu1")},
                "response": {"status": 503, "body": unavailable}}]),
    )
    .await;

    let plan = plan(2);
    let error =
        execute(&server, &pkg, &Inventory::default(), def_files(), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();

    assert!(error.transient && !error.cancelled, "{error:?}");
    assert!(
        error
            .message
            .starts_with("applying Deployment default/vdu1: Kubernetes API returned HTTP 503 (ServiceUnavailable)"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn manifests_without_a_workload_of_any_vdu_are_refused_before_any_call() {
    let pkg = package();
    let server = MockServer::start().await;
    let only_a_service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n";
    std::fs::write(pkg.path.join("Files/kubernetes/service.yaml"), only_a_service).unwrap();
    let params = json!({"lcm-kubernetes-def-files": ["Files/kubernetes/service.yaml"]});
    let plan = plan(1);
    let error = execute(&server, &pkg, &Inventory::default(), params, InfraAction::Realize { plan: &plan }, &never())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "no Deployment, StatefulSet, ReplicaSet, DaemonSet or Pod in Files/kubernetes/service.yaml is named after \
         a VDU of flavour simple (VDU1, VDU2)"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn cancel_during_the_rollout_wait_returns_the_applied_objects() {
    let pkg = package();
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/apply_deployment_service.json", &[]).await;
    mount_fixture(&server, "kubernetes/apply_statefulset.json", &[("instance", INSTANCE)]).await;
    // The rollout never finishes: a list without available replicas, watches that end empty.
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "GET", "path": DEPLOYMENTS, "query": {"watch": "true"}},
             "response": {"status": 200, "body_ndjson": []}},
            {"request": {"method": "GET", "path": DEPLOYMENTS, "query_absent": ["watch"]},
             "response": {"status": 200, "body": {"kind": "DeploymentList", "apiVersion": "apps/v1",
                "metadata": {"resourceVersion": "1000"}, "items": [{"kind": "Deployment", "apiVersion": "apps/v1",
                    "metadata": {"name": "vdu1", "namespace": "default", "generation": 1},
                    "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "replicas": 2,
                        "updatedReplicas": 2, "unavailableReplicas": 2}}]}}}
        ]),
    )
    .await;
    let flag = Arc::new(AtomicBool::new(false));
    let setter = flag.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        setter.store(true, Ordering::Relaxed);
    });
    let cancelled = move || flag.load(Ordering::Relaxed);

    let started = std::time::Instant::now();
    let plan = plan(2);
    let error =
        execute(&server, &pkg, &Inventory::default(), def_files(), InfraAction::Realize { plan: &plan }, &cancelled)
            .await
            .unwrap_err();

    assert!(error.cancelled);
    assert!(error.message.contains("cancelled while waiting for Deployment default/vdu1"), "{}", error.message);
    assert!(started.elapsed() < Duration::from_secs(5));
    let partial = error.partial.unwrap();
    assert_eq!(partial.vim_state["objects"].as_array().unwrap().len(), 3, "a rollback deletes what was applied");
}

#[tokio::test]
async fn operate_stops_by_scaling_to_zero_and_starts_with_the_vnfc_ids_kept() {
    let pkg = package();
    let (_, before) = instantiated(&pkg).await;

    let server = MockServer::start().await;
    mount_exchanges(
        &server,
        json!([
            scale_exchange(DEPLOYMENTS, "vdu1", 0),
            scale_exchange(STATEFULSETS, "vdu2", 0),
            deployment_available(0, 2),
            pods_exchange("vdu1", &pod_list("2600", &[]), None),
            pods_exchange("vdu2", &pod_list("2601", &[]), None)
        ]),
    )
    .await;
    let stopped =
        execute(&server, &pkg, &before, json!({}), InfraAction::Operate { change_state_to: "STOPPED" }, &never())
            .await
            .unwrap();
    assert_eq!(stopped.vnf_state, "STOPPED");
    assert_eq!(stopped.vnfc_resources, before.vnfc_resources, "the VNF keeps its VNFCs while stopped");
    assert_eq!(stopped.vim_state["stoppedReplicas"], json!({"VDU1": 2, "VDU2": 1}));
    assert_eq!(
        received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1/scale")).await[0].body_json::<Value>().unwrap(),
        json!({"spec": {"replicas": 0}})
    );

    let server = MockServer::start().await;
    mount_exchanges(
        &server,
        json!([
            scale_exchange(DEPLOYMENTS, "vdu1", 2),
            scale_exchange(STATEFULSETS, "vdu2", 1),
            deployment_available(2, 3),
            pods_exchange(
                "vdu1",
                &pod_list(
                    "2700",
                    &[
                        pod("vdu1-5d4b9c8f7d-s1t2u", "c1", "vdu1", "2026-11-22T05:00:01Z", false),
                        pod("vdu1-5d4b9c8f7d-v3w4x", "c2", "vdu1", "2026-11-22T05:00:02Z", false)
                    ]
                ),
                None
            ),
            pods_exchange(
                "vdu2",
                &pod_list("2701", &[pod("vdu2-0", "c3", "vdu2", "2026-11-22T05:00:03Z", false)]),
                None
            )
        ]),
    )
    .await;
    let started =
        execute(&server, &pkg, &stopped, json!({}), InfraAction::Operate { change_state_to: "STARTED" }, &never())
            .await
            .unwrap();
    assert_eq!(started.vnf_state, "STARTED");
    assert_eq!(
        received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1/scale")).await[0].body_json::<Value>().unwrap(),
        json!({"spec": {"replicas": 2}})
    );
    let ids: Vec<&str> = before.vnfc_resources.iter().map(|v| v.id.as_str()).collect();
    assert_eq!(started.vnfc_resources.iter().map(|v| v.id.as_str()).collect::<Vec<_>>(), ids);
    assert_eq!(
        pods_of(&started, "VDU1").iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(),
        ["vdu1-5d4b9c8f7d-s1t2u", "vdu1-5d4b9c8f7d-v3w4x"]
    );
    assert_eq!(started.vim_state.get("stoppedReplicas"), None);
}

/// The VIM of [`vim`] reached at the TLS front instead, with more `interfaceInfo` keys.
fn https_vim(server: &MockServer, front: &TlsFront, interface: Value) -> VimConnection {
    let mut vim = vim(server);
    vim.interface_info = json!({"endpoint": front.uri});
    let Value::Object(extra) = interface else { panic!("interfaceInfo keys: {interface}") };
    vim.interface_info.as_object_mut().unwrap().extend(extra);
    vim
}

#[tokio::test]
async fn instantiate_over_https_trusts_the_clusters_ssl_ca_cert() {
    let pkg = package();
    let server = instantiate_server().await;
    let front = TlsFront::start(*server.address()).await;
    let vim = https_vim(&server, &front, json!({"ssl_ca_cert": front.ca_pem}));

    let plan = plan(2);
    let inventory = execute_on(
        &driver(),
        &vim,
        &pkg,
        &Inventory::default(),
        def_files(),
        InfraAction::Realize { plan: &plan },
        &never(),
    )
    .await
    .unwrap();

    assert!(front.handshakes() > 0, "the API calls went through the TLS front");
    assert_eq!(front.handshake_failures(), Vec::<String>::new());
    // The same flow as over plain http: every document applied, the watch, the pods mapped.
    let applied = server.received_requests().await.unwrap().iter().filter(|r| r.method.as_str() == "PATCH").count();
    assert_eq!(applied, 3);
    assert_eq!(pods_of(&inventory, "VDU1").iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), [POD_A, POD_B]);
    assert_eq!(inventory.vim_state["objects"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn instantiate_over_https_without_the_ca_fails_the_certificate_check_and_skip_is_refused() {
    let pkg = package();
    let server = instantiate_server().await;
    let front = TlsFront::start(*server.address()).await;
    let plan = plan(2);

    // No ssl_ca_cert, default [tls]: the test CA is in no trust store, so the handshake fails.
    let error = execute_on(
        &driver(),
        &https_vim(&server, &front, json!({})),
        &pkg,
        &Inventory::default(),
        def_files(),
        InfraAction::Realize { plan: &plan },
        &never(),
    )
    .await
    .unwrap_err();
    // The driver's message stops at reqwest's "error sending request" (the cause, rustls'
    // UnknownIssuer, is not in it); the front tells why: the client rejected its certificate.
    assert!(error.message.contains("HTTP transport error"), "{}", error.message);
    assert!(error.message.contains("invalid peer certificate"), "the cause is shown: {}", error.message);
    assert!(error.message.contains(&format!("({}/", front.uri)), "{}", error.message);
    assert_eq!(front.handshakes(), 0);
    let failures = front.settled_handshake_failures().await;
    assert!(!failures.is_empty() && failures.iter().all(|f| f.contains("UnknownCA")), "{failures:?}");
    assert!(server.received_requests().await.unwrap().is_empty(), "nothing reached the API server");

    // Asking to skip verification is refused unless [tls] allow_vim_skip_verification.
    let error = execute_on(
        &driver(),
        &https_vim(&server, &front, json!({"skipCertificateVerification": true})),
        &pkg,
        &Inventory::default(),
        def_files(),
        InfraAction::Realize { plan: &plan },
        &never(),
    )
    .await
    .unwrap_err();
    assert!(error.message.contains("allow_vim_skip_verification"), "{}", error.message);
    assert_eq!(front.handshake_failures().len(), failures.len(), "refused before any connection");
    assert_eq!(front.handshakes(), 0);
    assert!(server.received_requests().await.unwrap().is_empty());
}
