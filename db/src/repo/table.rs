//! What the repositories' generic queries ask of a Diesel table and its columns, so that
//! one implementation serves every table of a family (the LCM tables of each major, the
//! plain subscription table of each API): the per-table trait impls only name columns.

use diesel::expression::{AppearsOnTable, SelectableExpression, ValidGrouping, is_aggregate};
// The query type of a table, as `diesel::table!` itself names it: generic code needs it to
// filter, select and order a table it does not know.
use diesel::associations::HasTable;
pub(crate) use diesel::internal::table_macro::{BoxedSelectStatement, FromClause, SelectStatement};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AsQuery, QueryFragment, QueryId};
use diesel::query_source::{Column, QuerySource, Table};
use diesel::sql_types::Text;
use diesel::sqlite::Sqlite;

use crate::connection::Backend;
use crate::repo::list::{Db, ListSpec, predicate};

/// SQL for both backends, and for the connection over both (`AnyConnection` hands each
/// statement to the backend of the connection it holds).
pub(crate) trait Sql: QueryFragment<Db> + QueryFragment<Pg> + QueryFragment<Sqlite> {}

impl<T: QueryFragment<Db> + QueryFragment<Pg> + QueryFragment<Sqlite>> Sql for T {}

/// A Diesel table generic queries can run on.
pub(crate) trait AnyTable:
    Table<AllColumns: ValidGrouping<(), IsAggregate = is_aggregate::No>>
    + QuerySource<FromClause: Sql, DefaultSelection: Sql + QueryId>
    + HasTable<Table = Self>
    + AsQuery<Query = SelectStatement<FromClause<Self>>>
    + QueryId
    + Default
    + Copy
    + Send
    + Sync
    + 'static
{
}

impl<T> AnyTable for T where
    T: Table<AllColumns: ValidGrouping<(), IsAggregate = is_aggregate::No>>
        + QuerySource<FromClause: Sql, DefaultSelection: Sql + QueryId>
        + HasTable<Table = T>
        + AsQuery<Query = SelectStatement<FromClause<T>>>
        + QueryId
        + Default
        + Copy
        + Send
        + Sync
        + 'static
{
}

/// A column of table `T` of SQL type `ST`.
pub(crate) trait Col<T, ST>:
    Column<Table = T>
    + Expression<SqlType = ST>
    + SelectableExpression<T>
    + AppearsOnTable<T>
    + ValidGrouping<(), IsAggregate = is_aggregate::No>
    + Sql
    + QueryId
    + Default
    + Copy
    + Send
    + Sync
    + 'static
{
}

impl<C, T, ST> Col<T, ST> for C where
    C: Column<Table = T>
        + Expression<SqlType = ST>
        + SelectableExpression<T>
        + AppearsOnTable<T>
        + ValidGrouping<(), IsAggregate = is_aggregate::No>
        + Sql
        + QueryId
        + Default
        + Copy
        + Send
        + Sync
        + 'static
{
}

/// The value of a column type (columns are unit structs).
pub(crate) fn col<C: Default>() -> C {
    C::default()
}

/// The query of all of a table's rows, to filter, select and order.
pub(crate) fn rows<T: AnyTable>() -> SelectStatement<FromClause<T>> {
    T::default().as_query()
}

/// A page of a list on table `T` (column `Id` its key, `Project` its owner): the list's
/// predicates, project and keyset position, at most `spec.limit` rows in id order.
pub(crate) fn page<'a, T, ST, Id, Project>(
    query: BoxedSelectStatement<'a, ST, FromClause<T>, Db>,
    backend: Backend,
    spec: &ListSpec,
) -> BoxedSelectStatement<'a, ST, FromClause<T>, Db>
where
    T: AnyTable,
    Id: Col<T, Text>,
    Project: Col<T, Text>,
{
    let mut query = query.order(col::<Id>().asc()).limit(spec.limit);
    for condition in &spec.predicates {
        query = query.filter(predicate::<T>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(col::<Project>().eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(col::<Id>().gt(after.clone()));
    }
    query
}
