//! Settings of the persistence layer (the `[database]` table).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseSettings {
    /// `postgres://user:pass@host/db` or `sqlite://path/to/file.db`; empty means the
    /// embedded default, `solgate.db` in the data directory.
    pub url: String,
    /// Connections in the pool.
    pub pool_size: u32,
    /// Seconds to wait for a free pooled connection.
    pub connect_timeout_secs: u64,
    /// SQLite durability: `full` (default) fsyncs every commit, so an accepted (202)
    /// operation survives a power loss; `normal` survives a process crash only and
    /// commits several times faster.
    pub sqlite_synchronous: SqliteSynchronous,
    /// Milliseconds a SQLite writer waits for the write lock before failing.
    pub sqlite_busy_timeout_ms: u32,
    /// SQLite: the write transactions that arrive while a commit is in flight are
    /// committed together, with one fsync (each still durable before it answers).
    /// `false` commits each on its own.
    pub sqlite_group_commit: bool,
    /// SQLite page cache per connection, in KiB (SQLite's default is about 2,000). Every
    /// pooled connection and the writer has its own, and in WAL mode another connection's
    /// commit invalidates it, so a small one costs little and bounds the memory.
    pub sqlite_cache_kib: u32,
    /// Threads of the process's blocking pool, which runs the database work (at most
    /// `pool_size` at once) and file I/O; more work waits its turn. Unset: `pool_size` + 2.
    /// Each thread keeps its own allocator heap, so the runtime's default (512, started as
    /// work arrives) let a burst of LCM requests grow RSS by tens of threads' heaps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocking_threads: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteSynchronous {
    Full,
    Normal,
}

impl SqliteSynchronous {
    pub fn pragma(self) -> &'static str {
        match self {
            SqliteSynchronous::Full => "FULL",
            SqliteSynchronous::Normal => "NORMAL",
        }
    }
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            pool_size: 8,
            connect_timeout_secs: 10,
            sqlite_synchronous: SqliteSynchronous::Full,
            sqlite_busy_timeout_ms: 10_000,
            sqlite_group_commit: true,
            sqlite_cache_kib: 1024,
            blocking_threads: None,
        }
    }
}

impl DatabaseSettings {
    /// The size of the blocking pool: `blocking_threads`, else `pool_size` + 2 (the
    /// database work a pool admits at once, and room for file I/O beside it).
    pub fn blocking_pool_size(&self) -> usize {
        let threads = self.blocking_threads.unwrap_or_else(|| self.pool_size.max(1).saturating_add(2));
        threads.max(1) as usize
    }
}
