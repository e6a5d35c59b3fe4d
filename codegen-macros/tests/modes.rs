//! The macro and the CLI produce the same CRDs for the same types.
//!
//! Every fixture package of codegen-core (`codegen-core/tests/fixtures`) is
//! generated twice: once by the CLI pipeline (`codegen_core::run`, CRD YAML
//! files) and once in macro mode — the same files with `version = ".."` added
//! to each `#[genclient]` and the CLI's `mod register;` dropped — compiled
//! into a throw-away crate under `#![deny(warnings)]`. That crate's binary
//! compares each kind's `crd()` (typed k8s-openapi value) and `CRD_YAML`
//! (text) with the CLI's YAML; a kind served in two versions is compared
//! after `kube::core::crd::merge_crds`, which is how macro users combine
//! per-version CRDs (versions compared in name order: `merge_crds` puts the
//! storage version first, the CLI sorts by name; the API server does not care).

#[path = "../../tests/support/scratch_crate.rs"]
mod scratch_crate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codegen_core::{GeneratorKind, GroupVersions, Settings};
use scratch_crate::ScratchCrate;

const FIXTURES: &[(&str, &[&str])] = include!("../../codegen-core/tests/fixtures/index.rs");

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Turns a CLI package into a macro-mode one: `version` in every
/// `#[genclient]`, no `mod register;`.
fn to_macro_mode(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            to_macro_mode(&path);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let version = path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let text = text
            .lines()
            .filter(|l| !matches!(l.trim(), "mod register;" | "pub use register::*;"))
            .collect::<Vec<_>>()
            .join("\n")
            .replace("#[genclient(", &format!("#[genclient(version = \"{version}\", "))
            .replace("#[genclient]", &format!("#[genclient(version = \"{version}\")]"));
        std::fs::write(&path, text + "\n").unwrap();
    }
}

#[test]
fn macro_crds_equal_cli_crds() {
    let ws = workspace();
    let scratch = ScratchCrate::new(&ws, "macro-fixtures");
    let krate = scratch.dir.clone();
    let _ = std::fs::remove_dir_all(&krate);
    let src = krate.join("src");
    let mut lib = String::from(
        "//! Fixtures in macro mode, checked against the CLI's CRDs.\n#![deny(warnings)]\n#![allow(missing_docs)]\n\nuse k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;\n\n",
    );
    let mut checks = String::new();
    let mut compared = 0;
    for (name, groups) in FIXTURES {
        let fixture = ws.join("codegen-core/tests/fixtures").join(name);
        // The CLI's CRDs, from a pristine copy.
        let cli = krate.join("cli").join(name);
        copy_dir(&fixture, &cli);
        let mut settings = Settings::new(cli.join("apis"))
            .with_generators([GeneratorKind::Crd])
            .with_crd_dir(cli.join("crd"))
            .with_output_dir(cli.join("client"))
            .with_apis_module(format!("crate::{name}::apis"));
        for g in *groups {
            settings = settings.with_group(GroupVersions::parse(g).unwrap());
        }
        let generation =
            codegen_core::generate(&settings).unwrap_or_else(|d| panic!("{}", codegen_core::diag::render_all(&d)));
        codegen_core::write::apply(&codegen_core::write::plan(&generation.output).unwrap()).unwrap();

        // The same types in macro mode.
        copy_dir(&fixture, &src.join(name));
        to_macro_mode(&src.join(name));
        lib.push_str(&format!("pub mod {name} {{\n    pub mod apis;\n}}\n"));

        // kind → [(version path, storage)] per CRD file.
        let mut crds: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
        for (g, v, k) in generation.model.kinds().filter(|(_, _, k)| !k.skip_crd) {
            let file = format!("{}_{}.yaml", g.name, k.plural);
            let path = format!("crate::{name}::apis::{}::{}::{}", g.package, v.name, k.rust_name);
            crds.entry(file).or_default().push((path, k.storage.is_some()));
        }
        for (file, versions) in crds {
            compared += 1;
            let cli_path = cli.join("crd").join(&file).to_string_lossy().replace('\\', "/");
            if let [(path, _)] = versions.as_slice() {
                checks.push_str(&format!(
                    "    check(\"{name}/{file}\", {path}::crd(), Some({path}::CRD_YAML), include_str!(\"{cli_path}\"))?;\n"
                ));
            } else {
                let list: Vec<String> = versions.iter().map(|(p, _)| format!("{p}::crd()")).collect();
                let storage =
                    versions.iter().find(|(_, s)| *s).map(|(p, _)| p.rsplit("::").nth(1).unwrap().to_string()).unwrap();
                checks.push_str(&format!(
                    "    check(\"{name}/{file}\", kube::core::crd::merge_crds(vec![{}], \"{storage}\").map_err(|e| e.to_string())?, None, include_str!(\"{cli_path}\"))?;\n",
                    list.join(", ")
                ));
            }
        }
    }
    lib.push_str(&format!(
        r#"
fn body(cli: &str) -> &str {{
    // The CLI file is the header (comment lines), then the YAML document.
    cli.find("---\n").map_or(cli, |i| &cli[i..])
}}

fn check(what: &str, mut crd: CustomResourceDefinition, yaml: Option<&str>, cli: &str) -> Result<(), String> {{
    // merge_crds puts the storage version first; the CLI sorts by name.
    crd.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    let expected: CustomResourceDefinition = serde_yaml::from_str(body(cli)).map_err(|e| format!("{{what}}: {{e}}"))?;
    if crd != expected {{
        return Err(format!("{{what}}: crd() differs from the CLI's YAML\nmacro: {{crd:#?}}\ncli: {{expected:#?}}"));
    }}
    if let Some(yaml) = yaml
        && yaml != body(cli)
    {{
        return Err(format!("{{what}}: CRD_YAML differs from the CLI's YAML\nmacro:\n{{yaml}}\ncli:\n{{}}", body(cli)));
    }}
    println!("{{what}}: same");
    Ok(())
}}

/// Compares every kind's CRD with the CLI's.
pub fn check_all() -> Result<(), String> {{
{checks}    Ok(())
}}
"#
    ));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    std::fs::write(
        src.join("main.rs"),
        "fn main() {\n    if let Err(e) = macro_fixtures::check_all() {\n        eprintln!(\"{e}\");\n        std::process::exit(1);\n    }\n}\n",
    )
    .unwrap();
    scratch.write_manifest("serde_yaml = \"0.9\"\n");
    let out = scratch.cargo("run", &["--quiet"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "macro-mode fixtures:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // Every CRD file of every fixture was compared.
    assert_eq!(stdout.lines().filter(|l| l.ends_with(": same")).count(), compared, "{stdout}");
    // Every fixture but `wardle` (served by an aggregated API server) has a CRD.
    assert!(compared >= FIXTURES.len() - 1, "every fixture has a CRD");
}

/// Remapped source paths (`--remap-path-prefix`, for reproducible builds)
/// do not hide the file from macro mode: the compiler still gives the macro
/// the path on disk (`Span::local_file`), so the kind is generated (without
/// it, the macro's error on the kind would fail the build), while the
/// binary's own paths are the remapped ones.
#[test]
fn macro_mode_builds_with_remapped_source_paths() {
    let scratch = ScratchCrate::new(&workspace(), "macro_remapped");
    let src = scratch.dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("main.rs"),
        r#"//! A kind in macro mode.

use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A widget.
#[genclient(group = "example.com", version = "v1", no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Widget {
    /// `apiVersion` and `kind`.
    #[serde(flatten, default)]
    pub types: TypeMeta,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the widget is.
    pub spec: WidgetSpec,
}

/// What the widget is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct WidgetSpec {
    /// Its size.
    pub size: i32,
}

fn main() {
    println!("{} {}", file!(), Widget::CRD_NAME);
}
"#,
    )
    .unwrap();
    scratch.write_manifest("");
    // `cargo rustc` passes the flags to this crate's compilation only; cargo
    // gives rustc the root package's files as `src/..`.
    let remap = format!("--remap-path-prefix={}=/remapped", scratch.dir.display());
    let out = scratch
        .cargo("rustc", &["--quiet", "--bin", "macro_remapped", "--", &remap, "--remap-path-prefix=src=/remapped/src"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let exe = scratch.root.join("target/debug/macro_remapped");
    let printed = std::process::Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&printed.stdout);
    assert_eq!(stdout.trim(), "/remapped/src/main.rs widgets.example.com", "the paths were remapped");
}
