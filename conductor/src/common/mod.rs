//! Logic both `VnflcmDriverV1` and `VnflcmDriverV2` (and the gateway's v1/v2
//! controllers) call: documents, links, plans from the VNFD, instance info, resource
//! changes, notifications, and the operation state machine. Nothing here depends on a
//! major version's shapes except where a function takes the major as an argument.

pub mod checks;
pub mod convert;
pub mod instance;
pub mod links;
pub mod notify;
pub mod op_occ;
pub mod plan;
pub mod vnfd;

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
