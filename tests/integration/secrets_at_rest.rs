//! Credentials at rest: a VIM password, subscription credentials and a package source
//! password are sealed in the database (the test reads the SQLite file itself), never
//! shown, and opened only where they are used: the Keystone request, the notification,
//! the package fetch.

use std::net::TcpListener as StdListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, send};
use crate::lcm_support::*;

const VIM_PASSWORD: &str = "vim-pass-7e1f-d0c2";
const BASIC_PASSWORD: &str = "basic-pass-93ab-11f0";
const PACKAGE_PASSWORD: &str = "pkg-pass-5c2d-a7e4";

/// (method, path, Authorization, body) of every request.
type Seen = Arc<Mutex<Vec<(String, String, String, String)>>>;

/// Keystone (refuses every token request, after recording it), a callback and a package
/// source (refuses every fetch, after recording it).
fn peer() -> (u16, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let sink = web::Data::new(seen.clone());
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new().app_data(sink.clone()).default_service(web::to(
            |req: HttpRequest, body: web::Bytes, seen: web::Data<Seen>| async move {
                let authorization =
                    req.headers().get("authorization").and_then(|value| value.to_str().ok()).unwrap_or("").to_owned();
                let entry = (
                    req.method().to_string(),
                    req.path().to_owned(),
                    authorization,
                    String::from_utf8_lossy(&body).into_owned(),
                );
                seen.lock().unwrap().push(entry);
                match req.path() {
                    "/cb" => HttpResponse::NoContent().finish(),
                    _ => HttpResponse::Unauthorized().finish(),
                }
            },
        ))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    (port, seen)
}

/// Waits for the peer to have seen a request. Asynchronously: the application under test runs
/// on this test's runtime, and a blocking sleep here kept its notification worker from
/// delivering what the test waits for.
async fn wait_for(seen: &Seen, method: &str, path: &str) -> (String, String, String, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = seen.lock().unwrap().iter().find(|entry| entry.0 == method && entry.1 == path).cloned();
        if let Some(entry) = found {
            return entry;
        }
        assert!(Instant::now() < deadline, "no {method} {path}: {:?}", seen.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every byte of the SQLite database (main file and write-ahead log).
fn database_bytes(app: &TestApp) -> Vec<u8> {
    let mut bytes = Vec::new();
    for name in ["solgate.db", "solgate.db-wal"] {
        if let Ok(content) = std::fs::read(app.data_dir.join(name)) {
            bytes.extend(content);
        }
    }
    assert!(!bytes.is_empty(), "the SQLite file is where the test expects it");
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[tokio::test]
async fn credentials_are_sealed_in_the_database_and_opened_where_used() {
    let (port, seen) = peer();
    let app = TestApp::spawn_with(|settings| settings.notifications.poll_interval_ms = 50).await;
    // The sample package with a BaseHOT for its `simple` flavour (the OpenStack driver needs one).
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let csar = solgate_vnfpkg::testing::CsarBuilder::sample()
        .descriptor_id(&vnfd_id)
        .file("BaseHOT/simple/sample_hot.yaml", "heat_template_version: 2013-05-23\nresources: {}\n")
        .to_bytes()
        .unwrap();
    app.onboard_package(&csar).await;

    // A subscription with Basic credentials: the callback test and the notification carry them.
    let callback = format!("http://127.0.0.1:{port}/cb");
    let reply = send(v2(&app, Method::POST, "/vnflcm/v2/subscriptions").json(&json!({"callbackUri": callback,
        "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": BASIC_PASSWORD}}})))
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert!(!reply.text.contains(BASIC_PASSWORD));

    // An instantiation on an OpenStack VIM: Keystone gets the password in clear.
    let id = create_instance(&app, &vnfd_id, "sealed").await;
    let body = json!({"flavourId": "simple", "vimConnectionInfo": {"vim1": {
        "vimId": "c3369b54-e376-4423-bb61-afd255900fea", "vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
        "interfaceInfo": {"endpoint": format!("http://127.0.0.1:{port}/identity/v3")},
        "accessInfo": {"username": "nfv_user", "password": VIM_PASSWORD, "region": "RegionOne",
            "project": "nfv", "projectDomain": "Default", "userDomain": "Default"}}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["FAILED_TEMP"]).await;
    let (_, _, _, token_request) = wait_for(&seen, "POST", "/identity/v3/auth/tokens").await;
    assert!(token_request.contains(VIM_PASSWORD), "the driver got the password opened: {token_request}");
    assert!(!op.to_string().contains(VIM_PASSWORD), "{op}");

    let (_, _, authorization, _) = wait_for(&seen, "POST", "/cb").await;
    use base64::Engine;
    let expected = base64::engine::general_purpose::STANDARD.encode(format!("nfvo:{BASIC_PASSWORD}"));
    assert_eq!(authorization, format!("Basic {expected}"), "the notification carries the opened credentials");

    // A package fetch with a password: the source gets it in clear.
    let package_id = app.create_package().await;
    let reply = send(
        app.request(Method::POST, &format!("/vnfpkgm/v1/vnf_packages/{package_id}/package_content/upload_from_uri"))
            .json(&json!({"addressInformation": format!("http://127.0.0.1:{port}/pkg.zip"),
                "userName": "pkg", "password": PACKAGE_PASSWORD})),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    app.wait_for_onboarding(&package_id).await;
    let (_, _, authorization, _) = wait_for(&seen, "GET", "/pkg.zip").await;
    let expected = base64::engine::general_purpose::STANDARD.encode(format!("pkg:{PACKAGE_PASSWORD}"));
    assert_eq!(authorization, format!("Basic {expected}"));

    // None of them is in the database in clear text; the stored operation holds them sealed.
    let bytes = database_bytes(&app);
    for secret in [VIM_PASSWORD, BASIC_PASSWORD, PACKAGE_PASSWORD] {
        assert!(!contains(&bytes, secret), "{secret} is stored in clear text");
    }
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let op_id = op_url.rsplit('/').next().unwrap();
    let stored =
        solgate_db::repo::lcm::find_op(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, op_id).unwrap().unwrap();
    let password = &stored.body["operationParams"]["vimConnectionInfo"]["vim1"]["accessInfo"]["password"];
    assert!(password.as_str().unwrap().starts_with("sealed:v1:"), "{password}");
}

#[tokio::test]
async fn reseal_moves_every_secret_to_a_new_key() {
    let (port, _seen) = peer();
    let app = TestApp::spawn().await;
    let reply = send(v2(&app, Method::POST, "/vnflcm/v2/subscriptions").json(&json!({
        "callbackUri": format!("http://127.0.0.1:{port}/cb"),
        "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": BASIC_PASSWORD}}})))
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let subscription_id = reply.json()["id"].as_str().unwrap().to_owned();
    // A VNF FM subscription's credentials are sealed and resealed the same way.
    let reply = send(
        app.request(Method::POST, "/vnffm/v1/subscriptions").header("Version", "1.3.0").json(&json!({
            "callbackUri": format!("http://127.0.0.1:{port}/cb"),
            "authentication": {"authType": ["BASIC"], "paramsBasic": {"userName": "nfvo", "password": BASIC_PASSWORD}}})),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let fm_subscription_id = reply.json()["id"].as_str().unwrap().to_owned();
    let stored_fm = || {
        let database = app.database();
        let mut conn = database.conn().unwrap();
        let record = solgate_db::repo::fm_subscriptions::find(&mut conn, &fm_subscription_id).unwrap().unwrap();
        record.authentication.unwrap()["paramsBasic"]["password"].as_str().unwrap().to_owned()
    };
    let fm_before = stored_fm();
    assert!(fm_before.starts_with("sealed:v1:"), "{fm_before}");
    let stored = || {
        let database = app.database();
        let mut conn = database.conn().unwrap();
        let record =
            solgate_db::repo::lcm::find_subscription(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, &subscription_id)
                .unwrap()
                .unwrap();
        record.authentication.unwrap()["paramsBasic"]["password"].as_str().unwrap().to_owned()
    };
    let before = stored();
    assert!(before.starts_with("sealed:v1:"), "{before}");

    let new_key = solgate_core::secrets::generate_key().unwrap();
    let reseal = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_solgate"))
            .arg("reseal")
            .arg("--data-dir")
            .arg(&app.data_dir)
            .env_remove("SOLGATE_CONFIG")
            .env("SOLGATE_SECRET_KEY", &new_key)
            .env(
                "SOLGATE__SECRETS__PREVIOUS_KEY_FILES",
                format!("[{:?}]", app.data_dir.join("secret.key").display().to_string()),
            )
            .output()
            .unwrap()
    };
    let output = reseal();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{printed} {}", String::from_utf8_lossy(&output.stderr));
    assert!(printed.contains("2 subscription(s)"), "{printed}");
    let fm_after = stored_fm();
    assert!(fm_after.starts_with("sealed:v1:") && fm_after != fm_before, "{fm_after}");
    let after = stored();
    assert!(after.starts_with("sealed:v1:") && after != before, "{after}");
    assert!(!after.contains(BASIC_PASSWORD));
    let again = reseal();
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 subscription(s)"), "nothing left to reseal");

    // The new key opens it; the old one alone no longer does.
    let new_box = solgate_core::secrets::SecretBox::load(&Default::default(), &app.data_dir, Some(&new_key)).unwrap();
    assert_eq!(new_box.open_text("password", &after).unwrap(), BASIC_PASSWORD);
    assert_eq!(new_box.open_text("password", &fm_after).unwrap(), BASIC_PASSWORD);
    let old_box = solgate_core::secrets::SecretBox::load(&Default::default(), &app.data_dir, None).unwrap();
    assert!(old_box.open_text("password", &after).is_err());
}
