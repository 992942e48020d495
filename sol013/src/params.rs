//! The raw query string of a request: decoded key/value pairs and the names of the SOL013
//! parameters. Paging, selectors and [`crate::query::ListQuery`] all build on this, so it
//! depends on none of them.
//!
//! python-tackerclient sends bare flags (`?all_fields&exclude_default`), the
//! key `exclude-fields` with a hyphen, and form-encoded filters (`%28eq%2C...%29`, spaces as
//! `+`); all of these are accepted here.

use percent_encoding::percent_decode_str;

use crate::error::Sol013Error;

/// One query parameter: decoded key, and decoded value or `None` for a bare key (`?all_fields`).
pub type QueryPair = (String, Option<String>);

pub const FILTER: &str = "filter";
pub const FIELDS: &str = "fields";
pub const EXCLUDE_FIELDS: &str = "exclude_fields";
pub const ALL_FIELDS: &str = "all_fields";
pub const EXCLUDE_DEFAULT: &str = "exclude_default";
pub const NEXTPAGE_OPAQUE_MARKER: &str = "nextpage_opaque_marker";
/// Tacker v1 lists: `all_records=yes` turns paging off.
pub const ALL_RECORDS: &str = "all_records";

/// Parameters whose repetition is an error: which occurrence should win is a guess.
const SINGLE_VALUED: [&str; 4] = [FILTER, FIELDS, EXCLUDE_FIELDS, NEXTPAGE_OPAQUE_MARKER];

/// The name solgate uses for a query key: `exclude-fields` (python-tackerclient's
/// `vnflcm op list --exclude-fields`) is `exclude_fields`; everything else is itself.
pub fn canonical_key(key: &str) -> &str {
    match key {
        "exclude-fields" => EXCLUDE_FIELDS,
        other => other,
    }
}

/// Splits a raw query string (with or without the leading `?`) at `&` into decoded pairs
/// in request order, with form semantics (`+` is a space, `%2B` a plus). Keys are
/// canonicalised ([`canonical_key`]); empty segments (`a&&b`) are skipped. `;` is not a
/// separator: it joins filter expressions.
///
/// Errors: a repeated filter, fields, exclude_fields or nextpage_opaque_marker, or a
/// percent-encoding that does not decode to UTF-8.
pub fn parse_query(raw: &str) -> Result<Vec<QueryPair>, Sol013Error> {
    let raw = raw.strip_prefix('?').unwrap_or(raw);
    let mut pairs: Vec<QueryPair> = Vec::new();
    for segment in raw.split('&').filter(|s| !s.is_empty()) {
        let (key, value) = match segment.split_once('=') {
            Some((key, value)) => (key, Some(form_decode(value)?)),
            None => (segment, None),
        };
        let key = canonical_key(&form_decode(key)?).to_owned();
        // One rule for both backends: PostgreSQL text cannot hold NUL, so no query may ask for it.
        if key.contains('\0') || value.as_deref().is_some_and(|value| value.contains('\0')) {
            return Err(Sol013Error::NulCharacter(key.replace('\0', "\\0")));
        }
        if SINGLE_VALUED.contains(&key.as_str()) && pairs.iter().any(|(k, _)| *k == key) {
            return Err(Sol013Error::DuplicateParameter(key));
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

fn form_decode(text: &str) -> Result<String, Sol013Error> {
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8().map(|s| s.into_owned()).map_err(|_| Sol013Error::QueryEncoding)
}

/// The one occurrence of `key` among `pairs` (keys compared after [`canonical_key`]):
/// `None` if absent, `Some(None)` if bare; an error if it occurs twice.
pub fn single_param<'a>(pairs: &'a [QueryPair], key: &str) -> Result<Option<Option<&'a str>>, Sol013Error> {
    let mut found = pairs.iter().filter(|(k, _)| canonical_key(k) == key);
    let first = found.next().map(|(_, value)| value.as_deref());
    if found.next().is_some() {
        return Err(Sol013Error::DuplicateParameter(key.to_owned()));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(key: &str, value: Option<&str>) -> QueryPair {
        (key.to_owned(), value.map(str::to_owned))
    }

    #[test]
    fn splits_and_decodes_with_form_semantics() {
        let pairs = parse_query("?filter=%28eq%2CvnfInstanceName%2Cvnf+edge%29&fields=a%2Cb&x=1%2B1").unwrap();
        assert_eq!(
            pairs,
            [
                pair("filter", Some("(eq,vnfInstanceName,vnf edge)")),
                pair("fields", Some("a,b")),
                pair("x", Some("1+1"))
            ]
        );
    }

    #[test]
    fn bare_keys_are_flags_and_empty_values_are_kept() {
        assert_eq!(
            parse_query("all_fields&filter=&exclude_default").unwrap(),
            [pair("all_fields", None), pair("filter", Some("")), pair("exclude_default", None)]
        );
    }

    #[test]
    fn only_the_first_equals_sign_splits_and_empty_segments_are_skipped() {
        assert_eq!(parse_query("a=b=c&&b").unwrap(), [pair("a", Some("b=c")), pair("b", None)]);
        assert_eq!(parse_query("").unwrap(), []);
        assert_eq!(parse_query("?").unwrap(), []);
    }

    #[test]
    fn semicolons_do_not_split_parameters() {
        assert_eq!(
            parse_query("filter=(eq,id,a);(eq,vnfdId,b)").unwrap(),
            [pair("filter", Some("(eq,id,a);(eq,vnfdId,b)"))]
        );
    }

    #[test]
    fn the_hyphenated_key_is_an_alias() {
        assert_eq!(
            parse_query("exclude-fields=operationParams").unwrap(),
            [pair("exclude_fields", Some("operationParams"))]
        );
        assert_eq!(
            parse_query("exclude-fields=a&exclude_fields=b").unwrap_err(),
            Sol013Error::DuplicateParameter("exclude_fields".into())
        );
    }

    #[test]
    fn repeated_single_valued_parameters_are_rejected_by_name() {
        for key in ["filter", "fields", "exclude_fields", "nextpage_opaque_marker"] {
            let err = parse_query(&format!("{key}=a&{key}=b")).unwrap_err();
            assert_eq!(err, Sol013Error::DuplicateParameter(key.into()));
            assert_eq!(err.to_string(), format!("Query parameter {key} is given more than once."));
            assert_eq!(err.to_problem_details().status, 400);
        }
        // Flags and unknown parameters may repeat.
        assert_eq!(parse_query("all_fields&all_fields&x=1&x=2").unwrap().len(), 4);
    }

    #[test]
    fn invalid_utf8_is_rejected() {
        let err = parse_query("filter=%FF").unwrap_err();
        assert_eq!(err, Sol013Error::QueryEncoding);
        assert_eq!(err.to_string(), "Query string is not valid UTF-8 after percent-decoding.");
    }
}
