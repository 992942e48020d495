//! VnfLcmOpOcc documents and the SOL003 operation states.

use serde_json::{Value, json};

pub use solgate_model::operation::{COMPLETED, FAILED, FAILED_TEMP, PROCESSING, ROLLED_BACK, ROLLING_BACK, STARTING};

/// Work a conductor takes up (`pending_action`).
pub const ACTION_START: &str = "start";
pub const ACTION_RETRY: &str = "retry";
pub const ACTION_ROLLBACK: &str = "rollback";

/// States an operation never leaves.
pub fn is_final(state: &str) -> bool {
    matches!(state, COMPLETED | FAILED | ROLLED_BACK)
}

/// A new occurrence (`isAutomaticInvocation` false, not cancel-pending).
pub fn new_document(id: &str, instance_id: &str, operation: &str, params: &Value, state: &str, now: &str) -> Value {
    json!({
        "id": id,
        "operationState": state,
        "stateEnteredTime": now,
        "startTime": now,
        "vnfInstanceId": instance_id,
        "operation": operation,
        "isAutomaticInvocation": false,
        "operationParams": params,
        "isCancelPending": false,
    })
}

/// Moves the document to `state`; `stateEnteredTime` changes on every transition.
pub fn set_state(document: &mut Value, state: &str, now: &str) {
    document["operationState"] = json!(state);
    document["stateEnteredTime"] = json!(now);
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
