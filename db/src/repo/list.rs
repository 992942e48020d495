//! Dynamic list queries: SOL013 filter predicates pushed into SQL, keyset paging by id.
//!
//! Column names come only from the repositories' fixed [`ColumnSpec`] tables, never from
//! the request, and every value is a bind parameter.

use diesel::dsl::sql;
use diesel::expression::BoxableExpression;
use diesel::sql_types::{BigInt, Bool, Double, Text};
use solgate_sol013::{ColumnPredicate, FilterOp, TypedValue};

use crate::connection::{AnyConnection, Backend};

pub type Db = <AnyConnection as diesel::Connection>::Backend;
pub type BoxedPredicate<QS> = Box<dyn BoxableExpression<QS, Db, SqlType = Bool>>;

/// What a list query asks of the database.
#[derive(Debug, Clone, Default)]
pub struct ListSpec {
    /// Conditions on indexed columns (from [`solgate_sol013::Filter::split_for_columns`]).
    pub predicates: Vec<ColumnPredicate>,
    /// Keyset paging: only rows with `id > after_id`.
    pub after_id: Option<String>,
    /// At most this many rows (the caller over-fetches when it filters in memory).
    pub limit: i64,
    /// Only rows of this project (a non-admin's list); `None`: every project's.
    pub project: Option<String>,
}

fn compare<QS: 'static>(backend: Backend, column: &'static str, op: &str, value: &TypedValue) -> BoxedPredicate<QS> {
    // PostgreSQL compares text by collation; "C" gives the byte order SQLite and the
    // in-memory filter use.
    let collate = if backend == Backend::Postgres { " COLLATE \"C\"" } else { "" };
    match value {
        TypedValue::Text(text) => {
            Box::new(sql::<Bool>(&format!("{column}{collate} {op} ")).bind::<Text, _>(text.clone()))
        }
        TypedValue::DateTime(time) => Box::new(
            sql::<Bool>(&format!("{column}{collate} {op} ")).bind::<Text, _>(solgate_sol013::format_db_datetime(time)),
        ),
        TypedValue::Integer(number) => Box::new(sql::<Bool>(&format!("{column} {op} ")).bind::<BigInt, _>(*number)),
        TypedValue::Float(number) => Box::new(sql::<Bool>(&format!("{column} {op} ")).bind::<Double, _>(*number)),
        TypedValue::Bool(flag) => Box::new(sql::<Bool>(&format!("{column} {op} ")).bind::<Bool, _>(*flag)),
    }
}

/// Case-sensitive substring test (SQLite's LIKE ignores ASCII case).
fn contains<QS: 'static>(backend: Backend, column: &'static str, value: &TypedValue) -> BoxedPredicate<QS> {
    let needle = match value {
        TypedValue::Text(text) => text.clone(),
        TypedValue::DateTime(time) => solgate_sol013::format_db_datetime(time),
        TypedValue::Integer(number) => number.to_string(),
        TypedValue::Float(number) => number.to_string(),
        TypedValue::Bool(flag) => flag.to_string(),
    };
    let function = if backend == Backend::Postgres { "strpos" } else { "instr" };
    Box::new(sql::<Bool>(&format!("{function}({column}, ")).bind::<Text, _>(needle).sql(") > 0"))
}

fn any_of<QS: 'static>(parts: Vec<BoxedPredicate<QS>>) -> BoxedPredicate<QS> {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else { return Box::new(sql::<Bool>("1 = 0")) };
    parts.fold(first, |acc, next| Box::new(diesel::BoolExpressionMethods::or(acc, next)))
}

fn all_of<QS: 'static>(parts: Vec<BoxedPredicate<QS>>) -> BoxedPredicate<QS> {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else { return Box::new(sql::<Bool>("1 = 1")) };
    parts.fold(first, |acc, next| Box::new(diesel::BoolExpressionMethods::and(acc, next)))
}

/// One pushed-down predicate as SQL. Semantics match the in-memory filter: a NULL column
/// (absent attribute) matches nothing, negated operators included.
pub fn predicate<QS: 'static>(backend: Backend, predicate: &ColumnPredicate) -> BoxedPredicate<QS> {
    let column = predicate.column;
    let values = &predicate.values;
    let each = |op: &str| values.iter().map(|value| compare::<QS>(backend, column, op, value)).collect::<Vec<_>>();
    let not_null = || -> BoxedPredicate<QS> { Box::new(sql::<Bool>(&format!("{column} IS NOT NULL"))) };
    match predicate.op {
        FilterOp::Eq | FilterOp::In => any_of(each("=")),
        FilterOp::Neq | FilterOp::Nin => all_of(std::iter::once(not_null()).chain(each("<>")).collect()),
        FilterOp::Gt => any_of(each(">")),
        FilterOp::Gte => any_of(each(">=")),
        FilterOp::Lt => any_of(each("<")),
        FilterOp::Lte => any_of(each("<=")),
        FilterOp::Cont => any_of(values.iter().map(|value| contains::<QS>(backend, column, value)).collect()),
        FilterOp::Ncont => all_of(
            std::iter::once(not_null())
                .chain(values.iter().map(|value| -> BoxedPredicate<QS> {
                    Box::new(diesel::dsl::not(contains::<QS>(backend, column, value)))
                }))
                .collect(),
        ),
    }
}
