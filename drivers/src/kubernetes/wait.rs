//! Waiting for Deployments and Pods: list, then watch from the list's resourceVersion
//! (newline-delimited `{"type","object"}` events), re-listing when the watch ends or the
//! version expired (410), and polling the list instead when the API server refuses watch.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use tokio::time::Instant;

use super::client::KubernetesClient;
use super::http::{api_error, status_object_error};
use super::manifest;
use super::objects::{Object, meta};
use super::{KubernetesError, Result};

/// Limits of a wait.
#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    /// Give up after this long (Tacker: `kubernetes_vim_rsc_wait_timeout`, default 500 s).
    pub timeout: Duration,
    /// Pause between list calls when polling, and before re-watching after an empty watch
    /// (Tacker polls every `CHECK_INTERVAL = 10` s).
    pub poll_interval: Duration,
}

/// What [`KubernetesClient::wait_pods`] waits for among the pods a label selector matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodCondition {
    /// Every matching pod is `Running` and none is terminating; with `count`, exactly that
    /// many (after a scale or heal), else at least one.
    Running { count: Option<usize> },
    /// No pod matches any more (after terminate or scale-in to zero).
    Gone,
}

/// Rollout state of a Deployment object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeploymentState {
    Available,
    Progressing(String),
    Failed(String),
}

/// `kubectl rollout status` rules: the controller has seen the latest spec
/// (`observedGeneration >= generation`), all replicas are updated, no old replica is left
/// and every updated replica is available; a `Progressing` condition with reason
/// `ProgressDeadlineExceeded` is a failure. (Tacker only compares `replicas` with
/// `readyReplicas`, which also counts old pods during a rolling update.)
pub fn deployment_state(deployment: &Value) -> DeploymentState {
    let int = |ptr: &str| deployment.pointer(ptr).and_then(Value::as_i64);
    let generation = int("/metadata/generation").unwrap_or(0);
    let observed = int("/status/observedGeneration").unwrap_or(0);
    if observed < generation {
        return DeploymentState::Progressing("waiting for the deployment spec update to be observed".into());
    }
    let status = Object::of(deployment).status;
    if let Some(failed) = status
        .conditions
        .iter()
        .find(|c| c.r#type.as_deref() == Some("Progressing") && c.reason.as_deref() == Some("ProgressDeadlineExceeded"))
    {
        let message = failed.message.as_deref().unwrap_or("progress deadline exceeded");
        return DeploymentState::Failed(message.to_owned());
    }
    let desired = int("/spec/replicas").unwrap_or(1);
    let updated = int("/status/updatedReplicas").unwrap_or(0);
    let replicas = int("/status/replicas").unwrap_or(0);
    let available = int("/status/availableReplicas").unwrap_or(0);
    if updated < desired {
        return DeploymentState::Progressing(format!("{updated} of {desired} replicas updated"));
    }
    if replicas > updated {
        return DeploymentState::Progressing(format!("{} old replicas pending termination", replicas - updated));
    }
    if available < updated {
        return DeploymentState::Progressing(format!("{available} of {updated} updated replicas available"));
    }
    DeploymentState::Available
}

enum Progress<T> {
    Done(T),
    Waiting(String),
}

#[derive(Deserialize)]
struct WatchEvent {
    #[serde(rename = "type")]
    event_type: String,
    #[serde(default)]
    object: Value,
}

enum Step<T> {
    Continue,
    Done(T),
    /// The resourceVersion expired (410 Gone): list again.
    Relist,
    /// Not a watch stream after all: poll instead.
    Fallback,
}

type Objects = BTreeMap<String, Value>;

impl KubernetesClient {
    /// Waits until the Deployment `name` is available (see [`deployment_state`]) and returns it.
    pub async fn wait_deployment_available(&self, namespace: &str, name: &str, options: &WaitOptions) -> Result<Value> {
        let collection = manifest::collection_segments("apps/v1", "Deployment", Some(namespace))?;
        let field_selector = format!("metadata.name={name}");
        let what = format!("Deployment {namespace}/{name} to become available");
        self.wait_until(what, &collection, None, Some(&field_selector), options, |objects| {
            let Some(deployment) = objects.get(name) else {
                return Ok(Progress::Waiting("deployment not found".into()));
            };
            match deployment_state(deployment) {
                DeploymentState::Available => Ok(Progress::Done(deployment.clone())),
                DeploymentState::Progressing(state) => Ok(Progress::Waiting(state)),
                DeploymentState::Failed(message) => {
                    Err(KubernetesError::DeploymentFailed { name: format!("{namespace}/{name}"), message })
                }
            }
        })
        .await
    }

    /// Waits until the pods matching `label_selector` meet `condition`; returns them
    /// (empty for [`PodCondition::Gone`]).
    pub async fn wait_pods(
        &self,
        namespace: &str,
        label_selector: &str,
        condition: PodCondition,
        options: &WaitOptions,
    ) -> Result<Vec<Value>> {
        self.wait_pods_named(namespace, label_selector, None, condition, options).await
    }

    /// As [`KubernetesClient::wait_pods`], counting only the pods whose name starts with
    /// `name_prefix` when given: workloads of one Helm chart often share one selector, and
    /// a pod's name is its controller's name and a suffix.
    pub async fn wait_pods_named(
        &self,
        namespace: &str,
        label_selector: &str,
        name_prefix: Option<&str>,
        condition: PodCondition,
        options: &WaitOptions,
    ) -> Result<Vec<Value>> {
        let collection = manifest::collection_segments("v1", "Pod", Some(namespace))?;
        let named = name_prefix.map(|prefix| format!(" named {prefix}*")).unwrap_or_default();
        let what = match condition {
            PodCondition::Running { count: Some(n) } => format!("{n} Running pods matching '{label_selector}'{named}"),
            PodCondition::Running { count: None } => format!("Running pods matching '{label_selector}'{named}"),
            PodCondition::Gone => format!("pods matching '{label_selector}'{named} to be gone"),
        };
        self.wait_until(what, &collection, Some(label_selector), None, options, |pods| match name_prefix {
            None => Ok(pods_progress(pods, condition)),
            Some(prefix) => {
                let own: Objects = pods
                    .iter()
                    .filter(|(name, _)| name.starts_with(prefix))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Ok(pods_progress(&own, condition))
            }
        })
        .await
    }

    async fn wait_until<T, F>(
        &self,
        what: String,
        collection: &[String],
        label_selector: Option<&str>,
        field_selector: Option<&str>,
        options: &WaitOptions,
        mut check: F,
    ) -> Result<T>
    where
        F: FnMut(&Objects) -> Result<Progress<T>>,
    {
        let started = Instant::now();
        let deadline = started + options.timeout;
        let mut last_state = String::from("nothing observed yet");
        let run =
            self.watch_loop(collection, label_selector, field_selector, options, deadline, &mut check, &mut last_state);
        match tokio::time::timeout_at(deadline, run).await {
            Ok(result) => result,
            Err(_) => Err(KubernetesError::Timeout { what, waited: started.elapsed(), last_state }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn watch_loop<T, F>(
        &self,
        collection: &[String],
        label_selector: Option<&str>,
        field_selector: Option<&str>,
        options: &WaitOptions,
        deadline: Instant,
        check: &mut F,
        last_state: &mut String,
    ) -> Result<T>
    where
        F: FnMut(&Objects) -> Result<Progress<T>>,
    {
        let mut watch_refused = false;
        loop {
            let list = self.list(collection, label_selector, field_selector).await?;
            let mut objects: Objects = list.items.into_iter().filter_map(|o| Some((name_of(&o)?, o))).collect();
            match check(&objects)? {
                Progress::Done(done) => return Ok(done),
                Progress::Waiting(state) => *last_state = state,
            }
            if watch_refused {
                tokio::time::sleep(options.poll_interval).await;
                continue;
            }

            let mut url = self.collection_url(collection, label_selector, field_selector)?;
            let timeout_seconds = deadline.saturating_duration_since(Instant::now()).as_secs().max(1);
            url.query_pairs_mut()
                .append_pair("watch", "true")
                .append_pair("resourceVersion", &list.resource_version)
                .append_pair("allowWatchBookmarks", "true")
                .append_pair("timeoutSeconds", &timeout_seconds.to_string());
            let mut response = self.streaming_request(Method::GET, url).send().await?;
            let status = response.status();
            if status == StatusCode::GONE {
                continue;
            }
            if status == StatusCode::UNAUTHORIZED {
                return Err(api_error(response).await);
            }
            if !status.is_success() {
                // e.g. 403 when RBAC grants list but not watch, or a proxy that cannot stream.
                tracing::info!(%status, "watch refused; polling the list instead");
                watch_refused = true;
                tokio::time::sleep(options.poll_interval).await;
                continue;
            }

            let (step, events) = read_events(&mut response, &mut objects, check, last_state).await?;
            match step {
                Step::Done(done) => return Ok(done),
                Step::Fallback => {
                    tracing::info!("watch answer is not an event stream; polling the list instead");
                    watch_refused = true;
                    tokio::time::sleep(options.poll_interval).await;
                }
                Step::Relist => {}
                // The server closed the watch (timeoutSeconds, apiserver restart): list and watch again,
                // pausing first if it delivered nothing so a misbehaving server cannot make us spin.
                Step::Continue if events == 0 => tokio::time::sleep(options.poll_interval).await,
                Step::Continue => {}
            }
        }
    }
}

/// Applies the events of one watch answer to `objects` until `check` is done, the answer
/// ends or is no event stream; the step it stopped at and how many events came.
async fn read_events<T, F>(
    response: &mut reqwest::Response,
    objects: &mut Objects,
    check: &mut F,
    last_state: &mut String,
) -> Result<(Step<T>, usize)>
where
    F: FnMut(&Objects) -> Result<Progress<T>>,
{
    let mut buffer: Vec<u8> = Vec::new();
    let mut events = 0usize;
    loop {
        let chunk = response.chunk().await?;
        let at_end = chunk.is_none();
        if let Some(chunk) = chunk {
            buffer.extend_from_slice(&chunk);
        } else if !buffer.is_empty() {
            buffer.push(b'\n');
        }
        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            if !line.iter().all(u8::is_ascii_whitespace) {
                events += 1;
            }
            let step = handle_line(&line, objects, check, last_state)?;
            if !matches!(step, Step::Continue) {
                return Ok((step, events));
            }
        }
        if at_end {
            return Ok((Step::Continue, events));
        }
    }
}

fn handle_line<T, F>(line: &[u8], objects: &mut Objects, check: &mut F, last_state: &mut String) -> Result<Step<T>>
where
    F: FnMut(&Objects) -> Result<Progress<T>>,
{
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(Step::Continue);
    }
    let Ok(event) = serde_json::from_slice::<WatchEvent>(line) else {
        return Ok(Step::Fallback);
    };
    match event.event_type.as_str() {
        "ADDED" | "MODIFIED" => {
            if let Some(name) = name_of(&event.object) {
                objects.insert(name, event.object);
            }
        }
        "DELETED" => {
            if let Some(name) = name_of(&event.object) {
                objects.remove(&name);
            }
        }
        "ERROR" => {
            let code = event.object.get("code").and_then(Value::as_u64).unwrap_or(500);
            if code == 410 {
                return Ok(Step::Relist);
            }
            let status = u16::try_from(code).unwrap_or(500);
            return Err(status_object_error(status, Some(&event.object), ""));
        }
        // BOOKMARK only moves the resourceVersion; we re-list after every watch anyway.
        _ => return Ok(Step::Continue),
    }
    match check(objects)? {
        Progress::Done(done) => Ok(Step::Done(done)),
        Progress::Waiting(state) => {
            *last_state = state;
            Ok(Step::Continue)
        }
    }
}

fn name_of(object: &Value) -> Option<String> {
    meta(object).name.map(str::to_owned)
}

fn pods_progress(pods: &Objects, condition: PodCondition) -> Progress<Vec<Value>> {
    let names = || pods.keys().cloned().collect::<Vec<_>>().join(", ");
    match condition {
        PodCondition::Gone if pods.is_empty() => Progress::Done(Vec::new()),
        PodCondition::Gone => Progress::Waiting(format!("{} pods left: {}", pods.len(), names())),
        PodCondition::Running { count } => {
            let terminating = pods.values().filter(|p| meta(p).deletion_timestamp.is_some()).count();
            let running = pods.values().filter(|p| Object::of(p).status.phase.as_deref() == Some("Running")).count();
            let count_ok = count.map_or(!pods.is_empty(), |n| pods.len() == n);
            if terminating == 0 && running == pods.len() && count_ok {
                Progress::Done(pods.values().cloned().collect())
            } else {
                Progress::Waiting(format!(
                    "{} pods ({}), {running} Running, {terminating} terminating",
                    pods.len(),
                    names()
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(generation: i64, status: &Value) -> Value {
        json!({"metadata": {"name": "web", "generation": generation}, "spec": {"replicas": 2}, "status": status})
    }

    #[test]
    fn deployment_is_available_only_when_rollout_is_complete() {
        let done = json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2});
        assert_eq!(deployment_state(&deployment(2, &done)), DeploymentState::Available);
        assert!(matches!(deployment_state(&deployment(3, &done)), DeploymentState::Progressing(_)));
        let old_left = json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 2, "availableReplicas": 3,
            "readyReplicas": 3});
        assert_eq!(
            deployment_state(&deployment(2, &old_left)),
            DeploymentState::Progressing("1 old replicas pending termination".into())
        );
        let stuck = json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1, "conditions": [
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
             "message": "ReplicaSet \"web-5d4b\" has timed out progressing."}]});
        assert_eq!(
            deployment_state(&deployment(2, &stuck)),
            DeploymentState::Failed("ReplicaSet \"web-5d4b\" has timed out progressing.".into())
        );
    }

    #[test]
    fn running_pods_exclude_terminating_ones_and_respect_the_count() {
        let pod = |name: &str, phase: &str, deleting: bool| {
            let mut p = json!({"metadata": {"name": name}, "status": {"phase": phase}});
            if deleting {
                p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            }
            (name.to_owned(), p)
        };
        let pods: Objects = [pod("a", "Running", false), pod("b", "Running", true)].into_iter().collect();
        assert!(matches!(pods_progress(&pods, PodCondition::Running { count: Some(1) }), Progress::Waiting(_)));
        let pods: Objects = [pod("a", "Running", false), pod("c", "Pending", false)].into_iter().collect();
        assert!(matches!(pods_progress(&pods, PodCondition::Running { count: None }), Progress::Waiting(_)));
        let pods: Objects = [pod("a", "Running", false), pod("c", "Running", false)].into_iter().collect();
        assert!(
            matches!(pods_progress(&pods, PodCondition::Running { count: Some(2) }), Progress::Done(p) if p.len() == 2)
        );
        assert!(matches!(pods_progress(&Objects::new(), PodCondition::Running { count: None }), Progress::Waiting(_)));
        assert!(matches!(pods_progress(&Objects::new(), PodCondition::Gone), Progress::Done(_)));
    }
}
