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

/// A new identifier for a stored resource (VNF instance, LCM operation occurrence, package,
/// subscription, ...): a UUID of version 7, time-ordered. Rows created together then have
/// neighbouring keys, so each commit writes a few index pages at the right edge of every
/// index on `id` instead of one random page per row and index (random version 4 ids cost
/// SQLite's writer about twice the WAL frames per LCM operation). Lists ordered by id come
/// out in creation order. The 74 random bits still make ids unguessable; the creation time
/// they reveal is already in the resources (`startTime`, package timestamps).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A migrated database for a test: on the PostgreSQL server of `SOLGATE_TEST_POSTGRES_URL`
/// when it is set (a database of its own, as `deploy/scripts/test.sh` provides), else SQLite
/// in a directory of its own; removed when the guard drops.
#[cfg(test)]
pub(crate) fn test_database(pool_size: u32) -> (Database, TestDir) {
    match std::env::var("SOLGATE_TEST_POSTGRES_URL") {
        Ok(admin_url) => postgres_test_database(pool_size, admin_url),
        Err(_) => sqlite_test_database(pool_size),
    }
}

/// [`test_database`] on SQLite whatever the environment says.
#[cfg(test)]
pub(crate) fn sqlite_test_database(pool_size: u32) -> (Database, TestDir) {
    let dir = std::env::temp_dir().join(format!("solgate-db-test-{}", new_id()));
    let url = format!("sqlite://{}", dir.join("test.db").display());
    let database = Database::connect(&url, &DatabaseSettings { pool_size, ..Default::default() }).unwrap();
    database.migrate().unwrap();
    (database, TestDir { dir: Some(dir), postgres: None })
}

#[cfg(test)]
fn postgres_test_database(pool_size: u32, admin_url: String) -> (Database, TestDir) {
    use diesel::{Connection, RunQueryDsl};
    let name = format!("solgate_db_test_{}", new_id().replace('-', ""));
    let mut admin = diesel::PgConnection::establish(&admin_url).unwrap();
    diesel::sql_query(format!("CREATE DATABASE {name}")).execute(&mut admin).unwrap();
    let (base, _) = admin_url.rsplit_once('/').expect("SOLGATE_TEST_POSTGRES_URL ends in /database");
    let url = format!("{base}/{name}");
    let guard = TestDir { dir: None, postgres: Some((admin_url, name)) };
    let database = Database::connect(&url, &DatabaseSettings { pool_size, ..Default::default() }).unwrap();
    database.migrate().unwrap();
    (database, guard)
}

/// What a test database leaves behind: its directory, or its PostgreSQL database (the
/// server's admin URL and the name).
#[cfg(test)]
pub(crate) struct TestDir {
    dir: Option<std::path::PathBuf>,
    postgres: Option<(String, String)>,
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        use diesel::{Connection, RunQueryDsl};
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some((admin_url, name)) = &self.postgres
            && let Ok(mut admin) = diesel::PgConnection::establish(admin_url)
        {
            let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn new_ids_are_uuids_in_creation_order() {
        let ids: Vec<String> = (0..1_000).map(|_| super::new_id()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} then {}", pair[0], pair[1]);
        }
        let parsed = uuid::Uuid::parse_str(&ids[0]).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 7);
    }
}
