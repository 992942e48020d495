use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use percent_encoding::percent_decode_str;
use reqwest::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::time::Instant;
use url::Url;

use super::http::{self, api_error, json_body};
use super::{KeystoneClient, OpenStackError, Result, VimCredentials};

const SERVICE: &str = "Heat";
/// Catalog type of Heat (Tacker: `HttpClient(auth, service_type='orchestration')`).
const SERVICE_TYPE: &str = "orchestration";
/// Heat's lookup redirects once; a proxy may add a hop; more would be a loop.
const MAX_REDIRECTS: usize = 3;

/// Heat orchestration v1 client (API reference: docs.openstack.org/api-ref/orchestration/v1).
///
/// Stack identifiers are what Heat accepts in URLs: a stack name, or `name/id`. A bare name
/// costs one extra round trip (Heat answers 302 to `stacks/{name}/{id}`, which this client
/// follows with the same method and body).
#[derive(Debug)]
pub struct HeatClient {
    keystone: KeystoneClient,
}

/// `name/id` of a stack, as `POST /stacks` and the `stack` links return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackRef {
    pub name: String,
    pub id: String,
}

impl fmt::Display for StackRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name, self.id)
    }
}

/// `POST /v1/{tenant_id}/stacks` body.
#[derive(Debug, Clone, Serialize)]
pub struct CreateStackRequest {
    pub stack_name: String,
    /// The HOT template as a JSON value (see [`parse_hot`]).
    pub template: Value,
    /// Nested templates and other files the template refers to, by the name used in the
    /// template (e.g. `VDU1.yaml`); Heat wants their text, not a parsed value.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub parameters: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_mins: Option<u32>,
    /// Heat's default is `true` (a failed create stays CREATE_FAILED instead of rolling back).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_rollback: Option<bool>,
}

impl CreateStackRequest {
    pub fn new(stack_name: impl Into<String>, template: Value) -> Self {
        Self {
            stack_name: stack_name.into(),
            template,
            files: BTreeMap::new(),
            parameters: Map::new(),
            timeout_mins: None,
            disable_rollback: None,
        }
    }

    pub fn with_file(mut self, name: impl Into<String>, content: impl Into<String>) -> Self {
        self.files.insert(name.into(), content.into());
        self
    }

    pub fn with_parameter(mut self, name: impl Into<String>, value: Value) -> Self {
        self.parameters.insert(name.into(), value);
        self
    }

    pub fn with_timeout_mins(mut self, minutes: u32) -> Self {
        self.timeout_mins = Some(minutes);
        self
    }
}

/// `PATCH /v1/{tenant_id}/stacks/{stack_name}/{stack_id}` body. PATCH means
/// `existing=true`: whatever is left out (template, files, parameters) keeps its current
/// value, so a scale only sends the changed parameters (Tacker's `update_stack`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct UpdateStackRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<Value>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub parameters: Map<String, Value>,
    /// Parameters to reset to the template default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clear_parameters: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_mins: Option<u32>,
}

/// `GET /stacks/{stack_name}/{stack_id}` → `stack`.
#[derive(Debug, Clone, Deserialize)]
pub struct Stack {
    pub id: String,
    pub stack_name: String,
    /// e.g. `CREATE_IN_PROGRESS`, `CREATE_COMPLETE`, `UPDATE_FAILED`.
    pub stack_status: String,
    #[serde(default)]
    pub stack_status_reason: Option<String>,
    /// Current parameters, including Heat's `OS::stack_id` etc.
    #[serde(default)]
    pub parameters: Map<String, Value>,
    #[serde(default)]
    pub outputs: Vec<Value>,
    #[serde(default)]
    pub creation_time: Option<String>,
    #[serde(default)]
    pub updated_time: Option<String>,
    /// Every other attribute Heat returned.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Stack {
    pub fn stack_ref(&self) -> StackRef {
        StackRef { name: self.stack_name.clone(), id: self.id.clone() }
    }
}

/// One entry of `GET /stacks/{name}/{id}/resources` → `resources`, or the `resource` of
/// `GET /stacks/{name}/{id}/resources/{resource}`.
#[derive(Debug, Clone, Deserialize)]
pub struct StackResource {
    #[serde(default)]
    pub resource_name: String,
    #[serde(default)]
    pub physical_resource_id: String,
    #[serde(default)]
    pub resource_type: String,
    pub resource_status: String,
    #[serde(default)]
    pub resource_status_reason: Option<String>,
    #[serde(default)]
    pub logical_resource_id: Option<String>,
    /// Name of the resource in the parent stack that created this nested stack's resource
    /// (present with `nested_depth > 0`).
    #[serde(default)]
    pub parent_resource: Option<String>,
    #[serde(default)]
    pub required_by: Vec<String>,
    #[serde(default)]
    pub links: Vec<Link>,
    #[serde(default)]
    pub creation_time: Option<String>,
    #[serde(default)]
    pub updated_time: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"href", "rel"}` link of a Heat resource.
#[derive(Debug, Clone, Deserialize)]
pub struct Link {
    pub href: String,
    pub rel: String,
}

impl StackResource {
    /// `name/id` of the (possibly nested) stack holding this resource, from its `stack`
    /// link — what `mark_resource_unhealthy` needs for resources of nested stacks
    /// (Tacker's `heat_utils.get_resource_stack_id`).
    pub fn stack_identifier(&self) -> Option<String> {
        let link = self.links.iter().find(|l| l.rel == "stack")?;
        let mut segments = link.href.trim_end_matches('/').rsplit('/');
        let id = segments.next()?;
        let name = segments.next()?;
        Some(format!("{name}/{id}"))
    }
}

/// Polling of [`HeatClient::wait_for`].
#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    /// Pause between two `GET`s (Tacker: `CHECK_INTERVAL = 5`).
    pub poll_interval: Duration,
    /// Give up after this long (`drivers.openstack_wait_timeout_secs`).
    pub timeout: Duration,
}

/// Parses a HOT template (YAML or JSON text) into the JSON value Heat takes as `template`.
pub fn parse_hot(text: &str) -> Result<Value> {
    let value: Value = serde_yaml_ng::from_str(text).map_err(|e| OpenStackError::Template(e.to_string()))?;
    if value.get("heat_template_version").is_none() {
        return Err(OpenStackError::Template("heat_template_version is missing".into()));
    }
    Ok(value)
}

#[derive(Deserialize)]
struct StackEnvelope<T> {
    stack: T,
}

#[derive(Deserialize)]
struct CreatedStack {
    id: String,
}

#[derive(Deserialize)]
struct ResourceEnvelope {
    resource: StackResource,
}

#[derive(Deserialize)]
struct ResourceList {
    resources: Vec<StackResource>,
}

impl HeatClient {
    pub fn new(creds: VimCredentials) -> Result<Self> {
        Ok(Self::from_keystone(KeystoneClient::new(creds)?))
    }

    pub fn from_keystone(keystone: KeystoneClient) -> Self {
        Self { keystone }
    }

    pub fn keystone(&self) -> &KeystoneClient {
        &self.keystone
    }

    /// `POST /stacks` (201). Does not wait: follow with `wait_for(.., "CREATE_COMPLETE", ..)`.
    pub async fn create_stack(&self, request: &CreateStackRequest) -> Result<StackRef> {
        let body = serde_json::to_value(request).map_err(|e| OpenStackError::Template(e.to_string()))?;
        let response = self.send(Method::POST, &["stacks"], &[], Some(&body)).await?;
        let response = expect_status(response, &[StatusCode::CREATED]).await?;
        let created: StackEnvelope<CreatedStack> = json_body(SERVICE, response).await?;
        tracing::info!(stack = %request.stack_name, id = %created.stack.id, "Heat stack create accepted");
        Ok(StackRef { name: request.stack_name.clone(), id: created.stack.id })
    }

    /// `GET /stacks/{stack}`; `None` when Heat answers 404.
    pub async fn get_stack(&self, stack: &str) -> Result<Option<Stack>> {
        let response = self.send(Method::GET, &stack_path(stack), &[], None).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let response = expect_status(response, &[StatusCode::OK]).await?;
        let envelope: StackEnvelope<Stack> = json_body(SERVICE, response).await?;
        Ok(Some(envelope.stack))
    }

    /// `PATCH /stacks/{stack}` (202), i.e. an update that keeps what the request leaves out.
    pub async fn update_stack(&self, stack: &str, request: &UpdateStackRequest) -> Result<()> {
        let body = serde_json::to_value(request).map_err(|e| OpenStackError::Template(e.to_string()))?;
        let response = self.send(Method::PATCH, &stack_path(stack), &[], Some(&body)).await?;
        expect_status(response, &[StatusCode::ACCEPTED]).await?;
        tracing::info!(stack, "Heat stack update accepted");
        Ok(())
    }

    /// `PUT /stacks/{stack}` (202): an update that replaces the template, files and
    /// parameters whole (Tacker's `update_stack` when user data returns `existing: false`).
    pub async fn replace_stack(&self, stack: &str, request: &UpdateStackRequest) -> Result<()> {
        let body = serde_json::to_value(request).map_err(|e| OpenStackError::Template(e.to_string()))?;
        let response = self.send(Method::PUT, &stack_path(stack), &[], Some(&body)).await?;
        expect_status(response, &[StatusCode::ACCEPTED]).await?;
        tracing::info!(stack, "Heat stack replacement accepted");
        Ok(())
    }

    /// `DELETE /stacks/{stack}`: `true` when Heat accepted it (204), `false` when the stack
    /// did not exist (404, which Tacker also treats as success).
    pub async fn delete_stack(&self, stack: &str) -> Result<bool> {
        let response = self.send(Method::DELETE, &stack_path(stack), &[], None).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(false);
        }
        expect_status(response, &[StatusCode::NO_CONTENT]).await?;
        tracing::info!(stack, "Heat stack delete accepted");
        Ok(true)
    }

    /// `GET /stacks/{stack}/resources?nested_depth=N`. Tacker uses depth 2 so that the
    /// servers inside `OS::Heat::AutoScalingGroup` members are listed.
    pub async fn list_resources(&self, stack: &str, nested_depth: u32) -> Result<Vec<StackResource>> {
        let mut path = stack_path(stack);
        path.push("resources");
        let depth = nested_depth.to_string();
        let response = self.send(Method::GET, &path, &[("nested_depth", &depth)], None).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Err(OpenStackError::StackNotFound { stack: stack.to_owned() });
        }
        let response = expect_status(response, &[StatusCode::OK]).await?;
        let list: ResourceList = json_body(SERVICE, response).await?;
        Ok(list.resources)
    }

    /// `GET /stacks/{stack}/resources/{resource}`; `None` when Heat answers 404 (no such
    /// resource, or no such stack).
    pub async fn get_resource(&self, stack: &str, resource_name: &str) -> Result<Option<StackResource>> {
        let mut path = stack_path(stack);
        path.extend(["resources", resource_name]);
        let response = self.send(Method::GET, &path, &[], None).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let response = expect_status(response, &[StatusCode::OK]).await?;
        let envelope: ResourceEnvelope = json_body(SERVICE, response).await?;
        Ok(Some(envelope.resource))
    }

    /// `PATCH /stacks/{name}/{id}/resources/{resource}` with `mark_unhealthy` (200), so that
    /// the next stack update replaces the resource (Tacker's heal). Heat has no name-only
    /// route for this call, so a bare stack name is first resolved to `name/id`.
    pub async fn mark_resource_unhealthy(&self, stack: &str, resource_name: &str, reason: &str) -> Result<()> {
        let identifier = if stack.contains('/') {
            stack.to_owned()
        } else {
            let found = self.get_stack(stack).await?;
            found.ok_or_else(|| OpenStackError::StackNotFound { stack: stack.to_owned() })?.stack_ref().to_string()
        };
        let mut path = stack_path(&identifier);
        path.extend(["resources", resource_name]);
        let body = json!({"mark_unhealthy": true, "resource_status_reason": reason});
        let response = self.send(Method::PATCH, &path, &[], Some(&body)).await?;
        expect_status(response, &[StatusCode::OK]).await?;
        tracing::info!(stack = %identifier, resource = resource_name, "Heat resource marked unhealthy");
        Ok(())
    }

    /// `GET /stacks/{stack}/template`: the template as Heat stored it.
    pub async fn get_template(&self, stack: &str) -> Result<Value> {
        let mut path = stack_path(stack);
        path.push("template");
        let response = self.send(Method::GET, &path, &[], None).await?;
        json_body(SERVICE, expect_status(response, &[StatusCode::OK]).await?).await
    }

    /// `GET /stacks/{stack}/files`: the files map the stack was created or updated with.
    pub async fn get_files(&self, stack: &str) -> Result<BTreeMap<String, String>> {
        let mut path = stack_path(stack);
        path.push("files");
        let response = self.send(Method::GET, &path, &[], None).await?;
        json_body(SERVICE, expect_status(response, &[StatusCode::OK]).await?).await
    }

    /// Polls the stack until it shows `target_status` (e.g. `CREATE_COMPLETE`).
    ///
    /// - `*_FAILED`, or a `ROLLBACK_*` status, ends with [`OpenStackError::StackFailed`]
    ///   carrying `stack_status_reason`;
    /// - `{ACTION}_IN_PROGRESS` of the awaited action, and the `*_COMPLETE` of an earlier
    ///   action (Heat has not started the new one yet), keep polling; any other status
    ///   (e.g. DELETE_COMPLETE while waiting for UPDATE_COMPLETE) is
    ///   [`OpenStackError::UnexpectedStatus`];
    /// - for `DELETE_COMPLETE` a 404 means gone and returns `Ok(None)`; otherwise a 404 is
    ///   [`OpenStackError::StackNotFound`].
    ///
    /// Note: by name, Heat still shows a stack as DELETE_COMPLETE for a moment before the
    /// name is free again; Tacker waits for the 404 before re-creating a stack of the same
    /// name (heal of the whole VNF), which `get_stack` returning `None` tells.
    pub async fn wait_for(&self, stack: &str, target_status: &str, options: &WaitOptions) -> Result<Option<Stack>> {
        let target_action = target_status.split_once('_').map_or(target_status, |(action, _)| action);
        let started = Instant::now();
        let deadline = started + options.timeout;
        loop {
            let Some(current) = self.get_stack(stack).await? else {
                if target_status == "DELETE_COMPLETE" {
                    return Ok(None);
                }
                return Err(OpenStackError::StackNotFound { stack: stack.to_owned() });
            };
            let status = current.stack_status.as_str();
            if status == target_status {
                return Ok(Some(current));
            }
            let (action, state) = status.split_once('_').unwrap_or((status, ""));
            if state == "FAILED" || action == "ROLLBACK" {
                return Err(OpenStackError::StackFailed {
                    stack: stack.to_owned(),
                    status: status.to_owned(),
                    reason: current.stack_status_reason.clone().unwrap_or_default(),
                });
            }
            // A deleted stack never reaches another action's status.
            let waiting =
                (state == "IN_PROGRESS" && action == target_action) || (state == "COMPLETE" && action != "DELETE");
            if !waiting {
                return Err(OpenStackError::UnexpectedStatus {
                    stack: stack.to_owned(),
                    status: status.to_owned(),
                    target: target_status.to_owned(),
                });
            }
            tracing::debug!(stack, status, target = target_status, "waiting for Heat stack");
            if Instant::now() + options.poll_interval > deadline {
                return Err(OpenStackError::Timeout {
                    stack: stack.to_owned(),
                    target: target_status.to_owned(),
                    last_status: status.to_owned(),
                    waited: started.elapsed(),
                });
            }
            tokio::time::sleep(options.poll_interval).await;
        }
    }

    /// Polls the stack until no action of Heat's is running on it (its status is not
    /// `*_IN_PROGRESS`, e.g. a `ROLLBACK_IN_PROGRESS` became `ROLLBACK_COMPLETE` or
    /// `ROLLBACK_FAILED`) and returns it as it then is; `None` when Heat answers 404.
    /// Unlike [`HeatClient::wait_for`] no end state is an error: the caller decides.
    pub async fn wait_settled(&self, stack: &str, options: &WaitOptions) -> Result<Option<Stack>> {
        let started = Instant::now();
        let deadline = started + options.timeout;
        loop {
            let Some(current) = self.get_stack(stack).await? else { return Ok(None) };
            if !current.stack_status.ends_with("_IN_PROGRESS") {
                return Ok(Some(current));
            }
            tracing::debug!(stack, status = %current.stack_status, "waiting for the Heat stack to settle");
            if Instant::now() + options.poll_interval > deadline {
                return Err(OpenStackError::Timeout {
                    stack: stack.to_owned(),
                    target: "a state other than *_IN_PROGRESS".to_owned(),
                    last_status: current.stack_status,
                    waited: started.elapsed(),
                });
            }
            tokio::time::sleep(options.poll_interval).await;
        }
    }

    /// Sends one Heat call with the cached token: re-authenticates once on 401 and follows
    /// Heat's lookup redirects with the same method and body.
    async fn send(
        &self,
        method: Method,
        path: &[&str],
        query: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<reqwest::Response> {
        // One session per call: a token is not re-checked between the redirect hops.
        let mut session = self.keystone.session().await?;
        let region = self.keystone.credentials().region.as_deref();
        let endpoint = session.endpoint(SERVICE_TYPE, "public", region)?;
        let mut url = join(&endpoint, path.iter().copied(), query)?;
        let mut reauthenticated = false;
        let mut redirects = 0;
        loop {
            let mut request = self
                .keystone
                .http()
                .request(method.clone(), url.clone())
                .header("X-Auth-Token", session.token())
                .header("Accept", "application/json")
                .timeout(http::REQUEST_TIMEOUT);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request.send().await?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && !reauthenticated {
                // The token was revoked or Keystone restarted with new keys: one fresh token.
                tracing::info!(%url, "Heat answered 401; re-authenticating once");
                self.keystone.invalidate(&session).await;
                session = self.keystone.session().await?;
                reauthenticated = true;
                continue;
            }
            if status.is_redirection() && redirects < MAX_REDIRECTS {
                let Some(location) = response.headers().get("location").and_then(|v| v.to_str().ok()) else {
                    return Ok(response);
                };
                url = rebase_location(&endpoint, &url, location)?;
                redirects += 1;
                continue;
            }
            return Ok(response);
        }
    }
}

/// `stacks/{name}` or `stacks/{name}/{id}` as URL segments.
fn stack_path(stack: &str) -> Vec<&str> {
    let mut path = vec!["stacks"];
    path.extend(stack.split('/').filter(|s| !s.is_empty()));
    path
}

fn join<'a>(base: &Url, segments: impl IntoIterator<Item = &'a str>, query: &[(&str, &str)]) -> Result<Url> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| OpenStackError::InvalidResponse { service: "Keystone", detail: format!("catalog URL {base}") })?
        .pop_if_empty()
        .extend(segments);
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    Ok(url)
}

/// Heat builds its 302 `Location` from the host it believes it has; behind a proxy that
/// can be unreachable from here. Re-root everything from `stacks/` onwards on the catalog
/// endpoint we reached, keeping the query.
fn rebase_location(endpoint: &Url, current: &Url, location: &str) -> Result<Url> {
    let target = current.join(location).map_err(|e| OpenStackError::InvalidResponse {
        service: SERVICE,
        detail: format!("Location {location}: {e}"),
    })?;
    let segments: Vec<String> = target.path_segments().map(|s| s.map(str::to_owned).collect()).unwrap_or_default();
    let Some(start) = segments.iter().position(|s| s == "stacks") else {
        return Ok(target);
    };
    // Decoded so that `join` does not encode twice.
    let decoded: Vec<String> =
        segments[start..].iter().map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned()).collect();
    let mut url = join(endpoint, decoded.iter().map(String::as_str), &[])?;
    url.set_query(target.query().or(current.query()));
    Ok(url)
}

async fn expect_status(response: reqwest::Response, accepted: &[StatusCode]) -> Result<reqwest::Response> {
    if accepted.contains(&response.status()) { Ok(response) } else { Err(api_error(SERVICE, response).await) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_is_rebased_on_the_catalog_endpoint() {
        let endpoint = Url::parse("http://127.0.0.1:9999/heat-api/v1/abc").unwrap();
        let current =
            Url::parse("http://127.0.0.1:9999/heat-api/v1/abc/stacks/vnf-1/resources?nested_depth=2").unwrap();
        let url =
            rebase_location(&endpoint, &current, "http://10.0.0.5:8004/v1/abc/stacks/vnf-1/5f1c/resources").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:9999/heat-api/v1/abc/stacks/vnf-1/5f1c/resources?nested_depth=2");
    }

    #[test]
    fn resource_stack_identifier_comes_from_the_stack_link() {
        let res: StackResource = serde_json::from_value(json!({
            "resource_name": "VDU1", "physical_resource_id": "a1", "resource_type": "OS::Nova::Server",
            "resource_status": "CREATE_COMPLETE",
            "links": [
                {"href": "http://h/v1/t/stacks/vnf-1-VDU1_scale-x/7e3a/resources/VDU1", "rel": "self"},
                {"href": "http://h/v1/t/stacks/vnf-1-VDU1_scale-x/7e3a", "rel": "stack"}
            ]
        }))
        .unwrap();
        assert_eq!(res.stack_identifier().as_deref(), Some("vnf-1-VDU1_scale-x/7e3a"));
    }

    #[test]
    fn hot_yaml_becomes_a_json_template() {
        let hot = "heat_template_version: 2013-05-23\nresources:\n  VDU1:\n    type: VDU1.yaml\n";
        let value = parse_hot(hot).unwrap();
        assert_eq!(value["heat_template_version"], "2013-05-23");
        assert_eq!(value["resources"]["VDU1"]["type"], "VDU1.yaml");
        assert!(parse_hot("resources: {}").unwrap_err().to_string().contains("heat_template_version"));
    }
}
