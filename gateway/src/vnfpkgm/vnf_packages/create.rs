use actix_web::http::header;
use actix_web::{HttpResponse, web};
use serde_json::{Value, json};
use solgate_core::now;
use solgate_core::packages::CREATED;
use solgate_db::repo::vnf_packages::{self, PackageRecord};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{Negotiated, OptionalJsonBody};
use crate::state::AppState;
use crate::vnfpkgm::common;

/// POST /vnfpkgm/v1/vnf_packages: 201 with the VnfPkgInfo (CREATED, DISABLED, NOT_IN_USE)
/// and `Location`. python-tackerclient sends `{}` without user data; no body is read as `{}`.
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: OptionalJsonBody,
) -> ApiResult<HttpResponse> {
    let body = body.0.unwrap_or_else(|| json!({}));
    common::validate(&negotiated, "CreateVnfPkgInfoRequest", &body)?;
    let id = solgate_db::new_id();
    let user_data = body.get("userDefinedData").cloned().unwrap_or_else(|| json!({}));
    let document = json!({
        "id": id,
        "onboardingState": CREATED,
        "operationalState": "DISABLED",
        "usageState": "NOT_IN_USE",
        "userDefinedData": user_data,
    });
    let created_at = now();
    let record = PackageRecord {
        id: id.clone(),
        body: document,
        vnfd: None,
        upload_source: None,
        created_at: created_at.clone(),
        updated_at: created_at,
        row_version: 0,
        project: tenant.project().to_owned(),
    };
    let stored = record.clone();
    state.db(move |conn| Ok(vnf_packages::insert(conn, &stored)?)).await?;
    let rendered: Value = common::render(&state, &negotiated, &record);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, state.links.package(&id)))
        .content_type("application/json")
        .body(rendered.to_string()))
}
