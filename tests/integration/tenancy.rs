//! Tenancy over real HTTP, on SQLite and PostgreSQL: two projects' clients, each with a
//! bearer token of the built-in token endpoint, and an administrator. Neither project can
//! see, change, filter for or be notified about the other's packages, instances, operation
//! occurrences and subscriptions; the administrator sees all of them.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use solgate_gateway::auth::{AuthMode, ClientSettings, Role};

use crate::helpers::{Db, Reply, TestApp, send};
use crate::lcm_support::*;
use crate::notifications::{Receiver, quick};

pub(crate) fn client(id: &str, role: Role, project: &str) -> ClientSettings {
    ClientSettings {
        id: id.into(),
        secret: format!("{id}-secret"),
        roles: vec![role],
        project: project.into(),
        certificate_name: String::new(),
    }
}

/// A handle on the same server whose requests carry `id`'s token.
pub(crate) async fn as_client(app: &TestApp, id: &str) -> TestApp {
    let reply = send(
        app.request(Method::POST, "/oauth2/token")
            .basic_auth(id, Some(format!("{id}-secret")))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let token = reply.json()["access_token"].as_str().unwrap().to_owned();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    let mut handle = TestApp::remote(app.address.clone(), app.database_url.clone(), None);
    handle.client = reqwest::Client::builder().default_headers(headers).build().unwrap();
    handle
}

fn ids(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json().as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_owned()).collect()
}

async fn list(app: &TestApp, path: &str) -> Vec<String> {
    let version = if path.starts_with("/vnflcm/v2") { "2.0.0" } else { "" };
    let mut request = app.request(Method::GET, path).header("Accept", "application/json");
    if !version.is_empty() {
        request = request.header("Version", version);
    }
    ids(&send(request).await)
}

async fn status(app: &TestApp, method: Method, path: &str, body: Option<Value>) -> u16 {
    let files = ["/vnfd", "/package_content", "/artifacts/"].iter().any(|part| path.contains(part));
    let accept = if files && method == Method::GET { "*/*" } else { "application/json" };
    let mut request = app.request(method, path).header("Accept", accept);
    if path.starts_with("/vnflcm/v2") {
        request = request.header("Version", "2.0.0");
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let reply = send(request).await;
    if reply.status >= 400 {
        reply.problem(reply.status);
    }
    reply.status
}

async fn subscribe(app: &TestApp, receiver: &Receiver, path: &str) -> String {
    let body = json!({"callbackUri": receiver.url(path)});
    let reply = send(v2(app, Method::POST, "/vnflcm/v2/subscriptions").json(&body)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.json()["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn two_projects_cannot_see_each_other_on_sqlite() {
    two_projects_cannot_see_each_other(Db::Sqlite).await;
}

#[tokio::test]
async fn two_projects_cannot_see_each_other_on_postgres() {
    two_projects_cannot_see_each_other(Db::Postgres).await;
}

async fn two_projects_cannot_see_each_other(db: Db) {
    let Some(app) = TestApp::spawn_on(db, |settings| {
        quick(settings);
        settings.auth.mode = AuthMode::Oauth2;
        settings.auth.clients = vec![
            client("p1-member", Role::Member, "p1"),
            client("p2-member", Role::Member, "p2"),
            client("operator", Role::Admin, "ops"),
        ];
    })
    .await
    else {
        return;
    };
    let (p1, p2, admin) =
        (as_client(&app, "p1-member").await, as_client(&app, "p2-member").await, as_client(&app, "operator").await);
    let receiver = Receiver::start().await;
    // The same callback and filter in both projects: two subscriptions, not a 303 to the other's.
    let sub1 = subscribe(&p1, &receiver, "/p1").await;
    let sub2 = subscribe(&p2, &receiver, "/p2").await;
    let sub2_again = subscribe(&p2, &receiver, "/p1").await;
    assert_ne!(sub1, sub2_again, "a project must not be sent to another project's subscription");
    let sub_admin = subscribe(&admin, &receiver, "/admin").await;

    // Packages.
    let (pkg1, vnfd1) = p1.onboard_sample().await;
    let (pkg2, vnfd2) = p2.onboard_sample().await;
    assert_eq!(list(&p1, "/vnfpkgm/v1/vnf_packages").await, vec![pkg1.clone()]);
    assert_eq!(list(&p2, "/vnfpkgm/v1/vnf_packages").await, vec![pkg2.clone()]);
    let leaked = format!("/vnfpkgm/v1/vnf_packages?filter=(eq,id,{pkg1})");
    assert!(list(&p2, &leaked).await.is_empty(), "a filter must not reveal another project's package");
    let leaked = format!("/vnfpkgm/v1/vnf_packages?filter=(eq,vnfdId,{vnfd1})");
    assert!(list(&p2, &leaked).await.is_empty());
    let base = format!("/vnfpkgm/v1/vnf_packages/{pkg1}");
    assert_eq!(status(&p2, Method::GET, &base, None).await, 404);
    assert_eq!(status(&p2, Method::GET, &format!("{base}/vnfd"), None).await, 404);
    assert_eq!(status(&p2, Method::GET, &format!("{base}/package_content"), None).await, 404);
    assert_eq!(status(&p2, Method::GET, &format!("{base}/artifacts/Scripts/install.sh"), None).await, 404);
    assert_eq!(status(&p2, Method::DELETE, &base, None).await, 404);
    let disable = send(
        p2.request(Method::PATCH, &base)
            .header("Content-Type", "application/merge-patch+json")
            .body(r#"{"operationalState":"DISABLED"}"#),
    )
    .await;
    assert_eq!(disable.status, 404, "{}", disable.text);
    let from_uri = json!({"addressInformation": "http://127.0.0.1:9/p.zip"});
    assert_eq!(
        status(&p2, Method::POST, &format!("{base}/package_content/upload_from_uri"), Some(from_uri)).await,
        404
    );
    assert_eq!(p2.upload_package(&pkg1, b"PK").await.status, 404);

    // Instances: another project's vnfdId is as unknown as a missing one.
    let refused =
        send(v2(&p2, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({"vnfdId": vnfd1, "vnfInstanceName": "x"})))
            .await;
    assert!(refused.problem(422).contains("not found"), "{}", refused.text);
    let inst1 = create_instance(&p1, &vnfd1, "secret-name-of-p1").await;
    let inst2 = create_instance(&p2, &vnfd2, "p2-instance").await;
    let op1 = task(&p1, &inst1, "instantiate", json!({"flavourId": "simple"})).await;
    let op1 = wait_op(&p1, &op1, &["COMPLETED"]).await;
    let op1_id = op1["id"].as_str().unwrap().to_owned();

    assert_eq!(list(&p2, "/vnflcm/v2/vnf_instances").await, vec![inst2.clone()]);
    for filter in
        [format!("(eq,id,{inst1})"), "(eq,vnfInstanceName,secret-name-of-p1)".into(), format!("(eq,vnfdId,{vnfd1})")]
    {
        let path = format!("/vnflcm/v2/vnf_instances?filter={filter}");
        assert!(list(&p2, &path).await.is_empty(), "{filter} revealed another project's instance");
    }
    let instance = format!("/vnflcm/v2/vnf_instances/{inst1}");
    // The owner's read renders (and caches) the instance first: the other project must
    // still get 404, not the cached rendering.
    assert_eq!(status(&p1, Method::GET, &instance, None).await, 200);
    assert_eq!(status(&p2, Method::GET, &instance, None).await, 404);
    assert_eq!(status(&p2, Method::DELETE, &instance, None).await, 404);
    let patch = send(
        p2.request(Method::PATCH, &instance)
            .header("Version", "2.0.0")
            .header("Content-Type", "application/merge-patch+json")
            .body(r#"{"vnfInstanceName":"taken"}"#),
    )
    .await;
    assert_eq!(patch.status, 404, "{}", patch.text);
    let terminate = json!({"terminationType": "FORCEFUL"});
    assert_eq!(status(&p2, Method::POST, &format!("{instance}/terminate"), Some(terminate)).await, 404);

    // Operation occurrences.
    assert!(list(&p2, "/vnflcm/v2/vnf_lcm_op_occs").await.is_empty());
    let path = format!("/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,{inst1})");
    assert!(list(&p2, &path).await.is_empty());
    assert_eq!(list(&p1, &path).await, vec![op1_id.clone()]);
    let op = format!("/vnflcm/v2/vnf_lcm_op_occs/{op1_id}");
    assert_eq!(status(&p2, Method::GET, &op, None).await, 404);
    for action in ["retry", "rollback", "fail", "cancel"] {
        assert_eq!(status(&p2, Method::POST, &format!("{op}/{action}"), None).await, 404, "{action}");
    }
    // The owner gets the state answer (409), so the 404 above was the tenancy.
    assert_eq!(status(&p1, Method::POST, &format!("{op}/retry"), None).await, 409);

    // Subscriptions.
    assert_eq!(list(&p1, "/vnflcm/v2/subscriptions").await, vec![sub1.clone()]);
    let mut own = vec![sub2.clone(), sub2_again.clone()];
    own.sort();
    assert_eq!(list(&p2, "/vnflcm/v2/subscriptions").await, own);
    let subscription = format!("/vnflcm/v2/subscriptions/{sub1}");
    assert_eq!(status(&p2, Method::GET, &subscription, None).await, 404);
    assert_eq!(status(&p2, Method::DELETE, &subscription, None).await, 404);
    assert_eq!(status(&p1, Method::GET, &subscription, None).await, 200);

    // v1 keeps its resources per project too.
    let v1 = send(
        p1.request(Method::POST, "/vnflcm/v1/vnf_instances")
            .header("Accept", "application/json")
            .json(&json!({"vnfdId": vnfd1})),
    )
    .await;
    assert_eq!(v1.status, 201, "{}", v1.text);
    let v1_id = v1.json()["id"].as_str().unwrap().to_owned();
    assert!(list(&p2, "/vnflcm/v1/vnf_instances").await.is_empty());
    assert_eq!(status(&p2, Method::GET, &format!("/vnflcm/v1/vnf_instances/{v1_id}"), None).await, 404);

    // The administrator sees every project's resources.
    let mut everyone = vec![inst1.clone(), inst2.clone()];
    everyone.sort();
    assert_eq!(list(&admin, "/vnflcm/v2/vnf_instances").await, everyone);
    assert_eq!(status(&admin, Method::GET, &instance, None).await, 200);
    assert_eq!(list(&admin, "/vnfpkgm/v1/vnf_packages").await.len(), 2);
    assert_eq!(list(&admin, "/vnflcm/v2/subscriptions").await.len(), 4);

    // Notifications: p1's subscription hears its creation, START and RESULT; p2's hear only
    // p2's creation; the administrator's hears both projects.
    // `/p1` is the callback of p1's subscription and of p2's second one.
    receiver.wait_delivered("/p1", 4, Duration::from_secs(20)).await;
    let heard2 = receiver.wait_delivered("/p2", 1, Duration::from_secs(20)).await;
    receiver.wait_delivered("/admin", 4, Duration::from_secs(20)).await;
    // Give stray deliveries time to arrive before asserting there are none.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let about = |path: &str| -> Vec<(String, String)> {
        receiver
            .delivered(path)
            .iter()
            .map(|r| {
                (r.body["vnfInstanceId"].as_str().unwrap_or_default().to_owned(), r.body["subscriptionId"].to_string())
            })
            .collect()
    };
    assert!(heard2.iter().all(|r| r.body["vnfInstanceId"] == inst2.as_str()), "{:?}", about("/p2"));
    let p1_path = about("/p1");
    // Each subscription on `/p1` heard only its own project.
    for (instance_id, subscription_id) in &p1_path {
        let expected = if *instance_id == inst1 { &sub1 } else { &sub2_again };
        assert_eq!(subscription_id.trim_matches('"'), expected, "{p1_path:?}");
    }
    assert!(about("/p2").iter().all(|(instance_id, _)| *instance_id == inst2), "{:?}", about("/p2"));
    let admin_heard: std::collections::HashSet<String> = about("/admin").into_iter().map(|(id, _)| id).collect();
    assert!(admin_heard.contains(&inst1) && admin_heard.contains(&inst2), "{admin_heard:?}");
    assert!(about("/admin").iter().all(|(_, subscription)| subscription.trim_matches('"') == sub_admin));
}
