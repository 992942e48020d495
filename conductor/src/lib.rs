//! solgate's conductor, the worker door onto the domain (`solgate_core`): consumes work
//! messages (AMQP through lapin, or an in-process channel), executes the plans of LCM
//! operations on the infra drivers through the domain's state machine, onboards packages,
//! delivers notifications and recovers the work of conductors that died.

pub mod context;
pub mod lcm;
pub mod metrics;
pub mod nfvo;
pub mod notifier;
pub mod onboarding;
pub mod recovery;
pub mod relay;
pub mod rpc;
pub mod service;
pub mod settings;

pub use context::{ConductorContext, ConductorError, InfraDrivers};
pub use settings::{ConductorSettings, RpcSettings, RpcTransportKind};
