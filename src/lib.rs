//! solgate: an ETSI NFV-SOL multi-version API gateway and VNF manager.
//!
//! This crate is the binary's library: settings, telemetry, the allocator's tuning,
//! start-up (and the release of its pages once serving) and the command line. The parts
//! live in the workspace crates (`solgate-gateway`, `solgate-conductor`, `solgate-db`,
//! `solgate-schemas`, ...).

pub mod allocator;
pub mod cli;
pub mod migrate_v1_to_v2;
pub mod reseal;
pub mod settings;
pub mod startup;
pub mod startup_pages;
pub mod telemetry;

pub use settings::Settings;
pub use startup::{Application, Role};
