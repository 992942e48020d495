//! Shared helpers: the built registry and the example bodies of tests/examples/.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;
use solgate_schemas::{Api, ApiVersionId, Registry, VersionEntry};

pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry::builtin().expect("builtin registry compiles"))
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn entry(api: Api, version: &str) -> &'static VersionEntry {
    let id: ApiVersionId = version.parse().unwrap();
    registry().all_versions().find(|e| e.api == api && e.version == id).unwrap_or_else(|| panic!("{api} {version}"))
}

/// Example bodies of one version: `requests` are valid request bodies; `resources` are stored
/// resources in the newest minor's shape of the major.
pub struct Examples {
    pub requests: BTreeMap<String, Vec<Value>>,
    pub resources: BTreeMap<String, Vec<Value>>,
}

pub fn examples(api: Api, version: &str) -> Examples {
    let path = manifest_dir().join("tests/examples").join(format!("{api}-{version}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["api"], api.as_str());
    assert_eq!(doc["version"], version);
    let section = |key: &str| -> BTreeMap<String, Vec<Value>> {
        doc[key]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, list)| (name.clone(), list.as_array().unwrap().clone()))
            .collect()
    };
    Examples { requests: section("requests"), resources: section("resources") }
}

/// Versions of the same major as `entry` that come before it, oldest first.
pub fn predecessors(entry: &VersionEntry) -> Vec<&'static VersionEntry> {
    registry()
        .all_versions()
        .filter(|e| e.api == entry.api && e.major() == entry.major() && e.version < entry.version)
        .collect()
}

/// The newest version of the major of `entry` (where resources are stored).
pub fn newest_of_major(entry: &VersionEntry) -> &'static VersionEntry {
    registry().all_versions().filter(|e| e.api == entry.api && e.major() == entry.major()).last().unwrap()
}

/// Requests valid in `entry`: its own examples plus those of every earlier minor of its major
/// (the safety test proves they still validate).
pub fn effective_requests(entry: &VersionEntry) -> BTreeMap<String, Vec<Value>> {
    let versions = predecessors(entry).into_iter().map(VersionEntry::version_string).chain([entry.version_string()]);
    let mut all: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for version in versions {
        for (name, bodies) in examples(entry.api, &version).requests {
            all.entry(name).or_default().extend(bodies);
        }
    }
    all
}

/// Stored resources of a major: the resources sections of all its minors' example files.
pub fn stored_resources(entry: &VersionEntry) -> BTreeMap<String, Vec<Value>> {
    let mut all: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for version in registry().all_versions().filter(|e| e.api == entry.api && e.major() == entry.major()) {
        for (name, bodies) in examples(version.api, &version.version_string()).resources {
            all.entry(name).or_default().extend(bodies);
        }
    }
    all
}

pub fn is_request(name: &str) -> bool {
    name.ends_with("Request")
        || matches!(
            name,
            "CancelMode"
                | "VnfPkgInfoModifications"
                | "AlarmModifications"
                | "PmJobModifications"
                | "ThresholdModifications"
        )
}
