// Included by the module of each plain subscription table (pkgm_subscriptions,
// fm_subscriptions): `subscriptions` names that table.

use diesel::prelude::*;
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::list::{ListSpec, predicate};
use crate::repo::plain_subscriptions::PlainSubscriptionRecord;

type Row = (String, String, String, Option<String>, String, String, String);

fn from_row(row: Row) -> DbResult<PlainSubscriptionRecord> {
    let (id, callback_uri, body, authentication, dedup_key, created_at, project) = row;
    Ok(PlainSubscriptionRecord {
        id,
        callback_uri,
        body: serde_json::from_str(&body)?,
        authentication: authentication.map(|text| serde_json::from_str(&text)).transpose()?,
        dedup_key,
        created_at,
        project,
    })
}

macro_rules! columns {
    () => {
        (
            subscriptions::id,
            subscriptions::callback_uri,
            subscriptions::body,
            subscriptions::authentication,
            subscriptions::dedup_key,
            subscriptions::created_at,
            subscriptions::project,
        )
    };
}

/// Indexed columns a list filter may push into SQL.
pub const COLUMNS: &[solgate_sol013::ColumnSpec] = {
    use solgate_sol013::{ColumnKind, ColumnSpec};
    &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "callbackUri", column: "callback_uri", kind: ColumnKind::Text },
    ]
};

pub fn insert(conn: &mut AnyConnection, record: &PlainSubscriptionRecord) -> DbResult<()> {
    diesel::insert_into(subscriptions::table)
        .values((
            subscriptions::id.eq(&record.id),
            subscriptions::callback_uri.eq(&record.callback_uri),
            subscriptions::body.eq(record.body.to_string()),
            subscriptions::authentication.eq(record.authentication.as_ref().map(Value::to_string)),
            subscriptions::dedup_key.eq(&record.dedup_key),
            subscriptions::created_at.eq(&record.created_at),
            subscriptions::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find(conn: &mut AnyConnection, id: &str) -> DbResult<Option<PlainSubscriptionRecord>> {
    subscriptions::table
        .filter(subscriptions::id.eq(id))
        .select(columns!())
        .first::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

pub fn find_by_dedup_key(conn: &mut AnyConnection, key: &str) -> DbResult<Option<PlainSubscriptionRecord>> {
    subscriptions::table
        .filter(subscriptions::dedup_key.eq(key))
        .select(columns!())
        .first::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

pub fn delete(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    Ok(diesel::delete(subscriptions::table.filter(subscriptions::id.eq(id))).execute(conn)? > 0)
}

/// Rewrites a subscription's credentials (re-sealed with a new key); whether it exists.
pub fn update_authentication(conn: &mut AnyConnection, id: &str, authentication: Option<&Value>) -> DbResult<bool> {
    let changed = diesel::update(subscriptions::table.filter(subscriptions::id.eq(id)))
        .set(subscriptions::authentication.eq(authentication.map(Value::to_string)))
        .execute(conn)?;
    Ok(changed > 0)
}

pub fn list(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<PlainSubscriptionRecord>> {
    let mut query = subscriptions::table.select(columns!()).order(subscriptions::id.asc()).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<subscriptions::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(subscriptions::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(subscriptions::id.gt(after.clone()));
    }
    query.limit(spec.limit).load::<Row>(conn)?.into_iter().map(from_row).collect()
}

/// Every subscription, oldest id first (matching an event reads them all, as LCM does).
pub fn all(conn: &mut AnyConnection) -> DbResult<Vec<PlainSubscriptionRecord>> {
    subscriptions::table
        .select(columns!())
        .order(subscriptions::id.asc())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect()
}
