//! The `auth` group.
pub mod v1beta1;
