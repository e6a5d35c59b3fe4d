//! `{{ crate_name }}`: the controller of the operator. Its API types are the
//! crate `{{ crate_name }}-api`, their generated clients `{{ crate_name }}-client`.

pub mod controller;
