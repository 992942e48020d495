use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Map, Value};
use solgate_core::links::Links;
use solgate_core::merge_patch;
use solgate_core::notify::pkgm::{self, PkgEvent};
use solgate_core::packages::ONBOARDED;
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::{AnyConnection, write_transaction};

use crate::common::{Tenant, etag};
use crate::error::{ApiError, ApiResult};
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnfpkgm::common;

/// PATCH /vnfpkgm/v1/vnf_packages/{id} (JSON Merge Patch, RFC 7396): `operationalState`
/// and/or `userDefinedData`. 200 with a VnfPkgInfoModifications holding only what changed
/// (python-tackerclient prints that object). 409 when the operational state would not
/// change, when it is changed before the package is ONBOARDED, or when nothing changes.
/// A change of the operational state notifies package subscribers (OP_STATE_CHANGE) in the
/// same transaction.
pub async fn modify(
    state: web::Data<AppState>,
    req: HttpRequest,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let request = body.0;
    common::validate(&negotiated, "VnfPkgInfoModifications", &request)?;
    let id = id.into_inner();
    let if_match = etag::if_match(&req, &negotiated.version());
    let links = state.links.clone();
    let modifications = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let mut record = common::find(conn, &tenant, &id)?;
                // The update below is conditional on this row version, so the check holds.
                if if_match.as_ref().is_some_and(|condition| !condition.matches(record.row_version)) {
                    return Err(solgate_core::requests::precondition_failed(&format!("VNF Package {id}")).into());
                }
                let mut changed = Map::new();
                if let Some(wanted) = request.get("operationalState").and_then(Value::as_str) {
                    if record.onboarding_state() != ONBOARDED {
                        return Err(common::state_is_not(&id, ONBOARDED));
                    }
                    if record.operational_state() == wanted {
                        return Err(ApiError::conflict(format!(
                            "VNF Package {id} is already in {wanted} operational state"
                        )));
                    }
                    record.body["operationalState"] = Value::String(wanted.to_owned());
                    changed.insert("operationalState".into(), Value::String(wanted.to_owned()));
                }
                if let Some(patch) = request.get("userDefinedData") {
                    let before = record.body.get("userDefinedData").cloned().unwrap_or(Value::Object(Map::new()));
                    let mut after = before.clone();
                    merge_patch(&mut after, patch);
                    let effective = changed_keys(&before, &after, patch);
                    if effective.is_empty() && changed.is_empty() {
                        return Err(ApiError::conflict(format!(
                            "The userDefinedData provided in update request is as the existing userDefinedData of vnf \
                             package {id}. Nothing to update."
                        )));
                    }
                    if !effective.is_empty() {
                        record.body["userDefinedData"] = after;
                        changed.insert("userDefinedData".into(), Value::Object(effective));
                    }
                }
                store_change(conn, &links, &record, changed.contains_key("operationalState"))?;
                Ok(Value::Object(changed))
            })
        })
        .await?;
    let body = negotiated.entry.dictionary.render("VnfPkgInfoModifications", &modifications);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}

/// Stores a changed package unless someone changed it meanwhile (409) and, when its
/// operational state changed, queues OP_STATE_CHANGE for package subscribers in the same
/// transaction. PATCH and the NFVO's package notifications both change packages here.
pub(crate) fn store_change(
    conn: &mut AnyConnection,
    links: &Links,
    record: &PackageRecord,
    operational_state_changed: bool,
) -> ApiResult<()> {
    if !vnf_packages::update(conn, record, Some(record.row_version))? {
        return Err(ApiError::conflict(format!("VNF Package {} was modified concurrently; try again.", record.id)));
    }
    if operational_state_changed {
        pkgm::enqueue(conn, links, &record.project, PkgEvent::OperationalStateChanged { package: &record.body })?;
    }
    Ok(())
}

/// The top-level keys of `patch` whose value really changed, as the patch gave them.
fn changed_keys(before: &Value, after: &Value, patch: &Value) -> Map<String, Value> {
    let Value::Object(patch) = patch else { return Map::new() };
    patch
        .iter()
        .filter(|(key, _)| before.get(key.as_str()) != after.get(key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_real_changes_are_reported() {
        let before = json!({"k1": "v1", "k2": "v2"});
        let patch = json!({"k1": "v1", "k2": "new", "gone": null});
        let mut after = before.clone();
        merge_patch(&mut after, &patch);
        assert_eq!(Value::Object(changed_keys(&before, &after, &patch)), json!({"k2": "new"}));
    }
}
