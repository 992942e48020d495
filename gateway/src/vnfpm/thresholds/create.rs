use actix_web::http::header;
use actix_web::{HttpResponse, web};
use solgate_core::now;
use solgate_core::pm::criteria;
use solgate_core::pm::rules::Owner;
use solgate_db::repo::vnfpm::{self, PmRecord};
use solgate_db::write_transaction;

use super::rendered;
use crate::common::Tenant;
use crate::common::callback::Callback;
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::validate;
use crate::vnfpm::{check_sub_objects, measured_instances, new_document, rule_error, strings};

/// POST /vnfpm/v2/thresholds: 201 with the Threshold and `Location`; checked and installed
/// as a PM job is (see `pm_jobs::create`). Tacker also demands a `metadata` member carrying
/// the Prometheus server's SSH credentials; solgate takes them from its settings, so a request
/// needs none (one that has it is accepted, the member ignored).
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let request = body.0;
    validate(&negotiated, "CreateThresholdRequest", &request)?;
    let (kind, metric) = criteria::check_threshold(&request)?;
    let callback = Callback::read(&state, &request)?;
    let object = request["objectInstanceId"].as_str().unwrap_or_default().to_owned();
    let sub_objects = strings(&request["subObjectInstanceIds"]);
    let (lookup, ids) = (tenant.clone(), vec![object.clone()]);
    let measured = state.db(move |conn| measured_instances(conn, &lookup, &ids)).await?;
    check_sub_objects(kind, &sub_objects, &object, &measured)?;
    callback.verify(&state, &negotiated.version()).await?;

    let id = solgate_db::new_id();
    let document = new_document(
        &id,
        &request,
        &["objectType", "objectInstanceId", "subObjectInstanceIds", "criteria", "callbackUri"],
        &negotiated,
    );
    if state.vnfpm.enabled()
        && let Some(instance) = measured.get(&object)
    {
        let group = state.vnfpm.threshold_rules(&document, kind, &metric, instance).map_err(rule_error)?;
        state.vnfpm.install(Owner::Threshold(&id), &group).await.map_err(rule_error)?;
    }
    let created = now();
    let record = PmRecord {
        id: id.clone(),
        body: document,
        authentication: callback.sealed(&state),
        created_at: created.clone(),
        updated_at: created,
        project: tenant.project().to_owned(),
    };
    let stored = record.clone();
    let inserted =
        state.db(move |conn| write_transaction(conn, |conn| Ok(vnfpm::insert_threshold(conn, &stored)?))).await;
    if let Err(error) = inserted {
        state.vnfpm.remove(Owner::Threshold(&id)).await;
        return Err(error);
    }
    tracing::info!(threshold = %id, metric = %metric.name, "threshold created");
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, state.links.threshold(&id)))
        .content_type("application/json")
        .body(rendered(&state, &negotiated, &record).to_string()))
}
