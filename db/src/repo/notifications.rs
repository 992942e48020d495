//! The notification outbox: one row per (notification, subscription), delivered in id
//! order per subscription by the delivery worker. `api` names the API whose table holds
//! what the row is sent to (`vnflcm`: the `lccn_subscriptions_v{major}` tables, `vnfpkgm`:
//! `pkgm_subscriptions`), so every API's notifications share one pipeline;
//! `subscription_id` is the id of that subscription, or of another resource that carries
//! its own callback (SOL003 PM jobs and thresholds do). `solgate_core::notify::callback_target`
//! resolves a row.

use diesel::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::connection::AnyConnection;
use crate::error::DbResult;
use crate::repo::document::{index_of, lenient_text};
use crate::repo::now_text;
use crate::schema::notifications;

pub const PENDING: &str = "PENDING";
pub const DELIVERED: &str = "DELIVERED";
pub const GIVEN_UP: &str = "GIVEN_UP";

/// The `api` of LCM notification rows.
pub const VNFLCM: &str = "vnflcm";

#[derive(Debug, Clone, PartialEq)]
pub struct NotificationRow {
    pub id: i64,
    pub notification_id: String,
    pub subscription_id: String,
    pub major: i32,
    pub notification_type: String,
    pub body: Value,
    pub state: String,
    pub attempts: i32,
    pub next_attempt_at: String,
    pub last_error: Option<String>,
    pub created_at: String,
    pub api: String,
}

type Row = (i64, String, String, i32, String, String, String, i32, String, Option<String>, String, String);

fn from_row(row: Row) -> DbResult<NotificationRow> {
    let (
        id,
        notification_id,
        subscription_id,
        major,
        notification_type,
        body,
        state,
        attempts,
        next_attempt_at,
        last_error,
        created_at,
        api,
    ) = row;
    Ok(NotificationRow {
        id,
        notification_id,
        subscription_id,
        major,
        notification_type,
        body: serde_json::from_str(&body)?,
        state,
        attempts,
        next_attempt_at,
        last_error,
        created_at,
        api,
    })
}

macro_rules! columns {
    () => {
        (
            notifications::id,
            notifications::notification_id,
            notifications::subscription_id,
            notifications::major,
            notifications::notification_type,
            notifications::body,
            notifications::state,
            notifications::attempts,
            notifications::next_attempt_at,
            notifications::last_error,
            notifications::created_at,
            notifications::api,
        )
    };
}

/// Queues an LCM notification.
pub fn enqueue(conn: &mut AnyConnection, subscription_id: &str, major: u64, body: &Value) -> DbResult<()> {
    enqueue_for(conn, VNFLCM, subscription_id, major, body)
}

/// The members of a notification (SOL003 clause 5.5.2.17 and alike) its row copies.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct NotificationIndex<'a> {
    #[serde(borrow, deserialize_with = "lenient_text")]
    id: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    notification_type: Option<&'a str>,
}

/// Queues a notification for a subscription of `api` (and its `major`).
pub fn enqueue_for(
    conn: &mut AnyConnection,
    api: &str,
    subscription_id: &str,
    major: u64,
    body: &Value,
) -> DbResult<()> {
    let now = now_text();
    let index: NotificationIndex<'_> = index_of(body);
    diesel::insert_into(notifications::table)
        .values((
            notifications::api.eq(api),
            notifications::notification_id.eq(index.id.unwrap_or_default()),
            notifications::subscription_id.eq(subscription_id),
            notifications::major.eq(i32::try_from(major).unwrap_or(i32::MAX)),
            notifications::notification_type.eq(index.notification_type.unwrap_or_default()),
            notifications::body.eq(body.to_string()),
            notifications::state.eq(PENDING),
            notifications::next_attempt_at.eq(&now),
            notifications::created_at.eq(&now),
        ))
        .execute(conn)?;
    Ok(())
}

/// A pending row nobody holds: never claimed, or its holder's lease ran out.
fn unclaimed(
    now: &str,
) -> diesel::dsl::Or<
    diesel::dsl::IsNull<notifications::claim_expires_at>,
    diesel::dsl::Lt<notifications::claim_expires_at, String>,
> {
    notifications::claim_expires_at.is_null().or(notifications::claim_expires_at.lt(now.to_owned()))
}

/// The oldest pending notification of each subscription (per-subscription order: a
/// later one waits until the head is delivered or given up), whose next attempt is due
/// and that no live worker holds.
pub fn due_heads(conn: &mut AnyConnection, now: &str, limit: i64) -> DbResult<Vec<NotificationRow>> {
    notifications::table
        .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(
            "id IN (SELECT MIN(id) FROM notifications WHERE state = 'PENDING' GROUP BY subscription_id)",
        ))
        .filter(notifications::next_attempt_at.le(now))
        .filter(unclaimed(now))
        .order(notifications::id.asc())
        .limit(limit)
        .select(columns!())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect()
}

/// The head of one subscription's queue if its next attempt is due (a worker that
/// delivered a head goes on with the next one without waiting for a poll; [`claim`]
/// decides whether it is free).
pub fn due_head_of(conn: &mut AnyConnection, subscription_id: &str, now: &str) -> DbResult<Option<NotificationRow>> {
    let head = notifications::table
        .filter(notifications::subscription_id.eq(subscription_id))
        .filter(notifications::state.eq(PENDING))
        .order(notifications::id.asc())
        .select(columns!())
        .first::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()?;
    Ok(head.filter(|row| row.next_attempt_at.as_str() <= now))
}

/// Claims a row for delivery by `worker` until `until`; false if another worker holds it
/// or it is no longer pending.
pub fn claim(conn: &mut AnyConnection, id: i64, worker: &str, now: &str, until: &str) -> DbResult<bool> {
    let claimed = diesel::update(
        notifications::table
            .filter(notifications::id.eq(id))
            .filter(notifications::state.eq(PENDING))
            .filter(unclaimed(now)),
    )
    .set((notifications::claimed_by.eq(worker), notifications::claim_expires_at.eq(until)))
    .execute(conn)?;
    Ok(claimed > 0)
}

/// Records a delivery by the worker holding the row; false if it no longer holds it (the
/// lease ran out and another worker took over, or the subscription was deleted).
pub fn mark_delivered(conn: &mut AnyConnection, id: i64, worker: &str) -> DbResult<bool> {
    let updated = diesel::update(
        notifications::table.filter(notifications::id.eq(id)).filter(notifications::claimed_by.eq(worker)),
    )
    .set((
        notifications::state.eq(DELIVERED),
        notifications::delivered_at.eq(now_text()),
        notifications::attempts.eq(notifications::attempts + 1),
        notifications::claimed_by.eq(None::<String>),
        notifications::claim_expires_at.eq(None::<String>),
    ))
    .execute(conn)?;
    Ok(updated > 0)
}

/// Records a failed attempt by the worker holding the row: PENDING again from
/// `next_attempt_at`, or GIVEN_UP. False if the worker no longer holds the row.
pub fn mark_failed(
    conn: &mut AnyConnection,
    id: i64,
    worker: &str,
    error: &str,
    next_attempt_at: &str,
    give_up: bool,
) -> DbResult<bool> {
    let updated = diesel::update(
        notifications::table.filter(notifications::id.eq(id)).filter(notifications::claimed_by.eq(worker)),
    )
    .set((
        notifications::state.eq(if give_up { GIVEN_UP } else { PENDING }),
        notifications::last_error.eq(error),
        notifications::next_attempt_at.eq(next_attempt_at),
        notifications::attempts.eq(notifications::attempts + 1),
        notifications::claimed_by.eq(None::<String>),
        notifications::claim_expires_at.eq(None::<String>),
    ))
    .execute(conn)?;
    Ok(updated > 0)
}

/// Drops pending notifications of a deleted subscription.
pub fn drop_for_subscription(conn: &mut AnyConnection, subscription_id: &str) -> DbResult<usize> {
    Ok(diesel::delete(
        notifications::table
            .filter(notifications::subscription_id.eq(subscription_id))
            .filter(notifications::state.eq(PENDING)),
    )
    .execute(conn)?)
}

pub fn count_by_state(conn: &mut AnyConnection, state: &str) -> DbResult<i64> {
    Ok(notifications::table.filter(notifications::state.eq(state)).count().get_result(conn)?)
}

/// Every row of one subscription, oldest first (operators and tests inspect delivery state).
pub fn for_subscription(conn: &mut AnyConnection, subscription_id: &str) -> DbResult<Vec<NotificationRow>> {
    notifications::table
        .filter(notifications::subscription_id.eq(subscription_id))
        .order(notifications::id.asc())
        .select(columns!())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect()
}

/// Removes delivered and given-up rows queued before `before`; returns how many.
pub fn purge_finished(conn: &mut AnyConnection, before: &str) -> DbResult<usize> {
    Ok(diesel::delete(
        notifications::table
            .filter(notifications::state.eq_any([DELIVERED, GIVEN_UP]))
            .filter(notifications::created_at.lt(before)),
    )
    .execute(conn)?)
}
