//! `#[genclient(..)]`: client-gen tags and verbs.

use proc_macro2::Span;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, Meta};

use super::*;

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
    /// `version = ".."`: the API version; its presence selects macro mode
    /// (the kind's code is generated inline by the macro, not by the CLI).
    pub version: Option<Spanned<String>>,
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
    "version",
];

const METHOD_KEYS: &[&str] = &["name", "verb", "subresource", "input", "result"];

/// Parses the arguments of `#[genclient(...)]` as an attribute macro sees them.
pub fn parse_genclient_args(args: TokenStream, span: Span) -> Result<GenClient, Vec<MarkerError>> {
    let mut out = GenClient::default();
    let mut errors = Errors::new();
    if let Err(e) = super::check_nesting(&args, span) {
        errors.push(e);
    } else if !args.is_empty() {
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
        Meta::NameValue(nv) => {
            Err(vec![MarkerError::new(nv.span(), "`genclient` takes no value").help(
                "write `#[genclient]` or `#[genclient(no_status, ...)]` (Go's `+genclient=<x>` is an error too)",
            )])
        }
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
        "version" => {
            let value = lit_str(&meta)?;
            if !crate::parse::is_version_name(&value.value) {
                errors.push(
                    MarkerError::new(value.span, format!("`{}` is not a Kubernetes API version", value.value))
                        .help("versions look like \"v1\", \"v1beta1\" or \"v2alpha1\""),
                );
            }
            set_once(&mut out.version, value, &key, errors);
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
        "nonNamespaced" | "cluster" => Some("cluster_scoped"),
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
            "`verb = \"get\"`, `\"update\"`, `\"create\"` or `\"patch\"`, on a subresource (`subresource = \"scale\"`)",
        ));
        return Ok(None);
    };
    if !is_snake_ident(&name.value) {
        errors.push(
            MarkerError::new(name.span, format!("method name `{}` is not a snake_case Rust identifier", name.value))
                .help(format!("write `name = \"{}\"`", crate::ident::snake_case(&name.value))),
        );
    }
    // client-gen also takes list and apply here; kube-codegen generates
    // `get`, `update`, `create` and `patch` on a subresource (checked with
    // the kind).
    if !matches!(verb.value, Verb::Get | Verb::Update | Verb::Create | Verb::Patch) {
        errors.push(
            MarkerError::new(verb.span, format!("verb `{}` cannot be used for an extra method", verb.value.as_str()))
                .help("extra methods are `get`, `update`, `create` or `patch` on a subresource (`subresource = \"..\"`); write others by hand in `<kind>_expansion.rs`"),
        );
    } else if let Some(i) = &input
        && !matches!(verb.value, Verb::Update | Verb::Create)
    {
        errors.push(
            MarkerError::new(
                i.span,
                format!("`input` is only allowed with `update` and `create`, not `{}`", verb.value.as_str()),
            )
            .help(if verb.value == Verb::Patch {
                "remove `input`; a patch sends a `PatchType`"
            } else {
                "remove `input`; the request has no body"
            }),
        );
    }
    // The generated update sends and reads one type. Two spellings of it
    // (`Scale`, `k8s_openapi::api::autoscaling::v1::Scale`) end alike. A
    // create may answer another type (a TokenRequest for a TokenRequest,
    // a Status for an Eviction).
    let last = |path: &str| path.rsplit("::").next().unwrap_or_default().trim().to_string();
    if let (Some(i), Some(r)) = (&input, &result)
        && verb.value == Verb::Update
        && last(&i.value) != last(&r.value)
    {
        errors.push(
            MarkerError::new(i.span, format!("`input = \"{}\"` differs from `result = \"{}\"`", i.value, r.value))
                .help("an extra `update` sends and reads one type: give it as `result` (or `input`) only"),
        );
    }
    Ok(Some(Method { name, verb, subresource, input, result, span }))
}

fn check_genclient(g: &GenClient, span: Span, errors: &mut Errors) {
    if let (Some(only), Some(skip)) = (&g.only_verbs, &g.skip_verbs) {
        for s in &skip.value {
            if only.value.iter().any(|o| o.value == s.value) {
                errors.push(
                    MarkerError::new(
                        s.span,
                        format!("verb `{}` is in both `only_verbs` and `skip_verbs`", s.value.as_str()),
                    )
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
    if let Some(ro) = g.readonly
        && (g.only_verbs.is_some() || g.skip_verbs.is_some())
    {
        errors.push(
            MarkerError::new(ro, "`readonly` cannot be combined with `only_verbs` or `skip_verbs`")
                .help("`readonly` means `only_verbs(get, list, watch)`"),
        );
    }
    let _ = span;
}
