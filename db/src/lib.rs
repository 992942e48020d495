//! solgate's persistence: Diesel schema, per-major tables, migrations for SQLite and
//! PostgreSQL, and one repository module per table. The same repository code serves
//! both backends through [`AnyConnection`].

mod any_connection;
pub mod connection;
pub mod error;
mod group_commit;
pub mod schema;
pub mod settings;

pub mod repo;

pub use connection::{AnyConnection, Backend, Database, DbConn, write_once, write_transaction};
pub use error::{DbError, DbResult};
pub use settings::{DatabaseSettings, SqliteSynchronous};
