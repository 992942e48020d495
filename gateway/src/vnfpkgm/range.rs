//! HTTP `Range` for package and artifact downloads (RFC 9110 clause 14; SOL013: a single
//! byte range). Multi-range requests are refused with 416 rather than answered as
//! `multipart/byteranges`, which no NFV client reads; a malformed header is ignored (the
//! whole file, 200), as RFC 9110 allows.

/// What a GET with this `Range` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// 200 with the whole file.
    Full,
    /// 206 with bytes `start..=end`.
    Partial { start: u64, end: u64 },
    /// 416 with `Content-Range: bytes */size`.
    Unsatisfiable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// `first-last`
    Bounded(u64, u64),
    /// `first-`
    From(u64),
    /// `-suffix`
    Suffix(u64),
}

/// `range`: the `Range` header (None when absent or not ASCII); `if_range`: an `If-Range`
/// header is present; `size`: the file's length.
pub fn select(range: Option<&str>, if_range: bool, size: u64) -> Selection {
    let Some(range) = range else { return Selection::Full };
    // solgate sends no validator (ETag, Last-Modified), so an If-Range can never match: RFC 9110
    // clause 13.1.5 then says to ignore Range and send the whole representation.
    if if_range {
        return Selection::Full;
    }
    let Some((unit, set)) = range.split_once('=') else { return Selection::Full };
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return Selection::Full;
    }
    // `1#range-spec`: list syntax, empty elements allowed.
    let specs: Option<Vec<Spec>> = set.split(',').map(str::trim).filter(|s| !s.is_empty()).map(parse_spec).collect();
    match specs.as_deref() {
        None | Some([]) => Selection::Full,
        Some([spec]) => resolve(*spec, size),
        Some(_) => Selection::Unsatisfiable,
    }
}

fn parse_spec(text: &str) -> Option<Spec> {
    let (first, last) = text.split_once('-')?;
    match (first, last) {
        ("", suffix) => Some(Spec::Suffix(digits(suffix)?)),
        (first, "") => Some(Spec::From(digits(first)?)),
        (first, last) => {
            let (first, last) = (digits(first)?, digits(last)?);
            // last < first makes the spec invalid (RFC 9110 clause 14.1.1): ignored.
            (last >= first).then_some(Spec::Bounded(first, last))
        }
    }
}

fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // More digits than u64 holds: certainly past the end of any file.
    Some(text.parse().unwrap_or(u64::MAX))
}

fn resolve(spec: Spec, size: u64) -> Selection {
    let last = match size.checked_sub(1) {
        Some(last) => last,
        None => return Selection::Unsatisfiable,
    };
    match spec {
        Spec::Bounded(first, _) | Spec::From(first) if first > last => Selection::Unsatisfiable,
        Spec::Bounded(first, end) => Selection::Partial { start: first, end: end.min(last) },
        Spec::From(first) => Selection::Partial { start: first, end: last },
        Spec::Suffix(0) => Selection::Unsatisfiable,
        Spec::Suffix(length) => Selection::Partial { start: size - length.min(size), end: last },
    }
}

#[cfg(test)]
mod tests {
    use super::Selection::{Full, Partial, Unsatisfiable};
    use super::select;

    #[test]
    fn single_ranges() {
        assert_eq!(select(Some("bytes=0-9"), false, 100), Partial { start: 0, end: 9 });
        assert_eq!(select(Some("bytes=90-"), false, 100), Partial { start: 90, end: 99 });
        assert_eq!(select(Some("bytes=-10"), false, 100), Partial { start: 90, end: 99 });
        assert_eq!(select(Some("bytes=-500"), false, 100), Partial { start: 0, end: 99 });
        assert_eq!(select(Some("bytes=50-500"), false, 100), Partial { start: 50, end: 99 });
        assert_eq!(select(Some("Bytes = 5-5"), false, 100), Partial { start: 5, end: 5 });
        assert_eq!(select(Some("bytes=99-99"), false, 100), Partial { start: 99, end: 99 });
    }

    #[test]
    fn unsatisfiable_ranges() {
        assert_eq!(select(Some("bytes=100-"), false, 100), Unsatisfiable);
        assert_eq!(select(Some("bytes=100-200"), false, 100), Unsatisfiable);
        assert_eq!(select(Some("bytes=-0"), false, 100), Unsatisfiable);
        assert_eq!(select(Some("bytes=0-0"), false, 0), Unsatisfiable);
        assert_eq!(select(Some("bytes=99999999999999999999999-"), false, 100), Unsatisfiable);
        assert_eq!(select(Some("bytes=0-1,5-6"), false, 100), Unsatisfiable);
    }

    #[test]
    fn malformed_or_foreign_ranges_are_ignored() {
        for header in ["bytes=9-1", "bytes=a-b", "bytes=", "bytes=--1", "items=0-1", "0-1", "bytes=1", "bytes=0-1,x"] {
            assert_eq!(select(Some(header), false, 100), Full, "{header}");
        }
        assert_eq!(select(None, false, 100), Full);
        assert_eq!(select(Some("bytes=0-9"), true, 100), Full, "If-Range never matches");
    }
}
