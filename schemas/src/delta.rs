//! Copy and extend: a later minor is the previous minor's document plus a small, explicit delta.
//!
//! A delta file (`data/<api>/<version>.delta.json`) names its base version and the ETSI document
//! it implements, and lists operations, each with the ETSI clause it comes from. Only
//! backward-compatible operations are allowed unless the delta declares `"breaking": true`
//! (then the safety test that replays the predecessor's examples is skipped for that minor).
//!
//! ```json
//! {"api": "vnflcm", "version": "2.1.0", "base": "2.0.0", "etsiDocument": "ETSI GS NFV-SOL 003 V3.5.1",
//!  "breaking": false,
//!  "ops": [{"op": "add_enum_value", "target": "/$defs/T/properties/p", "value": "X", "source": "..."}]}
//! ```

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::document::VersionDocument;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delta {
    pub api: String,
    pub version: String,
    /// The version this delta is applied to (the previous minor of the same major).
    pub base: String,
    #[serde(rename = "etsiDocument")]
    pub etsi_document: String,
    /// Declares that the new minor may reject what the base accepted.
    #[serde(default)]
    pub breaking: bool,
    pub ops: Vec<DeltaOp>,
}

/// One change. `target` is a JSON pointer into the version document (e.g.
/// `/$defs/LccnSubscriptionRequest/properties/verbosity`); `source` cites the ETSI clause.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum DeltaOp {
    /// Adds an optional attribute to an object type.
    AddProperty { target: String, name: String, schema: Value, source: String },
    /// Adds a permitted value to an enumeration.
    AddEnumValue { target: String, value: Value, source: String },
    /// Makes a mandatory attribute optional.
    RelaxRequired { target: String, name: String, source: String },
    /// Removes a limiting keyword (maxLength, minimum, pattern, ...).
    RelaxKeyword { target: String, keyword: String, source: String },
    /// Adds a branch to an existing `anyOf` or `oneOf` list. For `anyOf` this only relaxes. For
    /// `oneOf` the branch must be `{"required": [...]}` naming attributes the target defines
    /// (typically added by the same delta): a body of the base version that did not carry them
    /// stays valid, the same compatibility `add_property` gives.
    AddAlternative { target: String, keyword: String, schema: Value, source: String },
    /// Adds a new named type; `export` also adds it to the dictionary (a new request or resource).
    AddType {
        name: String,
        schema: Value,
        #[serde(default)]
        export: bool,
        source: String,
    },
    /// Removes an attribute. Breaking: only in a delta that declares `"breaking": true`.
    RemoveProperty { target: String, name: String, source: String },
    /// Replaces a schema wholesale. Breaking: only in a delta that declares `"breaking": true`.
    Replace { target: String, schema: Value, source: String },
}

/// Keywords whose removal can only let more instances through.
const RELAXABLE: &[&str] = &[
    "maxLength",
    "minLength",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "pattern",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "format",
];

impl DeltaOp {
    pub fn source(&self) -> &str {
        match self {
            DeltaOp::AddProperty { source, .. }
            | DeltaOp::AddEnumValue { source, .. }
            | DeltaOp::RelaxRequired { source, .. }
            | DeltaOp::RelaxKeyword { source, .. }
            | DeltaOp::AddAlternative { source, .. }
            | DeltaOp::AddType { source, .. }
            | DeltaOp::RemoveProperty { source, .. }
            | DeltaOp::Replace { source, .. } => source,
        }
    }

    pub fn is_breaking(&self) -> bool {
        matches!(self, DeltaOp::RemoveProperty { .. } | DeltaOp::Replace { .. })
    }
}

impl Delta {
    pub fn parse(text: &str) -> Result<Delta, String> {
        serde_json::from_str(text).map_err(|e| format!("not a delta: {e}"))
    }

    /// Applies the delta to a copy of `base`. Every operation must change something: adding what
    /// exists or relaxing what is absent is an error, so a stale delta cannot pass silently.
    pub fn apply(&self, base: &VersionDocument) -> Result<VersionDocument, String> {
        if base.api != self.api || base.version != self.base {
            return Err(format!(
                "delta for {} {} is based on {}, not on {} {}",
                self.api, self.version, self.base, base.api, base.version
            ));
        }
        let mut doc = base.clone();
        doc.version = self.version.clone();
        doc.etsi_document = self.etsi_document.clone();
        doc.breaking = self.breaking;
        for (index, op) in self.ops.iter().enumerate() {
            let fail = |reason: String| format!("op {index} ({}): {reason}", op_name(op));
            if op.source().trim().is_empty() {
                return Err(fail("every operation must cite its ETSI source".into()));
            }
            if op.is_breaking() && !self.breaking {
                return Err(fail("breaking operation in a delta that does not declare \"breaking\": true".into()));
            }
            apply_op(&mut doc, op).map_err(fail)?;
        }
        doc.check()?;
        Ok(doc)
    }
}

fn op_name(op: &DeltaOp) -> &'static str {
    match op {
        DeltaOp::AddProperty { .. } => "add_property",
        DeltaOp::AddEnumValue { .. } => "add_enum_value",
        DeltaOp::RelaxRequired { .. } => "relax_required",
        DeltaOp::RelaxKeyword { .. } => "relax_keyword",
        DeltaOp::AddAlternative { .. } => "add_alternative",
        DeltaOp::AddType { .. } => "add_type",
        DeltaOp::RemoveProperty { .. } => "remove_property",
        DeltaOp::Replace { .. } => "replace",
    }
}

fn apply_op(doc: &mut VersionDocument, op: &DeltaOp) -> Result<(), String> {
    match op {
        DeltaOp::AddProperty { target, name, schema, .. } => {
            add_property(object_at(doc, target)?, target, name, schema)
        }
        DeltaOp::AddEnumValue { target, value, .. } => add_enum_value(object_at(doc, target)?, target, value),
        DeltaOp::RelaxRequired { target, name, .. } => relax_required(object_at(doc, target)?, target, name),
        DeltaOp::RelaxKeyword { target, keyword, .. } => {
            if !RELAXABLE.contains(&keyword.as_str()) {
                return Err(format!("{keyword} is not a keyword whose removal only relaxes"));
            }
            match object_at(doc, target)?.remove(keyword) {
                Some(_) => Ok(()),
                None => Err(format!("{target} has no {keyword}")),
            }
        }
        DeltaOp::AddAlternative { target, keyword, schema, .. } => {
            if keyword != "anyOf" && keyword != "oneOf" {
                return Err(format!("{keyword} is not anyOf or oneOf"));
            }
            add_alternative(object_at(doc, target)?, target, keyword, schema)
        }
        DeltaOp::AddType { name, schema, export, .. } => {
            if doc.defs.contains_key(name) {
                return Err(format!("type {name} already exists"));
            }
            doc.defs.insert(name.clone(), Arc::new(schema.clone()));
            if *export {
                doc.dictionary.push(name.clone());
            }
            Ok(())
        }
        DeltaOp::RemoveProperty { target, name, .. } => remove_property(object_at(doc, target)?, target, name),
        DeltaOp::Replace { target, schema, .. } => {
            *value_at(doc, target)? = schema.clone();
            Ok(())
        }
    }
}

/// The JSON Schema object `target` names, as the ops below edit it.
type SchemaObject = Map<String, Value>;

fn add_property(object: &mut SchemaObject, target: &str, name: &str, schema: &Value) -> Result<(), String> {
    let properties = object
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("{target} has no properties"))?;
    if properties.contains_key(name) {
        return Err(format!("{target} already defines {name}"));
    }
    properties.insert(name.to_owned(), schema.clone());
    Ok(())
}

fn add_enum_value(object: &mut SchemaObject, target: &str, value: &Value) -> Result<(), String> {
    let values = object
        .get_mut("enum")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| format!("{target} is not an enumeration"))?;
    if values.contains(value) {
        return Err(format!("{target} already permits {value}"));
    }
    values.push(value.clone());
    Ok(())
}

fn relax_required(object: &mut SchemaObject, target: &str, name: &str) -> Result<(), String> {
    let required = object
        .get_mut("required")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| format!("{target} has no required list"))?;
    let before = required.len();
    required.retain(|entry| entry.as_str() != Some(name));
    if required.len() == before {
        return Err(format!("{name} is not required in {target}"));
    }
    if required.is_empty() {
        object.remove("required");
    }
    Ok(())
}

/// A `oneOf` branch may only require members the object defines (`{"required": [...]}`).
fn check_one_of_branch(object: &SchemaObject, target: &str, schema: &Value) -> Result<(), String> {
    let names = schema
        .as_object()
        .filter(|branch| branch.len() == 1)
        .and_then(|branch| branch.get("required"))
        .and_then(Value::as_array)
        .ok_or_else(|| "a oneOf branch must be {\"required\": [...]}".to_owned())?;
    let defined = object.get("properties").and_then(Value::as_object);
    for name in names {
        let known = name.as_str().is_some_and(|n| defined.is_some_and(|p| p.contains_key(n)));
        if !known {
            return Err(format!("{target} does not define {name}, which the branch requires"));
        }
    }
    Ok(())
}

fn add_alternative(object: &mut SchemaObject, target: &str, keyword: &str, schema: &Value) -> Result<(), String> {
    if keyword == "oneOf" {
        check_one_of_branch(object, target, schema)?;
    }
    let branches =
        object.get_mut(keyword).and_then(Value::as_array_mut).ok_or_else(|| format!("{target} has no {keyword}"))?;
    if branches.contains(schema) {
        return Err(format!("{target} already has this {keyword} branch"));
    }
    branches.push(schema.clone());
    Ok(())
}

fn remove_property(object: &mut SchemaObject, target: &str, name: &str) -> Result<(), String> {
    let removed = object.get_mut("properties").and_then(Value::as_object_mut).and_then(|p| p.remove(name));
    if removed.is_none() {
        return Err(format!("{target} does not define {name}"));
    }
    if let Some(required) = object.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|entry| entry.as_str() != Some(name));
    }
    Ok(())
}

fn value_at<'d>(doc: &'d mut VersionDocument, pointer: &str) -> Result<&'d mut Value, String> {
    // Pointers address the document as {"$defs": {...}}.
    let rest = pointer.strip_prefix("/$defs/").ok_or_else(|| format!("{pointer} does not start with /$defs/"))?;
    let (name, inner) = match rest.split_once('/') {
        Some((name, inner)) => (name, format!("/{inner}")),
        None => (rest, String::new()),
    };
    // Copied on write: the type may still be shared with the previous minor.
    let root = Arc::make_mut(doc.defs.get_mut(&unescape(name)).ok_or_else(|| format!("no type {name}"))?);
    if inner.is_empty() {
        Ok(root)
    } else {
        root.pointer_mut(&inner).ok_or_else(|| format!("{pointer} does not exist"))
    }
}

fn object_at<'d>(doc: &'d mut VersionDocument, pointer: &str) -> Result<&'d mut Map<String, Value>, String> {
    value_at(doc, pointer)?.as_object_mut().ok_or_else(|| format!("{pointer} is not a schema object"))
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn base() -> VersionDocument {
        VersionDocument {
            api: "vnflcm".into(),
            version: "2.0.0".into(),
            etsi_document: "ETSI GS NFV-SOL 003 V3.3.1".into(),
            dictionary: vec!["Req".into()],
            defs: json!({
                "Req": {
                    "type": "object",
                    "required": ["mode", "name"],
                    "properties": {
                        "mode": {"type": "string", "enum": ["A", "B"]},
                        "name": {"type": "string", "maxLength": 8}
                    }
                }
            })
            .as_object()
            .cloned()
            .map(crate::document::defs_from)
            .unwrap(),
            breaking: false,
        }
    }

    fn delta(ops: &Value, breaking: bool) -> Delta {
        serde_json::from_value(json!({
            "api": "vnflcm", "version": "2.1.0", "base": "2.0.0",
            "etsiDocument": "ETSI GS NFV-SOL 003 V3.5.1", "breaking": breaking, "ops": ops
        }))
        .unwrap()
    }

    #[test]
    fn compatible_ops_extend_a_copy_of_the_base() {
        let base = base();
        let next = delta(
            &json!([
                {"op": "add_enum_value", "target": "/$defs/Req/properties/mode", "value": "C", "source": "x"},
                {"op": "add_property", "target": "/$defs/Req", "name": "extra", "schema": {"type": "integer"}, "source": "x"},
                {"op": "relax_required", "target": "/$defs/Req", "name": "name", "source": "x"},
                {"op": "relax_keyword", "target": "/$defs/Req/properties/name", "keyword": "maxLength", "source": "x"},
                {"op": "add_type", "name": "NewReq", "schema": {"type": "object"}, "export": true, "source": "x"}
            ]),
            false,
        )
        .apply(&base)
        .unwrap();
        assert_eq!(next.version, "2.1.0");
        assert_eq!(next.etsi_document, "ETSI GS NFV-SOL 003 V3.5.1");
        assert_eq!(next.defs["Req"]["properties"]["mode"]["enum"], json!(["A", "B", "C"]));
        assert_eq!(next.defs["Req"]["required"], json!(["mode"]));
        assert_eq!(next.defs["Req"]["properties"]["name"], json!({"type": "string"}));
        assert_eq!(next.dictionary, ["Req", "NewReq"]);
        // The base is untouched: published versions cannot change through a later delta.
        assert_eq!(base.defs["Req"]["properties"]["mode"]["enum"], json!(["A", "B"]));
    }

    #[test]
    fn a_later_minor_shares_the_types_its_delta_leaves_alone() {
        let mut base = base();
        base.defs.insert("Other".into(), Arc::new(json!({"type": "string"})));
        let add = json!([{"op": "add_property", "target": "/$defs/Req", "name": "x", "schema": {}, "source": "x"}]);
        let next = delta(&add, false).apply(&base).unwrap();
        // One copy of an unchanged type serves both minors; the changed one is the later minor's own.
        assert!(Arc::ptr_eq(&base.defs["Other"], &next.defs["Other"]));
        assert!(!Arc::ptr_eq(&base.defs["Req"], &next.defs["Req"]));
        assert!(base.defs["Req"]["properties"].get("x").is_none());
        assert_eq!(next.defs["Req"]["properties"]["x"], json!({}));
    }

    #[test]
    fn alternatives_extend_an_existing_any_of_or_one_of() {
        let mut base = base();
        Arc::make_mut(&mut base.defs["Req"])["oneOf"] = json!([{"required": ["mode"]}]);
        Arc::make_mut(&mut base.defs["Req"])["properties"]["alt"] = json!({"type": "string"});
        let op = |keyword: &str, branch: Value| json!([{"op": "add_alternative", "target": "/$defs/Req", "keyword": keyword, "schema": branch, "source": "x"}]);
        let next = delta(&op("oneOf", json!({"required": ["alt"]})), false).apply(&base).unwrap();
        assert_eq!(next.defs["Req"]["oneOf"], json!([{"required": ["mode"]}, {"required": ["alt"]}]));
        // A oneOf branch may only require attributes the type defines, and only once.
        let err = delta(&op("oneOf", json!({"required": ["nope"]})), false).apply(&base).unwrap_err();
        assert!(err.contains("does not define \"nope\""), "{err}");
        let err = delta(&op("oneOf", json!({"required": ["mode"]})), false).apply(&base).unwrap_err();
        assert!(err.contains("already has this oneOf branch"), "{err}");
        let err = delta(&op("oneOf", json!({"not": {}})), false).apply(&base).unwrap_err();
        assert!(err.contains("must be {\"required\""), "{err}");
        // anyOf must exist already; allOf is not a relaxation.
        let err = delta(&op("anyOf", json!({"required": ["alt"]})), false).apply(&base).unwrap_err();
        assert!(err.contains("has no anyOf"), "{err}");
        let err = delta(&op("allOf", json!({})), false).apply(&base).unwrap_err();
        assert!(err.contains("is not anyOf or oneOf"), "{err}");
    }

    #[test]
    fn ops_that_change_nothing_are_refused() {
        let err = delta(
            &json!([{"op": "add_enum_value", "target": "/$defs/Req/properties/mode", "value": "A", "source": "x"}]),
            false,
        )
        .apply(&base())
        .unwrap_err();
        assert_eq!(err, "op 0 (add_enum_value): /$defs/Req/properties/mode already permits \"A\"");
        let err =
            delta(&json!([{"op": "relax_required", "target": "/$defs/Req", "name": "nope", "source": "x"}]), false)
                .apply(&base())
                .unwrap_err();
        assert!(err.contains("nope is not required"), "{err}");
    }

    #[test]
    fn breaking_ops_need_a_declared_breaking_delta_and_sources_are_mandatory() {
        let ops = json!([{"op": "remove_property", "target": "/$defs/Req", "name": "name", "source": "x"}]);
        let err = delta(&ops, false).apply(&base()).unwrap_err();
        assert!(err.contains("breaking operation"), "{err}");
        let next = delta(&ops, true).apply(&base()).unwrap();
        assert_eq!(next.defs["Req"]["required"], json!(["mode"]));
        assert!(next.breaking);

        let err = delta(
            &json!([{"op": "add_enum_value", "target": "/$defs/Req/properties/mode", "value": "C", "source": " "}]),
            false,
        )
        .apply(&base())
        .unwrap_err();
        assert!(err.contains("must cite its ETSI source"), "{err}");
    }

    #[test]
    fn a_delta_applies_only_to_its_base() {
        let mut other = base();
        other.version = "2.0.1".into();
        let err = delta(&json!([]), false).apply(&other).unwrap_err();
        assert!(err.contains("is based on 2.0.0"), "{err}");
    }
}
