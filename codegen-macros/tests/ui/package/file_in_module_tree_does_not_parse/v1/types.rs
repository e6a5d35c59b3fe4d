use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

#[genclient(version = "v1", no_status)]
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
