//! What every handler shares: built once by the application and passed in.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use solgate_core::links::Links;
use solgate_core::work::{RpcMessage, RpcPublisher};
use solgate_db::{AnyConnection, Database};
use solgate_schemas::Registry;

use crate::error::{ApiError, ApiResult};
use crate::metrics::Metrics;
use crate::settings::{HttpSettings, PagingSettings};

/// Something `/readyz` must find healthy (the database, the RPC transport).
pub trait ReadinessProbe: Send + Sync {
    fn name(&self) -> &'static str;
    fn check(&self) -> BoxFuture<'_, Result<(), String>>;
}

pub struct AppState {
    pub registry: Arc<Registry>,
    pub http: HttpSettings,
    pub paging: PagingSettings,
    /// What a list query may ask (`[query]`).
    pub query_limits: solgate_sol013::QueryLimits,
    /// Base URL for `Location` and `_links`, without a trailing slash.
    pub public_endpoint: String,
    pub links: Links,
    pub metrics: Metrics,
    pub readiness: Vec<Arc<dyn ReadinessProbe>>,
    pub db: Database,
    pub rpc: Arc<dyn RpcPublisher>,
    /// Marks the outbox rows of messages the broker confirmed (not used in process).
    pub published_marks: solgate_core::work::PublishedMarks,
    /// The conductor of this process (`solgate serve`): it takes accepted starts up in
    /// their accepting transaction; `None` in a gateway of its own (work goes by message).
    pub local_conductor: Option<Arc<dyn solgate_core::work::LocalConductor>>,
    /// `vimType`s the conductors have drivers for.
    pub vim_types: Vec<&'static str>,
    /// Rendered list entries (see `common::cache`).
    pub render_cache: crate::common::cache::RenderCache,
    /// Where VNF packages are stored (one directory per package id).
    pub package_store: PathBuf,
    /// Where the API's fail and cancel change an occurrence's state.
    pub machine: solgate_core::lifecycle::StateMachine,
    /// VNF package upload limits (the `[packages]` table).
    pub packages: solgate_core::settings::PackageSettings,
    /// Callback tests of new subscriptions (settings of the `[notifications]` table, and
    /// the OAuth 2.0 token cache the delivery worker shares in `solgate serve`).
    pub callbacks: Arc<solgate_core::callbacks::Callbacks>,
    /// Trust anchors and the SSRF guard of URIs clients hand in.
    pub outbound: solgate_core::egress::Outbound,
    /// Seals the credentials a request carries before they are stored.
    pub secrets: Arc<solgate_core::secrets::SecretBox>,
    /// Who a request comes from and whether it may (`[auth]`).
    pub auth: Arc<crate::auth::Authenticator>,
    /// `[nfvo] mode = "external"`: how long a VNF instance creation may wait for the
    /// package of a vnfdId not onboarded here to be taken from the NFVO; `None` otherwise.
    pub nfvo_package_wait: Option<std::time::Duration>,
    /// `[nfvo] package_notifications = true`: the credentials the NFVO's package
    /// notifications carry; `None` serves no notification endpoint.
    pub nfvo_notifications: Option<crate::settings::NotificationCredentials>,
    /// Alertmanager's webhooks (`[prometheus_plugin]`): which are on, and their credentials.
    pub webhooks: crate::alerts::webhook::Webhooks,
    /// The Prometheus rules of PM jobs and thresholds (`[vnfpm]`).
    pub vnfpm: Arc<solgate_core::pm::rules::RuleWriter>,
}

impl AppState {
    /// An absolute URL for a path of ours (`/vnflcm/v2/...`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.public_endpoint, path)
    }

    /// Runs blocking database work on the blocking pool, keeping the request's span.
    pub async fn db<T, F>(&self, work: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut AnyConnection) -> ApiResult<T> + Send + 'static,
    {
        let db = self.db.clone();
        let span = tracing::Span::current();
        self.db
            .run_blocking(move || {
                let _entered = span.enter();
                let mut conn = db.conn().map_err(|error| {
                    tracing::error!(%error, "no database connection");
                    ApiError::unavailable("The database is not available; try again later.", 5)
                })?;
                work(&mut conn)
            })
            .await
            .map_err(ApiError::internal)?
    }

    /// Runs a short keyed read (on SQLite where it is awaited: no thread switch).
    pub async fn read<T, F>(&self, work: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut AnyConnection) -> ApiResult<T> + Send + 'static,
    {
        solgate_core::db_read(&self.db, work).await
    }

    /// Runs `work` in a write transaction (on SQLite, in the group committer's batch on its
    /// writer thread), keeping the request's span; returns once it is durable.
    pub async fn write<T, F>(&self, work: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut AnyConnection) -> ApiResult<T> + Send + 'static,
    {
        solgate_core::db_write(&self.db, work).await
    }

    /// Publishes committed work. The 202 does not wait: if the transport is down the
    /// outbox relay publishes later, so nothing accepted is lost.
    pub fn dispatch(&self, outbox_id: i64, message: RpcMessage) {
        let rpc = self.rpc.clone();
        let marks = self.published_marks.clone();
        tokio::spawn(async move {
            match rpc.publish(&message).await {
                // Handed over in memory: the relay needs no mark (`RpcPublisher::in_process`).
                Ok(()) if rpc.in_process() => {}
                Ok(()) => marks.mark(outbox_id),
                Err(error) => {
                    tracing::warn!(%error, id = %message.id, "publish failed; the outbox relay will retry");
                }
            }
        });
    }
}
