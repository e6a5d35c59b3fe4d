//! The User API in build.rs mode: the types in `apis/`, the generated
//! clientset, listers and informers from `$OUT_DIR` (not committed).

pub mod apis;

/// The clientset, listers and informers `build.rs` generated.
pub mod client {
    include!(concat!(env!("OUT_DIR"), "/kube-codegen/client.rs"));
}

/// The CRD `build.rs` generated, as the CLI would write it to `config/crd`.
pub const USERS_CRD_YAML: &str = include_str!(concat!(env!("OUT_DIR"), "/kube-codegen/crd/auth.ilinux.io_users.yaml"));
