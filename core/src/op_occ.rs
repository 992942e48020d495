//! VnfLcmOpOcc documents and the SOL003 operation states, and the occurrence's private
//! bookkeeping (`_solgate`: its plans, journal and grant flags).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use solgate_model::lcm_op_occ::{CancelState, NewVnfLcmOpOcc, OpOccState};
use solgate_model::lcm_request::lenient;

use crate::operation::OperationPlan;

pub use solgate_model::operation::{COMPLETED, FAILED, FAILED_TEMP, PROCESSING, ROLLED_BACK, ROLLING_BACK, STARTING};

/// Work a conductor takes up (`pending_action`).
pub const ACTION_START: &str = "start";
pub const ACTION_RETRY: &str = "retry";
pub const ACTION_ROLLBACK: &str = "rollback";

/// States an operation never leaves.
pub fn is_final(state: &str) -> bool {
    matches!(state, COMPLETED | FAILED | ROLLED_BACK)
}

/// A new occurrence (not cancel-pending).
pub fn new_document(
    id: &str,
    instance_id: &str,
    operation: &str,
    params: &Value,
    state: &str,
    now: &str,
    automatic: bool,
) -> Value {
    let document = NewVnfLcmOpOcc {
        id,
        state: OpOccState { operation_state: state, state_entered_time: now },
        start_time: now,
        vnf_instance_id: instance_id,
        operation,
        is_automatic_invocation: automatic,
        operation_params: params,
        cancel: CancelState::default(),
    };
    serde_json::to_value(document).unwrap_or_default()
}

/// Moves the document to `state`; `stateEnteredTime` changes on every transition.
pub fn set_state(document: &mut Value, state: &str, now: &str) {
    crate::overlay(document, &OpOccState { operation_state: state, state_entered_time: now });
}

/// Sets `isCancelPending` (and, when given, the `cancelMode` asked for).
pub fn set_cancel(document: &mut Value, cancel: CancelState<'_>) {
    crate::overlay(document, &cancel);
}

/// Whether a cancel of the occurrence was asked for and is not answered yet.
pub fn is_cancel_pending(document: &Value) -> bool {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Flag {
        #[serde(default, deserialize_with = "lenient")]
        is_cancel_pending: Option<bool>,
    }
    Flag::deserialize(document).unwrap_or_default().is_cancel_pending == Some(true)
}

/// The occurrence's `operationParams` (the request body it was accepted with).
pub fn operation_params(document: &Value) -> Value {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        #[serde(default)]
        operation_params: Value,
    }
    Params::deserialize(document).unwrap_or_default().operation_params
}

/// SOL013 ProblemDetails for an operation's `error`.
pub fn problem(status: u16, title: &str, detail: &str) -> Value {
    json!({ "status": status, "title": title, "detail": detail })
}

/// Sets or clears `error`.
pub fn set_error(document: &mut Value, error: Option<Value>) {
    if let Value::Object(map) = document {
        match error {
            Some(error) => {
                map.insert("error".to_owned(), error);
            }
            None => {
                map.shift_remove("error");
            }
        }
    }
}

/// An occurrence's private bookkeeping (`_solgate`, never shown). Plans stay JSON here,
/// read by [`OperationPlan::stored`]: a plan of an older shape is kept as it was. Members
/// of the conductor's (`inventory`, ...) are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpOccPrivate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_plan: Option<Value>,
    /// The steps the occurrence went through (the state machine's journal).
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub journal: Option<Vec<Value>>,
    /// A Grant asked for and not stored yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_grant: Option<Value>,
    /// The grant is the local NFVO's (the state machine gave it one).
    #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")]
    pub local_grant: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl OpOccPrivate {
    /// Changes the private part of an occurrence document in place (made when missing).
    pub fn update(document: &mut Value, change: impl FnOnce(&mut OpOccPrivate)) {
        let Value::Object(map) = document else { return };
        let taken = map.get_mut(crate::PRIVATE_KEY).map(std::mem::take).unwrap_or_default();
        let mut private = OpOccPrivate::deserialize(taken).unwrap_or_default();
        change(&mut private);
        map.insert(crate::PRIVATE_KEY.to_owned(), serde_json::to_value(private).unwrap_or_default());
    }
}

impl OperationPlan {
    /// The plan stored with an occurrence (`rollback` for the one of its rollback).
    pub fn stored(op: &Value, rollback: bool) -> Option<Self> {
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase")]
        struct Plans {
            #[serde(default, deserialize_with = "lenient")]
            plan: Option<OperationPlan>,
            #[serde(default, deserialize_with = "lenient")]
            rollback_plan: Option<OperationPlan>,
        }
        let plans: Plans = crate::private_part(op);
        if rollback { plans.rollback_plan } else { plans.plan }
    }

    /// Stores the plan with an occurrence.
    pub fn store(&self, op: &mut Value, rollback: bool) {
        let plan = serde_json::to_value(self).unwrap_or(Value::Null);
        OpOccPrivate::update(op, |private| {
            if rollback {
                private.rollback_plan = Some(plan);
            } else {
                private.plan = Some(plan);
            }
        });
    }
}
