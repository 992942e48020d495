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
//! [`TlsFront`] puts HTTPS in front of such a server: a test CA, a certificate for
//! `localhost`, and a TLS terminator forwarding the decrypted bytes to the server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Map, Value};
use wiremock::matchers::{header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

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

/// HTTPS in front of a plain-http [`MockServer`]: a TLS terminator on 127.0.0.1 with a
/// certificate for `localhost` and 127.0.0.1 issued by a CA made for this front alone, so
/// a client gets through only if it trusts [`TlsFront::ca_pem`] and verifies against it.
/// Every accepted handshake is counted, every failed one kept with its error, which is how
/// a test tells that its traffic really went over TLS (and that an untrusting client was
/// turned away by the certificate check, not by something else).
pub struct TlsFront {
    /// `https://localhost:<port>`.
    pub uri: String,
    /// The test CA's certificate (PEM), the only issuer of the front's certificate.
    pub ca_pem: String,
    handshakes: Arc<AtomicUsize>,
    failures: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TlsFront {
    /// Listens on 127.0.0.1 (a free port) and forwards each TLS connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> TlsFront {
        let (ca_pem, acceptor) = test_pki();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let handshakes = Arc::new(AtomicUsize::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let (counted, failed) = (handshakes.clone(), failures.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let (acceptor, counted, failed) = (acceptor.clone(), counted.clone(), failed.clone());
                tokio::spawn(async move {
                    let mut tls = match acceptor.accept(tcp).await {
                        Ok(tls) => tls,
                        Err(e) => {
                            failed.lock().unwrap().push(e.to_string());
                            return;
                        }
                    };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let Ok(mut plain) = tokio::net::TcpStream::connect(upstream).await else { return };
                    // Ends when either side closes; a reset is the client's pool going away.
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        TlsFront { uri: format!("https://localhost:{port}"), ca_pem, handshakes, failures, task }
    }

    /// TLS handshakes completed so far.
    pub fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }

    /// Why the handshakes that failed failed, as the server side of rustls saw it.
    pub fn handshake_failures(&self) -> Vec<String> {
        self.failures.lock().unwrap().clone()
    }

    /// [`Self::handshake_failures`] once there is one (up to 5 s): a client gives up as soon
    /// as it sends its alert, a little before the front's task has read and recorded it.
    pub async fn settled_handshake_failures(&self) -> Vec<String> {
        for _ in 0..500 {
            let failures = self.handshake_failures();
            if !failures.is_empty() {
                return failures;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        Vec::new()
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A fresh CA (PEM) and an acceptor presenting a `localhost` / 127.0.0.1 certificate it issued.
fn test_pki() -> (String, tokio_rustls::TlsAcceptor) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "solgate drivers test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, "localhost");
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();

    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .unwrap();
    (ca_cert.pem(), tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
