//! The `api_versions` resources (SOL013 clause 9.3): which versions of an API are
//! served, per major and across majors.

use actix_web::{HttpResponse, web};
use serde_json::{Value, json};
use solgate_schemas::{Api, VersionEntry};

use crate::error::ApiResult;
use crate::routes::endpoint::{Body, Endpoint, RuleNaming, Table};
use crate::sol013::Negotiated;
use crate::sol013::scope::ScopeKind;
use crate::state::AppState;

/// `/{api}/v{major}/api_versions`, in every major's table (registered once for all).
pub fn row() -> Endpoint {
    Endpoint::get(solgate_core::links::paths::API_VERSIONS, "show", |route| route.to(show))
        .doc("API version information", 200)
        .returns(Body::Schema("ApiVersionInformation"))
        .shared()
}

/// `/{api}/api_versions`: the versions of every major (SOL013 clause 9.3.2).
pub fn all_majors(api: Api, naming: RuleNaming) -> Table {
    let rows = vec![
        Endpoint::get(solgate_core::links::paths::API_VERSIONS, "show", |route| route.to(show))
            .returns(Body::Schema("ApiVersionInformation")),
    ];
    Table::new(format!("/{api}"), Some(api), None, naming, rows)
}

pub async fn show(state: web::Data<AppState>, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let registry = &state.registry;
    let (uri_prefix, versions): (String, Vec<&VersionEntry>) = match negotiated.scope_kind {
        ScopeKind::ApiVersionsAll => (format!("/{}", negotiated.api), registry.supported_all(negotiated.api).collect()),
        _ => {
            let prefix = registry
                .major(negotiated.api, negotiated.major)
                .map(|info| info.uri_prefix())
                .unwrap_or_else(|| format!("/{}/v{}", negotiated.api, negotiated.major));
            (prefix, registry.supported(negotiated.api, negotiated.major).collect())
        }
    };
    let body = api_version_information(&uri_prefix, &versions);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}

/// ApiVersionInformation; `retirementDate` only for deprecated versions (SOL013: shall
/// be absent otherwise).
fn api_version_information(uri_prefix: &str, versions: &[&VersionEntry]) -> Value {
    let api_versions: Vec<Value> = versions
        .iter()
        .map(|entry| {
            let mut version = json!({ "version": entry.version_string(), "isDeprecated": entry.is_deprecated });
            if entry.is_deprecated
                && let Some(date) = entry.retirement_date
            {
                version["retirementDate"] = json!(date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            }
            version
        })
        .collect();
    json!({ "uriPrefix": uri_prefix, "apiVersions": api_versions })
}
