//! Reading a `{"vim": {...}}` request body member by member, with Tacker's error texts (a
//! serde derive would word them otherwise): the one place the request is a JSON map.

use serde_json::{Map, Value};

use super::{VimResult, bad_request};

/// The `vim` object of a request body.
pub(super) fn vim_object(body: Value) -> VimResult<Map<String, Value>> {
    let malformed = || bad_request("The request body must be {\"vim\": {...}}.");
    let Value::Object(mut outer) = body else { return Err(malformed()) };
    match outer.remove("vim") {
        Some(Value::Object(vim)) if outer.is_empty() => Ok(vim),
        Some(Value::Object(_)) => Err(bad_request(format!(
            "Unrecognized attribute(s) '{}' beside 'vim'.",
            outer.keys().cloned().collect::<Vec<_>>().join(", ")
        ))),
        _ => Err(malformed()),
    }
}

pub(super) fn refuse_unknown(object: &Map<String, Value>, known: &[&str], what: &str) -> VimResult<()> {
    let unknown: Vec<&str> = object.keys().map(String::as_str).filter(|key| !known.contains(key)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(bad_request(format!("Unrecognized attribute(s) of {what}: '{}'.", unknown.join(", "))))
    }
}

/// A string member: `None` when absent or null, 400 when of another type.
pub(super) fn optional_string(object: &Map<String, Value>, key: &str, what: &str) -> VimResult<Option<String>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(bad_request(format!("{what}{key} must be a string."))),
    }
}

pub(super) fn required_string(object: &Map<String, Value>, key: &str, what: &str) -> VimResult<String> {
    optional_string(object, key, what)?
        .filter(|text| !text.trim().is_empty())
        .ok_or_else(|| bad_request(format!("{what}{key} is required.")))
}

pub(super) fn optional_object(object: &Map<String, Value>, key: &str) -> VimResult<Option<Map<String, Value>>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(inner)) => Ok(Some(inner.clone())),
        Some(_) => Err(bad_request(format!("{key} must be an object."))),
    }
}

pub(super) fn optional_bool(object: &Map<String, Value>, key: &str) -> VimResult<Option<bool>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(Value::String(text)) if text.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(text)) if text.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(_) => Err(bad_request(format!("{key} must be true or false."))),
    }
}
