//! What every conductor task shares.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use solgate_db::{AnyConnection, Database, DbError};
use solgate_drivers::InfraDriver;
use solgate_schemas::Registry;

use crate::rpc::RpcPublisher;
use crate::settings::{ConductorSettings, RpcSettings};
use solgate_core::links::Links;
use solgate_core::settings::PackageSettings;

/// Infra drivers by `vimType`.
#[derive(Clone, Default)]
pub struct InfraDrivers {
    drivers: BTreeMap<&'static str, Arc<dyn InfraDriver>>,
}

impl InfraDrivers {
    pub fn with(mut self, driver: Arc<dyn InfraDriver>) -> Self {
        self.drivers.insert(driver.vim_type(), driver);
        self
    }

    pub fn get(&self, vim_type: &str) -> Option<Arc<dyn InfraDriver>> {
        self.drivers.get(vim_type).cloned()
    }

    pub fn vim_types(&self) -> Vec<&'static str> {
        self.drivers.keys().copied().collect()
    }
}

pub struct ConductorContext {
    /// This conductor's id (owner of the operations it runs).
    pub id: String,
    pub hostname: String,
    pub db: Database,
    pub links: Links,
    pub settings: ConductorSettings,
    pub rpc_settings: RpcSettings,
    pub publisher: Arc<dyn RpcPublisher>,
    pub infra: InfraDrivers,
    /// Where onboarded VNF packages live (one directory per package id).
    pub package_store: PathBuf,
    /// Limits and options of VNF package onboarding.
    pub packages: PackageSettings,
    pub registry: Arc<Registry>,
    pub metrics: crate::metrics::ConductorMetrics,
    /// Where every state change of an occurrence is made.
    pub machine: solgate_core::lifecycle::StateMachine,
    /// Notification delivery: settings, HTTP client and OAuth 2.0 token cache (shared with
    /// the gateway's callback tests in `solgate serve`).
    pub callbacks: Arc<solgate_core::callbacks::Callbacks>,
    /// Trust anchors and the SSRF guard of fetches a client steers (`upload_from_uri`).
    pub outbound: solgate_core::egress::Outbound,
    /// Opens the VIM and subscription credentials stored sealed.
    pub secrets: Arc<solgate_core::secrets::SecretBox>,
    /// Operation occurrences this conductor is running now. An occurrence it owns that is
    /// not in here was orphaned (its task failed): recovery moves it on like a dead peer's.
    pub running: RunningOps,
    /// The external NFVO's Grant client (`[nfvo] mode = "external"`); none: local grants.
    pub nfvo: Option<Arc<crate::nfvo::GrantClient>>,
    /// How a VNF package's scripts run (`[drivers] python_command`, `script_timeout_secs`).
    pub scripts: solgate_drivers::script::ScriptSettings,
}

/// The set of operation occurrences a conductor is running.
#[derive(Debug, Default, Clone)]
pub struct RunningOps(Arc<std::sync::Mutex<std::collections::HashSet<String>>>);

impl RunningOps {
    /// Marks `id` as running until the guard is dropped.
    pub fn enter(&self, id: &str) -> RunningGuard {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id.to_owned());
        RunningGuard { set: self.clone(), id: id.to_owned() }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(id)
    }
}

pub struct RunningGuard {
    set: RunningOps,
    id: String,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.set.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.id);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConductorError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("a database task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error(transparent)]
    Core(#[from] solgate_core::CoreError),
    #[error("{0}")]
    Other(String),
}

impl ConductorContext {
    /// Runs blocking database work off the async threads.
    pub async fn db_run<T, F>(&self, work: F) -> Result<T, ConductorError>
    where
        T: Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, DbError> + Send + 'static,
    {
        solgate_core::db_run(&self.db, move |conn| work(conn).map_err(ConductorError::from)).await
    }

    /// Runs a short keyed read (on SQLite where it is awaited: no thread switch).
    pub async fn db_read<T, F>(&self, work: F) -> Result<T, ConductorError>
    where
        T: Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, DbError> + Send + 'static,
    {
        solgate_core::db_read(&self.db, move |conn| work(conn).map_err(ConductorError::from)).await
    }

    /// The directory an onboarded package's files were extracted to.
    pub fn package_dir(&self, package_id: &str) -> PathBuf {
        solgate_core::packages::PackageFiles::new(&self.package_store, package_id).content_dir()
    }
}
