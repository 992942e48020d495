//! Paging of large query results (SOL013 clause 5.4, alternative 2): an opaque
//! `nextpage_opaque_marker` and a `Link: <...>; rel="next"` header.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::{Deserialize, Serialize};

use crate::error::Sol013Error;
use crate::params::{NEXTPAGE_OPAQUE_MARKER, QueryPair, canonical_key};

/// Markers longer than this were not produced by [`PageMarker::encode`] for any sane id.
const MAX_MARKER_LEN: usize = 2048;

/// Where the next page starts, and the selector flags a client may lose between pages.
///
/// python-tackerclient re-issues the next page from the `Link` query via `parse_qs`, which
/// drops bare keys, so `?all_fields` would silently turn into the default
/// view on page 2; the marker carries those flags instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageMarker {
    /// Sort key (id) of the last item of the previous page: the next page is `id > last_id`
    /// in id order.
    pub last_id: String,
    pub all_fields: bool,
    pub exclude_default: bool,
}

/// Wire form: short keys keep the marker short; absent flags are false.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    id: String,
    #[serde(default, skip_serializing_if = "is_false")]
    af: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    ed: bool,
}

fn is_false(flag: &bool) -> bool {
    !flag
}

impl PageMarker {
    /// A marker without selector flags.
    pub fn new(last_id: impl Into<String>) -> Self {
        Self { last_id: last_id.into(), all_fields: false, exclude_default: false }
    }

    /// URL-safe text (base64url without padding of a small JSON object); it needs no
    /// percent-encoding in a query.
    pub fn encode(&self) -> String {
        let wire = Wire { id: self.last_id.clone(), af: self.all_fields, ed: self.exclude_default };
        // Serialising a struct of a string and two booleans cannot fail.
        let json = serde_json::to_vec(&wire).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// Reads a marker; anything [`PageMarker::encode`] did not produce (other encodings of
    /// the same data included) is 400 "Paging marker value X is invalid." rather than
    /// Tacker's silent `200 []`.
    pub fn decode(text: &str) -> Result<Self, Sol013Error> {
        let invalid = || Sol013Error::InvalidMarker(text.to_owned());
        if text.is_empty() || text.len() > MAX_MARKER_LEN {
            return Err(invalid());
        }
        let json = URL_SAFE_NO_PAD.decode(text).map_err(|_| invalid())?;
        let wire: Wire = serde_json::from_slice(&json).map_err(|_| invalid())?;
        let marker = Self { last_id: wire.id, all_fields: wire.af, exclude_default: wire.ed };
        if marker.last_id.is_empty() || marker.encode() != text {
            return Err(invalid());
        }
        Ok(marker)
    }
}

/// Query components: everything but RFC 3986 unreserved characters is percent-encoded.
const QUERY_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Path: characters that cannot appear literally in a path are encoded; `/` and the
/// sub-delimiters stay.
const PATH: &AsciiSet =
    &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'%').add(b'<').add(b'>').add(b'?').add(b'`').add(b'{').add(b'}');

/// The `Link` header value for the next page: `<{public_base}{path}?{query}>; rel="next"`.
///
/// `public_base` is the configured absolute base URL (`http://host:port`, optionally with a
/// path prefix; a trailing `/` is fine) and `path` the decoded resource path
/// (`/vnflcm/v2/vnf_instances`). The query keeps every parameter of `pairs` in order, bare
/// keys bare, with `nextpage_opaque_marker` replaced in place or appended. One link per
/// header value: python-tackerclient reads `Link` with greedy patterns.
pub fn next_link(public_base: &str, path: &str, pairs: &[QueryPair], marker: &PageMarker) -> String {
    let encoded_marker = marker.encode();
    let mut query: Vec<String> = Vec::with_capacity(pairs.len() + 1);
    let mut replaced = false;
    for (key, value) in pairs {
        if canonical_key(key) == NEXTPAGE_OPAQUE_MARKER {
            if !replaced {
                query.push(format!("{NEXTPAGE_OPAQUE_MARKER}={encoded_marker}"));
                replaced = true;
            }
            continue;
        }
        let key = utf8_percent_encode(key, QUERY_COMPONENT);
        query.push(match value {
            Some(value) => format!("{key}={}", utf8_percent_encode(value, QUERY_COMPONENT)),
            None => key.to_string(),
        });
    }
    if !replaced {
        query.push(format!("{NEXTPAGE_OPAQUE_MARKER}={encoded_marker}"));
    }
    let base = public_base.trim_end_matches('/');
    let path = utf8_percent_encode(path.trim_start_matches('/'), PATH);
    format!("<{base}/{path}?{}>; rel=\"next\"", query.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::parse_query;

    fn pair(key: &str, value: Option<&str>) -> QueryPair {
        (key.to_owned(), value.map(str::to_owned))
    }

    #[test]
    fn marker_round_trips() {
        for marker in [
            PageMarker::new("5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01"),
            PageMarker { last_id: "a/b?c&d=é".into(), all_fields: true, exclude_default: false },
            PageMarker { last_id: "x".into(), all_fields: false, exclude_default: true },
        ] {
            let text = marker.encode();
            assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{text}");
            assert_eq!(PageMarker::decode(&text).unwrap(), marker);
        }
    }

    #[test]
    fn bogus_markers_are_rejected_with_tackers_text() {
        let valid = PageMarker::new("id-1").encode();
        let padded = format!("{}=", URL_SAFE_NO_PAD.encode(br#"{"id":"id-1"}"#));
        let cases = [
            "".to_owned(),
            "abc123".to_owned(),
            "5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01".to_owned(),
            format!("{valid}x"),
            padded,
            // Valid base64 and JSON, but not what encode writes.
            URL_SAFE_NO_PAD.encode(br#"{"id":"id-1","af":false}"#),
            URL_SAFE_NO_PAD.encode(br#"{ "id": "id-1" }"#),
            URL_SAFE_NO_PAD.encode(br#"{"id":"id-1","extra":1}"#),
            URL_SAFE_NO_PAD.encode(br#"{"id":""}"#),
            URL_SAFE_NO_PAD.encode(br#"[1,2]"#),
            "A".repeat(MAX_MARKER_LEN + 1),
        ];
        for text in cases {
            let err = PageMarker::decode(&text).unwrap_err();
            assert_eq!(err, Sol013Error::InvalidMarker(text.clone()));
            assert_eq!(err.to_string(), format!("Paging marker value {text} is invalid."));
        }
    }

    #[test]
    fn next_link_appends_the_marker_and_encodes_the_query() {
        let pairs = parse_query("filter=%28eq%2CvnfInstanceName%2Cvnf+edge%29&all_fields").unwrap();
        let marker = PageMarker::new("id-1");
        let link = next_link("http://127.0.0.1:9890", "/vnflcm/v2/vnf_instances", &pairs, &marker);
        assert_eq!(
            link,
            format!(
                "<http://127.0.0.1:9890/vnflcm/v2/vnf_instances?filter=%28eq%2CvnfInstanceName%2Cvnf%20edge%29\
                 &all_fields&nextpage_opaque_marker={}>; rel=\"next\"",
                marker.encode()
            )
        );
    }

    #[test]
    fn next_link_replaces_the_previous_marker_in_place() {
        let old = PageMarker::new("id-1").encode();
        let pairs = parse_query(&format!("exclude_default&nextpage_opaque_marker={old}&fields=metadata")).unwrap();
        let new = PageMarker::new("id-2");
        let link = next_link("http://h:1/", "vnflcm/v2/vnf_instances", &pairs, &new);
        assert_eq!(
            link,
            format!(
                "<http://h:1/vnflcm/v2/vnf_instances?exclude_default&nextpage_opaque_marker={}&fields=metadata>; rel=\"next\"",
                new.encode()
            )
        );
        assert!(!link.contains(&old));
    }

    #[test]
    fn next_link_without_parameters_and_with_a_base_path() {
        let marker = PageMarker::new("id-9");
        let link = next_link("https://gw.example/nfv/", "/vnflcm/v1/vnf_lcm_op_occs", &[], &marker);
        assert_eq!(
            link,
            format!(
                "<https://gw.example/nfv/vnflcm/v1/vnf_lcm_op_occs?nextpage_opaque_marker={}>; rel=\"next\"",
                marker.encode()
            )
        );
    }

    #[test]
    fn next_link_query_decodes_back_to_the_same_parameters() {
        let pairs = vec![
            pair("filter", Some("(cont,vnfInstanceName,'a&b=c, d''s #1')")),
            pair("fields", Some("instantiatedVnfInfo/flavourId,metadata")),
            pair("weird key+", Some("100%")),
            pair("exclude_default", None),
        ];
        let marker = PageMarker { last_id: "id-1".into(), all_fields: false, exclude_default: true };
        let link = next_link("http://h", "/vnflcm/v2/vnf_instances", &pairs, &marker);
        let query =
            link.strip_prefix("<http://h/vnflcm/v2/vnf_instances?").unwrap().strip_suffix(">; rel=\"next\"").unwrap();
        let mut expected = pairs.clone();
        expected.push(pair("nextpage_opaque_marker", Some(&marker.encode())));
        assert_eq!(parse_query(query).unwrap(), expected);
    }

    #[test]
    fn next_link_encodes_unsafe_path_characters() {
        let link = next_link("http://h", "/a b/%", &[], &PageMarker::new("x"));
        assert!(link.starts_with("<http://h/a%20b/%25?"), "{link}");
    }
}
