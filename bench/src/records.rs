//! The members of solgate's answers the load driver reads, and the one body it builds.
//! A member of an unexpected type reads as absent (the driver then reports what it got).

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn read<T: DeserializeOwned + Default>(value: &Value) -> T {
    serde_json::from_value(value.clone()).unwrap_or_default()
}

fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    Value::deserialize(d).map(|v| read(&v))
}

/// Present, even as `null`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `VnfPkgInfo` (SOL005 clause 9.5.2.5).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PackageView {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub onboarding_state: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub operational_state: Option<String>,
    #[serde(deserialize_with = "present")]
    pub onboarding_failure_details: Option<Value>,
}

impl PackageView {
    pub(crate) fn of(package: &Value) -> PackageView {
        read(package)
    }
}

/// `VnfInstance` (SOL003 clause 5.5.2.2).
#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct InstanceView {
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
}

impl InstanceView {
    pub(crate) fn of(instance: &Value) -> InstanceView {
        read(instance)
    }
}

/// `VnfLcmOpOcc` (SOL003 clause 5.5.2.13).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct OpOccView {
    #[serde(deserialize_with = "lenient")]
    pub operation_state: Option<String>,
}

impl OpOccView {
    pub(crate) fn of(op: &Value) -> OpOccView {
        read(op)
    }
}

/// An OAuth 2.0 token response (RFC 6749 clause 5.1).
#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct TokenAnswer {
    #[serde(deserialize_with = "lenient")]
    pub access_token: Option<String>,
}

impl TokenAnswer {
    pub(crate) fn of(answer: &Value) -> TokenAnswer {
        read(answer)
    }
}

/// `CreateVnfRequest` (SOL003 clause 5.5.2.3).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateVnfRequest<'a> {
    pub vnfd_id: &'a str,
    pub vnf_instance_name: &'a str,
}

/// `InstantiateVnfRequest` (SOL003 clause 5.5.2.4), the flavour only.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InstantiateVnfRequest {
    pub flavour_id: &'static str,
}

/// `TerminateVnfRequest` (SOL003 clause 5.5.2.8).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TerminateVnfRequest {
    pub termination_type: &'static str,
}
