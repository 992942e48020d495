//! An operation's Grant from an external NFVO (SOL003 clause 9): asked for once, stored with
//! the occurrence, and applied to the plan on every run that follows (a retry, a resumed
//! run, a rollback never asks again).

use serde_json::{Value, json};
use solgate_core::op_occ::{ROLLING_BACK, STARTING};
use solgate_core::operation::OperationPlan;
use solgate_db::repo::lcm;
use solgate_model::grant::{Grant, GrantRequest};

use crate::lcm::grant::{self, GrantInputs};
use crate::lcm::job::Job;
use crate::lcm::views::{AwaitedGrant, PendingGrant, private_of, set_private, view};
use crate::nfvo::{GrantAnswer, GrantError};

/// The external NFVO's grant for the operation, applied to `plan`. The grant stored with
/// the occurrence is used when there is one (a retried or resumed operation never asks
/// twice) and `None` returned; otherwise, when `may_ask`, the NFVO is asked and its new
/// Grant returned (sealed), to be stored with the next transition.
pub(crate) async fn external_grant(
    job: &Job,
    plan: &mut OperationPlan,
    may_ask: bool,
) -> Result<Option<Grant>, GrantError> {
    let Some(client) = job.ctx.nfvo.clone() else { return Ok(None) };
    let major = job.major;
    let stored = stored_grant(job).await.map_err(GrantError::Unavailable)?;
    let rolling_back = job.op.state() == ROLLING_BACK || !may_ask;
    if let Some(grant) = stored {
        grant::apply_grant(major, &job.ctx.secrets, plan, &grant, !rolling_back);
        return Ok(None);
    }
    if !may_ask {
        return Ok(None);
    }
    // The request's additionalParams, opened: the NFVO gets them as the client sent them.
    let mut additional = job.additional_params();
    job.ctx
        .secrets
        .open(&mut additional)
        .map_err(|error| GrantError::Unavailable(format!("additionalParams: {error}")))?;
    let (request, mut grant) = if let Some((location, request)) = awaited(job) {
        // A conductor that stopped while the NFVO decided left where to wait: no second request.
        tracing::info!(op = %job.op.id, %location, "waiting for the NFVO's grant asked for before");
        let grant = client.await_grant(&location, client.poll_interval()).await?;
        (opened_request(job, request)?, grant)
    } else {
        let request = new_request(job, plan, &additional).await?;
        tracing::info!(op = %job.op.id, operation = job.op.operation_name(), "asking the NFVO for a grant");
        let grant = match client.submit_grant(&request).await? {
            GrantAnswer::Granted(grant) => *grant,
            GrantAnswer::Pending { location, delay } => {
                remember_pending_grant(job, &request, &location).await?;
                client.await_grant(&location, delay).await?
            }
        };
        (request, grant)
    };
    grant::check_grant(&request, &grant).map_err(GrantError::Unavailable)?;
    grant::remember_requested_vdus(&request, &mut grant);
    // The VIM credentials it carries are stored sealed, like the instance's.
    let mut sealed = json!(grant);
    job.ctx.secrets.seal(&mut sealed);
    let grant: Grant = serde_json::from_value(sealed)
        .map_err(|error| GrantError::Unavailable(format!("The NFVO's Grant cannot be stored: {error}")))?;
    grant::apply_grant(major, &job.ctx.secrets, plan, &grant, true);
    Ok(Some(grant))
}

/// The GrantRequest of the operation, shaped by the flavour the instance has after it (its
/// VDUs' CPs, storage and affinity rules).
async fn new_request(job: &Job, plan: &OperationPlan, additional: &Value) -> Result<GrantRequest, GrantError> {
    let operation = job
        .operation()
        .ok_or_else(|| GrantError::Unavailable(format!("Operation {} is not supported.", job.op.operation_name())))?;
    let contents = job.package(plan).await.ok().map(|(_, contents)| contents);
    let flavour_id = plan
        .deployment
        .as_ref()
        .map(|deployment| deployment.flavour_id.clone())
        .or_else(|| job.current_flavour_id())
        .unwrap_or_default();
    let flavour = contents.as_ref().and_then(|contents| contents.vnfd.flavour(&flavour_id));
    Ok(grant::grant_request(&GrantInputs {
        major: job.major,
        links: &job.ctx.links,
        instance: &job.instance,
        op: &job.op,
        operation,
        plan,
        flavour,
        additional: Some(additional),
    }))
}

/// Where a conductor that stopped before the NFVO decided was waiting, and its request
/// (sealed).
fn awaited(job: &Job) -> Option<(String, Value)> {
    match view::<AwaitedGrant>(private_of(&job.op.body)).pending_grant {
        PendingGrant { location: Some(location), request: Some(request) } if request.is_object() => {
            Some((location, request))
        }
        _ => None,
    }
}

fn opened_request(job: &Job, mut request: Value) -> Result<GrantRequest, GrantError> {
    let unreadable = |error: String| GrantError::Unavailable(format!("the pending grant request: {error}"));
    job.ctx.secrets.open(&mut request).map_err(|error| unreadable(error.to_string()))?;
    serde_json::from_value(request).map_err(|error| unreadable(error.to_string()))
}

/// Stores the request and `Location` of an asynchronous grant with the occurrence (still
/// STARTING, still ours), so a conductor that resumes it after a crash waits for that grant
/// instead of asking again. The transition to PROCESSING drops them (the Grant is stored).
async fn remember_pending_grant(job: &Job, request: &GrantRequest, location: &str) -> Result<(), GrantError> {
    let mut op = job.op.clone();
    // The request carries the client's additionalParams opened: stored sealed.
    let mut request = json!(request);
    job.ctx.secrets.seal(&mut request);
    let pending = PendingGrant { location: Some(location.to_owned()), request: Some(request) };
    set_private(&mut op.body, "pendingGrant", json!(pending));
    let (major, owner) = (job.major, job.ctx.id.clone());
    let stored = job
        .ctx
        .db_run(move |conn| lcm::update_op_guarded(conn, major, &op, Some(&owner), STARTING))
        .await
        .map_err(|error| GrantError::Unavailable(format!("The pending grant cannot be recorded: {error}")))?;
    if !stored {
        return Err(GrantError::Unavailable("The operation is no longer this conductor's.".into()));
    }
    Ok(())
}

/// The Grant stored with the occurrence, if any.
async fn stored_grant(job: &Job) -> Result<Option<Grant>, String> {
    let (major, id) = (job.major, job.op.id.clone());
    let stored = job
        .ctx
        .db_run(move |conn| lcm::find_grant(conn, major, &id))
        .await
        .map_err(|error| format!("The stored grant cannot be read: {error}"))?;
    stored.map(serde_json::from_value).transpose().map_err(|error| format!("The stored grant cannot be read: {error}"))
}

/// Applies the Grant stored with the occurrence to `plan` (a resumed PROCESSING
/// occurrence: the instance afterwards records the granted VIM connections too).
pub(crate) async fn apply_stored_grant(job: &Job, plan: &mut OperationPlan) -> Result<(), String> {
    match stored_grant(job).await? {
        Some(grant) => {
            grant::apply_grant(job.major, &job.ctx.secrets, plan, &grant, true);
            Ok(())
        }
        None => Err("The operation's grant is not stored; retry or roll back the operation.".to_owned()),
    }
}
