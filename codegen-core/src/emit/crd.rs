//! The `crd` generator: one CustomResourceDefinition YAML per kind, every
//! version of the kind in one file, serialized from typed structs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::schema::{JsonSchemaProps, SchemaBuilder, SchemaOptions, Walk, check_structural, walk};
use super::yaml::{Emit, Emitter, Layout};
use crate::diag::{Diagnostic, Diagnostics};
use crate::model::{Group, Kind, Model, Version};
use crate::write::{GENERATED_MARKER_YAML, GeneratedFile, with_header};

/// apiextensions.k8s.io/v1 CustomResourceDefinition (the fields we emit).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct CustomResourceDefinition {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: CrdMetadata,
    pub spec: CrdSpec,
}

/// CRD object metadata.
#[derive(Debug, Serialize)]
#[allow(missing_docs)]
pub struct CrdMetadata {
    pub name: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// What every CRD of a run is built with.
#[derive(Clone, Debug)]
pub struct CrdOptions {
    /// Schema options (Kubernetes version of built-in types, embedded ObjectMeta).
    pub schema: SchemaOptions,
    /// Description cap (controller-gen's `crd:maxDescLen`).
    pub max_desc_len: Option<usize>,
}

impl CrdOptions {
    /// The options of a run.
    pub fn from_settings(settings: &crate::Settings) -> Self {
        CrdOptions { schema: SchemaOptions::from_settings(settings), max_desc_len: settings.max_desc_len }
    }
}

/// The annotation the API server requires on CRDs of groups under `k8s.io`
/// and `kubernetes.io` (KEP 1111).
pub const API_APPROVED: &str = "api-approved.kubernetes.io";

/// Annotations a CRD of `group` needs: groups under `k8s.io` and
/// `kubernetes.io` are protected, and the API server rejects their CRDs
/// without an approval annotation; kube-codegen marks them unapproved, as
/// the seed's `example.k8s.io` is.
pub fn required_annotations(group: &str) -> BTreeMap<String, String> {
    let protected = ["k8s.io", "kubernetes.io"].iter().any(|p| group == *p || group.ends_with(&format!(".{p}")));
    let mut annotations = BTreeMap::new();
    if protected {
        annotations.insert(API_APPROVED.to_owned(), "unapproved, experimental-only".to_owned());
    }
    annotations
}

/// CRD spec.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct CrdSpec {
    /// `spec.conversion`, from `#[resource(conversion_webhook(..))]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion: Option<Value>,
    pub group: String,
    pub names: CrdNames,
    pub scope: &'static str,
    pub versions: Vec<CrdVersion>,
}

/// CRD names.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct CrdNames {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    pub singular: String,
}

/// One served version.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct CrdVersion {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<PrinterColumn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    pub name: String,
    pub schema: CrdSchema,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<SelectableField>,
    pub served: bool,
    pub storage: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresources: Option<Subresources>,
}

/// A field that field selectors may use.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct SelectableField {
    pub json_path: String,
}

/// `schema.openAPIV3Schema`.
#[derive(Debug, Serialize)]
#[allow(missing_docs)]
pub struct CrdSchema {
    #[serde(rename = "openAPIV3Schema")]
    pub open_api_v3_schema: JsonSchemaProps,
}

/// An additional printer column.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct PrinterColumn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    pub json_path: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(rename = "type")]
    pub type_: String,
}

/// Subresources.
#[derive(Debug, Serialize)]
#[allow(missing_docs)]
pub struct Subresources {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleSubresource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Empty>,
}

/// The scale subresource.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct ScaleSubresource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
}

/// `{}`.
#[derive(Debug, Serialize)]
pub struct Empty {}

// The YAML of a CRD is written from these types directly, keys in byte
// order (the order `serde_json` and controller-gen sort them in); the
// `yaml_readers` test checks it reads back as their JSON.

/// Writes a list only when it has items (`skip_serializing_if = "Vec::is_empty"`).
fn non_empty<T: Emit>(e: &mut Emitter, key: &str, v: &Vec<T>) {
    if !v.is_empty() {
        e.entry(key, v);
    }
}

impl Emit for CustomResourceDefinition {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        e.entry("apiVersion", &self.api_version);
        e.entry("kind", &self.kind);
        e.entry("metadata", &self.metadata);
        e.entry("spec", &self.spec);
    }
}

impl Emit for CrdMetadata {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        if !self.annotations.is_empty() {
            e.entry("annotations", &self.annotations);
        }
        if !self.labels.is_empty() {
            e.entry("labels", &self.labels);
        }
        e.entry("name", &self.name);
    }
}

impl Emit for CrdSpec {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        e.opt("conversion", self.conversion.as_ref());
        e.entry("group", &self.group);
        e.entry("names", &self.names);
        e.entry("scope", &self.scope);
        e.entry("versions", &self.versions);
    }
}

impl Emit for CrdNames {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        non_empty(e, "categories", &self.categories);
        e.entry("kind", &self.kind);
        e.entry("listKind", &self.list_kind);
        e.entry("plural", &self.plural);
        non_empty(e, "shortNames", &self.short_names);
        e.entry("singular", &self.singular);
    }
}

impl Emit for CrdVersion {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        non_empty(e, "additionalPrinterColumns", &self.additional_printer_columns);
        e.opt("deprecated", self.deprecated.as_ref());
        e.opt("deprecationWarning", self.deprecation_warning.as_ref());
        e.entry("name", &self.name);
        e.entry("schema", &self.schema);
        non_empty(e, "selectableFields", &self.selectable_fields);
        e.entry("served", &self.served);
        e.entry("storage", &self.storage);
        e.opt("subresources", self.subresources.as_ref());
    }
}

impl Emit for SelectableField {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        e.entry("jsonPath", &self.json_path);
    }
}

impl Emit for CrdSchema {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        e.entry("openAPIV3Schema", &self.open_api_v3_schema);
    }
}

impl Emit for PrinterColumn {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        e.opt("description", self.description.as_ref());
        e.opt("format", self.format.as_ref());
        e.entry("jsonPath", &self.json_path);
        e.entry("name", &self.name);
        e.opt("priority", self.priority.as_ref());
        e.entry("type", &self.type_);
    }
}

impl Emit for Subresources {
    fn layout(&self) -> Layout {
        if self.scale.is_none() && self.status.is_none() { Layout::Inline } else { Layout::Map }
    }
    fn emit(&self, e: &mut Emitter) {
        if self.layout() == Layout::Inline {
            return e.raw("{}");
        }
        e.opt("scale", self.scale.as_ref());
        e.opt("status", self.status.as_ref());
    }
}

impl Emit for ScaleSubresource {
    fn layout(&self) -> Layout {
        Layout::Map
    }
    fn emit(&self, e: &mut Emitter) {
        e.opt("labelSelectorPath", self.label_selector_path.as_ref());
        e.entry("specReplicasPath", &self.spec_replicas_path);
        e.entry("statusReplicasPath", &self.status_replicas_path);
    }
}

impl Emit for Empty {
    fn layout(&self) -> Layout {
        Layout::Inline
    }
    fn emit(&self, e: &mut Emitter) {
        e.raw("{}")
    }
}

/// etcd's default `--max-request-bytes` (1.5 MiB): the largest object the
/// API server can store.
const ETCD_REQUEST_LIMIT: usize = 1_572_864;

/// Builds every CRD of the model; files go to `crd_dir`.
pub fn generate(
    model: &Model,
    options: &CrdOptions,
    crd_dir: &Path,
    header: Option<&str>,
    diags: &mut Diagnostics,
) -> Vec<GeneratedFile> {
    // Schemas are built here (the model is not `Sync`) while a second thread
    // writes the YAML of the previous CRD and frees it: on two cores the
    // two halves overlap. The writer recurses as deep as a schema nests, so
    // it gets the engine's stack; if it cannot be spawned, this thread
    // writes each CRD itself.
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(PathBuf, CustomResourceDefinition, Where)>(2);
        let writer = std::thread::Builder::new().stack_size(crate::ENGINE_STACK).spawn_scoped(scope, move || {
            let mut yaml = YamlFiles::new(header);
            rx.into_iter().map(|(path, crd, kind)| yaml.file(path, &crd, &kind)).collect::<Vec<_>>()
        });
        let mut here = (YamlFiles::new(header), Vec::new());
        {
            let mut emit = |path: PathBuf, crd: CustomResourceDefinition, kind: Where| match &writer {
                Ok(_) => tx.send((path, crd, kind)).is_ok(),
                Err(_) => {
                    here.1.push(here.0.file(path, &crd, &kind));
                    true
                }
            };
            'groups: for group in &model.groups {
                let mut by_kind: BTreeMap<&str, Vec<(&Version, &Kind)>> = BTreeMap::new();
                for v in &group.versions {
                    for k in v.kinds.iter().filter(|k| !k.skip_crd) {
                        by_kind.entry(&k.kind).or_default().push((v, k));
                    }
                }
                for versions in by_kind.values() {
                    if let Some(crd) = build(model, group, versions, options, diags) {
                        let path = crd_dir.join(format!("{}_{}.yaml", group.name, crd.spec.names.plural));
                        let kind = Where { kind: versions[0].1.kind.clone(), at: versions[0].1.origin.location() };
                        if !emit(path, crd, kind) {
                            break 'groups;
                        }
                    }
                }
            }
        }
        drop(tx);
        let files = match writer {
            Ok(writer) => writer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => here.1,
        };
        files
            .into_iter()
            .map(|(file, too_large)| {
                if let Some(warning) = too_large {
                    diags.push(warning);
                }
                file
            })
            .collect()
    })
}

/// The kind a CRD is of, and where it is written, for a warning.
struct Where {
    kind: String,
    at: crate::diag::Location,
}

/// Renders CRDs into files, each buffer sized for the largest so far.
struct YamlFiles<'a> {
    header: Option<&'a str>,
    capacity: usize,
}

impl<'a> YamlFiles<'a> {
    fn new(header: Option<&'a str>) -> Self {
        YamlFiles { header, capacity: 1 << 16 }
    }

    /// The CRD's file, and a warning if it is too large for etcd. Its size
    /// as JSON (what the API server stores) is counted only for a large
    /// YAML text, which is never less than about four fifths of the JSON.
    fn file(
        &mut self,
        path: PathBuf,
        crd: &CustomResourceDefinition,
        kind: &Where,
    ) -> (GeneratedFile, Option<Diagnostic>) {
        let file = self.yaml(path, crd);
        let json = if file.contents.len() > ETCD_REQUEST_LIMIT / 2 {
            serde_json::to_vec(crd).map_or(0, |json| json.len())
        } else {
            0
        };
        let warning = (json > ETCD_REQUEST_LIMIT).then(|| {
            Diagnostic::warning(format!(
                "the CRD of `{}` is {json} bytes as JSON, over etcd's request limit of {ETCD_REQUEST_LIMIT}: the API server cannot store it",
                kind.kind
            ))
            .at(kind.at.clone())
            .help("shorten its descriptions with `--max-desc-len N` (0 drops them)")
        });
        (file, warning)
    }

    fn yaml(&mut self, path: PathBuf, crd: &CustomResourceDefinition) -> GeneratedFile {
        let mut out = with_header(GENERATED_MARKER_YAML, "#", self.header, "---\n");
        out.reserve(self.capacity);
        let contents = super::yaml::append(out, crd);
        self.capacity = self.capacity.max(contents.len());
        GeneratedFile { path, contents }
    }
}

/// The CRD as YAML (the writer of [`super::yaml`]: quoted wherever any
/// YAML reader could take a string for another type).
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    super::yaml::to_string(crd)
}

/// The CRD of one kind across its versions.
pub fn build(
    model: &Model,
    group: &Group,
    versions: &[(&Version, &Kind)],
    options: &CrdOptions,
    diags: &mut Diagnostics,
) -> Option<CustomResourceDefinition> {
    let (_, first) = versions.first()?;
    let single = versions.len() == 1;
    let mut crd_versions = Vec::new();
    for (v, k) in versions {
        let mut schema = SchemaBuilder::new(model, v, &options.schema, diags).root(k);
        if let Some(max) = options.max_desc_len {
            truncate_descriptions(&mut schema, max);
        }
        check_structural(&schema, "", &k.origin, diags);
        check_columns(k, &schema, diags);
        crd_versions.push(CrdVersion {
            additional_printer_columns: k
                .print_columns
                .iter()
                .map(|c| PrinterColumn {
                    description: c.description.clone(),
                    format: c.format.as_ref().map(|f| f.value.clone()),
                    json_path: c.json_path.value.clone(),
                    name: c.name.value.clone(),
                    priority: c.priority,
                    type_: c.type_.value.clone(),
                })
                .collect(),
            deprecated: k.deprecated.as_ref().map(|_| true),
            deprecation_warning: k.deprecated.clone().flatten(),
            name: v.name.clone(),
            schema: CrdSchema { open_api_v3_schema: schema },
            selectable_fields: k
                .selectable_fields
                .iter()
                .map(|f| SelectableField { json_path: f.value.clone() })
                .collect(),
            served: k.served,
            storage: single || k.storage.is_some(),
            subresources: if k.status_subresource || k.scale.is_some() {
                Some(Subresources {
                    scale: k.scale.as_ref().map(|s| ScaleSubresource {
                        label_selector_path: s.label_selector_path.as_ref().map(|p| p.value.clone()),
                        spec_replicas_path: s.spec_replicas_path.value.clone(),
                        status_replicas_path: s.status_replicas_path.value.clone(),
                    }),
                    status: k.status_subresource.then_some(Empty {}),
                })
            } else {
                None
            },
        });
    }
    Some(CustomResourceDefinition {
        api_version: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: CrdMetadata {
            name: format!("{}.{}", first.plural, group.name),
            // Every version's markers count, as controller-gen applies
            // every version's (the checks refuse versions that disagree).
            annotations: {
                let mut a = required_annotations(&group.name);
                for (_, k) in versions {
                    a.extend(k.annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                a
            },
            labels: versions.iter().flat_map(|(_, k)| k.labels.iter().map(|(k, v)| (k.clone(), v.clone()))).collect(),
        },
        spec: CrdSpec {
            conversion: versions.iter().find_map(|(_, k)| k.conversion_webhook.as_ref()).map(|c| c.to_crd()),
            group: group.name.clone(),
            names: CrdNames {
                categories: versions
                    .iter()
                    .map(|(_, k)| &k.categories)
                    .find(|c| !c.is_empty())
                    .cloned()
                    .unwrap_or_default(),
                kind: first.kind.clone(),
                list_kind: first.list_kind.clone(),
                plural: first.plural.clone(),
                short_names: versions
                    .iter()
                    .map(|(_, k)| &k.short_names)
                    .find(|c| !c.is_empty())
                    .cloned()
                    .unwrap_or_default(),
                singular: first.singular.clone(),
            },
            scope: if first.namespaced { "Namespaced" } else { "Cluster" },
            versions: crd_versions,
        },
    })
}

/// Caps every description at `max` bytes the way controller-gen's
/// `crd:maxDescLen` does: cut, then back to the last sentence end, else to
/// the last whitespace with `...`; 0 drops descriptions.
pub fn truncate_descriptions(s: &mut JsonSchemaProps, max: usize) {
    if let Some(d) = s.description.take() {
        s.description = truncate(&d, max).map(Into::into);
    }
    for p in s.properties.iter_mut().flat_map(|p| Arc::make_mut(p).values_mut()) {
        truncate_descriptions(p, max);
    }
    for child in [s.items.as_mut(), s.additional_properties.as_mut()].into_iter().flatten() {
        truncate_descriptions(Arc::make_mut(child), max);
    }
}

/// Unicode's `Sentence_Terminal` characters (`.`, `!`, `?`, `。`, `।`,
/// `‼`, ...), the set controller-gen cuts descriptions back to (Go's
/// `unicode.STerm`), as inclusive ranges in order.
#[rustfmt::skip]
const SENTENCE_TERMINALS: &[(char, char)] = &[
    ('\u{21}', '\u{21}'), ('\u{2e}', '\u{2e}'), ('\u{3f}', '\u{3f}'), ('\u{589}', '\u{589}'),
    ('\u{61d}', '\u{61f}'), ('\u{6d4}', '\u{6d4}'), ('\u{700}', '\u{702}'), ('\u{7f9}', '\u{7f9}'),
    ('\u{837}', '\u{837}'), ('\u{839}', '\u{839}'), ('\u{83d}', '\u{83e}'), ('\u{964}', '\u{965}'),
    ('\u{104a}', '\u{104b}'), ('\u{1362}', '\u{1362}'), ('\u{1367}', '\u{1368}'), ('\u{166e}', '\u{166e}'),
    ('\u{1735}', '\u{1736}'), ('\u{1803}', '\u{1803}'), ('\u{1809}', '\u{1809}'), ('\u{1944}', '\u{1945}'),
    ('\u{1aa8}', '\u{1aab}'), ('\u{1b5a}', '\u{1b5b}'), ('\u{1b5e}', '\u{1b5f}'), ('\u{1b7d}', '\u{1b7e}'),
    ('\u{1c3b}', '\u{1c3c}'), ('\u{1c7e}', '\u{1c7f}'), ('\u{203c}', '\u{203d}'), ('\u{2047}', '\u{2049}'),
    ('\u{2e2e}', '\u{2e2e}'), ('\u{2e3c}', '\u{2e3c}'), ('\u{2e53}', '\u{2e54}'), ('\u{3002}', '\u{3002}'),
    ('\u{a4ff}', '\u{a4ff}'), ('\u{a60e}', '\u{a60f}'), ('\u{a6f3}', '\u{a6f3}'), ('\u{a6f7}', '\u{a6f7}'),
    ('\u{a876}', '\u{a877}'), ('\u{a8ce}', '\u{a8cf}'), ('\u{a92f}', '\u{a92f}'), ('\u{a9c8}', '\u{a9c9}'),
    ('\u{aa5d}', '\u{aa5f}'), ('\u{aaf0}', '\u{aaf1}'), ('\u{abeb}', '\u{abeb}'), ('\u{fe52}', '\u{fe52}'),
    ('\u{fe56}', '\u{fe57}'), ('\u{ff01}', '\u{ff01}'), ('\u{ff0e}', '\u{ff0e}'), ('\u{ff1f}', '\u{ff1f}'),
    ('\u{ff61}', '\u{ff61}'), ('\u{10a56}', '\u{10a57}'), ('\u{10f55}', '\u{10f59}'), ('\u{10f86}', '\u{10f89}'),
    ('\u{11047}', '\u{11048}'), ('\u{110be}', '\u{110c1}'), ('\u{11141}', '\u{11143}'), ('\u{111c5}', '\u{111c6}'),
    ('\u{111cd}', '\u{111cd}'), ('\u{111de}', '\u{111df}'), ('\u{11238}', '\u{11239}'), ('\u{1123b}', '\u{1123c}'),
    ('\u{112a9}', '\u{112a9}'), ('\u{1144b}', '\u{1144c}'), ('\u{115c2}', '\u{115c3}'), ('\u{115c9}', '\u{115d7}'),
    ('\u{11641}', '\u{11642}'), ('\u{1173c}', '\u{1173e}'), ('\u{11944}', '\u{11944}'), ('\u{11946}', '\u{11946}'),
    ('\u{11a42}', '\u{11a43}'), ('\u{11a9b}', '\u{11a9c}'), ('\u{11c41}', '\u{11c42}'), ('\u{11ef7}', '\u{11ef8}'),
    ('\u{11f43}', '\u{11f44}'), ('\u{16a6e}', '\u{16a6f}'), ('\u{16af5}', '\u{16af5}'), ('\u{16b37}', '\u{16b38}'),
    ('\u{16b44}', '\u{16b44}'), ('\u{16e98}', '\u{16e98}'), ('\u{1bc9f}', '\u{1bc9f}'), ('\u{1da88}', '\u{1da88}'),
];

fn sentence_terminal(c: char) -> bool {
    SENTENCE_TERMINALS
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

fn truncate(desc: &str, max: usize) -> Option<String> {
    if max == 0 {
        return None;
    }
    if desc.len() <= max {
        return Some(desc.to_string());
    }
    let mut end = max;
    while !desc.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &desc[..end];
    if let Some((i, c)) = cut.char_indices().rev().find(|(_, c)| sentence_terminal(*c))
        && i > 0
    {
        return Some(cut[..i + c.len_utf8()].to_string());
    }
    if let Some((i, _)) = cut.char_indices().rev().find(|(_, c)| c.is_whitespace())
        && i > 0
    {
        return Some(format!("{}...", &cut[..i]));
    }
    Some(format!("{cut}..."))
}

/// The diagnostic of a path that leaves the schema: which step, from
/// where, and the property it probably meant.
fn missing_step(what: String, prefix: &str, step: &str, candidates: &[String], k: &Kind) -> Diagnostic {
    let at = if prefix.is_empty() { "the root".to_string() } else { format!("`{prefix}`") };
    let d = Diagnostic::error(format!("{what}: `{step}` is not in {at} of the schema of `{}`", k.kind));
    let names: Vec<&str> = candidates.iter().map(String::as_str).collect();
    if step.starts_with('[') {
        return d.help(format!("`{}` is not a list; index lists only", if prefix.is_empty() { "." } else { prefix }));
    }
    match crate::ident::did_you_mean(step, &names) {
        Some(s) => d.help(format!("did you mean `{prefix}.{s}`? (paths use the JSON names of the fields)")),
        None if names.is_empty() => {
            d.help("use the JSON names of the fields (after serde renames), e.g. `.spec.replicas`")
        }
        None => d.help(format!("{at} has: {}", names.join(", "))),
    }
}

/// Printer column, selectable field and scale paths must exist in the schema.
fn check_columns(k: &Kind, schema: &JsonSchemaProps, diags: &mut Diagnostics) {
    for c in &k.print_columns {
        // The marker parser reported paths client-go cannot parse.
        let Ok(steps) = crate::jsonpath::parse_column_path(&c.json_path.value) else { continue };
        if let Walk::Missing { prefix, step, candidates } = walk(schema, &steps) {
            let what = format!("printer column `{}` reads `{}`", c.name.value, c.json_path.value);
            diags.push(
                missing_step(what, &prefix, &step, &candidates, k).at(k.origin.with_span(c.json_path.span).location()),
            );
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for f in &k.selectable_fields {
        let Ok(steps) = crate::jsonpath::parse_column_path(&f.value) else { continue };
        let loc = k.origin.with_span(f.span).location();
        if seen.contains(&f.value.as_str()) {
            diags.push(Diagnostic::error(format!("selectable field `{}` is listed twice", f.value)).at(loc.clone()));
        }
        seen.push(&f.value);
        if matches!(steps.first(), Some(crate::jsonpath::Node::Field(n)) if n == "metadata") {
            diags.push(
                Diagnostic::error(format!("selectable field `{}` points into metadata", f.value))
                    .at(loc)
                    .help("metadata.name and metadata.namespace are selectable already; select spec or status fields"),
            );
            continue;
        }
        match walk(schema, &steps) {
            Walk::Missing { prefix, step, candidates } => {
                let what = format!("selectable field `{}`", f.value);
                diags.push(missing_step(what, &prefix, &step, &candidates, k).at(loc));
            }
            Walk::Reached(node) if !matches!(node.type_.as_deref(), Some("string" | "boolean" | "integer")) => {
                diags.push(
                    Diagnostic::error(format!(
                        "selectable field `{}` is {}, not a string, boolean or integer",
                        f.value,
                        node.type_.as_deref().map_or("free-form".to_string(), |t| format!("of type {t}"))
                    ))
                    .at(loc)
                    .help("the API server selects on scalar fields only"),
                );
            }
            Walk::Unchecked => diags.push(
                Diagnostic::error(format!("selectable field `{}` leads into free-form data", f.value))
                    .at(loc)
                    .help("the API server needs a schema all the way to a scalar field"),
            ),
            Walk::Reached(_) => {}
        }
    }
    if seen.len() > MAX_SELECTABLE_FIELDS {
        diags.push(
            Diagnostic::error(format!(
                "`{}` has {} selectable fields; the API server allows {MAX_SELECTABLE_FIELDS}",
                k.kind,
                seen.len()
            ))
            .at(k.origin.location())
            .help(format!("keep at most {MAX_SELECTABLE_FIELDS} `selectable_field(..)` markers on the kind")),
        );
    }
    if let Some(s) = &k.scale {
        let checks = [
            (Some(&s.spec_replicas_path), ".spec.", "integer", "spec_replicas_path"),
            (Some(&s.status_replicas_path), ".status.", "integer", "status_replicas_path"),
            (s.label_selector_path.as_ref(), ".status.", "string", "label_selector_path"),
        ];
        for (path, prefix, ty, what) in checks {
            let Some(path) = path else { continue };
            let loc = k.origin.with_span(path.span).location();
            let selector_in_spec = what == "label_selector_path" && path.value.starts_with(".spec.");
            if !(path.value.starts_with(prefix) || selector_in_spec) {
                diags.push(
                    Diagnostic::error(format!("`{what}` must start with `{prefix}`, got `{}`", path.value))
                        .at(loc)
                        .help(format!(
                            "e.g. `{what} = \"{prefix}{}\"`",
                            if ty == "integer" { "replicas" } else { "selector" }
                        )),
                );
                continue;
            }
            let steps = match crate::jsonpath::parse_column_path(&path.value) {
                Ok(steps) => steps,
                Err(e) => {
                    diags.push(Diagnostic::error(format!("`{what}` is not a JSON path: {e}")).at(loc));
                    continue;
                }
            };
            match walk(schema, &steps) {
                Walk::Missing { prefix, step, candidates } => diags.push(
                    missing_step(format!("`{what}` points at `{}`", path.value), &prefix, &step, &candidates, k)
                        .at(loc),
                ),
                Walk::Reached(p) if p.type_.as_deref().is_some_and(|t| t != ty) => {
                    let article = |t: &str| if t.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                    let found = p.type_.as_deref().unwrap_or("?");
                    diags.push(
                        Diagnostic::error(format!(
                            "`{what}` points at `{}`, which is {} {found} ({} {ty} is needed)",
                            path.value,
                            article(found),
                            article(ty)
                        ))
                        .at(loc)
                        .help(format!("point it at {} {ty} field", article(ty))),
                    )
                }
                _ => {}
            }
        }
    }
}

/// The API server's limit on selectable fields per version.
const MAX_SELECTABLE_FIELDS: usize = 8;

#[cfg(test)]
mod annotation_tests {
    use super::*;

    #[test]
    fn descriptions_are_truncated_like_controller_gen() {
        assert_eq!(truncate("First sentence. Second one.", 20).as_deref(), Some("First sentence."));
        assert_eq!(truncate("no sentence end in reach", 12).as_deref(), Some("no sentence..."));
        assert_eq!(truncate("abcdefghij", 4).as_deref(), Some("abcd..."));
        assert_eq!(truncate("short", 10).as_deref(), Some("short"));
        assert_eq!(truncate("anything", 0), None);
        assert_eq!(truncate("héllo wörld", 3).as_deref(), Some("hé..."));
        // Every Unicode sentence terminal ends a sentence, kept whole.
        assert_eq!(truncate("Wait‼ Then more text", 12).as_deref(), Some("Wait‼"));
        assert_eq!(truncate("एक वाक्य। दूसरा", 30).as_deref(), Some("एक वाक्य।"));
        assert_eq!(truncate("学生的名字。第二句话", 20).as_deref(), Some("学生的名字。"));
    }

    #[test]
    fn protected_groups_are_marked_unapproved() {
        for group in ["example.k8s.io", "k8s.io", "x.kubernetes.io"] {
            assert_eq!(
                required_annotations(group).get(API_APPROVED).map(String::as_str),
                Some("unapproved, experimental-only"),
                "{group}"
            );
        }
        for group in ["stable.example.com", "notk8s.io", "auth.ilinux.io"] {
            assert!(required_annotations(group).is_empty(), "{group}");
        }
    }
}
