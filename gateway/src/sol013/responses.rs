//! Which schema of the negotiated version a response body must satisfy, and the check:
//! every JSON body we send is the schema's resource (or a list of them, or a
//! ProblemDetails), and no attribute anywhere is `null` (absent attributes are omitted).
//! The test suite checks every response it receives with this; `[http]
//! validate_responses` checks them in a running server.

use actix_web::http::Method;
use serde_json::Value;
use solgate_schemas::VersionEntry;

use crate::routes::tables;

/// What a response body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub schema: &'static str,
    pub list: bool,
}

/// The shape of the body `method path` answers with `status`, from its row's response
/// (`crate::routes`); `None` when the body is not JSON of a schema (no body, a file, a
/// path outside the APIs). Every error of an API is a ProblemDetails.
pub fn shape(method: &Method, path: &str, status: u16) -> Option<Shape> {
    tables::table(path)?.api?;
    if status >= 400 {
        return Some(Shape { schema: "ProblemDetails", list: false });
    }
    tables::find(method, path)?.1.shape(status)
}

/// Checks a JSON response body against its shape in `entry` (the negotiated version).
pub fn check(entry: &VersionEntry, shape: Shape, body: &Value) -> Result<(), String> {
    if let Some(pointer) = first_null(body, String::new()) {
        return Err(format!("{pointer}: null (absent attributes must be omitted)"));
    }
    let dictionary = &entry.dictionary;
    if !dictionary.has(shape.schema) {
        return Err(format!("{} {} has no schema {}", entry.api.as_str(), entry.version_string(), shape.schema));
    }
    let items: Vec<&Value> = match (shape.list, body) {
        (true, Value::Array(items)) => items.iter().collect(),
        (true, _) => return Err(format!("/: a list of {} must be an array", shape.schema)),
        (false, body) => vec![body],
    };
    for (index, item) in items.into_iter().enumerate() {
        dictionary.validate(shape.schema, item).map_err(|failures| {
            let at = if shape.list { format!("[{index}] ") } else { String::new() };
            format!("{at}{}: {failures}", shape.schema)
        })?;
    }
    Ok(())
}

/// Attributes whose values are the client's own data (KeyValuePairs, request echoes, JSON
/// Merge Patch documents where `null` means "remove"): a `null` inside them is theirs.
const FREE_FORM: &[&str] = &[
    "metadata",
    "extensions",
    "vnfConfigurableProperties",
    "userDefinedData",
    "additionalParams",
    "operationParams",
    "changedInfo",
];

fn first_null(value: &Value, at: String) -> Option<String> {
    match value {
        Value::Null => Some(if at.is_empty() { "/".to_owned() } else { at }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| first_null(item, format!("{at}/{i}"))),
        Value::Object(map) => map
            .iter()
            .filter(|(key, _)| !FREE_FORM.contains(&key.as_str()))
            .find_map(|(key, item)| first_null(item, format!("{at}/{key}"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use solgate_schemas::{Api, Registry};

    use super::*;

    #[test]
    fn bodies_are_checked_against_the_schema_of_their_route() {
        let registry = Registry::builtin().unwrap();
        let v2 = registry.newest(Api::Vnflcm, 2).unwrap();
        let instance = json!({
            "id": "i1", "vnfdId": "d", "vnfProvider": "p", "vnfProductName": "n", "vnfSoftwareVersion": "1",
            "vnfdVersion": "1", "instantiationState": "NOT_INSTANTIATED",
            "_links": {"self": {"href": "http://x/vnflcm/v2/vnf_instances/i1"}}
        });
        let one = shape(&Method::GET, "/vnflcm/v2/vnf_instances/i1", 200).unwrap();
        assert_eq!(one, Shape { schema: "VnfInstance", list: false });
        check(v2, one, &instance).unwrap();

        let mut missing = instance.clone();
        missing.as_object_mut().unwrap().remove("vnfdId");
        assert!(check(v2, one, &missing).unwrap_err().contains("vnfdId"));
        let mut null = instance.clone();
        null["vnfInstanceName"] = Value::Null;
        assert!(check(v2, one, &null).unwrap_err().contains("/vnfInstanceName: null"));
        let mut theirs = instance.clone();
        theirs["metadata"] = json!({"removed": null});
        check(v2, one, &theirs).expect("a null in the client's own key-value pairs is theirs");
        let mut wrong_type = instance.clone();
        wrong_type["instantiationState"] = json!("HALF");
        assert!(check(v2, one, &wrong_type).is_err());

        let listed = shape(&Method::GET, "/vnflcm/v2/vnf_instances", 200).unwrap();
        check(v2, listed, &json!([instance])).unwrap();
        assert!(check(v2, listed, &json!([missing])).unwrap_err().starts_with("[0] VnfInstance"));
        assert!(check(v2, listed, &instance).is_err(), "a list must be an array");

        let problem = shape(&Method::POST, "/vnflcm/v2/vnf_instances", 404).unwrap();
        check(v2, problem, &json!({"status": 404, "detail": "gone"})).unwrap();
        assert!(check(v2, problem, &json!({"detail": "no status"})).is_err());
        assert_eq!(shape(&Method::GET, "/vnfpkgm/v1/vnf_packages/p/package_content", 200), None);
        assert_eq!(shape(&Method::GET, "/healthz", 200), None);
        assert_eq!(
            shape(&Method::GET, "/vnflcm/v1/api_versions", 200),
            Some(Shape { schema: "ApiVersionInformation", list: false })
        );
    }
}
