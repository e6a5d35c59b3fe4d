//! Lowering API types: structs and enums with their serde view, markers
//! and resolved field types.

use proc_macro2::Span;
use syn::spanned::Spanned as _;

use super::attrs::{container_serde, derives, doc_comment, field_serde, validate_markers, variant_rename_all};
use super::resolve::{ResolveError, Site};
use crate::diag::{Diagnostic, Diagnostics};
use crate::ident::{RenameRule, unraw};
use crate::markers;
use crate::model::*;
use crate::parse::{Origin, ParsedFile};

/// Where the types being lowered are written.
pub(crate) struct TypeCtx<'c, 't, 'a> {
    /// The file.
    pub file: &'c ParsedFile,
    /// The package and module, for type resolution.
    pub site: Site<'t, 'a>,
}

impl TypeCtx<'_, '_, '_> {
    fn origin(&self, span: Span) -> Origin {
        Origin { file: self.file.source.clone(), span }
    }
}

impl ResolveError {
    fn into_diag(self, ctx: &TypeCtx) -> Diagnostic {
        Diagnostic::error(self.message).at(ctx.origin(self.span).location()).help_opt(self.help)
    }
}

/// Whether a type is syntactically an `Option` (what a struct literal must list).
fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// Lowers a struct or enum into a [`TypeDef`], resolving its field types.
pub(crate) fn lower_type(
    ctx: &TypeCtx,
    item: &syn::Item,
    clone_impl: bool,
    diags: &mut Diagnostics,
) -> Option<TypeDef> {
    let (ident, attrs, generics) = match item {
        syn::Item::Struct(s) => (&s.ident, &s.attrs, &s.generics),
        syn::Item::Enum(e) => (&e.ident, &e.attrs, &e.generics),
        _ => return None,
    };
    let origin = ctx.origin(ident.span());
    let is_api = markers::is_genclient_any(attrs) || derives(attrs, "ApiType");
    if !generics.params.is_empty() {
        if is_api {
            diags.push(
                Diagnostic::error(format!("API type `{ident}` is generic"))
                    .at(ctx.origin(generics.span()).location())
                    .help("API types must be concrete: a CRD schema cannot describe type parameters"),
            );
        }
        return None;
    }
    let serde = container_serde(attrs, &ctx.file.source, diags);
    let body = match item {
        syn::Item::Struct(s) => match &s.fields {
            syn::Fields::Named(named) => Body::Struct(lower_fields(ctx, named.named.iter(), serde.rename_all, diags)),
            syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                let f = &un.unnamed[0];
                let validate = validate_markers(&f.attrs, &ctx.file.source, diags);
                match ctx.site.resolve(&f.ty, Some(&validate)) {
                    Ok(t) => Body::Newtype(Box::new(t), Box::new(validate)),
                    Err(e) => {
                        if is_api {
                            diags.push(e.into_diag(ctx));
                        }
                        Body::Other
                    }
                }
            }
            _ => Body::Other,
        },
        syn::Item::Enum(e) => {
            let mut variants = Vec::new();
            for v in &e.variants {
                let vserde = field_serde(&v.attrs, true);
                if let Some((span, message, help)) = &vserde.problem {
                    diags.push(Diagnostic::error(message.clone()).at(ctx.origin(*span).location()).help(help.clone()));
                }
                if vserde.skip {
                    continue;
                }
                // Markers go on what has a schema of its own: a variant's
                // fields, or the enum.
                if let Some(attr) = v.attrs.iter().find(|a| a.path().is_ident("validate")) {
                    let help = match &v.fields {
                        syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                            format!("put them on the variant's field: `{}(#[validate(..)] ..)`", v.ident)
                        }
                        syn::Fields::Named(_) => {
                            "put them on the variant's fields, or a `rule` on the enum".to_string()
                        }
                        _ => "put them on the enum".to_string(),
                    };
                    diags.push(
                        Diagnostic::error(format!("`#[validate]` on the variant `{}` itself", v.ident))
                            .at(ctx.origin(attr.span()).location())
                            .help(help),
                    );
                }
                if let Some((key, span)) = &vserde.custom {
                    diags.push(
                        Diagnostic::error(format!("`#[serde({key} = ..)]` on variant `{}` changes its JSON; no schema can follow it", v.ident))
                            .at(ctx.origin(*span).location())
                            .help("remove it so the schema can follow the variant, or hold this value in a `serde_json::Value` field marked `#[validate(preserve_unknown_fields)]`"),
                    );
                }
                let rust_name = v.ident.to_string();
                let json_name = vserde
                    .rename
                    .clone()
                    .unwrap_or_else(|| serde.rename_all.map_or(rust_name.clone(), |r| r.apply_to_variant(&rust_name)));
                let mut validate = markers::Validate::default();
                let body = match &v.fields {
                    syn::Fields::Unit => VariantBody::Unit,
                    syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                        validate = validate_markers(&un.unnamed[0].attrs, &ctx.file.source, diags);
                        match ctx.site.resolve(&un.unnamed[0].ty, Some(&validate)) {
                            Ok(t) => VariantBody::Newtype(t),
                            Err(e) => {
                                diags.push(e.into_diag(ctx));
                                VariantBody::Tuple
                            }
                        }
                    }
                    syn::Fields::Unnamed(_) => VariantBody::Tuple,
                    syn::Fields::Named(named) => {
                        let rule = variant_rename_all(&v.attrs).or(serde.rename_all_fields);
                        VariantBody::Struct(lower_fields(ctx, named.named.iter(), rule, diags))
                    }
                };
                // A newtype variant of an alias without a doc of its own
                // takes the alias's, as a field does.
                let alias_doc = match (&v.fields, &body) {
                    (syn::Fields::Unnamed(un), VariantBody::Newtype(_)) => {
                        ctx.site.alias_docs(&un.unnamed[0].ty).into_iter().next().flatten()
                    }
                    _ => None,
                };
                variants.push(Variant {
                    rust_name,
                    json_name,
                    doc: doc_comment(&v.attrs).or(alias_doc),
                    body,
                    validate,
                    aliases: vserde.aliases.clone(),
                    other: vserde.other,
                    origin: ctx.origin(v.ident.span()),
                });
            }
            Body::Enum(variants)
        }
        _ => Body::Other,
    };
    Some(TypeDef {
        name: ident.to_string(),
        origin,
        doc: doc_comment(attrs),
        implements_clone: clone_impl || derives(attrs, "Clone"),
        derives_api_type: derives(attrs, "ApiType"),
        derives_debug: derives(attrs, "Debug"),
        derives_partial_eq: derives(attrs, "PartialEq"),
        body,
        validate: validate_markers(attrs, &ctx.file.source, diags),
        serde,
        rust_fields: match item {
            syn::Item::Struct(syn::ItemStruct { fields: syn::Fields::Named(named), .. }) => named
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref().map(|i| (unraw(&i.to_string()).to_string(), is_option(&f.ty))))
                .collect(),
            _ => Vec::new(),
        },
        default_fields: match item {
            syn::Item::Struct(syn::ItemStruct { fields: syn::Fields::Named(named), .. }) => named
                .named
                .iter()
                .filter(|f| {
                    let is_option = is_option(&f.ty);
                    let fs = field_serde(&f.attrs, false);
                    // `default = "path"` and `skip` + `default = "path"` do not need `Default`.
                    derives(attrs, "Default") || is_option || ((fs.default || fs.skip_deserializing) && !fs.default_fn)
                })
                .filter_map(|f| f.ident.as_ref().map(|i| unraw(&i.to_string()).to_string()))
                .collect(),
            _ => Default::default(),
        },
    })
}

pub(crate) fn lower_fields<'a>(
    ctx: &TypeCtx,
    fields: impl Iterator<Item = &'a syn::Field>,
    rename_all: Option<RenameRule>,
    diags: &mut Diagnostics,
) -> Vec<Field> {
    let mut out = Vec::new();
    for f in fields {
        let Some(ident) = &f.ident else { continue };
        let serde = field_serde(&f.attrs, false);
        if let Some((span, message, help)) = &serde.problem {
            diags.push(Diagnostic::error(message.clone()).at(ctx.origin(*span).location()).help(help.clone()));
        }
        let validate = validate_markers(&f.attrs, &ctx.file.source, diags);
        if serde.skip {
            if let Some(span) = validate.first_span {
                diags.push(
                    Diagnostic::warning(format!("validation markers on skipped field `{ident}` have no effect"))
                        .at(ctx.origin(span).location()),
                );
            }
            continue;
        }
        if let Some((key, span)) = &serde.custom
            && !validate.replaces_schema()
        {
            diags.push(
                Diagnostic::error(format!(
                    "`#[serde({key} = ..)]` on `{ident}` changes its JSON; the schema of its Rust type would be wrong"
                ))
                .at(ctx.origin(*span).location())
                .help(
                    "write the schema of the JSON it makes by hand, e.g. `#[validate(schema_json = r#\"{\"type\": \"string\"}\"#)]`, or accept any JSON here with `#[validate(preserve_unknown_fields)]`",
                ),
            );
            continue;
        }
        let rust_name = unraw(&ident.to_string()).to_string();
        let json_name = serde
            .rename
            .clone()
            .unwrap_or_else(|| rename_all.map_or(rust_name.clone(), |r| r.apply_to_field(&rust_name)));
        let ty = if serde.custom.is_some() {
            // `with` & co. write any JSON: the field's Rust type says nothing.
            if is_option(&f.ty) { TypeRef::Option(Box::new(TypeRef::Json)) } else { TypeRef::Json }
        } else {
            match ctx.site.resolve(&f.ty, Some(&validate)) {
                Ok(t) => t,
                Err(e) => {
                    diags.push(e.into_diag(ctx));
                    continue;
                }
            }
        };
        let mut alias_docs = if serde.custom.is_some() { Vec::new() } else { ctx.site.alias_docs(&f.ty) };
        let alias_doc = if alias_docs.is_empty() { None } else { alias_docs.remove(0) };
        out.push(Field {
            rust_name,
            json_name,
            ty,
            doc: doc_comment(&f.attrs).or(alias_doc),
            item_docs: alias_docs,
            serde,
            validate,
            origin: ctx.origin(ident.span()),
        });
    }
    out
}
