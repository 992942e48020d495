//! Accepting an LCM task (instantiate, terminate, scale, ..., and PATCH): validation,
//! then one transaction that locks the instance, checks its state and the VNFD, refuses
//! a second operation in flight (the database's unique index is the final word), and
//! writes the occurrence, its outbox row and the START notification; then the RPC.

use actix_web::HttpResponse;
use actix_web::http::header;
use serde_json::Value;
use solgate_core::checks::{self, CheckError};
use solgate_core::notify::{self, Event};
use solgate_core::op_occ::{self, ACTION_START, PROCESSING, STARTING};
use solgate_core::work::kind_name;
use solgate_core::work::{RpcMessage, WorkKind};
use solgate_core::{now, vnfd, without_private};
use solgate_db::repo::lcm::{self, LcmMajor, OpOccRecord};
use solgate_db::repo::outbox;
use solgate_db::write_transaction;

use super::{db_error, major_of, validate};
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("VnfInstance {id} not found."))
}

pub fn in_progress(id: &str) -> ApiError {
    ApiError::conflict(format!("Other LCM operation of vnfInstance {id} is in progress."))
}

fn check_error(error: CheckError) -> ApiError {
    match error {
        CheckError::BadRequest(detail) => ApiError::bad_request(detail),
        CheckError::Conflict(detail) => ApiError::conflict(detail),
    }
}

/// Which instance states a task needs (SOL003 preconditions).
fn state_check(operation: &str, instance: &Value, id: &str) -> Result<(), CheckError> {
    match operation {
        "INSTANTIATE" => checks::require_not_instantiated(instance, id),
        "MODIFY_INFO" => Ok(()),
        _ => checks::require_instantiated(instance, id),
    }
}

/// Accepts a task on an instance: 202 with `Location` of the new occurrence.
pub async fn accept(
    state: &AppState,
    negotiated: &Negotiated,
    instance_id: String,
    operation: &'static str,
    schema: &'static str,
    body: Value,
) -> ApiResult<HttpResponse> {
    // Tacker validates before looking the instance up: a bad body is 400 even for an
    // unknown instance.
    validate(negotiated, schema, &body)?;
    let major = major_of(negotiated)?;
    let links = state.links.clone();
    let vim_types = state.vim_types.clone();
    let shapes = shapes(major);
    let op_id = uuid::Uuid::new_v4().to_string();
    let id = op_id.clone();
    let outbox_id = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                // The row lock serialises this with DELETE and other tasks on PostgreSQL;
                // SQLite's BEGIN IMMEDIATE already serialises writers.
                if !lcm::lock_instance(conn, major, &instance_id).map_err(db_error)? {
                    return Err(not_found(&instance_id));
                }
                let instance = lcm::find_instance(conn, major, &instance_id)
                    .map_err(db_error)?
                    .ok_or_else(|| not_found(&instance_id))?;
                state_check(operation, &instance.body, &instance_id).map_err(check_error)?;
                if lcm::in_flight_op(conn, major, &instance_id).map_err(db_error)?.is_some() {
                    return Err(in_progress(&instance_id));
                }
                semantic_checks(
                    conn,
                    operation,
                    &instance.body,
                    &instance.vnf_pkg_id,
                    &body,
                    &vim_types,
                    shapes.as_ref(),
                )?;
                let now = now();
                let initial = if operation == "MODIFY_INFO" { PROCESSING } else { STARTING };
                let document = op_occ::new_document(&id, &instance_id, operation, &body, initial, &now);
                let record = OpOccRecord {
                    id: id.clone(),
                    body: document,
                    pending_action: Some(ACTION_START.to_owned()),
                    owner: None,
                    lease_expires_at: None,
                    attempt: 1,
                    created_at: now.clone(),
                    updated_at: now,
                };
                lcm::insert_op(conn, major, &record).map_err(|error| {
                    if error.is_unique_violation() { in_progress(&instance_id) } else { db_error(error) }
                })?;
                let outbox_id =
                    outbox::enqueue(conn, kind_name(WorkKind::LcmOpOcc), &id, major.number()).map_err(db_error)?;
                let status = op_occ::notification_status(initial, operation, None);
                let instance_view = without_private(instance.body);
                notify::enqueue(
                    conn,
                    major,
                    &links,
                    Event::OpOcc { op: &record.body, instance: &instance_view, status },
                )
                .map_err(db_error)?;
                Ok(outbox_id)
            })
        })
        .await?;
    state.dispatch(outbox_id, RpcMessage::lcm(op_id.clone(), major.number()));
    Ok(HttpResponse::Accepted().insert_header((header::LOCATION, state.links.op_occ(major.number(), &op_id))).finish())
}

/// The shape adapter of a major, for `vimConnectionInfo` checks.
fn shapes(major: LcmMajor) -> Box<dyn solgate_core::shapes::LcmShapes> {
    match major {
        LcmMajor::V1 => Box::new(solgate_core::shapes::V1Shapes),
        LcmMajor::V2 => Box::new(solgate_core::shapes::V2Shapes),
    }
}

/// Checks against the VNFD and the VIM types we can drive (400/422 now rather than a
/// ROLLED_BACK later).
fn semantic_checks(
    conn: &mut solgate_db::AnyConnection,
    operation: &str,
    instance: &Value,
    package_id: &str,
    params: &Value,
    vim_types: &[&'static str],
    shapes: &dyn solgate_core::shapes::LcmShapes,
) -> ApiResult<()> {
    if let Some(requested) = params.get("vimConnectionInfo") {
        let mut merged = instance.clone();
        shapes.merge_vim_connections(&mut merged, requested);
        for connection in shapes.vim_connections(&merged["vimConnectionInfo"]) {
            if !vim_types.contains(&connection.normalized_vim_type()) {
                return Err(ApiError::unprocessable(format!(
                    "vimType {} is not supported; supported: {}.",
                    connection.vim_type,
                    vim_types.join(", ")
                )));
            }
        }
    }
    match operation {
        "CHANGE_VNFPKG" => {
            let vnfd_id = params["vnfdId"].as_str().unwrap_or_default();
            let loaded = vnfd::load_by_vnfd_id(conn, vnfd_id).map_err(db_error)?;
            let Some((package, contents)) = loaded else {
                return Err(ApiError::unprocessable(format!(
                    "VnfPackage of vnfdId {vnfd_id} is not found or not operational."
                )));
            };
            if package.operational_state() != "ENABLED" {
                return Err(ApiError::unprocessable(format!("VnfPackage of vnfdId {vnfd_id} is not ENABLED.")));
            }
            let flavour = instance["instantiatedVnfInfo"]["flavourId"].as_str().unwrap_or_default();
            if contents.vnfd.flavour(flavour).is_none() {
                return Err(ApiError::bad_request(format!(
                    "The VNFD of vnfdId {vnfd_id} has no flavour {flavour}, the instance's flavour."
                )));
            }
            Ok(())
        }
        "MODIFY_INFO" => {
            if let Some(vnfd_id) = params["vnfdId"].as_str() {
                let loaded = vnfd::load_by_vnfd_id(conn, vnfd_id).map_err(db_error)?;
                match loaded {
                    Some((package, _)) if package.operational_state() == "ENABLED" => {}
                    _ => {
                        return Err(ApiError::unprocessable(format!(
                            "VnfPackage of vnfdId {vnfd_id} is not found or not operational."
                        )));
                    }
                }
            }
            // Tacker refuses vimConnectionInfo changes of a NOT_INSTANTIATED instance;
            // SOL003 allows them, and so do we.
            Ok(())
        }
        _ => {
            let Some((_, contents)) = vnfd::load(conn, package_id).map_err(db_error)? else {
                let vnfd_id = instance["vnfdId"].as_str().unwrap_or_default();
                return Err(ApiError::unprocessable(format!(
                    "VnfPackage of vnfdId {vnfd_id} is not found or not operational."
                )));
            };
            checks::check_task(operation, &contents.vnfd, instance, params).map_err(check_error)
        }
    }
}
