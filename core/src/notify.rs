//! Notifications: which subscriptions an event matches, the notification each gets, and
//! the outbox rows that carry them — written in the transaction of the state change, so
//! a notification is never lost and never sent for a change that did not commit. The
//! delivery worker (the conductor's `notifier`) sends them.
//!
//! One module per API ([`lcm`], [`fm`], [`pkgm`]; PM jobs and thresholds in
//! [`crate::pm`]), each over the shared [`outbox`] and [`filter`] pieces; [`target`] finds
//! where a queued row goes. This file holds what subscriptions of every API share: the
//! version they were created with and the key that makes two of them duplicates.

use serde_json::Value;
use sha2::Digest;

use crate::PRIVATE_KEY;

mod filter;
pub mod fm;
pub mod lcm;
pub mod outbox;
pub mod pkgm;
pub mod target;

pub use lcm::{CREATION_NOTIFICATION, DELETION_NOTIFICATION, Event, OP_OCC_NOTIFICATION, enqueue, enqueue_seen};
pub use outbox::{wake, wake_signal};
pub use target::{CallbackTarget, Target, callback_target};

/// The private key of a subscription document holding the API version it was created
/// with; its notifications are rendered for, and carry `Version` of, that version.
pub const VERSION_KEY: &str = "version";

/// The version a subscription was created with (absent for rows written before it was
/// recorded: the delivery worker then uses the newest served minor of the major).
pub fn subscription_version(body: &Value) -> Option<&str> {
    body.get(PRIVATE_KEY)?.get(VERSION_KEY)?.as_str()
}

/// A filter in canonical form: keys sorted, array values sorted and de-duplicated (the
/// values of a filter attribute are alternatives, so their order means nothing), and
/// empty arrays, empty objects and nulls dropped (SOL003: an absent attribute matches
/// everything, and [`matches`] treats an empty list the same way).
pub fn canonical_filter(filter: &Value) -> Value {
    match filter {
        Value::Object(map) => {
            let mut entries: Vec<(&String, Value)> = map
                .iter()
                .map(|(key, value)| (key, canonical_filter(value)))
                .filter(|(_, value)| !is_empty(value))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(key, value)| (key.clone(), value)).collect())
        }
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(canonical_filter).filter(|item| !is_empty(item)).collect();
            items.sort_by_cached_key(Value::to_string);
            items.dedup();
            Value::Array(items)
        }
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// The key that makes two subscription requests duplicates (SOL003 clause 5.4.18.3.1:
/// "the same callback URI and the same filter"; the VNFM then answers 303 See Other).
/// The verbosity is part of it, since two subscriptions that differ in it receive
/// different notifications; credentials are not. The callback URI is compared in its
/// normalised form (scheme and host lower-case, default port dropped). A SHA-256 hex
/// digest, so that the unique index stays small whatever the filter's size.
pub fn dedup_key(callback_uri: &str, filter: &Value, verbosity: &str) -> String {
    dedup_key_of(callback_uri, filter, &[verbosity])
}

/// The dedup key of a subscription made by `project` (empty: an administrator's, or
/// without authentication): projects do not share subscriptions, so the same request
/// from another project is a new one.
pub fn scoped_dedup_key(project: &str, key: String) -> String {
    if project.is_empty() { key } else { format!("{project}|{key}") }
}

/// [`dedup_key`] with the other attributes that tell subscriptions of an API apart
/// (SOL005 PkgmSubscription has no verbosity: none).
pub fn dedup_key_of(callback_uri: &str, filter: &Value, others: &[&str]) -> String {
    let uri = url::Url::parse(callback_uri).map(String::from).unwrap_or_else(|_| callback_uri.to_owned());
    // No filter and an empty one select the same.
    let canonical = Some(canonical_filter(filter)).filter(|canonical| !is_empty(canonical)).unwrap_or(Value::Null);
    let mut hasher = sha2::Sha256::new();
    let canonical = canonical.to_string();
    let parts = [uri.as_str()].into_iter().chain(others.iter().copied()).chain([canonical.as_str()]);
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn duplicates_are_recognised_whatever_the_order() {
        let a = json!({"operationTypes": ["TERMINATE", "INSTANTIATE"], "vnfInstanceSubscriptionFilter": {"vnfdIds": ["d1"]}, "notificationTypes": []});
        let b = json!({"vnfInstanceSubscriptionFilter": {"vnfdIds": ["d1"], "vnfInstanceIds": []}, "operationTypes": ["INSTANTIATE", "TERMINATE"]});
        assert_eq!(dedup_key("http://Host:80/cb", &a, "FULL"), dedup_key("http://host/cb", &b, "FULL"));
        assert_ne!(dedup_key("http://host/cb", &a, "FULL"), dedup_key("http://host/cb", &a, "SHORT"));
        assert_ne!(dedup_key("http://host/cb", &a, "FULL"), dedup_key("http://host/cb2", &a, "FULL"));
        assert_eq!(dedup_key("http://host/cb", &Value::Null, "FULL"), dedup_key("http://host/cb", &json!({}), "FULL"));
        assert_ne!(dedup_key("http://host/cb", &Value::Null, "FULL"), dedup_key("http://host/cb", &a, "FULL"));
    }
}
