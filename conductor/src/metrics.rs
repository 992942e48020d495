//! Conductor metrics, registered in the application's Prometheus registry.

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts, Registry};

#[derive(Clone)]
pub struct ConductorMetrics {
    pub notifications: IntCounterVec,
    pub outbox_republished: IntCounterVec,
    pub running: IntGauge,
    /// Notifications waiting for delivery (all conductors; refreshed every few seconds).
    pub notifications_pending: IntGauge,
    /// Automatic retries of infra actions after transient VIM failures.
    pub vim_retries: IntCounter,
    /// LCM work taken up, by how it reached the conductor: `accept` (in the accepting
    /// transaction of its own process) or `message`.
    pub work_taken: IntCounterVec,
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
        let vim_retries = IntCounter::new(
            "solgate_vim_retries_total",
            "Infra actions retried automatically after a transient VIM failure",
        )?;
        registry.register(Box::new(notifications_pending.clone()))?;
        registry.register(Box::new(vim_retries.clone()))?;
        let work_taken = IntCounterVec::new(
            Opts::new(
                "solgate_lcm_work_taken_total",
                "LCM work this conductor took up, by how it came: in the accepting transaction of its own process (accept) or by message",
            ),
            &["by"],
        )?;
        registry.register(Box::new(work_taken.clone()))?;
        Ok(Self { notifications, outbox_republished, running, notifications_pending, vim_retries, work_taken })
    }
}
