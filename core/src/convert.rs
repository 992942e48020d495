//! v1 (SOL003 v2.6.1) → v2 (SOL003 v3.3.1) document conversion, for
//! `solgate migrate-v1-to-v2`. The shapes differ mostly in `vimConnectionInfo`: an array
//! of objects with `id` in v1, a map keyed by that id in v2.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::shapes::VimMember;

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

/// A document with `vimConnectionInfo` in v2 shape (the rest as it was).
fn vims_to_v2(mut document: VimMember) -> VimMember {
    document.vim_connection_info = document.vim_connection_info.map(|vims| vim_connections_to_map(&vims));
    document
}

/// A v1 VnfInstance document in v2 shape.
pub fn instance_to_v2(v1: &Value) -> Value {
    match VimMember::deserialize(v1) {
        Ok(document) => serde_json::to_value(vims_to_v2(document)).unwrap_or_default(),
        Err(_) => v1.clone(),
    }
}

/// The members of a VnfLcmOpOcc that hold VIM connections: the request, `changedInfo`,
/// and the instances its stored plans lead to. Everything else is kept as it is.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpOccVims {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    operation_params: Option<VimMember>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changed_info: Option<VimMember>,
    #[serde(rename = "_solgate", default, skip_serializing_if = "Option::is_none")]
    private: Option<PlansVims>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlansVims {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plan: Option<PlanTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rollback_plan: Option<PlanTarget>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct PlanTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<VimMember>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// A v1 VnfLcmOpOcc document in v2 shape (its request parameters, and the instance its
/// stored plans lead to, converted too).
pub fn op_occ_to_v2(v1: &Value) -> Value {
    let Ok(mut op) = OpOccVims::deserialize(v1) else { return v1.clone() };
    op.operation_params = op.operation_params.map(vims_to_v2);
    op.changed_info = op.changed_info.map(vims_to_v2);
    if let Some(private) = &mut op.private {
        for plan in [&mut private.plan, &mut private.rollback_plan].into_iter().flatten() {
            plan.target = plan.target.take().map(vims_to_v2);
        }
    }
    serde_json::to_value(op).unwrap_or_else(|_| v1.clone())
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
