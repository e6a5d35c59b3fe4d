//! The engine reads the items of modules; a kind declared inside a function
//! is not one of them.
use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

fn main() {
    #[genclient(group = "fn.example.com", version = "v1", no_status)]
    #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
    pub struct Widget {
        #[serde(flatten, default)]
        pub types: TypeMeta,
        #[serde(default)]
        pub metadata: ObjectMeta,
    }
    let _ = Widget::crd();
}
