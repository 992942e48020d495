//! solgate's HTTP door onto the domain (`solgate_core`): the SOL013 layer,
//! `api_versions`, the controllers of the VNF LCM, VNF package management and VNF fault
//! management APIs, and Alertmanager's webhooks.

pub mod alerts;
pub mod api_versions;
pub mod app;
pub mod auth;
pub mod common;
pub mod error;
pub mod health;
pub mod listener;
pub mod metrics;
pub mod nfvo_notifications;
pub mod openapi;
pub mod routes;
pub mod settings;
pub mod sol013;
pub mod state;
pub mod tls;
pub mod vims;
pub mod vnffm;
pub mod vnflcm;
pub mod vnfpkgm;
pub mod vnfpm;

pub use error::{ApiError, ApiResult, ErrorKind};
pub use metrics::Metrics;
pub use settings::HttpSettings;
pub use state::{AppState, ReadinessProbe};
