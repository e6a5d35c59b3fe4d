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

/// Two group directories whose kinds would get one name in the generic
/// informer and the fake clientset (`example2` and `example_2` are both
/// `Example2`) are an error, not generated code that does not compile.
#[test]
fn kinds_that_would_share_a_generated_name_are_an_error() {
    let root = tempfile::tempdir().unwrap();
    for (dir, group) in [("example2", "a.example.com"), ("example_2", "b.example.com")] {
        let path = root.path().join("apis").join(dir).join("v1");
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(
            path.join("mod.rs"),
            format!("codegen_macros::group_name!(\"{group}\");\n\nmod register;\npub use register::*;\nmod types;\npub use types::*;\n"),
        )
        .unwrap();
        std::fs::write(
            path.join("types.rs"),
            "use codegen_macros::{ApiType, genclient};\n\
             use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
             use serde::{Deserialize, Serialize};\n\n\
             /// A foo.\n#[genclient]\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
             pub struct Foo {\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n}\n",
        )
        .unwrap();
    }
    let settings = Settings::new(root.path().join("apis"))
        .with_output_dir(root.path().join("client"))
        .with_crd_dir(root.path().join("crd"))
        .with_apis_module("crate::apis")
        .with_group(GroupVersions::parse("example2:v1").unwrap())
        .with_group(GroupVersions::parse("example_2:v1").unwrap());
    let err = codegen_core::run(&settings, Mode::Write).map(|_| ()).unwrap_err();
    let text = codegen_core::diag::render_all(&err);
    assert!(text.contains("would both be `Example2V1Foo` in the generated code"), "{text}");
    assert!(!root.path().join("client").exists(), "nothing written");
}

/// Kinds `Foo` and `FooFrom` of one version would both get
/// `extract_foo_from`: an error, not generated code that does not compile.
#[test]
fn kinds_whose_extract_functions_clash_are_an_error() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("apis/shop/v1");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(
        path.join("mod.rs"),
        "codegen_macros::group_name!(\"shop.example.com\");\n\nmod register;\npub use register::*;\nmod types;\npub use types::*;\n",
    )
    .unwrap();
    let kind = |name: &str| {
        format!(
            "/// A kind.\n#[genclient]\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
             pub struct {name} {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n}}\n\n"
        )
    };
    std::fs::write(
        path.join("types.rs"),
        format!(
            "use codegen_macros::{{ApiType, genclient}};\n\
             use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
             use serde::{{Deserialize, Serialize}};\n\n{}{}",
            kind("Foo"),
            kind("FooFrom")
        ),
    )
    .unwrap();
    let settings = Settings::new(root.path().join("apis"))
        .with_output_dir(root.path().join("client"))
        .with_crd_dir(root.path().join("crd"))
        .with_apis_module("crate::apis")
        .with_group(GroupVersions::parse("shop:v1").unwrap());
    let err = codegen_core::run(&settings, Mode::Write).map(|_| ()).unwrap_err();
    let text = codegen_core::diag::render_all(&err);
    assert!(text.contains("would both get the apply configuration function `extract_foo_from`"), "{text}");
}
