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

/// What came back on a raw connection: status, head (lower-cased names) and body.
pub struct RawReply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl RawReply {
    /// The answer is a ProblemDetails for `status`; returns its detail.
    pub fn problem(&self, status: u16) -> String {
        assert_eq!(self.status, status, "{}\n\n{}", self.head, self.body);
        let head = self.head.to_ascii_lowercase();
        assert!(head.contains("\r\ncontent-type: application/problem+json\r\n"), "{}", self.head);
        assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", self.body.len())), "{}", self.head);
        assert!(head.contains("\r\nx-request-id: "), "{}", self.head);
        let problem: serde_json::Value = serde_json::from_str(&self.body).expect("a JSON body");
        assert_eq!(problem["status"], status, "{problem}");
        problem["detail"].as_str().expect("a detail").to_owned()
    }
}

/// Splits what a server sent on one connection into its responses.
pub fn split_responses(mut bytes: &[u8]) -> Vec<RawReply> {
    let mut replies = Vec::new();
    while let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let length = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let body = &bytes[end + 4..(end + 4 + length).min(bytes.len())];
        let status = head.get(9..12).and_then(|code| code.parse().ok()).unwrap_or(0);
        replies.push(RawReply {
            status,
            head: head.clone() + "\r\n",
            body: String::from_utf8_lossy(body).into_owned(),
        });
        bytes = &bytes[(end + 4 + length).min(bytes.len())..];
    }
    assert!(bytes.is_empty(), "bytes after the last response: {:?}", String::from_utf8_lossy(bytes));
    replies
}

/// Writes `request` on a new connection (concurrently with reading, since the server may
/// answer before it has read everything) and returns every response until the server closes.
pub async fn raw_exchange<S>(stream: S, request: Vec<u8>) -> Vec<RawReply>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut reader, mut writer) = tokio::io::split(stream);
    let write = tokio::spawn(async move {
        // The server may close early; what it answered is what the test looks at.
        let _ = writer.write_all(&request).await;
        let _ = writer.flush().await;
        writer
    });
    let mut received = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match tokio::time::timeout(std::time::Duration::from_secs(20), reader.read(&mut chunk)).await {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            // A reset after the answer: the answer is what counts.
            Ok(Err(error)) if !received.is_empty() => {
                eprintln!("read ended with {error}");
                break;
            }
            Ok(Err(error)) => panic!("no answer: {error}"),
            Err(_) => {
                panic!("the server neither answered nor closed in 20 s: {:?}", String::from_utf8_lossy(&received))
            }
        }
    }
    drop(write.await);
    split_responses(&received)
}

pub fn huge_head(path: &str) -> Vec<u8> {
    let filler = "x".repeat(8000);
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: solgate\r\n");
    for n in 0..20 {
        request.push_str(&format!("X-Filler-{n}: {filler}\r\n"));
    }
    request.push_str("\r\n");
    request.into_bytes()
}

async fn connect(app: &TestApp) -> tokio::net::TcpStream {
    let address = app.address.trim_start_matches("http://");
    tokio::net::TcpStream::connect(address).await.unwrap()
}

#[tokio::test]
async fn errors_of_the_http_layer_are_problem_details() {
    let app = TestApp::spawn().await;

    // A request head over 128 KiB: 431.
    let replies = raw_exchange(connect(&app).await, huge_head("/vnflcm/api_versions")).await;
    assert_eq!(replies.len(), 1);
    assert!(replies[0].problem(431).contains("too large"));

    // More header fields than the parser takes: 431 too.
    let mut request = "GET /vnflcm/api_versions HTTP/1.1\r\nHost: solgate\r\n".to_owned();
    for n in 0..120 {
        request.push_str(&format!("X-Field-{n}: {n}\r\n"));
    }
    request.push_str("\r\n");
    let replies = raw_exchange(connect(&app).await, request.into_bytes()).await;
    assert!(replies[0].problem(431).contains("96 header fields"));

    // A malformed request line, and a bad header name: 400.
    for garbage in ["GARBAGE\r\n\r\n", "GET /vnflcm/api_versions HTTP/1.1\r\nBad Header: x\r\n\r\n"] {
        let replies = raw_exchange(connect(&app).await, garbage.as_bytes().to_vec()).await;
        assert_eq!(replies.len(), 1, "{garbage:?}");
        assert!(replies[0].problem(400).contains("could not be parsed"), "{garbage:?}");
    }

    // A good request and garbage pipelined behind it: the good one is answered as always,
    // the garbage with a ProblemDetails.
    let request = b"GET /vnflcm/api_versions HTTP/1.1\r\nHost: solgate\r\n\r\nNOT HTTP AT ALL\r\n\r\n".to_vec();
    let replies = raw_exchange(connect(&app).await, request).await;
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0].status, 200, "{}", replies[0].head);
    assert!(replies[0].body.contains("\"uriPrefix\":\"/vnflcm\""), "{}", replies[0].body);
    replies[1].problem(400);

    // The application's own bodiless answers are left alone: HEAD of a refused request.
    let request = b"HEAD /vnflcm/v2/vnf_instances HTTP/1.1\r\nHost: solgate\r\nConnection: close\r\n\r\n".to_vec();
    let replies = raw_exchange(connect(&app).await, request).await;
    assert_eq!(replies.len(), 1);
    assert!(replies[0].status >= 400, "{}", replies[0].head);
    assert!(replies[0].body.is_empty(), "a HEAD answer has no body: {}", replies[0].body);

    // A request head that never completes: 408 after the 5 s the server waits.
    let stream = connect(&app).await;
    let replies = raw_exchange(stream, b"GET /vnflcm/api_versions HTTP/1.1\r\nHost: sol".to_vec()).await;
    assert!(replies[0].problem(408).contains("in time"));

    // The server still serves.
    let reply = send(app.get("/vnflcm/api_versions")).await;
    assert_eq!(reply.status, 200);
}
