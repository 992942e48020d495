//! solgate's integration tests: the real server on port 0 (real sockets, a temporary
//! data directory and SQLite file), driven over HTTP. One binary for the whole suite,
//! to link once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout, clippy::print_stderr)]

mod helpers;
mod lcm_support;
mod monitoring;
mod processes;
mod recovery;
mod release4;
// The drivers' HTTPS front for recorded VIM exchanges (tacker_samples), not a copy of it.
#[path = "../../drivers/tests/integration/tls_front.rs"]
mod tls_front;

mod api_versions;
mod auth;
mod conformance;
mod fuzz;
mod memory;
mod nfvo;
mod nfvo_notifications;
mod notifications;
mod package_scripts;
mod pkgm_subscriptions;
mod releases;
mod scale_out;
mod secrets_at_rest;
mod sol013_layer;
mod tacker_samples;
mod telemetry;
mod tenancy;
mod tls;
mod vims;
mod vnffm;
mod vnflcm_v1;
mod vnflcm_v2;
mod vnfpkgm;
mod vnfpm;
