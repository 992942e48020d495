//! UPDATE statements kept prepared. Diesel prepares every UPDATE afresh, because a changeset
//! with optional fields may send other SQL the next time. The hot ones here set fixed
//! columns under a fixed WHERE, so each call site always sends the same text: compiling it
//! again each time was about a sixth of SQLite's writer thread under LCM load.

use std::marker::PhantomData;

use diesel::QueryResult;
use diesel::backend::Backend;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::query_source::QuerySource;

/// `UPDATE table SET values WHERE predicate`, written out as Diesel's own UPDATE is but
/// without marking itself unsafe to cache; its statement-cache key is the type `K`: one per
/// call site and table (see [`cached_update!`]), so two statements never share a key, even
/// where one generic call site serves the tables of several majors.
pub struct CachedUpdate<F, P, V, K> {
    /// The table as it appears in SQL.
    table: F,
    predicate: P,
    values: V,
    key: PhantomData<K>,
}

impl<F, P, V, K, T> CachedUpdate<F, P, V, (K, T)> {
    /// The key is `K` and the table's type.
    pub fn new(table: &T, predicate: P, values: V) -> Self
    where
        T: QuerySource<FromClause = F>,
    {
        Self { table: table.from_clause(), predicate, values, key: PhantomData }
    }
}

impl<F, P, V, K, DB> QueryFragment<DB> for CachedUpdate<F, P, V, K>
where
    DB: Backend,
    F: QueryFragment<DB>,
    P: QueryFragment<DB>,
    V: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE ");
        self.table.walk_ast(out.reborrow())?;
        out.push_sql(" SET ");
        self.values.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.predicate.walk_ast(out.reborrow())
    }
}

impl<F, P, V, K: 'static> QueryId for CachedUpdate<F, P, V, K> {
    type QueryId = K;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<F, P, V, K, Conn> diesel::RunQueryDsl<Conn> for CachedUpdate<F, P, V, K> {}

impl<F, P, V, K> CachedUpdate<F, P, V, K> {
    /// The same UPDATE followed by `RETURNING returning`, kept prepared under the same key:
    /// the text sent is still fixed at the call site.
    pub fn returning<R>(self, returning: R) -> CachedUpdateReturning<Self, R> {
        CachedUpdateReturning { update: self, returning }
    }
}

/// A [`CachedUpdate`] with a RETURNING clause (PostgreSQL and SQLite 3.35 or later).
pub struct CachedUpdateReturning<U, R> {
    update: U,
    returning: R,
}

impl<U, R, DB> QueryFragment<DB> for CachedUpdateReturning<U, R>
where
    DB: Backend,
    U: QueryFragment<DB>,
    R: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.update.walk_ast(out.reborrow())?;
        out.push_sql(" RETURNING ");
        self.returning.walk_ast(out)
    }
}

impl<U: QueryId, R> QueryId for CachedUpdateReturning<U, R> {
    // Apart from the plain UPDATE's key: the statements differ.
    type QueryId = (U::QueryId, Returning);
    const HAS_STATIC_QUERY_ID: bool = U::HAS_STATIC_QUERY_ID;
}

/// Part of a [`CachedUpdateReturning`]'s key.
pub struct Returning;

impl<U, R: diesel::Expression> diesel::query_builder::Query for CachedUpdateReturning<U, R> {
    type SqlType = R::SqlType;
}

impl<U, R, Conn> diesel::RunQueryDsl<Conn> for CachedUpdateReturning<U, R> {}

/// A fixed SQL expression of type `ST` for a RETURNING clause. Unlike Diesel's `sql()`, it
/// does not mark the statement unsafe to keep prepared: its text never changes.
pub struct FixedSql<ST> {
    sql: &'static str,
    sql_type: PhantomData<ST>,
}

impl<ST> FixedSql<ST> {
    pub const fn new(sql: &'static str) -> Self {
        Self { sql, sql_type: PhantomData }
    }
}

impl<ST, DB: Backend> QueryFragment<DB> for FixedSql<ST> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(self.sql);
        Ok(())
    }
}

impl<ST: diesel::sql_types::SqlType + diesel::expression::TypedExpressionType> diesel::Expression for FixedSql<ST> {
    type SqlType = ST;
}

/// `cached_update!(table, predicate, (column.eq(value), ...))`: the UPDATE, kept prepared
/// under a key type of its own. Only for fixed columns (a changeset struct whose `Option`
/// fields drop columns would change the SQL under the same key).
macro_rules! cached_update {
    ($table:expr, $predicate:expr, $values:expr $(,)?) => {{
        struct Key;
        $crate::repo::cached::CachedUpdate::<_, _, _, (Key, _)>::new(
            &$table,
            $predicate,
            diesel::query_builder::AsChangeset::as_changeset($values),
        )
    }};
}
pub(crate) use cached_update;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use diesel::Connection;
    use diesel::connection::InstrumentationEvent;
    use serde_json::json;

    use crate::repo::lcm::{self, LcmMajor, OpOccRecord};
    use crate::repo::now_text;

    fn op(id: &str) -> OpOccRecord {
        let now = now_text();
        OpOccRecord {
            id: id.to_owned(),
            body: json!({
                "id": id, "vnfInstanceId": format!("instance-{id}"), "operation": "INSTANTIATE", "operationState": "STARTING",
                "stateEnteredTime": now, "startTime": now,
            }),
            pending_action: Some("start".into()),
            owner: None,
            lease_expires_at: None,
            attempt: 1,
            created_at: now.clone(),
            updated_at: now,
            project: String::new(),
        }
    }

    /// The guarded state change and the claim keep their guards, and each is compiled once
    /// per connection however often it runs.
    #[test]
    fn hot_updates_keep_their_guards_and_are_compiled_once() {
        let (database, _dir) = crate::test_database(1);
        let mut conn = database.conn().unwrap();
        let compiled = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = compiled.clone();
        conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
            if let InstrumentationEvent::CacheQuery { sql, .. } = event {
                log.lock().unwrap().push(sql.to_owned());
            }
        });
        let major = LcmMajor::V2;
        for n in 0..3 {
            let mut record = op(&format!("op-{n}"));
            lcm::insert_op(&mut conn, major, &record).unwrap();
            let claimed = lcm::claim_op(&mut conn, major, &record.id, "conductor-a", &now_text()).unwrap();
            assert!(claimed.is_some());
            // A repeated message claims nothing.
            assert!(lcm::claim_op(&mut conn, major, &record.id, "conductor-b", &now_text()).unwrap().is_none());
            record.pending_action = None;
            record.owner = Some("conductor-a".into());
            record.body["operationState"] = json!("PROCESSING");
            // Wrong owner, wrong state: nothing written.
            assert!(!lcm::update_op_guarded(&mut conn, major, &record, Some("conductor-b"), "STARTING").unwrap());
            assert!(!lcm::update_op_guarded(&mut conn, major, &record, Some("conductor-a"), "COMPLETED").unwrap());
            assert!(!lcm::update_op_guarded(&mut conn, major, &record, None, "STARTING").unwrap());
            assert!(lcm::update_op_guarded(&mut conn, major, &record, Some("conductor-a"), "STARTING").unwrap());
            let stored = lcm::find_op(&mut conn, major, &record.id).unwrap().unwrap();
            assert_eq!((stored.state(), stored.owner.as_deref()), ("PROCESSING", Some("conductor-a")));
        }
        let updates: Vec<String> =
            compiled.lock().unwrap().iter().filter(|sql| sql.starts_with("UPDATE")).cloned().collect();
        // The claim, and the state change with an owner and without one.
        assert_eq!(updates.len(), 3, "{updates:#?}");
    }
}
