//! solctl against a real solgate started in-process on port 0: every command for VNF LCM
//! v1 and v2 and for packages, `--wait`, output formats, exit codes, and the auth modes
//! (OAuth 2.0 client credentials and mutual TLS against the real server; Keystone against
//! a stand-in, as solgate's Keystone mode is tested on its own).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout, clippy::print_stderr)]

mod auth;
mod fm;
mod helpers;
mod lcm;
mod output;
mod packages;
mod pm;
mod vims;
