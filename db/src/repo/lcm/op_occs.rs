//! `vnf_lcm_op_occs_v*` and `grants_v*`: one implementation for the tables of every major.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::cached::{FixedSql, cached_update};
use crate::repo::lcm::family::{GrantTable, OpOccTable};
use crate::repo::lcm::records::{GrantIndex, IN_FLIGHT_STATES, OpOccIndex, OpOccRecord, RawDocument, Seen};
use crate::repo::list::ListSpec;
use crate::repo::now_text;
use crate::repo::table::{col, page, rows};

/// The operation occurrences of one major (see `lcm.rs` for what each does).
pub(crate) trait OpOccStore: Sync {
    fn insert(&self, conn: &mut AnyConnection, record: &OpOccRecord) -> DbResult<()>;
    fn find(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<OpOccRecord>>;
    fn update_guarded(
        &self,
        conn: &mut AnyConnection,
        record: &OpOccRecord,
        expected_owner: Option<&str>,
        expected_state: &str,
    ) -> DbResult<Option<Seen>>;
    fn list(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<OpOccRecord>>;
    fn list_raw(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<RawDocument>>;
    fn in_flight(&self, conn: &mut AnyConnection, instance_id: &str) -> DbResult<Option<OpOccRecord>>;
    fn claim(
        &self,
        conn: &mut AnyConnection,
        id: &str,
        owner: &str,
        lease_expires_at: &str,
    ) -> DbResult<Option<OpOccRecord>>;
    fn owned_by_others(&self, conn: &mut AnyConnection, live_owners: &[String]) -> DbResult<Vec<OpOccRecord>>;
}

/// The grants of one major.
pub(crate) trait GrantStore: Sync {
    fn insert(&self, conn: &mut AnyConnection, op_id: &str, grant: &Value) -> DbResult<()>;
    fn find(&self, conn: &mut AnyConnection, op_id: &str) -> DbResult<Option<Value>>;
    fn delete(&self, conn: &mut AnyConnection, op_id: &str) -> DbResult<()>;
}

type Row = (String, String, Option<String>, Option<String>, Option<String>, i32, String, String, String);

type Columns<T> = (
    <T as OpOccTable>::Id,
    <T as OpOccTable>::Body,
    <T as OpOccTable>::PendingAction,
    <T as OpOccTable>::Owner,
    <T as OpOccTable>::LeaseExpiresAt,
    <T as OpOccTable>::Attempt,
    <T as OpOccTable>::CreatedAt,
    <T as OpOccTable>::UpdatedAt,
    <T as OpOccTable>::Project,
);

fn columns<T: OpOccTable>() -> Columns<T> {
    Default::default()
}

fn from_row(row: Row) -> DbResult<OpOccRecord> {
    let (id, body, pending_action, owner, lease_expires_at, attempt, created_at, updated_at, project) = row;
    Ok(OpOccRecord {
        id,
        body: serde_json::from_str(&body)?,
        pending_action,
        owner,
        lease_expires_at,
        attempt,
        created_at,
        updated_at,
        project,
    })
}

fn text(member: Option<&str>) -> String {
    member.unwrap_or_default().to_owned()
}

impl<T: OpOccTable> OpOccStore for T {
    fn insert(&self, conn: &mut AnyConnection, record: &OpOccRecord) -> DbResult<()> {
        let index = OpOccIndex::of(&record.body);
        diesel::insert_into(T::default())
            .values((
                col::<T::Id>().eq(&record.id),
                col::<T::VnfInstanceId>().eq(text(index.vnf_instance_id)),
                col::<T::Operation>().eq(text(index.operation)),
                col::<T::OperationState>().eq(text(index.operation_state)),
                col::<T::StateEnteredTime>().eq(text(index.state_entered_time)),
                col::<T::StartTime>().eq(text(index.start_time)),
                col::<T::IsAutomaticInvocation>().eq(index.is_automatic_invocation.unwrap_or(false)),
                col::<T::IsCancelPending>().eq(index.is_cancel_pending.unwrap_or(false)),
                col::<T::Body>().eq(record.body.to_string()),
                col::<T::PendingAction>().eq(&record.pending_action),
                col::<T::Owner>().eq(&record.owner),
                col::<T::LeaseExpiresAt>().eq(&record.lease_expires_at),
                col::<T::Attempt>().eq(record.attempt),
                col::<T::CreatedAt>().eq(&record.created_at),
                col::<T::UpdatedAt>().eq(&record.updated_at),
                col::<T::Project>().eq(&record.project),
            ))
            .execute(conn)?;
        Ok(())
    }

    fn find(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<OpOccRecord>> {
        rows::<T>()
            .filter(col::<T::Id>().eq(id))
            .select(columns::<T>())
            .get_result::<Row>(conn)
            .optional()?
            .map(from_row)
            .transpose()
    }

    fn update_guarded(
        &self,
        conn: &mut AnyConnection,
        record: &OpOccRecord,
        expected_owner: Option<&str>,
        expected_state: &str,
    ) -> DbResult<Option<Seen>> {
        let index = OpOccIndex::of(&record.body);
        let changes = (
            col::<T::OperationState>().eq(text(index.operation_state)),
            col::<T::StateEnteredTime>().eq(text(index.state_entered_time)),
            col::<T::IsCancelPending>().eq(index.is_cancel_pending.unwrap_or(false)),
            col::<T::Body>().eq(record.body.to_string()),
            col::<T::PendingAction>().eq(&record.pending_action),
            col::<T::Owner>().eq(&record.owner),
            col::<T::LeaseExpiresAt>().eq(&record.lease_expires_at),
            col::<T::Attempt>().eq(record.attempt),
            col::<T::UpdatedAt>().eq(now_text()),
        );
        // One conditional UPDATE (the rows it changed say whether the guard held), not
        // boxed, so Diesel keeps its prepared statement.
        let guarded = col::<T::Id>().eq(&record.id).and(col::<T::OperationState>().eq(expected_state));
        let owner = col::<T::Owner>();
        if let AnyConnection::Postgresql(_) = conn {
            // The subscriptions' generation comes back with the row: no round trip of its own.
            let generation = || FixedSql::<Nullable<BigInt>>::new(T::SUBSCRIPTION_GENERATION);
            let seen = match expected_owner {
                Some(expected) => cached_update!(T::default(), guarded.and(owner.eq(expected)), changes)
                    .returning(generation())
                    .get_result::<Option<i64>>(conn),
                None => cached_update!(T::default(), guarded.and(owner.is_null()), changes)
                    .returning(generation())
                    .get_result::<Option<i64>>(conn),
            };
            return Ok(seen.optional()?.map(|generation| Seen { subscription_generation: generation }));
        }
        let changed = match expected_owner {
            Some(expected) => cached_update!(T::default(), guarded.and(owner.eq(expected)), changes).execute(conn)?,
            None => cached_update!(T::default(), guarded.and(owner.is_null()), changes).execute(conn)?,
        };
        Ok((changed > 0).then_some(Seen { subscription_generation: None }))
    }

    fn list(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<OpOccRecord>> {
        let query = rows::<T>().select(columns::<T>()).into_boxed();
        page::<T, _, T::Id, T::Project>(query, backend, spec).load::<Row>(conn)?.into_iter().map(from_row).collect()
    }

    fn list_raw(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<RawDocument>> {
        let query = rows::<T>().select((col::<T::Id>(), col::<T::UpdatedAt>(), col::<T::Body>())).into_boxed();
        Ok(page::<T, _, T::Id, T::Project>(query, backend, spec)
            .load::<(String, String, String)>(conn)?
            .into_iter()
            .map(|(id, stamp, body)| RawDocument { id, stamp, body })
            .collect())
    }

    fn in_flight(&self, conn: &mut AnyConnection, instance_id: &str) -> DbResult<Option<OpOccRecord>> {
        // Spelled out rather than `eq_any`, whose SQLite statement Diesel does not cache.
        let [starting, processing, rolling_back, failed_temp] = IN_FLIGHT_STATES;
        let state = col::<T::OperationState>();
        rows::<T>()
            .filter(col::<T::VnfInstanceId>().eq(instance_id))
            .filter(state.eq(starting).or(state.eq(processing)).or(state.eq(rolling_back)).or(state.eq(failed_temp)))
            .select(columns::<T>())
            .get_result::<Row>(conn)
            .optional()?
            .map(from_row)
            .transpose()
    }

    fn claim(
        &self,
        conn: &mut AnyConnection,
        id: &str,
        owner: &str,
        lease_expires_at: &str,
    ) -> DbResult<Option<OpOccRecord>> {
        let Some(mut record) = self.find(conn, id)? else { return Ok(None) };
        let Some(pending) = record.pending_action.clone() else { return Ok(None) };
        // Conditional on the pending work still being there: of two conductors racing on a
        // repeated message, exactly one updates the row.
        let claim = (
            col::<T::Owner>().eq(owner),
            col::<T::LeaseExpiresAt>().eq(lease_expires_at),
            col::<T::PendingAction>().eq(None::<String>),
            col::<T::UpdatedAt>().eq(now_text()),
        );
        let unclaimed = col::<T::Id>().eq(id).and(col::<T::PendingAction>().eq(&pending));
        let claimed = cached_update!(T::default(), unclaimed, claim).execute(conn)?;
        if claimed == 0 {
            return Ok(None);
        }
        record.owner = Some(owner.to_owned());
        record.lease_expires_at = Some(lease_expires_at.to_owned());
        // The caller learns which work it took up from `pending_action`; the row no longer has it.
        Ok(Some(record))
    }

    fn owned_by_others(&self, conn: &mut AnyConnection, live_owners: &[String]) -> DbResult<Vec<OpOccRecord>> {
        rows::<T>()
            .filter(col::<T::Owner>().is_not_null())
            .filter(col::<T::Owner>().ne_all(live_owners.to_vec()))
            .filter(col::<T::OperationState>().eq_any(["STARTING", "PROCESSING", "ROLLING_BACK"]))
            .select(columns::<T>())
            .order(col::<T::Id>().asc())
            .load::<Row>(conn)?
            .into_iter()
            .map(from_row)
            .collect()
    }
}

impl<T: GrantTable> GrantStore for T {
    fn insert(&self, conn: &mut AnyConnection, op_id: &str, grant: &Value) -> DbResult<()> {
        diesel::insert_into(T::default())
            .values((
                col::<T::Id>().eq(text(GrantIndex::of(grant).id)),
                col::<T::VnfLcmOpOccId>().eq(op_id),
                col::<T::Body>().eq(grant.to_string()),
                col::<T::CreatedAt>().eq(now_text()),
            ))
            .execute(conn)?;
        Ok(())
    }

    /// The grant recorded for an occurrence (the NFVO's Grant, or the local one).
    fn find(&self, conn: &mut AnyConnection, op_id: &str) -> DbResult<Option<Value>> {
        let body: Option<String> = rows::<T>()
            .filter(col::<T::VnfLcmOpOccId>().eq(op_id))
            .select(col::<T::Body>())
            .get_result::<String>(conn)
            .optional()?;
        Ok(body.and_then(|body| serde_json::from_str(&body).ok()))
    }

    fn delete(&self, conn: &mut AnyConnection, op_id: &str) -> DbResult<()> {
        diesel::delete(rows::<T>().filter(col::<T::VnfLcmOpOccId>().eq(op_id))).execute(conn)?;
        Ok(())
    }
}
