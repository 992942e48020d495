//! The crate's one error type. Every variant is a client mistake in a query string, so all
//! of them answer 400 Bad Request; the `Display` text is the ProblemDetails `detail`.

use crate::problem::ProblemDetails;

/// A query parameter (filter, attribute selector, paging marker) the producer cannot accept.
///
/// The filter texts are Tacker's own sentences (its v2 LCM list views),
/// so clients and tests written against Tacker read the same `detail`. Where solgate is
/// stricter than Tacker (unknown attributes, badly typed values) the text names the culprit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Sol013Error {
    /// The filter does not follow `(op,attr,value[,value...])[;...]`.
    #[error("filter parse error")]
    FilterParse,
    /// Something other than `;` follows a complete simple filter expression.
    #[error("filter parse error. semicolon expected.")]
    FilterSemicolonExpected,
    /// A value is empty, has a stray `'`, or a quoted value is not terminated.
    #[error("value parse error")]
    ValueParse,
    /// The operator is none of eq, neq, gt, gte, lt, lte, in, nin, cont, ncont.
    #[error("Invalid op {0}")]
    InvalidOp(String),
    /// eq, neq, gt, gte, lt or lte with more than one value.
    #[error("Only one value is allowed for op {0}")]
    OnlyOneValue(String),
    /// The attribute path is malformed or names an attribute the resource does not define.
    /// Tacker answers `200 []` for unknown attributes.
    #[error("AttrName {0} is invalid")]
    InvalidAttrName(String),
    /// The attribute exists but is an object or map, which no value can be compared with.
    #[error("AttrName {0} is invalid: it is a structured attribute, filter on one of its members")]
    NotFilterable(String),
    /// A boolean attribute compared with something other than `true` or `false`.
    #[error("invalid value for boolean: '{value}' (attribute {attr}, expected true or false)")]
    InvalidBoolean { attr: String, value: String },
    /// A value that cannot be converted to the attribute's type (date-time, integer, number).
    #[error("invalid value for {expected}: '{value}' (attribute {attr})")]
    InvalidValue { attr: String, value: String, expected: &'static str },
    /// An operator that makes no sense for the attribute's type (`cont` on a number, `gt` on
    /// a boolean). Tacker raises a Python TypeError (500) for these.
    #[error("Invalid op {op} for attribute {attr} of type {kind}")]
    OpNotApplicable { op: String, attr: String, kind: &'static str },
    /// A forbidden combination of all_fields, fields, exclude_fields and exclude_default.
    #[error("Attribute selector expression is invalid.")]
    InvalidSelector,
    /// fields / exclude_fields names an attribute the resource does not define
    /// (Tacker: 500 or unchecked).
    #[error("Attribute selector expression is invalid. Attribute {0} is not defined for this resource.")]
    UnknownSelectorAttr(String),
    /// A selector parameter with a value it does not take (`all_fields=false`, `fields=`).
    #[error("Attribute selector expression is invalid. Parameter {param} does not take the value '{value}'.")]
    InvalidSelectorValue { param: String, value: String },
    /// filter, fields, exclude_fields or nextpage_opaque_marker given twice: which one wins
    /// would be a guess.
    #[error("Query parameter {0} is given more than once.")]
    DuplicateParameter(String),
    /// Percent-decoding produced bytes that are not UTF-8.
    #[error("Query string is not valid UTF-8 after percent-decoding.")]
    QueryEncoding,
    /// A nextpage_opaque_marker this producer did not issue (Tacker: `200 []` on some lists).
    #[error("Paging marker value {0} is invalid.")]
    InvalidMarker(String),
    /// A query larger than `[query]` allows: the limit's setting key and value are named.
    #[error("{what} is {value}, more than the allowed {max} (query.{limit}).")]
    LimitExceeded { what: String, limit: &'static str, value: usize, max: usize },
    /// A NUL character (U+0000) in a query parameter: stored text never holds one.
    #[error("Query parameter {0} contains a NUL character (U+0000), which is not accepted.")]
    NulCharacter(String),
}

impl Sol013Error {
    /// HTTP status for this error: always 400 (SOL013 §7: bad query parameters).
    pub fn status(&self) -> u16 {
        400
    }

    /// The ProblemDetails body to answer with.
    pub fn to_problem_details(&self) -> ProblemDetails {
        ProblemDetails::new(self.status(), self.to_string())
    }
}

impl From<Sol013Error> for ProblemDetails {
    fn from(err: Sol013Error) -> Self {
        err.to_problem_details()
    }
}

impl From<&Sol013Error> for ProblemDetails {
    fn from(err: &Sol013Error) -> Self {
        err.to_problem_details()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_a_400_problem_with_the_text_as_detail() {
        let errors = [
            Sol013Error::FilterParse,
            Sol013Error::InvalidOp("like".into()),
            Sol013Error::InvalidSelector,
            Sol013Error::DuplicateParameter("filter".into()),
            Sol013Error::InvalidMarker("x".into()),
        ];
        for err in errors {
            let body = serde_json::to_value(ProblemDetails::from(&err)).unwrap();
            assert_eq!(body, serde_json::json!({"title": "Bad Request", "status": 400, "detail": err.to_string()}));
            assert_eq!(err.status(), 400);
        }
    }
}
