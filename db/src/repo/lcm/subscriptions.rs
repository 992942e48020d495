//! `lccn_subscriptions_v*`: the plain subscription implementation's columns and the
//! verbosity besides, for the table of every major.

use diesel::prelude::*;
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::lcm::family::LccnSubscriptionTable;
use crate::repo::lcm::records::SubscriptionRecord;
use crate::repo::list::ListSpec;
use crate::repo::plain_subscriptions::{self as plain, SubscriptionTable};
use crate::repo::table::{col, page, rows};

/// The LCM subscriptions of one major (see `lcm.rs` for what each does).
pub(crate) trait LccnSubscriptionStore: Sync {
    fn insert(&self, conn: &mut AnyConnection, record: &SubscriptionRecord) -> DbResult<()>;
    fn find(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<SubscriptionRecord>>;
    fn find_by_dedup_key(&self, conn: &mut AnyConnection, key: &str) -> DbResult<Option<SubscriptionRecord>>;
    fn delete(&self, conn: &mut AnyConnection, id: &str) -> DbResult<bool>;
    fn list(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<SubscriptionRecord>>;
    fn update_authentication(
        &self,
        conn: &mut AnyConnection,
        id: &str,
        authentication: Option<&Value>,
    ) -> DbResult<bool>;
    fn all(&self, conn: &mut AnyConnection) -> DbResult<Vec<SubscriptionRecord>>;
}

type Row = (String, String, String, String, Option<String>, String, String, String);

type Columns<T> = (
    <T as SubscriptionTable>::Id,
    <T as SubscriptionTable>::CallbackUri,
    <T as LccnSubscriptionTable>::Verbosity,
    <T as SubscriptionTable>::Body,
    <T as SubscriptionTable>::Authentication,
    <T as SubscriptionTable>::DedupKey,
    <T as SubscriptionTable>::CreatedAt,
    <T as SubscriptionTable>::Project,
);

fn columns<T: LccnSubscriptionTable>() -> Columns<T> {
    Default::default()
}

fn from_row(row: Row) -> DbResult<SubscriptionRecord> {
    let (id, callback_uri, verbosity, body, authentication, dedup_key, created_at, project) = row;
    Ok(SubscriptionRecord {
        id,
        callback_uri,
        verbosity,
        body: serde_json::from_str(&body)?,
        authentication: authentication.map(|text| serde_json::from_str(&text)).transpose()?,
        dedup_key,
        created_at,
        project,
    })
}

impl<T: LccnSubscriptionTable> LccnSubscriptionStore for T {
    fn insert(&self, conn: &mut AnyConnection, record: &SubscriptionRecord) -> DbResult<()> {
        diesel::insert_into(T::default())
            .values((
                col::<<T as SubscriptionTable>::Id>().eq(&record.id),
                col::<T::CallbackUri>().eq(&record.callback_uri),
                col::<T::Verbosity>().eq(&record.verbosity),
                col::<T::Body>().eq(record.body.to_string()),
                col::<T::Authentication>().eq(record.authentication.as_ref().map(Value::to_string)),
                col::<T::DedupKey>().eq(&record.dedup_key),
                col::<T::CreatedAt>().eq(&record.created_at),
                col::<T::Project>().eq(&record.project),
            ))
            .execute(conn)?;
        Ok(())
    }

    fn find(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<SubscriptionRecord>> {
        rows::<T>()
            .filter(col::<T::Id>().eq(id))
            .select(columns::<T>())
            .get_result::<Row>(conn)
            .optional()?
            .map(from_row)
            .transpose()
    }

    fn find_by_dedup_key(&self, conn: &mut AnyConnection, key: &str) -> DbResult<Option<SubscriptionRecord>> {
        rows::<T>()
            .filter(col::<T::DedupKey>().eq(key))
            .select(columns::<T>())
            .get_result::<Row>(conn)
            .optional()?
            .map(from_row)
            .transpose()
    }

    fn delete(&self, conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
        plain::delete::<T>(conn, id)
    }

    fn list(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<SubscriptionRecord>> {
        let query = rows::<T>().select(columns::<T>()).into_boxed();
        page::<T, _, T::Id, T::Project>(query, backend, spec).load::<Row>(conn)?.into_iter().map(from_row).collect()
    }

    fn update_authentication(
        &self,
        conn: &mut AnyConnection,
        id: &str,
        authentication: Option<&Value>,
    ) -> DbResult<bool> {
        plain::update_authentication::<T>(conn, id, authentication)
    }

    fn all(&self, conn: &mut AnyConnection) -> DbResult<Vec<SubscriptionRecord>> {
        rows::<T>()
            .select(columns::<T>())
            .order(col::<T::Id>().asc())
            .load::<Row>(conn)?
            .into_iter()
            .map(from_row)
            .collect()
    }
}
