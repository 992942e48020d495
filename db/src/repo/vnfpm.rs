//! VNF performance management (SOL003 clause 6, major 2 only): PM jobs, their performance
//! reports, and thresholds. Jobs and thresholds are what PM notifications are sent to (each
//! has its own `callbackUri` and `authentication`), so their notification rows carry
//! [`API`] and the job's or threshold's id as the subscription.

use diesel::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::document::{index_of, lenient_text};
use crate::repo::list::{ListSpec, predicate};
use crate::repo::now_text;
use crate::schema::{pm_jobs_v2 as jobs, pm_reports_v2 as reports, pm_thresholds_v2 as thresholds};

/// The API name notification rows of PM jobs and thresholds carry (`notifications.api`).
pub const API: &str = "vnfpm";

/// A PM job or a threshold: its document (without `_links`), the callback's sealed
/// credentials, and the project it belongs to. The indexed columns are derived from the
/// document on every write.
#[derive(Debug, Clone, PartialEq)]
pub struct PmRecord {
    pub id: String,
    pub body: Value,
    pub authentication: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
    pub project: String,
}

impl PmRecord {
    pub fn callback_uri(&self) -> &str {
        index_of::<PmIndex<'_>>(&self.body).callback_uri.unwrap_or_default()
    }
}

/// The callback of a PmJob or Threshold (SOL003 clauses 6.5.2.7, 6.5.2.9).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PmIndex<'a> {
    #[serde(borrow, deserialize_with = "lenient_text")]
    callback_uri: Option<&'a str>,
}

/// One PerformanceReport of a PM job.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRecord {
    pub id: String,
    pub job_id: String,
    pub ready_time: String,
    /// `{"entries": [...]}`.
    pub body: Value,
}

fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_owned()
}

type Row = (String, String, Option<String>, String, String, String);

fn from_row(row: Row) -> DbResult<PmRecord> {
    let (id, body, authentication, created_at, updated_at, project) = row;
    Ok(PmRecord {
        id,
        body: serde_json::from_str(&body)?,
        authentication: authentication.map(|text| serde_json::from_str(&text)).transpose()?,
        created_at,
        updated_at,
        project,
    })
}

/// Indexed columns a list filter may push into SQL.
pub mod columns {
    use solgate_sol013::{ColumnKind, ColumnSpec};

    pub const JOBS: &[ColumnSpec] = &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "objectType", column: "object_type", kind: ColumnKind::Text },
        ColumnSpec { attr: "callbackUri", column: "callback_uri", kind: ColumnKind::Text },
    ];

    pub const THRESHOLDS: &[ColumnSpec] = &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "objectType", column: "object_type", kind: ColumnKind::Text },
        ColumnSpec { attr: "objectInstanceId", column: "object_instance_id", kind: ColumnKind::Text },
        ColumnSpec { attr: "callbackUri", column: "callback_uri", kind: ColumnKind::Text },
    ];
}

macro_rules! pm_table {
    ($table:ident, $find:ident, $update:ident, $lock:ident, $delete:ident, $list:ident, $all:ident) => {
        pub fn $find(conn: &mut AnyConnection, id: &str) -> DbResult<Option<PmRecord>> {
            $table::table
                .filter($table::id.eq(id))
                .select((
                    $table::id,
                    $table::body,
                    $table::authentication,
                    $table::created_at,
                    $table::updated_at,
                    $table::project,
                ))
                .first::<Row>(conn)
                .optional()?
                .map(from_row)
                .transpose()
        }

        /// Writes the document and credentials; whether the row exists.
        pub fn $update(conn: &mut AnyConnection, record: &PmRecord) -> DbResult<bool> {
            let changed = diesel::update($table::table.filter($table::id.eq(&record.id)))
                .set((
                    $table::callback_uri.eq(record.callback_uri()),
                    $table::body.eq(record.body.to_string()),
                    $table::authentication.eq(record.authentication.as_ref().map(Value::to_string)),
                    $table::updated_at.eq(now_text()),
                    $table::row_version.eq($table::row_version + 1),
                ))
                .execute(conn)?;
            Ok(changed > 0)
        }

        /// Takes the row's write lock for the rest of the transaction (PostgreSQL; SQLite's
        /// write transactions are serial); whether the row exists.
        pub fn $lock(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
            let locked = diesel::update($table::table.filter($table::id.eq(id)))
                .set($table::row_version.eq($table::row_version + 1))
                .execute(conn)?;
            Ok(locked > 0)
        }

        pub fn $delete(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
            Ok(diesel::delete($table::table.filter($table::id.eq(id))).execute(conn)? > 0)
        }

        pub fn $list(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<PmRecord>> {
            let mut query = $table::table
                .select((
                    $table::id,
                    $table::body,
                    $table::authentication,
                    $table::created_at,
                    $table::updated_at,
                    $table::project,
                ))
                .order($table::id.asc())
                .into_boxed();
            for condition in &spec.predicates {
                query = query.filter(predicate::<$table::table>(backend, condition));
            }
            if let Some(project) = &spec.project {
                query = query.filter($table::project.eq(project.clone()));
            }
            if let Some(after) = &spec.after_id {
                query = query.filter($table::id.gt(after.clone()));
            }
            query.limit(spec.limit).load::<Row>(conn)?.into_iter().map(from_row).collect()
        }

        /// Every row, oldest id first (`solgate reseal` goes through them all).
        pub fn $all(conn: &mut AnyConnection) -> DbResult<Vec<PmRecord>> {
            $table::table
                .select((
                    $table::id,
                    $table::body,
                    $table::authentication,
                    $table::created_at,
                    $table::updated_at,
                    $table::project,
                ))
                .order($table::id.asc())
                .load::<Row>(conn)?
                .into_iter()
                .map(from_row)
                .collect()
        }
    };
}

pm_table!(jobs, find_job, update_job, lock_job, delete_job_row, list_jobs, all_jobs);
pm_table!(
    thresholds,
    find_threshold,
    update_threshold,
    lock_threshold,
    delete_threshold,
    list_thresholds,
    all_thresholds
);

pub fn insert_job(conn: &mut AnyConnection, record: &PmRecord) -> DbResult<()> {
    diesel::insert_into(jobs::table)
        .values((
            jobs::id.eq(&record.id),
            jobs::object_type.eq(text(&record.body, "objectType")),
            jobs::callback_uri.eq(record.callback_uri()),
            jobs::body.eq(record.body.to_string()),
            jobs::authentication.eq(record.authentication.as_ref().map(Value::to_string)),
            jobs::created_at.eq(&record.created_at),
            jobs::updated_at.eq(&record.updated_at),
            jobs::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn insert_threshold(conn: &mut AnyConnection, record: &PmRecord) -> DbResult<()> {
    diesel::insert_into(thresholds::table)
        .values((
            thresholds::id.eq(&record.id),
            thresholds::object_type.eq(text(&record.body, "objectType")),
            thresholds::object_instance_id.eq(text(&record.body, "objectInstanceId")),
            thresholds::callback_uri.eq(record.callback_uri()),
            thresholds::body.eq(record.body.to_string()),
            thresholds::authentication.eq(record.authentication.as_ref().map(Value::to_string)),
            thresholds::created_at.eq(&record.created_at),
            thresholds::updated_at.eq(&record.updated_at),
            thresholds::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

/// Deletes a PM job and its reports; whether it existed.
pub fn delete_job(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    diesel::delete(reports::table.filter(reports::job_id.eq(id))).execute(conn)?;
    delete_job_row(conn, id)
}

pub fn insert_report(conn: &mut AnyConnection, report: &ReportRecord) -> DbResult<()> {
    diesel::insert_into(reports::table)
        .values((
            reports::id.eq(&report.id),
            reports::job_id.eq(&report.job_id),
            reports::ready_time.eq(&report.ready_time),
            reports::body.eq(report.body.to_string()),
            reports::created_at.eq(now_text()),
        ))
        .execute(conn)?;
    Ok(())
}

/// A report of a job (`None` also when the report belongs to another job).
pub fn find_report(conn: &mut AnyConnection, job_id: &str, id: &str) -> DbResult<Option<ReportRecord>> {
    let row = reports::table
        .filter(reports::id.eq(id))
        .filter(reports::job_id.eq(job_id))
        .select((reports::id, reports::job_id, reports::ready_time, reports::body))
        .first::<(String, String, String, String)>(conn)
        .optional()?;
    row.map(|(id, job_id, ready_time, body)| {
        Ok(ReportRecord { id, job_id, ready_time, body: serde_json::from_str(&body)? })
    })
    .transpose()
}

pub fn delete_reports(conn: &mut AnyConnection, ids: &[String]) -> DbResult<usize> {
    Ok(diesel::delete(reports::table.filter(reports::id.eq_any(ids))).execute(conn)?)
}
