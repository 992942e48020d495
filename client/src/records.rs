//! Typed views of the few members the client and its front ends act on; the resources
//! themselves stay JSON (see the crate documentation). A member of an unexpected type reads
//! as absent, as the server's answer is shown to the user whatever it holds.

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `T` read from `value`, or `T::default()` when it has another shape.
pub(crate) fn read<T: DeserializeOwned + Default>(value: Value) -> T {
    serde_json::from_value(value).unwrap_or_default()
}

pub(crate) fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    Value::deserialize(d).map(read)
}

/// `None` for `null`; any other value is `Some`, read leniently.
fn non_null<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<Option<T>, D::Error> {
    Value::deserialize(d).map(|v| (!v.is_null()).then(|| read(v)))
}

/// What is read of a `VnfLcmOpOcc` (SOL003 clause 5.5.2.13).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OpOccView {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub operation: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub operation_state: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub state_entered_time: Option<String>,
    #[serde(deserialize_with = "non_null")]
    pub error: Option<ProblemView>,
}

impl OpOccView {
    pub fn of(op: &Value) -> OpOccView {
        read(op.clone())
    }
}

/// The members of a ProblemDetails (SOL013 clause 6.4) shown to a user, none required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ProblemView {
    #[serde(deserialize_with = "lenient")]
    pub title: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub status: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub detail: Option<String>,
}

/// What is read of a `VnfPkgInfo` (SOL005 clause 9.5.2.5) while onboarding.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PkgInfoView {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub onboarding_state: Option<String>,
    /// Kept whole: shown as is when it is no ProblemDetails.
    #[serde(deserialize_with = "non_null")]
    pub onboarding_failure_details: Option<Value>,
}

impl PkgInfoView {
    pub fn of(info: &Value) -> PkgInfoView {
        read(info.clone())
    }
}

/// What is read of a `VnfInstance` (SOL003 clause 5.5.2.2).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InstanceView {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub instantiation_state: Option<String>,
}

impl InstanceView {
    pub fn of(instance: &Value) -> InstanceView {
        read(instance.clone())
    }
}

/// `CreateVnfRequest` (SOL003 clause 5.5.2.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateVnfRequest {
    pub vnfd_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnf_instance_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vnf_instance_description: Option<String>,
}

/// `CreateVnfPkgInfoRequest` (SOL005 clause 9.5.2.2); `PkgmUpdateRequest`-like bodies reuse
/// the user data member.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateVnfPkgInfoRequest {
    /// Free-form per SOL005 (`KeyValuePairs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_defined_data: Option<Map<String, Value>>,
}

/// `VnfPkgInfoModifications` (SOL005 clause 9.5.2.3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VnfPkgInfoModifications {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operational_state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_defined_data: Option<Map<String, Value>>,
}

/// `UploadVnfPackageFromUriRequest` (SOL005 clause 9.5.2.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UploadVnfPackageFromUriRequest {
    pub address_information: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// `TerminateVnfRequest` (SOL003 clause 5.5.2.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminateVnfRequest {
    pub termination_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graceful_termination_timeout: Option<u64>,
}

/// `OperateVnfRequest` (SOL003 clause 5.5.2.10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperateVnfRequest {
    pub change_state_to: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graceful_stop_timeout: Option<u64>,
}

/// A request body as the client's methods take it.
pub fn to_body<T: Serialize>(request: &T) -> Value {
    // Serialising these plain structs cannot fail (string keys, no custom serialisers).
    serde_json::to_value(request).unwrap_or(Value::Null)
}
