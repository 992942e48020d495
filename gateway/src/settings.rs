//! Settings of the HTTP front end (the `[http]` table of the settings file).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Address to bind, `HOST:PORT`; port 0 picks a free port.
    pub listen: String,
    /// Base URL used in `Location` headers, `_links` and notifications, e.g.
    /// `https://vnfm.example.com`. Empty: `http://` + the bound address.
    pub public_endpoint: String,
    /// Largest accepted JSON request body, in bytes (larger → 413).
    pub max_body_bytes: usize,
    /// HTTP worker threads; 0 = one per core.
    pub workers: usize,
    /// Seconds in-flight requests get to finish after SIGTERM/SIGINT.
    pub shutdown_timeout_secs: u64,
    /// Rendered list entries kept in memory (0 disables the cache).
    pub render_cache_entries: usize,
    /// Bytes of rendered list entries kept in memory at most (0 disables the cache).
    pub render_cache_bytes: usize,
    /// HTTPS and mutual TLS of the listener (`[http.tls]`); empty: plain HTTP.
    pub tls: crate::tls::ServerTlsSettings,
    /// Check every JSON response body against its version's schema and log a violation
    /// (with the request id; metric `solgate_response_schema_violations_total`). Costs a
    /// validation per response: for staging and conformance runs.
    pub validate_responses: bool,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:9890".to_owned(),
            public_endpoint: String::new(),
            max_body_bytes: 1024 * 1024,
            workers: 0,
            shutdown_timeout_secs: 30,
            render_cache_entries: 50_000,
            render_cache_bytes: 16 * 1024 * 1024,
            tls: crate::tls::ServerTlsSettings::default(),
            validate_responses: false,
        }
    }
}

/// Page sizes of the list resources (the `[paging]` table). Paging is on by default
/// (Tacker's default of 0 = no paging makes large lists fail with "Response too big").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PagingSettings {
    pub vnf_instance_page_size: usize,
    pub lcm_op_occ_page_size: usize,
    pub subscription_page_size: usize,
    pub vnf_package_page_size: usize,
    /// VNF FM alarms (`/vnffm/v1/alarms`; Tacker's `vnffm_alarm_page_size`).
    pub alarm_page_size: usize,
    /// PM jobs and thresholds (Tacker's `vnfpm_pmjob_page_size`, `vnfpm_pmthreshold_page_size`).
    pub pm_job_page_size: usize,
    pub pm_threshold_page_size: usize,
}

impl Default for PagingSettings {
    fn default() -> Self {
        Self {
            vnf_instance_page_size: 100,
            lcm_op_occ_page_size: 100,
            subscription_page_size: 100,
            vnf_package_page_size: 100,
            alarm_page_size: 100,
            pm_job_page_size: 100,
            pm_threshold_page_size: 100,
        }
    }
}

/// Where an external NFVO sends its VNF package notifications: the `callbackUri` of the
/// subscription solgate makes is `{public_endpoint}` followed by this path. Outside `[auth]`
/// (see [`NotificationCredentials`]).
pub const NFVO_NOTIFICATIONS_PATH: &str = "/nfvo/v1/package_notifications";

/// The HTTP Basic credentials the NFVO's notifications must carry (`[nfvo]
/// notification_user_name` / `notification_password`).
#[derive(Clone)]
pub struct NotificationCredentials {
    pub user_name: String,
    pub password: String,
}

impl std::fmt::Debug for NotificationCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationCredentials").field("user_name", &self.user_name).finish_non_exhaustive()
    }
}

/// Tacker's Prometheus plugin (the `[prometheus_plugin]` table): Alertmanager's webhooks into
/// solgate. Each switch turns one webhook on; every one is off by default, and one that is on
/// answers only requests with the credentials below (Alertmanager's `http_config` sends
/// either kind). Outside `[auth]`, like the NFVO's package notifications.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PrometheusPluginSettings {
    /// `POST /alert`: alerts labelled `function_type: vnffm` raise and clear VNF FM alarms.
    pub fault_management: bool,
    /// `POST /alert/auto_healing`: alerts labelled `function_type: auto_heal` heal the VNFC
    /// they name (an instance whose `vnfConfigurableProperties.isAutohealEnabled` is true).
    pub auto_healing: bool,
    /// `POST /alert/auto_scaling`: alerts labelled `function_type: auto_scale` scale the
    /// instance they name (`vnfConfigurableProperties.isAutoscaleEnabled` true).
    pub auto_scaling: bool,
    /// `POST /pm_event` and `POST /pm_threshold`: alerts labelled `function_type: vnfpm` make
    /// the performance reports of PM jobs, `vnfpm_threshold` ones cross thresholds
    /// (docs/performance-management.md).
    pub performance_management: bool,
    /// HTTP Basic credentials of the webhooks (`http_config.basic_auth`); the password a PHC
    /// hash (`solgate hash-secret`) or, with a warning at start, the password itself.
    pub webhook_user_name: String,
    pub webhook_password: String,
    /// A bearer token of the webhooks (`http_config.authorization.credentials`), hashed or
    /// plain as the password.
    pub webhook_token: String,
}

impl PrometheusPluginSettings {
    /// Whether any webhook is on.
    pub fn any_enabled(&self) -> bool {
        self.fault_management || self.auto_healing || self.auto_scaling || self.performance_management
    }

    /// What makes the settings unusable: a webhook on without credentials (it would be open
    /// to anyone who can reach the port), or half of the Basic credentials.
    pub fn problem(&self) -> Option<String> {
        if self.webhook_user_name.is_empty() != self.webhook_password.is_empty() {
            return Some("webhook_user_name and webhook_password are set together or not at all".into());
        }
        let credentials = !self.webhook_password.is_empty() || !self.webhook_token.is_empty();
        (self.any_enabled() && !credentials).then(|| {
            "an enabled webhook needs credentials: webhook_user_name and webhook_password, or webhook_token".into()
        })
    }
}

impl std::fmt::Debug for PrometheusPluginSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusPluginSettings")
            .field("fault_management", &self.fault_management)
            .field("auto_healing", &self.auto_healing)
            .field("auto_scaling", &self.auto_scaling)
            .field("performance_management", &self.performance_management)
            .field("webhook_user_name", &self.webhook_user_name)
            .finish_non_exhaustive()
    }
}
