//! The Student type (the seed's `types.go`), with a status subresource the
//! controller reports readiness through.

use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A student and the school they attend.
// Go: `// +genclient`; the seed's `+genclient:noStatus` is gone because the
// controller writes `status` through the status subresource.
#[genclient]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[resource(
    short_names("stu"),
    subresource(status),
    printcolumn(name = "School", type = "string", json_path = ".spec.school"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp")
)]
pub struct Student {
    /// `apiVersion` and `kind` (Go's embedded `metav1.TypeMeta`).
    #[serde(flatten, default)]
    pub types: TypeMeta,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: StudentSpec,
    /// The observed state, written by the controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StudentStatus>,
}

/// What a student is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
pub struct StudentSpec {
    /// The student's name.
    pub name: String,
    /// The school the student attends.
    pub school: String,
}

/// What the controller observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StudentStatus {
    /// The `metadata.generation` the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The latest observations, one per condition type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[validate(list_type = "map", list_map_keys("type"))]
    pub conditions: Vec<StudentCondition>,
}

/// One aspect of a Student's state (metav1.Condition's shape).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StudentCondition {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type")]
    #[validate(min_length = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[validate(enum_values("True", "False", "Unknown"))]
    pub status: String,
    /// Machine-readable reason of the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}
