//! solgate's conductor: consumes RPCs (AMQP through lapin, or an in-process channel),
//! dispatches them to `VnflcmDriverV1` / `VnflcmDriverV2`, runs the LCM state machine
//! and recovers operations of conductors that died.

pub mod context;
pub mod delivery;
pub mod lcm;
pub mod metrics;
pub mod onboarding;
pub mod recovery;
pub mod relay;
pub mod rpc;
pub mod service;
pub mod settings;

pub use context::{ConductorContext, ConductorError, InfraDrivers};
pub use settings::{ConductorSettings, RpcSettings, RpcTransportKind};
