//! Kubernetes infra-driver client: server-side apply of VNF manifests, delete, scale,
//! pod listing and watch-based waits, over the plain Kubernetes REST API (the calls
//! Tacker's `sol_refactored/infra_drivers/kubernetes` makes through the python client).
//!
//! [`KubernetesDriver`] runs LCM with it.
//!
//! Selected by `vimConnectionInfo.vimType == "ETSINFV.KUBERNETES.V_1"` (legacy `kubernetes`);
//! [`HelmDriver`] drives the same clusters for `ETSINFV.HELM.V_3` (a chart of the package).

mod client;
mod cluster;
mod credentials;
mod driver;
mod error;
mod helm;
mod helm_cli;
mod http;
mod manifest;
mod objects;
mod wait;

pub use client::{DeleteOutcome, KubernetesClient, ObjectList};
pub use cluster::DEF_FILES_PARAM;
pub use credentials::{LEGACY_VIM_TYPE, VIM_TYPE, VimCredentials};
pub use driver::{INSTANCE_LABEL, KubernetesDriver};
pub use error::KubernetesError;
pub use helm::{CHART_PATH_PARAM, HelmDriver, PARAMETERS_PARAM, VALUE_NAMES_PARAM};
pub use helm_cli::{HelmError, HelmSettings};
pub use manifest::{ResourceRef, parse_manifests};
pub use wait::{DeploymentState, PodCondition, WaitOptions, deployment_state};

/// `Result` with this module's error.
pub type Result<T, E = KubernetesError> = std::result::Result<T, E>;
