//! Helpers every API's controllers use: list execution and credential scrubbing.

pub mod cache;
pub mod list;
pub mod scrub;
