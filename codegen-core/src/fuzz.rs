//! Entry points of the fuzz targets (`fuzz/`, cargo-fuzz on nightly), here
//! so that the committed corpora replay as ordinary tests on stable
//! (`tests/tests/fuzz_corpora.rs`). Each takes the fuzzer's bytes and panics
//! only when the engine broke a promise: a panic inside the engine, or an
//! output that contradicts itself.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::{Arbitrary, Unstructured};
use serde_json::Value;

use crate::settings::{GroupVersions, Settings};

/// A scratch package of its own per thread:
/// `<tmp>/kube-codegen-fuzz-<pid>-<n>/apis/fuzz/v1`.
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static DIR: PathBuf = {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("kube-codegen-fuzz-{}-{n}", std::process::id()));
            let v1 = dir.join("apis/fuzz/v1");
            std::fs::create_dir_all(&v1).expect("create the scratch package");
            std::fs::write(
                v1.join("mod.rs"),
                "codegen_macros::group_name!(\"fuzz.example.com\");\nmod types;\npub use types::*;\nmod register;\npub use register::*;\n",
            )
            .expect("write mod.rs");
            dir
        };
    }
    DIR.with(PathBuf::clone)
}

/// The whole engine on `source` as the `types.rs` of a package: it must
/// return files or diagnostics, never panic; on success every CRD it wrote
/// is YAML that reads back as a CustomResourceDefinition, and a second run
/// gives the same files.
pub fn engine_source(source: &str) {
    let dir = &scratch();
    std::fs::write(dir.join("apis/fuzz/v1/types.rs"), source).expect("write types.rs");
    let settings = Settings::new(dir.join("apis"))
        .with_output_dir(dir.join("client"))
        .with_crd_dir(dir.join("crd"))
        .with_group(GroupVersions { package: "fuzz".into(), versions: vec!["v1".into()] });
    let Ok(first) = crate::generate(&settings) else { return };
    for file in &first.output.files {
        if file.path.extension().is_some_and(|e| e == "yaml") {
            let body = file.contents.find("---\n").map_or(file.contents.as_str(), |i| &file.contents[i..]);
            let value: Value = serde_yaml::from_str(body)
                .unwrap_or_else(|e| panic!("{} is not YAML: {e}\n{body}", file.path.display()));
            assert_eq!(value["kind"], "CustomResourceDefinition", "{}", file.path.display());
        }
    }
    let again = crate::generate(&settings).expect("the same input generates again");
    let paths =
        |g: &crate::Generation| g.output.files.iter().map(|f| (f.path.clone(), f.contents.clone())).collect::<Vec<_>>();
    assert!(paths(&first) == paths(&again), "two runs on the same input differ");
}

/// The engine on arbitrary bytes (read as UTF-8, invalid sequences replaced).
pub fn engine_bytes(data: &[u8]) {
    engine_source(&String::from_utf8_lossy(data));
}

/// A tree of annotated API types, built by the fuzzer and printed as Rust.
#[derive(Arbitrary, Debug)]
pub struct Tree {
    kinds: Vec<Kind>,
    types: Vec<Nested>,
}

#[derive(Arbitrary, Debug)]
struct Kind {
    name: Name,
    genclient: Vec<Word>,
    resource: Vec<Word>,
    spec: Option<u8>,
    status: Option<u8>,
    doc: Text,
}

#[derive(Arbitrary, Debug)]
struct Nested {
    name: Name,
    is_enum: bool,
    fields: Vec<Field>,
    attrs: Vec<Word>,
    doc: Text,
}

#[derive(Arbitrary, Debug)]
struct Field {
    name: Name,
    ty: Ty,
    optional: bool,
    serde: Vec<Word>,
    validate: Vec<Word>,
    doc: Text,
}

#[derive(Arbitrary, Debug)]
enum Ty {
    Prim(u8),
    Vec(Box<Ty>),
    Map(Box<Ty>),
    Local(u8),
    Builtin(u8),
}

/// A name from a small set, so that references between types hit.
#[derive(Arbitrary, Debug)]
struct Name(u8);

/// Marker arguments: a known word with arbitrary values.
#[derive(Arbitrary, Debug)]
struct Word(u8, Text);

/// Free text (doc comments, marker values).
#[derive(Arbitrary, Debug)]
struct Text(String);

const NAMES: &[&str] = &["Foo", "Bar", "Baz", "Spec", "Status", "Item", "r#type", "Self", "Condition", "Mode"];
const PRIMS: &[&str] = &[
    "String",
    "i32",
    "i64",
    "u16",
    "u64",
    "f64",
    "bool",
    "Vec<u8>",
    "serde_json::Value",
    "char",
    "()",
    "Box<str>",
    "std::time::Duration",
    "Option<String>",
];
const BUILTINS: &[&str] = &[
    "k8s_openapi::api::core::v1::PodTemplateSpec",
    "k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector",
    "k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition",
    "k8s_openapi::apimachinery::pkg::api::resource::Quantity",
    "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString",
    "k8s_openapi::apimachinery::pkg::apis::meta::v1::Time",
    "k8s_openapi::api::core::v1::ObjectReference",
    "k8s_openapi::NoSuchType",
];
const GENCLIENT: &[&str] = &[
    "no_status",
    "cluster_scoped",
    "no_verbs",
    "readonly",
    "only_verbs(get, list)",
    "skip_verbs(delete)",
    "method(name = \"{}\", verb = \"get\", subresource = \"scale\")",
    "group = \"{}\"",
    "version = \"{}\"",
];
const RESOURCE: &[&str] = &[
    "subresource(status)",
    "subresource(scale(spec_replicas_path = \"{}\", status_replicas_path = \".status.replicas\"))",
    "printcolumn(name = \"{}\", type = \"string\", json_path = \".spec.name\")",
    "printcolumn(name = \"X\", type = \"integer\", json_path = \"{}\")",
    "short_names(\"{}\")",
    "categories(\"{}\")",
    "plural = \"{}\"",
    "storage",
    "served = false",
    "annotations(\"{}\")",
    "selectable_field(json_path = \"{}\")",
    "scope = \"Cluster\"",
];
const VALIDATE: &[&str] = &[
    "minimum = 0",
    "maximum = 10",
    "min_length = 1",
    "max_length = 3",
    "pattern = \"{}\"",
    "format = \"{}\"",
    "enum_values(\"{}\", \"b\")",
    "default = \"{}\"",
    "default = 3",
    "rule(rule = \"{}\", message = \"m\")",
    "list_type = \"map\"",
    "list_map_keys(\"{}\")",
    "preserve_unknown_fields",
    "embedded_resource",
    "nullable",
    "items(max_length = 2)",
    "values(min_length = 1)",
    "schema_json = \"{}\"",
    "required",
    "optional",
    "x_int_or_string",
    "unique_items",
    "min_items = 1",
    "max_properties = 2",
    "immutable",
];
const SERDE: &[&str] = &[
    "default",
    "rename = \"{}\"",
    "flatten",
    "skip",
    "skip_serializing_if = \"Option::is_none\"",
    "rename_all = \"camelCase\"",
    "tag = \"{}\"",
    "untagged",
    "transparent",
    "alias = \"{}\"",
];

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

fn word(list: &[&str], w: &Word) -> String {
    // Values keep to one line and no quote: the test is on the engine, not
    // on what a string literal can hold (the escaping test covers that).
    let value: String = w.1.0.chars().filter(|c| !matches!(c, '"' | '\\' | '\n' | '\r')).take(40).collect();
    pick(list, w.0).replace("{}", &value)
}

fn doc(t: &Text) -> String {
    t.0.lines().take(3).map(|l| format!("/// {l}\n")).collect()
}

fn ty(t: &Ty, depth: usize) -> String {
    match t {
        _ if depth > 3 => "String".into(),
        Ty::Prim(i) => pick(PRIMS, *i).into(),
        Ty::Vec(inner) => format!("Vec<{}>", ty(inner, depth + 1)),
        Ty::Map(inner) => format!("std::collections::BTreeMap<String, {}>", ty(inner, depth + 1)),
        Ty::Local(i) => pick(NAMES, *i).into(),
        Ty::Builtin(i) => pick(BUILTINS, *i).into(),
    }
}

impl Tree {
    /// The tree as the source of one file.
    pub fn to_source(&self) -> String {
        let mut out = String::from(
            "use codegen_macros::{ApiType, genclient};\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n",
        );
        for k in &self.kinds {
            let name = pick(NAMES, k.name.0);
            out.push_str(&doc(&k.doc));
            let args: Vec<String> = k.genclient.iter().map(|w| word(GENCLIENT, w)).collect();
            out.push_str(&format!("#[genclient({})]\n", args.join(", ")));
            out.push_str("#[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n");
            if !k.resource.is_empty() {
                let args: Vec<String> = k.resource.iter().map(|w| word(RESOURCE, w)).collect();
                out.push_str(&format!("#[resource({})]\n", args.join(", ")));
            }
            out.push_str(&format!(
                "pub struct {name} {{\n    #[serde(flatten, default)]\n    pub types: TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n"
            ));
            if let Some(s) = k.spec {
                out.push_str(&format!("    pub spec: {},\n", pick(NAMES, s)));
            }
            if let Some(s) = k.status {
                out.push_str(&format!("    #[serde(default)]\n    pub status: Option<{}>,\n", pick(NAMES, s)));
            }
            out.push_str("}\n\n");
        }
        for n in &self.types {
            let name = pick(NAMES, n.name.0);
            out.push_str(&doc(&n.doc));
            out.push_str("#[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n");
            for a in &n.attrs {
                let (list, attr) = if a.0 % 2 == 0 { (SERDE, "serde") } else { (VALIDATE, "validate") };
                out.push_str(&format!("#[{attr}({})]\n", word(list, &Word(a.0 / 2, Text(a.1.0.clone())))));
            }
            if n.is_enum {
                out.push_str(&format!("pub enum {name} {{\n"));
                for f in &n.fields {
                    out.push_str(&doc(&f.doc));
                    let variant = pick(NAMES, f.name.0).trim_start_matches("r#");
                    if f.optional {
                        out.push_str(&format!("    {variant}({}),\n", ty(&f.ty, 0)));
                    } else {
                        out.push_str(&format!("    {variant},\n"));
                    }
                }
            } else {
                out.push_str(&format!("pub struct {name} {{\n"));
                for f in &n.fields {
                    out.push_str(&doc(&f.doc));
                    for s in &f.serde {
                        out.push_str(&format!("    #[serde({})]\n", word(SERDE, s)));
                    }
                    for v in &f.validate {
                        out.push_str(&format!("    #[validate({})]\n", word(VALIDATE, v)));
                    }
                    let field = pick(NAMES, f.name.0).to_lowercase();
                    let t = ty(&f.ty, 0);
                    let t = if f.optional { format!("Option<{t}>") } else { t };
                    out.push_str(&format!("    pub {field}: {t},\n"));
                }
            }
            out.push_str("}\n\n");
        }
        out
    }
}

/// The engine on a tree of annotated types built from the bytes.
pub fn engine_structured(data: &[u8]) {
    let Ok(tree) = Tree::arbitrary_take_rest(Unstructured::new(data)) else { return };
    engine_source(&tree.to_source());
}

/// Every marker parser on arbitrary tokens: the first byte picks the
/// marker, the rest is its argument list. Errors are diagnostics with a
/// message; nothing panics.
pub fn markers(data: &[u8]) {
    let Some((which, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let Ok(tokens) = text.parse::<proc_macro2::TokenStream>() else { return };
    let errors = match which % 4 {
        0 => crate::markers::parse_genclient_args(tokens, proc_macro2::Span::call_site()).err(),
        1 => crate::markers::parse_group_name(tokens).err(),
        2 | 3 => {
            let source = if which % 4 == 2 {
                format!("#[resource({tokens})] struct X {{ a: i32 }}")
            } else {
                format!("struct X {{ #[validate({tokens})] a: i32 }}")
            };
            let Ok(input) = syn::parse_str::<syn::DeriveInput>(&source) else { return };
            crate::markers::check_derive_input(&input).err()
        }
        _ => unreachable!("a byte modulo 4"),
    };
    for e in errors.unwrap_or_default() {
        assert!(!e.message.is_empty(), "a marker error without a message");
    }
}

/// The JSONPath parsers (printer-column paths and the template grammar
/// behind them): an error points into the input and says what is wrong.
pub fn jsonpath(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for result in [crate::jsonpath::parse_column_path(&text), crate::jsonpath::parse_template(&text)] {
        if let Err(e) = result {
            assert!(e.offset <= text.len(), "error offset {} beyond {} bytes of {text:?}", e.offset, text.len());
            assert!(!e.message.is_empty(), "an error without a message for {text:?}");
        }
    }
}

/// `import` on arbitrary bytes as a CRD file: it returns types or
/// diagnostics, never panics; a diagnostic's line is one of the file's, and
/// every Rust file it would write parses. With the feature `cel`, the cost
/// estimate of every version's schema in the file does not panic either.
pub fn import_crd(data: &[u8]) {
    let dir = scratch();
    let file = dir.join("crds.yaml");
    std::fs::write(&file, data).expect("write the CRD file");
    let lines = crate::import::yaml_lines(&String::from_utf8_lossy(data)).lines().count().max(1);
    let settings = crate::import::ImportSettings { crds: vec![file.clone()], apis_dir: dir.join("imported") };
    let diagnostics = match crate::import::import(&settings) {
        Ok(imported) => {
            for f in imported.output.files.iter().filter(|f| f.path.extension().is_some_and(|e| e == "rs")) {
                if let Err(e) = syn::parse_file(&f.contents) {
                    panic!("{} does not parse: {e}\n{}", f.path.display(), f.contents);
                }
            }
            imported.warnings
        }
        Err(diagnostics) => diagnostics,
    };
    for d in &diagnostics {
        assert!(!d.message.is_empty(), "a diagnostic without a message");
        if let Some(at) = d.location.as_deref().filter(|at| at.file == file) {
            assert!((1..=lines).contains(&at.line), "line {} of a {lines}-line file: {}", at.line, d.message);
        }
    }
    #[cfg(feature = "cel")]
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(docs) = serde_saphyr::from_multiple::<Value>(text)
    {
        for doc in &docs {
            for version in doc["spec"]["versions"].as_array().into_iter().flatten() {
                let schema = &version["schema"]["openAPIV3Schema"];
                if let Ok(schema) = serde_json::from_value(schema.clone()) {
                    let _ = crate::emit::cel_cost::rule_costs(&schema);
                }
            }
        }
    }
}
