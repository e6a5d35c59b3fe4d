//! How serde attributes and markers on the fields of an API type reach the
//! CRD, through the whole engine: a `#[serde(transparent)]` struct carries
//! its markers, and a field the CRD lets clients leave out but serde cannot
//! decode without is a warning.

use std::path::Path;

use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};

const MOD_RS: &str = "codegen_macros::group_name!(\"batch.example.com\");\n\nmod types;\npub use types::*;\n";

/// The CRD of a Task whose spec is `spec` (the body of `TaskSpec`), with
/// `extra` items beside it, and the warnings.
fn generate(root: &Path, spec: &str, extra: &str) -> (String, Vec<String>) {
    match try_generate(root, spec, extra) {
        Ok(out) => out,
        Err(rendered) => panic!("{rendered}"),
    }
}

/// [`generate`], with the rendered errors when generation fails.
fn try_generate(root: &Path, spec: &str, extra: &str) -> Result<(String, Vec<String>), String> {
    try_generate_with(root, spec, extra, &[])
}

/// [`try_generate`] with more modules of the package (name, text), each in
/// its own file and brought in by a glob.
fn try_generate_with(
    root: &Path,
    spec: &str,
    extra: &str,
    modules: &[(&str, &str)],
) -> Result<(String, Vec<String>), String> {
    let types = format!(
        "use codegen_macros::{{ApiType, genclient}};\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         /// A task.\n\
         #[genclient(no_status)]\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct Task {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: TaskSpec,\n}}\n\n\
         /// What to run.\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct TaskSpec {{\n{spec}\n}}\n\n{extra}\n"
    );
    let dir = root.join("apis/batch/v1");
    std::fs::create_dir_all(&dir).unwrap();
    let mut mod_rs = MOD_RS.to_owned();
    for (name, text) in modules {
        mod_rs.push_str(&format!("mod {name};\npub use {name}::*;\n"));
        std::fs::write(dir.join(format!("{name}.rs")), text).unwrap();
    }
    std::fs::write(dir.join("mod.rs"), mod_rs).unwrap();
    std::fs::write(dir.join("types.rs"), types).unwrap();
    let settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_generators([GeneratorKind::Crd])
        .with_group(GroupVersions::parse("batch:v1").unwrap());
    match codegen_core::run(&settings, Mode::Write) {
        Ok(report) => Ok((
            std::fs::read_to_string(root.join("crd/batch.example.com_tasks.yaml")).unwrap(),
            report.warnings.iter().map(|d| d.message.clone()).collect(),
        )),
        Err(diags) => Err(codegen_core::diag::render_all(&diags)),
    }
}

#[test]
fn a_transparent_struct_carries_its_markers_and_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A short name.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[serde(transparent)]\n\
                 #[validate(max_length = 63)]\n\
                 pub struct Name {\n    #[validate(pattern = \"^[a-z]+$\")]\n    pub value: String,\n}\n";
    let (crd, warnings) = generate(dir.path(), "    /// Who runs it.\n    pub owner: Name,", extra);
    assert_eq!(warnings, Vec::<String>::new());
    let owner = &crd[crd.find("owner:").expect("the owner field")..];
    let owner = &owner[..owner.find("required:").unwrap_or(owner.len())];
    assert!(owner.contains("maxLength: 63"), "{owner}");
    assert!(owner.contains("pattern: ^[a-z]+$"), "{owner}");
    assert!(owner.contains("type: string"), "{owner}");
}

#[test]
fn a_field_the_crd_makes_optional_must_decode_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "    /// Skipped when empty, yet required by serde.\n\
                \x20   #[serde(skip_serializing_if = \"Vec::is_empty\")]\n    pub tags: Vec<String>,\n\
                \x20   /// Optional by marker, yet required by serde.\n\
                \x20   #[validate(optional)]\n    pub note: String,\n\
                \x20   /// Fine: serde fills it in.\n\
                \x20   #[serde(default, skip_serializing_if = \"Vec::is_empty\")]\n    pub args: Vec<String>,\n\
                \x20   /// Fine: an Option.\n\
                \x20   #[serde(skip_serializing_if = \"Option::is_none\")]\n    pub timeout: Option<i64>,";
    let (crd, warnings) = generate(dir.path(), spec, "");
    assert_eq!(
        warnings,
        [
            "field `tags` of `TaskSpec` may be left out of objects but does not decode without it",
            "field `note` of `TaskSpec` may be left out of objects but does not decode without it",
        ]
    );
    assert!(!crd.contains("- tags") && !crd.contains("- note"), "optional in the CRD all the same:\n{crd}");
}

#[test]
fn a_flattened_enum_keeps_exactly_one_of_its_variants() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Where the code comes from.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(rename_all = \"camelCase\")]\n\
                 pub enum Source {\n    /// A git repository.\n    Git { url: String },\n    /// A tarball.\n    Http { url: String },\n}\n\n\
                 impl Default for Source {\n    fn default() -> Self {\n        Source::Git { url: String::new() }\n    }\n}\n";
    let spec = "    /// The command.\n    pub command: String,\n    /// Where from.\n    #[serde(flatten)]\n    pub source: Source,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let spec = &crd[crd.find("spec:\n            description: What to run.").expect("the spec schema")..];
    assert!(spec.contains("oneOf:\n"), "{spec}");
    assert!(
        spec.contains(
            "oneOf:\n            - required:\n              - git\n            - required:\n              - http\n"
        ),
        "{spec}"
    );
}

#[test]
fn an_optional_flattened_enum_gives_at_most_one_of_its_variants() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Where the code comes from.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(rename_all = \"camelCase\")]\n\
                 pub enum Source {\n    /// A git repository.\n    Git { url: String },\n    /// A tarball.\n    Http { url: String },\n}\n";
    let spec = "    /// The command.\n    pub command: String,\n    /// Where from, if anywhere.\n    #[serde(flatten)]\n    pub source: Option<Source>,";
    let (crd, _) = generate(dir.path(), spec, extra);
    assert!(crd.contains("git:") && crd.contains("http:"), "{crd}");
    // None of the variants, or exactly one (as a proto one-of is written).
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let one_of = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["oneOf"];
    let expected: serde_yaml::Value = serde_yaml::from_str(
        "[{not: {anyOf: [{required: [git]}, {required: [http]}]}}, {required: [git]}, {required: [http]}]",
    )
    .unwrap();
    assert_eq!(one_of, &expected, "{crd}");
}

#[test]
fn a_fields_rules_come_before_its_types_unless_it_writes_its_schema_out() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Limits.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(rule(rule = \"has(self.max)\", message = \"type rule\"))]\n\
                 pub struct Limits {\n    /// Most.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub max: Option<i64>,\n}\n";
    let spec = "    /// Checked twice.\n\
                \x20   #[validate(rule(rule = \"self.max > 0\", message = \"field rule\"))]\n    pub limits: Limits,\n\
                \x20   /// Written out whole.\n\
                \x20   #[validate(schema_json = r#\"{\"type\": \"string\"}\"#)]\n    pub other: Limits,";
    let (crd, _) = generate(dir.path(), spec, extra);
    let limits = &crd[crd.find("limits:").unwrap()..];
    let (field, ty) = (limits.find("message: field rule").unwrap(), limits.find("message: type rule").unwrap());
    assert!(field < ty, "the field's rule first, as controller-gen writes them:\n{limits}");
    let other = &crd[crd.find("other:").unwrap()..];
    let other = &other[..other.find("required:").unwrap_or(other.len())];
    assert!(!other.contains("rule"), "a written-out schema has no rules of the type's:\n{other}");
}

/// `#[serde(with = ..)]` changes a field's JSON: a schema written by hand
/// (`schema_json`) stands for it, as the error's help says.
#[test]
fn a_field_serialized_with_a_module_takes_a_schema_written_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "mod seconds {\n\
                 \x20   pub fn serialize<S: serde::Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {\n\
                 \x20       s.serialize_str(&format!(\"{}s\", d.as_secs()))\n    }\n\
                 \x20   pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<std::time::Duration, D::Error> {\n\
                 \x20       let text: String = serde::Deserialize::deserialize(d)?;\n\
                 \x20       text.trim_end_matches('s').parse().map(std::time::Duration::from_secs).map_err(serde::de::Error::custom)\n    }\n}\n";
    let spec = "    /// How often.\n\
                \x20   #[serde(with = \"seconds\")]\n\
                \x20   #[validate(schema_json = r#\"{\"type\": \"string\", \"pattern\": \"^[0-9]+s$\"}\"#)]\n\
                \x20   pub interval: std::time::Duration,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let interval = &crd[crd.find("interval:").expect("the interval field")..];
    let interval = &interval[..interval.find("required:").unwrap_or(interval.len())];
    assert!(interval.contains("type: string") && interval.contains("pattern: ^[0-9]+s$"), "{interval}");
}

/// Types of std and common crates that serialize as strings or positive
/// integers have their schemas (the formats the API server knows, where
/// there is one), as schemars gives kube-derive users.
#[test]
fn std_and_common_crate_types_that_are_strings_or_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "    /// a\n    pub ip: std::net::IpAddr,\n\
                \x20   /// b\n    pub v4: std::net::Ipv4Addr,\n\
                \x20   /// c\n    pub v6: std::net::Ipv6Addr,\n\
                \x20   /// d\n    pub path: std::path::PathBuf,\n\
                \x20   /// e\n    pub replicas: std::num::NonZeroU32,\n\
                \x20   /// f\n    pub small: std::num::NonZero<u8>,\n\
                \x20   /// g\n    pub label: std::borrow::Cow<'static, str>,\n\
                \x20   /// h\n    pub url: url::Url,\n\
                \x20   /// i\n    pub id: uuid::Uuid,\n\
                \x20   /// j\n    pub day: chrono::NaiveDate,";
    let (crd, warnings) = generate(dir.path(), spec, "");
    assert_eq!(warnings, Vec::<String>::new());
    let v: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let props = &v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let shape = |name: &str| {
        let p = &props[name];
        let s = |k: &str| p[k].as_str().map(str::to_owned).or_else(|| p[k].as_i64().map(|n| n.to_string()));
        (s("type"), s("format"), s("minimum"), s("maximum"))
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(shape("ip"), (some("string"), None, None, None));
    assert_eq!(shape("v4"), (some("string"), some("ipv4"), None, None));
    assert_eq!(shape("v6"), (some("string"), some("ipv6"), None, None));
    assert_eq!(shape("path"), (some("string"), None, None, None));
    assert_eq!(shape("replicas"), (some("integer"), some("int64"), some("1"), None));
    assert_eq!(shape("small"), (some("integer"), some("int32"), some("1"), some("255")));
    assert_eq!(shape("label"), (some("string"), None, None, None));
    assert_eq!(shape("url"), (some("string"), some("uri"), None, None));
    assert_eq!(shape("id"), (some("string"), some("uuid"), None, None));
    assert_eq!(shape("day"), (some("string"), some("date"), None, None));
}

/// Variants of a tagged enum sharing a field whose schemas differ only in
/// their doc comments make one property, without a description (neither
/// variant's fits both); any other difference is an error naming it.
#[test]
fn variants_sharing_a_field_that_differs_only_in_its_docs() {
    let source = |second_pattern: &str| {
        format!(
            "/// Where from.\n\
             #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
             #[serde(tag = \"kind\")]\n\
             pub enum Source {{\n\
             \x20   /// A secret.\n    Secret {{\n        /// Name of the Secret.\n        #[validate(pattern = \"^[a-z]+$\")]\n        name: String,\n    }},\n\
             \x20   /// A config map.\n    ConfigMap {{\n        /// Name of the ConfigMap.\n        #[validate(pattern = \"{second_pattern}\")]\n        name: String,\n    }},\n}}\n\n\
             impl Default for Source {{\n    fn default() -> Self {{\n        Source::Secret {{ name: String::new() }}\n    }}\n}}\n"
        )
    };
    let spec = "    /// Where from.\n    pub source: Source,";
    let dir = tempfile::tempdir().unwrap();
    let (crd, warnings) = generate(dir.path(), spec, &source("^[a-z]+$"));
    assert_eq!(warnings, Vec::<String>::new());
    let v: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let name = &v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["source"]["properties"]
        ["name"];
    assert_eq!(name["pattern"], "^[a-z]+$");
    assert!(name.get("description").is_none(), "{name:?}");

    let dir = tempfile::tempdir().unwrap();
    let rendered = try_generate(dir.path(), spec, &source("^[a-z0-9]+$")).unwrap_err();
    assert!(rendered.contains("declare property `name` with different schemas (`pattern` differs)"), "{rendered}");
}

/// `preserve_unknown_fields` (or `schema_json`) on a field, or on its
/// items, lets it hold a type with no structural schema (an untagged enum
/// of mixed shapes, a type that holds itself): it is free-form JSON there,
/// as controller-gen's `Schemaless`. A struct with a schema keeps it.
#[test]
fn schemaless_positions_take_types_without_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A string, a list or a map (Tekton's ParamValue).\n\
                 #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ApiType)]\n\
                 #[serde(untagged)]\n\
                 pub enum ParamValue {\n    String(String),\n    Array(Vec<String>),\n    Object(std::collections::BTreeMap<String, String>),\n}\n\n\
                 /// A condition tree.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct When {\n    /// The key.\n    pub key: String,\n    /// Nested conditions.\n    #[serde(default)]\n    #[validate(items(preserve_unknown_fields))]\n    pub any: Vec<When>,\n}\n";
    let spec = "    /// A value of any shape.\n\
                \x20   #[serde(default, skip_serializing_if = \"Option::is_none\")]\n\
                \x20   #[validate(preserve_unknown_fields)]\n    pub value: Option<ParamValue>,\n\
                \x20   /// Values by name.\n\
                \x20   #[serde(default)]\n\
                \x20   #[validate(values(schema_json = r#\"{\"type\": \"string\"}\"#))]\n    pub values: std::collections::BTreeMap<String, ParamValue>,\n\
                \x20   /// A condition tree.\n\
                \x20   #[serde(default)]\n    pub when: Vec<When>,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let preserved = |v: &serde_yaml::Value| v["x-kubernetes-preserve-unknown-fields"] == serde_yaml::Value::Bool(true);
    assert!(preserved(&spec["value"]) && spec["value"].get("type").is_none(), "{crd}");
    assert_eq!(spec["values"]["additionalProperties"]["type"], "string", "{crd}");
    // The struct keeps its own schema; only its nested list is free-form.
    let when = &spec["when"]["items"];
    assert_eq!(when["properties"]["key"]["type"], "string", "{crd}");
    assert!(preserved(&when["properties"]["any"]["items"]), "{crd}");

    // A type with a schema keeps it, and its errors.
    let typed = "    /// Free-form on top.\n    #[validate(preserve_unknown_fields)]\n    pub when: When,";
    let bad_extra = extra.replace(
        "    /// The key.\n    pub key: String,",
        "    /// The key.\n    #[validate(minimum = 1)]\n    pub key: String,",
    );
    assert_ne!(bad_extra, extra);
    let err = try_generate(&dir.path().join("typed"), typed, &bad_extra).unwrap_err();
    assert!(err.contains("minimum"), "{err}");

    // Without the marker, the same types are errors.
    let bare = "    /// A value.\n    pub value: ParamValue,";
    let err = try_generate(&dir.path().join("bare"), bare, extra).unwrap_err();
    assert!(err.contains("has no structural schema"), "{err}");
}

/// A generic alias's default type parameters stand in for missing
/// arguments, as rustc reads them; a default may name an earlier parameter.
#[test]
fn generic_aliases_with_default_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Strings by name, or other values.\n\
                 pub type Map<V = String> = std::collections::BTreeMap<String, V>;\n\n\
                 /// Values by key, of the key's type unless given.\n\
                 pub type Pairs<K, V = K> = std::collections::BTreeMap<K, V>;\n\n\
                 /// Counts by name.\n\
                 pub type Counts = Map<u16>;\n";
    let spec = "    /// Labels.\n    pub labels: Map,\n    /// Counts.\n    pub counts: Counts,\n    /// Renames.\n    pub renames: Pairs<String>,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec["labels"]["additionalProperties"]["type"], "string", "{crd}");
    assert_eq!(spec["counts"]["additionalProperties"]["maximum"], 65535, "{crd}");
    assert_eq!(spec["renames"]["additionalProperties"]["type"], "string", "{crd}");
}

/// A type alias's doc describes a field of its type that has no doc of its
/// own, and the items and values of lists and maps of it, through `Option`
/// and aliases of aliases: what controller-gen v0.23 writes for the same
/// fields of a Go type (`type Grade string`) or alias (`type Nick =
/// string`), tried on a copy of `tests/controller-gen/student`.
#[test]
fn type_alias_docs_describe_fields_items_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Grade is the student's year.\n\
                 pub type Grade = String;\n\n\
                 pub type Year = Grade;\n\n\
                 /// Grades by subject.\n\
                 pub type Report = std::collections::BTreeMap<String, Grade>;\n\n\
                 /// Grades of a term.\n\
                 pub type Grades = Vec<Grade>;\n\n\
                 /// Where the grades come from.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(rename_all = \"camelCase\")]\n\
                 pub enum Source {\n    Registry(Grade),\n    /// Its own doc.\n    Teacher(Grade),\n}\n\
                 impl Default for Source {\n    fn default() -> Self {\n        Source::Registry(String::new())\n    }\n}\n";
    let spec = "    pub grade: Grade,\n\
                    /// The field's own doc.\n    pub grade2: Grade,\n\
                    pub grades: Vec<Grade>,\n\
                    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub opt: Option<Year>,\n\
                    pub by_term: std::collections::BTreeMap<String, Vec<Year>>,\n\
                    pub report: Report,\n\
                    pub boxed: Box<Grade>,\n\
                    pub terms: Box<Vec<std::sync::Arc<Grades>>>,\n\
                    pub source: Source,\n\
                    pub plain: String,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let grade = "Grade is the student's year.";
    assert_eq!(spec["grade"]["description"], grade, "{crd}");
    assert_eq!(spec["grade2"]["description"], "The field's own doc.", "{crd}");
    assert!(spec["grades"].get("description").is_none(), "{crd}");
    assert_eq!(spec["grades"]["items"]["description"], grade, "{crd}");
    assert_eq!(spec["opt"]["description"], grade, "{crd}");
    assert!(spec["by_term"]["additionalProperties"].get("description").is_none(), "{crd}");
    assert_eq!(spec["by_term"]["additionalProperties"]["items"]["description"], grade, "{crd}");
    assert_eq!(spec["report"]["description"], "Grades by subject.", "{crd}");
    assert_eq!(spec["report"]["additionalProperties"]["description"], grade, "{crd}");
    assert!(spec["plain"].get("description").is_none(), "{crd}");
    assert_eq!(spec["boxed"]["description"], grade, "{crd}");
    assert!(spec["terms"].get("description").is_none(), "{crd}");
    assert_eq!(spec["terms"]["items"]["description"], "Grades of a term.", "{crd}");
    assert_eq!(spec["terms"]["items"]["items"]["description"], grade, "{crd}");
    assert_eq!(spec["source"]["properties"]["registry"]["description"], grade, "{crd}");
    assert_eq!(spec["source"]["properties"]["teacher"]["description"], "Its own doc.", "{crd}");
}

/// Type aliases that expand to themselves (rustc refuses them; the CLI
/// reads source rustc may not have seen) are an error, not a stack
/// overflow.
#[test]
fn a_cycle_of_type_aliases_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "pub type Ping = Pong;\npub type Pong = Vec<Ping>;\n";
    let rendered = try_generate(dir.path(), "    pub ping: Ping,", extra).expect_err("a cycle");
    assert!(rendered.contains("type alias `Ping` expands to itself"), "{rendered}");
}

/// Markers on a newtype variant's field reach its schema; an untagged
/// integer-or-string enum keeps the integer variant's bounds and the string
/// variant's (its newtype's) pattern; a misspelled marker there is an error.
#[test]
fn newtype_variant_markers_reach_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A number or a percentage.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(untagged)]\n\
                 pub enum IntOrPercent {\n    Int(#[validate(minimum = 1, maximum = 100)] u32),\n    Percent(Percent),\n}\n\n\
                 /// A percentage like `25%`.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[validate(pattern = \"^[0-9]+%$\")]\n\
                 pub struct Percent(pub String);\n\n\
                 /// One of two.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(rename_all = \"camelCase\")]\n\
                 pub enum Choice {\n    Name(#[validate(max_length = 5)] String),\n    Count(u8),\n}\n";
    let (crd, warnings) = generate(dir.path(), spec_text(), extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let surge = &spec["max_surge"];
    assert_eq!(surge["x-kubernetes-int-or-string"], true, "{crd}");
    assert_eq!((surge["minimum"].as_i64(), surge["maximum"].as_i64()), (Some(1), Some(100)), "{crd}");
    assert_eq!(surge["pattern"], "^[0-9]+%$", "{crd}");
    assert_eq!(spec["choice"]["properties"]["name"]["maxLength"], 5, "{crd}");

    let typo = extra.replace("minimum = 1", "minimun = 1");
    let err = try_generate(&dir.path().join("typo"), spec_text(), &typo).unwrap_err();
    assert!(err.contains("unknown `validate` marker `minimun`") && err.contains("did you mean `minimum`"), "{err}");
}

/// The spec of [`newtype_variant_markers_reach_the_schema`].
fn spec_text() -> &'static str {
    "    /// Surge.\n    pub max_surge: IntOrPercent,\n    /// Choice.\n    pub choice: Choice,"
}

/// A field every variant of an internally tagged (or untagged) enum
/// requires is required of the enum's object, so it may key a list map.
#[test]
fn fields_every_variant_requires_are_required() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Credentials (Crossplane's FunctionCredentials).\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(tag = \"source\", rename_all_fields = \"camelCase\")]\n\
                 pub enum Credentials {\n    /// None.\n    None {\n        /// Its name.\n        name: String,\n    },\n    /// From a Secret.\n    Secret {\n        /// Its name.\n        name: String,\n        /// The Secret.\n        secret_ref: String,\n    },\n}\n\n\
                 /// A reference by name or by label.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(untagged)]\n\
                 pub enum Target {\n    /// By name.\n    Name {\n        /// Its kind.\n        kind: String,\n        /// Its name.\n        name: String,\n    },\n    /// By label.\n    Label {\n        /// Its kind.\n        kind: String,\n        /// Its selector.\n        selector: String,\n    },\n}\n";
    let spec = "    /// Credentials by name.\n    #[serde(default)]\n    #[validate(list_type = \"map\", list_map_keys(\"name\"))]\n    pub credentials: Vec<Credentials>,\n    /// The target.\n    pub target: Target,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let required = |v: &serde_yaml::Value| -> Vec<String> { serde_yaml::from_value(v["required"].clone()).unwrap() };
    assert_eq!(required(&spec["credentials"]["items"]), ["name", "source"], "{crd}");
    assert_eq!(required(&spec["target"]), ["kind"], "{crd}");
}

/// Go markers kept in doc comments of ported types are warnings naming
/// the Rust spelling, and are left out of descriptions (as controller-gen
/// leaves them out).
#[test]
fn go_markers_in_doc_comments_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "    /// How many.\n    ///\n    /// +optional\n    /// +kubebuilder:validation:Minimum=1\n    #[serde(default)]\n    pub replicas: Option<i32>,";
    let (crd, warnings) = generate(dir.path(), spec, "");
    assert_eq!(
        warnings,
        [
            "Go marker `+optional` in a doc comment has no effect",
            "Go marker `+kubebuilder:validation:Minimum=1` in a doc comment has no effect"
        ]
    );
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let replicas =
        &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"];
    assert_eq!(replicas["description"], "How many.", "{crd}");
}

/// A string enum reads its variants' aliases too, and with a
/// `#[serde(other)]` variant any string: the schema takes what the type
/// reads.
#[test]
fn string_enums_take_aliases_and_other() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// An address type.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 pub enum AddressType {\n    Hostname,\n    #[serde(alias = \"InternalIp\", alias = \"internal-ip\")]\n    InternalIP,\n}\n\n\
                 /// A phase, open to new ones.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 pub enum Phase {\n    Running,\n    #[serde(other)]\n    Unknown,\n}\n\n\
                 /// A source, by its type.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(tag = \"type\")]\n\
                 pub enum Source {\n    #[serde(alias = \"git\")]\n    Git {\n        /// Where.\n        url: String,\n    },\n    #[serde(other)]\n    Unknown,\n}\n\n\
                 /// A mode, by its type.\n\
                 #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                 #[serde(tag = \"type\")]\n\
                 pub enum Mode {\n    #[serde(alias = \"fast\")]\n    Fast {\n        /// How fast.\n        speed: u8,\n    },\n    Slow,\n}\n";
    let spec = "    /// The address type.\n    pub address_type: AddressType,\n    /// The phase.\n    pub phase: Phase,\n    \
                /// The source.\n    pub source: Source,\n    /// The mode.\n    pub mode: Mode,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let values: Vec<String> = serde_yaml::from_value(spec["address_type"]["enum"].clone()).unwrap();
    assert_eq!(values, ["Hostname", "InternalIP", "InternalIp", "internal-ip"], "{crd}");
    assert!(spec["phase"].get("enum").is_none() && spec["phase"]["type"] == "string", "{crd}");
    // The tag of an internally tagged enum alike.
    let tag = &spec["source"]["properties"]["type"];
    assert!(tag.get("enum").is_none() && tag["type"] == "string", "{crd}");
    let values: Vec<String> = serde_yaml::from_value(spec["mode"]["properties"]["type"]["enum"].clone()).unwrap();
    assert_eq!(values, ["Fast", "fast", "Slow"], "{crd}");
}

/// `#[doc = concat!(..)]` of literals is read as its text; another macro
/// (`include_str!`) is a warning, not a silently missing description.
#[test]
fn doc_attributes_written_with_macros() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "    #[doc = concat!(\"How many \", \"replicas.\")]\n    pub replicas: i32,\n    #[doc = include_str!(\"mode.md\")]\n    pub mode: String,";
    let (crd, warnings) = generate(dir.path(), spec, "");
    assert_eq!(warnings, ["this doc attribute is not read: the description leaves it out"]);
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec["replicas"]["description"], "How many replicas.", "{crd}");
}

/// Type aliases are looked up where their name is written, as rustc does:
/// two modules of a package may each have an `Id`, and an alias may take
/// the name of the type it stands for (`pub type Note = super::Note;`).
#[test]
fn aliases_of_one_name_in_two_modules_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "pub type Id = String;\n\
                 /// A note.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct Note {\n    pub text: String,\n}\n\n\
                 pub mod inner {\n    pub type Id = i64;\n}\n\n\
                 pub mod compat {\n    pub type Note = super::Note;\n}\n";
    let spec = "    pub id: Id,\n    pub inner_id: inner::Id,\n    pub note: compat::Note,\n    pub plain: Note,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let doc: serde_yaml::Value = serde_yaml::from_str(&crd).unwrap();
    let spec = &doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec["id"]["type"], "string", "{crd}");
    assert_eq!(spec["inner_id"]["type"], "integer", "{crd}");
    for note in ["note", "plain"] {
        assert_eq!(spec[note]["properties"]["text"]["type"], "string", "{note}: {crd}");
    }
}

/// An error inside a type alias written in another file is shown where the
/// field names the alias, with the alias's own place in the message.
#[test]
fn an_error_inside_an_alias_of_another_file_points_at_both() {
    let dir = tempfile::tempdir().unwrap();
    let aliases = "/// Too wide.\npub type Wide = u128;\n";
    let rendered =
        try_generate_with(dir.path(), "    pub wide: Wide,", "use super::aliases::Wide;\n", &[("aliases", aliases)])
            .expect_err("u128 has no schema");
    assert!(rendered.contains("does not fit a Kubernetes integer"), "{rendered}");
    assert!(rendered.contains("(in type alias `Wide`, ") && rendered.contains("aliases.rs:2:17)"), "{rendered}");
    assert!(rendered.contains("types.rs:") && rendered.contains("pub wide: Wide,"), "{rendered}");
}

/// The `spec` properties of a generated CRD.
fn spec_properties(crd: &str) -> serde_yaml::Value {
    let doc: serde_yaml::Value = serde_yaml::from_str(crd).unwrap();
    doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].clone()
}

/// Markers on the items of a list or the values of a map add to the limits
/// of the item's own type, as those of a field do: both hold (controller-gen
/// writes the two schemas side by side in `allOf`).
#[test]
fn item_and_value_markers_keep_the_limits_of_the_items_type() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A short name.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(max_length = 10, min_length = 2)]\n\
                 pub struct Name(pub String);\n";
    let spec = "    /// Names.\n    #[validate(items(max_length = 63, min_length = 1))]\n    pub names: Vec<Name>,\n\
                \x20   /// Names by role.\n    #[validate(values(max_length = 5))]\n    pub roles: std::collections::BTreeMap<String, Name>,";
    let (crd, warnings) = generate(dir.path(), spec, extra);
    assert_eq!(warnings, Vec::<String>::new());
    let spec = spec_properties(&crd);
    let item = &spec["names"]["items"];
    assert_eq!((item["minLength"].as_u64(), item["maxLength"].as_u64()), (Some(2), Some(10)), "{crd}");
    let value = &spec["roles"]["additionalProperties"];
    assert_eq!((value["minLength"].as_u64(), value["maxLength"].as_u64()), (Some(2), Some(5)), "{crd}");

    // Two patterns cannot be one value: an error there too.
    let patterned = extra.replace("min_length = 2", "pattern = \"^[a-z]+$\"");
    let items_pattern = "    /// Names.\n    #[validate(items(pattern = \"^[a-c]+$\"))]\n    pub names: Vec<Name>,";
    let err = try_generate(&dir.path().join("pattern"), items_pattern, &patterned).unwrap_err();
    assert!(err.contains("`pattern` of `names[*]` differs from the `pattern` of its type `Name`"), "{err}");
}

/// A default is checked against the limits that hold, the type's included.
#[test]
fn a_default_is_checked_against_the_limits_of_its_type() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A nickname.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(max_length = 3)]\n\
                 pub struct Nick(pub String);\n";
    let spec = "    /// Nick.\n    #[validate(max_length = 10, default = \"abcdef\")]\n    pub nick: Nick,";
    let err = try_generate(dir.path(), spec, extra).unwrap_err();
    assert!(err.contains("default") && err.contains("abcdef"), "{err}");
    let fits = spec.replace("abcdef", "abc");
    let (crd, _) = generate(&dir.path().join("fits"), &fits, extra);
    assert_eq!(spec_properties(&crd)["nick"]["maxLength"], 3, "{crd}");
}

/// The values a field of an enum type allows are some of the enum's:
/// another would be accepted by the API server and could not be read.
#[test]
fn enum_values_of_an_enum_typed_field_are_some_of_its_variants() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A mode.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub enum Mode {\n    #[default]\n    A,\n    B,\n    C,\n}\n";
    let (crd, _) =
        generate(dir.path(), "    /// Mode.\n    #[validate(enum_values(\"A\", \"B\"))]\n    pub mode: Mode,", extra);
    assert_eq!(spec_properties(&crd)["mode"]["enum"], serde_yaml::to_value(["A", "B"]).unwrap(), "{crd}");
    let spec = "    /// Mode.\n    #[validate(items(enum_values(\"A\", \"D\")))]\n    pub modes: Vec<Mode>,";
    let err = try_generate(&dir.path().join("other"), spec, extra).unwrap_err();
    assert!(err.contains("enum value \"D\" of `modes[*]` is not a value of its type `Mode`"), "{err}");
}

/// An exclusive bound looser than the Rust type's own range leaves that
/// range as it is (`minimum = 0, exclusive_minimum` of a `NonZeroU32` is
/// `minimum: 1`); an exclusive bound inside it stays exclusive.
#[test]
fn an_exclusive_bound_outside_the_rust_range_keeps_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "    /// Count.\n    #[validate(minimum = 0, exclusive_minimum)]\n    pub count: std::num::NonZeroU32,\n\
                \x20   /// Level.\n    #[validate(maximum = 300, exclusive_maximum)]\n    pub level: u8,\n\
                \x20   /// Step.\n    #[validate(minimum = 0, exclusive_minimum, maximum = 10, exclusive_maximum)]\n    pub step: u8,";
    let (crd, _) = generate(dir.path(), spec, "");
    let spec = spec_properties(&crd);
    assert_eq!(spec["count"]["minimum"], 1, "{crd}");
    assert!(spec["count"].get("exclusiveMinimum").is_none(), "{crd}");
    assert_eq!(spec["level"]["maximum"], 255, "{crd}");
    assert!(spec["level"].get("exclusiveMaximum").is_none(), "{crd}");
    assert_eq!((spec["step"]["minimum"].as_u64(), spec["step"]["exclusiveMinimum"].as_bool()), (Some(0), Some(true)));
    assert_eq!((spec["step"]["maximum"].as_u64(), spec["step"]["exclusiveMaximum"].as_bool()), (Some(10), Some(true)));
}

/// The markers of a tuple newtype's field reach its schema, before the
/// type's own.
#[test]
fn markers_on_a_tuple_newtypes_field_reach_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A port.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(maximum = 9000)]\n\
                 pub struct Port(#[validate(minimum = 1, maximum = 10000)] pub u16);\n";
    let (crd, warnings) = generate(dir.path(), "    /// Port.\n    pub port: Port,", extra);
    assert_eq!(warnings, Vec::<String>::new());
    let port = &spec_properties(&crd)["port"];
    assert_eq!((port["minimum"].as_u64(), port["maximum"].as_u64()), (Some(1), Some(9000)), "{crd}");
}

/// serde attributes that make a value's JSON other than its schema are
/// errors, not silently dropped: `untagged` on one variant, a rename of one
/// side only, a `rename_all` with two rules; and `#[validate]` on a variant
/// itself has no schema to go to.
#[test]
fn attributes_the_schema_cannot_follow_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let source = "/// A source.\n\
                  #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                  pub enum Source {\n    Git { url: String },\n    #[serde(untagged)]\n    Raw(String),\n}\n";
    let err =
        try_generate(&dir.path().join("untagged"), "    /// Source.\n    pub source: Source,", source).unwrap_err();
    assert!(err.contains("`#[serde(untagged)]` on one variant"), "{err}");

    for (attr, says) in [
        ("rename(serialize = \"a\")", "written as `a` but read under its Rust name"),
        ("rename(deserialize = \"b\")", "read as `b` but written under its Rust name"),
    ] {
        let spec = format!("    /// Field.\n    #[serde({attr})]\n    pub field: String,");
        let err = try_generate(&dir.path().join(says.len().to_string()), &spec, "").unwrap_err();
        assert!(err.contains(says), "{err}");
    }

    let two_rules = "/// Two rules.\n\
                     #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                     #[serde(rename_all(serialize = \"camelCase\", deserialize = \"snake_case\"))]\n\
                     pub struct Two {\n    pub max_size: String,\n}\n";
    let err = try_generate(&dir.path().join("rules"), "    /// Two.\n    pub two: Two,", two_rules).unwrap_err();
    assert!(err.contains("`rename_all` with different rules for writing and reading"), "{err}");
    let one_rule = two_rules.replace("snake_case", "camelCase");
    let (crd, _) = generate(&dir.path().join("rule"), "    /// Two.\n    pub two: Two,", &one_rule);
    assert!(spec_properties(&crd)["two"]["properties"].get("maxSize").is_some(), "{crd}");

    let marked = "/// A source.\n\
                  #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
                  pub enum Src {\n    #[validate(max_length = 5)]\n    Name(String),\n    Count(u8),\n}\n";
    let err = try_generate(&dir.path().join("variant"), "    /// Src.\n    pub src: Src,", marked).unwrap_err();
    assert!(err.contains("`#[validate]` on the variant `Name` itself"), "{err}");
    assert!(err.contains("`Name(#[validate(..)] ..)`"), "{err}");
}

/// What holds of a flattened struct holds of the one it is merged into
/// (controller-gen's `allOf`): its map type, from the field or the type;
/// markers of a property (`nullable`, `default`, ..) on the flattened field,
/// which is none, are errors.
#[test]
fn a_flattened_structs_map_type_reaches_the_struct_it_is_merged_into() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// Inner.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct Inner {\n    pub a: String,\n}\n\n\
                 /// Outer.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct Outer {\n    #[serde(flatten)]\n    #[validate(map_type = \"atomic\")]\n    pub inner: Inner,\n    pub b: String,\n}\n";
    let (crd, _) = generate(dir.path(), "    /// Outer.\n    pub outer: Outer,", extra);
    let outer = &spec_properties(&crd)["outer"];
    assert_eq!(outer["x-kubernetes-map-type"], "atomic", "{crd}");
    assert!(outer["properties"].get("a").is_some() && outer["properties"].get("b").is_some(), "{crd}");

    let own = extra.replace("pub struct Outer", "#[validate(map_type = \"granular\")]\npub struct Outer");
    let err = try_generate(&dir.path().join("own"), "    /// Outer.\n    pub outer: Outer,", &own).unwrap_err();
    assert!(err.contains("whose flattened fields are `\"atomic\"`"), "{err}");

    let nullable = extra.replace("map_type = \"atomic\"", "nullable");
    let err =
        try_generate(&dir.path().join("nullable"), "    /// Outer.\n    pub outer: Outer,", &nullable).unwrap_err();
    assert!(err.contains("`nullable` on the flattened field `inner`, which is no property of its own"), "{err}");
}

/// The limits of a type come from its own markers and from those of the
/// field it wraps (a tuple newtype's): both hold with a field's markers; an
/// exclusive bound looser than the type's leaves the type's inclusive.
#[test]
fn limits_of_a_newtypes_field_hold_beside_a_fields_markers() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "/// A short name.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct Name(#[validate(max_length = 10, pattern = \"^[a-z]+$\")] pub String);\n\n\
                 /// A port.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(minimum = 5)]\n\
                 pub struct Port(pub u16);\n";
    let spec = "    /// Name.\n    #[validate(max_length = 63)]\n    pub name: Name,\n\
                \x20   /// Port.\n    #[validate(minimum = 3, exclusive_minimum)]\n    pub port: Port,";
    let (crd, _) = generate(dir.path(), spec, extra);
    let spec = spec_properties(&crd);
    assert_eq!(spec["name"]["maxLength"], 10, "{crd}");
    assert_eq!(spec["port"]["minimum"], 5, "{crd}");
    assert!(spec["port"].get("exclusiveMinimum").is_none(), "5 is allowed by both rules: {crd}");

    let other_pattern = "    /// Name.\n    #[validate(pattern = \"^[a-c]+$\")]\n    pub name: Name,";
    let err = try_generate(&dir.path().join("pattern"), other_pattern, extra).unwrap_err();
    assert!(err.contains("`pattern` of `name` differs from the `pattern` of its type `Name`"), "{err}");
}

/// A variant's `rename_all` with one rule for both sides is that rule; with
/// two it is an error, as on a type.
#[test]
fn a_variants_rename_all_with_two_rules_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let source = |rules: &str| {
        format!(
            "/// A source.\n\
             #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\n\
             pub enum Source {{\n    #[serde(rename_all({rules}))]\n    Git {{ max_size: String }},\n    Other {{ name: String }},\n}}\n"
        )
    };
    let spec = "    /// Source.\n    pub source: Source,";
    let same = source("serialize = \"camelCase\", deserialize = \"camelCase\"");
    let (crd, _) = generate(dir.path(), spec, &same);
    assert!(spec_properties(&crd)["source"]["properties"]["Git"]["properties"].get("maxSize").is_some(), "{crd}");
    let two = source("serialize = \"camelCase\", deserialize = \"snake_case\"");
    let err = try_generate(&dir.path().join("two"), spec, &two).unwrap_err();
    assert!(err.contains("`rename_all` with different rules for writing and reading"), "{err}");
}

/// A transparent struct is named by its path in apply configurations, as
/// enums and newtypes are: one the package's root cannot name is an error
/// at the type, not a path rustc cannot resolve in generated code.
#[test]
fn a_transparent_struct_the_root_cannot_name_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "mod inner {\n    use codegen_macros::ApiType;\n    use serde::{Deserialize, Serialize};\n\n    \
                 /// A tier.\n    \
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n    \
                 #[serde(transparent)]\n    \
                 pub struct Tier {\n        /// The name.\n        pub value: String,\n    }\n}\n";
    let err = try_generate(dir.path(), "    /// Tier.\n    pub tier: inner::Tier,", extra).expect_err("unreachable");
    assert!(err.contains("`Tier` is defined in module"), "{err}");
}
