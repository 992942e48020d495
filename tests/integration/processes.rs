//! Separate solgate processes (the real binary) for scale-out tests: gateways and
//! conductors sharing PostgreSQL and RabbitMQ, started, killed and restarted at will.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Settings every process of one test shares (as environment variables).
#[derive(Clone)]
pub struct Cluster {
    pub database_url: String,
    pub amqp_url: String,
    pub queue_prefix: String,
    pub data_dir: std::path::PathBuf,
    pub extra_env: Vec<(String, String)>,
}

/// One running process and what its JSON log said.
pub struct Process {
    pub role: &'static str,
    child: Child,
    lines: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Cluster {
    pub fn spawn(&self, role: &'static str) -> Process {
        let mut command = Command::new(env!("CARGO_BIN_EXE_solgate"));
        command
            .args([role, "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&self.data_dir)
            .env_remove("RUST_LOG")
            .env("SOLGATE_LOG_FORMAT", "json")
            .env("SOLGATE_DATABASE_URL", &self.database_url)
            .env("SOLGATE__RPC__TRANSPORT", "amqp")
            .env("SOLGATE__RPC__AMQP_URL", &self.amqp_url)
            .env("SOLGATE__RPC__QUEUE_PREFIX", &self.queue_prefix)
            .env("SOLGATE__RPC__RELAY_INTERVAL_SECS", "1")
            .env("SOLGATE__RPC__REPUBLISH_AFTER_SECS", "5")
            .env("SOLGATE__RPC__MAX_RECONNECT_BACKOFF_SECS", "1")
            // Every process of this cluster runs VNFs on the local simulated VIM.
            .env("SOLGATE__CONDUCTOR__LOCAL_VIM", "true")
            .env("SOLGATE__CONDUCTOR__HEARTBEAT_INTERVAL_SECS", "1")
            .env("SOLGATE__CONDUCTOR__LEASE_TIMEOUT_SECS", "3")
            .env("SOLGATE__DATABASE__SQLITE_SYNCHRONOUS", "normal")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in &self.extra_env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("the solgate binary starts");
        let lines = read_log(&mut child);
        Process { role, child, lines }
    }
}

/// `solgate serve` as a user starts it (embedded: SQLite in `data_dir`, in-process work,
/// the local simulated VIM), with a short conductor lease so a restart recovers quickly.
pub fn spawn_embedded(data_dir: &std::path::Path) -> Process {
    spawn_serve(std::path::Path::new(env!("CARGO_BIN_EXE_solgate")), data_dir, &[])
}

/// As [`spawn_embedded`], from the solgate executable at `binary`, with more settings.
pub fn spawn_serve(binary: &std::path::Path, data_dir: &std::path::Path, extra_env: &[(&str, &str)]) -> Process {
    let mut command = Command::new(binary);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env_remove("RUST_LOG")
        .env_remove("SOLGATE_DATABASE_URL")
        .env("SOLGATE_LOG_FORMAT", "json")
        .env("SOLGATE__RPC__RELAY_INTERVAL_SECS", "1")
        .env("SOLGATE__RPC__REPUBLISH_AFTER_SECS", "2")
        .env("SOLGATE__CONDUCTOR__HEARTBEAT_INTERVAL_SECS", "1")
        .env("SOLGATE__CONDUCTOR__LEASE_TIMEOUT_SECS", "3")
        .envs(extra_env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the solgate binary starts");
    let lines = read_log(&mut child);
    Process { role: "serve", child, lines }
}

/// The JSON log lines of a child's stderr, collected as they come.
fn read_log(child: &mut Child) -> Arc<Mutex<Vec<serde_json::Value>>> {
    let stderr = child.stderr.take().expect("stderr is piped");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let event = serde_json::from_str(&line).unwrap_or_else(|_| serde_json::json!({ "message": line }));
            sink.lock().unwrap().push(event);
        }
    });
    lines
}

impl Process {
    /// Waits for a log event whose message contains `text`; returns it.
    pub fn wait_for_log(&self, text: &str, timeout: Duration) -> serde_json::Value {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(event) = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .find(|event| event["message"].as_str().is_some_and(|message| message.contains(text)))
            {
                return event.clone();
            }
            assert!(
                Instant::now() < deadline,
                "{} never logged {text:?}; log: {:?}",
                self.role,
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The HTTP base URL the process listens on.
    pub fn base_url(&self) -> String {
        let event = self.wait_for_log("listening", Duration::from_secs(60));
        format!("http://{}", event["address"].as_str().unwrap())
    }

    /// The conductor id (owner of the operations it runs).
    pub fn conductor_id(&self) -> String {
        self.wait_for_log("conductor started", Duration::from_secs(60))["conductor"].as_str().unwrap().to_owned()
    }

    /// SIGKILL: a crash, no clean-up at all.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log_contains(&self, text: &str) -> bool {
        self.lines.lock().unwrap().iter().any(|event| event.to_string().contains(text))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The AMQP URL of the machine's broker; `None` (test returns) without one unless CI=true.
pub fn amqp_url() -> Option<String> {
    match std::env::var("SOLGATE_TEST_AMQP_URL") {
        Ok(url) => Some(url),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("SOLGATE_TEST_AMQP_URL is not set and CI=true: run the suite with deploy/scripts/test.sh")
        }
        Err(_) => {
            eprintln!("skipping a RabbitMQ test: SOLGATE_TEST_AMQP_URL is not set (deploy/scripts/test.sh sets it)");
            None
        }
    }
}
