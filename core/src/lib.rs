//! solgate's domain, shared by its two doors: the HTTP gateway, which accepts work, and
//! the conductor, which carries it out. Neither door depends on the other; both reach
//! operations, their state machine, the v1/v2 shapes, plans, notifications, packages and
//! work messages through this crate.

pub mod callbacks;
pub mod certificates;
pub mod convert;
pub mod egress;
pub mod fm;
pub mod instance;
pub mod lifecycle;
pub mod links;
pub mod notify;
pub mod op_occ;
pub mod operation;
pub mod packages;
pub mod plan;
pub mod pm;
pub mod requests;
pub mod secrets;
pub mod settings;
pub mod shapes;
pub mod tenancy;
pub mod vims;
pub mod vnfd;
pub mod work;

pub use solgate_sol013::merge_patch;

/// Now, as documents and the database store it (RFC 3339 UTC, microseconds, `Z`).
pub fn now() -> String {
    solgate_db::repo::now_text()
}

/// Runs blocking database work off the async threads, keeping the caller's span.
pub async fn db_run<T, E, F>(db: &solgate_db::Database, work: F) -> Result<T, E>
where
    T: Send + 'static,
    E: From<solgate_db::DbError> + From<tokio::task::JoinError> + Send + 'static,
    F: FnOnce(&mut solgate_db::AnyConnection) -> Result<T, E> + Send + 'static,
{
    let (pool, work) = (db.clone(), in_current_span(work));
    db.run_blocking(move || {
        let mut conn = pool.conn()?;
        work(&mut conn)
    })
    .await?
}

/// Runs `f` in a write transaction ([`solgate_db::Database::write`]: on SQLite, in the group
/// committer's batch on its writer thread), keeping the caller's span; returns once durable.
pub async fn db_write<T, E, F>(db: &solgate_db::Database, f: F) -> Result<T, E>
where
    T: Send + 'static,
    E: From<solgate_db::DbError> + Send + 'static,
    F: FnOnce(&mut solgate_db::AnyConnection) -> Result<T, E> + Send + 'static,
{
    db.write(in_current_span(f)).await
}

/// Runs a short keyed read ([`solgate_db::Database::read`]: on SQLite where it is awaited),
/// keeping the caller's span.
pub async fn db_read<T, E, F>(db: &solgate_db::Database, f: F) -> Result<T, E>
where
    T: Send + 'static,
    E: From<solgate_db::DbError> + Send + 'static,
    F: FnOnce(&mut solgate_db::AnyConnection) -> Result<T, E> + Send + 'static,
{
    db.read(in_current_span(f)).await
}

/// `f`, run in the span that is current here wherever it runs (another thread's logs
/// then still carry the request's and operation's fields).
fn in_current_span<T, E, F>(f: F) -> impl FnOnce(&mut solgate_db::AnyConnection) -> Result<T, E> + Send + 'static
where
    F: FnOnce(&mut solgate_db::AnyConnection) -> Result<T, E> + Send + 'static,
{
    let span = tracing::Span::current();
    move |conn| {
        let _entered = span.enter();
        f(conn)
    }
}

/// Keys of stored documents that are solgate's own bookkeeping, never shown to clients.
pub use solgate_model::vnf_instance::PRIVATE_KEY;

/// A document's private part (`_solgate`) as the typed record `T` (its default when the
/// document has none, or one of another shape).
pub fn private_part<T: serde::de::DeserializeOwned + Default>(document: &serde_json::Value) -> T {
    document.get(PRIVATE_KEY).and_then(|private| T::deserialize(private).ok()).unwrap_or_default()
}

/// Sets the members `members` serialises to on a document (an object), leaving the others.
pub fn overlay<T: serde::Serialize>(document: &mut serde_json::Value, members: &T) {
    if let (serde_json::Value::Object(map), Ok(serde_json::Value::Object(members))) =
        (document, serde_json::to_value(members))
    {
        map.extend(members);
    }
}

/// Replaces a document's private part with `part`.
pub fn set_private_part<T: serde::Serialize>(document: &mut serde_json::Value, part: &T) {
    if let (serde_json::Value::Object(map), Ok(part)) = (document, serde_json::to_value(part)) {
        map.insert(PRIVATE_KEY.to_owned(), part);
    }
}

/// A document without solgate's private keys.
pub fn without_private(mut document: serde_json::Value) -> serde_json::Value {
    if let serde_json::Value::Object(map) = &mut document {
        map.shift_remove(PRIVATE_KEY);
    }
    document
}

/// What the domain refuses (the gateway maps each to its status) or what goes wrong in it.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error(transparent)]
    Db(#[from] solgate_db::DbError),
    #[error("a database task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error("{0}")]
    Setup(String),
    /// The request is malformed or names what does not exist in the VNFD (400).
    #[error("{0}")]
    BadRequest(String),
    /// A resource the request names does not exist (404).
    #[error("{0}")]
    NotFound(String),
    /// The resource is not in a state that allows the request (409).
    #[error("{0}")]
    Conflict(String),
    /// The request is well-formed but cannot be carried out (422).
    #[error("{0}")]
    Unprocessable(String),
    /// The resource changed since the client read it (`If-Match`, 412).
    #[error("{0}")]
    PreconditionFailed(String),
}

impl From<diesel::result::Error> for CoreError {
    fn from(error: diesel::result::Error) -> Self {
        CoreError::Db(error.into())
    }
}
