//! Import phase 1, read: CRD YAML files into checked [`Crd`] values, each
//! remembering the file and document it came from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::spots::{self, Spots};
use crate::diag::{Diagnostic, Diagnostics, Location, SourceFile};

/// Where a CRD came from: the file and the document in it.
#[derive(Clone, Debug)]
pub(crate) struct Provenance {
    /// The file, as the user named it, with its text.
    pub file: Arc<SourceFile>,
    /// 1-based document number in the file.
    pub document: usize,
    /// 1-based line where the document starts.
    pub line: usize,
    /// Where the document's nodes sit.
    pub spots: Arc<Spots>,
    /// The CRD's JSON pointer in the document: empty, or `/items/2` in a
    /// `List`.
    pub prefix: String,
}

impl Provenance {
    /// The CRD's first line, for diagnostics about the whole CRD.
    pub fn location(&self) -> Location {
        self.at("")
    }

    /// Where the node at `pointer` below the CRD (`spec/versions/0`) sits,
    /// or the nearest node above it that the file shows.
    pub fn at(&self, pointer: &str) -> Location {
        let full = if pointer.is_empty() { self.prefix.clone() } else { format!("{}/{pointer}", self.prefix) };
        let found = self.spots.find(&full);
        let (line, column) = found.unwrap_or((self.line, 0));
        let text = self.file.text.lines().nth(line.saturating_sub(1)).unwrap_or_default().to_string();
        let line_end = text.trim_end().chars().count().max(column + 1);
        // A key is marked as written (quoted or not); anything else to the
        // end of its line.
        let key = found.and_then(|_| {
            let last = spots::unsegment(full.rsplit('/').next()?);
            let at: String = text.chars().skip(column).collect();
            let quoted = at.starts_with(['"', '\'']);
            let plain = at.strip_prefix(['"', '\'']).unwrap_or(&at);
            plain.starts_with(last.as_str()).then(|| last.chars().count() + if quoted { 2 } else { 0 })
        });
        Location {
            file: self.file.path.clone(),
            line,
            column,
            end_line: line,
            end_column: key.map_or(line_end, |len| (column + len).min(line_end)),
            line_text: text,
        }
    }

    /// Whether the file has a node at `pointer` below the CRD.
    pub fn has(&self, pointer: &str) -> bool {
        self.spots.exact(&format!("{}/{pointer}", self.prefix))
    }

    /// `document 2 of crds.yaml`.
    pub fn describe(&self) -> String {
        format!("document {} of `{}`", self.document, self.file.path.display())
    }
}

/// One version of a CRD, as far as import reads it.
#[derive(Clone, Debug)]
pub(crate) struct CrdVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    pub deprecation_warning: Option<String>,
    /// `schema.openAPIV3Schema`.
    pub schema: Map<String, Value>,
    pub status_subresource: bool,
    /// `subresources.scale`: spec, status and selector paths.
    pub scale: Option<(String, String, Option<String>)>,
    /// `additionalPrinterColumns`, each an object.
    pub printer_columns: Vec<Map<String, Value>>,
    /// `selectableFields[*].jsonPath`.
    pub selectable_fields: Vec<String>,
}

/// A CustomResourceDefinition, checked for what import needs.
#[derive(Clone, Debug)]
pub(crate) struct Crd {
    pub provenance: Provenance,
    /// `metadata.name`.
    pub name: String,
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub singular: Option<String>,
    pub list_kind: Option<String>,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub annotations: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub versions: Vec<CrdVersion>,
    /// Parts of the document import does not carry over (JSON paths), for warnings.
    pub dropped: Vec<String>,
}

impl Crd {
    /// The JSON pointer below the CRD of an import path such as
    /// `spec.versions[v1].schema.openAPIV3Schema.spec.size`.
    pub fn pointer(&self, path: &str) -> String {
        let schemas: Vec<_> = self.versions.iter().map(|v| (v.name.as_str(), &v.schema)).collect();
        spots::pointer(path, &schemas)
    }

    /// Where the node of an import path sits in the file.
    pub fn at(&self, path: &str) -> Location {
        self.provenance.at(&self.pointer(path))
    }
}

/// Reads every file; errors for unreadable files, malformed YAML, CRDs
/// other than `apiextensions.k8s.io/v1` and files without a CRD. Other
/// objects (the Deployments and RBAC of an operator's bundle) are skipped,
/// each with a warning in `warnings`.
pub(crate) fn read(paths: &[PathBuf], diags: &mut Diagnostics, warnings: &mut Vec<Diagnostic>) -> Vec<Crd> {
    let mut out = Vec::new();
    for path in paths {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                diags.push(
                    Diagnostic::error(format!("cannot read `{}`: {e}", path.display()))
                        .help("pass CustomResourceDefinition YAML files"),
                );
                continue;
            }
        };
        let file = Arc::new(SourceFile::new(path.clone(), yaml_lines(&text)));
        let docs: Vec<Value> = match parse_documents(&file.text) {
            Ok(docs) => docs,
            Err((message, line, column)) => {
                let line_text = file.text.lines().nth(line.saturating_sub(1)).unwrap_or_default().to_string();
                let loc = Location {
                    file: file.path.clone(),
                    line: line.max(1),
                    column,
                    end_line: line.max(1),
                    end_column: column + 1,
                    line_text,
                };
                diags.push(
                    Diagnostic::error(format!("`{}` is not valid YAML: {message}", path.display())).at(loc).help(
                        "fix the YAML; `kubectl apply --dry-run=client -f <file>` shows what the API server would read",
                    ),
                );
                continue;
            }
        };
        let mut spots: Vec<Arc<Spots>> =
            spots::read(&file.text).unwrap_or_default().into_iter().map(Arc::new).collect();
        if spots.len() != docs.len() {
            spots = docs.iter().map(|_| Arc::default()).collect();
        }
        let mut starts = document_lines(&file.text);
        if starts.len() != docs.len() {
            // A stream the line scan misreads (`---` inside a block scalar): number the documents only.
            starts = (1..=docs.len()).map(|n| (n, 1)).collect();
        }
        let any = !docs.is_empty();
        let (mut crds, mut skipped) = (0, 0);
        for ((doc, (document, line)), spots) in docs.into_iter().zip(starts).zip(spots) {
            if doc.is_null() {
                continue;
            }
            // `kubectl get crds -o yaml` writes a `List` of them.
            let listed = str_at(&doc, &["kind"]) == Some("List") && str_at(&doc, &["apiVersion"]) == Some("v1");
            let docs: Vec<(String, Value)> = match doc {
                Value::Object(mut list) if listed => match list.remove("items") {
                    Some(Value::Array(items)) => {
                        items.into_iter().enumerate().map(|(i, item)| (format!("/items/{i}"), item)).collect()
                    }
                    _ => Vec::new(),
                },
                doc => vec![(String::new(), doc)],
            };
            for (prefix, doc) in docs {
                let provenance = Provenance { file: file.clone(), document, line, spots: spots.clone(), prefix };
                if let Some(kind) = other_object(&doc) {
                    warnings.push(
                        Diagnostic::warning(format!(
                            "{} is a {kind}, not a CustomResourceDefinition: skipped",
                            provenance.describe()
                        ))
                        .at(provenance.location()),
                    );
                    skipped += 1;
                    continue;
                }
                crds += 1;
                if let Some(crd) = check(doc, provenance, diags) {
                    out.push(crd);
                }
            }
        }
        if !any {
            diags.push(
                Diagnostic::error(format!("`{}` holds no YAML document", path.display()))
                    .at(file.start())
                    .help("pass CustomResourceDefinition YAML files"),
            );
        } else if crds == 0 && skipped > 0 {
            diags.push(
                Diagnostic::error(format!("`{}` holds no CustomResourceDefinition", path.display()))
                    .at(file.start())
                    .help("`kube-codegen import` reads `apiextensions.k8s.io/v1` CustomResourceDefinitions (other objects in a file with them are skipped)"),
            );
        }
    }
    out
}

/// `text` with YAML's line breaks (`\r\n`, and a `\r` alone) as `\n`, so
/// that the lines shown are the lines the YAML reader counts.
pub(crate) fn yaml_lines(text: &str) -> String {
    if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text.to_string() }
}

/// The YAML reader's options for `text`: no snippets in messages, and
/// limits on the amount of YAML that grow with the text. Its defaults hold
/// a whole stream to 250,000 nodes, less than `kubectl get crds -o yaml`
/// prints for a cluster with a few operators. The limits on aliases, which
/// guard against expansion bombs, and on nesting (64, which the reader's
/// recursion needs on a small stack) stay.
pub(crate) fn yaml_options(text: &str) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = budget.max_events.max(2 * text.len());
    budget.max_nodes = budget.max_nodes.max(text.len());
    budget.max_documents = budget.max_documents.max(text.len() / 4);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(text.len());
    serde_saphyr::options! { with_snippet: false, budget: Some(budget) }
}

/// The documents of a YAML stream, or the parser's message with a 1-based
/// line and 0-based column.
fn parse_documents(text: &str) -> Result<Vec<Value>, (String, usize, usize)> {
    let options = yaml_options(text);
    serde_saphyr::from_multiple_with_options::<Value>(text, options).map_err(|e| {
        let (line, column) =
            e.location().map_or((1, 0), |l| (l.line() as usize, (l.column() as usize).saturating_sub(1)));
        let message = e.to_string();
        // The message carries its own position; the diagnostic shows it.
        let message = message.split(" at line ").next().unwrap_or(&message).trim().to_string();
        (message, line, column)
    })
}

/// Where each non-empty document of a YAML stream starts: its number among
/// all documents (1-based, empty ones counted) and its first content line.
/// The YAML reader skips empty documents; these line up with what it returns.
fn document_lines(text: &str) -> Vec<(usize, usize)> {
    // (number, line, has content)
    let mut docs: Vec<(usize, usize, bool)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let marker = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        let content = !line.trim().is_empty() && !line.trim_start().starts_with('#') && line != "...";
        if marker {
            // A marker with content on its line (`--- !tag`, `--- a`) starts a non-empty document.
            let inline = line.len() > 3 && !line[3..].trim().is_empty() && !line[3..].trim().starts_with('#');
            docs.push((docs.len() + 1, i + 1, inline));
        } else if content {
            match docs.last_mut() {
                Some(last) if !last.2 => {
                    last.1 = i + 1;
                    last.2 = true;
                }
                Some(_) => {}
                None => docs.push((1, i + 1, true)),
            }
        }
    }
    docs.into_iter().filter(|d| d.2).map(|(n, line, _)| (n, line)).collect()
}

fn str_at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
        .unwrap_or_default()
}

/// Checks one document: a v1 CRD with names, a group and versions with schemas.
/// `Deployment (apps/v1)` for a Kubernetes object that is not a CRD of any
/// version; `None` for a CRD, and for what is no object (which [`check`]
/// reports).
fn other_object(doc: &Value) -> Option<String> {
    let api_version = str_at(doc, &["apiVersion"]).filter(|v| !v.is_empty())?;
    let kind = str_at(doc, &["kind"]).filter(|k| !k.is_empty())?;
    (kind != "CustomResourceDefinition").then(|| format!("`{kind}` (`{api_version}`)"))
}

fn check(doc: Value, provenance: Provenance, diags: &mut Diagnostics) -> Option<Crd> {
    let at = provenance.location();
    let what = provenance.describe();
    let api_version = str_at(&doc, &["apiVersion"]).unwrap_or("");
    let kind = str_at(&doc, &["kind"]).unwrap_or("");
    if kind != "CustomResourceDefinition" || !api_version.starts_with("apiextensions.k8s.io/") {
        let found = if doc.is_object() {
            format!("apiVersion `{api_version}`, kind `{kind}`")
        } else {
            "not a mapping".to_string()
        };
        diags.push(
            Diagnostic::error(format!("{what} is not a CustomResourceDefinition ({found})"))
                .at(at)
                .help("`kube-codegen import` reads `apiextensions.k8s.io/v1` CustomResourceDefinitions; remove other objects from the file or pass only CRD files"),
        );
        return None;
    }
    if api_version != "apiextensions.k8s.io/v1" {
        diags.push(
            Diagnostic::error(format!("{what} is an `{api_version}` CustomResourceDefinition"))
                .at(at)
                .help("only `apiextensions.k8s.io/v1` is read; the API server serves every CRD as v1: `kubectl get crd <name> -o yaml` gives it"),
        );
        return None;
    }
    let mut missing = Vec::new();
    let mut req = |path: &[&str]| {
        let v = str_at(&doc, path).filter(|s| !s.is_empty()).map(String::from);
        if v.is_none() {
            missing.push(path.join("."));
        }
        v.unwrap_or_default()
    };
    let group = req(&["spec", "group"]);
    let kind = req(&["spec", "names", "kind"]);
    let plural = req(&["spec", "names", "plural"]);
    let versions_v = doc.get("spec").and_then(|s| s.get("versions")).and_then(Value::as_array);
    if versions_v.is_none_or(Vec::is_empty) {
        missing.push("spec.versions".into());
    }
    let mut dropped = Vec::new();
    let mut versions = Vec::new();
    for (i, v) in versions_v.into_iter().flatten().enumerate() {
        let name = str_at(v, &["name"]).unwrap_or_default().to_string();
        let schema = v.get("schema").and_then(|s| s.get("openAPIV3Schema")).and_then(Value::as_object);
        let Some(schema) = schema else {
            missing.push(format!("spec.versions[{i}].schema.openAPIV3Schema"));
            continue;
        };
        if name.is_empty() {
            missing.push(format!("spec.versions[{i}].name"));
            continue;
        }
        let subresources = v.get("subresources");
        let scale = subresources.and_then(|s| s.get("scale")).map(|s| {
            (
                str_at(s, &["specReplicasPath"]).unwrap_or_default().to_string(),
                str_at(s, &["statusReplicasPath"]).unwrap_or_default().to_string(),
                str_at(s, &["labelSelectorPath"]).map(String::from),
            )
        });
        for key in v.as_object().into_iter().flat_map(|m| m.keys()) {
            if !matches!(
                key.as_str(),
                "name"
                    | "served"
                    | "storage"
                    | "deprecated"
                    | "deprecationWarning"
                    | "schema"
                    | "subresources"
                    | "additionalPrinterColumns"
                    | "selectableFields"
            ) {
                dropped.push(format!("spec.versions[{name}].{key}"));
            }
        }
        versions.push(CrdVersion {
            served: v.get("served").and_then(Value::as_bool).unwrap_or(true),
            storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
            deprecated: v.get("deprecated").and_then(Value::as_bool).unwrap_or(false),
            deprecation_warning: str_at(v, &["deprecationWarning"]).map(String::from),
            schema: schema.clone(),
            status_subresource: subresources.and_then(|s| s.get("status")).is_some(),
            scale,
            printer_columns: v
                .get("additionalPrinterColumns")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|c| c.as_object().cloned()).collect())
                .unwrap_or_default(),
            selectable_fields: v
                .get("selectableFields")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|f| str_at(f, &["jsonPath"]).map(String::from)).collect())
                .unwrap_or_default(),
            name,
        });
    }
    if !missing.is_empty() {
        diags.push(
            Diagnostic::error(format!(
                "{what} lacks {}",
                missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            ))
            .at(at)
            .help("a v1 CustomResourceDefinition names its group, kind and plural and gives every version a schema"),
        );
        return None;
    }
    // The names become Rust text (`group_name!("..")`, module and type
    // names): the API server's rules for them keep that text sound.
    let names = &doc["spec"]["names"];
    let mut bad = Vec::new();
    if !crate::ident::is_dns_subdomain(&group) || !group.contains('.') {
        bad.push((
            "spec/group",
            "`spec.group`",
            group.clone(),
            "a DNS subdomain with at least one dot (`example.com`)",
        ));
    }
    for (pointer, field, value) in [
        ("spec/names/plural", "`spec.names.plural`", Some(plural.as_str())),
        ("spec/names/singular", "`spec.names.singular`", str_at(names, &["singular"]).filter(|s| !s.is_empty())),
    ] {
        if let Some(v) = value.filter(|v| !crate::ident::is_dns_label(v)) {
            bad.push((pointer, field, v.to_string(), "a lowercase DNS label (`crontabs`)"));
        }
    }
    for (pointer, field, value) in [
        ("spec/names/kind", "`spec.names.kind`", Some(kind.as_str())),
        ("spec/names/listKind", "`spec.names.listKind`", str_at(names, &["listKind"]).filter(|s| !s.is_empty())),
    ] {
        if let Some(v) = value.filter(|v| !crate::ident::is_dns_label(&v.to_ascii_lowercase())) {
            bad.push((pointer, field, v.to_string(), "a name whose lowercase is a DNS label (`CronTab`)"));
        }
    }
    if !bad.is_empty() {
        for (pointer, field, value, want) in bad {
            diags.push(
                Diagnostic::error(format!("{field} of {what} is `{value}`, not {want}"))
                    .at(provenance.at(pointer))
                    .help("the API server refuses such a CRD; fix the name in the YAML"),
            );
        }
        return None;
    }
    let spec = &doc["spec"];
    for key in spec.as_object().into_iter().flat_map(|m| m.keys()) {
        // `conversion: {strategy: None}` is what the API server defaults to
        // (and writes back in `kubectl get -o yaml`).
        let default_conversion = key == "conversion" && spec[key] == serde_json::json!({"strategy": "None"});
        if !matches!(key.as_str(), "group" | "names" | "scope" | "versions") && !default_conversion {
            dropped.push(format!("spec.{key}"));
        }
    }
    let scope = str_at(spec, &["scope"]).unwrap_or("Namespaced");
    let names = &spec["names"];
    Some(Crd {
        name: str_at(&doc, &["metadata", "name"]).unwrap_or_default().to_string(),
        group,
        kind,
        plural,
        singular: str_at(names, &["singular"]).map(String::from),
        list_kind: str_at(names, &["listKind"]).map(String::from),
        short_names: strings(names.get("shortNames")),
        categories: strings(names.get("categories")),
        namespaced: scope != "Cluster",
        annotations: string_map(doc.get("metadata").and_then(|m| m.get("annotations"))),
        labels: string_map(doc.get("metadata").and_then(|m| m.get("labels"))),
        versions,
        dropped,
        provenance,
    })
}

/// The path as written in messages.
pub(crate) fn display(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_start_after_markers_or_at_content() {
        assert_eq!(document_lines("# c\n---\na: 1\n---\nb: 2\n"), [(1, 3), (2, 5)]);
        assert_eq!(document_lines("a: 1\n---\n# b\nb: 2\n"), [(1, 1), (2, 4)]);
        assert_eq!(document_lines("\n# x\na: 1\n"), [(1, 3)]);
        // Empty documents are skipped by the reader, and here.
        let text = "a: 1\n---\n---\nb: 2\n---\n";
        assert_eq!(document_lines(text), [(1, 1), (3, 4)]);
        assert_eq!(parse_documents(text).unwrap().len(), 2);
    }

    /// The reader's limits grow with the text: `kubectl get crds -o yaml`
    /// of a cluster with a few operators is a document of more than the
    /// 250,000 nodes its defaults allow.
    #[test]
    fn big_documents_are_read() {
        let big = format!("items:\n{}", "- {type: string, description: x}\n".repeat(60_000));
        assert_eq!(parse_documents(&big).map(|d| d.len()), Ok(1));
        // Aliases stay bounded: a billion laughs is refused.
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12u8 {
            let (name, previous) = ((b'a' + i) as char, (b'a' + i - 1) as char);
            bomb.push_str(&format!("{name}: &{name} [{}]\n", vec![format!("*{previous}"); 10].join(", ")));
        }
        assert!(parse_documents(&bomb).is_err());
    }

    /// Each CRD of a `kubectl get crds -o yaml` list is located at its own
    /// item, and its nodes below that.
    #[test]
    fn crds_of_a_list_have_their_own_lines() {
        let crds = read(&["tests/import/kubectl_list.yaml".into()], &mut Diagnostics::new(), &mut Vec::new());
        assert_eq!(crds.len(), 2);
        let text = std::fs::read_to_string("tests/import/kubectl_list.yaml").unwrap();
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
        for crd in &crds {
            let name_line = line_of(&format!("name: {}", crd.name));
            let first = crd.provenance.location().line;
            assert!(first < name_line && name_line - first < 10, "{}: {first} vs {name_line}", crd.name);
            assert_eq!(crd.at("spec.versions[v1]").line_text.trim(), "- name: v1", "{}", crd.name);
            assert!(crd.at("spec.versions[v1]").line > name_line, "{}", crd.name);
        }
    }

    /// A `\r` alone breaks a line for the YAML reader: the line numbers it
    /// gives are those of the text shown.
    #[test]
    fn carriage_returns_break_lines_as_yaml_reads_them() {
        let text = yaml_lines("a: 1\rb: [1, 2\r\nc: 3\rd: 4\r");
        assert_eq!(text, "a: 1\nb: [1, 2\nc: 3\nd: 4\n");
        let (_, line, _) = parse_documents(&text).unwrap_err();
        assert!((2..=4).contains(&line), "the error is on a line the text has: {line}");
        let spots = super::spots::read("a: 1\rb: 2\r\nc: 3\r").unwrap();
        assert_eq!(spots[0].find("/c"), Some((3, 0)), "the reader counts a lone `\\r` as a line break");
    }

    #[test]
    fn names_are_checked_as_the_api_server_checks_them() {
        use crate::ident::{is_dns_label, is_dns_subdomain};
        assert!(is_dns_label("crontabs") && is_dns_label("a-1") && !is_dns_label("1a") && !is_dns_label("a-"));
        assert!(!is_dns_label("ab\"") && !is_dns_label("") && !is_dns_label(&"a".repeat(64)));
        assert!(is_dns_subdomain("stable.example.com") && !is_dns_subdomain("storcom\"") && !is_dns_subdomain("a..b"));
    }

    #[test]
    fn parse_errors_carry_a_line() {
        let (_, line, _) = parse_documents("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(line >= 2, "{line}");
    }
}
