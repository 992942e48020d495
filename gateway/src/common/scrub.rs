//! Credentials never leave the server.

use serde_json::Value;

/// Keys whose values never leave the server (Tacker scrubs these in vimConnectionInfo,
/// operation parameters and changedInfo; SOL003 subscriptions' authentication likewise).
const SECRET_KEYS: &[&str] =
    &["password", "bearer_token", "bearerToken", "client_secret", "clientSecret", "clientPassword"];

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
