//! ETSI conformance points over real HTTP: ETag / If-Match (SOL003 v3.3.1 5.4.3.3.2 and
//! 5.4.3.3.4, SOL005 for packages, RFC 9110 13.1.1), and 405 before 406.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, send};
use crate::lcm_support::*;

fn patch(
    app: &TestApp,
    path: &str,
    version: Option<&str>,
    if_match: Option<&str>,
    body: &str,
) -> reqwest::RequestBuilder {
    let mut request = app
        .request(Method::PATCH, path)
        .header("Accept", "application/json")
        .header("Content-Type", "application/merge-patch+json")
        .body(body.to_owned());
    if let Some(version) = version {
        request = request.header("Version", version);
    }
    if let Some(tag) = if_match {
        // Header names are case-insensitive: sent as clients spell them, not as we do.
        request = request.header("if-MATCH", tag);
    }
    request
}

/// GET an instance (v1 or v2): its strong ETag.
async fn etag_of(app: &TestApp, path: &str, version: Option<&str>) -> String {
    let mut request = app.get(path).header("Accept", "application/json");
    if let Some(version) = version {
        request = request.header("Version", version);
    }
    let reply = send(request).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let tag = reply.header("etag").expect("the resource carries an ETag").to_owned();
    assert!(tag.starts_with('"') && tag.ends_with('"') && !tag.starts_with("W/"), "a strong tag: {tag}");
    tag
}

#[tokio::test]
async fn if_match_guards_the_patch_of_instances_v1_and_v2() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    for (major, version) in [(2, Some("2.0.0")), (1, None)] {
        let create = send(
            app.request(Method::POST, &format!("/vnflcm/v{major}/vnf_instances"))
                .header("Accept", "application/json")
                .header("Version", version.unwrap_or("1.3.0"))
                .json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": "tagged"})),
        )
        .await;
        assert_eq!(create.status, 201, "{}", create.text);
        let id = create.json()["id"].as_str().unwrap().to_owned();
        let path = format!("/vnflcm/v{major}/vnf_instances/{id}");
        let tag = etag_of(&app, &path, version).await;
        assert_eq!(etag_of(&app, &path, version).await, tag, "the tag is stable while nothing changes");

        for stale in ["\"no-such-etag\"", "W/\"0-2.0.0\"", &tag.replace('"', "")] {
            let reply = send(patch(&app, &path, version, Some(stale), r#"{"vnfInstanceName":"stale"}"#)).await;
            assert!(reply.problem(412).contains("If-Match"), "{stale}: {}", reply.text);
        }
        let show = send(app.get(&path).header("Version", version.unwrap_or("1.3.0"))).await;
        assert_eq!(show.json()["vnfInstanceName"], "tagged", "a refused PATCH changed nothing");

        let reply = send(patch(&app, &path, version, Some(&tag), r#"{"vnfInstanceName":"renamed"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        let op_url = reply.header("location").unwrap().to_owned();
        wait_op(&app, &op_url, &["COMPLETED"]).await;
        let changed = etag_of(&app, &path, version).await;
        assert_ne!(changed, tag, "the tag changes with the instance");
        let reply = send(patch(&app, &path, version, Some(&tag), r#"{"vnfInstanceName":"again"}"#)).await;
        reply.problem(412);
        // Any of several tags, or `*`, matches the current one.
        let several = format!("\"1-9.9.9\", {changed}");
        let reply = send(patch(&app, &path, version, Some(&several), r#"{"vnfInstanceName":"listed"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        let reply = send(patch(&app, &path, version, Some("*"), r#"{"vnfInstanceName":"any"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        // Without If-Match the PATCH is unconditional, as before.
        let reply = send(patch(&app, &path, version, None, r#"{"vnfInstanceName":"free"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        // An unknown instance stays 404 whatever If-Match says.
        let unknown = format!("/vnflcm/v{major}/vnf_instances/{}", uuid::Uuid::new_v4());
        send(patch(&app, &unknown, version, Some(&tag), r#"{"vnfInstanceName":"x"}"#)).await.problem(404);
    }
}

#[tokio::test]
async fn if_match_guards_the_patch_of_packages() {
    let app = TestApp::spawn().await;
    let (package_id, _) = app.onboard_sample().await;
    let path = format!("/vnfpkgm/v1/vnf_packages/{package_id}");
    let tag = etag_of(&app, &path, None).await;
    let disable = r#"{"operationalState":"DISABLED"}"#;
    let reply = send(patch(&app, &path, None, Some("\"no-such-etag\""), disable)).await;
    reply.problem(412);
    let show = send(app.get(&path)).await;
    assert_eq!(show.json()["operationalState"], "ENABLED", "a refused PATCH changed nothing");
    let reply = send(patch(&app, &path, None, Some(&tag), disable)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["operationalState"], "DISABLED");
    let reply = send(patch(&app, &path, None, Some(&tag), r#"{"operationalState":"ENABLED"}"#)).await;
    reply.problem(412);
    let current = etag_of(&app, &path, None).await;
    assert_ne!(current, tag);
    let reply = send(patch(&app, &path, None, Some(&current), r#"{"operationalState":"ENABLED"}"#)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn subscriptions_carry_a_strong_etag_per_representation() {
    let app = TestApp::spawn_with(|settings| settings.notifications.test_callback_uri = false).await;
    let reply =
        send(v2(&app, Method::POST, "/vnflcm/v2/subscriptions").json(&json!({"callbackUri": "http://127.0.0.1:9/cb"})))
            .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let path = format!("/vnflcm/v2/subscriptions/{id}");
    let tag = etag_of(&app, &path, Some("2.0.0")).await;
    assert_eq!(etag_of(&app, &path, Some("2.0.0")).await, tag);
}

/// An unsupported method is 405 with `Allow`, whatever `Accept` asks for.
#[tokio::test]
async fn method_not_allowed_beats_not_acceptable() {
    let app = TestApp::spawn().await;
    let (package_id, _) = app.onboard_sample().await;
    let base = format!("/vnfpkgm/v1/vnf_packages/{package_id}");
    for (method, path, accept) in [
        (Method::POST, format!("{base}/vnfd"), "application/zip"),
        (Method::PUT, format!("{base}/vnfd"), "text/plain"),
        (Method::PATCH, format!("{base}/vnfd"), "application/zip"),
        (Method::DELETE, format!("{base}/vnfd"), "application/zip"),
        (Method::POST, format!("{base}/package_content"), "application/zip"),
        (Method::PUT, base.clone(), "application/zip"),
    ] {
        let reply = send(app.request(method.clone(), &path).header("Accept", accept)).await;
        assert!(reply.problem(405).contains("is not supported"), "{method} {path}");
        assert!(reply.header("allow").is_some(), "{method} {path}");
    }
    // A supported method still gets 406 for an Accept it cannot satisfy.
    let reply = send(app.get(&format!("{base}/vnfd")).header("Accept", "application/json")).await;
    reply.problem(406);
    let reply = send(app.get(&base).header("Accept", "application/zip")).await;
    reply.problem(406);
}
