//! The OpenStack infra driver: one Heat stack per VNF instance, built from the flavour's
//! BaseHOT the way Tacker's v2 driver (`sol_refactored/infra_drivers/openstack`) with its
//! default user data (`userdata_default.DefaultUserData`) does it.
//!
//! - Realize: the first one creates stack `vnf-<instance id>` from `BaseHOT/<flavourId>/*.yaml`
//!   (nested templates from `BaseHOT/<flavourId>/nested/` go in `files`, keyed by file name),
//!   after looking the name up (`GET /stacks/vnf-<instance id>`) as Tacker does; later ones
//!   PATCH the stack, with the template and the `nfv` parameter of [`super::hot`];
//!   `additionalParams.nfv` is merged over it (JSON merge patch, kept for later operations).
//!   Scale-in first marks the newest VNFCs' scaling-group members unhealthy so Heat removes
//!   those (Tacker's `scale`).
//! - Heal: marks the VNFCs' servers unhealthy and updates the stack (Tacker's heal without
//!   `all`); the replacement server keeps the VNFC id (same nested stack and resource name).
//!   The stack is first waited for while an update runs on it; each server resource is
//!   then read (`GET .../resources/<name>`) and only marked while it still holds the server
//!   the inventory knows (see Re-runs).
//! - Operate: Nova `os-stop` / `os-start` on every VNFC server (Heat has no power state).
//! - Teardown: delete the stack, wait until Heat answers 404.
//!
//! After each stack operation the resources are listed and mapped ([`super::inventory`]).
//! `vim_state` holds the stack name and id, the flavour and template digest last sent, and
//! the `nfv` parameter.
//!
//! Re-runs. After a conductor crash another conductor runs the same action again from the
//! pre-operation inventory, which does not know what the crashed run made; every action
//! finds it again instead of making it twice:
//! - a realize without a stack id looks the deterministic name up before any `POST /stacks`.
//!   A stack in `CREATE_IN_PROGRESS` (the crash came between "create stack" and "stack
//!   complete") is waited for, with no update; one in `CREATE_COMPLETE` with this
//!   operation's `nfv` is taken as it is; one with other parameters or in a failed state
//!   is updated with the template and parameters, as a known stack would be. A stack that
//!   Heat is rolling back (`ROLLBACK_IN_PROGRESS`, or another action of its own) is first
//!   waited for until it leaves `*_IN_PROGRESS` (Heat refuses an update meanwhile), then
//!   decided on as it then is: gone → created, `ROLLBACK_COMPLETE`/`_FAILED` → updated; one
//!   in `DELETE_IN_PROGRESS` is waited for until it is deleted, then created. A `409` on
//!   the POST (created in between) adopts and updates the stack the same way;
//! - a realize with a stack id first reads the stack (one `GET`; it is mostly settled) and,
//!   while it is in `*_IN_PROGRESS` (the earlier run's update is still running), polls
//!   until it leaves it, since Heat refuses (409) an update meanwhile; then it PATCHes it
//!   again: Heat converges on the same parameters, and a scale-in member that the earlier
//!   update already removed (404 on `mark_unhealthy`) is skipped;
//! - a heal first waits the same way for the stack to settle (the lookup by name tells its
//!   status when the id is not known; else one `GET`): while the earlier run's update is
//!   running the resources may still show the old server. Then it skips a VNFC whose
//!   server resource (`GET .../resources/<name>`) now holds another server than the
//!   inventory's (the earlier run's update replaced it) or is gone (404): marking it would
//!   mark the replacement and have Heat replace it again. When no target is left to mark,
//!   the stack is not updated either; the resources are listed again and the replacement
//!   keeps the VNFC id;
//! - a teardown whose stack is gone (404 on `DELETE`) succeeds; a re-run of a wait just waits.
//!
//! Failures. A failure that asking again may cure is reported transient
//! (`DriverError::transient`, retried by the conductor with backoff): Keystone, Heat or Nova
//! unreachable, a connection reset or request timeout, HTTP 429 and 500/502/503/504. Not
//! transient: other 4xx (a bad template's 400, a quota's 403/413, a 404 of something
//! expected), bad credentials (401 after a fresh token), an untrusted certificate, a stack
//! that Heat put into `CREATE_FAILED`/`UPDATE_FAILED`, and a wait that ran out of time.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use solgate_sol013::merge_patch;
use tokio::time::Instant;

use super::hot::{self, BaseHot, PORT};
use super::inventory::{VipCpInfo, VnfcMetadata, map_resources, trunk_ports, vip_cp_info};
use super::state::{StackState, nfv_parameter};
use super::user_data::{self, StackFields};
use super::{
    CreateStackRequest, HeatClient, NovaClient, OpenStackError, Stack, UpdateStackRequest, VimCredentials, WaitOptions,
};
use crate::infra::{
    DeploymentPlan, DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VIM_TYPE_OPENSTACK, VnfcResource,
};
use crate::run::{ActionRun, CancelGuard, Halt, failed, run_action, vim_failure, vnfd_flavour};
use crate::script;

/// Heat-backed infra driver for `ETSINFV.OPENSTACK_KEYSTONE.V_3` VIMs.
#[derive(Debug, Clone)]
pub struct OpenStackDriver {
    /// Polling of stack operations (Tacker polls every 5 s).
    pub wait: WaitOptions,
    /// How often a running wait checks whether the operation was cancelled.
    pub cancel_poll: Duration,
    /// `timeout_mins` of stack create and update (Tacker: `openstack_vim_stack_create_timeout`, 20).
    pub stack_timeout_mins: u32,
    /// Extra trust anchors and whether a VIM may skip certificate checks (`[tls]`).
    pub trust: crate::VimTrust,
    /// How a package's LCM operation user data runs (`[drivers] python_command`,
    /// `script_timeout_secs`).
    pub scripts: script::ScriptSettings,
}

impl Default for OpenStackDriver {
    fn default() -> Self {
        crate::DriverSettings::default().openstack(&crate::VimTrust::default())
    }
}

/// What Heat shows of a port resource (`GET .../resources/<name>`): its `attributes`.
#[derive(Deserialize)]
struct ShownPort {
    attributes: Option<PortAttributes>,
}

/// The attributes of a port resource that the driver reads.
#[derive(Deserialize)]
struct PortAttributes {
    #[serde(default)]
    fixed_ips: Value,
}

/// One run of an action against the VNF's Heat stack.
struct HeatRun<'c, 'a> {
    driver: &'c OpenStackDriver,
    ctx: &'c InfraContext<'a>,
    cancel: CancelGuard<'c>,
    creds: VimCredentials,
    heat: HeatClient,
    state: StackState,
    inventory: Inventory,
    /// Flavour whose VNFD nodes name the stack's resources.
    flavour_id: Option<String>,
    /// Stack parameters besides `nfv` that LCM operation user data gave for a new stack.
    extra_parameters: Map<String, Value>,
}

impl HeatRun<'_, '_> {
    fn vim_connection_id(&self) -> Option<&str> {
        Some(self.ctx.vim.id.as_str()).filter(|id| !id.is_empty())
    }

    async fn wait_stack(&self, target: &str) -> Result<(), Halt> {
        let stack = self.state.identifier();
        let what = format!("waiting for Heat stack {} to reach {target}", self.state.stack_name);
        self.cancel.guard(&what, self.heat.wait_for(&stack, target, &self.driver.wait)).await.map(drop)
    }

    /// The `nfv` parameter for `plan`, with the requests' `additionalParams.nfv` over it.
    fn nfv_for(&mut self, template: &Value, plan: &DeploymentPlan) -> Result<Value, Halt> {
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        let computed = hot::build_nfv(template, self.ctx.vnfd, flavour, plan);
        if let Some(extra) = self.ctx.additional_params.get("nfv").filter(|v| v.is_object()) {
            // Tacker's inst_utils.json_merge_patch: RFC 7396.
            merge_patch(&mut self.state.nfv_overrides, extra);
        }
        let mut nfv = computed;
        if self.state.nfv_overrides.is_object() {
            merge_patch(&mut nfv, &self.state.nfv_overrides);
        }
        if plan.granted.nfv.is_object() {
            merge_patch(&mut nfv, &plan.granted.nfv);
        }
        Ok(nfv)
    }

    /// The Heat stack fields of the request's LCM operation user data (`None` when it
    /// declares none): the class's method for the operation (`<operation>_rollback` while
    /// rolling back), given the operation's documents as Tacker gives them.
    async fn user_data_fields(&self) -> Result<Option<StackFields>, Halt> {
        let Some(declared) = user_data::declared(self.ctx.additional_params).map_err(Halt::UserData)? else {
            return Ok(None);
        };
        let input = self.ctx.lcm_input.ok_or_else(|| {
            failed("the request declares LCM operation user data, but the operation's documents were not given")
        })?;
        let package = self.ctx.package_dir.ok_or_else(|| {
            failed("the request declares LCM operation user data, but the VNF package is not at hand")
        })?;
        let mut input = input.clone();
        let stack_id = self.state.stack_id.as_ref().map(|_| self.state.identifier());
        input.vnf_instance =
            user_data::script_instance(&input.vnf_instance, &self.inventory, stack_id.as_deref(), &self.state.nfv);
        let run = script::run_user_data(
            &self.driver.scripts,
            package,
            &declared.module,
            &declared.class,
            &input,
            self.ctx.rolling_back,
        );
        // Not through the VIM-failure mapping: the package's failure, in the script's words.
        let what = "running LCM operation user data";
        let ran = self.cancel.guard(what, async { Ok::<_, Infallible>(run.await) }).await?;
        let fields = ran.map_err(|error| Halt::UserData(error.to_string()))?;
        StackFields::parse(&fields).map(Some).map_err(|error| {
            Halt::UserData(format!(
                "LCM operation user data {} ({}) returned unusable fields: {error}",
                declared.module, declared.class
            ))
        })
    }

    /// Realize with the fields of LCM operation user data: a new stack is created with them
    /// as they are (Tacker sends the class's template text and files unchanged); a known
    /// stack is updated with them as Tacker's `_update_fields` does.
    async fn realize_with_user_data(&mut self, plan: &DeploymentPlan, fields: StackFields) -> Result<(), Halt> {
        if self.state.stack_id.is_none() {
            let template = fields
                .template
                .clone()
                .ok_or_else(|| failed("LCM operation user data returned no template for the new Heat stack"))?;
            let mut digest = Sha256::new();
            digest.update(template.to_string().as_bytes());
            for (name, text) in &fields.files {
                digest.update(name.as_bytes());
                digest.update(text.as_bytes());
            }
            let digest = format!("user-data:{}", hex::encode(digest.finalize()));
            let mut parameters = fields.parameters;
            let nfv = parameters.remove("nfv").unwrap_or_else(|| json!({}));
            self.extra_parameters = parameters;
            self.state.user_data = true;
            self.create(template, fields.files, &digest, plan, nfv).await?;
        } else {
            self.wait_until_settled(None).await?;
            self.mark_scale_in_members(plan).await?;
            self.update_with_fields(fields).await?;
            self.state.flavour_id = Some(plan.flavour_id.clone());
            self.sync_vim_state();
        }
        self.refresh().await?;
        self.check_counts(plan)
    }

    /// Updates the known stack with user data fields (Tacker's `_update_fields` and
    /// `update_stack`): `existing: false` replaces the stack's template, files and
    /// parameters (PUT); otherwise the `nfv` given is merged (RFC 7396) over the stack's
    /// current one and the template given over its current template, and the stack is
    /// patched (PATCH), keeping what the fields leave out.
    async fn update_with_fields(&mut self, fields: StackFields) -> Result<(), Halt> {
        let identifier = self.state.identifier();
        let name = self.state.stack_name.clone();
        let mut request =
            UpdateStackRequest { timeout_mins: Some(self.driver.stack_timeout_mins), ..Default::default() };
        let what = format!("updating Heat stack {name}");
        if fields.existing {
            let mut parameters = fields.parameters.clone();
            if let Some(patch) = parameters.get_mut("nfv") {
                let reading = format!("reading the parameters of Heat stack {name}");
                let stack = self.cancel.guard(&reading, self.heat.get_stack(&identifier)).await?;
                let mut nfv = stack.as_ref().and_then(nfv_parameter).unwrap_or_else(|| self.state.nfv.clone());
                merge_patch(&mut nfv, patch);
                *patch = nfv;
            }
            if let Some(document) = fields.template_document().map_err(failed)? {
                let reading = format!("reading the template of Heat stack {name}");
                let mut template = self.cancel.guard(&reading, self.heat.get_template(&identifier)).await?;
                merge_patch(&mut template, &document);
                request.template = Some(template);
            }
            request.files = fields.files;
            request.parameters = parameters;
            self.cancel.guard(&what, self.heat.update_stack(&identifier, &request)).await?;
        } else {
            request.template = fields.template;
            request.files = fields.files;
            request.parameters = fields.parameters;
            self.cancel.guard(&what, self.heat.replace_stack(&identifier, &request)).await?;
        }
        if let Some(nfv) = request.parameters.get("nfv") {
            self.state.nfv = nfv.clone();
        }
        self.sync_vim_state();
        self.wait_stack("UPDATE_COMPLETE").await
    }

    /// The `nfv` for an operation without user data on a stack whose template user data
    /// made: the last one sent with each VDU's `desired_capacity` the BaseHOT takes from
    /// `nfv` set to the plan's count (Tacker's default user data `scale`).
    fn capacities_over_user_data(&self, template: &Value, plan: &DeploymentPlan) -> Value {
        let skeleton = hot::nfv_skeleton(template);
        let mut capacities = Map::new();
        for (vdu, values) in skeleton["VDU"].as_object().into_iter().flatten() {
            if values.get("desired_capacity").is_some() {
                let count = plan.vdus.iter().find(|t| &t.vdu_id == vdu).map_or(0, |t| t.count);
                capacities.insert(vdu.clone(), json!({"desired_capacity": count}));
            }
        }
        let mut nfv = if self.state.nfv.is_object() { self.state.nfv.clone() } else { json!({}) };
        merge_patch(&mut nfv, &json!({"VDU": capacities}));
        nfv
    }

    /// Realize when the state knows no stack: the stack is looked up by its name first
    /// (Tacker's create does so too) and only created when Heat has none. A run that finds
    /// one is a re-run of this operation from the pre-operation inventory (the conductor
    /// crashed, or lost Heat's answer), so it carries on with what the earlier run made:
    /// see [`HeatRun::resume_create`].
    async fn create(
        &mut self,
        template: Value,
        files: BTreeMap<String, String>,
        digest: &str,
        plan: &DeploymentPlan,
        nfv: Value,
    ) -> Result<(), Halt> {
        let name = self.state.stack_name.clone();
        let lookup = format!("looking up Heat stack {name}");
        let mut found = self.cancel.guard(&lookup, self.heat.get_stack(&name)).await?;
        // Heat is acting on the stack on its own (a rollback): it refuses an update until
        // that is over, and what follows depends on how it ends. An earlier run's create or
        // update is waited for by `resume_create`, a delete below.
        if let Some(stack) = &found
            && let Some(action) = stack.stack_status.strip_suffix("_IN_PROGRESS")
            && !matches!(action, "CREATE" | "UPDATE" | "DELETE")
        {
            let identifier = stack.stack_ref().to_string();
            let what = format!("waiting for Heat stack {name} to finish its {}", stack.stack_status);
            tracing::info!(stack = %name, status = %stack.stack_status, "waiting for the Heat stack to settle");
            found = self.cancel.guard(&what, self.heat.wait_settled(&identifier, &self.driver.wait)).await?;
        }
        self.state.flavour_id = Some(plan.flavour_id.clone());
        self.state.template_digest = Some(digest.to_owned());
        if let Some(stack) = found {
            if !stack.stack_status.starts_with("DELETE_") {
                return self.resume_create(stack, template, files, nfv).await;
            }
            // A stack of this name being deleted (an earlier rollback): its name is free
            // once it is gone.
            let identifier = stack.stack_ref().to_string();
            let what = format!("waiting for the deleted Heat stack {name} to be gone");
            self.cancel.guard(&what, self.heat.wait_for(&identifier, "DELETE_COMPLETE", &self.driver.wait)).await?;
        }

        let mut request = CreateStackRequest::new(&name, template.clone())
            .with_parameter("nfv", nfv.clone())
            .with_timeout_mins(self.driver.stack_timeout_mins);
        request.parameters.extend(self.extra_parameters.clone());
        request.files = files.clone();
        let what = format!("creating Heat stack {name}");
        self.cancel.check(&what)?;
        // Not `guard`: once Heat accepted the create, its id must be kept even if a
        // cancel comes in meanwhile.
        let created = self.heat.create_stack(&request).await;
        self.state.nfv = nfv.clone();
        match created {
            Ok(stack) => {
                self.state.stack_id = Some(stack.id);
                self.sync_vim_state();
                self.wait_stack("CREATE_COMPLETE").await
            }
            Err(OpenStackError::Api { status: 409, .. }) => {
                // Created between the lookup and the POST (a concurrent run): adopt it and
                // give it this operation's template and parameters.
                let found = self.cancel.guard(&lookup, self.heat.get_stack(&name)).await?;
                let stack =
                    found.ok_or_else(|| failed(format!("{what}: Heat reports the name in use but no stack")))?;
                tracing::info!(stack = %name, id = %stack.id, "adopting the existing Heat stack");
                self.state.stack_id = Some(stack.id);
                self.sync_vim_state();
                self.update(Some((template, files)), nfv).await
            }
            Err(error) => Err(vim_failure(&what, &error)),
        }
    }

    /// Carries on with the stack `vnf-<instance id>` that Heat has although the state knows
    /// none: an earlier run of this operation created it and its answer (or the conductor)
    /// was lost. Nothing is created twice:
    ///
    /// - `CREATE_IN_PROGRESS` (the crash came between "create stack" and "stack complete")
    ///   or `UPDATE_IN_PROGRESS`: the earlier run's create, or its adopting update, is
    ///   still running with this operation's template and parameters (they follow from the
    ///   request and the plan). The run waits for it to complete and sends nothing.
    /// - `CREATE_COMPLETE` or `UPDATE_COMPLETE` with the `nfv` parameter this run would
    ///   send: the earlier run's create finished; nothing to send either.
    /// - other parameters, or another state (`CREATE_FAILED`, `UPDATE_FAILED`,
    ///   `ROLLBACK_COMPLETE`, `ROLLBACK_FAILED`; [`HeatRun::create`] has waited for a
    ///   `ROLLBACK_IN_PROGRESS` to end): a stack that another attempt left behind. It gets
    ///   this operation's template, files and parameters with an update, as a known stack
    ///   would (Heat retries what failed).
    async fn resume_create(
        &mut self,
        stack: Stack,
        template: Value,
        files: BTreeMap<String, String>,
        nfv: Value,
    ) -> Result<(), Halt> {
        let name = self.state.stack_name.clone();
        let status = stack.stack_status.clone();
        tracing::info!(stack = %name, id = %stack.id, %status, "found the Heat stack of an earlier run");
        self.state.stack_id = Some(stack.id.clone());
        self.sync_vim_state();
        let (action, state) = status.split_once('_').unwrap_or((status.as_str(), ""));
        let settled = match state {
            "IN_PROGRESS" if matches!(action, "CREATE" | "UPDATE") => {
                self.wait_stack(&format!("{action}_COMPLETE")).await?;
                true
            }
            // A completed rollback undid what was sent: send it again.
            "COMPLETE" if matches!(action, "CREATE" | "UPDATE") => nfv_parameter(&stack).as_ref() == Some(&nfv),
            _ => false,
        };
        if settled {
            self.state.nfv = nfv;
            self.sync_vim_state();
            Ok(())
        } else {
            self.update(Some((template, files)), nfv).await
        }
    }

    async fn update(&mut self, template: Option<(Value, BTreeMap<String, String>)>, nfv: Value) -> Result<(), Halt> {
        let mut request =
            UpdateStackRequest { timeout_mins: Some(self.driver.stack_timeout_mins), ..Default::default() };
        request.parameters.insert("nfv".into(), nfv.clone());
        request.parameters.extend(self.extra_parameters.clone());
        if let Some((template, files)) = template {
            request.template = Some(template);
            request.files = files;
        }
        let stack = self.state.identifier();
        let what = format!("updating Heat stack {}", self.state.stack_name);
        self.cancel.guard(&what, self.heat.update_stack(&stack, &request)).await?;
        self.state.nfv = nfv;
        self.sync_vim_state();
        self.wait_stack("UPDATE_COMPLETE").await
    }

    /// Scale-in: the newest VNFCs beyond the plan's count go. Marking their scaling-group
    /// member unhealthy makes Heat remove that member rather than one of its own choice
    /// (Tacker's scale, SCALE_IN).
    async fn mark_scale_in_members(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        let mut members = Vec::new();
        for target in &plan.vdus {
            let vnfcs: Vec<&VnfcResource> =
                self.inventory.vnfc_resources.iter().filter(|v| v.vdu_id == target.vdu_id).collect();
            let surplus = vnfcs.len().saturating_sub(target.count as usize);
            for vnfc in vnfcs.iter().rev().take(surplus) {
                let metadata = VnfcMetadata::of(vnfc);
                if let (Some(Value::String(stack)), Some(member)) =
                    (metadata.parent_stack_id, metadata.parent_resource_name)
                {
                    members.push((stack, member));
                }
            }
        }
        for (stack, member) in members {
            let what = format!("marking scaling-group member {member} unhealthy");
            let mark = async {
                match self.heat.mark_resource_unhealthy(&stack, &member, "marked by solgate for scale-in").await {
                    // A re-run of a scale-in whose update already removed the member.
                    Err(OpenStackError::Api { status: 404, .. } | OpenStackError::StackNotFound { .. }) => {
                        tracing::info!(%stack, %member, "scaling-group member already gone");
                        Ok(())
                    }
                    other => other,
                }
            };
            self.cancel.guard(&what, mark).await?;
        }
        Ok(())
    }

    /// Lists the stack's resources and maps them.
    async fn refresh(&mut self) -> Result<(), Halt> {
        let stack = self.state.identifier();
        let what = format!("listing the resources of Heat stack {}", self.state.stack_name);
        let resources = self.cancel.guard(&what, self.heat.list_resources(&stack, 2)).await?;
        let flavour_id = self.flavour_id.clone().unwrap_or_default();
        let flavour = vnfd_flavour(self.ctx.vnfd, &flavour_id)?;
        let mut inventory = map_resources(&resources, flavour, &self.inventory, self.vim_connection_id());
        inventory.vim_state = serde_json::to_value(&self.state).unwrap_or(Value::Null);
        for vip in &flavour.vip_cps {
            // The VipCp's port, in the top stack.
            let Some(port) = resources.iter().find(|res| {
                res.resource_type == PORT
                    && res.resource_name == vip.id
                    && res.parent_resource.is_none()
                    && !res.physical_resource_id.is_empty()
            }) else {
                continue;
            };
            let what = format!("reading port resource {} of Heat stack {}", vip.id, self.state.stack_name);
            let shown = self.cancel.guard(&what, self.heat.get_resource(&stack, &vip.id)).await?;
            let shown = shown.and_then(|res| serde_json::from_value::<ShownPort>(Value::Object(res.extra)).ok());
            let fixed_ips = shown.and_then(|shown| shown.attributes).map(|attributes| attributes.fixed_ips);
            let info = vip_cp_info(vip, port, fixed_ips.as_ref(), &mut inventory, self.vim_connection_id());
            inventory.vip_cp_info.push(info);
        }
        inventory.ext_link_ports = trunk_ports(&resources, flavour, self.vim_connection_id());
        self.inventory = inventory;
        Ok(())
    }

    /// A VDU whose count the BaseHOT does not take from `nfv` cannot follow the plan.
    fn check_counts(&self, plan: &DeploymentPlan) -> Result<(), Halt> {
        for target in &plan.vdus {
            let held = self.inventory.vnfc_resources.iter().filter(|v| v.vdu_id == target.vdu_id).count();
            if held != target.count as usize {
                return Err(failed(format!(
                    "Heat stack {} holds {held} server(s) of VDU {} where {} are needed; \
                     BaseHOT/{} should set the VDU's desired_capacity from nfv.VDU.{}.desired_capacity",
                    self.state.stack_name, target.vdu_id, target.count, plan.flavour_id, target.vdu_id
                )));
            }
        }
        Ok(())
    }

    /// The stack id from the name when the inventory does not know it; the stack as that
    /// lookup found it (`None` when the id was known and nothing was asked).
    async fn resolve_stack(&mut self) -> Result<Option<Stack>, Halt> {
        if self.state.stack_id.is_some() {
            return Ok(None);
        }
        let name = self.state.stack_name.clone();
        let found = self.cancel.guard(&format!("looking up Heat stack {name}"), self.heat.get_stack(&name)).await?;
        let stack = found.ok_or_else(|| failed(format!("Heat stack {name} does not exist")))?;
        self.state.stack_id = Some(stack.id.clone());
        self.sync_vim_state();
        Ok(Some(stack))
    }

    /// Waits until no action runs on the known stack (its status is not `*_IN_PROGRESS`)
    /// before this run changes it: a re-run may find the earlier run's update still going,
    /// and Heat refuses (409) a new update meanwhile. Whatever it then settles
    /// in (`UPDATE_COMPLETE`, `UPDATE_FAILED`, a rollback's end) the caller goes on as
    /// planned; a stack that is gone is a failure.
    ///
    /// Requests: none when `seen` (the stack as a lookup of this run just answered) is
    /// already settled; otherwise one `GET` of the stack when it is settled, and one more
    /// per poll interval while it is not.
    async fn wait_until_settled(&self, seen: Option<&Stack>) -> Result<(), Halt> {
        if seen.is_some_and(|stack| !stack.stack_status.ends_with("_IN_PROGRESS")) {
            return Ok(());
        }
        let name = &self.state.stack_name;
        let what = format!("waiting for Heat stack {name} to leave *_IN_PROGRESS");
        let settled =
            self.cancel.guard(&what, self.heat.wait_settled(&self.state.identifier(), &self.driver.wait)).await?;
        let stack = settled.ok_or_else(|| failed(format!("Heat stack {name} does not exist")))?;
        tracing::debug!(stack = %name, status = %stack.stack_status, "Heat stack settled");
        Ok(())
    }
}

impl ActionRun for HeatRun<'_, '_> {
    fn sync_vim_state(&mut self) {
        self.inventory.vim_state = serde_json::to_value(&self.state).unwrap_or(Value::Null);
    }

    async fn realize(&mut self, plan: &DeploymentPlan) -> Result<(), Halt> {
        self.cancel.check("changing the Heat stack")?;
        self.flavour_id = Some(plan.flavour_id.clone());
        if let Some(fields) = self.user_data_fields().await? {
            return self.realize_with_user_data(plan, fields).await;
        }
        let hot = BaseHot::load(self.ctx.package_dir, &plan.flavour_id)?;
        let mut template = hot.template;
        let mut files = hot.files;
        let flavour = vnfd_flavour(self.ctx.vnfd, &plan.flavour_id)?;
        hot::apply_vip_cps(&mut template, &mut files, flavour)?;
        hot::apply_trunks(&mut template, flavour, plan)?;
        hot::apply_ext_managed_vls(&mut template, &plan.ext_managed_virtual_links);
        let nfv = if self.state.user_data && self.state.stack_id.is_some() {
            self.capacities_over_user_data(&template, plan)
        } else {
            self.nfv_for(&template, plan)?
        };

        if self.state.stack_id.is_none() {
            self.create(template, files, &hot.digest, plan, nfv).await?;
        } else {
            // A re-run of an update (a scale) whose PATCH the earlier run sent may find it
            // still running: wait for it, or Heat refuses this one. One GET when the stack
            // is settled, as it mostly is.
            self.wait_until_settled(None).await?;
            self.mark_scale_in_members(plan).await?;
            // A template from user data stays (Tacker's default user data sends none).
            let same_template = self.state.user_data
                || (self.state.flavour_id.as_deref() == Some(plan.flavour_id.as_str())
                    && self.state.template_digest.as_deref() == Some(hot.digest.as_str()));
            let replace = (!same_template).then_some((template, files));
            self.update(replace, nfv).await?;
            self.state.flavour_id = Some(plan.flavour_id.clone());
            if !self.state.user_data {
                self.state.template_digest = Some(hot.digest);
            }
            self.sync_vim_state();
        }
        self.refresh().await?;
        self.check_counts(plan)
    }

    async fn heal(&mut self, plan: &DeploymentPlan, vnfc_ids: &[String]) -> Result<(), Halt> {
        self.cancel.check("healing")?;
        self.flavour_id = Some(plan.flavour_id.clone());
        let looked_up = self.resolve_stack().await?;
        // A re-run while the earlier run's update is still replacing the servers: the
        // resources may still show the old servers, and marking them would have Heat
        // refuse the update (409) or replace them twice. Once it has settled, the reads
        // below show the replacements. No extra request when the lookup saw it settled.
        self.wait_until_settled(looked_up.as_ref()).await?;
        // Tacker asks the user data for the fields before it marks anything.
        let fields = self.user_data_fields().await?;
        // (nested stack, resource name, server the inventory knows) of each target VNFC.
        let targets: Vec<(String, String, String)> = self
            .inventory
            .vnfc_resources
            .iter()
            .filter(|v| vnfc_ids.is_empty() || vnfc_ids.contains(&v.id))
            .map(|v| {
                let metadata = VnfcMetadata::of(v);
                let stack = metadata
                    .stack_id
                    .ok_or_else(|| failed(format!("VNFC {} has no Heat stack in its metadata", v.id)))?;
                let resource = metadata.resource_name.unwrap_or_else(|| v.vdu_id.clone());
                Ok((stack, resource, v.compute_resource.resource_id.clone()))
            })
            .collect::<Result<_, Halt>>()?;
        let mut marked = 0;
        for (stack, resource, server) in &targets {
            // A re-run of this heal from the pre-operation inventory: if the earlier run's
            // update already replaced the server, marking the resource now would mark the
            // replacement and have Heat replace it once more.
            let what = format!("reading server resource {resource} of Heat stack {stack}");
            let found = self.cancel.guard(&what, self.heat.get_resource(stack, resource)).await?;
            match found {
                Some(current) if current.physical_resource_id == *server => {}
                Some(current) => {
                    tracing::info!(%stack, %resource, %server, replacement = %current.physical_resource_id,
                        "server already replaced; not marking it again");
                    continue;
                }
                None => {
                    tracing::info!(%stack, %resource, %server, "server resource gone; not marking it");
                    continue;
                }
            }
            let what = format!("marking server {resource} unhealthy");
            self.cancel
                .guard(&what, self.heat.mark_resource_unhealthy(stack, resource, "marked by solgate for heal"))
                .await?;
            marked += 1;
        }
        if marked == 0 {
            // Nothing left to replace: the inventory is read again (the replacements keep
            // their VNFC ids).
            return self.refresh().await;
        }
        if let Some(fields) = fields {
            self.update_with_fields(fields).await?;
            return self.refresh().await;
        }
        // Same parameters: the update only replaces what is marked unhealthy.
        let nfv = if self.state.nfv.is_object() {
            self.state.nfv.clone()
        } else {
            let hot = BaseHot::load(self.ctx.package_dir, &plan.flavour_id)?;
            self.nfv_for(&hot.template, plan)?
        };
        self.update(None, nfv).await?;
        self.refresh().await
    }

    /// Nova `os-stop` / `os-start` on every VNFC server, then waits for SHUTOFF / ACTIVE.
    async fn operate(&mut self, change_state_to: &str) -> Result<(), Halt> {
        let (action, target) = match change_state_to {
            "STOPPED" => ("os-stop", "SHUTOFF"),
            "STARTED" => ("os-start", "ACTIVE"),
            other => return Err(failed(format!("changeStateTo {other} is not STARTED or STOPPED"))),
        };
        let nova = NovaClient::new(self.creds.clone()).map_err(|error| failed(error.to_string()))?;
        let servers: Vec<String> =
            self.inventory.vnfc_resources.iter().map(|v| v.compute_resource.resource_id.clone()).collect();
        for server in &servers {
            let what = format!("reading server {server}");
            let found = self.cancel.guard(&what, nova.get_server(server)).await?;
            let status = found.ok_or_else(|| failed(format!("server {server} does not exist")))?.status;
            if status != target {
                self.cancel.guard(&format!("{action} of server {server}"), nova.server_action(server, action)).await?;
            }
        }
        let deadline = Instant::now() + self.driver.wait.timeout;
        for server in &servers {
            loop {
                let what = format!("waiting for server {server} to become {target}");
                let current = self
                    .cancel
                    .guard(&what, nova.get_server(server))
                    .await?
                    .ok_or_else(|| failed(format!("server {server} disappeared while {what}")))?;
                if current.status == target && current.task_state.is_none() {
                    break;
                }
                if current.status == "ERROR" {
                    let fault = current.fault.as_ref().and_then(|f| f["message"].as_str()).unwrap_or("no fault");
                    return Err(failed(format!("server {server} went to ERROR: {fault}")));
                }
                if Instant::now() + self.driver.wait.poll_interval > deadline {
                    return Err(failed(format!("timed out {what} (last status {})", current.status)));
                }
                self.cancel.pause(&what, self.driver.wait.poll_interval).await?;
            }
        }
        self.inventory.vnf_state = change_state_to.to_owned();
        Ok(())
    }

    async fn teardown(&mut self) -> Result<(), Halt> {
        let stack = self.state.identifier();
        let what = format!("deleting Heat stack {}", self.state.stack_name);
        let existed = self.cancel.guard(&what, self.heat.delete_stack(&stack)).await?;
        if existed {
            self.wait_stack("DELETE_COMPLETE").await?;
        }
        self.inventory = Inventory { vnf_state: self.inventory.vnf_state.clone(), ..Inventory::default() };
        Ok(())
    }

    /// The stack's resources, listed once more (when the stack and flavour are known).
    async fn reread_after_failure(&mut self) {
        if self.state.stack_id.is_some()
            && let Some(flavour) = self.flavour_id.as_deref().and_then(|id| self.ctx.vnfd.flavour(id))
            && let Ok(resources) = self.heat.list_resources(&self.state.identifier(), 2).await
        {
            let state = self.inventory.vim_state.clone();
            let mut vips = std::mem::take(&mut self.inventory.vip_cp_info);
            self.inventory = map_resources(&resources, flavour, &self.inventory, self.vim_connection_id());
            self.inventory.vim_state = state;
            self.inventory.ext_link_ports = trunk_ports(&resources, flavour, self.vim_connection_id());
            // The VipCps whose port is still there, as last read.
            vips.retain(|vip| {
                let port = VipCpInfo::deserialize(vip).ok().and_then(|vip| vip.vnf_link_port_id);
                resources.iter().any(|res| Some(&res.physical_resource_id) == port.as_ref())
            });
            self.inventory.vip_cp_info = vips;
        }
    }

    fn into_inventory(self) -> Inventory {
        self.inventory
    }
}

impl InfraDriver for OpenStackDriver {
    fn vim_type(&self) -> &'static str {
        VIM_TYPE_OPENSTACK
    }

    fn execute<'a>(
        &'a self,
        ctx: InfraContext<'a>,
        action: InfraAction<'a>,
    ) -> BoxFuture<'a, Result<Inventory, DriverError>> {
        Box::pin(async move {
            let mut creds =
                VimCredentials::from_vim_connection(ctx.vim).map_err(|e| DriverError::new(e.to_string()))?;
            creds.tls.trust = self.trust.clone();
            let heat = HeatClient::new(creds.clone()).map_err(|error| DriverError::new(error.to_string()))?;
            let state = StackState::of(ctx.current, ctx.instance_id);
            let flavour_id = state.flavour_id.clone();
            let cancel = CancelGuard::new(ctx.cancelled, self.cancel_poll);
            let inventory = ctx.current.clone();
            let run = HeatRun {
                driver: self,
                ctx: &ctx,
                cancel,
                creds,
                heat,
                state,
                inventory,
                flavour_id,
                extra_parameters: Map::new(),
            };
            run_action(run, action).await
        })
    }
}
