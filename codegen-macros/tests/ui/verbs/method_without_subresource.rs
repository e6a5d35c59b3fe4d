#![allow(unused_imports, dead_code)]
use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A student.
#[genclient(group = "school.example.com", version = "v1", method(name = "get_all_schools", verb = "get"))]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Student {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: StudentSpec,
}

/// What a student is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct StudentSpec {
    /// Name.
    pub name: String,
}

fn main() {}
