//! build.rs mode writes the CLI's code: for every fixture, each file of the
//! CLI's `client/` tree has the same items as the matching inline module of
//! the builder's single `client.rs`, each `register.rs` the same items as
//! `register/<group>/<version>.rs`, and the CRD files are identical.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use codegen_core::Builder;
use quote::ToTokens;

/// Items of a file or module as token strings; submodules by name only.
/// Layout is normalized: prettyplease adds trailing commas where a line
/// wraps, and nesting changes where lines wrap.
fn item_strings(items: &[syn::Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            syn::Item::Mod(m) => format!("mod {}", m.ident),
            other => {
                let mut s: String = other.to_token_stream().to_string().split_whitespace().collect();
                for close in [")", ">", "]", "}"] {
                    s = s.replace(&format!(",{close}"), close);
                }
                s
            }
        })
        .collect()
}

fn walk(prefix: &str, items: &[syn::Item], out: &mut BTreeMap<String, Vec<String>>) {
    out.insert(prefix.to_string(), item_strings(items));
    for i in items {
        if let syn::Item::Mod(syn::ItemMod { ident, content: Some((_, inner)), .. }) = i {
            walk(&format!("{prefix}/{ident}"), inner, out);
        }
    }
}

fn cli_modules(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<String>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            cli_modules(&path, &format!("{prefix}/{name}"), out);
        } else {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let module = if stem == "mod" { prefix.to_string() } else { format!("{prefix}/{stem}") };
            let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
            out.insert(module, item_strings(&file.items));
        }
    }
}

fn fixture_apis(name: &str) -> std::path::PathBuf {
    common::fixtures_dir().join(name).join("apis")
}

#[test]
fn build_rs_output_equals_cli_output() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, groups) in common::FIXTURES {
        let cli_root = tmp.path().join("cli");
        common::generate(&cli_root, name, groups);
        let build_root = tmp.path().join("build").join(name);
        common::copy_dir(&common::fixtures_dir().join(name), &build_root);
        let mut b = Builder::new(build_root.join("apis"))
            .generators("all")
            .apis_module(format!("crate::{name}::apis"))
            .out_dir(tmp.path().join("out").join(name));
        for g in *groups {
            b = b.group_versions(g);
        }
        let out = b.write_to_out_dir().unwrap_or_else(|e| panic!("{e}"));

        // Client tree.
        let single = syn::parse_file(&out.files[&out.dir.join("client.rs")]).unwrap();
        let mut built = BTreeMap::new();
        walk("", &single.items, &mut built);
        let mut cli = BTreeMap::new();
        cli_modules(&cli_root.join(name).join("client"), "", &mut cli);
        assert_eq!(built, cli, "{name}: client tree differs");

        // register.rs and CRDs.
        let mut registers = 0;
        for gv in *groups {
            let (group, versions) = gv.split_once(':').unwrap();
            for v in versions.split(',') {
                let cli_text =
                    std::fs::read_to_string(cli_root.join(name).join("apis").join(group).join(v).join("register.rs"))
                        .unwrap();
                let built_text = &out.files[&out.dir.join("register").join(group).join(format!("{v}.rs"))];
                assert!(!built_text.contains("//!"), "include!-able: no inner doc");
                assert_eq!(
                    item_strings(&syn::parse_file(built_text).unwrap().items),
                    item_strings(&syn::parse_file(&cli_text).unwrap().items),
                    "{name}: register {group}/{v} differs"
                );
                registers += 1;
            }
        }
        assert!(registers > 0);
        let crd_dir = cli_root.join(name).join("crd");
        let mut crds = 0;
        // `wardle` (skip_crd) writes no CRD directory.
        for entry in std::fs::read_dir(&crd_dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            let built = &out.files[&out.dir.join("crd").join(path.file_name().unwrap())];
            assert_eq!(built, &std::fs::read_to_string(&path).unwrap(), "{name}: {} differs", path.display());
            crds += 1;
        }
        assert_eq!(out.files.keys().filter(|p| p.extension().is_some_and(|e| e == "yaml")).count(), crds);
        // Every source file of the apis tree is an input, so cargo reruns when one changes.
        let mut sources = Vec::new();
        let mut stack = vec![fixture_apis(name)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    sources.push(p.strip_prefix(fixture_apis(name)).unwrap().to_path_buf());
                }
            }
        }
        assert!(!sources.is_empty());
        for src in sources {
            assert!(
                out.inputs.iter().any(|p| p.ends_with(&src)),
                "{name}: {} is not an input: {:?}",
                src.display(),
                out.inputs
            );
        }
    }
}

#[test]
fn build_errors_are_rendered_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let v1 = tmp.path().join("apis").join("example").join("v1");
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::write(
        v1.join("mod.rs"),
        "codegen_macros::group_name!(\"example.k8s.io\");\nmod types;\npub use types::*;\n",
    )
    .unwrap();
    std::fs::write(
        v1.join("types.rs"),
        "#[genclient(no_stauts)]\n#[derive(Clone, ApiType)]\npub struct Student {\n    pub metadata: ObjectMeta,\n}\n",
    )
    .unwrap();
    let err = Builder::new(tmp.path().join("apis"))
        .group_versions("example:v1")
        .out_dir(tmp.path().join("out"))
        .render()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("error: unknown `genclient` marker `no_stauts`"), "{text}");
    assert!(text.contains("types.rs:1:13"), "{text}");
    assert!(text.contains("did you mean `no_status`?"), "{text}");
    assert_eq!(format!("{err:?}").trim(), text.trim());
    let err = Builder::new("apis").group_versions("example").render().unwrap_err();
    assert!(err.to_string().contains("is not a `<group>:<versions>` argument"));
}

/// docs/modes.md: build.rs writes everything but the fake clientset unless
/// `.generators("all")` asks for it.
#[test]
fn builder_leaves_the_fake_clientset_out_by_default() {
    use codegen_core::GeneratorKind;
    let default = Builder::new("apis");
    assert!(!default.settings().runs(GeneratorKind::Fake));
    for g in [
        GeneratorKind::Register,
        GeneratorKind::Client,
        GeneratorKind::Lister,
        GeneratorKind::Informer,
        GeneratorKind::Crd,
    ] {
        assert!(default.settings().runs(g), "{g:?}");
    }
    assert!(Builder::new("apis").generators("all").settings().runs(GeneratorKind::Fake));
}

#[test]
fn cli_and_build_rs_reject_macro_mode_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let v1 = tmp.path().join("apis").join("example").join("v1");
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::write(
        v1.join("mod.rs"),
        "codegen_macros::group_name!(\"example.k8s.io\");\nmod types;\npub use types::*;\n",
    )
    .unwrap();
    std::fs::write(
        v1.join("types.rs"),
        "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\n\
         #[genclient(version = \"v1\")]\n#[derive(Clone, ApiType)]\npub struct Student {\n    #[serde(flatten, default)]\n    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n}\n",
    )
    .unwrap();
    let err = Builder::new(tmp.path().join("apis"))
        .group_versions("example:v1")
        .out_dir(tmp.path().join("out"))
        .render()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("error: `Student` is generated inline by the macro (`version = \"v1\"`)"), "{text}");
    assert!(text.contains("types.rs:3:23"), "{text}");
}

/// rustc accepts code nested far deeper than syn can parse on an ordinary
/// thread in a debug build; the CLI and build.rs front ends run the engine
/// on a stack of its own, so this test's 2 MiB thread is enough.
#[test]
fn deeply_nested_user_code_does_not_overflow_the_callers_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let (name, groups) = common::FIXTURES.iter().find(|(n, _)| *n == "student").unwrap();
    common::copy_dir(&common::fixtures_dir().join(name), &tmp.path().join(name));
    let version_dir = std::fs::read_dir(tmp.path().join(name).join("apis"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap()
        .join("v1");
    let depth = 400;
    let deep = format!(
        "\npub type Deep = {}u8{};\npub const DEEP: i64 = {}1{};\n",
        "Vec<".repeat(depth),
        ">".repeat(depth),
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let mut types = std::fs::read_to_string(version_dir.join("types.rs")).unwrap();
    types.push_str(&deep);
    std::fs::write(version_dir.join("types.rs"), types).unwrap();

    let settings = common::settings(tmp.path(), name, groups);
    let report = codegen_core::run(&settings, codegen_core::Mode::Write).unwrap_or_else(|d| panic!("{d:?}"));
    assert!(!report.changes.is_empty());
    let mut b = Builder::new(tmp.path().join(name).join("apis")).out_dir(tmp.path().join("out"));
    for g in *groups {
        b = b.group_versions(g);
    }
    let out = b.render().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.files.contains_key(&out.dir.join("client.rs")));
}

/// docs/markers.md's generator options through the `Builder`: the header,
/// the runtime path, a plural exception, the Kubernetes version, capped
/// descriptions.
#[test]
fn builder_options_reach_the_output() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("student");
    common::copy_dir(&common::fixtures_dir().join("student"), &root);
    let render = |b: Builder| b.group_versions("example:v1").out_dir(tmp.path().join("out")).render().unwrap();
    let plain = render(Builder::new(root.join("apis")).kube_version("1.37"));
    let out = render(
        Builder::new(root.join("apis"))
            .header("Copyright the authors.")
            .runtime_path("::my_runtime")
            .plural_exception("Student", "studentz")
            .kube_version("1.33")
            .max_desc_len(0),
    );
    let client = &out.files[&out.dir.join("client.rs")];
    assert!(client.contains("// Copyright the authors."), "header");
    assert!(client.contains("::my_runtime::client::TypedClient<Student>"), "runtime path");
    assert!(!client.contains("::codegen_runtime::"), "no other runtime path");
    assert!(client.contains("pub fn studentz("), "plural exception");
    let crd = &out.files[&out.dir.join("crd/example.k8s.io_studentz.yaml")];
    assert!(crd.starts_with("# Code generated by kube-codegen. DO NOT EDIT.\n# Copyright the authors.\n"), "{crd}");
    assert!(!crd.contains("description:"), "max_desc_len(0) drops descriptions");
    assert!(plain.files[&plain.dir.join("crd/example.k8s.io_students.yaml")].contains("description:"));
    let err = Builder::new(root.join("apis")).kube_version("1.20").group_versions("example:v1").render().unwrap_err();
    assert!(err.to_string().contains("`1.20` is not a supported Kubernetes version"), "{err}");
}

/// `.generate_embedded_object_meta(true)` expands the `ObjectMeta` of an
/// embedded pod template (controller-gen's `generateEmbeddedObjectMeta`).
#[test]
fn builder_expands_embedded_object_meta_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("deployment");
    common::copy_dir(&common::fixtures_dir().join("deployment"), &root);
    let crd = |expand: bool| {
        let out = Builder::new(root.join("apis"))
            .group_versions("workloads:v1")
            .generate_embedded_object_meta(expand)
            .out_dir(tmp.path().join("out"))
            .render()
            .unwrap();
        let (_, text) = out.files.iter().find(|(path, _)| path.extension().is_some_and(|e| e == "yaml")).unwrap();
        text.clone()
    };
    let (plain, expanded) = (crd(false), crd(true));
    assert!(expanded.len() > plain.len());
    // The template's metadata gains its labels and annotations (maps of
    // strings), which the bare object of the default lacks.
    let maps = |crd: &str| crd.matches("additionalProperties:\n").count();
    assert!(maps(&expanded) >= maps(&plain) + 2, "{expanded}");
}

/// A build writes only what it generates under `$OUT_DIR/kube-codegen/`:
/// the files of a version (or kind, or group) no longer generated go, as
/// the CLI removes its stale files, so an old CRD is not taken for a
/// current one.
#[test]
fn files_no_longer_generated_are_removed_from_out_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("twoversions");
    common::copy_dir(&common::fixtures_dir().join("twoversions"), &root);
    let build = |versions: &str| {
        Builder::new(root.join("apis"))
            .group_versions(versions)
            .apis_module("crate::twoversions::apis")
            .out_dir(tmp.path().join("out"))
            .write_to_out_dir()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let both = build("batch:v1,v2");
    let v2 = both.dir.join("register/batch/v2.rs");
    assert!(v2.is_file());
    let stale_crd = both.dir.join("crd/batch.example.com_olds.yaml");
    std::fs::write(&stale_crd, "kind: CustomResourceDefinition\n").unwrap();
    let one = build("batch:v1");
    assert!(!v2.exists(), "the removed version's register file is gone");
    assert!(!stale_crd.exists(), "a CRD no longer generated is gone");
    for path in one.files.keys() {
        assert!(path.is_file(), "{}", path.display());
    }
}
