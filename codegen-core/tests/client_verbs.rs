//! Which verbs the generated typed client has, through the whole engine.

use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};

/// The generated client of a Widget with `genclient` as its marker, with a
/// status field and the status subresource.
fn client_of(genclient: &str) -> String {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("apis/shop/v1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.rs"),
        "codegen_macros::group_name!(\"shop.example.com\");\n\nmod types;\npub use types::*;\n",
    )
    .unwrap();
    let types = format!(
        "use codegen_macros::{{ApiType, genclient}};\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         /// A widget.\n\
         {genclient}\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         #[resource(subresource(status))]\n\
         pub struct Widget {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: WidgetSpec,\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub status: Option<WidgetStatus>,\n}}\n\n\
         /// Desired.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub struct WidgetSpec {{\n    /// Size.\n    pub size: i64,\n}}\n\n\
         /// Observed.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub struct WidgetStatus {{\n    /// Ready.\n    #[serde(default)]\n    pub ready: bool,\n}}\n"
    );
    std::fs::write(dir.join("types.rs"), types).unwrap();
    let settings = Settings::new(root.path().join("apis"))
        .with_output_dir(root.path().join("client"))
        .with_crd_dir(root.path().join("crd"))
        .with_apis_module("crate::apis")
        .with_generators([GeneratorKind::Client])
        .with_group(GroupVersions::parse("shop:v1").unwrap());
    if let Err(diags) = codegen_core::run(&settings, Mode::Write) {
        panic!("{}", codegen_core::diag::render_all(&diags));
    }
    std::fs::read_to_string(root.path().join("client/clientset/shop/v1/widget.rs")).unwrap()
}

/// `patch_status` goes with `patch` and the status subresource (client-go's
/// `Patch(.., "status")`), not with `update_status`.
#[test]
fn patch_status_goes_with_patch_and_the_status_subresource() {
    let all = client_of("#[genclient]");
    assert!(all.contains("pub fn patch_status") && all.contains("pub fn update_status"));
    let no_update_status = client_of("#[genclient(skip_verbs(update_status))]");
    assert!(no_update_status.contains("pub fn patch_status"), "{no_update_status}");
    assert!(!no_update_status.contains("pub fn update_status"));
    let no_patch = client_of("#[genclient(skip_verbs(patch))]");
    assert!(!no_patch.contains("pub fn patch_status") && !no_patch.contains("pub fn patch<"), "{no_patch}");
    let readonly = client_of("#[genclient(readonly)]");
    assert!(!readonly.contains("pub fn patch_status"));
}
