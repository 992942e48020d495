//! The SOL013 protocol layer: headers, version negotiation, request bodies.

pub mod accept;
pub mod body;
pub mod layer;
pub mod negotiated;
pub mod request_id;
pub mod responses;
pub mod scope;

pub use body::{JsonBody, OptionalJsonBody};
pub use negotiated::Negotiated;
