//! The attributes the check phase reads besides the markers: serde's
//! container, field and variant attributes, doc comments and derives.

use std::sync::Arc;

use syn::spanned::Spanned as _;

use crate::diag::{Diagnostic, Diagnostics, SourceFile};
use crate::ident::{RenameRule, did_you_mean};
use crate::markers::{self, Validate};
use crate::model::{ContainerSerde, FieldSerde};

use super::marker_errors;

/// The doc comment of an item, one space of indentation removed per line.
pub fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value
        {
            let value = s.value();
            // A bare `///` is an empty attribute: a blank line of the text (a paragraph break).
            if value.is_empty() {
                lines.push(String::new());
            }
            for line in value.lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_string());
            }
        }
    }
    let text = lines.join("\n").trim().to_string();
    if text.is_empty() { None } else { Some(text) }
}

pub(crate) fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|m| {
            if m.path.segments.last().is_some_and(|s| s.ident == name) {
                found = true;
            }
            Ok(())
        });
        found
    })
}

pub(crate) fn container_serde(
    attrs: &[syn::Attribute],
    file: &Arc<SourceFile>,
    diags: &mut Diagnostics,
) -> ContainerSerde {
    let mut out = ContainerSerde::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|m| {
            let key = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            match key.as_str() {
                "rename_all" | "rename_all_fields" => {
                    let v: syn::LitStr = if m.input.peek(syn::Token![=]) {
                        m.value()?.parse()?
                    } else {
                        let mut ser = None;
                        m.parse_nested_meta(|inner| {
                            if inner.path.is_ident("serialize") {
                                ser = Some(inner.value()?.parse::<syn::LitStr>()?);
                            } else {
                                skip_meta(&inner)?;
                            }
                            Ok(())
                        })?;
                        match ser {
                            Some(s) => s,
                            None => return Ok(()),
                        }
                    };
                    match RenameRule::parse(&v.value()) {
                        Some(r) if key == "rename_all" => out.rename_all = Some(r),
                        Some(r) => out.rename_all_fields = Some(r),
                        None => {
                            let names: Vec<&str> = RenameRule::ALL.iter().map(|(n, _)| *n).collect();
                            diags.push(
                                Diagnostic::error(format!("unknown serde rename rule `{}`", v.value()))
                                    .at(file.location(v.span()))
                                    .help_opt(did_you_mean(&v.value(), &names).map(|s| format!("did you mean `{s}`?"))),
                            );
                        }
                    }
                }
                "tag" => out.tag = Some(m.value()?.parse::<syn::LitStr>()?.value()),
                "content" => out.content = Some(m.value()?.parse::<syn::LitStr>()?.value()),
                "untagged" => out.untagged = true,
                "transparent" => out.transparent = true,
                "default" => {
                    out.default = true;
                    skip_meta(&m)?;
                }
                "into" | "from" | "try_from" | "remote" => {
                    diags.push(
                        Diagnostic::error(format!("`#[serde({key} = ..)]` changes the JSON of this type; no schema can be derived from its fields"))
                            .at(file.location(m.path.span()))
                            .help("remove it so the schema can follow the fields, or hold this value in a `serde_json::Value` field marked `#[validate(preserve_unknown_fields)]`"),
                    );
                    skip_meta(&m)?;
                }
                _ => skip_meta(&m)?,
            }
            Ok(())
        });
    }
    out
}

pub(crate) fn field_serde(attrs: &[syn::Attribute]) -> FieldSerde {
    let mut out = FieldSerde::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|m| {
            let key = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            match key.as_str() {
                "rename" => {
                    if m.input.peek(syn::Token![=]) {
                        out.rename = Some(m.value()?.parse::<syn::LitStr>()?.value());
                    } else {
                        m.parse_nested_meta(|inner| {
                            if inner.path.is_ident("serialize") {
                                out.rename = Some(inner.value()?.parse::<syn::LitStr>()?.value());
                            } else {
                                skip_meta(&inner)?;
                            }
                            Ok(())
                        })?;
                    }
                }
                "default" => {
                    out.default = true;
                    out.default_fn |= m.input.peek(syn::Token![=]);
                    skip_meta(&m)?;
                }
                "skip" => {
                    out.skip = true;
                    out.skip_deserializing = true;
                }
                "skip_serializing" => out.skip = true,
                "skip_deserializing" => out.skip_deserializing = true,
                "with" | "serialize_with" | "deserialize_with" | "getter" => {
                    if out.custom.is_none() {
                        out.custom = Some((key.clone(), m.path.span()));
                    }
                    skip_meta(&m)?;
                }
                "skip_serializing_if" => {
                    out.skip_serializing_if = true;
                    skip_meta(&m)?;
                }
                "flatten" => out.flatten = true,
                _ => skip_meta(&m)?,
            }
            Ok(())
        });
    }
    out
}

pub(crate) fn skip_meta(m: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if m.input.peek(syn::Token![=]) {
        m.input.parse::<syn::Token![=]>()?;
        m.input.parse::<syn::Expr>()?;
    } else if m.input.peek(syn::token::Paren) {
        m.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

pub(crate) fn validate_markers(attrs: &[syn::Attribute], file: &Arc<SourceFile>, diags: &mut Diagnostics) -> Validate {
    let mut v = Validate::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("validate")) {
        if let Err(errors) = markers::parse_validate_attr(attr, &mut v) {
            marker_errors(diags, file, errors);
        }
    }
    v
}

pub(crate) fn variant_rename_all(attrs: &[syn::Attribute]) -> Option<RenameRule> {
    let mut out = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|m| {
            if m.path.is_ident("rename_all") && m.input.peek(syn::Token![=]) {
                out = RenameRule::parse(&m.value()?.parse::<syn::LitStr>()?.value());
            } else {
                skip_meta(&m)?;
            }
            Ok(())
        });
    }
    out
}
