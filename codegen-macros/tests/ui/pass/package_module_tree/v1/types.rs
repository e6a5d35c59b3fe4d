use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

use super::size::Size;

/// A widget.
#[genclient(version = "v1", no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Widget {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

/// The desired state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct WidgetSpec {
    /// How big.
    pub size: Size,
}

/// Never compiled, so never read: its field type does not exist.
#[cfg(any())]
#[derive(Clone, Debug, ApiType)]
pub struct Gadget {
    pub spec: NoSuchType,
}
