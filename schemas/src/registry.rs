//! Which versions of which API solgate serves, and how a request's `Version` header is
//! matched against them.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::dictionary::Dictionary;
use crate::version::{ApiVersionId, VersionParseError};

/// An ETSI NFV-SOL API served by solgate, named after its `{apiName}` URI segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// VNF Lifecycle Management (SOL003).
    Vnflcm,
    /// VNF Package Management (SOL005, VNF package part).
    Vnfpkgm,
    /// VNF Fault Management (SOL003 clause 7).
    Vnffm,
    /// VNF Performance Management (SOL003 clause 6).
    Vnfpm,
}

impl Api {
    pub const ALL: [Api; 4] = [Api::Vnflcm, Api::Vnfpkgm, Api::Vnffm, Api::Vnfpm];

    pub fn as_str(self) -> &'static str {
        match self {
            Api::Vnflcm => "vnflcm",
            Api::Vnfpkgm => "vnfpkgm",
            Api::Vnffm => "vnffm",
            Api::Vnfpm => "vnfpm",
        }
    }

    pub fn from_segment(segment: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|api| api.as_str() == segment)
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Facts about one major version of an API that do not depend on the minor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MajorInfo {
    pub api: Api,
    pub major: u64,
    /// Whether requests must carry `Version`. Release-2 clients (v1, vnfpkgm) send none,
    /// and SOL013 only made the header mandatory from Release 3 on.
    pub version_header_required: bool,
}

impl MajorInfo {
    /// `uriPrefix` as Tacker shows it: no apiRoot, no trailing slash.
    pub fn uri_prefix(&self) -> String {
        format!("/{}/v{}", self.api, self.major)
    }
}

/// One supported (or retired) version of an API.
#[derive(Debug, Clone)]
pub struct VersionEntry {
    pub api: Api,
    pub version: ApiVersionId,
    /// The ETSI document this version implements, e.g. `ETSI GS NFV-SOL 003 V3.3.1`.
    pub etsi_document: &'static str,
    pub is_deprecated: bool,
    /// When the version became deprecated (the RFC 9745 `Deprecation` header value).
    pub deprecated_since: Option<DateTime<Utc>>,
    /// Only meaningful when deprecated (SOL013: shall be absent otherwise).
    pub retirement_date: Option<DateTime<Utc>>,
    /// A retired version is no longer served: absent from api_versions, answered 406.
    pub retired: bool,
    pub dictionary: Arc<Dictionary>,
}

impl VersionEntry {
    pub fn major(&self) -> u64 {
        self.version.major
    }

    pub fn version_string(&self) -> String {
        self.version.to_string()
    }
}

/// Operator-set lifecycle of a version (from the settings file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionPolicy {
    pub api: Api,
    pub version: String,
    #[serde(default)]
    pub deprecated: bool,
    /// When the version became deprecated; shown in the `Deprecation` response header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated_since: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retirement_date: Option<DateTime<Utc>>,
    #[serde(default)]
    pub retired: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("version policy names {api} version {version}, which solgate does not implement")]
    UnknownVersion { api: Api, version: String },
    #[error("version policy for {api} {version}: retirement_date requires deprecated = true")]
    RetirementWithoutDeprecation { api: Api, version: String },
    #[error("schema {operation} of {api} {version} does not compile: {reason}")]
    Schema { api: Api, version: String, operation: String, reason: String },
    #[error("schema data of {api} {version} is unusable: {reason}")]
    Document { api: Api, version: String, reason: String },
}

/// Why a `Version` header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NegotiationError {
    #[error("'Version' HTTP header missing.")]
    Missing,
    #[error(transparent)]
    Malformed(#[from] VersionParseError),
    #[error("Version {0} not supported.")]
    NotSupported(String),
}

impl NegotiationError {
    pub fn status(&self) -> u16 {
        match self {
            NegotiationError::Missing | NegotiationError::Malformed(_) => 400,
            NegotiationError::NotSupported(_) => 406,
        }
    }
}

/// The versions solgate serves. Built once at start-up and shared by every request.
#[derive(Debug, Clone)]
pub struct Registry {
    majors: Vec<MajorInfo>,
    /// Per (api, major), every known version in ascending order, retired ones included.
    versions: BTreeMap<(Api, u64), Vec<VersionEntry>>,
}

impl Registry {
    // `Registry::builtin` lives in `catalog`, next to the version list it reads, so that
    // this module does not import `catalog` (which imports this one).

    /// A registry of `entries` (in any order) and their `majors`.
    pub(crate) fn from_entries(majors: Vec<MajorInfo>, entries: Vec<VersionEntry>) -> Registry {
        let mut versions: BTreeMap<(Api, u64), Vec<VersionEntry>> = BTreeMap::new();
        for entry in entries {
            versions.entry((entry.api, entry.major())).or_default().push(entry);
        }
        for list in versions.values_mut() {
            list.sort_by_key(|entry| entry.version);
        }
        Registry { majors, versions }
    }

    /// Applies operator policies (deprecation, retirement). Unknown versions are an error,
    /// so a typo in the settings file cannot silently do nothing.
    pub fn with_policies(mut self, policies: &[VersionPolicy]) -> Result<Registry, RegistryError> {
        for policy in policies {
            let unknown = || RegistryError::UnknownVersion { api: policy.api, version: policy.version.clone() };
            let id: ApiVersionId = policy.version.parse().map_err(|_| unknown())?;
            if policy.retirement_date.is_some() && !policy.deprecated {
                return Err(RegistryError::RetirementWithoutDeprecation {
                    api: policy.api,
                    version: policy.version.clone(),
                });
            }
            let entry = self
                .versions
                .get_mut(&(policy.api, id.major))
                .and_then(|list| list.iter_mut().find(|entry| entry.version == id))
                .ok_or_else(unknown)?;
            entry.is_deprecated = policy.deprecated;
            entry.deprecated_since = policy.deprecated_since.filter(|_| policy.deprecated);
            entry.retirement_date = policy.retirement_date;
            entry.retired = policy.retired;
        }
        Ok(self)
    }

    /// The majors of an API (whether or not any of their versions is still served).
    pub fn majors(&self, api: Api) -> impl Iterator<Item = &MajorInfo> {
        self.majors.iter().filter(move |info| info.api == api)
    }

    pub fn major(&self, api: Api, major: u64) -> Option<&MajorInfo> {
        self.majors.iter().find(|info| info.api == api && info.major == major)
    }

    /// Served (not retired) versions of one major, ascending.
    pub fn supported(&self, api: Api, major: u64) -> impl Iterator<Item = &VersionEntry> {
        self.versions.get(&(api, major)).into_iter().flatten().filter(|entry| !entry.retired)
    }

    /// Served versions of every major of an API, ascending.
    pub fn supported_all(&self, api: Api) -> impl Iterator<Item = &VersionEntry> {
        self.versions
            .iter()
            .filter(move |((a, _), _)| *a == api)
            .flat_map(|(_, list)| list.iter())
            .filter(|entry| !entry.retired)
    }

    /// Every version, retired ones included (for golden-file and safety tests).
    pub fn all_versions(&self) -> impl Iterator<Item = &VersionEntry> {
        self.versions.values().flatten()
    }

    /// The newest served version of a major: what a request without `Version` gets
    /// where the header is optional, and what error responses echo.
    pub fn newest(&self, api: Api, major: u64) -> Option<&VersionEntry> {
        self.supported(api, major).last()
    }

    /// The newest version of a major built into this release, retired or not: the shape in
    /// which its resources are stored (every older minor's is a subset).
    pub fn stored_shape(&self, api: Api, major: u64) -> Option<&VersionEntry> {
        self.versions.get(&(api, major)).and_then(|list| list.last())
    }

    /// The served version of an API equal to `id`, in any major.
    pub fn find(&self, api: Api, id: ApiVersionId) -> Option<&VersionEntry> {
        self.supported(api, id.major).find(|entry| entry.version == id)
    }

    /// Matches a request's `Version` header against one major (SOL013 clause 9.1).
    /// Support is an exact match of MAJOR.MINOR.PATCH, as in Tacker: a client asking
    /// for a version we do not list gets 406, not a silently different one.
    pub fn negotiate(&self, api: Api, major: u64, header: Option<&str>) -> Result<&VersionEntry, NegotiationError> {
        let Some(value) = header else {
            let required = self.major(api, major).is_none_or(|info| info.version_header_required);
            if required {
                return Err(NegotiationError::Missing);
            }
            return self.newest(api, major).ok_or_else(|| NegotiationError::NotSupported(String::new()));
        };
        let id: ApiVersionId = value.parse()?;
        if id.major != major {
            return Err(NegotiationError::NotSupported(id.to_string()));
        }
        self.find(api, id).ok_or_else(|| NegotiationError::NotSupported(id.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::builtin().expect("builtin registry compiles")
    }

    /// Names are compiled on first use, so a schema that does not compile would only show
    /// when a request needs it: every built-in one must compile.
    #[test]
    fn every_builtin_schema_compiles() {
        for entry in registry().all_versions() {
            if let Err((name, reason)) = entry.dictionary.compile_all() {
                panic!("{} {}: {name} does not compile: {reason}", entry.api, entry.version);
            }
        }
    }

    #[test]
    fn v2_requires_version_and_matches_exactly() {
        let registry = registry();
        assert_eq!(registry.negotiate(Api::Vnflcm, 2, None).unwrap_err(), NegotiationError::Missing);
        let entry = registry.negotiate(Api::Vnflcm, 2, Some("2.0.0")).unwrap();
        assert_eq!(entry.version_string(), "2.0.0");
        let entry = registry.negotiate(Api::Vnflcm, 2, Some("2.0.0-impl:example.com:x:1")).unwrap();
        assert_eq!(entry.version_string(), "2.0.0");
        assert_eq!(
            registry.negotiate(Api::Vnflcm, 2, Some("1.3.0")).unwrap_err(),
            NegotiationError::NotSupported("1.3.0".into())
        );
        assert_eq!(
            registry.negotiate(Api::Vnflcm, 2, Some("9.9.9")).unwrap_err().to_string(),
            "Version 9.9.9 not supported."
        );
        assert_eq!(registry.negotiate(Api::Vnflcm, 2, Some("02.0.0")).unwrap_err().status(), 400);
    }

    #[test]
    fn v1_defaults_to_newest_minor() {
        let registry = registry();
        let newest = registry.newest(Api::Vnflcm, 1).unwrap().version;
        let entry = registry.negotiate(Api::Vnflcm, 1, None).unwrap();
        assert_eq!(entry.version, newest);
        assert_eq!(entry.version_string(), "1.3.0");
    }

    #[test]
    fn policies_deprecate_and_retire() {
        let date: DateTime<Utc> = "2027-06-30T00:00:00Z".parse().unwrap();
        let registry = registry()
            .with_policies(&[VersionPolicy {
                api: Api::Vnflcm,
                version: "2.0.0".into(),
                deprecated: true,
                deprecated_since: None,
                retirement_date: Some(date),
                retired: false,
            }])
            .unwrap();
        let entry = registry.negotiate(Api::Vnflcm, 2, Some("2.0.0")).unwrap();
        assert!(entry.is_deprecated);
        assert_eq!(entry.retirement_date, Some(date));

        let retired = registry
            .with_policies(&[VersionPolicy {
                api: Api::Vnflcm,
                version: "1.3.0".into(),
                deprecated: true,
                deprecated_since: None,
                retirement_date: None,
                retired: true,
            }])
            .unwrap();
        assert!(retired.negotiate(Api::Vnflcm, 1, Some("1.3.0")).is_err());
        assert!(retired.supported(Api::Vnflcm, 1).all(|entry| entry.version_string() != "1.3.0"));
    }

    #[test]
    fn unknown_policy_versions_are_refused() {
        let err = registry()
            .with_policies(&[VersionPolicy {
                api: Api::Vnflcm,
                version: "7.0.0".into(),
                deprecated: true,
                deprecated_since: None,
                retirement_date: None,
                retired: false,
            }])
            .unwrap_err();
        assert!(matches!(err, RegistryError::UnknownVersion { .. }));
    }
}
