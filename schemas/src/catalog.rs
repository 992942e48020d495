//! The versions built into this release, where their dictionaries come from, and
//! [`Registry::builtin`], which compiles them.
//!
//! Adding a minor: write `data/<api>/<version>.delta.json` against the newest minor of its major,
//! add a line below, run `SOLGATE_BLESS=1 cargo test -p solgate-schemas published_versions_are_frozen`
//! to write its golden files, and commit them. Published versions never change.

use std::sync::Arc;

use crate::delta::Delta;
use crate::dictionary::Dictionary;
use crate::document::VersionDocument;
use crate::registry::{Api, MajorInfo, Registry, RegistryError, VersionEntry};
use crate::version::ApiVersionId;

/// Where a version's schemas come from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// The first minor of a major, written in full.
    Full(&'static str),
    /// A later minor: the previous minor of the same major plus this delta.
    Delta(&'static str),
}

pub(crate) struct Published {
    pub api: Api,
    pub version: ApiVersionId,
    pub etsi_document: &'static str,
    pub source: Source,
}

/// Every version solgate implements, ascending within each major.
pub(crate) const PUBLISHED: &[Published] = &[
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(1, 3, 0),
        // VNF LCM API 1.3.0 of SOL003 V2.6.1, as Tacker serves it under /vnflcm/v1.
        etsi_document: "ETSI GS NFV-SOL 003 V2.6.1",
        source: Source::Full(include_str!("../data/vnflcm/1.3.0.json")),
    },
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(2, 0, 0),
        // SOL003 V3.3.1: VNF LCM API 2.0.0 (info.version of ETSI's OpenAPI bundle).
        etsi_document: "ETSI GS NFV-SOL 003 V3.3.1",
        source: Source::Full(include_str!("../data/vnflcm/2.0.0.json")),
    },
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(2, 1, 0),
        // SOL003 V3.5.1: VNF LCM API 2.1.0 (etsi-mano-model 3.5.1 mano-versions.json, "vnflcm" 2.1.0).
        etsi_document: "ETSI GS NFV-SOL 003 V3.5.1",
        source: Source::Delta(include_str!("../data/vnflcm/2.1.0.delta.json")),
    },
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(2, 2, 0),
        // SOL003 V3.6.1: VNF LCM API 2.2.0 (etsi-mano-model 3.6.1 mano-versions.json).
        etsi_document: "ETSI GS NFV-SOL 003 V3.6.1",
        source: Source::Delta(include_str!("../data/vnflcm/2.2.0.delta.json")),
    },
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(2, 3, 0),
        // SOL003 V3.7.1: VNF LCM API 2.3.0 (info.version of ETSI's V3.7.1 OpenAPI).
        etsi_document: "ETSI GS NFV-SOL 003 V3.7.1",
        source: Source::Delta(include_str!("../data/vnflcm/2.3.0.delta.json")),
    },
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(2, 10, 0),
        // SOL003 V4.3.1: VNF LCM API 2.10.0 (etsi-mano-model 4.3.1 mano-versions.json).
        // Release 4 numbers its minors past the Release 3 ones; 2.4.0-2.9.0 belong to editions not served.
        etsi_document: "ETSI GS NFV-SOL 003 V4.3.1",
        source: Source::Delta(include_str!("../data/vnflcm/2.10.0.delta.json")),
    },
    Published {
        api: Api::Vnflcm,
        version: ApiVersionId::new(2, 12, 0),
        // SOL003 V4.5.1: VNF LCM API 2.12.0 (etsi-mano-model 4.5.1 mano-versions.json).
        etsi_document: "ETSI GS NFV-SOL 003 V4.5.1",
        source: Source::Delta(include_str!("../data/vnflcm/2.12.0.delta.json")),
    },
    Published {
        api: Api::Vnfpkgm,
        version: ApiVersionId::new(1, 3, 0),
        // SOL005 V2.6.1 is the last Release 2 edition with VNF package management under
        // /vnfpkgm/v1: V2.7.1 moved it to /vnfpkgm/v2 as API 2.0.0 (ETSI forge SOL005
        // VNFPackageManagement.yaml; Tacker's v2 objects cite "v2.7.1 ... API version: 2.0.0").
        // 1.3.0 is inferred, not read from the V2.6.1 text: the sibling SOL003 package API is
        // 1.2.0 in V2.5.1 (ETSI OpenAPI vendored by ONAP) and V2.6.1 bumped the Release 2 APIs it
        // changed (SOL003 V2.6.1: LCM and granting 1.3.0, Tacker's records).
        etsi_document: "ETSI GS NFV-SOL 005 V2.6.1",
        source: Source::Full(include_str!("../data/vnfpkgm/1.3.0.json")),
    },
    Published {
        api: Api::Vnffm,
        version: ApiVersionId::new(1, 3, 0),
        // SOL003 V3.3.1 clause 7: VNF Fault Management API 1.3.0, as Tacker serves it under
        // /vnffm/v1 (Tacker's CURRENT_FM_VERSION; its objects cite
        // "v3.3.1 7.5.x (API version: 1.3.0)"). ETSI's V3.7.1 OpenAPI is API 1.5.0, a later minor.
        etsi_document: "ETSI GS NFV-SOL 003 V3.3.1",
        source: Source::Full(include_str!("../data/vnffm/1.3.0.json")),
    },
    Published {
        api: Api::Vnfpm,
        version: ApiVersionId::new(2, 1, 0),
        // SOL003 V3.3.1 (and V3.5.1, V3.6.1): VNF PM API 2.1.0 (etsi-mano-model 3.3.1
        // mano-versions.json, "vnfpm" 2.1.0), the version Tacker serves under /vnfpm/v2
        // (Tacker's CURRENT_PM_VERSION). V3.7.1 is 2.2.0.
        etsi_document: "ETSI GS NFV-SOL 003 V3.3.1",
        source: Source::Full(include_str!("../data/vnfpm/2.1.0.json")),
    },
];

impl Registry {
    /// The versions built into this release, with their compiled schema dictionaries.
    pub fn builtin() -> Result<Registry, RegistryError> {
        let majors = vec![
            MajorInfo { api: Api::Vnflcm, major: 1, version_header_required: false },
            MajorInfo { api: Api::Vnflcm, major: 2, version_header_required: true },
            MajorInfo { api: Api::Vnfpkgm, major: 1, version_header_required: false },
            // A Release 3 API: `Version` is mandatory (python-tackerclient sends 1.3.0).
            MajorInfo { api: Api::Vnffm, major: 1, version_header_required: true },
            MajorInfo { api: Api::Vnfpm, major: 2, version_header_required: true },
        ];
        let mut versions: Vec<VersionEntry> = Vec::new();
        for published in PUBLISHED {
            let document = load(published, &versions)?;
            let dictionary = Dictionary::compile(document).map_err(|(operation, reason)| RegistryError::Schema {
                api: published.api,
                version: published.version.to_string(),
                operation,
                reason,
            })?;
            versions.push(VersionEntry {
                api: published.api,
                version: published.version,
                etsi_document: published.etsi_document,
                is_deprecated: false,
                deprecated_since: None,
                retirement_date: None,
                retired: false,
                dictionary: Arc::new(dictionary),
            });
        }
        Ok(Registry::from_entries(majors, versions))
    }
}

fn load(published: &Published, built: &[VersionEntry]) -> Result<VersionDocument, RegistryError> {
    let fail =
        |reason: String| RegistryError::Document { api: published.api, version: published.version.to_string(), reason };
    let document = match published.source {
        Source::Full(text) => VersionDocument::parse(text).map_err(fail)?,
        Source::Delta(text) => {
            let delta = Delta::parse(text).map_err(fail)?;
            // Copy and extend: the base is the previous minor of the same major, never another.
            let previous = built
                .iter()
                .rev()
                .find(|entry| entry.api == published.api && entry.major() == published.version.major)
                .ok_or_else(|| fail("a delta needs an earlier minor of its major".into()))?;
            if previous.version_string() != delta.base {
                return Err(fail(format!(
                    "delta is based on {}, the previous minor is {}",
                    delta.base, previous.version
                )));
            }
            let base = previous.dictionary.document().ok_or_else(|| fail("previous minor has no document".into()))?;
            delta.apply(base).map_err(fail)?
        }
    };
    if document.api != published.api.as_str() || document.version != published.version.to_string() {
        return Err(fail(format!("data file describes {} {}", document.api, document.version)));
    }
    if document.etsi_document != published.etsi_document {
        return Err(fail(format!(
            "data file implements {}, catalog says {}",
            document.etsi_document, published.etsi_document
        )));
    }
    Ok(document)
}
