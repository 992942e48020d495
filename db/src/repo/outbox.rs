//! The RPC outbox: a row per piece of work, written in the transaction that creates the
//! work. The publisher marks it published once the transport confirmed it (AMQP; the
//! in-process transport's messages live as long as the process, so the relay tells theirs
//! apart by when the process started); the relay republishes rows never published, and
//! rows published long ago whose work nobody took up (a message lost with a dead process
//! or broker). The conductor deletes the rows of the work it claims.

use diesel::prelude::*;

use crate::connection::AnyConnection;
use crate::error::DbResult;
use crate::repo::now_text;
use crate::schema::rpc_outbox;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    pub kind: String,
    pub target_id: String,
    pub major: i32,
    pub created_at: String,
    pub published_at: Option<String>,
    pub publish_attempts: i32,
}

type Row = (i64, String, String, i32, String, Option<String>, i32);

fn from_row((id, kind, target_id, major, created_at, published_at, publish_attempts): Row) -> OutboxRow {
    OutboxRow { id, kind, target_id, major, created_at, published_at, publish_attempts }
}

/// Adds work; returns the row id.
pub fn enqueue(conn: &mut AnyConnection, kind: &str, target_id: &str, major: u64) -> DbResult<i64> {
    let id = diesel::insert_into(rpc_outbox::table)
        .values((
            rpc_outbox::kind.eq(kind),
            rpc_outbox::target_id.eq(target_id),
            rpc_outbox::major.eq(i32::try_from(major).unwrap_or(i32::MAX)),
            rpc_outbox::created_at.eq(now_text()),
        ))
        .returning(rpc_outbox::id)
        .get_result::<i64>(conn)?;
    Ok(id)
}

/// Marks rows published, in one statement (rows already taken up and deleted are skipped).
pub fn mark_published(conn: &mut AnyConnection, ids: &[i64]) -> DbResult<()> {
    let published =
        (rpc_outbox::published_at.eq(now_text()), rpc_outbox::publish_attempts.eq(rpc_outbox::publish_attempts + 1));
    diesel::update(rpc_outbox::table.filter(rpc_outbox::id.eq_any(ids))).set(published).execute(conn)?;
    Ok(())
}

pub fn mark_failed_attempt(conn: &mut AnyConnection, id: i64) -> DbResult<()> {
    diesel::update(rpc_outbox::table.filter(rpc_outbox::id.eq(id)))
        .set(rpc_outbox::publish_attempts.eq(rpc_outbox::publish_attempts + 1))
        .execute(conn)?;
    Ok(())
}

/// Rows to (re)publish: never published and created before `unpublished_before` (so the
/// relay does not race the publisher that wrote them), or published before
/// `republish_before` (the message may have been lost) while the work is still untaken.
pub fn due(
    conn: &mut AnyConnection,
    unpublished_before: &str,
    republish_before: &str,
    limit: i64,
) -> DbResult<Vec<OutboxRow>> {
    Ok(rpc_outbox::table
        .filter(
            (rpc_outbox::published_at.is_null().and(rpc_outbox::created_at.lt(unpublished_before)))
                .or(rpc_outbox::published_at.lt(republish_before)),
        )
        .order(rpc_outbox::id.asc())
        .limit(limit)
        .select((
            rpc_outbox::id,
            rpc_outbox::kind,
            rpc_outbox::target_id,
            rpc_outbox::major,
            rpc_outbox::created_at,
            rpc_outbox::published_at,
            rpc_outbox::publish_attempts,
        ))
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect())
}

/// The work was taken up: its messages are no longer needed.
pub fn complete(conn: &mut AnyConnection, target_id: &str) -> DbResult<usize> {
    Ok(diesel::delete(rpc_outbox::table.filter(rpc_outbox::target_id.eq(target_id))).execute(conn)?)
}
