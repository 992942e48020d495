//! VNF Performance Management (SOL003 clause 6, API 2.1.0) under `/vnfpm/v2`: PM jobs with
//! their performance reports, and thresholds. Each is a resource of its own and the target of
//! its notifications (its `callbackUri` and `authentication`, tested and sealed as a
//! subscription's are). Creating one writes the Prometheus rules that measure it
//! ([`solgate_core::pm::rules`]); Alertmanager's alerts come back through the webhooks of
//! [`crate::alerts::pm`] and become reports and crossings there. The VNF instances measured are
//! those of `/vnflcm/v2`, as in Tacker (whose PM API is v2-only).
//!
//! Where ETSI is silent the answers follow Tacker's (`controller/vnfpm_v2.py`): 400 for criteria
//! the plugin cannot measure, 404 for a VNF instance that does not exist (or is another
//! project's), 409 for one that is not instantiated. A job or threshold belongs to its
//! creator's project.

pub mod pm_jobs;
pub mod shared;
pub mod thresholds;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use solgate_core::links::paths;
use solgate_core::pm::criteria::ObjectType;
use solgate_core::pm::rules::{MeasuredInstance, RuleError};
use solgate_db::AnyConnection;
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_schemas::Api;

use crate::common::Tenant;
use crate::common::callback::Callback;
use crate::error::{ApiError, ApiResult};
use crate::routes::endpoint::Body::{Array, Schema};
use crate::routes::endpoint::{ApiTables, Endpoint, Table};
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::{api_versions, openapi};

/// The api_versions of every major, and the table of `/vnfpm/v2`.
pub fn tables() -> ApiTables {
    ApiTables { all: api_versions::all_majors(Api::Vnfpm, naming), majors: vec![table()] }
}

/// Tacker's PM rule names (`api/policies/vnfpm_v2.py`): `create`, `index`, `show`, `update`,
/// `delete` and `report_get` for PM jobs, the same with `_threshold` for thresholds.
fn naming(_resource: &str, action: &str) -> String {
    format!("os_nfv_orchestration_api_v2:vnf_performance_management:{action}")
}

fn table() -> Table {
    let mut rows = vec![api_versions::row(), openapi::row()];
    rows.extend(job_rows());
    rows.extend(threshold_rows());
    Table::major(Api::Vnfpm, 2, naming, rows)
}

fn job_rows() -> [Endpoint; 6] {
    [
        Endpoint::get(paths::PM_JOBS, "index", |route| route.to(pm_jobs::list::list))
            .doc("Query PM jobs", 200)
            .returns(Array("PmJob")),
        Endpoint::post(paths::PM_JOBS, "create", |route| route.to(pm_jobs::create::create))
            .doc("Create a PM job", 201)
            .request("CreatePmJobRequest")
            .returns(Schema("PmJob"))
            .headers(&["Location"]),
        Endpoint::get(paths::PM_JOB, "show", |route| route.to(pm_jobs::show::show))
            .doc("Read a PM job", 200)
            .returns(Schema("PmJob")),
        Endpoint::patch(paths::PM_JOB, "update", |route| route.to(pm_jobs::modify::modify))
            .doc("Modify a PM job", 200)
            .merge_patch("PmJobModifications")
            .returns(Schema("PmJobModifications")),
        Endpoint::delete(paths::PM_JOB, "delete", |route| route.to(pm_jobs::delete::delete))
            .doc("Delete a PM job", 204),
        Endpoint::get(paths::PM_REPORT, "report_get", |route| route.to(pm_jobs::report::show))
            .doc("Read a performance report", 200)
            .returns(Schema("PerformanceReport")),
    ]
}

fn threshold_rows() -> [Endpoint; 5] {
    [
        Endpoint::get(paths::THRESHOLDS, "index_threshold", |route| route.to(thresholds::list::list))
            .doc("Query thresholds", 200)
            .returns(Array("Threshold")),
        Endpoint::post(paths::THRESHOLDS, "create_threshold", |route| route.to(thresholds::create::create))
            .doc("Create a threshold", 201)
            .request("CreateThresholdRequest")
            .returns(Schema("Threshold"))
            .headers(&["Location"]),
        Endpoint::get(paths::THRESHOLD, "show_threshold", |route| route.to(thresholds::show::show))
            .doc("Read a threshold", 200)
            .returns(Schema("Threshold")),
        Endpoint::patch(paths::THRESHOLD, "update_threshold", |route| route.to(thresholds::modify::modify))
            .doc("Modify a threshold", 200)
            .merge_patch("ThresholdModifications")
            .returns(Schema("ThresholdModifications")),
        Endpoint::delete(paths::THRESHOLD, "delete_threshold", |route| route.to(thresholds::delete::delete))
            .doc("Delete a threshold", 204),
    ]
}

/// The VNF instances a job or threshold measures, by id: each must exist (and be visible to
/// the request: 404 otherwise, as for a missing one) and be instantiated (409), as Tacker
/// checks them.
fn measured_instances(
    conn: &mut AnyConnection,
    tenant: &Tenant,
    ids: &[String],
) -> ApiResult<BTreeMap<String, MeasuredInstance>> {
    let mut found = BTreeMap::new();
    for id in ids {
        let instance = lcm::find_instance(conn, LcmMajor::V2, id)?
            .filter(|record| tenant.sees(&record.project))
            .ok_or_else(|| ApiError::not_found(format!("VnfInstance {id} not found.")))?;
        if instance.instantiation_state() != "INSTANTIATED" {
            return Err(ApiError::conflict(format!("VnfInstance {id} isn't instantiated.")));
        }
        found.insert(id.clone(), MeasuredInstance::of(&instance.body));
    }
    Ok(found)
}

/// `subObjectInstanceIds` of a request: IdentifierInVnf values without control characters
/// (they end up in PromQL and labels) and, for compute metrics, VNFCs of the one instance
/// measured: a vnfcResourceInfo id, or a vnfcInfo id as Tacker's clients give (422
/// otherwise: nothing could be measured for them).
fn check_sub_objects(
    kind: ObjectType,
    sub_objects: &[String],
    instance: &str,
    measured: &BTreeMap<String, MeasuredInstance>,
) -> ApiResult<()> {
    for sub in sub_objects {
        if sub.is_empty() || sub.len() > 255 || sub.chars().any(char::is_control) {
            return Err(ApiError::bad_request(
                "subObjectInstanceIds must be identifiers of 1 to 255 characters without control characters.",
            ));
        }
        if matches!(kind, ObjectType::Vnf | ObjectType::Vnfc)
            && !measured.get(instance).is_some_and(|instance| instance.has_vnfc(sub))
        {
            return Err(ApiError::unprocessable(format!(
                "subObjectInstanceIds: {sub} is not a VNFC (vnfcResourceInfo or vnfcInfo id) of VnfInstance {instance}."
            )));
        }
    }
    Ok(())
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

/// A rule that cannot be made is the request's (422); one Prometheus does not take is a 503,
/// with Tacker's text, as Tacker answers it.
fn rule_error(error: RuleError) -> ApiError {
    match error {
        RuleError::NothingToMeasure(detail) => ApiError::unprocessable(detail),
        RuleError::Prometheus(detail) => ApiError::unavailable(detail, 30),
    }
}

/// The document of a new job or threshold: what the request gives of `members`, the new id,
/// and the version it was created with (its notifications are rendered for it).
fn new_document(id: &str, request: &Value, members: &[&str], negotiated: &Negotiated) -> Value {
    let mut document = Map::new();
    document.insert("id".into(), json!(id));
    for member in members {
        if let Some(value) = request.get(*member).filter(|value| !value.is_null()) {
            document.insert((*member).to_owned(), value.clone());
        }
    }
    document
        .insert(solgate_core::PRIVATE_KEY.into(), json!({ solgate_core::notify::VERSION_KEY: negotiated.version() }));
    Value::Object(document)
}

/// PATCH of a job or threshold (PmJobModifications / ThresholdModifications, JSON Merge Patch):
/// the new callback URI and credentials, checked and tested as at creation. `authentication`
/// may be `null` (removed); `callbackUri` may not. Returns the callback URI, the credentials to
/// store (sealed), and the modifications to answer with (never the credentials).
async fn modifications(
    state: &AppState,
    negotiated: &Negotiated,
    schema: &str,
    request: &Value,
    current_uri: &str,
    current_authentication: Option<&Value>,
) -> ApiResult<(String, Option<Value>, Value)> {
    let Some(members) = request.as_object() else {
        return Err(ApiError::bad_request(format!("{schema} must be a JSON object.")));
    };
    if members.get("callbackUri").is_some_and(Value::is_null) {
        return Err(ApiError::bad_request("callbackUri cannot be removed (null is not permitted)."));
    }
    let without_nulls: Map<String, Value> =
        members.iter().filter(|(_, value)| !value.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
    crate::vnflcm::common::validate(negotiated, schema, &Value::Object(without_nulls))?;
    // The type's note: at least one attribute in a request body.
    if !members.contains_key("callbackUri") && !members.contains_key("authentication") {
        return Err(ApiError::bad_request(format!("{schema} needs callbackUri or authentication.")));
    }
    let uri = request["callbackUri"].as_str().unwrap_or(current_uri).to_owned();
    let authentication = match members.get("authentication") {
        Some(Value::Null) => None,
        Some(given) => Some(given.clone()),
        None => match current_authentication {
            Some(sealed) => {
                let mut clear = sealed.clone();
                state.secrets.open(&mut clear).map_err(|error| {
                    ApiError::internal(anyhow::anyhow!("the stored callback credentials cannot be opened: {error}"))
                })?;
                Some(clear)
            }
            None => None,
        },
    };
    let mut combined = json!({ "callbackUri": uri });
    if let Some(authentication) = &authentication {
        combined["authentication"] = authentication.clone();
    }
    let callback = Callback::read(state, &combined)?;
    callback.verify(state, &negotiated.version()).await?;
    let mut answer = Map::new();
    if let Some(uri) = request.get("callbackUri") {
        answer.insert("callbackUri".into(), uri.clone());
    }
    Ok((uri, callback.sealed(state), Value::Object(answer)))
}
