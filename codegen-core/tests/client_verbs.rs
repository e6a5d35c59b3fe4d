//! Which verbs the generated typed client has, through the whole engine.

use std::path::Path;

use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};

/// Writes the package `apis/<dir>/v1` of API group `group` under `root`,
/// with `types` as its `types.rs`.
fn write_package(root: &Path, dir: &str, group: &str, types: &str) {
    let path = root.join("apis").join(dir).join("v1");
    std::fs::create_dir_all(&path).unwrap();
    let module = format!(
        "codegen_macros::group_name!(\"{group}\");\n\nmod register;\npub use register::*;\nmod types;\npub use types::*;\n"
    );
    std::fs::write(path.join("mod.rs"), module).unwrap();
    std::fs::write(path.join("types.rs"), types).unwrap();
}

/// Settings for the packages under `root`, one `<dir>:v1` per directory.
fn settings(root: &Path, dirs: &[&str]) -> Settings {
    let mut settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_apis_module("crate::apis");
    for dir in dirs {
        settings = settings.with_group(GroupVersions::parse(&format!("{dir}:v1")).unwrap());
    }
    settings
}

/// The generated client of a Widget with `genclient` as its marker, with a
/// status field and the status subresource.
fn client_of(genclient: &str) -> String {
    let root = tempfile::tempdir().unwrap();
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
    write_package(root.path(), "shop", "shop.example.com", &types);
    let settings = settings(root.path(), &["shop"]).with_generators([GeneratorKind::Client]);
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

/// `types.rs` with a bare kind (type meta and metadata) per name.
fn kinds(names: &[&str]) -> String {
    let mut out = "use codegen_macros::{ApiType, genclient};\n\
                   use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
                   use serde::{Deserialize, Serialize};\n"
        .to_string();
    for name in names {
        out.push_str(&format!(
            "\n/// A kind.\n#[genclient]\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
             pub struct {name} {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n}}\n"
        ));
    }
    out
}

/// The rendered errors of generating the packages `dirs` under `root`.
fn errors(root: &Path, dirs: &[&str]) -> String {
    let err = codegen_core::run(&settings(root, dirs), Mode::Write).map(|_| ()).unwrap_err();
    codegen_core::diag::render_all(&err)
}

/// Two group directories whose kinds would get one name in the generic
/// informer and the fake clientset (`example2` and `example_2` are both
/// `Example2`) are an error, not generated code that does not compile.
#[test]
fn kinds_that_would_share_a_generated_name_are_an_error() {
    let root = tempfile::tempdir().unwrap();
    write_package(root.path(), "example2", "a.example.com", &kinds(&["Foo"]));
    write_package(root.path(), "example_2", "b.example.com", &kinds(&["Foo"]));
    let text = errors(root.path(), &["example2", "example_2"]);
    assert!(text.contains("would both be `Example2V1Foo` in the generated code"), "{text}");
    assert!(!root.path().join("client").exists(), "nothing written");
}

/// Kinds `Foo` and `FooFrom` of one version would both get
/// `extract_foo_from`: an error, not generated code that does not compile.
#[test]
fn kinds_whose_extract_functions_clash_are_an_error() {
    let root = tempfile::tempdir().unwrap();
    write_package(root.path(), "shop", "shop.example.com", &kinds(&["Foo", "FooFrom"]));
    let text = errors(root.path(), &["shop"]);
    assert!(text.contains("would both get the apply configuration function `extract_foo_from`"), "{text}");
}
