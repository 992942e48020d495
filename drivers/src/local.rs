//! The local simulated VIM: resources that exist only in solgate's own database (the
//! inventory the conductor stores in `instantiatedVnfInfo`). It creates one compute
//! resource per VNFC, the VDU's virtual storages and the internal virtual links, step by
//! step, so that tests can delay every step and make a chosen step fail — and drive
//! FAILED_TEMP, retry, rollback and cancel through the real state machine.
//!
//! Fault injection, from `vimConnectionInfo.extra.localVim` overridden by the request's
//! `additionalParams.localVim`:
//! `{"delayMs": 50, "failAt": "create_vnfc", "failAttempts": 1, "failAfter": 0}` —
//! wait 50 ms before each step; fail the `failAfter`+1-th step named `failAt` while the
//! operation's attempt number is at most `failAttempts` (default: every attempt);
//! `"transient": true` makes it a failure the conductor retries by itself, and `failRuns`
//! fails only the first runs of an attempt (default: every run).
//! A flavour's VipCps get one simulated address each, from the subnet of their virtual link
//! (the VNFD's `l3_protocol_data.cidr`, else a /24 of 10.0.0.0/8 derived from the link's
//! id): its last host address, the same for the link's whole life.
//!
//! Step names: create_vl, delete_vl, create_storage, delete_storage, create_vnfc,
//! delete_vnfc, heal_vnfc, operate.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use solgate_vnfpkg::Vdu;

use crate::infra::{
    DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, ResourceHandle, VIM_TYPE_LOCAL,
    VirtualLinkResource, VirtualStorageResource, VnfcResource,
};
use crate::run::{ActionRun, Halt, check_cancelled, failed, run_action, transient, vnfd_flavour};

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct FaultInjection {
    pub delay_ms: Option<u64>,
    pub fail_at: Option<String>,
    pub fail_attempts: Option<u32>,
    pub fail_after: u32,
    /// The injected failure is transient (as a VIM that is briefly unreachable), and
    /// `failRuns` counts the runs it fails, whatever the attempt: the conductor's automatic
    /// retries use them up.
    pub transient: bool,
    pub fail_runs: Option<u32>,
}

impl FaultInjection {
    fn from_context(ctx: &InfraContext<'_>) -> Result<Self, DriverError> {
        let mut merged = serde_json::Map::new();
        for source in [&ctx.vim.extra["localVim"], &ctx.additional_params["localVim"]] {
            if let Value::Object(map) = source {
                merged.extend(map.clone());
            }
        }
        serde_json::from_value(Value::Object(merged))
            .map_err(|error| DriverError::new(format!("invalid localVim fault-injection parameters: {error}")))
    }
}

/// The simulated VIM. `default_delay` applies to every step unless a request says otherwise.
#[derive(Debug, Clone, Default)]
pub struct LocalVim {
    pub default_delay: Duration,
}

/// One run of an action on the simulated VIM.
struct SimulatedRun<'c, 'a> {
    ctx: &'c InfraContext<'a>,
    faults: FaultInjection,
    delay: Duration,
    steps_seen: u32,
    inventory: Inventory,
}

impl SimulatedRun<'_, '_> {
    /// Before each step: wait, honour cancellation, fail if injected.
    async fn step(&mut self, name: &str) -> Result<(), Halt> {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        check_cancelled(self.ctx.cancelled, &format!("step {name}"))?;
        if self.faults.fail_at.as_deref() == Some(name) {
            let attempts = self.faults.fail_attempts.unwrap_or(u32::MAX);
            let runs = self.faults.fail_runs.unwrap_or(u32::MAX);
            if self.ctx.attempt <= attempts && self.ctx.run <= runs {
                if self.steps_seen >= self.faults.fail_after {
                    let message = format!(
                        "local VIM: injected failure at step {name} (attempt {}, run {})",
                        self.ctx.attempt, self.ctx.run
                    );
                    return Err(if self.faults.transient { transient(message) } else { failed(message) });
                }
                self.steps_seen += 1;
            }
        }
        Ok(())
    }

    fn handle(&self, kind: &str) -> ResourceHandle {
        ResourceHandle {
            vim_connection_id: Some(self.ctx.vim.id.clone()).filter(|id| !id.is_empty()),
            resource_id: format!("local-{}-{}", kind, uuid::Uuid::new_v4()),
            vim_level_resource_type: Some(format!("solgate.local.{kind}")),
        }
    }

    /// Creates the plan's virtual links that do not exist yet.
    async fn create_links(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        for vl_id in &plan.virtual_links {
            if !self.inventory.virtual_links.iter().any(|vl| &vl.vnf_virtual_link_desc_id == vl_id) {
                self.step("create_vl").await?;
                let network_resource = self.handle("network");
                self.inventory.virtual_links.push(VirtualLinkResource {
                    id: uuid::Uuid::new_v4().to_string(),
                    vnf_virtual_link_desc_id: vl_id.clone(),
                    network_resource,
                    vnf_link_ports: Vec::new(),
                });
            }
        }
        Ok(())
    }

    /// Creates one VNFC of `vdu` with its virtual storages.
    async fn create_vnfc(&mut self, vdu: &Vdu, plan: &DeploymentPlan) -> Result<(), Halt> {
        let mut storage_ids = Vec::new();
        for storage_id in &vdu.virtual_storages {
            self.step("create_storage").await?;
            let id = uuid::Uuid::new_v4().to_string();
            let storage_resource = self.handle("volume");
            self.inventory.virtual_storages.push(VirtualStorageResource {
                id: id.clone(),
                virtual_storage_desc_id: storage_id.clone(),
                storage_resource,
            });
            storage_ids.push(id);
        }
        self.step("create_vnfc").await?;
        let compute_resource = self.handle("server");
        let vnfc_cp_info =
            vdu.cps.iter().map(|cp| json!({"id": uuid::Uuid::new_v4().to_string(), "cpdId": cp})).collect();
        self.inventory.vnfc_resources.push(VnfcResource {
            id: uuid::Uuid::new_v4().to_string(),
            vdu_id: vdu.id.clone(),
            compute_resource,
            storage_resource_ids: storage_ids,
            vnfc_cp_info,
            // The zone the NFVO granted (external mode); the simulated VIM has no other.
            zone_id: plan.granted.zones.get(&vdu.id).cloned(),
            metadata: None,
        });
        Ok(())
    }

    /// Brings `vdu` to `count` VNFCs. Scale in removes the newest VNFCs first (SOL003
    /// leaves the choice to the VNFM).
    async fn scale_vdu(&mut self, vdu: &Vdu, count: u32, plan: &DeploymentPlan) -> Result<(), Halt> {
        let have = self.inventory.vnfc_resources.iter().filter(|vnfc| vnfc.vdu_id == vdu.id).count() as u32;
        for _ in have..count {
            self.create_vnfc(vdu, plan).await?;
        }
        let mut surplus = have.saturating_sub(count);
        while surplus > 0 {
            let Some(index) = self.inventory.vnfc_resources.iter().rposition(|vnfc| vnfc.vdu_id == vdu.id) else {
                break;
            };
            self.remove_vnfc(index).await?;
            surplus -= 1;
        }
        Ok(())
    }

    async fn remove_vnfc(&mut self, index: usize) -> Result<(), Halt> {
        self.step("delete_vnfc").await?;
        let vnfc = self.inventory.vnfc_resources.remove(index);
        for storage_id in &vnfc.storage_resource_ids {
            self.step("delete_storage").await?;
            self.inventory.virtual_storages.retain(|storage| &storage.id != storage_id);
        }
        Ok(())
    }
}

impl ActionRun for SimulatedRun<'_, '_> {
    async fn realize(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        // Virtual links first: VNFC ports attach to them.
        self.create_links(plan).await?;
        for target in &plan.vdus {
            let vdu = flavour
                .vdu(&target.vdu_id)
                .ok_or_else(|| failed(format!("VDU {} is not in flavour {}", target.vdu_id, flavour.id)))?;
            self.scale_vdu(vdu, target.count, plan).await?;
        }
        // VDUs the plan no longer has (another flavour): remove their VNFCs.
        while let Some(index) =
            self.inventory.vnfc_resources.iter().rposition(|vnfc| !plan.vdus.iter().any(|t| t.vdu_id == vnfc.vdu_id))
        {
            self.remove_vnfc(index).await?;
        }
        while let Some(index) = self
            .inventory
            .virtual_links
            .iter()
            .rposition(|vl| !plan.virtual_links.contains(&vl.vnf_virtual_link_desc_id))
        {
            self.step("delete_vl").await?;
            self.inventory.virtual_links.remove(index);
        }
        self.inventory.vip_cp_info = vip_cp_info(flavour, &self.inventory);
        Ok(())
    }

    async fn heal(&mut self, _plan: &DeploymentPlan, vnfc_ids: &[String]) -> Result<(), Halt> {
        for index in 0..self.inventory.vnfc_resources.len() {
            let selected = {
                let vnfc = &self.inventory.vnfc_resources[index];
                vnfc_ids.is_empty() || vnfc_ids.contains(&vnfc.id)
            };
            if selected {
                self.step("heal_vnfc").await?;
                let compute_resource = self.handle("server");
                self.inventory.vnfc_resources[index].compute_resource = compute_resource;
            }
        }
        Ok(())
    }

    async fn operate(&mut self, change_state_to: &str) -> Result<(), Halt> {
        self.step("operate").await?;
        self.inventory.vnf_state = change_state_to.to_owned();
        Ok(())
    }

    async fn teardown(&mut self) -> Result<(), Halt> {
        while !self.inventory.vnfc_resources.is_empty() {
            let last = self.inventory.vnfc_resources.len() - 1;
            self.remove_vnfc(last).await?;
        }
        while !self.inventory.virtual_storages.is_empty() {
            self.step("delete_storage").await?;
            self.inventory.virtual_storages.pop();
        }
        while !self.inventory.virtual_links.is_empty() {
            self.step("delete_vl").await?;
            self.inventory.virtual_links.pop();
        }
        self.inventory.vip_cp_info.clear();
        Ok(())
    }

    fn into_inventory(self) -> Inventory {
        self.inventory
    }
}

/// A VNFC's `vnfcCpInfo` entry as this driver makes it.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct VnfcCp {
    id: Value,
    cpd_id: Option<String>,
}

impl VnfcCp {
    fn of(info: &Value) -> Self {
        Self::deserialize(info).unwrap_or_default()
    }
}

/// SOL003 VipCpInfo of each VipCp whose virtual link exists: the simulated address and the
/// VNFC CPs (instances of its target VduCps) that share it.
fn vip_cp_info(flavour: &solgate_vnfpkg::Flavour, inventory: &Inventory) -> Vec<Value> {
    let mut out = Vec::new();
    for vip in &flavour.vip_cps {
        let Some(link) = inventory.virtual_links.iter().find(|vl| vl.vnf_virtual_link_desc_id == vip.virtual_link)
        else {
            continue;
        };
        let cidr = flavour
            .virtual_links
            .iter()
            .find(|vl| vl.id == vip.virtual_link)
            .and_then(|vl| vl.l3_protocol_data.iter().find_map(|l3| l3.cidr.as_deref()));
        let associated: Vec<Value> = inventory
            .vnfc_resources
            .iter()
            .flat_map(|vnfc| vnfc.vnfc_cp_info.iter().map(VnfcCp::of))
            .filter(|cp| cp.cpd_id.as_deref().is_some_and(|cpd| vip.targets.iter().any(|t| t == cpd)))
            .map(|cp| cp.id)
            .collect();
        let address = simulated_vip_address(cidr, &link.id);
        out.push(json!({
            "cpInstanceId": format!("{}-{}", vip.id, link.id.chars().take(8).collect::<String>()),
            "cpdId": vip.id,
            "cpProtocolInfo": [{
                "layerProtocol": "IP_OVER_ETHERNET",
                "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "addresses": [address], "isDynamic": true}]}
            }],
            "associatedVnfcCpIds": associated,
        }));
    }
    out
}

/// The last host address of the link's simulated IPv4 subnet.
fn simulated_vip_address(cidr: Option<&str>, link_id: &str) -> String {
    let parsed = cidr.and_then(|cidr| {
        let (network, prefix) = cidr.split_once('/')?;
        let network: std::net::Ipv4Addr = network.parse().ok()?;
        let prefix: u32 = prefix.parse().ok().filter(|prefix| *prefix <= 30)?;
        Some((u32::from(network), prefix))
    });
    let (network, prefix) = parsed.unwrap_or_else(|| {
        let seed = link_id.bytes().fold(0u32, |hash, byte| hash.wrapping_mul(31).wrapping_add(u32::from(byte)));
        ((10 << 24) | ((seed & 0xffff) << 8), 24)
    });
    let size = 1u32 << (32 - prefix);
    let base = network & !(size - 1);
    std::net::Ipv4Addr::from(base + size - 2).to_string()
}

impl InfraDriver for LocalVim {
    fn vim_type(&self) -> &'static str {
        VIM_TYPE_LOCAL
    }

    fn execute<'a>(
        &'a self,
        ctx: InfraContext<'a>,
        action: InfraAction<'a>,
    ) -> BoxFuture<'a, Result<Inventory, DriverError>> {
        Box::pin(async move {
            let faults = FaultInjection::from_context(&ctx)?;
            let delay = faults.delay_ms.map(Duration::from_millis).unwrap_or(self.default_delay);
            let inventory = ctx.current.clone();
            let run = SimulatedRun { ctx: &ctx, faults, delay, steps_seen: 0, inventory };
            run_action(run, action).await
        })
    }
}
