use std::fmt;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{KubernetesError, Result};

/// REST resource name and scope of the kinds a VNF package brings (Tacker's
/// `kubernetes_resource.py` classes plus RBAC/networking kinds seen in Tacker's samples).
/// The group/version comes from the object's own `apiVersion`.
const KINDS: &[(&str, &str, bool)] = &[
    // kind, resource (plural), namespaced
    ("Pod", "pods", true),
    ("Service", "services", true),
    ("ConfigMap", "configmaps", true),
    ("Secret", "secrets", true),
    ("PersistentVolumeClaim", "persistentvolumeclaims", true),
    ("ServiceAccount", "serviceaccounts", true),
    ("Endpoints", "endpoints", true),
    ("LimitRange", "limitranges", true),
    ("ResourceQuota", "resourcequotas", true),
    ("PodTemplate", "podtemplates", true),
    ("Deployment", "deployments", true),
    ("StatefulSet", "statefulsets", true),
    ("ReplicaSet", "replicasets", true),
    ("DaemonSet", "daemonsets", true),
    ("ControllerRevision", "controllerrevisions", true),
    ("Job", "jobs", true),
    ("CronJob", "cronjobs", true),
    ("HorizontalPodAutoscaler", "horizontalpodautoscalers", true),
    ("NetworkPolicy", "networkpolicies", true),
    ("Ingress", "ingresses", true),
    ("Role", "roles", true),
    ("RoleBinding", "rolebindings", true),
    ("Lease", "leases", true),
    ("Namespace", "namespaces", false),
    ("PersistentVolume", "persistentvolumes", false),
    ("StorageClass", "storageclasses", false),
    ("ClusterRole", "clusterroles", false),
    ("ClusterRoleBinding", "clusterrolebindings", false),
    ("PriorityClass", "priorityclasses", false),
];

fn kind_info(kind: &str) -> Option<(&'static str, bool)> {
    KINDS.iter().find(|(k, _, _)| *k == kind).map(|(_, plural, namespaced)| (*plural, *namespaced))
}

/// Identity of one Kubernetes object: enough to compute its REST path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef {
    pub api_version: String,
    pub kind: String,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub name: String,
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

impl ResourceRef {
    /// A reference; `namespace` is dropped for cluster-scoped kinds and required otherwise.
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Result<Self> {
        let (_, namespaced) = Self::info(api_version, kind)?;
        let namespace = match (namespaced, namespace) {
            (true, Some(ns)) if !ns.is_empty() => Some(ns.to_owned()),
            (true, _) => {
                return Err(KubernetesError::InvalidManifest(format!("{kind} {name} needs a namespace")));
            }
            (false, _) => None,
        };
        if name.is_empty() {
            return Err(KubernetesError::InvalidManifest(format!("{kind} without metadata.name")));
        }
        Ok(Self { api_version: api_version.to_owned(), kind: kind.to_owned(), namespace, name: name.to_owned() })
    }

    /// Reads `apiVersion`, `kind`, `metadata.namespace` and `metadata.name` of an object.
    pub fn from_object(object: &Value) -> Result<Self> {
        let field = |ptr: &str| object.pointer(ptr).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind) = (field("/apiVersion"), field("/kind"));
        if api_version.is_empty() || kind.is_empty() {
            return Err(KubernetesError::InvalidManifest("document without apiVersion or kind".into()));
        }
        let namespace = Some(field("/metadata/namespace")).filter(|ns| !ns.is_empty());
        Self::new(api_version, kind, namespace, field("/metadata/name"))
    }

    fn info(api_version: &str, kind: &str) -> Result<(&'static str, bool)> {
        kind_info(kind).ok_or_else(|| KubernetesError::UnsupportedKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })
    }

    /// URL path segments of the collection holding this object: `/api/v1/namespaces/{ns}/pods`,
    /// `/apis/apps/v1/namespaces/{ns}/deployments`, `/api/v1/namespaces`, ...
    pub(crate) fn collection_segments(&self) -> Result<Vec<String>> {
        collection_segments(&self.api_version, &self.kind, self.namespace.as_deref())
    }

    /// URL path segments of the object itself.
    pub(crate) fn path_segments(&self) -> Result<Vec<String>> {
        let mut segments = self.collection_segments()?;
        segments.push(self.name.clone());
        Ok(segments)
    }

    /// Whether the kind has a `scale` subresource.
    pub fn is_scalable(&self) -> bool {
        matches!(self.kind.as_str(), "Deployment" | "StatefulSet" | "ReplicaSet")
    }
}

/// Segments of a collection URL. The core group (`apiVersion: v1`) lives under `/api`,
/// named groups (`apps/v1`) under `/apis` (Kubernetes API concepts, "Resource URIs").
pub(crate) fn collection_segments(api_version: &str, kind: &str, namespace: Option<&str>) -> Result<Vec<String>> {
    let (plural, namespaced) = ResourceRef::info(api_version, kind)?;
    let mut segments = vec![if api_version.contains('/') { "apis" } else { "api" }.to_owned()];
    segments.extend(api_version.split('/').map(str::to_owned));
    if namespaced {
        let ns = namespace.ok_or_else(|| KubernetesError::InvalidManifest(format!("{kind} needs a namespace")))?;
        segments.extend(["namespaces".to_owned(), ns.to_owned()]);
    }
    segments.push(plural.to_owned());
    Ok(segments)
}

/// Splits multi-document YAML into objects, skipping empty documents and flattening
/// `kind: List`. Namespaced objects without `metadata.namespace` get `default_namespace`
/// (a namespace written in the manifest is kept, as `kubectl apply` does).
pub fn parse_manifests(text: &str, default_namespace: &str) -> Result<Vec<Value>> {
    let mut objects = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document)
            .map_err(|e| KubernetesError::InvalidManifest(format!("document {}: {e}", index + 1)))?;
        match value {
            Value::Null => {}
            Value::Object(_) if value.get("kind").and_then(Value::as_str) == Some("List") => {
                let items = value.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
                objects.extend(items);
            }
            Value::Object(_) => objects.push(value),
            _ => {
                return Err(KubernetesError::InvalidManifest(format!("document {} is not a mapping", index + 1)));
            }
        }
    }
    for object in &mut objects {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default().to_owned();
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
        let (_, namespaced) = ResourceRef::info(&api_version, &kind)?;
        if namespaced && object.pointer("/metadata/namespace").and_then(Value::as_str).is_none_or(str::is_empty) {
            let metadata = object
                .as_object_mut()
                .map(|o| o.entry("metadata").or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut)
                .ok_or_else(|| KubernetesError::InvalidManifest(format!("{kind}: metadata is not a mapping")))?;
            metadata.insert("namespace".into(), Value::String(default_namespace.to_owned()));
        }
        ResourceRef::from_object(object)?;
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_group_version_and_scope() {
        let deploy = ResourceRef::new("apps/v1", "Deployment", Some("default"), "web").unwrap();
        assert_eq!(deploy.path_segments().unwrap().join("/"), "apis/apps/v1/namespaces/default/deployments/web");
        let svc = ResourceRef::new("v1", "Service", Some("vnf"), "web").unwrap();
        assert_eq!(svc.path_segments().unwrap().join("/"), "api/v1/namespaces/vnf/services/web");
        let ns = ResourceRef::new("v1", "Namespace", Some("ignored"), "vnf").unwrap();
        assert_eq!(ns.path_segments().unwrap().join("/"), "api/v1/namespaces/vnf");
        let job = ResourceRef::new("batch/v1", "Job", Some("default"), "init").unwrap();
        assert_eq!(job.path_segments().unwrap().join("/"), "apis/batch/v1/namespaces/default/jobs/init");
        let pvc = ResourceRef::new("v1", "PersistentVolumeClaim", Some("default"), "data").unwrap();
        assert_eq!(pvc.path_segments().unwrap().join("/"), "api/v1/namespaces/default/persistentvolumeclaims/data");
    }

    #[test]
    fn unknown_kinds_and_missing_names_are_refused() {
        let err = ResourceRef::new("example.com/v1", "Widget", Some("default"), "w").unwrap_err();
        assert_eq!(err.to_string(), "unsupported Kubernetes kind Widget (example.com/v1)");
        assert!(ResourceRef::new("v1", "Pod", Some("default"), "").is_err());
        assert!(ResourceRef::new("v1", "Pod", None, "p").is_err());
    }

    #[test]
    fn multi_document_yaml_gets_the_default_namespace_where_none_is_written() {
        let text = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n---\n\n---\n\
                    apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: other\n---\n\
                    apiVersion: v1\nkind: Namespace\nmetadata:\n  name: vnf\n";
        let objects = parse_manifests(text, "vnf").unwrap();
        let refs: Vec<String> = objects.iter().map(|o| ResourceRef::from_object(o).unwrap().to_string()).collect();
        assert_eq!(refs, ["ConfigMap vnf/conf", "Deployment other/web", "Namespace vnf"]);
        assert!(objects[2].pointer("/metadata/namespace").is_none());
    }

    #[test]
    fn list_documents_are_flattened_and_bad_documents_named() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n";
        assert_eq!(parse_manifests(text, "default").unwrap()[0]["metadata"]["namespace"], "default");
        let err = parse_manifests("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n- 1\n", "d").unwrap_err();
        assert_eq!(err.to_string(), "invalid Kubernetes manifest: document 2 is not a mapping");
        let err = parse_manifests("apiVersion: v1\nkind: Pod\nmetadata: {}\n", "d").unwrap_err();
        assert_eq!(err.to_string(), "invalid Kubernetes manifest: Pod without metadata.name");
    }
}
