//! One integration-test binary for the crate: it links once, which matters on a 2-core
//! machine (../shared/STYLE.md §10, "Tests"). Helpers here are test code too, so the
//! workspace's no-unwrap/no-panic lints do not apply.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(any(feature = "openstack", feature = "kubernetes"))]
mod support;

#[cfg(any(feature = "openstack", feature = "kubernetes"))]
mod tls_front;

#[cfg(feature = "openstack")]
mod openstack;

#[cfg(feature = "openstack")]
mod openstack_driver;

#[cfg(feature = "kubernetes")]
mod kubernetes;

#[cfg(feature = "kubernetes")]
mod kubernetes_driver;

#[cfg(feature = "kubernetes")]
mod helm_driver;

mod scripts;
