//! Transport errors of the remote drivers with their causes.

/// A reqwest error and its source chain (`error sending request ...: client error
/// (Connect): invalid peer certificate: UnknownIssuer`).
pub(crate) fn with_causes(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
