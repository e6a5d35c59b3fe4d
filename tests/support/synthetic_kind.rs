//! The synthetic kind of the benchmarks' API trees (generation speed,
//! macro-mode build, build cost against kube-derive): a status subresource,
//! a printer column, a spec with validations, a map and a list of items.
//! Shared through `#[path]` so that the trees stay the same kind.

#![allow(dead_code)]

/// What varies between the benchmarks' kinds.
pub struct KindShape<'a> {
    /// The `#[genclient]` attribute, e.g. with a version for macro mode.
    pub genclient: &'a str,
    /// The spec embeds Kubernetes' `PodTemplateSpec` (its whole schema in
    /// every CRD).
    pub pod_template: bool,
    /// An enum field in the spec and an optional message in the status.
    pub mode_and_message: bool,
}

impl Default for KindShape<'_> {
    fn default() -> Self {
        Self { genclient: "#[genclient]", pod_template: false, mode_and_message: false }
    }
}

/// The Rust source of kind `name` (its spec, port and status types), for a
/// types file that imports `ApiType`, `genclient`, `ObjectMeta`, `TypeMeta`,
/// `Serialize` and `Deserialize`.
pub fn kind_source(name: &str, shape: &KindShape<'_>) -> String {
    let genclient = shape.genclient;
    let mode_field = if shape.mode_and_message {
        "    /// Mode.\n    #[serde(default)]\n    pub mode: {name}Mode,\n".replace("{name}", name)
    } else {
        String::new()
    };
    let template = if shape.pod_template {
        "    /// The pods to run.\n    pub template: k8s_openapi::api::core::v1::PodTemplateSpec,\n"
    } else {
        ""
    };
    let mode_enum = if shape.mode_and_message {
        format!(
            "\n/// A mode.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub enum {name}Mode {{\n    /// Fast.\n    #[default]\n    Fast,\n    /// Safe.\n    Safe,\n}}\n"
        )
    } else {
        String::new()
    };
    let message = if shape.mode_and_message {
        "    /// Message.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub message: Option<String>,\n"
    } else {
        ""
    };
    format!(
        r#"
/// The {name} kind.
{genclient}
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(subresource(status), printcolumn(name = "Replicas", type = "integer", json_path = ".spec.replicas"))]
pub struct {name} {{
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: {name}Spec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<{name}Status>,
}}

/// Desired state of {name}.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct {name}Spec {{
    /// Replicas.
    #[validate(minimum = 0, maximum = 100)]
    pub replicas: i32,
    /// Image.
    #[validate(min_length = 1, pattern = "^[a-z0-9./:-]+$")]
    pub image: String,
    /// Labels.
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Ports.
    #[serde(default)]
    pub ports: Vec<{name}Port>,
{mode_field}    /// Timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i64>,
{template}}}

/// A port.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct {name}Port {{
    /// Name.
    pub name: String,
    /// Number.
    #[validate(minimum = 1, maximum = 65535)]
    pub port: u16,
}}
{mode_enum}
/// Observed state of {name}.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct {name}Status {{
    /// Ready replicas.
    #[serde(default)]
    pub ready_replicas: i32,
{message}}}
"#
    )
}
