//! Credentials never leave the server.

use serde_json::Value;

use solgate_core::secrets::SECRET_KEYS;

/// Removes every secret key, at any depth.
pub fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !SECRET_KEYS.contains(&key.as_str()));
            map.values_mut().for_each(scrub);
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        _ => {}
    }
}
