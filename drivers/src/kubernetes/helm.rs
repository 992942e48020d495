//! The Helm infra driver (`ETSINFV.HELM.V_3`): the VNF is one Helm release of a chart in
//! the package, installed on a Kubernetes cluster with the `helm` command, as Tacker's v2
//! Helm driver (`sol_refactored/infra_drivers/kubernetes/helm.py`) does it:
//!
//! - `additionalParams`: `helm_chart_path` (the chart, a package path), `helm_value_names`
//!   (`{<VDU id>: {"replica": <value name>}}`: the value that sets a VDU's replicas),
//!   `helm_parameters` (values to set, dotted names as `helm --set` takes them) and
//!   `namespace` (else the VIM's, else `default`).
//! - Release `vnf<instance id without dashes>`. Instantiate installs it (or upgrades it
//!   when an earlier run installed it), with the plan's replica count of every VDU that has
//!   a replica value; scale and a new chart (`helm_chart_path` again) upgrade it with
//!   `--reuse-values`; a rollback returns to the revision before the operation with
//!   `helm rollback`; terminate uninstalls it.
//! - The objects are what `helm get manifest` prints. A VDU's workload is the one whose
//!   name, without its last `-suffix` (the chart appends the release name), is the VDU's
//!   `name` (Tacker's `_select_vdu_reses`); its pods are those of its selector named after
//!   it (a chart's workloads often share one selector). Waits, the inventory, heal (pod
//!   deletion) and operate (scale to 0 and back) are the Kubernetes driver's.
//!
//! Differences from Tacker, on purpose: the cluster credentials reach `helm` in a
//! kubeconfig file readable only by solgate (Tacker puts the token on the command line,
//! where any local user can read it); values go in a JSON values file instead of one
//! `--set a=1,b=2` string (where a comma or `=` inside a value would set other values);
//! `helm` runs with a clean environment, its own temporary home, a time limit after which
//! it is killed, and no shell.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::driver::{KubernetesRun, ObjectRef, Workload, package_file, selector_of, vdu_for_name};
use super::http::{Auth, normalize_pem};
use super::{KubernetesDriver, ResourceRef, VimCredentials, parse_manifests};
use crate::infra::{DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VIM_TYPE_HELM};
use crate::run::{ActionRun, Halt, VimFailure, failed, vnfd_flavour};

/// `additionalParams` keys of Tacker's Helm instantiate.
pub const CHART_PATH_PARAM: &str = "helm_chart_path";
pub const VALUE_NAMES_PARAM: &str = "helm_value_names";
pub const PARAMETERS_PARAM: &str = "helm_parameters";

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

/// Helm infra driver for `ETSINFV.HELM.V_3` VIMs.
#[derive(Debug, Clone, Default)]
pub struct HelmDriver {
    /// Waits, trust and cancellation, as for the Kubernetes driver.
    pub kubernetes: KubernetesDriver,
    pub helm: HelmSettings,
}

impl InfraDriver for HelmDriver {
    fn vim_type(&self) -> &'static str {
        VIM_TYPE_HELM
    }

    fn execute<'a>(
        &'a self,
        ctx: InfraContext<'a>,
        action: InfraAction<'a>,
    ) -> BoxFuture<'a, Result<Inventory, DriverError>> {
        Box::pin(self.kubernetes.run(ctx, action, Some(&self.helm)))
    }
}

/// The release of a VNF, as kept in `vim_state.helm`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct HelmRelease {
    pub(super) name: String,
    /// Package path of the chart last installed or upgraded to.
    pub(super) chart: String,
    /// `helm_value_names` of the instantiation: VDU id → `{"replica": <value name>}`.
    pub(super) value_names: Map<String, Value>,
    /// The revision the last completed action left, the one a rollback returns to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) revision: Option<String>,
}

/// The release name of an instance (Tacker's `_get_release_name`): a DNS label of at
/// most 53 characters, as helm requires.
pub(super) fn release_name(instance_id: &str) -> String {
    let mut name: String = format!("vnf{}", instance_id.replace('-', "")).to_ascii_lowercase();
    name.retain(|c| c.is_ascii_alphanumeric());
    name.truncate(53);
    name
}

/// Values from dotted names (`service.port`) as a nested JSON object: what `helm --set`
/// makes of them, without its string syntax. Names with helm's list or escape syntax, or
/// that set a value and a member of it both, are refused.
pub(super) fn nested_values(flat: &Map<String, Value>) -> Result<Value, String> {
    let mut root = Map::new();
    for (name, value) in flat {
        let parts: Vec<&str> = name.split('.').collect();
        if parts.iter().any(|part| part.is_empty() || part.contains(['[', ']', '\\', ',', '=']) || part.trim() != *part)
        {
            return Err(format!("helm value name {name:?} is not a dotted name of plain keys"));
        }
        let (last, parents) = parts.split_last().unwrap_or((&"", &[]));
        let mut node = &mut root;
        for part in parents {
            let entry = node.entry((*part).to_owned()).or_insert_with(|| Value::Object(Map::new()));
            node = entry.as_object_mut().ok_or_else(|| format!("helm value {name:?} is inside a value set too"))?;
        }
        if node.contains_key(*last) {
            return Err(format!("helm value {name:?} is set twice"));
        }
        node.insert((*last).to_owned(), value.clone());
    }
    Ok(Value::Object(root))
}

/// The `REVISION:` helm prints after an install or upgrade.
fn revision_of(stdout: &str) -> Option<String> {
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
    async fn exists(&self, release: &str, namespace: &str) -> Result<bool, HelmError> {
        match self.run(os(["status", release, "--namespace", namespace])).await {
            Ok(_) => Ok(true),
            Err(HelmError::Failed { stderr, .. }) if stderr.contains(RELEASE_NOT_FOUND) => Ok(false),
            Err(error) => Err(error),
        }
    }

    async fn install(&self, release: &str, chart: &Path, namespace: &str, values: &Value) -> Result<String, HelmError> {
        let file = self.values_file(values)?;
        let mut args = os(["install", release]);
        args.push(chart.into());
        args.extend(os(["--namespace", namespace, "--create-namespace", "--timeout", &self.timeout_arg()]));
        args.extend([OsString::from("--values"), file.into()]);
        self.run(args).await
    }

    async fn upgrade(&self, release: &str, chart: &Path, namespace: &str, values: &Value) -> Result<String, HelmError> {
        let file = self.values_file(values)?;
        let mut args = os(["upgrade", release]);
        args.push(chart.into());
        args.extend(os(["--namespace", namespace, "--reuse-values", "--timeout", &self.timeout_arg()]));
        args.extend([OsString::from("--values"), file.into()]);
        self.run(args).await
    }

    async fn rollback(&self, release: &str, revision: &str, namespace: &str) -> Result<String, HelmError> {
        self.run(os(["rollback", release, revision, "--namespace", namespace, "--timeout", &self.timeout_arg()])).await
    }

    async fn uninstall(&self, release: &str, namespace: &str) -> Result<String, HelmError> {
        self.run(os(["uninstall", release, "--namespace", namespace, "--timeout", &self.timeout_arg()])).await
    }

    async fn manifest(&self, release: &str, namespace: &str) -> Result<String, HelmError> {
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

impl KubernetesRun<'_, '_> {
    /// The release as recorded, or as the request's `additionalParams` make it.
    fn release(&self) -> Result<HelmRelease, Halt> {
        if let Some(release) = &self.state.helm {
            return Ok(release.clone());
        }
        let params = self.ctx.additional_params;
        let chart =
            params.get(CHART_PATH_PARAM).and_then(Value::as_str).filter(|path| !path.is_empty()).ok_or_else(|| {
                failed(format!("additionalParams.{CHART_PATH_PARAM} must name the Helm chart of the VNF"))
            })?;
        let value_names = match params.get(VALUE_NAMES_PARAM) {
            None => Map::new(),
            Some(Value::Object(names)) => names.clone(),
            Some(_) => return Err(failed(format!("additionalParams.{VALUE_NAMES_PARAM} must be an object"))),
        };
        Ok(HelmRelease {
            name: release_name(self.ctx.instance_id),
            chart: chart.to_owned(),
            value_names,
            revision: None,
        })
    }

    /// The value that sets a VDU's replicas, if the instantiation named one.
    fn replica_value<'r>(release: &'r HelmRelease, vdu_id: &str) -> Option<&'r str> {
        release.value_names.get(vdu_id)?.get("replica")?.as_str().filter(|name| !name.is_empty())
    }

    /// The values of one install or upgrade: `helm_parameters` of the request, then the
    /// replicas of the plan. A VDU whose count changes must have a replica value.
    fn values(&self, release: &HelmRelease, plan: &DeploymentPlan, first: bool) -> Result<Value, Halt> {
        let mut flat = match self.ctx.additional_params.get(PARAMETERS_PARAM) {
            None => Map::new(),
            Some(Value::Object(parameters)) => parameters.clone(),
            Some(_) => return Err(failed(format!("additionalParams.{PARAMETERS_PARAM} must be an object"))),
        };
        for target in &plan.vdus {
            match Self::replica_value(release, &target.vdu_id) {
                Some(name) => {
                    flat.insert(name.to_owned(), json!(target.count));
                }
                None => {
                    let held = self.inventory.vnfc_resources.iter().filter(|v| v.vdu_id == target.vdu_id).count();
                    if !first && held != target.count as usize {
                        return Err(failed(format!(
                            "VDU {} has no replica value in additionalParams.{VALUE_NAMES_PARAM}, so it cannot be scaled",
                            target.vdu_id
                        )));
                    }
                }
            }
        }
        nested_values(&flat).map_err(failed)
    }

    /// Installs, upgrades or rolls back the release to match `plan`, then waits for the
    /// VDUs' pods.
    pub(super) async fn realize_release(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        let mut release = self.release()?;
        let first = self.state.helm.is_none();
        if first {
            let namespace =
                self.ctx.additional_params.get("namespace").and_then(Value::as_str).filter(|ns| !ns.is_empty());
            self.state.namespace = namespace.unwrap_or_else(|| self.client.namespace()).to_owned();
        }
        let namespace = self.state.namespace.clone();
        if let Some(chart) = self.ctx.additional_params.get(CHART_PATH_PARAM).and_then(Value::as_str) {
            // change_vnfpkg names the new package's chart.
            if !first && !self.ctx.rolling_back && !chart.is_empty() {
                release.chart = chart.to_owned();
            }
        }
        // Recorded before helm runs: a retry, rollback or terminate finds the release.
        let mut pending = release.clone();
        if let Some(done) = &self.state.helm {
            pending.revision.clone_from(&done.revision);
        }
        self.state.helm = Some(pending);
        self.sync_vim_state();

        let Some(helm) = self.helm.as_ref() else { return Err(failed("no helm command for this run")) };
        let name = release.name.clone();
        let output = match (&release.revision, self.ctx.rolling_back) {
            (Some(revision), true) => {
                let what = format!("rolling Helm release {name} back to revision {revision}");
                self.cancel.guard(&what, helm.rollback(&name, revision, &namespace)).await?;
                None
            }
            _ => {
                let chart = package_file(self.ctx.package_dir, &release.chart)?;
                let values = self.values(&release, plan, first)?;
                let what = format!("looking Helm release {name} up");
                let exists = self.cancel.guard(&what, helm.exists(&name, &namespace)).await?;
                Some(if exists {
                    let what = format!("upgrading Helm release {name}");
                    self.cancel.guard(&what, helm.upgrade(&name, &chart, &namespace, &values)).await?
                } else {
                    let what = format!("installing Helm release {name}");
                    self.cancel.guard(&what, helm.install(&name, &chart, &namespace, &values)).await?
                })
            }
        };
        self.read_release_objects(&release, plan).await?;
        let counts = plan.vdus.iter().map(|t| (t.vdu_id.clone(), t.count)).collect();
        let pods = self.wait_vdus(&counts).await?;
        self.map_pods(&pods);
        self.read_cism_info().await?;
        release.revision = match output.as_deref().and_then(revision_of) {
            Some(revision) => Some(revision),
            None => release.revision,
        };
        self.state.helm = Some(release);
        self.sync_vim_state();
        Ok(())
    }

    /// The release's objects (`helm get manifest`) and each VDU's workload among them.
    async fn read_release_objects(&mut self, release: &HelmRelease, plan: &DeploymentPlan) -> Result<(), Halt> {
        let namespace = self.state.namespace.clone();
        let what = format!("reading the manifest of Helm release {}", release.name);
        let Some(helm) = self.helm.as_ref() else { return Err(failed("no helm command for this run")) };
        let text = self.cancel.guard(&what, helm.manifest(&release.name, &namespace)).await?;
        let objects = parse_manifests(&text, &namespace)
            .map_err(|error| failed(format!("the manifest of Helm release {}: {error}", release.name)))?;
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        let mut refs = Vec::new();
        let mut vdus: BTreeMap<String, Workload> = BTreeMap::new();
        for object in &objects {
            let target = ResourceRef::from_object(object).map_err(|error| failed(error.to_string()))?;
            refs.push(ObjectRef::from_resource(&target));
            if !["Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Pod"].contains(&target.kind.as_str()) {
                continue;
            }
            let Some((stem, _)) = target.name.rsplit_once('-') else { continue };
            let Some(vdu_id) = vdu_for_name(flavour, stem) else { continue };
            let selector = selector_of(object)
                .ok_or_else(|| failed(format!("{target} of VDU {vdu_id} has no label selector for its pods")))?;
            let pod_prefix = (target.kind != "Pod").then(|| format!("{}-", target.name));
            let workload = Workload { object: ObjectRef::from_resource(&target), selector, pod_prefix };
            if let Some(other) = vdus.insert(vdu_id.to_owned(), workload) {
                return Err(failed(format!(
                    "VDU {vdu_id} matches two workloads of the chart: {} and {}",
                    other.object.name, target.name
                )));
            }
        }
        for target in plan.vdus.iter().filter(|t| t.count > 0) {
            if !vdus.contains_key(&target.vdu_id) {
                let name = flavour.vdu(&target.vdu_id).map_or(target.vdu_id.as_str(), |v| v.name.as_str());
                return Err(failed(format!(
                    "no workload of Helm release {} is named {name}-<suffix> for VDU {}",
                    release.name, target.vdu_id
                )));
            }
        }
        self.state.objects = refs;
        self.state.vdus = vdus;
        self.sync_vim_state();
        Ok(())
    }

    /// Uninstalls the release when it exists; its objects, read first, are then waited
    /// for by the Kubernetes teardown.
    pub(super) async fn uninstall_release(&mut self) -> Result<(), Halt> {
        // Not recorded (an instantiate that stopped early): the name is the instance's anyway.
        let name = self.state.helm.as_ref().map_or_else(|| release_name(self.ctx.instance_id), |r| r.name.clone());
        if self.state.namespace.is_empty() {
            let namespace =
                self.ctx.additional_params.get("namespace").and_then(Value::as_str).filter(|ns| !ns.is_empty());
            self.state.namespace = namespace.unwrap_or_else(|| self.client.namespace()).to_owned();
        }
        let namespace = self.state.namespace.clone();
        let Some(helm) = self.helm.as_ref() else { return Err(failed("no helm command for this run")) };
        let what = format!("looking Helm release {name} up");
        if !self.cancel.guard(&what, helm.exists(&name, &namespace)).await? {
            tracing::info!(release = %name, "Helm release does not exist; nothing to uninstall");
            return Ok(());
        }
        if self.state.objects.is_empty() {
            let what = format!("reading the manifest of Helm release {name}");
            let text = self.cancel.guard(&what, helm.manifest(&name, &namespace)).await?;
            let objects = parse_manifests(&text, &namespace).map_err(|error| failed(error.to_string()))?;
            for object in &objects {
                let target = ResourceRef::from_object(object).map_err(|error| failed(error.to_string()))?;
                self.state.objects.push(ObjectRef::from_resource(&target));
            }
        }
        let what = format!("uninstalling Helm release {name}");
        self.cancel.guard(&what, helm.uninstall(&name, &namespace)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names_are_tackers() {
        assert_eq!(release_name("2c5e8a1f-7b3d-4e6a-9c0f-1d2e3f4a5b6c"), "vnf2c5e8a1f7b3d4e6a9c0f1d2e3f4a5b6c");
        assert!(release_name(&"a".repeat(80)).len() <= 53);
    }

    #[test]
    fn dotted_names_nest_and_odd_ones_are_refused() {
        let flat: Map<String, Value> =
            serde_json::from_value(json!({"service.port": 8081, "service.type": "NodePort", "replicaCountVdu1": 2}))
                .unwrap();
        assert_eq!(
            nested_values(&flat).unwrap(),
            json!({"service": {"port": 8081, "type": "NodePort"}, "replicaCountVdu1": 2})
        );
        // A value with helm's --set separators stays one string value.
        let flat: Map<String, Value> = serde_json::from_value(json!({"image.tag": "1.0,replicaCount=9"})).unwrap();
        assert_eq!(nested_values(&flat).unwrap(), json!({"image": {"tag": "1.0,replicaCount=9"}}));
        for bad in [json!({"a[0]": 1}), json!({"a..b": 1}), json!({"a=b": 1}), json!({"a": 1, "a.b": 2})] {
            let flat: Map<String, Value> = serde_json::from_value(bad.clone()).unwrap();
            assert!(nested_values(&flat).is_err(), "{bad}");
        }
    }

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
