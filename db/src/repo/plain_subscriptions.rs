//! Subscriptions of the APIs whose subscription has no verbosity: VNF package management
//! (`pkgm_subscriptions`) and VNF fault management (`fm_subscriptions_v1`). One record type
//! and one implementation on [`SubscriptionTable`], which each table's module names; the
//! LCM subscription tables of each major share its columns (and the verbosity besides).

use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::list::ListSpec;
use crate::repo::table::{AnyTable, Col, col, page, rows};

#[derive(Debug, Clone, PartialEq)]
pub struct PlainSubscriptionRecord {
    pub id: String,
    pub callback_uri: String,
    /// The subscription document (without `_links`).
    pub body: Value,
    /// The callback's credentials, sealed; never part of the document.
    pub authentication: Option<Value>,
    pub dedup_key: String,
    pub created_at: String,
    /// The project whose resources it hears of; empty: every project's.
    pub project: String,
}

/// The columns every subscription table has.
pub(crate) trait SubscriptionTable: AnyTable {
    type Id: Col<Self, Text>;
    type CallbackUri: Col<Self, Text>;
    type Body: Col<Self, Text>;
    type Authentication: Col<Self, Nullable<Text>>;
    type DedupKey: Col<Self, Text>;
    type CreatedAt: Col<Self, Text>;
    type Project: Col<Self, Text>;
}

/// Names the columns of a subscription table (a module of [`crate::schema`]).
macro_rules! subscription_table {
    ($table:ident) => {
        impl $crate::repo::plain_subscriptions::SubscriptionTable for $crate::schema::$table::table {
            type Id = $crate::schema::$table::id;
            type CallbackUri = $crate::schema::$table::callback_uri;
            type Body = $crate::schema::$table::body;
            type Authentication = $crate::schema::$table::authentication;
            type DedupKey = $crate::schema::$table::dedup_key;
            type CreatedAt = $crate::schema::$table::created_at;
            type Project = $crate::schema::$table::project;
        }
    };
}
pub(crate) use subscription_table;

subscription_table!(pkgm_subscriptions);
subscription_table!(fm_subscriptions_v1);

/// Indexed columns a list filter may push into SQL.
pub const COLUMNS: &[solgate_sol013::ColumnSpec] = {
    use solgate_sol013::{ColumnKind, ColumnSpec};
    &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "callbackUri", column: "callback_uri", kind: ColumnKind::Text },
    ]
};

type Row = (String, String, String, Option<String>, String, String, String);

type Columns<T> = (
    <T as SubscriptionTable>::Id,
    <T as SubscriptionTable>::CallbackUri,
    <T as SubscriptionTable>::Body,
    <T as SubscriptionTable>::Authentication,
    <T as SubscriptionTable>::DedupKey,
    <T as SubscriptionTable>::CreatedAt,
    <T as SubscriptionTable>::Project,
);

fn columns<T: SubscriptionTable>() -> Columns<T> {
    Default::default()
}

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

pub(crate) fn insert<T: SubscriptionTable>(conn: &mut AnyConnection, record: &PlainSubscriptionRecord) -> DbResult<()> {
    diesel::insert_into(T::default())
        .values((
            col::<T::Id>().eq(&record.id),
            col::<T::CallbackUri>().eq(&record.callback_uri),
            col::<T::Body>().eq(record.body.to_string()),
            col::<T::Authentication>().eq(record.authentication.as_ref().map(Value::to_string)),
            col::<T::DedupKey>().eq(&record.dedup_key),
            col::<T::CreatedAt>().eq(&record.created_at),
            col::<T::Project>().eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

pub(crate) fn find<T: SubscriptionTable>(
    conn: &mut AnyConnection,
    id: &str,
) -> DbResult<Option<PlainSubscriptionRecord>> {
    rows::<T>()
        .filter(col::<T::Id>().eq(id))
        .select(columns::<T>())
        .first::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

pub(crate) fn find_by_dedup_key<T: SubscriptionTable>(
    conn: &mut AnyConnection,
    key: &str,
) -> DbResult<Option<PlainSubscriptionRecord>> {
    rows::<T>()
        .filter(col::<T::DedupKey>().eq(key))
        .select(columns::<T>())
        .first::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

/// Deletes a subscription; whether it existed.
pub(crate) fn delete<T: SubscriptionTable>(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    Ok(diesel::delete(rows::<T>().filter(col::<T::Id>().eq(id))).execute(conn)? > 0)
}

/// Rewrites a subscription's credentials (re-sealed with a new key); whether it exists.
pub(crate) fn update_authentication<T: SubscriptionTable>(
    conn: &mut AnyConnection,
    id: &str,
    authentication: Option<&Value>,
) -> DbResult<bool> {
    let changed = diesel::update(rows::<T>().filter(col::<T::Id>().eq(id)))
        .set(col::<T::Authentication>().eq(authentication.map(Value::to_string)))
        .execute(conn)?;
    Ok(changed > 0)
}

pub(crate) fn list<T: SubscriptionTable>(
    conn: &mut AnyConnection,
    backend: Backend,
    spec: &ListSpec,
) -> DbResult<Vec<PlainSubscriptionRecord>> {
    let query = rows::<T>().select(columns::<T>()).into_boxed();
    page::<T, _, T::Id, T::Project>(query, backend, spec).load::<Row>(conn)?.into_iter().map(from_row).collect()
}

/// Every subscription, oldest id first (matching an event reads them all, as LCM does).
pub(crate) fn all<T: SubscriptionTable>(conn: &mut AnyConnection) -> DbResult<Vec<PlainSubscriptionRecord>> {
    rows::<T>()
        .select(columns::<T>())
        .order(col::<T::Id>().asc())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::PlainSubscriptionRecord;
    use crate::repo::list::ListSpec;
    use crate::repo::{fm_subscriptions, now_text, pkgm_subscriptions};

    fn record(id: &str, project: &str) -> PlainSubscriptionRecord {
        PlainSubscriptionRecord {
            id: id.into(),
            callback_uri: format!("http://127.0.0.1:9/{id}"),
            body: json!({"id": id, "callbackUri": format!("http://127.0.0.1:9/{id}")}),
            authentication: None,
            dedup_key: format!("key-{id}"),
            created_at: now_text(),
            project: project.into(),
        }
    }

    /// Each API's table keeps its own subscriptions: found by id and by dedup key, listed
    /// a page at a time per project, re-sealed and deleted there only.
    #[test]
    fn each_api_keeps_its_own_subscriptions() {
        let (database, _dir) = crate::test_database(1);
        let (backend, mut conn) = (database.backend(), database.conn().unwrap());
        for (id, project) in [("a", "p"), ("b", "q"), ("c", "p")] {
            pkgm_subscriptions::insert(&mut conn, &record(id, project)).unwrap();
        }
        let fm = record("a", "p");
        fm_subscriptions::insert(&mut conn, &fm).unwrap();
        assert_eq!(fm_subscriptions::find(&mut conn, "a").unwrap(), Some(fm));
        assert_eq!(pkgm_subscriptions::find_by_dedup_key(&mut conn, "key-c").unwrap().unwrap().id, "c");
        assert!(fm_subscriptions::find_by_dedup_key(&mut conn, "key-c").unwrap().is_none());
        let ids = |listed: Vec<PlainSubscriptionRecord>| listed.into_iter().map(|s| s.id).collect::<Vec<_>>();
        let spec = ListSpec { limit: 1, project: Some("p".into()), ..Default::default() };
        assert_eq!(ids(pkgm_subscriptions::list(&mut conn, backend, &spec).unwrap()), ["a"]);
        let next = ListSpec { after_id: Some("a".into()), ..spec };
        assert_eq!(ids(pkgm_subscriptions::list(&mut conn, backend, &next).unwrap()), ["c"]);
        let sealed = json!({"sealed": "x"});
        assert!(pkgm_subscriptions::update_authentication(&mut conn, "b", Some(&sealed)).unwrap());
        assert_eq!(pkgm_subscriptions::find(&mut conn, "b").unwrap().unwrap().authentication, Some(sealed));
        assert!(!pkgm_subscriptions::update_authentication(&mut conn, "absent", None).unwrap());
        assert!(pkgm_subscriptions::delete(&mut conn, "a").unwrap());
        assert!(!pkgm_subscriptions::delete(&mut conn, "a").unwrap());
        assert_eq!(ids(pkgm_subscriptions::all(&mut conn).unwrap()), ["b", "c"]);
        assert_eq!(ids(fm_subscriptions::all(&mut conn).unwrap()), ["a"]);
    }
}
