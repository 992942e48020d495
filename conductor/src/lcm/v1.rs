//! `VnflcmDriverV1`: VNF LCM API 1.x (SOL003 v2.6.1 shapes) on the `*_v1` tables.

use std::sync::Arc;

use serde_json::Value;
use solgate_db::repo::lcm::LcmMajor;
use solgate_drivers::VimConnection;

use super::LcmShapes;
use super::engine;
use crate::context::{ConductorContext, ConductorError};

#[derive(Debug, Clone, Copy, Default)]
pub struct VnflcmDriverV1;

impl LcmShapes for VnflcmDriverV1 {
    fn major(&self) -> LcmMajor {
        LcmMajor::V1
    }

    /// SOL003 v2.6.1: `vimConnectionInfo` is an array of VimConnectionInfo with `id`.
    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection> {
        vim_connection_info
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|value| serde_json::from_value(value.clone()).ok())
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

impl VnflcmDriverV1 {
    /// Runs whatever work the operation occurrence has pending.
    pub async fn process(&self, ctx: &Arc<ConductorContext>, op_id: &str) -> Result<(), ConductorError> {
        Box::pin(engine::process(ctx, self, op_id)).await
    }
}
