#![allow(unused_imports, dead_code)]
use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A task.
#[genclient(group = "batch.example.com", version = "v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(mutating_webhook(path = "mutate", name = "mtask", failure_policy = "fail"))]
#[resource(validating_webhook = "x", mutating_webhook(failurePolicy = "Ignore"))]
pub struct Task {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: TaskSpec,
}
/// What to run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct TaskSpec {
    /// Command.
    pub command: String,
}

fn main() {}
