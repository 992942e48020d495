//! The VIM registry, compatible with Tacker's legacy NFVO API `/v1.0/vims` (what
//! python-tackerclient's `openstack vim register/list/show/set/delete` send): a VIM is
//! registered with its credentials, which are checked against the VIM (Keystone or the
//! Kubernetes API), stored sealed ([`solgate_core::secrets`]) and never shown again.
//!
//! A VIM belongs to the project that registered it; each project has at most one default
//! VIM. An LCM request's `vimConnectionInfo` may name a registered VIM by `vimId` alone, and
//! an instantiation without `vimConnectionInfo` runs on the project's default VIM
//! ([`complete_vim_connections`]): the connection is copied, credentials still sealed, into
//! the request.
//!
//! python-tackerclient appends `.json` to every path (`/v1.0/vims.json`,
//! `/v1.0/vims/{id}.json`); both spellings are served.

use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Map, Value, json};
use solgate_core::operation::LcmOperation;
use solgate_core::secrets;
use solgate_db::repo::lcm::LcmMajor;
use solgate_db::repo::vims::{self, VimFilter, VimRecord};
use solgate_db::write_transaction;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult, ErrorKind};
use crate::sol013::JsonBody;
use crate::state::AppState;

/// Tacker's VIM types.
const OPENSTACK: &str = "openstack";
const KUBERNETES: &str = "kubernetes";
/// A Kubernetes VIM driven with Helm (a request's `vimType`; the registry keeps `kubernetes`).
const VIM_TYPE_HELM: &str = "ETSINFV.HELM.V_3";

/// How long the reachability check waits for the VIM.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// `{id}` or `{id}.json`.
fn vim_id(path: &str) -> &str {
    path.strip_suffix(".json").unwrap_or(path)
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("VIM {id} could not be found."))
}

/// The document a client sees: the stored one without its secrets.
fn shown(record: &VimRecord) -> Value {
    let mut document = record.body.clone();
    secrets::scrub(&mut document);
    document["is_default"] = json!(record.is_default);
    document
}

fn answer(status: actix_web::http::StatusCode, body: &Value) -> HttpResponse {
    HttpResponse::build(status).content_type("application/json").body(body.to_string())
}

/// The `vim` object of a request body.
fn vim_object(body: Value) -> ApiResult<Map<String, Value>> {
    match body {
        Value::Object(mut outer) => match outer.remove("vim") {
            Some(Value::Object(vim)) if outer.is_empty() => Ok(vim),
            Some(Value::Object(_)) => Err(ApiError::bad_request(format!(
                "Unrecognized attribute(s) '{}' beside 'vim'.",
                outer.keys().cloned().collect::<Vec<_>>().join(", ")
            ))),
            _ => Err(ApiError::bad_request("The request body must be {\"vim\": {...}}.")),
        },
        _ => Err(ApiError::bad_request("The request body must be {\"vim\": {...}}.")),
    }
}

fn refuse_unknown(object: &Map<String, Value>, known: &[&str], what: &str) -> ApiResult<()> {
    let unknown: Vec<&str> = object.keys().map(String::as_str).filter(|key| !known.contains(key)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!("Unrecognized attribute(s) of {what}: '{}'.", unknown.join(", "))))
    }
}

/// A string member: `None` when absent or null, 400 when of another type.
fn optional_string(object: &Map<String, Value>, key: &str, what: &str) -> ApiResult<Option<String>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ApiError::bad_request(format!("{what}{key} must be a string."))),
    }
}

fn required_string(object: &Map<String, Value>, key: &str, what: &str) -> ApiResult<String> {
    optional_string(object, key, what)?
        .filter(|text| !text.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request(format!("{what}{key} is required.")))
}

fn optional_object(object: &Map<String, Value>, key: &str) -> ApiResult<Option<Map<String, Value>>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(inner)) => Ok(Some(inner.clone())),
        Some(_) => Err(ApiError::bad_request(format!("{key} must be an object."))),
    }
}

fn optional_bool(object: &Map<String, Value>, key: &str) -> ApiResult<Option<bool>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(Value::String(text)) if text.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(text)) if text.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(_) => Err(ApiError::bad_request(format!("{key} must be true or false."))),
    }
}

const OPENSTACK_CRED_KEYS: &[&str] =
    &["username", "password", "user_domain_name", "cert_verify", "project_name", "project_domain_name", "auth_url"];
const KUBERNETES_CRED_KEYS: &[&str] = &[
    "bearer_token",
    "username",
    "password",
    "ssl_ca_cert",
    "oidc_token_url",
    "client_id",
    "client_secret",
    "auth_url",
];

/// Checks and completes `auth_cred` and `vim_project` of a VIM of `vim_type` (Tacker's
/// defaults: domain `Default`, `cert_verify` `True`); the credentials are in clear here.
fn normalize_credentials(
    vim_type: &str,
    auth_url: &str,
    auth_cred: &mut Map<String, Value>,
    vim_project: &mut Map<String, Value>,
) -> ApiResult<()> {
    let project_name = required_string(vim_project, "name", "vim_project.")?;
    if vim_type == OPENSTACK {
        refuse_unknown(auth_cred, OPENSTACK_CRED_KEYS, "auth_cred")?;
        refuse_unknown(vim_project, &["name", "project_domain_name"], "vim_project")?;
        required_string(auth_cred, "username", "auth_cred.")?;
        required_string(auth_cred, "password", "auth_cred.")?;
        let cert_verify = optional_string(auth_cred, "cert_verify", "auth_cred.")?.unwrap_or_else(|| "True".into());
        if cert_verify != "True" && cert_verify != "False" {
            return Err(ApiError::bad_request("auth_cred.cert_verify must be 'True' or 'False'."));
        }
        auth_cred.insert("cert_verify".into(), json!(cert_verify));
        let domain = |object: &Map<String, Value>, key: &str, what: &str| -> ApiResult<String> {
            Ok(optional_string(object, key, what)?.filter(|text| !text.is_empty()).unwrap_or_else(|| "Default".into()))
        };
        let user_domain = domain(auth_cred, "user_domain_name", "auth_cred.")?;
        auth_cred.insert("user_domain_name".into(), json!(user_domain));
        let project_domain = domain(vim_project, "project_domain_name", "vim_project.")?;
        vim_project.insert("project_domain_name".into(), json!(project_domain));
        auth_cred.insert("project_name".into(), json!(project_name));
        auth_cred.insert("project_domain_name".into(), json!(project_domain));
    } else {
        refuse_unknown(auth_cred, KUBERNETES_CRED_KEYS, "auth_cred")?;
        refuse_unknown(vim_project, &["name"], "vim_project")?;
        let has = |key: &str| auth_cred.get(key).and_then(Value::as_str).is_some_and(|text| !text.is_empty());
        if has("oidc_token_url") {
            for key in ["username", "password", "client_id"] {
                required_string(auth_cred, key, "auth_cred.")?;
            }
        } else if !(has("bearer_token") || (has("username") && has("password"))) {
            return Err(ApiError::bad_request(
                "auth_cred needs bearer_token, or username and password, or oidc_token_url (Kubernetes VIM).",
            ));
        }
        if let Some(pem) = optional_string(auth_cred, "ssl_ca_cert", "auth_cred.")?
            && !pem.is_empty()
            && reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_or(true, |certificates| certificates.is_empty())
        {
            return Err(ApiError::bad_request("auth_cred.ssl_ca_cert is not a PEM certificate."));
        }
    }
    auth_cred.insert("auth_url".into(), json!(auth_url));
    Ok(())
}

/// Tacker keeps Keystone's URL with its version (`.../identity/v3`).
fn keystone_v3(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    if trimmed.ends_with("/v3") { trimmed.to_owned() } else { format!("{trimmed}/v3") }
}

/// Checks an `auth_url`: absolute http(s), no credentials in it, and allowed by `[egress]`.
async fn check_auth_url(state: &AppState, url: &str) -> ApiResult<()> {
    let parsed = url::Url::parse(url).map_err(|_| ApiError::bad_request(format!("auth_url '{url}' is not a URL.")))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(ApiError::bad_request("auth_url must not carry credentials; put them in auth_cred."));
    }
    state.outbound.policy().check_uri_resolved("auth_url", url).await?;
    Ok(())
}

/// A request error with its causes ("error sending request: ... Connection refused"),
/// without the URL (the message names the VIM already).
fn causes(error: reqwest::Error) -> String {
    use std::error::Error as _;
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn unreachable(what: &str, detail: impl std::fmt::Display) -> ApiError {
    ApiError::unprocessable(format!("The VIM is not reachable with these credentials: {what}: {detail}."))
}

/// The reachability check of a registration (credentials in clear): Keystone issues a
/// project-scoped token (`POST /v3/auth/tokens`), or the Kubernetes API answers
/// `GET /version`. Returns the regions of Keystone's catalog (Tacker's `placement_attr`).
async fn check_reachable(state: &AppState, document: &Value) -> ApiResult<Vec<String>> {
    let auth_url = document["auth_url"].as_str().unwrap_or_default();
    let cred = &document["auth_cred"];
    let text = |key: &str| cred[key].as_str().unwrap_or_default().to_owned();
    // Certificates are always verified here (`cert_verify: 'False'` only reaches the drivers,
    // which honour it when `[tls] allow_vim_skip_verification` is set): trust a private CA
    // with `[tls] ca_file`.
    let mut builder = state.outbound.client_builder(false).map_err(ApiError::internal)?.timeout(CHECK_TIMEOUT);
    if let Some(pem) = cred["ssl_ca_cert"].as_str().filter(|pem| !pem.is_empty()) {
        let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
            .map_err(|_| ApiError::bad_request("auth_cred.ssl_ca_cert is not a PEM certificate."))?;
        builder = builder.tls_certs_merge(certificates);
    }
    let client = builder.build().map_err(ApiError::internal)?;
    if document["type"] == OPENSTACK {
        let url = format!("{auth_url}/auth/tokens");
        let request = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": text("username"), "domain": {"name": text("user_domain_name")}, "password": text("password")}}},
            "scope": {"project": {"name": text("project_name"), "domain": {"name": text("project_domain_name")}}}
        }});
        let response = client
            .post(&url)
            .json(&request)
            .send()
            .await
            .map_err(|error| unreachable(&format!("Keystone at {auth_url}"), causes(error)))?;
        let status = response.status();
        if status.as_u16() == 401 {
            return Err(unreachable(
                &format!("Keystone at {auth_url}"),
                format!(
                    "it refused the credentials of user '{}' for project '{}' (401)",
                    text("username"),
                    text("project_name")
                ),
            ));
        }
        if !status.is_success() {
            return Err(unreachable(
                &format!("Keystone at {auth_url}"),
                format!("POST /auth/tokens answered {status}"),
            ));
        }
        let token: Value = response.json().await.unwrap_or(Value::Null);
        let mut regions: Vec<String> = token["token"]["catalog"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|service| service["endpoints"].as_array().into_iter().flatten())
            .filter_map(|endpoint| endpoint["region_id"].as_str().or_else(|| endpoint["region"].as_str()))
            .map(str::to_owned)
            .collect();
        regions.sort();
        regions.dedup();
        Ok(regions)
    } else {
        let url = format!("{}/version", auth_url.trim_end_matches('/'));
        let mut request = client.get(&url);
        if let Some(token) = cred["bearer_token"].as_str().filter(|token| !token.is_empty()) {
            request = request.bearer_auth(token);
        } else if cred.get("oidc_token_url").is_none() && !text("username").is_empty() {
            request = request.basic_auth(text("username"), Some(text("password")));
        }
        let what = format!("the Kubernetes API at {auth_url}");
        let response = request.send().await.map_err(|error| unreachable(&what, causes(error)))?;
        let status = response.status();
        if status.as_u16() == 401 || status.as_u16() == 403 {
            return Err(unreachable(&what, format!("it refused the credentials ({status})")));
        }
        if !status.is_success() {
            return Err(unreachable(&what, format!("GET /version answered {status}")));
        }
        let version: Value = response.json().await.unwrap_or(Value::Null);
        if version["gitVersion"].as_str().is_none() {
            return Err(unreachable(&what, "GET /version did not answer a Kubernetes version"));
        }
        Ok(Vec::new())
    }
}

/// Seals the document's secrets for storage.
fn sealed(state: &AppState, mut document: Value) -> Value {
    state.secrets.seal(&mut document);
    document
}

/// Maps a unique violation to Tacker's conflicts (name taken, second default).
fn conflict(record: &VimRecord) -> ApiError {
    if record.is_default {
        ApiError::conflict(format!(
            "VIM '{}' cannot be the default: the project already has a default VIM, or the name is taken.",
            record.name
        ))
    } else {
        ApiError::conflict(format!("A VIM named '{}' already exists in the project.", record.name))
    }
}

/// POST /v1.0/vims: registers a VIM after checking it is reachable; 201 `{"vim": {...}}`.
pub async fn create(state: web::Data<AppState>, tenant: Tenant, body: JsonBody) -> ApiResult<HttpResponse> {
    let mut vim = vim_object(body.0)?;
    refuse_unknown(
        &vim,
        &["name", "description", "type", "auth_url", "auth_cred", "vim_project", "is_default", "tenant_id", "extra"],
        "vim",
    )?;
    let name = required_string(&vim, "name", "")?;
    if name.len() > 255 {
        return Err(ApiError::bad_request("name is longer than 255 characters."));
    }
    let description = optional_string(&vim, "description", "")?.unwrap_or_default();
    let vim_type = optional_string(&vim, "type", "")?.unwrap_or_else(|| OPENSTACK.into());
    if vim_type != OPENSTACK && vim_type != KUBERNETES {
        return Err(ApiError::bad_request(format!("type '{vim_type}' is not supported: openstack or kubernetes.")));
    }
    let mut auth_url = required_string(&vim, "auth_url", "")?;
    check_auth_url(&state, &auth_url).await?;
    if vim_type == OPENSTACK {
        auth_url = keystone_v3(&auth_url);
    }
    let is_default = optional_bool(&vim, "is_default")?.unwrap_or(false);
    let project = match optional_string(&vim, "tenant_id", "")?.filter(|tenant_id| !tenant_id.is_empty()) {
        Some(tenant_id) if tenant_id != tenant.project() && tenant.scope().is_some() => {
            return Err(ApiError::new(ErrorKind::Forbidden, "tenant_id names another project than yours."));
        }
        Some(tenant_id) => tenant_id,
        None => tenant.project().to_owned(),
    };
    let mut auth_cred =
        optional_object(&vim, "auth_cred")?.ok_or_else(|| ApiError::bad_request("auth_cred is required."))?;
    let mut vim_project =
        optional_object(&vim, "vim_project")?.ok_or_else(|| ApiError::bad_request("vim_project is required."))?;
    normalize_credentials(&vim_type, &auth_url, &mut auth_cred, &mut vim_project)?;
    let extra = vim.remove("extra").filter(|extra| !extra.is_null()).unwrap_or_else(|| json!({}));
    if !extra.is_object() {
        return Err(ApiError::bad_request("extra must be an object."));
    }

    let id = solgate_db::new_id();
    let mut document = json!({
        "id": id, "name": name, "description": description, "type": vim_type, "tenant_id": project,
        "auth_url": auth_url, "auth_cred": auth_cred, "vim_project": vim_project, "is_default": is_default,
        "extra": extra, "shared": false,
    });
    let regions = check_reachable(&state, &document).await?;
    document["placement_attr"] = json!({ "regions": regions });
    document["status"] = json!("ACTIVE");
    let created_at = solgate_db::repo::now_text();
    document["created_at"] = json!(created_at);
    document["updated_at"] = Value::Null;
    let record = VimRecord {
        id,
        project,
        name,
        vim_type,
        is_default,
        body: sealed(&state, document),
        created_at,
        updated_at: None,
    };
    let stored = record.clone();
    state
        .db(move |conn| {
            write_transaction(conn, |conn| match vims::insert(conn, &stored) {
                Ok(()) => Ok(()),
                Err(error) if error.is_unique_violation() => Err(conflict(&stored)),
                Err(error) => Err(ApiError::internal(error)),
            })
        })
        .await?;
    tracing::info!(vim = %record.id, name = %record.name, vim_type = %record.vim_type, "VIM registered");
    Ok(answer(actix_web::http::StatusCode::CREATED, &json!({ "vim": shown(&record) })))
}

/// GET /v1.0/vims: `{"vims": [...]}`, filtered by `id`, `name`, `type`, `is_default`,
/// `tenant_id` or `status` as Tacker's list is; `fields` is accepted (whole VIMs are shown).
pub async fn list(state: web::Data<AppState>, tenant: Tenant, req: HttpRequest) -> ApiResult<HttpResponse> {
    let mut filter = VimFilter { project: tenant.scope().map(str::to_owned), ..VimFilter::default() };
    let mut status = None;
    for (key, value) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
        let value = value.into_owned();
        match key.as_ref() {
            "id" => filter.id = Some(value),
            "name" => filter.name = Some(value),
            "type" => filter.vim_type = Some(value),
            "status" => status = Some(value),
            "is_default" => {
                filter.is_default = Some(match value.to_ascii_lowercase().as_str() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(ApiError::bad_request(format!("is_default '{value}' is not true or false."))),
                })
            }
            "tenant_id" => match &filter.project {
                Some(own) if *own != value => return Ok(answer(actix_web::http::StatusCode::OK, &json!({"vims": []}))),
                _ => filter.project = Some(value),
            },
            "fields" | "sort_key" | "sort_dir" => {}
            other => return Err(ApiError::bad_request(format!("Unknown query parameter '{other}'."))),
        }
    }
    let records = state.db(move |conn| vims::list(conn, &filter).map_err(ApiError::internal)).await?;
    let shown: Vec<Value> = records
        .iter()
        .map(shown)
        .filter(|vim| status.as_deref().is_none_or(|status| vim["status"] == status))
        .collect();
    Ok(answer(actix_web::http::StatusCode::OK, &json!({ "vims": shown })))
}

/// A VIM the request may see, else 404.
async fn visible(state: &AppState, tenant: &Tenant, id: &str) -> ApiResult<VimRecord> {
    let wanted = id.to_owned();
    let record = state.db(move |conn| vims::find(conn, &wanted).map_err(ApiError::internal)).await?;
    record.filter(|record| tenant.sees(&record.project)).ok_or_else(|| not_found(id))
}

/// GET /v1.0/vims/{id}: `{"vim": {...}}`.
pub async fn show(state: web::Data<AppState>, tenant: Tenant, path: web::Path<String>) -> ApiResult<HttpResponse> {
    let record = visible(&state, &tenant, vim_id(&path)).await?;
    Ok(answer(actix_web::http::StatusCode::OK, &json!({ "vim": shown(&record) })))
}

/// PUT /v1.0/vims/{id}: changes name, description, `is_default`, credentials or project
/// (re-checked against the VIM); type and `auth_url` stay.
pub async fn update(
    state: web::Data<AppState>,
    tenant: Tenant,
    path: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id = vim_id(&path).to_owned();
    let vim = vim_object(body.0)?;
    refuse_unknown(
        &vim,
        &["name", "description", "is_default", "auth_cred", "vim_project", "tenant_id", "extra"],
        "vim",
    )
    .map_err(|error| {
        if vim.contains_key("type") || vim.contains_key("auth_url") {
            ApiError::bad_request("type and auth_url of a VIM cannot be changed; register a new VIM.")
        } else {
            error
        }
    })?;
    let mut record = visible(&state, &tenant, &id).await?;
    let mut document = record.body.clone();
    state.secrets.open(&mut document).map_err(ApiError::internal)?;
    if let Some(tenant_id) = optional_string(&vim, "tenant_id", "")?
        && tenant_id != record.project
    {
        return Err(ApiError::bad_request("tenant_id of a VIM cannot be changed."));
    }
    if let Some(name) = optional_string(&vim, "name", "")? {
        if name.trim().is_empty() || name.len() > 255 {
            return Err(ApiError::bad_request("name must be 1 to 255 characters."));
        }
        record.name = name.clone();
        document["name"] = json!(name);
    }
    if let Some(description) = optional_string(&vim, "description", "")? {
        document["description"] = json!(description);
    }
    if let Some(is_default) = optional_bool(&vim, "is_default")? {
        record.is_default = is_default;
        document["is_default"] = json!(is_default);
    }
    if let Some(extra) = vim.get("extra").filter(|extra| !extra.is_null()) {
        if !extra.is_object() {
            return Err(ApiError::bad_request("extra must be an object."));
        }
        document["extra"] = extra.clone();
    }
    let new_cred = optional_object(&vim, "auth_cred")?;
    let new_project = optional_object(&vim, "vim_project")?;
    if new_cred.is_some() || new_project.is_some() {
        let mut auth_cred = document["auth_cred"].as_object().cloned().unwrap_or_default();
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
        let mut vim_project = document["vim_project"].as_object().cloned().unwrap_or_default();
        if let Some(new_project) = new_project {
            vim_project.extend(new_project);
        }
        let auth_url = document["auth_url"].as_str().unwrap_or_default().to_owned();
        normalize_credentials(&record.vim_type, &auth_url, &mut auth_cred, &mut vim_project)?;
        document["auth_cred"] = Value::Object(auth_cred);
        document["vim_project"] = Value::Object(vim_project);
        let regions = check_reachable(&state, &document).await?;
        document["placement_attr"] = json!({ "regions": regions });
    }
    let updated_at = solgate_db::repo::now_text();
    document["updated_at"] = json!(updated_at);
    record.updated_at = Some(updated_at);
    record.body = sealed(&state, document);
    let stored = record.clone();
    state
        .db(move |conn| {
            write_transaction(conn, |conn| match vims::update(conn, &stored) {
                Ok(true) => Ok(()),
                Ok(false) => Err(not_found(&stored.id)),
                Err(error) if error.is_unique_violation() => Err(conflict(&stored)),
                Err(error) => Err(ApiError::internal(error)),
            })
        })
        .await?;
    tracing::info!(vim = %record.id, "VIM updated");
    Ok(answer(actix_web::http::StatusCode::OK, &json!({ "vim": shown(&record) })))
}

/// DELETE /v1.0/vims/{id}: 204. Instances keep the connection they were instantiated
/// with (it was copied into them).
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, path: web::Path<String>) -> ApiResult<HttpResponse> {
    let record = visible(&state, &tenant, vim_id(&path)).await?;
    let id = record.id.clone();
    let deleted = state.db(move |conn| vims::delete(conn, &id).map_err(ApiError::internal)).await?;
    if !deleted {
        return Err(not_found(&record.id));
    }
    tracing::info!(vim = %record.id, "VIM deleted");
    Ok(HttpResponse::NoContent().finish())
}

/// The VimConnectionInfo (SOL003) of a registered VIM, its secrets still sealed (each
/// under the same key name it was sealed with, so the conductor opens them).
pub fn connection_info(record: &VimRecord) -> Value {
    let document = &record.body;
    let cred = &document["auth_cred"];
    let endpoint = document["auth_url"].clone();
    let mut connection = if record.vim_type == OPENSTACK {
        let mut access = json!({
            "username": cred["username"], "password": cred["password"],
            "project": document["vim_project"]["name"], "projectDomain": cred["project_domain_name"],
            "userDomain": cred["user_domain_name"],
        });
        if let Some(region) = document["placement_attr"]["regions"].get(0) {
            access["region"] = region.clone();
        }
        let mut interface = json!({ "endpoint": endpoint });
        if cred["cert_verify"] == "False" {
            interface["skipCertificateVerification"] = json!(true);
            interface["skipCertificateHostnameCheck"] = json!(true);
        }
        json!({"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3", "interfaceInfo": interface, "accessInfo": access})
    } else {
        let mut access = Map::new();
        for key in ["bearer_token", "username", "password", "oidc_token_url", "client_id", "client_secret"] {
            if let Some(value) = cred.get(key).filter(|value| value.as_str().is_some_and(|text| !text.is_empty())) {
                access.insert(key.to_owned(), value.clone());
            }
        }
        let mut interface = json!({ "endpoint": endpoint });
        if let Some(pem) = cred.get("ssl_ca_cert").filter(|pem| pem.as_str().is_some_and(|pem| !pem.is_empty())) {
            interface["ssl_ca_cert"] = pem.clone();
        }
        json!({"vimType": "ETSINFV.KUBERNETES.V_1", "interfaceInfo": interface, "accessInfo": access})
    };
    connection["vimId"] = json!(record.id);
    if let Some(extra) = document.get("extra").filter(|extra| extra.as_object().is_some_and(|map| !map.is_empty())) {
        connection["extra"] = extra.clone();
    }
    connection
}

/// Completes an LCM request's `vimConnectionInfo` from the registry: an entry that names a
/// `vimId` and carries no `accessInfo` gets the registered VIM's connection (422 when the
/// request may see no such VIM), and an instantiation without any connection gets its
/// project's default VIM, when it has one (else it stays as it was: the local simulated
/// VIM, where it is enabled).
pub async fn complete_vim_connections(
    state: &AppState,
    tenant: &Tenant,
    major: LcmMajor,
    operation: LcmOperation,
    body: &mut Value,
) -> ApiResult<()> {
    let v1 = major == LcmMajor::V1;
    let entries: Vec<(String, String)> = {
        let named = |key: String, entry: &Value| {
            let wants = entry["vimId"].as_str().filter(|_| entry.get("accessInfo").is_none_or(Value::is_null));
            wants.map(|vim_id| (key, vim_id.to_owned()))
        };
        match body.get("vimConnectionInfo") {
            Some(Value::Array(items)) => {
                items.iter().enumerate().filter_map(|(index, entry)| named(index.to_string(), entry)).collect()
            }
            Some(Value::Object(map)) => map.iter().filter_map(|(key, entry)| named(key.clone(), entry)).collect(),
            _ => Vec::new(),
        }
    };
    let empty = match body.get("vimConnectionInfo") {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    };
    let wants_default = empty && operation == LcmOperation::Instantiate;
    if entries.is_empty() && !wants_default {
        return Ok(());
    }
    let ids: Vec<String> = entries.iter().map(|(_, id)| id.clone()).collect();
    let project = tenant.project().to_owned();
    let (named, default) = state
        .db(move |conn| {
            let mut named = Vec::new();
            for id in &ids {
                named.push(vims::find(conn, id).map_err(ApiError::internal)?);
            }
            let default =
                if wants_default { vims::find_default(conn, &project).map_err(ApiError::internal)? } else { None };
            Ok((named, default))
        })
        .await?;
    for ((key, vim_id), record) in entries.iter().zip(named) {
        let record = record.filter(|record| tenant.sees(&record.project)).ok_or_else(|| {
            ApiError::unprocessable(format!(
                "vimConnectionInfo {key}: vimId {vim_id} names no registered VIM and the entry has no accessInfo."
            ))
        })?;
        let entry = if v1 {
            &mut body["vimConnectionInfo"][key.parse::<usize>().unwrap_or_default()]
        } else {
            &mut body["vimConnectionInfo"][key.as_str()]
        };
        let requested_type = entry["vimType"].as_str().unwrap_or_default().to_owned();
        let mut connection = connection_info(&record);
        if !requested_type.is_empty() && !same_type(&requested_type, connection["vimType"].as_str().unwrap_or_default())
        {
            return Err(ApiError::unprocessable(format!(
                "vimConnectionInfo {key}: vimType {requested_type} does not match VIM {vim_id}, a {} VIM.",
                record.vim_type
            )));
        }
        if let (Some(requested), Some(completed)) = (entry.as_object(), connection.as_object_mut()) {
            for (name, value) in requested {
                if !value.is_null() && name != "vimType" {
                    completed.entry(name.clone()).or_insert_with(|| value.clone());
                }
            }
            // A registered Kubernetes VIM asked for as a Helm VIM runs the Helm driver.
            if requested_type == VIM_TYPE_HELM {
                completed.insert("vimType".into(), json!(VIM_TYPE_HELM));
            }
            if let Some(extra) = requested.get("extra").filter(|extra| extra.is_object()) {
                completed.insert("extra".into(), extra.clone());
            }
        }
        *entry = connection;
    }
    if let Some(record) = default {
        let mut connection = connection_info(&record);
        body["vimConnectionInfo"] = if v1 {
            connection["id"] = json!("default");
            json!([connection])
        } else {
            json!({ "default": connection })
        };
        tracing::info!(vim = %record.id, "instantiation without vimConnectionInfo runs on the default VIM");
    }
    Ok(())
}

/// Whether a requested `vimType` is the registered VIM's (legacy spellings included).
fn same_type(requested: &str, registered: &str) -> bool {
    let normalized = match requested {
        "openstack" => "ETSINFV.OPENSTACK_KEYSTONE.V_3",
        "kubernetes" | VIM_TYPE_HELM => "ETSINFV.KUBERNETES.V_1",
        other => other,
    };
    normalized == registered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystone_urls_keep_their_version() {
        assert_eq!(keystone_v3("http://192.0.2.1/identity"), "http://192.0.2.1/identity/v3");
        assert_eq!(keystone_v3("http://192.0.2.1/identity/v3/"), "http://192.0.2.1/identity/v3");
    }

    #[test]
    fn openstack_credentials_get_tackers_defaults_and_unknown_keys_are_refused() {
        let mut cred = json!({"username": "nfv_user", "password": "secret"}).as_object().cloned().unwrap();
        let mut project = json!({"name": "nfv"}).as_object().cloned().unwrap();
        normalize_credentials(OPENSTACK, "http://k/v3", &mut cred, &mut project).unwrap();
        assert_eq!(cred["cert_verify"], "True");
        assert_eq!(cred["user_domain_name"], "Default");
        assert_eq!(project["project_domain_name"], "Default");
        assert_eq!(cred["project_name"], "nfv");

        let mut cred = json!({"username": "u", "password": "p", "token": "t"}).as_object().cloned().unwrap();
        let error = normalize_credentials(OPENSTACK, "http://k/v3", &mut cred, &mut project).unwrap_err();
        assert!(error.detail().contains("token"), "{}", error.detail());
        let mut cred = json!({"username": "u"}).as_object().cloned().unwrap();
        let error = normalize_credentials(OPENSTACK, "http://k/v3", &mut cred, &mut project).unwrap_err();
        assert_eq!(error.detail(), "auth_cred.password is required.");
        let mut cred = json!({}).as_object().cloned().unwrap();
        let mut namespace = json!({"name": "default"}).as_object().cloned().unwrap();
        let error = normalize_credentials(KUBERNETES, "https://k8s", &mut cred, &mut namespace).unwrap_err();
        assert!(error.detail().contains("bearer_token"), "{}", error.detail());
    }

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
        let connection = connection_info(&record);
        assert_eq!(connection["vimId"], "v1");
        assert_eq!(connection["vimType"], "ETSINFV.OPENSTACK_KEYSTONE.V_3");
        assert_eq!(connection["interfaceInfo"]["endpoint"], "http://k/v3");
        assert_eq!(connection["accessInfo"]["password"], "sealed:v1:abcd:xyz");
        assert_eq!(connection["accessInfo"]["project"], "nfv");
        assert_eq!(connection["accessInfo"]["region"], "RegionOne");
        assert!(same_type("openstack", "ETSINFV.OPENSTACK_KEYSTONE.V_3"));
        assert!(!same_type("kubernetes", "ETSINFV.OPENSTACK_KEYSTONE.V_3"));
    }
}
