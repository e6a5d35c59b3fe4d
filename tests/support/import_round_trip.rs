//! The round trip of `kube-codegen import`: CRD → imported Rust → the `crd`
//! generator → CRD, compared node by node with the input (key order and the
//! order of set-like lists aside; descriptions count). Every difference must
//! be listed with its reason in `codegen-core/tests/import_differences.toml`,
//! and a listed difference that no longer occurs fails too. Shared by
//! codegen-core's `tests/import.rs` and the tests crate's
//! `tests/import_roundtrip.rs` through `#[path]`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The CRDs of YAML files, by `metadata.name`.
pub fn read_crds(files: &[PathBuf]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for path in files {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let v = Value::deserialize(doc).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if v.is_null() {
                continue;
            }
            // A `List` (`kubectl get crds -o yaml`) holds CRDs as the API
            // server keeps them: what it sets itself is no part of the
            // definition.
            let crds = match v {
                Value::Object(mut list) if list.get("kind").and_then(Value::as_str) == Some("List") => {
                    list.remove("items").and_then(|i| i.as_array().cloned()).unwrap_or_default()
                }
                v => vec![v],
            };
            for mut v in crds {
                if let Some(crd) = v.as_object_mut() {
                    crd.remove("status");
                }
                if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                    for key in ["creationTimestamp", "generation", "managedFields", "resourceVersion", "uid"] {
                        meta.remove(key);
                    }
                }
                let name =
                    v["metadata"]["name"].as_str().unwrap_or_else(|| panic!("{}: a CRD without name", path.display()));
                out.insert(name.to_string(), v);
            }
        }
    }
    out
}

/// The `.yaml` files of a directory, sorted.
pub fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

/// Imports `crds` into `root/apis`, writes the files, generates the CRDs
/// into `root/crd` (with `generators`, the `crd` one at least) and returns
/// them by name, with the import's `group:versions`.
pub fn round_trip(
    root: &Path,
    crds: &[PathBuf],
    generators: &[codegen_core::GeneratorKind],
    apis_module: &str,
) -> (BTreeMap<String, Value>, codegen_core::import::Imported) {
    let apis = root.join("apis");
    let settings = codegen_core::import::ImportSettings { crds: crds.to_vec(), apis_dir: apis.clone() };
    let imported = codegen_core::import::import(&settings)
        .unwrap_or_else(|d| panic!("import of {crds:?} failed:\n{}", codegen_core::diag::render_all(&d)));
    let changes = codegen_core::write::plan(&imported.output).expect("planning the import");
    codegen_core::write::apply(&changes).expect("writing the import");
    let mut gen_settings = codegen_core::Settings::new(&apis)
        .with_crd_dir(root.join("crd"))
        .with_output_dir(root.join("client"))
        .with_apis_module(apis_module)
        .with_generators(generators.iter().copied());
    for g in &imported.groups {
        gen_settings = gen_settings.with_group(codegen_core::GroupVersions::parse(g).expect("group:versions"));
    }
    let report = codegen_core::run(&gen_settings, codegen_core::Mode::Write).unwrap_or_else(|d| {
        panic!("generating from the import of {crds:?} failed:\n{}", codegen_core::diag::render_all(&d))
    });
    assert!(
        report.warnings.is_empty(),
        "the generator warns about imported types of {crds:?}:\n{}",
        codegen_core::diag::render_all(&report.warnings)
    );
    (read_crds(&yaml_files(&root.join("crd"))), imported)
}

/// One difference between an input CRD and its round trip.
#[derive(Clone, Debug)]
pub struct Difference {
    pub source: String,
    pub crd: String,
    pub path: String,
    pub kind: &'static str,
    pub input: String,
    pub output: String,
}

/// How input and output CRDs are compared (arrays of these keys as sets).
const COMPARISON: super::crd_diff::Comparison = super::crd_diff::Comparison {
    set_like: &["required", "enum", "x-kubernetes-list-map-keys", "anyOf", "oneOf", "shortNames", "categories"],
    only_left: "only-input",
    only_right: "only-output",
};

/// Every difference between the input CRDs and the round trip's.
pub fn differences(source: &str, input: &BTreeMap<String, Value>, output: &BTreeMap<String, Value>) -> Vec<Difference> {
    let mut found = Vec::new();
    for (name, a) in input {
        let mut diffs = Vec::new();
        match output.get(name) {
            Some(b) => COMPARISON.run(a, b, &mut diffs),
            None => diffs.push((String::new(), "only-input", "the whole CRD".into(), String::new())),
        }
        found.extend(diffs.into_iter().map(|(path, kind, input, output)| Difference {
            source: source.to_string(),
            crd: name.clone(),
            path,
            kind,
            input,
            output,
        }));
    }
    for name in output.keys().filter(|n| !input.contains_key(*n)) {
        found.push(Difference {
            source: source.to_string(),
            crd: name.clone(),
            path: String::new(),
            kind: "only-output",
            input: String::new(),
            output: "the whole CRD".into(),
        });
    }
    found
}

/// One entry of `import_differences.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intended {
    /// Which inputs: `crds` (tests/fixtures/crds), `generated` (codegen-core's
    /// fixtures through the generator), `import` (codegen-core/tests/import),
    /// `controller-gen` (the Go twins).
    pub source: String,
    /// CRD name, or `*`.
    pub crd: String,
    /// Path in the CRD; `*` matches one segment, `**` any number.
    pub path: String,
    /// `only-input`, `only-output` or `differs`.
    pub kind: String,
    /// Why it cannot round-trip.
    pub reason: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IntendedList {
    difference: Vec<Intended>,
}

impl Intended {
    fn matches(&self, d: &Difference) -> bool {
        self.source == d.source
            && (self.crd == "*" || self.crd == d.crd)
            && self.kind == d.kind
            && super::crd_diff::path_matches(&self.path, &d.path)
    }
}

/// The listed differences (codegen-core/tests/import_differences.toml).
pub fn intended(workspace: &Path) -> Vec<Intended> {
    let path = workspace.join("codegen-core/tests/import_differences.toml");
    let list: IntendedList = toml::from_str(&std::fs::read_to_string(&path).expect("import_differences.toml"))
        .expect("import_differences.toml parses");
    for i in &list.difference {
        assert!(
            ["only-input", "only-output", "differs"].contains(&i.kind.as_str()) && !i.reason.trim().is_empty(),
            "import_differences.toml: every entry needs a known kind and a reason: {i:?}"
        );
    }
    list.difference
}

/// Fails with every difference not listed and every listed one (of
/// `sources`) that did not occur.
pub fn check(found: &[Difference], intended: &[Intended], sources: &[&str]) {
    let unexpected: Vec<&Difference> = found.iter().filter(|d| !intended.iter().any(|i| i.matches(d))).collect();
    let stale: Vec<&Intended> = intended
        .iter()
        .filter(|i| sources.contains(&i.source.as_str()) && !found.iter().any(|d| i.matches(d)))
        .collect();
    let mut report = String::new();
    for d in &unexpected {
        report.push_str(&format!(
            "\n{} {} {} ({}):\n    input:  {}\n    output: {}",
            d.source, d.crd, d.path, d.kind, d.input, d.output
        ));
    }
    for i in &stale {
        report.push_str(&format!("\nlisted but gone: {} {} {} ({})", i.source, i.crd, i.path, i.kind));
    }
    assert!(
        report.is_empty(),
        "the import round trip differs from codegen-core/tests/import_differences.toml:{report}"
    );
}
