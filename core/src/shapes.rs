//! What differs between the shapes of VNF LCM v1 (SOL003 v2.6.1) and v2 (SOL003 v3.3.1)
//! where the domain reads or writes a document: one adapter per major, chosen by
//! [`for_major`]. Everything else about an operation is the same for both majors.

use serde_json::Value;
use solgate_db::repo::lcm::LcmMajor;
use solgate_model::infra::VimConnection;

use solgate_sol013::merge_patch;

/// The parts of LCM documents whose shapes differ between majors.
pub trait LcmShapes: Send + Sync {
    fn major(&self) -> LcmMajor;
    /// The VIM connections in a `vimConnectionInfo` value.
    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection>;
    /// Merges a request's `vimConnectionInfo` into an instance document's.
    fn merge_vim_connections(&self, instance: &mut Value, requested: &Value);
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
    fn merge_vim_connections(&self, instance: &mut Value, requested: &Value) {
        let Some(requested) = requested.as_array() else { return };
        if !instance["vimConnectionInfo"].is_array() {
            instance["vimConnectionInfo"] = Value::Array(Vec::new());
        }
        if let Some(current) = instance["vimConnectionInfo"].as_array_mut() {
            for entry in requested {
                match current.iter_mut().find(|existing| existing["id"] == entry["id"]) {
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
    fn merge_vim_connections(&self, instance: &mut Value, requested: &Value) {
        if requested.is_object() {
            merge_patch(&mut instance["vimConnectionInfo"], requested);
        }
    }
}

use serde::Deserialize as _;
