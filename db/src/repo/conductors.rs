//! Conductor heartbeats: which conductors are alive.

use diesel::prelude::*;

use crate::connection::AnyConnection;
use crate::error::DbResult;
use crate::repo::now_text;
use crate::schema::conductors;

pub fn register(conn: &mut AnyConnection, id: &str, hostname: &str) -> DbResult<()> {
    let now = now_text();
    diesel::insert_into(conductors::table)
        .values((
            conductors::id.eq(id),
            conductors::hostname.eq(hostname),
            conductors::started_at.eq(&now),
            conductors::heartbeat_at.eq(&now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Records a heartbeat; re-registers if the row was removed as stale meanwhile.
pub fn heartbeat(conn: &mut AnyConnection, id: &str, hostname: &str) -> DbResult<()> {
    let updated = diesel::update(conductors::table.filter(conductors::id.eq(id)))
        .set(conductors::heartbeat_at.eq(now_text()))
        .execute(conn)?;
    if updated == 0 {
        register(conn, id, hostname)?;
    }
    Ok(())
}

/// Conductors whose heartbeat is at or after `alive_since`.
pub fn live(conn: &mut AnyConnection, alive_since: &str) -> DbResult<Vec<String>> {
    Ok(conductors::table.filter(conductors::heartbeat_at.ge(alive_since)).select(conductors::id).load(conn)?)
}

/// Forgets conductors dead since before `dead_before`.
pub fn remove_stale(conn: &mut AnyConnection, dead_before: &str) -> DbResult<usize> {
    Ok(diesel::delete(conductors::table.filter(conductors::heartbeat_at.lt(dead_before))).execute(conn)?)
}

pub fn unregister(conn: &mut AnyConnection, id: &str) -> DbResult<()> {
    diesel::delete(conductors::table.filter(conductors::id.eq(id))).execute(conn)?;
    Ok(())
}
