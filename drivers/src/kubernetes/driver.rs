//! The Kubernetes infra driver: the manifests an instantiate request names, applied to one
//! namespace, with one workload (Deployment, StatefulSet, ReplicaSet, DaemonSet or Pod) per
//! VDU — Tacker's v2 CNF driver (`sol_refactored/infra_drivers/kubernetes`) conventions:
//!
//! - `additionalParams.lcm-kubernetes-def-files`: package paths of the manifests (read from
//!   the extracted package); `additionalParams.namespace` overrides the namespace of every
//!   namespaced object, else the manifests' own (they must agree) or the VIM's
//!   (`vimConnectionInfo.extra.namespace`, default `default`).
//! - A VDU's workload is the object whose `metadata.name` is the VDU's `name` (Tacker), or
//!   its node id, compared case-insensitively when nothing matches exactly (Kubernetes
//!   names are lower case). Every object gets label `tacker_vnf_instance_id=<instance id>`.
//! - Realize: the first one (or one naming def files again) applies every object with
//!   server-side apply, `spec.replicas` set to the plan's count; later ones PATCH the
//!   workloads' `scale` subresource. Then it waits until each Deployment is available and
//!   each VDU has exactly its count of Running pods (pods found with the workload's own
//!   `spec.selector`).
//! - Inventory: one VnfcResourceInfo per pod (resourceId = pod name, vimLevelResourceType =
//!   the workload kind). A VNFC keeps its id while its pod lives; a pod that replaces a
//!   vanished one of the same VDU (heal, rolling update, restart after STOPPED) takes over
//!   the vanished VNFC's id; other pods are new VNFCs.
//! - Heal: deletes the VNFCs' pods and waits for replacements (Tacker's heal).
//! - Operate: STOPPED scales every VDU to 0 (remembering the counts), STARTED scales back.
//!   The VNFC entries stay while stopped, so the instance keeps its shape.
//! - Teardown: deletes the applied objects, last first (foreground propagation), waits
//!   until the VDUs' pods and the objects are gone.
//!
//! `vim_state` holds the namespace, the def files, the applied objects and the VDU workloads.
//!
//! Re-runs. After a conductor crash another conductor runs the same action again from the
//! pre-operation inventory, which does not know what the crashed run made. Every step finds
//! it instead of making it twice: objects are applied server-side by name (an object that
//! exists is updated; a 409 `AlreadyExists` from a create race is applied again and adopts
//! it), scaling sets the absolute replica count, a heal whose pod is gone already waits for
//! the replacement, deletions that find 404 count as done, and waits just wait. The pods
//! found are mapped to the VNFCs by name, then as replacements of vanished ones.
//!
//! Failures. A failure that asking again may cure is reported transient
//! (`DriverError::transient`, retried by the conductor with backoff): the API server
//! unreachable, a connection reset or request timeout, HTTP 429 and 500/502/503/504. Not
//! transient: other 4xx (an invalid manifest's 422, 403, 401), an untrusted certificate, a
//! Deployment whose progress deadline passed, and a wait that ran out of time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use solgate_vnfpkg::Flavour;
use tokio::time::Instant;

use super::{KubernetesClient, PodCondition, ResourceRef, VimCredentials, WaitOptions};
use crate::infra::{
    DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, ResourceHandle,
    VIM_TYPE_KUBERNETES, VnfcResource,
};
use crate::run::{ActionRun, CancelGuard, Halt, failed, run_action, vnfd_flavour};

/// Label Tacker puts on every object of a VNF instance (kubernetes_resource.VNF_INSTANCE_ID_LABEL).
pub const INSTANCE_LABEL: &str = "tacker_vnf_instance_id";
/// `additionalParams` key listing the manifests (Tacker's CNF instantiate).
pub const DEF_FILES_PARAM: &str = "lcm-kubernetes-def-files";
/// Kinds that can hold a VDU (Tacker's kubernetes_utils.TARGET_KIND).
const WORKLOAD_KINDS: &[&str] = &["Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Pod"];

/// Kubernetes infra driver for `ETSINFV.KUBERNETES.V_1` VIMs.
#[derive(Debug, Clone)]
pub struct KubernetesDriver {
    /// Limits of every wait (Tacker: `kubernetes_vim_rsc_wait_timeout` 500 s, polls every 10 s).
    pub wait: WaitOptions,
    /// How often a running wait checks whether the operation was cancelled.
    pub cancel_poll: Duration,
    /// Extra trust anchors and whether a VIM may skip certificate checks (`[tls]`).
    pub trust: crate::VimTrust,
}

impl Default for KubernetesDriver {
    fn default() -> Self {
        crate::DriverSettings::default().kubernetes(&crate::VimTrust::default())
    }
}

/// An applied object, as kept in `vim_state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ObjectRef {
    api_version: String,
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
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

    fn is_scalable(&self) -> bool {
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
    stopped_replicas: BTreeMap<String, u32>,
    /// VDUs of the plan that no workload of the manifests realizes, with the count the plan
    /// gave them (Tacker ignores them; a later change of that count cannot be made).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) unrealized: BTreeMap<String, u32>,
    /// The Helm release of the VNF (Helm VIMs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) helm: Option<super::helm::HelmRelease>,
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

/// `additionalParams.lcm-kubernetes-def-files`, when given.
fn def_files(params: &Value) -> Result<Option<Vec<String>>, Halt> {
    match params.get(DEF_FILES_PARAM) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::to_owned).ok_or_else(|| failed(format!("{DEF_FILES_PARAM} must list strings")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(failed(format!("{DEF_FILES_PARAM} must be a list of package paths"))),
    }
}

fn labels_selector(labels: &Map<String, Value>) -> Vec<String> {
    labels.iter().filter_map(|(key, value)| Some(format!("{key}={}", value.as_str()?))).collect()
}

/// The label selector of a workload's pods: its `spec.selector` (matchLabels and
/// matchExpressions in the text form the API takes), or a bare Pod's own labels.
pub(super) fn selector_of(object: &Value) -> Option<String> {
    let mut terms = Vec::new();
    if object["kind"] == "Pod" {
        terms = labels_selector(object.pointer("/metadata/labels")?.as_object()?);
    } else {
        let selector = object.pointer("/spec/selector")?;
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            terms.extend(labels_selector(labels));
        }
        for expression in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
            let key = expression["key"].as_str()?;
            let values: Vec<&str> =
                expression["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            terms.push(match expression["operator"].as_str()? {
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
    pod.pointer("/metadata/name").and_then(Value::as_str)
}

fn pod_uid(pod: &Value) -> Option<&str> {
    pod.pointer("/metadata/uid").and_then(Value::as_str)
}

/// One run of an action against the VNF's objects in the cluster.
pub(super) struct KubernetesRun<'c, 'a> {
    pub(super) driver: &'c KubernetesDriver,
    pub(super) ctx: &'c InfraContext<'a>,
    pub(super) cancel: CancelGuard<'c>,
    pub(super) client: KubernetesClient,
    pub(super) state: ClusterState,
    pub(super) inventory: Inventory,
    /// The `helm` command when the VNF is a Helm release (a Helm VIM).
    pub(super) helm: Option<super::helm::HelmCli>,
}

impl KubernetesRun<'_, '_> {
    /// Waits one poll interval between two looks at the cluster.
    async fn pause(&self, what: &str) -> Result<(), Halt> {
        self.cancel.pause(what, self.driver.wait.poll_interval).await
    }

    fn namespace_of<'w>(&'w self, workload: &'w Workload) -> &'w str {
        workload.object.namespace.as_deref().unwrap_or(&self.state.namespace)
    }

    /// Reads the manifests: the namespace settled, the instance label on every object.
    fn load_objects(&mut self, files: &[String]) -> Result<Vec<Value>, Halt> {
        let mut objects = Vec::new();
        for file in files {
            let path = package_file(self.ctx.package_dir, file)?;
            let text = std::fs::read_to_string(&path).map_err(|error| failed(format!("reading {file}: {error}")))?;
            let parsed = self.client.parse_manifests(&text).map_err(|error| failed(format!("{file}: {error}")))?;
            objects.extend(parsed);
        }
        // `parse_manifests` gave every namespaced object a namespace; an explicit one wins.
        let explicit = if self.state.namespace.is_empty() {
            self.ctx.additional_params.get("namespace").and_then(Value::as_str).filter(|ns| !ns.is_empty())
        } else {
            Some(self.state.namespace.as_str())
        };
        let mut namespaces = BTreeSet::new();
        for object in &mut objects {
            let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else { continue };
            if metadata.contains_key("namespace") {
                if let Some(ns) = explicit {
                    metadata.insert("namespace".into(), json!(ns));
                }
                namespaces.extend(metadata["namespace"].as_str().map(str::to_owned));
            }
            let labels = metadata.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert(INSTANCE_LABEL.into(), json!(self.ctx.instance_id));
            }
        }
        if namespaces.len() > 1 {
            let list: Vec<_> = namespaces.into_iter().collect();
            return Err(failed(format!(
                "the manifests name several namespaces ({}); give additionalParams.namespace",
                list.join(", ")
            )));
        }
        self.state.namespace = namespaces.pop_first().unwrap_or_else(|| self.client.namespace().to_owned());
        Ok(objects)
    }

    async fn apply_files(&mut self, files: Vec<String>, plan: &DeploymentPlan) -> Result<(), Halt> {
        let mut objects = self.load_objects(&files)?;
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?.clone();

        let mut vdus: BTreeMap<String, usize> = BTreeMap::new();
        for (index, object) in objects.iter().enumerate() {
            let kind = object["kind"].as_str().unwrap_or_default();
            let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            if !WORKLOAD_KINDS.contains(&kind) {
                continue;
            }
            if let Some(vdu_id) = vdu_for_name(&flavour, name)
                && let Some(other) = vdus.insert(vdu_id.to_owned(), index)
            {
                return Err(failed(format!(
                    "VDU {vdu_id} matches two workloads: {} and {kind} {name}",
                    objects[other]["kind"].as_str().unwrap_or_default()
                )));
            }
        }
        if vdus.is_empty() && plan.vdus.iter().any(|target| target.count > 0) {
            let names: Vec<&str> = flavour.vdus.iter().map(|vdu| vdu.name.as_str()).collect();
            return Err(failed(format!(
                "no Deployment, StatefulSet, ReplicaSet, DaemonSet or Pod in {} is named after a VDU of flavour {} ({})",
                files.join(", "),
                plan.flavour_id,
                names.join(", ")
            )));
        }
        let mut unrealized = BTreeMap::new();
        for target in &plan.vdus {
            let Some(index) = vdus.get(&target.vdu_id) else {
                // Tacker's packages often describe more VDUs than their manifests hold (the
                // same VNFD serves several samples); as Tacker, those VDUs get no VNFCs.
                if target.count > 0 {
                    tracing::info!(vdu = %target.vdu_id, files = %files.join(", "), "no workload in the manifests for this VDU");
                    unrealized.insert(target.vdu_id.clone(), target.count);
                }
                continue;
            };
            let object = &mut objects[*index];
            match object["kind"].as_str().unwrap_or_default() {
                "Pod" if target.count != 1 => {
                    return Err(failed(format!(
                        "VDU {} is a bare Pod and cannot have {} instances",
                        target.vdu_id, target.count
                    )));
                }
                "Deployment" | "StatefulSet" | "ReplicaSet" => {
                    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.insert("replicas".into(), json!(target.count));
                    }
                }
                _ => {}
            }
        }
        let mut workloads = BTreeMap::new();
        for (vdu_id, index) in &vdus {
            let object = &objects[*index];
            let target = ResourceRef::from_object(object).map_err(|error| failed(error.to_string()))?;
            let selector = selector_of(object)
                .ok_or_else(|| failed(format!("{target} of VDU {vdu_id} has no label selector for its pods")))?;
            workloads.insert(
                vdu_id.clone(),
                Workload { object: ObjectRef::from_resource(&target), selector, pod_prefix: None },
            );
        }
        // Recorded before applying: whatever gets applied can be found again by a retry or rollback.
        let previous = std::mem::take(&mut self.state.objects);
        let mut recorded = previous.clone();
        self.state.vdus.extend(workloads.clone());
        self.state.files = files;
        self.state.objects = recorded.clone();
        self.sync_vim_state();

        let mut applied = Vec::new();
        for object in &objects {
            let target = ResourceRef::from_object(object).map_err(|error| failed(error.to_string()))?;
            self.cancel.guard(&format!("applying {target}"), self.client.apply(object)).await?;
            let reference = ObjectRef::from_resource(&target);
            if !recorded.contains(&reference) {
                recorded.push(reference.clone());
                self.state.objects = recorded.clone();
                self.sync_vim_state();
            }
            applied.push(reference);
        }
        // Objects the new manifests no longer have (change_vnfpkg) go.
        for stale in previous.iter().rev().filter(|o| !applied.contains(o)) {
            let target = stale.resource()?;
            self.cancel.guard(&format!("deleting {target}"), self.client.delete(&target)).await?;
        }
        self.state.objects = applied;
        self.state.vdus = workloads;
        self.state.unrealized = unrealized;
        self.sync_vim_state();
        Ok(())
    }

    /// Sets each workload's replicas through its `scale` subresource (Tacker's scale).
    /// Every scalable VDU is set, not only those whose count changed: after a failed
    /// attempt the inventory may not tell what the cluster was last asked for.
    async fn scale_to(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        for (vdu_id, workload) in &self.state.vdus {
            let count = plan.vdus.iter().find(|t| &t.vdu_id == vdu_id).map_or(0, |t| t.count);
            if !workload.object.is_scalable() {
                if workload.object.kind == "Pod" && count != 1 {
                    return Err(failed(format!("VDU {vdu_id} is a bare Pod and cannot have {count} instances")));
                }
                continue;
            }
            let target = workload.object.resource()?;
            self.cancel.guard(&format!("scaling {target} to {count}"), self.client.scale(&target, count)).await?;
        }
        for target in &plan.vdus {
            // Such a VDU has no VNFCs, so later plans give it none; only a change is refused.
            let unrealized = self.state.unrealized.get(&target.vdu_id).copied().unwrap_or(0);
            if ![0, unrealized].contains(&target.count) && !self.state.vdus.contains_key(&target.vdu_id) {
                return Err(failed(format!(
                    "VDU {} has no Kubernetes workload, so it cannot have {} instances",
                    target.vdu_id, target.count
                )));
            }
        }
        Ok(())
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

    async fn wait_workload(&self, workload: &Workload, count: u32) -> Result<Vec<Value>, Halt> {
        let namespace = self.namespace_of(workload);
        let object = &workload.object;
        if object.kind == "Deployment" {
            let what = format!("waiting for Deployment {namespace}/{} to become available", object.name);
            let waited = self.client.wait_deployment_available(namespace, &object.name, &self.driver.wait);
            self.cancel.guard(&what, waited).await?;
        }
        let condition = match object.kind.as_str() {
            "DaemonSet" => PodCondition::Running { count: None },
            _ if count == 0 => PodCondition::Gone,
            _ => PodCondition::Running { count: Some(count as usize) },
        };
        let what = format!("waiting for the pods of {} {namespace}/{}", object.kind, object.name);
        let prefix = workload.pod_prefix.as_deref();
        let waited = self.client.wait_pods_named(namespace, &workload.selector, prefix, condition, &self.driver.wait);
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
                    pod.pointer("/metadata/creationTimestamp").and_then(Value::as_str).unwrap_or_default().to_owned(),
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
        let name = service.pointer("/metadata/name")?.as_str()?;
        let selector = service.pointer("/spec/selector")?.as_object().filter(|s| !s.is_empty())?;
        let vdu_ids: Vec<&String> = workloads
            .iter()
            .filter(|(_, workload)| {
                let labels = if workload["kind"] == "Pod" {
                    workload.pointer("/metadata/labels")
                } else {
                    workload.pointer("/spec/template/metadata/labels")
                };
                labels
                    .and_then(Value::as_object)
                    .is_some_and(|labels| selector.iter().all(|(key, value)| labels.get(key) == Some(value)))
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
        if let Some(address) = virtual_cp_address(service) {
            info.insert(
                "cpProtocolInfo".into(),
                json!([{"layerProtocol": "IP_FOR_VIRTUAL_CP", "virtualCpAddress": address}]),
            );
        }
        info.insert("vduIds".into(), json!(vdu_ids));
        let ports: Vec<Value> = service
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|port| {
                let number = port.get("port")?.as_u64()?;
                let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                // An unnamed port (a Service may have one) is named by its number.
                let name = port.get("name").and_then(Value::as_str).map_or_else(|| number.to_string(), str::to_owned);
                // The port comes from the package's manifest; the NFVO cannot configure it.
                Some(json!({"name": name, "protocol": protocol, "port": number, "portConfigurable": false}))
            })
            .collect();
        if !ports.is_empty() {
            info.insert("additionalServiceInfo".into(), json!([{"portInfo": ports}]));
        }
        let mut metadata = Map::new();
        if let Some(namespace) = service.pointer("/metadata/namespace").and_then(Value::as_str) {
            metadata.insert("namespace".into(), json!(namespace));
        }
        if let Some(kind) = service.pointer("/spec/type").and_then(Value::as_str) {
            metadata.insert("serviceType".into(), json!(kind));
        }
        if let Some(ip) = service.pointer("/spec/clusterIP").and_then(Value::as_str).filter(|ip| *ip != "None") {
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
fn mcio_info(vdu_id: &str, object: &ObjectRef, namespace: &str, cism_id: &str, live: &Value) -> Option<Value> {
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
fn virtual_cp_address(service: &Value) -> Option<Value> {
    let family = service.pointer("/spec/ipFamilies/0").and_then(Value::as_str).map(str::to_owned).or_else(|| {
        let ip = service.pointer("/spec/clusterIP").and_then(Value::as_str).filter(|ip| *ip != "None")?;
        Some(if ip.contains(':') { "IPv6" } else { "IPv4" }.to_owned())
    })?;
    let mut address = Map::new();
    address.insert("type".into(), json!(if family == "IPv6" { "IPV6" } else { "IPV4" }));
    if let Some(ip) = service.pointer("/status/loadBalancer/ingress/0/ip").and_then(Value::as_str) {
        address.insert("loadBalancerIp".into(), json!(ip));
    }
    Some(Value::Object(address))
}

impl ActionRun for KubernetesRun<'_, '_> {
    fn sync_vim_state(&mut self) {
        self.inventory.vim_state = serde_json::to_value(&self.state).unwrap_or(Value::Null);
    }

    async fn realize(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        self.cancel.check("changing the Kubernetes objects")?;
        if self.helm.is_some() {
            return self.realize_release(plan).await;
        }
        let files = def_files(self.ctx.additional_params)?;
        match files {
            Some(files) => self.apply_files(files, plan).await?,
            None if self.state.objects.is_empty() && !self.state.files.is_empty() => {
                let files = self.state.files.clone();
                self.apply_files(files, plan).await?;
            }
            None if self.state.objects.is_empty() => {
                return Err(failed(format!(
                    "additionalParams.{DEF_FILES_PARAM} must name the Kubernetes manifests of the VNF"
                )));
            }
            None => self.scale_to(plan).await?,
        }
        let counts = plan.vdus.iter().map(|t| (t.vdu_id.clone(), t.count)).collect();
        let pods = self.wait_vdus(&counts).await?;
        self.map_pods(&pods);
        self.read_cism_info().await
    }

    /// Deletes the VNFCs' pods and waits for their workloads to replace them (the counts
    /// stay as they are, so the plan is not read).
    async fn heal(&mut self, _plan: &DeploymentPlan, vnfc_ids: &[String]) -> Result<(), Halt> {
        let targets: Vec<VnfcResource> = self
            .inventory
            .vnfc_resources
            .iter()
            .filter(|v| vnfc_ids.is_empty() || vnfc_ids.contains(&v.id))
            .cloned()
            .collect();
        let mut old_uids = BTreeSet::new();
        let mut healed_vdus = BTreeSet::new();
        for vdu_id in targets.iter().map(|v| v.vdu_id.clone()).collect::<BTreeSet<_>>() {
            let workload = self
                .state
                .vdus
                .get(&vdu_id)
                .cloned()
                .ok_or_else(|| failed(format!("VDU {vdu_id} has no Kubernetes workload")))?;
            let namespace = self.namespace_of(&workload).to_owned();
            let what = format!("listing the pods of VDU {vdu_id}");
            let live = self.cancel.guard(&what, self.client.list_pods(&namespace, &workload.selector)).await?.items;
            for vnfc in targets.iter().filter(|v| v.vdu_id == vdu_id) {
                let name = vnfc.compute_resource.resource_id.as_str();
                let Some(pod) = live.iter().find(|pod| pod_name(pod) == Some(name)) else {
                    // Gone already (a retry, or the cluster replaced it): the wait finds its successor.
                    tracing::info!(pod = name, vnfc = %vnfc.id, "heal target pod does not exist");
                    continue;
                };
                old_uids.extend(pod_uid(pod).map(str::to_owned));
                let target =
                    ResourceRef::new("v1", "Pod", Some(&namespace), name).map_err(|error| failed(error.to_string()))?;
                self.cancel.guard(&format!("deleting {target}"), self.client.delete(&target)).await?;
            }
            healed_vdus.insert(vdu_id);
        }
        let deadline = Instant::now() + self.driver.wait.timeout;
        let mut pods = BTreeMap::new();
        for vdu_id in healed_vdus {
            let Some(workload) = self.state.vdus.get(&vdu_id).cloned() else { continue };
            let count = self.inventory.vnfc_resources.iter().filter(|v| v.vdu_id == vdu_id).count() as u32;
            loop {
                let found = self.wait_workload(&workload, count).await?;
                // A StatefulSet's replacement has the old name: the uid tells them apart.
                if !found.iter().any(|pod| pod_uid(pod).is_some_and(|uid| old_uids.contains(uid))) {
                    pods.insert(vdu_id.clone(), found);
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(failed(format!(
                        "timed out waiting for the healed pods of VDU {vdu_id} to be replaced"
                    )));
                }
                self.pause(&format!("waiting for the healed pods of VDU {vdu_id}")).await?;
            }
        }
        self.map_pods(&pods);
        self.read_cism_info().await
    }

    async fn operate(&mut self, change_state_to: &str) -> Result<(), Halt> {
        let stop = match change_state_to {
            "STOPPED" => true,
            "STARTED" => false,
            other => return Err(failed(format!("changeStateTo {other} is not STARTED or STOPPED"))),
        };
        if let Some((vdu_id, workload)) = self.state.vdus.iter().find(|(_, w)| !w.object.is_scalable()) {
            return Err(failed(format!(
                "VDU {vdu_id} is a {}: only Deployment, StatefulSet and ReplicaSet VDUs can be stopped and started",
                workload.object.kind
            )));
        }
        let mut counts = BTreeMap::new();
        for vdu_id in self.state.vdus.keys() {
            let held = self.inventory.vnfc_resources.iter().filter(|v| &v.vdu_id == vdu_id).count() as u32;
            let count = if stop {
                // A second STOP keeps the counts of the first.
                *self.state.stopped_replicas.entry(vdu_id.clone()).or_insert(held)
            } else {
                self.state.stopped_replicas.get(vdu_id).copied().unwrap_or(held)
            };
            counts.insert(vdu_id.clone(), if stop { 0 } else { count });
        }
        for (vdu_id, count) in &counts {
            let Some(workload) = self.state.vdus.get(vdu_id) else { continue };
            let target = workload.object.resource()?;
            self.cancel.guard(&format!("scaling {target} to {count}"), self.client.scale(&target, *count)).await?;
        }
        self.sync_vim_state();
        let pods = self.wait_vdus(&counts).await?;
        if !stop {
            self.state.stopped_replicas.clear();
            self.map_pods(&pods);
        }
        self.inventory.vnf_state = change_state_to.to_owned();
        self.sync_vim_state();
        self.read_cism_info().await
    }

    async fn teardown(&mut self) -> Result<(), Halt> {
        if self.helm.is_some() {
            self.uninstall_release().await?;
        } else if self.state.objects.is_empty()
            && let Some(files) = def_files(self.ctx.additional_params)?
        {
            // Nothing recorded (an instantiate that failed early): what its manifests name.
            for object in self.load_objects(&files)? {
                let target = ResourceRef::from_object(&object).map_err(|error| failed(error.to_string()))?;
                self.state.objects.push(ObjectRef::from_resource(&target));
            }
        }
        let objects = self.state.objects.clone();
        if self.helm.is_none() {
            for object in objects.iter().rev() {
                let target = object.resource()?;
                self.cancel.guard(&format!("deleting {target}"), self.client.delete(&target)).await?;
            }
        }
        for workload in self.state.vdus.values() {
            let namespace = self.namespace_of(workload);
            let what = format!(
                "waiting for the pods of {} {namespace}/{} to be gone",
                workload.object.kind, workload.object.name
            );
            let prefix = workload.pod_prefix.as_deref();
            let waited = self.client.wait_pods_named(
                namespace,
                &workload.selector,
                prefix,
                PodCondition::Gone,
                &self.driver.wait,
            );
            self.cancel.guard(&what, waited).await?;
        }
        // Foreground deletion keeps an owner until its dependents are gone (Tacker waits
        // for every object to disappear too).
        let deadline = Instant::now() + self.driver.wait.timeout;
        for object in &objects {
            let target = object.resource()?;
            while self.cancel.guard(&format!("reading {target}"), self.client.get(&target)).await?.is_some() {
                if Instant::now() >= deadline {
                    return Err(failed(format!("timed out waiting for {target} to be deleted")));
                }
                self.pause(&format!("waiting for {target} to be deleted")).await?;
            }
        }
        self.inventory = Inventory { vnf_state: self.inventory.vnf_state.clone(), ..Inventory::default() };
        Ok(())
    }

    /// The VDUs' pods, listed once more (all of them or none).
    async fn reread_after_failure(&mut self) {
        let mut pods = BTreeMap::new();
        for (vdu_id, workload) in &self.state.vdus {
            match self.client.list_pods(self.namespace_of(workload), &workload.selector).await {
                Ok(mut list) => {
                    if let Some(prefix) = &workload.pod_prefix {
                        list.items.retain(|pod| pod_name(pod).is_some_and(|name| name.starts_with(prefix.as_str())));
                    }
                    pods.insert(vdu_id.clone(), list.items);
                }
                Err(error) => {
                    tracing::debug!(%error, vdu = %vdu_id, "pods not listed after a failure");
                    return;
                }
            }
        }
        if !pods.is_empty() {
            self.map_pods(&pods);
        }
    }

    fn into_inventory(self) -> Inventory {
        self.inventory
    }
}

impl InfraDriver for KubernetesDriver {
    fn vim_type(&self) -> &'static str {
        VIM_TYPE_KUBERNETES
    }

    fn execute<'a>(
        &'a self,
        ctx: InfraContext<'a>,
        action: InfraAction<'a>,
    ) -> BoxFuture<'a, Result<Inventory, DriverError>> {
        Box::pin(self.run(ctx, action, None))
    }
}

impl KubernetesDriver {
    /// Runs `action` on the cluster of `ctx.vim`; with `helm`, the VNF is a Helm release
    /// (a VIM of `helm.vim_type`) instead of the manifests the request names.
    pub(super) async fn run(
        &self,
        ctx: InfraContext<'_>,
        action: InfraAction<'_>,
        helm: Option<&super::helm::HelmSettings>,
    ) -> Result<Inventory, DriverError> {
        let vim_type = helm.map_or(VIM_TYPE_KUBERNETES, |_| crate::infra::VIM_TYPE_HELM);
        let mut creds =
            VimCredentials::from_vim_connection_of(ctx.vim, vim_type).map_err(|e| DriverError::new(e.to_string()))?;
        creds.tls.trust = self.trust.clone();
        let state: ClusterState = serde_json::from_value(ctx.current.vim_state.clone()).unwrap_or_default();
        let creds = if state.namespace.is_empty() { creds } else { creds.with_namespace(&state.namespace) };
        let client = KubernetesClient::new(&creds).map_err(|error| DriverError::new(error.to_string()))?;
        let helm = match helm {
            Some(settings) => Some(super::helm::HelmCli::new(settings, &creds).map_err(DriverError::new)?),
            None => None,
        };
        let cancel = CancelGuard::new(ctx.cancelled, self.cancel_poll);
        let inventory = ctx.current.clone();
        let run = KubernetesRun { driver: self, ctx: &ctx, cancel, client, state, inventory, helm };
        run_action(run, action).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn def_files_must_stay_inside_the_package() {
        let dir = Path::new("/pkg");
        assert_eq!(package_file(Some(dir), "Files/kubernetes/a.yaml").ok(), Some(dir.join("Files/kubernetes/a.yaml")));
        for bad in ["../etc/passwd", "/etc/passwd", "Files/../../x", ""] {
            assert!(package_file(Some(dir), bad).is_err(), "{bad}");
        }
    }
}
