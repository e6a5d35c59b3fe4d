//! `{{ crate_name }}`: the API types of the operator, the clients
//! kube-codegen generates for them, and the controller.

#[path = "../pkg/mod.rs"]
pub mod pkg;

pub mod controller;
