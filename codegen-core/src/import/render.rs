//! Import phase 3, render: the types of a kind into a Rust file (prettyplease),
//! and the `mod.rs` files that declare them. No generated-file header: the
//! files are the user's from now on.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::{Item, Ty, renames};
use crate::ident::RenameRule;

/// `#[doc = " line"]` per line: prettyplease prints them as `///` comments,
/// and the generator reads them back as the same text. A text with a code
/// block rustdoc would compile as a doctest (the YAML examples of
/// descriptions written for Go) is `#[cfg_attr(not(doctest), doc = ..)]`
/// instead: the same doc comment, which `cargo test` does not compile.
fn doc(text: Option<&str>) -> TokenStream {
    let Some(text) = text else { return TokenStream::new() };
    let lines = text.lines().map(|l| if l.is_empty() { String::new() } else { format!(" {l}") });
    if crate::rustdoc::has_rust_code_block(text) {
        quote!(#(#[cfg_attr(not(doctest), doc = #lines)])*)
    } else {
        quote!(#(#[doc = #lines])*)
    }
}

fn ident(name: &str) -> syn::Ident {
    match name.strip_prefix("r#") {
        Some(raw) => format_ident!("r#{raw}"),
        None => format_ident!("{name}"),
    }
}

fn item(item: &Item, defaults: &BTreeMap<String, bool>) -> TokenStream {
    let default = defaults.get(item.name()).copied().unwrap_or(false).then(|| quote!(Default,));
    let derive = quote!(#[derive(Clone, Debug, #default PartialEq, Serialize, Deserialize, ApiType)]);
    match item {
        Item::Struct { name, doc: d, fields, validate, root } => {
            let name = format_ident!("{name}");
            let d = doc(d.as_deref());
            let (camel, renames) = renames(fields);
            let container = camel.then(|| quote!(#[serde(rename_all = "camelCase")]));
            let validate = (!validate.is_empty()).then(|| quote!(#[validate(#(#validate),*)]));
            let fields = fields.iter().zip(renames).map(|(f, rename)| {
                let d = doc(f.doc.as_deref());
                let id = ident(&f.ident);
                let ty = f.ty.tokens();
                let ty = if f.option { quote!(Option<#ty>) } else { ty };
                let mut serde = Vec::new();
                if let Some(r) = rename {
                    serde.push(quote!(rename = #r));
                }
                if f.flatten {
                    serde.push(quote!(flatten));
                }
                if f.optional || (f.flatten && f.ty == Ty::TypeMeta) || f.ty == Ty::ObjectMeta {
                    serde.push(quote!(default));
                }
                if f.optional && f.option {
                    serde.push(quote!(skip_serializing_if = "Option::is_none"));
                }
                let serde = (!serde.is_empty()).then(|| quote!(#[serde(#(#serde),*)]));
                let validate = &f.validate;
                let validate = (!validate.is_empty()).then(|| quote!(#[validate(#(#validate),*)]));
                quote! {
                    #d
                    #serde
                    #validate
                    pub #id: #ty,
                }
            });
            // `#[genclient]` goes above the derive, `#[resource]` (a helper of `ApiType`) below.
            let (genclient, resource) = root.split_at(root.len().min(1));
            quote! {
                #d
                #(#genclient)*
                #derive
                #(#resource)*
                #container
                #validate
                pub struct #name {
                    #(#fields)*
                }
            }
        }
        Item::Enum { name, doc: d, variants, default } => {
            let name = format_ident!("{name}");
            let d = doc(d.as_deref());
            // One `rename_all` when it names every variant, else a `rename` each.
            let rule = [
                ("camelCase", RenameRule::Camel),
                ("lowercase", RenameRule::Lower),
                ("snake_case", RenameRule::Snake),
                ("kebab-case", RenameRule::Kebab),
                ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
                ("UPPERCASE", RenameRule::Upper),
            ]
            .into_iter()
            .find(|(_, r)| variants.iter().all(|(v, json)| r.apply_to_variant(v) == *json));
            let plain = variants.iter().all(|(v, json)| v == json);
            let container = match rule {
                _ if plain => None,
                Some((rule, _)) => Some(quote!(#[serde(rename_all = #rule)])),
                None => None,
            };
            let variants = variants.iter().enumerate().map(|(i, (v, json))| {
                let marker = (i == *default).then(|| quote!(#[default]));
                let rename = (container.is_none() && v != json).then(|| quote!(#[serde(rename = #json)]));
                let v = format_ident!("{v}");
                quote!(#marker #rename #v,)
            });
            let derive = quote!(#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]);
            quote! {
                #d
                #derive
                #container
                pub enum #name {
                    #(#variants)*
                }
            }
        }
        Item::Newtype { name, doc: d, inner } => {
            let name = format_ident!("{name}");
            let d = doc(d.as_deref());
            let inner = inner.tokens();
            quote! {
                #d
                #derive
                pub struct #name(pub #inner);
            }
        }
    }
}

/// The file of one kind: a `//!` line, the imports, then the types, root first.
/// The doc comments are the CRD's descriptions word for word (the generator
/// reads them back as descriptions); where rustdoc would warn about them
/// (bare URLs, `<placeholders>`, `[brackets]`), the file allows those lints.
pub(crate) fn kind_file(header: &str, items: &[&Item], defaults: &BTreeMap<String, bool>) -> String {
    let lines = header.lines().map(|l| format!(" {l}"));
    let allow = items
        .iter()
        .any(|i| docs_of(i).any(crate::rustdoc::warns))
        .then(|| quote!(rustdoc::bare_urls, rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags,));
    // An untagged code block that is not Rust (YAML) is a warning of `cargo doc`.
    let code = items
        .iter()
        .any(|i| docs_of(i).any(crate::rustdoc::has_rust_code_block))
        .then(|| quote!(rustdoc::invalid_rust_codeblocks,));
    let allow = (allow.is_some() || code.is_some()).then(|| quote!(#![allow(#allow #code)]));
    let items = items.iter().map(|i| item(i, defaults));
    let file = quote! {
        #(#![doc = #lines])*
        #allow
        use codegen_macros::{ApiType, genclient};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
        use kube::core::TypeMeta;
        use serde::{Deserialize, Serialize};
        #(#items)*
    };
    match syn::parse2::<syn::File>(file.clone()) {
        Ok(f) => spaced(&prettyplease::unparse(&f)),
        Err(e) => format!("// kube-codegen import could not format this file ({e})\n{file}\n"),
    }
}

/// Every doc comment of `item` and of its fields.
fn docs_of(item: &Item) -> impl Iterator<Item = &str> {
    let (doc, fields) = match item {
        Item::Struct { doc, fields, .. } => (doc, fields.as_slice()),
        Item::Enum { doc, .. } | Item::Newtype { doc, .. } => (doc, [].as_slice()),
    };
    doc.as_deref().into_iter().chain(fields.iter().filter_map(|f| f.doc.as_deref()))
}

/// prettyplease writes items back to back; a blank line after the imports
/// and between items reads like rustfmt'd code.
fn spaced(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + src.len() / 16);
    let mut prev: Option<&str> = None;
    for line in src.lines() {
        let starts_item = !line.starts_with(' ') && !line.starts_with('}') && !line.is_empty();
        if let Some(p) = prev {
            let p_end = p == "}" || p.ends_with(';') && !p.starts_with(' ');
            let after_header = p.starts_with("//!") && !line.starts_with("//!");
            let both_use = p.starts_with("use ") && line.starts_with("use ");
            if starts_item && (p_end || after_header) && !both_use {
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
        prev = Some(line);
    }
    out
}
