//! How stored documents are shown: private bookkeeping and credentials removed, rendered
//! for the negotiated minor version (fields it does not define are left out), `_links`
//! computed per response from the public endpoint, never stored.

use serde_json::{Map, Value, json};
use solgate_core::links::{Links, href};
use solgate_core::operation::LcmOperation;
use solgate_core::without_private;
use solgate_sol013::{AttributeSelector, SelectorSpec};

use crate::sol013::Negotiated;

/// A stored document as the negotiated version shows it, with `links`.
pub fn render(negotiated: &Negotiated, resource: &str, stored: &Value, links: Value) -> Value {
    // Rendering builds a new document with only what the version defines, which already
    // leaves out solgate's private keys; no copy of the stored one is needed first.
    let mut rendered = match negotiated.entry.dictionary.try_render(resource, stored) {
        Some(rendered) => rendered,
        None => without_private(stored.clone()),
    };
    crate::common::scrub::scrub(&mut rendered);
    if let Value::Object(map) = &mut rendered {
        map.insert("_links".to_owned(), links_for_version(negotiated, resource, links));
    }
    rendered
}

/// `_links` as the negotiated minor defines them: a link a later minor added (e.g.
/// `changeCurrentVnfPkg`, SOL003 V3.6.1) is left out for an earlier one.
fn links_for_version(negotiated: &Negotiated, resource: &str, links: Value) -> Value {
    let mut wrapped = Map::new();
    wrapped.insert("_links".to_owned(), links);
    let wrapped = Value::Object(wrapped);
    match negotiated.entry.dictionary.try_render(resource, &wrapped) {
        Some(Value::Object(mut rendered)) if rendered.contains_key("_links") => {
            rendered.shift_remove("_links").unwrap_or_default()
        }
        _ => wrapped["_links"].clone(),
    }
}

/// The operation types the negotiated minor defines, when it lacks some the stored shape
/// has (e.g. SELECT_DEPL_MODS, a 2.12.0 value); `None` when it knows them all.
pub fn operation_types(negotiated: &Negotiated) -> Option<&[Value]> {
    fn values(dictionary: &solgate_schemas::Dictionary) -> Option<&Vec<Value>> {
        dictionary.schema("VnfLcmOpOcc").and_then(|schema| schema["$defs"]["LcmOperationType"]["enum"].as_array())
    }
    let known = values(&negotiated.entry.dictionary)?;
    let all = values(&negotiated.stored_shape)?;
    (known.len() < all.len()).then_some(known.as_slice())
}

/// Whether an occurrence can be shown under the negotiated minor: a client of an earlier
/// minor is never sent an operation type its version cannot parse.
pub fn operation_shown(known: Option<&[Value]>, op: &Value) -> bool {
    known.is_none_or(|known| known.contains(&op["operation"]))
}

/// VnfInstance `_links`: the tasks its state allows.
pub fn instance_links(links: &Links, major: u64, instance: &Value) -> Value {
    let id = instance["id"].as_str().unwrap_or_default();
    let base = links.instance(major, id);
    let mut map = Map::new();
    map.insert("self".into(), href(&base.clone()));
    for operation in LcmOperation::ALL {
        if let (Some(name), Some(path)) = (operation.link_name(), operation.task_path())
            && operation.in_major(major)
            && operation.allowed_on(instance)
        {
            map.insert(name.into(), href(&format!("{base}/{path}")));
        }
    }
    Value::Object(map)
}

/// VnfLcmOpOcc `_links`: task links only while the task is allowed (Tacker shows retry,
/// rollback and fail even on COMPLETED operations).
pub fn op_occ_links(links: &Links, major: u64, op: &Value) -> Value {
    let id = op["id"].as_str().unwrap_or_default();
    let base = links.op_occ(major, id);
    let mut map = Map::new();
    map.insert("self".into(), href(&base.clone()));
    map.insert("vnfInstance".into(), href(&links.instance(major, op["vnfInstanceId"].as_str().unwrap_or_default())));
    match op["operationState"].as_str() {
        Some("FAILED_TEMP") => {
            map.insert("retry".into(), href(&format!("{base}/retry")));
            if LcmOperation::from_name(op["operation"].as_str().unwrap_or_default())
                .is_some_and(|operation| operation.rollback_supported(&op["operationParams"]))
            {
                map.insert("rollback".into(), href(&format!("{base}/rollback")));
            }
            map.insert("fail".into(), href(&format!("{base}/fail")));
        }
        Some("STARTING" | "PROCESSING" | "ROLLING_BACK") => {
            map.insert("cancel".into(), href(&format!("{base}/cancel")));
        }
        _ => {}
    }
    Value::Object(map)
}

pub fn subscription_links(links: &Links, major: u64, id: &str) -> Value {
    json!({ "self": href(&links.subscription(major, id)) })
}

/// Attribute selectors per resource (SOL003 clauses 5.4.2.3.2 and 5.4.12.3.2).
pub const INSTANCE_SELECTORS: SelectorSpec<'static> = SelectorSpec {
    default_excluded: &[
        "vnfConfigurableProperties",
        "vimConnectionInfo",
        "instantiatedVnfInfo",
        "metadata",
        "extensions",
    ],
    mandatory: &[
        "id",
        "vnfInstanceName",
        "vnfInstanceDescription",
        "vnfdId",
        "vnfProvider",
        "vnfProductName",
        "vnfSoftwareVersion",
        "vnfdVersion",
        "vnfPkgId",
        "instantiationState",
        "_links",
    ],
};

pub const OP_OCC_SELECTORS: SelectorSpec<'static> = SelectorSpec {
    default_excluded: &["operationParams", "error", "resourceChanges", "changedInfo", "changedExtConnectivity"],
    mandatory: &[
        "id",
        "operationState",
        "stateEnteredTime",
        "startTime",
        "vnfInstanceId",
        "grantId",
        "operation",
        "isAutomaticInvocation",
        "isCancelPending",
        "cancelMode",
        "modificationsTriggeredByVnfPkgChange",
        "vnfSnapshotInfoId",
        "_links",
    ],
};

/// Applies the list's selectors to one rendered entry.
pub fn select(selector: &AttributeSelector, spec: &SelectorSpec<'_>, mut entry: Value) -> Value {
    selector.apply(&mut entry, spec);
    entry
}
