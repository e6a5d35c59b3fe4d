//! A kind behind a `cfg` kube-codegen cannot decide is read, and its error
//! keeps the other kinds of the package from being generated; its own macro
//! does not run in this build, so the other kinds say why.
use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

#[genclient(group = "cfg.example.com", version = "v1", no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Widget {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct WidgetSpec {
    pub size: i32,
}

#[cfg(not(debug_assertions))]
#[genclient(group = "cfg.example.com", version = "v1", no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Gadget {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: std::time::Instant,
}

fn main() {
    let _ = Widget::crd();
}
