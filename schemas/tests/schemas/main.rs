//! Integration tests of solgate-schemas: golden files, the copy-and-extend safety checks, the
//! ETSI bundle check and the client-visible acceptance cases. One binary, to link once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test helpers fail loudly")]

mod acceptance;
mod compatibility;
mod etsi_bundle;
mod etsi_fm;
mod etsi_pm;
mod etsi_v3_7_1;
mod golden;
mod safety;
mod support;
