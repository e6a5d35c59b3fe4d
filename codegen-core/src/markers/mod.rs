//! The marker grammar: `#[genclient(..)]`, `#[resource(..)]`, `#[validate(..)]`,
//! `#[rbac(..)]` and `group_name!(..)`, parsed from syn attributes into plain structs.
//!
//! The proc-macro crate and the CLI call the very same functions, so a
//! misspelled key is a compile error in the user's crate and the same
//! message (with the same "did you mean") in the CLI. The reference page for
//! every key is `docs/markers.md`.

use proc_macro2::{Span, TokenStream};
use serde_json::{Number, Value};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, Token, UnOp};

mod conversion;
mod genclient;
mod rbac;
mod resource;
mod validate;
mod webhook;

pub use conversion::ConversionWebhook;
pub use genclient::*;
pub use rbac::*;
pub use resource::*;
pub use validate::*;
pub use webhook::AdmissionWebhook;

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
        err.into_iter()
            .map(|e| {
                let message = e.to_string();
                // syn's own words, with what they mean in a marker.
                let help = match message.as_str() {
                    "expected parentheses" => Some(
                        "this key takes its values in parentheses, e.g. `only_verbs(get, list)`, `short_names(\"stu\")`, `rule(rule = \"..\")`",
                    ),
                    "number too large to fit in target type" => Some("marker numbers must fit a 64-bit integer"),
                    _ => None,
                };
                let error = MarkerError::new(e.span(), message);
                match help {
                    Some(help) => error.help(help),
                    None => error,
                }
            })
            .collect()
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
    if !crate::ident::is_dns_subdomain(&value) {
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

/// How many tokens one comma-separated piece of marker arguments may hold,
/// counting the tokens of the brackets inside it. Marker values are
/// literals, paths, types and lists (a list's items are counted one by
/// one); syn parses a value recursively, up to once per token (`<<<<`,
/// `||||`, `- - -`, `((((`, found by fuzzing), and a hostile value would
/// otherwise overflow the stack of the compiler thread that runs the macro.
const MAX_PIECE_TOKENS: usize = 48;

/// Rejects marker arguments with a piece longer or deeper than
/// [`MAX_PIECE_TOKENS`], before syn's recursive parsers see them.
pub(crate) fn check_nesting(tokens: &TokenStream, span: Span) -> Result<(), MarkerError> {
    piece_cost(tokens.clone(), MAX_PIECE_TOKENS).map(|_| ()).map_err(|()| {
        MarkerError::new(
            span,
            format!("marker arguments too long or nested too deeply (a value of more than {MAX_PIECE_TOKENS} tokens)"),
        )
        .help("marker values are literals, paths, types and lists; write the value more simply")
    })
}

/// The largest cost of a comma-separated piece of `tokens`: its tokens plus
/// the cost of the brackets in it; `Err` once over `budget` (which also
/// bounds the recursion here).
fn piece_cost(tokens: TokenStream, budget: usize) -> Result<usize, ()> {
    let (mut max, mut piece) = (0, 0);
    for tree in tokens {
        match tree {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => piece = 0,
            proc_macro2::TokenTree::Group(g) => {
                piece += 1;
                piece += piece_cost(g.stream(), budget.checked_sub(piece).ok_or(())?)?;
            }
            _ => piece += 1,
        }
        if piece > budget {
            return Err(());
        }
        max = max.max(piece);
    }
    Ok(max)
}

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
    let key = path_key(&meta.path);
    let lit: LitStr = value
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("`{key}` takes a string literal, e.g. `{key} = \"...\"`")))?;
    Ok(Spanned::new(lit.value(), lit.span()))
}

fn type_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<String>> {
    let value = meta.value()?;
    let (ty, span): (syn::Type, Span) = if value.peek(LitStr) {
        let lit: LitStr = value.parse()?;
        let tokens: TokenStream = lit.parse()?;
        check_nesting(&tokens, lit.span()).map_err(|e| e.to_syn_error())?;
        (syn::parse2(tokens)?, lit.span())
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
        _ => {
            let key = path_key(&meta.path);
            Err(syn::Error::new(expr.span(), format!("`{key}` takes an integer, e.g. `{key} = 8`")))
        }
    }
}

fn number_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Spanned<Number>> {
    let value = meta.value()?;
    let expr: Expr = value.parse()?;
    match expr_to_json(&expr)? {
        Value::Number(n) => Ok(Spanned::new(n, expr.span())),
        _ => {
            let key = path_key(&meta.path);
            Err(syn::Error::new(expr.span(), format!("`{key}` takes a number, e.g. `{key} = 1`")))
        }
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
        // `-9223372036854775808` is `i64::MIN`, whose digits alone are no i64.
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr: inner, .. })
            if matches!(&**inner, Expr::Lit(ExprLit { lit: Lit::Int(_), .. })) =>
        {
            let Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) = &**inner else { unreachable!() };
            let digits: u64 = i.base10_parse()?;
            i64::try_from(-i128::from(digits))
                .map(|v| Value::Number(v.into()))
                .map_err(|_| syn::Error::new(expr.span(), "below the smallest 64-bit integer"))
        }
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr: inner, .. }) => match expr_to_json(inner)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    i.checked_neg()
                        .map(|v| Value::Number(v.into()))
                        .ok_or_else(|| syn::Error::new(expr.span(), "beyond the largest 64-bit integer"))
                } else {
                    let f = n.as_f64().unwrap_or_default();
                    Number::from_f64(-f)
                        .map(Value::Number)
                        .ok_or_else(|| syn::Error::new(expr.span(), "not a finite number"))
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
        syn::Data::Union(u) => errors
            .push(MarkerError::new(u.union_token.span, "API types cannot be unions").help("use a struct or an enum")),
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_docs_urls_as_go_parses_request_uris() {
        for ok in ["https://example.com/a b", "/docs/x", "mailto:team@example.com", "https:", "https://h/%41"] {
            assert!(absolute_url(ok), "{ok}");
        }
        for bad in ["", "docs/x", ":x", "1http://x", "https://h/%zz", "https://h/\u{7f}", "https://h/\t"] {
            assert!(!absolute_url(bad), "{bad}");
        }
    }
    use quote::quote;

    fn attr(tokens: TokenStream) -> Attribute {
        let item: syn::ItemStruct = syn::parse2(quote! { #tokens struct X; }).unwrap();
        item.attrs.into_iter().next().unwrap()
    }

    fn messages(errors: Vec<MarkerError>) -> Vec<String> {
        errors
            .into_iter()
            .map(|e| format!("{}{}", e.message, e.help.map(|h| format!(" | {h}")).unwrap_or_default()))
            .collect()
    }

    #[test]
    fn genclient_tags() {
        let g = parse_genclient_attr(&attr(quote!(#[genclient(no_status, cluster_scoped, skip_verbs(delete, watch))])))
            .unwrap();
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
        assert_eq!(
            messages(e),
            vec!["verb `get` is in both `only_verbs` and `skip_verbs` | keep it in one of the two lists"]
        );
        let e =
            parse_genclient_attr(&attr(quote!(#[genclient(method(name = "watch_all", verb = "watch"))]))).unwrap_err();
        assert_eq!(
            messages(e)[0],
            "verb `watch` cannot be used for an extra method | extra methods are `get`, `update`, `create` or `patch` on a subresource (`subresource = \"..\"`); write others by hand in `<kind>_expansion.rs`"
        );
        let e = parse_genclient_attr(&attr(
            quote!(#[genclient(method(name = "update_scale", verb = "update", subresource = "scale", input = "ScaleSpec", result = "k8s_openapi::api::autoscaling::v1::Scale"))]),
        ))
        .unwrap_err();
        assert_eq!(
            messages(e),
            vec![
                "`input = \"ScaleSpec\"` differs from `result = \"k8s_openapi::api::autoscaling::v1::Scale\"` | an extra `update` sends and reads one type: give it as `result` (or `input`) only"
            ]
        );
        // A hint never points to the opposite meaning: `namespaced` is the default.
        let e = parse_genclient_attr(&attr(quote!(#[genclient(namespaced)]))).unwrap_err();
        assert!(!messages(e)[0].contains("cluster_scoped"));
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
        assert!(r.deprecated.is_none());

        // `type_` is `type`'s alias; a bare `deprecated` has no warning text.
        let mut r = Resource::default();
        parse_resource_attr(
            &attr(quote!(#[resource(deprecated, printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp"))])),
            &mut r,
        )
        .unwrap();
        assert_eq!(r.print_columns[0].type_.value, "date");
        assert_eq!(r.deprecated.map(|d| d.value), Some(None));
        let mut r = Resource::default();
        parse_resource_attr(&attr(quote!(#[resource(deprecated = "use v2")])), &mut r).unwrap();
        assert_eq!(r.deprecated.map(|d| d.value), Some(Some("use v2".to_string())));

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
            vec![
                "unknown `validate` marker `minimun` | did you mean `minimum`?",
                "unknown format `pasword` | did you mean `password`?"
            ]
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = |open: &str, close: &str, n: usize| -> TokenStream {
            format!("{}1{}", open.repeat(n), close.repeat(n)).parse().unwrap()
        };
        let nests = |e: Vec<MarkerError>| messages(e).iter().any(|m| m.contains("nested too deeply"));
        // A regression input of the `markers` fuzz target: syn's type parser recursed once per `<`.
        let shifts: TokenStream = format!("minimum = 1, maximu_of = 2{}", "<".repeat(100)).parse().unwrap();
        let mut v = Validate::default();
        assert!(nests(parse_validate_attr(&attr(quote!(#[validate(#shifts)])), &mut v).unwrap_err()));
        for value in [
            deep("(", ")", 300),
            deep("[", "]", 300),
            deep("-", "", 300),
            deep("Vec<", ">", 300),
            deep("|| ", "", 300),
            deep("return ", "", 300),
        ] {
            let mut v = Validate::default();
            assert!(nests(parse_validate_attr(&attr(quote!(#[validate(default = #value)])), &mut v).unwrap_err()));
            let mut r = Resource::default();
            assert!(nests(parse_resource_attr(&attr(quote!(#[resource(plural = #value)])), &mut r).unwrap_err()));
            let args = quote!(method(name = "m", verb = "get", input = #value));
            assert!(nests(parse_genclient_args(args, Span::call_site()).unwrap_err()));
        }
        let ty = format!("{}u8{}", "Vec<".repeat(300), ">".repeat(300));
        let args = quote!(method(name = "m", verb = "get", input = #ty));
        assert!(nests(parse_genclient_args(args, Span::call_site()).unwrap_err()));
        // Nesting that real values have stays accepted.
        let mut v = Validate::default();
        parse_validate_attr(&attr(quote!(#[validate(default = [[1, -2], [3]])])), &mut v).unwrap();
        assert_eq!(v.default.unwrap().value, serde_json::json!([[1, -2], [3]]));
        let many: TokenStream =
            format!("[{}]", (0..500).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")).parse().unwrap();
        let mut v = Validate::default();
        parse_validate_attr(&attr(quote!(#[validate(default = #many)])), &mut v).unwrap();
        assert_eq!(v.default.unwrap().value.as_array().map(Vec::len), Some(500));
        let mut v = Validate::default();
        parse_validate_attr(&attr(quote!(#[validate(default = [[1, -2], [3]])])), &mut v).unwrap();
        assert_eq!(v.default.unwrap().value, serde_json::json!([[1, -2], [3]]));
        let args =
            quote!(method(name = "m", verb = "get", subresource = "s", result = "Option<Vec<BTreeMap<String, u8>>>"));
        assert!(parse_genclient_args(args, Span::call_site()).is_ok_and(|g| g.methods.len() == 1));
    }

    #[test]
    fn group_names() {
        assert_eq!(parse_group_name(quote!("example.k8s.io")).unwrap().value, "example.k8s.io");
        assert_eq!(
            messages(parse_group_name(quote!("example")).unwrap_err()),
            vec![
                "API group `example` has no dot; the API server rejects such CRDs | use a domain you own, e.g. \"example.example.com\""
            ]
        );
        assert!(parse_group_name(quote!("Example.io")).is_err());
    }
}
