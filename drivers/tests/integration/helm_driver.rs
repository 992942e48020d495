//! `HelmDriver` through `InfraDriver::execute`, with Tacker's Helm sample package
//! (`tests/fixtures/tacker-samples/test_helm_instantiate`, unchanged) and Tacker's requests
//! for it. No cluster and no helm binary run here: `helm` is `tests/fixtures/helm/fake_helm.py`
//! (answers as helm 3 does and records its calls), and the Kubernetes API answers are built
//! in the shapes of the API reference v1.30, as in `kubernetes_driver.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use solgate_drivers::infra::{DeploymentPlan, VduTarget};
use solgate_drivers::kubernetes::{HelmDriver, HelmSettings, KubernetesDriver, WaitOptions};
use solgate_drivers::{DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VimConnection};
use solgate_vnfpkg::{Limits, Vnfd};
use wiremock::MockServer;

use crate::support::{mount_exchanges, received};

const INSTANCE: &str = "6b1a2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const RELEASE: &str = "vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d";
const TOKEN: &str = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImhlbG0ifQ.sa-token";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const PODS: &str = "/api/v1/namespaces/default/pods";
const SERVICES: &str = "/api/v1/namespaces/default/services";
const SERVICE_ACCOUNTS: &str = "/api/v1/namespaces/default/serviceaccounts";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

struct Package {
    _dir: tempfile::TempDir,
    path: PathBuf,
    vnfd: Vnfd,
}

/// The Tacker sample, zipped as Tacker's test tooling does, onboarded (the TOSCA.meta hash
/// of the chart is checked) and extracted.
fn package() -> Package {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("test_helm_instantiate.zip");
    let bytes =
        solgate_vnfpkg::testing::zip_directory(&fixtures().join("tacker-samples/test_helm_instantiate")).unwrap();
    std::fs::write(&zip, bytes).unwrap();
    let vnfd = solgate_vnfpkg::inspect(&zip, &Limits::default()).unwrap().vnfd;
    let path = dir.path().join("package");
    solgate_vnfpkg::extract(&zip, &path, &Limits::default()).unwrap();
    Package { _dir: dir, path, vnfd }
}

/// A fake `helm` with its state directory (releases, recorded calls, the chart manifest).
struct FakeHelm {
    dir: tempfile::TempDir,
}

impl FakeHelm {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = std::fs::read_to_string(fixtures().join("helm/fake_helm.py")).unwrap();
        let script =
            format!("#!/usr/bin/env python3\n{}", script.replace("@STATE_DIR@", &dir.path().display().to_string()));
        let helm = dir.path().join("helm");
        std::fs::write(&helm, script).unwrap();
        std::fs::set_permissions(&helm, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::copy(fixtures().join("helm/test-chart-manifest.yaml"), dir.path().join("manifest.yaml")).unwrap();
        Self { dir }
    }

    fn command(&self) -> PathBuf {
        self.dir.path().join("helm")
    }

    fn calls(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.dir.path().join("calls.jsonl")).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    /// The argv of each call, without the `--kubeconfig <file>` every call gets.
    fn argv(&self) -> Vec<Vec<String>> {
        self.calls()
            .iter()
            .map(|call| {
                let argv: Vec<String> = serde_json::from_value(call["argv"].clone()).unwrap();
                let at = argv.iter().position(|a| a == "--kubeconfig").unwrap();
                argv[..at].iter().chain(&argv[at + 2..]).cloned().collect()
            })
            .collect()
    }

    fn clear_calls(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("calls.jsonl"));
    }

    fn fail(&self, verb: &str, stderr: &str) {
        std::fs::write(self.dir.path().join(format!("fail-{verb}")), stderr).unwrap();
    }

    fn hang(&self, verb: &str) {
        std::fs::write(self.dir.path().join(format!("hang-{verb}")), "").unwrap();
    }

    fn pid(&self, verb: &str) -> Option<u32> {
        std::fs::read_to_string(self.dir.path().join(format!("pid-{verb}"))).ok()?.trim().parse().ok()
    }
}

fn driver(helm: &FakeHelm, timeout: Duration) -> HelmDriver {
    HelmDriver {
        kubernetes: KubernetesDriver {
            wait: WaitOptions { timeout: Duration::from_secs(10), poll_interval: Duration::from_millis(20) },
            cancel_poll: Duration::from_millis(10),
            trust: solgate_drivers::VimTrust::default(),
        },
        helm: HelmSettings { command: helm.command(), timeout },
    }
}

/// Tacker's `helm_instantiate` VIM (paramgen.py): a Helm VIM with a bearer token.
fn vim(server: &MockServer) -> VimConnection {
    VimConnection {
        id: "vim1".into(),
        vim_id: Some("c3369b54-e376-4423-bb61-afd255900fea".into()),
        vim_type: "ETSINFV.HELM.V_3".into(),
        interface_info: json!({"endpoint": server.uri()}),
        access_info: json!({"bearer_token": TOKEN}),
        extra: json!({}),
    }
}

/// `additionalParams` of Tacker's `helm_instantiate` request.
fn instantiate_params() -> Value {
    json!({
        "helm_chart_path": "Files/kubernetes/test-chart-0.1.0.tgz",
        "helm_parameters": {"service.port": 8081, "service.type": "NodePort"},
        "helm_value_names": {"VDU1": {"replica": "replicaCountVdu1"}, "VDU2": {"replica": "replicaCountVdu2"}},
        "namespace": "default"
    })
}

fn plan(vdu2: u32) -> DeploymentPlan {
    DeploymentPlan {
        flavour_id: "simple".into(),
        vdus: vec![VduTarget { vdu_id: "VDU1".into(), count: 1 }, VduTarget { vdu_id: "VDU2".into(), count: vdu2 }],
        virtual_links: vec![],
        ext_virtual_links: json!([]),
        ext_managed_virtual_links: json!([]),
        scale_levels: BTreeMap::from([("vdu1_aspect".to_owned(), 0), ("vdu2_aspect".to_owned(), vdu2 - 1)]),
        granted: Default::default(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn execute(
    driver: &HelmDriver,
    server: &MockServer,
    pkg: &Package,
    current: &Inventory,
    params: Value,
    action: InfraAction<'_>,
    rolling_back: bool,
) -> Result<Inventory, DriverError> {
    let vim = vim(server);
    let never = || false;
    let ctx = InfraContext {
        instance_id: INSTANCE,
        vim: &vim,
        vnfd: &pkg.vnfd,
        package_dir: Some(&pkg.path),
        current,
        additional_params: &params,
        attempt: 1,
        run: 1,
        cancelled: &never,
        rolling_back,
        lcm_input: None,
    };
    driver.execute(ctx, action).await
}

const SELECTOR: &str =
    "app.kubernetes.io/name=test-chart,app.kubernetes.io/instance=vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d";

/// A pod of the chart (both Deployments' pods carry the same labels).
fn pod(name: &str, uid: &str, deleting: bool) -> Value {
    let mut pod = json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "3001",
            "creationTimestamp": "2026-11-25T06:00:00Z",
            "labels": {"app.kubernetes.io/name": "test-chart", "app.kubernetes.io/instance": RELEASE}},
        "spec": {"containers": [{"name": "test-chart", "image": "nginx"}], "nodeName": "worker-1"},
        "status": {"phase": "Running", "podIP": "10.244.1.50", "conditions": [{"type": "Ready", "status": "True"}]}
    });
    if deleting {
        pod["metadata"]["deletionTimestamp"] = json!("2026-11-25T06:30:00Z");
    }
    pod
}

fn pods(names: &[(&str, &str)], times: Option<u64>) -> Value {
    let items: Vec<Value> = names.iter().map(|(name, uid)| pod(name, uid, false)).collect();
    json!({"request": {"method": "GET", "path": PODS, "query": {"labelSelector": SELECTOR}, "query_absent": ["watch"]},
           "response": {"status": 200, "body": {"kind": "PodList", "apiVersion": "v1",
               "metadata": {"resourceVersion": "3100"}, "items": items}}, "times": times})
}

fn deployment(vdu: &str, replicas: u32) -> Value {
    json!({"kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": format!("{vdu}-{RELEASE}"), "namespace": "default", "generation": 1, "resourceVersion": "3200"},
        "spec": {"replicas": replicas, "selector": {"matchLabels":
            {"app.kubernetes.io/name": "test-chart", "app.kubernetes.io/instance": RELEASE}},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": "test-chart", "app.kubernetes.io/instance": RELEASE}}}},
        "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]}})
}

/// The Deployment list a wait reads, and the object the inventory reads.
fn deployment_exchanges(vdu: &str, replicas: u32) -> Vec<Value> {
    let name = format!("{vdu}-{RELEASE}");
    vec![
        json!({"request": {"method": "GET", "path": DEPLOYMENTS, "query": {"fieldSelector": format!("metadata.name={name}")},
                "query_absent": ["watch"]},
               "response": {"status": 200, "body": {"kind": "DeploymentList", "apiVersion": "apps/v1",
                   "metadata": {"resourceVersion": "3200"}, "items": [deployment(vdu, replicas)]}}}),
        json!({"request": {"method": "GET", "path": format!("{DEPLOYMENTS}/{name}")},
               "response": {"status": 200, "body": deployment(vdu, replicas)}}),
    ]
}

fn service_exchange() -> Value {
    json!({"request": {"method": "GET", "path": format!("{SERVICES}/{RELEASE}-test-chart")},
           "response": {"status": 200, "body": {"kind": "Service", "apiVersion": "v1",
               "metadata": {"name": format!("{RELEASE}-test-chart"), "namespace": "default"},
               "spec": {"type": "NodePort", "clusterIP": "10.96.0.20",
                   "selector": {"app.kubernetes.io/name": "test-chart", "app.kubernetes.io/instance": RELEASE},
                   "ports": [{"name": "http", "port": 8081, "protocol": "TCP", "targetPort": "http", "nodePort": 30081}]}}}})
}

const VDU1_POD: (&str, &str) =
    ("vdu1-vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d-7d9c8b6f5-x2k4p", "a0000000-0000-4000-8000-000000000001");
const VDU2_POD: (&str, &str) =
    ("vdu2-vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d-5f6b7c8d9-q8w2e", "a0000000-0000-4000-8000-000000000002");
const VDU2_POD_2: (&str, &str) =
    ("vdu2-vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d-5f6b7c8d9-m4n6b", "a0000000-0000-4000-8000-000000000003");
const VDU2_POD_3: (&str, &str) =
    ("vdu2-vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d-5f6b7c8d9-t7y9u", "a0000000-0000-4000-8000-000000000004");

async fn cluster(pod_list: &[(&str, &str)], vdu2: u32) -> MockServer {
    let server = MockServer::start().await;
    let mut exchanges = vec![pods(pod_list, None), service_exchange()];
    exchanges.extend(deployment_exchanges("vdu1", 1));
    exchanges.extend(deployment_exchanges("vdu2", vdu2));
    mount_exchanges(&server, Value::Array(exchanges)).await;
    server
}

fn pods_of(inventory: &Inventory, vdu: &str) -> Vec<String> {
    inventory
        .vnfc_resources
        .iter()
        .filter(|v| v.vdu_id == vdu)
        .map(|v| v.compute_resource.resource_id.clone())
        .collect()
}

async fn instantiated(pkg: &Package, helm: &FakeHelm) -> Inventory {
    let server = cluster(&[VDU1_POD, VDU2_POD], 1).await;
    let driver = driver(helm, Duration::from_secs(30));
    let plan = plan(1);
    execute(
        &driver,
        &server,
        pkg,
        &Inventory::default(),
        instantiate_params(),
        InfraAction::Realize { plan: &plan },
        false,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn tackers_helm_sample_is_installed_scaled_healed_and_uninstalled_with_helm() {
    let pkg = package();
    let helm = FakeHelm::new();
    let driver = driver(&helm, Duration::from_secs(30));

    // Instantiate: the release is looked up, installed from the package's chart with the
    // request's values and the plan's replicas, and its manifest read.
    let before = instantiated(&pkg, &helm).await;
    let chart = pkg.path.join("Files/kubernetes/test-chart-0.1.0.tgz").display().to_string();
    let argv = helm.argv();
    assert_eq!(argv[0], ["status", RELEASE, "--namespace", "default"]);
    assert_eq!(
        argv[1][..9],
        [
            "install",
            RELEASE,
            chart.as_str(),
            "--namespace",
            "default",
            "--create-namespace",
            "--timeout",
            "30s",
            "--values"
        ]
    );
    assert_eq!(argv[2], ["get", "manifest", RELEASE, "--namespace", "default"]);
    assert_eq!(argv.len(), 3);
    let calls = helm.calls();
    assert_eq!(
        calls[1]["values"],
        json!({"service": {"port": 8081, "type": "NodePort"}, "replicaCountVdu1": 1, "replicaCountVdu2": 1})
    );
    // The token reaches helm in a private kubeconfig, never on its command line or in its environment.
    let kubeconfig = &calls[1]["kubeconfig"];
    assert_eq!(kubeconfig["users"][0]["user"]["token"], TOKEN);
    assert_eq!(calls[1]["kubeconfigMode"], "0o600");
    assert!(kubeconfig["clusters"][0]["cluster"]["server"].as_str().unwrap().starts_with("http://127.0.0.1:"));
    for call in &calls {
        assert!(!call["argv"].to_string().contains(TOKEN));
        assert!(!call["env"].to_string().contains(TOKEN));
        assert!(call["env"].get("KUBECONFIG").is_none(), "the operator's kubeconfig is not inherited");
    }
    // Both Deployments select the same pods; each VDU has only those named after it.
    assert_eq!(pods_of(&before, "VDU1"), [VDU1_POD.0]);
    assert_eq!(pods_of(&before, "VDU2"), [VDU2_POD.0]);
    assert_eq!(before.vim_state["helm"]["name"], RELEASE);
    assert_eq!(before.vim_state["helm"]["revision"], "1");
    assert_eq!(before.vim_state["vdus"]["VDU2"]["name"], format!("vdu2-{RELEASE}"));
    assert_eq!(before.mcio_info.len(), 2);
    assert_eq!(before.virtual_cp_info.len(), 0, "the sample's VNFD has no VirtualCp");

    // Scale out VDU2 by 2 (Tacker's helm_scale_out): an upgrade that keeps the values and sets the replicas.
    helm.clear_calls();
    let server = cluster(&[VDU1_POD, VDU2_POD, VDU2_POD_2, VDU2_POD_3], 3).await;
    let plan3 = plan(3);
    let scaled = execute(&driver, &server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan3 }, false)
        .await
        .unwrap();
    let argv = helm.argv();
    assert_eq!(
        argv[1][..9],
        [
            "upgrade",
            RELEASE,
            chart.as_str(),
            "--namespace",
            "default",
            "--reuse-values",
            "--timeout",
            "30s",
            "--values"
        ]
    );
    assert_eq!(helm.calls()[1]["values"], json!({"replicaCountVdu1": 1, "replicaCountVdu2": 3}));
    assert_eq!(pods_of(&scaled, "VDU2").len(), 3);
    assert_eq!(scaled.vim_state["helm"]["revision"], "2");

    // Heal a VDU2 pod: deleted through the Kubernetes API, its replacement keeps the VNFC id; helm is not run.
    helm.clear_calls();
    let server = MockServer::start().await;
    let replacement =
        ("vdu2-vnf6b1a2c3d4e5f4a6b8c7d9e0f1a2b3c4d-5f6b7c8d9-z1x3c", "a0000000-0000-4000-8000-000000000009");
    let mut exchanges = vec![
        pods(&[VDU1_POD, VDU2_POD, VDU2_POD_2, VDU2_POD_3], Some(1)),
        pods(&[VDU1_POD, replacement, VDU2_POD_2, VDU2_POD_3], None),
        json!({"request": {"method": "DELETE", "path": format!("{PODS}/{}", VDU2_POD.0)},
               "response": {"status": 200, "body": pod(VDU2_POD.0, VDU2_POD.1, true)}}),
        service_exchange(),
    ];
    exchanges.extend(deployment_exchanges("vdu1", 1));
    exchanges.extend(deployment_exchanges("vdu2", 3));
    mount_exchanges(&server, Value::Array(exchanges)).await;
    let healed_id =
        scaled.vnfc_resources.iter().find(|v| v.compute_resource.resource_id == VDU2_POD.0).unwrap().id.clone();
    let ids = [healed_id.clone()];
    let healed =
        execute(&driver, &server, &pkg, &scaled, json!({}), InfraAction::Heal { plan: &plan3, vnfc_ids: &ids }, false)
            .await
            .unwrap();
    assert!(helm.calls().is_empty());
    let vnfc = healed.vnfc_resources.iter().find(|v| v.id == healed_id).unwrap();
    assert_eq!(vnfc.compute_resource.resource_id, replacement.0);

    // Terminate (Tacker's helm_terminate): uninstall, then every object and pod is waited for until gone.
    helm.clear_calls();
    let server = MockServer::start().await;
    let not_found = json!({"status": 404, "body": {"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": "not found", "reason": "NotFound", "code": 404}});
    let mut exchanges = vec![pods(&[], None)];
    for path in [
        format!("{SERVICE_ACCOUNTS}/{RELEASE}-test-chart"),
        format!("{SERVICES}/{RELEASE}-test-chart"),
        format!("{DEPLOYMENTS}/vdu1-{RELEASE}"),
        format!("{DEPLOYMENTS}/vdu2-{RELEASE}"),
    ] {
        exchanges.push(json!({"request": {"method": "GET", "path": path}, "response": not_found}));
    }
    mount_exchanges(&server, Value::Array(exchanges)).await;
    let after =
        execute(&driver, &server, &pkg, &healed, json!({"terminationType": "FORCEFUL"}), InfraAction::Teardown, false)
            .await
            .unwrap();
    assert!(after.is_empty());
    assert_eq!(
        helm.argv(),
        [
            vec!["status", RELEASE, "--namespace", "default"],
            vec!["uninstall", RELEASE, "--namespace", "default", "--timeout", "30s"],
        ]
    );
    assert!(
        received(&server, "DELETE", &format!("{DEPLOYMENTS}/vdu1-{RELEASE}")).await.is_empty(),
        "helm deletes, not solgate"
    );
}

#[tokio::test]
async fn a_rollback_returns_the_release_to_the_revision_before_the_operation() {
    let pkg = package();
    let helm = FakeHelm::new();
    let driver = driver(&helm, Duration::from_secs(30));
    let before = instantiated(&pkg, &helm).await;

    // A scale out whose upgrade ran but whose pods never came: the partial inventory still
    // says revision 1, the revision the rollback returns to.
    helm.clear_calls();
    let server = cluster(&[VDU1_POD, VDU2_POD], 1).await;
    let plan1 = plan(1);
    let rolled =
        execute(&driver, &server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan1 }, true).await.unwrap();
    let argv = helm.argv();
    assert_eq!(argv[0], ["rollback", RELEASE, "1", "--namespace", "default", "--timeout", "30s"]);
    assert_eq!(argv[1][..2], ["get", "manifest"]);
    assert_eq!(pods_of(&rolled, "VDU2"), [VDU2_POD.0]);
}

#[tokio::test]
async fn a_failing_helm_fails_the_action_with_its_message() {
    let pkg = package();
    let helm = FakeHelm::new();
    helm.fail("install", "Error: INSTALLATION FAILED: 1 error occurred:\n\t* Service \"x\" is invalid: spec.ports[0].nodePort: Invalid value: 30081: provided port is already allocated\n");
    let driver = driver(&helm, Duration::from_secs(30));
    let server = cluster(&[], 1).await;
    let plan = plan(1);
    let error = execute(
        &driver,
        &server,
        &pkg,
        &Inventory::default(),
        instantiate_params(),
        InfraAction::Realize { plan: &plan },
        false,
    )
    .await
    .unwrap_err();
    assert!(
        error.message.starts_with(&format!("installing Helm release {RELEASE}: helm install failed (exit status: 1)")),
        "{}",
        error.message
    );
    assert!(error.message.contains("provided port is already allocated"), "{}", error.message);
    assert!(!error.transient);
    // The release is recorded, so that a retry upgrades it and a rollback uninstalls it.
    let partial = error.partial.unwrap();
    assert_eq!(partial.vim_state["helm"]["name"], RELEASE);
}

#[tokio::test]
async fn a_hanging_helm_is_killed_after_its_time_limit() {
    let pkg = package();
    let helm = FakeHelm::new();
    helm.hang("status");
    // The process limit is helm's --timeout and a quarter more, at least 1 s.
    let driver = driver(&helm, Duration::from_secs(1));
    let server = cluster(&[], 1).await;
    let plan = plan(1);
    let started = std::time::Instant::now();
    let error = execute(
        &driver,
        &server,
        &pkg,
        &Inventory::default(),
        instantiate_params(),
        InfraAction::Realize { plan: &plan },
        false,
    )
    .await
    .unwrap_err();
    assert!(error.message.contains("helm status did not finish within 2s and was killed"), "{}", error.message);
    assert!(started.elapsed() < Duration::from_secs(10));
    // Killed and reaped: no process, not even a zombie, is left.
    let pid = helm.pid("status").unwrap();
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "helm pid {pid} is still there");
}

#[tokio::test]
async fn requests_the_chart_cannot_serve_are_refused_before_helm_runs() {
    let pkg = package();
    let helm = FakeHelm::new();
    let driver = driver(&helm, Duration::from_secs(30));
    let server = cluster(&[], 1).await;
    let plan = plan(1);
    let run = |params: Value| {
        let (driver, server, pkg, plan) = (&driver, &server, &pkg, &plan);
        async move {
            execute(driver, server, pkg, &Inventory::default(), params, InfraAction::Realize { plan }, false)
                .await
                .unwrap_err()
                .message
        }
    };
    assert_eq!(run(json!({})).await, "additionalParams.helm_chart_path must name the Helm chart of the VNF");
    let mut outside = instantiate_params();
    outside["helm_chart_path"] = json!("../../etc/passwd");
    assert!(run(outside).await.contains("../../etc/passwd"));
    let mut smuggled = instantiate_params();
    smuggled["helm_parameters"] = json!({"image.tag=1,replicaCountVdu1": 9});
    assert!(run(smuggled).await.contains("is not a dotted name of plain keys"));
    assert!(helm.calls().is_empty());

    // No helm at all: a clear message naming the command.
    let missing = HelmDriver {
        helm: HelmSettings { command: PathBuf::from("/nonexistent/helm"), timeout: Duration::from_secs(5) },
        ..driver.clone()
    };
    let error = execute(
        &missing,
        &server,
        &pkg,
        &Inventory::default(),
        instantiate_params(),
        InfraAction::Realize { plan: &plan },
        false,
    )
    .await
    .unwrap_err();
    assert!(error.message.contains("the helm command /nonexistent/helm cannot be run"), "{}", error.message);
}
