//! `solctl vim …`: VIMs registered with solgate, in python-tackerclient's shapes.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use serde_yaml_ng::Value as Yaml;

use super::context::{Context, Outcome};
use crate::Failure;
use crate::cli::Vim;
use crate::output::{Column, record_columns};

/// A scalar of the config file as text (`True`/`False` for booleans, as Python prints them);
/// anything else reads as absent.
#[derive(Default)]
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Text(match Yaml::deserialize(d)? {
            Yaml::String(text) => Some(text),
            Yaml::Bool(flag) => Some(if flag { "True".into() } else { "False".into() }),
            Yaml::Number(number) => Some(number.to_string()),
            _ => None,
        }))
    }
}

/// `auth_cred` and `vim_project` of a VIM body.
type Access = (Map<String, Value>, Map<String, Value>);

/// The YAML python-tackerclient's `--config-file` takes.
#[derive(Default, Deserialize)]
#[serde(default)]
struct VimConfigFile {
    auth_url: Text,
    #[serde(rename = "type")]
    kind: Text,
    bearer_token: Text,
    username: Text,
    password: Text,
    ssl_ca_cert: Text,
    oidc_token_url: Text,
    client_id: Text,
    client_secret: Text,
    project_name: Text,
    user_domain_name: Text,
    cert_verify: Text,
    project_domain_name: Text,
}

impl VimConfigFile {
    fn read(path: &Path) -> Result<VimConfigFile, Failure> {
        let text =
            std::fs::read_to_string(path).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
        let config: Yaml =
            serde_yaml_ng::from_str(&text).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
        let Yaml::Mapping(mut entries) = config else { return Ok(VimConfigFile::default()) };
        // serde would take an integer key for a field's index.
        entries.retain(|key, _| key.is_string());
        Ok(serde_yaml_ng::from_value(Yaml::Mapping(entries)).unwrap_or_default())
    }

    /// `auth_cred` and `vim_project` of a Kubernetes VIM.
    fn kubernetes(&self) -> Access {
        let mut cred = Map::new();
        let fields = [
            ("bearer_token", &self.bearer_token),
            ("username", &self.username),
            ("password", &self.password),
            ("ssl_ca_cert", &self.ssl_ca_cert),
            ("oidc_token_url", &self.oidc_token_url),
            ("client_id", &self.client_id),
            ("client_secret", &self.client_secret),
        ];
        for (key, Text(value)) in fields {
            if let Some(value) = value {
                cred.insert(key.into(), json!(value));
            }
        }
        let mut project = Map::new();
        project.insert("name".into(), json!(self.project_name.0.as_deref().unwrap_or("default")));
        (cred, project)
    }

    /// `auth_cred` and `vim_project` of an OpenStack VIM (Keystone v3 password).
    fn openstack(&self, path: &Path) -> Result<Access, Failure> {
        let mut cred = Map::new();
        for (key, Text(value)) in [("username", &self.username), ("password", &self.password)] {
            let value =
                value.as_ref().ok_or_else(|| Failure::Usage(format!("{}: {key} is required", path.display())))?;
            cred.insert(key.into(), json!(value));
        }
        cred.insert("user_domain_name".into(), json!(self.user_domain_name.0.as_deref().unwrap_or("Default")));
        cred.insert("cert_verify".into(), json!(self.cert_verify.0.as_deref().unwrap_or("True")));
        let mut project = Map::new();
        project.insert("name".into(), json!(self.project_name.0.as_deref().unwrap_or_default()));
        project.insert("project_domain_name".into(), json!(self.project_domain_name.0.as_deref().unwrap_or("Default")));
        Ok((cred, project))
    }
}

/// The `vim` part of a register/set body from the config file: `auth_url`, `auth_cred`,
/// `vim_project` and `type`.
fn vim_from_config(path: &Path) -> Result<Map<String, Value>, Failure> {
    let config = VimConfigFile::read(path)?;
    let auth_url =
        config.auth_url.0.clone().ok_or_else(|| Failure::Usage(format!("{}: auth_url is required", path.display())))?;
    let kind = config.kind.0.clone().unwrap_or_else(|| "openstack".into());
    let (cred, project) = if kind == "kubernetes" { config.kubernetes() } else { config.openstack(path)? };
    let mut vim = Map::new();
    vim.insert("type".into(), json!(kind));
    vim.insert("auth_url".into(), json!(auth_url));
    vim.insert("auth_cred".into(), Value::Object(cred));
    vim.insert("vim_project".into(), Value::Object(project));
    Ok(vim)
}

/// python-tackerclient's `vim list` columns.
const LIST_COLUMNS: [(&str, &str); 6] = [
    ("id", "ID"),
    ("name", "Name"),
    ("tenant_id", "Tenant_id"),
    ("type", "Type"),
    ("is_default", "Is Default"),
    ("status", "Status"),
];

impl Context {
    pub(super) async fn vim(&self, command: Vim) -> Outcome {
        let client = &self.client;
        match command {
            Vim::Register { name, config_file, description, is_default } => {
                let mut vim = vim_from_config(&config_file)?;
                vim.insert("name".into(), json!(name));
                vim.insert("is_default".into(), json!(is_default));
                if let Some(description) = description {
                    vim.insert("description".into(), json!(description));
                }
                let registered = client.register_vim(Value::Object(vim)).await?;
                self.print(&registered, record_columns(&registered))
            }
            Vim::List => {
                let vims = client.list_vims().await?;
                let columns = LIST_COLUMNS.iter().map(|(attribute, title)| Column::titled(attribute, title)).collect();
                self.print_list(&vims, columns)
            }
            Vim::Show { vim } => {
                let shown = client.show_vim(&vim).await?;
                self.print(&shown, record_columns(&shown))
            }
            Vim::Set { vim, name, description, is_default, config_file } => {
                self.set_vim(&vim, name, description, is_default, config_file.as_deref()).await
            }
            Vim::Delete { vim } => self.delete_each("VIM", &vim, async |id: &str| client.delete_vim(id).await).await,
        }
    }

    async fn set_vim(
        &self,
        vim: &str,
        name: Option<String>,
        description: Option<String>,
        is_default: Option<bool>,
        config_file: Option<&Path>,
    ) -> Outcome {
        let mut changes = match config_file {
            Some(path) => {
                let mut config = vim_from_config(path)?;
                // type and auth_url cannot change: only the credentials are sent.
                config.retain(|key, _| key == "auth_cred" || key == "vim_project");
                config
            }
            None => Map::new(),
        };
        if let Some(name) = name {
            changes.insert("name".into(), json!(name));
        }
        if let Some(description) = description {
            changes.insert("description".into(), json!(description));
        }
        if let Some(is_default) = is_default {
            changes.insert("is_default".into(), json!(is_default));
        }
        if changes.is_empty() {
            return Err(Failure::Usage(
                "nothing to change: give --name, --description, --is-default or --config-file".into(),
            ));
        }
        let updated = self.client.update_vim(vim, Value::Object(changes)).await?;
        self.print(&updated, record_columns(&updated))
    }
}
