//! Macro mode with Kubernetes' own types inside a kind, imported through a
//! rename and a glob: the CRD has their full schemas.
use codegen_macros::{ApiType, genclient};
use k8s_openapi::api::core::v1 as corev1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::*;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A rollout.
#[genclient(group = "workloads.example.com", version = "v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(
    subresource(status),
    printcolumn(name = "Ready", type = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].status")
)]
pub struct Rollout {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: RolloutSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RolloutStatus>,
}

/// The desired state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct RolloutSpec {
    /// The pods this rollout manages.
    pub selector: LabelSelector,
    /// The pods to create.
    pub template: corev1::PodTemplateSpec,
}

/// The observed state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct RolloutStatus {
    /// The latest observations.
    #[serde(default)]
    #[validate(list_type = "map", list_map_keys("type"))]
    pub conditions: Vec<Condition>,
}

fn main() {
    let crd = Rollout::crd();
    let version = &crd.spec.versions[0];
    let schema = version.schema.as_ref().unwrap().open_api_v3_schema.as_ref().unwrap();
    let spec = &schema.properties.as_ref().unwrap()["spec"];
    let template = &spec.properties.as_ref().unwrap()["template"];
    let pod = &template.properties.as_ref().unwrap()["spec"];
    let containers = &pod.properties.as_ref().unwrap()["containers"];
    assert_eq!(containers.x_kubernetes_list_type.as_deref(), Some("map"));
    assert_eq!(pod.required.as_deref(), Some(&["containers".to_string()][..]));
    let status = &schema.properties.as_ref().unwrap()["status"];
    let condition = status.properties.as_ref().unwrap()["conditions"].items.as_ref().unwrap();
    let condition = match condition {
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(s) => s,
        _ => panic!("items is one schema"),
    };
    assert_eq!(condition.properties.as_ref().unwrap()["message"].max_length, Some(32768));
    assert_eq!(
        version.additional_printer_columns.as_ref().unwrap()[0].json_path,
        ".status.conditions[?(@.type==\"Ready\")].status"
    );
}
