//! `#[resource(..)]`: CRD names, scope, versions, subresources and columns.

use proc_macro2::Span;
use syn::parse::Parser;
use syn::spanned::Spanned as _;
use syn::{Attribute, Meta, Token};

use super::*;

/// `#[resource(...)]`: CRD names, scope, versions, subresources and columns of a root type.
#[derive(Clone, Debug, Default)]
pub struct Resource {
    /// `kind = ".."` (default: the type name).
    pub kind: Option<Spanned<String>>,
    /// `plural = ".."` (default: client-go pluralization of the kind).
    pub plural: Option<Spanned<String>>,
    /// `singular = ".."` (default: lower-cased kind).
    pub singular: Option<Spanned<String>>,
    /// `short_names("..", ..)`.
    pub short_names: Option<Spanned<Vec<Spanned<String>>>>,
    /// `categories("..", ..)`.
    pub categories: Option<Spanned<Vec<Spanned<String>>>>,
    /// `list_kind = ".."` (default: `<Kind>List`).
    pub list_kind: Option<Spanned<String>>,
    /// `scope = "Namespaced" | "Cluster"`.
    pub scope: Option<Spanned<String>>,
    /// `subresource(status)`.
    pub status: Option<Span>,
    /// `subresource(scale(..))`.
    pub scale: Option<Scale>,
    /// `printcolumn(..)`, repeatable.
    pub print_columns: Vec<PrintColumn>,
    /// `storage`: this version is the storage version.
    pub storage: Option<Span>,
    /// `served = false`.
    pub served: Option<Spanned<bool>>,
    /// `deprecated` / `deprecated = "warning"`.
    pub deprecated: Option<Spanned<Option<String>>>,
    /// `annotations("key=value", ..)`: extra annotations of the CRD.
    pub annotations: Vec<(Spanned<String>, String)>,
    /// `labels("key=value", ..)`: labels of the CRD.
    pub labels: Vec<(Spanned<String>, String)>,
    /// `selectable_field(json_path = ".spec.x")`, repeatable.
    pub selectable_fields: Vec<Spanned<String>>,
    /// `conversion_webhook` / `conversion_webhook(..)`: the CRD converts
    /// between versions with a webhook.
    pub conversion_webhook: Option<super::ConversionWebhook>,
    /// `mutating_webhook` / `mutating_webhook(..)`: a defaulting webhook.
    pub mutating_webhook: Option<super::AdmissionWebhook>,
    /// `validating_webhook` / `validating_webhook(..)`: a validating webhook.
    pub validating_webhook: Option<super::AdmissionWebhook>,
    /// `skip_crd`: the kind is served by an aggregated API server (or is
    /// built in), so everything but its CRD is generated.
    pub skip_crd: Option<Span>,
}

/// `subresource(scale(spec_replicas_path = .., status_replicas_path = .., label_selector_path = ..))`.
#[derive(Clone, Debug)]
pub struct Scale {
    /// `.spec.replicas`-style path.
    pub spec_replicas_path: Spanned<String>,
    /// `.status.replicas`-style path.
    pub status_replicas_path: Spanned<String>,
    /// Optional `.status.selector`-style path.
    pub label_selector_path: Option<Spanned<String>>,
    /// The whole `scale(..)`.
    pub span: Span,
}

/// `printcolumn(name = .., type = .., json_path = .., description = .., format = .., priority = ..)`.
#[derive(Clone, Debug)]
pub struct PrintColumn {
    /// Column header.
    pub name: Spanned<String>,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: Spanned<String>,
    /// JSONPath into the object, e.g. `.spec.replicas`.
    pub json_path: Spanned<String>,
    /// Description.
    pub description: Option<String>,
    /// OpenAPI format.
    pub format: Option<Spanned<String>>,
    /// Priority (0 = shown by default).
    pub priority: Option<i32>,
    /// The whole `printcolumn(..)`.
    pub span: Span,
}

/// All `#[resource(..)]` keys.
pub const RESOURCE_KEYS: &[&str] = &[
    "kind",
    "plural",
    "singular",
    "short_names",
    "categories",
    "list_kind",
    "scope",
    "subresource",
    "printcolumn",
    "storage",
    "served",
    "deprecated",
    "annotations",
    "labels",
    "selectable_field",
    "conversion_webhook",
    "mutating_webhook",
    "validating_webhook",
    "skip_crd",
];

/// Parses one `#[resource(...)]` attribute into `out` (several attributes merge).
pub fn parse_resource_attr(attr: &Attribute, out: &mut Resource) -> Result<(), Vec<MarkerError>> {
    let mut errors = Errors::new();
    match &attr.meta {
        Meta::List(list) if let Err(e) = super::check_nesting(&list.tokens, attr.span()) => errors.push(e),
        Meta::List(list) => {
            let parser = syn::meta::parser(|meta| resource_key(out, &mut errors, meta));
            if let Err(e) = parser.parse2(list.tokens.clone()) {
                errors.extend(MarkerError::from_syn(e));
            }
        }
        _ => errors.push(
            MarkerError::new(attr.span(), "`resource` needs arguments")
                .help("e.g. `#[resource(plural = \"students\", short_names(\"stu\"))]`"),
        ),
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

fn resource_key(out: &mut Resource, errors: &mut Errors, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
    let key = path_key(&meta.path);
    let span = meta.path.span();
    match key.as_str() {
        "kind" | "plural" | "singular" | "list_kind" | "scope" => {
            let v = lit_str(&meta)?;
            let slot = match key.as_str() {
                "kind" => &mut out.kind,
                "plural" => &mut out.plural,
                "singular" => &mut out.singular,
                "list_kind" => &mut out.list_kind,
                _ => &mut out.scope,
            };
            if key == "scope" && v.value != "Namespaced" && v.value != "Cluster" {
                errors.push(
                    MarkerError::new(v.span, format!("unknown scope `{}`", v.value))
                        .help("scope is \"Namespaced\" or \"Cluster\""),
                );
            }
            set_once(slot, v, &key, errors);
        }
        "short_names" | "categories" => {
            let list = str_list(&meta)?;
            let slot = if key == "short_names" { &mut out.short_names } else { &mut out.categories };
            set_once(slot, Spanned::new(list, span), &key, errors);
        }
        "subresource" => {
            meta.parse_nested_meta(|sub| {
                let name = path_key(&sub.path);
                match name.as_str() {
                    "status" => flag(&mut out.status, &sub, "subresource(status)", errors)?,
                    "scale" => {
                        if let Some(scale) = scale(&sub, errors)? {
                            if out.scale.is_some() {
                                errors.push(MarkerError::new(sub.path.span(), "duplicate `subresource(scale(..))`"));
                            }
                            out.scale = Some(scale);
                        }
                    }
                    _ => unknown_key(&sub, "subresource", &name, &["status", "scale"], errors, None)?,
                }
                Ok(())
            })?;
        }
        "selectable_field" => {
            let mut path = None;
            meta.parse_nested_meta(|m| {
                let key = path_key(&m.path);
                match key.as_str() {
                    "json_path" => set_once(&mut path, lit_str(&m)?, &key, errors),
                    _ => {
                        let hint = matches!(key.as_str(), "JSONPath" | "jsonPath" | "jsonpath" | "path")
                            .then_some("json_path");
                        unknown_key(&m, "selectable_field", &key, &["json_path"], errors, hint)?
                    }
                }
                Ok(())
            })?;
            match path {
                Some(p) => {
                    if let Err(e) = simple_field_path(&p.value) {
                        errors.push(e.into_marker_error(p.span));
                    } else {
                        out.selectable_fields.push(p);
                    }
                }
                None => errors.push(
                    MarkerError::new(span, "`selectable_field(..)` needs `json_path`")
                        .help("e.g. `selectable_field(json_path = \".spec.color\")`"),
                ),
            }
        }
        "printcolumn" => {
            if let Some(col) = print_column(&meta, errors)? {
                out.print_columns.push(col);
            }
        }
        "storage" => flag(&mut out.storage, &meta, &key, errors)?,
        "skip_crd" => flag(&mut out.skip_crd, &meta, &key, errors)?,
        "conversion_webhook" => {
            let webhook = super::conversion::parse(&meta, errors)?;
            set_once(&mut out.conversion_webhook, webhook, &key, errors);
        }
        "mutating_webhook" | "validating_webhook" => {
            let webhook = super::webhook::parse(&meta, &key, errors)?;
            let slot = if key == "mutating_webhook" { &mut out.mutating_webhook } else { &mut out.validating_webhook };
            set_once(slot, webhook, &key, errors);
        }
        "annotations" | "labels" => {
            for entry in str_list(&meta)? {
                match entry.value.split_once('=') {
                    Some((k, v)) if !k.trim().is_empty() => {
                        let slot = if key == "annotations" { &mut out.annotations } else { &mut out.labels };
                        if slot.iter().any(|(prev, _)| prev.value == k.trim()) {
                            errors.push(MarkerError::new(entry.span, format!("duplicate {key} key `{}`", k.trim())));
                        }
                        slot.push((Spanned::new(k.trim().to_string(), entry.span), v.trim().to_string()));
                    }
                    _ => errors.push(
                        MarkerError::new(entry.span, format!("`{}` is not `key=value`", entry.value))
                            .help(format!("write e.g. `{key}(\"example.com/owner=team-a\")`")),
                    ),
                }
            }
        }
        "served" => {
            let v = bool_value(&meta)?;
            set_once(&mut out.served, v, &key, errors);
        }
        "deprecated" => {
            let v = if meta.input.peek(Token![=]) {
                let s = lit_str(&meta)?;
                Spanned::new(Some(s.value), span)
            } else {
                Spanned::new(None, span)
            };
            set_once(&mut out.deprecated, v, &key, errors);
        }
        _ => {
            let hint = match key.as_str() {
                "shortNames" | "shortname" | "short_name" | "shortName" => Some("short_names"),
                "listKind" => Some("list_kind"),
                "path" => Some("plural"),
                "category" => Some("categories"),
                "status" => Some("subresource(status)"),
                "scale" => Some("subresource(scale(..))"),
                "storageversion" => Some("storage"),
                "annotation" | "metadata" => Some("annotations"),
                "label" => Some("labels"),
                "selectablefield" | "selectableField" | "selectable_fields" => Some("selectable_field"),
                "conversion" | "webhookconversion" | "conversionWebhook" => Some("conversion_webhook"),
                "webhook" | "defaulting_webhook" | "defaulter" | "mutating" => Some("mutating_webhook"),
                "validation_webhook" | "validator" | "validating" => Some("validating_webhook"),
                "skip" | "no_crd" | "nocrd" | "skipcrd" | "skipCrd" | "aggregated" => Some("skip_crd"),
                _ => None,
            };
            unknown_key(&meta, "resource", &key, RESOURCE_KEYS, errors, hint)?
        }
    }
    Ok(())
}

fn scale(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<Option<Scale>> {
    let span = meta.path.span();
    let (mut spec, mut status, mut selector) = (None, None, None);
    const KEYS: &[&str] = &["spec_replicas_path", "status_replicas_path", "label_selector_path"];
    meta.parse_nested_meta(|m| {
        let key = path_key(&m.path);
        match key.as_str() {
            "spec_replicas_path" => set_once(&mut spec, lit_str(&m)?, &key, errors),
            "status_replicas_path" => set_once(&mut status, lit_str(&m)?, &key, errors),
            "label_selector_path" => set_once(&mut selector, lit_str(&m)?, &key, errors),
            _ => unknown_key(&m, "scale", &key, KEYS, errors, None)?,
        }
        Ok(())
    })?;
    match (spec, status) {
        (Some(spec_replicas_path), Some(status_replicas_path)) => {
            Ok(Some(Scale { spec_replicas_path, status_replicas_path, label_selector_path: selector, span }))
        }
        _ => {
            errors
                .push(MarkerError::new(span, "`scale(..)` needs `spec_replicas_path` and `status_replicas_path`").help(
                "e.g. `scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\")`",
            ));
            Ok(None)
        }
    }
}

fn print_column(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<Option<PrintColumn>> {
    let span = meta.path.span();
    let (mut name, mut type_, mut json_path, mut description, mut format, mut priority) =
        (None, None, None, None, None, None);
    const KEYS: &[&str] = &["name", "type", "json_path", "description", "format", "priority"];
    meta.parse_nested_meta(|m| {
        let key = path_key(&m.path);
        match key.as_str() {
            "name" => set_once(&mut name, lit_str(&m)?, &key, errors),
            "type" | "type_" => set_once(&mut type_, lit_str(&m)?, "type", errors),
            "json_path" => set_once(&mut json_path, lit_str(&m)?, &key, errors),
            "description" => set_once(&mut description, lit_str(&m)?, &key, errors),
            "format" => set_once(&mut format, lit_str(&m)?, &key, errors),
            "priority" => {
                let v = int_value(&m)?;
                let p = i32::try_from(v.value).map_err(|_| syn::Error::new(v.span, "priority out of range"))?;
                set_once(&mut priority, Spanned::new(p, v.span), &key, errors);
            }
            _ => {
                let hint = match key.as_str() {
                    "JSONPath" | "jsonPath" | "jsonpath" | "path" => Some("json_path"),
                    _ => None,
                };
                unknown_key(&m, "printcolumn", &key, KEYS, errors, hint)?
            }
        }
        Ok(())
    })?;
    let (Some(name), Some(type_), Some(json_path)) = (name, type_, json_path) else {
        errors.push(
            MarkerError::new(span, "`printcolumn(..)` needs `name`, `type` and `json_path`")
                .help("e.g. `printcolumn(name = \"School\", type = \"string\", json_path = \".spec.school\")`"),
        );
        return Ok(None);
    };
    const TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
    if !TYPES.contains(&type_.value.as_str()) {
        let mut e = MarkerError::new(type_.span, format!("unknown printer column type `{}`", type_.value));
        e = match did_you_mean(&type_.value, TYPES) {
            Some(s) => e.help(format!("did you mean `{s}`?")),
            None => e.help("column types are: integer, number, string, boolean, date"),
        };
        errors.push(e);
    }
    if !json_path.value.starts_with('.') {
        errors.push(
            MarkerError::new(json_path.span, format!("printer column path `{}` must start with `.`", json_path.value))
                .help(format!("write `json_path = \".{}\"`", json_path.value)),
        );
    } else if let Err(e) = crate::jsonpath::parse_column_path(&json_path.value) {
        errors.push(
            MarkerError::new(json_path.span, format!("printer column path `{}` is not valid JSONPath: {e}", json_path.value))
                .help("the API server parses it with client-go's JSONPath, e.g. `.status.conditions[?(@.type==\"Ready\")].status`"),
        );
    }
    Ok(Some(PrintColumn {
        name,
        type_,
        json_path,
        description: description.map(|d: Spanned<String>| d.value),
        format,
        priority: priority.map(|p: Spanned<i32>| p.value),
        span,
    }))
}

/// Why a selectable field path is not a simple field path.
struct PathError(String, &'static str);

impl PathError {
    fn into_marker_error(self, span: Span) -> MarkerError {
        MarkerError::new(span, self.0).help(self.1)
    }
}

/// A selectable field is a dot path of fields (no indexes, filters or
/// wildcards), as the API server requires.
fn simple_field_path(path: &str) -> Result<(), PathError> {
    use crate::jsonpath::Node;
    let help = "write a path of fields, e.g. `.spec.color`";
    if !path.starts_with('.') || path == "." {
        return Err(PathError(format!("selectable field path `{path}` must start with `.` and name a field"), help));
    }
    let steps = crate::jsonpath::parse_column_path(path)
        .map_err(|e| PathError(format!("selectable field path `{path}` is not valid JSONPath: {e}"), help))?;
    if let Some(bad) = steps.iter().find(|n| !matches!(n, Node::Field(f) if !f.is_empty())) {
        let what = match bad {
            Node::Array(_) | Node::Union(_) => "a list index",
            Node::Filter { .. } => "a filter",
            Node::Wildcard | Node::Recursive => "a wildcard",
            _ => "something other than a field name",
        };
        return Err(PathError(
            format!("selectable field path `{path}` has {what}; the API server allows fields only"),
            help,
        ));
    }
    Ok(())
}
