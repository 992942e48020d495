//! The SOL013 layer: Version, Accept, Content-Type, bodies, unknown paths and methods,
//! panics — each as a ProblemDetails with the Version header.

use reqwest::Method;
use serde_json::json;

use solgate_schemas::Api;

use crate::helpers::{TestApp, newest, send};

const MALFORMED: &str = "is of invalid format. Must be of format Major.Minor.Patch.";

#[tokio::test]
async fn version_header_rows_on_v2() {
    let app = TestApp::spawn().await;
    let newest = newest(Api::Vnflcm, 2);
    let post = |version: Option<&str>| {
        let builder = app.request(Method::POST, "/vnflcm/v2/test_echo").json(&json!({"a": 1}));
        match version {
            Some(version) => builder.header("Version", version),
            None => builder,
        }
    };

    let reply = send(post(None)).await;
    assert_eq!(reply.problem(400), "'Version' HTTP header missing.");
    assert_eq!(reply.header("version"), Some(newest.as_str()), "errors echo the newest version of the major");

    for (sent, shown) in [
        ("abc", "abc"),
        ("2.0", "2.0"),
        ("02.0.0", "02.0.0"),
        ("2.00.0", "2.00.0"),
        ("0.1.2", "0.1.2"),
        ("2.0.0-foo", "2.0.0-foo"),
        ("2.0.0-abc:x", "2.0.0-abc:x"),
        ("x.y.z-impl:a", "x.y.z"),
        ("", ""),
    ] {
        let reply = send(post(Some(sent))).await;
        assert_eq!(reply.problem(400), format!("Version String {shown} {MALFORMED}"), "Version: {sent:?}");
        assert_eq!(reply.header("version"), Some(newest.as_str()));
    }

    for unsupported in ["9.9.9", "2.0.1", "1.3.0", "2.99.0"] {
        let reply = send(post(Some(unsupported))).await;
        assert_eq!(reply.problem(406), format!("Version {unsupported} not supported."));
    }

    for accepted in ["2.0.0", "2.0.0-impl:example.com:myProduct:4"] {
        let reply = send(post(Some(accepted))).await;
        assert_eq!(reply.status, 200, "{accepted}: {}", reply.text);
        // The version asked for is the version used, not the newest.
        assert_eq!(reply.header("version"), Some("2.0.0"));
        assert_eq!(reply.json()["version"], "2.0.0");
    }
}

#[tokio::test]
async fn version_header_is_optional_on_v1_and_means_newest_minor() {
    let app = TestApp::spawn().await;
    let newest = send(app.get("/vnflcm/v1/api_versions")).await.json()["apiVersions"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["version"]
        .as_str()
        .unwrap()
        .to_owned();
    let reply = send(app.request(Method::POST, "/vnflcm/v1/test_echo").json(&json!({}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.header("version"), Some(newest.as_str()));

    let reply =
        send(app.request(Method::POST, "/vnflcm/v1/test_echo").header("Version", "1.3.0").json(&json!({}))).await;
    assert_eq!(reply.header("version"), Some("1.3.0"));
    let reply =
        send(app.request(Method::POST, "/vnflcm/v1/test_echo").header("Version", "2.0.0").json(&json!({}))).await;
    assert_eq!(reply.problem(406), "Version 2.0.0 not supported.");
    let reply = send(app.request(Method::POST, "/vnflcm/v1/test_echo").header("Version", "1.3").json(&json!({}))).await;
    assert_eq!(reply.problem(400), format!("Version String 1.3 {MALFORMED}"));
}

#[tokio::test]
async fn accept_negotiation() {
    let app = TestApp::spawn().await;
    for accept in ["application/xml", "text/plain", "application/json;q=0"] {
        let reply = send(app.get("/vnflcm/v2/api_versions").header("Accept", accept)).await;
        assert_eq!(reply.problem(406), format!("Content type '{accept}' specified in 'Accept' header is not allowed."));
        assert_eq!(reply.header("version"), Some(newest(Api::Vnflcm, 2).as_str()));
    }
    for accept in
        ["*/*", "application/*", "application/json", "text/html, application/json;q=0.5", "application/xml, */*;q=0.1"]
    {
        let reply = send(app.get("/vnflcm/v2/api_versions").header("Accept", accept)).await;
        assert_eq!(reply.status, 200, "{accept}");
    }
    // No Accept at all.
    let reply = send(app.get("/vnflcm/api_versions")).await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn content_type_rules() {
    let app = TestApp::spawn().await;
    let echo = |method: Method, content_type: &str, body: &'static str| {
        app.request(method, "/vnflcm/v2/test_echo")
            .header("Version", "2.0.0")
            .header("Content-Type", content_type)
            .body(body)
    };
    let reply = send(echo(Method::POST, "application/xml", "<a/>")).await;
    assert_eq!(reply.problem(415), "Content type 'application/xml' specified in 'Content-Type' header is not allowed.");
    assert_eq!(reply.header("version"), Some("2.0.0"));
    // JSON Merge Patch is for PATCH only.
    let reply = send(echo(Method::POST, "application/merge-patch+json", "{}")).await;
    assert_eq!(reply.status, 415);
    let reply = send(echo(Method::PATCH, "application/merge-patch+json", r#"{"a": null}"#)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["body"], json!({"a": null}));
    let reply = send(echo(Method::POST, "application/json; charset=utf-8", r#"{"a": 1}"#)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn bodies_invalid_empty_and_oversize() {
    let app = TestApp::spawn_with(|settings| settings.http.max_body_bytes = 1024).await;
    let post = |body: String| {
        app.request(Method::POST, "/vnflcm/v2/test_echo")
            .header("Version", "2.0.0")
            .header("Content-Type", "application/json")
            .body(body)
    };
    let reply = send(post("{\"vnfdId\": ".into())).await;
    assert!(reply.problem(400).starts_with("Malformed request body"), "{}", reply.text);
    let reply = send(post(String::new())).await;
    assert_eq!(reply.problem(400), "Request body is missing.");
    let reply = send(post(format!("{{\"pad\": \"{}\"}}", "x".repeat(2048)))).await;
    assert_eq!(reply.problem(413), "The request body is larger than the allowed 1024 bytes.");
    assert_eq!(reply.header("version"), Some("2.0.0"));
    // A body without Content-Type is read as JSON (as Tacker and its clients expect).
    let reply =
        send(app.request(Method::POST, "/vnflcm/v2/test_echo").header("Version", "2.0.0").body("{\"a\":1}")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn unknown_paths_are_problem_details() {
    let app = TestApp::spawn().await;
    let reply = send(app.get("/vnflcm/v2/scale_to_levels").header("Version", "2.0.0")).await;
    assert_eq!(reply.problem(404), "The resource /vnflcm/v2/scale_to_levels could not be found.");
    assert_eq!(reply.header("version"), Some("2.0.0"));
    // Under an API but an unknown major: 404, still a ProblemDetails.
    let reply = send(app.get("/vnflcm/v3/api_versions")).await;
    assert_eq!(reply.problem(404), "The resource /vnflcm/v3/api_versions could not be found.");
    // Outside every API.
    let reply = send(app.get("/nowhere")).await;
    assert_eq!(reply.problem(404), "The resource /nowhere could not be found.");
    assert_eq!(reply.header("version"), None);
}

#[tokio::test]
async fn wrong_method_is_405_with_allow() {
    let app = TestApp::spawn().await;
    let reply = send(app.request(Method::DELETE, "/vnflcm/v2/test_echo").header("Version", "2.0.0")).await;
    assert_eq!(reply.problem(405), "Method DELETE is not supported.");
    assert_eq!(reply.header("allow"), Some("POST, PATCH"));
    assert_eq!(reply.header("version"), Some("2.0.0"));
}

#[tokio::test]
async fn a_panicking_handler_gives_500_and_the_server_keeps_serving() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        let reply = send(app.get("/vnflcm/v2/test_panic").header("Version", "2.0.0")).await;
        let detail = reply.problem(500);
        let request_id = reply.header("x-request-id").unwrap().to_owned();
        assert!(detail.contains(&request_id), "500 detail names the request id: {detail}");
        assert!(!detail.contains("on purpose"), "the cause stays in the log: {detail}");
        assert_eq!(reply.header("version"), Some("2.0.0"));
    }
    let reply = send(app.get("/vnflcm/api_versions")).await;
    assert_eq!(reply.status, 200);
}
