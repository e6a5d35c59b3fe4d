//! `#[validate(..)]`: field and type validation markers.

use proc_macro2::Span;
use serde_json::{Number, Value};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, Meta, Token};

use super::*;

/// How many of a group of optional fields may be set (controller-gen's
/// `AtMostOneOf`, `ExactlyOneOf`, `AtLeastOneOf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneOfKind {
    /// `at_most_one_of(..)`: zero or one.
    AtMost,
    /// `exactly_one_of(..)`: one.
    Exactly,
    /// `at_least_one_of(..)`: one or more.
    AtLeast,
}

/// A group of a struct's fields of which a number may be set.
#[derive(Clone, Debug)]
pub struct OneOf {
    /// How many may be set.
    pub kind: OneOfKind,
    /// The fields, by Rust or JSON name, as written.
    pub fields: Vec<Spanned<String>>,
    /// Where the marker was written.
    pub span: Span,
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

/// `external_docs(url = "..", description = "..")`: a link to more
/// documentation.
#[derive(Clone, Debug)]
pub struct ExternalDocs {
    /// An absolute URL (or an absolute path).
    pub url: String,
    /// What is found there.
    pub description: Option<String>,
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
    /// `example = literal` or `example_json = "json"`: a value shown in
    /// documentation.
    pub example: Option<Spanned<Value>>,
    /// `title = ".."`.
    pub title: Option<Spanned<String>>,
    /// `external_docs(url = "..", description = "..")`.
    pub external_docs: Option<Spanned<ExternalDocs>>,
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
    /// `immutable` on a field: once set, the value cannot change
    /// (controller-gen's `+k8s:immutable`).
    pub immutable: Option<Span>,
    /// `at_most_one_of(..)`, `exactly_one_of(..)`, `at_least_one_of(..)`
    /// on a struct, repeatable.
    pub one_of: Vec<OneOf>,
    /// `list_type = "atomic" | "set" | "map"`.
    pub list_type: Option<Spanned<String>>,
    /// `list_map_keys(..)`.
    pub list_map_keys: Option<Spanned<Vec<Spanned<String>>>>,
    /// `map_type = "atomic" | "granular"`.
    pub map_type: Option<Spanned<String>>,
    /// `items(..)`: markers applied to the elements of a list.
    pub items: Option<Box<Validate>>,
    /// `values(..)`: markers applied to the values of a map.
    pub values: Option<Box<Validate>>,
    /// `schema_json = ".."`: the schema of this position, given as JSON
    /// (for a type from outside the API packages).
    pub schema_json: Option<Spanned<Value>>,
    /// `allow_dangerous_types`: floats without the warning.
    pub allow_dangerous_types: Option<Span>,
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
    "example",
    "example_json",
    "title",
    "external_docs",
    "nullable",
    "preserve_unknown_fields",
    "int_or_string",
    "embedded_resource",
    "rule",
    "immutable",
    "at_most_one_of",
    "exactly_one_of",
    "at_least_one_of",
    "list_type",
    "list_map_keys",
    "map_type",
    "items",
    "values",
    "schema_json",
    "allow_dangerous_types",
];

/// Formats the API server knows (apiextensions `supportedFormats`).
pub const FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "date-time",
    "int32",
    "int64",
    "float",
    "double",
    // Since Kubernetes 1.34: a DNS label and a DNS subdomain without
    // upper-case letters (the API server strips them before that).
    "k8s-short-name",
    "k8s-long-name",
];

impl Validate {
    /// Whether no marker was given.
    pub fn is_empty(&self) -> bool {
        self.first_span.is_none()
    }

    /// Whether the markers give this position a schema of their own, so its
    /// Rust type need not have one (`preserve_unknown_fields`, `schema_json`).
    pub fn replaces_schema(&self) -> bool {
        self.preserve_unknown_fields.is_some() || self.schema_json.is_some()
    }
}

/// Whether `url` is what Go's `url.ParseRequestURI` takes (controller-gen's
/// check): an absolute path, or a scheme and the rest; no control
/// characters, and `%` only as the start of an escape.
pub(crate) fn absolute_url(url: &str) -> bool {
    if url.is_empty() || url.bytes().any(|b| b < b' ' || b == 0x7f) {
        return false;
    }
    let bytes = url.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%' && !(bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))) {
            return false;
        }
    }
    if url.starts_with('/') {
        return true;
    }
    let Some((scheme, _)) = url.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Parses one `#[validate(...)]` attribute into `out` (several attributes merge).
pub fn parse_validate_attr(attr: &Attribute, out: &mut Validate) -> Result<(), Vec<MarkerError>> {
    let mut errors = Errors::new();
    match &attr.meta {
        Meta::List(list) if let Err(e) = super::check_nesting(&list.tokens, attr.span()) => errors.push(e),
        Meta::List(list) => {
            let parser = syn::meta::parser(|meta| validate_key(out, &mut errors, meta));
            if let Err(e) = parser.parse2(list.tokens.clone()) {
                errors.extend(MarkerError::from_syn(e));
            }
        }
        _ => errors.push(
            MarkerError::new(attr.span(), "`validate` needs arguments")
                .help("e.g. `#[validate(minimum = 1, maximum = 65535)]`"),
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
        "immutable" => flag(&mut out.immutable, &meta, &key, errors)?,
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
        "example" => {
            let expr: Expr = meta.value()?.parse()?;
            let v = expr_to_json(&expr)?;
            set_once(&mut out.example, Spanned::new(v, span), "example", errors);
        }
        "example_json" => {
            let s = lit_str(&meta)?;
            match serde_json::from_str::<Value>(&s.value) {
                Ok(v) => set_once(&mut out.example, Spanned::new(v, span), "example", errors),
                Err(e) => errors.push(MarkerError::new(s.span, format!("`example_json` is not valid JSON: {e}"))),
            }
        }
        "title" => set_once(&mut out.title, lit_str(&meta)?, &key, errors),
        "external_docs" => {
            let mut url: Option<Spanned<String>> = None;
            let mut description = None;
            meta.parse_nested_meta(|inner| {
                let k = path_key(&inner.path);
                match k.as_str() {
                    "url" => set_once(&mut url, lit_str(&inner)?, "url", errors),
                    "description" => set_once(&mut description, lit_str(&inner)?, "description", errors),
                    _ => unknown_key(&inner, "external_docs", &k, &["url", "description"], errors, None)?,
                }
                Ok(())
            })?;
            match url {
                None => errors.push(
                    MarkerError::new(span, "`external_docs` needs a `url`")
                        .help("e.g. `external_docs(url = \"https://example.com/docs\", description = \"the guide\")`"),
                ),
                Some(u) if !absolute_url(&u.value) => errors.push(
                    MarkerError::new(u.span, format!("`{}` is not an absolute URL", u.value))
                        .help("give a scheme (`https://..`) or an absolute path (`/docs/..`)"),
                ),
                Some(u) => set_once(
                    &mut out.external_docs,
                    Spanned::new(ExternalDocs { url: u.value, description: description.map(|d| d.value) }, span),
                    &key,
                    errors,
                ),
            }
        }
        "rule" => {
            if let Some(r) = rule(&meta, errors)? {
                out.rules.push(r);
            }
        }
        "at_most_one_of" | "exactly_one_of" | "at_least_one_of" => {
            let kind = match key.as_str() {
                "at_most_one_of" => OneOfKind::AtMost,
                "exactly_one_of" => OneOfKind::Exactly,
                _ => OneOfKind::AtLeast,
            };
            let fields = name_list(&meta)?;
            if fields.len() < 2 {
                errors.push(
                    MarkerError::new(span, format!("`{key}` needs two or more fields"))
                        .help(format!("e.g. `{key}(http, https)`")),
                );
            }
            out.one_of.push(OneOf { kind, fields, span });
        }
        "list_type" => {
            let v = lit_str(&meta)?;
            if !["atomic", "set", "map"].contains(&v.value.as_str()) {
                errors.push(
                    MarkerError::new(v.span, format!("unknown list type `{}`", v.value))
                        .help("list_type is \"atomic\", \"set\" or \"map\""),
                );
            }
            set_once(&mut out.list_type, v, &key, errors);
        }
        "map_type" => {
            let v = lit_str(&meta)?;
            if !["atomic", "granular"].contains(&v.value.as_str()) {
                errors.push(
                    MarkerError::new(v.span, format!("unknown map type `{}`", v.value))
                        .help("map_type is \"atomic\" or \"granular\""),
                );
            }
            set_once(&mut out.map_type, v, &key, errors);
        }
        "list_map_keys" => {
            let list = str_list(&meta)?;
            set_once(&mut out.list_map_keys, Spanned::new(list, span), &key, errors);
        }
        "items" | "values" => {
            let slot = if key == "items" { &mut out.items } else { &mut out.values };
            let mut inner = slot.take().map(|b| *b).unwrap_or_default();
            meta.parse_nested_meta(|m| validate_key(&mut inner, errors, m))?;
            *slot = Some(Box::new(inner));
        }
        "schema_json" => {
            let s = lit_str(&meta)?;
            match serde_json::from_str::<Value>(&s.value) {
                Ok(v @ Value::Object(_)) => set_once(&mut out.schema_json, Spanned::new(v, s.span), &key, errors),
                Ok(_) => errors.push(
                    MarkerError::new(s.span, "`schema_json` must be a JSON object (an OpenAPI schema)")
                        .help("e.g. `schema_json = r#\"{\"type\": \"string\"}\"#`"),
                ),
                Err(e) => errors.push(MarkerError::new(s.span, format!("`schema_json` is not valid JSON: {e}"))),
            }
        }
        "allow_dangerous_types" => flag(&mut out.allow_dangerous_types, &meta, &key, errors)?,
        // The `validator` crate's and schemars' spellings, which users of
        // kube-derive bring along.
        "length" | "range" | "email" | "url" | "regex" | "contains" => {
            let help = match key.as_str() {
                "length" => {
                    "lengths are `min_length = N` / `max_length = N` (strings), `min_items` / `max_items` (lists) and `min_properties` / `max_properties` (maps)"
                }
                "range" => "bounds are `minimum = N` / `maximum = N` (and `exclusive_minimum` / `exclusive_maximum`)",
                "email" => "write `format = \"email\"`",
                "url" => "write `format = \"uri\"`",
                "regex" => "write the expression itself: `pattern = \"^[a-z]+$\"`",
                _ => "a CEL rule says it: `rule = \"self.contains('x')\"`",
            };
            errors.push(
                MarkerError::new(
                    meta.path.span(),
                    format!("unknown `validate` marker `{key}` (the `validator` crate's spelling)"),
                )
                .help(help),
            );
            skip_value(&meta)?
        }
        _ => {
            let hint = match key.as_str() {
                "Enum" => Some("enum_values"),
                "min" => Some("minimum"),
                "max" => Some("maximum"),
                "enum" | "one_of" => Some("enum_values"),
                "XValidation" | "x_validation" | "cel" | "validation" => Some("rule"),
                "AtMostOneOf" | "at_most_one" => Some("at_most_one_of"),
                "ExactlyOneOf" | "one_of_fields" | "exactly_one" => Some("exactly_one_of"),
                "AtLeastOneOf" | "at_least_one" => Some("at_least_one_of"),
                "XIntOrString" => Some("int_or_string"),
                "XPreserveUnknownFields" | "schemaless" => Some("preserve_unknown_fields"),
                "schema" => Some("schema_json"),
                "allowDangerousTypes" | "allow_float" | "allow_floats" => Some("allow_dangerous_types"),
                "additional_properties" | "map_values" => Some("values"),
                _ => None,
            };
            unknown_key(&meta, "validate", &key, VALIDATE_KEYS, errors, hint)?
        }
    }
    Ok(())
}

/// `(a, b)` or `("a", "b")`: field names, as identifiers or strings.
fn name_list(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Vec<Spanned<String>>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let names = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
    names
        .iter()
        .map(|e| match e {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let ident =
                    p.path.get_ident().map(|i| crate::ident::unraw(&i.to_string()).to_owned()).unwrap_or_default();
                Ok(Spanned::new(ident, e.span()))
            }
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(Spanned::new(s.value(), s.span())),
            _ => Err(syn::Error::new(e.span(), "expected field names, e.g. (http, https) or (\"http\", \"https\")")),
        })
        .collect()
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
            MarkerError::new(span, "`rule(..)` needs a `rule`")
                .help("e.g. `rule(rule = \"self.min <= self.max\", message = \"min must not exceed max\")`"),
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
