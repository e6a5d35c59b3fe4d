//! kube-codegen markers as real Rust attributes, and the derives that run the
//! codegen-core engine inline in a user's crate.
#![deny(missing_docs)]
