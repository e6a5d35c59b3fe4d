//! User text with quotes, backslashes, `*/`, `#`, `{{`, `{%`, newlines, tabs
//! and non-ASCII in every free-text marker and in doc comments: the CLI's
//! generated code compiles, the CRD YAML parses and gives back each value
//! exactly, and macro mode — where the CRD lands in Rust string literals —
//! gives back the same CRD, as `CRD_YAML` text and as the typed `crd()`.
//! Markers whose values Kubernetes restricts (names, plural, short names)
//! refuse such text with an error instead.

#[path = "../support/scratch_crate.rs"]
mod scratch_crate;

use std::path::Path;

use codegen_core::{GroupVersions, Settings};
use kube_codegen_tests::workspace;
use scratch_crate::ScratchCrate;
use serde_json::Value;

/// One line of hostile text.
const LINE: &str = "say \"hi\" \\ back */ /* # {{ x }} {% y %} ${z} 'q' é 中 🚀";
/// Several lines (`\n`, `\r\n` is not kept by Rust doc comments) and a tab.
const LINES: &str = "first \"line\" \\\nsecond */ {{ line }}\tтретья";

fn lit(s: &str) -> String {
    format!("{s:?}")
}

fn types(genclient: &str) -> String {
    format!(
        r#"use codegen_macros::{{ApiType, genclient}};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{{Deserialize, Serialize}};

/// {line}
#[doc = {lines}]
{genclient}
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(
    subresource(status),
    printcolumn(name = {line_lit}, type = "string", json_path = ".spec.text", description = {lines}),
    annotations({annotation}),
    deprecated = {line_lit}
)]
pub struct Note {{
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: NoteSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NoteStatus>,
}}

/// {line}
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[validate(rule(rule = {rule}, message = {lines}))]
pub struct NoteSpec {{
    /// {line}
    #[validate(pattern = {line_lit}, default = {line_lit})]
    #[serde(default)]
    pub text: Option<String>,
    #[doc = {lines}]
    #[validate(enum_values({line_lit}, "plain"))]
    pub choice: String,
}}

/// Observed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct NoteStatus {{
    /// {line}
    #[serde(default)]
    pub seen: bool,
}}
"#,
        line = LINE,
        line_lit = lit(LINE),
        lines = lit(LINES),
        annotation = lit(&format!("example.com/note={LINE}")),
        rule = lit(&format!("self.choice != {}", lit(LINE))),
    )
}

fn write_package(apis: &Path, genclient: &str, register: bool) {
    let v1 = apis.join("esc/v1");
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::write(v1.join("types.rs"), types(genclient)).unwrap();
    let register = if register { "#[rustfmt::skip]\nmod register;\npub use register::*;\n" } else { "" };
    std::fs::write(
        v1.join("mod.rs"),
        format!("//! esc.example.com/v1\ncodegen_macros::group_name!(\"esc.example.com\");\nmod types;\npub use types::*;\n{register}"),
    )
    .unwrap();
    std::fs::write(apis.join("esc/mod.rs"), "//! esc.example.com\npub mod v1;\n").unwrap();
    std::fs::write(apis.join("mod.rs"), "//! API groups.\npub mod esc;\n").unwrap();
}

/// The values the CRD must carry, each exactly as written.
fn check_crd(crd: &Value) {
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["deprecationWarning"], LINE);
    let column = &version["additionalPrinterColumns"][0];
    assert_eq!(column["name"], LINE);
    assert_eq!(column["description"], LINES);
    assert_eq!(crd["metadata"]["annotations"]["example.com/note"], LINE);
    let schema = &version["schema"]["openAPIV3Schema"];
    assert_eq!(schema["description"], format!("{LINE}\n{LINES}"));
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec["description"], LINE);
    let rule = &spec["x-kubernetes-validations"][0];
    assert_eq!(rule["rule"], format!("self.choice != {}", lit(LINE)));
    assert_eq!(rule["message"], LINES);
    let text = &spec["properties"]["text"];
    assert_eq!(text["description"], LINE);
    assert_eq!(text["pattern"], LINE);
    assert_eq!(text["default"], LINE);
    let choice = &spec["properties"]["choice"];
    assert_eq!(choice["description"], LINES);
    assert_eq!(choice["enum"][0], LINE);
}

fn yaml_body(text: &str) -> &str {
    text.find("---\n").map_or(text, |i| &text[i..])
}

#[test]
fn hostile_text_round_trips_through_the_cli_and_macro_mode() {
    let ws = workspace();
    let scratch = ScratchCrate::new(&ws, "escaping");
    let krate = scratch.dir.clone();
    let _ = std::fs::remove_dir_all(&krate);
    let src = krate.join("src");

    // The CLI: clientset, listers, informers, fake client and CRD.
    write_package(&src.join("cli"), "#[genclient]", true);
    let settings = Settings::new(src.join("cli"))
        .with_output_dir(src.join("client"))
        .with_crd_dir(krate.join("crd"))
        .with_apis_module("crate::cli")
        .with_group(GroupVersions::parse("esc:v1").unwrap());
    if let Err(d) = codegen_core::run(&settings, codegen_core::Mode::Write) {
        panic!("{}", codegen_core::diag::render_all(&d));
    }
    let cli_yaml = std::fs::read_to_string(krate.join("crd/esc.example.com_notes.yaml")).unwrap();
    let cli_crd: Value = serde_yaml::from_str(yaml_body(&cli_yaml)).expect("the CRD is YAML");
    check_crd(&cli_crd);

    // Macro mode, in the same crate; the binary prints both forms of its CRD.
    write_package(&src.join("macro_mode"), "#[genclient(version = \"v1\")]", false);
    std::fs::rename(src.join("macro_mode/mod.rs"), src.join("macro_mode.rs")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "//! Hostile text, compiled.\n#![deny(warnings)]\n#![allow(missing_docs, deprecated)]\n\
         pub mod cli;\n#[rustfmt::skip]\npub mod client;\npub mod macro_mode;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("main.rs"),
        "use escaping::macro_mode::esc::v1::Note;\n\
         fn main() {\n    print!(\"{}\\n====\\n{}\", Note::CRD_YAML, serde_json::to_string(&Note::crd()).unwrap());\n}\n",
    )
    .unwrap();
    scratch.write_manifest("");
    let out = scratch.cargo("run", &["--quiet"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the crate does not build or run:\n{}", String::from_utf8_lossy(&out.stderr));
    let (macro_yaml, macro_json) = stdout.split_once("\n====\n").expect("both forms printed");
    assert_eq!(macro_yaml, yaml_body(&cli_yaml), "macro mode's CRD_YAML is the CLI's YAML");
    let typed: Value = serde_json::from_str(macro_json).unwrap();
    check_crd(&typed);
}

#[test]
fn names_refuse_hostile_text_with_an_error() {
    for marker in ["plural", "singular", "list_kind", "kind"] {
        let dir = tempfile::tempdir().unwrap();
        let apis = dir.path().join("apis");
        write_package(&apis, "#[genclient]", true);
        let path = apis.join("esc/v1/types.rs");
        let text = std::fs::read_to_string(&path).unwrap().replacen(
            "subresource(status),",
            &format!("subresource(status), {marker} = {},", lit(LINE)),
            1,
        );
        std::fs::write(&path, text).unwrap();
        let settings = Settings::new(&apis)
            .with_output_dir(dir.path().join("client"))
            .with_crd_dir(dir.path().join("crd"))
            .with_apis_module("crate::apis")
            .with_group(GroupVersions::parse("esc:v1").unwrap());
        let errors = codegen_core::generate(&settings).expect_err(marker);
        let rendered = codegen_core::diag::render_all(&errors);
        assert!(rendered.contains(marker), "{marker}: {rendered}");
        assert!(rendered.contains("types.rs:"), "{marker}: the error has a location: {rendered}");
    }
}

#[test]
fn an_apis_directory_that_is_no_module_name_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let apis = dir.path().join("my.apis");
    write_package(&apis, "#[genclient]", true);
    let settings = Settings::new(&apis)
        .with_output_dir(dir.path().join("client"))
        .with_group(GroupVersions::parse("esc:v1").unwrap());
    let errors = codegen_core::generate(&settings).expect_err("no module path");
    let rendered = codegen_core::diag::render_all(&errors);
    assert!(rendered.contains("is not a Rust path") && rendered.contains("--apis-module"), "{rendered}");
    assert!(!rendered.contains("this is a bug"), "{rendered}");
}
