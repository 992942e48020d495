//! What the OpenStack driver remembers of a VNF's Heat stack in `Inventory::vim_state`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Stack;
use crate::infra::Inventory;

/// What the driver remembers in `Inventory::vim_state`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct StackState {
    pub(super) stack_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stack_id: Option<String>,
    /// Flavour and BaseHOT digest of the template the stack was last given: a change
    /// (change_flavour, change_vnfpkg) sends the template again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) flavour_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) template_digest: Option<String>,
    /// `additionalParams.nfv` of the requests so far, merged over the computed `nfv`.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub(super) nfv_overrides: Value,
    /// The `nfv` parameter last sent (Tacker keeps it in instantiatedVnfInfo.metadata).
    #[serde(skip_serializing_if = "Value::is_null")]
    pub(super) nfv: Value,
    /// The stack's template came from LCM operation user data: an operation without user
    /// data keeps it and changes only the VDUs' `desired_capacity` (Tacker's default user
    /// data for a stack it did not make).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) user_data: bool,
}

impl StackState {
    pub(super) fn of(current: &Inventory, instance_id: &str) -> Self {
        let mut state: StackState = serde_json::from_value(current.vim_state.clone()).unwrap_or_default();
        if state.stack_name.is_empty() {
            // Tacker's heat_utils.get_stack_name.
            state.stack_name = format!("vnf-{instance_id}");
        }
        state
    }

    /// `name/id` when the id is known (no redirect), else the name.
    pub(super) fn identifier(&self) -> String {
        match &self.stack_id {
            Some(id) => format!("{}/{id}", self.stack_name),
            None => self.stack_name.clone(),
        }
    }
}

/// The stack's `nfv` parameter: Heat shows a `json` parameter as its JSON text.
pub(super) fn nfv_parameter(stack: &Stack) -> Option<Value> {
    match stack.parameters.get("nfv")? {
        Value::String(text) => serde_json::from_str(text).ok(),
        other => Some(other.clone()),
    }
}
