//! SOL013 protocol pieces: ProblemDetails, attribute filters, selectors, paging, JSON
//! Merge Patch.
//!
//! Pure logic over `serde_json::Value`: the gateway parses a list request with
//! [`ListQuery::parse`] (the resource's JSON Schema types and validates attribute names),
//! the database layer pushes what it can with [`Filter::split_for_columns`], the rest is
//! filtered with [`Filter::matches`], each entry is trimmed with [`AttributeSelector::apply`],
//! and [`ListQuery::next_link`] builds the `Link` header. Every error is a
//! [`Sol013Error`] that converts into a 400 [`ProblemDetails`].

pub mod attributes;
pub mod error;
pub mod filter;
pub mod limits;
pub mod merge_patch;
pub mod paging;
mod params;
pub mod problem;
pub mod query;
pub mod selector;

#[cfg(test)]
mod test_fixtures;

pub use attributes::{AttrKind, AttrPath, PathSegment, resolve};
pub use error::Sol013Error;
pub use filter::{
    ColumnKind, ColumnPredicate, ColumnSpec, Filter, FilterExpr, FilterOp, TypedValue, format_db_datetime,
    like_pattern, parse_datetime,
};
pub use limits::QueryLimits;
pub use merge_patch::merge_patch;
pub use paging::{PageMarker, next_link};
pub use problem::{PROBLEM_JSON, ProblemDetails, reason_phrase};
pub use query::{ListQuery, QueryPair, parse_query};
pub use selector::{AttributeSelector, SelectorParams, SelectorSpec};
