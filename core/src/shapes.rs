//! What differs between the shapes of VNF LCM v1 (SOL003 v2.6.1) and v2 (SOL003 v3.3.1)
//! where the domain reads or writes a document: one adapter per major, chosen by
//! [`for_major`]. Everything else about an operation is the same for both majors.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use solgate_db::repo::lcm::LcmMajor;
use solgate_model::infra::VimConnection;
use solgate_model::lcm_request::present;

use solgate_sol013::merge_patch;

/// The parts of LCM documents whose shapes differ between majors.
pub trait LcmShapes: Send + Sync {
    fn major(&self) -> LcmMajor;
    /// The VIM connections in a `vimConnectionInfo` value.
    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection>;
    /// Merges a request's `vimConnectionInfo` into an instance's (absent: none yet).
    fn merge_vim_connection_info(&self, current: &mut Option<Value>, requested: &Value);

    /// Merges a request's `vimConnectionInfo` into an instance document's.
    fn merge_vim_connections(&self, instance: &mut Value, requested: &Value) {
        // Any object reads as a VimMember; anything else is left as it is.
        if !instance.is_object() {
            return;
        }
        let Ok(mut document) = VimMember::deserialize(std::mem::take(instance)) else { return };
        self.merge_vim_connection_info(&mut document.vim_connection_info, requested);
        *instance = serde_json::to_value(document).unwrap_or_default();
    }
}

/// A document's `vimConnectionInfo` and, untouched, everything else (VnfInstance, an LCM
/// request, VnfInfoModifications).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VimMember {
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub vim_connection_info: Option<Value>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// The `id` of a v1 VimConnectionInfo entry (null without one).
pub fn entry_id(entry: &Value) -> Value {
    #[derive(Deserialize, Default)]
    struct Identified {
        #[serde(default)]
        id: Value,
    }
    Identified::deserialize(entry).unwrap_or_default().id
}

/// SOL003 v2.6.1: `vimConnectionInfo` is an array of VimConnectionInfo with `id`.
#[derive(Debug, Clone, Copy, Default)]
pub struct V1Shapes;

/// SOL003 v3.3.1: `vimConnectionInfo` is a map from connection id to VimConnectionInfo.
#[derive(Debug, Clone, Copy, Default)]
pub struct V2Shapes;

/// The adapter of a major.
pub fn for_major(major: LcmMajor) -> &'static dyn LcmShapes {
    match major {
        LcmMajor::V1 => &V1Shapes,
        LcmMajor::V2 => &V2Shapes,
    }
}

impl LcmShapes for V1Shapes {
    fn major(&self) -> LcmMajor {
        LcmMajor::V1
    }

    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection> {
        vim_connection_info
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|value| VimConnection::deserialize(value).ok())
            .collect()
    }

    /// Entries replace the instance's entry with the same `id`, others are appended.
    fn merge_vim_connection_info(&self, current: &mut Option<Value>, requested: &Value) {
        let Some(requested) = requested.as_array() else { return };
        let current = current.get_or_insert(Value::Null);
        if !current.is_array() {
            *current = Value::Array(Vec::new());
        }
        if let Some(current) = current.as_array_mut() {
            for entry in requested {
                let id = entry_id(entry);
                match current.iter_mut().find(|existing| entry_id(existing) == id) {
                    Some(existing) => *existing = entry.clone(),
                    None => current.push(entry.clone()),
                }
            }
        }
    }
}

impl LcmShapes for V2Shapes {
    fn major(&self) -> LcmMajor {
        LcmMajor::V2
    }

    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection> {
        vim_connection_info
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(id, value)| {
                let mut connection = VimConnection::deserialize(value).ok()?;
                connection.id = id.clone();
                Some(connection)
            })
            .collect()
    }

    /// Map entries merge by key (JSON Merge Patch, a `null` entry removes a connection).
    fn merge_vim_connection_info(&self, current: &mut Option<Value>, requested: &Value) {
        if requested.is_object() {
            merge_patch(current.get_or_insert(Value::Null), requested);
        }
    }
}
