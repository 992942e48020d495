//! Settings the domain needs on both doors: VNF package limits (the `[packages]` table),
//! subscriptions and notification delivery (the `[notifications]` table), and outgoing
//! HTTPS and its SSRF guard (the `[tls]` and `[egress]` tables).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Outgoing HTTPS (the `[tls]` table): to VIMs, callbacks, token endpoints, package sources.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsSettings {
    /// PEM file of extra trust anchors, added to the platform's (empty: none).
    pub ca_file: PathBuf,
    /// Let a VIM registration turn certificate checks off
    /// (`interfaceInfo.skipCertificateVerification`, as Tacker accepts). Off: such a VIM
    /// is refused.
    pub allow_vim_skip_verification: bool,
}

/// Which addresses a URI handed in by a client may reach (the `[egress]` table): callback
/// URIs, OAuth 2.0 token endpoints and `upload_from_uri` addresses. A denied network wins
/// over an allowed one; an empty allow list allows every address not denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EgressSettings {
    /// Networks (`ADDRESS/PREFIX` or an address) such URIs may reach; empty: any.
    pub allow_networks: Vec<String>,
    /// Networks they may never reach. The default denies link-local addresses (where cloud
    /// metadata services answer: 169.254.169.254, fd00:ec2::254) and the unspecified ones.
    pub deny_networks: Vec<String>,
    /// Redirects a package fetch follows, each to a permitted address (callbacks and token
    /// endpoints follow none: a redirect would carry credentials elsewhere).
    pub max_redirects: usize,
}

impl Default for EgressSettings {
    fn default() -> Self {
        Self {
            allow_networks: Vec::new(),
            deny_networks: ["169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "0.0.0.0/32", "::/128"]
                .map(str::to_owned)
                .to_vec(),
            max_redirects: 3,
        }
    }
}

/// VNF package storage and onboarding (the `[packages]` table). The gateway applies the
/// upload limit; the conductor applies the rest while onboarding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PackageSettings {
    /// Largest VNF package zip accepted, in bytes, by `PUT .../package_content` (larger →
    /// 413) and by `upload_from_uri` (the fetch stops and onboarding fails).
    pub max_upload_bytes: u64,
    /// Total bytes all entries of a package may decompress to (zip bombs fail onboarding).
    pub max_uncompressed_bytes: u64,
    /// Entries (files and directories) a package may have.
    pub max_entries: usize,
    /// Total bytes of TOSCA.meta, manifest and VNFD YAML read into memory.
    pub max_vnfd_bytes: u64,
    /// Seconds an `upload_from_uri` fetch may take in total.
    pub fetch_timeout_secs: u64,
    /// Seconds to establish the connection of an `upload_from_uri` fetch.
    pub fetch_connect_timeout_secs: u64,
    /// Set `operationalState` to ENABLED when onboarding succeeds, as Tacker does; with
    /// `false` a package stays DISABLED until a PATCH enables it.
    pub enable_on_onboarding: bool,
}

impl Default for PackageSettings {
    fn default() -> Self {
        Self {
            max_upload_bytes: 2 << 30,
            max_uncompressed_bytes: 4 << 30,
            max_entries: 10_000,
            max_vnfd_bytes: 16 << 20,
            fetch_timeout_secs: 300,
            fetch_connect_timeout_secs: 10,
            enable_on_onboarding: true,
        }
    }
}

/// Subscriptions and notification delivery (the `[notifications]` table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationSettings {
    /// Test a new subscription's callbackUri with a GET that must answer 204 before the
    /// subscription is created (SOL003 leaves the test to the VNFM; Tacker's
    /// `test_callback_uri`). A failed test is a 422.
    pub test_callback_uri: bool,
    /// Seconds the callback test may take.
    pub callback_test_timeout_secs: u64,
    /// Seconds one delivery attempt (one POST, or one OAuth 2.0 token request) may take.
    pub request_timeout_secs: u64,
    /// Attempts per notification, the first included, before it is given up.
    pub max_attempts: u32,
    /// A notification still undelivered this many seconds after it was queued is given up
    /// at its next failure, whatever attempts remain.
    pub max_age_secs: u64,
    /// Delay before the first retry, in milliseconds; it doubles with every failure.
    pub initial_backoff_ms: u64,
    /// Ceiling of the retry delay, in seconds.
    pub max_backoff_secs: u64,
    /// Milliseconds between polls of the notification outbox (new rows written by this
    /// process wake the worker at once; the poll finds those of other processes).
    pub poll_interval_ms: u64,
    /// Notifications in flight at once per conductor (at most one per subscription).
    pub max_concurrent_deliveries: usize,
    /// Seconds a conductor holds a notification it is delivering; if it dies, another
    /// conductor takes the notification over after this (so it may arrive twice, with the
    /// same id). Must exceed three request timeouts (token, POST, POST after a 401).
    pub claim_timeout_secs: u64,
    /// An OAuth 2.0 access token is renewed this many seconds before it expires.
    pub token_refresh_margin_secs: u64,
    /// Delivered and given-up notifications are kept this many seconds for operators,
    /// then removed.
    pub keep_finished_secs: u64,
    /// Client certificate chain (PEM) presented to callbacks and token endpoints of
    /// subscriptions with `TLS_CERT` or `OAUTH2_CLIENT_CERT` (Tacker:
    /// `notification_mtls_client_cert_file`); empty: such subscriptions are refused.
    pub mtls_client_cert_file: PathBuf,
    /// Its private key (PEM; Tacker: `notification_mtls_client_key_file`).
    pub mtls_client_key_file: PathBuf,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        Self {
            test_callback_uri: true,
            callback_test_timeout_secs: 5,
            request_timeout_secs: 10,
            max_attempts: 10,
            max_age_secs: 24 * 3600,
            initial_backoff_ms: 1000,
            max_backoff_secs: 300,
            poll_interval_ms: 200,
            max_concurrent_deliveries: 16,
            claim_timeout_secs: 60,
            token_refresh_margin_secs: 30,
            keep_finished_secs: 7 * 24 * 3600,
            mtls_client_cert_file: PathBuf::new(),
            mtls_client_key_file: PathBuf::new(),
        }
    }
}
