//! The NFVO's VNF package notifications (SOL003 v3.3.1 clause 10.4.9, `[nfvo]
//! package_notifications = true`): solgate subscribes at the NFVO with this endpoint as
//! `callbackUri`, and keeps the packages it took from the NFVO in step with the NFVO's:
//!
//! - `OP_STATE_CHANGE`: the cached package gets the NFVO's `operationalState`;
//! - `PKG_DELETE`: the cached package is deleted, or disabled while instances use it;
//! - `VnfPackageOnboardingNotification`: nothing to do (packages are taken on demand).
//!
//! Only packages taken from the NFVO ([`solgate_core::packages::is_taken_from_nfvo`]) are
//! touched, through the same database paths as `PATCH` and `DELETE` of
//! `/vnfpkgm/v1/vnf_packages/{id}`, so solgate's own package subscribers hear of it.
//!
//! The endpoint is outside `[auth]`: the NFVO authenticates with the HTTP Basic credentials
//! solgate gave it in the subscription (`notification_user_name`, `notification_password`).

use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use aws_lc_rs::{constant_time, digest};
use base64::Engine;
use serde_json::{Value, json};
use solgate_core::packages::{ONBOARDED, is_taken_from_nfvo};
use solgate_db::repo::vnf_packages;
use solgate_db::write_transaction;

use crate::error::{ApiError, ApiResult, ErrorKind};
use crate::routes::resource;
use crate::settings::NFVO_NOTIFICATIONS_PATH as PATH;
use crate::sol013::JsonBody;
use crate::state::AppState;
use crate::vnfpkgm::vnf_packages::delete::{delete_row, in_use, remove_files};
use crate::vnfpkgm::vnf_packages::modify::store_change;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(resource(PATH).get(test_notification_endpoint).post(notify).finish());
}

/// GET: the NFVO tests the callback before it subscribes (SOL013 clause 5.9): 204.
async fn test_notification_endpoint(state: web::Data<AppState>, req: HttpRequest) -> ApiResult<HttpResponse> {
    authenticate(&state, &req)?;
    Ok(HttpResponse::NoContent().finish())
}

/// What a change notification asks of the cached package.
enum Change {
    OperationalState(&'static str),
    Deleted,
}

/// What became of the cached package.
enum Outcome {
    /// No package here was taken from the NFVO for that vnfdId, or it is as asked already.
    Unchanged,
    OperationalState(&'static str),
    Deleted(String),
}

/// POST: a VnfPackageOnboardingNotification or VnfPackageChangeNotification (clause
/// 10.5.2.8/9): 204 once handled (also when no package here is concerned).
async fn notify(state: web::Data<AppState>, req: HttpRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    // Credentials first: an unauthenticated caller learns nothing of what a body should be.
    authenticate(&state, &req)?;
    let body = JsonBody::from_request(&req, &mut payload.into_inner()).await?.0;
    if !body.is_object() {
        return Err(ApiError::bad_request("The notification must be a JSON object."));
    }
    let text = |key: &str| body.get(key).and_then(Value::as_str).filter(|text| !text.is_empty());
    let notification_type =
        text("notificationType").ok_or_else(|| ApiError::bad_request("The notification has no notificationType."))?;
    let vnfd_id = text("vnfdId").ok_or_else(|| ApiError::bad_request("The notification has no vnfdId."))?.to_owned();
    let change = match notification_type {
        // Packages are taken from the NFVO when an instance asks for them, not when onboarded.
        "VnfPackageOnboardingNotification" => return Ok(HttpResponse::NoContent().finish()),
        "VnfPackageChangeNotification" => match text("changeType") {
            Some("OP_STATE_CHANGE") => match text("operationalState") {
                Some("ENABLED") => Change::OperationalState("ENABLED"),
                Some("DISABLED") => Change::OperationalState("DISABLED"),
                _ => {
                    return Err(ApiError::bad_request(
                        "An OP_STATE_CHANGE notification needs operationalState ENABLED or DISABLED.",
                    ));
                }
            },
            Some("PKG_DELETE") => Change::Deleted,
            _ => return Err(ApiError::bad_request("changeType must be OP_STATE_CHANGE or PKG_DELETE.")),
        },
        other => {
            return Err(ApiError::bad_request(format!("notificationType {other} is not a VNF package notification.")));
        }
    };
    let links = state.links.clone();
    let lookup = vnfd_id.clone();
    let outcome = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let Some(mut record) = vnf_packages::find_by_vnfd_id(conn, &lookup)? else {
                    return Ok(Outcome::Unchanged);
                };
                // A package onboarded here (uploaded, not taken from the NFVO) is the operator's.
                if record.onboarding_state() != ONBOARDED || !is_taken_from_nfvo(&record.body) {
                    return Ok(Outcome::Unchanged);
                }
                let wanted = match change {
                    Change::Deleted if !in_use(conn, &record.id)? => {
                        delete_row(conn, &links, &record)?;
                        return Ok(Outcome::Deleted(record.id));
                    }
                    // Its instances keep working; new ones are refused.
                    Change::Deleted => "DISABLED",
                    Change::OperationalState(wanted) => wanted,
                };
                if record.operational_state() == wanted {
                    return Ok(Outcome::Unchanged);
                }
                record.body["operationalState"] = json!(wanted);
                store_change(conn, &links, &record, true)?;
                Ok(Outcome::OperationalState(wanted))
            })
        })
        .await?;
    match outcome {
        Outcome::Unchanged => {}
        Outcome::OperationalState(wanted) => {
            tracing::info!(%vnfd_id, operational_state = wanted, "the NFVO changed a cached VNF package");
        }
        Outcome::Deleted(id) => {
            remove_files(&state, &id).await;
            tracing::info!(%vnfd_id, package = %id, "the NFVO deleted a cached VNF package; deleted here too");
        }
    }
    Ok(HttpResponse::NoContent().finish())
}

/// The request carries exactly the configured notification credentials (HTTP Basic).
fn authenticate(state: &AppState, req: &HttpRequest) -> ApiResult<()> {
    let refused = |detail: &str| {
        ApiError::new(ErrorKind::Unauthorized { challenge: "Basic realm=\"solgate\"".to_owned() }, detail)
    };
    // The route exists only with credentials configured; without them no one gets in.
    let Some(expected) = &state.nfvo_notifications else {
        return Err(refused("Notifications from the NFVO are not configured."));
    };
    let header = req.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
    let Some(header) = header else {
        return Err(refused("The NFVO's notification credentials are required (Authorization: Basic)."));
    };
    let given = header
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .and_then(|(_, encoded)| base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok())
        .and_then(|decoded| String::from_utf8(decoded).ok());
    let Some((user_name, password)) = given.as_deref().and_then(|text| text.split_once(':')) else {
        return Err(refused("The Authorization header is not HTTP Basic."));
    };
    // Both compared in full, whatever the first gives.
    if same(&expected.user_name, user_name) & same(&expected.password, password) {
        Ok(())
    } else {
        Err(refused("The NFVO's notification credentials are wrong."))
    }
}

/// Constant-time equality (of digests, so the length is not told either).
fn same(expected: &str, given: &str) -> bool {
    let expected = digest::digest(&digest::SHA256, expected.as_bytes());
    let given = digest::digest(&digest::SHA256, given.as_bytes());
    constant_time::verify_slices_are_equal(expected.as_ref(), given.as_ref()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_compare_in_full() {
        assert!(same("nfvo", "nfvo"));
        assert!(!same("nfvo", "nfv"));
        assert!(!same("nfvo", "nfvo "));
        assert!(!same("", "x"));
    }
}
