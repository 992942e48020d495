//! A registered VIM as an LCM request's VimConnectionInfo (SOL003 clause 4.4.1.6): the
//! connection of a `vimId` named alone, or of the project's default VIM.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use solgate_db::Database;
use solgate_db::repo::lcm::LcmMajor;
use solgate_db::repo::vims::{self, VimRecord};
use solgate_model::infra::{VIM_TYPE_HELM, VIM_TYPE_KUBERNETES, VIM_TYPE_OPENSTACK};
use solgate_model::operation::LcmOperation;

use super::document::VimDocument;
use super::{OPENSTACK, VimError, VimResult};
use crate::tenancy::{self, ProjectScope};

/// The member of an LCM request this completes (a list in v1, a map in v2).
const MEMBER: &str = "vimConnectionInfo";

/// The VimConnectionInfo of a registered VIM, its secrets still sealed (each under the same
/// key name it was sealed with, so the conductor opens them).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    vim_type: &'static str,
    interface_info: InterfaceInfo,
    access_info: Access,
    vim_id: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InterfaceInfo {
    endpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    skip_certificate_verification: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skip_certificate_hostname_check: Option<bool>,
    /// Tacker's Kubernetes driver reads it so, in snake case.
    #[serde(rename = "ssl_ca_cert", skip_serializing_if = "Option::is_none")]
    ssl_ca_cert: Option<String>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Access {
    OpenStack(OpenStackAccess),
    Kubernetes(KubernetesAccess),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OpenStackAccess {
    username: Option<String>,
    password: Option<String>,
    project: String,
    project_domain: Option<String>,
    user_domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<String>,
}

/// Tacker's Kubernetes access members, in snake case; only those set and not empty.
#[derive(Serialize)]
struct KubernetesAccess {
    #[serde(skip_serializing_if = "Option::is_none")]
    bearer_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    password: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    oidc_token_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
}

/// The VimConnectionInfo (SOL003) of a registered VIM, its secrets still sealed.
pub fn connection_info(record: &VimRecord) -> VimResult<Value> {
    let document = VimDocument::of(record)?;
    let cred = document.auth_cred;
    let mut interface = InterfaceInfo {
        endpoint: document.auth_url,
        skip_certificate_verification: None,
        skip_certificate_hostname_check: None,
        ssl_ca_cert: None,
    };
    let (vim_type, access) = if record.vim_type == OPENSTACK {
        if cred.cert_verify.as_deref() == Some("False") {
            interface.skip_certificate_verification = Some(true);
            interface.skip_certificate_hostname_check = Some(true);
        }
        let access = OpenStackAccess {
            username: cred.username,
            password: cred.password,
            project: document.vim_project.name,
            project_domain: cred.project_domain_name,
            user_domain: cred.user_domain_name,
            region: document.placement_attr.regions.into_iter().next(),
        };
        (VIM_TYPE_OPENSTACK, Access::OpenStack(access))
    } else {
        let set = |value: Option<String>| value.filter(|text| !text.is_empty());
        interface.ssl_ca_cert = set(cred.ssl_ca_cert);
        let access = KubernetesAccess {
            bearer_token: set(cred.bearer_token),
            username: set(cred.username),
            password: set(cred.password),
            oidc_token_url: set(cred.oidc_token_url),
            client_id: set(cred.client_id),
            client_secret: set(cred.client_secret),
        };
        (VIM_TYPE_KUBERNETES, Access::Kubernetes(access))
    };
    let connection = Connection {
        vim_type,
        interface_info: interface,
        access_info: access,
        vim_id: record.id.clone(),
        extra: document.extra,
    };
    serde_json::to_value(connection).map_err(|error| VimError::Internal(error.to_string()))
}

/// An entry of a request's `vimConnectionInfo`, as far as completion reads it.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Requested {
    vim_id: Option<String>,
    vim_type: Option<String>,
    access_info: Option<Value>,
    extra: Option<Value>,
}

impl Requested {
    fn of(entry: &Value) -> Self {
        Requested::deserialize(entry).unwrap_or_default()
    }

    /// The registered VIM it names: a `vimId` without `accessInfo`.
    fn named(&self) -> Option<&str> {
        self.vim_id.as_deref().filter(|_| self.access_info.is_none())
    }
}

/// The entries of `vimConnectionInfo` by key (a v1 list's index, a v2 map's key).
fn entries(request: &mut Map<String, Value>) -> Vec<(String, &mut Value)> {
    match request.get_mut(MEMBER) {
        Some(Value::Array(items)) => {
            items.iter_mut().enumerate().map(|(index, entry)| (index.to_string(), entry)).collect()
        }
        Some(Value::Object(map)) => map.iter_mut().map(|(key, entry)| (key.clone(), entry)).collect(),
        _ => Vec::new(),
    }
}

fn is_empty(connections: Option<&Value>) -> bool {
    match connections {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    }
}

/// Completes an LCM request's `vimConnectionInfo` from the registry: an entry that names a
/// `vimId` and carries no `accessInfo` gets the registered VIM's connection (422 when the
/// request may see no such VIM), and an instantiation without any connection gets its
/// project's default VIM, when it has one (else it stays as it was: the local simulated
/// VIM, where it is enabled).
pub async fn complete_vim_connections(
    db: &Database,
    scope: ProjectScope<'_>,
    project: &str,
    major: LcmMajor,
    operation: LcmOperation,
    body: &mut Value,
) -> VimResult<()> {
    let Value::Object(request) = body else { return Ok(()) };
    let wanted: Vec<String> =
        entries(request).into_iter().filter_map(|(_, entry)| Requested::of(entry).named().map(str::to_owned)).collect();
    let wants_default = is_empty(request.get(MEMBER)) && operation == LcmOperation::Instantiate;
    if wanted.is_empty() && !wants_default {
        return Ok(());
    }
    let project = project.to_owned();
    let (named, default) = crate::db_run(db, move |conn| {
        let named = wanted.iter().map(|id| vims::find(conn, id)).collect::<Result<Vec<_>, _>>()?;
        let default = if wants_default { vims::find_default(conn, &project)? } else { None };
        Ok::<_, VimError>((named, default))
    })
    .await?;
    let mut named = named.into_iter();
    for (key, entry) in entries(request) {
        let requested = Requested::of(entry);
        let Some(vim_id) = requested.named() else { continue };
        let record = named.next().flatten().filter(|record| tenancy::visible(scope, &record.project));
        let record = record.ok_or_else(|| {
            VimError::Unprocessable(format!(
                "vimConnectionInfo {key}: vimId {vim_id} names no registered VIM and the entry has no accessInfo."
            ))
        })?;
        *entry = completed(&key, &record, &requested, entry)?;
    }
    if let Some(record) = default {
        let mut connection = connection_info(&record)?;
        let connections = if major == LcmMajor::V1 {
            if let Value::Object(members) = &mut connection {
                members.insert("id".into(), Value::from("default"));
            }
            Value::Array(vec![connection])
        } else {
            Value::Object(Map::from_iter([("default".to_owned(), connection)]))
        };
        request.insert(MEMBER.into(), connections);
        tracing::info!(vim = %record.id, "instantiation without vimConnectionInfo runs on the default VIM");
    }
    Ok(())
}

/// The registered VIM's connection with the members the request entry adds (its `extra`
/// wins; a registered Kubernetes VIM asked for as a Helm VIM runs the Helm driver).
fn completed(key: &str, record: &VimRecord, requested: &Requested, entry: &Value) -> VimResult<Value> {
    let requested_type = requested.vim_type.as_deref().unwrap_or_default();
    let mut connection = connection_info(record)?;
    let Value::Object(members) = &mut connection else { return Ok(connection) };
    let registered = if record.vim_type == OPENSTACK { VIM_TYPE_OPENSTACK } else { VIM_TYPE_KUBERNETES };
    if !requested_type.is_empty() && !same_type(requested_type, registered) {
        return Err(VimError::Unprocessable(format!(
            "vimConnectionInfo {key}: vimType {requested_type} does not match VIM {}, a {} VIM.",
            record.id, record.vim_type
        )));
    }
    if let Value::Object(entry) = entry {
        for (name, value) in entry {
            if !value.is_null() && name != "vimType" {
                members.entry(name.clone()).or_insert_with(|| value.clone());
            }
        }
    }
    if requested_type == VIM_TYPE_HELM {
        members.insert("vimType".into(), Value::from(VIM_TYPE_HELM));
    }
    if let Some(extra) = requested.extra.as_ref().filter(|extra| extra.is_object()) {
        members.insert("extra".into(), extra.clone());
    }
    Ok(connection)
}

/// Whether a requested `vimType` is the registered VIM's (legacy spellings included).
fn same_type(requested: &str, registered: &str) -> bool {
    let normalized = match requested {
        "openstack" => VIM_TYPE_OPENSTACK,
        "kubernetes" | VIM_TYPE_HELM => VIM_TYPE_KUBERNETES,
        other => other,
    };
    normalized == registered
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_registered_vim_becomes_a_connection_with_its_secrets_sealed() {
        let record = VimRecord {
            id: "v1".into(),
            project: "p".into(),
            name: "vim".into(),
            vim_type: OPENSTACK.into(),
            is_default: true,
            body: json!({"auth_url": "http://k/v3", "vim_project": {"name": "nfv"},
                "auth_cred": {"username": "u", "password": "sealed:v1:abcd:xyz", "user_domain_name": "Default",
                    "project_domain_name": "Default", "cert_verify": "True"},
                "placement_attr": {"regions": ["RegionOne"]}, "extra": {}}),
            created_at: String::new(),
            updated_at: None,
        };
        let connection = connection_info(&record).unwrap();
        assert_eq!(connection["vimId"], "v1");
        assert_eq!(connection["vimType"], "ETSINFV.OPENSTACK_KEYSTONE.V_3");
        assert_eq!(connection["interfaceInfo"]["endpoint"], "http://k/v3");
        assert_eq!(connection["accessInfo"]["password"], "sealed:v1:abcd:xyz");
        assert_eq!(connection["accessInfo"]["project"], "nfv");
        assert_eq!(connection["accessInfo"]["region"], "RegionOne");
        assert!(connection.get("extra").is_none(), "an empty extra is left out");
        assert!(same_type("openstack", "ETSINFV.OPENSTACK_KEYSTONE.V_3"));
        assert!(!same_type("kubernetes", "ETSINFV.OPENSTACK_KEYSTONE.V_3"));
    }
}
