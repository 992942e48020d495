//! `VnflcmDriverV2`: VNF LCM API 2.x (SOL003 v3.3.1 shapes) on the `*_v2` tables.

use std::sync::Arc;

use serde_json::Value;
use solgate_db::repo::lcm::LcmMajor;
use solgate_drivers::VimConnection;

use super::LcmShapes;
use super::engine;
use crate::common::instance::merge_patch;
use crate::context::{ConductorContext, ConductorError};

#[derive(Debug, Clone, Copy, Default)]
pub struct VnflcmDriverV2;

impl LcmShapes for VnflcmDriverV2 {
    fn major(&self) -> LcmMajor {
        LcmMajor::V2
    }

    /// SOL003 v3.3.1: `vimConnectionInfo` is a map from connection id to VimConnectionInfo.
    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection> {
        vim_connection_info
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(id, value)| {
                let mut connection: VimConnection = serde_json::from_value(value.clone()).ok()?;
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

impl VnflcmDriverV2 {
    /// Runs whatever work the operation occurrence has pending.
    pub async fn process(&self, ctx: &Arc<ConductorContext>, op_id: &str) -> Result<(), ConductorError> {
        Box::pin(engine::process(ctx, self, op_id)).await
    }
}
