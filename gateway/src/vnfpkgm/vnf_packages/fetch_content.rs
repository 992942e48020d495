use actix_web::{HttpRequest, HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::vnfpkgm::common;
use crate::vnfpkgm::download::{self, Ranges};

/// GET /vnfpkgm/v1/vnf_packages/{id}/package_content: the zip as uploaded, streamed, with
/// single-range support (206 / 416).
pub async fn fetch_content(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    common::load_onboarded(&state, &Tenant::of(&req), &id).await?;
    let path = common::files(&state, &id).package_zip();
    download::file(&req, &path, "application/zip", Ranges::Supported).await
}
