use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;
use solgate_core::packages::is_served_artifact;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::vnfpkgm::common;
use crate::vnfpkgm::download::{self, Ranges};

/// GET /vnfpkgm/v1/vnf_packages/{id}/artifacts/{artifactPath}: an artifact the package
/// declares (TOSCA.meta or manifest), by its package path (e.g. `Scripts/install.sh`),
/// streamed from the extracted package with single-range support. `Accept` is not checked:
/// python-tackerclient asks for artifacts with `Accept: application/json`.
pub async fn fetch_artifact(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (id, artifact_path) = path.into_inner();
    if !is_package_path(&artifact_path) {
        return Err(ApiError::bad_request(format!(
            "Invalid artifact path '{artifact_path}': use the artifact's path inside the VNF package."
        )));
    }
    let record = common::load_onboarded(&state, &Tenant::of(&req), &id).await?;
    // Only declared artifacts are served, so no other file of the store is reachable.
    if !is_served_artifact(record.vnfd.as_ref().unwrap_or(&Value::Null), &artifact_path) {
        return Err(ApiError::not_found(format!(
            "Can not find requested artifact path {artifact_path} in vnf package {id}."
        )));
    }
    let file = common::files(&state, &id).content_dir().join(&artifact_path);
    download::file(&req, &file, "application/octet-stream", Ranges::Supported).await
}

/// A relative, `/`-separated path without `.` or `..` segments.
fn is_package_path(path: &str) -> bool {
    !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && path.split('/').all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

#[cfg(test)]
mod tests {
    use super::is_package_path;

    #[test]
    fn traversal_is_not_a_package_path() {
        assert!(is_package_path("Scripts/install.sh"));
        assert!(is_package_path("Files/images/a b.img"));
        for bad in ["../etc/passwd", "Scripts/../../x", "/etc/passwd", "a//b", "./a", "a\\b", ""] {
            assert!(!is_package_path(bad), "{bad}");
        }
    }
}
