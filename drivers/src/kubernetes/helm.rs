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

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::cluster::{HelmRelease, KubernetesRun, ObjectRef, Workload, package_file, selector_of, vdu_for_name};
use super::helm_cli::{HelmSettings, revision_of};
use super::{KubernetesDriver, ResourceRef, parse_manifests};
use crate::infra::{DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VIM_TYPE_HELM};
use crate::run::{ActionRun, Halt, failed, vnfd_flavour};

/// `additionalParams` keys of Tacker's Helm instantiate.
pub const CHART_PATH_PARAM: &str = "helm_chart_path";
pub const VALUE_NAMES_PARAM: &str = "helm_value_names";
pub const PARAMETERS_PARAM: &str = "helm_parameters";

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
}
