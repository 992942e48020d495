//! `Accept` negotiation (RFC 9110 clause 12.5.1): does the client accept any of the
//! media types a resource can produce? Handles `*/*`, `type/*`, parameters and q-values;
//! `q=0` means "not acceptable".

/// Returns the first of `producible` (in the server's order of preference) that the
/// `Accept` header allows, or `None`. A missing or empty header accepts anything.
pub fn negotiate<'a>(accept: Option<&str>, producible: &[&'a str]) -> Option<&'a str> {
    let Some(accept) = accept.map(str::trim).filter(|value| !value.is_empty()) else {
        return producible.first().copied();
    };
    let ranges: Vec<MediaRange<'_>> = accept.split(',').filter_map(MediaRange::parse).collect();
    let mut best: Option<(&'a str, f32)> = None;
    for candidate in producible {
        // The most specific matching range decides the candidate's quality.
        let quality = ranges
            .iter()
            .filter(|range| range.matches(candidate))
            .max_by_key(|range| range.specificity())
            .map(|range| range.quality);
        if let Some(quality) = quality.filter(|q| *q > 0.0)
            && best.is_none_or(|(_, q)| quality > q)
        {
            best = Some((candidate, quality));
        }
    }
    best.map(|(candidate, _)| candidate)
}

struct MediaRange<'h> {
    kind: &'h str,
    subtype: &'h str,
    quality: f32,
}

impl<'h> MediaRange<'h> {
    fn parse(text: &'h str) -> Option<Self> {
        let mut parts = text.split(';');
        let (kind, subtype) = parts.next()?.trim().split_once('/')?;
        let (kind, subtype) = (kind.trim(), subtype.trim());
        if kind.is_empty() || subtype.is_empty() {
            return None;
        }
        let mut quality = 1.0;
        for parameter in parts {
            if let Some((name, value)) = parameter.trim().split_once('=')
                && name.trim().eq_ignore_ascii_case("q")
            {
                quality = value.trim().parse::<f32>().ok().filter(|q| (0.0..=1.0).contains(q))?;
            }
        }
        Some(Self { kind, subtype, quality })
    }

    fn matches(&self, media_type: &str) -> bool {
        let Some((kind, subtype)) = media_type.split_once('/') else { return false };
        (self.kind == "*" && self.subtype == "*")
            || (self.kind.eq_ignore_ascii_case(kind)
                && (self.subtype == "*" || self.subtype.eq_ignore_ascii_case(subtype)))
    }

    fn specificity(&self) -> u8 {
        match (self.kind, self.subtype) {
            ("*", _) => 0,
            (_, "*") => 1,
            _ => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::negotiate;

    const JSON: &[&str] = &["application/json"];

    #[test]
    fn wildcards_and_absence_accept_json() {
        for accept in [None, Some(""), Some("*/*"), Some("application/*"), Some("application/json; charset=utf-8")] {
            assert_eq!(negotiate(accept, JSON), Some("application/json"), "{accept:?}");
        }
        assert_eq!(negotiate(Some("text/html, application/xml;q=0.9, */*;q=0.8"), JSON), Some("application/json"));
    }

    #[test]
    fn excluded_types_are_refused() {
        for accept in ["application/xml", "text/plain", "application/json;q=0", "*/*;q=0", "text/*", "garbage"] {
            assert_eq!(negotiate(Some(accept), JSON), None, "{accept}");
        }
        // A specific q=0 beats a wildcard.
        assert_eq!(negotiate(Some("*/*, application/json;q=0"), JSON), None);
    }

    #[test]
    fn picks_preferred_of_several() {
        let vnfd = &["text/plain", "application/zip"];
        assert_eq!(negotiate(Some("application/zip"), vnfd), Some("application/zip"));
        assert_eq!(negotiate(Some("text/plain,application/zip"), vnfd), Some("text/plain"));
        assert_eq!(negotiate(Some("text/plain;q=0.5,application/zip"), vnfd), Some("application/zip"));
    }
}
