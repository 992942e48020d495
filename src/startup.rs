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

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}

impl Application {
    pub async fn build(settings: Settings, role: Role) -> anyhow::Result<Self> {
        Self::build_with_routes(settings, role, |_| {}).await
    }

    /// As [`Application::build`], with extra routes (tests use this for a route that panics).
    pub async fn build_with_routes(
        settings: Settings,
        role: Role,
        extra: fn(&mut web::ServiceConfig),
    ) -> anyhow::Result<Self> {
        let registry = Arc::new(Registry::builtin()?.with_policies(&settings.versions)?);
        let database = {
            let settings = settings.clone();
            tokio::task::spawn_blocking(move || open_database(&settings))
                .await??
                .on_runtime(tokio::runtime::Handle::current())
        };

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
        let links = Links::new(&public_endpoint);
        let prometheus = prometheus::Registry::new();
        let metrics = Metrics::new(prometheus.clone())?;

        // The RPC transport.
        let lcm_majors: Vec<u64> = registry.majors(Api::Vnflcm).map(|info| info.major).collect();
        let (publisher, consumer, transport): Transport = match settings.rpc.transport {
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
                let queues = all_queues(&settings.rpc.queue_prefix, &lcm_majors);
                let transport = AmqpTransport::connect(&settings.rpc, queues).await?;
                let consumer: Option<Box<dyn RpcConsumer>> =
                    if role.runs_conductor() { Some(Box::new(transport.consumer())) } else { None };
                (Arc::new(transport.publisher()), consumer, Some(transport))
            }
        };

        let outbound = Outbound::new(&settings.tls, &settings.egress)?;
        let secrets = Arc::new(secret_box(&settings)?);
        let auth = Arc::new(
            solgate_gateway::auth::Authenticator::new(
                &settings.auth,
                secrets.derived_keys(solgate_gateway::auth::TOKEN_KEY_PURPOSE),
                &outbound,
            )
            .map_err(anyhow::Error::msg)?,
        );
        let infra = infra_drivers(&settings, role, &outbound);
        let machine =
            StateMachine { db: database.clone(), links: links.clone(), metrics: LcmMetrics::new(&prometheus)? };
        let package_store = settings.data.dir.join("packages");
        // One per process: the callback tests of the gateway and the delivery worker of the
        // conductor share its connections and OAuth 2.0 tokens.
        let callbacks = Arc::new(solgate_core::callbacks::Callbacks::new(settings.notifications.clone(), &outbound)?);

        let vnfpm = Arc::new(solgate_core::pm::rules::RuleWriter::new(settings.vnfpm.clone(), &outbound)?);
        let nfvo =
            solgate_conductor::nfvo::GrantClient::new(&settings.nfvo, &outbound, callbacks.clone())?.map(Arc::new);
        let stop = CancellationToken::new();
        let in_process = settings.rpc.transport == RpcTransportKind::InProcess;
        let mut local_conductor = None;
        let conductor = match (role.runs_conductor(), consumer) {
            (true, Some(consumer)) => {
                let ctx = Arc::new(ConductorContext {
                    running: solgate_conductor::context::RunningOps::default(),
                    id: uuid::Uuid::new_v4().to_string(),
                    hostname: hostname(),
                    db: database.clone(),
                    links: links.clone(),
                    settings: settings.conductor.clone(),
                    rpc_settings: settings.rpc.clone(),
                    publisher: publisher.clone(),
                    infra: infra.clone(),
                    package_store: package_store.clone(),
                    packages: settings.packages.clone(),
                    registry: registry.clone(),
                    metrics: solgate_conductor::metrics::ConductorMetrics::new(&prometheus)?,
                    callbacks: callbacks.clone(),
                    outbound: outbound.clone(),
                    secrets: secrets.clone(),
                    machine: machine.clone(),
                    nfvo: nfvo.clone(),
                    scripts: settings.drivers.scripts(),
                });
                let drain = Duration::from_secs(settings.conductor.drain_timeout_secs);
                let stop = stop.clone();
                let service = solgate_conductor::service::Service::new(ctx);
                // One process: the API hands accepted starts over in their transaction.
                if in_process {
                    local_conductor = service.local_starts();
                }
                Some(tokio::spawn(async move {
                    if let Err(error) = service.run(consumer, stop, drain).await {
                        tracing::error!(%error, "conductor failed");
                    }
                }))
            }
            _ => None,
        };

        // A process that serves the API keeps the NFVO subscribed to it (validate() made sure
        // package notifications come with external mode and credentials).
        let package_notifications = role != Role::Conductor && settings.nfvo.package_notifications;
        if package_notifications && let Some(nfvo) = &nfvo {
            let callback_uri = format!("{public_endpoint}{}", solgate_gateway::settings::NFVO_NOTIFICATIONS_PATH);
            tokio::spawn(solgate_conductor::nfvo::keep_package_subscription(nfvo.clone(), callback_uri, stop.clone()));
        }
        let readiness: Vec<Arc<dyn ReadinessProbe>> =
            vec![Arc::new(DatabaseProbe(database.clone())), Arc::new(RpcProbe(publisher.clone()))];
        let state = web::Data::new(AppState {
            registry,
            http: settings.http.clone(),
            paging: settings.paging.clone(),
            query_limits: settings.query.clone(),
            public_endpoint: public_endpoint.clone(),
            links,
            metrics,
            readiness,
            published_marks: solgate_core::work::PublishedMarks::start(database.clone()),
            db: database,
            rpc: publisher,
            local_conductor,
            vim_types: {
                let mut types = infra.vim_types();
                // The NFVO's grant supplies the VIM of an instance that has none.
                if nfvo.is_some() {
                    types.push(solgate_core::operation::VIM_FROM_GRANT);
                }
                types
            },
            render_cache: solgate_gateway::common::cache::RenderCache::new(
                settings.http.render_cache_entries,
                settings.http.render_cache_bytes,
            ),
            package_store,
            packages: settings.packages.clone(),
            callbacks,
            outbound,
            secrets,
            auth,
            machine,
            nfvo_package_wait: nfvo.as_ref().map(|_| {
                // The two exchanges with the NFVO, the transfer, then the onboarding itself.
                Duration::from_secs(2 * settings.nfvo.timeout_secs + settings.packages.fetch_timeout_secs + 60)
            }),
            webhooks: solgate_gateway::alerts::Webhooks::new(&settings.prometheus_plugin),
            nfvo_notifications: package_notifications.then(|| NotificationCredentials {
                user_name: settings.nfvo.notification_user_name.clone(),
                password: settings.nfvo.notification_password.clone(),
            }),
            vnfpm,
        });
        let api = role != Role::Conductor;
        let listener_settings = solgate_gateway::listener::ListenerSettings {
            workers: settings.http.workers,
            shutdown_timeout_secs: settings.http.shutdown_timeout_secs,
        };
        let server = solgate_gateway::listener::serve(
            move || solgate_gateway::app::app(state.clone(), extra, api),
            listener,
            tls.clone(),
            &listener_settings,
            solgate_gateway::listener::record_peer_names,
        )?;
        let mutual = tls.as_ref().is_some_and(|tls| tls.mutual());
        tracing::info!(%address, %public_endpoint, ?role, mutual_tls = mutual, "solgate listening on {scheme}://{address}");
        if let Some(tls) = &tls {
            reload_on_hangup(tls.clone(), stop.clone());
        }
        Ok(Self { port: address.port(), public_endpoint, server, conductor, stop, transport, tls })
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
