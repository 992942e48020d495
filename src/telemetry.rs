//! Logging: tracing with a human or JSON format, filter from `RUST_LOG` or the settings.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::settings::{LogFormat, LogSettings};

/// Installs the global subscriber once. Calling it again (tests) does nothing.
pub fn init_subscriber(settings: &LogSettings) {
    let mut directives = settings.level.clone();
    if !settings.access_log {
        directives.push_str(",solgate::access=off");
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(directives));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr.with_max_level(tracing::Level::TRACE));
    let _ = match settings.format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
