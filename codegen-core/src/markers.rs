//! The marker grammar: `#[genclient(..)]`, `#[resource(..)]`, `#[validate(..)]`
//! and `group_name!(..)`, parsed from syn attributes into plain structs.
//!
//! The proc-macro crate and the CLI call the very same functions, so a
//! misspelled key is a compile error in the user's crate and the same
//! message (with the same "did you mean") in the CLI. The reference page for
//! every key is `docs/markers.md`.

use proc_macro2::{Span, TokenStream};
use serde_json::{Number, Value};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, Meta, Token, UnOp};

use crate::ident::did_you_mean;

/// A value with the span of the marker that set it.
#[derive(Clone, Debug)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where the marker key was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a value with a span.
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// A marker problem at a span: what is wrong and how to fix it.
#[derive(Clone, Debug)]
pub struct MarkerError {
    /// Where.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl MarkerError {
    /// A new error.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        MarkerError { span, message: message.into(), help: None }
    }

    /// With a hint.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// As a `syn::Error` (for `compile_error!`), the hint folded into the message.
    pub fn to_syn_error(&self) -> syn::Error {
        let message = match &self.help {
            Some(help) => format!("{}\n\n= help: {help}", self.message),
            None => self.message.clone(),
        };
        syn::Error::new(self.span, message)
    }

    fn from_syn(err: syn::Error) -> Vec<MarkerError> {
        err.into_iter().map(|e| MarkerError::new(e.span(), e.to_string())).collect()
    }
}

/// Folds a list of marker errors into one `syn::Error`.
pub fn to_syn_error(errors: &[MarkerError]) -> Option<syn::Error> {
    let mut iter = errors.iter().map(MarkerError::to_syn_error);
    let mut first = iter.next()?;
    for e in iter {
        first.combine(e);
    }
    Some(first)
}

type Errors = Vec<MarkerError>;

/// A client-gen verb.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `create`
    Create,
    /// `update`
    Update,
    /// `update_status` (Go `updateStatus`)
    UpdateStatus,
    /// `delete`
    Delete,
    /// `delete_collection` (Go `deleteCollection`)
    DeleteCollection,
    /// `get`
    Get,
    /// `list`
    List,
    /// `watch`
    Watch,
    /// `patch`
    Patch,
    /// `apply`
    Apply,
    /// `apply_status` (Go `applyStatus`)
    ApplyStatus,
}

impl Verb {
    /// Every verb, in client-go's order.
    pub const ALL: [Verb; 11] = [
        Verb::Create,
        Verb::Update,
        Verb::UpdateStatus,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Patch,
        Verb::Apply,
        Verb::ApplyStatus,
    ];

    /// The marker spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::UpdateStatus => "update_status",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "delete_collection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Patch => "patch",
            Verb::Apply => "apply",
            Verb::ApplyStatus => "apply_status",
        }
    }

    /// Parses the marker spelling.
    pub fn parse(s: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.as_str() == s)
    }

    fn spellings() -> Vec<&'static str> {
        Verb::ALL.iter().map(|v| v.as_str()).collect()
    }
}

/// `#[genclient(...)]`: the client-gen tags of a root type.
#[derive(Clone, Debug, Default)]
pub struct GenClient {
    /// `no_status` (`+genclient:noStatus`).
    pub no_status: Option<Span>,
    /// `cluster_scoped` / `non_namespaced` (`+genclient:nonNamespaced`).
    pub cluster_scoped: Option<Span>,
    /// `no_verbs` (`+genclient:noVerbs`).
    pub no_verbs: Option<Span>,
    /// `only_verbs(..)` (`+genclient:onlyVerbs=`).
    pub only_verbs: Option<Spanned<Vec<Spanned<Verb>>>>,
    /// `skip_verbs(..)` (`+genclient:skipVerbs=`).
    pub skip_verbs: Option<Spanned<Vec<Spanned<Verb>>>>,
    /// `readonly` (`+genclient:readonly`).
    pub readonly: Option<Span>,
    /// `method(..)` (`+genclient:method=`), repeatable.
    pub methods: Vec<Method>,
    /// `group = ".."`: the API group for this type, overriding `group_name!`.
    pub group: Option<Spanned<String>>,
}

/// `method(name = "..", verb = "..", subresource = "..", input = "..", result = "..")`.
#[derive(Clone, Debug)]
pub struct Method {
    /// Rust method name (snake_case).
    pub name: Spanned<String>,
    /// The HTTP verb family.
    pub verb: Spanned<Verb>,
    /// Subresource, e.g. `scale`.
    pub subresource: Option<Spanned<String>>,
    /// Request body type (a Rust path), for create/update/apply.
    pub input: Option<Spanned<String>>,
    /// Response type (a Rust path).
    pub result: Option<Spanned<String>>,
    /// The whole `method(..)`.
    pub span: Span,
}

/// All `#[genclient(..)]` keys, for "did you mean".
pub const GENCLIENT_KEYS: &[&str] = &[
    "no_status",
    "cluster_scoped",
    "non_namespaced",
    "no_verbs",
    "only_verbs",
    "skip_verbs",
    "readonly",
    "method",
    "group",
];

const METHOD_KEYS: &[&str] = &["name", "verb", "subresource", "input", "result"];

/// Parses the arguments of `#[genclient(...)]` as an attribute macro sees them.
pub fn parse_genclient_args(args: TokenStream, span: Span) -> Result<GenClient, Vec<MarkerError>> {
    let mut out = GenClient::default();
    let mut errors = Errors::new();
    if !args.is_empty() {
        let parser = syn::meta::parser(|meta| genclient_key(&mut out, &mut errors, meta));
        if let Err(e) = parser.parse2(args) {
            errors.extend(MarkerError::from_syn(e));
        }
    }
    check_genclient(&out, span, &mut errors);
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// Parses a `#[genclient]` / `#[genclient(...)]` attribute found in a file.
pub fn parse_genclient_attr(attr: &Attribute) -> Result<GenClient, Vec<MarkerError>> {
    match &attr.meta {
        Meta::Path(_) => Ok(GenClient::default()),
        Meta::List(list) => parse_genclient_args(list.tokens.clone(), attr.span()),
        Meta::NameValue(nv) => Err(vec![
            MarkerError::new(nv.span(), "`genclient` takes no value")
                .help("write `#[genclient]` or `#[genclient(no_status, ...)]` (Go's `+genclient=<x>` is an error too)"),
        ]),
    }
}

fn genclient_key(out: &mut GenClient, errors: &mut Errors, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
    let key = path_key(&meta.path);
    let span = meta.path.span();
    match key.as_str() {
        "no_status" => flag(&mut out.no_status, &meta, &key, errors)?,
        "cluster_scoped" | "non_namespaced" => flag(&mut out.cluster_scoped, &meta, &key, errors)?,
        "no_verbs" => flag(&mut out.no_verbs, &meta, &key, errors)?,
        "readonly" => flag(&mut out.readonly, &meta, &key, errors)?,
        "only_verbs" | "skip_verbs" => {
            let verbs = verb_list(&meta, errors)?;
            let slot = if key == "only_verbs" { &mut out.only_verbs } else { &mut out.skip_verbs };
            set_once(slot, Spanned::new(verbs, span), &key, errors);
        }
        "group" => {
            let value = lit_str(&meta)?;
            set_once(&mut out.group, value, &key, errors);
        }
        "method" => {
            if let Some(m) = method(&meta, errors)? {
                out.methods.push(m);
            }
        }
        _ => unknown_key(&meta, "genclient", &key, GENCLIENT_KEYS, errors, go_genclient_hint(&key))?,
    }
    Ok(())
}

fn go_genclient_hint(key: &str) -> Option<&'static str> {
    match key {
        "noStatus" => Some("no_status"),
        "nonNamespaced" | "namespaced" | "cluster" => Some("cluster_scoped"),
        "noVerbs" => Some("no_verbs"),
        "onlyVerbs" => Some("only_verbs"),
        "skipVerbs" => Some("skip_verbs"),
        _ => None,
    }
}

fn verb_list(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<Vec<Spanned<Verb>>> {
    let mut verbs = Vec::new();
    meta.parse_nested_meta(|v| {
        let key = path_key(&v.path);
        match Verb::parse(&key) {
            Some(verb) => {
                if verbs.iter().any(|x: &Spanned<Verb>| x.value == verb) {
                    errors.push(MarkerError::new(v.path.span(), format!("verb `{key}` is listed twice")));
                }
                verbs.push(Spanned::new(verb, v.path.span()));
            }
            None => {
                let spellings = Verb::spellings();
                let mut e = MarkerError::new(v.path.span(), format!("unknown verb `{key}`"));
                e = match did_you_mean(&key, &spellings) {
                    Some(s) => e.help(format!("did you mean `{s}`?")),
                    None => e.help(format!("verbs are: {}", spellings.join(", "))),
                };
                errors.push(e);
            }
        }
        Ok(())
    })?;
    Ok(verbs)
}

fn method(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<Option<Method>> {
    let span = meta.path.span();
    let mut name: Option<Spanned<String>> = None;
    let mut verb: Option<Spanned<Verb>> = None;
    let mut subresource = None;
    let mut input = None;
    let mut result = None;
    meta.parse_nested_meta(|m| {
        let key = path_key(&m.path);
        match key.as_str() {
            "name" => {
                let v = lit_str(&m)?;
                set_once(&mut name, v, &key, errors);
            }
            "verb" => {
                let v = lit_str(&m)?;
                match Verb::parse(&v.value) {
                    Some(parsed) => set_once(&mut verb, Spanned::new(parsed, v.span), &key, errors),
                    None => {
                        let spellings = Verb::spellings();
                        let mut e = MarkerError::new(v.span, format!("unknown verb `{}`", v.value));
                        if let Some(s) = did_you_mean(&v.value, &spellings) {
                            e = e.help(format!("did you mean `{s}`?"));
                        }
                        errors.push(e);
                    }
                }
            }
            "subresource" => {
                let v = lit_str(&m)?;
                set_once(&mut subresource, v, &key, errors);
            }
            "input" => {
                let v = type_value(&m)?;
                set_once(&mut input, v, &key, errors);
            }
            "result" => {
                let v = type_value(&m)?;
                set_once(&mut result, v, &key, errors);
            }
            _ => unknown_key(&m, "method", &key, METHOD_KEYS, errors, None)?,
        }
        Ok(())
    })?;
    let Some(name) = name else {
        errors.push(
            MarkerError::new(span, "`method(..)` needs a `name`")
                .help("e.g. `method(name = \"get_scale\", verb = \"get\", subresource = \"scale\", result = \"k8s_openapi::api::autoscaling::v1::Scale\")`"),
        );
        return Ok(None);
    };
    let Some(verb) = verb else {
        errors.push(MarkerError::new(span, format!("`method(name = \"{}\")` needs a `verb`", name.value)).help(
            "one of: create, update, get, list, patch, apply",
        ));
        return Ok(None);
    };
    if !is_snake_ident(&name.value) {
        errors.push(
            MarkerError::new(name.span, format!("method name `{}` is not a snake_case Rust identifier", name.value))
                .help(format!("write `name = \"{}\"`", crate::ident::snake_case(&name.value))),
        );
    }
    // Same restrictions as client-gen's `+genclient:method`.
    let allowed = [Verb::Create, Verb::Update, Verb::Get, Verb::List, Verb::Patch, Verb::Apply];
    if !allowed.contains(&verb.value) {
        errors.push(
            MarkerError::new(verb.span, format!("verb `{}` cannot be used for an extra method", verb.value.as_str()))
                .help("extra methods may use: create, update, get, list, patch, apply"),
        );
    }
    if let Some(i) = &input
        && !matches!(verb.value, Verb::Create | Verb::Update | Verb::Apply)
    {
        errors.push(
            MarkerError::new(i.span, format!("`input` is only allowed for create, update and apply, not `{}`", verb.value.as_str()))
                .help("remove `input`; the request has no body"),
        );
    }
    Ok(Some(Method { name, verb, subresource, input, result, span }))
}

fn check_genclient(g: &GenClient, span: Span, errors: &mut Errors) {
    if let (Some(only), Some(skip)) = (&g.only_verbs, &g.skip_verbs) {
        for s in &skip.value {
            if only.value.iter().any(|o| o.value == s.value) {
                errors.push(
                    MarkerError::new(s.span, format!("verb `{}` is in both `only_verbs` and `skip_verbs`", s.value.as_str()))
                        .help("keep it in one of the two lists"),
                );
            }
        }
    }
    if let Some(nv) = g.no_verbs
        && (g.only_verbs.is_some() || g.skip_verbs.is_some() || g.readonly.is_some())
    {
        errors.push(
            MarkerError::new(nv, "`no_verbs` cannot be combined with `only_verbs`, `skip_verbs` or `readonly`")
                .help("`no_verbs` already removes every verb"),
        );
    }
    if let (Some(ro), Some(_)) = (g.readonly, &g.only_verbs) {
        errors.push(
            MarkerError::new(ro, "`readonly` cannot be combined with `only_verbs`")
                .help("`readonly` means `only_verbs(get, list, watch)`"),
        );
    }
    let _ = span;
}

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
];

/// Parses one `#[resource(...)]` attribute into `out` (several attributes merge).
pub fn parse_resource_attr(attr: &Attribute, out: &mut Resource) -> Result<(), Vec<MarkerError>> {
    let mut errors = Errors::new();
    match &attr.meta {
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
        "printcolumn" => {
            if let Some(col) = print_column(&meta, errors)? {
                out.print_columns.push(col);
            }
        }
        "storage" => flag(&mut out.storage, &meta, &key, errors)?,
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
        (Some(spec_replicas_path), Some(status_replicas_path)) => Ok(Some(Scale {
            spec_replicas_path,
            status_replicas_path,
            label_selector_path: selector,
            span,
        })),
        _ => {
            errors.push(
                MarkerError::new(span, "`scale(..)` needs `spec_replicas_path` and `status_replicas_path`")
                    .help("e.g. `scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\")`"),
            );
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

/// A CEL rule: `rule(rule = "..", message = "..", ..)`.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The CEL expression.
    pub rule: Spanned<String>,
    /// Message shown on failure.
    pub message: Option<String>,
    /// CEL expression producing the message.
    pub message_expression: Option<String>,
    /// `FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired` or `FieldValueDuplicate`.
    pub reason: Option<Spanned<String>>,
    /// JSON path of the field the error is reported on.
    pub field_path: Option<String>,
    /// Whether `oldSelf` may be absent.
    pub optional_old_self: Option<bool>,
}

/// `#[validate(...)]`: field (or type) validation markers.
#[derive(Clone, Debug, Default)]
pub struct Validate {
    /// `minimum = n`.
    pub minimum: Option<Spanned<Number>>,
    /// `maximum = n`.
    pub maximum: Option<Spanned<Number>>,
    /// `exclusive_minimum`.
    pub exclusive_minimum: Option<Spanned<bool>>,
    /// `exclusive_maximum`.
    pub exclusive_maximum: Option<Spanned<bool>>,
    /// `multiple_of = n`.
    pub multiple_of: Option<Spanned<Number>>,
    /// `min_length = n`.
    pub min_length: Option<Spanned<u64>>,
    /// `max_length = n`.
    pub max_length: Option<Spanned<u64>>,
    /// `pattern = "regex"`.
    pub pattern: Option<Spanned<String>>,
    /// `enum_values(..)`.
    pub enum_values: Option<Spanned<Vec<Value>>>,
    /// `format = ".."`.
    pub format: Option<Spanned<String>>,
    /// `min_items = n`.
    pub min_items: Option<Spanned<u64>>,
    /// `max_items = n`.
    pub max_items: Option<Spanned<u64>>,
    /// `unique_items` (accepted so it can be rejected with a hint).
    pub unique_items: Option<Span>,
    /// `min_properties = n`.
    pub min_properties: Option<Spanned<u64>>,
    /// `max_properties = n`.
    pub max_properties: Option<Spanned<u64>>,
    /// `required`.
    pub required: Option<Span>,
    /// `optional`.
    pub optional: Option<Span>,
    /// `default = literal` or `default_json = "json"`.
    pub default: Option<Spanned<Value>>,
    /// `nullable`.
    pub nullable: Option<Span>,
    /// `preserve_unknown_fields`.
    pub preserve_unknown_fields: Option<Span>,
    /// `int_or_string`.
    pub int_or_string: Option<Span>,
    /// `embedded_resource`.
    pub embedded_resource: Option<Span>,
    /// `rule(..)`, repeatable.
    pub rules: Vec<Rule>,
    /// `list_type = "atomic" | "set" | "map"`.
    pub list_type: Option<Spanned<String>>,
    /// `list_map_keys(..)`.
    pub list_map_keys: Option<Spanned<Vec<Spanned<String>>>>,
    /// `map_type = "atomic" | "granular"`.
    pub map_type: Option<Spanned<String>>,
    /// `items(..)`: markers applied to the elements of a list.
    pub items: Option<Box<Validate>>,
    /// The first `validate` key seen (for "markers on this field" errors).
    pub first_span: Option<Span>,
}

/// All `#[validate(..)]` keys.
pub const VALIDATE_KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusive_minimum",
    "exclusive_maximum",
    "multiple_of",
    "min_length",
    "max_length",
    "pattern",
    "enum_values",
    "format",
    "min_items",
    "max_items",
    "unique_items",
    "min_properties",
    "max_properties",
    "required",
    "optional",
    "default",
    "default_json",
    "nullable",
    "preserve_unknown_fields",
    "int_or_string",
    "embedded_resource",
    "rule",
    "list_type",
    "list_map_keys",
    "map_type",
    "items",
];

/// Formats the API server knows (apiextensions `supportedFormats`).
pub const FORMATS: &[&str] = &[
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3",
    "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor",
    "byte", "password", "date", "duration", "datetime", "date-time", "int32", "int64", "float",
    "double",
];

impl Validate {
    /// Whether no marker was given.
    pub fn is_empty(&self) -> bool {
        self.first_span.is_none()
    }
}

/// Parses one `#[validate(...)]` attribute into `out` (several attributes merge).
pub fn parse_validate_attr(attr: &Attribute, out: &mut Validate) -> Result<(), Vec<MarkerError>> {
    let mut errors = Errors::new();
    match &attr.meta {
        Meta::List(list) => {
            let parser = syn::meta::parser(|meta| validate_key(out, &mut errors, meta));
            if let Err(e) = parser.parse2(list.tokens.clone()) {
                errors.extend(MarkerError::from_syn(e));
            }
        }
        _ => errors.push(
            MarkerError::new(attr.span(), "`validate` needs arguments").help("e.g. `#[validate(minimum = 1, maximum = 65535)]`"),
        ),
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

fn validate_key(out: &mut Validate, errors: &mut Errors, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
    let key = path_key(&meta.path);
    let span = meta.path.span();
    if out.first_span.is_none() {
        out.first_span = Some(span);
    }
    match key.as_str() {
        "minimum" => set_once(&mut out.minimum, number_value(&meta)?, &key, errors),
        "maximum" => set_once(&mut out.maximum, number_value(&meta)?, &key, errors),
        "multiple_of" => {
            let v = number_value(&meta)?;
            if v.value.as_f64().is_some_and(|f| f <= 0.0) {
                errors.push(MarkerError::new(v.span, "`multiple_of` must be greater than 0"));
            }
            set_once(&mut out.multiple_of, v, &key, errors)
        }
        "exclusive_minimum" | "exclusive_maximum" => {
            let v = if meta.input.peek(Token![=]) { bool_value(&meta)? } else { Spanned::new(true, span) };
            let slot = if key == "exclusive_minimum" { &mut out.exclusive_minimum } else { &mut out.exclusive_maximum };
            set_once(slot, v, &key, errors);
        }
        "min_length" | "max_length" | "min_items" | "max_items" | "min_properties" | "max_properties" => {
            let v = int_value(&meta)?;
            let Ok(n) = u64::try_from(v.value) else {
                errors.push(MarkerError::new(v.span, format!("`{key}` must not be negative")));
                return Ok(());
            };
            let slot = match key.as_str() {
                "min_length" => &mut out.min_length,
                "max_length" => &mut out.max_length,
                "min_items" => &mut out.min_items,
                "max_items" => &mut out.max_items,
                "min_properties" => &mut out.min_properties,
                _ => &mut out.max_properties,
            };
            set_once(slot, Spanned::new(n, v.span), &key, errors);
        }
        "pattern" => set_once(&mut out.pattern, lit_str(&meta)?, &key, errors),
        "format" => {
            let v = lit_str(&meta)?;
            if !FORMATS.contains(&v.value.as_str()) {
                let mut e = MarkerError::new(v.span, format!("unknown format `{}`", v.value));
                e = match did_you_mean(&v.value, FORMATS) {
                    Some(s) => e.help(format!("did you mean `{s}`?")),
                    None => e.help(format!("the API server knows: {}", FORMATS.join(", "))),
                };
                errors.push(e);
            }
            set_once(&mut out.format, v, &key, errors);
        }
        "enum_values" => {
            let content;
            syn::parenthesized!(content in meta.input);
            let exprs = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
            let mut values = Vec::new();
            for e in &exprs {
                values.push(expr_to_json(e)?);
            }
            if values.is_empty() {
                errors.push(MarkerError::new(span, "`enum_values()` needs at least one value"));
            }
            set_once(&mut out.enum_values, Spanned::new(values, span), &key, errors);
        }
        "unique_items" => flag(&mut out.unique_items, &meta, &key, errors)?,
        "required" => flag(&mut out.required, &meta, &key, errors)?,
        "optional" => flag(&mut out.optional, &meta, &key, errors)?,
        "nullable" => flag(&mut out.nullable, &meta, &key, errors)?,
        "preserve_unknown_fields" => flag(&mut out.preserve_unknown_fields, &meta, &key, errors)?,
        "int_or_string" => flag(&mut out.int_or_string, &meta, &key, errors)?,
        "embedded_resource" => flag(&mut out.embedded_resource, &meta, &key, errors)?,
        "default" => {
            let expr: Expr = meta.value()?.parse()?;
            let v = expr_to_json(&expr)?;
            set_once(&mut out.default, Spanned::new(v, span), "default", errors);
        }
        "default_json" => {
            let s = lit_str(&meta)?;
            match serde_json::from_str::<Value>(&s.value) {
                Ok(v) => set_once(&mut out.default, Spanned::new(v, span), "default", errors),
                Err(e) => errors.push(MarkerError::new(s.span, format!("`default_json` is not valid JSON: {e}"))),
            }
        }
        "rule" => {
            if let Some(r) = rule(&meta, errors)? {
                out.rules.push(r);
            }
        }
        "list_type" => {
            let v = lit_str(&meta)?;
            if !["atomic", "set", "map"].contains(&v.value.as_str()) {
                errors.push(
                    MarkerError::new(v.span, format!("unknown list type `{}`", v.value)).help("list_type is \"atomic\", \"set\" or \"map\""),
                );
            }
            set_once(&mut out.list_type, v, &key, errors);
        }
        "map_type" => {
            let v = lit_str(&meta)?;
            if !["atomic", "granular"].contains(&v.value.as_str()) {
                errors.push(
                    MarkerError::new(v.span, format!("unknown map type `{}`", v.value)).help("map_type is \"atomic\" or \"granular\""),
                );
            }
            set_once(&mut out.map_type, v, &key, errors);
        }
        "list_map_keys" => {
            let list = str_list(&meta)?;
            set_once(&mut out.list_map_keys, Spanned::new(list, span), &key, errors);
        }
        "items" => {
            let mut inner = out.items.take().map(|b| *b).unwrap_or_default();
            meta.parse_nested_meta(|m| validate_key(&mut inner, errors, m))?;
            out.items = Some(Box::new(inner));
        }
        _ => {
            let hint = match key.as_str() {
                "min" => Some("minimum"),
                "max" => Some("maximum"),
                "enum" | "one_of" => Some("enum_values"),
                "XValidation" | "x_validation" | "cel" | "validation" => Some("rule"),
                "XIntOrString" => Some("int_or_string"),
                "XPreserveUnknownFields" | "schemaless" => Some("preserve_unknown_fields"),
                _ => None,
            };
            unknown_key(&meta, "validate", &key, VALIDATE_KEYS, errors, hint)?
        }
    }
    Ok(())
}

fn rule(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<Option<Rule>> {
    let span = meta.path.span();
    const KEYS: &[&str] = &["rule", "message", "message_expression", "reason", "field_path", "optional_old_self"];
    const REASONS: &[&str] = &["FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"];
    let (mut r, mut message, mut message_expression, mut reason, mut field_path, mut old) =
        (None, None, None, None, None, None);
    meta.parse_nested_meta(|m| {
        let key = path_key(&m.path);
        match key.as_str() {
            "rule" => set_once(&mut r, lit_str(&m)?, &key, errors),
            "message" => set_once(&mut message, lit_str(&m)?, &key, errors),
            "message_expression" => set_once(&mut message_expression, lit_str(&m)?, &key, errors),
            "reason" => {
                let v = lit_str(&m)?;
                if !REASONS.contains(&v.value.as_str()) {
                    let mut e = MarkerError::new(v.span, format!("unknown rule reason `{}`", v.value));
                    e = match did_you_mean(&v.value, REASONS) {
                        Some(s) => e.help(format!("did you mean `{s}`?")),
                        None => e.help(format!("reasons are: {}", REASONS.join(", "))),
                    };
                    errors.push(e);
                }
                set_once(&mut reason, v, &key, errors)
            }
            "field_path" => set_once(&mut field_path, lit_str(&m)?, &key, errors),
            "optional_old_self" => {
                let v = if m.input.peek(Token![=]) { bool_value(&m)? } else { Spanned::new(true, m.path.span()) };
                set_once(&mut old, v, &key, errors)
            }
            _ => {
                let hint = if key == "messageExpression" { Some("message_expression") } else { None };
                unknown_key(&m, "rule", &key, KEYS, errors, hint)?
            }
        }
        Ok(())
    })?;
    let Some(rule) = r else {
        errors.push(
            MarkerError::new(span, "`rule(..)` needs a `rule`").help("e.g. `rule(rule = \"self.min <= self.max\", message = \"min must not exceed max\")`"),
        );
        return Ok(None);
    };
    if rule.value.trim().is_empty() {
        errors.push(MarkerError::new(rule.span, "the CEL rule is empty"));
    }
    Ok(Some(Rule {
        rule,
        message: message.map(|m: Spanned<String>| m.value),
        message_expression: message_expression.map(|m: Spanned<String>| m.value),
        reason,
        field_path: field_path.map(|m: Spanned<String>| m.value),
        optional_old_self: old.map(|m: Spanned<bool>| m.value),
    }))
}

/// Parses the argument of `group_name!("example.k8s.io")` and checks it is a
/// valid CRD group (a lower-case DNS subdomain with at least one dot).
pub fn parse_group_name(tokens: TokenStream) -> Result<Spanned<String>, Vec<MarkerError>> {
    let lit: LitStr = match syn::parse2(tokens) {
        Ok(l) => l,
        Err(e) => {
            return Err(vec![
                MarkerError::new(e.span(), "`group_name!` takes one string literal")
                    .help("write `group_name!(\"example.k8s.io\");`"),
            ]);
        }
    };
    let value = lit.value();
    let valid_label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if value.is_empty() || !value.split('.').all(valid_label) || value.len() > 253 {
        return Err(vec![
            MarkerError::new(lit.span(), format!("`{value}` is not a valid API group"))
                .help("an API group is a lower-case DNS subdomain, e.g. \"example.k8s.io\""),
        ]);
    }
    if !value.contains('.') {
        return Err(vec![
            MarkerError::new(lit.span(), format!("API group `{value}` has no dot; the API server rejects such CRDs"))
                .help(format!("use a domain you own, e.g. \"{value}.example.com\"")),
        ]);
    }
    Ok(Spanned::new(value, lit.span()))
}

// ---- small value parsers --------------------------------------------------

fn path_key(path: &syn::Path) -> String {
    path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::")
}

fn is_snake_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn set_once<T>(slot: &mut Option<T>, value: T, key: &str, errors: &mut Errors)
where
    T: HasSpan,
{
    if slot.is_some() {
        errors.push(MarkerError::new(value.span(), format!("duplicate `{key}`")).help("remove one of the two"));
    } else {
        *slot = Some(value);
    }
}

trait HasSpan {
    fn span(&self) -> Span;
}

impl<T> HasSpan for Spanned<T> {
    fn span(&self) -> Span {
        self.span
    }
}

impl HasSpan for Span {
    fn span(&self) -> Span {
        *self
    }
}

fn flag(slot: &mut Option<Span>, meta: &syn::meta::ParseNestedMeta, key: &str, errors: &mut Errors) -> syn::Result<()> {
    let span = meta.path.span();
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        errors.push(MarkerError::new(span, format!("`{key}` takes no value")).help(format!("write just `{key}`")));
        skip_value(meta)?;
        return Ok(());
    }
    set_once(slot, span, key, errors);
    Ok(())
}

fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.input.parse::<Token![=]>()?;
        meta.input.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn unknown_key(
    meta: &syn::meta::ParseNestedMeta,
    marker: &str,
    key: &str,
    known: &[&str],
    errors: &mut Errors,
    alias: Option<&str>,
) -> syn::Result<()> {
    let mut e = MarkerError::new(meta.path.span(), format!("unknown `{marker}` marker `{key}`"));
    e = match alias.or_else(|| did_you_mean(key, known)) {
        Some(s) => e.help(format!("did you mean `{s}`?")),
        None => e.help(format!("`{marker}` accepts: {}", known.join(", "))),
    };
    errors.push(e);
    skip_value(meta)
}

fn lit_str(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<String>> {
    let span = meta.path.span();
    let value = meta.value().map_err(|_| {
        syn::Error::new(span, format!("`{}` needs a value: `{} = \"...\"`", path_key(&meta.path), path_key(&meta.path)))
    })?;
    let lit: LitStr = value.parse().map_err(|e| syn::Error::new(e.span(), "expected a string literal"))?;
    Ok(Spanned::new(lit.value(), lit.span()))
}

fn type_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<String>> {
    let value = meta.value()?;
    let (ty, span): (syn::Type, Span) = if value.peek(LitStr) {
        let lit: LitStr = value.parse()?;
        (lit.parse()?, lit.span())
    } else {
        let ty: syn::Type = value.parse()?;
        let span = ty.span();
        (ty, span)
    };
    Ok(Spanned::new(quote::ToTokens::to_token_stream(&ty).to_string().replace(' ', ""), span))
}

fn bool_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<bool>> {
    let value = meta.value()?;
    let lit: syn::LitBool = value.parse().map_err(|e| syn::Error::new(e.span(), "expected `true` or `false`"))?;
    Ok(Spanned::new(lit.value, lit.span))
}

fn int_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<i64>> {
    let value = meta.value()?;
    let expr: Expr = value.parse()?;
    match expr_to_json(&expr)? {
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let v = n.as_i64().ok_or_else(|| syn::Error::new(expr.span(), "integer out of range"))?;
            Ok(Spanned::new(v, expr.span()))
        }
        _ => Err(syn::Error::new(expr.span(), "expected an integer")),
    }
}

fn number_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<Number>> {
    let value = meta.value()?;
    let expr: Expr = value.parse()?;
    match expr_to_json(&expr)? {
        Value::Number(n) => Ok(Spanned::new(n, expr.span())),
        _ => Err(syn::Error::new(expr.span(), "expected a number")),
    }
}

fn str_list(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Vec<Spanned<String>>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let lits = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)
        .map_err(|e| syn::Error::new(e.span(), "expected a list of string literals, e.g. (\"a\", \"b\")"))?;
    Ok(lits.iter().map(|l| Spanned::new(l.value(), l.span())).collect())
}

/// A literal expression as JSON: strings, integers, floats, booleans,
/// negative numbers and `[..]` arrays of those.
pub fn expr_to_json(expr: &Expr) -> syn::Result<Value> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => match lit {
            Lit::Str(s) => Ok(Value::String(s.value())),
            Lit::Bool(b) => Ok(Value::Bool(b.value)),
            Lit::Int(i) => {
                let v: i64 = i.base10_parse()?;
                Ok(Value::Number(v.into()))
            }
            Lit::Float(f) => {
                let v: f64 = f.base10_parse()?;
                Number::from_f64(v).map(Value::Number).ok_or_else(|| syn::Error::new(f.span(), "not a finite number"))
            }
            other => Err(syn::Error::new(other.span(), "expected a string, number or boolean literal")),
        },
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr: inner, .. }) => match expr_to_json(inner)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Value::Number((-i).into()))
                } else {
                    let f = n.as_f64().unwrap_or_default();
                    Number::from_f64(-f).map(Value::Number).ok_or_else(|| syn::Error::new(expr.span(), "not a finite number"))
                }
            }
            _ => Err(syn::Error::new(expr.span(), "only numbers can be negated")),
        },
        Expr::Array(arr) => arr.elems.iter().map(expr_to_json).collect::<syn::Result<Vec<_>>>().map(Value::Array),
        Expr::Group(g) => expr_to_json(&g.expr),
        Expr::Paren(p) => expr_to_json(&p.expr),
        _ => Err(syn::Error::new(
            expr.span(),
            "expected a literal (string, number, boolean or [..]); use `default_json = \"..\"` for objects",
        )),
    }
}

/// Whether `attr` is `#[genclient]` (any path ending in `genclient`).
pub fn is_genclient(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "genclient")
}

/// Whether any of `attrs` is `#[genclient]`.
pub fn is_genclient_any(attrs: &[Attribute]) -> bool {
    attrs.iter().any(is_genclient)
}

/// Whether a macro invocation path is `group_name!` (any path ending in it).
pub fn is_group_name_macro(path: &syn::Path) -> bool {
    path.segments.last().is_some_and(|s| s.ident == "group_name")
}

/// Parses every marker attribute of a derive input (the `ApiType` derive's
/// check): `#[resource]` and `#[validate]` on the type, `#[validate]` on fields
/// and variants' fields.
pub fn check_derive_input(input: &syn::DeriveInput) -> Result<(), Vec<MarkerError>> {
    let mut errors = Errors::new();
    let mut resource = Resource::default();
    let mut validate = Validate::default();
    for attr in &input.attrs {
        if attr.path().is_ident("resource") {
            if let Err(e) = parse_resource_attr(attr, &mut resource) {
                errors.extend(e);
            }
        } else if attr.path().is_ident("validate")
            && let Err(e) = parse_validate_attr(attr, &mut validate)
        {
            errors.extend(e);
        }
    }
    let check_fields = |fields: &syn::Fields, errors: &mut Errors| {
        for field in fields {
            let mut v = Validate::default();
            for attr in &field.attrs {
                if attr.path().is_ident("validate")
                    && let Err(e) = parse_validate_attr(attr, &mut v)
                {
                    errors.extend(e);
                }
                if attr.path().is_ident("resource") {
                    errors.push(
                        MarkerError::new(attr.span(), "`#[resource]` belongs on the root type, not on a field")
                            .help("move it above the struct"),
                    );
                }
            }
        }
    };
    match &input.data {
        syn::Data::Struct(s) => check_fields(&s.fields, &mut errors),
        syn::Data::Enum(e) => {
            for v in &e.variants {
                check_fields(&v.fields, &mut errors);
            }
        }
        syn::Data::Union(u) => errors.push(
            MarkerError::new(u.union_token.span, "API types cannot be unions").help("use a struct or an enum"),
        ),
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn attr(tokens: TokenStream) -> Attribute {
        let item: syn::ItemStruct = syn::parse2(quote! { #tokens struct X; }).unwrap();
        item.attrs.into_iter().next().unwrap()
    }

    fn messages(errors: Vec<MarkerError>) -> Vec<String> {
        errors.into_iter().map(|e| format!("{}{}", e.message, e.help.map(|h| format!(" | {h}")).unwrap_or_default())).collect()
    }

    #[test]
    fn genclient_tags() {
        let g = parse_genclient_attr(&attr(quote!(#[genclient(no_status, cluster_scoped, skip_verbs(delete, watch))]))).unwrap();
        assert!(g.no_status.is_some() && g.cluster_scoped.is_some());
        let skipped: Vec<Verb> = g.skip_verbs.unwrap().value.iter().map(|v| v.value).collect();
        assert_eq!(skipped, vec![Verb::Delete, Verb::Watch]);
        let g = parse_genclient_attr(&attr(quote!(#[genclient(method(name = "get_scale", verb = "get", subresource = "scale", result = "k8s_openapi::api::autoscaling::v1::Scale"))]))).unwrap();
        assert_eq!(g.methods[0].result.as_ref().unwrap().value, "k8s_openapi::api::autoscaling::v1::Scale");
        assert!(parse_genclient_attr(&attr(quote!(#[genclient]))).is_ok());
    }

    #[test]
    fn genclient_errors_suggest() {
        let e = parse_genclient_attr(&attr(quote!(#[genclient(no_stauts, noVerbs)]))).unwrap_err();
        assert_eq!(
            messages(e),
            vec![
                "unknown `genclient` marker `no_stauts` | did you mean `no_status`?",
                "unknown `genclient` marker `noVerbs` | did you mean `no_verbs`?"
            ]
        );
        let e = parse_genclient_attr(&attr(quote!(#[genclient(only_verbs(get), skip_verbs(get))]))).unwrap_err();
        assert_eq!(messages(e), vec!["verb `get` is in both `only_verbs` and `skip_verbs` | keep it in one of the two lists"]);
        let e = parse_genclient_attr(&attr(quote!(#[genclient(method(name = "watch_all", verb = "watch"))]))).unwrap_err();
        assert_eq!(messages(e)[0], "verb `watch` cannot be used for an extra method | extra methods may use: create, update, get, list, patch, apply");
    }

    #[test]
    fn resource_and_validate() {
        let mut r = Resource::default();
        parse_resource_attr(
            &attr(quote!(#[resource(plural = "students", short_names("stu"), subresource(status), subresource(scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")), printcolumn(name = "School", type = "string", json_path = ".spec.school"))])),
            &mut r,
        )
        .unwrap();
        assert_eq!(r.plural.unwrap().value, "students");
        assert!(r.status.is_some() && r.scale.is_some());
        assert_eq!(r.print_columns[0].type_.value, "string");

        let mut v = Validate::default();
        parse_validate_attr(&attr(quote!(#[validate(minimum = 1, maximum = 65535, enum_values("a", "b"), default = -3, rule(rule = "self > 0", message = "m"))])), &mut v).unwrap();
        assert_eq!(v.minimum.unwrap().value, Number::from(1));
        assert_eq!(v.default.unwrap().value, serde_json::json!(-3));
        assert_eq!(v.enum_values.unwrap().value, vec![serde_json::json!("a"), serde_json::json!("b")]);
        assert_eq!(v.rules[0].message.as_deref(), Some("m"));

        let mut v = Validate::default();
        let e = parse_validate_attr(&attr(quote!(#[validate(minimun = 1, format = "pasword")])), &mut v).unwrap_err();
        assert_eq!(
            messages(e),
            vec!["unknown `validate` marker `minimun` | did you mean `minimum`?", "unknown format `pasword` | did you mean `password`?"]
        );
    }

    #[test]
    fn group_names() {
        assert_eq!(parse_group_name(quote!("example.k8s.io")).unwrap().value, "example.k8s.io");
        assert_eq!(
            messages(parse_group_name(quote!("example")).unwrap_err()),
            vec!["API group `example` has no dot; the API server rejects such CRDs | use a domain you own, e.g. \"example.example.com\""]
        );
        assert!(parse_group_name(quote!("Example.io")).is_err());
    }
}
