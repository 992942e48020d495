//! solgate's domain, shared by its two doors: the HTTP gateway, which accepts work, and
//! the conductor, which carries it out. Neither door depends on the other; both reach
//! operations, their state machine, the v1/v2 shapes, plans, notifications, packages and
//! work messages through this crate.

pub mod callbacks;
pub mod checks;
pub mod convert;
pub mod instance;
pub mod links;
pub mod notify;
pub mod op_occ;
pub mod packages;
pub mod plan;
pub mod settings;
pub mod shapes;
pub mod vnfd;
pub mod work;

pub use solgate_sol013::merge_patch;

/// Now, as documents and the database store it (RFC 3339 UTC, microseconds, `Z`).
pub fn now() -> String {
    solgate_db::repo::now_text()
}

/// Keys of stored documents that are solgate's own bookkeeping, never shown to clients.
pub const PRIVATE_KEY: &str = "_solgate";

/// A document without solgate's private keys.
pub fn without_private(mut document: serde_json::Value) -> serde_json::Value {
    if let serde_json::Value::Object(map) = &mut document {
        map.shift_remove(PRIVATE_KEY);
    }
    document
}

/// What can go wrong in the domain that is not a refusal of a request.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error(transparent)]
    Db(#[from] solgate_db::DbError),
    #[error("a database task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error("{0}")]
    Setup(String),
}
