use actix_web::{HttpResponse, web};
use serde_json::Value;
use solgate_core::packages::UploadSource;
use solgate_core::work::RpcMessage;

use super::upload_content::accept_upload;
use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnfpkgm::common;

/// POST /vnfpkgm/v1/vnf_packages/{id}/package_content/upload_from_uri: 202. The conductor
/// fetches the package (in UPLOADING, off the request path); the optional credentials are
/// kept in the package row only until the fetch is done and are never shown.
pub async fn upload_from_uri(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let request = body.0;
    common::validate(&negotiated, "UploadVnfPackageFromUriRequest", &request)?;
    let address = request["addressInformation"].as_str().unwrap_or_default().to_owned();
    // Scheme, literal address and resolved addresses (SSRF guard, `[egress]`), after
    // Tacker's words for a bad address.
    if let Err(mut refused) = state.outbound.policy().check_uri_resolved("addressInformation", &address).await {
        refused.detail = format!("Vnf package url '{address}' is invalid: {}", refused.detail);
        return Err(ApiError::from(refused));
    }
    let text = |key: &str| request.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut source = UploadSource::uri(address, text("userName"), text("password")).to_value();
    state.secrets.seal(&mut source);
    let id = id.into_inner();
    let lookup = id.clone();
    let outbox_id = state.db(move |conn| accept_upload(conn, &tenant, &lookup, source)).await?;
    state.dispatch(outbox_id, RpcMessage::package(id));
    Ok(HttpResponse::Accepted().finish())
}
