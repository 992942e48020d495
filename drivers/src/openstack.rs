//! OpenStack infra-driver clients: Keystone v3 password authentication and the Heat
//! orchestration v1 API, as Tacker's `sol_refactored/infra_drivers/openstack` uses them
//! (`heat_utils.HeatClient`, `common/http_client.KeystonePasswordAuthHandle`).
//!
//! [`OpenStackDriver`] runs LCM on them; [`NovaClient`] stops and starts servers.
//!
//! Selected by `vimConnectionInfo.vimType == "ETSINFV.OPENSTACK_KEYSTONE.V_3"`.

mod credentials;
mod driver;
mod error;
mod heat;
mod hot;
mod http;
mod inventory;
mod keystone;
mod nova;
mod state;
mod user_data;

pub use credentials::{VIM_TYPE, VimCredentials};
pub use driver::OpenStackDriver;
pub use error::OpenStackError;
pub use heat::{
    CreateStackRequest, HeatClient, Link, Stack, StackRef, StackResource, UpdateStackRequest, WaitOptions, parse_hot,
};
pub use keystone::{AuthSession, CatalogEndpoint, CatalogService, KeystoneClient};
pub use nova::{NovaClient, Server};

/// `Result` with this module's error.
pub type Result<T, E = OpenStackError> = std::result::Result<T, E>;
