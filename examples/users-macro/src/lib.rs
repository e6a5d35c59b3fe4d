//! The seed's User CRD with validation, in kube-codegen's macro mode
//! ([`api`]) and, for comparison, build.rs mode ([`built`]).
#![deny(missing_docs)]

pub mod api;
pub mod built;
