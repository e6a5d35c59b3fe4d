//! Phase 2, check: read the markers and serde attributes of the parsed
//! packages, resolve field types, and lower everything into the [`Model`],
//! reporting every problem (with its span) instead of stopping at the first.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proc_macro2::Span;
use syn::spanned::Spanned as _;

use crate::diag::{Diagnostic, Diagnostics};
use crate::ident::{RenameRule, did_you_mean, pluralize, unraw};
use crate::markers::{self, GenClient, MarkerError, Resource, Validate, Verb};
use crate::model::*;
use crate::parse::{Discovery, Origin, Package, ParsedFile};
use crate::settings::{GeneratorKind, Settings};

/// Lowers one package into a model of its own (macro mode: the package of
/// the file a kind is written in), with the same checks as [`check`].
pub fn check_package(settings: &Settings, pkg: &Package, diags: &mut Diagnostics) -> Model {
    let apis_module = settings.apis_module();
    let mut model = Model::default();
    if let Some((name, version)) = lower_package(settings, &apis_module, pkg, diags) {
        model.groups.push(Group { name, package: pkg.group_package.clone(), versions: vec![version] });
    }
    check_model(settings, &model, diags);
    model
}

/// Lowers the discovered packages into the model.
pub fn check(settings: &Settings, discovery: &Discovery, diags: &mut Diagnostics) -> Model {
    let apis_module = settings.apis_module();
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for pkg in &discovery.packages {
        let Some((group_name, version)) = lower_package(settings, &apis_module, pkg, diags) else { continue };
        match groups.get_mut(&group_name) {
            Some(g) if g.package != pkg.group_package => {
                diags.push(
                    Diagnostic::error(format!(
                        "API group `{group_name}` is declared by two group directories, `{}` and `{}`",
                        g.package, pkg.group_package
                    ))
                    .at_opt(version.module_origin.as_ref().map(Origin::location).as_ref())
                    .help("keep all versions of a group under one directory"),
                );
            }
            Some(g) => g.versions.push(version),
            None => {
                groups.insert(
                    group_name.clone(),
                    Group { name: group_name, package: pkg.group_package.clone(), versions: vec![version] },
                );
            }
        }
    }
    let mut model = Model { groups: groups.into_values().collect() };
    for g in &mut model.groups {
        g.versions.sort_by(|a, b| a.name.cmp(&b.name));
    }
    check_model(settings, &model, diags);
    model
}

fn marker_errors(diags: &mut Diagnostics, file: &Arc<crate::diag::SourceFile>, errors: Vec<MarkerError>) {
    for e in errors {
        diags.push(Diagnostic::error(e.message).at(file.location(e.span)).help_opt(e.help));
    }
}

fn lower_package(
    settings: &Settings,
    apis_module: &str,
    pkg: &Package,
    diags: &mut Diagnostics,
) -> Option<(String, Version)> {
    // group_name!(..) and `mod register;`
    let mut group: Option<(String, Origin)> = None;
    // An invalid group_name! was already reported; "no API group" would repeat it.
    let mut group_marker_seen = false;
    let mut declares_register = None;
    let mut module_origin = None;
    for (idx, file) in pkg.files.iter().enumerate() {
        let is_module = pkg.module_file == Some(idx);
        if is_module {
            declares_register = Some(false);
            module_origin = Some(Origin { file: file.source.clone(), span: Span::call_site() });
        }
        for item in &file.ast.items {
            match item {
                syn::Item::Macro(m) if markers::is_group_name_macro(&m.mac.path) => {
                    group_marker_seen = true;
                    match markers::parse_group_name(m.mac.tokens.clone()) {
                        Ok(g) => {
                            let origin = Origin { file: file.source.clone(), span: m.mac.path.span() };
                            if let Some((prev, _)) = &group {
                                diags.push(
                                    Diagnostic::error(format!(
                                        "second `group_name!` in this package (the first says `{prev}`)"
                                    ))
                                    .at(origin.location())
                                    .help("a version package has exactly one group_name!"),
                                );
                            } else {
                                group = Some((g.value, origin));
                            }
                        }
                        Err(errors) => marker_errors(diags, &file.source, errors),
                    }
                }
                syn::Item::Mod(m) if is_module && m.ident == "register" => declares_register = Some(true),
                _ => {}
            }
        }
    }

    // Every struct/enum, and which ones implement Clone by hand.
    let mut items: BTreeMap<String, (&ParsedFile, &syn::Item)> = BTreeMap::new();
    let mut clone_impls = BTreeSet::new();
    for file in &pkg.files {
        for item in &file.ast.items {
            let name = match item {
                syn::Item::Struct(s) => s.ident.to_string(),
                syn::Item::Enum(e) => e.ident.to_string(),
                syn::Item::Impl(i) => {
                    if let (Some((path, _)), syn::Type::Path(tp)) = (&i.trait_, &*i.self_ty)
                        && path.segments.last().is_some_and(|s| s.ident == "Clone")
                        && let Some(seg) = tp.path.segments.last()
                    {
                        clone_impls.insert(seg.ident.to_string());
                    }
                    continue;
                }
                _ => continue,
            };
            if let Some((prev_file, _)) = items.get(&name) {
                let span = item_ident_span(item);
                diags.push(
                    Diagnostic::error(format!("type `{name}` is defined twice in this package"))
                        .at(file.source.location(span))
                        .note(format!("first defined in `{}`", prev_file.source.path.display())),
                );
                continue;
            }
            items.insert(name, (file, item));
        }
    }
    let local: BTreeSet<String> = items.keys().cloned().collect();
    // Generic API types are reported where they are defined (lower_type).
    let generic: BTreeSet<String> = items
        .iter()
        .filter(|(_, (_, item))| {
            let attrs = item_attrs(item);
            let is_api = markers::is_genclient_any(attrs) || derives(attrs, "ApiType");
            !is_api
                && match item {
                    syn::Item::Struct(s) => !s.generics.params.is_empty(),
                    syn::Item::Enum(e) => !e.generics.params.is_empty(),
                    _ => false,
                }
        })
        .map(|(name, _)| name.clone())
        .collect();

    let mut types = BTreeMap::new();
    let mut roots = Vec::new();
    for (name, (file, item)) in &items {
        let ctx = TypeCtx { file, local: &local, generic: &generic };
        if let Some(def) = lower_type(&ctx, item, clone_impls.contains(name), diags) {
            let attrs = item_attrs(item);
            let genclient = attrs.iter().find(|a| markers::is_genclient(a));
            let resource_attrs: Vec<&syn::Attribute> = attrs.iter().filter(|a| a.path().is_ident("resource")).collect();
            if genclient.is_some() || !resource_attrs.is_empty() {
                roots.push((def.name.clone(), *file, genclient, resource_attrs));
            }
            types.insert(name.clone(), def);
        }
    }

    // The package's group: group_name!, or an agreed `#[genclient(group = "..")]`.
    let mut type_groups: Vec<(String, Origin)> = Vec::new();
    let mut kinds = Vec::new();
    for (name, file, genclient, resource_attrs) in roots {
        let Some(def) = types.get(&name) else { continue };
        let gc = match genclient.map(markers::parse_genclient_attr) {
            Some(Ok(g)) => Some(g),
            Some(Err(errors)) => {
                marker_errors(diags, &file.source, errors);
                continue;
            }
            None => None,
        };
        let mut res = Resource::default();
        let mut ok = true;
        for attr in resource_attrs {
            if let Err(errors) = markers::parse_resource_attr(attr, &mut res) {
                marker_errors(diags, &file.source, errors);
                ok = false;
            }
        }
        if !ok {
            continue;
        }
        if let Some(v) = gc.as_ref().and_then(|g| g.version.as_ref())
            && !settings.inline
        {
            diags.push(
                Diagnostic::error(format!("`{name}` is generated inline by the macro (`version = \"{}\"`)", v.value))
                    .at(def.origin.with_span(v.span).location())
                    .help("remove `version` from `#[genclient]` to generate this kind with kube-codegen; the CLI and build.rs take the version from the directory"),
            );
            continue;
        }
        if let Some(g) = gc.as_ref().and_then(|g| g.group.as_ref()) {
            let origin = def.origin.with_span(g.span);
            let lit = proc_macro2::Literal::string(&g.value);
            if let Err(errors) = markers::parse_group_name(proc_macro2::TokenTree::Literal(lit).into()) {
                for e in errors {
                    diags.push(Diagnostic::error(e.message).at(origin.location()).help_opt(e.help));
                }
            }
            type_groups.push((g.value.clone(), origin));
        }
        if let Some(kind) = lower_kind(settings, def, gc, res, diags) {
            kinds.push(kind);
        }
    }
    kinds.sort_by(|a, b| a.rust_name.cmp(&b.rust_name));

    let group_name = match (&group, type_groups.first()) {
        (Some((g, origin)), Some((tg, torigin))) => {
            if tg != g {
                diags.push(
                    Diagnostic::error(format!(
                        "`group = \"{tg}\"` disagrees with the package's `group_name!(\"{g}\")`"
                    ))
                    .at(torigin.location())
                    .note(format!("group_name! is at {}:{}", origin.location().file.display(), origin.location().line))
                    .help("remove `group` from `#[genclient]`; the package's group applies to every type"),
                );
            }
            g.clone()
        }
        (Some((g, _)), None) => g.clone(),
        (None, Some((tg, _))) => {
            for (other, origin) in &type_groups[1..] {
                if other != tg {
                    diags.push(
                        Diagnostic::error(format!("types of one package name two API groups, `{tg}` and `{other}`"))
                            .at(origin.location())
                            .help("put each group in its own `<group>/<version>/` directory"),
                    );
                }
            }
            tg.clone()
        }
        (None, None) => {
            if !kinds.is_empty() && !group_marker_seen {
                let loc = module_origin
                    .as_ref()
                    .map(|o: &Origin| o.file.start())
                    .or_else(|| kinds.first().map(|k| k.origin.location()));
                diags.push(
                    Diagnostic::error(format!("package `{}/{}` has no API group", pkg.group_package, pkg.version))
                        .at_opt(loc.as_ref())
                        .help(format!(
                            "add `codegen_macros::group_name!(\"{}.example.com\");` to the version module (Go's `// +groupName=`)",
                            pkg.group_package
                        )),
                );
            }
            return None;
        }
    };
    let module_path = format!(
        "{apis_module}::{}::{}",
        crate::ident::rust_ident(&pkg.group_package),
        crate::ident::rust_ident(&pkg.version)
    );
    Some((
        group_name,
        Version {
            name: pkg.version.clone(),
            dir: pkg.dir.clone(),
            module_path,
            kinds,
            types,
            declares_register,
            module_origin,
        },
    ))
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Struct(s) => &s.attrs,
        syn::Item::Enum(e) => &e.attrs,
        _ => &[],
    }
}

fn item_ident_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Struct(s) => s.ident.span(),
        syn::Item::Enum(e) => e.ident.span(),
        other => other.span(),
    }
}

struct TypeCtx<'a> {
    file: &'a ParsedFile,
    local: &'a BTreeSet<String>,
    /// Local types with generic parameters: they have no schema.
    generic: &'a BTreeSet<String>,
}

impl TypeCtx<'_> {
    fn origin(&self, span: Span) -> Origin {
        Origin { file: self.file.source.clone(), span }
    }
}

/// The doc comment of an item, one space of indentation removed per line.
pub fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value
        {
            for line in s.value().lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_string());
            }
        }
    }
    let text = lines.join("\n").trim().to_string();
    if text.is_empty() { None } else { Some(text) }
}

fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
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

fn container_serde(attrs: &[syn::Attribute], ctx: &TypeCtx, diags: &mut Diagnostics) -> ContainerSerde {
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
                                    .at(ctx.origin(v.span()).location())
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
                            .at(ctx.origin(m.path.span()).location())
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

fn field_serde(attrs: &[syn::Attribute]) -> FieldSerde {
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

fn skip_meta(m: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if m.input.peek(syn::Token![=]) {
        m.input.parse::<syn::Token![=]>()?;
        m.input.parse::<syn::Expr>()?;
    } else if m.input.peek(syn::token::Paren) {
        m.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn validate_markers(attrs: &[syn::Attribute], ctx: &TypeCtx, diags: &mut Diagnostics) -> Validate {
    let mut v = Validate::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("validate")) {
        if let Err(errors) = markers::parse_validate_attr(attr, &mut v) {
            marker_errors(diags, &ctx.file.source, errors);
        }
    }
    v
}

fn lower_type(ctx: &TypeCtx, item: &syn::Item, clone_impl: bool, diags: &mut Diagnostics) -> Option<TypeDef> {
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
    let serde = container_serde(attrs, ctx, diags);
    let body = match item {
        syn::Item::Struct(s) => match &s.fields {
            syn::Fields::Named(named) => Body::Struct(lower_fields(ctx, named.named.iter(), serde.rename_all, diags)),
            syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => {
                let f = &un.unnamed[0];
                match resolve(ctx, &f.ty) {
                    Ok(t) => Body::Newtype(Box::new(t)),
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
                let vserde = field_serde(&v.attrs);
                if vserde.skip {
                    continue;
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
                let body = match &v.fields {
                    syn::Fields::Unit => VariantBody::Unit,
                    syn::Fields::Unnamed(un) if un.unnamed.len() == 1 => match resolve(ctx, &un.unnamed[0].ty) {
                        Ok(t) => VariantBody::Newtype(t),
                        Err(e) => {
                            diags.push(e.into_diag(ctx));
                            VariantBody::Tuple
                        }
                    },
                    syn::Fields::Unnamed(_) => VariantBody::Tuple,
                    syn::Fields::Named(named) => {
                        let rule = variant_rename_all(&v.attrs).or(serde.rename_all_fields);
                        VariantBody::Struct(lower_fields(ctx, named.named.iter(), rule, diags))
                    }
                };
                variants.push(Variant {
                    rust_name,
                    json_name,
                    doc: doc_comment(&v.attrs),
                    body,
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
        body,
        validate: validate_markers(attrs, ctx, diags),
        serde,
        rust_fields: match item {
            syn::Item::Struct(syn::ItemStruct { fields: syn::Fields::Named(named), .. }) => named
                .named
                .iter()
                .filter_map(|f| {
                    let is_option = matches!(&f.ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"));
                    f.ident.as_ref().map(|i| (unraw(&i.to_string()).to_string(), is_option))
                })
                .collect(),
            _ => Vec::new(),
        },
        default_fields: match item {
            syn::Item::Struct(syn::ItemStruct { fields: syn::Fields::Named(named), .. }) => named
                .named
                .iter()
                .filter(|f| {
                    let is_option = matches!(&f.ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"));
                    let fs = field_serde(&f.attrs);
                    // `default = "path"` and `skip` + `default = "path"` do not need `Default`.
                    derives(attrs, "Default") || is_option || ((fs.default || fs.skip_deserializing) && !fs.default_fn)
                })
                .filter_map(|f| f.ident.as_ref().map(|i| unraw(&i.to_string()).to_string()))
                .collect(),
            _ => Default::default(),
        },
    })
}

fn variant_rename_all(attrs: &[syn::Attribute]) -> Option<RenameRule> {
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

fn lower_fields<'a>(
    ctx: &TypeCtx,
    fields: impl Iterator<Item = &'a syn::Field>,
    rename_all: Option<RenameRule>,
    diags: &mut Diagnostics,
) -> Vec<Field> {
    let mut out = Vec::new();
    for f in fields {
        let Some(ident) = &f.ident else { continue };
        let serde = field_serde(&f.attrs);
        let validate = validate_markers(&f.attrs, ctx, diags);
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
            && validate.preserve_unknown_fields.is_none()
        {
            diags.push(
                Diagnostic::error(format!(
                    "`#[serde({key} = ..)]` on `{ident}` changes its JSON; the schema of its Rust type would be wrong"
                ))
                .at(ctx.origin(*span).location())
                .help(
                    "add `#[validate(preserve_unknown_fields)]` to accept any JSON here, or write the schema by hand",
                ),
            );
            continue;
        }
        let rust_name = unraw(&ident.to_string()).to_string();
        let json_name = serde
            .rename
            .clone()
            .unwrap_or_else(|| rename_all.map_or(rust_name.clone(), |r| r.apply_to_field(&rust_name)));
        let ty = match resolve(ctx, &f.ty) {
            // `with` & co. write any JSON: the field's Rust type says nothing.
            Ok(TypeRef::Option(_)) if serde.custom.is_some() => TypeRef::Option(Box::new(TypeRef::Json)),
            Ok(_) if serde.custom.is_some() => TypeRef::Json,
            Ok(t) => t,
            Err(e) if validate.preserve_unknown_fields.is_some() => {
                let _ = e;
                TypeRef::Json
            }
            Err(e) => {
                diags.push(e.into_diag(ctx));
                continue;
            }
        };
        out.push(Field {
            rust_name,
            json_name,
            ty,
            doc: doc_comment(&f.attrs),
            serde,
            validate,
            origin: ctx.origin(ident.span()),
        });
    }
    out
}

struct ResolveError {
    span: Span,
    message: String,
    help: Option<String>,
}

impl ResolveError {
    fn into_diag(self, ctx: &TypeCtx) -> Diagnostic {
        Diagnostic::error(self.message).at(ctx.origin(self.span).location()).help_opt(self.help)
    }
}

fn generic_args(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn resolve(ctx: &TypeCtx, ty: &syn::Type) -> Result<TypeRef, ResolveError> {
    let err = |span: Span, message: String, help: Option<String>| ResolveError { span, message, help };
    let path = match ty {
        syn::Type::Path(p) if p.qself.is_none() => &p.path,
        syn::Type::Group(g) => return resolve(ctx, &g.elem),
        syn::Type::Paren(p) => return resolve(ctx, &p.elem),
        other => {
            let text = quote::ToTokens::to_token_stream(other).to_string();
            return Err(err(
                other.span(),
                format!("type `{text}` has no CRD schema"),
                Some("API fields use owned types: String, integers, bool, Option, Vec, BTreeMap<String, _>, structs and enums".into()),
            ));
        }
    };
    let Some(last) = path.segments.last() else {
        return Err(err(path.span(), "empty type path".into(), None));
    };
    let name = last.ident.to_string();
    let written: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let full = if written.len() == 1 {
        ctx.file.uses.get(&name).cloned().unwrap_or_else(|| name.clone())
    } else {
        written.join("::")
    };
    let args = generic_args(last);
    let arg = |i: usize| -> Result<TypeRef, ResolveError> {
        match args.get(i) {
            Some(t) => resolve(ctx, t),
            None => Err(err(last.span(), format!("`{name}` needs a type argument"), None)),
        }
    };
    let is_local_path = written.len() == 1 || matches!(written[0].as_str(), "self" | "super" | "crate");
    if ctx.local.contains(&name) && is_local_path && !ctx.file.uses.contains_key(&name) {
        if ctx.generic.contains(&name) {
            let text = quote::ToTokens::to_token_stream(ty)
                .to_string()
                .replace(" < ", "<")
                .replace(" >", ">")
                .replace(" ,", ",");
            return Err(err(
                path.span(),
                format!("type `{text}` has no schema: generic type parameters are not supported"),
                Some(format!(
                    "a CRD schema cannot describe type parameters; write a concrete `{name}` for this field, or mark it `#[validate(preserve_unknown_fields)]` to accept any JSON"
                )),
            ));
        }
        return Ok(TypeRef::Named(name));
    }
    let t = match name.as_str() {
        "Option" => TypeRef::Option(Box::new(arg(0)?)),
        "Vec" | "VecDeque" | "LinkedList" => TypeRef::List(Box::new(arg(0)?)),
        "BTreeSet" | "HashSet" | "IndexSet" => TypeRef::Set(Box::new(arg(0)?)),
        "Box" | "Arc" | "Rc" => arg(0)?,
        "BTreeMap" | "HashMap" | "IndexMap" => {
            let key = arg(0)?;
            if key != TypeRef::String {
                return Err(err(
                    args.first().map_or(last.span(), |t| t.span()),
                    format!(
                        "map keys must be strings, not `{}`",
                        args.first().map(|t| quote::ToTokens::to_token_stream(t).to_string()).unwrap_or_default()
                    ),
                    Some("JSON object keys are strings; use `BTreeMap<String, _>`".into()),
                ));
            }
            TypeRef::Map(Box::new(arg(1)?))
        }
        "String" | "str" | "char" => TypeRef::String,
        "bool" => TypeRef::Bool,
        "i8" | "i16" | "i32" | "u8" | "u16" => {
            let bounds = match name.as_str() {
                "i8" => IntBounds { min: Some(i8::MIN.into()), max: Some(i8::MAX.into()) },
                "i16" => IntBounds { min: Some(i16::MIN.into()), max: Some(i16::MAX.into()) },
                "u8" => IntBounds { min: Some(0), max: Some(u8::MAX.into()) },
                "u16" => IntBounds { min: Some(0), max: Some(u16::MAX.into()) },
                _ => IntBounds::default(),
            };
            TypeRef::Integer(NumFormat::Int32, bounds)
        }
        "i64" | "isize" => TypeRef::Integer(NumFormat::Int64, IntBounds::default()),
        "u32" | "u64" | "usize" => TypeRef::Integer(NumFormat::Int64, IntBounds { min: Some(0), max: None }),
        "f32" => TypeRef::Number(NumFormat::Float),
        "f64" => TypeRef::Number(NumFormat::Double),
        "Value" if full.contains("serde_json") || full == "Value" => TypeRef::Json,
        "Map" if full.contains("serde_json") => TypeRef::JsonObject,
        "ObjectMeta" => TypeRef::Known(Known::ObjectMeta),
        "TypeMeta" => TypeRef::Known(Known::TypeMeta),
        "ListMeta" => TypeRef::Known(Known::ListMeta),
        "Time" | "DateTime" => TypeRef::Known(Known::Time),
        "MicroTime" => TypeRef::Known(Known::MicroTime),
        "Quantity" => TypeRef::Known(Known::Quantity),
        "IntOrString" => TypeRef::Known(Known::IntOrString),
        "RawExtension" => TypeRef::Known(Known::RawExtension),
        "Condition" => TypeRef::Known(Known::Condition),
        "LabelSelector" => TypeRef::Known(Known::LabelSelector),
        "Duration" => {
            if full.starts_with("std::") || full.starts_with("core::") || full.starts_with("tokio::") {
                return Err(err(
                    last.span(),
                    format!("`{full}` serializes as `{{secs, nanos}}`, not as a Kubernetes duration"),
                    Some("use `String` (e.g. \"1h30m\") or a type that serializes as a Go duration string".into()),
                ));
            }
            TypeRef::Known(Known::Duration)
        }
        _ => {
            let local: Vec<&str> = ctx.local.iter().map(String::as_str).collect();
            let help = match did_you_mean(&name, &local) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "define it in this API package, or mark the field `#[validate(preserve_unknown_fields)]` to accept any JSON".into(),
            };
            return Err(err(
                path.span(),
                format!("type `{full}` is not defined in this API package and has no known schema"),
                Some(help),
            ));
        }
    };
    Ok(t)
}

fn lower_kind(
    settings: &Settings,
    def: &TypeDef,
    gc: Option<GenClient>,
    res: Resource,
    diags: &mut Diagnostics,
) -> Option<Kind> {
    let loc = def.origin.location();
    let Body::Struct(fields) = &def.body else {
        diags.push(
            Diagnostic::error(format!("root type `{}` must be a struct with named fields", def.name)).at(loc).help(
                "a kind looks like `struct Student { types: TypeMeta, metadata: ObjectMeta, spec: StudentSpec }`",
            ),
        );
        return None;
    };
    let mut ok = true;
    let metadata = fields.iter().find(|f| f.json_name == "metadata");
    if !metadata.is_some_and(|f| f.ty == TypeRef::Known(Known::ObjectMeta)) {
        diags.push(
            Diagnostic::error(format!("root type `{}` has no `metadata: ObjectMeta` field", def.name))
                .at(metadata.map_or(loc.clone(), |f| f.origin.location()))
                .help("add `pub metadata: ObjectMeta` (k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)"),
        );
        ok = false;
    }
    let type_meta = if let Some(f) = fields.iter().find(|f| f.ty == TypeRef::Known(Known::TypeMeta)) {
        if !f.serde.flatten {
            diags.push(
                Diagnostic::error(format!("`{}` must be flattened into `{}`", f.rust_name, def.name))
                    .at(f.origin.location())
                    .help(format!(
                        "write `#[serde(flatten, default)] pub {}: TypeMeta` (Go's `json:\",inline\"`)",
                        f.rust_name
                    )),
            );
            ok = false;
        }
        TypeMetaForm::Flatten(f.rust_name.clone())
    } else if let (Some(api_version), Some(kind)) = (
        fields.iter().find(|f| f.json_name == "apiVersion" && f.ty == TypeRef::String),
        fields.iter().find(|f| f.json_name == "kind" && f.ty == TypeRef::String),
    ) {
        TypeMetaForm::Fields { api_version: api_version.rust_name.clone(), kind: kind.rust_name.clone() }
    } else {
        diags.push(
            Diagnostic::error(format!("root type `{}` does not carry `apiVersion` and `kind`", def.name))
                .at(loc.clone())
                .help("add `#[serde(flatten, default)] pub types: TypeMeta` (kube::core::TypeMeta), like Go's embedded `metav1.TypeMeta`"),
        );
        ok = false;
        TypeMetaForm::Fields { api_version: "api_version".into(), kind: "kind".into() }
    };
    let has_status_field = fields.iter().any(|f| f.json_name == "status");
    let spec_field = fields.iter().find(|f| f.json_name == "spec").and_then(|f| match &f.ty {
        TypeRef::Named(n) => Some(n.clone()),
        _ => None,
    });

    let kind = res.kind.as_ref().map_or(def.name.clone(), |k| k.value.clone());
    let plural = res.plural.as_ref().map_or_else(|| pluralize(&kind, &settings.plural_exceptions), |p| p.value.clone());
    let singular = res.singular.as_ref().map_or_else(|| kind.to_lowercase(), |s| s.value.clone());
    for (what, value) in [("plural", res.plural.as_ref()), ("singular", res.singular.as_ref())] {
        if let Some(v) = value
            && !is_dns_label(&v.value)
        {
            diags.push(
                Diagnostic::error(format!("{what} name `{}` must be a lower-case DNS label", v.value))
                    .at(def.origin.with_span(v.span).location())
                    .help(format!("write `{what} = \"{}\"`", v.value.to_lowercase())),
            );
            ok = false;
        }
    }
    for list in [res.short_names.as_ref(), res.categories.as_ref()].into_iter().flatten() {
        for s in &list.value {
            if !is_dns_label(&s.value) {
                diags.push(
                    Diagnostic::error(format!("`{}` must be a lower-case DNS label", s.value))
                        .at(def.origin.with_span(s.span).location())
                        .help(format!("write `\"{}\"`", s.value.to_lowercase())),
                );
                ok = false;
            }
        }
    }

    let cluster_from_gc = gc.as_ref().and_then(|g| g.cluster_scoped);
    let namespaced = match (&res.scope, cluster_from_gc) {
        (Some(scope), Some(_)) if scope.value == "Namespaced" => {
            diags.push(
                Diagnostic::error("`scope = \"Namespaced\"` contradicts `#[genclient(cluster_scoped)]`")
                    .at(def.origin.with_span(scope.span).location())
                    .help("keep one: `cluster_scoped` already makes the CRD cluster-scoped"),
            );
            false
        }
        (_, Some(_)) => false,
        (Some(scope), None) => scope.value != "Cluster",
        (None, None) => true,
    };

    let status_subresource = res.status.is_some();
    if let Some(span) = res.status
        && !has_status_field
    {
        diags.push(
            Diagnostic::error(format!("`subresource(status)` on `{}`, which has no `status` field", def.name))
                .at(def.origin.with_span(span).location())
                .help(
                    "add `#[serde(default, skip_serializing_if = \"Option::is_none\")] pub status: Option<...Status>`",
                ),
        );
        ok = false;
    }
    if let Some(scale) = &res.scale
        && !has_status_field
    {
        diags.push(
            Diagnostic::error(format!("`subresource(scale(..))` on `{}`, which has no `status` field", def.name))
                .at(def.origin.with_span(scale.span).location())
                .help("the scale subresource reads replicas from `.status`; add a status field"),
        );
        ok = false;
    }

    let client = gc.map(|g| {
        let verbs: BTreeSet<Verb> = if g.no_verbs.is_some() {
            BTreeSet::new()
        } else if g.readonly.is_some() {
            [Verb::Get, Verb::List, Verb::Watch].into_iter().collect()
        } else if let Some(only) = &g.only_verbs {
            only.value.iter().map(|v| v.value).collect()
        } else {
            let skip: BTreeSet<Verb> = g.skip_verbs.as_ref().map(|s| s.value.iter().map(|v| v.value).collect()).unwrap_or_default();
            Verb::ALL.into_iter().filter(|v| !skip.contains(v)).collect()
        };
        let mut verbs = verbs;
        let status_verbs_possible = has_status_field && g.no_status.is_none() && status_subresource;
        if has_status_field && g.no_status.is_none() && !status_subresource && (verbs.contains(&Verb::UpdateStatus) || verbs.contains(&Verb::ApplyStatus)) {
            diags.push(
                Diagnostic::warning(format!("`{}` has a status field but no `subresource(status)`: update_status is not generated", def.name))
                    .at(loc.clone())
                    .help("add `#[resource(subresource(status))]`, or `#[genclient(no_status)]` to say status is part of the main resource"),
            );
        }
        if !status_verbs_possible {
            verbs.remove(&Verb::UpdateStatus);
            verbs.remove(&Verb::ApplyStatus);
        }
        for m in &g.methods {
            if !matches!(m.verb.value, Verb::Get | Verb::Update) || m.subresource.is_none() {
                diags.push(
                    Diagnostic::error(format!("extra method `{}`: only `get` and `update` on a subresource are generated", m.name.value))
                        .at(def.origin.with_span(m.span).location())
                        .help("give it `subresource = \"..\"` and verb `get` or `update`, or write the method by hand in `<kind>_expansion.rs`"),
                );
            }
            if Verb::ALL.iter().any(|v| v.as_str() == m.name.value) || GENERATED_CLIENT_METHODS.contains(&m.name.value.as_str()) {
                diags.push(
                    Diagnostic::error(format!("extra method `{}` clashes with a generated method", m.name.value))
                        .at(def.origin.with_span(m.name.span).location())
                        .help("pick another name, e.g. `get_scale`"),
                );
            }
        }
        ClientSpec { verbs, methods: g.methods }
    });

    if !ok {
        return None;
    }
    Some(Kind {
        rust_name: def.name.clone(),
        list_kind: res.list_kind.as_ref().map_or_else(|| format!("{kind}List"), |l| l.value.clone()),
        kind,
        plural,
        singular,
        short_names: res.short_names.map(|s| s.value.into_iter().map(|s| s.value).collect()).unwrap_or_default(),
        categories: res.categories.map(|s| s.value.into_iter().map(|s| s.value).collect()).unwrap_or_default(),
        namespaced,
        client,
        has_status_field,
        status_subresource,
        scale: res.scale,
        print_columns: res.print_columns,
        storage: res.storage.map(|s| def.origin.with_span(s)),
        served: res.served.is_none_or(|s| s.value),
        deprecated: res.deprecated.map(|d| d.value),
        type_meta,
        metadata_field: metadata.map_or_else(|| "metadata".into(), |f| f.rust_name.clone()),
        spec_field,
        origin: def.origin.clone(),
    })
}

/// Methods of a generated kind client besides the verbs themselves.
const GENERATED_CLIENT_METHODS: [&str; 7] =
    ["api", "new", "namespace", "inner", "list_all", "patch_status", "set_type_meta"];

/// Methods of the generated `SharedInformerFactory`: a group accessor of
/// the same name would not compile.
const FACTORY_METHODS: [&str; 7] =
    ["new", "from_runtime", "runtime", "start", "wait_for_cache_sync", "shutdown", "for_resource"];

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && !s.ends_with('-')
}

/// Cross-type and cross-version checks on the finished model.
fn check_model(settings: &Settings, model: &Model, diags: &mut Diagnostics) {
    for group in &model.groups {
        if settings.runs(GeneratorKind::Informer)
            && FACTORY_METHODS.contains(&group.package.as_str())
            && let Some((v, k)) = group.versions.iter().find_map(|v| v.kinds.first().map(|k| (v, k)))
        {
            let loc = v.module_origin.as_ref().map_or_else(|| k.origin.location(), |o| o.file.start());
            diags.push(
                Diagnostic::error(format!(
                    "group directory `{}` clashes with the generated `SharedInformerFactory::{}` method",
                    group.package, group.package
                ))
                .at(loc)
                .help(format!(
                    "rename the directory (e.g. `{}s` or `{}api`); the API group name in `group_name!` can stay as it is",
                    group.package, group.package
                )),
            );
        }
        // One kind across versions: same scope and names, exactly one storage version.
        let mut by_kind: BTreeMap<&str, Vec<(&Version, &Kind)>> = BTreeMap::new();
        for v in &group.versions {
            for k in &v.kinds {
                by_kind.entry(k.kind.as_str()).or_default().push((v, k));
            }
            let mut plurals: BTreeMap<&str, &Kind> = BTreeMap::new();
            for k in &v.kinds {
                if let Some(prev) = plurals.insert(k.plural.as_str(), k) {
                    diags.push(
                        Diagnostic::error(format!(
                            "kinds `{}` and `{}` share the resource name `{}`",
                            prev.kind, k.kind, k.plural
                        ))
                        .at(k.origin.location())
                        .help("set a distinct `#[resource(plural = \"..\")]`"),
                    );
                }
            }
        }
        for (kind, versions) in &by_kind {
            let (_, first) = versions[0];
            for (v, k) in &versions[1..] {
                if k.namespaced != first.namespaced
                    || k.plural != first.plural
                    || k.singular != first.singular
                    || k.list_kind != first.list_kind
                {
                    diags.push(
                        Diagnostic::error(format!(
                            "kind `{kind}` has a different scope or names in version `{}` than in `{}`",
                            v.name, versions[0].0.name
                        ))
                        .at(k.origin.location())
                        .help("one CRD serves every version: scope, plural, singular and listKind must agree"),
                    );
                }
            }
            let storage: Vec<&(&Version, &Kind)> = versions.iter().filter(|(_, k)| k.storage.is_some()).collect();
            if versions.len() > 1 && storage.is_empty() {
                diags.push(
                    Diagnostic::error(format!(
                        "kind `{kind}` is served in {} versions ({}) but none is the storage version",
                        versions.len(),
                        versions.iter().map(|(v, _)| v.name.as_str()).collect::<Vec<_>>().join(", ")
                    ))
                    .at(first.origin.location())
                    .help("mark exactly one version's type `#[resource(storage)]` (kubebuilder's `+kubebuilder:storageversion`)"),
                );
            }
            if storage.len() > 1 {
                for (v, k) in &storage[1..] {
                    diags.push(
                        Diagnostic::error(format!(
                            "kind `{kind}` has more than one storage version (`{}` and `{}`)",
                            storage[0].0.name, v.name
                        ))
                        .at_opt(k.storage.as_ref().map(Origin::location).as_ref())
                        .help("keep `#[resource(storage)]` on exactly one version"),
                    );
                }
            }
            if versions.iter().all(|(_, k)| !k.served) {
                diags.push(
                    Diagnostic::error(format!("kind `{kind}` is served in no version"))
                        .at(first.origin.location())
                        .help("remove `served = false` from at least one version"),
                );
            }
        }
        for v in &group.versions {
            // The generated register.rs must be part of the crate.
            if settings.runs(GeneratorKind::Register)
                && !v.kinds.is_empty()
                && v.declares_register == Some(false)
                && let Some(origin) = &v.module_origin
            {
                diags.push(
                    Diagnostic::warning(format!(
                        "`{}` does not declare the generated `register` module",
                        origin.file.path.display()
                    ))
                    .at(origin.file.start())
                    .help("add `mod register; pub use register::*;` so the kinds implement `kube::Resource`"),
                );
            }
            if settings.runs(GeneratorKind::Deepcopy) {
                for name in reachable_types(v) {
                    if let Some(def) = v.types.get(&name)
                        && !def.implements_clone
                    {
                        diags.push(
                            Diagnostic::error(format!("API type `{name}` does not implement `Clone`"))
                                .at(def.origin.location())
                                .help("add `#[derive(Clone)]`: in Rust the deep copy (Go's DeepCopy) is `Clone`"),
                        );
                    }
                }
            }
        }
    }
}

/// Every type reachable from the version's kinds, plus every type deriving `ApiType`.
pub fn reachable_types(v: &Version) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack: Vec<String> = v.kinds.iter().map(|k| k.rust_name.clone()).collect();
    stack.extend(v.types.values().filter(|t| t.derives_api_type).map(|t| t.name.clone()));
    while let Some(name) = stack.pop() {
        if !out.insert(name.clone()) {
            continue;
        }
        let Some(def) = v.types.get(&name) else { continue };
        let mut push = |t: &TypeRef| collect_named(t, &mut stack);
        match &def.body {
            Body::Struct(fields) => fields.iter().for_each(|f| push(&f.ty)),
            Body::Newtype(t) => push(t),
            Body::Enum(vars) => {
                for var in vars {
                    match &var.body {
                        VariantBody::Newtype(t) => push(t),
                        VariantBody::Struct(fields) => fields.iter().for_each(|f| push(&f.ty)),
                        _ => {}
                    }
                }
            }
            Body::Other => {}
        }
    }
    out
}

fn collect_named(t: &TypeRef, out: &mut Vec<String>) {
    match t {
        TypeRef::Named(n) => out.push(n.clone()),
        TypeRef::Option(i) | TypeRef::List(i) | TypeRef::Set(i) | TypeRef::Map(i) => collect_named(i, out),
        _ => {}
    }
}
