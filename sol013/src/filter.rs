//! Attribute-based filtering (SOL013 clause 5.2): `filter=(op,attr/path,value[,value...])[;...]`.
//!
//! Semantics solgate implements (Tacker's where it has one):
//! - `;` joins expressions with AND.
//! - `/` descends into objects; arrays are transparent at every level, and an expression
//!   on an array matches when **any** element matches; `@key` stands for the keys of a map.
//! - A value is typed by the attribute's schema type: numbers compare numerically,
//!   booleans accept only `true`/`false`, date-times compare as instants, strings as strings
//!   (byte order). Where the schema allows anything (KeyValuePairs members) the value is
//!   typed at run time by the JSON type found in the resource.
//! - Absent, `null` and empty-array attributes match **no** expression, including `neq`,
//!   `nin` and `ncont` (as in Tacker, and as SQL treats NULL, so a pushed-down predicate and
//!   the in-memory filter agree).
//! - `neq`, `nin` and `ncont` on a present attribute are the negation of `eq`, `in` and
//!   `cont`: with an array they match when **no** element equals / contains a value.
//!   (Tacker applies them element-wise and keeps the instance if any element differs,
//!   so `(neq,tags,a)` would still return instances tagged `a`.)

use std::cmp::Ordering;

use chrono::{DateTime, Datelike, NaiveDateTime, Timelike, Utc};
use serde_json::{Number, Value};

use crate::attributes::{AttrKind, AttrPath, PathSegment, resolve};
use crate::error::Sol013Error;
use crate::limits::QueryLimits;

/// Values (plus one per expression) pushed into one SQL query: each becomes a bound
/// parameter and a level of the expression tree, and SQLite allows a depth of 1,000. The
/// expressions past it run in memory, so any accepted filter runs on both backends.
pub const MAX_PUSHED_VALUES: usize = 256;

/// A filter operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FilterOp {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Nin,
    Cont,
    Ncont,
}

impl FilterOp {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "eq" => Self::Eq,
            "neq" => Self::Neq,
            "gt" => Self::Gt,
            "gte" => Self::Gte,
            "lt" => Self::Lt,
            "lte" => Self::Lte,
            "in" => Self::In,
            "nin" => Self::Nin,
            "cont" => Self::Cont,
            "ncont" => Self::Ncont,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Neq => "neq",
            Self::Gt => "gt",
            Self::Gte => "gte",
            Self::Lt => "lt",
            Self::Lte => "lte",
            Self::In => "in",
            Self::Nin => "nin",
            Self::Cont => "cont",
            Self::Ncont => "ncont",
        }
    }

    /// eq, neq, gt, gte, lt, lte take exactly one value; in, nin, cont, ncont one or more.
    pub fn single_value(self) -> bool {
        matches!(self, Self::Eq | Self::Neq | Self::Gt | Self::Gte | Self::Lt | Self::Lte)
    }

    /// neq, nin, ncont: the negation of eq, in, cont.
    pub fn is_negated(self) -> bool {
        matches!(self, Self::Neq | Self::Nin | Self::Ncont)
    }

    fn is_ordering(self) -> bool {
        matches!(self, Self::Gt | Self::Gte | Self::Lt | Self::Lte)
    }

    fn is_substring(self) -> bool {
        matches!(self, Self::Cont | Self::Ncont)
    }
}

/// A filter value converted to the attribute's type.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedValue {
    Text(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    DateTime(DateTime<Utc>),
}

/// One simple filter expression `(op,attr,values)`, validated and typed.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterExpr {
    op: FilterOp,
    attr: AttrPath,
    /// The compared kind (arrays stripped); `Unknown` = typed at run time, values are `Text`.
    kind: AttrKind,
    values: Vec<TypedValue>,
}

impl FilterExpr {
    pub fn op(&self) -> FilterOp {
        self.op
    }

    pub fn attr(&self) -> &AttrPath {
        &self.attr
    }

    /// The kind values are compared as; [`AttrKind::Unknown`] means run-time typing.
    pub fn kind(&self) -> &AttrKind {
        &self.kind
    }

    pub fn values(&self) -> &[TypedValue] {
        &self.values
    }

    /// Whether `resource` satisfies this expression (module docs give the semantics).
    pub fn matches(&self, resource: &Value) -> bool {
        let mut candidates = Vec::new();
        collect(resource, self.attr.segments(), &mut candidates);
        if candidates.is_empty() {
            return false;
        }
        let any = candidates.iter().any(|candidate| self.positive_match(candidate));
        any != self.op.is_negated()
    }

    /// eq/in/cont/gt/... for one candidate value (neq/nin/ncont use their positive form).
    fn positive_match(&self, candidate: &Candidate<'_>) -> bool {
        if self.op.is_substring() {
            let Some(text) = candidate.as_str() else { return false };
            return self.values.iter().any(|v| matches!(v, TypedValue::Text(needle) if text.contains(needle.as_str())));
        }
        let wanted = |order: Ordering| match self.op {
            FilterOp::Gt => order.is_gt(),
            FilterOp::Gte => order.is_ge(),
            FilterOp::Lt => order.is_lt(),
            FilterOp::Lte => order.is_le(),
            _ => order.is_eq(),
        };
        self.values.iter().any(|value| compare(candidate, value, &self.kind).is_some_and(wanted))
    }
}

/// A parsed, validated filter: the AND of its expressions.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    exprs: Vec<FilterExpr>,
}

impl Filter {
    /// Parses `text` (already percent-decoded) and validates every attribute against the
    /// resource's JSON `schema`, converting values to the attributes' types. Pass `{}` as
    /// the schema to accept any attribute and type everything at run time.
    pub fn parse(text: &str, schema: &Value) -> Result<Self, Sol013Error> {
        Self::parse_limited(text, schema, &QueryLimits::default())
    }

    /// As [`Filter::parse`], within `limits` (a 400 naming the limit past one).
    pub fn parse_limited(text: &str, schema: &Value, limits: &QueryLimits) -> Result<Self, Sol013Error> {
        let raw = parse_syntax(text, limits)?;
        for expr in &raw {
            QueryLimits::check(
                "The number of values of one filter expression",
                "max_filter_values",
                expr.values.len(),
                limits.max_filter_values,
            )?;
            QueryLimits::check(
                "The length of a filter attribute path",
                "max_attribute_length",
                expr.attr.chars().count(),
                limits.max_attribute_length,
            )?;
            QueryLimits::check(
                "The depth of a filter attribute path",
                "max_attribute_depth",
                expr.attr.split('/').count(),
                limits.max_attribute_depth,
            )?;
            for value in &expr.values {
                QueryLimits::check(
                    "The length of a filter value",
                    "max_value_length",
                    value.chars().count(),
                    limits.max_value_length,
                )?;
            }
        }
        let exprs = raw.into_iter().map(|raw| type_expr(raw, schema)).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { exprs })
    }

    pub fn exprs(&self) -> &[FilterExpr] {
        &self.exprs
    }

    /// Whether `resource` (its JSON representation, before selectors are applied) satisfies
    /// every expression.
    pub fn matches(&self, resource: &Value) -> bool {
        self.exprs.iter().all(|expr| expr.matches(resource))
    }

    /// The distinct top-level attributes the filter reads, so a caller that loads partial
    /// rows knows what the in-memory part needs.
    pub fn top_level_attributes(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for name in self.exprs.iter().filter_map(|e| e.attr.top_level()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// Splits the filter into predicates a database can evaluate on the given columns and
    /// the residual filter to run in memory (`None` when everything was pushed down).
    ///
    /// An expression is pushed when its path is a single attribute listed in `columns` and
    /// its values convert losslessly to the column's kind; all other expressions stay in the
    /// residual, so `predicates AND residual` selects exactly what [`Filter::matches`] does.
    /// `cont`/`ncont` are pushed only to text columns. [`ColumnPredicate`] says how a backend
    /// must evaluate each operator to agree with the in-memory filter.
    pub fn split_for_columns(&self, columns: &[ColumnSpec]) -> (Vec<ColumnPredicate>, Option<Filter>) {
        let mut pushed = Vec::new();
        let mut residual = Vec::new();
        let mut budget = MAX_PUSHED_VALUES;
        for expr in &self.exprs {
            match push_down(expr, columns).filter(|predicate| predicate.values.len() < budget) {
                Some(predicate) => {
                    budget -= predicate.values.len() + 1;
                    pushed.push(predicate);
                }
                None => residual.push(expr.clone()),
            }
        }
        let residual = (!residual.is_empty()).then_some(Filter { exprs: residual });
        (pushed, residual)
    }
}

// ---------------------------------------------------------------------------------------
// Syntax

struct RawExpr<'a> {
    op: &'a str,
    attr: &'a str,
    values: Vec<String>,
}

fn parse_syntax<'a>(input: &'a str, limits: &QueryLimits) -> Result<Vec<RawExpr<'a>>, Sol013Error> {
    let mut exprs = Vec::new();
    let mut rest = input;
    loop {
        let (expr, after) = parse_simple(rest)?;
        exprs.push(expr);
        QueryLimits::check(
            "The number of filter expressions",
            "max_filter_terms",
            exprs.len(),
            limits.max_filter_terms,
        )?;
        if after.is_empty() {
            return Ok(exprs);
        }
        rest = after.strip_prefix(';').ok_or(Sol013Error::FilterSemicolonExpected)?;
    }
}

/// `(op,attr,value[,value...])`. Like Tacker's grammar, the attribute is everything up to
/// the next comma; a bad attribute is reported when it is resolved.
fn parse_simple(input: &str) -> Result<(RawExpr<'_>, &str), Sol013Error> {
    let rest = input.strip_prefix('(').ok_or(Sol013Error::FilterParse)?;
    let (op, rest) = rest.split_once(',').ok_or(Sol013Error::FilterParse)?;
    if op.is_empty() || !op.bytes().all(|b| b.is_ascii_lowercase()) {
        return Err(Sol013Error::FilterParse);
    }
    let (attr, mut rest) = rest.split_once(',').ok_or(Sol013Error::FilterParse)?;
    if attr.is_empty() {
        return Err(Sol013Error::FilterParse);
    }
    let mut values = Vec::new();
    loop {
        let (value, after) = parse_value(rest)?;
        values.push(value);
        if let Some(after) = after.strip_prefix(',') {
            rest = after;
        } else if let Some(after) = after.strip_prefix(')') {
            return Ok((RawExpr { op, attr, values }, after));
        } else if after.is_empty() {
            // The closing parenthesis is missing.
            return Err(Sol013Error::FilterParse);
        } else {
            return Err(Sol013Error::ValueParse);
        }
    }
}

/// An unquoted value (no `'`, `,` or `)`) or a single-quoted one with `''` for `'`.
fn parse_value(input: &str) -> Result<(String, &str), Sol013Error> {
    if let Some(quoted) = input.strip_prefix('\'') {
        let mut value = String::new();
        let mut rest = quoted;
        loop {
            let end = rest.find('\'').ok_or(Sol013Error::ValueParse)?;
            value.push_str(&rest[..end]);
            rest = &rest[end + 1..];
            match rest.strip_prefix('\'') {
                Some(after) => {
                    value.push('\'');
                    rest = after;
                }
                None => return Ok((value, rest)),
            }
        }
    }
    let end = input.find([',', ')', '\'']).unwrap_or(input.len());
    if end == 0 {
        return Err(if input.is_empty() { Sol013Error::FilterParse } else { Sol013Error::ValueParse });
    }
    if input[end..].starts_with('\'') {
        return Err(Sol013Error::ValueParse);
    }
    Ok((input[..end].to_owned(), &input[end..]))
}

// ---------------------------------------------------------------------------------------
// Typing

fn type_expr(raw: RawExpr<'_>, schema: &Value) -> Result<FilterExpr, Sol013Error> {
    let op = FilterOp::parse(raw.op).ok_or_else(|| Sol013Error::InvalidOp(raw.op.to_owned()))?;
    if op.single_value() && raw.values.len() > 1 {
        return Err(Sol013Error::OnlyOneValue(raw.op.to_owned()));
    }
    let invalid_attr = || Sol013Error::InvalidAttrName(raw.attr.to_owned());
    let attr = AttrPath::parse(raw.attr).ok_or_else(invalid_attr)?;
    let kind = resolve(schema, attr.segments()).ok_or_else(invalid_attr)?.element().clone();
    let not_applicable =
        || Sol013Error::OpNotApplicable { op: op.as_str().to_owned(), attr: raw.attr.to_owned(), kind: kind.name() };
    let invalid_value = |value: &str, expected: &'static str| Sol013Error::InvalidValue {
        attr: raw.attr.to_owned(),
        value: value.to_owned(),
        expected,
    };
    let values = match &kind {
        AttrKind::Object | AttrKind::Map(_) | AttrKind::Array(_) => {
            return Err(Sol013Error::NotFilterable(raw.attr.to_owned()));
        }
        AttrKind::String | AttrKind::Unknown => raw.values.into_iter().map(TypedValue::Text).collect(),
        AttrKind::Boolean => {
            if op.is_ordering() || op.is_substring() {
                return Err(not_applicable());
            }
            raw.values
                .into_iter()
                .map(|value| match value.as_str() {
                    "true" => Ok(TypedValue::Bool(true)),
                    "false" => Ok(TypedValue::Bool(false)),
                    _ => Err(Sol013Error::InvalidBoolean { attr: raw.attr.to_owned(), value }),
                })
                .collect::<Result<_, _>>()?
        }
        AttrKind::Integer | AttrKind::Number => {
            if op.is_substring() {
                return Err(not_applicable());
            }
            raw.values
                .iter()
                .map(|value| parse_number(value).ok_or_else(|| invalid_value(value, kind.name())))
                .collect::<Result<_, _>>()?
        }
        AttrKind::DateTime => {
            if op.is_substring() {
                return Err(not_applicable());
            }
            raw.values
                .iter()
                .map(|value| {
                    parse_datetime(value).map(TypedValue::DateTime).ok_or_else(|| invalid_value(value, "date-time"))
                })
                .collect::<Result<_, _>>()?
        }
    };
    Ok(FilterExpr { op, attr, kind, values })
}

fn parse_number(text: &str) -> Option<TypedValue> {
    if let Ok(integer) = text.parse::<i64>() {
        return Some(TypedValue::Integer(integer));
    }
    // Rust also parses "inf" and "NaN"; neither is a JSON number.
    text.parse::<f64>().ok().filter(|f| f.is_finite()).map(TypedValue::Float)
}

/// Reads a date-time: RFC 3339, or an ISO 8601 date-time without offset read as UTC
/// (Tacker's list views emit `2026-11-22T01:34:40.000000`).
pub fn parse_datetime(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Some(instant.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|naive| naive.and_utc())
}

/// The text form date-times are stored in so that text order is time order:
/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC, always six fractional digits.
pub fn format_db_datetime(instant: &DateTime<Utc>) -> String {
    // The same text as the format `%Y-%m-%dT%H:%M:%S%.6fZ`, without parsing that pattern
    // at every call (several times per stored change).
    instant.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

// ---------------------------------------------------------------------------------------
// Matching

enum Candidate<'a> {
    Value(&'a Value),
    Key(&'a str),
}

impl Candidate<'_> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Candidate::Value(value) => value.as_str(),
            Candidate::Key(key) => Some(key),
        }
    }
}

/// The values `segments` reach in `value`; arrays are flattened at every level and `null`
/// counts as absent.
fn collect<'a>(value: &'a Value, segments: &[PathSegment], out: &mut Vec<Candidate<'a>>) {
    match value {
        Value::Null => {}
        Value::Array(items) => items.iter().for_each(|item| collect(item, segments, out)),
        _ => match segments.split_first() {
            None => out.push(Candidate::Value(value)),
            Some((PathSegment::Name(name), rest)) => {
                if let Some(member) = value.as_object().and_then(|object| object.get(name)) {
                    collect(member, rest, out);
                }
            }
            Some((PathSegment::Key, rest)) => {
                if let (Some(object), true) = (value.as_object(), rest.is_empty()) {
                    out.extend(object.keys().map(|key| Candidate::Key(key)));
                }
            }
        },
    }
}

/// `candidate` compared with `value`; `None` when they are not comparable (different types,
/// an unparsable date-time in the resource).
fn compare(candidate: &Candidate<'_>, value: &TypedValue, kind: &AttrKind) -> Option<Ordering> {
    let found = match candidate {
        Candidate::Key(key) => {
            return match value {
                TypedValue::Text(text) => Some((*key).cmp(text.as_str())),
                _ => None,
            };
        }
        Candidate::Value(found) => *found,
    };
    match value {
        TypedValue::Text(text) if *kind == AttrKind::Unknown => compare_runtime(found, text),
        TypedValue::Text(text) => Some(found.as_str()?.cmp(text)),
        TypedValue::Integer(_) | TypedValue::Float(_) => compare_numbers(found.as_number()?, value),
        TypedValue::Bool(flag) => Some(found.as_bool()?.cmp(flag)),
        TypedValue::DateTime(instant) => Some(parse_datetime(found.as_str()?)?.cmp(instant)),
    }
}

/// Run-time typing for attributes the schema leaves open: the value is read as the JSON
/// type found in the resource.
fn compare_runtime(found: &Value, text: &str) -> Option<Ordering> {
    match found {
        Value::String(s) => Some(s.as_str().cmp(text)),
        Value::Number(n) => compare_numbers(n, &parse_number(text)?),
        Value::Bool(b) => match text {
            "true" => Some(b.cmp(&true)),
            "false" => Some(b.cmp(&false)),
            _ => None,
        },
        _ => None,
    }
}

fn compare_numbers(found: &Number, value: &TypedValue) -> Option<Ordering> {
    match (found.as_i64(), value) {
        (Some(found), TypedValue::Integer(wanted)) => Some(found.cmp(wanted)),
        (_, TypedValue::Integer(wanted)) => found.as_f64()?.partial_cmp(&(*wanted as f64)),
        (_, TypedValue::Float(wanted)) => found.as_f64()?.partial_cmp(wanted),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// SQL push-down

/// How a column stores an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    Text,
    Integer,
    Float,
    Bool,
    /// Text in [`format_db_datetime`] form, so text comparison is time comparison.
    DateTime,
}

/// A top-level attribute the database holds in its own column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Top-level attribute name in the resource (`operationState`).
    pub attr: &'static str,
    /// Column name (`operation_state`).
    pub column: &'static str,
    pub kind: ColumnKind,
}

/// A filter expression for a database to evaluate on one column, AND-ed with the others.
///
/// Values have the column's kind (`DateTime` values for `DateTime` columns: compare with
/// the column text via [`format_db_datetime`]). How a backend must evaluate `op` to agree
/// with [`Filter::matches`]:
/// - `eq`, `neq`, `gt`, `gte`, `lt`, `lte`: `col <op> v`. A NULL column matches nothing,
///   `neq` included, which plain SQL comparison already gives. Text comparisons must use
///   byte order (`COLLATE "C"` on PostgreSQL; SQLite's default BINARY is right).
/// - `in` / `nin`: `col IN (v...)` / `col NOT IN (v...)` (NULL matches neither).
/// - `cont` / `ncont` (text columns only): a **case-sensitive** substring test of any value,
///   negated for `ncont`, NULL matching neither: PostgreSQL `strpos(col, v) > 0`, SQLite
///   `instr(col, v) > 0`. SQLite's `LIKE` ignores ASCII case, so do not use it there; on
///   PostgreSQL `col LIKE` [`like_pattern`]`(v) ESCAPE '\'` is equivalent.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnPredicate {
    pub column: &'static str,
    pub op: FilterOp,
    pub values: Vec<TypedValue>,
}

/// `%value%` with `\`, `%` and `_` escaped by `\`, for `LIKE ... ESCAPE '\'`.
pub fn like_pattern(value: &str) -> String {
    let mut pattern = String::with_capacity(value.len() + 2);
    pattern.push('%');
    for c in value.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

fn push_down(expr: &FilterExpr, columns: &[ColumnSpec]) -> Option<ColumnPredicate> {
    let [PathSegment::Name(name)] = expr.attr.segments() else { return None };
    let spec = columns.iter().find(|spec| spec.attr == name)?;
    let allowed = match spec.kind {
        ColumnKind::Text => true,
        ColumnKind::Bool => !expr.op.is_ordering() && !expr.op.is_substring(),
        ColumnKind::Integer | ColumnKind::Float | ColumnKind::DateTime => !expr.op.is_substring(),
    };
    if !allowed {
        return None;
    }
    let values =
        expr.values.iter().map(|value| column_value(value, &expr.kind, spec.kind)).collect::<Option<Vec<_>>>()?;
    Some(ColumnPredicate { column: spec.column, op: expr.op, values })
}

/// `value` as the column stores it, `None` when the column could not compare it exactly
/// like the in-memory filter does.
fn column_value(value: &TypedValue, kind: &AttrKind, column: ColumnKind) -> Option<TypedValue> {
    let runtime_text = |value: &TypedValue| match (value, kind) {
        (TypedValue::Text(text), AttrKind::Unknown) => Some(text.clone()),
        _ => None,
    };
    match (column, value) {
        // A run-time typed value is only a string when the column holds strings.
        (ColumnKind::Text, TypedValue::Text(_)) => Some(value.clone()),
        (ColumnKind::Integer, TypedValue::Integer(_)) => Some(value.clone()),
        (ColumnKind::Integer, _) => match parse_number(&runtime_text(value)?)? {
            integer @ TypedValue::Integer(_) => Some(integer),
            _ => None,
        },
        (ColumnKind::Float, TypedValue::Float(_)) => Some(value.clone()),
        (ColumnKind::Float, TypedValue::Integer(i)) => Some(TypedValue::Float(*i as f64)),
        (ColumnKind::Float, _) => match parse_number(&runtime_text(value)?)? {
            TypedValue::Integer(i) => Some(TypedValue::Float(i as f64)),
            float => Some(float),
        },
        (ColumnKind::Bool, TypedValue::Bool(_)) => Some(value.clone()),
        (ColumnKind::Bool, _) => match runtime_text(value)?.as_str() {
            "true" => Some(TypedValue::Bool(true)),
            "false" => Some(TypedValue::Bool(false)),
            _ => None,
        },
        (ColumnKind::DateTime, TypedValue::DateTime(instant)) => storable_instant(*instant),
        (ColumnKind::DateTime, _) => storable_instant(parse_datetime(&runtime_text(value)?)?),
        _ => None,
    }
}

/// Only instants the fixed-width text form represents exactly: four-digit years and no
/// sub-microsecond part (truncating would turn `gte` into `gt` at the boundary).
fn storable_instant(instant: DateTime<Utc>) -> Option<TypedValue> {
    let exact = (0..=9999).contains(&instant.year()) && instant.nanosecond().is_multiple_of(1000);
    exact.then_some(TypedValue::DateTime(instant))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{FILTER, parse_query, single_param};
    use crate::test_fixtures::{
        completed_lcm_op_occ, instantiated_vnf_instance, not_instantiated_vnf_instance, vnf_instance_schema,
        vnf_lcm_op_occ_schema,
    };
    use serde_json::json;

    fn inst(filter: &str) -> bool {
        Filter::parse(filter, &vnf_instance_schema()).unwrap().matches(&instantiated_vnf_instance())
    }

    fn fresh(filter: &str) -> bool {
        Filter::parse(filter, &vnf_instance_schema()).unwrap().matches(&not_instantiated_vnf_instance())
    }

    fn op(filter: &str) -> bool {
        Filter::parse(filter, &vnf_lcm_op_occ_schema()).unwrap().matches(&completed_lcm_op_occ())
    }

    /// The error against the VnfInstance schema, or against the VnfLcmOpOcc schema for
    /// attributes only an operation occurrence has.
    fn err(filter: &str) -> Sol013Error {
        match Filter::parse(filter, &vnf_instance_schema()) {
            Err(Sol013Error::InvalidAttrName(name)) => match Filter::parse(filter, &vnf_lcm_op_occ_schema()) {
                Err(Sol013Error::InvalidAttrName(_)) => Sol013Error::InvalidAttrName(name),
                Err(other) => other,
                Ok(_) => panic!("{filter} parsed"),
            },
            Err(other) => other,
            Ok(_) => panic!("{filter} parsed"),
        }
    }

    #[test]
    fn parses_operators_paths_and_values() {
        let filter = Filter::parse(
            "(in,instantiationState,INSTANTIATED,NOT_INSTANTIATED);(neq,vnfdId,x)",
            &vnf_instance_schema(),
        )
        .unwrap();
        let [first, second] = filter.exprs() else { panic!("two expressions") };
        assert_eq!(first.op(), FilterOp::In);
        assert_eq!(first.attr().as_str(), "instantiationState");
        assert_eq!(first.kind(), &AttrKind::String);
        assert_eq!(
            first.values(),
            [TypedValue::Text("INSTANTIATED".into()), TypedValue::Text("NOT_INSTANTIATED".into())]
        );
        assert_eq!(second.op(), FilterOp::Neq);
        for name in ["eq", "neq", "gt", "gte", "lt", "lte", "in", "nin", "cont", "ncont"] {
            let op = FilterOp::parse(name).unwrap();
            assert_eq!(op.as_str(), name);
            assert_eq!(op.single_value(), !["in", "nin", "cont", "ncont"].contains(&name));
            assert_eq!(op.is_negated(), ["neq", "nin", "ncont"].contains(&name));
        }
        assert_eq!(FilterOp::parse("EQ"), None);
    }

    #[test]
    fn escaped_attribute_names_are_decoded() {
        let filter = Filter::parse("(eq,~01/c~1~a/~be,10)", &json!({})).unwrap();
        assert_eq!(
            filter.exprs()[0].attr().segments(),
            [PathSegment::Name("~1".into()), PathSegment::Name("c/,".into()), PathSegment::Name("@e".into())]
        );
        assert!(filter.matches(&json!({"~1": {"c/,": {"@e": 10}}})));
        assert!(!filter.matches(&json!({"~1": {"c/,": {"@e": 11}}})));
        assert!(!filter.matches(&json!({"/": {"c/,": {"@e": 10}}})));
    }

    #[test]
    fn quoted_values_may_hold_commas_parentheses_semicolons_and_quotes() {
        assert!(inst("(eq,vnfInstanceDescription,'edge router, it''s the primary')"));
        assert!(inst("(cont,vnfInstanceDescription,'router, it''s')"));
        assert!(inst("(in,vnfInstanceName,'a)b;c','vnf-edge-01')"));
        assert!(!inst("(eq,vnfInstanceDescription,'')"));
        let filter = Filter::parse("(in,id,'','''',',(x)')", &vnf_instance_schema()).unwrap();
        assert_eq!(
            filter.exprs()[0].values(),
            [TypedValue::Text(String::new()), TypedValue::Text("'".into()), TypedValue::Text(",(x)".into())]
        );
        // Unquoted values may hold `;` and `(`: only `'`, `,` and `)` end them.
        let filter = Filter::parse("(eq,id,a;b(c)", &vnf_instance_schema()).unwrap();
        assert_eq!(filter.exprs()[0].values(), [TypedValue::Text("a;b(c".into())]);
    }

    #[test]
    fn semicolon_joins_with_and() {
        assert!(inst("(eq,instantiationState,INSTANTIATED);(eq,vnfProvider,Company)"));
        assert!(!inst("(eq,instantiationState,INSTANTIATED);(eq,vnfProvider,Other)"));
        assert!(!inst("(eq,instantiationState,NOT_INSTANTIATED);(eq,vnfProvider,Company)"));
        let three =
            "(eq,vnfProvider,Company);(cont,vnfInstanceName,edge);(gte,instantiatedVnfInfo/scaleStatus/scaleLevel,2)";
        assert!(inst(three));
    }

    /// The filter of a raw query string, decoded as `ListQuery::parse` does it (not called
    /// here: `query` imports this module).
    fn from_query(raw: &str, schema: &Value) -> Filter {
        let pairs = parse_query(raw).unwrap();
        Filter::parse(single_param(&pairs, FILTER).unwrap().flatten().unwrap(), schema).unwrap()
    }

    #[test]
    fn percent_encoded_filters_as_python_tackerclient_sends_them() {
        let filter = from_query("filter=%28eq%2CoperationState%2CCOMPLETED%29", &vnf_lcm_op_occ_schema());
        assert!(filter.matches(&completed_lcm_op_occ()));
        let filter = from_query("filter=%28eq%2Cmetadata%2Ftenant%2Cteam+a%29", &vnf_instance_schema());
        assert!(filter.matches(&instantiated_vnf_instance()));
        let filter = from_query(
            "filter=(gt,startTime,2026-11-22T10:29:59%2B09:00);(eq,isAutomaticInvocation,false)",
            &vnf_lcm_op_occ_schema(),
        );
        assert!(filter.matches(&completed_lcm_op_occ()));
    }

    #[test]
    fn syntax_errors_use_tackers_texts() {
        for filter in
            ["", "eq,id,a", "(eq,id,a", "(eq,id)", "(EQ,id,a)", "(,id,a)", "(eq,,a)", "(eq,id,a);", "((eq,id,a))"]
        {
            let e = err(filter);
            assert_eq!(e, Sol013Error::FilterParse, "{filter}");
            assert_eq!(e.to_string(), "filter parse error");
        }
        for filter in ["(eq,id,a)(eq,id,b)", "(eq,id,a) ", "(eq,id,a),(eq,id,b)", "(eq,id,'a')x", "(eq,id,'a')'"] {
            let e = err(filter);
            assert_eq!(e, Sol013Error::FilterSemicolonExpected, "{filter}");
            assert_eq!(e.to_string(), "filter parse error. semicolon expected.");
        }
        for filter in ["(eq,id,)", "(eq,id,a'b)", "(eq,id,'abc)", "(eq,id,'a'b)", "(in,id,a,,b)", "(eq,id,'a''"] {
            let e = err(filter);
            assert_eq!(e, Sol013Error::ValueParse, "{filter}");
            assert_eq!(e.to_string(), "value parse error");
        }
    }

    #[test]
    fn operator_errors_use_tackers_texts() {
        assert_eq!(err("(like,id,a)").to_string(), "Invalid op like");
        assert_eq!(err("(eq,id,a,b)").to_string(), "Only one value is allowed for op eq");
        for name in ["neq", "gt", "gte", "lt", "lte"] {
            assert_eq!(err(&format!("({name},id,a,b)")), Sol013Error::OnlyOneValue(name.into()));
        }
        for name in ["in", "nin", "cont", "ncont"] {
            assert!(Filter::parse(&format!("({name},id,a,b,c)"), &vnf_instance_schema()).is_ok());
        }
    }

    #[test]
    fn unknown_attributes_are_a_400_naming_them() {
        let e = err("(eq,vnfInstanceNam,x)");
        assert_eq!(e, Sol013Error::InvalidAttrName("vnfInstanceNam".into()));
        assert_eq!(e.to_string(), "AttrName vnfInstanceNam is invalid");
        let problem = e.to_problem_details();
        assert_eq!((problem.status, problem.title.as_deref()), (400, Some("Bad Request")));
        assert_eq!(problem.detail, "AttrName vnfInstanceNam is invalid");
        for attr in [
            "instantiatedVnfInfo/nope",
            "vnfdId/x",
            "a//b",
            "/id",
            "vimConnectionInfo/@key/x",
            "instantiatedVnfInfo/@key",
        ] {
            assert_eq!(err(&format!("(eq,{attr},x)")), Sol013Error::InvalidAttrName(attr.into()), "{attr}");
        }
    }

    #[test]
    fn structured_attributes_cannot_be_compared() {
        for attr in ["instantiatedVnfInfo", "metadata", "vimConnectionInfo", "instantiatedVnfInfo/scaleStatus"] {
            let e = err(&format!("(eq,{attr},x)"));
            assert_eq!(e, Sol013Error::NotFilterable(attr.into()));
            assert_eq!(
                e.to_string(),
                format!("AttrName {attr} is invalid: it is a structured attribute, filter on one of its members")
            );
        }
    }

    #[test]
    fn values_must_fit_the_attribute_type() {
        let e = err("(eq,isAutomaticInvocation,yes)");
        assert_eq!(e, Sol013Error::InvalidBoolean { attr: "isAutomaticInvocation".into(), value: "yes".into() });
        assert_eq!(
            e.to_string(),
            "invalid value for boolean: 'yes' (attribute isAutomaticInvocation, expected true or false)"
        );
        assert!(matches!(err("(in,isCancelPending,false,True)"), Sol013Error::InvalidBoolean { .. }));
        let e = err("(gt,startTime,yesterday)");
        assert_eq!(e.to_string(), "invalid value for date-time: 'yesterday' (attribute startTime)");
        assert!(matches!(err("(eq,startTime,2026-11-22)"), Sol013Error::InvalidValue { expected: "date-time", .. }));
        let e = err("(eq,instantiatedVnfInfo/scaleStatus/scaleLevel,two)");
        assert_eq!(
            e.to_string(),
            "invalid value for integer: 'two' (attribute instantiatedVnfInfo/scaleStatus/scaleLevel)"
        );
        for bad in ["NaN", "inf", "1,5", "0x10", ""] {
            let filter = format!("(in,error/status,400,'{bad}')");
            assert!(matches!(err(&filter), Sol013Error::InvalidValue { expected: "integer", .. }), "{bad}");
        }
    }

    #[test]
    fn operators_must_fit_the_attribute_type() {
        let e = err("(cont,instantiatedVnfInfo/scaleStatus/scaleLevel,1)");
        assert_eq!(
            e.to_string(),
            "Invalid op cont for attribute instantiatedVnfInfo/scaleStatus/scaleLevel of type integer"
        );
        assert!(matches!(err("(gt,isAutomaticInvocation,true)"), Sol013Error::OpNotApplicable { kind: "boolean", .. }));
        assert!(matches!(err("(ncont,isCancelPending,true)"), Sol013Error::OpNotApplicable { .. }));
        assert!(matches!(err("(cont,startTime,2026)"), Sol013Error::OpNotApplicable { kind: "date-time", .. }));
    }

    #[test]
    fn string_operators() {
        assert!(inst("(eq,vnfInstanceName,vnf-edge-01)"));
        assert!(!inst("(eq,vnfInstanceName,VNF-EDGE-01)"));
        assert!(inst("(neq,vnfInstanceName,other)"));
        assert!(!inst("(neq,vnfInstanceName,vnf-edge-01)"));
        assert!(inst("(gt,vnfInstanceName,vnf-edge-00)"));
        assert!(!inst("(gt,vnfInstanceName,vnf-edge-01)"));
        assert!(inst("(gte,vnfInstanceName,vnf-edge-01)"));
        assert!(inst("(lt,vnfInstanceName,vnf-edge-1)"));
        assert!(!inst("(lt,vnfInstanceName,vnf-edge-01)"));
        assert!(inst("(lte,vnfInstanceName,vnf-edge-01)"));
        assert!(!inst("(lte,vnfInstanceName,vnf-edge-00)"));
        assert!(inst("(in,instantiationState,NOT_INSTANTIATED,INSTANTIATED)"));
        assert!(!inst("(in,instantiationState,NOT_INSTANTIATED)"));
        assert!(inst("(nin,instantiationState,NOT_INSTANTIATED)"));
        assert!(!inst("(nin,instantiationState,NOT_INSTANTIATED,INSTANTIATED)"));
        assert!(inst("(cont,vnfInstanceName,edge)"));
        assert!(inst("(cont,vnfInstanceName,core,edge)"));
        assert!(!inst("(cont,vnfInstanceName,EDGE)"));
        assert!(inst("(ncont,vnfInstanceName,core,ran)"));
        assert!(!inst("(ncont,vnfInstanceName,core,edge)"));
    }

    #[test]
    fn number_operators_compare_numerically() {
        // scaleStatus levels are [2, 0]: an expression matches when any element does.
        let level = "instantiatedVnfInfo/scaleStatus/scaleLevel";
        assert!(inst(&format!("(eq,{level},2)")));
        assert!(inst(&format!("(eq,{level},0)")));
        assert!(!inst(&format!("(eq,{level},1)")));
        assert!(inst(&format!("(gt,{level},1)")));
        assert!(!inst(&format!("(gt,{level},2)")));
        assert!(inst(&format!("(gte,{level},2)")));
        assert!(inst(&format!("(lt,{level},1)")));
        assert!(!inst(&format!("(lt,{level},0)")));
        assert!(inst(&format!("(lte,{level},0)")));
        assert!(inst(&format!("(in,{level},7,2)")));
        assert!(!inst(&format!("(in,{level},7,8)")));
        assert!(inst(&format!("(nin,{level},7,8)")));
        // Not "some element differs": no element may equal a value.
        assert!(!inst(&format!("(nin,{level},0)")));
        assert!(!inst(&format!("(neq,{level},2)")));
        assert!(inst(&format!("(neq,{level},5)")));
        // Numeric, not textual: 10 > 9 although "10" < "9".
        assert!(inst("(lt,instantiatedVnfInfo/maxScaleLevels/scaleLevel,10)"));
        assert!(inst("(gt,instantiatedVnfInfo/maxScaleLevels/scaleLevel,4.5)"));
        assert!(inst("(eq,instantiatedVnfInfo/maxScaleLevels/scaleLevel,5.0)"));
        assert!(inst("(gt,instantiatedVnfInfo/maxScaleLevels/scaleLevel,-1e3)"));
    }

    #[test]
    fn boolean_operators() {
        assert!(op("(eq,isAutomaticInvocation,false)"));
        assert!(!op("(eq,isAutomaticInvocation,true)"));
        assert!(op("(neq,isAutomaticInvocation,true)"));
        assert!(!op("(neq,isCancelPending,false)"));
        assert!(op("(in,isCancelPending,true,false)"));
        assert!(op("(nin,isCancelPending,true)"));
        assert!(!op("(nin,isCancelPending,false)"));
    }

    #[test]
    fn date_time_operators_compare_instants() {
        // startTime is 2026-11-22T01:30:00Z.
        assert!(op("(eq,startTime,2026-11-22T01:30:00Z)"));
        assert!(op("(eq,startTime,2026-11-22T10:30:00+09:00)"));
        assert!(op("(eq,startTime,2026-11-22T01:30:00.000000Z)"));
        assert!(op("(eq,startTime,2026-11-22T01:30:00)"));
        assert!(!op("(neq,startTime,2026-11-22T01:30:00Z)"));
        assert!(op("(neq,startTime,2026-11-22T01:30:01Z)"));
        assert!(op("(gt,startTime,2026-11-22T01:29:59.999999Z)"));
        assert!(!op("(gt,startTime,2026-11-22T01:30:00Z)"));
        assert!(op("(gte,startTime,2026-11-22T01:30:00Z)"));
        assert!(op("(lt,startTime,2026-11-22T02:00:00+00:20)"));
        assert!(!op("(lt,startTime,2026-11-22T02:00:00+00:30)"));
        assert!(!op("(lt,startTime,2026-11-22T01:30:00Z)"));
        assert!(op("(lte,startTime,2026-11-22T01:30:00Z)"));
        assert!(op("(in,startTime,2020-01-01T00:00:00Z,2026-11-22T01:30:00Z)"));
        assert!(op("(nin,startTime,2020-01-01T00:00:00Z)"));
        // Sub-second precision counts.
        assert!(op("(gt,stateEnteredTime,2026-11-22T01:34:40.123455Z)"));
        assert!(!op("(gt,stateEnteredTime,2026-11-22T01:34:40.123456Z)"));
        // A resource whose date-time cannot be read matches no comparison.
        let mut broken = completed_lcm_op_occ();
        broken["startTime"] = json!("soon");
        let filter = Filter::parse("(lt,startTime,2030-01-01T00:00:00Z)", &vnf_lcm_op_occ_schema()).unwrap();
        assert!(!filter.matches(&broken));
    }

    #[test]
    fn arrays_match_when_any_element_does() {
        let ids = "instantiatedVnfInfo/vnfcResourceInfo/storageResourceIds";
        assert!(inst(&format!("(eq,{ids},vol-2)")));
        assert!(inst(&format!("(cont,{ids},ol-1)")));
        assert!(!inst(&format!("(eq,{ids},vol-3)")));
        assert!(!inst(&format!("(neq,{ids},vol-1)")));
        assert!(inst(&format!("(neq,{ids},vol-3)")));
        assert!(!inst(&format!("(ncont,{ids},vol)")));
        assert!(inst(&format!("(ncont,{ids},disk)")));
        assert!(inst("(eq,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU2)"));
        assert!(inst("(in,metadata/tags,4g,5g)"));
    }

    #[test]
    fn nested_objects_are_reached_with_slashes() {
        assert!(inst("(eq,instantiatedVnfInfo/flavourId,simple)"));
        assert!(inst("(eq,instantiatedVnfInfo/vnfcResourceInfo/computeResource/vimConnectionId,vim1)"));
        assert!(inst("(cont,instantiatedVnfInfo/vnfcResourceInfo/computeResource/vimLevelResourceType,Nova)"));
        assert!(inst(
            "(eq,_links/self/href,http://127.0.0.1:9890/vnflcm/v2/vnf_instances/5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01)"
        ));
        // The completed occurrence has no `error`.
        assert!(!op("(eq,error/status,500)"));
        let mut failed = completed_lcm_op_occ();
        failed["error"] = json!({"status": 500, "detail": "stack create failed"});
        let filter =
            Filter::parse("(eq,error/status,500);(cont,error/detail,stack)", &vnf_lcm_op_occ_schema()).unwrap();
        assert!(filter.matches(&failed));
    }

    #[test]
    fn map_keys_and_map_entries() {
        assert!(inst("(eq,vimConnectionInfo/@key,vim1)"));
        assert!(inst("(eq,vimConnectionInfo/@key,k8s/west)"));
        assert!(inst("(in,vimConnectionInfo/@key,vim9,k8s/west)"));
        assert!(inst("(cont,vimConnectionInfo/@key,k8s)"));
        assert!(!inst("(eq,vimConnectionInfo/@key,vim2)"));
        assert!(!inst("(neq,vimConnectionInfo/@key,vim1)"));
        assert!(inst("(nin,vimConnectionInfo/@key,vim2)"));
        assert!(inst("(eq,vimConnectionInfo/vim1/vimType,ETSINFV.OPENSTACK_KEYSTONE.V_3)"));
        assert!(inst("(eq,vimConnectionInfo/k8s~1west/vimType,kubernetes)"));
        assert!(inst("(eq,vimConnectionInfo/vim1/accessInfo/region,RegionOne)"));
        assert!(inst("(eq,metadata/@key,tenant)"));
        assert!(inst("(eq,instantiatedVnfInfo/vnfcResourceInfo/metadata/@key,zone)"));
    }

    #[test]
    fn missing_or_null_attributes_match_nothing_not_even_negations() {
        for filter in [
            "(eq,instantiatedVnfInfo/flavourId,simple)",
            "(neq,instantiatedVnfInfo/flavourId,simple)",
            "(nin,instantiatedVnfInfo/flavourId,simple)",
            "(ncont,instantiatedVnfInfo/flavourId,x)",
            "(neq,vnfInstanceName,x)",
            "(lt,instantiatedVnfInfo/scaleStatus/scaleLevel,100)",
            "(neq,vimConnectionInfo/@key,x)",
            "(neq,metadata/tenant,x)",
        ] {
            assert!(!fresh(filter), "{filter}");
        }
        assert!(fresh("(eq,instantiationState,NOT_INSTANTIATED)"));
        assert!(!inst("(eq,metadata/notes,x)"));
        assert!(!inst("(neq,metadata/notes,x)"));
        assert!(!inst("(neq,metadata/absent,x)"));
        let empty = json!({"instantiatedVnfInfo": {"scaleStatus": []}});
        let filter = Filter::parse("(nin,instantiatedVnfInfo/scaleStatus/aspectId,a)", &vnf_instance_schema()).unwrap();
        assert!(!filter.matches(&empty));
    }

    #[test]
    fn schema_less_members_are_typed_at_run_time() {
        // metadata: {"tenant": "team a", "priority": 2.5, "replicas": 3, "critical": false, "tags": [...]}
        assert!(inst("(gt,metadata/priority,2)"));
        assert!(inst("(eq,metadata/priority,2.5)"));
        assert!(inst("(eq,metadata/replicas,3)"));
        assert!(inst("(eq,metadata/replicas,3.0)"));
        assert!(inst("(lt,metadata/replicas,10)"));
        assert!(!inst("(eq,metadata/replicas,three)"));
        assert!(inst("(neq,metadata/replicas,three)"));
        assert!(inst("(eq,metadata/critical,false)"));
        assert!(!inst("(eq,metadata/critical,no)"));
        assert!(inst("(neq,metadata/critical,true)"));
        assert!(inst("(eq,metadata/tenant,team a)"));
        assert!(inst("(gt,metadata/tenant,team)"));
        assert!(!inst("(eq,metadata/tenant,3)"));
        assert!(!inst("(cont,metadata/replicas,3)"));
        assert!(inst("(eq,vnfConfigurableProperties/isAutoscaleEnabled,true)"));
        assert!(inst("(eq,extensions/site,tokyo)"));
        let filter = Filter::parse("(eq,metadata/replicas,3)", &vnf_instance_schema()).unwrap();
        assert_eq!(filter.exprs()[0].kind(), &AttrKind::Unknown);
        assert_eq!(filter.exprs()[0].values(), [TypedValue::Text("3".into())]);
    }

    #[test]
    fn an_empty_schema_accepts_any_attribute() {
        let filter =
            Filter::parse("(eq,callbackUri,http://127.0.0.1:1/cb);(eq,filter/operationTypes,SCALE)", &json!({}))
                .unwrap();
        assert!(filter.matches(&json!({
            "callbackUri": "http://127.0.0.1:1/cb",
            "filter": {"operationTypes": ["INSTANTIATE", "SCALE"]}
        })));
    }

    #[test]
    fn top_level_attributes_are_listed_once() {
        let filter = Filter::parse(
            "(eq,metadata/tenant,a);(eq,id,x);(eq,metadata/replicas,1);(eq,vimConnectionInfo/@key,v)",
            &vnf_instance_schema(),
        )
        .unwrap();
        assert_eq!(filter.top_level_attributes(), ["metadata", "id", "vimConnectionInfo"]);
    }

    #[test]
    fn datetime_helpers() {
        let instant = parse_datetime("2026-11-22T10:34:40.5+09:00").unwrap();
        assert_eq!(format_db_datetime(&instant), "2026-11-22T01:34:40.500000Z");
        assert_eq!(format_db_datetime(&parse_datetime("2026-01-02T03:04:05Z").unwrap()), "2026-01-02T03:04:05.000000Z");
        assert_eq!(parse_datetime("2026-11-22T01:34:40.000000"), parse_datetime("2026-11-22T01:34:40Z"));
        assert_eq!(parse_datetime("2026-11-22t01:34:40z"), parse_datetime("2026-11-22T01:34:40Z"));
        for bad in ["", "2026-11-22", "01:34:40", "2026-13-01T00:00:00Z", "yesterday"] {
            assert_eq!(parse_datetime(bad), None, "{bad}");
        }
        // Text order is time order.
        let texts =
            ["2026-11-22T01:34:40Z", "2026-11-22T01:34:40.000001Z", "2026-11-22T01:34:40.5Z", "2026-11-22T01:34:41Z"]
                .map(|t| format_db_datetime(&parse_datetime(t).unwrap()));
        assert!(texts.windows(2).all(|w| w[0] < w[1]), "{texts:?}");
        // Sub-microsecond digits are cut, not rounded; the earliest and latest years a
        // filter can name keep four digits.
        for (text, stored) in [
            ("2026-11-22T01:34:40.9999999Z", "2026-11-22T01:34:40.999999Z"),
            ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"),
            ("9999-12-31T23:59:59.123456789+00:00", "9999-12-31T23:59:59.123456Z"),
        ] {
            assert_eq!(format_db_datetime(&parse_datetime(text).unwrap()), stored, "{text}");
        }
    }

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(like_pattern(r"50%_a\b"), r"%50\%\_a\\b%");
        assert_eq!(like_pattern(""), "%%");
    }

    // --- SQL push-down -------------------------------------------------------------------

    const OP_COLUMNS: [ColumnSpec; 5] = [
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "operationState", column: "operation_state", kind: ColumnKind::Text },
        ColumnSpec { attr: "startTime", column: "start_time", kind: ColumnKind::DateTime },
        ColumnSpec { attr: "isAutomaticInvocation", column: "is_automatic_invocation", kind: ColumnKind::Bool },
        ColumnSpec { attr: "vnfInstanceId", column: "vnf_instance_id", kind: ColumnKind::Text },
    ];

    fn split(filter: &str, schema: &Value, columns: &[ColumnSpec]) -> (Vec<ColumnPredicate>, Option<Filter>) {
        Filter::parse(filter, schema).unwrap().split_for_columns(columns)
    }

    #[test]
    fn simple_expressions_on_columns_are_pushed() {
        let (pushed, residual) = split(
            "(eq,operationState,COMPLETED);(in,id,a,b);(gte,startTime,2026-11-22T10:30:00+09:00);\
             (neq,isAutomaticInvocation,true);(cont,vnfInstanceId,5f9a);(ncont,operationState,FAIL)",
            &vnf_lcm_op_occ_schema(),
            &OP_COLUMNS,
        );
        assert_eq!(residual, None);
        let instant = parse_datetime("2026-11-22T01:30:00Z").unwrap();
        assert_eq!(
            pushed,
            [
                ColumnPredicate {
                    column: "operation_state",
                    op: FilterOp::Eq,
                    values: vec![TypedValue::Text("COMPLETED".into())]
                },
                ColumnPredicate {
                    column: "id",
                    op: FilterOp::In,
                    values: vec![TypedValue::Text("a".into()), TypedValue::Text("b".into())]
                },
                ColumnPredicate {
                    column: "start_time",
                    op: FilterOp::Gte,
                    values: vec![TypedValue::DateTime(instant)]
                },
                ColumnPredicate {
                    column: "is_automatic_invocation",
                    op: FilterOp::Neq,
                    values: vec![TypedValue::Bool(true)]
                },
                ColumnPredicate {
                    column: "vnf_instance_id",
                    op: FilterOp::Cont,
                    values: vec![TypedValue::Text("5f9a".into())]
                },
                ColumnPredicate {
                    column: "operation_state",
                    op: FilterOp::Ncont,
                    values: vec![TypedValue::Text("FAIL".into())]
                },
            ]
        );
    }

    #[test]
    fn everything_else_stays_in_the_residual_filter() {
        let (pushed, residual) = split(
            "(eq,operationState,COMPLETED);(eq,error/detail,x);(eq,operation,SCALE);\
             (gt,startTime,2026-11-22T01:30:00.0000005Z);(lt,startTime,+10000-01-01T00:00:00)",
            &vnf_lcm_op_occ_schema(),
            &OP_COLUMNS,
        );
        assert_eq!(pushed.len(), 1);
        let residual = residual.unwrap();
        let attrs: Vec<&str> = residual.exprs().iter().map(|e| e.attr().as_str()).collect();
        // Nested path, attribute without a column, instants the column text cannot hold
        // exactly (sub-microsecond, five-digit year).
        assert_eq!(attrs, ["error/detail", "operation", "startTime", "startTime"]);
    }

    #[test]
    fn values_that_do_not_fit_the_column_are_not_pushed() {
        let schema = json!({"type": "object", "properties": {
            "count": {"type": "integer"}, "ratio": {"type": "number"}, "name": {"type": "string"},
            "when": {"type": "string", "format": "date-time"}
        }});
        let columns = [
            ColumnSpec { attr: "count", column: "count", kind: ColumnKind::Integer },
            ColumnSpec { attr: "ratio", column: "ratio", kind: ColumnKind::Float },
            ColumnSpec { attr: "name", column: "name", kind: ColumnKind::Integer },
            ColumnSpec { attr: "when", column: "when_text", kind: ColumnKind::Text },
        ];
        let (pushed, residual) = split("(gt,count,3);(lt,ratio,1);(gte,ratio,0.5)", &schema, &columns);
        assert_eq!(residual, None);
        assert_eq!(pushed[0].values, [TypedValue::Integer(3)]);
        assert_eq!(pushed[1].values, [TypedValue::Float(1.0)]);
        assert_eq!(pushed[2].values, [TypedValue::Float(0.5)]);
        let (pushed, residual) = split("(gt,count,2.5);(eq,name,7);(eq,when,2026-01-01T00:00:00Z)", &schema, &columns);
        assert!(pushed.is_empty());
        assert_eq!(residual.unwrap().exprs().len(), 3);
    }

    #[test]
    fn run_time_typed_values_are_pushed_only_when_they_convert() {
        let columns = [
            ColumnSpec { attr: "n", column: "n", kind: ColumnKind::Integer },
            ColumnSpec { attr: "f", column: "f", kind: ColumnKind::Float },
            ColumnSpec { attr: "b", column: "b", kind: ColumnKind::Bool },
            ColumnSpec { attr: "t", column: "t", kind: ColumnKind::DateTime },
            ColumnSpec { attr: "s", column: "s", kind: ColumnKind::Text },
        ];
        let (pushed, residual) =
            split("(eq,n,5);(eq,f,2);(eq,b,true);(eq,t,2026-01-01T09:00:00+09:00);(eq,s,x)", &json!({}), &columns);
        assert_eq!(residual, None);
        let values: Vec<&TypedValue> = pushed.iter().map(|p| &p.values[0]).collect();
        assert_eq!(
            values,
            [
                &TypedValue::Integer(5),
                &TypedValue::Float(2.0),
                &TypedValue::Bool(true),
                &TypedValue::DateTime(parse_datetime("2026-01-01T00:00:00Z").unwrap()),
                &TypedValue::Text("x".into()),
            ]
        );
        let (pushed, residual) =
            split("(eq,n,five);(eq,n,1.5);(eq,b,yes);(gt,b,true);(eq,t,later);(cont,n,5)", &json!({}), &columns);
        assert!(pushed.is_empty());
        assert_eq!(residual.unwrap().exprs().len(), 6);
    }

    /// What a database does with the predicates, NULL (absent) matching nothing.
    fn sql_eval(predicate: &ColumnPredicate, row: &Value) -> bool {
        let spec = OP_COLUMNS.iter().find(|c| c.column == predicate.column).unwrap();
        let cell = &row[spec.attr];
        if cell.is_null() {
            return false;
        }
        let cmp = |v: &TypedValue| match (v, cell) {
            (TypedValue::Text(t), Value::String(s)) => Some(s.as_str().cmp(t.as_str())),
            (TypedValue::Bool(b), Value::Bool(c)) => Some(c.cmp(b)),
            (TypedValue::DateTime(d), Value::String(s)) => {
                Some(format_db_datetime(&parse_datetime(s).unwrap()).cmp(&format_db_datetime(d)))
            }
            _ => None,
        };
        let any = |want: &dyn Fn(Ordering) -> bool| predicate.values.iter().any(|v| cmp(v).is_some_and(want));
        let contains = || {
            predicate
                .values
                .iter()
                .any(|v| matches!(v, TypedValue::Text(t) if cell.as_str().unwrap().contains(t.as_str())))
        };
        match predicate.op {
            FilterOp::Eq | FilterOp::In => any(&|o| o.is_eq()),
            FilterOp::Neq | FilterOp::Nin => !any(&|o| o.is_eq()),
            FilterOp::Gt => any(&|o| o.is_gt()),
            FilterOp::Gte => any(&|o| o.is_ge()),
            FilterOp::Lt => any(&|o| o.is_lt()),
            FilterOp::Lte => any(&|o| o.is_le()),
            FilterOp::Cont => contains(),
            FilterOp::Ncont => !contains(),
        }
    }

    #[test]
    fn pushed_predicates_and_residual_select_what_matches_selects() {
        let mut rows = vec![completed_lcm_op_occ()];
        let mut failed = completed_lcm_op_occ();
        failed["id"] = json!("b");
        failed["operationState"] = json!("FAILED_TEMP");
        failed["startTime"] = json!("2026-11-23T00:00:00.000001Z");
        failed["isAutomaticInvocation"] = json!(true);
        rows.push(failed);
        let mut bare = completed_lcm_op_occ();
        bare["id"] = json!("c");
        bare.as_object_mut().unwrap().shift_remove("startTime");
        bare.as_object_mut().unwrap().shift_remove("operationState");
        rows.push(bare);
        for text in [
            "(eq,operationState,COMPLETED)",
            "(neq,operationState,COMPLETED)",
            "(nin,operationState,COMPLETED,PROCESSING)",
            "(ncont,operationState,FAIL)",
            "(cont,operationState,TEMP)",
            "(gt,startTime,2026-11-22T01:30:00Z)",
            "(lte,startTime,2026-11-23T00:00:00.000001Z)",
            "(eq,isAutomaticInvocation,false);(lt,id,c)",
            "(in,id,a,b,c7b2d9a4-5e6f-4a1b-8c9d-0e1f2a3b4c5d);(neq,startTime,2026-11-22T01:30:00Z)",
            "(gte,id,b);(eq,operation,INSTANTIATE)",
        ] {
            let filter = Filter::parse(text, &vnf_lcm_op_occ_schema()).unwrap();
            let (pushed, residual) = filter.split_for_columns(&OP_COLUMNS);
            for row in &rows {
                let split_says =
                    pushed.iter().all(|p| sql_eval(p, row)) && residual.as_ref().is_none_or(|r| r.matches(row));
                assert_eq!(split_says, filter.matches(row), "{text} on {}", row["id"]);
            }
        }
    }
}
