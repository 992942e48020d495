//! TOSCA `scalar-unit.size` ("512 MB", "1 GiB"), TOSCA simple profile 1.2 clause 3.3.6.4:
//! units are case-insensitive, decimal kB/MB/GB/TB and binary KiB/MiB/GiB/TiB.

pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "kib" => 1 << 10,
        "mb" => 1_000_000,
        "mib" => 1 << 20,
        "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        "tb" => 1_000_000_000_000,
        "tib" => 1 << 40,
        _ => return None,
    };
    let bytes = number * factor as f64;
    // Rejects NaN, negatives and values beyond u64 before the (then lossless enough) cast.
    if !(0.0..1.8e19).contains(&bytes) {
        return None;
    }
    Some(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("0 GB"), Some(0));
        assert_eq!(parse_size("256 MB"), Some(256_000_000));
        assert_eq!(parse_size("1 GiB"), Some(1 << 30));
        assert_eq!(parse_size("12 gb"), Some(12_000_000_000));
        assert_eq!(parse_size("1.5 KiB"), Some(1536));
        assert_eq!(parse_size("3GB"), Some(3_000_000_000));
        assert_eq!(parse_size("42"), Some(42));
        assert_eq!(parse_size("10 parsecs"), None);
        assert_eq!(parse_size("GB"), None);
    }
}
