//! The auth modes: OAuth 2.0 client credentials against solgate's own token endpoint,
//! a client certificate (mutual TLS) against the real server, Keystone v3 password against
//! a stand-in Keystone.

use std::sync::Mutex;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use serde_json::{Value, json};
use solgate_gateway::auth::{AuthMode, ClientSettings, Role};

use crate::helpers::{Server, solctl};

const SECRET: &str = "s3cret with spaces&symbols";

fn client(id: &str, secret: &str, certificate_name: &str) -> ClientSettings {
    ClientSettings {
        id: id.into(),
        secret: solgate_gateway::auth::secret::hash(secret).unwrap(),
        roles: vec![Role::Member],
        project: "p1".into(),
        certificate_name: certificate_name.into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth2_client_credentials_against_solgate() {
    let server = Server::start_with(|settings| {
        settings.auth.mode = AuthMode::Oauth2;
        settings.auth.clients = vec![client("nfvo", SECRET, "")];
    })
    .await;
    // Without a token: 401 as a ProblemDetails, exit 1.
    let anonymous = server.solctl(&["vnflcm", "list"]).await;
    assert_eq!(anonymous.code, 1, "{anonymous:?}");
    assert!(anonymous.stderr.contains("(401)"), "{anonymous:?}");
    let creds = ["--client-id", "nfvo", "--client-secret", SECRET];
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let csar = solgate_vnfpkg::testing::CsarBuilder::sample().descriptor_id(&vnfd_id).to_bytes().unwrap();
    let zip = server.file("pkg.zip", csar);
    let args = |rest: &[&str]| creds.iter().chain(rest.iter()).copied().map(str::to_owned).collect::<Vec<_>>();
    let run = |args: Vec<String>| {
        let server = &server;
        async move { server.ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).await }
    };
    run(args(&["package", "onboard", zip.to_str().unwrap()])).await;
    let id = run(args(&["vnflcm", "create", &vnfd_id, "-f", "value", "-c", "ID"])).await.value();
    let request = server.file("inst.json", r#"{"flavourId": "simple"}"#);
    let done = run(args(&["vnflcm", "instantiate", &id, request.to_str().unwrap(), "--wait"])).await;
    assert!(done.stdout.contains("ended COMPLETED"), "{done:?}");
    // The token URL named explicitly, scopes asked for.
    let token_url = format!("{}/oauth2/token", server.endpoint);
    let scoped = server
        .solctl(&[
            "--auth-type",
            "oauth2",
            "--token-url",
            &token_url,
            "--client-id",
            "nfvo",
            "--client-secret",
            SECRET,
            "--scope",
            "vnflcm:v2:readonly",
            "vnflcm",
            "show",
            &id,
            "-f",
            "value",
            "-c",
            "Instantiation State",
        ])
        .await;
    assert_eq!(scoped.code, 0, "{scoped:?}");
    assert_eq!(scoped.value(), "INSTANTIATED");
    // A read-only token cannot change anything: 403 from the server.
    let readonly = server
        .solctl(&[
            "--client-id",
            "nfvo",
            "--client-secret",
            SECRET,
            "--scope",
            "vnflcm:v2:readonly",
            "vnflcm",
            "create",
            &vnfd_id,
        ])
        .await;
    assert_eq!(readonly.code, 1, "{readonly:?}");
    assert!(readonly.stderr.contains("(403)"), "{readonly:?}");
    // A wrong secret: the token endpoint's refusal.
    let wrong = server.solctl(&["--client-id", "nfvo", "--client-secret", "nope", "vnflcm", "list"]).await;
    assert_eq!(wrong.code, 1, "{wrong:?}");
    assert!(wrong.stderr.contains("authentication failed") && wrong.stderr.contains("invalid_client"), "{wrong:?}");
    assert!(!wrong.stderr.contains("nope"), "the secret is not echoed: {wrong:?}");
    // Half the options: usage.
    let half = server.solctl(&["--client-id", "nfvo", "vnflcm", "list"]).await;
    assert_eq!(half.code, 2, "{half:?}");
    // A cloud with oauth2 credentials.
    let config = server.file(
        "clouds.yaml",
        format!("clouds:\n  vnfm:\n    endpoint: {}\n    auth_type: oauth2\n    auth:\n      client_id: nfvo\n      client_secret: \"{SECRET}\"\n", server.endpoint),
    );
    let cloud =
        solctl(&["--config", config.to_str().unwrap(), "--cloud", "vnfm", "vnflcm", "list", "-f", "value", "-c", "ID"])
            .await;
    assert_eq!(cloud.code, 0, "{cloud:?}");
    assert_eq!(cloud.value(), id);
}

struct Pki {
    dir: tempfile::TempDir,
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Pki {
    fn new() -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, "solctl test CA");
        Pki {
            dir: tempfile::tempdir().unwrap(),
            issuer: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap(),
        }
    }

    fn ca_file(&self) -> std::path::PathBuf {
        let path = self.dir.path().join("ca.pem");
        std::fs::write(&path, self.issuer.pem()).unwrap();
        path
    }

    /// (certificate file, key file)
    fn leaf(&self, name: &str, client: bool) -> (std::path::PathBuf, std::path::PathBuf) {
        let names = if client { vec![name.to_owned()] } else { vec!["localhost".into(), "127.0.0.1".into()] };
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages =
            vec![if client { ExtendedKeyUsagePurpose::ClientAuth } else { ExtendedKeyUsagePurpose::ServerAuth }];
        let key = KeyPair::generate().unwrap();
        let certificate = params.signed_by(&key, &self.issuer).unwrap();
        let cert_file = self.dir.path().join(format!("{name}.pem"));
        let key_file = self.dir.path().join(format!("{name}.key"));
        std::fs::write(&cert_file, certificate.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        (cert_file, key_file)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificate_over_mutual_tls() {
    let pki = Pki::new();
    let (server_cert, server_key) = pki.leaf("server", false);
    let ca = pki.ca_file();
    let (client_cert, client_key) = pki.leaf("nfvo.example", true);
    let (settings_ca, settings_cert, settings_key) = (ca.clone(), server_cert.clone(), server_key.clone());
    let server = Server::start_with(move |settings| {
        settings.http.tls.cert_file = settings_cert;
        settings.http.tls.key_file = settings_key;
        settings.http.tls.client_ca_file = settings_ca;
        settings.auth.mode = AuthMode::Oauth2;
        settings.auth.clients = vec![client("nfvo", SECRET, "nfvo.example")];
    })
    .await;
    assert!(server.endpoint.starts_with("https://"));
    let (ca, cert, key) = (ca.to_str().unwrap(), client_cert.to_str().unwrap(), client_key.to_str().unwrap());
    // The certificate authenticates: no token needed.
    let run = server.solctl(&["--cacert", ca, "--cert", cert, "--key", key, "vnflcm", "list", "-f", "json"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json(), json!([]));
    let versions = server
        .solctl(&["--os-cacert", ca, "--os-cert", cert, "--os-key", key, "versions", "-f", "value", "-c", "Version"])
        .await;
    assert_eq!(versions.code, 0, "{versions:?}");
    assert!(versions.stdout.contains("2.0.0"), "{versions:?}");
    // Without the certificate the handshake fails; without the CA the server is not trusted.
    let without = server.solctl(&["--cacert", ca, "vnflcm", "list"]).await;
    assert_eq!(without.code, 1, "{without:?}");
    let untrusted = server.solctl(&["--cert", cert, "--key", key, "vnflcm", "list"]).await;
    assert_eq!(untrusted.code, 1, "{untrusted:?}");
    assert!(untrusted.stderr.to_lowercase().contains("certificate"), "{untrusted:?}");
    // A certificate without its key is a usage error.
    let half = server.solctl(&["--cacert", ca, "--cert", cert, "vnflcm", "list"]).await;
    assert_eq!(half.code, 2, "{half:?}");
}

/// What the stand-in Keystone and API saw.
#[derive(Default)]
struct Seen {
    auth_bodies: Vec<Value>,
    api_tokens: Vec<String>,
}

async fn keystone_tokens(body: web::Json<Value>, seen: web::Data<Mutex<Seen>>) -> HttpResponse {
    seen.lock().unwrap().auth_bodies.push(body.0.clone());
    let password = &body["auth"]["identity"]["password"]["user"]["password"];
    if password != "ks-pass" {
        return HttpResponse::Unauthorized()
            .json(json!({"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}));
    }
    HttpResponse::Created()
        .insert_header(("X-Subject-Token", "ks-token-1"))
        .json(json!({"token": {"methods": ["password"]}}))
}

async fn api(request: HttpRequest, seen: web::Data<Mutex<Seen>>) -> HttpResponse {
    let token =
        request.headers().get("x-auth-token").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    seen.lock().unwrap().api_tokens.push(token.clone());
    if token != "ks-token-1" {
        return HttpResponse::Unauthorized()
            .content_type("application/problem+json")
            .body(r#"{"title":"Unauthorized","status":401,"detail":"X-Auth-Token is not valid."}"#);
    }
    if request.path().ends_with("api_versions") {
        return HttpResponse::Ok()
            .json(json!({"uriPrefix": "/vnflcm/v2", "apiVersions": [{"version": "2.0.0", "isDeprecated": false}]}));
    }
    HttpResponse::Ok()
        .json(json!([{"id": "i-1", "vnfInstanceName": "via-keystone", "instantiationState": "NOT_INSTANTIATED"}]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_password_auth_sends_x_auth_token() {
    let seen = web::Data::new(Mutex::new(Seen::default()));
    let data = seen.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stub = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/identity/v3/auth/tokens", web::post().to(keystone_tokens))
            .default_service(web::to(api))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(stub);
    let base = format!("http://127.0.0.1:{port}");
    let auth_url = format!("{base}/identity");
    let args = |password: &'static str| {
        vec![
            "--endpoint".to_owned(),
            base.clone(),
            "--os-auth-url".into(),
            auth_url.clone(),
            "--os-username".into(),
            "nfvo".into(),
            "--os-password".into(),
            password.into(),
            "--os-project-name".into(),
            "vnf-project".into(),
            "--os-user-domain-name".into(),
            "users".into(),
            "vnflcm".into(),
            "list".into(),
            "-f".into(),
            "value".into(),
            "-c".into(),
            "VNF Instance Name".into(),
        ]
    };
    let good = args("ks-pass");
    let run = solctl(&good.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.value(), "via-keystone");
    {
        let seen = seen.lock().unwrap();
        let body = &seen.auth_bodies[0]["auth"];
        assert_eq!(body["identity"]["methods"], json!(["password"]));
        assert_eq!(body["identity"]["password"]["user"]["name"], "nfvo");
        assert_eq!(body["identity"]["password"]["user"]["domain"]["name"], "users");
        assert_eq!(body["scope"]["project"], json!({"name": "vnf-project", "domain": {"name": "Default"}}));
        assert!(
            !seen.api_tokens.is_empty() && seen.api_tokens.iter().all(|token| token == "ks-token-1"),
            "{:?}",
            seen.api_tokens
        );
    }
    let bad = args("wrong");
    let refused = solctl(&bad.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("authentication failed") && refused.stderr.contains("requires authentication"),
        "{refused:?}"
    );
    assert!(!refused.stderr.contains("wrong"), "the password is not echoed: {refused:?}");
}
