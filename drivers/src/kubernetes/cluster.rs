//! What the Kubernetes and Helm drivers share: the state kept in `vim_state`
//! ([`ClusterState`]), one run against a cluster ([`KubernetesRun`]) with its waits for
//! the VDUs' pods, the inventory of those pods, and the CISM's view of the workloads
//! (SOL003 V4.3.1 McioInfo, VirtualCpInfo).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use solgate_vnfpkg::Flavour;

use super::helm_cli::HelmCli;
use super::objects::{LabelSelector, Object, meta};
use super::{KubernetesClient, PodCondition, ResourceRef, WaitOptions};
use crate::infra::{InfraContext, Inventory, ResourceHandle, VnfcResource};
use crate::run::{ActionRun, CancelGuard, Halt, failed};

/// `additionalParams` key listing the manifests (Tacker's CNF instantiate).
pub const DEF_FILES_PARAM: &str = "lcm-kubernetes-def-files";

/// An applied object, as kept in `vim_state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ObjectRef {
    api_version: String,
    pub(super) kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) namespace: Option<String>,
    pub(super) name: String,
}

impl ObjectRef {
    pub(super) fn from_resource(target: &ResourceRef) -> Self {
        Self {
            api_version: target.api_version.clone(),
            kind: target.kind.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
        }
    }

    pub(super) fn resource(&self) -> Result<ResourceRef, Halt> {
        ResourceRef::new(&self.api_version, &self.kind, self.namespace.as_deref(), &self.name)
            .map_err(|error| failed(error.to_string()))
    }

    pub(super) fn is_scalable(&self) -> bool {
        matches!(self.kind.as_str(), "Deployment" | "StatefulSet" | "ReplicaSet")
    }
}

/// The workload of a VDU and the label selector of its pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Workload {
    #[serde(flatten)]
    pub(super) object: ObjectRef,
    pub(super) selector: String,
    /// Only pods named so belong to it (Helm charts whose workloads share a selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) pod_prefix: Option<String>,
}

/// What the driver remembers in `Inventory::vim_state`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct ClusterState {
    pub(super) namespace: String,
    pub(super) files: Vec<String>,
    pub(super) objects: Vec<ObjectRef>,
    pub(super) vdus: BTreeMap<String, Workload>,
    /// Replica counts to restore when a STOPPED VNF is started again.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) stopped_replicas: BTreeMap<String, u32>,
    /// VDUs of the plan that no workload of the manifests realizes, with the count the plan
    /// gave them (Tacker ignores them; a later change of that count cannot be made).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) unrealized: BTreeMap<String, u32>,
    /// The Helm release of the VNF (Helm VIMs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) helm: Option<HelmRelease>,
}

/// A package path of a manifest, refused when it could leave the package.
pub(super) fn package_file(package_dir: Option<&Path>, path: &str) -> Result<PathBuf, Halt> {
    let dir = package_dir.ok_or_else(|| failed("the VNF package of the instance is not available"))?;
    let relative = Path::new(path);
    let inside =
        !path.is_empty() && relative.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(failed(format!("{DEF_FILES_PARAM}: {path} is not a path inside the VNF package")));
    }
    Ok(dir.join(relative))
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

fn labels_selector(labels: &Map<String, Value>) -> Vec<String> {
    labels.iter().filter_map(|(key, value)| Some(format!("{key}={}", value.as_str()?))).collect()
}

/// The label selector of a workload's pods: its `spec.selector` (matchLabels and
/// matchExpressions in the text form the API takes), or a bare Pod's own labels.
pub(super) fn selector_of(object: &Value) -> Option<String> {
    let object = Object::of(object);
    let mut terms = Vec::new();
    if object.kind == Some("Pod") {
        terms = labels_selector(object.metadata.labels.as_ref()?);
    } else {
        let selector = LabelSelector::deserialize(object.spec.selector.as_ref()?).ok()?;
        if let Some(labels) = &selector.match_labels {
            terms.extend(labels_selector(labels));
        }
        for expression in &selector.match_expressions {
            let key = expression.key.as_deref()?;
            let values: Vec<&str> = expression.values.iter().filter_map(Value::as_str).collect();
            terms.push(match expression.operator.as_deref()? {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_owned(),
                "DoesNotExist" => format!("!{key}"),
                _ => return None,
            });
        }
    }
    (!terms.is_empty()).then(|| terms.join(","))
}

/// The VDU whose workload `name` is: its `name` property (Tacker), or its id; exactly
/// first, then ignoring case.
pub(super) fn vdu_for_name<'f>(flavour: &'f Flavour, name: &str) -> Option<&'f str> {
    let exact = flavour.vdus.iter().find(|vdu| vdu.name == name || vdu.id == name);
    let loose =
        || flavour.vdus.iter().find(|vdu| vdu.name.eq_ignore_ascii_case(name) || vdu.id.eq_ignore_ascii_case(name));
    exact.or_else(loose).map(|vdu| vdu.id.as_str())
}

pub(super) fn pod_name(pod: &Value) -> Option<&str> {
    meta(pod).name
}

pub(super) fn pod_uid(pod: &Value) -> Option<&str> {
    meta(pod).uid
}

/// One run of an action against the VNF's objects in the cluster.
pub(super) struct KubernetesRun<'c, 'a> {
    /// Limits of every wait.
    pub(super) wait: WaitOptions,
    pub(super) ctx: &'c InfraContext<'a>,
    pub(super) cancel: CancelGuard<'c>,
    pub(super) client: KubernetesClient,
    pub(super) state: ClusterState,
    pub(super) inventory: Inventory,
    /// The `helm` command when the VNF is a Helm release (a Helm VIM).
    pub(super) helm: Option<HelmCli>,
}

impl KubernetesRun<'_, '_> {
    /// Waits one poll interval between two looks at the cluster.
    pub(super) async fn pause(&self, what: &str) -> Result<(), Halt> {
        self.cancel.pause(what, self.wait.poll_interval).await
    }

    pub(super) fn namespace_of<'w>(&'w self, workload: &'w Workload) -> &'w str {
        workload.object.namespace.as_deref().unwrap_or(&self.state.namespace)
    }

    /// Waits until every VDU has its count of Running pods (none for 0) and returns them.
    pub(super) async fn wait_vdus(&self, counts: &BTreeMap<String, u32>) -> Result<BTreeMap<String, Vec<Value>>, Halt> {
        let mut pods = BTreeMap::new();
        for (vdu_id, workload) in &self.state.vdus {
            let Some(count) = counts.get(vdu_id).copied() else { continue };
            pods.insert(vdu_id.clone(), self.wait_workload(workload, count).await?);
        }
        Ok(pods)
    }

    pub(super) async fn wait_workload(&self, workload: &Workload, count: u32) -> Result<Vec<Value>, Halt> {
        let namespace = self.namespace_of(workload);
        let object = &workload.object;
        if object.kind == "Deployment" {
            let what = format!("waiting for Deployment {namespace}/{} to become available", object.name);
            let waited = self.client.wait_deployment_available(namespace, &object.name, &self.wait);
            self.cancel.guard(&what, waited).await?;
        }
        let condition = match object.kind.as_str() {
            "DaemonSet" => PodCondition::Running { count: None },
            _ if count == 0 => PodCondition::Gone,
            _ => PodCondition::Running { count: Some(count as usize) },
        };
        let what = format!("waiting for the pods of {} {namespace}/{}", object.kind, object.name);
        let prefix = workload.pod_prefix.as_deref();
        let waited = self.client.wait_pods_named(namespace, &workload.selector, prefix, condition, &self.wait);
        let mut pods = self.cancel.guard(&what, waited).await?;
        if object.kind == "Pod" {
            pods.retain(|pod| pod_name(pod) == Some(object.name.as_str()));
        }
        Ok(pods)
    }

    /// The inventory for the pods found per VDU (VDUs not in `pods` keep their VNFCs).
    pub(super) fn map_pods(&mut self, pods: &BTreeMap<String, Vec<Value>>) {
        let vim_connection_id = Some(self.ctx.vim.id.clone()).filter(|id| !id.is_empty());
        let previous = std::mem::take(&mut self.inventory.vnfc_resources);
        let mut unclaimed: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for (vdu_id, list) in pods {
            let mut fresh: Vec<&Value> = list
                .iter()
                .filter(|pod| {
                    !previous
                        .iter()
                        .any(|v| &v.vdu_id == vdu_id && Some(v.compute_resource.resource_id.as_str()) == pod_name(pod))
                })
                .collect();
            // Oldest first, so replacements and new VNFCs follow creation order.
            fresh.sort_by_key(|pod| {
                (
                    meta(pod).creation_timestamp.unwrap_or_default().to_owned(),
                    pod_name(pod).unwrap_or_default().to_owned(),
                )
            });
            unclaimed.insert(vdu_id.as_str(), fresh);
        }
        let vnfc = |id: String, vdu_id: &str, pod: &Value, kind: &str, namespace: &str| VnfcResource {
            id,
            vdu_id: vdu_id.to_owned(),
            compute_resource: ResourceHandle {
                vim_connection_id: vim_connection_id.clone(),
                resource_id: pod_name(pod).unwrap_or_default().to_owned(),
                vim_level_resource_type: Some(kind.to_owned()),
            },
            storage_resource_ids: Vec::new(),
            vnfc_cp_info: Vec::new(),
            zone_id: None,
            metadata: Some(json!({"namespace": namespace})),
        };
        let mut mapped = Vec::new();
        for old in previous {
            let (Some(list), Some(workload)) = (pods.get(&old.vdu_id), self.state.vdus.get(&old.vdu_id)) else {
                mapped.push(old);
                continue;
            };
            let namespace = self.namespace_of(workload);
            if let Some(pod) = list.iter().find(|pod| pod_name(pod) == Some(old.compute_resource.resource_id.as_str()))
            {
                mapped.push(vnfc(old.id, &old.vdu_id, pod, &workload.object.kind, namespace));
            } else if let Some(pod) =
                unclaimed.get_mut(old.vdu_id.as_str()).filter(|f| !f.is_empty()).map(|f| f.remove(0))
            {
                mapped.push(vnfc(old.id, &old.vdu_id, pod, &workload.object.kind, namespace));
            }
        }
        for (vdu_id, fresh) in unclaimed {
            let Some(workload) = self.state.vdus.get(vdu_id) else { continue };
            for pod in fresh {
                let id = uuid::Uuid::new_v4().to_string();
                mapped.push(vnfc(id, vdu_id, pod, &workload.object.kind, self.namespace_of(workload)));
            }
        }
        self.inventory.vnfc_resources = mapped;
        self.sync_vim_state();
    }
}

impl KubernetesRun<'_, '_> {
    /// SOL003 V4.3.1 `mcioInfo` and `virtualCpInfo`, read from the cluster's own objects
    /// once the action is done: each VDU's workload (desired and available instances as its
    /// controller reports them) and each Service of the VNF.
    pub(super) async fn read_cism_info(&mut self) -> Result<(), Halt> {
        let vim = self.ctx.vim;
        let cism_id = vim.vim_id.clone().filter(|id| !id.is_empty()).unwrap_or_else(|| vim.id.clone());
        let mut workloads = BTreeMap::new();
        let mut mcios = Vec::new();
        for (vdu_id, workload) in &self.state.vdus {
            let target = workload.object.resource()?;
            let Some(object) = self.cancel.guard(&format!("reading {target}"), self.client.get(&target)).await? else {
                continue;
            };
            if let Some(mcio) = mcio_info(vdu_id, &workload.object, self.namespace_of(workload), &cism_id, &object) {
                mcios.push(mcio);
            }
            workloads.insert(vdu_id.clone(), object);
        }
        let mut virtual_cps = Vec::new();
        for object in self.state.objects.iter().filter(|o| o.kind == "Service") {
            let target = object.resource()?;
            let Some(service) = self.cancel.guard(&format!("reading {target}"), self.client.get(&target)).await? else {
                continue;
            };
            if let Some(info) = self.virtual_cp_info(&service, &workloads) {
                virtual_cps.push(info);
            }
        }
        self.inventory.mcio_info = mcios;
        self.inventory.virtual_cp_info = virtual_cps;
        Ok(())
    }

    /// VirtualCpInfo of a Service: the VDUs whose pods it selects, and the VNFD's VirtualCp
    /// for it (named like the Service, else targeting exactly those VDUs). A Service that
    /// fronts no VDU, or that no VirtualCp describes, has none (cpdId is mandatory).
    fn virtual_cp_info(&self, service: &Value, workloads: &BTreeMap<String, Value>) -> Option<Value> {
        let service = Object::of(service);
        let name = service.metadata.name?;
        let selector = service.spec.selector.as_ref()?.as_object().filter(|s| !s.is_empty())?;
        let vdu_ids: Vec<&String> = workloads
            .iter()
            .filter(|(_, workload)| {
                let workload = Object::of(workload);
                let labels = if workload.kind == Some("Pod") {
                    workload.metadata.labels
                } else {
                    workload.spec.template.metadata.labels
                };
                labels.is_some_and(|labels| selector.iter().all(|(key, value)| labels.get(key) == Some(value)))
            })
            .map(|(vdu_id, _)| vdu_id)
            .collect();
        if vdu_ids.is_empty() {
            return None;
        }
        let cpds: Vec<&solgate_vnfpkg::VirtualCpd> =
            self.ctx.vnfd.flavours.iter().flat_map(|flavour| &flavour.virtual_cps).collect();
        let same_name = |id: &str| id.replace('_', "-").eq_ignore_ascii_case(name);
        let cpd = cpds.iter().find(|cpd| same_name(&cpd.id)).or_else(|| {
            cpds.iter().find(|cpd| cpd.vdus.len() == vdu_ids.len() && cpd.vdus.iter().all(|vdu| vdu_ids.contains(&vdu)))
        })?;
        let mut info = Map::new();
        info.insert("cpInstanceId".into(), json!(name));
        info.insert("cpdId".into(), json!(cpd.id));
        let mut handle = Map::new();
        if !self.ctx.vim.id.is_empty() {
            handle.insert("vimConnectionId".into(), json!(self.ctx.vim.id));
        }
        handle.insert("resourceId".into(), json!(name));
        handle.insert("vimLevelResourceType".into(), json!("Service"));
        info.insert("resourceHandle".into(), Value::Object(handle));
        if let Some(address) = virtual_cp_address(&service) {
            info.insert(
                "cpProtocolInfo".into(),
                json!([{"layerProtocol": "IP_FOR_VIRTUAL_CP", "virtualCpAddress": address}]),
            );
        }
        info.insert("vduIds".into(), json!(vdu_ids));
        let ports: Vec<Value> = service
            .spec
            .ports
            .iter()
            .filter_map(|port| {
                let number = port.port?;
                let protocol = port.protocol.as_deref().unwrap_or("TCP");
                // An unnamed port (a Service may have one) is named by its number.
                let name = port.name.clone().unwrap_or_else(|| number.to_string());
                // The port comes from the package's manifest; the NFVO cannot configure it.
                Some(json!({"name": name, "protocol": protocol, "port": number, "portConfigurable": false}))
            })
            .collect();
        if !ports.is_empty() {
            info.insert("additionalServiceInfo".into(), json!([{"portInfo": ports}]));
        }
        let mut metadata = Map::new();
        if let Some(namespace) = service.metadata.namespace {
            metadata.insert("namespace".into(), json!(namespace));
        }
        if let Some(kind) = &service.spec.r#type {
            metadata.insert("serviceType".into(), json!(kind));
        }
        if let Some(ip) = service.spec.cluster_ip.as_deref().filter(|ip| *ip != "None") {
            metadata.insert("clusterIP".into(), json!(ip));
        }
        if !metadata.is_empty() {
            info.insert("metadata".into(), Value::Object(metadata));
        }
        Some(Value::Object(info))
    }
}

/// McioInfo of a VDU's workload (SOL003 V4.3.1 clause 5.5.3.x; `mcioId` is `<kind>/<name>`,
/// NOTE 3): the desired and available instances its controller reports. A bare Pod has no
/// controller, so no McioInfo.
pub(super) fn mcio_info(
    vdu_id: &str,
    object: &ObjectRef,
    namespace: &str,
    cism_id: &str,
    live: &Value,
) -> Option<Value> {
    let int = |pointer: &str| live.pointer(pointer).and_then(Value::as_u64);
    let (desired, available) = match object.kind.as_str() {
        "Deployment" | "StatefulSet" | "ReplicaSet" => {
            (int("/spec/replicas").unwrap_or(1), int("/status/availableReplicas").unwrap_or(0))
        }
        "DaemonSet" => {
            (int("/status/desiredNumberScheduled").unwrap_or(0), int("/status/numberAvailable").unwrap_or(0))
        }
        _ => return None,
    };
    Some(json!({
        "mcioId": format!("{}/{}", object.kind, object.name),
        "mcioName": object.name,
        "mcioNamespace": namespace,
        "vduId": vdu_id,
        "cismId": cism_id,
        "mcioType": object.kind,
        "desiredInstances": desired,
        "availableInstances": available,
    }))
}

/// VirtualCpAddressInfo of a Service: the IP family of its cluster IP, and the load
/// balancer's address once the cloud gave one.
fn virtual_cp_address(service: &Object<'_>) -> Option<Value> {
    let family = service.spec.ip_families.first().cloned().or_else(|| {
        let ip = service.spec.cluster_ip.as_deref().filter(|ip| *ip != "None")?;
        Some(if ip.contains(':') { "IPv6" } else { "IPv4" }.to_owned())
    })?;
    let mut address = Map::new();
    address.insert("type".into(), json!(if family == "IPv6" { "IPV6" } else { "IPV4" }));
    if let Some(ip) = service.status.load_balancer.ingress.first().and_then(|ingress| ingress.ip.as_deref()) {
        address.insert("loadBalancerIp".into(), json!(ip));
    }
    Some(Value::Object(address))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubernetes::INSTANCE_LABEL;

    #[test]
    fn selector_text_follows_the_label_selector_syntax() {
        let deployment = json!({"kind": "Deployment", "spec": {"selector": {
            "matchLabels": {"app": "vdu1"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]},
                {"key": "canary", "operator": "DoesNotExist"}]}}});
        assert_eq!(selector_of(&deployment).as_deref(), Some("app=vdu1,tier in (web,api),!canary"));
        let pod = json!({"kind": "Pod", "metadata": {"labels": {"app": "one", INSTANCE_LABEL: "i-1"}}});
        assert_eq!(selector_of(&pod).as_deref(), Some("app=one,tacker_vnf_instance_id=i-1"));
        assert_eq!(selector_of(&json!({"kind": "StatefulSet", "spec": {}})), None);
    }

    #[test]
    fn mcio_info_counts_as_each_controller_reports() {
        let daemon = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "DaemonSet".into(),
            namespace: Some("vnf".into()),
            name: "agent".into(),
        };
        let live =
            json!({"kind": "DaemonSet", "spec": {}, "status": {"desiredNumberScheduled": 3, "numberAvailable": 2}});
        let info = mcio_info("VDU3", &daemon, "vnf", "cism-1", &live).unwrap();
        assert_eq!(info["mcioId"], "DaemonSet/agent");
        assert_eq!((info["desiredInstances"].as_u64(), info["availableInstances"].as_u64()), (Some(3), Some(2)));
        let pod = ObjectRef { kind: "Pod".into(), ..daemon };
        assert_eq!(mcio_info("VDU3", &pod, "vnf", "cism-1", &json!({"kind": "Pod"})), None, "no controller, no MCIO");
    }
}
