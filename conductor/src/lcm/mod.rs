//! VNF LCM in the conductor: claiming operation occurrences and running them through
//! the domain's state machine ([`solgate_core`]) and the infra drivers.

pub mod engine;
pub mod grant;
pub mod scripts;
