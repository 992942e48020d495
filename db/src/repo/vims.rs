//! The VIM registry (Tacker's `/v1.0/vims`): one row per registered VIM, its document in
//! `body` with the credentials sealed. A name is unique within a project, and a project
//! has at most one default VIM (both enforced by unique indexes).

use diesel::prelude::*;
use serde_json::Value;

use crate::connection::AnyConnection;
use crate::error::DbResult;
use crate::schema::vims;

#[derive(Debug, Clone, PartialEq)]
pub struct VimRecord {
    pub id: String,
    /// The project that registered it.
    pub project: String,
    pub name: String,
    /// `openstack` or `kubernetes` (Tacker's types).
    pub vim_type: String,
    pub is_default: bool,
    /// The VIM document (Tacker's fields), credentials sealed.
    pub body: Value,
    pub created_at: String,
    pub updated_at: Option<String>,
}

/// What a list asks: every condition that is set must hold.
#[derive(Debug, Clone, Default)]
pub struct VimFilter {
    /// Only this project's (a non-admin's list); `None`: every project's.
    pub project: Option<String>,
    pub id: Option<String>,
    pub name: Option<String>,
    pub vim_type: Option<String>,
    pub is_default: Option<bool>,
}

type Row = (String, String, String, String, bool, String, String, Option<String>);

fn from_row(row: Row) -> DbResult<VimRecord> {
    let (id, project, name, vim_type, is_default, body, created_at, updated_at) = row;
    Ok(VimRecord {
        id,
        project,
        name,
        vim_type,
        is_default,
        body: serde_json::from_str(&body)?,
        created_at,
        updated_at,
    })
}

macro_rules! columns {
    () => {
        (
            vims::id,
            vims::project,
            vims::name,
            vims::vim_type,
            vims::is_default,
            vims::body,
            vims::created_at,
            vims::updated_at,
        )
    };
}

/// Inserts a VIM; a duplicate name in its project, or a second default, is a unique
/// violation ([`crate::DbError::is_unique_violation`]).
pub fn insert(conn: &mut AnyConnection, record: &VimRecord) -> DbResult<()> {
    diesel::insert_into(vims::table)
        .values((
            vims::id.eq(&record.id),
            vims::project.eq(&record.project),
            vims::name.eq(&record.name),
            vims::vim_type.eq(&record.vim_type),
            vims::is_default.eq(record.is_default),
            vims::body.eq(record.body.to_string()),
            vims::created_at.eq(&record.created_at),
            vims::updated_at.eq(&record.updated_at),
        ))
        .execute(conn)?;
    Ok(())
}

/// Rewrites a VIM's name, default flag, document and update time; whether it exists.
pub fn update(conn: &mut AnyConnection, record: &VimRecord) -> DbResult<bool> {
    let changed = diesel::update(vims::table.filter(vims::id.eq(&record.id)))
        .set((
            vims::name.eq(&record.name),
            vims::is_default.eq(record.is_default),
            vims::body.eq(record.body.to_string()),
            vims::updated_at.eq(&record.updated_at),
        ))
        .execute(conn)?;
    Ok(changed > 0)
}

pub fn find(conn: &mut AnyConnection, id: &str) -> DbResult<Option<VimRecord>> {
    vims::table.filter(vims::id.eq(id)).select(columns!()).get_result::<Row>(conn).optional()?.map(from_row).transpose()
}

/// The default VIM of a project.
pub fn find_default(conn: &mut AnyConnection, project: &str) -> DbResult<Option<VimRecord>> {
    vims::table
        .filter(vims::project.eq(project))
        .filter(vims::is_default.eq(true))
        .select(columns!())
        .get_result::<Row>(conn)
        .optional()?
        .map(from_row)
        .transpose()
}

pub fn delete(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    Ok(diesel::delete(vims::table.filter(vims::id.eq(id))).execute(conn)? > 0)
}

/// The VIMs a filter selects, by name then id.
pub fn list(conn: &mut AnyConnection, filter: &VimFilter) -> DbResult<Vec<VimRecord>> {
    let mut query = vims::table.select(columns!()).order((vims::name.asc(), vims::id.asc())).into_boxed();
    if let Some(project) = &filter.project {
        query = query.filter(vims::project.eq(project.clone()));
    }
    if let Some(id) = &filter.id {
        query = query.filter(vims::id.eq(id.clone()));
    }
    if let Some(name) = &filter.name {
        query = query.filter(vims::name.eq(name.clone()));
    }
    if let Some(vim_type) = &filter.vim_type {
        query = query.filter(vims::vim_type.eq(vim_type.clone()));
    }
    if let Some(is_default) = filter.is_default {
        query = query.filter(vims::is_default.eq(is_default));
    }
    query.load::<Row>(conn)?.into_iter().map(from_row).collect()
}
