//! VNF packages (SOL005): the VnfPkgInfo document, its indexed states, the parsed VNFD
//! summary (so LCM never re-reads the zip), and where an upload comes from.

use diesel::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::document::{index_of, lenient_text};
use crate::repo::list::{ListSpec, predicate};
use crate::repo::now_text;
use crate::schema::vnf_packages;

#[derive(Debug, Clone, PartialEq)]
pub struct PackageRecord {
    pub id: String,
    /// VnfPkgInfo without `_links`.
    pub body: Value,
    /// The parsed VNFD summary, once onboarded.
    pub vnfd: Option<Value>,
    /// For upload_from_uri: the address and credentials (never shown).
    pub upload_source: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
    pub row_version: i64,
    /// The project that owns it (empty: created without authentication).
    pub project: String,
}

impl PackageRecord {
    pub fn onboarding_state(&self) -> &str {
        PackageIndex::of(&self.body).onboarding_state.unwrap_or_default()
    }

    pub fn operational_state(&self) -> &str {
        PackageIndex::of(&self.body).operational_state.unwrap_or_default()
    }

    pub fn usage_state(&self) -> &str {
        PackageIndex::of(&self.body).usage_state.unwrap_or_default()
    }
}

/// The states of a VnfPkgInfo (SOL005 clause 9.5.2.5).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PackageIndex<'a> {
    #[serde(borrow, deserialize_with = "lenient_text")]
    onboarding_state: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    operational_state: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    usage_state: Option<&'a str>,
}

impl<'a> PackageIndex<'a> {
    fn of(body: &'a Value) -> Self {
        index_of(body)
    }
}

type Row = (String, String, Option<String>, Option<String>, String, String, i64, String);

fn from_row(
    (id, body, vnfd, upload_source, created_at, updated_at, row_version, project): Row,
) -> DbResult<PackageRecord> {
    Ok(PackageRecord {
        id,
        body: serde_json::from_str(&body)?,
        vnfd: vnfd.map(|text| serde_json::from_str(&text)).transpose()?,
        upload_source: upload_source.map(|text| serde_json::from_str(&text)).transpose()?,
        created_at,
        updated_at,
        row_version,
        project,
    })
}

macro_rules! columns {
    () => {
        (
            vnf_packages::id,
            vnf_packages::body,
            vnf_packages::vnfd,
            vnf_packages::upload_source,
            vnf_packages::created_at,
            vnf_packages::updated_at,
            vnf_packages::row_version,
            vnf_packages::project,
        )
    };
}

fn text(value: &Value, key: &str) -> Option<String> {
    value[key].as_str().map(str::to_owned)
}

pub fn insert(conn: &mut AnyConnection, record: &PackageRecord) -> DbResult<()> {
    let body = &record.body;
    diesel::insert_into(vnf_packages::table)
        .values((
            vnf_packages::id.eq(&record.id),
            vnf_packages::onboarding_state.eq(text(body, "onboardingState").unwrap_or_default()),
            vnf_packages::operational_state.eq(text(body, "operationalState").unwrap_or_default()),
            vnf_packages::usage_state.eq(text(body, "usageState").unwrap_or_default()),
            vnf_packages::vnfd_id.eq(text(body, "vnfdId")),
            vnf_packages::vnf_provider.eq(text(body, "vnfProvider")),
            vnf_packages::vnf_product_name.eq(text(body, "vnfProductName")),
            vnf_packages::vnf_software_version.eq(text(body, "vnfSoftwareVersion")),
            vnf_packages::vnfd_version.eq(text(body, "vnfdVersion")),
            vnf_packages::body.eq(body.to_string()),
            vnf_packages::vnfd.eq(record.vnfd.as_ref().map(Value::to_string)),
            vnf_packages::upload_source.eq(record.upload_source.as_ref().map(Value::to_string)),
            vnf_packages::created_at.eq(&record.created_at),
            vnf_packages::updated_at.eq(&record.updated_at),
            vnf_packages::row_version.eq(record.row_version),
            vnf_packages::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

// `get_result`, not `first`, for lookups of one row: see `lcm/instances.rs`.
pub fn find(conn: &mut AnyConnection, id: &str) -> DbResult<Option<PackageRecord>> {
    vnf_packages::table
        .filter(vnf_packages::id.eq(id))
        .select(columns!())
        .get_result::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

/// The onboarded package of a VNFD (vnfdId is unique among onboarded packages).
pub fn find_by_vnfd_id(conn: &mut AnyConnection, vnfd_id: &str) -> DbResult<Option<PackageRecord>> {
    vnf_packages::table
        .filter(vnf_packages::vnfd_id.eq(vnfd_id))
        .select(columns!())
        .get_result::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

type LeanRow = (String, String, bool, Option<String>, String, String, i64, String);

macro_rules! lean_columns {
    () => {
        (
            vnf_packages::id,
            vnf_packages::body,
            vnf_packages::vnfd.is_not_null(),
            vnf_packages::upload_source,
            vnf_packages::created_at,
            vnf_packages::updated_at,
            vnf_packages::row_version,
            vnf_packages::project,
        )
    };
}

fn from_lean_row(
    (id, body, has_vnfd, upload_source, created_at, updated_at, row_version, project): LeanRow,
) -> DbResult<(PackageRecord, bool)> {
    let record = from_row((id, body, None, upload_source, created_at, updated_at, row_version, project))?;
    Ok((record, has_vnfd))
}

/// As [`find`] without reading the VNFD summary (`vnfd` is `None`); whether the row has one.
/// For callers that keep the parsed summary ([`vnfd_text`] reads it).
pub fn find_lean(conn: &mut AnyConnection, id: &str) -> DbResult<Option<(PackageRecord, bool)>> {
    vnf_packages::table
        .filter(vnf_packages::id.eq(id))
        .select(lean_columns!())
        .get_result::<LeanRow>(conn)
        .optional()?
        .map(from_lean_row)
        .transpose()
}

/// As [`find_by_vnfd_id`] without reading the VNFD summary, as [`find_lean`].
pub fn find_lean_by_vnfd_id(conn: &mut AnyConnection, vnfd_id: &str) -> DbResult<Option<(PackageRecord, bool)>> {
    vnf_packages::table
        .filter(vnf_packages::vnfd_id.eq(vnfd_id))
        .select(lean_columns!())
        .get_result::<LeanRow>(conn)
        .optional()?
        .map(from_lean_row)
        .transpose()
}

/// The stored VNFD summary of a package, as text, if the row is still at `row_version`.
pub fn vnfd_text(conn: &mut AnyConnection, id: &str, row_version: i64) -> DbResult<Option<String>> {
    Ok(vnf_packages::table
        .filter(vnf_packages::id.eq(id))
        .filter(vnf_packages::row_version.eq(row_version))
        .select(vnf_packages::vnfd)
        .get_result::<Option<String>>(conn)
        .optional()?
        .flatten())
}

/// The columns an update writes: everything derived from the record, a new timestamp and
/// the next row version.
macro_rules! changes {
    ($record:expr) => {{
        let record: &PackageRecord = $record;
        let body = &record.body;
        (
            vnf_packages::onboarding_state.eq(text(body, "onboardingState").unwrap_or_default()),
            vnf_packages::operational_state.eq(text(body, "operationalState").unwrap_or_default()),
            vnf_packages::usage_state.eq(text(body, "usageState").unwrap_or_default()),
            vnf_packages::vnfd_id.eq(text(body, "vnfdId")),
            vnf_packages::vnf_provider.eq(text(body, "vnfProvider")),
            vnf_packages::vnf_product_name.eq(text(body, "vnfProductName")),
            vnf_packages::vnf_software_version.eq(text(body, "vnfSoftwareVersion")),
            vnf_packages::vnfd_version.eq(text(body, "vnfdVersion")),
            vnf_packages::body.eq(body.to_string()),
            vnf_packages::vnfd.eq(record.vnfd.as_ref().map(Value::to_string)),
            vnf_packages::upload_source.eq(record.upload_source.as_ref().map(Value::to_string)),
            vnf_packages::updated_at.eq(now_text()),
            vnf_packages::row_version.eq(vnf_packages::row_version + 1),
        )
    }};
}

/// Stores the document (and VNFD summary / upload source) with the columns derived from it.
/// With `expected_version`, only if nobody changed the row meanwhile (optimistic lock): the
/// version is part of the UPDATE's condition, so two writers can never both succeed.
/// Returns whether the row was written. A duplicate `vnfdId` fails with a unique violation
/// ([`crate::DbError::is_unique_violation`]).
pub fn update(conn: &mut AnyConnection, record: &PackageRecord, expected_version: Option<i64>) -> DbResult<bool> {
    let target = vnf_packages::table.filter(vnf_packages::id.eq(&record.id));
    let changed = match expected_version {
        Some(version) => {
            diesel::update(target.filter(vnf_packages::row_version.eq(version))).set(changes!(record)).execute(conn)?
        }
        None => diesel::update(target).set(changes!(record)).execute(conn)?,
    };
    Ok(changed > 0)
}

pub fn delete(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    Ok(diesel::delete(vnf_packages::table.filter(vnf_packages::id.eq(id))).execute(conn)? > 0)
}

pub fn list(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<PackageRecord>> {
    let mut query = vnf_packages::table.select(columns!()).order(vnf_packages::id.asc()).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<vnf_packages::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(vnf_packages::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(vnf_packages::id.gt(after.clone()));
    }
    query.limit(spec.limit).load::<Row>(conn)?.into_iter().map(from_row).collect()
}

/// Packages whose onboarding was interrupted (UPLOADING or PROCESSING).
pub fn interrupted(conn: &mut AnyConnection) -> DbResult<Vec<PackageRecord>> {
    vnf_packages::table
        .filter(vnf_packages::onboarding_state.eq_any(["UPLOADING", "PROCESSING"]))
        .select(columns!())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect()
}

pub const COLUMNS: &[solgate_sol013::ColumnSpec] = {
    use solgate_sol013::{ColumnKind, ColumnSpec};
    &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "onboardingState", column: "onboarding_state", kind: ColumnKind::Text },
        ColumnSpec { attr: "operationalState", column: "operational_state", kind: ColumnKind::Text },
        ColumnSpec { attr: "usageState", column: "usage_state", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfdId", column: "vnfd_id", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfProvider", column: "vnf_provider", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfProductName", column: "vnf_product_name", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfSoftwareVersion", column: "vnf_software_version", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfdVersion", column: "vnfd_version", kind: ColumnKind::Text },
    ]
};

/// Recomputes `usageState` (IN_USE while any VNF instance of any major uses the package).
/// Call in the transaction that creates, deletes or re-points an instance.
pub fn refresh_usage_state(conn: &mut AnyConnection, id: &str) -> DbResult<()> {
    use crate::repo::lcm::{LcmMajor, package_has_instances};
    // The indexed column first: the whole record (its VNFD summary too) only to change it.
    let Some(current) = vnf_packages::table
        .filter(vnf_packages::id.eq(id))
        .select(vnf_packages::usage_state)
        .get_result::<String>(conn)
        .optional()?
    else {
        return Ok(());
    };
    let used = package_has_instances(conn, LcmMajor::V2, id)? || package_has_instances(conn, LcmMajor::V1, id)?;
    let state = if used { "IN_USE" } else { "NOT_IN_USE" };
    if current != state
        && let Some(mut record) = find(conn, id)?
        && record.usage_state() != state
    {
        record.body["usageState"] = Value::String(state.to_owned());
        update(conn, &record, None)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Database, DatabaseSettings};

    /// A migrated SQLite file of its own, removed afterwards.
    struct TestDb {
        database: Database,
        dir: std::path::PathBuf,
    }

    impl TestDb {
        fn new() -> TestDb {
            let dir = std::env::temp_dir().join(format!("solgate-vnf-packages-{}", uuid::Uuid::new_v4()));
            let url = format!("sqlite://{}", dir.join("test.db").display());
            let database = Database::connect(&url, &DatabaseSettings { pool_size: 1, ..Default::default() }).unwrap();
            database.migrate().unwrap();
            TestDb { database, dir }
        }
    }

    impl Drop for TestDb {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn package(state: &str) -> PackageRecord {
        let id = uuid::Uuid::new_v4().to_string();
        PackageRecord {
            id: id.clone(),
            body: json!({"id": id, "onboardingState": state, "operationalState": "DISABLED", "usageState": "NOT_IN_USE"}),
            vnfd: None,
            upload_source: None,
            created_at: now_text(),
            updated_at: now_text(),
            row_version: 0,
            project: String::new(),
        }
    }

    #[test]
    fn an_update_with_a_stale_version_writes_nothing() {
        let db = TestDb::new();
        let mut conn = db.database.conn().unwrap();
        let mut record = package("CREATED");
        insert(&mut conn, &record).unwrap();
        record.body["onboardingState"] = json!("UPLOADING");
        assert!(update(&mut conn, &record, Some(0)).unwrap());
        record.body["onboardingState"] = json!("PROCESSING");
        assert!(!update(&mut conn, &record, Some(0)).unwrap(), "version 0 is gone");
        let stored = find(&mut conn, &record.id).unwrap().unwrap();
        assert_eq!((stored.onboarding_state(), stored.row_version), ("UPLOADING", 1));
        assert!(update(&mut conn, &record, None).unwrap());
    }

    #[test]
    fn a_vnfd_id_belongs_to_one_package() {
        let db = TestDb::new();
        let mut conn = db.database.conn().unwrap();
        let (mut first, mut second) = (package("PROCESSING"), package("PROCESSING"));
        insert(&mut conn, &first).unwrap();
        insert(&mut conn, &second).unwrap();
        for record in [&mut first, &mut second] {
            record.body["onboardingState"] = json!("ONBOARDED");
            record.body["vnfdId"] = json!("vnfd-1");
        }
        assert!(update(&mut conn, &first, Some(0)).unwrap());
        let error = update(&mut conn, &second, Some(0)).unwrap_err();
        assert!(error.is_unique_violation(), "{error}");
        assert_eq!(find_by_vnfd_id(&mut conn, "vnfd-1").unwrap().unwrap().id, first.id);
        assert_eq!(find(&mut conn, &second.id).unwrap().unwrap().onboarding_state(), "PROCESSING");
    }
}
