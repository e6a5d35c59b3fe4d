//! The API types of `{{ crate_name }}`. The clients kube-codegen generates
//! for them are the crate `{{ crate_name }}-client`.

pub mod apis;
