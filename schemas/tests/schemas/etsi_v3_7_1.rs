//! vnflcm 2.3.0, composed from the 2.0.0 document and the 2.1.0-2.3.0 deltas, checked type by type
//! against ETSI's own SOL003 V3.7.1 OpenAPI (API 2.3.0; `sol003-v3.7.1/` in the ETSI directory,
//! found and required as in `etsi_bundle`).
//!
//! Every type both define is compared after stripping prose: properties, required members, enums,
//! types, array items, composition keywords, with `$ref`s to types only one side names inlined.
//! Each difference must be listed in `data/vnflcm/etsi-sol003-v3.7.1-errata.json` with its reason,
//! and each listed erratum must still match a difference, so the list cannot rot. The same file
//! lists the YAML types solgate does not serve and the `$ref`s ETSI left inside description text.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use solgate_schemas::{Api, VersionDocument};

use crate::support::{entry, manifest_dir};

const ERRATA: &str = include_str!("../../data/vnflcm/etsi-sol003-v3.7.1-errata.json");
const FILES: &[&str] = &[
    "SOL003/VNFLifecycleManagement/definitions/SOL003VNFLifecycleManagement_def.yaml",
    "SOL003/General_Definitions/SOL003_def.yaml",
    "SOL003/VNFLifecycleManagementNotification/definitions/SOL003VNFLifecycleManagementNotification_def.yaml",
];
const DOC_ONLY: &[&str] = &["description", "example", "examples"];

/// ETSI's V3.7.1 definitions: type name -> (file it lives in, schema).
pub(crate) struct Etsi {
    types: BTreeMap<String, (String, Value)>,
}

/// The definitions of `files` under `dir`; `Err` names a file that cannot be read.
pub(crate) fn load(dir: &Path, files: &[&str]) -> Result<Etsi, String> {
    let mut types = BTreeMap::new();
    for file in files {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc: Value = serde_yaml_ng::from_str(&text).expect("ETSI YAML parses");
        for (name, schema) in doc["definitions"].as_object().expect("a definitions section") {
            let previous = types.insert(name.clone(), ((*file).to_owned(), schema.clone()));
            assert!(previous.is_none(), "{name} is defined twice");
        }
    }
    Ok(Etsi { types })
}

fn etsi() -> Option<Etsi> {
    let named = std::env::var_os("SOLGATE_ETSI_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from);
    let required = named.is_some();
    let dir = named.unwrap_or_else(|| manifest_dir().join("../../shared/etsi")).join("sol003-v3.7.1");
    match load(&dir, FILES) {
        Ok(etsi) => Some(etsi),
        Err(e) => {
            assert!(!required, "SOLGATE_ETSI_DIR is set but {e}");
            eprintln!("note: {e}; skipping the V3.7.1 comparison");
            None
        }
    }
}

/// `../../General_Definitions/SOL003_def.yaml#/definitions/Link` seen from `from` -> `Link`,
/// checking the file part really is the file that defines it.
fn resolve(etsi: &Etsi, from: &str, reference: &str) -> String {
    let (file, fragment) = reference.split_once('#').unwrap_or_else(|| panic!("{reference}: no fragment"));
    let name = fragment.strip_prefix("/definitions/").unwrap_or_else(|| panic!("{reference}: not a definition"));
    let target = if file.is_empty() {
        from.to_owned()
    } else {
        let mut parts: Vec<&str> = Path::new(from).parent().unwrap().to_str().unwrap().split('/').collect();
        for part in file.split('/') {
            match part {
                ".." => {
                    parts.pop();
                }
                "." => {}
                other => parts.push(other),
            }
        }
        parts.join("/")
    };
    let (defined_in, _) = etsi.types.get(name).unwrap_or_else(|| panic!("{reference} from {from}: unknown type"));
    assert_eq!(defined_in, &target, "{reference} from {from} points at the wrong file");
    name.to_owned()
}

/// Prose stripped, `$ref`s to `shared` types kept as `{"$ref": name}`, every other `$ref` inlined.
fn normalize_etsi(etsi: &Etsi, file: &str, node: &Value, shared: &BTreeSet<String>) -> Value {
    match node {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let name = resolve(etsi, file, reference);
                if shared.contains(&name) {
                    return json!({"$ref": name});
                }
                let (target_file, schema) = &etsi.types[&name];
                return normalize_etsi(etsi, target_file, schema, shared);
            }
            Value::Object(
                map.iter()
                    .filter(|(k, _)| !DOC_ONLY.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), normalize_etsi(etsi, file, v, shared)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalize_etsi(etsi, file, v, shared)).collect()),
        other => other.clone(),
    }
}

fn normalize_ours(defs: &Map<String, Value>, node: &Value, shared: &BTreeSet<String>) -> Value {
    match node {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
                if shared.contains(name) {
                    return json!({"$ref": name});
                }
                return normalize_ours(defs, &defs[name], shared);
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), normalize_ours(defs, v, shared))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalize_ours(defs, v, shared)).collect()),
        other => other.clone(),
    }
}

/// One difference: in `type`, at `pointer`, ETSI has `etsi` and solgate `ours` (null = absent).
#[derive(Debug, Clone, PartialEq)]
struct Difference {
    type_name: String,
    pointer: String,
    etsi: Value,
    ours: Value,
}

struct Sides<'a> {
    etsi: &'a BTreeMap<String, Value>,
    ours: &'a BTreeMap<String, Value>,
}

fn as_set(list: &[Value]) -> BTreeSet<String> {
    list.iter().map(Value::to_string).collect()
}

fn diff(sides: &Sides<'_>, a: &Value, b: &Value, pointer: &str, out: &mut Vec<(String, Value, Value)>) {
    if a == b {
        return;
    }
    // One side names a type the other writes out: compare the named type's body.
    let referenced = |v: &Value| {
        v.as_object().filter(|m| m.len() == 1).and_then(|m| m.get("$ref")).and_then(Value::as_str).map(str::to_owned)
    };
    match (referenced(a), referenced(b)) {
        (Some(name), None) if !b.is_null() => return diff(sides, &sides.etsi[&name], b, pointer, out),
        (None, Some(name)) if !a.is_null() => return diff(sides, a, &sides.ours[&name], pointer, out),
        _ => {}
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: Vec<&String> = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))).collect();
            for key in keys {
                let here = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                let (left, right) = (x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null));
                match (key.as_str(), left, right) {
                    ("properties", Value::Object(p), Value::Object(q)) => {
                        let names: Vec<&String> = p.keys().chain(q.keys().filter(|k| !p.contains_key(*k))).collect();
                        for name in names {
                            let (l, r) = (p.get(name).unwrap_or(&Value::Null), q.get(name).unwrap_or(&Value::Null));
                            diff(sides, l, r, &format!("{here}/{name}"), out);
                        }
                    }
                    // Order carries no meaning in these lists.
                    ("required" | "enum" | "oneOf" | "anyOf", Value::Array(p), Value::Array(q)) => {
                        if as_set(p) != as_set(q) {
                            out.push((here, left.clone(), right.clone()));
                        }
                    }
                    _ => diff(sides, left, right, &here, out),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                diff(sides, l, r, &format!("{pointer}/{i}"), out);
            }
        }
        _ => out.push((pointer.to_owned(), a.clone(), b.clone())),
    }
}

/// YAML types reachable from `roots` through `$ref`s.
fn reachable(etsi: &Etsi, roots: impl Iterator<Item = String>) -> BTreeSet<String> {
    fn refs(etsi: &Etsi, file: &str, node: &Value, out: &mut Vec<String>) {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    out.push(resolve(etsi, file, reference));
                }
                map.values().for_each(|v| refs(etsi, file, v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(etsi, file, v, out)),
            _ => {}
        }
    }
    let mut seen = BTreeSet::new();
    let mut pending: Vec<String> = roots.collect();
    while let Some(name) = pending.pop() {
        if seen.insert(name.clone()) {
            let (file, schema) = &etsi.types[&name];
            refs(etsi, file, schema, &mut pending);
        }
    }
    seen
}

/// Descriptions that carry a `$ref:` line (the reference was meant as a schema, not prose).
fn refs_in_descriptions(node: &Value, pointer: &str, out: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{pointer}/{key}");
                match value {
                    Value::String(text) if key == "description" && text.contains("$ref:") => {
                        out.push(pointer.to_owned())
                    }
                    _ => refs_in_descriptions(value, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                refs_in_descriptions(item, &format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn v2_3_0_matches_etsi_sol003_v3_7_1() {
    let Some(etsi) = etsi() else { return };
    let document = entry(Api::Vnflcm, "2.3.0").dictionary.document().unwrap();
    check_against(&etsi, document, ERRATA, 50);
}

/// Compares `document` with ETSI's definitions type by type: every difference must be an erratum
/// of `errata` (and every erratum a difference), the `not_served` erratum must list exactly the
/// YAML types no served type reaches, and every `$ref` ETSI left in a description is listed.
pub(crate) fn check_against(etsi: &Etsi, document: &VersionDocument, errata: &str, min_shared: usize) {
    let shared: BTreeSet<String> =
        document.defs.keys().filter(|name| etsi.types.contains_key(*name)).cloned().collect();
    assert!(shared.len() >= min_shared, "only {} types in common: wrong files?", shared.len());
    let etsi_side: BTreeMap<String, Value> = shared
        .iter()
        .map(|name| {
            let (file, schema) = &etsi.types[name];
            (name.clone(), normalize_etsi(etsi, file, schema, &shared))
        })
        .collect();
    let ours = document.defs_object();
    let our_side: BTreeMap<String, Value> =
        shared.iter().map(|name| (name.clone(), normalize_ours(&ours, &ours[name], &shared))).collect();
    let sides = Sides { etsi: &etsi_side, ours: &our_side };
    let mut found = Vec::new();
    for name in &shared {
        let mut out = Vec::new();
        diff(&sides, &etsi_side[name], &our_side[name], "", &mut out);
        found.extend(out.into_iter().map(|(pointer, etsi, ours)| Difference {
            type_name: name.clone(),
            pointer,
            etsi,
            ours,
        }));
    }

    let errata: Value = serde_json::from_str(errata).unwrap();
    assert_eq!(errata["document"], "ETSI GS NFV-SOL 003 V3.7.1");
    let mut listed = Vec::new();
    let mut unserved_listed = BTreeSet::new();
    let mut description_refs_listed = BTreeSet::new();
    for erratum in errata["errata"].as_array().unwrap() {
        let id = erratum["id"].as_str().unwrap();
        for field in ["reason", "decision"] {
            assert!(erratum[field].as_str().is_some_and(|t| t.len() > 20), "erratum {id} needs a {field}");
        }
        match erratum["kind"].as_str().unwrap() {
            "difference" => listed.push((
                id.to_owned(),
                Difference {
                    type_name: erratum["type"].as_str().unwrap().to_owned(),
                    pointer: erratum["pointer"].as_str().unwrap().to_owned(),
                    etsi: erratum["etsi"].clone(),
                    ours: erratum["ours"].clone(),
                },
            )),
            "not_served" => unserved_listed
                .extend(erratum["types"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned())),
            "ref_in_description" => {
                description_refs_listed.insert((
                    erratum["type"].as_str().unwrap().to_owned(),
                    erratum["pointer"].as_str().unwrap().to_owned(),
                ));
            }
            other => panic!("erratum {id}: unknown kind {other}"),
        }
    }

    let unlisted: Vec<&Difference> = found.iter().filter(|d| !listed.iter().any(|(_, l)| l == *d)).collect();
    let stale: Vec<&String> = listed.iter().filter(|(_, l)| !found.contains(l)).map(|(id, _)| id).collect();
    let show: Vec<Value> = unlisted
        .iter()
        .map(|d| json!({"type": d.type_name, "pointer": d.pointer, "etsi": d.etsi, "ours": d.ours}))
        .collect();
    assert!(
        unlisted.is_empty(),
        "differences from ETSI's V3.7.1 OpenAPI not in the errata file:\n{}",
        serde_json::to_string_pretty(&show).unwrap()
    );
    assert!(stale.is_empty(), "errata that no longer match a difference: {stale:?}");

    // The YAML types solgate does not serve: exactly those no served type reaches.
    let served = reachable(etsi, document.dictionary.iter().filter(|n| etsi.types.contains_key(*n)).cloned());
    let unserved: BTreeSet<String> = etsi.types.keys().filter(|n| !served.contains(*n)).cloned().collect();
    assert_eq!(
        unserved_listed, unserved,
        "the not_served erratum must list exactly the YAML types no served type reaches"
    );

    let mut description_refs = BTreeSet::new();
    for (name, (_, schema)) in &etsi.types {
        let mut out = Vec::new();
        refs_in_descriptions(schema, "", &mut out);
        description_refs.extend(out.into_iter().map(|pointer| (name.clone(), pointer)));
    }
    assert_eq!(description_refs_listed, description_refs, "every $ref left in a description is listed");
}
