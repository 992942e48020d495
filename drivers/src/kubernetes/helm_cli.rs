//! The `helm` command as the Helm driver runs it (see [`super::helm`]): a clean
//! environment, its own temporary home, the cluster credentials in a kubeconfig file only
//! solgate can read, a time limit after which it is killed, and no shell.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::VimCredentials;
use super::http::{Auth, normalize_pem};
use crate::run::VimFailure;

/// What helm prints when the release does not exist (Tacker's `RELEASE_NOT_FOUND_MSG`).
const RELEASE_NOT_FOUND: &str = "release: not found";
/// `helm get manifest` of a large chart is a few MiB; more is not a chart.
const STDOUT_CAP: usize = 32 << 20;
/// Enough of stderr for the message of a failure.
const STDERR_CAP: usize = 1 << 20;
/// How much of helm's stderr a failure message shows (its end, where the error is).
const STDERR_TAIL: usize = 2000;

/// How `helm` is run (`[drivers] helm_command`, `helm_timeout_secs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelmSettings {
    /// The `helm` executable: a path, or a name looked up in `PATH`.
    pub command: PathBuf,
    /// Limit of one helm command; passed to helm as `--timeout` for the commands that wait,
    /// and the process is killed a little after it (a quarter more, 1 to 10 s).
    pub timeout: Duration,
}

impl Default for HelmSettings {
    fn default() -> Self {
        Self { command: PathBuf::from("helm"), timeout: Duration::from_secs(120) }
    }
}

/// The `REVISION:` helm prints after an install or upgrade.
pub(super) fn revision_of(stdout: &str) -> Option<String> {
    stdout.lines().find_map(|line| line.trim().strip_prefix("REVISION:").map(|rev| rev.trim().to_owned()))
}

/// A failed helm command.
#[derive(Debug, thiserror::Error)]
pub enum HelmError {
    #[error("the helm command {command} cannot be run: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("helm {verb} did not finish within {limit:?} and was killed")]
    TimedOut { verb: String, limit: Duration },
    #[error("helm {verb} printed more than {cap} bytes and was killed")]
    TooMuchOutput { verb: String, cap: usize },
    #[error("helm {verb} failed ({status}): {stderr}")]
    Failed { verb: String, status: String, stderr: String },
    #[error("helm {verb}: {source}")]
    Io { verb: String, source: std::io::Error },
}

impl VimFailure for HelmError {
    /// The cluster unreachable is worth another try; anything else helm says is not.
    fn is_transient(&self) -> bool {
        match self {
            HelmError::Failed { stderr, .. } => {
                ["Kubernetes cluster unreachable", "connection refused", "i/o timeout", "TLS handshake timeout"]
                    .iter()
                    .any(|sign| stderr.contains(sign))
            }
            _ => false,
        }
    }
}

/// A private directory removed when dropped (the kubeconfig holds the cluster token).
#[derive(Debug)]
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("solgate-helm-{}", uuid::Uuid::new_v4()));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Self(path))
    }

    fn write(&self, name: &str, content: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.0.join(name);
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
        file.write_all(content)?;
        Ok(path)
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `helm` command of one run, with the run's kubeconfig.
#[derive(Debug)]
pub(super) struct HelmCli {
    settings: HelmSettings,
    dir: PrivateDir,
    kubeconfig: PathBuf,
    values_written: std::sync::atomic::AtomicUsize,
}

impl HelmCli {
    /// Writes a kubeconfig for the cluster of `creds` into a private temporary directory.
    pub(super) fn new(settings: &HelmSettings, creds: &VimCredentials) -> Result<Self, String> {
        let dir = PrivateDir::new().map_err(|error| format!("cannot make a directory for helm: {error}"))?;
        let mut cluster = Map::new();
        cluster.insert("server".into(), json!(creds.endpoint.as_str().trim_end_matches('/')));
        if let Some(pem) = &creds.tls.ca_cert {
            let path = dir
                .write("ca.pem", normalize_pem(pem).as_bytes())
                .map_err(|error| format!("cannot write the cluster CA for helm: {error}"))?;
            cluster.insert("certificate-authority".into(), json!(path));
        } else if creds.tls.skip_certificate_verification {
            // KubernetesClient::new refused it already unless the operator allows it.
            cluster.insert("insecure-skip-tls-verify".into(), json!(true));
        }
        let user = match &creds.auth {
            Auth::Bearer(token) => json!({"token": token.expose()}),
            Auth::Basic { username, password } => json!({"username": username, "password": password.expose()}),
        };
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "vim", "cluster": cluster}],
            "users": [{"name": "vim", "user": user}],
            "contexts": [{"name": "vim", "context": {"cluster": "vim", "user": "vim", "namespace": creds.namespace}}],
            "current-context": "vim",
        });
        let kubeconfig = dir
            .write("kubeconfig", config.to_string().as_bytes())
            .map_err(|error| format!("cannot write the kubeconfig for helm: {error}"))?;
        Ok(Self { settings: settings.clone(), dir, kubeconfig, values_written: Default::default() })
    }

    /// A values file for one command.
    fn values_file(&self, values: &Value) -> Result<PathBuf, HelmError> {
        let n = self.values_written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.dir
            .write(&format!("values-{n}.json"), values.to_string().as_bytes())
            .map_err(|source| HelmError::Io { verb: "values".into(), source })
    }

    /// Runs `helm <args> --kubeconfig <file>`: no shell, a clean environment, killed (and
    /// reaped) after the time limit. Its stdout when it exits 0.
    async fn run(&self, args: Vec<OsString>) -> Result<String, HelmError> {
        let verb = match args.first() {
            Some(first) if first == "get" => "get manifest".to_owned(),
            Some(first) => first.to_string_lossy().into_owned(),
            None => String::new(),
        };
        let mut command = tokio::process::Command::new(&self.settings.command);
        command
            .args(&args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()))
            .env("HOME", &self.dir.0)
            .env("HELM_CACHE_HOME", self.dir.0.join("cache"))
            .env("HELM_CONFIG_HOME", self.dir.0.join("config"))
            .env("HELM_DATA_HOME", self.dir.0.join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|source| HelmError::Spawn { command: self.settings.command.display().to_string(), source })?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(HelmError::Io { verb, source: std::io::Error::other("no pipes to helm") });
        };
        // A little longer than helm's own --timeout, so that helm can say what it waited for.
        let margin = (self.settings.timeout / 4).clamp(Duration::from_secs(1), Duration::from_secs(10));
        let limit = self.settings.timeout + margin;
        let finished = tokio::time::timeout(limit, async {
            tokio::try_join!(read_capped(stdout, STDOUT_CAP, &verb), read_capped(stderr, STDERR_CAP, &verb), async {
                child.wait().await.map_err(|source| HelmError::Io { verb: verb.clone(), source })
            },)
        })
        .await;
        let (out, err, status) = match finished {
            Ok(Ok(done)) => done,
            Ok(Err(error)) => {
                let _ = child.kill().await;
                return Err(error);
            }
            Err(_) => {
                // SIGKILL and wait: nothing is left running or unreaped.
                let _ = child.kill().await;
                return Err(HelmError::TimedOut { verb, limit });
            }
        };
        if status.success() {
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
        let text = String::from_utf8_lossy(&err);
        let text = text.trim();
        let start = text.len().saturating_sub(STDERR_TAIL);
        let start = (start..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
        Err(HelmError::Failed { verb, status: status.to_string(), stderr: text[start..].to_owned() })
    }

    fn timeout_arg(&self) -> String {
        format!("{}s", self.settings.timeout.as_secs().max(1))
    }

    /// `helm status`: whether the release exists.
    pub(super) async fn exists(&self, release: &str, namespace: &str) -> Result<bool, HelmError> {
        match self.run(os(["status", release, "--namespace", namespace])).await {
            Ok(_) => Ok(true),
            Err(HelmError::Failed { stderr, .. }) if stderr.contains(RELEASE_NOT_FOUND) => Ok(false),
            Err(error) => Err(error),
        }
    }

    pub(super) async fn install(
        &self,
        release: &str,
        chart: &Path,
        namespace: &str,
        values: &Value,
    ) -> Result<String, HelmError> {
        let file = self.values_file(values)?;
        let mut args = os(["install", release]);
        args.push(chart.into());
        args.extend(os(["--namespace", namespace, "--create-namespace", "--timeout", &self.timeout_arg()]));
        args.extend([OsString::from("--values"), file.into()]);
        self.run(args).await
    }

    pub(super) async fn upgrade(
        &self,
        release: &str,
        chart: &Path,
        namespace: &str,
        values: &Value,
    ) -> Result<String, HelmError> {
        let file = self.values_file(values)?;
        let mut args = os(["upgrade", release]);
        args.push(chart.into());
        args.extend(os(["--namespace", namespace, "--reuse-values", "--timeout", &self.timeout_arg()]));
        args.extend([OsString::from("--values"), file.into()]);
        self.run(args).await
    }

    pub(super) async fn rollback(&self, release: &str, revision: &str, namespace: &str) -> Result<String, HelmError> {
        self.run(os(["rollback", release, revision, "--namespace", namespace, "--timeout", &self.timeout_arg()])).await
    }

    pub(super) async fn uninstall(&self, release: &str, namespace: &str) -> Result<String, HelmError> {
        self.run(os(["uninstall", release, "--namespace", namespace, "--timeout", &self.timeout_arg()])).await
    }

    pub(super) async fn manifest(&self, release: &str, namespace: &str) -> Result<String, HelmError> {
        self.run(os(["get", "manifest", release, "--namespace", namespace])).await
    }
}

fn os<const N: usize>(args: [&str; N]) -> Vec<OsString> {
    args.into_iter().map(OsString::from).collect()
}

/// Reads a pipe to its end, failing once more than `cap` bytes came.
async fn read_capped(mut pipe: impl AsyncRead + Unpin, cap: usize, verb: &str) -> Result<Vec<u8>, HelmError> {
    let mut buffer = Vec::new();
    // On the heap: the future of every helm call carries two of these.
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = pipe.read(&mut chunk).await.map_err(|source| HelmError::Io { verb: verb.to_owned(), source })?;
        if n == 0 {
            return Ok(buffer);
        }
        if buffer.len() + n > cap {
            return Err(HelmError::TooMuchOutput { verb: verb.to_owned(), cap });
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revision_is_read_from_helms_report() {
        let out =
            "NAME: vnf1\nLAST DEPLOYED: Tue Nov 24 10:00:00 2026\nNAMESPACE: default\nSTATUS: deployed\nREVISION: 3\n";
        assert_eq!(revision_of(out).as_deref(), Some("3"));
        assert_eq!(revision_of("Rollback was a success! Happy Helming!"), None);
    }

    #[test]
    fn only_an_unreachable_cluster_is_transient() {
        let failed = |stderr: &str| HelmError::Failed {
            verb: "install".into(),
            status: "exit status: 1".into(),
            stderr: stderr.into(),
        };
        assert!(
            failed(
                "Error: Kubernetes cluster unreachable: Get \"https://k8s:6443/version\": dial tcp: connection refused"
            )
            .is_transient()
        );
        assert!(!failed("Error: INSTALLATION FAILED: cannot re-use a name that is still in use").is_transient());
    }
}
