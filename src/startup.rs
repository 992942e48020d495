//! Building and running the application: the HTTP gateway, the conductor, or both in one
//! process (`solgate serve`), over the RPC transport and database the settings name.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use anyhow::Context;
use futures_util::future::BoxFuture;
use solgate_conductor::rpc::amqp::AmqpTransport;
use solgate_conductor::rpc::{RpcConsumer, RpcPublisher, all_queues, in_process};
use solgate_conductor::{ConductorContext, InfraDrivers, RpcTransportKind};
use solgate_core::egress::Outbound;
use solgate_core::lifecycle::{LcmMetrics, StateMachine};
use solgate_core::links::Links;
use solgate_core::secrets::SecretBox;
use solgate_db::Database;
use solgate_drivers::LocalVim;
use solgate_gateway::settings::NotificationCredentials;
use solgate_gateway::tls::ServerTls;
use solgate_gateway::{AppState, Metrics, ReadinessProbe};
use solgate_schemas::{Api, Registry};
use tokio_util::sync::CancellationToken;

use crate::settings::Settings;

/// Which parts run in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Gateway and conductor in one process (embedded default).
    Serve,
    /// HTTP front end only.
    Gateway,
    /// Conductor only (plus /healthz, /readyz and /metrics over HTTP).
    Conductor,
}

impl Role {
    fn runs_conductor(self) -> bool {
        matches!(self, Role::Serve | Role::Conductor)
    }
}

pub struct Application {
    port: u16,
    public_endpoint: String,
    server: actix_web::dev::Server,
    conductor: Option<tokio::task::JoinHandle<()>>,
    stop: CancellationToken,
    transport: Option<AmqpTransport>,
    tls: Option<Arc<ServerTls>>,
    state: web::Data<AppState>,
    api: bool,
}

/// SIGHUP reads the listener's certificate, key and client CA again; open connections
/// keep their sessions. A failed reload keeps the files in use.
fn reload_on_hangup(tls: Arc<ServerTls>, stop: CancellationToken) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
        tracing::warn!("cannot listen for SIGHUP; TLS certificates will not be reloaded");
        return;
    };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                signal = hangups.recv() => if signal.is_none() { return },
            }
            match tls.reload() {
                Ok(()) => tracing::info!("TLS certificates reloaded"),
                Err(error) => tracing::error!(%error, "TLS certificates not reloaded; the previous ones stay in use"),
            }
        }
    });
}

/// The publisher every process has, the consumer a conductor has, and the AMQP
/// connection to shut down (none in-process).
type Transport = (Arc<dyn RpcPublisher>, Option<Box<dyn RpcConsumer>>, Option<AmqpTransport>);

struct DatabaseProbe(Database);

impl ReadinessProbe for DatabaseProbe {
    fn name(&self) -> &'static str {
        "database"
    }

    fn check(&self) -> BoxFuture<'_, Result<(), String>> {
        let database = self.0.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || database.ping())
                .await
                .map_err(|error| error.to_string())?
                .map_err(|error| error.to_string())
        })
    }
}

struct RpcProbe(Arc<dyn RpcPublisher>);

impl ReadinessProbe for RpcProbe {
    fn name(&self) -> &'static str {
        "rpc"
    }

    fn check(&self) -> BoxFuture<'_, Result<(), String>> {
        let connected = self.0.is_connected();
        Box::pin(async move { if connected { Ok(()) } else { Err("not connected".to_owned()) } })
    }
}

/// The key that seals stored credentials: `SOLGATE_SECRET_KEY`, else `[secrets] key_file`,
/// else `<data dir>/secret.key` (created on first start).
pub fn secret_box(settings: &Settings) -> anyhow::Result<SecretBox> {
    let from_env = std::env::var("SOLGATE_SECRET_KEY").ok();
    Ok(SecretBox::load(&settings.secrets, &settings.data.dir, from_env.as_deref())?)
}

/// Opens the database named by the settings and applies pending migrations.
pub fn open_database(settings: &Settings) -> anyhow::Result<Database> {
    let url = settings.database_url();
    let database = Database::connect(&url, &settings.database).with_context(|| "opening the database")?;
    // Several processes starting at once against one PostgreSQL may race on the first
    // migration; the loser retries and finds it applied.
    let mut attempts = 0;
    let applied = loop {
        match database.migrate() {
            Ok(applied) => break applied,
            Err(error) if attempts < 5 => {
                attempts += 1;
                tracing::warn!(%error, attempt = attempts, "migration failed; retrying");
                std::thread::sleep(Duration::from_millis(500 * attempts));
            }
            Err(error) => return Err(error.into()),
        }
    };
    if !applied.is_empty() {
        tracing::info!(migrations = ?applied, "database migrated");
    }
    Ok(database)
}

/// The infra drivers this build has, by vimType. The local simulated VIM (and with it the
/// fault injection of `additionalParams.localVim`) only where the settings enable it.
fn infra_drivers(settings: &Settings, role: Role, outbound: &Outbound) -> InfraDrivers {
    let mut drivers = InfraDrivers::default();
    if settings.conductor.local_vim.unwrap_or(role == Role::Serve) {
        let delay = Duration::from_millis(settings.conductor.local_vim_delay_ms);
        drivers = drivers.with(Arc::new(LocalVim { default_delay: delay }));
    }
    let trust = solgate_drivers::VimTrust {
        extra_ca_pem: outbound.extra_ca_pem(),
        allow_skip_verification: settings.tls.allow_vim_skip_verification,
    };
    #[cfg(feature = "openstack")]
    let drivers = drivers.with(Arc::new(settings.drivers.openstack(&trust)));
    #[cfg(feature = "kubernetes")]
    let drivers =
        drivers.with(Arc::new(settings.drivers.kubernetes(&trust))).with(Arc::new(settings.drivers.helm(&trust)));
    let _ = trust;
    drivers
}

/// How the HTTP listener runs (`[http]`).
pub fn listener_settings(settings: &Settings) -> solgate_gateway::listener::ListenerSettings {
    solgate_gateway::listener::ListenerSettings {
        workers: settings.http.workers,
        shutdown_timeout_secs: settings.http.shutdown_timeout_secs,
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}

/// The bound listener and how the API is reached through it.
struct Bound {
    listener: TcpListener,
    address: std::net::SocketAddr,
    tls: Option<Arc<ServerTls>>,
    scheme: &'static str,
    public_endpoint: String,
}

/// Binds `[http] listen` and loads the listener's TLS.
fn bind(settings: &Settings, role: Role) -> anyhow::Result<Bound> {
    let listener =
        TcpListener::bind(&settings.http.listen).with_context(|| format!("binding {}", settings.http.listen))?;
    let address = listener.local_addr()?;
    if role != Role::Conductor
        && solgate_gateway::auth::check_listener(&settings.auth, address).map_err(anyhow::Error::msg)?
    {
        tracing::warn!(%address, "[auth] allow_anonymous: anyone who can reach {address} can use every API");
    }
    let tls = ServerTls::load(&settings.http.tls)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let public_endpoint = if settings.http.public_endpoint.is_empty() {
        format!("{scheme}://{address}")
    } else {
        settings.http.public_endpoint.trim_end_matches('/').to_owned()
    };
    Ok(Bound { listener, address, tls, scheme, public_endpoint })
}

/// The RPC transport the settings name.
async fn transport(settings: &Settings, role: Role, registry: &Registry) -> anyhow::Result<Transport> {
    Ok(match settings.rpc.transport {
        RpcTransportKind::InProcess => {
            if role != Role::Serve {
                anyhow::bail!(
                    "rpc.transport = \"in-process\" only works with `solgate serve`; separate gateway and \
                         conductor processes need rpc.transport = \"amqp\""
                );
            }
            let (publisher, consumer) = in_process::channel();
            (Arc::new(publisher), Some(Box::new(consumer)), None)
        }
        RpcTransportKind::Amqp => {
            let lcm_majors: Vec<u64> = registry.majors(Api::Vnflcm).map(|info| info.major).collect();
            let queues = all_queues(&settings.rpc.queue_prefix, &lcm_majors);
            let transport = AmqpTransport::connect(&settings.rpc, queues).await?;
            let consumer: Option<Box<dyn RpcConsumer>> =
                if role.runs_conductor() { Some(Box::new(transport.consumer())) } else { None };
            (Arc::new(transport.publisher()), consumer, Some(transport))
        }
    })
}

/// Where the API of this process hands an accepted operation's start to its own conductor.
type LocalPlace = Arc<dyn solgate_core::work::LocalConductor>;

/// What both doors of a process share: the database, the outgoing HTTP, the secrets, the
/// state machine and the clients of external systems.
struct Shared {
    registry: Arc<Registry>,
    database: Database,
    links: Links,
    prometheus: prometheus::Registry,
    publisher: Arc<dyn RpcPublisher>,
    outbound: Outbound,
    secrets: Arc<SecretBox>,
    infra: InfraDrivers,
    machine: StateMachine,
    package_store: std::path::PathBuf,
    callbacks: Arc<solgate_core::callbacks::Callbacks>,
    nfvo: Option<Arc<solgate_conductor::nfvo::GrantClient>>,
    auth: Arc<solgate_gateway::auth::Authenticator>,
    vnfpm: Arc<solgate_core::pm::rules::RuleWriter>,
}

impl Shared {
    fn new(
        settings: &Settings,
        role: Role,
        (registry, database): (Arc<Registry>, Database),
        links: Links,
        publisher: Arc<dyn RpcPublisher>,
    ) -> anyhow::Result<Self> {
        let prometheus = prometheus::Registry::new();
        let outbound = Outbound::new(&settings.tls, &settings.egress)?;
        let secrets = Arc::new(secret_box(settings)?);
        let auth = solgate_gateway::auth::Authenticator::new(
            &settings.auth,
            secrets.derived_keys(solgate_gateway::auth::TOKEN_KEY_PURPOSE),
            &outbound,
        )
        .map_err(anyhow::Error::msg)?;
        let infra = infra_drivers(settings, role, &outbound);
        let machine =
            StateMachine { db: database.clone(), links: links.clone(), metrics: LcmMetrics::new(&prometheus)? };
        // One per process: the callback tests of the gateway and the delivery worker of the
        // conductor share its connections and OAuth 2.0 tokens.
        let callbacks = Arc::new(solgate_core::callbacks::Callbacks::new(settings.notifications.clone(), &outbound)?);
        let vnfpm = Arc::new(solgate_core::pm::rules::RuleWriter::new(settings.vnfpm.clone(), &outbound)?);
        let nfvo =
            solgate_conductor::nfvo::GrantClient::new(&settings.nfvo, &outbound, callbacks.clone())?.map(Arc::new);
        Ok(Self {
            registry,
            database,
            links,
            prometheus,
            publisher,
            outbound,
            secrets,
            infra,
            machine,
            package_store: settings.data.dir.join("packages"),
            callbacks,
            nfvo,
            auth: Arc::new(auth),
            vnfpm,
        })
    }

    /// Starts the conductor of this process on `consumer`; returns its task and, in one
    /// process with the in-process transport, the place the API hands starts over to.
    fn start_conductor(
        &self,
        settings: &Settings,
        consumer: Box<dyn RpcConsumer>,
        stop: CancellationToken,
    ) -> anyhow::Result<(tokio::task::JoinHandle<()>, Option<LocalPlace>)> {
        let ctx = Arc::new(ConductorContext {
            running: solgate_conductor::context::RunningOps::default(),
            id: uuid::Uuid::new_v4().to_string(),
            hostname: hostname(),
            db: self.database.clone(),
            links: self.links.clone(),
            settings: settings.conductor.clone(),
            rpc_settings: settings.rpc.clone(),
            publisher: self.publisher.clone(),
            infra: self.infra.clone(),
            package_store: self.package_store.clone(),
            packages: settings.packages.clone(),
            registry: self.registry.clone(),
            metrics: solgate_conductor::metrics::ConductorMetrics::new(&self.prometheus)?,
            callbacks: self.callbacks.clone(),
            outbound: self.outbound.clone(),
            secrets: self.secrets.clone(),
            machine: self.machine.clone(),
            nfvo: self.nfvo.clone(),
            scripts: settings.drivers.scripts(),
        });
        let drain = Duration::from_secs(settings.conductor.drain_timeout_secs);
        let service = solgate_conductor::service::Service::new(ctx);
        // One process: the API hands accepted starts over in their transaction.
        let local = if settings.rpc.transport == RpcTransportKind::InProcess { service.local_starts() } else { None };
        let task = tokio::spawn(async move {
            if let Err(error) = service.run(consumer, stop, drain).await {
                tracing::error!(%error, "conductor failed");
            }
        });
        Ok((task, local))
    }

    /// The gateway's state.
    fn app_state(
        self,
        settings: &Settings,
        public_endpoint: &str,
        local_conductor: Option<Arc<dyn solgate_core::work::LocalConductor>>,
        package_notifications: bool,
    ) -> anyhow::Result<AppState> {
        let mut vim_types = self.infra.vim_types();
        // The NFVO's grant supplies the VIM of an instance that has none.
        if self.nfvo.is_some() {
            vim_types.push(solgate_core::operation::VIM_FROM_GRANT);
        }
        let readiness: Vec<Arc<dyn ReadinessProbe>> =
            vec![Arc::new(DatabaseProbe(self.database.clone())), Arc::new(RpcProbe(self.publisher.clone()))];
        Ok(AppState {
            registry: self.registry,
            http: settings.http.clone(),
            paging: settings.paging.clone(),
            query_limits: settings.query.clone(),
            public_endpoint: public_endpoint.to_owned(),
            links: self.links,
            metrics: Metrics::new(self.prometheus.clone())?,
            readiness,
            published_marks: solgate_core::work::PublishedMarks::start(self.database.clone()),
            db: self.database,
            rpc: self.publisher,
            local_conductor,
            vim_types,
            render_cache: solgate_gateway::common::cache::RenderCache::new(
                settings.http.render_cache_entries,
                settings.http.render_cache_bytes,
            ),
            package_store: self.package_store,
            packages: settings.packages.clone(),
            callbacks: self.callbacks,
            auth: self.auth,
            outbound: self.outbound,
            secrets: self.secrets,
            machine: self.machine,
            nfvo_package_wait: self.nfvo.as_ref().map(|_| {
                // The two exchanges with the NFVO, the transfer, then the onboarding itself.
                Duration::from_secs(2 * settings.nfvo.timeout_secs + settings.packages.fetch_timeout_secs + 60)
            }),
            webhooks: solgate_gateway::alerts::Webhooks::new(&settings.prometheus_plugin),
            nfvo_notifications: package_notifications.then(|| NotificationCredentials {
                user_name: settings.nfvo.notification_user_name.clone(),
                password: settings.nfvo.notification_password.clone(),
            }),
            vnfpm: self.vnfpm,
        })
    }
}

/// The version registry and the migrated database of the settings.
async fn open(settings: &Settings) -> anyhow::Result<(Arc<Registry>, Database)> {
    let registry = Arc::new(Registry::builtin()?.with_policies(&settings.versions)?);
    let database = {
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || open_database(&settings))
            .await??
            .on_runtime(tokio::runtime::Handle::current())
    };
    Ok((registry, database))
}

impl Application {
    /// Builds the parts `role` runs and binds `[http] listen` (port 0: any free port).
    pub async fn build(settings: Settings, role: Role) -> anyhow::Result<Self> {
        let opened = open(&settings).await?;
        let bound = bind(&settings, role)?;
        let (publisher, consumer, transport) = transport(&settings, role, &opened.0).await?;
        let shared = Shared::new(&settings, role, opened, Links::new(&bound.public_endpoint), publisher)?;
        let stop = CancellationToken::new();
        let (conductor, local_conductor) = match (role.runs_conductor(), consumer) {
            (true, Some(consumer)) => {
                let (task, local) = shared.start_conductor(&settings, consumer, stop.clone())?;
                (Some(task), local)
            }
            _ => (None, None),
        };
        // A process that serves the API keeps the NFVO subscribed to it (validate() made sure
        // package notifications come with external mode and credentials).
        let package_notifications = role != Role::Conductor && settings.nfvo.package_notifications;
        if package_notifications && let Some(nfvo) = &shared.nfvo {
            let callback_uri =
                format!("{}{}", bound.public_endpoint, solgate_gateway::settings::NFVO_NOTIFICATIONS_PATH);
            tokio::spawn(solgate_conductor::nfvo::keep_package_subscription(nfvo.clone(), callback_uri, stop.clone()));
        }
        let state = web::Data::new(shared.app_state(
            &settings,
            &bound.public_endpoint,
            local_conductor,
            package_notifications,
        )?);
        let Bound { listener, address, tls, scheme, public_endpoint } = bound;
        let api = role != Role::Conductor;
        let server = {
            let state = state.clone();
            solgate_gateway::listener::serve(
                move || solgate_gateway::app::app(state.clone(), |_| {}, api),
                listener,
                tls.clone(),
                &listener_settings(&settings),
                solgate_gateway::listener::record_peer_names,
            )?
        };
        let mutual = tls.as_ref().is_some_and(|tls| tls.mutual());
        tracing::info!(%address, %public_endpoint, ?role, mutual_tls = mutual, "solgate listening on {scheme}://{address}");
        if let Some(tls) = &tls {
            reload_on_hangup(tls.clone(), stop.clone());
        }
        Ok(Self { port: address.port(), public_endpoint, server, conductor, stop, transport, tls, state, api })
    }

    /// The gateway's state, for a test that serves the application with routes of its own
    /// (`solgate_gateway::app::app` on a listener of its own).
    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    /// Whether this process serves the API (every role but the conductor's).
    pub fn serves_api(&self) -> bool {
        self.api
    }

    /// The listener's TLS, when it speaks HTTPS (tests reload it as SIGHUP does).
    pub fn tls(&self) -> Option<Arc<ServerTls>> {
        self.tls.clone()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn public_endpoint(&self) -> &str {
        &self.public_endpoint
    }

    /// A token that stops the application when cancelled (tests use it to stop a conductor).
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Serves until SIGTERM/SIGINT (in-flight requests finish, running operations get the
    /// drain timeout) or until the stop token is cancelled.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let handle = self.server.handle();
        let stop = self.stop.clone();
        let stopper = tokio::spawn(async move {
            stop.cancelled().await;
            handle.stop(true).await;
        });
        let result = self.server.await;
        self.stop.cancel();
        if let Some(conductor) = self.conductor {
            let _ = conductor.await;
        }
        if let Some(transport) = &self.transport {
            transport.shutdown().await;
        }
        stopper.abort();
        result?;
        tracing::info!("solgate stopped");
        Ok(())
    }
}
