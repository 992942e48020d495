//! solgate infra drivers: the interface the conductor calls ([`infra::InfraDriver`]),
//! the local simulated VIM (always built), and clients for OpenStack Heat and Kubernetes
//! (cargo features `openstack`, `kubernetes`).

pub mod local;
mod run;
pub mod script;
pub mod settings;

#[cfg(any(feature = "openstack", feature = "kubernetes"))]
mod http_error;
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
mod secret;
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
mod vim_info;

#[cfg(feature = "openstack")]
pub mod openstack;

#[cfg(feature = "kubernetes")]
pub mod kubernetes;

pub use infra::{
    DeploymentPlan, DriverError, GrantedPlacement, InfraAction, InfraContext, InfraDriver, Inventory, VduTarget,
    VimConnection,
};
pub use local::LocalVim;
pub use settings::{DriverSettings, VimTrust};
/// The interface lives in solgate-model, shared with core; drivers implement it.
pub use solgate_model::infra;
