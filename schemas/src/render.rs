//! Rendering a stored resource for one minor version.
//!
//! Resources are stored in the newest minor's shape of their major (a superset of every older
//! minor). A client that asked for an older minor gets the representation of that minor, never an
//! attribute its version does not define (docs/versions.md). The
//! walk follows the schema: objects with `properties` keep only
//! those keys, maps (`additionalProperties` with a schema) keep every key and render each value,
//! free-form objects (KeyValuePairs: no `properties`, no value schema) are kept whole, arrays follow
//! `items`. Composition keywords (`allOf`, `anyOf`, `oneOf`) contribute their properties.

use serde_json::{Map, Value};

use crate::document::ref_target;

/// Deep enough for every ETSI type; a guard against a cyclic `$ref` chain.
const MAX_DEPTH: usize = 64;

pub(crate) fn render(schema: &Value, defs: &Map<String, Value>, value: &Value) -> Value {
    render_at(schema, defs, value, 0)
}

fn resolve<'s>(mut schema: &'s Value, defs: &'s Map<String, Value>) -> Option<&'s Value> {
    for _ in 0..MAX_DEPTH {
        let Some(target) = schema.as_object().and_then(ref_target) else { return Some(schema) };
        schema = defs.get(target)?;
    }
    None
}

struct Shape<'s> {
    properties: Vec<(&'s str, &'s Value)>,
    /// Schema for keys not in `properties`: `Some(None)` keeps them as they are (`true`),
    /// `Some(Some(s))` renders them with `s`.
    additional: Option<Option<&'s Value>>,
}

fn gather<'s>(schema: &'s Value, defs: &'s Map<String, Value>, shape: &mut Shape<'s>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(schema) = resolve(schema, defs).and_then(Value::as_object) else { return };
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (key, sub) in properties {
            if !shape.properties.iter().any(|(known, _)| *known == key) {
                shape.properties.push((key.as_str(), sub));
            }
        }
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(true)) if shape.additional.is_none() => shape.additional = Some(None),
        Some(sub @ Value::Object(_)) if shape.additional.is_none() => shape.additional = Some(Some(sub)),
        _ => {}
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            for branch in branches {
                gather(branch, defs, shape, depth + 1);
            }
        }
    }
}

fn render_at(schema: &Value, defs: &Map<String, Value>, value: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return value.clone();
    }
    let Some(resolved) = resolve(schema, defs) else { return value.clone() };
    match value {
        Value::Object(fields) => {
            let mut shape = Shape { properties: Vec::new(), additional: None };
            gather(resolved, defs, &mut shape, depth);
            if shape.properties.is_empty() {
                return match shape.additional {
                    // A map (e.g. vimConnectionInfo keyed by id): keep every entry, render each.
                    Some(Some(entry)) => Value::Object(
                        fields.iter().map(|(k, v)| (k.clone(), render_at(entry, defs, v, depth + 1))).collect(),
                    ),
                    // Free-form (KeyValuePairs, `{}`): the content is the client's, keep it whole.
                    _ => value.clone(),
                };
            }
            let mut out = Map::new();
            for (key, field) in fields {
                if let Some((_, sub)) = shape.properties.iter().find(|(known, _)| *known == key) {
                    out.insert(key.clone(), render_at(sub, defs, field, depth + 1));
                } else {
                    match shape.additional {
                        Some(Some(entry)) => {
                            out.insert(key.clone(), render_at(entry, defs, field, depth + 1));
                        }
                        Some(None) => {
                            out.insert(key.clone(), field.clone());
                        }
                        // Not defined by this version: left out.
                        None => {}
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => match resolved.get("items") {
            Some(item_schema) => {
                Value::Array(items.iter().map(|item| render_at(item_schema, defs, item, depth + 1)).collect())
            }
            None => value.clone(),
        },
        _ => value.clone(),
    }
}

/// Collects, as JSON pointers under `path`, the members present in `wider` and absent from
/// `narrower` (two renderings of one value, so arrays line up index by index).
pub(crate) fn missing_members(wider: &Value, narrower: &Value, path: &mut String, out: &mut Vec<String>) {
    match (wider, narrower) {
        (Value::Object(wide), Value::Object(narrow)) => {
            for (key, value) in wide {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match narrow.get(key) {
                    Some(other) => missing_members(value, other, path, out),
                    None => out.push(path.clone()),
                }
                path.truncate(len);
            }
        }
        (Value::Array(wide), Value::Array(narrow)) => {
            for (index, (value, other)) in wide.iter().zip(narrow).enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&index.to_string());
                missing_members(value, other, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn defs() -> Map<String, Value> {
        json!({
            "Inst": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "vims": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Vim"}},
                    "metadata": {"type": "object"},
                    "extensions": {},
                    "ports": {"type": "array", "items": {"$ref": "#/$defs/Port"}},
                    "either": {"oneOf": [
                        {"type": "object", "properties": {"a": {"type": "string"}}},
                        {"type": "object", "properties": {"b": {"type": "string"}}}
                    ]}
                }
            },
            "Vim": {"type": "object", "properties": {"vimType": {"type": "string"}}},
            "Port": {"type": "object", "properties": {"id": {"type": "string"}}}
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    #[test]
    fn drops_undefined_fields_at_every_depth_and_keeps_free_form_maps_whole() {
        let defs = defs();
        let stored = json!({
            "id": "i1",
            "newerField": true,
            "vims": {"vim1": {"vimType": "X", "newerVimField": 1}},
            "metadata": {"anything": {"nested": [1, 2]}},
            "extensions": {"free": "form"},
            "ports": [{"id": "p1", "newerPortField": "x"}],
            "either": {"a": "1", "b": "2", "c": "3"}
        });
        let rendered = render(&json!({"$ref": "#/$defs/Inst"}), &defs, &stored);
        assert_eq!(
            rendered,
            json!({
                "id": "i1",
                "vims": {"vim1": {"vimType": "X"}},
                "metadata": {"anything": {"nested": [1, 2]}},
                "extensions": {"free": "form"},
                "ports": [{"id": "p1"}],
                "either": {"a": "1", "b": "2"}
            })
        );
    }

    #[test]
    fn members_a_narrower_rendering_lacks_are_named_by_pointer() {
        let wider = json!({"a": 1, "list": [{"x": 1, "y": 2}], "m": {"k/~": {"z": 1}}});
        let narrower = json!({"list": [{"x": 1}], "m": {}});
        let mut out = Vec::new();
        missing_members(&wider, &narrower, &mut String::new(), &mut out);
        assert_eq!(out, vec!["/a", "/list/0/y", "/m/k~1~0"]);
    }

    #[test]
    fn a_cyclic_ref_does_not_loop_forever() {
        let defs = json!({"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}).as_object().cloned().unwrap();
        let stored = json!({"x": 1});
        assert_eq!(render(&json!({"$ref": "#/$defs/A"}), &defs, &stored), stored);
    }
}
