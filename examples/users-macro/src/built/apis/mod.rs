//! API groups in build.rs mode.
pub mod auth;
