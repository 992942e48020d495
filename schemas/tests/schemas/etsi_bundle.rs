//! vnflcm 2.0.0 checked against ETSI's SOL003 V3.3.1 OpenAPI bundle (../shared/etsi, not part of
//! the repository): our schemas must expand to exactly the bundle's (prose stripped, the documented
//! errata applied), and every example body must validate against the bundle's own schemas.
//!
//! The bundle is found at `$SOLGATE_ETSI_DIR` or `<workspace>/../shared/etsi`. When
//! `SOLGATE_ETSI_DIR` is set (deploy/scripts/test.sh sets it whenever the bundle is beside the
//! checkout) a missing bundle fails the tests; otherwise they print a note and pass, because the
//! bundle is third-party data that a clone of this repository alone does not have.

use std::path::PathBuf;

use serde_json::{Map, Value};
use solgate_schemas::Api;

use crate::support::{entry, examples, manifest_dir, stored_resources};

const BUNDLE: &str = "sol003-v3.3.1-vnflcm-openapi.json";
const ERRATA: &str = include_str!("../../data/vnflcm/etsi-sol003-v3.3.1-errata.json");
const DOC_ONLY: &[&str] = &["description", "example", "examples"];

fn bundle() -> Option<Value> {
    let named = std::env::var_os("SOLGATE_ETSI_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from);
    let required = named.is_some();
    let dir = named.unwrap_or_else(|| manifest_dir().join("../../shared/etsi"));
    let path = dir.join(BUNDLE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).expect("the ETSI bundle is JSON")),
        Err(e) => {
            assert!(!required, "SOLGATE_ETSI_DIR names {} but the ETSI bundle is missing: {e}", dir.display());
            eprintln!("note: ETSI bundle not found at {} ({e}); skipping the bundle check", path.display());
            None
        }
    }
}

fn strip(node: &Value) -> Value {
    match node {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(k, _)| !DOC_ONLY.contains(&k.as_str())).map(|(k, v)| (k.clone(), strip(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// Whole-subtree replacements, as the derivation tool applied them.
fn apply_errata(node: &Value, errata: &[(Value, Value)]) -> Value {
    let node = errata.iter().find(|(found, _)| found == node).map(|(_, fixed)| fixed).unwrap_or(node);
    match node {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), apply_errata(v, errata))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(|v| apply_errata(v, errata)).collect()),
        other => other.clone(),
    }
}

fn errata() -> Vec<(Value, Value)> {
    let doc: Value = serde_json::from_str(ERRATA).unwrap();
    doc["errata"].as_array().unwrap().iter().map(|e| (e["match"].clone(), e["replace"].clone())).collect()
}

/// Bundle schema of every dictionary name the bundle defines, stripped and corrected.
fn bundle_schemas(bundle: &Value) -> Vec<(String, Value)> {
    let errata = errata();
    let json_schema = |response: &Value| response["content"]["application/json"]["schema"].clone();
    let mut roots: Vec<(String, Value)> = Vec::new();
    for (name, body) in bundle["components"]["requestBodies"].as_object().unwrap() {
        roots.push((name.clone(), json_schema(body)));
    }
    let responses = &bundle["components"]["responses"];
    roots.push(("VnfInstance".into(), json_schema(&responses["IndividualVnfInstance.Get.200"])));
    roots.push(("VnfLcmOpOcc".into(), json_schema(&responses["IndividualVnfLcmOpOcc.Get.200"])));
    roots.push(("LccnSubscription".into(), json_schema(&responses["IndividualSubscription.Get.200"])));
    roots.push((
        "ApiVersionInformation".into(),
        json_schema(&bundle["paths"]["/api_versions"]["get"]["responses"]["200"]),
    ));
    roots.push(("ProblemDetails".into(), json_schema(&bundle["paths"]["/vnf_instances"]["post"]["responses"]["400"])));
    let mut fixed: Vec<(String, Value)> =
        roots.into_iter().map(|(name, schema)| (name, apply_errata(&strip(&schema), &errata))).collect();
    let changed_info = fixed.iter().find(|(n, _)| n == "VnfLcmOpOcc").unwrap().1["properties"]["changedInfo"].clone();
    fixed.push(("VnfInfoModifications".into(), changed_info));
    fixed
}

/// Our standalone schema with every `$ref` replaced by its target: the bundle's inlined form.
fn expand(schema: &Value) -> Value {
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    fn inline(node: &Value, defs: &Map<String, Value>) -> Value {
        match node {
            Value::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
                    return inline(&defs[target], defs);
                }
                Value::Object(map.iter().map(|(k, v)| (k.clone(), inline(v, defs))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, defs)).collect()),
            other => other.clone(),
        }
    }
    let mut top = schema.as_object().cloned().unwrap();
    top.remove("$schema");
    top.remove("$defs");
    inline(&Value::Object(top), &defs)
}

#[test]
fn v2_dictionary_matches_etsi_bundle() {
    let Some(bundle) = bundle() else { return };
    let dictionary = &entry(Api::Vnflcm, "2.0.0").dictionary;
    let mut compared = 0;
    for (name, etsi) in bundle_schemas(&bundle) {
        // The bundle also carries snapshot requests solgate does not serve.
        let Some(ours) = dictionary.schema(&name) else { continue };
        assert_eq!(expand(ours), etsi, "vnflcm 2.0.0 {name} differs from the ETSI bundle (after errata)");
        compared += 1;
    }
    assert_eq!(compared, 18, "every bundle-backed schema of 2.0.0 was compared");
}

#[test]
fn examples_validate_against_the_etsi_bundle() {
    let Some(bundle) = bundle() else { return };
    let version = entry(Api::Vnflcm, "2.0.0");
    let mut validators = std::collections::BTreeMap::new();
    for (name, schema) in bundle_schemas(&bundle) {
        // OpenAPI 3.0 schema objects are draft-4 style; formats such as date-time are asserted.
        let validator = jsonschema::options().with_draft(jsonschema::Draft::Draft4).build(&schema).unwrap();
        validators.insert(name, validator);
    }
    let mut checked = 0;
    let requests = examples(Api::Vnflcm, "2.0.0").requests;
    let resources = stored_resources(version)
        .into_iter()
        .map(|(name, list)| {
            let rendered = list.iter().map(|r| version.dictionary.render(&name, r)).collect::<Vec<_>>();
            (name, rendered)
        })
        .collect::<Vec<_>>();
    for (name, bodies) in requests.into_iter().chain(resources) {
        // Applies where the bundle defines the type (not CancelMode or the notifications).
        let Some(validator) = validators.get(&name) else { continue };
        for (i, body) in bodies.iter().enumerate() {
            let errors: Vec<String> =
                validator.iter_errors(body).map(|e| format!("{}: {e}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{name} example {i} fails the ETSI bundle: {errors:?}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} examples checked against the bundle");
}
