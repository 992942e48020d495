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

/// POST /vnfpm/v2/pm_jobs: 201 with the PmJob and `Location`. The criteria are checked
/// (metrics the plugin measures, 400), the VNF instances (404 / 409), the callback (its test,
/// 422); then the job's Prometheus rules are installed (422 when nothing can be measured, 503
/// when Prometheus does not take them) and only then is the job stored: a refused job leaves
/// nothing behind.
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let request = body.0;
    validate(&negotiated, "CreatePmJobRequest", &request)?;
    let (kind, metrics) = criteria::check_job(&request)?;
    let callback = Callback::read(&state, &request)?;
    let objects = strings(&request["objectInstanceIds"]);
    let sub_objects = strings(&request["subObjectInstanceIds"]);
    let lookup = tenant.clone();
    let measured = state.db(move |conn| measured_instances(conn, &lookup, &objects)).await?;
    if let Some(first) = request["objectInstanceIds"][0].as_str() {
        check_sub_objects(kind, &sub_objects, first, &measured)?;
    }
    callback.verify(&state, &negotiated.version()).await?;

    let id = solgate_db::new_id();
    let document = new_document(
        &id,
        &request,
        &["objectType", "objectInstanceIds", "subObjectInstanceIds", "criteria", "callbackUri"],
        &negotiated,
    );
    if state.vnfpm.enabled() {
        let group = state.vnfpm.job_rules(&document, kind, &metrics, &measured).map_err(rule_error)?;
        state.vnfpm.install(Owner::Job(&id), &group).await.map_err(rule_error)?;
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
    let inserted = state.db(move |conn| write_transaction(conn, |conn| Ok(vnfpm::insert_job(conn, &stored)?))).await;
    if let Err(error) = inserted {
        state.vnfpm.remove(Owner::Job(&id)).await;
        return Err(error);
    }
    tracing::info!(pm_job = %id, metrics = metrics.len(), "PM job created");
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, state.links.pm_job(&id)))
        .content_type("application/json")
        .body(rendered(&state, &negotiated, &record).to_string()))
}
