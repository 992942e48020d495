//! Work messages from the gateway to the conductors. A message names a piece of work — the id of an
//! LCM operation occurrence (or a VNF package to onboard) and the API major — and nothing
//! else: the conductor reloads everything from the database, so a message can be
//! repeated or lost (the outbox relay republishes) without harm.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use solgate_db::repo::lcm::{InstanceRecord, LcmMajor, OpOccRecord};

use crate::operation::OperationPlan;

/// What the message asks a conductor to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkKind {
    /// A VNF LCM operation occurrence (`vnf_lcm_op_occs_v{major}`): start, retry,
    /// rollback or cancel it, as its row says.
    LcmOpOcc,
    /// A VNF package whose content awaits onboarding.
    VnfPackage,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RpcMessage {
    pub kind: WorkKind,
    pub id: String,
    pub major: u64,
}

impl RpcMessage {
    pub fn lcm(id: impl Into<String>, major: u64) -> Self {
        Self { kind: WorkKind::LcmOpOcc, id: id.into(), major }
    }

    pub fn package(id: impl Into<String>) -> Self {
        Self { kind: WorkKind::VnfPackage, id: id.into(), major: 1 }
    }

    /// The queue (AMQP routing key) of this message: one durable queue per API and
    /// major version.
    pub fn queue(&self, prefix: &str) -> String {
        match self.kind {
            WorkKind::LcmOpOcc => format!("{prefix}.vnflcm.v{}", self.major),
            WorkKind::VnfPackage => format!("{prefix}.vnfpkgm.v1"),
        }
    }
}

/// Every queue a conductor consumes.
pub fn all_queues(prefix: &str, lcm_majors: &[u64]) -> Vec<String> {
    let mut queues: Vec<String> = lcm_majors.iter().map(|major| format!("{prefix}.vnflcm.v{major}")).collect();
    queues.push(format!("{prefix}.vnfpkgm.v1"));
    queues
}

#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    #[error("RPC transport is not connected: {0}")]
    NotConnected(String),
    #[error("the broker did not confirm the message: {0}")]
    NotConfirmed(String),
    #[error("RPC transport error: {0}")]
    Transport(String),
    #[error("malformed RPC message: {0}")]
    Malformed(String),
    #[error("RPC transport closed")]
    Closed,
}

/// How long after writing an outbox row the writing process has to mark it published;
/// the relay publishes a row still unmarked after that itself.
pub const UNPUBLISHED_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Marks the outbox rows whose messages the broker confirmed, gathered for a tenth of
/// [`UNPUBLISHED_GRACE`] and written in one statement. A mark per message was a write per
/// operation, often waiting for the lock of a conductor's claim that was deleting the same
/// row; gathered, most rows are already taken up and gone, and the rest cost one UPDATE.
/// Marks lost with the process only let the relay publish those rows again, which a claim
/// takes as the repeat it is.
#[derive(Clone)]
pub struct PublishedMarks {
    confirmed: tokio::sync::mpsc::UnboundedSender<i64>,
}

impl PublishedMarks {
    /// Starts the task that writes the marks; it ends, after writing what it holds, once
    /// every clone is dropped.
    pub fn start(db: solgate_db::Database) -> Self {
        let (confirmed, mut marks) = tokio::sync::mpsc::unbounded_channel::<i64>();
        tokio::spawn(async move {
            while let Some(first) = marks.recv().await {
                tokio::time::sleep(UNPUBLISHED_GRACE / 10).await;
                let mut ids = vec![first];
                while let Ok(id) = marks.try_recv() {
                    ids.push(id);
                }
                // Bounded statements (SQLite's limit on bound values is far above this).
                for chunk in ids.chunks(1_000) {
                    let chunk = chunk.to_vec();
                    let written =
                        db.write_once(move |conn| solgate_db::repo::outbox::mark_published(conn, &chunk)).await;
                    if let Err(error) = written {
                        tracing::warn!(%error, "could not mark outbox rows published; the relay may publish them again");
                    }
                }
            }
        });
        Self { confirmed }
    }

    /// The broker confirmed the message of outbox row `id`.
    pub fn mark(&self, id: i64) {
        // Closed only at shutdown: the relay then publishes the row again if still untaken.
        let _ = self.confirmed.send(id);
    }
}

/// The gateway side: hands work to the conductors.
pub trait RpcPublisher: Send + Sync + 'static {
    /// Publishes one message. `Ok` means the transport has taken responsibility for it
    /// (for AMQP: the broker confirmed a persistent message on a durable queue).
    fn publish<'a>(&'a self, message: &'a RpcMessage) -> BoxFuture<'a, Result<(), RpcError>>;

    /// Whether the transport is currently connected (for `/readyz`).
    fn is_connected(&self) -> bool;

    /// Whether a message is handed over in this process's memory (the in-process transport
    /// of `solgate serve`). Its outbox row is then not marked published: the message lives
    /// exactly as long as this process, so the relay knows without a mark which rows'
    /// messages are gone (those written before this process started, or left untaken for
    /// `republish_after_secs`). A mark was a write per operation.
    fn in_process(&self) -> bool {
        false
    }
}

/// An accepted task taken up by the conductor of this process in the accepting transaction:
/// the occurrence as committed (owned by that conductor, no work pending, no outbox row),
/// and its instance and plan when it entered PROCESSING there (stored plan, local grant).
pub struct TakenUp {
    pub op: OpOccRecord,
    pub started: Option<(InstanceRecord, OperationPlan)>,
}

/// A place at the conductor of this process (`solgate serve`), reserved for one operation
/// before its accepting transaction: the conductor takes the start up in that transaction
/// (`requests::accept_taken_in`), which spares the claim's own transaction and
/// commit, the outbox row and the message. Dropped unused, it frees the place.
pub trait ConductorSlot: Send + 'static {
    /// The conductor's id: the occurrence's owner.
    fn owner(&self) -> &str;
    /// Until when the owner's claim holds without a heartbeat.
    fn lease_expires_at(&self) -> &str;
    /// Marks the occurrence running at the conductor, in the transaction and before it
    /// commits: recovery never sees it owned by a live conductor and not running.
    fn enter(&mut self, op_id: &str);
    /// The transaction committed: the conductor runs the occurrence.
    fn run(self: Box<Self>, major: LcmMajor, taken: TakenUp);
}

/// The conductor of this process, as the accepting side sees it.
pub trait LocalConductor: Send + Sync + 'static {
    /// A place for one more operation; `None` when the conductor is full or stopping (the
    /// work then goes by message, as in a scaled-out deployment).
    fn reserve(&self) -> Option<Box<dyn ConductorSlot>>;
}

/// The outbox `kind` of a message.
pub fn kind_name(kind: WorkKind) -> &'static str {
    match kind {
        WorkKind::LcmOpOcc => "lcm_op_occ",
        WorkKind::VnfPackage => "vnf_package",
    }
}

/// The message of an outbox row.
pub fn message_of(row: &solgate_db::repo::outbox::OutboxRow) -> Option<RpcMessage> {
    let kind = match row.kind.as_str() {
        "lcm_op_occ" => WorkKind::LcmOpOcc,
        "vnf_package" => WorkKind::VnfPackage,
        _ => return None,
    };
    Some(RpcMessage { kind, id: row.target_id.clone(), major: u64::try_from(row.major).unwrap_or(0) })
}
