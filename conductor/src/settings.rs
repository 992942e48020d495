//! Settings of the conductor and its RPC transport (the `[rpc]` and `[conductor]` tables).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RpcTransportKind {
    /// A channel inside one process (`solgate serve`).
    InProcess,
    /// AMQP 0-9-1 (RabbitMQ) through lapin, for separate gateway and conductor processes.
    Amqp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RpcSettings {
    pub transport: RpcTransportKind,
    /// `amqp://user:password@host:5672/%2f`.
    pub amqp_url: String,
    /// Queue names are `{queue_prefix}.vnflcm.v{major}` and `{queue_prefix}.vnfpkgm.v1`.
    pub queue_prefix: String,
    /// Unacknowledged messages a conductor holds at once.
    pub prefetch: u16,
    /// Seconds after which the outbox relay republishes work whose message was sent but
    /// whose operation nobody has claimed (a message lost with a dead broker or process).
    pub republish_after_secs: u64,
    /// Seconds between outbox relay passes.
    pub relay_interval_secs: u64,
    /// Longest wait between reconnection attempts to the broker.
    pub max_reconnect_backoff_secs: u64,
}

impl Default for RpcSettings {
    fn default() -> Self {
        Self {
            transport: RpcTransportKind::InProcess,
            amqp_url: "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned(),
            queue_prefix: "solgate".to_owned(),
            prefetch: 16,
            republish_after_secs: 30,
            relay_interval_secs: 2,
            max_reconnect_backoff_secs: 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConductorSettings {
    /// Seconds between heartbeats of this conductor.
    pub heartbeat_interval_secs: u64,
    /// A conductor whose heartbeat is older than this is dead: its operations are
    /// recovered by a live one.
    pub lease_timeout_secs: u64,
    /// Operations run at once by one conductor.
    pub max_concurrent_operations: usize,
    /// Seconds running operations get to finish when the conductor stops.
    pub drain_timeout_secs: u64,
    /// Run VNFs that have no `vimConnectionInfo` on the local simulated VIM, and honour
    /// its fault injection (`additionalParams.localVim`). Unset: on for `solgate serve`
    /// (the embedded demo), off for `gateway` and `conductor`; with it off such an
    /// instance is refused (422), never run on the simulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_vim: Option<bool>,
    /// Delay of every step of the local simulated VIM, in milliseconds (requests can
    /// override it with `additionalParams.localVim.delayMs`).
    pub local_vim_delay_ms: u64,
    /// Automatic retries of an infra action after a transient VIM failure (connection
    /// refused, a 5xx, a timeout) before the operation fails (FAILED_TEMP).
    pub vim_retries: u32,
    /// The first wait before such a retry, in milliseconds; it doubles at each retry (at
    /// most 30 s).
    pub vim_retry_backoff_ms: u64,
}

impl Default for ConductorSettings {
    fn default() -> Self {
        Self {
            heartbeat_interval_secs: 5,
            lease_timeout_secs: 30,
            max_concurrent_operations: 32,
            drain_timeout_secs: 20,
            local_vim: None,
            local_vim_delay_ms: 0,
            vim_retries: 3,
            vim_retry_backoff_ms: 500,
        }
    }
}
