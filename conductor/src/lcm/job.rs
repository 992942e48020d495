//! One run of an LCM operation: what it needs, what it reads of its occurrence, and why it
//! stops.

use std::sync::Arc;

use serde_json::{Value, json};
use solgate_core::lifecycle::StateChange;
use solgate_core::operation::OperationPlan;
use solgate_core::{CoreError, vnfd};
use solgate_db::repo::lcm::{InstanceRecord, LcmMajor, OpOccRecord};
use solgate_model::LcmOperation;

use crate::context::{ConductorContext, ConductorError};
use crate::lcm::operation_of;
use crate::lcm::views::{InstanceView, view};

/// Everything one run needs.
pub(crate) struct Job {
    pub ctx: Arc<ConductorContext>,
    pub major: LcmMajor,
    pub op: OpOccRecord,
    pub instance: InstanceRecord,
}

impl Job {
    pub fn operation(&self) -> Option<LcmOperation> {
        operation_of(&self.op)
    }

    /// Whether the operation asks the external NFVO for a grant (its row says).
    pub fn needs_external_grant(&self) -> bool {
        self.ctx.nfvo.is_some() && self.operation().is_none_or(LcmOperation::asks_grant)
    }

    /// The request's `additionalParams` (free-form, sealed as stored): `{}` when it has none.
    pub fn additional_params(&self) -> Value {
        let given = &self.op.body["operationParams"]["additionalParams"];
        if given.is_object() { given.clone() } else { json!({}) }
    }

    /// The package (and parsed contents) the instance uses after the operation.
    pub async fn package(&self, plan: &OperationPlan) -> Result<vnfd::Loaded, Stop> {
        let id = plan.new_package_id.clone().unwrap_or_else(|| self.instance.vnf_pkg_id.clone());
        self.ctx
            .db_read(move |conn| vnfd::load(conn, &id))
            .await?
            .ok_or_else(|| Stop { status: 422, detail: "The VNF package of the instance is not onboarded.".to_owned() })
    }

    /// The flavour the instance has before the operation.
    pub fn current_flavour_id(&self) -> Option<String> {
        view::<InstanceView>(&self.instance.body).flavour_id().map(str::to_owned)
    }
}

/// Whether a client asked to cancel the occurrence.
pub(crate) fn cancel_pending(op: &OpOccRecord) -> bool {
    op.body["isCancelPending"] == true
}

/// Why an operation cannot go on: becomes the occurrence's `error`.
pub(crate) struct Stop {
    pub status: u16,
    pub detail: String,
}

impl Stop {
    pub fn internal(detail: impl Into<String>) -> Self {
        Self { status: 500, detail: detail.into() }
    }

    pub fn change(self, state: &'static str) -> StateChange {
        StateChange::to(state).with_error(self.status, &self.detail)
    }
}

impl From<CoreError> for Stop {
    fn from(error: CoreError) -> Self {
        match error {
            CoreError::BadRequest(detail) | CoreError::Unprocessable(detail) | CoreError::Conflict(detail) => {
                Self { status: 422, detail }
            }
            other => Self::internal(other.to_string()),
        }
    }
}

impl From<ConductorError> for Stop {
    fn from(error: ConductorError) -> Self {
        Self::internal(error.to_string())
    }
}
