//! Conductor metrics, registered in the application's Prometheus registry.

use prometheus::{IntCounterVec, IntGauge, Opts, Registry};

#[derive(Clone)]
pub struct ConductorMetrics {
    pub notifications: IntCounterVec,
    pub outbox_republished: IntCounterVec,
    pub running: IntGauge,
    /// Notifications waiting for delivery (all conductors; refreshed every few seconds).
    pub notifications_pending: IntGauge,
}

impl ConductorMetrics {
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let notifications = IntCounterVec::new(
            Opts::new(
                "solgate_notifications_total",
                "Notification delivery outcomes by result (delivered, retried, given_up)",
            ),
            &["result"],
        )?;
        let outbox_republished = IntCounterVec::new(
            Opts::new("solgate_rpc_outbox_published_total", "RPC messages published by the outbox relay, by result"),
            &["result"],
        )?;
        let running = IntGauge::new("solgate_lcm_operations_running", "LCM operations being run by this conductor")?;
        let notifications_pending =
            IntGauge::new("solgate_notifications_pending", "Notifications queued and not yet delivered or given up")?;
        registry.register(Box::new(notifications.clone()))?;
        registry.register(Box::new(outbox_republished.clone()))?;
        registry.register(Box::new(running.clone()))?;
        registry.register(Box::new(notifications_pending.clone()))?;
        Ok(Self { notifications, outbox_republished, running, notifications_pending })
    }

    /// Metrics that go nowhere (tests, tools).
    pub fn detached() -> Self {
        Self::new(&Registry::new()).unwrap_or_else(|_| unreachable_metrics())
    }
}

fn unreachable_metrics() -> ConductorMetrics {
    // Registering fresh collectors in a fresh registry cannot collide; build them bare.
    let counter = |name: &str, labels: &[&str]| IntCounterVec::new(Opts::new(name, name), labels);
    match (
        counter("solgate_notifications_total", &["result"]),
        counter("solgate_rpc_outbox_published_total", &["result"]),
        IntGauge::new("solgate_lcm_operations_running", "running"),
        IntGauge::new("solgate_notifications_pending", "pending"),
    ) {
        (Ok(notifications), Ok(outbox_republished), Ok(running), Ok(notifications_pending)) => {
            ConductorMetrics { notifications, outbox_republished, running, notifications_pending }
        }
        _ => std::process::abort(),
    }
}
