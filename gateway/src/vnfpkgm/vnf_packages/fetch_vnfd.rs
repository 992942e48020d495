use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::accept::negotiate;
use crate::state::AppState;
use crate::vnfpkgm::common;
use crate::vnfpkgm::download::{self, Ranges};

const TEXT: &str = "text/plain";
const ZIP: &str = "application/zip";

/// GET /vnfpkgm/v1/vnf_packages/{id}/vnfd: `text/plain` (a single-file VNFD) or
/// `application/zip` (TOSCA.meta and the VNFD files), as `Accept` prefers; the SOL013 layer
/// has answered 406 already when neither is acceptable. A multi-file VNFD asked for as
/// `text/plain` only → 406 (Tacker answered 400).
pub async fn fetch_vnfd(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let record = common::load_onboarded(&state, &Tenant::of(&req), &id).await?;
    let files = common::files(&state, &id);
    let accept = req.headers().get(header::ACCEPT).and_then(|value| value.to_str().ok());
    let single_file = record.vnfd.as_ref().is_some_and(|contents| contents["multi_file_vnfd"] == false);
    let wanted = match negotiate(accept, &[TEXT, ZIP]) {
        Some(TEXT) if single_file => TEXT,
        Some(TEXT) if negotiate(accept, &[ZIP]).is_none() => {
            return Err(ApiError::not_acceptable(
                "VNFD is implemented as multiple yaml files, Accept header should be 'application/zip'.",
            ));
        }
        _ => ZIP,
    };
    let path = if wanted == TEXT { files.vnfd_yaml() } else { files.vnfd_zip() };
    download::file(&req, &path, wanted, Ranges::NotSupported).await
}
