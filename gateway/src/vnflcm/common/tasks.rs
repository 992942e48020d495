//! Accepting an LCM task (instantiate, terminate, scale, ..., and PATCH): validation
//! against the negotiated version's schema, then the domain plans and records it in one
//! transaction (`solgate_core::requests::accept`), then the work message is published; in
//! `solgate serve` the conductor of the process takes the start up in that transaction.

use actix_web::HttpResponse;
use actix_web::http::header;
use serde_json::Value;
use solgate_core::operation::LcmOperation;
use solgate_core::requests::{self, IfMatch, TaskRequest};
use solgate_core::shapes;
use solgate_core::work::{ConductorSlot, RpcMessage, TakenUp};

use super::{major_of, validate};
use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

/// How an accepted task reaches a conductor. One per request, moved out at once: the size
/// of its larger variant costs nothing a box would not.
#[allow(clippy::large_enum_variant)]
enum Handover {
    /// Taken up by the conductor of this process in the accepting transaction.
    Local(Box<dyn ConductorSlot>, TakenUp),
    /// By the work message of its outbox row.
    Message(requests::Accepted),
}

/// Accepts a task on an instance: 202 with `Location` of the new occurrence.
pub async fn accept(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    instance_id: String,
    operation: LcmOperation,
    body: Value,
    if_match: Option<IfMatch>,
) -> ApiResult<HttpResponse> {
    // SelectVnfDeployableModulesRequest: selectedDeployableModule, 1..N (SOL003 V4.5.1; the
    // dictionary's schema marks no member mandatory).
    if operation == LcmOperation::SelectDeplMods
        && body["selectedDeployableModule"].as_array().is_none_or(Vec::is_empty)
    {
        return Err(ApiError::bad_request("selectedDeployableModule is required: at least one deployable module id."));
    }
    // Tacker validates before looking the instance up: a bad body is 400 even for an
    // unknown instance.
    validate(negotiated, operation.request_schema(), &body)?;
    let major = major_of(negotiated)?;
    let mut body = body;
    // A vimId alone names a registered VIM; an instantiation without any uses the default.
    solgate_core::vims::complete_vim_connections(
        &state.db,
        tenant.scope(),
        tenant.project(),
        major,
        operation,
        &mut body,
    )
    .await?;
    // VIM credentials are stored sealed from here on (operationParams, plan, instance).
    state.secrets.seal(&mut body);
    let links = state.links.clone();
    let vim_types = state.vim_types.clone();
    let scope = tenant.scope().map(str::to_owned);
    // The conductor of this process takes the start up in the accepting transaction when it
    // has a place; otherwise the work goes by message.
    let local =
        state.local_conductor.as_ref().and_then(|local| local.reserve()).map(|slot| (slot, state.machine.clone()));
    let accepted = state
        .write(move |conn| {
            let request = TaskRequest {
                major,
                operation,
                instance_id: &instance_id,
                params: &body,
                shapes: shapes::for_major(major),
                vim_types: &vim_types,
                links: &links,
                scope: scope.as_deref(),
                if_match: if_match.as_ref(),
                automatic: false,
            };
            // `state.write`'s transaction is the accepting one; its error aborts it.
            Ok(match local {
                Some((mut slot, machine)) => {
                    let taken = requests::accept_taken_in(conn, &request, &machine, slot.as_mut())?;
                    Handover::Local(slot, taken)
                }
                None => Handover::Message(requests::accept_in(conn, &request)?),
            })
        })
        .await?;
    let op_id = match accepted {
        Handover::Local(slot, taken) => {
            let op_id = taken.op.id.clone();
            slot.run(major, taken);
            op_id
        }
        Handover::Message(accepted) => {
            let op_id = accepted.op.id;
            state.dispatch(accepted.outbox_id, RpcMessage::lcm(op_id.clone(), major.number()));
            op_id
        }
    };
    Ok(HttpResponse::Accepted().insert_header((header::LOCATION, state.links.op_occ(major.number(), &op_id))).finish())
}
