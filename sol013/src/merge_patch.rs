//! JSON Merge Patch (RFC 7396), the body of SOL013 PATCH requests
//! (`application/merge-patch+json`) and of every merge solgate does into stored
//! documents. Keys keep their order: a replaced key stays where it was, a new key goes
//! last, a removed key leaves the others in place.

use serde_json::{Map, Value};

/// Applies `patch` to `target`: objects merge key by key, `null` removes a key, anything
/// else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(patch_map) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Value::Object(target_map) = target {
                for (key, value) in patch_map {
                    if value.is_null() {
                        target_map.shift_remove(key);
                    } else {
                        merge_patch(target_map.entry(key.clone()).or_insert(Value::Null), value);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_follows_rfc7396() {
        let mut target = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut target, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(target, json!({"a": "z", "c": {"d": "e"}}));
        let mut target = json!({"a": [1]});
        merge_patch(&mut target, &json!({"a": [2, 3], "n": null}));
        assert_eq!(target, json!({"a": [2, 3]}));
        let mut target = json!({"a": 1});
        merge_patch(&mut target, &json!([1]));
        assert_eq!(target, json!([1]));
    }

    #[test]
    fn keys_keep_their_order() {
        let mut target = json!({"a": 1, "b": 2, "c": 3, "d": 4});
        merge_patch(&mut target, &json!({"b": null, "a": 9, "e": 5}));
        let keys: Vec<&String> = target.as_object().into_iter().flat_map(|map| map.keys()).collect();
        assert_eq!(keys, ["a", "c", "d", "e"]);
        assert_eq!(target, json!({"a": 9, "c": 3, "d": 4, "e": 5}));
    }
}
