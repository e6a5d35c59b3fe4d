//! The `crd` generator: one CustomResourceDefinition YAML per kind, every
//! version of the kind in one file, serialized from typed structs.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::schema::{JsonSchemaProps, SchemaBuilder, check_structural, resolve_path};
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
    pub served: bool,
    pub storage: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresources: Option<Subresources>,
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

/// Builds every CRD of the model; files go to `crd_dir`.
pub fn generate(model: &Model, crd_dir: &Path, header: Option<&str>, diags: &mut Diagnostics) -> Vec<GeneratedFile> {
    let mut out = Vec::new();
    for group in &model.groups {
        let mut by_kind: BTreeMap<&str, Vec<(&Version, &Kind)>> = BTreeMap::new();
        for v in &group.versions {
            for k in &v.kinds {
                by_kind.entry(&k.kind).or_default().push((v, k));
            }
        }
        for versions in by_kind.values() {
            if let Some(crd) = build(group, versions, diags) {
                let yaml = match to_yaml(&crd) {
                    Ok(y) => y,
                    Err(e) => {
                        diags.push(Diagnostic::error(format!(
                            "cannot serialize the CRD for `{}`: {e}",
                            crd.spec.names.kind
                        )));
                        continue;
                    }
                };
                let body = format!("---\n{yaml}");
                out.push(GeneratedFile {
                    path: crd_dir.join(format!("{}_{}.yaml", group.name, crd.spec.names.plural)),
                    contents: with_header(GENERATED_MARKER_YAML, "#", header, &body),
                });
            }
        }
    }
    out
}

/// The CRD as YAML (the writer of [`super::yaml`]: quoted wherever any
/// YAML reader could take a string for another type).
pub fn to_yaml(crd: &CustomResourceDefinition) -> Result<String, serde_json::Error> {
    Ok(super::yaml::to_string(&serde_json::to_value(crd)?))
}

/// The CRD of one kind across its versions.
pub fn build(
    group: &Group,
    versions: &[(&Version, &Kind)],
    diags: &mut Diagnostics,
) -> Option<CustomResourceDefinition> {
    let (_, first) = versions.first()?;
    let single = versions.len() == 1;
    let mut crd_versions = Vec::new();
    for (v, k) in versions {
        let schema = SchemaBuilder::new(v, diags).root(k);
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
            annotations: required_annotations(&group.name),
        },
        spec: CrdSpec {
            group: group.name.clone(),
            names: CrdNames {
                categories: first.categories.clone(),
                kind: first.kind.clone(),
                list_kind: first.list_kind.clone(),
                plural: first.plural.clone(),
                short_names: first.short_names.clone(),
                singular: first.singular.clone(),
            },
            scope: if first.namespaced { "Namespaced" } else { "Cluster" },
            versions: crd_versions,
        },
    })
}

/// Printer column and scale paths must exist in the schema.
fn check_columns(k: &Kind, schema: &JsonSchemaProps, diags: &mut Diagnostics) {
    for c in &k.print_columns {
        if !c.json_path.value.starts_with('.') {
            continue;
        }
        if resolve_path(schema, &c.json_path.value).is_none() {
            diags.push(
                Diagnostic::error(format!(
                    "printer column `{}` reads `{}`, which is not in the schema of `{}`",
                    c.name.value, c.json_path.value, k.kind
                ))
                .at(k.origin.with_span(c.json_path.span).location())
                .help("use the JSON names of the fields (after serde renames), e.g. `.spec.replicas`"),
            );
        }
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
            match resolve_path(schema, &path.value) {
                None => diags.push(
                    Diagnostic::error(format!(
                        "`{what}` points at `{}`, which is not in the schema of `{}`",
                        path.value, k.kind
                    ))
                    .at(loc)
                    .help("use the JSON names of the fields (after serde renames)"),
                ),
                Some(p) if p.type_.as_deref().is_some_and(|t| t != ty) => {
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
                Some(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod annotation_tests {
    use super::*;

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
