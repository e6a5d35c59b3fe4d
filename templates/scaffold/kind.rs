//! The `{{ kind }}` kind of `{{ group }}/{{ version }}`, scaffolded by
//! `kube-codegen`. Edit the spec and status, then regenerate the clients and
//! the CRD with `kube-codegen all {{ all_args }}`.

use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A {{ kind }}: what the user asks for in `spec`, what the controller
/// observed in `status`.
#[genclient]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[resource(
    subresource(status),
    printcolumn(name = "Foo", type = "string", json_path = ".spec.foo"),
    printcolumn(name = "Ready", type = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].status"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp")
)]
pub struct {{ kind }} {
    /// `apiVersion` and `kind`.
    #[serde(flatten, default)]
    pub types: TypeMeta,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: {{ kind }}Spec,
    /// The observed state, written by the controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<{{ kind }}Status>,
}

/// The desired state of a {{ kind }}.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct {{ kind }}Spec {
    /// An example field: replace it with the fields of your API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(max_length = 63)]
    pub foo: Option<String>,
}

/// The observed state of a {{ kind }}.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct {{ kind }}Status {
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The latest observations, one per condition type (e.g. `Ready`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[validate(list_type = "map", list_map_keys("type"))]
    pub conditions: Vec<Condition>,
}
