//! TLS on real sockets with certificates the tests generate: the HTTPS listener and mutual
//! TLS, certificate reload, notifications to HTTPS receivers (trusted through `[tls]
//! ca_file`, with `TLS_CERT` and `OAUTH2_CLIENT_CERT`), and the SSRF guard of the URIs a
//! client hands in.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use reqwest::Method;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

use crate::helpers::{TestApp, send};
use crate::lcm_support::*;

// ---------------------------------------------------------------------------------------
// A test PKI.

pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key, as PEM text and as files.
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        TestCa { issuer: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap() }
    }

    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, self.pem()).unwrap();
        path
    }

    /// A server certificate for localhost and 127.0.0.1, or a client certificate.
    pub fn leaf(&self, dir: &Path, name: &str, client: bool) -> Leaf {
        let names = if client { vec![format!("{name}.example")] } else { vec!["localhost".into(), "127.0.0.1".into()] };
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages =
            vec![if client { ExtendedKeyUsagePurpose::ClientAuth } else { ExtendedKeyUsagePurpose::ServerAuth }];
        let key = KeyPair::generate().unwrap();
        let certificate = params.signed_by(&key, &self.issuer).unwrap();
        let (cert_file, key_file) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.key")));
        std::fs::write(&cert_file, certificate.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        Leaf { cert_pem: certificate.pem(), key_pem: key.serialize_pem(), cert_file, key_file }
    }
}

impl Leaf {
    pub fn identity(&self) -> reqwest::Identity {
        reqwest::Identity::from_pem(format!("{}\n{}", self.cert_pem, self.key_pem).as_bytes()).unwrap()
    }

    pub fn x5t_s256(&self) -> String {
        use base64::Engine;
        use sha2::Digest;
        let der = CertificateDer::from_pem_slice(self.cert_pem.as_bytes()).unwrap();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(der.as_ref()))
    }
}

/// A client that trusts only `ca`.
pub fn client_trusting(ca: &TestCa, identity: Option<reqwest::Identity>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap()])
        .timeout(Duration::from_secs(10));
    if let Some(identity) = identity {
        builder = builder.identity(identity);
    }
    builder.build().unwrap()
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

// ---------------------------------------------------------------------------------------
// An HTTPS receiver: callback (GET 204, POST 204) and OAuth 2.0 token endpoint.

#[derive(Debug, Clone)]
struct Hit {
    method: String,
    path: String,
    authorization: Option<String>,
    body: String,
}

struct TlsReceiver {
    port: u16,
    hits: Arc<Mutex<Vec<Hit>>>,
    /// A VNF package served at `/pkg.zip`.
    package: Arc<Mutex<Vec<u8>>>,
}

async fn record(
    req: HttpRequest,
    body: web::Bytes,
    hits: web::Data<Mutex<Vec<Hit>>>,
    package: web::Data<Mutex<Vec<u8>>>,
) -> HttpResponse {
    let hit = Hit {
        method: req.method().to_string(),
        path: req.path().to_owned(),
        authorization: req.headers().get("authorization").and_then(|value| value.to_str().ok()).map(str::to_owned),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    hits.lock().unwrap().push(hit.clone());
    if hit.path == "/pkg.zip" {
        return HttpResponse::Ok().content_type("application/zip").body(package.lock().unwrap().clone());
    }
    if hit.path == "/token" {
        // RFC 8705 clause 2: the client authenticates with its certificate and names itself.
        if hit.body.contains("grant_type=client_credentials") && hit.body.contains("client_id=vnfm-1") {
            return HttpResponse::Ok()
                .json(json!({"access_token": "mtls-token", "token_type": "Bearer", "expires_in": 3600}));
        }
        return HttpResponse::BadRequest().json(json!({"error": "invalid_request"}));
    }
    if hit.path == "/oauth-cb" && hit.authorization.as_deref() != Some("Bearer mtls-token") {
        return HttpResponse::Unauthorized().finish();
    }
    HttpResponse::NoContent().finish()
}

impl TlsReceiver {
    /// Serves `server` (a leaf of some CA); with `client_ca`, only clients with a
    /// certificate signed by it complete the handshake.
    fn start(server: &Leaf, client_ca: Option<&TestCa>) -> TlsReceiver {
        let chain = vec![CertificateDer::from_pem_slice(server.cert_pem.as_bytes()).unwrap()];
        let key = PrivateKeyDer::from_pem_slice(server.key_pem.as_bytes()).unwrap();
        let builder =
            rustls::ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions().unwrap();
        let builder = match client_ca {
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                roots.add(CertificateDer::from_pem_slice(ca.pem().as_bytes()).unwrap()).unwrap();
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                    .build()
                    .unwrap();
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder.with_single_cert(chain, key).unwrap();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let package = Arc::new(Mutex::new(Vec::new()));
        let data = web::Data::from(hits.clone());
        let served = web::Data::from(package.clone());
        let listener = StdListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || {
            App::new().app_data(data.clone()).app_data(served.clone()).default_service(web::to(record))
        })
        .workers(1)
        .listen_rustls_0_23(listener, config)
        .unwrap()
        .run();
        tokio::spawn(server);
        TlsReceiver { port, hits, package }
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    fn hits(&self, method: &str, path: &str) -> Vec<Hit> {
        self.hits.lock().unwrap().iter().filter(|hit| hit.method == method && hit.path == path).cloned().collect()
    }

    async fn wait_posts(&self, path: &str, count: usize) -> Vec<Hit> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let posts = self.hits("POST", path);
            if posts.len() >= count {
                return posts;
            }
            assert!(Instant::now() < deadline, "{count} POST(s) to {path} expected, got {}", posts.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

// ---------------------------------------------------------------------------------------
// The HTTPS listener.

struct HttpsApp {
    app: TestApp,
    ca: TestCa,
    dir: tempfile::TempDir,
    server: Leaf,
}

async fn https_app(mutual: bool) -> HttpsApp {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("solgate test CA");
    let server = ca.leaf(dir.path(), "server", false);
    let client_ca_file = if mutual { ca.write(dir.path(), "clients-ca.pem") } else { PathBuf::new() };
    let (cert_file, key_file) = (server.cert_file.clone(), server.key_file.clone());
    let mut app = TestApp::spawn_with(move |settings| {
        settings.http.tls.cert_file = cert_file;
        settings.http.tls.key_file = key_file;
        settings.http.tls.client_ca_file = client_ca_file;
    })
    .await;
    app.client = client_trusting(&ca, None);
    HttpsApp { app, ca, dir, server }
}

#[tokio::test]
async fn https_listener_answers_and_plain_http_fails_cleanly() {
    let https = https_app(false).await;
    let app = &https.app;
    assert!(app.address.starts_with("https://127.0.0.1:"), "{}", app.address);
    let reply = send(app.get("/vnflcm/v2/api_versions").header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["uriPrefix"], "/vnflcm/v2");
    // Links and Location name the HTTPS endpoint.
    let (_, vnfd_id) = app.onboard_sample().await;
    let id = create_instance(app, &vnfd_id, "tls").await;
    let shown = show_instance(app, &id).await;
    assert!(shown["_links"]["self"]["href"].as_str().unwrap().starts_with("https://127.0.0.1:"), "{shown}");

    // Plain HTTP to the HTTPS port: an error at once, not a hang and not an answer.
    let plain = app.address.replacen("https://", "http://", 1);
    let started = Instant::now();
    let result = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .get(format!("{plain}/vnflcm/v2/api_versions"))
        .send()
        .await;
    assert!(result.is_err(), "plain HTTP must not be answered: {result:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "plain HTTP hung for {:?}", started.elapsed());

    // A client that does not trust the test CA refuses the server.
    let untrusting = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    assert!(untrusting.get(app.url("/vnflcm/v2/api_versions")).send().await.is_err());
    // The server still serves after the failed handshakes.
    assert_eq!(send(app.get("/vnflcm/v2/api_versions").header("Version", "2.0.0")).await.status, 200);
}

#[tokio::test]
async fn mutual_tls_requires_a_client_certificate_signed_by_the_client_ca() {
    let https = https_app(true).await;
    let app = &https.app;
    let path = "/vnflcm/v2/api_versions";
    let without = app.client.get(app.url(path)).header("Version", "2.0.0").send().await;
    assert!(without.is_err(), "a client without a certificate is refused: {without:?}");

    let client = https.ca.leaf(https.dir.path(), "nfvo", true);
    let with = client_trusting(&https.ca, Some(client.identity()));
    let reply = send(with.get(app.url(path)).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);

    let stranger_ca = TestCa::new("another CA");
    let stranger = stranger_ca.leaf(https.dir.path(), "stranger", true);
    let refused = client_trusting(&https.ca, Some(stranger.identity())).get(app.url(path)).send().await;
    assert!(refused.is_err(), "a certificate of another CA is refused: {refused:?}");
}

#[tokio::test]
async fn certificates_reload_without_dropping_connections() {
    let https = https_app(false).await;
    let app = &https.app;
    let path = "/vnflcm/v2/api_versions";
    // One keep-alive connection, opened before the reload.
    let before = client_trusting(&https.ca, None);
    assert_eq!(send(before.get(app.url(path)).header("Version", "2.0.0")).await.status, 200);

    // New files from a new CA, then the reload SIGHUP triggers.
    let new_ca = TestCa::new("renewed CA");
    let renewed = new_ca.leaf(https.dir.path(), "renewed", false);
    std::fs::copy(&renewed.cert_file, &https.server.cert_file).unwrap();
    std::fs::copy(&renewed.key_file, &https.server.key_file).unwrap();
    let trusting_new = client_trusting(&new_ca, None);
    assert!(trusting_new.get(app.url(path)).send().await.is_err(), "the old certificate is still served");
    app.tls.as_ref().unwrap().reload().unwrap();

    // The open connection goes on; new connections get the new certificate.
    assert_eq!(send(before.get(app.url(path)).header("Version", "2.0.0")).await.status, 200);
    assert_eq!(send(trusting_new.get(app.url(path)).header("Version", "2.0.0")).await.status, 200);
    assert!(client_trusting(&https.ca, None).get(app.url(path)).send().await.is_err());

    // A broken file does not replace the working certificate.
    std::fs::write(&https.server.key_file, "not a key").unwrap();
    let error = app.tls.as_ref().unwrap().reload().unwrap_err().to_string();
    assert!(error.starts_with("http.tls.key_file"), "{error}");
    assert_eq!(send(client_trusting(&new_ca, None).get(app.url(path)).header("Version", "2.0.0")).await.status, 200);
}

// ---------------------------------------------------------------------------------------
// Notifications over HTTPS.

struct NotifySetup {
    app: TestApp,
    receiver: TlsReceiver,
    vnfd_id: String,
    client: Leaf,
    _dir: tempfile::TempDir,
}

/// An app trusting the receiver's CA through `[tls] ca_file`, with a client certificate
/// for notifications; the receiver requires that client certificate when `mutual`.
async fn notify_setup(mutual: bool) -> NotifySetup {
    let dir = tempfile::tempdir().unwrap();
    let nfvo_ca = TestCa::new("NFVO CA");
    let vnfm_ca = TestCa::new("VNFM client CA");
    let receiver_cert = nfvo_ca.leaf(dir.path(), "nfvo-receiver", false);
    let client = vnfm_ca.leaf(dir.path(), "vnfm-client", true);
    let receiver = TlsReceiver::start(&receiver_cert, mutual.then_some(&vnfm_ca));
    let ca_file = nfvo_ca.write(dir.path(), "nfvo-ca.pem");
    let (cert_file, key_file) = (client.cert_file.clone(), client.key_file.clone());
    let app = TestApp::spawn_with(move |settings| {
        settings.tls.ca_file = ca_file;
        settings.notifications.mtls_client_cert_file = cert_file;
        settings.notifications.mtls_client_key_file = key_file;
        settings.notifications.poll_interval_ms = 50;
    })
    .await;
    let (_, vnfd_id) = app.onboard_sample().await;
    NotifySetup { app, receiver, vnfd_id, client, _dir: dir }
}

async fn subscribe(app: &TestApp, body: Value) -> crate::helpers::Reply {
    send(v2(app, Method::POST, "/vnflcm/v2/subscriptions").json(&body)).await
}

#[tokio::test]
async fn notifications_reach_an_https_receiver_trusted_through_the_ca_file() {
    let setup = notify_setup(false).await;
    let reply = subscribe(&setup.app, json!({"callbackUri": setup.receiver.url("/cb")})).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(setup.receiver.hits("GET", "/cb").len(), 1, "the callback test went over HTTPS");
    create_instance(&setup.app, &setup.vnfd_id, "over-https").await;
    let posts = setup.receiver.wait_posts("/cb", 1).await;
    let body: Value = serde_json::from_str(&posts[0].body).unwrap();
    assert_eq!(body["notificationType"], "VnfIdentifierCreationNotification");
}

#[tokio::test]
async fn packages_are_fetched_from_https_sources() {
    let setup = notify_setup(false).await;
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    *setup.receiver.package.lock().unwrap() =
        solgate_vnfpkg::testing::CsarBuilder::sample().descriptor_id(&vnfd_id).to_bytes().unwrap();
    let package_id = setup.app.create_package().await;
    let reply = send(
        setup
            .app
            .request(Method::POST, &format!("/vnfpkgm/v1/vnf_packages/{package_id}/package_content/upload_from_uri"))
            .json(&json!({"addressInformation": setup.receiver.url("/pkg.zip")})),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let info = setup.app.wait_for_onboarding(&package_id).await;
    assert_eq!(info["onboardingState"], "ONBOARDED", "{info}");
    assert_eq!(info["vnfdId"], vnfd_id);
    assert_eq!(setup.receiver.hits("GET", "/pkg.zip").len(), 1);
}

#[tokio::test]
async fn tls_cert_subscriptions_deliver_with_the_client_certificate() {
    let setup = notify_setup(true).await;
    // Without TLS_CERT solgate presents no certificate: the receiver's handshake refuses it.
    let plain = subscribe(&setup.app, json!({"callbackUri": setup.receiver.url("/cb")})).await;
    assert!(plain.problem(422).starts_with("Can't get from notification callback Uri."), "{}", plain.text);

    let reply = subscribe(
        &setup.app,
        json!({"callbackUri": setup.receiver.url("/cb"), "authentication": {"authType": ["TLS_CERT"]}}),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert!(reply.json().get("authentication").is_none(), "authentication is never shown");
    create_instance(&setup.app, &setup.vnfd_id, "mtls").await;
    let posts = setup.receiver.wait_posts("/cb", 1).await;
    assert!(posts[0].body.contains("VnfIdentifierCreationNotification"), "{}", posts[0].body);
}

#[tokio::test]
async fn oauth2_client_cert_subscriptions_get_a_token_with_the_certificate() {
    let setup = notify_setup(true).await;
    let authentication = |value: String| {
        json!({"authType": ["OAUTH2_CLIENT_CERT"], "paramsOauth2ClientCert": {"clientId": "vnfm-1",
            "certificateRef": {"type": "x5t#S256", "value": value}, "tokenEndpoint": setup.receiver.url("/token")}})
    };
    // 2.0.0 does not know OAUTH2_CLIENT_CERT (SOL003 v3.5.1 added it with 2.1.0).
    let old = send(v2(&setup.app, Method::POST, "/vnflcm/v2/subscriptions").json(&json!({
        "callbackUri": setup.receiver.url("/oauth-cb"), "authentication": authentication(setup.client.x5t_s256())})))
    .await;
    assert_eq!(old.status, 400, "{}", old.text);

    let subscribe_21 = |body: Value| {
        send(
            setup
                .app
                .request(Method::POST, "/vnflcm/v2/subscriptions")
                .header("Version", "2.1.0")
                .header("Accept", "application/json")
                .json(&body),
        )
    };
    let wrong = subscribe_21(json!({"callbackUri": setup.receiver.url("/oauth-cb"),
        "authentication": authentication("bm90LXRoaXMtY2VydGlmaWNhdGU".into())}))
    .await;
    assert!(wrong.problem(422).contains("certificateRef"), "{}", wrong.text);
    assert!(setup.receiver.hits("POST", "/token").is_empty(), "nothing is sent for a refused subscription");

    let reply = subscribe_21(json!({"callbackUri": setup.receiver.url("/oauth-cb"),
        "authentication": authentication(setup.client.x5t_s256())}))
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    create_instance(&setup.app, &setup.vnfd_id, "oauth2-mtls").await;
    let posts = setup.receiver.wait_posts("/oauth-cb", 1).await;
    assert_eq!(posts[0].authorization.as_deref(), Some("Bearer mtls-token"));
    let tokens = setup.receiver.hits("POST", "/token");
    assert_eq!(tokens.len(), 1, "one token serves the callback test and the notification: {tokens:?}");
    assert!(tokens[0].authorization.is_none(), "the certificate authenticates, not a password");
}

// ---------------------------------------------------------------------------------------
// The SSRF guard.

/// A plain HTTP listener that counts connections and answers every request with `answer`.
struct Counter {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Counter {
    fn start(ip: &str, answer: fn(&HttpRequest, u16) -> HttpResponse) -> Counter {
        let listener = StdListener::bind(format!("{ip}:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let seen = connections.clone();
        let server = HttpServer::new(move || {
            App::new().default_service(web::to(move |req: HttpRequest| async move { answer(&req, port) }))
        })
        .on_connect(move |_, _| {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        tokio::spawn(server);
        Counter { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn ssrf_guard_refuses_denied_addresses_and_other_schemes() {
    // 127.0.0.2 stands for a denied network the test can listen on.
    let denied = Counter::start("127.0.0.2", |_, _| HttpResponse::NoContent().finish());
    let denied_base = format!("http://127.0.0.2:{}", denied.port);
    let target = format!("{denied_base}/package.zip");
    // A redirect chain on an allowed address that ends on the denied one.
    let chain = Counter::start("127.0.0.1", |req, port| match req.path() {
        "/a" => HttpResponse::Found().insert_header(("Location", format!("http://127.0.0.1:{port}/b"))).finish(),
        "/b" => HttpResponse::Found().insert_header(("Location", DENIED_TARGET.lock().unwrap().clone())).finish(),
        _ => HttpResponse::NotFound().finish(),
    });
    *DENIED_TARGET.lock().unwrap() = target.clone();
    let app = TestApp::spawn_with(|settings| {
        settings.egress.deny_networks.push("127.0.0.2/32".into());
    })
    .await;

    for (uri, status, rule) in [
        ("http://169.254.169.254/latest/meta-data/", 422, "169.254.0.0/16"),
        ("http://[fd00:ec2::254]/", 422, "fd00:ec2::254/128"),
        (denied_base.as_str(), 422, "127.0.0.2/32"),
        ("file:///etc/passwd", 400, "scheme `file`"),
        ("gopher://127.0.0.1:70/", 400, "scheme `gopher`"),
    ] {
        let reply = subscribe(&app, json!({"callbackUri": uri})).await;
        let detail = reply.problem(status);
        assert!(detail.starts_with("callbackUri") && detail.contains(rule), "{uri}: {detail}");
    }
    let token = subscribe(
        &app,
        json!({"callbackUri": format!("http://127.0.0.1:{}/cb", chain.port),
        "authentication": {"authType": ["OAUTH2_CLIENT_CREDENTIALS"], "paramsOauth2ClientCredentials": {
            "clientId": "c", "clientPassword": "s", "tokenEndpoint": format!("{denied_base}/token")}}}),
    )
    .await;
    assert!(token.problem(422).starts_with("paramsOauth2ClientCredentials.tokenEndpoint"), "{}", token.text);

    // Callbacks follow no redirect: a chain that ends on the denied address is a 422.
    let redirected = subscribe(&app, json!({"callbackUri": format!("http://127.0.0.1:{}/a", chain.port)})).await;
    assert!(redirected.problem(422).contains("It answered 302"), "{}", redirected.text);

    // Packages: another scheme is 400 at once; a denied address 422 at once.
    let package_id = app.create_package().await;
    let upload = |address: String| {
        send(
            app.request(
                Method::POST,
                &format!("/vnfpkgm/v1/vnf_packages/{package_id}/package_content/upload_from_uri"),
            )
            .header("Accept", "application/json")
            .json(&json!({"addressInformation": address})),
        )
    };
    let file = upload("file:///etc/passwd".into()).await;
    assert!(file.problem(400).contains("scheme `file`"), "{}", file.text);
    let direct = upload(target.clone()).await;
    assert!(direct.problem(422).contains("127.0.0.2/32"), "{}", direct.text);

    // A redirect chain from an allowed address to the denied one: accepted, then the fetch
    // stops at the redirect and onboarding fails naming the rule.
    let accepted = upload(format!("http://127.0.0.1:{}/a", chain.port)).await;
    assert_eq!(accepted.status, 202, "{}", accepted.text);
    let package = app.wait_for_onboarding(&package_id).await;
    assert_eq!(package["onboardingState"], "CREATED", "{package}");
    let detail = package_error(&app, &package_id).await;
    assert!(detail.contains("Could not fetch") && detail.contains("127.0.0.2/32"), "{detail}");
    assert!(chain.connections() >= 1, "the allowed start of the chain was fetched");
    assert_eq!(denied.connections(), 0, "nothing ever reached the denied address");
}

static DENIED_TARGET: Mutex<String> = Mutex::new(String::new());

/// The onboarding failure solgate recorded for a package (shown to operators in the log and
/// kept in the row).
async fn package_error(app: &TestApp, package_id: &str) -> String {
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let record = solgate_db::repo::vnf_packages::find(&mut conn, package_id).unwrap().unwrap();
    record.body.to_string()
}

// ---------------------------------------------------------------------------------------
// The real binary: check-config and SIGHUP.

#[test]
fn check_config_reports_missing_mismatched_and_expired_files() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("check CA");
    let good = ca.leaf(dir.path(), "good", false);
    let other = ca.leaf(dir.path(), "other", false);
    let expired = {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2019, 1, 1);
        params.not_after = rcgen::date_time_ymd(2020, 1, 1);
        let path = dir.path().join("expired.pem");
        std::fs::write(&path, params.self_signed(&key).unwrap().pem()).unwrap();
        let key_path = dir.path().join("expired.key");
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        (path, key_path)
    };
    let check = |cert: &Path, key: &Path, ca_file: &str| {
        let settings = dir.path().join("solgate.toml");
        std::fs::write(
            &settings,
            format!(
                "[http.tls]\ncert_file = {:?}\nkey_file = {:?}\n[tls]\nca_file = {ca_file:?}\n",
                cert.display().to_string(),
                key.display().to_string()
            ),
        )
        .unwrap();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_solgate"))
            .args(["check-config", "--config"])
            .arg(&settings)
            .env_remove("SOLGATE_CONFIG")
            .output()
            .unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (ok, stderr) = check(&good.cert_file, &good.key_file, "");
    assert!(ok, "{stderr}");

    let (ok, stderr) = check(&good.cert_file, &other.key_file, "");
    assert!(!ok);
    assert!(stderr.contains("http.tls.key_file") && stderr.contains("does not match"), "{stderr}");

    let (ok, stderr) = check(&expired.0, &expired.1, "");
    assert!(!ok);
    assert!(stderr.contains("expired at 2020-01-01T00:00:00Z"), "{stderr}");

    let missing = dir.path().join("missing.pem");
    let (ok, stderr) = check(&missing, &good.key_file, "/nonexistent/ca.pem");
    assert!(!ok);
    assert!(stderr.contains("http.tls.cert_file") && stderr.contains("missing.pem"), "{stderr}");
    assert!(stderr.contains("tls.ca_file") && stderr.contains("/nonexistent/ca.pem"), "{stderr}");
}

#[tokio::test]
async fn sighup_reloads_the_certificate_of_a_running_server() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("first CA");
    let server = ca.leaf(dir.path(), "server", false);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_solgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env_remove("RUST_LOG")
        .env_remove("SOLGATE_CONFIG")
        .env("SOLGATE_LOG_FORMAT", "json")
        .env("SOLGATE__HTTP__TLS__CERT_FILE", &server.cert_file)
        .env("SOLGATE__HTTP__TLS__KEY_FILE", &server.key_file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    let wait_for = |text: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(line) = lines.lock().unwrap().iter().find(|line| line.contains(text)) {
                return line.clone();
            }
            assert!(Instant::now() < deadline, "never logged {text:?}: {:?}", lines.lock().unwrap());
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let listening: Value = serde_json::from_str(&wait_for("solgate listening on https://")).unwrap();
    let address = listening["address"].as_str().or_else(|| listening["fields"]["address"].as_str()).unwrap().to_owned();
    let url = format!("https://{address}/vnflcm/v2/api_versions");

    let before = client_trusting(&ca, None);
    assert_eq!(before.get(&url).header("Version", "2.0.0").send().await.unwrap().status(), 200);
    let renewed_ca = TestCa::new("renewed CA");
    let renewed = renewed_ca.leaf(dir.path(), "renewed", false);
    std::fs::copy(&renewed.cert_file, &server.cert_file).unwrap();
    std::fs::copy(&renewed.key_file, &server.key_file).unwrap();
    let status = std::process::Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    wait_for("TLS certificates reloaded");
    // The connection opened before the signal still serves; new ones see the new certificate.
    assert_eq!(before.get(&url).header("Version", "2.0.0").send().await.unwrap().status(), 200);
    let after = client_trusting(&renewed_ca, None);
    assert_eq!(after.get(&url).header("Version", "2.0.0").send().await.unwrap().status(), 200);
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn http_layer_errors_over_https_are_problem_details() {
    use crate::sol013_layer::{huge_head, raw_exchange};
    let https = https_app(false).await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(https.ca.pem().as_bytes()).unwrap()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let address = https.app.address.trim_start_matches("https://").to_owned();
    let connect = || async {
        let tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
        connector.connect(rustls::pki_types::ServerName::try_from("localhost").unwrap(), tcp).await.unwrap()
    };
    let replies = raw_exchange(connect().await, huge_head("/vnflcm/api_versions")).await;
    assert!(replies[0].problem(431).contains("too large"));
    let request = b"GET /vnflcm/api_versions HTTP/1.1\r\nHost: solgate\r\n\r\nGARBAGE\r\n\r\n".to_vec();
    let replies = raw_exchange(connect().await, request).await;
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0].status, 200, "{}", replies[0].head);
    replies[1].problem(400);
}
