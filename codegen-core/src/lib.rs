//! The kube-codegen engine: parse annotated Rust API types, check them, build
//! a model, generate the clientset, listers, informers, fake client and CRD
//! YAML, and write the result.
#![deny(missing_docs)]

pub mod diag;
pub mod ident;
pub mod markers;
