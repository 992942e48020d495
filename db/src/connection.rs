//! The r2d2 pool over [`AnyConnection`], SQLite pragmas, migrations, and write
//! transactions that take SQLite's write lock up front (through the group committer where
//! one runs).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, ManageConnection, Pool, PooledConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::error::{DbError, DbResult, TxFailure};
use crate::group_commit::{self, GroupWriter};
use crate::settings::DatabaseSettings;

pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
pub const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

pub use crate::any_connection::{AnyConnection, Backend};

pub type DbPool = Pool<PoolManager>;
pub type DbConn = PooledConnection<PoolManager>;

/// How long a pooled PostgreSQL connection is trusted after its last check. Checking on
/// every checkout (r2d2's `test_on_check_out`) cost a `SELECT 1` round trip per piece of
/// database work: eight per LCM operation, a fifth of all its statements. A connection the
/// server dropped while in use is found at its next checkout after this, and replaced.
const PG_CHECK_AFTER: Duration = Duration::from_secs(1);

/// When a PostgreSQL connection last answered its check (kept with the pooled connection).
struct CheckedAt(Instant);

thread_local! {
    /// Set just before a connection found dead is dropped on this thread: r2d2 then asks
    /// [`PoolManager::has_broken`], on the same thread, whether to keep it.
    static DISCARD_ON_RETURN: Cell<bool> = const { Cell::new(false) };
}

/// Diesel's connection manager, which can also discard a connection [`Database::conn`]
/// found dead (r2d2 keeps every returned connection its manager does not call broken).
#[derive(Debug)]
pub struct PoolManager(ConnectionManager<AnyConnection>);

impl ManageConnection for PoolManager {
    type Connection = AnyConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<AnyConnection, Self::Error> {
        self.0.connect()
    }

    fn is_valid(&self, conn: &mut AnyConnection) -> Result<(), Self::Error> {
        self.0.is_valid(conn)
    }

    fn has_broken(&self, conn: &mut AnyConnection) -> bool {
        DISCARD_ON_RETURN.replace(false) || self.0.has_broken(conn)
    }
}

/// Which backend a URL names; `MultiConnection::establish` would try them in order and
/// SQLite accepts any string as a path, so we decide ourselves.
fn backend_of(url: &str) -> Backend {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") { Backend::Postgres } else { Backend::Sqlite }
}

/// The SQLite path inside a `sqlite://` URL (or a bare path).
fn sqlite_path(url: &str) -> &str {
    url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url)
}

/// The pragmas of every SQLite connection, the pool's and the group writer's.
#[derive(Debug, Clone, Copy)]
struct SqlitePragmas {
    synchronous: &'static str,
    busy_timeout_ms: u32,
    cache_kib: u32,
}

impl SqlitePragmas {
    fn of(settings: &DatabaseSettings) -> Self {
        Self {
            synchronous: settings.sqlite_synchronous.pragma(),
            busy_timeout_ms: settings.sqlite_busy_timeout_ms,
            cache_kib: settings.sqlite_cache_kib,
        }
    }

    /// busy_timeout first: r2d2 opens all connections at once, and every other pragma may
    /// need a lock another connection holds. `temp_store = MEMORY`: the statement journal of
    /// each savepoint (every member of a group commit has one) is kept in memory instead of
    /// a temporary file opened, written page by page and unlinked for every batch.
    fn apply(self, conn: &mut SqliteConnection) -> Result<(), diesel::result::Error> {
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = {}; PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; PRAGMA cache_size = -{}; \
             PRAGMA temp_store = MEMORY;",
            self.busy_timeout_ms,
            self.synchronous,
            self.cache_kib.max(64)
        ))
    }
}

impl CustomizeConnection<AnyConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut AnyConnection) -> Result<(), diesel::r2d2::Error> {
        if let AnyConnection::Sqlite(conn) = conn {
            self.apply(conn).map_err(diesel::r2d2::Error::QueryError)?;
        }
        Ok(())
    }
}

fn establish(url: &str) -> DbResult<AnyConnection> {
    match backend_of(url) {
        Backend::Postgres => PgConnection::establish(url).map(AnyConnection::Postgresql),
        Backend::Sqlite => SqliteConnection::establish(sqlite_path(url)).map(AnyConnection::Sqlite),
    }
    .map_err(|error| DbError::Connect(error.to_string()))
}

/// The shared connection pool.
#[derive(Clone)]
pub struct Database {
    pool: DbPool,
    backend: Backend,
    /// SQLite's group committer while this database (or a clone) lives: found by
    /// [`write_transaction`] through the file a connection has open.
    _group_writer: Option<Arc<GroupWriter>>,
    /// The group committer's writer thread, for [`Database::write`]: it ends when the last
    /// clone of this handle is dropped.
    writes: Option<std::sync::mpsc::Sender<group_commit::Job>>,
    /// One permit per pooled connection: work waits for a connection as a parked task,
    /// not as a blocked thread (a burst of requests would otherwise start hundreds of
    /// blocking threads, each with its own stack and allocator heap).
    slots: Arc<tokio::sync::Semaphore>,
    /// The runtime whose blocking pool runs database work ([`Database::run_blocking`]);
    /// without one, the caller's. One pool instead of one per HTTP worker's runtime keeps
    /// the threads (each with its own stack and allocator heap) to about one per slot.
    runtime: Option<tokio::runtime::Handle>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("backend", &self.backend).finish()
    }
}

impl Database {
    /// Connects, prepares SQLite (directory, WAL) and builds the pool. Does not migrate.
    pub fn connect(url: &str, settings: &DatabaseSettings) -> DbResult<Self> {
        let backend = backend_of(url);
        if backend == Backend::Sqlite {
            let path = Path::new(sqlite_path(url));
            if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|error| DbError::Connect(format!("cannot create {}: {error}", parent.display())))?;
            }
            // WAL once, before the pool exists: switching needs the write lock.
            if let AnyConnection::Sqlite(mut conn) = establish(url)? {
                conn.batch_execute(&format!(
                    "PRAGMA busy_timeout = {}; PRAGMA journal_mode = WAL;",
                    settings.sqlite_busy_timeout_ms
                ))
                .map_err(|error| DbError::Connect(error.to_string()))?;
            }
        }
        let manager = PoolManager(ConnectionManager::<AnyConnection>::new(match backend {
            Backend::Sqlite => sqlite_path(url).to_owned(),
            Backend::Postgres => url.to_owned(),
        }));
        let pool = Pool::builder()
            .max_size(settings.pool_size.max(1))
            // A SQLite file's connections are never dropped; PostgreSQL's are checked by
            // `Database::conn`, at most once per `PG_CHECK_AFTER`.
            .test_on_check_out(false)
            .connection_timeout(Duration::from_secs(settings.connect_timeout_secs.max(1)))
            .connection_customizer(Box::new(SqlitePragmas::of(settings)))
            .build(manager)
            .map_err(|error| DbError::Connect(error.to_string()))?;
        let group_writer = match backend {
            Backend::Sqlite if settings.sqlite_group_commit => {
                let (path, pragmas) = (sqlite_path(url).to_owned(), SqlitePragmas::of(settings));
                let writer = GroupWriter::for_file(move || {
                    let mut conn = SqliteConnection::establish(&path).map_err(|error| error.to_string())?;
                    pragmas.apply(&mut conn).map_err(|error| error.to_string())?;
                    Ok(conn)
                })
                .map_err(DbError::Connect)?;
                Some(writer)
            }
            _ => None,
        };
        let writes = match &group_writer {
            Some(writer) => Some(
                writer
                    .start_thread()
                    .map_err(|error| DbError::Connect(format!("cannot start the SQLite writer thread: {error}")))?,
            ),
            None => None,
        };
        let slots = Arc::new(tokio::sync::Semaphore::new(settings.pool_size.max(1) as usize));
        Ok(Self { pool, backend, _group_writer: group_writer, writes, slots, runtime: None })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Database work of this handle runs on `runtime`'s blocking pool (the application's
    /// main runtime, set at start-up).
    #[must_use]
    pub fn on_runtime(mut self, runtime: tokio::runtime::Handle) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Runs blocking database work once a slot is free, on the blocking pool of the
    /// runtime set with [`Database::on_runtime`] (or the caller's).
    pub async fn run_blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, tokio::task::JoinError> {
        // One permit per pooled connection, held until the task has ended, not just its
        // closure: a thread that returned its slot but is not idle yet would make the next
        // task start another thread. (The semaphore is never closed.)
        let _slot = self.slots.acquire().await;
        match &self.runtime {
            Some(runtime) => runtime.spawn_blocking(work).await,
            None => tokio::task::spawn_blocking(work).await,
        }
    }

    /// Runs `f` in a write transaction and returns once it is durable. With SQLite's group
    /// committer, `f` runs on the writer thread in the batch it is gathering (a thread switch
    /// to hand it over and one back, not one per lock, batch and commit as from the
    /// blocking pool); `write_transaction` inside `f` is a savepoint of that batch.
    /// Otherwise on the blocking pool, in a transaction of its own.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, E> + Send + 'static,
    {
        if let Some(jobs) = &self.writes {
            let (reply, answer) = tokio::sync::oneshot::channel();
            if jobs.send(group_commit::job(f, reply)).is_err() {
                return Err(DbError::Cancelled.into());
            }
            return answer.await.unwrap_or_else(|_| Err(DbError::Cancelled.into()));
        }
        let pool = self.clone();
        let written = self
            .run_blocking(move || {
                let mut conn = pool.conn().map_err(TxFailure::Database)?;
                write_transaction(&mut conn, |conn| f(conn).map_err(TxFailure::Job))
            })
            .await;
        match written {
            Ok(result) => result.map_err(TxFailure::into_error),
            Err(_) => Err(DbError::Cancelled.into()),
        }
    }

    /// Runs one small write that needs no transaction of its own ([`write_once`]): on
    /// SQLite in the group committer's batch, as [`Database::write`]; on PostgreSQL as one
    /// autocommitted statement, one round trip instead of BEGIN, the write and COMMIT.
    pub async fn write_once<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, E> + Send + 'static,
    {
        if self.backend == Backend::Sqlite {
            return self.write(f).await;
        }
        self.with_pooled(f).await
    }

    /// Runs a short read (a lookup by key) where it is awaited: SQLite answers one in a few
    /// microseconds, less than handing it to the blocking pool and back costs in thread
    /// switches. On PostgreSQL (a network round trip), or when no pooled connection is idle,
    /// on the blocking pool like [`Database::run_blocking`]. Never for writes: a write may
    /// wait for the writer's lock and an fsync.
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, E> + Send + 'static,
    {
        if self.backend == Backend::Sqlite
            && let Some(mut conn) = self.pool.try_get()
        {
            return f(&mut conn);
        }
        self.with_pooled(f).await
    }

    /// `f` on a pooled connection, on the blocking pool, outside any transaction.
    async fn with_pooled<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, E> + Send + 'static,
    {
        let pool = self.clone();
        self.run_blocking(move || {
            let mut conn = pool.conn()?;
            f(&mut conn)
        })
        .await
        .unwrap_or_else(|_| Err(DbError::Cancelled.into()))
    }

    /// A pooled connection. A PostgreSQL connection not checked within `PG_CHECK_AFTER`
    /// answers a `SELECT 1` first; one that does not (the server restarted, or dropped it)
    /// is discarded and the next one tried, as r2d2's own check on checkout would.
    pub fn conn(&self) -> DbResult<DbConn> {
        let mut tries = 0;
        loop {
            let mut conn = self.pool.get()?;
            if self.backend == Backend::Sqlite
                || PooledConnection::extensions(&conn)
                    .get::<CheckedAt>()
                    .is_some_and(|at| at.0.elapsed() < PG_CHECK_AFTER)
            {
                return Ok(conn);
            }
            match conn.batch_execute("SELECT 1") {
                Ok(()) => {
                    PooledConnection::extensions_mut(&mut conn).insert(CheckedAt(Instant::now()));
                    return Ok(conn);
                }
                Err(error) => {
                    DISCARD_ON_RETURN.set(true);
                    drop(conn);
                    tries += 1;
                    // Every pooled connection may be dead (a restarted server); past them,
                    // the pool connects afresh, so a further failure is the server's answer.
                    if tries > self.pool.max_size() {
                        return Err(error.into());
                    }
                }
            }
        }
    }

    /// Applies pending migrations of this backend's tree; returns their names.
    pub fn migrate(&self) -> DbResult<Vec<String>> {
        let mut conn = self.conn()?;
        let applied = match &mut *conn {
            AnyConnection::Sqlite(conn) => conn.run_pending_migrations(SQLITE_MIGRATIONS),
            AnyConnection::Postgresql(conn) => conn.run_pending_migrations(POSTGRES_MIGRATIONS),
        }
        .map_err(|error| DbError::Migration(error.to_string()))?;
        Ok(applied.iter().map(ToString::to_string).collect())
    }

    /// A trivial round trip, for readiness checks.
    pub fn ping(&self) -> DbResult<()> {
        let mut conn = self.conn()?;
        conn.batch_execute("SELECT 1")?;
        Ok(())
    }
}

/// One lock per SQLite database file in this process. SQLite admits one writer at a time
/// anyway; queueing writers on a mutex instead of in SQLite's busy handler (which polls
/// with sleeps of up to 100 ms) keeps commit latency low and steady under load. Writers
/// of other processes (a CLI next to `solgate serve`) still meet busy_timeout.
fn sqlite_writer_lock(conn: &mut SqliteConnection) -> Result<Arc<Mutex<()>>, diesel::result::Error> {
    static LOCKS: LazyLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = LazyLock::new(Default::default);
    let file = group_commit::database_file(conn)?;
    let mut locks = LOCKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(locks.entry(file).or_default().clone())
}

/// Runs `f` in a write transaction. On SQLite it starts with `BEGIN IMMEDIATE`, so the
/// write lock is taken before anything is read: a deferred transaction that reads first
/// and writes later fails with SQLITE_BUSY instead of waiting when another writer
/// committed in between. Where the file's `Database` runs a group committer (the
/// default), `f` runs on its writer connection inside the batch being gathered, and this
/// returns once that batch's commit is durable.
pub fn write_transaction<T, E>(
    conn: &mut AnyConnection,
    f: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<diesel::result::Error>,
{
    let lock = match conn {
        AnyConnection::Postgresql(_) => return conn.transaction(f),
        // A job of the writer thread: `conn` is the writer's, inside the batch.
        AnyConnection::Sqlite(_) if group_commit::in_job() => return conn.transaction(f),
        AnyConnection::Sqlite(inner) => {
            if let Some(writer) = GroupWriter::of(inner)? {
                return writer.run(f);
            }
            sqlite_writer_lock(inner)?
        }
    };
    let _writer = lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let AnyConnection::Sqlite(inner) = conn {
        AnsiTransactionManager::begin_transaction_sql(inner, "BEGIN IMMEDIATE")?;
    }
    match f(conn) {
        Ok(value) => {
            <AnyConnection as Connection>::TransactionManager::commit_transaction(conn)?;
            Ok(value)
        }
        Err(error) => {
            <AnyConnection as Connection>::TransactionManager::rollback_transaction(conn)?;
            Err(error)
        }
    }
}

/// One small write that needs no transaction of its own: on SQLite it joins the group
/// committer's batch where one runs (alone it would take the write lock outside the batch
/// and wait for an fsync of its own); on PostgreSQL it runs as it is (autocommit, one round
/// trip).
pub fn write_once<T, E>(conn: &mut AnyConnection, f: impl FnOnce(&mut AnyConnection) -> Result<T, E>) -> Result<T, E>
where
    E: From<diesel::result::Error>,
{
    match conn {
        AnyConnection::Sqlite(_) => write_transaction(conn, f),
        AnyConnection::Postgresql(_) => f(conn),
    }
}
