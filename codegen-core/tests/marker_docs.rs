//! Claims of docs/markers.md, docs/webhooks.md and docs/apply.md that no
//! other test pins down, through the whole engine: unserved versions,
//! subresources without a status, scale paths, the Go spellings of
//! `#[validate]` keys, the size limit of a marker's arguments, misspelled
//! marker attributes, webhook verbs, and how apply configurations merge
//! sets and list-maps.

use std::path::Path;

use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};

const MOD_RS: &str = "codegen_macros::group_name!(\"batch.example.com\");\n\nmod types;\npub use types::*;\n";

/// The source of a Task kind: `markers` above it, a `status` field when
/// `status` is set, `spec` the body of `TaskSpec`, `extra` more items.
fn types(markers: &str, status: bool, spec: &str, extra: &str) -> String {
    let (status_field, status_type) = if status {
        (
            "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub status: Option<TaskStatus>,\n",
            "/// What ran.\n\
             #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
             pub struct TaskStatus {\n    /// Replicas.\n    #[serde(default)]\n    pub replicas: i32,\n\
             \x20   /// Selector.\n    #[serde(default)]\n    pub selector: String,\n}\n",
        )
    } else {
        ("", "")
    };
    format!(
        "use codegen_macros::{{ApiType, genclient}};\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         /// A task.\n\
         #[genclient]\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         {markers}\n\
         pub struct Task {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: TaskSpec,\n{status_field}}}\n\n\
         /// What to run.\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct TaskSpec {{\n{spec}\n}}\n\n{status_type}\n{extra}\n"
    )
}

/// A spec with one field.
const SPEC: &str = "    /// The command.\n    pub command: String,";

/// Writes `versions` (name, types.rs) into `root/apis/batch` and runs
/// `generators`: the warnings, or the rendered diagnostics on failure.
fn run(root: &Path, versions: &[(&str, String)], generators: &[GeneratorKind]) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for (version, text) in versions {
        let dir = root.join("apis/batch").join(version);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mod.rs"), MOD_RS).unwrap();
        std::fs::write(dir.join("types.rs"), text).unwrap();
        names.push(*version);
    }
    let settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_apis_module("crate::apis")
        .with_generators(generators.iter().copied())
        .with_group(GroupVersions::parse(&format!("batch:{}", names.join(","))).unwrap());
    match codegen_core::run(&settings, Mode::Write) {
        Ok(report) => Ok(report.warnings.iter().map(|d| d.message.clone()).collect()),
        Err(diags) => Err(codegen_core::diag::render_all(&diags)),
    }
}

/// One version `v1` of `types.rs`, CRD generator only: the CRD, or the
/// rendered diagnostics.
fn crd(text: String) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &[("v1", text)], &[GeneratorKind::Crd])?;
    Ok(std::fs::read_to_string(dir.path().join("crd/batch.example.com_tasks.yaml")).unwrap())
}

/// The block of `rendered` (diagnostics are separated by blank lines)
/// whose first line is `first`.
fn diagnostic<'a>(rendered: &'a str, first: &str) -> &'a str {
    rendered
        .split("\n\n")
        .find(|block| block.lines().next() == Some(first))
        .unwrap_or_else(|| panic!("no `{first}` in:\n{rendered}"))
}

// ---- served = false ---------------------------------------------------------

#[test]
fn an_unserved_version_is_written_served_false_and_a_kind_served_nowhere_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let versions = [
        ("v1", types("#[resource(served = false)]", false, SPEC, "")),
        ("v2", types("#[resource(storage)]", false, SPEC, "")),
    ];
    run(dir.path(), &versions, &[GeneratorKind::Crd]).unwrap();
    let text = std::fs::read_to_string(dir.path().join("crd/batch.example.com_tasks.yaml")).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let served: Vec<(String, bool)> = doc["spec"]["versions"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap().to_owned(), v["served"].as_bool().unwrap()))
        .collect();
    assert_eq!(served, [("v1".to_owned(), false), ("v2".to_owned(), true)], "{text}");

    let dir = tempfile::tempdir().unwrap();
    let versions = [
        ("v1", types("#[resource(served = false)]", false, SPEC, "")),
        ("v2", types("#[resource(storage, served = false)]", false, SPEC, "")),
    ];
    let err = run(dir.path(), &versions, &[GeneratorKind::Crd]).unwrap_err();
    let block = diagnostic(&err, "error: kind `Task` is served in no version");
    assert!(block.contains("help: remove `served = false` from at least one version"), "{block}");
}

// ---- subresources -----------------------------------------------------------

#[test]
fn status_and_scale_subresources_need_a_status_field() {
    let scale = "#[resource(subresource(scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\")))]";
    let spec = "    /// Replicas.\n    pub replicas: i32,";
    let err = crd(types("#[resource(subresource(status))]", false, spec, "")).unwrap_err();
    diagnostic(&err, "error: `subresource(status)` on `Task`, which has no `status` field");
    let err = crd(types(scale, false, spec, "")).unwrap_err();
    diagnostic(&err, "error: `subresource(scale(..))` on `Task`, which has no `status` field");
    // With the field both are written.
    let both = format!("#[resource(subresource(status))]\n{scale}");
    let text = crd(types(&both, true, spec, "")).unwrap();
    assert!(text.contains("    subresources:\n      scale:\n"), "{text}");
    assert!(text.contains("      status: {}\n"), "{text}");
}

#[test]
fn scale_paths_start_with_spec_or_status() {
    let spec = "    /// Replicas.\n    pub replicas: i32,\n    /// Selector.\n    pub selector: String,";
    let scale = |spec_path: &str, status_path: &str, selector: &str| {
        format!(
            "#[resource(subresource(status, scale(spec_replicas_path = \"{spec_path}\", status_replicas_path = \"{status_path}\", label_selector_path = \"{selector}\")))]"
        )
    };
    let err = crd(types(&scale(".replicas", ".spec.replicas", ".metadata.name"), true, spec, "")).unwrap_err();
    diagnostic(&err, "error: `spec_replicas_path` must start with `.spec.`, got `.replicas`");
    diagnostic(&err, "error: `status_replicas_path` must start with `.status.`, got `.spec.replicas`");
    diagnostic(&err, "error: `label_selector_path` must start with `.status.`, got `.metadata.name`");
    // The selector may be in the spec or the status; it may be left out.
    for selector in [".spec.selector", ".status.selector"] {
        let text = crd(types(&scale(".spec.replicas", ".status.replicas", selector), true, spec, "")).unwrap();
        assert!(text.contains(&format!("labelSelectorPath: {selector}\n")), "{text}");
    }
    let no_selector = "#[resource(subresource(status, scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\")))]";
    let text = crd(types(no_selector, true, spec, "")).unwrap();
    assert!(text.contains("specReplicasPath: .spec.replicas\n") && !text.contains("labelSelectorPath"), "{text}");
    // Both replica paths are needed.
    let half = "#[resource(subresource(status, scale(spec_replicas_path = \".spec.replicas\")))]";
    let err = crd(types(half, true, spec, "")).unwrap_err();
    diagnostic(&err, "error: `scale(..)` needs `spec_replicas_path` and `status_replicas_path`");
}

// ---- Go spellings -----------------------------------------------------------

#[test]
fn go_spellings_of_validate_keys_name_the_rust_ones() {
    let spec = "    /// Rule.\n    #[validate(XValidation(rule = \"self.size() > 0\"))]\n    pub command: String,\n\
                \x20   /// Enum.\n    #[validate(Enum(\"a\", \"b\"))]\n    pub mode: String,";
    let err = crd(types("", false, spec, "")).unwrap_err();
    let block = diagnostic(&err, "error: unknown `validate` marker `XValidation`");
    assert!(block.ends_with("= help: did you mean `rule`?"), "{block}");
    let block = diagnostic(&err, "error: unknown `validate` marker `Enum`");
    assert!(block.ends_with("= help: did you mean `enum_values`?"), "{block}");
}

// ---- the size of marker arguments -------------------------------------------

const TOO_LONG: &str = "error: marker arguments too long or nested too deeply (a value of more than 48 tokens)";

/// `TaskSpec` with one field of type `ty` under `marker`.
fn field(marker: &str, ty: &str) -> String {
    format!("    /// The field.\n    #[validate({marker})]\n    pub value: {ty},")
}

#[test]
fn a_piece_of_marker_arguments_holds_at_most_48_tokens() {
    // `minimum`, `=`, then 47 tokens: 49.
    let long = format!("minimum = 1{}", " + 1".repeat(23));
    let err = crd(types("", false, &field(&long, "i32"), "")).unwrap_err();
    diagnostic(&err, TOO_LONG);
    // Brackets count with what they hold: `default`, `=` and n nested
    // lists around `1` are n + 3 tokens.
    let nested = |n: usize| format!("default = {}1{}", "[".repeat(n), "]".repeat(n));
    let err = crd(types("", false, &field(&nested(46), "Vec<i32>"), "")).unwrap_err();
    diagnostic(&err, TOO_LONG);
    // 48 tokens are read (and the default is then refused for its type).
    let err = crd(types("", false, &field(&nested(45), "Vec<i32>"), "")).unwrap_err();
    assert!(!err.contains(TOO_LONG), "{err}");
    // The same limit holds in `#[resource]`.
    let deep = format!("#[resource(short_names({}\"t\"{}))]", "(".repeat(50), ")".repeat(50));
    let err = crd(types(&deep, false, SPEC, "")).unwrap_err();
    diagnostic(&err, TOO_LONG);
}

#[test]
fn a_long_list_is_fine_its_items_count_one_by_one() {
    let values: Vec<String> = (0..300).map(|i| format!("\"v{i}\"")).collect();
    let marker = format!("enum_values({})", values.join(", "));
    let text = crd(types("", false, &field(&marker, "String"), "")).unwrap();
    assert!(text.contains("- v0\n") && text.contains("- v299\n"), "{text}");
}

// ---- misspelled marker attributes -------------------------------------------

#[test]
fn misspelled_marker_attributes_are_errors_on_any_type_and_api_variants() {
    // A type that is no API type.
    let extra = "/// A helper.\n#[resorce(short_names(\"h\"))]\npub struct Helper {\n    pub n: i32,\n}\n";
    let err = crd(types("", false, SPEC, extra)).unwrap_err();
    let block = diagnostic(&err, "error: unknown attribute `resorce`");
    assert!(block.ends_with("= help: did you mean `resource`? (see docs/markers.md)"), "{block}");
    // A variant of an API enum.
    let extra = "/// A mode.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub enum Mode {\n    /// Fast.\n    #[default]\n    #[validation(title = \"x\")]\n    Fast,\n    /// Slow.\n    Slow,\n}\n";
    let spec = "    /// The mode.\n    pub mode: Mode,";
    let err = crd(types("", false, spec, extra)).unwrap_err();
    let block = diagnostic(&err, "error: unknown attribute `validation`");
    assert!(block.ends_with("= help: did you mean `validate`? (see docs/markers.md)"), "{block}");
}

// ---- webhook verbs ----------------------------------------------------------

#[test]
fn webhook_verbs_ignore_case_and_spaces_and_keep_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let text = types("#[resource(validating_webhook(verbs = \"delete; Create\"))]", false, SPEC, "");
    run(dir.path(), &[("v1", text)], &[GeneratorKind::Crd]).unwrap();
    let manifests = std::fs::read_to_string(dir.path().join("webhook/manifests.yaml")).unwrap();
    assert!(manifests.contains("    operations:\n    - DELETE\n    - CREATE\n    resources:\n"), "{manifests}");
    // A verb given twice in two cases is given twice.
    let text = types("#[resource(validating_webhook(verbs = \"Create;create\"))]", false, SPEC, "");
    let err = crd(text).unwrap_err();
    diagnostic(&err, "error: webhook verb `create` given twice");
}

// ---- apply configurations: sets and list-maps --------------------------------

/// The apply configurations of version `v1` with `spec` and `extra`.
/// and those of `k8s_openapi::api::core::v1` (empty when none is used).
fn apply_configurations(spec: &str, extra: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &[("v1", types("", false, spec, extra))], &[GeneratorKind::ApplyConfig]).unwrap();
    let read = |path: &str| std::fs::read_to_string(dir.path().join("client/applyconfigurations").join(path));
    (read("batch/v1/mod.rs").unwrap(), read("k8s/api/core/v1/mod.rs").unwrap_or_default())
}

/// The builder of field `name` (from its doc comment to its end).
fn builder<'a>(code: &'a str, name: &str) -> &'a str {
    let start = code.find(&format!("pub fn with_{name}(")).unwrap_or_else(|| panic!("no with_{name}:\n{code}"));
    let doc = code[..start].rfind("///").unwrap();
    let end = start + code[start..].find("\n    }\n").unwrap();
    &code[doc..end]
}

#[test]
fn a_set_keeps_members_once_only_when_they_can_be_compared() {
    let enums = "/// A comparable mode.\n#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ApiType)]\npub enum Mode {\n    /// A.\n    A,\n    /// B.\n    B,\n}\n\n\
                 /// A mode without PartialEq.\n#[derive(Clone, Debug, Serialize, Deserialize, ApiType)]\npub enum Plain {\n    /// A.\n    A,\n    /// B.\n    B,\n}\n";
    let structs = "/// A pair with a comparable enum; no PartialEq of its own.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n#[validate(map_type = \"atomic\")]\npub struct Pair {\n    /// Name.\n    pub name: String,\n    /// Mode.\n    pub mode: Option<Mode>,\n}\n\n\
                   /// A pair with an enum that cannot be compared.\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]\n#[validate(map_type = \"atomic\")]\npub struct Loose {\n    /// Name.\n    pub name: String,\n    /// Plain.\n    pub plain: Option<Plain>,\n}\n";
    let spec = "    /// Tags.\n    #[validate(list_type = \"set\")]\n    pub tags: Vec<String>,\n\
                \x20   /// Labels.\n    pub labels: std::collections::BTreeSet<String>,\n\
                \x20   /// Sizes.\n    #[validate(list_type = \"set\")]\n    pub sizes: Vec<k8s_openapi::apimachinery::pkg::api::resource::Quantity>,\n\
                \x20   /// Modes.\n    #[validate(list_type = \"set\")]\n    pub modes: Vec<Mode>,\n\
                \x20   /// Pairs.\n    #[validate(list_type = \"set\")]\n    pub pairs: Vec<Pair>,\n\
                \x20   /// Plains.\n    #[validate(list_type = \"set\")]\n    pub plains: Vec<Plain>,\n\
                \x20   /// Looses.\n    #[validate(list_type = \"set\")]\n    pub looses: Vec<Loose>,";
    let (code, _) = apply_configurations(spec, &format!("{enums}\n{structs}"));
    for name in ["tags", "labels", "sizes", "modes", "pairs"] {
        let b = builder(&code, name);
        assert!(b.contains(&format!("/// Adds members to the set `{name}`, each once.")), "{b}");
        assert!(b.contains("merge_items("), "{b}");
    }
    for name in ["plains", "looses"] {
        let b = builder(&code, name);
        assert!(b.contains(&format!("/// Adds members to the set `{name}`.\n")), "{b}");
        assert!(!b.contains("merge_items("), "{b}");
    }
}

#[test]
fn a_list_map_replaces_items_only_when_its_keys_name_fields_of_the_items() {
    let extra = "/// A port.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub struct Port {\n    /// Name.\n    pub name: String,\n    /// Number.\n    pub number: i32,\n}\n\n\
                 /// An entry whose key comes from a flattened struct.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub struct Entry {\n    /// The id.\n    #[serde(flatten)]\n    pub id: Id,\n    /// Value.\n    pub value: String,\n}\n\n\
                 /// An id.\n#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\npub struct Id {\n    /// Name.\n    pub name: String,\n}\n";
    let spec = "    /// Ports.\n    #[validate(list_type = \"map\", list_map_keys(\"name\"))]\n    pub ports: Vec<Port>,\n\
                \x20   /// Entries.\n    #[validate(list_type = \"map\", list_map_keys(\"name\"))]\n    pub entries: Vec<Entry>,\n\
                \x20   /// Containers.\n    pub containers: Vec<k8s_openapi::api::core::v1::Container>,";
    let (code, core) = apply_configurations(spec, extra);
    let b = builder(&code, "ports");
    assert!(b.contains("an item with the keys (name) of an earlier one replaces it."), "{b}");
    assert!(b.contains("merge_items(") && b.contains("a.name == b.name"), "{b}");
    let b = builder(&code, "entries");
    assert!(b.contains("/// Adds items to `entries`.\n"), "{b}");
    assert!(!b.contains("merge_items("), "{b}");
    // A built-in list-map: the container's `ports` (keys containerPort, protocol).
    let b = builder(&core, "ports");
    assert!(b.contains("an item with the keys (containerPort, protocol) of an earlier one replaces it."), "{b}");
    assert!(b.contains("merge_items("), "{b}");
}

/// A set's items are atomic, as the API server requires: lists that are not
/// themselves `set` or `map` lists, structs and maps with `map_type =
/// "atomic"`. The rule reads the items as `items(..)` leaves them.
#[test]
fn set_items_are_atomic_after_their_own_markers() {
    let spec = |field: &str| format!("    /// A set.\n    #[serde(default)]\n    {field}");
    let ok = [
        "#[validate(list_type = \"set\")]\n    pub a: Vec<Vec<String>>,",
        "#[validate(list_type = \"set\", items(map_type = \"atomic\"))]\n    pub a: Vec<std::collections::BTreeMap<String, String>>,",
    ];
    for field in ok {
        let crd = crd(types("", false, &spec(field), "")).unwrap_or_else(|e| panic!("{field}: {e}"));
        assert!(crd.contains("x-kubernetes-list-type: set"), "{crd}");
    }
    let refused = [
        "#[validate(list_type = \"set\", items(list_type = \"set\"))]\n    pub a: Vec<Vec<String>>,",
        "#[validate(list_type = \"set\")]\n    pub a: Vec<std::collections::BTreeMap<String, String>>,",
    ];
    for field in refused {
        let err = crd(types("", false, &spec(field), "")).expect_err(field);
        assert!(err.contains("`list_type = \"set\"` on `a`, whose items are not atomic"), "{field}: {err}");
    }
}
