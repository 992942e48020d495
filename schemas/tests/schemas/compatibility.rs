//! Generated check over every pair of v2 minors: a body valid under a minor is valid under every
//! later minor. Bodies are the minor's examples, the stored resources rendered for it, and bodies
//! generated deterministically from each of its schemas (several variants per schema: which optional
//! members are present, which enum value and which one-of branch is taken).

use serde_json::{Map, Value, json};
use solgate_schemas::{Api, VersionEntry};

use crate::support::{effective_requests, registry, stored_resources};

const VARIANTS: usize = 6;
const MAX_DEPTH: usize = 24;

fn resolve<'s>(schema: &'s Value, defs: &'s Map<String, Value>) -> &'s Value {
    let mut schema = schema;
    while let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        schema = &defs[name];
    }
    schema
}

/// Member names of `{"required": [...]}` branches of a composition keyword.
fn branch_members(schema: &Value, keyword: &str) -> Vec<Vec<String>> {
    schema
        .get(keyword)
        .and_then(Value::as_array)
        .map(|branches| {
            branches
                .iter()
                .filter_map(|b| b.get("required").and_then(Value::as_array))
                .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .collect()
        })
        .unwrap_or_default()
}

fn generate(schema: &Value, defs: &Map<String, Value>, variant: usize, depth: usize) -> Value {
    let schema = resolve(schema, defs);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values[variant % values.len()].clone();
    }
    if depth > MAX_DEPTH {
        return json!({});
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => json!(if schema.get("format").and_then(Value::as_str) == Some("date-time") {
            "2026-11-22T01:34:39Z".to_owned()
        } else {
            format!("value-{variant}")
        }),
        Some("integer") | Some("number") => json!(variant),
        Some("boolean") => json!(variant.is_multiple_of(2)),
        Some("array") => match schema.get("items") {
            Some(items) => json!([generate(items, defs, variant, depth + 1)]),
            None => json!([]),
        },
        _ => generate_object(schema, defs, variant, depth),
    }
}

fn generate_object(schema: &Value, defs: &Map<String, Value>, variant: usize, depth: usize) -> Value {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    if properties.is_empty() {
        return match schema.get("additionalProperties") {
            Some(entry @ Value::Object(_)) => json!({"key-1": generate(entry, defs, variant, depth + 1)}),
            _ => json!({"freeForm": {"n": variant}}),
        };
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // oneOf of required-only branches: take one branch, leave out what the others require.
    let one_of = branch_members(schema, "oneOf");
    let (chosen, excluded): (Vec<String>, Vec<String>) = if one_of.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let pick = variant % one_of.len();
        let chosen = one_of[pick].clone();
        let excluded = one_of.iter().enumerate().filter(|(i, _)| *i != pick).flat_map(|(_, b)| b.clone()).collect();
        (chosen, excluded)
    };
    let any_of = branch_members(schema, "anyOf");
    let any_pick: Vec<String> = if any_of.is_empty() { Vec::new() } else { any_of[variant % any_of.len()].clone() };
    // `not` of required pairs: never both.
    let mut forbidden_pairs: Vec<Vec<String>> = Vec::new();
    if let Some(not) = schema.get("not") {
        forbidden_pairs.extend(branch_members(&json!({"x": [not]}), "x"));
        forbidden_pairs.extend(branch_members(not, "anyOf"));
    }
    let mut out = Map::new();
    for (index, (name, sub)) in properties.iter().enumerate() {
        let wanted = required.contains(&name.as_str())
            || chosen.contains(name)
            || any_pick.contains(name)
            || variant == 0
            || (variant + index).is_multiple_of(2);
        let blocked = excluded.contains(name) && !chosen.contains(name)
            || forbidden_pairs
                .iter()
                .any(|pair| pair.len() > 1 && pair[1..].contains(name) && out.contains_key(&pair[0]));
        if wanted && !blocked {
            out.insert(name.clone(), generate(sub, defs, variant + index, depth + 1));
        }
    }
    Value::Object(out)
}

fn v2_minors() -> Vec<&'static VersionEntry> {
    registry().all_versions().filter(|e| e.api == Api::Vnflcm && e.major() == 2).collect()
}

#[test]
fn a_body_valid_under_a_v2_minor_is_valid_under_every_later_minor() {
    let minors = v2_minors();
    assert!(minors.len() >= 6, "expected the v2 minors 2.0.0 to 2.12.0");
    let mut checked = 0;
    for (i, earlier) in minors.iter().enumerate() {
        let document = earlier.dictionary.document().unwrap();
        let mut bodies: Vec<(String, String, Value)> = Vec::new();
        for (name, list) in effective_requests(earlier) {
            bodies.extend(list.into_iter().map(|b| (name.clone(), "example".to_owned(), b)));
        }
        for (name, list) in stored_resources(earlier) {
            bodies.extend(
                list.iter()
                    .map(|r| (name.clone(), "rendered resource".to_owned(), earlier.dictionary.render(&name, r))),
            );
        }
        let defs = document.defs_object();
        for name in earlier.dictionary.names() {
            let mut valid = 0;
            for variant in 0..VARIANTS {
                let body = generate(&defs[name], &defs, variant, 0);
                if earlier.dictionary.validate(name, &body).is_ok() {
                    bodies.push((name.to_owned(), format!("generated variant {variant}"), body));
                    valid += 1;
                }
            }
            // The generator must produce something valid for every schema, or it tests nothing.
            assert!(valid > 0, "vnflcm {}: no generated {name} is valid under it", earlier.version);
        }
        for later in &minors[i + 1..] {
            for (name, what, body) in &bodies {
                if let Err(failures) = later.dictionary.validate(name, body) {
                    panic!(
                        "vnflcm {} rejects a {name} ({what}) valid under {}: {failures}\n{body}",
                        later.version, earlier.version
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} body/minor pairs checked");
}
