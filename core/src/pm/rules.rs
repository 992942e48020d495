//! The Prometheus side of PM jobs and thresholds: the alerting rules that measure what a job
//! or threshold asks for, written as one rule file per job or threshold into the directory
//! Prometheus reads rule files from (`[vnfpm] rule_dir`), followed by a `POST` to Prometheus'
//! reload endpoint (`[vnfpm] reload_url`). Tacker's plugin uploads the same files over SSH
//! and reloads with a `PUT`; a local directory (shared with Prometheus, or a volume both
//! mount) and an HTTP reload do the same without SSH credentials in every PM job.
//!
//! A rule measures one metric of one object instance (and sub-object): its expression is the
//! PromQL template of the metric's measurement (`[vnfpm.promql]`) with the instance's pods,
//! namespace, sub-object and periods filled in, and its labels are those Tacker's plugin reads
//! back from Alertmanager's webhook (`receiver_type`, `function_type`, `job_id` or
//! `threshold_id`, `object_instance_id`, `sub_object_instance_id`, `metric`), with the value
//! as the `value` annotation.
//!
//! A job's rules fire while the metric has a value, `for` its collection period; Alertmanager
//! repeats them to `/pm_event` (its `repeat_interval`), and each report takes what arrives
//! once a reporting period has passed. A threshold gets two rules, one firing while the value
//! is at or above `thresholdValue + hysteresis`, one while it is at or below
//! `thresholdValue - hysteresis` (below `thresholdValue` without hysteresis), so a crossing is
//! a new alert that Alertmanager sends at once; Tacker's single always-firing rule depends on
//! the repeat interval for every crossing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::criteria::{Metric, ObjectType};
use super::records::{PmJob, SimpleThresholdDetails, Threshold};
use crate::CoreError;
use crate::egress::Outbound;

/// The `[vnfpm]` table: the Prometheus PM jobs and thresholds are measured by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VnfpmSettings {
    /// The directory Prometheus reads rule files from (its configuration names
    /// `<rule_dir>/*.json` in `rule_files`); solgate writes `solgate-<id>.json` there for each
    /// PM job and threshold. Empty: no rules are written (the operator provides them, with
    /// the labels of docs/performance-management.md).
    pub rule_dir: PathBuf,
    /// Prometheus' reload endpoint, POSTed after a rule file is written or removed
    /// (Prometheus started with `--web.enable-lifecycle`), e.g.
    /// `http://127.0.0.1:9090/-/reload`. Empty: no reload (Prometheus then needs a SIGHUP).
    pub reload_url: String,
    /// Seconds the reload may take.
    pub reload_timeout_secs: u64,
    /// `for` of threshold rules, in seconds (Tacker's `collection_period_threshold`).
    pub threshold_collection_period_secs: u64,
    /// `{reporting_period}` of threshold rules, in seconds (Tacker's
    /// `reporting_period_threshold`).
    pub threshold_reporting_period_secs: u64,
    /// An alert arriving this many seconds before a reporting period has passed still makes a
    /// report (Prometheus' and Alertmanager's timing is not solgate's; Tacker's
    /// `reporting_period_margin`).
    pub reporting_period_margin_secs: u64,
    /// Reports kept per PM job; a new one removes the oldest beyond this.
    pub max_reports_per_job: usize,
    /// The PromQL expression of each measurement (`VCpuUsageMeanVnf`, ...). Placeholders:
    /// `{pod}` (a regular expression of the measured VNFCs' compute resources: pod names),
    /// `{namespace}`, `{sub_object_instance_id}` (a regular expression: the sub-object, or
    /// `.+` for all), `{object_instance_id}`, `{collection_period}`, `{reporting_period}`
    /// (seconds); `{{` and `}}` stand for braces. Values are escaped for PromQL string
    /// literals. The defaults read cAdvisor's container metrics of Kubernetes pods.
    pub promql: BTreeMap<String, String>,
}

impl Default for VnfpmSettings {
    fn default() -> Self {
        Self {
            rule_dir: PathBuf::new(),
            reload_url: String::new(),
            reload_timeout_secs: 10,
            threshold_collection_period_secs: 30,
            threshold_reporting_period_secs: 90,
            reporting_period_margin_secs: 1,
            max_reports_per_job: 100,
            promql: default_promql(),
        }
    }
}

const POD: &str = r#"namespace="{namespace}",pod=~"{pod}""#;

fn default_promql() -> BTreeMap<String, String> {
    let cpu = format!("sum by (pod) (rate(container_cpu_usage_seconds_total{{{{{POD}}}}}[{{reporting_period}}s]))");
    let memory = format!(
        "sum by (pod) (container_memory_working_set_bytes{{{{{POD}}}}}) / sum by (pod) \
         (container_spec_memory_limit_bytes{{{{{POD}}}}} > 0)"
    );
    let disk = format!(
        "sum by (pod) (container_fs_usage_bytes{{{{{POD}}}}}) / sum by (pod) (container_fs_limit_bytes{{{{{POD}}}}} > 0)"
    );
    let network = |counter: &str| {
        format!("sum(container_network_{counter}_total{{{{{POD},interface=~\"{{sub_object_instance_id}}\"}}}})")
    };
    let mut promql = BTreeMap::new();
    for (name, expression) in [
        ("VCpuUsageMeanVnf", format!("avg({cpu})")),
        ("VCpuUsagePeakVnf", format!("max({cpu})")),
        ("VMemoryUsageMeanVnf", format!("avg({memory})")),
        ("VMemoryUsagePeakVnf", format!("max({memory})")),
        ("VDiskUsageMeanVnf", format!("avg({disk})")),
        ("VDiskUsagePeakVnf", format!("max({disk})")),
    ] {
        promql.insert(name.to_owned(), expression);
    }
    for cp in ["VnfIntCp", "VnfExtCp"] {
        for (measurement, counter) in [
            ("ByteIncoming", "receive_bytes"),
            ("ByteOutgoing", "transmit_bytes"),
            ("PacketIncoming", "receive_packets"),
            ("PacketOutgoing", "transmit_packets"),
        ] {
            promql.insert(format!("{measurement}{cp}"), network(counter));
        }
    }
    promql
}

const PLACEHOLDERS: &[&str] =
    &["pod", "namespace", "sub_object_instance_id", "object_instance_id", "collection_period", "reporting_period"];

/// Fills a template: `{name}` from `values` (names not given are refused), `{{`/`}}` braces.
fn expand(template: &str, values: &BTreeMap<&str, String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return Err("a lone `}` (write `}}` for a brace)".into());
        }
        let Some(end) = tail.find('}') else { return Err("an unclosed `{`".into()) };
        let name = &tail[1..end];
        match values.get(name) {
            Some(value) => out.push_str(value),
            None if PLACEHOLDERS.contains(&name) => return Err(format!("`{{{name}}}` has no value here")),
            None => return Err(format!("unknown placeholder `{{{name}}}`")),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `text` inside a PromQL double-quoted string literal.
fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str(r"\n"),
            '\r' => out.push_str(r"\r"),
            '\t' => out.push_str(r"\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// A regular expression (RE2) matching `text` exactly, before string-literal escaping.
fn regex_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Checks every template of the settings (`check-config` and start-up).
pub fn check_settings(settings: &VnfpmSettings) -> Result<(), String> {
    let probe: BTreeMap<&str, String> = PLACEHOLDERS.iter().map(|name| (*name, "x".to_owned())).collect();
    for (name, template) in &settings.promql {
        if !ObjectType::ALL.iter().any(|kind| kind.measurements().contains(&name.as_str())) {
            return Err(format!("vnfpm.promql.{name}: not a measurement solgate supports"));
        }
        expand(template, &probe).map_err(|error| format!("vnfpm.promql.{name}: {error}"))?;
    }
    if !settings.reload_url.is_empty() {
        url::Url::parse(&settings.reload_url).map_err(|error| format!("vnfpm.reload_url: {error}"))?;
    }
    if settings.threshold_collection_period_secs == 0 || settings.max_reports_per_job == 0 {
        return Err("vnfpm.threshold_collection_period_secs and max_reports_per_job must be positive".into());
    }
    Ok(())
}

/// What rules read of a VnfInstance (SOL003 clause 5.5.2.2): its VNFCs' compute resources.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InstanceView {
    instantiated_vnf_info: Option<InstantiatedView>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct InstantiatedView {
    vnfc_resource_info: Vec<VnfcResource>,
    vnfc_info: Vec<VnfcInfoView>,
    metadata: Option<NamespaceView>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct VnfcResource {
    id: Option<String>,
    compute_resource: Option<ComputeResource>,
    metadata: Option<NamespaceView>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ComputeResource {
    resource_id: Option<String>,
    vim_level_resource_type: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct VnfcInfoView {
    id: Option<String>,
    vnfc_resource_info_id: Option<String>,
}

/// The `namespace` of a `metadata` (Kubernetes resources carry it there).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NamespaceView {
    namespace: Option<String>,
}

/// What a rule needs of a measured VNF instance: its VNFCs' compute resources and namespace.
#[derive(Debug, Clone, Default)]
pub struct MeasuredInstance {
    /// Per VNFC: the ids that name it (its vnfcResourceInfo id, and the vnfcInfo id that
    /// refers to it, which Tacker's sub-objects use) and its compute resource pattern.
    vnfcs: Vec<(Vec<String>, String)>,
    namespace: String,
}

impl MeasuredInstance {
    /// From a VnfInstance document. A Kubernetes Deployment's pods are matched by the
    /// Deployment's name and the pod suffix (a pod replaced by a heal or a rollout is still
    /// measured), any other compute resource by its id (Tacker's rule for Deployments).
    pub fn of(instance: &Value) -> Self {
        let info = InstanceView::deserialize(instance).unwrap_or_default().instantiated_vnf_info.unwrap_or_default();
        let pattern = |resource: &VnfcResource| -> Option<String> {
            let compute = resource.compute_resource.as_ref()?;
            let id = compute.resource_id.as_deref().filter(|id| !id.is_empty())?;
            if compute.vim_level_resource_type.as_deref() == Some("Deployment") {
                let base = strip_pod_suffix(id);
                return Some(format!("{}-[0-9a-f]{{1,10}}-[0-9a-z]{{5}}", regex_escaped(base)));
            }
            Some(regex_escaped(id))
        };
        let mut vnfcs = Vec::new();
        for resource in &info.vnfc_resource_info {
            let (Some(id), Some(pattern)) = (resource.id.as_deref(), pattern(resource)) else { continue };
            let mut ids = vec![id.to_owned()];
            ids.extend(
                info.vnfc_info
                    .iter()
                    .filter(|vnfc| vnfc.vnfc_resource_info_id.as_deref() == Some(id))
                    .filter_map(|vnfc| vnfc.id.clone()),
            );
            vnfcs.push((ids, pattern));
        }
        let namespace = info
            .vnfc_resource_info
            .iter()
            .find_map(|resource| resource.metadata.as_ref()?.namespace.as_deref())
            .or_else(|| info.metadata.as_ref()?.namespace.as_deref())
            .unwrap_or("default")
            .to_owned();
        MeasuredInstance { vnfcs, namespace }
    }

    fn pods(&self, vnfc: Option<&str>) -> Option<String> {
        let mut patterns: Vec<&str> = self
            .vnfcs
            .iter()
            .filter(|(ids, _)| vnfc.is_none_or(|wanted| ids.iter().any(|id| id == wanted)))
            .map(|(_, pattern)| pattern.as_str())
            .collect();
        patterns.sort_unstable();
        patterns.dedup();
        match patterns.as_slice() {
            [] => None,
            [one] => Some((*one).to_owned()),
            many => Some(format!("({})", many.join("|"))),
        }
    }

    /// Whether `vnfc` names a VNFC of the instance (its vnfcResourceInfo or vnfcInfo id).
    pub fn has_vnfc(&self, vnfc: &str) -> bool {
        self.vnfcs.iter().any(|(ids, _)| ids.iter().any(|id| id == vnfc))
    }
}

/// `test-test1-756757f8f-xcwmt` -> `test-test1`: a Deployment's pod name without the
/// ReplicaSet hash and the pod suffix.
fn strip_pod_suffix(pod: &str) -> &str {
    let mut parts = pod.rsplitn(3, '-');
    let (Some(suffix), Some(hash), Some(base)) = (parts.next(), parts.next(), parts.next()) else { return pod };
    let suffix_ok = suffix.len() == 5 && suffix.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let hash_ok =
        (1..=10).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    if suffix_ok && hash_ok { base } else { pod }
}

/// Why rules could not be made or installed.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// Nothing the job or threshold names can be measured (a client-visible 422).
    #[error("{0}")]
    NothingToMeasure(String),
    /// Writing the rule file or reloading Prometheus failed (503, as Tacker's
    /// "Setting PM job on External Monitoring Tool failed.").
    #[error("{0}")]
    Prometheus(String),
}

impl From<RuleError> for CoreError {
    fn from(error: RuleError) -> Self {
        match error {
            RuleError::NothingToMeasure(detail) => CoreError::Unprocessable(detail),
            RuleError::Prometheus(detail) => CoreError::Setup(detail),
        }
    }
}

/// Which resource a rule is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner<'a> {
    Job(&'a str),
    Threshold(&'a str),
}

impl Owner<'_> {
    fn id(&self) -> &str {
        match self {
            Owner::Job(id) | Owner::Threshold(id) => id,
        }
    }
}

/// Makes and installs the rules of PM jobs and thresholds.
pub struct RuleWriter {
    settings: VnfpmSettings,
    http: reqwest::Client,
}

impl std::fmt::Debug for RuleWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleWriter").field("rule_dir", &self.settings.rule_dir).finish_non_exhaustive()
    }
}

/// One rule before it is written: expression, labels.
struct Rule {
    expr: String,
    labels: Map<String, Value>,
    for_secs: u64,
}

impl RuleWriter {
    pub fn new(settings: VnfpmSettings, outbound: &Outbound) -> Result<Self, CoreError> {
        check_settings(&settings).map_err(CoreError::Setup)?;
        let timeout = Duration::from_secs(settings.reload_timeout_secs.max(1));
        let http = outbound
            .client_builder(false)?
            .timeout(timeout)
            .build()
            .map_err(|error| CoreError::Setup(format!("cannot build the Prometheus HTTP client: {error}")))?;
        Ok(Self { settings, http })
    }

    pub fn settings(&self) -> &VnfpmSettings {
        &self.settings
    }

    /// Whether solgate writes rules at all.
    pub fn enabled(&self) -> bool {
        !self.settings.rule_dir.as_os_str().is_empty()
    }

    fn file(&self, id: &str) -> PathBuf {
        self.settings.rule_dir.join(format!("solgate-{id}.json"))
    }

    fn expression(&self, metric: &Metric, values: &BTreeMap<&str, String>) -> Result<Option<String>, RuleError> {
        let Some(template) = self.settings.promql.get(metric.measurement) else {
            return Err(RuleError::NothingToMeasure(format!(
                "No PromQL is configured for {} (vnfpm.promql).",
                metric.measurement
            )));
        };
        // A template on pods measures nothing of an instance without them.
        if template.contains("{pod}") && !values.contains_key("pod") {
            return Ok(None);
        }
        expand(template, values).map(Some).map_err(|error| RuleError::Prometheus(format!("vnfpm.promql: {error}")))
    }

    fn values<'v>(
        instance_id: &str,
        instance: &MeasuredInstance,
        pods: Option<String>,
        sub_object: Option<&str>,
        collection: u64,
        reporting: u64,
    ) -> BTreeMap<&'v str, String> {
        let mut values = BTreeMap::new();
        if let Some(pods) = pods {
            values.insert("pod", string_literal(&pods));
        }
        values.insert("namespace", string_literal(&instance.namespace));
        values.insert(
            "sub_object_instance_id",
            sub_object.map(|id| string_literal(&regex_escaped(id))).unwrap_or_else(|| ".+".to_owned()),
        );
        values.insert("object_instance_id", string_literal(instance_id));
        values.insert("collection_period", collection.to_string());
        // Tacker never looks back less than 30 s (a rate needs samples).
        values.insert("reporting_period", reporting.max(30).to_string());
        values
    }

    /// The rules of a PM job over the instances it measures (by id). Errors when no rule
    /// can be made (no metric has a template that the instances can fill).
    pub fn job_rules(
        &self,
        job: &Value,
        kind: ObjectType,
        metrics: &[Metric],
        instances: &BTreeMap<String, MeasuredInstance>,
    ) -> Result<Value, RuleError> {
        let job = PmJob::read(job).map_err(|error| RuleError::NothingToMeasure(error.to_string()))?;
        let id = job.id.as_str();
        let collection = job.criteria.collection_period.unwrap_or(1);
        let reporting = job.criteria.reporting_period.unwrap_or(collection);
        let sub_objects: Vec<&str> = job.sub_object_instance_ids.iter().map(String::as_str).collect();
        let objects: Vec<&str> = job.object_instance_ids.iter().map(String::as_str).collect();
        let mut rules = Vec::new();
        for metric in metrics {
            let measured: Vec<&str> = match &metric.instance {
                Some(instance) => vec![instance.as_str()],
                None => objects.clone(),
            };
            for object in measured {
                let Some(instance) = instances.get(object) else { continue };
                let subs: Vec<Option<&str>> =
                    if sub_objects.is_empty() { vec![None] } else { sub_objects.iter().copied().map(Some).collect() };
                for sub in subs {
                    // A compute metric's sub-object is a VNFC: its pods only.
                    let vnfc = if matches!(kind, ObjectType::Vnf | ObjectType::Vnfc) { sub } else { None };
                    let values = Self::values(object, instance, instance.pods(vnfc), sub, collection, reporting);
                    let Some(expr) = self.expression(metric, &values)? else { continue };
                    rules.push(Rule {
                        expr,
                        labels: labels(Owner::Job(id), object, sub, &metric.name),
                        for_secs: collection,
                    });
                }
            }
        }
        if rules.is_empty() {
            return Err(RuleError::NothingToMeasure(
                "None of the PM job's metrics can be measured: its VNF instances have no VNFC compute resources the \
                 configured PromQL can select."
                    .into(),
            ));
        }
        Ok(group(Owner::Job(id), rules))
    }

    /// The two rules of a threshold (see the module documentation).
    pub fn threshold_rules(
        &self,
        threshold: &Value,
        kind: ObjectType,
        metric: &Metric,
        instance: &MeasuredInstance,
    ) -> Result<Value, RuleError> {
        let threshold = Threshold::read(threshold).map_err(|error| RuleError::NothingToMeasure(error.to_string()))?;
        let id = threshold.id.as_str();
        let object = threshold.object_instance_id.as_deref().unwrap_or_default();
        let SimpleThresholdDetails { threshold_value: value, hysteresis } = threshold.limits();
        let (collection, reporting) =
            (self.settings.threshold_collection_period_secs, self.settings.threshold_reporting_period_secs);
        let sub_objects: Vec<&str> = threshold.sub_object_instance_ids.iter().map(String::as_str).collect();
        let subs: Vec<Option<&str>> =
            if sub_objects.is_empty() { vec![None] } else { sub_objects.iter().copied().map(Some).collect() };
        let (up, down) = crossing_bounds(value, hysteresis);
        let mut rules = Vec::new();
        for sub in subs {
            let vnfc = if matches!(kind, ObjectType::Vnf | ObjectType::Vnfc) { sub } else { None };
            let values = Self::values(object, instance, instance.pods(vnfc), sub, collection, reporting);
            let Some(expr) = self.expression(metric, &values)? else { continue };
            let labels = labels(Owner::Threshold(id), object, sub, &metric.name);
            rules.push(Rule { expr: format!("({expr}) >= {up}"), labels: labels.clone(), for_secs: collection });
            let below = if hysteresis > 0.0 { "<=" } else { "<" };
            rules.push(Rule { expr: format!("({expr}) {below} {down}"), labels, for_secs: collection });
        }
        if rules.is_empty() {
            return Err(RuleError::NothingToMeasure(
                "The threshold's metric cannot be measured: its VNF instance has no VNFC compute resources the \
                 configured PromQL can select."
                    .into(),
            ));
        }
        Ok(group(Owner::Threshold(id), rules))
    }

    /// Writes the rule file of `owner` and reloads Prometheus. If the reload fails the file
    /// is removed again, so Prometheus never keeps rules of a job that was refused.
    pub async fn install(&self, owner: Owner<'_>, group: &Value) -> Result<(), RuleError> {
        if !self.enabled() {
            return Ok(());
        }
        let path = self.file(owner.id());
        let temporary = self.settings.rule_dir.join(format!(".solgate-{}.json.tmp", owner.id()));
        let written = async {
            tokio::fs::write(&temporary, format!("{group:#}\n")).await?;
            tokio::fs::rename(&temporary, &path).await
        }
        .await;
        if let Err(error) = written {
            let _ = tokio::fs::remove_file(&temporary).await;
            tracing::error!(%error, path = %path.display(), "cannot write a Prometheus rule file");
            return Err(RuleError::Prometheus(format!("Cannot write the rule file in vnfpm.rule_dir: {error}.")));
        }
        if let Err(error) = self.reload().await {
            let _ = tokio::fs::remove_file(&path).await;
            return Err(error);
        }
        Ok(())
    }

    /// Removes the rule file of `owner` (if any) and reloads Prometheus; failures are logged,
    /// not returned: the job or threshold is gone either way, and alerts of a rule left
    /// behind name nothing and are ignored.
    pub async fn remove(&self, owner: Owner<'_>) {
        if !self.enabled() {
            return;
        }
        let path = self.file(owner.id());
        match tokio::fs::remove_file(&path).await {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return,
            Err(error) => {
                tracing::warn!(%error, path = %path.display(), "cannot remove a Prometheus rule file");
                return;
            }
        }
        if let Err(error) = self.reload().await {
            tracing::warn!(%error, "Prometheus did not reload after a rule file was removed");
        }
    }

    async fn reload(&self) -> Result<(), RuleError> {
        if self.settings.reload_url.is_empty() {
            return Ok(());
        }
        let failed = |cause: String| {
            tracing::error!(%cause, url = %self.settings.reload_url, "Prometheus reload failed");
            RuleError::Prometheus("Setting PM job on External Monitoring Tool failed.".into())
        };
        let response = self
            .http
            .post(&self.settings.reload_url)
            .send()
            .await
            .map_err(|error| failed(crate::callbacks::cause_of(&error)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let text = response.text().await.unwrap_or_default();
        Err(failed(format!("HTTP {}: {}", status.as_u16(), text.chars().take(500).collect::<String>())))
    }

    pub fn rule_dir(&self) -> &Path {
        &self.settings.rule_dir
    }
}

/// The values at which a threshold is crossed upwards (reached or exceeded) and downwards
/// (reached or undercut; without hysteresis strictly below, so one value is never both).
pub fn crossing_bounds(value: f64, hysteresis: f64) -> (f64, f64) {
    (value + hysteresis, value - hysteresis)
}

fn labels(owner: Owner<'_>, object: &str, sub: Option<&str>, metric: &str) -> Map<String, Value> {
    let mut labels = Map::new();
    labels.insert("receiver_type".into(), json!("tacker"));
    match owner {
        Owner::Job(id) => {
            labels.insert("function_type".into(), json!("vnfpm"));
            labels.insert("job_id".into(), json!(id));
        }
        Owner::Threshold(id) => {
            labels.insert("function_type".into(), json!("vnfpm_threshold"));
            labels.insert("threshold_id".into(), json!(id));
        }
    }
    labels.insert("object_instance_id".into(), json!(object));
    if let Some(sub) = sub {
        labels.insert("sub_object_instance_id".into(), json!(sub));
    }
    labels.insert("metric".into(), json!(metric));
    labels
}

fn group(owner: Owner<'_>, rules: Vec<Rule>) -> Value {
    let (kind, id) = match owner {
        Owner::Job(id) => ("PmJob", id),
        Owner::Threshold(id) => ("Threshold", id),
    };
    let rules: Vec<Value> = rules
        .into_iter()
        .enumerate()
        .map(|(index, rule)| {
            json!({
                "alert": format!("{kind}-{id}-{index}"),
                "expr": rule.expr,
                "for": format!("{}s", rule.for_secs),
                "labels": rule.labels,
                "annotations": {"value": "{{ $value }}"},
            })
        })
        .collect();
    json!({"groups": [{"name": format!("solgate-{id}"), "rules": rules}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&'static str, &str)]) -> BTreeMap<&'static str, String> {
        pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
    }

    #[test]
    fn templates_expand_placeholders_and_braces() {
        let given = values(&[("pod", "p.*"), ("namespace", "ns")]);
        assert_eq!(
            expand("sum(x{{pod=~\"{pod}\",ns=\"{namespace}\"}})", &given).unwrap(),
            "sum(x{pod=~\"p.*\",ns=\"ns\"})"
        );
        assert!(expand("{nope}", &given).unwrap_err().contains("unknown placeholder"));
        assert!(expand("{reporting_period}", &given).unwrap_err().contains("no value"));
        assert!(expand("x{", &given).is_err());
        assert!(expand("x}", &given).is_err());
        check_settings(&VnfpmSettings::default()).unwrap();
        let mut bad = VnfpmSettings::default();
        bad.promql.insert("VNetworkUsage".into(), "up".into());
        assert!(check_settings(&bad).unwrap_err().contains("VNetworkUsage"));
    }

    #[test]
    fn client_strings_cannot_escape_their_string_literal() {
        let hostile = "eth0\"} or vector(1) # \\ ( \n";
        let escaped = string_literal(&regex_escaped(hostile));
        assert!(!escaped.contains('\n'));
        // Every quote in the output is escaped.
        let bytes = escaped.as_bytes();
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'"' {
                let backslashes = bytes[..i].iter().rev().take_while(|c| **c == b'\\').count();
                assert_eq!(backslashes % 2, 1, "unescaped quote in {escaped}");
            }
        }
        assert_eq!(regex_escaped("a.b"), r"a\.b");
        assert_eq!(string_literal(r"a\.b"), r"a\\.b");
    }

    #[test]
    fn deployment_pods_match_by_name_other_resources_by_id() {
        assert_eq!(strip_pod_suffix("test-test1-756757f8f-xcwmt"), "test-test1");
        assert_eq!(strip_pod_suffix("vdu1-5b8f9c7d6f-abcde"), "vdu1");
        assert_eq!(strip_pod_suffix("standalone"), "standalone");
        assert_eq!(strip_pod_suffix("a-b-c"), "a-b-c");
        let instance = json!({"instantiatedVnfInfo": {
            "vnfcResourceInfo": [
                {"id": "r1", "computeResource": {"resourceId": "vdu1-5b8f9c7d6f-abcde", "vimLevelResourceType": "Deployment"}, "metadata": {"namespace": "curry"}},
                {"id": "r2", "computeResource": {"resourceId": "local-vnfc-1", "vimLevelResourceType": "solgate.local.vnfc"}}
            ],
            "vnfcInfo": [{"id": "VNFC-r1", "vnfcResourceInfoId": "r1"}, {"id": "VNFC-r2", "vnfcResourceInfoId": "r2"}]
        }});
        let measured = MeasuredInstance::of(&instance);
        assert_eq!(measured.namespace, "curry");
        assert_eq!(measured.pods(Some("VNFC-r2")).unwrap(), r"local-vnfc-1");
        assert_eq!(measured.pods(None).unwrap(), r"(local-vnfc-1|vdu1-[0-9a-f]{1,10}-[0-9a-z]{5})");
        assert!(measured.has_vnfc("VNFC-r1") && measured.has_vnfc("r1") && !measured.has_vnfc("r3"));
        assert!(MeasuredInstance::of(&json!({})).pods(None).is_none());
    }

    fn writer(promql: &[(&str, &str)]) -> RuleWriter {
        let outbound = Outbound::new(&Default::default(), &Default::default()).unwrap();
        let mut settings = VnfpmSettings::default();
        for (name, template) in promql {
            settings.promql.insert((*name).to_owned(), (*template).to_owned());
        }
        RuleWriter::new(settings, &outbound).unwrap()
    }

    #[test]
    fn a_job_gets_one_rule_per_metric_object_and_sub_object_with_tackers_labels() {
        let writer = writer(&[("VCpuUsageMeanVnf", "avg(cpu{{pod=~\"{pod}\"}}[{reporting_period}s])")]);
        let instance = json!({"instantiatedVnfInfo": {
            "vnfcResourceInfo": [{"id": "r1", "computeResource": {"resourceId": "vm-1"}}],
            "vnfcInfo": [{"id": "VNFC-r1", "vnfcResourceInfoId": "r1"}]}});
        let instances = BTreeMap::from([("i1".to_owned(), MeasuredInstance::of(&instance))]);
        let job = json!({"id": "j1", "objectType": "Vnf", "objectInstanceIds": ["i1"],
            "criteria": {"performanceMetric": ["VCpuUsageMeanVnf.i1"], "collectionPeriod": 5, "reportingPeriod": 10}});
        let (kind, metrics) = super::super::criteria::check_job(&job).unwrap();
        let group = writer.job_rules(&job, kind, &metrics, &instances).unwrap();
        let rule = &group["groups"][0]["rules"][0];
        assert_eq!(rule["expr"], "avg(cpu{pod=~\"vm-1\"}[30s])", "30 s at least, as Tacker");
        assert_eq!(rule["for"], "5s");
        assert_eq!(
            rule["labels"],
            json!({"receiver_type": "tacker", "function_type": "vnfpm", "job_id": "j1",
            "object_instance_id": "i1", "metric": "VCpuUsageMeanVnf.i1"})
        );
        assert_eq!(rule["annotations"]["value"], "{{ $value }}");
        let no_vnfcs = BTreeMap::from([("i1".to_owned(), MeasuredInstance::default())]);
        assert!(matches!(writer.job_rules(&job, kind, &metrics, &no_vnfcs), Err(RuleError::NothingToMeasure(_))));
    }

    #[test]
    fn a_threshold_gets_a_rule_per_crossing_direction() {
        let writer = writer(&[("ByteIncomingVnfExtCp", "sum(rx{{interface=~\"{sub_object_instance_id}\"}})")]);
        let threshold = json!({"id": "t1", "objectType": "VnfExtCp", "objectInstanceId": "i1", "subObjectInstanceIds": ["eth0"],
            "criteria": {"performanceMetric": "ByteIncomingVnfExtCp", "thresholdType": "SIMPLE",
                "simpleThresholdDetails": {"thresholdValue": 100.0, "hysteresis": 5.0}}});
        let (kind, metric) = super::super::criteria::check_threshold(&threshold).unwrap();
        let group = writer.threshold_rules(&threshold, kind, &metric, &MeasuredInstance::default()).unwrap();
        let rules = group["groups"][0]["rules"].as_array().unwrap();
        assert_eq!(rules[0]["expr"], "(sum(rx{interface=~\"eth0\"})) >= 105");
        assert_eq!(rules[1]["expr"], "(sum(rx{interface=~\"eth0\"})) <= 95");
        assert_eq!(rules[0]["labels"]["threshold_id"], "t1");
        assert_eq!(rules[0]["labels"]["sub_object_instance_id"], "eth0");
        assert_eq!(rules[0]["labels"]["function_type"], "vnfpm_threshold");
    }
}
