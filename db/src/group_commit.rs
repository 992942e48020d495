//! Group commit for SQLite. SQLite has one writer at a time, and with `synchronous = FULL`
//! every commit waits for an fsync; committing each write transaction on its own caps the
//! whole process near the disk's fsync rate. Here the write transactions of a process
//! share one writer connection: the first to arrive opens a transaction and becomes the
//! batch's leader, the ones queued behind it run inside that same transaction (each in
//! its own savepoint, so one that fails undoes only itself), and the leader commits once
//! for all of them. Nobody returns before the commit that holds its writes is durable, so
//! every state change is still durable before it is visible; a commit that fails fails
//! every member of its batch.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, PoisonError, Weak, mpsc};
use std::time::{Duration, Instant};

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

use crate::any_connection::AnyConnection;
use crate::error::{DbError, TxFailure};

/// How long a leader waits for writers queued behind it before it commits. They are
/// already waiting for the lock, so this bounds a rare slow hand-over, not the usual one.
const MAX_GATHER: Duration = Duration::from_millis(2);
/// Members per batch at most: a bound on what one failed commit takes with it.
const MAX_MEMBERS: usize = 64;

/// The writer connection of one SQLite file and the batch it has open.
pub(crate) struct GroupWriter {
    state: Mutex<Batch>,
    /// Writers waiting for `state`: a leader gathers until none is left.
    waiting: AtomicUsize,
    member_done: Condvar,
    batch_done: Condvar,
    open: Box<dyn Fn() -> Result<SqliteConnection, String> + Send + Sync>,
}

struct Batch {
    conn: AnyConnection,
    /// The batch a transaction is open for.
    open: Option<u64>,
    members: usize,
    next: u64,
    /// Batches up to this one have ended.
    finished: u64,
    /// Batches whose commit failed: the error, and how many members have yet to read it.
    failures: BTreeMap<u64, (String, usize)>,
}

fn lock(mutex: &Mutex<Batch>) -> MutexGuard<'_, Batch> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn commit_failed(detail: &str) -> DieselError {
    DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(format!("the group commit failed: {detail}")))
}

// SQLite's table-valued pragma as a Diesel table: a query of it has a static id, so its
// prepared statement is cached (every write transaction asks).
diesel::table! {
    pragma_database_list (seq) {
        seq -> Integer,
        name -> Text,
        file -> Text,
    }
}

/// The `main` database file a connection has open, as SQLite names it.
pub(crate) fn database_file(conn: &mut SqliteConnection) -> Result<String, DieselError> {
    pragma_database_list::table
        .filter(pragma_database_list::name.eq("main"))
        .select(pragma_database_list::file)
        .get_result::<String>(conn)
}

/// The group writers of this process by database file. Weak: a writer lives as long as
/// a `Database` of its file does.
static WRITERS: LazyLock<Mutex<HashMap<String, Weak<GroupWriter>>>> = LazyLock::new(Default::default);

fn writers() -> MutexGuard<'static, HashMap<String, Weak<GroupWriter>>> {
    WRITERS.lock().unwrap_or_else(PoisonError::into_inner)
}

impl GroupWriter {
    /// The writer of the file `open` connects to; one already running for that file is
    /// shared.
    pub(crate) fn for_file(
        open: impl Fn() -> Result<SqliteConnection, String> + Send + Sync + 'static,
    ) -> Result<Arc<Self>, String> {
        let mut conn = open()?;
        let file = database_file(&mut conn).map_err(|error| error.to_string())?;
        let mut writers = writers();
        writers.retain(|_, writer| writer.strong_count() > 0);
        if let Some(running) = writers.get(&file).and_then(Weak::upgrade) {
            return Ok(running);
        }
        let writer = Arc::new(Self {
            state: Mutex::new(Batch {
                conn: AnyConnection::Sqlite(conn),
                open: None,
                members: 0,
                next: 1,
                finished: 0,
                failures: BTreeMap::new(),
            }),
            waiting: AtomicUsize::new(0),
            member_done: Condvar::new(),
            batch_done: Condvar::new(),
            open: Box::new(open),
        });
        writers.insert(file, Arc::downgrade(&writer));
        Ok(writer)
    }

    /// The writer of the file `conn` has open, if a `Database` of it runs one.
    pub(crate) fn of(conn: &mut SqliteConnection) -> Result<Option<Arc<Self>>, DieselError> {
        let file = database_file(conn)?;
        Ok(writers().get(&file).and_then(Weak::upgrade))
    }

    /// Runs `f` as a member of the open batch (or opens one) and returns once the batch's
    /// commit is durable: `f`'s result, or the commit's error.
    pub(crate) fn run<T, E>(&self, f: impl FnOnce(&mut AnyConnection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<DieselError>,
    {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let mut batch = lock(&self.state);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        let id = match batch.open {
            Some(id) => id,
            None => {
                if let AnyConnection::Sqlite(conn) = &mut batch.conn {
                    AnsiTransactionManager::begin_transaction_sql(conn, "BEGIN IMMEDIATE")?;
                }
                let id = batch.next;
                batch.next += 1;
                batch.open = Some(id);
                batch.members = 0;
                return self.lead(batch, id, f);
            }
        };
        let outcome = member(&mut batch.conn, f);
        batch.members += 1;
        self.member_done.notify_all();
        while batch.finished < id {
            batch = self.batch_done.wait(batch).unwrap_or_else(PoisonError::into_inner);
        }
        let failure = match batch.failures.get_mut(&id) {
            Some((detail, unread)) => {
                let detail = detail.clone();
                *unread = unread.saturating_sub(1);
                if *unread == 0 {
                    batch.failures.remove(&id);
                }
                Some(detail)
            }
            None => None,
        };
        drop(batch);
        match (failure, outcome) {
            (_, Err(payload)) => resume_unwind(payload),
            (Some(detail), Ok(_)) => Err(commit_failed(&detail).into()),
            (None, Ok(result)) => result,
        }
    }

    fn lead<T, E>(
        &self,
        mut batch: MutexGuard<'_, Batch>,
        id: u64,
        f: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<DieselError>,
    {
        let outcome = member(&mut batch.conn, f);
        batch.members += 1;
        // Writers queued on the lock join this batch before it commits.
        let deadline = Instant::now() + MAX_GATHER;
        while self.waiting.load(Ordering::SeqCst) > 0 && batch.members < MAX_MEMBERS {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
            batch = self.member_done.wait_timeout(batch, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        let committed = <AnyConnection as Connection>::TransactionManager::commit_transaction(&mut batch.conn);
        if let Err(error) = &committed {
            let detail = error.to_string();
            tracing::error!(%detail, members = batch.members, "a group commit failed");
            let others = batch.members - 1;
            if others > 0 {
                batch.failures.insert(id, (detail, others));
            }
            // A connection whose commit failed may be left inside a transaction: start over.
            let _ = <AnyConnection as Connection>::TransactionManager::rollback_transaction(&mut batch.conn);
            match (self.open)() {
                Ok(conn) => batch.conn = AnyConnection::Sqlite(conn),
                Err(error) => tracing::error!(%error, "reopening the SQLite writer connection failed"),
            }
        }
        batch.open = None;
        batch.finished = id;
        self.batch_done.notify_all();
        drop(batch);
        match (committed, outcome) {
            (_, Err(payload)) => resume_unwind(payload),
            (Err(error), Ok(_)) => Err(commit_failed(&error.to_string()).into()),
            (Ok(()), Ok(result)) => result,
        }
    }
}

/// What the writer thread tells a job once its batch has ended: the commit's error, if any.
pub(crate) type Done = Box<dyn FnOnce(Option<&str>) + Send>;
/// A write transaction handed to the writer thread ([`crate::Database::write`]).
pub(crate) type Job = Box<dyn FnOnce(&mut AnyConnection) -> Done + Send>;

thread_local! {
    /// Set while a job of the writer thread runs: a `write_transaction` inside it is a
    /// savepoint of the batch (its connection is the writer's, already in the transaction).
    static IN_JOB: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is running a writer-thread job (see [`IN_JOB`]).
pub(crate) fn in_job() -> bool {
    IN_JOB.get()
}

struct InJob;

impl InJob {
    fn enter() -> Self {
        IN_JOB.set(true);
        Self
    }
}

impl Drop for InJob {
    fn drop(&mut self) {
        IN_JOB.set(false);
    }
}

impl GroupWriter {
    /// Starts the thread that runs the write transactions of async callers: it takes every
    /// job queued while the previous commit was in flight into one batch, so a busy writer
    /// hands work over without a thread switch per transaction. It ends when every sender
    /// is dropped.
    pub(crate) fn start_thread(self: &Arc<Self>) -> std::io::Result<mpsc::Sender<Job>> {
        let (sender, jobs) = mpsc::channel::<Job>();
        let writer = Arc::clone(self);
        std::thread::Builder::new().name("sqlite-writer".to_owned()).spawn(move || writer.serve(&jobs))?;
        Ok(sender)
    }

    fn serve(&self, jobs: &mpsc::Receiver<Job>) {
        while let Ok(first) = jobs.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_MEMBERS {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            let mut done = Vec::with_capacity(batch.len());
            let committed = self.run(|conn| -> Result<(), DieselError> {
                for job in batch {
                    done.push(job(conn));
                }
                Ok(())
            });
            let failure = committed.err().map(|error| error.to_string());
            for done in done {
                done(failure.as_deref());
            }
        }
    }
}

/// `f` as a writer-thread job, in a savepoint of its own (a failure or panic undoes only
/// its writes); `reply` gets its result once the batch's commit is durable, or the
/// commit's error.
pub(crate) fn job<T, E, F>(f: F, reply: tokio::sync::oneshot::Sender<Result<T, E>>) -> Job
where
    T: Send + 'static,
    E: From<DbError> + Send + 'static,
    F: FnOnce(&mut AnyConnection) -> Result<T, E> + Send + 'static,
{
    Box::new(move |conn| {
        let outcome = {
            let _in_job = InJob::enter();
            member(conn, |conn| f(conn).map_err(TxFailure::Job))
        };
        let outcome: Result<T, E> = match outcome {
            Ok(result) => result.map_err(TxFailure::into_error),
            Err(_panic) => {
                tracing::error!("a write transaction panicked; its writes are undone");
                Err(DbError::Cancelled.into())
            }
        };
        Box::new(move |failure: Option<&str>| {
            let result = match (outcome, failure) {
                (Ok(_), Some(detail)) => Err(DbError::Query(commit_failed(detail)).into()),
                (outcome, _) => outcome,
            };
            // The caller may have gone away (a dropped request): nothing to tell.
            let _ = reply.send(result);
        })
    })
}

type Panic = Box<dyn std::any::Any + Send + 'static>;

/// Runs one member's work in its own savepoint: released when it succeeds, rolled back
/// when it fails (or panics), so the batch goes on without it.
fn member<T, E>(
    conn: &mut AnyConnection,
    f: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<Result<T, E>, Panic>
where
    E: From<DieselError>,
{
    type Manager = <AnyConnection as Connection>::TransactionManager;
    if let Err(error) = Manager::begin_transaction(conn) {
        return Ok(Err(error.into()));
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut *conn))) {
        Ok(Ok(value)) => Ok(match Manager::commit_transaction(conn) {
            Ok(()) => Ok(value),
            Err(error) => {
                let _ = Manager::rollback_transaction(conn);
                Err(error.into())
            }
        }),
        Ok(Err(error)) => {
            let _ = Manager::rollback_transaction(conn);
            Ok(Err(error))
        }
        Err(payload) => {
            let _ = Manager::rollback_transaction(conn);
            Err(payload)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use diesel::prelude::*;

    use crate::repo::outbox;
    use crate::schema::rpc_outbox;
    use crate::{Database, DbError, write_transaction};

    fn database(pool_size: u32) -> (Database, crate::TestDir) {
        crate::sqlite_test_database(pool_size)
    }

    fn stored(database: &Database, id: i64) -> bool {
        let mut conn = database.conn().unwrap();
        rpc_outbox::table.filter(rpc_outbox::id.eq(id)).count().get_result::<i64>(&mut *conn).unwrap() == 1
    }

    /// SQLite is built without memory statistics and without a mutex per connection
    /// (`.cargo/config.toml`): both cost a lock on every call, and the global one is
    /// shared by every connection of the process.
    #[test]
    fn sqlite_is_built_without_per_call_locks() {
        let (database, _dir) = database(2);
        let mut conn = database.conn().unwrap();
        let options: Vec<i32> = ["THREADSAFE=2", "DEFAULT_MEMSTATUS=0"]
            .iter()
            .map(|option| {
                diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(&format!(
                    "sqlite_compileoption_used('{option}')"
                )))
                .get_result(&mut *conn)
                .unwrap()
            })
            .collect();
        assert_eq!(options, [1, 1], "THREADSAFE=2, DEFAULT_MEMSTATUS=0");
    }

    /// Many writers at once, every fourth failing after it wrote: each success is stored
    /// and readable from another connection the moment it returns, each failure left
    /// nothing, whatever batch it shared.
    #[test]
    fn each_writer_of_a_batch_keeps_or_loses_only_its_own_writes() {
        let (database, _dir) = database(16);
        let database = Arc::new(database);
        let threads: Vec<_> = (0..16)
            .map(|thread| {
                let database = database.clone();
                std::thread::spawn(move || {
                    let (mut kept, mut undone) = (Vec::new(), Vec::new());
                    for i in 0..25 {
                        let fail = (thread + i) % 4 == 0;
                        let mut conn = database.conn().unwrap();
                        let mut written = 0;
                        let result = write_transaction(&mut conn, |conn| {
                            written = outbox::enqueue(conn, "lcm", &format!("{thread}-{i}"), 2)?;
                            if fail { Err(DbError::Conflict("refused after writing".into())) } else { Ok(written) }
                        });
                        drop(conn);
                        match result {
                            Ok(id) => {
                                assert!(stored(&database, id), "row {id} returned but not visible");
                                kept.push(id);
                            }
                            Err(DbError::Conflict(_)) => undone.push(format!("{thread}-{i}")),
                            Err(other) => panic!("{other}"),
                        }
                    }
                    (kept, undone)
                })
            })
            .collect();
        let (mut kept, mut undone) = (Vec::new(), Vec::new());
        for thread in threads {
            let (k, u) = thread.join().unwrap();
            kept.extend(k);
            undone.extend(u);
        }
        assert_eq!((kept.len(), undone.len()), (300, 100));
        let mut conn = database.conn().unwrap();
        let targets: Vec<String> = rpc_outbox::table.select(rpc_outbox::target_id).load(&mut *conn).unwrap();
        assert_eq!(targets.len(), 300, "only the successful writers' rows");
        assert!(undone.iter().all(|target| !targets.contains(target)), "a failed writer's row survived");
    }

    /// A writer that panics inside its transaction takes only its own writes with it; the
    /// writer connection goes on serving the others.
    #[test]
    fn a_writer_that_panics_undoes_only_itself() {
        let (database, _dir) = database(4);
        let database = Arc::new(database);
        let panicking = {
            let database = database.clone();
            std::thread::spawn(move || {
                let mut conn = database.conn().unwrap();
                let _ = write_transaction(&mut conn, |conn| -> Result<(), DbError> {
                    outbox::enqueue(conn, "lcm", "panicked", 2)?;
                    panic!("a bug inside a transaction");
                });
            })
        };
        assert!(panicking.join().is_err(), "the panic reaches its own thread");
        let mut conn = database.conn().unwrap();
        let id = write_transaction(&mut conn, |conn| outbox::enqueue(conn, "lcm", "after", 2)).unwrap();
        assert!(stored(&database, id));
        let targets: Vec<String> = rpc_outbox::table.select(rpc_outbox::target_id).load(&mut *conn).unwrap();
        assert_eq!(targets, ["after"]);
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    }

    /// Async writers on the writer thread: each success is durable and visible to another
    /// connection when it returns, each failure (some after writing, some through a nested
    /// `write_transaction`, which is a savepoint of the batch) left nothing, and a panicking
    /// one is an error of its own while the others are kept.
    #[test]
    fn writer_thread_jobs_keep_or_lose_only_their_own_writes() {
        let (database, _dir) = database(4);
        let database = Arc::new(database);
        runtime().block_on(async {
            let writers = (0..200).map(|i| {
                let database = database.clone();
                tokio::spawn(async move {
                    let target = format!("job-{i}");
                    let written = database
                        .write(move |conn| -> Result<i64, DbError> {
                            let id = outbox::enqueue(conn, "lcm", &target, 2)?;
                            match i % 5 {
                                0 => Err(DbError::Conflict("refused after writing".into())),
                                1 => write_transaction(conn, |conn| {
                                    outbox::enqueue(conn, "lcm", &format!("{target}-nested"), 2)?;
                                    Err(DbError::Conflict("nested refusal".into()))
                                }),
                                2 if i == 42 => panic!("a bug inside a job"),
                                _ => Ok(id),
                            }
                        })
                        .await;
                    if let Ok(id) = written {
                        assert!(stored(&database, id), "job {i}: row {id} returned but not visible");
                    }
                    (i, written.map_err(|error| error.to_string()))
                })
            });
            let mut kept = Vec::new();
            for writer in futures_join(writers).await {
                let (i, written) = writer.unwrap();
                match i % 5 {
                    0 | 1 => assert!(written.unwrap_err().contains("refus"), "job {i}"),
                    2 if i == 42 => assert!(written.is_err(), "the panicking job is an error"),
                    _ => kept.push(format!("job-{i}")),
                }
            }
            let mut conn = database.conn().unwrap();
            let mut targets: Vec<String> = rpc_outbox::table.select(rpc_outbox::target_id).load(&mut *conn).unwrap();
            targets.sort();
            kept.sort();
            assert_eq!(targets, kept, "only the successful jobs' rows, none of a failed or nested-failed one");
        });
    }

    async fn futures_join<T>(
        handles: impl Iterator<Item = tokio::task::JoinHandle<T>>,
    ) -> Vec<Result<T, tokio::task::JoinError>> {
        let mut results = Vec::new();
        for handle in handles.collect::<Vec<_>>() {
            results.push(handle.await);
        }
        results
    }

    /// Sync writers from the blocking pool and async ones on the writer thread share the
    /// file's writer without deadlock or loss.
    #[test]
    fn writer_thread_and_blocking_writers_share_the_file() {
        let (database, _dir) = database(4);
        let database = Arc::new(database);
        runtime().block_on(async {
            let mut handles = Vec::new();
            for i in 0..100 {
                let database = database.clone();
                handles.push(tokio::spawn(async move {
                    if i % 2 == 0 {
                        database.write(move |conn| outbox::enqueue(conn, "lcm", &format!("w-{i}"), 2)).await.unwrap()
                    } else {
                        let pool = database.clone();
                        database
                            .run_blocking(move || {
                                let mut conn = pool.conn().unwrap();
                                write_transaction(&mut conn, |conn| outbox::enqueue(conn, "lcm", &format!("b-{i}"), 2))
                                    .unwrap()
                            })
                            .await
                            .unwrap()
                    }
                }));
            }
            for handle in handles {
                let id = handle.await.unwrap();
                assert!(stored(&database, id));
            }
        });
        let mut conn = database.conn().unwrap();
        assert_eq!(rpc_outbox::table.count().get_result::<i64>(&mut *conn).unwrap(), 100);
    }
}
