//! Kubernetes client against recorded exchanges (tests/fixtures/kubernetes).

use std::time::Duration;

use serde_json::{Value, json};
use solgate_drivers::VimConnection;
use solgate_drivers::kubernetes::{
    DeleteOutcome, KubernetesClient, KubernetesError, PodCondition, ResourceRef, VimCredentials, WaitOptions,
};
use wiremock::MockServer;

use crate::support::{header_of, mount_exchanges, mount_fixture, query_of, received};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const PODS: &str = "/api/v1/namespaces/default/pods";
const TOKEN: &str = "eyJhbGciOiJSUzI1NiIsImtpZCI6InNvbGdhdGUifQ.sa-token";

/// Two documents, the second without a namespace, as a VNF package's Definitions/ files hold them.
const MANIFEST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vdu1
  labels:
    app: vdu1
spec:
  replicas: 2
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

fn client(server: &MockServer) -> KubernetesClient {
    // A SOL003 VimConnectionInfo as Tacker's vim_utils.vim_to_conn_info writes it for a bearer-token VIM.
    let vim: VimConnection = serde_json::from_value(json!({
        "vimId": "8a3adb69-0784-43c7-833e-aab0b6ab4470",
        "vimType": "ETSINFV.KUBERNETES.V_1",
        "interfaceInfo": {"endpoint": server.uri()},
        "accessInfo": {"bearer_token": TOKEN},
        "extra": {}
    }))
    .unwrap();
    KubernetesClient::new(&VimCredentials::from_vim_connection(&vim).unwrap()).unwrap()
}

fn fast() -> WaitOptions {
    WaitOptions { timeout: Duration::from_secs(10), poll_interval: Duration::from_millis(20) }
}

fn deployment_ref() -> ResourceRef {
    ResourceRef::new("apps/v1", "Deployment", Some("default"), "vdu1").unwrap()
}

#[tokio::test]
async fn apply_sends_each_document_by_server_side_apply() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/apply_deployment_service.json", &[]).await;

    let applied = client(&server).apply_manifests(MANIFEST).await.unwrap();
    let stored: Vec<_> = applied.iter().map(|o| o["metadata"]["uid"].as_str().unwrap()).collect();
    assert_eq!(stored, ["9f0c6a66-3f5e-4a8e-8d2b-0b6f1c2d3e4f", "3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b"]);

    let requests = server.received_requests().await.unwrap();
    let seen: Vec<_> = requests.iter().map(|r| (r.method.as_str().to_owned(), r.url.path().to_owned())).collect();
    assert_eq!(
        seen,
        [
            ("PATCH".to_owned(), format!("{DEPLOYMENTS}/vdu1")),
            ("PATCH".to_owned(), "/api/v1/namespaces/default/services/vdu1-svc".to_owned())
        ]
    );
    for request in &requests {
        assert_eq!(
            query_of(request),
            [("fieldManager".to_owned(), "solgate".to_owned()), ("force".to_owned(), "true".to_owned())]
        );
        assert_eq!(header_of(request, "content-type"), Some("application/apply-patch+yaml"));
        assert_eq!(header_of(request, "authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    }
    // The body is the document itself, with the VIM's namespace filled in.
    let service: Value = requests[1].body_json().unwrap();
    assert_eq!(
        service,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "vdu1-svc", "namespace": "default"},
            "spec": {"selector": {"app": "vdu1"}, "ports": [{"name": "http", "port": 80, "targetPort": 80}]}})
    );
    let deployment: Value = requests[0].body_json().unwrap();
    assert_eq!(deployment["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27");
}

#[tokio::test]
async fn api_error_status_is_surfaced_with_reason_and_message() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/apply_invalid.json", &[]).await;

    let err = client(&server).apply_manifests(MANIFEST).await.unwrap_err();
    match &err {
        KubernetesError::Api { status, reason, message } => {
            assert_eq!(*status, 422);
            assert_eq!(reason.as_deref(), Some("Invalid"));
            assert!(message.starts_with("Deployment.apps \"vdu1\" is invalid: spec.template.metadata.labels"));
        }
        other => panic!("expected Api, got {other:?}"),
    }
    assert_eq!(err.http_status(), Some(422));
    // The first document failed: the second one was not sent.
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn delete_uses_foreground_propagation_in_reverse_order_and_tolerates_404() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/delete.json", &[]).await;

    let outcomes = client(&server).delete_manifests(MANIFEST).await.unwrap();
    let outcomes: Vec<_> = outcomes.iter().map(|(r, o)| (r.to_string(), *o)).collect();
    assert_eq!(
        outcomes,
        [
            ("Service default/vdu1-svc".to_owned(), DeleteOutcome::NotFound),
            ("Deployment default/vdu1".to_owned(), DeleteOutcome::Deleted)
        ]
    );
    let deletes = received(&server, "DELETE", &format!("{DEPLOYMENTS}/vdu1")).await;
    assert_eq!(query_of(&deletes[0]), [("propagationPolicy".to_owned(), "Foreground".to_owned())]);
    assert_eq!(header_of(&deletes[0], "authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

#[tokio::test]
async fn scale_patches_the_scale_subresource() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/scale.json", &[]).await;
    let k8s = client(&server);

    let scale = k8s.scale(&deployment_ref(), 3).await.unwrap();
    assert_eq!(scale["spec"]["replicas"], 3);
    let patches = received(&server, "PATCH", &format!("{DEPLOYMENTS}/vdu1/scale")).await;
    assert_eq!(patches[0].body_json::<Value>().unwrap(), json!({"spec": {"replicas": 3}}));

    let service = ResourceRef::new("v1", "Service", Some("default"), "vdu1-svc").unwrap();
    assert!(matches!(k8s.scale(&service, 3).await, Err(KubernetesError::NotScalable(kind)) if kind == "Service"));
}

#[tokio::test]
async fn pods_are_listed_by_label_selector() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/list_pods.json", &[]).await;

    let pods = client(&server).list_pods("default", "app=vdu1").await.unwrap();
    assert_eq!(pods.resource_version, "1400");
    let names: Vec<_> = pods.items.iter().map(|p| p["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["vdu1-5d4b9c8f7d-8kx2p", "vdu1-5d4b9c8f7d-q7wzn"]);
}

#[tokio::test]
async fn deployment_wait_follows_the_watch_until_available() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/watch_deployment.json", &[]).await;

    let deployment = client(&server).wait_deployment_available("default", "vdu1", &fast()).await.unwrap();
    assert_eq!(deployment["metadata"]["resourceVersion"], "1009");
    assert_eq!(deployment["status"]["availableReplicas"], 2);

    let gets = received(&server, "GET", DEPLOYMENTS).await;
    assert_eq!(gets.len(), 2, "one list, one watch");
    let watch = query_of(&gets[1]);
    for expected in [("watch", "true"), ("resourceVersion", "1000"), ("fieldSelector", "metadata.name=vdu1")] {
        assert!(watch.contains(&(expected.0.to_owned(), expected.1.to_owned())), "{watch:?}");
    }
    assert_eq!(header_of(&gets[1], "authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

#[tokio::test]
async fn refused_watch_falls_back_to_polling() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/watch_refused.json", &[]).await;

    let deployment = client(&server).wait_deployment_available("default", "vdu1", &fast()).await.unwrap();
    assert_eq!(deployment["metadata"]["resourceVersion"], "1009");
    let gets = received(&server, "GET", DEPLOYMENTS).await;
    let watches = gets.iter().filter(|r| query_of(r).iter().any(|(k, _)| k == "watch")).count();
    assert_eq!((gets.len(), watches), (3, 1), "list, refused watch, polled list");
}

#[tokio::test]
async fn expired_resource_version_relists_and_watches_again() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/watch_expired.json", &[]).await;

    let pods = client(&server)
        .wait_pods("default", "app=vdu1", PodCondition::Running { count: Some(2) }, &fast())
        .await
        .unwrap();
    let mut names: Vec<_> = pods.iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    assert_eq!(names, ["vdu1-5d4b9c8f7d-8kx2p", "vdu1-5d4b9c8f7d-q7wzn"]);
    let versions: Vec<_> = received(&server, "GET", PODS)
        .await
        .iter()
        .filter_map(|r| query_of(r).into_iter().find(|(k, _)| k == "resourceVersion").map(|(_, v)| v))
        .collect();
    assert_eq!(versions, ["10", "2000"]);
}

#[tokio::test]
async fn pods_wait_until_gone_from_delete_events() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/watch_pods_gone.json", &[]).await;

    let pods = client(&server).wait_pods("default", "app=vdu1", PodCondition::Gone, &fast()).await.unwrap();
    assert!(pods.is_empty());
}

#[tokio::test]
async fn wait_times_out_with_what_it_saw_last() {
    let server = MockServer::start().await;
    mount_fixture(&server, "kubernetes/watch_pods_gone.json", &[]).await;

    // The pods are gone only after the watch; waiting for them Running never succeeds.
    let options = WaitOptions { timeout: Duration::from_millis(300), poll_interval: Duration::from_millis(20) };
    let err = client(&server)
        .wait_pods("default", "app=vdu1", PodCondition::Running { count: Some(2) }, &options)
        .await
        .unwrap_err();
    match err {
        KubernetesError::Timeout { what, last_state, .. } => {
            assert_eq!(what, "2 Running pods matching 'app=vdu1'");
            assert!(last_state.contains("2 terminating") || last_state.contains("0 pods"), "{last_state}");
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_answer_that_is_not_an_event_stream_falls_back_to_polling() {
    let server = MockServer::start().await;
    let pod = |phase: &str, rv: &str| {
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": rv}, "items": [
            {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "vdu1-5d4b9c8f7d-8kx2p", "namespace": "default",
                "resourceVersion": rv, "labels": {"app": "vdu1"}}, "status": {"phase": phase}}]})
    };
    // A proxy in front of the API server that buffers and rewrites streaming answers.
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "GET", "path": PODS, "query_absent": ["watch"]},
             "response": {"status": 200, "body": pod("Pending", "40")}, "times": 1},
            {"request": {"method": "GET", "path": PODS, "query_absent": ["watch"]},
             "response": {"status": 200, "body": pod("Running", "41")}},
            {"request": {"method": "GET", "path": PODS, "query": {"watch": "true"}},
             "response": {"status": 200, "headers": {"Content-Type": "text/html"},
                "body_text": "<html><body>Request buffered by proxy</body></html>"}}
        ]),
    )
    .await;

    let pods = client(&server)
        .wait_pods("default", "app=vdu1", PodCondition::Running { count: Some(1) }, &fast())
        .await
        .unwrap();
    assert_eq!(pods[0]["metadata"]["resourceVersion"], "41");
    assert_eq!(received(&server, "GET", PODS).await.len(), 3, "list, unusable watch, polled list");
}
