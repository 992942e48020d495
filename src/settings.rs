//! The one typed settings struct, loaded from an optional TOML file with environment
//! overrides, then command-line flags. Every field has a default, so `solgate serve`
//! needs no file. `deploy/solgate.sample.toml` is generated from [`Settings::default`]
//! (`solgate check-config --defaults`) and a test keeps it in sync.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use solgate_conductor::{ConductorSettings, RpcSettings};
use solgate_core::settings::{EgressSettings, NotificationSettings, PackageSettings, TlsSettings};
use solgate_db::DatabaseSettings;
use solgate_drivers::DriverSettings;
use solgate_gateway::HttpSettings;
use solgate_gateway::settings::PagingSettings;
use solgate_gateway::tls::ServerTlsSettings;
use solgate_schemas::VersionPolicy;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub http: HttpSettings,
    pub paging: PagingSettings,
    /// What a list query may ask: filter terms, values, lengths, selector entries.
    pub query: solgate_sol013::QueryLimits,
    pub data: DataSettings,
    pub database: DatabaseSettings,
    pub rpc: RpcSettings,
    pub conductor: ConductorSettings,
    pub drivers: DriverSettings,
    pub packages: PackageSettings,
    pub notifications: NotificationSettings,
    /// Outgoing HTTPS: extra trust anchors (`[tls] ca_file`).
    pub tls: TlsSettings,
    /// The SSRF guard of URIs clients hand in.
    pub egress: EgressSettings,
    /// The key that seals stored credentials (VIM, subscription, package source).
    pub secrets: solgate_core::secrets::SecretSettings,
    /// The NFVO: local grants, or an external NFVO's Grant interface (docs/nfvo.md).
    pub nfvo: solgate_conductor::nfvo::NfvoSettings,
    /// Inbound authentication and authorization (docs/security.md).
    pub auth: solgate_gateway::auth::AuthSettings,
    /// Alertmanager's webhooks, Tacker's Prometheus plugin (docs/fault-management.md); each
    /// is off unless switched on, and needs credentials then.
    pub prometheus_plugin: solgate_gateway::settings::PrometheusPluginSettings,
    /// The Prometheus PM jobs and thresholds are measured by (docs/performance-management.md).
    pub vnfpm: solgate_core::pm::rules::VnfpmSettings,
    pub log: LogSettings,
    /// What the process gives back to the system once it serves.
    pub memory: MemorySettings,
    /// Deprecation and retirement of API versions, e.g.
    /// `[[versions]] api = "vnflcm", version = "1.3.0", deprecated = true`.
    pub versions: Vec<VersionPolicy>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataSettings {
    /// Holds the SQLite file (embedded default) and the VNF package store.
    pub dir: PathBuf,
}

impl Default for DataSettings {
    fn default() -> Self {
        Self { dir: PathBuf::from("./solgate-data") }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemorySettings {
    /// Once listening, ask the kernel to reclaim the executable's resident code and read-only
    /// data: start-up's pages go, serving's come back on first use (`crate::startup_pages`).
    pub release_startup_pages: bool,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self { release_startup_pages: true }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    pub format: LogFormat,
    /// A tracing filter, e.g. `info` or `info,solgate_conductor=debug`; `RUST_LOG` wins.
    pub level: String,
    /// One line per HTTP request (target `solgate::access`).
    pub access_log: bool,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self { format: LogFormat::Human, level: "info".to_owned(), access_log: true }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read settings file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("settings file {path} is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("invalid setting `{key}`: {message}")]
    Invalid { key: String, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
}

/// Environment variables that override one key each, for the common cases.
const SHORTHANDS: &[(&str, &str)] = &[
    ("SOLGATE_LISTEN", "http.listen"),
    ("SOLGATE_DATA_DIR", "data.dir"),
    ("SOLGATE_DATABASE_URL", "database.url"),
    ("SOLGATE_PUBLIC_ENDPOINT", "http.public_endpoint"),
    ("SOLGATE_LOG_FORMAT", "log.format"),
];

/// Prefix of the generic overrides: `SOLGATE__RPC__TRANSPORT=amqp` sets `rpc.transport`.
const ENV_PREFIX: &str = "SOLGATE__";

impl Settings {
    /// File (if any), then environment, then validation. `env` is passed in so tests
    /// do not depend on the process environment.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Settings, SettingsError> {
        let mut table = match file {
            None => toml::Table::new(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| SettingsError::Read { path: path.to_owned(), source })?;
                text.parse::<toml::Table>()
                    .map_err(|error| SettingsError::Syntax { path: path.to_owned(), message: error.to_string() })?
            }
        };
        let env: BTreeMap<String, String> = env.into_iter().collect();
        for (var, key) in SHORTHANDS {
            if let Some(value) = env.get(*var) {
                set_key(&mut table, key, parse_env_value(value))
                    .map_err(|message| SettingsError::Env { var: (*var).to_owned(), message })?;
            }
        }
        for (var, value) in &env {
            if let Some(path) = var.strip_prefix(ENV_PREFIX) {
                let key = path.to_ascii_lowercase().replace("__", ".");
                set_key(&mut table, &key, parse_env_value(value))
                    .map_err(|message| SettingsError::Env { var: var.clone(), message })?;
            }
        }
        Self::from_table(table)
    }

    fn from_table(table: toml::Table) -> Result<Settings, SettingsError> {
        let settings: Settings = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|error| {
            let key = error.path().to_string();
            SettingsError::Invalid { key, message: error.into_inner().to_string() }
        })?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks that serde cannot express.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let invalid = |key: &str, message: String| SettingsError::Invalid { key: key.to_owned(), message };
        if self.http.listen.parse::<std::net::SocketAddr>().is_err() && !self.http.listen.contains(':') {
            return Err(invalid("http.listen", format!("`{}` is not HOST:PORT", self.http.listen)));
        }
        if !self.http.public_endpoint.is_empty() {
            url::Url::parse(&self.http.public_endpoint)
                .map_err(|error| invalid("http.public_endpoint", error.to_string()))?;
        }
        if let Some(key) = self.drivers.zero_key() {
            return Err(invalid(key, "must be positive".into()));
        }
        let query = &self.query;
        if [
            query.max_filter_terms,
            query.max_filter_values,
            query.max_value_length,
            query.max_attribute_depth,
            query.max_attribute_length,
            query.max_selector_entries,
        ]
        .contains(&0)
        {
            return Err(invalid("query", "every limit must be positive".into()));
        }
        self.nfvo.validate().map_err(|message| invalid("nfvo", message))?;
        if let Some(message) = self.prometheus_plugin.problem() {
            return Err(invalid("prometheus_plugin", message));
        }
        solgate_core::pm::rules::check_settings(&self.vnfpm).map_err(|message| invalid("vnfpm", message))?;
        if self.database.blocking_threads == Some(0) {
            return Err(invalid("database.blocking_threads", "must be positive".into()));
        }
        if self.http.max_body_bytes == 0 {
            return Err(invalid("http.max_body_bytes", "must be positive".into()));
        }
        if self.packages.max_upload_bytes == 0 || self.packages.max_entries == 0 {
            return Err(invalid("packages", "max_upload_bytes and max_entries must be positive".into()));
        }
        let notifications = &self.notifications;
        if notifications.max_attempts == 0
            || notifications.max_concurrent_deliveries == 0
            || notifications.poll_interval_ms == 0
        {
            return Err(invalid(
                "notifications",
                "max_attempts, max_concurrent_deliveries and poll_interval_ms must be positive".into(),
            ));
        }
        // A claim must outlive one attempt (token request, POST, POST after a 401), or a
        // second conductor would send the same notification while the first still is.
        if notifications.claim_timeout_secs <= notifications.request_timeout_secs.saturating_mul(3) {
            return Err(invalid(
                "notifications.claim_timeout_secs",
                "must exceed three times notifications.request_timeout_secs".into(),
            ));
        }
        if self.conductor.lease_timeout_secs <= self.conductor.heartbeat_interval_secs {
            return Err(invalid("conductor.lease_timeout_secs", "must exceed heartbeat_interval_secs".into()));
        }
        solgate_core::egress::EgressPolicy::new(&self.egress).map_err(|message| invalid("egress", message))?;
        let registry = solgate_schemas::Registry::builtin().map_err(|error| invalid("versions", error.to_string()))?;
        registry.with_policies(&self.versions).map_err(|error| invalid("versions", error.to_string()))?;
        Ok(())
    }

    /// What would stop the files the settings name from working (`check-config`): TLS
    /// files missing or unreadable, a key that does not match its certificate, an expired
    /// certificate, unreadable trust anchors or notification client certificate.
    pub fn file_problems(&self) -> Vec<String> {
        let now = rustls_pki_types::UnixTime::now();
        let mut found: Vec<String> =
            solgate_gateway::tls::problems(&self.http.tls, now).iter().map(ToString::to_string).collect();
        if !self.tls.ca_file.as_os_str().is_empty()
            && let Err(error) = solgate_core::egress::read_trust_anchors(&self.tls.ca_file)
        {
            found.push(format!("tls.ca_file: {error}"));
        }
        let client = ServerTlsSettings {
            cert_file: self.notifications.mtls_client_cert_file.clone(),
            key_file: self.notifications.mtls_client_key_file.clone(),
            client_ca_file: PathBuf::new(),
        };
        found.extend(
            solgate_gateway::tls::problems(&client, now)
                .iter()
                .map(|problem| problem.to_string().replace("http.tls.cert_file", "notifications.mtls_client_cert_file"))
                .map(|problem| problem.replace("http.tls.key_file", "notifications.mtls_client_key_file"))
                .map(|problem| problem.replace("http.tls", "notifications.mtls_client_*")),
        );
        found
    }

    /// What would stop `[auth]` from working (`check-config`): clients, issuers, the Keystone
    /// settings and the policy file, checked as the server checks them at start.
    pub fn auth_problems(&self) -> Vec<String> {
        let outbound = match solgate_core::egress::Outbound::new(&self.tls, &self.egress) {
            Ok(outbound) => outbound,
            Err(error) => return vec![format!("tls/egress: {error}")],
        };
        match solgate_gateway::auth::Authenticator::new(&self.auth, Vec::new(), &outbound) {
            Ok(_) => Vec::new(),
            Err(error) => vec![error],
        }
    }

    /// The database URL in effect: the configured one, or SQLite in the data directory.
    pub fn database_url(&self) -> String {
        if self.database.url.is_empty() {
            format!("sqlite://{}", self.data.dir.join("solgate.db").display())
        } else {
            self.database.url.clone()
        }
    }

    /// The effective settings as TOML, secrets masked (for `check-config`).
    pub fn to_masked_toml(&self) -> String {
        let mut effective = self.clone();
        effective.database.url = self.database_url();
        let mut value = toml::Value::try_from(&effective).unwrap_or(toml::Value::Table(toml::Table::new()));
        mask_secrets(&mut value, "");
        toml::to_string_pretty(&value).unwrap_or_default()
    }

    /// The documented defaults, as written to `deploy/solgate.sample.toml`.
    pub fn defaults_toml() -> String {
        let body = toml::to_string_pretty(&Settings::default()).unwrap_or_default();
        format!(
            "# solgate settings with every default value (generated by `solgate check-config --defaults`).\n\
             # Every key is optional. Environment overrides: SOLGATE_LISTEN, SOLGATE_DATA_DIR,\n\
             # SOLGATE_DATABASE_URL, SOLGATE_PUBLIC_ENDPOINT, SOLGATE_LOG_FORMAT, and\n\
             # SOLGATE__SECTION__KEY for any key (e.g. SOLGATE__RPC__TRANSPORT=amqp).\n\
             # Deprecating a version: add\n\
             #   [[versions]]\n\
             #   api = \"vnflcm\"\n\
             #   version = \"1.3.0\"\n\
             #   deprecated = true\n\
             #   deprecated_since = \"2026-10-01T00:00:00Z\"\n\
             #   retirement_date = \"2027-06-30T00:00:00Z\"\n\
             #   retired = false\n\n{body}"
        )
    }
}

/// An environment value as TOML if it parses as a scalar or array, else as a string.
fn parse_env_value(raw: &str) -> toml::Value {
    match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut table) => table.remove("v").unwrap_or_else(|| toml::Value::String(raw.to_owned())),
        Err(_) => toml::Value::String(raw.to_owned()),
    }
}

fn set_key(table: &mut toml::Table, dotted: &str, value: toml::Value) -> Result<(), String> {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else { return Err("empty key".into()) };
    let mut current = table;
    for part in parts {
        let entry = current.entry(part.to_owned()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = entry.as_table_mut().ok_or_else(|| format!("`{part}` is not a table"))?;
    }
    // Strings stay strings where the target is textual: "8080" must not become an integer
    // for a key like `listen` — deserialisation reports a type mismatch by key if it matters.
    current.insert(last.to_owned(), value);
    Ok(())
}

const SECRET_KEY_PARTS: &[&str] = &["password", "secret", "token"];

fn mask_secrets(value: &mut toml::Value, key: &str) {
    match value {
        toml::Value::Table(table) => {
            for (name, inner) in table.iter_mut() {
                mask_secrets(inner, name);
            }
        }
        toml::Value::Array(items) => items.iter_mut().for_each(|item| mask_secrets(item, key)),
        toml::Value::String(text) => {
            let lowered = key.to_ascii_lowercase();
            if SECRET_KEY_PARTS.iter().any(|part| lowered.contains(part)) {
                *text = "********".to_owned();
            } else if let Ok(mut url) = url::Url::parse(text)
                && url.password().is_some()
                && url.set_password(Some("********")).is_ok()
            {
                *text = url.to_string();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn check_config_reports_auth_settings_the_server_would_refuse() {
        let settings = Settings::load(None, env(&[])).unwrap();
        assert!(settings.auth_problems().is_empty(), "the defaults are fine");
        let keystone = Settings::load(None, env(&[("SOLGATE__AUTH__MODE", "keystone")])).unwrap();
        let problems = keystone.auth_problems();
        assert!(problems.iter().any(|problem| problem.contains("auth.keystone.auth_url")), "{problems:?}");
        let projectless = Settings::load(
            None,
            env(&[("SOLGATE__AUTH__CLIENTS", r#"[{id = "c", secret = "s", roles = ["member"]}]"#)]),
        )
        .unwrap();
        let problems = projectless.auth_problems();
        assert!(problems.iter().any(|problem| problem.contains("needs a project")), "{problems:?}");
    }

    #[test]
    fn defaults_need_no_file() {
        let settings = Settings::load(None, env(&[])).unwrap();
        assert_eq!(settings.http.listen, "127.0.0.1:9890");
        assert_eq!(settings.database_url(), "sqlite://./solgate-data/solgate.db");
        assert_eq!(settings.rpc.transport, solgate_conductor::RpcTransportKind::InProcess);
    }

    #[test]
    fn environment_overrides_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, "[http]\nlisten = \"0.0.0.0:1\"\n[rpc]\nprefetch = 3\n").unwrap();
        let settings = Settings::load(
            Some(&path),
            env(&[("SOLGATE_LISTEN", "127.0.0.1:0"), ("SOLGATE__RPC__TRANSPORT", "amqp"), ("SOLGATE_DATA_DIR", "/x")]),
        )
        .unwrap();
        assert_eq!(settings.http.listen, "127.0.0.1:0");
        assert_eq!(settings.rpc.prefetch, 3);
        assert_eq!(settings.rpc.transport, solgate_conductor::RpcTransportKind::Amqp);
        assert_eq!(settings.data.dir, PathBuf::from("/x"));
    }

    #[test]
    fn bad_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, "[http]\nlisen = \"x\"\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("lisen"), "{error}");

        std::fs::write(&path, "[rpc]\nprefetch = \"many\"\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("rpc.prefetch"), "{error}");

        std::fs::write(&path, "[[versions]]\napi = \"vnflcm\"\nversion = \"7.0.0\"\ndeprecated = true\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("versions") && error.contains("7.0.0"), "{error}");
    }

    #[test]
    fn secrets_are_masked() {
        let mut settings = Settings::default();
        settings.database.url = "postgres://solgate:hunter2@db/solgate".into();
        settings.nfvo.notification_password = "notifier-sekrit".into();
        let text = settings.to_masked_toml();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("notifier-sekrit"), "{text}");
        assert!(!text.contains("guest:guest"), "{text}");
        assert!(text.contains("********"), "{text}");
    }

    #[test]
    fn blocking_pool_follows_the_connection_pool_unless_set() {
        let settings = Settings::load(None, env(&[("SOLGATE__DATABASE__POOL_SIZE", "20")])).unwrap();
        assert_eq!(settings.database.blocking_pool_size(), 22);
        let settings = Settings::load(None, env(&[("SOLGATE__DATABASE__BLOCKING_THREADS", "4")])).unwrap();
        assert_eq!(settings.database.blocking_pool_size(), 4);
        let error = Settings::load(None, env(&[("SOLGATE__DATABASE__BLOCKING_THREADS", "0")])).unwrap_err().to_string();
        assert!(error.contains("database.blocking_threads"), "{error}");
    }

    #[test]
    fn sample_file_matches_defaults() {
        let sample = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/solgate.sample.toml"))
            .expect("deploy/solgate.sample.toml exists; regenerate with `solgate check-config --defaults`");
        assert_eq!(sample, Settings::defaults_toml(), "regenerate with `solgate check-config --defaults`");
        let parsed = Settings::load(
            Some(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/solgate.sample.toml"))),
            env(&[]),
        )
        .unwrap();
        assert_eq!(parsed, Settings::default());
    }

    #[test]
    fn notification_settings_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, "[notifications]\nmax_attempts = 0\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("notifications") && error.contains("max_attempts"), "{error}");

        std::fs::write(&path, "[notifications]\nrequest_timeout_secs = 30\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("notifications.claim_timeout_secs"), "{error}");

        let settings =
            Settings::load(Some(&path), env(&[("SOLGATE__NOTIFICATIONS__CLAIM_TIMEOUT_SECS", "120")])).unwrap();
        assert_eq!((settings.notifications.request_timeout_secs, settings.notifications.claim_timeout_secs), (30, 120));
        assert!(settings.notifications.test_callback_uri);
    }

    #[test]
    fn an_enabled_webhook_needs_credentials_which_are_masked() {
        let error = Settings::load(None, env(&[("SOLGATE__PROMETHEUS_PLUGIN__FAULT_MANAGEMENT", "true")]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("prometheus_plugin") && error.contains("credentials"), "{error}");
        let settings = Settings::load(
            None,
            env(&[
                ("SOLGATE__PROMETHEUS_PLUGIN__AUTO_HEALING", "true"),
                ("SOLGATE__PROMETHEUS_PLUGIN__WEBHOOK_USER_NAME", "alertmanager"),
                ("SOLGATE__PROMETHEUS_PLUGIN__WEBHOOK_PASSWORD", "webhook-sekrit"),
                ("SOLGATE__PROMETHEUS_PLUGIN__WEBHOOK_TOKEN", "token-sekrit"),
            ]),
        )
        .unwrap();
        assert!(settings.prometheus_plugin.auto_healing && !settings.prometheus_plugin.fault_management);
        let shown = format!("{}{settings:?}", settings.to_masked_toml());
        assert!(!shown.contains("webhook-sekrit") && !shown.contains("token-sekrit"), "{shown}");
        assert!(!Settings::default().prometheus_plugin.any_enabled(), "every webhook is off by default");
    }

    #[test]
    fn nfvo_settings_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, "[nfvo]\nmode = \"external\"\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("nfvo.endpoint"), "{error}");

        std::fs::write(&path, "[nfvo]\nmode = \"external\"\nendpoint = \"http://nfvo:9890\"\n").unwrap();
        let error = Settings::load(Some(&path), env(&[])).unwrap_err().to_string();
        assert!(error.contains("https"), "plain HTTP only when allowed: {error}");

        let settings = Settings::load(
            Some(&path),
            env(&[
                ("SOLGATE__NFVO__ENDPOINT", "https://nfvo:9890"),
                ("SOLGATE__NFVO__AUTH_TYPE", "basic"),
                ("SOLGATE__NFVO__USER_NAME", "vnfm"),
                ("SOLGATE__NFVO__PASSWORD", "nfvo-sekrit"),
            ]),
        )
        .unwrap();
        assert_eq!(settings.nfvo.mode, solgate_conductor::nfvo::NfvoMode::External);
        assert!(!settings.to_masked_toml().contains("nfvo-sekrit"));
        assert!(!format!("{settings:?}").contains("nfvo-sekrit"));
    }
}
