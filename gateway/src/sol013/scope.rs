//! Which API, major version and kind of resource a request path addresses. The SOL013
//! layer applies to everything under `/{apiName}`.

use solgate_schemas::{Api, Registry};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    /// `/{apiName}/api_versions`: every major.
    ApiVersionsAll,
    /// `/{apiName}/v{N}/api_versions`.
    ApiVersionsMajor,
    /// Anything else under `/{apiName}/v{N}/`.
    Resource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestScope {
    pub api: Api,
    /// `None` only for [`ScopeKind::ApiVersionsAll`].
    pub major: Option<u64>,
    pub kind: ScopeKind,
}

impl RequestScope {
    pub fn is_api_versions(&self) -> bool {
        matches!(self.kind, ScopeKind::ApiVersionsAll | ScopeKind::ApiVersionsMajor)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Classified {
    /// Not an ETSI API path (health, metrics, ...).
    Outside,
    /// Under a known API prefix but no resource of ours (unknown major or segment).
    UnknownInApi(Api),
    Scoped(RequestScope),
}

pub fn classify(path: &str, registry: &Registry) -> Classified {
    let mut segments = path.trim_start_matches('/').split('/');
    let Some(api) = segments.next().and_then(Api::from_segment) else { return Classified::Outside };
    let Some(second) = segments.next() else { return Classified::UnknownInApi(api) };
    if second == "api_versions" {
        return match segments.next() {
            None | Some("") => Classified::Scoped(RequestScope { api, major: None, kind: ScopeKind::ApiVersionsAll }),
            Some(_) => Classified::UnknownInApi(api),
        };
    }
    let major = second
        .strip_prefix('v')
        .filter(|digits| !digits.starts_with('0'))
        .and_then(|digits| digits.parse::<u64>().ok())
        .filter(|major| registry.major(api, *major).is_some());
    let Some(major) = major else { return Classified::UnknownInApi(api) };
    let kind = match (segments.next(), segments.next()) {
        (Some("api_versions"), None) => ScopeKind::ApiVersionsMajor,
        _ => ScopeKind::Resource,
    };
    Classified::Scoped(RequestScope { api, major: Some(major), kind })
}

/// Media types a resource can produce, for `Accept` negotiation; `None` = do not check
/// (artifact downloads: python-tackerclient asks for them with `Accept: application/json`).
pub fn producible(method: &actix_web::http::Method, path: &str) -> Option<&'static [&'static str]> {
    const JSON: &[&str] = &["application/json", "application/problem+json"];
    if method != actix_web::http::Method::GET {
        return Some(JSON);
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.starts_with("/vnfpkgm/") {
        if trimmed.ends_with("/package_content") {
            return Some(&["application/zip"]);
        }
        if trimmed.ends_with("/vnfd") {
            return Some(&["text/plain", "application/zip"]);
        }
        if trimmed.contains("/artifacts/") {
            return None;
        }
    }
    Some(JSON)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        let registry = Registry::builtin().unwrap();
        let scoped = |path| match classify(path, &registry) {
            Classified::Scoped(scope) => Some((scope.api, scope.major, scope.kind)),
            _ => None,
        };
        assert_eq!(scoped("/vnflcm/api_versions"), Some((Api::Vnflcm, None, ScopeKind::ApiVersionsAll)));
        assert_eq!(scoped("/vnflcm/v2/api_versions"), Some((Api::Vnflcm, Some(2), ScopeKind::ApiVersionsMajor)));
        assert_eq!(scoped("/vnflcm/v1/vnf_instances/x"), Some((Api::Vnflcm, Some(1), ScopeKind::Resource)));
        assert_eq!(scoped("/vnfpkgm/v1/vnf_packages"), Some((Api::Vnfpkgm, Some(1), ScopeKind::Resource)));
        assert_eq!(classify("/vnflcm/v3/api_versions", &registry), Classified::UnknownInApi(Api::Vnflcm));
        assert_eq!(classify("/vnflcm/v02/x", &registry), Classified::UnknownInApi(Api::Vnflcm));
        assert_eq!(classify("/vnflcm", &registry), Classified::UnknownInApi(Api::Vnflcm));
        assert_eq!(classify("/healthz", &registry), Classified::Outside);
        assert_eq!(classify("/vnflcmx/v2", &registry), Classified::Outside);
    }
}
