//! Version identifiers as SOL013 clause 9.1 defines them: `MAJOR.MINOR.PATCH`, decimal,
//! no leading zeros, major >= 1, optionally followed by an implementation suffix
//! `-impl:<org>:<product>:<n>`, which is informative only and stripped before matching.

use std::fmt;
use std::str::FromStr;

/// A parsed `Version` header value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiVersionId {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

/// The header value was not a SOL013 version identifier. Carries the text Tacker
/// shows in its detail (the full value when the suffix is wrong, else the stripped one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Version String {0} is of invalid format. Must be of format Major.Minor.Patch.")]
pub struct VersionParseError(pub String);

impl ApiVersionId {
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Self { major, minor, patch }
    }

    pub fn to_semver(self) -> semver::Version {
        semver::Version::new(self.major, self.minor, self.patch)
    }
}

impl fmt::Display for ApiVersionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for ApiVersionId {
    type Err = VersionParseError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        // semver would read "-impl:..." as a pre-release; SOL013 says it is an
        // implementation tag, so split it off first (exactly one '-' allowed).
        let core = match value.split_once('-') {
            None => value,
            Some((core, suffix)) => {
                if !suffix.starts_with("impl:") || suffix.contains('-') {
                    return Err(VersionParseError(value.to_owned()));
                }
                core
            }
        };
        let invalid = || VersionParseError(core.to_owned());
        let mut parts = core.split('.');
        let (Some(major), Some(minor), Some(patch), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid());
        };
        let number = |text: &str| -> Option<u64> {
            let well_formed = !text.is_empty()
                && text.bytes().all(|b| b.is_ascii_digit())
                && !(text.len() > 1 && text.starts_with('0'));
            if well_formed { text.parse().ok() } else { None }
        };
        let (Some(major), Some(minor), Some(patch)) = (number(major), number(minor), number(patch)) else {
            return Err(invalid());
        };
        if major == 0 {
            return Err(invalid());
        }
        Ok(Self { major, minor, patch })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_versions() {
        assert_eq!("2.0.0".parse(), Ok(ApiVersionId::new(2, 0, 0)));
        assert_eq!("1.3.0".parse(), Ok(ApiVersionId::new(1, 3, 0)));
        assert_eq!("10.20.30".parse(), Ok(ApiVersionId::new(10, 20, 30)));
        assert_eq!("2.0.0-impl:example.com:x:1".parse(), Ok(ApiVersionId::new(2, 0, 0)));
    }

    #[test]
    fn minors_order_numerically() {
        let v = |s: &str| s.parse::<ApiVersionId>().unwrap();
        assert!(v("2.10.0") > v("2.3.0"));
        assert!(v("2.12.0") > v("2.10.0"));
        assert!(v("2.2.0") < v("2.10.0"));
        let mut sorted = [v("2.12.0"), v("2.3.0"), v("2.10.0"), v("2.1.0")];
        sorted.sort();
        assert_eq!(sorted.iter().map(ToString::to_string).collect::<Vec<_>>(), ["2.1.0", "2.3.0", "2.10.0", "2.12.0"]);
    }

    #[test]
    fn rejects_malformed_versions_with_tacker_detail() {
        for (input, shown) in [
            ("abc", "abc"),
            ("2.0", "2.0"),
            ("02.0.0", "02.0.0"),
            ("2.00.0", "2.00.0"),
            ("0.1.2", "0.1.2"),
            ("2.0.0.0", "2.0.0.0"),
            ("", ""),
            (" 2.0.0", " 2.0.0"),
            ("2.0.0-foo", "2.0.0-foo"),
            ("2.0.0-abc:x", "2.0.0-abc:x"),
            ("2.0.0-impl:a-b", "2.0.0-impl:a-b"),
            ("x.0.0-impl:a", "x.0.0"),
            ("+2.0.0", "+2.0.0"),
        ] {
            let err = input.parse::<ApiVersionId>().expect_err(input);
            assert_eq!(err.0, shown, "input {input:?}");
        }
        assert_eq!(
            "abc".parse::<ApiVersionId>().unwrap_err().to_string(),
            "Version String abc is of invalid format. Must be of format Major.Minor.Patch."
        );
    }
}
