//! Macro mode shows no warnings (docs/modes.md): a float field, which the
//! CLI warns about (controller-gen refuses floats without
//! `crd:allowDangerousTypes=true`), compiles under `deny(warnings)` and is
//! in the CRD.
#![deny(warnings)]

use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// Something for sale.
#[genclient(group = "shop.example.com", version = "v1", no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Product {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: ProductSpec,
}

/// Product details.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct ProductSpec {
    /// Weight in kilograms.
    pub weight: f64,
}

fn main() {
    let yaml = Product::CRD_YAML;
    assert!(yaml.contains("weight:\n") && yaml.contains("format: double"), "{yaml}");
}
