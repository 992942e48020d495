use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use url::Url;

use super::http::{self, Auth, api_error};
use super::manifest::{self, ResourceRef};
use super::{KubernetesError, Result, VimCredentials};

/// How often an apply is sent again after 409 `AlreadyExists` (see [`KubernetesClient::apply`]).
const MAX_CREATE_RACES: u32 = 2;

/// Client of one Kubernetes API server.
#[derive(Debug, Clone)]
pub struct KubernetesClient {
    http: reqwest::Client,
    base: Url,
    auth: Auth,
    namespace: String,
}

/// Result of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// The API server accepted the deletion (200/202); with foreground propagation the
    /// object stays visible, with `metadata.deletionTimestamp`, until its dependents are gone.
    Deleted,
    /// Already gone (404).
    NotFound,
}

/// A list response: the items and the list's `metadata.resourceVersion` (where a watch starts).
#[derive(Debug, Clone)]
pub struct ObjectList {
    pub resource_version: String,
    pub items: Vec<Value>,
}

impl KubernetesClient {
    /// `fieldManager` of every server-side apply: the fields solgate owns.
    pub const FIELD_MANAGER: &'static str = "solgate";

    pub fn new(creds: &VimCredentials) -> Result<Self> {
        Ok(Self {
            http: http::build_client(&creds.tls)?,
            base: creds.endpoint.clone(),
            auth: creds.auth.clone(),
            namespace: creds.namespace.clone(),
        })
    }

    /// Namespace given to manifests that name none.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// [`manifest::parse_manifests`] with this client's namespace as default.
    pub fn parse_manifests(&self, text: &str) -> Result<Vec<Value>> {
        manifest::parse_manifests(text, &self.namespace)
    }

    /// Applies every document of a multi-document manifest, in order; returns the objects
    /// as the API server stored them.
    pub async fn apply_manifests(&self, text: &str) -> Result<Vec<Value>> {
        let objects = self.parse_manifests(text)?;
        let mut applied = Vec::with_capacity(objects.len());
        for object in &objects {
            applied.push(self.apply(object).await?);
        }
        Ok(applied)
    }

    /// Server-side apply: `PATCH {object path}?fieldManager=solgate&force=true` with
    /// `Content-Type: application/apply-patch+yaml`. Creates or updates in one call, and
    /// `force` takes over fields another manager (e.g. `kubectl`) set, so a retried
    /// instantiate converges instead of failing on conflicts.
    ///
    /// An object that exists already is updated, not an error: when the API server's create
    /// loses a race with another create of the same object (an earlier run of the operation
    /// still applying, a concurrent `kubectl apply`), it answers 409 `AlreadyExists`; the
    /// apply is then sent again, and finds the object to update.
    ///
    /// The body is the object as JSON, which is valid YAML: re-emitting YAML could change
    /// values such as `on`/`yes`, which the API server's YAML 1.1 decoder reads as booleans.
    pub async fn apply(&self, object: &Value) -> Result<Value> {
        let target = ResourceRef::from_object(object)?;
        let mut url = self.url(&target.path_segments()?)?;
        url.query_pairs_mut().append_pair("fieldManager", Self::FIELD_MANAGER).append_pair("force", "true");
        let body = serde_json::to_vec(object).map_err(|e| KubernetesError::InvalidManifest(e.to_string()))?;
        let mut races = 0;
        loop {
            let response = self
                .request(Method::PATCH, url.clone())
                .header("Content-Type", "application/apply-patch+yaml")
                .body(body.clone())
                .send()
                .await?;
            match json_or_error(response).await {
                Err(KubernetesError::Api { status: 409, reason: Some(reason), .. })
                    if reason == "AlreadyExists" && races < MAX_CREATE_RACES =>
                {
                    races += 1;
                    tracing::info!(resource = %target, "created meanwhile by another request; applying to it");
                }
                result => {
                    let applied = result?;
                    tracing::info!(resource = %target, "applied");
                    return Ok(applied);
                }
            }
        }
    }

    /// `GET {object path}`; `None` on 404.
    pub async fn get(&self, target: &ResourceRef) -> Result<Option<Value>> {
        let response = self.request(Method::GET, self.url(&target.path_segments()?)?).send().await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        json_or_error(response).await.map(Some)
    }

    /// `DELETE {object path}?propagationPolicy=Foreground`: dependents (a Deployment's
    /// ReplicaSets and Pods) are removed before the owner, as Tacker's `V1DeleteOptions
    /// (propagation_policy='Foreground')` does.
    pub async fn delete(&self, target: &ResourceRef) -> Result<DeleteOutcome> {
        let mut url = self.url(&target.path_segments()?)?;
        url.query_pairs_mut().append_pair("propagationPolicy", "Foreground");
        let response = self.request(Method::DELETE, url).send().await?;
        if response.status() == StatusCode::NOT_FOUND {
            tracing::info!(resource = %target, "already deleted");
            return Ok(DeleteOutcome::NotFound);
        }
        json_or_error(response).await?;
        tracing::info!(resource = %target, "deletion accepted");
        Ok(DeleteOutcome::Deleted)
    }

    /// Deletes every object of a manifest, last document first (so a Namespace written
    /// first goes last).
    pub async fn delete_manifests(&self, text: &str) -> Result<Vec<(ResourceRef, DeleteOutcome)>> {
        let objects = self.parse_manifests(text)?;
        let mut outcomes = Vec::with_capacity(objects.len());
        for object in objects.iter().rev() {
            let target = ResourceRef::from_object(object)?;
            let outcome = self.delete(&target).await?;
            outcomes.push((target, outcome));
        }
        Ok(outcomes)
    }

    /// `PATCH {object path}/scale` with the merge patch `{"spec":{"replicas":N}}`
    /// (Tacker: `patch_namespaced_{kind}_scale`). Returns the `Scale` object.
    pub async fn scale(&self, target: &ResourceRef, replicas: u32) -> Result<Value> {
        if !target.is_scalable() {
            return Err(KubernetesError::NotScalable(target.kind.clone()));
        }
        let mut segments = target.path_segments()?;
        segments.push("scale".to_owned());
        let body = json!({"spec": {"replicas": replicas}});
        let response = self
            .request(Method::PATCH, self.url(&segments)?)
            .header("Content-Type", "application/merge-patch+json")
            .body(body.to_string())
            .send()
            .await?;
        let scale = json_or_error(response).await?;
        tracing::info!(resource = %target, replicas, "scaled");
        Ok(scale)
    }

    /// `GET /api/v1/namespaces/{ns}/pods?labelSelector=...`.
    pub async fn list_pods(&self, namespace: &str, label_selector: &str) -> Result<ObjectList> {
        let segments = manifest::collection_segments("v1", "Pod", Some(namespace))?;
        self.list(&segments, Some(label_selector), None).await
    }

    pub(crate) async fn list(
        &self,
        collection: &[String],
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<ObjectList> {
        let url = self.collection_url(collection, label_selector, field_selector)?;
        let response = self.request(Method::GET, url).send().await?;
        let list = json_or_error(response).await?;
        let resource_version =
            list.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
        let items = match list.get("items") {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::Null) | None => Vec::new(),
            Some(_) => return Err(KubernetesError::InvalidResponse("list without an items array".into())),
        };
        Ok(ObjectList { resource_version, items })
    }

    pub(crate) fn collection_url(
        &self,
        collection: &[String],
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Url> {
        let mut url = self.url(collection)?;
        if let Some(selector) = label_selector.filter(|s| !s.is_empty()) {
            url.query_pairs_mut().append_pair("labelSelector", selector);
        }
        if let Some(selector) = field_selector.filter(|s| !s.is_empty()) {
            url.query_pairs_mut().append_pair("fieldSelector", selector);
        }
        Ok(url)
    }

    /// A request with auth and `Accept`, without the per-request timeout (for watches).
    pub(crate) fn streaming_request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        self.auth.apply(self.http.request(method, url).header("Accept", "application/json"))
    }

    fn request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        self.streaming_request(method, url).timeout(http::REQUEST_TIMEOUT)
    }

    /// The API server URL with `segments` appended (keeps a path prefix such as a
    /// Rancher-style `/k8s/clusters/c-xyz`).
    fn url<S: AsRef<str>>(&self, segments: &[S]) -> Result<Url> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| KubernetesError::InvalidVimConnectionInfo(format!("endpoint {} has no path", self.base)))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }
}

/// The JSON body of a 2xx answer, or the API server's `Status` as an error.
pub(crate) async fn json_or_error(response: reqwest::Response) -> Result<Value> {
    if !response.status().is_success() {
        return Err(api_error(response).await);
    }
    let bytes = response.bytes().await?;
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes).map_err(|e| KubernetesError::InvalidResponse(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_the_endpoint_path_prefix() {
        let creds = VimCredentials::new("http://rancher.example/k8s/clusters/c-x7k2p/", "token").unwrap();
        let client = KubernetesClient::new(&creds).unwrap();
        let pod = ResourceRef::new("v1", "Pod", Some("default"), "p").unwrap();
        let url = client.url(&pod.path_segments().unwrap()).unwrap();
        assert_eq!(url.as_str(), "http://rancher.example/k8s/clusters/c-x7k2p/api/v1/namespaces/default/pods/p");
    }
}
