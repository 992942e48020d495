//! The persistence layer's error type.

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot connect to the database: {0}")]
    Connect(String),
    #[error("database migration failed: {0}")]
    Migration(String),
    #[error("no free database connection: {0}")]
    Pool(#[from] r2d2::Error),
    #[error(transparent)]
    Query(#[from] diesel::result::Error),
    #[error("stored document is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A uniqueness rule of the schema refused the write (e.g. a second operation in
    /// flight for one VNF instance, or a duplicate vnfdId).
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("the database task was cancelled")]
    Cancelled,
}

impl DbError {
    /// Was this a unique-constraint violation (the database enforcing a rule)?
    pub fn is_unique_violation(&self) -> bool {
        matches!(
            self,
            DbError::Query(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _))
        )
    }
}

pub type DbResult<T> = Result<T, DbError>;

/// Inside a write transaction or savepoint: the caller's own error, or the database's
/// (beginning, releasing or committing it), told apart so the caller gets its own back.
pub(crate) enum TxFailure<E> {
    Job(E),
    Database(DbError),
}

impl<E> From<diesel::result::Error> for TxFailure<E> {
    fn from(error: diesel::result::Error) -> Self {
        Self::Database(error.into())
    }
}

impl<E: From<DbError>> TxFailure<E> {
    /// The error the caller of the transaction sees.
    pub(crate) fn into_error(self) -> E {
        match self {
            Self::Job(error) => error,
            Self::Database(error) => error.into(),
        }
    }
}
