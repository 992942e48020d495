//! Entity tags (RFC 9110 clause 8.8.3) of the resources clients may change with a
//! precondition: a VNF instance and a VNF package carry a strong `ETag` naming their row
//! version and the negotiated version (each version renders its own representation), and
//! a PATCH with `If-Match` is applied only to the representation it names (else 412).

use actix_web::HttpRequest;
use actix_web::http::header;
use solgate_core::requests::IfMatch;

/// The strong entity-tag of a stored row as rendered for `version`.
pub fn etag(row_version: i64, version: &str) -> String {
    format!("\"{row_version}-{version}\"")
}

/// A digest tag for a representation that has no row version (an immutable subscription).
pub fn digest_etag(body: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body.as_bytes());
    let hex: String = digest.as_ref().iter().take(16).map(|byte| format!("{byte:02x}")).collect();
    format!("\"{hex}\"")
}

/// The request's `If-Match` against `version`'s tags; `None` without the header. Strong
/// comparison: weak tags and tags of another version never match.
pub fn if_match(req: &HttpRequest, version: &str) -> Option<IfMatch> {
    let values: Vec<&str> = req.headers().get_all(header::IF_MATCH).filter_map(|value| value.to_str().ok()).collect();
    if values.is_empty() {
        return None;
    }
    let mut versions = Vec::new();
    for tag in values.iter().flat_map(|value| value.split(',')).map(str::trim) {
        if tag == "*" {
            return Some(IfMatch::Any);
        }
        let Some(opaque) = tag.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) else { continue };
        if let Some((row_version, tagged_version)) = opaque.split_once('-')
            && tagged_version == version
            && let Ok(row_version) = row_version.parse::<i64>()
        {
            versions.push(row_version);
        }
    }
    Some(IfMatch::Versions(versions))
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn if_match_names_row_versions_of_the_negotiated_version() {
        let parse = |value: &str| {
            if_match(&TestRequest::default().insert_header(("If-Match", value)).to_http_request(), "2.0.0")
        };
        assert_eq!(if_match(&TestRequest::default().to_http_request(), "2.0.0"), None);
        assert_eq!(parse("*"), Some(IfMatch::Any));
        assert_eq!(parse(&etag(7, "2.0.0")), Some(IfMatch::Versions(vec![7])));
        assert_eq!(parse("\"3-2.0.0\", \"9-2.0.0\""), Some(IfMatch::Versions(vec![3, 9])));
        assert_eq!(parse("W/\"7-2.0.0\""), Some(IfMatch::Versions(vec![])), "weak tags never match");
        assert_eq!(parse("\"7-2.1.0\""), Some(IfMatch::Versions(vec![])), "another version's representation");
        assert_eq!(parse("\"no-such-etag\""), Some(IfMatch::Versions(vec![])));
        assert!(!parse("\"no-such-etag\"").unwrap().matches(7));
        assert!(parse(&etag(7, "2.0.0")).unwrap().matches(7));
        assert_ne!(digest_etag("{}"), digest_etag("{ }"));
    }
}
