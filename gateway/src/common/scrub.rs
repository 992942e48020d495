//! Credentials never leave the server: every secret key is removed from what is shown (the
//! rule lives with the secrets, in core).

pub use solgate_core::secrets::scrub;
