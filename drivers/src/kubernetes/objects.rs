//! The members of Kubernetes API objects the drivers read (pods, services, workloads and
//! their label selectors), as serde views over the objects the API returns or the package's
//! manifests hold. Other members are ignored; a member of another type reads as absent.

use serde::Deserialize;
use serde_json::{Map, Value};

/// `metadata` of an object.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Meta<'a> {
    #[serde(borrow)]
    pub(super) name: Option<&'a str>,
    #[serde(borrow)]
    pub(super) namespace: Option<&'a str>,
    #[serde(borrow)]
    pub(super) uid: Option<&'a str>,
    #[serde(borrow)]
    pub(super) creation_timestamp: Option<&'a str>,
    #[serde(borrow)]
    pub(super) deletion_timestamp: Option<&'a str>,
    pub(super) labels: Option<Map<String, Value>>,
}

/// A label selector (`spec.selector` of a workload).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct LabelSelector {
    pub(super) match_labels: Option<Map<String, Value>>,
    pub(super) match_expressions: Vec<SelectorRequirement>,
}

/// A `matchExpressions` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct SelectorRequirement {
    pub(super) key: Option<String>,
    pub(super) operator: Option<String>,
    pub(super) values: Vec<Value>,
}

/// `spec.template` of a workload.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PodTemplate<'a> {
    #[serde(borrow)]
    pub(super) metadata: Meta<'a>,
}

/// A Service port.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ServicePort {
    pub(super) name: Option<String>,
    pub(super) protocol: Option<String>,
    pub(super) port: Option<u64>,
}

/// A load balancer's `status.loadBalancer.ingress` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Ingress {
    pub(super) ip: Option<String>,
}

/// `status.loadBalancer` of a Service.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct LoadBalancerStatus {
    pub(super) ingress: Vec<Ingress>,
}

/// `spec` of a workload or a Service (the members either has).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Spec<'a> {
    /// A workload's label selector; a Service's selector is a plain label map.
    pub(super) selector: Option<Value>,
    #[serde(borrow)]
    pub(super) template: PodTemplate<'a>,
    pub(super) ports: Vec<ServicePort>,
    pub(super) r#type: Option<String>,
    #[serde(rename = "clusterIP")]
    pub(super) cluster_ip: Option<String>,
    pub(super) ip_families: Vec<String>,
}

/// A `status.conditions` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Condition {
    pub(super) r#type: Option<String>,
    pub(super) reason: Option<String>,
    pub(super) message: Option<String>,
}

/// `status` of a pod, a workload or a Service (the members any has).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Status {
    pub(super) phase: Option<String>,
    pub(super) conditions: Vec<Condition>,
    pub(super) load_balancer: LoadBalancerStatus,
}

/// An object as far as the drivers read it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Object<'a> {
    #[serde(borrow)]
    pub(super) kind: Option<&'a str>,
    #[serde(borrow)]
    pub(super) metadata: Meta<'a>,
    #[serde(borrow)]
    pub(super) spec: Spec<'a>,
    pub(super) status: Status,
}

impl<'a> Object<'a> {
    /// The view of `object` (empty when it is no object).
    pub(super) fn of(object: &'a Value) -> Self {
        Self::deserialize(object).unwrap_or_default()
    }
}

/// The `metadata` of `object` (empty when it has none of this shape).
pub(super) fn meta(object: &Value) -> Meta<'_> {
    #[derive(Deserialize)]
    struct Metadata<'a> {
        #[serde(borrow, default)]
        metadata: Meta<'a>,
    }
    Metadata::deserialize(object).map(|object| object.metadata).unwrap_or_default()
}
