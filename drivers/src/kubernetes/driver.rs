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
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::cluster::{
    ClusterState, DEF_FILES_PARAM, KubernetesRun, ObjectRef, Workload, package_file, pod_name, pod_uid, selector_of,
    vdu_for_name,
};
use solgate_vnfpkg::Flavour;

use super::helm_cli::{HelmCli, HelmSettings};
use super::objects::Object;
use super::{KubernetesClient, PodCondition, ResourceRef, VimCredentials, WaitOptions};
use crate::infra::{
    DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VIM_TYPE_KUBERNETES, VnfcResource,
};
use crate::run::{ActionRun, CancelGuard, Halt, failed, run_action, vnfd_flavour};

/// Label Tacker puts on every object of a VNF instance (kubernetes_resource.VNF_INSTANCE_ID_LABEL).
pub const INSTANCE_LABEL: &str = "tacker_vnf_instance_id";
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

/// The object (index) of each VDU's workload among `objects`.
fn vdu_objects(
    objects: &[Value],
    flavour: &Flavour,
    files: &[String],
    plan: &DeploymentPlan,
) -> Result<BTreeMap<String, usize>, Halt> {
    let mut vdus: BTreeMap<String, usize> = BTreeMap::new();
    for (index, object) in objects.iter().enumerate() {
        let view = Object::of(object);
        let kind = view.kind.unwrap_or_default();
        let name = view.metadata.name.unwrap_or_default();
        if !WORKLOAD_KINDS.contains(&kind) {
            continue;
        }
        if let Some(vdu_id) = vdu_for_name(flavour, name)
            && let Some(other) = vdus.insert(vdu_id.to_owned(), index)
        {
            return Err(failed(format!(
                "VDU {vdu_id} matches two workloads: {} and {kind} {name}",
                Object::of(&objects[other]).kind.unwrap_or_default()
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
    Ok(vdus)
}

/// Sets `spec.replicas` of each VDU's workload to the plan's count; the VDUs of the plan
/// that no workload realizes, with their counts.
fn set_replicas(
    objects: &mut [Value],
    vdus: &BTreeMap<String, usize>,
    files: &[String],
    plan: &DeploymentPlan,
) -> Result<BTreeMap<String, u32>, Halt> {
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
        match Object::of(object).kind.unwrap_or_default() {
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
    Ok(unrealized)
}

impl KubernetesRun<'_, '_> {
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
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        let vdus = vdu_objects(&objects, flavour, &files, plan)?;
        let unrealized = set_replicas(&mut objects, &vdus, &files, plan)?;
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
        let deadline = Instant::now() + self.wait.timeout;
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
            let waited =
                self.client.wait_pods_named(namespace, &workload.selector, prefix, PodCondition::Gone, &self.wait);
            self.cancel.guard(&what, waited).await?;
        }
        // Foreground deletion keeps an owner until its dependents are gone (Tacker waits
        // for every object to disappear too).
        let deadline = Instant::now() + self.wait.timeout;
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
        helm: Option<&HelmSettings>,
    ) -> Result<Inventory, DriverError> {
        let vim_type = helm.map_or(VIM_TYPE_KUBERNETES, |_| crate::infra::VIM_TYPE_HELM);
        let mut creds =
            VimCredentials::from_vim_connection_of(ctx.vim, vim_type).map_err(|e| DriverError::new(e.to_string()))?;
        creds.tls.trust = self.trust.clone();
        let state: ClusterState = serde_json::from_value(ctx.current.vim_state.clone()).unwrap_or_default();
        let creds = if state.namespace.is_empty() { creds } else { creds.with_namespace(&state.namespace) };
        let client = KubernetesClient::new(&creds).map_err(|error| DriverError::new(error.to_string()))?;
        let helm = match helm {
            Some(settings) => Some(HelmCli::new(settings, &creds).map_err(DriverError::new)?),
            None => None,
        };
        let cancel = CancelGuard::new(ctx.cancelled, self.cancel_poll);
        let inventory = ctx.current.clone();
        let run = KubernetesRun { wait: self.wait, ctx: &ctx, cancel, client, state, inventory, helm };
        run_action(run, action).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn def_files_must_stay_inside_the_package() {
        let dir = Path::new("/pkg");
        assert_eq!(package_file(Some(dir), "Files/kubernetes/a.yaml").ok(), Some(dir.join("Files/kubernetes/a.yaml")));
        for bad in ["../etc/passwd", "/etc/passwd", "Files/../../x", ""] {
            assert!(package_file(Some(dir), bad).is_err(), "{bad}");
        }
    }
}
