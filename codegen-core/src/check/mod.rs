//! Phase 2, check: read the markers and serde attributes of the parsed
//! packages, resolve field types, and lower everything into the [`Model`],
//! reporting every problem (with its span) instead of stopping at the first.

mod attrs;
pub mod resolve;
mod types;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proc_macro2::Span;
use syn::spanned::Spanned as _;

use attrs::derives;
use resolve::{Site, Tree};
use types::{TypeCtx, lower_type};

use crate::diag::{Diagnostic, Diagnostics};
use crate::ident::pluralize;
use crate::markers::{self, GenClient, MarkerError, Resource, Verb};
use crate::model::*;
use crate::parse::{Discovery, Origin, Package};
use crate::settings::{GeneratorKind, Settings};

/// Lowers one package into a model of its own (macro mode: the package of
/// the file a kind is written in), with the same checks as [`check`].
/// `crate_path` is the package's module path from the crate root when known;
/// `others` are the other packages of its apis directory (their types may be
/// used), `apis` the apis module's path.
pub fn check_package(
    settings: &Settings,
    pkg: &Package,
    crate_path: Option<Vec<String>>,
    others: &[(Package, Vec<Diagnostic>)],
    apis: Option<Vec<String>>,
    diags: &mut Diagnostics,
) -> Model {
    let apis_module = settings.apis_module();
    let other_pkgs: Vec<&Package> = others.iter().map(|(p, _)| p).collect();
    let mut tree = resolve::tree(&[pkg], &other_pkgs, apis);
    tree.packages[0].crate_path = crate_path;
    // The macro's code is expanded inside the package.
    tree.root_sees_private_uses = true;
    let mut model = Model::default();
    if let Some((name, version)) = lower_package(settings, &apis_module, &tree, 0, diags) {
        model.groups.push(Group { name, package: pkg.group_package.clone(), versions: vec![version] });
    }
    lower_external_types(&tree, &[pkg.key()].into(), others, &mut model, diags);
    check_model(settings, &model, diags);
    model
}

/// Lowers the discovered packages into the model.
pub fn check(settings: &Settings, discovery: &Discovery, diags: &mut Diagnostics) -> Model {
    let apis_module = settings.apis_module();
    let requested: Vec<&Package> = discovery.packages.iter().collect();
    let others: Vec<&Package> = discovery.others.iter().map(|(p, _)| p).collect();
    let tree = resolve::tree(&requested, &others, resolve::apis_segments(&apis_module));
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for (idx, pkg) in discovery.packages.iter().enumerate() {
        let Some((group_name, version)) = lower_package(settings, &apis_module, &tree, idx, diags) else { continue };
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
    let mut model = Model { groups: groups.into_values().collect(), external_types: BTreeMap::new() };
    for g in &mut model.groups {
        g.versions.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let requested_keys = discovery.packages.iter().map(Package::key).collect();
    lower_external_types(&tree, &requested_keys, &discovery.others, &mut model, diags);
    check_model(settings, &model, diags);
    model
}

/// Lowers the types of non-requested packages that requested ones use,
/// transitively, into [`Model::external_types`]. A used package that does
/// not parse reports its errors here.
fn lower_external_types(
    tree: &Tree,
    requested: &BTreeSet<String>,
    others: &[(Package, Vec<Diagnostic>)],
    model: &mut Model,
    diags: &mut Diagnostics,
) {
    let mut stack: Vec<TypeKey> = Vec::new();
    for v in model.groups.iter().flat_map(|g| &g.versions) {
        for def in v.types.values() {
            def.visit_types(&mut |t| collect_named(t, &mut stack));
        }
    }
    let mut reported: BTreeSet<String> = BTreeSet::new();
    let mut lowered: BTreeMap<String, PackageTypes> = BTreeMap::new();
    while let Some(key) = stack.pop() {
        if requested.contains(&key.package) || model.external_types.contains_key(&key) {
            continue;
        }
        let Some(idx) = tree.package_index(&key.package) else { continue };
        if reported.insert(key.package.clone())
            && let Some((_, errors)) = others.iter().find(|(p, _)| p.key() == key.package)
        {
            for e in errors {
                diags.push(e.clone());
            }
        }
        let pkg = tree.packages[idx].pkg;
        let types = lowered.entry(key.package.clone()).or_insert_with(|| package_types(pkg, diags));
        let Some((module, item)) = types.items.get(&key.name) else { continue };
        let ctx = TypeCtx {
            file: pkg.file_of(&pkg.modules[*module]),
            site: Site { tree, pkg: idx, module: *module, generic: &types.generic, bound: None },
        };
        if let Some(def) = lower_type(&ctx, item, types.clone_impls.contains(&key.name), diags) {
            def.visit_types(&mut |t| collect_named(t, &mut stack));
            model.external_types.insert(key, def);
        }
    }
}

pub(crate) fn marker_errors(diags: &mut Diagnostics, file: &Arc<crate::diag::SourceFile>, errors: Vec<MarkerError>) {
    for e in errors {
        diags.push(Diagnostic::error(e.message).at(file.location(e.span)).help_opt(e.help));
    }
}

/// The structs and enums of a package, where they are, and which ones
/// implement `Clone` by hand or are generic.
struct PackageTypes<'a> {
    /// Name → (module index, item).
    items: BTreeMap<String, (usize, &'a syn::Item)>,
    clone_impls: BTreeSet<String>,
    /// Generic non-API types (they have no schema; API types are reported where defined).
    generic: BTreeSet<String>,
}

fn package_types<'a>(pkg: &'a Package, diags: &mut Diagnostics) -> PackageTypes<'a> {
    let mut items: BTreeMap<String, (usize, &syn::Item)> = BTreeMap::new();
    let mut clone_impls = BTreeSet::new();
    for (m_idx, module) in pkg.modules.iter().enumerate() {
        let file = pkg.file_of(module);
        for item in pkg.items(module) {
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
            if let Some((prev, prev_item)) = items.get(&name) {
                let span = item_ident_span(item);
                let first = pkg.file_of(&pkg.modules[*prev]).source.location(item_ident_span(prev_item));
                diags.push(
                    Diagnostic::error(format!("type `{name}` is defined twice in this package"))
                        .at(file.source.location(span))
                        .note(format!("first defined at {}:{}:{}", first.file.display(), first.line, first.column + 1))
                        .help("API type names are unique within a `<group>/<version>` package; rename one"),
                );
                continue;
            }
            items.insert(name, (m_idx, item));
        }
    }
    let generic = items
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
    PackageTypes { items, clone_impls, generic }
}

fn lower_package(
    settings: &Settings,
    apis_module: &str,
    tree: &Tree,
    idx: usize,
    diags: &mut Diagnostics,
) -> Option<(String, Version)> {
    let pkg = tree.packages[idx].pkg;
    // group_name!(..) and `mod register;`
    let mut group: Option<(String, Origin)> = None;
    // An invalid group_name! was already reported; "no API group" would repeat it.
    let mut group_marker_seen = false;
    let mut declares_register = None;
    let mut module_origin = None;
    let register_module = settings.register_module();
    for module in &pkg.modules {
        let file = pkg.file_of(module);
        let is_module = module.path.is_empty() && pkg.module_file == Some(module.file);
        if is_module {
            declares_register = Some(false);
            module_origin = Some(Origin { file: file.source.clone(), span: Span::call_site() });
        }
        for item in pkg.items(module) {
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
                syn::Item::Mod(m) if is_module && register_module.as_deref() == Some(&m.ident.to_string()) => {
                    declares_register = Some(true)
                }
                _ => {}
            }
        }
    }
    for (location, name, candidates) in &pkg.missing_modules {
        if register_module.as_deref() == Some(name.as_str()) {
            continue;
        }
        let looked: Vec<String> = candidates.iter().map(|c| format!("`{}`", c.display())).collect();
        diags.push(
            Diagnostic::warning(format!("module `{name}` has no file: its types are ignored"))
                .at(location.clone())
                .note(format!("looked for {}", looked.join(" and ")))
                .help("create the file, or remove the `mod` declaration (rustc refuses it too)"),
        );
    }
    for path in &pkg.unreached {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if pkg.excluded_modules.contains(&stem) {
            diags.push(
                Diagnostic::warning(format!(
                    "`{}` is declared behind a `cfg` that does not hold in a normal build: its types are ignored",
                    path.display()
                ))
                .help(format!("declare it without the `cfg` (`mod {stem};`) to generate for its types")),
            );
            continue;
        }
        diags.push(
            Diagnostic::warning(format!(
                "`{}` is not part of the module tree of `{}`: its types are ignored",
                path.display(),
                pkg.key()
            ))
            .help(format!(
                "declare it in the version module (`mod {};`), or delete it",
                path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
            )),
        );
    }

    let types_of_pkg = package_types(pkg, diags);
    misspelled_markers(pkg, &types_of_pkg, diags);
    let mut types = BTreeMap::new();
    let mut roots = Vec::new();
    for (name, (module, item)) in &types_of_pkg.items {
        let file = pkg.file_of(&pkg.modules[*module]);
        let ctx = TypeCtx {
            file,
            site: Site { tree, pkg: idx, module: *module, generic: &types_of_pkg.generic, bound: None },
        };
        if let Some(def) = lower_type(&ctx, item, types_of_pkg.clone_impls.contains(name), diags) {
            let attrs = item_attrs(item);
            let genclient = attrs.iter().find(|a| markers::is_genclient(a));
            let resource_attrs: Vec<&syn::Attribute> = attrs.iter().filter(|a| a.path().is_ident("resource")).collect();
            if genclient.is_some() || !resource_attrs.is_empty() {
                roots.push((def.name.clone(), file, genclient, resource_attrs));
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
    unreachable_types(tree, idx, &types_of_pkg, &types, &kinds, diags);
    // register.rs declares `pub type <Kind>List = ObjectList<Kind>`, and the
    // version module re-exports it beside the package's own types.
    for kind in &kinds {
        let list = format!("{}List", kind.rust_name);
        if let Some((module, item)) = types_of_pkg.items.get(&list) {
            let file = pkg.file_of(&pkg.modules[*module]);
            diags.push(
                Diagnostic::error(format!("`{list}` is also the list type generated for kind `{}`", kind.rust_name))
                    .at(file.source.location(item_ident_span(item)))
                    .note(format!(
                        "register.rs declares `pub type {list} = ObjectList<{}>`, which lists and watches use",
                        kind.rust_name
                    ))
                    .help(format!("remove `{list}` (Go's hand-written list type is generated here), or rename it")),
            );
        }
    }

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
            package: pkg.key(),
            dir: pkg.dir.clone(),
            module_path,
            kinds,
            types,
            declares_register,
            module_origin,
        },
    ))
}

/// Types that generated code names by their path, `<package>::Name`, and
/// that cannot be named so: defined in a module of the package and not
/// brought to its root by a `use`. Generated code names the kinds, the
/// types of their `spec` (`Kind::new`) and API enums, newtypes and
/// transparent structs (apply configurations hold them as they are); other
/// structs with fields get apply configurations of their own, so such a
/// struct in a module of its own is fine.
fn unreachable_types(
    tree: &Tree,
    idx: usize,
    items: &PackageTypes,
    types: &BTreeMap<String, TypeDef>,
    kinds: &[Kind],
    diags: &mut Diagnostics,
) {
    let package = tree.packages[idx].pkg.key();
    let mut named: BTreeSet<&str> = kinds.iter().map(|k| k.rust_name.as_str()).collect();
    for kind in kinds {
        if let Some(TypeRef::Named(key)) = &kind.spec_type
            && key.package == package
        {
            named.insert(&key.name);
        }
    }
    for (name, def) in types {
        // Held as they are by apply configurations, so named by their path:
        // enums, newtypes and transparent structs.
        let held = matches!(def.body, Body::Enum(_) | Body::Newtype(..))
            || (matches!(def.body, Body::Struct(_)) && def.serde.transparent);
        if held && def.derives_api_type {
            named.insert(name);
        }
    }
    for name in named {
        let (Some(def), Some((module, _))) = (types.get(name), items.items.get(name)) else { continue };
        let path = tree.module_path(idx, *module).join("::");
        let error = match tree.reachable_at_root(idx, name) {
            resolve::AtRoot::Yes => continue,
            resolve::AtRoot::PrivateUse if tree.root_sees_private_uses => continue,
            resolve::AtRoot::PrivateUse => Diagnostic::error(format!(
                "`{name}` is defined in module `{path}` and brought to the package's root only by a private `use`"
            )),
            resolve::AtRoot::No => Diagnostic::error(format!(
                "`{name}` is defined in module `{path}` and cannot be named at the package's root"
            )),
        };
        diags.push(
            error
                .at(def.origin.location())
                .note("generated code names kinds, their spec types and API enums as `<package>::Name`")
                .help(format!(
                    "re-export it from the version module: `pub use {path}::{name};` (or `pub use {path}::*;`), or define it beside the kinds"
                )),
        );
    }
}

/// The attributes kube-codegen reads on API types and their fields.
const MARKER_ATTRIBUTES: [&str; 3] = ["genclient", "resource", "validate"];

/// Reports attributes whose name is a likely typo of a marker's
/// (`#[resorce(..)]`, `#[validation(..)]`): the markers they meant would be
/// silently missing from the output, and rustc refuses them anyway. Checked:
/// every type's own attributes, and those of API types' fields and variants.
fn misspelled_markers(pkg: &Package, types: &PackageTypes, diags: &mut Diagnostics) {
    for (module, item) in types.items.values() {
        let file = pkg.file_of(&pkg.modules[*module]);
        let own = item_attrs(item);
        let is_api = markers::is_genclient_any(own) || derives(own, "ApiType");
        let mut attrs: Vec<&syn::Attribute> = own.iter().collect();
        if is_api {
            match item {
                syn::Item::Struct(s) => attrs.extend(s.fields.iter().flat_map(|f| &f.attrs)),
                syn::Item::Enum(e) => {
                    for v in &e.variants {
                        attrs.extend(&v.attrs);
                        attrs.extend(v.fields.iter().flat_map(|f| &f.attrs));
                    }
                }
                _ => {}
            }
        }
        // Inside fenced code of a doc comment (kept in descriptions as it is).
        let mut in_code = false;
        for attr in attrs {
            if is_api {
                go_markers_in_docs(attr, &mut in_code, &file.source, diags);
            }
            let Some(name) = attr.path().get_ident().map(ToString::to_string) else { continue };
            if MARKER_ATTRIBUTES.contains(&name.as_str()) {
                continue;
            }
            if name == "schemars" && is_api {
                schemars_validation(attr, &file.source, diags);
                continue;
            }
            // Two edits at most (other crates' attributes stay clear of it),
            // and kubebuilder's word for the validation markers.
            let lower = name.to_lowercase();
            let meant = MARKER_ATTRIBUTES
                .iter()
                .find(|m| crate::ident::edit_distance(&lower, m) <= 2 || (**m == "validate" && lower == "validation"));
            if let Some(meant) = meant {
                diags.push(
                    Diagnostic::error(format!("unknown attribute `{name}`"))
                        .at(file.source.location(attr.path().span()))
                        .help(format!("did you mean `{meant}`? (see docs/markers.md)")),
                );
            }
        }
    }
}

/// Go markers kept in a doc comment of an API type, ported from Go
/// (`/// +kubebuilder:validation:Minimum=1`): kube-codegen reads Rust
/// markers only, so the bound would be missing from the CRD. The lines are
/// left out of descriptions, as controller-gen leaves them out.
fn go_markers_in_docs(
    attr: &syn::Attribute,
    in_code: &mut bool,
    source: &crate::diag::SourceFile,
    diags: &mut Diagnostics,
) {
    let syn::Meta::NameValue(nv) = &attr.meta else { return };
    if !nv.path.is_ident("doc") {
        return;
    }
    let Some(doc) = attrs::doc_text(&nv.value) else {
        diags.push(
            Diagnostic::warning("this doc attribute is not read: the description leaves it out")
                .at(source.location(attr.span()))
                .help("kube-codegen reads doc comments, string literals and `concat!` of literals; write the text as `///` lines"),
        );
        return;
    };
    // The lines as the description reads them (`doc_comment`).
    for line in attrs::block_comment_lines(&doc) {
        let line = line.strip_prefix(' ').unwrap_or(line);
        if line.starts_with("```") || line.starts_with("~~~") {
            *in_code = !*in_code;
        }
        if *in_code {
            continue;
        }
        let Some(marker) = attrs::go_marker(line) else { continue };
        let help = match attrs::rust_spelling_of_go_marker(marker) {
            Some(rust) => format!("write {rust} instead (docs/markers.md lists every marker's Rust spelling)"),
            None => "docs/markers.md lists the Rust spelling of kubebuilder's markers".to_string(),
        };
        diags.push(
            Diagnostic::warning(format!("Go marker `+{marker}` in a doc comment has no effect"))
                .at(source.location(attr.span()))
                .help(help),
        );
    }
}

/// A `#[schemars(..)]` validation (kube-derive's way to put bounds in a
/// CRD) on an API type: kube-codegen reads `#[validate(..)]` markers only,
/// so the bound would be missing from the CRD without a word.
fn schemars_validation(attr: &syn::Attribute, source: &crate::diag::SourceFile, diags: &mut Diagnostics) {
    let mut found = Vec::new();
    let _ = attr.parse_nested_meta(|meta| {
        if let Some(key) = meta.path.get_ident().map(ToString::to_string)
            && matches!(
                key.as_str(),
                "range" | "length" | "regex" | "email" | "url" | "contains" | "required" | "inner" | "schema_with"
            )
        {
            found.push((key, meta.path.span()));
        }
        if meta.input.peek(syn::Token![=]) {
            meta.value()?.parse::<syn::Expr>()?;
        } else if meta.input.peek(syn::token::Paren) {
            meta.input.parse::<proc_macro2::Group>()?;
        }
        Ok(())
    });
    for (key, span) in found {
        let instead = match key.as_str() {
            "range" => "`#[validate(minimum = .., maximum = ..)]`",
            "length" => "`#[validate(min_length = .., max_length = ..)]` (`min_items` / `max_items` on lists)",
            "regex" => "`#[validate(pattern = \"..\")]`",
            "email" => "`#[validate(format = \"email\")]`",
            "url" => "`#[validate(format = \"uri\")]`",
            "required" => "`#[validate(required)]`",
            "inner" => "`#[validate(items(..))]`",
            "schema_with" => "the schema itself, `#[validate(schema_json = r#\"{..}\"#)]`",
            _ => "a CEL rule, `#[validate(rule = \"..\")]`",
        };
        diags.push(
            Diagnostic::warning(format!("`#[schemars({key} ..)]` is not read: the CRD does not have it"))
                .at(source.location(span))
                .help(format!("kube-codegen reads `#[validate(..)]` markers: write {instead}")),
        );
    }
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
    if !metadata.is_some_and(|f| f.ty.is_object_meta()) {
        // An ObjectMeta under another JSON name is the likely mistake.
        let renamed = fields.iter().find(|f| f.ty.is_object_meta());
        let help = match renamed {
            Some(f) => format!(
                "`{}` is the ObjectMeta, serialized as `{}`: the API needs it as `metadata`",
                f.rust_name, f.json_name
            ),
            None => "add `pub metadata: ObjectMeta` (k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)"
                .to_string(),
        };
        diags.push(
            Diagnostic::error(format!("root type `{}` has no `metadata: ObjectMeta` field", def.name))
                .at(metadata.or(renamed).map_or(loc.clone(), |f| f.origin.location()))
                .help(help),
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
    } else if let Some(f) = fields.iter().find(|f| f.ty.unwrap_option() == &TypeRef::Known(Known::TypeMeta)) {
        // kube's `Object` holds `Option<TypeMeta>`; a kind needs it always.
        diags.push(
            Diagnostic::error(format!("`{}` of `{}` is an `Option<TypeMeta>`", f.rust_name, def.name))
                .at(f.origin.location())
                .note("every object of a kind carries `apiVersion` and `kind`; generated code sets them")
                .help(format!(
                    "write `#[serde(flatten, default)] pub {}: TypeMeta`, without the `Option`",
                    f.rust_name
                )),
        );
        return None;
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
    if let Some(status) = fields.iter().find(|f| f.json_name == "status")
        && status.required(def.serde.default)
        && status.validate.required.is_none()
    {
        diags.push(
            Diagnostic::warning(format!("the `status` field of `{}` is required", def.name))
                .at(status.origin.location())
                .note("the API server then rejects every object created without a status, and clients create objects without one")
                .help(format!(
                    "write `#[serde(default, skip_serializing_if = \"Option::is_none\")] pub {}: Option<..>` (or add `#[serde(default)]`); `#[validate(required)]` keeps it required without this warning",
                    status.rust_name
                )),
        );
    }
    let spec_type = fields
        .iter()
        .find(|f| f.json_name == "spec")
        .map(|f| f.ty.clone())
        .filter(|t| matches!(t, TypeRef::Named(_) | TypeRef::Builtin(_)));

    let kind = res.kind.as_ref().map_or(def.name.clone(), |k| k.value.clone());
    let plural = res.plural.as_ref().map_or_else(|| pluralize(&kind, &settings.plural_exceptions), |p| p.value.clone());
    let singular = res.singular.as_ref().map_or_else(|| kind.to_lowercase(), |s| s.value.clone());
    // controller-gen names a kind's CRD with flect's plural: where that
    // differs, a CRD controller-gen wrote is not the one written here.
    let flect = crate::plural::controller_gen_plural(&kind);
    if res.plural.is_none()
        && res.skip_crd.is_none()
        && !settings.plural_exceptions.contains_key(&kind)
        && flect != plural
    {
        diags.push(
            Diagnostic::warning(format!(
                "kind `{kind}` gets the plural `{plural}` (client-gen's rules); controller-gen gives it `{flect}`"
            ))
            .at(loc.clone())
            .note(format!(
                "the plural names the CRD (`{plural}.<group>`) and the resource path; a CRD that controller-gen wrote for this kind is `{flect}.<group>`, another CRD"
            ))
            .help(format!(
                "write `#[resource(plural = \"{flect}\")]` to match controller-gen, or `#[resource(plural = \"{plural}\")]` to keep `{plural}` without this warning"
            )),
        );
    }
    for (what, value) in [("plural", res.plural.as_ref()), ("singular", res.singular.as_ref())] {
        if let Some(v) = value
            && !is_dns_label(&v.value)
        {
            diags.push(
                Diagnostic::error(format!("{what} name `{}` must be a lower-case DNS label", v.value))
                    .at(def.origin.with_span(v.span).location())
                    .help(format!("write `{what} = \"{}\"`", dns_label_like(&v.value))),
            );
            ok = false;
        }
    }
    // The API server checks `kind` and `listKind` lower-cased as DNS-1035 labels.
    for (what, value) in [("kind", res.kind.as_ref()), ("list_kind", res.list_kind.as_ref())] {
        if let Some(v) = value
            && !is_kind_name(&v.value)
        {
            diags.push(
                Diagnostic::error(format!("`{what} = {:?}` is not a kind name", v.value))
                    .at(def.origin.with_span(v.span).location())
                    .help("a kind name is a letter followed by letters, digits and `-` (the API server checks it lower-cased as a DNS-1035 label), e.g. `Student`, `StudentList`"),
            );
            ok = false;
        }
    }
    if crate::ident::snake_case(&def.name) == "mod" {
        diags.push(
            Diagnostic::error(format!(
                "type `{}` would get the generated module `mod`, whose file is `mod.rs`",
                def.name
            ))
            .at(def.origin.location())
            .help(format!("rename the type, and keep the kind's name with `#[resource(kind = \"{}\")]`", def.name)),
        );
        ok = false;
    }
    if res.kind.is_none() && !is_kind_name(&kind) {
        diags.push(
            Diagnostic::error(format!("type name `{kind}` is not a kind name"))
                .at(def.origin.location())
                .help("a kind name is an ASCII letter followed by ASCII letters and digits; rename the type, or set `#[resource(kind = \"..\")]`"),
        );
        ok = false;
    }
    if let Some(l) = &res.list_kind
        && l.value == kind
    {
        diags.push(
            Diagnostic::error(format!("`list_kind = {:?}` is the kind itself", l.value))
                .at(def.origin.with_span(l.span).location())
                .help(format!("the API server needs them to differ; leave `list_kind` out for `{kind}List`")),
        );
        ok = false;
    }
    for list in [res.short_names.as_ref(), res.categories.as_ref()].into_iter().flatten() {
        for s in &list.value {
            if !is_dns_label(&s.value) {
                diags.push(
                    Diagnostic::error(format!("`{}` must be a lower-case DNS label", s.value))
                        .at(def.origin.with_span(s.span).location())
                        .help(format!("write `\"{}\"`", dns_label_like(&s.value))),
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
    // A `status` field whose type did not resolve is reported there; saying
    // here that there is none would send the reader the wrong way.
    let status_unresolved =
        !fields.iter().any(|f| f.rust_name == "status") && def.rust_fields.iter().any(|(n, _)| n == "status");
    if let Some(span) = res.status
        && !has_status_field
        && !status_unresolved
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
        && !status_unresolved
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
            if !matches!(m.verb.value, Verb::Get | Verb::Update | Verb::Create | Verb::Patch) || m.subresource.is_none() {
                diags.push(
                    Diagnostic::error(format!("extra method `{}`: only `get`, `update`, `create` and `patch` on a subresource are generated", m.name.value))
                        .at(def.origin.with_span(m.span).location())
                        .help("give it `subresource = \"..\"` and verb `get`, `update`, `create` or `patch`, or write the method by hand in `<kind>_expansion.rs`"),
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

    if let Some(skip) = res.skip_crd {
        ok &= check_skip_crd(def, &res, skip, diags);
    }

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
        selectable_fields: res.selectable_fields,
        storage: res.storage.map(|s| def.origin.with_span(s)),
        served: res.served.is_none_or(|s| s.value),
        deprecated: res.deprecated.map(|d| d.value),
        conversion_webhook: res.conversion_webhook,
        mutating_webhook: res.mutating_webhook,
        validating_webhook: res.validating_webhook,
        annotations: res.annotations.into_iter().map(|(k, v)| (k.value, v)).collect(),
        labels: res.labels.into_iter().map(|(k, v)| (k.value, v)).collect(),
        skip_crd: res.skip_crd.is_some(),
        type_meta,
        metadata_field: metadata.map_or_else(|| "metadata".into(), |f| f.rust_name.clone()),
        spec_type,
        origin: def.origin.clone(),
    })
}

/// `#[resource(skip_crd)]` with markers that only shape a CRD: each is an
/// error (they would be silently dropped). Names, scope, subresources and
/// admission webhooks stay meaningful for an aggregated API server's kind.
fn check_skip_crd(def: &TypeDef, res: &crate::markers::Resource, skip: Span, diags: &mut Diagnostics) -> bool {
    let spans: Vec<(&str, Span)> = [
        ("short_names", res.short_names.as_ref().map(|s| s.span)),
        ("categories", res.categories.as_ref().map(|s| s.span)),
        ("printcolumn", res.print_columns.first().map(|c| c.span)),
        ("storage", res.storage),
        ("served", res.served.as_ref().map(|s| s.span)),
        ("deprecated", res.deprecated.as_ref().map(|d| d.span)),
        ("annotations", res.annotations.first().map(|(k, _)| k.span)),
        ("labels", res.labels.first().map(|(k, _)| k.span)),
        ("selectable_field", res.selectable_fields.first().map(|f| f.span)),
        ("conversion_webhook", res.conversion_webhook.as_ref().map(|c| c.span)),
    ]
    .into_iter()
    .filter_map(|(key, span)| span.map(|s| (key, s)))
    .collect();
    for (key, span) in &spans {
        diags.push(
            Diagnostic::error(format!("`{key}` on `{}`, which has `skip_crd`: it only shapes the CRD, and none is generated", def.name))
                .at(def.origin.with_span(*span).location())
                .note(format!("`skip_crd` is on line {}", def.origin.with_span(skip).location().line))
                .help("an aggregated API server serves its own discovery, tables and conversions: remove the marker, or remove `skip_crd` to generate a CRD"),
        );
    }
    spans.is_empty()
}

/// `#[resource(conversion_webhook(..))]` across the versions of one kind:
/// one CRD has one conversion, so the versions that give it must agree, and
/// a kind with one version has nothing to convert.
fn check_conversion_webhook(kind: &str, versions: &[(&Version, &Kind)], diags: &mut Diagnostics) {
    let given: Vec<(&Version, &Kind, &crate::markers::ConversionWebhook)> =
        versions.iter().filter_map(|(v, k)| k.conversion_webhook.as_ref().map(|c| (*v, *k, c))).collect();
    let Some((first_version, _, first)) = given.first() else { return };
    for (v, k, c) in &given[1..] {
        if c.to_crd() != first.to_crd() {
            diags.push(
                Diagnostic::error(format!(
                    "kind `{kind}` has a different `conversion_webhook` in version `{}` than in `{}`",
                    v.name, first_version.name
                ))
                .at(k.origin.with_span(c.span).location())
                .help("one CRD has one conversion webhook: give it on one version (the storage version) or the same on each"),
            );
        }
    }
    if versions.len() == 1 {
        let (_, k, c) = given[0];
        diags.push(
            Diagnostic::warning(format!("`conversion_webhook` on kind `{kind}`, which has one version"))
                .at(k.origin.with_span(c.span).location())
                .help("the API server calls a conversion webhook only between versions; generate the other versions too (`group:v1,v2`)"),
        );
    }
}

/// Methods of a generated kind client besides the verbs themselves.
const GENERATED_CLIENT_METHODS: [&str; 7] =
    ["api", "new", "namespace", "inner", "list_all", "patch_status", "set_type_meta"];

/// Methods of the generated `SharedInformerFactory`: a group accessor of
/// the same name would not compile.
const FACTORY_METHODS: [&str; 7] =
    ["new", "from_runtime", "runtime", "start", "wait_for_cache_sync", "shutdown", "for_resource"];

/// What the API server takes as a kind: lower-cased, a DNS-1035 label.
fn is_kind_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic()) && is_dns_label(&s.to_lowercase())
}

/// The closest lower-case DNS label to `s`, for a hint: lower-cased, other
/// characters as `-`, no leading digit or dash, no trailing dash.
fn dns_label_like(s: &str) -> String {
    let mapped: String =
        s.to_lowercase().chars().map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '-' }).collect();
    let mut out = String::new();
    for c in mapped.trim_start_matches(|c: char| !c.is_ascii_lowercase()).chars() {
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out.truncate(63);
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() { "name".to_string() } else { out }
}

use crate::ident::is_dns_label;

/// Cross-type and cross-version checks on the finished model.
fn check_model(settings: &Settings, model: &Model, diags: &mut Diagnostics) {
    let mut warned_optional = BTreeSet::new();
    // One variant per kind in the generated GenericInformer and the fake's
    // object enum, named from group directory, version and type.
    let mut variants: BTreeMap<String, (&Group, &Version, &Kind)> = BTreeMap::new();
    for group in &model.groups {
        let module = crate::emit::views::group_module(&group.package);
        for v in &group.versions {
            for k in &v.kinds {
                let variant = crate::emit::views::generic_variant(&module, &v.name, &k.rust_name);
                match variants.get(&variant) {
                    Some((g, w, other)) if !(g.package == group.package && w.name == v.name) => diags.push(
                        Diagnostic::error(format!(
                            "`{}` of `{}/{}` and `{}` of `{}/{}` would both be `{variant}` in the generated code",
                            other.rust_name, g.package, w.name, k.rust_name, group.package, v.name
                        ))
                        .at(k.origin.location())
                        .help("the generic informer and the fake clientset name each kind by group directory, version and type: rename a group directory or a type"),
                    ),
                    Some(_) => {}
                    None => {
                        variants.insert(variant, (group, v, k));
                    }
                }
            }
        }
    }
    // The apply configurations' extract functions of one version share a
    // module: `extract_foo_from` of `Foo` is also `FooFrom`'s `extract_foo_from`.
    if settings.runs(GeneratorKind::ApplyConfig) {
        for v in model.groups.iter().flat_map(|g| &g.versions) {
            let mut names: BTreeMap<String, &Kind> = BTreeMap::new();
            for k in &v.kinds {
                let base = crate::emit::applyconfig::extract_name(&k.rust_name);
                let mut own = vec![base.clone(), format!("{base}_from")];
                if k.status_subresource {
                    own.push(format!("{base}_status"));
                }
                for name in own {
                    if let Some(other) = names.insert(name.clone(), k) {
                        diags.push(
                            Diagnostic::error(format!(
                                "`{}` and `{}` of `{}` would both get the apply configuration function `{name}`",
                                other.rust_name, k.rust_name, v.package
                            ))
                            .at(k.origin.location())
                            .help("rename one of the types"),
                        );
                    }
                }
            }
        }
    }
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
            let mut plurals: BTreeMap<&str, &Kind> = BTreeMap::new();
            let mut kinds: BTreeMap<&str, &Kind> = BTreeMap::new();
            for k in &v.kinds {
                if let Some(prev) = kinds.insert(k.kind.as_str(), k) {
                    diags.push(
                        Diagnostic::error(format!(
                            "types `{}` and `{}` are both kind `{}` in `{}`",
                            prev.rust_name, k.rust_name, k.kind, v.package
                        ))
                        .at(k.origin.location())
                        .help(
                            "a kind has one type per version; rename one, or set another `#[resource(kind = \"..\")]`",
                        ),
                    );
                    continue;
                }
                by_kind.entry(k.kind.as_str()).or_default().push((v, k));
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
        // The API server accepts a CRD's short names only if no other CRD
        // of the group uses them as any of its names.
        let mut names: BTreeMap<&str, &Kind> = BTreeMap::new();
        for versions in by_kind.values() {
            let k = versions[0].1;
            for name in [&k.plural, &k.singular] {
                names.entry(name.as_str()).or_insert(k);
            }
        }
        for versions in by_kind.values() {
            let k = versions[0].1;
            for short in &k.short_names {
                match names.get(short.as_str()) {
                    Some(other) if other.kind != k.kind => diags.push(
                        Diagnostic::error(format!(
                            "short name `{short}` of `{}` is already a name of `{}` in group `{}`",
                            k.kind, other.kind, group.name
                        ))
                        .at(k.origin.location())
                        .help("the API server would not accept the second CRD's names; pick another short name"),
                    ),
                    _ => {
                        names.insert(short.as_str(), k);
                    }
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
            // Names and CRD metadata may be given on one version or on
            // several alike, not differently: one CRD carries them.
            for (i, (v, k)) in versions.iter().enumerate() {
                let earlier = versions[..i].iter().find_map(|(w, o)| crd_metadata_clash(k, o).map(|what| (w, what)));
                if let Some((w, what)) = earlier {
                    diags.push(
                        Diagnostic::error(format!(
                            "kind `{kind}` has other {what} in version `{}` than in `{}`",
                            v.name, w.name
                        ))
                        .at(k.origin.location())
                        .help("one CRD carries them for every version: give them on one version, or the same on each"),
                    );
                }
            }
            if let Some((v, k)) = versions.iter().find(|(_, k)| k.skip_crd != first.skip_crd) {
                let (with, without) = if k.skip_crd { (*v, versions[0].0) } else { (versions[0].0, *v) };
                diags.push(
                    Diagnostic::error(format!(
                        "kind `{kind}` has `skip_crd` in version `{}` but not in `{}`",
                        with.name, without.name
                    ))
                    .at(k.origin.location())
                    .help("one CRD serves every version of a kind, or none does: give `#[resource(skip_crd)]` on every version or on none"),
                );
                continue;
            }
            if first.skip_crd {
                // No CRD: the aggregated API server picks its storage version.
                continue;
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
            check_conversion_webhook(kind, versions, diags);
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
            for key in reachable_types(model, v) {
                if let Some(def) = model.type_def(&key)
                    && warned_optional.insert(key.clone())
                {
                    optional_fields_serde_requires(def, diags);
                }
            }
            if settings.runs(GeneratorKind::Deepcopy) {
                for key in reachable_types(model, v) {
                    if let Some(def) = model.type_def(&key)
                        && !def.implements_clone
                    {
                        diags.push(
                            Diagnostic::error(format!("API type `{}` does not implement `Clone`", key.name))
                                .at(def.origin.location())
                                .help("add `#[derive(Clone)]`: in Rust the deep copy (Go's DeepCopy) is `Clone`"),
                        );
                    }
                }
            }
        }
    }
}

/// Warns of the fields of `def` that the CRD lets clients leave out
/// (`skip_serializing_if`, `#[validate(optional)]`) but serde cannot decode
/// without: objects created without them (by kubectl, by an older client)
/// would fail every list and watch of the controller.
fn optional_fields_serde_requires(def: &TypeDef, diags: &mut Diagnostics) {
    let Body::Struct(fields) = &def.body else { return };
    if def.serde.transparent || def.serde.default {
        return;
    }
    for f in fields {
        let serde_optional =
            matches!(f.ty, TypeRef::Option(_)) || f.serde.default || f.serde.flatten || f.serde.skip_deserializing;
        if serde_optional || f.required(false) {
            continue;
        }
        let why = if f.validate.optional.is_some() { "`#[validate(optional)]`" } else { "`skip_serializing_if`" };
        diags.push(
            Diagnostic::warning(format!(
                "field `{}` of `{}` may be left out of objects but does not decode without it",
                f.rust_name, def.name
            ))
            .at(f.origin.location())
            .note(format!(
                "{why} makes it optional in the CRD, and serde still requires it: an object created without it (by kubectl, or an older client) fails every list and watch of the controller"
            ))
            .help("add `default` to its `#[serde(..)]`, e.g. `#[serde(default, skip_serializing_if = \"..\")]`"),
        );
    }
}

/// Every API type reachable from the version's kinds, plus every type of
/// the package deriving `ApiType`.
pub fn reachable_types(model: &Model, v: &Version) -> BTreeSet<TypeKey> {
    let key = |name: &str| TypeKey { package: v.package.clone(), name: name.to_string() };
    let mut out = BTreeSet::new();
    let mut stack: Vec<TypeKey> = v.kinds.iter().map(|k| key(&k.rust_name)).collect();
    stack.extend(v.types.values().filter(|t| t.derives_api_type).map(|t| key(&t.name)));
    while let Some(k) = stack.pop() {
        if !out.insert(k.clone()) {
            continue;
        }
        let Some(def) = model.type_def(&k) else { continue };
        def.visit_types(&mut |t| collect_named(t, &mut stack));
    }
    out
}

/// The API types a type refers to (through `Option`, lists, sets and maps).
pub fn collect_named(t: &TypeRef, out: &mut Vec<TypeKey>) {
    match t {
        TypeRef::Named(n) => out.push(n.clone()),
        TypeRef::Option(i) | TypeRef::List(i) | TypeRef::Set(i) | TypeRef::Map(i) => collect_named(i, out),
        _ => {}
    }
}

/// What two versions of a kind give differently that their one CRD carries
/// (short names, categories, an annotation or a label), if anything.
fn crd_metadata_clash(a: &Kind, b: &Kind) -> Option<String> {
    let differ = |x: &[String], y: &[String]| !x.is_empty() && !y.is_empty() && x != y;
    let clash = |x: &BTreeMap<String, String>, y: &BTreeMap<String, String>| {
        x.iter().find(|(key, value)| y.get(*key).is_some_and(|other| other != *value)).map(|(key, _)| key.clone())
    };
    if differ(&a.short_names, &b.short_names) {
        return Some("short_names".to_owned());
    }
    if differ(&a.categories, &b.categories) {
        return Some("categories".to_owned());
    }
    if let Some(key) = clash(&a.annotations, &b.annotations) {
        return Some(format!("annotation `{key}`"));
    }
    clash(&a.labels, &b.labels).map(|key| format!("label `{key}`"))
}
