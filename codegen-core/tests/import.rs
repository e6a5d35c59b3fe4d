//! `kube-codegen import`: every CRD we have goes CRD → imported Rust → the
//! `crd` generator → CRD and must come back the same, except the
//! differences listed in `tests/import_differences.toml` (the CRDs of
//! `tests/fixtures/crds/`, the CRDs the generator writes for codegen-core's
//! fixtures, and the hand-written cases of `tests/import/`); the imported
//! types compile without warnings; errors are snapshots of their rendering.

mod common;
#[path = "../../tests/support/crd_diff.rs"]
mod crd_diff;
#[path = "../../tests/support/import_round_trip.rs"]
mod import_round_trip;
#[path = "../../tests/support/scratch_crate.rs"]
mod scratch_crate;

use std::path::{Path, PathBuf};

use codegen_core::GeneratorKind;
use codegen_core::import::{ImportSettings, Imported, import};
use import_round_trip::{Difference, check, differences, intended, read_crds, round_trip, yaml_files};

const GENERATORS: &[GeneratorKind] = &[GeneratorKind::Deepcopy, GeneratorKind::Register, GeneratorKind::Crd];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn import_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/import")
}

/// A module name for a case (`crds_students_example_k8s_io`).
fn case_name(source: &str, name: &str) -> String {
    let clean: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    format!("{source}_{clean}")
}

/// Every round-trip case: (source, case name, CRD files). The generated
/// fixtures' CRDs are written under `scratch` first.
fn cases(scratch: &Path) -> Vec<(&'static str, String, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for f in yaml_files(&workspace().join("tests/fixtures/crds")) {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        out.push(("crds", case_name("crds", &stem), vec![f]));
    }
    for (name, groups) in common::FIXTURES {
        common::generate(scratch, name, groups);
        let crd_dir = scratch.join(name).join("crd");
        // A fixture served by an aggregated API server has no CRDs.
        if crd_dir.is_dir() {
            out.push(("generated", case_name("generated", name), yaml_files(&crd_dir)));
        }
    }
    for f in yaml_files(&import_dir()) {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        out.push(("import", case_name("import", &stem), vec![f]));
    }
    out
}

#[test]
fn round_trip_matches_except_listed_differences() {
    let tmp = tempfile::tempdir().unwrap();
    let mut found: Vec<Difference> = Vec::new();
    for (source, case, files) in cases(&tmp.path().join("fixtures")) {
        let root = tmp.path().join("cases").join(&case);
        let (output, _) = round_trip(&root, &files, GENERATORS, &format!("crate::{case}::apis"));
        found.extend(differences(source, &read_crds(&files), &output));
    }
    check(&found, &intended(&workspace()), &["crds", "generated", "import"]);
}

#[test]
fn imported_types_compile_without_warnings() {
    let krate = scratch_crate::ScratchCrate::new(&workspace(), "imported-types");
    let src = krate.dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut lib = String::from("//! Imported CRDs, compiled by codegen-core's import test.\n#![deny(warnings)]\n");
    for (_, case, files) in cases(tmp.path()) {
        round_trip(&src.join(&case), &files, GENERATORS, &format!("crate::{case}::apis"));
        lib.push_str(&format!("pub mod {case} {{\n    pub mod apis;\n}}\n"));
    }
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    krate.write_manifest("");
    let out = krate.cargo("build", &[]);
    assert!(out.status.success(), "the imported types do not compile:\n{}", String::from_utf8_lossy(&out.stderr));
    // Their doc comments are the CRDs' descriptions as written (URLs,
    // `<placeholders>`, brackets); the files that hold such text allow
    // rustdoc's lints about it.
    let out = krate.cargo("doc", &["--no-deps"]);
    assert!(
        out.status.success(),
        "the imported types' documentation has warnings:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Descriptions with Go's code examples (YAML in an untagged fence or
    // an indented block) are no doctests.
    let out = krate.cargo("test", &["--doc"]);
    assert!(out.status.success(), "the imported types' doctests fail:\n{}", String::from_utf8_lossy(&out.stdout));
}

/// The diagnostics of an import that fails, with `tmp` shown as `$TMP`.
fn errors(crds: &[&str], apis_dir: &Path, tmp: &Path) -> String {
    let settings = ImportSettings { crds: crds.iter().map(PathBuf::from).collect(), apis_dir: apis_dir.to_path_buf() };
    let diags = import(&settings).expect_err("the import fails");
    codegen_core::diag::render_all(&diags).replace(&tmp.to_string_lossy().replace('\\', "/"), "$TMP")
}

/// An operator's bundle (a CRD beside a Deployment): the other objects are
/// skipped, each with a warning; a file holding no CRD at all is an error.
#[test]
fn objects_that_are_not_crds_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let settings =
        ImportSettings { crds: vec!["tests/import/errors/not_a_crd.yaml".into()], apis_dir: tmp.path().join("apis") };
    let imported = import(&settings).unwrap();
    insta::assert_snapshot!(codegen_core::diag::render_all(&imported.warnings));
    assert!(imported.output.files.iter().any(|f| f.path.ends_with("example/v1/thing.rs")));
    let deployment = tmp.path().join("deployment.yaml");
    std::fs::write(&deployment, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n").unwrap();
    let path = deployment.to_string_lossy().into_owned();
    insta::assert_snapshot!("objects_that_are_not_crds_no_crd", errors(&[&path], &tmp.path().join("apis"), tmp.path()));
}

#[test]
fn malformed_yaml_is_an_error_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(errors(&["tests/import/errors/malformed.yaml"], &tmp.path().join("apis"), tmp.path()));
}

#[test]
fn existing_files_are_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let apis = tmp.path().join("apis");
    let crd = "tests/import/validation.yaml";
    let settings = ImportSettings { crds: vec![crd.into()], apis_dir: apis.clone() };
    let imported = import(&settings).unwrap();
    codegen_core::write::apply(&codegen_core::write::plan(&imported.output).unwrap()).unwrap();
    // The same import again changes nothing.
    let again = import(&settings).unwrap();
    assert!(codegen_core::write::plan(&again.output).unwrap().is_empty());
    // An edited file stops it; so does a `mod.rs` of another import.
    let kind_file = imported.output.files.iter().find(|f| f.path.ends_with("probe.rs")).unwrap();
    std::fs::write(&kind_file.path, "// mine now\n").unwrap();
    std::fs::write(apis.join("mod.rs"), "pub mod other;\n").unwrap();
    insta::assert_snapshot!(errors(&[crd], &apis, tmp.path()));
}

/// `tests/import/<name>.yaml` imported into `<tmp>/apis`.
fn import_fixture(name: &str, tmp: &Path) -> Imported {
    let settings =
        ImportSettings { crds: vec![format!("tests/import/{name}.yaml").into()], apis_dir: tmp.join("apis") };
    import(&settings).unwrap()
}

#[test]
fn imported_kind_file() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = import_fixture("validation", tmp.path());
    let listing: String = imported
        .output
        .files
        .iter()
        .map(|f| {
            let rel = f.path.strip_prefix(tmp.path()).unwrap().to_string_lossy().replace('\\', "/");
            format!("==== {rel}\n{}\n", f.contents)
        })
        .collect();
    insta::assert_snapshot!(format!("groups: {:?}\n\n{listing}", imported.groups));
    let warnings = codegen_core::diag::render_all(&imported.warnings);
    insta::assert_snapshot!("imported_kind_file_warnings", warnings);
}

#[test]
fn warnings_name_what_is_not_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = import_fixture("versions", tmp.path());
    insta::assert_snapshot!(codegen_core::diag::render_all(&imported.warnings));
    let gadget = imported.output.files.iter().find(|f| f.path.ends_with("v1alpha1/gadget.rs")).unwrap();
    assert!(gadget.contents.contains("served = false"), "{}", gadget.contents);
    let owner = imported.output.files.iter().find(|f| f.path.ends_with("v1/gadget.rs")).unwrap();
    assert!(owner.contents.contains("#[validate(nullable, required)]"), "{}", owner.contents);
}

/// `kubectl get crds -o yaml` output imports as it is: each CRD of the
/// `List`, without kubectl's last-applied annotation, and the API server's
/// default conversion (`strategy: None`) is no difference.
#[test]
fn a_list_from_kubectl_imports_each_crd() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = import_fixture("kubectl_list", tmp.path());
    assert_eq!(codegen_core::diag::render_all(&imported.warnings), "", "no warnings");
    let file = |name: &str| {
        let f = imported.output.files.iter().find(|f| f.path.ends_with(name)).unwrap_or_else(|| panic!("{name}"));
        f.contents.clone()
    };
    let gizmo = file("listed/v1/gizmo.rs");
    assert!(gizmo.contains("\"team=gadgets\""), "{gizmo}");
    assert!(!gizmo.contains("last-applied"), "{gizmo}");
    assert!(file("listed/v1/widget.rs").contains("cluster_scoped"));
}

/// When generating fails after an import, the type files are removed again:
/// the error points at the CRD node the type came from, down to the schema
/// keyword, and names the Rust line as a note.
#[test]
fn generation_errors_point_into_the_crd() {
    let tmp = tempfile::tempdir().unwrap();
    let apis = tmp.path().join("src/apis");
    let settings = ImportSettings { crds: vec!["tests/import/errors/lookahead.yaml".into()], apis_dir: apis.clone() };
    let generation = codegen_core::Settings::new(&apis)
        .with_output_dir(tmp.path().join("src/client"))
        .with_crd_dir(tmp.path().join("crds"))
        .with_apis_module("crate::apis");
    let errors = codegen_core::import::run_import(&settings, Some(generation)).expect_err("the pattern is refused");
    let rendered =
        codegen_core::diag::render_all(&errors).replace(&tmp.path().to_string_lossy().replace('\\', "/"), "$TMP");
    insta::assert_snapshot!(rendered);
    let at = errors[0].location.as_deref().unwrap();
    assert_eq!((at.line, at.column), (30, 22), "the `pattern` key of ports[*].name");
    assert!(!apis.exists(), "nothing is left behind");
}

/// A default on a node of a Kubernetes type is a marker of the field: the
/// type is still recognised (`Quantity`, `LabelSelector`), not written out.
#[test]
fn built_in_types_with_defaults_are_recognised() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = import_fixture("builtin_defaults", tmp.path());
    let queue = imported.output.files.iter().find(|f| f.path.ends_with("queue.rs")).unwrap();
    let text = queue.contents.replace(char::is_whitespace, "").replace(",>", ">");
    assert!(
        text.contains("pubweight:Option<k8s_openapi::apimachinery::pkg::api::resource::Quantity>"),
        "{}",
        queue.contents
    );
    assert!(
        text.contains("pubnamespace_selector:Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>"),
        "{}",
        queue.contents
    );
    assert!(text.contains("default=1"), "{}", queue.contents);
    assert!(text.contains("default_json=\"{}\"") || text.contains("default_json=r#\"{}\"#"), "{}", queue.contents);
}

/// What operators' CRDs hold (`tests/import/real_world.yaml`): a root that
/// keeps unknown fields gets a map of them and, with the status
/// subresource, a free-form `status`; keys the API server drops and a
/// printer column of an undeclared field are left out with a warning; a
/// required `metadata` is no warning; an enum value `self` and a group and
/// kind named by keywords make names Rust takes. (The round trip and the
/// compile test take the file too.)
#[test]
fn real_world_crds_import() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = import_fixture("real_world", tmp.path());
    let file = |name: &str| {
        let f = imported.output.files.iter().find(|f| f.path.ends_with(name)).unwrap_or_else(|| panic!("{name}"));
        f.contents.clone()
    };
    let task = file("pipes/v1/task.rs");
    assert!(
        task.contains(
            "#[serde(flatten)]\n    pub additional_fields: std::collections::BTreeMap<String, serde_json::Value>"
        ),
        "{task}"
    );
    assert!(task.contains("pub status: Option<serde_json::Value>"), "{task}");
    assert!(!task.contains("#[validate(preserve_unknown_fields)]\npub struct"), "{task}");
    let route = file("gates/v1/route.rs");
    assert!(route.contains("TSelf"), "{route}");
    assert!(route.contains("#[cfg_attr(not(doctest), doc ="), "{route}");
    assert!(route.contains("rustdoc::invalid_rust_codeblocks"), "{route}");
    assert!(route.contains("minimum = -9223372036854775808"), "{route}");
    assert!(route.contains("name = \"Age\""), "a metadata column stays: {route}");
    let over = file("override_example/v1/override_kind.rs");
    assert!(over.contains("pub struct Override"), "{over}");
    assert!(over.contains("name = \"Age\""), "a metadata column of a schema without `metadata`: {over}");
    let warnings = codegen_core::diag::render_all(&imported.warnings);
    for dropped in [
        "`x-kubernetes-patch-merge-key`, which the API server does not read",
        "`x-kubernetes-patch-strategy`, which the API server does not read",
        "the printer column `Phase`, whose `.status.phase` is not in the schema",
    ] {
        assert!(warnings.contains(dropped), "{dropped}:\n{warnings}");
    }
    assert!(!warnings.contains("required but not a property"), "{warnings}");
    assert!(!warnings.contains("tasks.pipes"), "{warnings}");
}

/// A CRD of one kind, `group` `imports.example.com`, version `v1`, whose
/// spec-less root holds `properties` (YAML of the properties' schemas).
fn one_kind_crd(kind: &str, properties: &str) -> String {
    let plural = format!("{}s", kind.to_lowercase());
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.imports.example.com\n\
         spec:\n  group: imports.example.com\n  names:\n    kind: {kind}\n    plural: {plural}\n  scope: Namespaced\n  versions:\n  \
         - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n{properties}"
    )
}

/// Imports run one after the other into one version: a type name an
/// earlier import took is not given again (the version module exports
/// every file's types), and a kind named like such a type is an error.
#[test]
fn later_imports_keep_clear_of_earlier_types() {
    let tmp = tempfile::tempdir().unwrap();
    let apis = tmp.path().join("apis");
    let import_one = |name: &str, crd: String| {
        let path = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&path, crd).unwrap();
        import(&ImportSettings { crds: vec![path], apis_dir: apis.clone() })
    };
    let object = "          specCd:\n            type: object\n            properties:\n              x:\n                type: string\n";
    let first = import_one("ab", one_kind_crd("Ab", object)).unwrap();
    for f in &first.output.files {
        std::fs::create_dir_all(f.path.parent().unwrap()).unwrap();
        std::fs::write(&f.path, &f.contents).unwrap();
    }
    let ab = std::fs::read_to_string(apis.join("imports/v1/ab.rs")).unwrap();
    assert!(ab.contains("pub struct AbSpecCd"), "{ab}");
    let cd = "          cd:\n            type: object\n            properties:\n              y:\n                type: string\n";
    let second = import_one("ab_spec", one_kind_crd("AbSpec", cd)).unwrap();
    let file = second.output.files.iter().find(|f| f.path.ends_with("imports/v1/ab_spec.rs")).unwrap();
    assert!(file.contents.contains("pub struct AbSpecCd2"), "{}", file.contents);
    // Importing the first again changes nothing: its own file is not read.
    let again = import_one("ab", one_kind_crd("Ab", object)).unwrap();
    let file = again.output.files.iter().find(|f| f.path.ends_with("imports/v1/ab.rs")).unwrap();
    assert_eq!(file.contents, ab);
    let clash = import_one("ab_spec_cd", one_kind_crd("AbSpecCd", cd)).unwrap_err();
    let rendered = codegen_core::diag::render_all(&clash);
    assert!(
        rendered.contains("the kind `AbSpecCd` of `abspeccds.imports.example.com` is named like a type of"),
        "{rendered}"
    );
}
