//! VNF FM alarms (SOL003 clause 7.4.2/7.4.3, `/vnffm/v1`; the one major: `alarms_v1`). `body`
//! is the Alarm document without `_links`; the columns beside it are what lists filter on and
//! what finds the alarm an alert raised (the VNF instance and the alert's fingerprint: at most
//! one active alarm each, the database's unique index has the last word).

use diesel::prelude::*;
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::list::{ListSpec, predicate};
use crate::schema::alarms_v1 as alarms;

#[derive(Debug, Clone, PartialEq)]
pub struct AlarmRecord {
    pub id: String,
    pub managed_object_id: String,
    pub fingerprint: String,
    pub ack_state: String,
    pub perceived_severity: String,
    pub event_type: String,
    pub probable_cause: String,
    /// As stored for comparisons (`now_text` form).
    pub alarm_raised_time: String,
    /// `None` while the alarm is active.
    pub alarm_cleared_time: Option<String>,
    pub body: Value,
    /// Moves on with every change (the `ETag`'s version).
    pub row_version: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The project of the VNF instance it concerns.
    pub project: String,
}

type Row = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    i64,
    String,
    String,
    String,
);

fn from_row(row: Row) -> DbResult<AlarmRecord> {
    let (
        id,
        managed_object_id,
        fingerprint,
        ack_state,
        perceived_severity,
        event_type,
        probable_cause,
        alarm_raised_time,
        alarm_cleared_time,
        body,
        row_version,
        created_at,
        updated_at,
        project,
    ) = row;
    Ok(AlarmRecord {
        id,
        managed_object_id,
        fingerprint,
        ack_state,
        perceived_severity,
        event_type,
        probable_cause,
        alarm_raised_time,
        alarm_cleared_time,
        body: serde_json::from_str(&body)?,
        row_version,
        created_at,
        updated_at,
        project,
    })
}

macro_rules! columns {
    () => {
        (
            alarms::id,
            alarms::managed_object_id,
            alarms::fingerprint,
            alarms::ack_state,
            alarms::perceived_severity,
            alarms::event_type,
            alarms::probable_cause,
            alarms::alarm_raised_time,
            alarms::alarm_cleared_time,
            alarms::body,
            alarms::row_version,
            alarms::created_at,
            alarms::updated_at,
            alarms::project,
        )
    };
}

/// Indexed columns a list filter may push into SQL.
pub const COLUMNS: &[solgate_sol013::ColumnSpec] = {
    use solgate_sol013::{ColumnKind, ColumnSpec};
    &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "managedObjectId", column: "managed_object_id", kind: ColumnKind::Text },
        ColumnSpec { attr: "ackState", column: "ack_state", kind: ColumnKind::Text },
        ColumnSpec { attr: "perceivedSeverity", column: "perceived_severity", kind: ColumnKind::Text },
        ColumnSpec { attr: "eventType", column: "event_type", kind: ColumnKind::Text },
        ColumnSpec { attr: "probableCause", column: "probable_cause", kind: ColumnKind::Text },
        ColumnSpec { attr: "alarmRaisedTime", column: "alarm_raised_time", kind: ColumnKind::DateTime },
    ]
};

/// Inserts a new alarm; a second active alarm of the same instance and fingerprint is a
/// unique violation ([`crate::DbError::is_unique_violation`]).
pub fn insert(conn: &mut AnyConnection, record: &AlarmRecord) -> DbResult<()> {
    diesel::insert_into(alarms::table)
        .values((
            alarms::id.eq(&record.id),
            alarms::managed_object_id.eq(&record.managed_object_id),
            alarms::fingerprint.eq(&record.fingerprint),
            alarms::ack_state.eq(&record.ack_state),
            alarms::perceived_severity.eq(&record.perceived_severity),
            alarms::event_type.eq(&record.event_type),
            alarms::probable_cause.eq(&record.probable_cause),
            alarms::alarm_raised_time.eq(&record.alarm_raised_time),
            alarms::alarm_cleared_time.eq(&record.alarm_cleared_time),
            alarms::body.eq(record.body.to_string()),
            alarms::row_version.eq(record.row_version),
            alarms::created_at.eq(&record.created_at),
            alarms::updated_at.eq(&record.updated_at),
            alarms::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find(conn: &mut AnyConnection, id: &str) -> DbResult<Option<AlarmRecord>> {
    alarms::table.filter(alarms::id.eq(id)).select(columns!()).first::<Row>(conn).optional()?.map(from_row).transpose()
}

/// The active (not cleared) alarm an alert of `fingerprint` raised on the instance.
pub fn find_active(conn: &mut AnyConnection, instance_id: &str, fingerprint: &str) -> DbResult<Option<AlarmRecord>> {
    alarms::table
        .filter(alarms::managed_object_id.eq(instance_id))
        .filter(alarms::fingerprint.eq(fingerprint))
        .filter(alarms::alarm_cleared_time.is_null())
        .select(columns!())
        .first::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

/// Stores a changed alarm if its row version is still `record.row_version` (then moved on by
/// one); false when someone changed it meanwhile.
pub fn update(conn: &mut AnyConnection, record: &AlarmRecord) -> DbResult<bool> {
    let changed = diesel::update(
        alarms::table.filter(alarms::id.eq(&record.id)).filter(alarms::row_version.eq(record.row_version)),
    )
    .set((
        alarms::ack_state.eq(&record.ack_state),
        alarms::perceived_severity.eq(&record.perceived_severity),
        alarms::event_type.eq(&record.event_type),
        alarms::probable_cause.eq(&record.probable_cause),
        alarms::alarm_cleared_time.eq(&record.alarm_cleared_time),
        alarms::body.eq(record.body.to_string()),
        alarms::row_version.eq(record.row_version + 1),
        alarms::updated_at.eq(&record.updated_at),
    ))
    .execute(conn)?;
    Ok(changed > 0)
}

pub fn list(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<AlarmRecord>> {
    let mut query = alarms::table.select(columns!()).order(alarms::id.asc()).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<alarms::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(alarms::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(alarms::id.gt(after.clone()));
    }
    query.limit(spec.limit).load::<Row>(conn)?.into_iter().map(from_row).collect()
}
