//! A schema dictionary: for one API version, operation or resource name -> JSON Schema, built and
//! compiled on first use and shared by every request after that.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::document::VersionDocument;
use crate::render;

/// One failed rule: where (JSON pointer into the body) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationFailure {
    pub pointer: String,
    pub message: String,
}

/// All failures of one body, capped so a huge bad body gives a readable detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationFailures {
    pub failures: Vec<ValidationFailure>,
    /// Failures beyond the cap that were not listed.
    pub omitted: usize,
}

impl fmt::Display for ValidationFailures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, failure) in self.failures.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            let pointer = if failure.pointer.is_empty() { "/" } else { failure.pointer.as_str() };
            write!(f, "{}: {}", pointer, failure.message)?;
        }
        if self.omitted > 0 {
            write!(f, "; and {} more", self.omitted)?;
        }
        Ok(())
    }
}

/// Maximum number of failures listed in one error detail.
pub const MAX_LISTED_FAILURES: usize = 10;

/// One entry: the standalone schema (what the golden file holds) and its validator, each made
/// the first time it is needed. Most names of most minors are never used by a running server,
/// and building every one at start-up was most of its idle memory (docs/benchmarks.md).
#[derive(Default)]
struct Entry {
    schema: OnceLock<Value>,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

#[derive(Clone, Default)]
pub struct Dictionary {
    api: String,
    version: String,
    document: Option<Arc<VersionDocument>>,
    entries: BTreeMap<String, Arc<Entry>>,
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("api", &self.api)
            .field("version", &self.version)
            .field("schemas", &self.entries.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Dictionary {
    /// The dictionary of every exported name of a version document. Each name's schema is
    /// built and compiled when first used ([`Dictionary::compile_all`] does all of them, for
    /// tests); a name the document does not define is refused here.
    pub fn compile(document: VersionDocument) -> Result<Dictionary, (String, String)> {
        let mut entries = BTreeMap::new();
        for name in &document.dictionary {
            if !document.defs.contains_key(name) {
                return Err((name.clone(), "not defined".to_owned()));
            }
            entries.insert(name.clone(), Arc::new(Entry::default()));
        }
        Ok(Dictionary {
            api: document.api.clone(),
            version: document.version.clone(),
            document: Some(Arc::new(document)),
            entries,
        })
    }

    /// Builds and compiles every name now: what start-up did before names were compiled on
    /// first use. The first failure, as (name, reason).
    pub fn compile_all(&self) -> Result<(), (String, String)> {
        for (name, entry) in &self.entries {
            self.validator(name, entry).map_err(|reason| (name.clone(), reason))?;
        }
        Ok(())
    }

    fn standalone<'a>(&self, name: &str, entry: &'a Entry) -> &'a Value {
        entry.schema.get_or_init(|| {
            // `compile` checked that the document defines every name it exports.
            self.document.as_ref().and_then(|document| document.standalone(name)).unwrap_or(Value::Null)
        })
    }

    /// Formats are annotations only: ETSI's formats ("MAC", "IP", "URI") are not JSON Schema
    /// formats, and rejecting on the standard ones would be stricter than ETSI's own OpenAPI
    /// tooling.
    fn validator<'a>(&self, name: &str, entry: &'a Entry) -> Result<&'a jsonschema::Validator, String> {
        entry
            .validator
            .get_or_init(|| {
                jsonschema::options()
                    .should_validate_formats(false)
                    .build(self.standalone(name, entry))
                    .map_err(|error| error.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Exported names (requests and resource representations), sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    pub fn has(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The standalone JSON Schema of a name (2020-12, `$ref`s only into its own `$defs`).
    pub fn schema(&self, name: &str) -> Option<&Value> {
        self.entries.get(name).map(|entry| self.standalone(name, entry))
    }

    /// The version document the dictionary was compiled from (all named types), for deriving the
    /// next minor and for tests.
    pub fn document(&self) -> Option<&VersionDocument> {
        self.document.as_deref()
    }

    /// Validates `body` against the named schema. A name this dictionary does not hold is an
    /// error too (one failure at `/` saying so): a typo in a handler must fail closed, not skip
    /// validation. Use [`Dictionary::has`] to check names at start-up.
    pub fn validate(&self, name: &str, body: &Value) -> Result<(), ValidationFailures> {
        let Some(entry) = self.entries.get(name) else {
            return Err(ValidationFailures {
                failures: vec![ValidationFailure {
                    pointer: String::new(),
                    message: format!("{} {} defines no schema {name}", self.api, self.version),
                }],
                omitted: 0,
            });
        };
        // Fails closed: a schema that does not compile accepts nothing (every built-in one is
        // compiled by the tests, `compile_all`).
        let validator = self.validator(name, entry).map_err(|reason| ValidationFailures {
            failures: vec![ValidationFailure {
                pointer: String::new(),
                message: format!("{} {} schema {name} does not compile: {reason}", self.api, self.version),
            }],
            omitted: 0,
        })?;
        // Valid bodies are the common case; is_valid stops at the first failure.
        if validator.is_valid(body) {
            return Ok(());
        }
        let mut failures = Vec::new();
        let mut omitted = 0;
        for error in validator.iter_errors(body) {
            if failures.len() < MAX_LISTED_FAILURES {
                failures
                    .push(ValidationFailure { pointer: error.instance_path().to_string(), message: error.to_string() });
            } else {
                omitted += 1;
            }
        }
        if failures.is_empty() { Ok(()) } else { Err(ValidationFailures { failures, omitted }) }
    }

    /// Renders a stored resource (kept in the newest minor's shape of its major) for this version:
    /// every attribute this version does not define is left out, recursively; free-form maps
    /// (KeyValuePairs) are kept whole. A resource name this dictionary does not hold is returned
    /// unchanged (see [`Dictionary::try_render`] to tell the cases apart).
    pub fn render(&self, resource: &str, stored: &Value) -> Value {
        self.try_render(resource, stored).unwrap_or_else(|| stored.clone())
    }

    /// The members of `body` that `newer` (a later minor of the same major) defines for `name`
    /// and this version does not, as JSON pointers: what a client sent from a minor it did not
    /// negotiate. Free-form content (KeyValuePairs) and members no version defines are not
    /// reported. Empty when either dictionary lacks `name`.
    pub fn members_only_in(&self, newer: &Dictionary, name: &str, body: &Value) -> Vec<String> {
        let (Some(here), Some(there)) = (self.try_render(name, body), newer.try_render(name, body)) else {
            return Vec::new();
        };
        let mut pointers = Vec::new();
        render::missing_members(&there, &here, &mut String::new(), &mut pointers);
        pointers
    }

    /// Like [`Dictionary::render`], `None` when the dictionary holds no schema for `resource`.
    pub fn try_render(&self, resource: &str, stored: &Value) -> Option<Value> {
        let entry = self.entries.get(resource)?;
        let schema = self.standalone(resource, entry);
        let empty = serde_json::Map::new();
        let defs = schema.get("$defs").and_then(Value::as_object).unwrap_or(&empty);
        Some(render::render(schema, defs, stored))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dictionary() -> Dictionary {
        let document = VersionDocument {
            api: "vnflcm".into(),
            version: "2.0.0".into(),
            etsi_document: "test".into(),
            dictionary: vec!["CreateVnfRequest".into()],
            defs: json!({
                "CreateVnfRequest": {
                    "type": "object",
                    "required": ["vnfdId"],
                    "properties": {
                        "vnfdId": {"type": "string"},
                        "metadata": {"type": "object"},
                        "items": {"type": "array", "items": {"type": "integer"}}
                    }
                }
            })
            .as_object()
            .cloned()
            .map(crate::document::defs_from)
            .unwrap(),
            breaking: false,
        };
        Dictionary::compile(document).unwrap()
    }

    #[test]
    fn failures_name_the_pointer_and_the_rule() {
        let err = dictionary().validate("CreateVnfRequest", &json!({"vnfdId": 123})).unwrap_err();
        assert_eq!(err.to_string(), "/vnfdId: 123 is not of type \"string\"");
        let err = dictionary().validate("CreateVnfRequest", &json!([1, 2])).unwrap_err();
        assert_eq!(err.to_string(), "/: [1,2] is not of type \"object\"");
        let err = dictionary().validate("CreateVnfRequest", &json!({})).unwrap_err();
        assert_eq!(err.to_string(), "/: \"vnfdId\" is a required property");
    }

    #[test]
    fn failures_are_listed_up_to_the_cap() {
        let bad: Vec<Value> = (0..25).map(|i| json!(format!("s{i}"))).collect();
        let err = dictionary().validate("CreateVnfRequest", &json!({"vnfdId": "x", "items": bad})).unwrap_err();
        assert_eq!(err.failures.len(), MAX_LISTED_FAILURES);
        assert_eq!(err.omitted, 25 - MAX_LISTED_FAILURES);
        assert_eq!(err.failures[0].pointer, "/items/0");
        assert!(err.to_string().ends_with("; and 15 more"), "{err}");
    }

    #[test]
    fn unknown_names_fail_closed() {
        let dict = dictionary();
        assert!(!dict.has("InstantiateVnfRequest"));
        let err = dict.validate("InstantiateVnfRequest", &json!({})).unwrap_err();
        assert_eq!(err.to_string(), "/: vnflcm 2.0.0 defines no schema InstantiateVnfRequest");
        assert_eq!(dict.try_render("VnfInstance", &json!({"a": 1})), None);
        assert_eq!(dict.render("VnfInstance", &json!({"a": 1})), json!({"a": 1}));
    }

    #[test]
    fn unknown_extra_properties_are_accepted() {
        assert_eq!(dictionary().validate("CreateVnfRequest", &json!({"vnfdId": "x", "vendorExt": {"a": 1}})), Ok(()));
    }
}
