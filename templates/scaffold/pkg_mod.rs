//! API types and the clients kube-codegen generates for them.

pub mod apis;
// Generated and formatted by kube-codegen; rustfmt leaves it alone so that
// `kube-codegen --verify` and `cargo fmt --check` agree.
#[rustfmt::skip]
pub mod client;
