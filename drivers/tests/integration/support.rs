//! Recorded request/response exchanges served by a wiremock server on 127.0.0.1.
//!
//! A fixture file (tests/fixtures/<area>/<name>.json) holds `{"_source": "...",
//! "exchanges": [...]}`. Each exchange is
//! `{"request": {"method", "path", "query"?, "query_absent"?, "headers"?},
//!   "response": {"status", "headers"?, "body"? | "body_text"? | "body_ndjson"?}, "times"?}`.
//! Exchanges are tried in file order; one with `times` stops matching after that many
//! requests, which is how a sequence (IN_PROGRESS, IN_PROGRESS, COMPLETE) is recorded.
//! `{{base}}` and the test's own `{{vars}}` are substituted before parsing.
//!
//! [`TlsFront`] (tls_front.rs) puts HTTPS in front of such a server.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Map, Value};
use wiremock::matchers::{header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub use crate::tls_front::TlsFront;

#[derive(Deserialize)]
struct Fixture {
    exchanges: Vec<Exchange>,
}

#[derive(Deserialize)]
struct Exchange {
    request: RecordedRequest,
    response: RecordedResponse,
    times: Option<u64>,
}

#[derive(Deserialize)]
struct RecordedRequest {
    method: String,
    path: String,
    #[serde(default)]
    query: Map<String, Value>,
    #[serde(default)]
    query_absent: Vec<String>,
    #[serde(default)]
    headers: Map<String, Value>,
}

#[derive(Deserialize)]
struct RecordedResponse {
    status: u16,
    #[serde(default)]
    headers: Map<String, Value>,
    body: Option<Value>,
    body_text: Option<String>,
    body_ndjson: Option<Vec<Value>>,
}

/// Loads `tests/fixtures/<name>` with `{{base}}` and `vars` substituted and mounts it.
pub async fn mount_fixture(server: &MockServer, name: &str, vars: &[(&str, &str)]) {
    mount_fixture_times(server, name, vars, None).await;
}

/// As [`mount_fixture`], every exchange answering at most `times` requests when given.
pub async fn mount_fixture_times(server: &MockServer, name: &str, vars: &[(&str, &str)], times: Option<u64>) {
    mount_fixture_on(server, &server.uri(), name, vars, times).await;
}

/// As [`mount_fixture`], with `{{base}}` standing for `base` (a [`TlsFront`]'s URI) instead
/// of the server's own plain-http URI, so that the URLs the answers carry (a Keystone
/// catalog, Heat links) lead back through the front.
#[cfg(feature = "openstack")]
pub async fn mount_fixture_at(server: &MockServer, base: &str, name: &str, vars: &[(&str, &str)]) {
    mount_fixture_on(server, base, name, vars, None).await;
}

async fn mount_fixture_on(server: &MockServer, base: &str, name: &str, vars: &[(&str, &str)], times: Option<u64>) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let mut text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text = text.replace("{{base}}", base);
    for (key, value) in vars {
        text = text.replace(&format!("{{{{{key}}}}}"), value);
    }
    assert!(!text.contains("{{"), "{name}: unsubstituted placeholder");
    let fixture: Fixture = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    for mut exchange in fixture.exchanges {
        exchange.times = times.or(exchange.times);
        mount_exchange(server, exchange).await;
    }
}

/// Mounts exchanges written inline in a test (same shape as a fixture's `exchanges`).
pub async fn mount_exchanges(server: &MockServer, exchanges: Value) {
    let exchanges: Vec<Exchange> = serde_json::from_value(exchanges).unwrap();
    for exchange in exchanges {
        mount_exchange(server, exchange).await;
    }
}

async fn mount_exchange(server: &MockServer, exchange: Exchange) {
    let req = exchange.request;
    let mut mock = Mock::given(method(req.method.as_str())).and(path(req.path.as_str()));
    for (key, value) in &req.query {
        mock = mock.and(query_param(key.as_str(), as_text(value)));
    }
    for key in &req.query_absent {
        mock = mock.and(query_param_is_missing(key.as_str()));
    }
    for (key, value) in &req.headers {
        mock = mock.and(header(key.as_str(), as_text(value).as_str()));
    }

    let resp = exchange.response;
    let mut template = ResponseTemplate::new(resp.status);
    for (key, value) in &resp.headers {
        template = template.insert_header(key.as_str(), as_text(value).as_str());
    }
    let content_type =
        resp.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| as_text(v));
    if let Some(body) = resp.body {
        template = template.set_body_raw(body.to_string(), content_type.as_deref().unwrap_or("application/json"));
    } else if let Some(text) = resp.body_text {
        template = template.set_body_raw(text, content_type.as_deref().unwrap_or("text/plain"));
    } else if let Some(events) = resp.body_ndjson {
        // A watch stream: one JSON event per line.
        let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
        template = template.set_body_raw(lines, content_type.as_deref().unwrap_or("application/json"));
    }

    let mut mock = mock.respond_with(template);
    if let Some(times) = exchange.times {
        mock = mock.up_to_n_times(times);
    }
    server.register(mock).await;
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Requests the server received with this method and path, in order.
pub async fn received(server: &MockServer, http_method: &str, url_path: &str) -> Vec<Request> {
    let all = server.received_requests().await.unwrap_or_default();
    all.into_iter().filter(|r| r.method.as_str() == http_method && r.url.path() == url_path).collect()
}

/// A header of a received request as text.
pub fn header_of<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

/// The query of a received request as (key, value) pairs.
pub fn query_of(request: &Request) -> Vec<(String, String)> {
    request.url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}
