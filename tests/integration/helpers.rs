//! `TestApp`: a solgate server started in-process for one test.

use actix_web::{HttpResponse, web};
use serde_json::Value;
use solgate::settings::LogSettings;
use solgate::{Application, Role, Settings};
use solgate_gateway::routes::resource;
use solgate_gateway::sol013::{JsonBody, Negotiated};
use solgate_gateway::tls::ServerTls;

/// The newest served version of an API major, per the built-in registry.
pub fn newest(api: solgate_schemas::Api, major: u64) -> String {
    solgate_schemas::Registry::builtin().unwrap().newest(api, major).unwrap().version_string()
}

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    /// The listener's TLS when the app speaks HTTPS (tests reload it as SIGHUP does).
    #[allow(dead_code)]
    pub tls: Option<std::sync::Arc<ServerTls>>,
    #[allow(dead_code)] // read by the tests that restart an app on the same data
    pub data_dir: std::path::PathBuf,
    /// The database the app uses (a per-test SQLite file or PostgreSQL database).
    pub database_url: String,
    _data_dir: tempfile::TempDir,
    _postgres: Option<PgDatabase>,
}

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// A PostgreSQL database of its own for one test, dropped afterwards.
pub struct PgDatabase {
    admin_url: String,
    name: String,
    pub url: String,
}

impl PgDatabase {
    /// `None` (the test returns early) when no PostgreSQL is configured and CI is not set;
    /// with CI=true a missing PostgreSQL fails the test.
    pub fn create() -> Option<PgDatabase> {
        use diesel::{Connection, RunQueryDsl};
        let Ok(admin_url) = std::env::var("SOLGATE_TEST_POSTGRES_URL") else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("SOLGATE_TEST_POSTGRES_URL is not set and CI=true: run the suite with deploy/scripts/test.sh");
            }
            eprintln!(
                "skipping a PostgreSQL test: SOLGATE_TEST_POSTGRES_URL is not set (deploy/scripts/test.sh sets it)"
            );
            return None;
        };
        let name = format!("solgate_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = diesel::PgConnection::establish(&admin_url)
            .unwrap_or_else(|error| panic!("PostgreSQL at {admin_url}: {error}"));
        diesel::sql_query(format!("CREATE DATABASE {name}")).execute(&mut admin).unwrap();
        let url = match admin_url.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => panic!("SOLGATE_TEST_POSTGRES_URL must end in /database"),
        };
        Some(PgDatabase { admin_url, name, url })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        use diesel::{Connection, RunQueryDsl};
        if let Ok(mut admin) = diesel::PgConnection::establish(&self.admin_url) {
            let _ =
                diesel::sql_query(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)).execute(&mut admin);
        }
    }
}

/// Routes only tests have: one that panics, one that echoes a JSON body.
fn test_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/vnflcm/v2/test_panic").get(panics).finish())
        .service(resource("/vnflcm/v2/test_echo").post(echo).patch(echo).finish())
        .service(resource("/vnflcm/v1/test_echo").post(echo).finish());
}

async fn panics() -> HttpResponse {
    panic!("a test handler panicked on purpose")
}

async fn echo(negotiated: Negotiated, body: JsonBody) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "version": negotiated.version(), "body": body.0 }))
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    pub async fn spawn_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
        Self::spawn_on(Db::Sqlite, configure).await.expect("SQLite is always available")
    }

    /// Starts an app on the given database; `None` when that database is not available
    /// here (only possible without CI=true).
    pub async fn spawn_on(db: Db, configure: impl FnOnce(&mut Settings)) -> Option<TestApp> {
        let postgres = match db {
            Db::Sqlite => None,
            Db::Postgres => Some(PgDatabase::create()?),
        };
        let data_dir = tempfile::tempdir().unwrap();
        let mut settings = Settings::default();
        settings.http.listen = "127.0.0.1:0".into();
        settings.http.workers = 2;
        settings.data.dir = data_dir.path().to_owned();
        settings.log = LogSettings { level: "warn".into(), ..LogSettings::default() };
        // Tests do not need fsync per commit; the durability setting is tested on its own.
        settings.database.sqlite_synchronous = solgate_db::SqliteSynchronous::Normal;
        if let Some(postgres) = &postgres {
            settings.database.url = postgres.url.clone();
        }
        configure(&mut settings);
        let database_url = settings.database_url();
        if std::env::var_os("TEST_LOG").is_some() {
            solgate::telemetry::init_subscriber(&LogSettings::default());
        }
        let (address, tls) = serve_with_test_routes(settings).await;
        Some(TestApp {
            address,
            client: reqwest::Client::new(),
            tls,
            data_dir: data_dir.path().to_owned(),
            database_url,
            _data_dir: data_dir,
            _postgres: postgres,
        })
    }

    /// A handle on solgate processes started by a test (see `processes.rs`): the same
    /// request helpers, against `address`.
    pub fn remote(address: String, database_url: String, postgres: Option<PgDatabase>) -> TestApp {
        let data_dir = tempfile::tempdir().unwrap();
        TestApp {
            address,
            client: reqwest::Client::new(),
            tls: None,
            data_dir: data_dir.path().to_owned(),
            database_url,
            _data_dir: data_dir,
            _postgres: postgres,
        }
    }

    /// A pool on the app's database, for tests that set up or inspect rows directly.
    pub fn database(&self) -> solgate_db::Database {
        solgate_db::Database::connect(
            &self.database_url,
            &solgate_db::DatabaseSettings { pool_size: 2, ..Default::default() },
        )
        .unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path))
    }

    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path))
    }
}

/// Builds the application as production does and serves it, with [`test_routes`], on a
/// listener of the test's own (production code mounts no test route). The application's own
/// listener stays up unused; `[http] public_endpoint`, unless the test sets one, names the
/// test's listener, so links point at what the test talks to. Returns the test listener's
/// address and TLS.
async fn serve_with_test_routes(mut settings: Settings) -> (String, Option<std::sync::Arc<ServerTls>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let scheme = if settings.http.tls.enabled() { "https" } else { "http" };
    let address = format!("{scheme}://127.0.0.1:{port}");
    if settings.http.public_endpoint.is_empty() {
        settings.http.public_endpoint = address.clone();
    }
    let listener_settings = solgate::startup::listener_settings(&settings);
    let application = Application::build(settings, Role::Serve).await.unwrap();
    let (state, api, tls) = (application.state(), application.serves_api(), application.tls());
    let server = solgate_gateway::listener::serve(
        move || solgate_gateway::app::app(state.clone(), test_routes, api),
        listener,
        tls.clone(),
        &listener_settings,
        solgate_gateway::listener::record_peer_names,
    )
    .unwrap();
    tokio::spawn(server);
    tokio::spawn(application.run_until_stopped());
    (address, tls)
}

/// A response, read whole, for assertions.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Reply {
    pub async fn from(response: reqwest::Response) -> Reply {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        Reply { status, headers, text }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|value| value.to_str().unwrap())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.text))
    }

    /// Asserts a SOL013 ProblemDetails with this status, returns its detail.
    pub fn problem(&self, status: u16) -> String {
        assert_eq!(self.status, status, "body: {}", self.text);
        assert_eq!(self.header("content-type"), Some("application/problem+json"), "body: {}", self.text);
        let body = self.json();
        assert_eq!(body["status"], status);
        body["detail"].as_str().expect("detail is a string").to_owned()
    }
}

/// Sends a request and reads the reply whole. Every JSON body of an API is checked against
/// the schema of the version the reply names (`Version`), for its route and status, and for
/// `null`s: a violation fails the test that sent the request.
pub async fn send(builder: reqwest::RequestBuilder) -> Reply {
    let (client, request) = builder.build_split();
    let request = request.unwrap();
    let (method, path) = (request.method().clone(), request.url().path().to_owned());
    let reply = Reply::from(client.execute(request).await.unwrap()).await;
    check_response(&method, &path, &reply);
    reply
}

static REGISTRY: std::sync::LazyLock<solgate_schemas::Registry> =
    std::sync::LazyLock::new(|| solgate_schemas::Registry::builtin().unwrap());

/// The schema check of [`send`].
pub fn check_response(method: &reqwest::Method, path: &str, reply: &Reply) {
    use solgate_gateway::sol013::responses;
    let json = reply.header("content-type").is_some_and(|kind| kind.contains("json"));
    let method = actix_web::http::Method::from_bytes(method.as_str().as_bytes()).unwrap();
    let Some(shape) = responses::shape(&method, path, reply.status) else { return };
    if !json {
        // An error is always a ProblemDetails.
        assert!(
            reply.status < 400 || method == actix_web::http::Method::HEAD,
            "{method} {path}: {} without a ProblemDetails: {}",
            reply.status,
            reply.text
        );
        return;
    }
    if reply.text.is_empty() {
        return;
    }
    let api = path.split('/').nth(1).and_then(solgate_schemas::Api::from_segment).unwrap();
    let entry = reply
        .header("version")
        .and_then(|version| version.parse().ok())
        .and_then(|id| REGISTRY.find(api, id))
        .or_else(|| REGISTRY.all_versions().filter(|entry| entry.api == api).last());
    let entry = entry.unwrap_or_else(|| panic!("{method} {path}: no version of {api:?} to check against"));
    let body: Value = serde_json::from_str(&reply.text)
        .unwrap_or_else(|error| panic!("{method} {path}: not JSON ({error}): {}", reply.text));
    if let Err(violation) = responses::check(entry, shape, &body) {
        panic!(
            "{method} {path} → {}: the body violates {} {}: {violation}\n{}",
            reply.status,
            api.as_str(),
            entry.version_string(),
            reply.text
        );
    }
}

/// VNF packages over the real HTTP API (`/vnfpkgm/v1`).
impl TestApp {
    /// Starts an app on `data_dir` (its SQLite file and package store), e.g. another app's
    /// `data_dir`: a restart on the same data.
    pub async fn spawn_with_data_dir(data_dir: &std::path::Path, configure: impl FnOnce(&mut Settings)) -> TestApp {
        let dir = data_dir.to_owned();
        let mut app = Self::spawn_with(move |settings| {
            settings.data.dir = dir;
            configure(settings);
        })
        .await;
        app.data_dir = data_dir.to_owned();
        app
    }

    /// POST /vnfpkgm/v1/vnf_packages; returns the new package's id.
    pub async fn create_package(&self) -> String {
        let reply =
            send(self.request(reqwest::Method::POST, "/vnfpkgm/v1/vnf_packages").json(&serde_json::json!({}))).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        reply.json()["id"].as_str().unwrap().to_owned()
    }

    /// PUT .../package_content with the zip, as python-tackerclient sends it.
    pub async fn upload_package(&self, package_id: &str, csar: &[u8]) -> Reply {
        send(
            self.request(reqwest::Method::PUT, &format!("/vnfpkgm/v1/vnf_packages/{package_id}/package_content"))
                .header("Content-Type", "application/zip")
                .header("Accept", "application/json")
                .body(csar.to_vec()),
        )
        .await
    }

    /// Polls the package until onboarding has ended (ONBOARDED, or CREATED after a failure);
    /// returns its VnfPkgInfo.
    pub async fn wait_for_onboarding(&self, package_id: &str) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let request = send(self.get(&format!("/vnfpkgm/v1/vnf_packages/{package_id}")));
            let reply = tokio::time::timeout(std::time::Duration::from_secs(30), request)
                .await
                .unwrap_or_else(|_| panic!("GET of package {package_id} got no answer in 30 s"));
            assert_eq!(reply.status, 200, "{}", reply.text);
            let info = reply.json();
            if matches!(info["onboardingState"].as_str(), Some("ONBOARDED" | "CREATED")) {
                return info;
            }
            assert!(std::time::Instant::now() < deadline, "onboarding of {package_id} did not end: {info}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Creates a package, uploads `csar`, waits until it is ONBOARDED and makes sure it is
    /// ENABLED; returns the package id.
    pub async fn onboard_package(&self, csar: &[u8]) -> String {
        let id = self.create_package().await;
        let reply = self.upload_package(&id, csar).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        let info = self.wait_for_onboarding(&id).await;
        assert_eq!(info["onboardingState"], "ONBOARDED", "onboarding failed: {info}");
        if info["operationalState"] != "ENABLED" {
            let reply = send(
                self.request(reqwest::Method::PATCH, &format!("/vnfpkgm/v1/vnf_packages/{id}"))
                    .header("Content-Type", "application/merge-patch+json")
                    .body(r#"{"operationalState":"ENABLED"}"#),
            )
            .await;
            assert_eq!(reply.status, 200, "{}", reply.text);
        }
        id
    }

    /// Onboards `CsarBuilder::sample()` (flavours `simple` and `small`) with a fresh vnfdId,
    /// so it can be called more than once per app; returns (package id, vnfdId).
    pub async fn onboard_sample(&self) -> (String, String) {
        let vnfd_id = uuid::Uuid::new_v4().to_string();
        let csar = solgate_vnfpkg::testing::CsarBuilder::sample().descriptor_id(&vnfd_id).to_bytes().unwrap();
        (self.onboard_package(&csar).await, vnfd_id)
    }
}
