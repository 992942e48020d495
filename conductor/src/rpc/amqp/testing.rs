//! A private RabbitMQ node for tests that stop and restart the broker (cargo feature
//! `test-support`). The machine's shared broker must never be stopped: other tests use it.
//!
//! The node runs from the installed `rabbitmq-server` script with its own node name, AMQP
//! and distribution ports, config, data and log directories in a temporary directory
//! (`epmd` is shared, which is harmless). It runs in its own process group under a small
//! shell watchdog that kills the group if the test process dies, and `Drop` kills it and
//! removes the directory.
//!
//! Tested with Debian 12's RabbitMQ 3.10 (boots in 8-10 s on 2 cores). Set
//! `SOLGATE_RABBITMQ_SERVER` to use another `rabbitmq-server` script.

use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use lapin::{Connection, ConnectionProperties};
use tempfile::TempDir;

/// How long a node may take to boot before `start` gives up.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a node may take to stop gracefully before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `rabbitmq-server` in the background, kills the whole process group when the test
/// process (`$2`) is gone, and forwards SIGTERM to the server so `stop` is graceful.
const WATCHDOG: &str = r#"
server="$1"; parent="$2"
"$server" &
srv=$!
( while kill -0 "$parent" 2>/dev/null; do sleep 1; done; kill -KILL 0 ) &
guard=$!
trap 'kill -TERM "$srv" 2>/dev/null; wait "$srv"; kill "$guard" 2>/dev/null; exit 0' TERM
wait "$srv"
status=$?
kill "$guard" 2>/dev/null
exit $status
"#;

/// A RabbitMQ node of one test, reachable as guest/guest on `url()`.
pub struct PrivateBroker {
    dir: TempDir,
    node_name: String,
    port: u16,
    dist_port: u16,
    child: Option<Child>,
    starts: u32,
}

impl PrivateBroker {
    /// Starts a fresh node on free ports; waits until it accepts AMQP connections.
    pub async fn start() -> anyhow::Result<Self> {
        let dir = tempfile::Builder::new().prefix("solgate-rabbitmq-").tempdir().context("temporary directory")?;
        let node_name = format!("solgate-test-{}@localhost", uuid::Uuid::new_v4().simple());
        let port = free_port()?;
        let mut dist_port = free_port()?;
        while dist_port == port {
            dist_port = free_port()?;
        }
        for sub in ["home", "mnesia", "log"] {
            fs::create_dir_all(dir.path().join(sub)).with_context(|| format!("creating {sub}"))?;
        }
        // An empty env file: the machine's /etc/rabbitmq/rabbitmq-env.conf names the shared node.
        fs::write(dir.path().join("rabbitmq-env.conf"), "")?;
        fs::write(dir.path().join("enabled_plugins"), "[].\n")?;
        // A low disk limit: a nearly full /tmp must not raise an alarm that blocks publishers.
        let config = format!("listeners.tcp.1 = 127.0.0.1:{port}\ndisk_free_limit.absolute = 1MB\n");
        fs::write(dir.path().join("rabbitmq.conf"), config)?;
        let mut broker = Self { dir, node_name, port, dist_port, child: None, starts: 0 };
        broker.boot().await?;
        Ok(broker)
    }

    /// `amqp://guest:guest@127.0.0.1:{port}/%2f`.
    pub fn url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn node_name(&self) -> &str {
        &self.node_name
    }

    /// Whether the node's processes are running (it may still be booting).
    pub fn is_running(&mut self) -> bool {
        self.child.as_mut().is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Stops the node gracefully (it closes client connections with CONNECTION_FORCED and
    /// writes its queues to disk); kills it if it takes longer than 30 s.
    pub async fn stop(&mut self) -> anyhow::Result<()> {
        let Some(pid) = self.child.as_ref().map(Child::id) else { return Ok(()) };
        signal(&["-s", "TERM", &pid.to_string()])?;
        let deadline = Instant::now() + STOP_TIMEOUT;
        while self.is_running() {
            if Instant::now() > deadline {
                tracing::warn!(node = %self.node_name, "RabbitMQ did not stop within 30 s; killing it");
                return self.kill().await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.reap();
        wait_port_closed(self.port).await;
        Ok(())
    }

    /// Kills the node with SIGKILL, like a crash: only what it had written to disk survives
    /// (for RabbitMQ, every message it confirmed as persistent).
    pub async fn kill(&mut self) -> anyhow::Result<()> {
        if self.child.is_none() {
            return Ok(());
        }
        self.kill_group();
        while self.is_running() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.reap();
        wait_port_closed(self.port).await;
        Ok(())
    }

    /// Starts the node again with the same name, port and data directory: durable queues
    /// and persistent messages are back.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        if self.is_running() {
            bail!("the RabbitMQ node {} is still running", self.node_name);
        }
        self.boot().await
    }

    /// The end of the node's console output and log (for failure messages).
    pub fn logs(&self) -> String {
        let mut out = String::new();
        let console = self.console_log(self.starts);
        let node_log = self.dir.path().join("log").join(format!("{}.log", self.node_name));
        for path in [console, node_log] {
            let text = fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(40)..].join("\n");
            out.push_str(&format!("--- {} ---\n{tail}\n", path.display()));
        }
        out
    }

    fn console_log(&self, start: u32) -> PathBuf {
        self.dir.path().join("log").join(format!("console-{start}.log"))
    }

    async fn boot(&mut self) -> anyhow::Result<()> {
        self.starts += 1;
        let console = File::create(self.console_log(self.starts)).context("console log")?;
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(WATCHDOG)
            .arg("solgate-rabbitmq-watchdog")
            .arg(server_script())
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(console.try_clone()?)
            .stderr(console);
        // A fresh process group: `kill` reaches the node and its helpers, not the test.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("RABBITMQ_") {
                command.env_remove(key);
            }
        }
        let dir = self.dir.path();
        command
            .env("HOME", dir.join("home"))
            .env("RABBITMQ_CONF_ENV_FILE", dir.join("rabbitmq-env.conf"))
            .env("RABBITMQ_CONFIG_FILE", dir.join("rabbitmq.conf"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", dir.join("enabled_plugins"))
            .env("RABBITMQ_MNESIA_BASE", dir.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", dir.join("log"))
            .env("RABBITMQ_NODENAME", &self.node_name)
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", self.port.to_string())
            .env("RABBITMQ_DIST_PORT", self.dist_port.to_string())
            .env("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}")
            .env("ERL_EPMD_ADDRESS", "127.0.0.1");
        let child = command.spawn().context("starting rabbitmq-server")?;
        self.child = Some(child);
        let started = Instant::now();
        match self.wait_ready().await {
            Ok(()) => {
                tracing::info!(node = %self.node_name, port = self.port, elapsed = ?started.elapsed(), "private RabbitMQ node is up");
                Ok(())
            }
            Err(error) => {
                let logs = self.logs();
                self.kill_group();
                self.reap();
                Err(error.context(format!("private RabbitMQ node {} did not start\n{logs}", self.node_name)))
            }
        }
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if !self.is_running() {
                bail!("rabbitmq-server exited");
            }
            if Instant::now() > deadline {
                bail!("not ready within {START_TIMEOUT:?}");
            }
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                // The listener opens at the end of the boot; an AMQP handshake proves it serves.
                let url = self.url();
                let attempt = Connection::connect(&url, ConnectionProperties::default());
                if let Ok(Ok(connection)) = tokio::time::timeout(Duration::from_secs(5), attempt).await {
                    let _ = connection.close(200, "ready".into()).await;
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    fn kill_group(&mut self) {
        if let Some(pid) = self.child.as_ref().map(Child::id) {
            // The process group id is the watchdog's pid (`process_group(0)`).
            if let Err(error) = signal(&["-s", "KILL", "--", &format!("-{pid}")]) {
                tracing::warn!(%error, "killing the private RabbitMQ node failed");
            }
        }
    }

    fn reap(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateBroker {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill_group();
            self.reap();
        }
        // `TempDir` removes the node's data and logs.
    }
}

fn server_script() -> PathBuf {
    if let Some(path) = std::env::var_os("SOLGATE_RABBITMQ_SERVER") {
        return PathBuf::from(path);
    }
    // Debian's /usr/sbin/rabbitmq-server is a wrapper that switches to the `rabbitmq` user
    // and the shared node's directories; the real script is this one.
    let debian = Path::new("/usr/lib/rabbitmq/bin/rabbitmq-server");
    if debian.exists() { debian.to_path_buf() } else { PathBuf::from("rabbitmq-server") }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

fn signal(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("kill").args(args).stderr(Stdio::null()).status().context("running kill")?;
    if !status.success() {
        return Err(anyhow!("kill {} failed: {status}", args.join(" ")));
    }
    Ok(())
}

async fn wait_port_closed(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
