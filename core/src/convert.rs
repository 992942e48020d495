//! v1 (SOL003 v2.6.1) → v2 (SOL003 v3.3.1) document conversion, for
//! `solgate migrate-v1-to-v2`. The shapes differ mostly in `vimConnectionInfo`: an array
//! of objects with `id` in v1, a map keyed by that id in v2.

use serde_json::{Map, Value};

/// `vimConnectionInfo` array → map (entries without an id get `vim_<index>`).
pub fn vim_connections_to_map(value: &Value) -> Value {
    let Some(list) = value.as_array() else { return value.clone() };
    let mut map = Map::new();
    for (index, entry) in list.iter().enumerate() {
        let mut entry = entry.clone();
        let id = entry
            .as_object_mut()
            .and_then(|object| object.shift_remove("id"))
            .and_then(|id| id.as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("vim_{index}"));
        map.insert(id, entry);
    }
    Value::Object(map)
}

/// A v1 VnfInstance document in v2 shape.
pub fn instance_to_v2(v1: &Value) -> Value {
    let mut v2 = v1.clone();
    if let Some(vims) = v1.get("vimConnectionInfo") {
        v2["vimConnectionInfo"] = vim_connections_to_map(vims);
    }
    v2
}

/// A v1 VnfLcmOpOcc document in v2 shape (its request parameters, and the instance its
/// stored plans lead to, converted too).
pub fn op_occ_to_v2(v1: &Value) -> Value {
    let mut v2 = v1.clone();
    for container in ["operationParams", "changedInfo"] {
        if let Some(vims) = v1[container].get("vimConnectionInfo") {
            v2[container]["vimConnectionInfo"] = vim_connections_to_map(vims);
        }
    }
    for plan in ["plan", "rollbackPlan"] {
        if let Some(target) = v1[crate::PRIVATE_KEY][plan].get("target") {
            v2[crate::PRIVATE_KEY][plan]["target"] = instance_to_v2(target);
        }
    }
    v2
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn vim_connection_list_becomes_a_map() {
        let v1 = json!({"id": "i", "vimConnectionInfo": [
            {"id": "vim1", "vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3", "accessInfo": {"username": "u"}},
            {"vimType": "X"}
        ]});
        let v2 = instance_to_v2(&v1);
        assert_eq!(
            v2["vimConnectionInfo"],
            json!({"vim1": {"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3", "accessInfo": {"username": "u"}}, "vim_1": {"vimType": "X"}})
        );
        let op = op_occ_to_v2(
            &json!({"operationParams": {"flavourId": "f", "vimConnectionInfo": [{"id": "a", "vimType": "T"}]}}),
        );
        assert_eq!(op["operationParams"]["vimConnectionInfo"], json!({"a": {"vimType": "T"}}));
    }
}
