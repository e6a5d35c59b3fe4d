#![allow(unused_imports, dead_code)]
use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// Not an API type.
#[derive(ApiType)]
pub union Bits {
    a: u32,
    b: f32,
}

fn main() {}
