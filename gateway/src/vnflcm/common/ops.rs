//! Tasks on operation occurrences (retry, rollback, fail, cancel), shared by v1 and v2.
//! Retry, rollback and fail only from FAILED_TEMP; cancel only from STARTING, PROCESSING
//! or ROLLING_BACK (SOL003); 409 otherwise.

use actix_web::HttpResponse;
use serde_json::{Value, json};
use solgate_core::notify::{self, Event};
use solgate_core::op_occ::{self, ACTION_RETRY, ACTION_ROLLBACK, FAILED, FAILED_TEMP, ROLLED_BACK, STARTING};
use solgate_core::work::kind_name;
use solgate_core::work::{RpcMessage, WorkKind};
use solgate_core::{now, without_private};
use solgate_db::repo::lcm::{self, LcmMajor, OpOccRecord, RawDocument};
use solgate_db::repo::outbox;
use solgate_db::{AnyConnection, write_transaction};

use super::{db_error, major_of, present};
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("VnfLcmOpOcc {id} not found."))
}

fn not_failed_temp(id: &str) -> ApiError {
    ApiError::conflict(format!("LCM operation {id} not FAILED_TEMP."))
}

fn load(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> ApiResult<OpOccRecord> {
    lcm::find_op(conn, major, id).map_err(db_error)?.ok_or_else(|| not_found(id))
}

fn instance_view(conn: &mut AnyConnection, major: LcmMajor, op: &OpOccRecord) -> ApiResult<Value> {
    Ok(lcm::find_instance(conn, major, op.vnf_instance_id())
        .map_err(db_error)?
        .map(|record| without_private(record.body))
        .unwrap_or_else(|| json!({ "id": op.vnf_instance_id() })))
}

/// Retry or rollback: records the request for a conductor, 202 (no body, no Location,
/// as Tacker).
pub async fn request(
    state: &AppState,
    negotiated: &Negotiated,
    id: String,
    action: &'static str,
) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let op_id = id.clone();
    let outbox_id = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let mut op = load(conn, major, &id)?;
                if op.state() != FAILED_TEMP {
                    return Err(not_failed_temp(&id));
                }
                if op.pending_action.is_some() {
                    return Err(ApiError::conflict(format!(
                        "A {} of LCM operation {id} is already requested.",
                        op.pending_action.clone().unwrap_or_default()
                    )));
                }
                if action == ACTION_ROLLBACK && !op_occ::rollback_supported(op.operation(), &op.body["operationParams"])
                {
                    return Err(ApiError::unprocessable(format!("Rollback of {} is not supported.", op.operation())));
                }
                op.pending_action = Some(action.to_owned());
                if !lcm::update_op_guarded(conn, major, &op, None, FAILED_TEMP).map_err(db_error)? {
                    return Err(not_failed_temp(&id));
                }
                outbox::enqueue(conn, kind_name(WorkKind::LcmOpOcc), &id, major.number()).map_err(db_error)
            })
        })
        .await?;
    state.dispatch(outbox_id, RpcMessage::lcm(op_id, major.number()));
    Ok(HttpResponse::Accepted().finish())
}

pub async fn retry(state: &AppState, negotiated: &Negotiated, id: String) -> ApiResult<HttpResponse> {
    request(state, negotiated, id, ACTION_RETRY).await
}

pub async fn rollback(state: &AppState, negotiated: &Negotiated, id: String) -> ApiResult<HttpResponse> {
    request(state, negotiated, id, ACTION_ROLLBACK).await
}

/// Fail: FAILED_TEMP → FAILED at once (no conductor involved); 200 with the occurrence.
pub async fn fail(state: &AppState, negotiated: &Negotiated, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let links = state.links.clone();
    let op = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let mut op = load(conn, major, &id)?;
                if op.state() != FAILED_TEMP || op.pending_action.is_some() {
                    return Err(not_failed_temp(&id));
                }
                op_occ::set_state(&mut op.body, FAILED, &now());
                if let Value::Object(map) = &mut op.body {
                    map.shift_remove(solgate_core::PRIVATE_KEY);
                }
                if !lcm::update_op_guarded(conn, major, &op, None, FAILED_TEMP).map_err(db_error)? {
                    return Err(not_failed_temp(&id));
                }
                lcm::delete_grant(conn, major, &id).map_err(db_error)?;
                let instance = instance_view(conn, major, &op)?;
                notify::enqueue(
                    conn,
                    major,
                    &links,
                    Event::OpOcc { op: &op.body, instance: &instance, status: "RESULT" },
                )
                .map_err(db_error)?;
                Ok(op)
            })
        })
        .await?;
    let links = present::op_occ_links(&state.links, major.number(), &op.body);
    let body = present::render(negotiated, "VnfLcmOpOcc", &op.body, links);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}

/// Cancel (SOL003): an unclaimed STARTING occurrence is rolled back at once; otherwise
/// the running conductor sees `isCancelPending` between steps and moves PROCESSING /
/// ROLLING_BACK to FAILED_TEMP (STARTING to ROLLED_BACK).
pub async fn cancel(
    state: &AppState,
    negotiated: &Negotiated,
    id: String,
    body: Option<Value>,
) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let mode = match &body {
        Some(body) => {
            super::validate(negotiated, "CancelMode", body)?;
            body["cancelMode"].as_str().unwrap_or("GRACEFUL").to_owned()
        }
        None => "GRACEFUL".to_owned(),
    };
    let links = state.links.clone();
    state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let mut op = load(conn, major, &id)?;
                let current = op.state().to_owned();
                if !matches!(current.as_str(), "STARTING" | "PROCESSING" | "ROLLING_BACK") {
                    return Err(ApiError::conflict(format!(
                        "LCM operation {id} is {current}; only STARTING, PROCESSING or ROLLING_BACK operations can be cancelled."
                    )));
                }
                if op.body["isCancelPending"] == true {
                    return Err(ApiError::conflict(format!("LCM operation {id} is already being cancelled.")));
                }
                let owner = op.owner.clone();
                if current == STARTING && owner.is_none() {
                    // Not taken up yet: nobody else will touch it, finish it here.
                    op_occ::set_state(&mut op.body, ROLLED_BACK, &now());
                    op_occ::set_error(&mut op.body, Some(op_occ::problem(409, "Conflict", "The LCM operation was cancelled.")));
                    op.pending_action = None;
                    if !lcm::update_op_guarded(conn, major, &op, None, STARTING).map_err(db_error)? {
                        return Err(ApiError::conflict(format!("LCM operation {id} changed meanwhile; try again.")));
                    }
                    outbox::complete(conn, &id).map_err(db_error)?;
                    let instance = instance_view(conn, major, &op)?;
                    notify::enqueue(conn, major, &links, Event::OpOcc { op: &op.body, instance: &instance, status: "RESULT" })
                        .map_err(db_error)?;
                } else {
                    op.body["isCancelPending"] = json!(true);
                    op.body["cancelMode"] = json!(mode);
                    if !lcm::update_op_guarded(conn, major, &op, owner.as_deref(), &current).map_err(db_error)? {
                        return Err(ApiError::conflict(format!("LCM operation {id} changed meanwhile; try again.")));
                    }
                }
                Ok(())
            })
        })
        .await?;
    Ok(HttpResponse::Accepted().finish())
}

/// GET vnf_lcm_op_occs: filter, selectors, paging.
pub async fn list(state: &AppState, req: &actix_web::HttpRequest, negotiated: &Negotiated) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let query = crate::common::list::parse(req, negotiated, "VnfLcmOpOcc")?;
    let page = crate::common::list::run(
        state,
        req,
        &query,
        crate::common::list::Source {
            columns: lcm::columns::OP_OCCS,
            page_size: state.paging.lcm_op_occ_page_size,
            fetch: move |conn: &mut AnyConnection, backend, spec: &_| lcm::list_ops_raw(conn, backend, major, spec),
            document: |raw: &RawDocument| without_private(serde_json::from_str(&raw.body).unwrap_or(Value::Null)),
            id: |raw: &RawDocument| raw.id.clone(),
        },
    )
    .await?;
    let version = negotiated.version();
    let selectors = crate::common::list::selector_key(&query);
    let entries: Vec<_> = page
        .items
        .iter()
        .map(|raw| {
            let key = format!("o{}|{}|{}|{version}|{selectors}", major.number(), raw.id, raw.stamp);
            state.render_cache.get_or_render(key, || {
                let stored: Value = serde_json::from_str(&raw.body).unwrap_or(Value::Null);
                let links = present::op_occ_links(&state.links, major.number(), &stored);
                let rendered = present::render(negotiated, "VnfLcmOpOcc", &stored, links);
                present::select(&query.selector, &present::OP_OCC_SELECTORS, rendered).to_string()
            })
        })
        .collect();
    Ok(crate::common::list::respond_serialized(&entries, page.next_link))
}

/// GET vnf_lcm_op_occs/{id}.
pub async fn show(state: &AppState, negotiated: &Negotiated, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let lookup = id.clone();
    let op = state
        .db(move |conn| lcm::find_op(conn, major, &lookup).map_err(db_error))
        .await?
        .ok_or_else(|| not_found(&id))?;
    let links = present::op_occ_links(&state.links, major.number(), &op.body);
    let body = present::render(negotiated, "VnfLcmOpOcc", &op.body, links);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}
