//! Published versions are frozen: every version's dictionary is kept under
//! `schemas/golden/<api>/<version>/` (one `<Name>.json` per schema plus `_version.json`), and any
//! difference fails. `SOLGATE_BLESS=1` writes the golden files of a version that has none yet
//! (a new version); it never rewrites a published one.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use solgate_schemas::{Registry, VersionEntry};

use crate::support::{manifest_dir, registry};

const VERSION_FILE: &str = "_version.json";

/// What the golden directory of a version must contain: file name -> JSON.
fn expected_files(entry: &VersionEntry) -> BTreeMap<String, Value> {
    let dictionary = &entry.dictionary;
    let mut files = BTreeMap::new();
    files.insert(
        VERSION_FILE.to_owned(),
        json!({
            "api": entry.api.as_str(),
            "version": entry.version_string(),
            "etsiDocument": entry.etsi_document,
            "dictionary": dictionary.names().collect::<Vec<_>>(),
        }),
    );
    for name in dictionary.names() {
        files.insert(format!("{name}.json"), dictionary.schema(name).unwrap().clone());
    }
    files
}

fn version_dir(root: &Path, entry: &VersionEntry) -> PathBuf {
    root.join(entry.api.as_str()).join(entry.version_string())
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap();
    text.push('\n');
    text
}

/// Differences between the registry and the golden tree under `root`, one line each. Versions
/// without a golden directory are written when `bless` is set, reported otherwise.
fn frozen_differences(registry: &Registry, root: &Path, bless: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let mut known_dirs = Vec::new();
    for entry in registry.all_versions() {
        let dir = version_dir(root, entry);
        known_dirs.push(dir.clone());
        let expected = expected_files(entry);
        if !dir.exists() {
            if bless {
                fs::create_dir_all(&dir).unwrap();
                for (file, value) in &expected {
                    fs::write(dir.join(file), pretty(value)).unwrap();
                }
                eprintln!("blessed new version {} {} -> {}", entry.api, entry.version, dir.display());
            } else {
                problems.push(format!(
                    "{} {} has no golden files: a new version? run SOLGATE_BLESS=1 cargo test -p solgate-schemas published_versions_are_frozen",
                    entry.api, entry.version
                ));
            }
            continue;
        }
        let mut on_disk: Vec<String> =
            fs::read_dir(&dir).unwrap().map(|item| item.unwrap().file_name().to_string_lossy().into_owned()).collect();
        on_disk.sort();
        for file in &on_disk {
            if !expected.contains_key(file) {
                problems.push(format!(
                    "{} {}: {file} is golden but the version no longer defines it",
                    entry.api, entry.version
                ));
            }
        }
        for (file, value) in &expected {
            let path = dir.join(file);
            match fs::read_to_string(&path) {
                Err(_) => {
                    problems.push(format!("{} {}: {file} is missing from the golden files", entry.api, entry.version))
                }
                Ok(text) => {
                    let golden: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    if &golden != value {
                        problems.push(format!(
                            "{} {}: {file} differs from the published schema; published versions are frozen, add a new minor instead",
                            entry.api, entry.version
                        ));
                    }
                }
            }
        }
    }
    // A published version may be retired by policy, never deleted from the catalog.
    for api_dir in fs::read_dir(root).into_iter().flatten().flatten() {
        for version_dir in fs::read_dir(api_dir.path()).into_iter().flatten().flatten() {
            if !known_dirs.contains(&version_dir.path()) {
                problems.push(format!("golden version {} is no longer in the catalog", version_dir.path().display()));
            }
        }
    }
    problems
}

#[test]
fn published_versions_are_frozen() {
    let bless = std::env::var("SOLGATE_BLESS").is_ok_and(|v| v == "1");
    let problems = frozen_differences(registry(), &manifest_dir().join("golden"), bless);
    assert!(problems.is_empty(), "golden files disagree with the registry:\n{}", problems.join("\n"));
}

#[test]
fn changing_a_published_schema_is_detected_and_never_blessed() {
    let golden = manifest_dir().join("golden");
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&golden, copy.path());
    assert!(frozen_differences(registry(), copy.path(), false).is_empty(), "a faithful copy must pass");

    // A published schema edited by hand (here: an enum value slipped into 2.0.0).
    let file = copy.path().join("vnflcm/2.0.0/TerminateVnfRequest.json");
    let mut schema: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    schema["properties"]["terminationType"]["enum"].as_array_mut().unwrap().push(json!("IMMEDIATE"));
    fs::write(&file, pretty(&schema)).unwrap();
    // Blessing must not overwrite it either.
    let problems = frozen_differences(registry(), copy.path(), true);
    assert_eq!(
        problems,
        [
            "vnflcm 2.0.0: TerminateVnfRequest.json differs from the published schema; published versions are frozen, add a new minor instead"
        ]
    );
    let still: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(still, schema);

    // A version without golden files is reported, and blessing writes exactly that version.
    fs::remove_dir_all(copy.path().join("vnflcm/2.1.0")).unwrap();
    let problems = frozen_differences(registry(), copy.path(), false);
    assert!(problems.iter().any(|p| p.starts_with("vnflcm 2.1.0 has no golden files")), "{problems:?}");
    frozen_differences(registry(), copy.path(), true);
    assert!(copy.path().join("vnflcm/2.1.0/LccnSubscriptionRequest.json").exists());
}

fn copy_tree(from: &Path, to: &Path) {
    for item in fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&item.path(), &target);
        } else {
            fs::copy(item.path(), target).unwrap();
        }
    }
}
