//! A version document: everything one API version defines, as data.
//!
//! The first minor of a major is a full document (`data/<api>/<version>.json`); each later minor is
//! the previous document plus a [`crate::delta::Delta`]. A document holds the named types (`$defs`,
//! ETSI type names, `$ref`s only inside the document) and the list of names the dictionary exports
//! (requests and resource representations).

use std::collections::BTreeSet;
use std::sync::Arc;

use indexmap::IndexMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The JSON Schema dialect of every schema solgate builds.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

const REF_PREFIX: &str = "#/$defs/";

/// Named types, in document order. Each is shared: a later minor copies the map of its
/// predecessor and replaces only the types its delta changes, so the minors of a major do not
/// each hold a full copy (five copies of the LCM 2.x types were 1.5 MiB of the idle heap).
pub type Defs = IndexMap<String, Arc<Value>>;

/// Named types from a JSON object of them.
pub fn defs_from(map: Map<String, Value>) -> Defs {
    map.into_iter().map(|(name, schema)| (name, Arc::new(schema))).collect()
}

#[derive(Debug, Clone, PartialEq)]
pub struct VersionDocument {
    pub api: String,
    pub version: String,
    pub etsi_document: String,
    /// Exported names, in the order the data file lists them.
    pub dictionary: Vec<String>,
    pub defs: Defs,
    /// Set when the delta that produced this version declared a breaking change: the version may
    /// reject what its predecessor accepted. Always false for a full (first-minor) document.
    pub breaking: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDocument {
    api: String,
    version: String,
    #[serde(rename = "etsiDocument")]
    etsi_document: String,
    /// Free text for reviewers: where the data came from.
    #[serde(rename = "provenance")]
    _provenance: String,
    dictionary: Vec<String>,
    #[serde(rename = "$defs")]
    defs: Map<String, Value>,
}

impl VersionDocument {
    pub fn parse(text: &str) -> Result<VersionDocument, String> {
        let raw: RawDocument = serde_json::from_str(text).map_err(|e| format!("not a version document: {e}"))?;
        let document = VersionDocument {
            api: raw.api,
            version: raw.version,
            etsi_document: raw.etsi_document,
            dictionary: raw.dictionary,
            defs: defs_from(raw.defs),
            breaking: false,
        };
        document.check()?;
        Ok(document)
    }

    /// Every exported name exists, every `$ref` resolves inside the document, no name is listed twice.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for name in &self.dictionary {
            if !seen.insert(name.as_str()) {
                return Err(format!("{name} is exported twice"));
            }
            if !self.defs.contains_key(name) {
                return Err(format!("exported name {name} has no definition"));
            }
        }
        for (name, schema) in &self.defs {
            let mut refs = Vec::new();
            collect_refs(schema, &mut refs);
            for target in refs {
                if !self.defs.contains_key(&target) {
                    return Err(format!("{name} refers to undefined type {target}"));
                }
            }
        }
        Ok(())
    }

    /// The named types as one JSON object (the OpenAPI document's `components.schemas`).
    pub fn defs_object(&self) -> Map<String, Value> {
        self.defs.iter().map(|(name, schema)| (name.clone(), Value::clone(schema))).collect()
    }

    /// The standalone JSON Schema of one exported name: the type's own keywords at the top, plus
    /// `$defs` holding exactly the types it reaches (so a golden file shows the whole contract of
    /// one operation and nothing else).
    pub fn standalone(&self, name: &str) -> Option<Value> {
        let root = self.defs.get(name)?;
        let mut reached = BTreeSet::new();
        let mut pending = Vec::new();
        collect_refs(root, &mut pending);
        while let Some(next) = pending.pop() {
            if reached.insert(next.clone())
                && let Some(schema) = self.defs.get(&next)
            {
                collect_refs(schema, &mut pending);
            }
        }
        let mut out = Map::new();
        out.insert("$schema".into(), Value::String(DIALECT.into()));
        match &**root {
            Value::Object(keywords) => {
                for (key, value) in keywords {
                    out.insert(key.clone(), value.clone());
                }
            }
            // A boolean schema; keep it reachable through allOf so the document stays an object.
            other => {
                out.insert("allOf".into(), Value::Array(vec![other.clone()]));
            }
        }
        if !reached.is_empty() {
            let defs: Map<String, Value> = reached
                .into_iter()
                .filter_map(|target| self.defs.get(&target).map(|schema| (target, Value::clone(schema))))
                .collect();
            out.insert("$defs".into(), Value::Object(defs));
        }
        Some(Value::Object(out))
    }
}

/// Names of the types a schema refers to (`{"$ref": "#/$defs/Name"}`), in document order.
pub fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref")
                && let Some(name) = target.strip_prefix(REF_PREFIX)
            {
                out.push(name.to_owned());
            }
            for value in map.values() {
                collect_refs(value, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, out)),
        _ => {}
    }
}

/// The type name a `$ref` value points to, if it is a same-document `$defs` reference.
pub fn ref_target(schema: &Map<String, Value>) -> Option<&str> {
    schema.get("$ref").and_then(Value::as_str).and_then(|target| target.strip_prefix(REF_PREFIX))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document(defs: &Value, dictionary: &[&str]) -> VersionDocument {
        VersionDocument {
            api: "vnflcm".into(),
            version: "9.9.9".into(),
            etsi_document: "test".into(),
            dictionary: dictionary.iter().map(|s| s.to_string()).collect(),
            defs: defs_from(defs.as_object().cloned().unwrap()),
            breaking: false,
        }
    }

    #[test]
    fn standalone_keeps_only_reachable_types() {
        let doc = document(
            &json!({
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"c": {"$ref": "#/$defs/C"}}},
                "C": {"type": "string"},
                "Unrelated": {"type": "integer"}
            }),
            &["A"],
        );
        let schema = doc.standalone("A").unwrap();
        assert_eq!(schema["$schema"], DIALECT);
        assert_eq!(schema["properties"]["b"]["$ref"], "#/$defs/B");
        let defs = schema["$defs"].as_object().unwrap();
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["B", "C"]);
        assert!(doc.standalone("Missing").is_none());
    }

    #[test]
    fn check_refuses_dangling_refs_and_unknown_exports() {
        let dangling = document(&json!({"A": {"$ref": "#/$defs/Nope"}}), &["A"]);
        assert_eq!(dangling.check().unwrap_err(), "A refers to undefined type Nope");
        let unexported = document(&json!({"A": {}}), &["B"]);
        assert_eq!(unexported.check().unwrap_err(), "exported name B has no definition");
    }
}
