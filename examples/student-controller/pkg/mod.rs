//! The seed's `pkg/`: API types and the generated clients.

pub mod apis;
pub mod client;
