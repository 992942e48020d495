//! SOL013 clause 9 `api_versions` and the choice of the version a request carries.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The APIs solgate serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Api {
    Vnflcm,
    Vnfpkgm,
    Vnffm,
    Vnfpm,
}

impl Api {
    pub const ALL: [Api; 4] = [Api::Vnflcm, Api::Vnfpkgm, Api::Vnffm, Api::Vnfpm];

    pub fn name(self) -> &'static str {
        match self {
            Api::Vnflcm => "vnflcm",
            Api::Vnfpkgm => "vnfpkgm",
            Api::Vnffm => "vnffm",
            Api::Vnfpm => "vnfpm",
        }
    }

    /// The majors solgate may serve for this API.
    pub fn majors(self) -> &'static [u64] {
        match self {
            Api::Vnflcm => &[1, 2],
            Api::Vnfpkgm | Api::Vnffm => &[1],
            Api::Vnfpm => &[2],
        }
    }
}

/// The newest version of each API major this client was written against: with a major
/// chosen, it uses the newest minor the server offers up to this one. Request bodies pass
/// through untouched, so a newer minor would work too, but the tables and `--wait` read
/// fields defined up to these.
pub const KNOWN_VERSIONS: &[(Api, &str)] = &[
    (Api::Vnflcm, "1.3.0"),
    (Api::Vnflcm, "2.1.0"),
    (Api::Vnfpkgm, "1.3.0"),
    (Api::Vnffm, "1.3.0"),
    (Api::Vnfpm, "2.1.0"),
];

pub(crate) fn known(api: Api, major: u64) -> Option<semver::Version> {
    KNOWN_VERSIONS
        .iter()
        .filter(|(known_api, _)| *known_api == api)
        .filter_map(|(_, version)| semver::Version::parse(version).ok())
        .find(|version| version.major == major)
}

/// The lowest version of a major, sent to `api_versions` itself before anything is known.
pub(crate) fn baseline(api: Api, major: u64) -> String {
    match (api, major) {
        (_, 1) => "1.3.0".to_owned(),
        (_, major) => format!("{major}.0.0"),
    }
}

/// One entry of `apiVersions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiVersionInformation {
    pub version: String,
    #[serde(default)]
    pub is_deprecated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retirement_date: Option<DateTime<Utc>>,
}

/// An `api_versions` resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiVersions {
    pub uri_prefix: String,
    pub api_versions: Vec<ApiVersionInformation>,
}

impl ApiVersions {
    /// The newest offered version of `major` not newer than `ceiling`, not retired by `now`.
    pub fn choose(
        &self,
        major: u64,
        ceiling: Option<&semver::Version>,
        now: DateTime<Utc>,
    ) -> Option<&ApiVersionInformation> {
        self.api_versions
            .iter()
            .filter_map(|info| semver::Version::parse(&info.version).ok().map(|version| (version, info)))
            .filter(|(version, _)| version.major == major)
            .filter(|(version, _)| ceiling.is_none_or(|ceiling| version <= ceiling))
            .filter(|(_, info)| info.retirement_date.is_none_or(|date| date > now))
            .max_by(|(a, _), (b, _)| a.cmp(b))
            .map(|(_, info)| info)
    }
}

/// What `solctl versions` shows for one API major.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionReport {
    pub api: String,
    pub uri_prefix: String,
    pub versions: Vec<ApiVersionInformation>,
    /// The version this client sends to this major.
    pub client_uses: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(list: &[(&str, bool, Option<&str>)]) -> ApiVersions {
        ApiVersions {
            uri_prefix: "/vnflcm/v2".into(),
            api_versions: list
                .iter()
                .map(|(version, deprecated, date)| ApiVersionInformation {
                    version: (*version).into(),
                    is_deprecated: *deprecated,
                    retirement_date: date.map(|date| date.parse().unwrap()),
                })
                .collect(),
        }
    }

    #[test]
    fn the_newest_known_unretired_minor_is_chosen() {
        let now: DateTime<Utc> = "2026-06-01T00:00:00Z".parse().unwrap();
        let offered =
            versions(&[("2.0.0", true, Some("2026-01-01T00:00:00Z")), ("2.1.0", false, None), ("2.3.0", false, None)]);
        let ceiling = semver::Version::new(2, 1, 0);
        assert_eq!(offered.choose(2, Some(&ceiling), now).unwrap().version, "2.1.0");
        assert_eq!(offered.choose(2, None, now).unwrap().version, "2.3.0");
        let old = versions(&[("2.0.0", true, Some("2026-01-01T00:00:00Z"))]);
        assert!(old.choose(2, Some(&ceiling), now).is_none(), "retired");
        assert!(offered.choose(1, None, now).is_none());
        assert_eq!(known(Api::Vnflcm, 2), Some(ceiling));
        assert_eq!(baseline(Api::Vnfpkgm, 1), "1.3.0");
    }
}
