//! LCM operation user data (Tacker's `lcm-operation-user-data` and
//! `lcm-operation-user-data-class` in a request's `additionalParams`): which class the
//! request names, what the driver gives it ([`script_instance`]) and what it returns
//! ([`StackFields`]). The class runs through [`crate::script::run_user_data`].

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::infra::Inventory;

pub(super) const MODULE_KEY: &str = "lcm-operation-user-data";
pub(super) const CLASS_KEY: &str = "lcm-operation-user-data-class";

/// The user data a request declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Declared {
    /// The module's path in the package (`./UserData/userdata.py`).
    pub module: String,
    /// The class in it.
    pub class: String,
}

/// The user data `additionalParams` declare: both keys or neither (Tacker's
/// `UserdataMissing` otherwise).
pub(super) fn declared(additional_params: &Value) -> Result<Option<Declared>, String> {
    let module = additional_params.get(MODULE_KEY).filter(|v| !v.is_null());
    let class = additional_params.get(CLASS_KEY).filter(|v| !v.is_null());
    match (module, class) {
        (None, None) => Ok(None),
        (Some(Value::String(module)), Some(Value::String(class))) if !module.is_empty() && !class.is_empty() => {
            Ok(Some(Declared { module: module.clone(), class: class.clone() }))
        }
        (Some(_), Some(_)) => Err(format!("additionalParams {MODULE_KEY} and {CLASS_KEY} must be non-empty strings")),
        _ => Err(format!("additionalParams must give both {MODULE_KEY} and {CLASS_KEY}, or neither")),
    }
}

/// The Heat stack fields a user data class returned (Tacker's `fields`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StackFields {
    /// The top template, as the class gave it (HOT text, usually).
    pub template: Option<Value>,
    /// Nested templates by name, as text.
    pub files: BTreeMap<String, String>,
    pub parameters: Map<String, Value>,
    /// `false`: the fields replace the stack's whole (PUT); else they patch it.
    pub existing: bool,
}

/// The members of the fields as the class returned them, each checked by [`StackFields::parse`].
#[derive(Default, Deserialize)]
#[serde(default)]
struct ReturnedFields {
    template: Option<Value>,
    files: Option<Value>,
    parameters: Option<Value>,
    existing: Option<Value>,
}

impl StackFields {
    pub fn parse(fields: &Value) -> Result<Self, String> {
        // Not an object: no fields (each member absent).
        let fields = ReturnedFields::deserialize(fields).unwrap_or_default();
        let template = match fields.template {
            None | Some(Value::Null) => None,
            Some(text @ Value::String(_)) => Some(text),
            Some(object @ Value::Object(_)) => Some(object),
            Some(_) => return Err("its 'template' is neither HOT text nor an object".into()),
        };
        let mut files = BTreeMap::new();
        match fields.files {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, content) in map {
                    let text = match &content {
                        Value::String(text) => text.clone(),
                        // Heat takes a JSON template where it takes YAML.
                        Value::Object(_) => content.to_string(),
                        _ => return Err(format!("its file {name} is neither HOT text nor an object")),
                    };
                    files.insert(name, text);
                }
            }
            Some(_) => return Err("its 'files' is not an object".into()),
        }
        let parameters = match fields.parameters {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err("its 'parameters' is not an object".into()),
        };
        if parameters.get("nfv").is_some_and(|nfv| !nfv.is_object()) {
            return Err("its 'parameters.nfv' is not an object".into());
        }
        let existing = match fields.existing {
            None | Some(Value::Null) => true,
            Some(Value::Bool(existing)) => existing,
            Some(_) => return Err("its 'existing' is not a boolean".into()),
        };
        Ok(Self { template, files, parameters, existing })
    }

    /// The template as a JSON document (HOT text parsed), for a merge with the stack's.
    pub fn template_document(&self) -> Result<Option<Value>, String> {
        match &self.template {
            Some(Value::String(text)) => super::parse_hot(text).map(Some).map_err(|e| format!("its template: {e}")),
            other => Ok(other.clone()),
        }
    }
}

/// The VNF instance as a user data class sees it (Tacker's `inst`): the instance before
/// the operation, with the VNFCs the VIM holds now (their metadata: `stack_id`,
/// `vdu_idx`, `parent_stack_id`, ...) and `instantiatedVnfInfo.metadata` holding the
/// stack id and the `nfv` parameter last sent, as Tacker keeps them.
pub(super) fn script_instance(instance: &Value, current: &Inventory, stack_id: Option<&str>, nfv: &Value) -> Value {
    let mut inst = instance.clone();
    let Some(info) = inst.get_mut("instantiatedVnfInfo").and_then(Value::as_object_mut) else {
        return inst;
    };
    // The document handed to the class, built as Tacker builds it.
    let list = |value: serde_json::Result<Value>| value.unwrap_or_else(|_| json!([]));
    if !current.vnfc_resources.is_empty() || info.contains_key("vnfcResourceInfo") {
        info.insert("vnfcResourceInfo".into(), list(serde_json::to_value(&current.vnfc_resources)));
        info.insert("virtualStorageResourceInfo".into(), list(serde_json::to_value(&current.virtual_storages)));
        info.insert("vnfVirtualLinkResourceInfo".into(), list(serde_json::to_value(&current.virtual_links)));
    }
    let metadata = info.entry("metadata").or_insert_with(|| json!({}));
    if !metadata.is_object() {
        *metadata = json!({});
    }
    if let Some(metadata) = metadata.as_object_mut() {
        if let Some(stack_id) = stack_id {
            metadata.insert("stack_id".into(), json!(stack_id));
        }
        if nfv.is_object() {
            metadata.insert("nfv".into(), nfv.clone());
        }
    }
    inst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_keys_or_neither() {
        assert_eq!(declared(&json!({})), Ok(None));
        assert_eq!(
            declared(&json!({MODULE_KEY: "./UserData/userdata.py", CLASS_KEY: "UserData"})),
            Ok(Some(Declared { module: "./UserData/userdata.py".into(), class: "UserData".into() }))
        );
        assert!(declared(&json!({MODULE_KEY: "./UserData/userdata.py"})).unwrap_err().contains("both"));
        assert!(declared(&json!({CLASS_KEY: "UserData"})).unwrap_err().contains("both"));
        assert!(declared(&json!({MODULE_KEY: 5, CLASS_KEY: "UserData"})).unwrap_err().contains("strings"));
    }

    #[test]
    fn fields_are_read_as_tacker_gives_them() {
        let fields = StackFields::parse(&json!({
            "template": "heat_template_version: 2013-05-23\nresources: {}\n",
            "parameters": {"nfv": {"VDU": {}}},
            "files": {"VDU1.yaml": "resources: {}\n"}
        }))
        .unwrap();
        assert!(fields.existing);
        assert_eq!(fields.files["VDU1.yaml"], "resources: {}\n");
        assert_eq!(
            fields.template_document().unwrap(),
            Some(json!({"heat_template_version": "2013-05-23", "resources": {}}))
        );
        assert!(!StackFields::parse(&json!({"existing": false})).unwrap().existing);
        assert!(StackFields::parse(&json!({"parameters": {"nfv": "x"}})).is_err());
        assert!(StackFields::parse(&json!({"template": 5})).is_err());
    }
}
