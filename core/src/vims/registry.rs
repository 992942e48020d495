//! Registering, listing, changing and deleting VIMs: the rules of each request and the rows
//! they write (a name is unique within a project, a project has one default VIM at most).

use serde_json::{Map, Value};
use solgate_db::repo::vims::{self, VimFilter, VimRecord};
use solgate_db::{Database, write_transaction};

use super::credentials::{keystone_v3, normalize};
use super::document::{PlacementAttr, VimDocument, shown};
use super::fields::{optional_bool, optional_object, optional_string, refuse_unknown, required_string, vim_object};
use super::reachability::{check_auth_url, check_reachable};
use super::{KUBERNETES, OPENSTACK, VimError, VimResult, bad_request, not_found};
use crate::egress::Outbound;
use crate::secrets::{self, SecretBox};
use crate::tenancy::{self, ProjectScope};

/// Who asks: the project a VIM it registers belongs to, and whose VIMs it sees.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    pub project: &'a str,
    pub scope: ProjectScope<'a>,
}

/// POST /v1.0/vims: a VIM document (credentials in clear) from a request body, after
/// checking the VIM is reachable with its credentials.
pub async fn register(outbound: &Outbound, requester: Requester<'_>, body: Value) -> VimResult<VimDocument> {
    let vim = vim_object(body)?;
    let known =
        ["name", "description", "type", "auth_url", "auth_cred", "vim_project", "is_default", "tenant_id", "extra"];
    refuse_unknown(&vim, &known, "vim")?;
    let name = required_string(&vim, "name", "")?;
    if name.len() > 255 {
        return Err(bad_request("name is longer than 255 characters."));
    }
    let description = optional_string(&vim, "description", "")?.unwrap_or_default();
    let vim_type = optional_string(&vim, "type", "")?.unwrap_or_else(|| OPENSTACK.into());
    if vim_type != OPENSTACK && vim_type != KUBERNETES {
        return Err(bad_request(format!("type '{vim_type}' is not supported: openstack or kubernetes.")));
    }
    let mut auth_url = required_string(&vim, "auth_url", "")?;
    check_auth_url(outbound, &auth_url).await?;
    if vim_type == OPENSTACK {
        auth_url = keystone_v3(&auth_url);
    }
    let is_default = optional_bool(&vim, "is_default")?.unwrap_or(false);
    let tenant_id = match optional_string(&vim, "tenant_id", "")?.filter(|tenant_id| !tenant_id.is_empty()) {
        Some(tenant_id) if tenant_id != requester.project && requester.scope.is_some() => {
            return Err(VimError::Forbidden("tenant_id names another project than yours.".into()));
        }
        Some(tenant_id) => tenant_id,
        None => requester.project.to_owned(),
    };
    let auth_cred = optional_object(&vim, "auth_cred")?.ok_or_else(|| bad_request("auth_cred is required."))?;
    let vim_project = optional_object(&vim, "vim_project")?.ok_or_else(|| bad_request("vim_project is required."))?;
    let (auth_cred, vim_project) = normalize(&vim_type, &auth_url, &auth_cred, &vim_project)?;
    let extra = optional_object(&vim, "extra")?.unwrap_or_default();
    let mut document = VimDocument {
        id: solgate_db::new_id(),
        name,
        description,
        vim_type,
        tenant_id,
        auth_url,
        auth_cred,
        vim_project,
        is_default,
        extra,
        ..VimDocument::default()
    };
    document.placement_attr = PlacementAttr { regions: check_reachable(outbound, &document).await? };
    document.status = "ACTIVE".into();
    document.created_at = solgate_db::repo::now_text();
    Ok(document)
}

/// The row of a document, its secrets sealed.
pub fn sealed_record(secrets: &SecretBox, document: &VimDocument) -> VimRecord {
    let mut body = document.to_value();
    secrets.seal(&mut body);
    VimRecord {
        id: document.id.clone(),
        project: document.tenant_id.clone(),
        name: document.name.clone(),
        vim_type: document.vim_type.clone(),
        is_default: document.is_default,
        body,
        created_at: document.created_at.clone(),
        updated_at: document.updated_at.clone(),
    }
}

/// The `vim` object of a PUT body; type and `auth_url` of a VIM stay as registered.
pub fn update_request(body: Value) -> VimResult<Map<String, Value>> {
    let vim = vim_object(body)?;
    let known = ["name", "description", "is_default", "auth_cred", "vim_project", "tenant_id", "extra"];
    refuse_unknown(&vim, &known, "vim").map_err(|error| {
        if vim.contains_key("type") || vim.contains_key("auth_url") {
            bad_request("type and auth_url of a VIM cannot be changed; register a new VIM.")
        } else {
            error
        }
    })?;
    Ok(vim)
}

/// PUT /v1.0/vims/{id}: the record changed as `vim` ([`update_request`]) asks: name,
/// description, `is_default`, `extra`, credentials or project (re-checked against the VIM).
pub async fn amend(
    outbound: &Outbound,
    secrets: &SecretBox,
    record: &VimRecord,
    vim: &Map<String, Value>,
) -> VimResult<VimRecord> {
    let mut body = record.body.clone();
    secrets.open(&mut body).map_err(|error| VimError::Internal(error.to_string()))?;
    let mut document: VimDocument =
        serde_json::from_value(body).map_err(|error| VimError::Internal(format!("VIM {}: {error}", record.id)))?;
    if let Some(tenant_id) = optional_string(vim, "tenant_id", "")?
        && tenant_id != record.project
    {
        return Err(bad_request("tenant_id of a VIM cannot be changed."));
    }
    if let Some(name) = optional_string(vim, "name", "")? {
        if name.trim().is_empty() || name.len() > 255 {
            return Err(bad_request("name must be 1 to 255 characters."));
        }
        document.name = name;
    }
    if let Some(description) = optional_string(vim, "description", "")? {
        document.description = description;
    }
    document.is_default = optional_bool(vim, "is_default")?.unwrap_or(record.is_default);
    if let Some(extra) = optional_object(vim, "extra")? {
        document.extra = extra;
    }
    let new_cred = optional_object(vim, "auth_cred")?;
    let new_project = optional_object(vim, "vim_project")?;
    if new_cred.is_some() || new_project.is_some() {
        renew_credentials(&mut document, &record.vim_type, new_cred, new_project)?;
        document.placement_attr = PlacementAttr { regions: check_reachable(outbound, &document).await? };
    }
    document.updated_at = Some(solgate_db::repo::now_text());
    let changed = sealed_record(secrets, &document);
    Ok(VimRecord {
        id: record.id.clone(),
        project: record.project.clone(),
        vim_type: record.vim_type.clone(),
        created_at: record.created_at.clone(),
        ..changed
    })
}

/// New credentials or project over the stored ones, checked again.
fn renew_credentials(
    document: &mut VimDocument,
    vim_type: &str,
    new_cred: Option<Map<String, Value>>,
    new_project: Option<Map<String, Value>>,
) -> VimResult<()> {
    let as_map = |value: Value| match value {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let mut auth_cred = as_map(serde_json::to_value(&document.auth_cred).unwrap_or_default());
    if let Some(new_cred) = new_cred {
        // Tacker: a new bearer token replaces a username and password, and the reverse.
        if new_cred.contains_key("bearer_token") {
            auth_cred.remove("username");
            auth_cred.remove("password");
        } else if new_cred.contains_key("username") && new_cred.contains_key("password") {
            auth_cred.remove("bearer_token");
        }
        for (key, value) in new_cred {
            // An empty secret (the client sends one when the file has none) keeps the stored one.
            let empty_secret = secrets::SECRET_KEYS.contains(&key.as_str()) && value.as_str() == Some("");
            if !empty_secret {
                auth_cred.insert(key, value);
            }
        }
    }
    let mut vim_project = as_map(serde_json::to_value(&document.vim_project).unwrap_or_default());
    if let Some(new_project) = new_project {
        vim_project.extend(new_project);
    }
    (document.auth_cred, document.vim_project) = normalize(vim_type, &document.auth_url, &auth_cred, &vim_project)?;
    Ok(())
}

/// Maps a unique violation to Tacker's conflicts (name taken, second default).
fn conflict(record: &VimRecord) -> VimError {
    if record.is_default {
        VimError::Conflict(format!(
            "VIM '{}' cannot be the default: the project already has a default VIM, or the name is taken.",
            record.name
        ))
    } else {
        VimError::Conflict(format!("A VIM named '{}' already exists in the project.", record.name))
    }
}

/// Stores a new VIM.
pub async fn insert(db: &Database, record: VimRecord) -> VimResult<()> {
    crate::db_run(db, move |conn| {
        write_transaction(conn, |conn| match vims::insert(conn, &record) {
            Ok(()) => Ok(()),
            Err(error) if error.is_unique_violation() => Err(conflict(&record)),
            Err(error) => Err(error.into()),
        })
    })
    .await
}

/// Stores a changed VIM (404 when it was deleted meanwhile).
pub async fn store(db: &Database, record: VimRecord) -> VimResult<()> {
    crate::db_run(db, move |conn| {
        write_transaction(conn, |conn| match vims::update(conn, &record) {
            Ok(true) => Ok(()),
            Ok(false) => Err(not_found(&record.id)),
            Err(error) if error.is_unique_violation() => Err(conflict(&record)),
            Err(error) => Err(error.into()),
        })
    })
    .await
}

/// Deletes a VIM (404 when it is gone). Instances keep the connection they were
/// instantiated with (it was copied into them).
pub async fn remove(db: &Database, id: &str) -> VimResult<()> {
    let wanted = id.to_owned();
    let deleted = crate::db_run(db, move |conn| Ok::<_, VimError>(vims::delete(conn, &wanted)?)).await?;
    if deleted { Ok(()) } else { Err(not_found(id)) }
}

/// A VIM `scope` may see, else 404.
pub async fn find_visible(db: &Database, scope: ProjectScope<'_>, id: &str) -> VimResult<VimRecord> {
    let wanted = id.to_owned();
    let record = crate::db_run(db, move |conn| Ok::<_, VimError>(vims::find(conn, &wanted)?)).await?;
    record.filter(|record| tenancy::visible(scope, &record.project)).ok_or_else(|| not_found(id))
}

/// GET /v1.0/vims: filtered by `id`, `name`, `type`, `is_default`, `tenant_id` or
/// `status` as Tacker's list is; `fields` is accepted (whole VIMs are shown).
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    filter: VimFilter,
    status: Option<String>,
    /// A `tenant_id` other than the requester's own: nothing to show.
    nothing: bool,
}

impl ListQuery {
    pub fn parse<'a>(
        scope: ProjectScope<'_>,
        pairs: impl IntoIterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
    ) -> VimResult<Self> {
        let mut query = ListQuery {
            filter: VimFilter { project: scope.map(str::to_owned), ..VimFilter::default() },
            ..ListQuery::default()
        };
        let filter = &mut query.filter;
        for (key, value) in pairs {
            let value = value.into_owned();
            match key.as_ref() {
                "id" => filter.id = Some(value),
                "name" => filter.name = Some(value),
                "type" => filter.vim_type = Some(value),
                "status" => query.status = Some(value),
                "is_default" => {
                    filter.is_default = Some(match value.to_ascii_lowercase().as_str() {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(bad_request(format!("is_default '{value}' is not true or false."))),
                    })
                }
                "tenant_id" => match &filter.project {
                    Some(own) if *own != value => {
                        query.nothing = true;
                        return Ok(query);
                    }
                    _ => filter.project = Some(value),
                },
                "fields" | "sort_key" | "sort_dir" => {}
                other => return Err(bad_request(format!("Unknown query parameter '{other}'."))),
            }
        }
        Ok(query)
    }
}

/// The VIMs a query selects, as a client sees them.
pub async fn list(db: &Database, query: ListQuery) -> VimResult<Vec<Value>> {
    if query.nothing {
        return Ok(Vec::new());
    }
    let filter = query.filter;
    let records = crate::db_run(db, move |conn| Ok::<_, VimError>(vims::list(conn, &filter)?)).await?;
    let mut listed = Vec::with_capacity(records.len());
    for record in &records {
        let status = VimDocument::of(record).map(|document| document.status).unwrap_or_default();
        if query.status.as_deref().is_none_or(|wanted| wanted == status) {
            listed.push(shown(record));
        }
    }
    Ok(listed)
}
