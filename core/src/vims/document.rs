//! The stored VIM document (Tacker's `vim` object, snake_case as Tacker's API spells it).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use solgate_db::repo::vims::VimRecord;

use super::{VimError, VimResult};
use crate::secrets;

/// A registered VIM as stored (credentials sealed) and shown (without them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VimDocument {
    pub id: String,
    pub name: String,
    pub description: String,
    #[serde(rename = "type")]
    pub vim_type: String,
    pub tenant_id: String,
    pub auth_url: String,
    pub auth_cred: AuthCred,
    pub vim_project: VimProject,
    pub is_default: bool,
    /// Free-form: passed on to the VIM connection as it is.
    pub extra: Map<String, Value>,
    pub shared: bool,
    pub placement_attr: PlacementAttr,
    pub status: String,
    pub created_at: String,
    /// `null` until the first update (Tacker shows it so).
    pub updated_at: Option<String>,
    /// Members of documents stored by other versions, kept as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `auth_cred`: Keystone's (`username` .. `project_domain_name`) or the Kubernetes API's
/// (`bearer_token`, basic, OIDC; `ssl_ca_cert`) credentials, secrets sealed when stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthCred {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_domain_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert_verify: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_domain_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssl_ca_cert: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oidc_token_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_url: Option<String>,
}

impl AuthCred {
    /// A member that is set and not empty.
    pub fn non_empty(value: &Option<String>) -> Option<&str> {
        value.as_deref().filter(|text| !text.is_empty())
    }
}

/// `vim_project`: the Keystone project (and its domain) or the Kubernetes namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VimProject {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_domain_name: Option<String>,
}

/// `placement_attr`: the regions of Keystone's catalog (none for Kubernetes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlacementAttr {
    pub regions: Vec<String>,
}

impl VimDocument {
    /// The document of a stored record (its secrets as stored: sealed).
    pub fn of(record: &VimRecord) -> VimResult<Self> {
        serde_json::from_value(record.body.clone())
            .map_err(|error| VimError::Internal(format!("VIM {}: stored document: {error}", record.id)))
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The document a client sees: the stored one without its secrets, with the record's
/// `is_default` (the column is the truth).
pub fn shown(record: &VimRecord) -> Value {
    let mut document = record.body.clone();
    secrets::scrub(&mut document);
    if let Value::Object(members) = &mut document {
        members.insert("is_default".into(), Value::Bool(record.is_default));
    }
    document
}
