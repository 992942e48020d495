//! A solgate server per test and the solctl binary run against it.

use std::path::{Path, PathBuf};

use solgate::settings::LogSettings;
use solgate::{Application, Role, Settings};

pub struct Server {
    pub endpoint: String,
    pub dir: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Server {
    pub async fn start() -> Server {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(configure: impl FnOnce(&mut Settings)) -> Server {
        let data = tempfile::tempdir().unwrap();
        let mut settings = Settings::default();
        settings.http.listen = "127.0.0.1:0".into();
        settings.http.workers = 2;
        settings.data.dir = data.path().to_owned();
        settings.log = LogSettings { level: "warn".into(), ..LogSettings::default() };
        // Tests need no fsync per commit.
        settings.database.sqlite_synchronous = solgate_db::SqliteSynchronous::Normal;
        configure(&mut settings);
        let application = Application::build(settings, Role::Serve).await.unwrap();
        let scheme = if application.tls().is_some() { "https" } else { "http" };
        let endpoint = format!("{scheme}://127.0.0.1:{}", application.port());
        tokio::spawn(application.run_until_stopped());
        Server { endpoint, dir: tempfile::tempdir().unwrap(), _data: data }
    }

    /// Runs solctl with `--endpoint` of this server.
    pub async fn solctl(&self, args: &[&str]) -> Run {
        let mut all = vec!["--endpoint", self.endpoint.as_str()];
        all.extend_from_slice(args);
        solctl(&all).await
    }

    /// Runs solctl and asserts exit code 0.
    pub async fn ok(&self, args: &[&str]) -> Run {
        let run = self.solctl(args).await;
        assert_eq!(run.code, 0, "solctl {args:?}: {run:?}");
        run
    }

    pub fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    /// A fresh copy of the sample package as a zip (vnfdId given), onboarded with
    /// `package onboard`; returns the package id.
    pub async fn onboard_sample(&self, vnfd_id: &str) -> String {
        let csar = solgate_vnfpkg::testing::CsarBuilder::sample().descriptor_id(vnfd_id).to_bytes().unwrap();
        let zip = self.file(&format!("{vnfd_id}.zip"), csar);
        let run = self.ok(&["package", "onboard", zip.to_str().unwrap(), "-f", "json"]).await;
        let package = run.json();
        assert_eq!(package["Onboarding State"], "ONBOARDED", "{run:?}");
        assert_eq!(package["VNFD ID"], vnfd_id);
        package["ID"].as_str().unwrap().to_owned()
    }
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|error| panic!("not JSON ({error}): {self:?}"))
    }

    /// The single line of `-f value -c X`.
    pub fn value(&self) -> String {
        self.stdout.trim().to_owned()
    }
}

/// The solctl binary with `args`; the environment's SOLGATE_*/OS_* settings removed so
/// that only the arguments count.
pub async fn solctl(args: &[&str]) -> Run {
    solctl_env(args, &[]).await
}

pub async fn solctl_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_solctl"));
    for (name, _) in std::env::vars() {
        if name.starts_with("SOLGATE_") || name.starts_with("OS_") || name == "SOLCTL_CONFIG" {
            command.env_remove(name);
        }
    }
    command.args(args).envs(env.iter().copied()).stdin(std::process::Stdio::null());
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), command.output())
        .await
        .unwrap_or_else(|_| panic!("solctl {args:?} did not end in 120 s"))
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The repository's sample package directory (what the README's quick start onboards).
pub fn sample_package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/sample-package")
}

/// A notification receiver: 204 to the subscription's test GET and to every POST.
pub struct Receiver {
    pub url: String,
}

impl Receiver {
    pub fn start() -> Receiver {
        use actix_web::{App, HttpResponse, HttpServer, web};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server =
            HttpServer::new(|| App::new().default_service(web::to(|| async { HttpResponse::NoContent().finish() })))
                .workers(1)
                .listen(listener)
                .unwrap()
                .run();
        tokio::spawn(server);
        Receiver { url: format!("http://127.0.0.1:{port}/cb") }
    }
}
