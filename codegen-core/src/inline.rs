//! Macro mode: the code and CRD of the kinds of one package, rendered to be
//! emitted inline by `#[genclient(version = "..")]` next to each kind.
//!
//! A proc macro sees one item, but a CRD needs the schemas of the nested
//! types. The macro therefore hands this module the path of the file the
//! kind is written in. The package is that file — or, when the file is part
//! of a `<version>/` directory, the module tree of the directory, exactly as
//! for the CLI — and it goes through the same parse → check → model → generate
//! phases as the CLI: the CRD is the CLI's byte for byte, the Rust items come
//! from the same templates, and every diagnostic keeps its file, line and
//! column so the macro can put it on the user's token.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use askama::Template;
use syn::spanned::Spanned as _;

use crate::diag::{Diagnostic, Diagnostics, Severity};
use crate::emit::filters;
use crate::emit::views::{self, KindView, Paths, VersionView};
use crate::emit::views::{NewValue, TypeMetaView};
use crate::emit::{Child, applyconfig, crd, render_apply_configs};
use crate::ident::snake_case;
use crate::markers::{self, GenClient};
use crate::parse::{self, Package, ParsedFile};
use crate::settings::{GeneratorKind, Settings};

/// What the engine found in the package of one source file.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Every file read, for callers that cache analyses (a changed file
    /// means a new analysis).
    pub inputs: Vec<PathBuf>,
    /// Whether the package is in macro mode (a kind says `#[genclient(version = "..")]`).
    pub inline: bool,
    /// Every error and warning of the package, with locations.
    pub diagnostics: Vec<Diagnostic>,
    /// The API types of the package (structs and enums with `#[genclient]`
    /// or `#[derive(ApiType)]`), in source order.
    pub items: Vec<ApiItem>,
    /// Generated code per kind (Rust type name), when the package is free of errors.
    pub kinds: BTreeMap<String, InlineKind>,
}

/// Why no code can be generated for any kind of a package.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What went wrong, rendered rustc-style (file, line, column, source line).
    pub reason: String,
    /// Every file read.
    pub inputs: Vec<PathBuf>,
}

/// One API type of the package and the lines it covers (attributes included).
#[derive(Clone, Debug)]
pub struct ApiItem {
    /// Rust type name.
    pub name: String,
    /// The file it is written in.
    pub file: PathBuf,
    /// First and last line (1-based).
    pub lines: (usize, usize),
    /// Whether it carries `#[genclient]`.
    pub genclient: bool,
    /// Whether it carries `#[resource(..)]` (a kind, with or without `#[genclient]`).
    pub resource: bool,
    /// Whether it is behind a `cfg` the engine cannot decide: its macros may
    /// not run, so the errors in it may be reported by no one else.
    pub conditional: bool,
}

/// The generated items of one kind.
#[derive(Clone, Debug)]
pub struct InlineKind {
    /// Rust items to emit beside the kind's type: a hidden module with the
    /// `kube::Resource` impls, list type, client, lister and informer, the
    /// `crd()` helpers, and re-exports.
    pub code: String,
    /// The CRD YAML, as the CLI writes it (without the generated-file
    /// header); empty for a kind with `skip_crd`.
    pub crd_yaml: String,
}

impl Analysis {
    /// The API item a diagnostic points into, if any.
    pub fn owner(&self, d: &Diagnostic) -> Option<&ApiItem> {
        let loc = d.location.as_ref()?;
        self.items.iter().find(|i| i.file == loc.file && i.lines.0 <= loc.line && loc.line <= i.lines.1)
    }

    /// Errors (not warnings) pointing into the item `name`.
    pub fn errors_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Diagnostic> + 'a {
        self.diagnostics
            .iter()
            .filter(move |d| d.severity == Severity::Error && self.owner(d).is_some_and(|i| i.name == name))
    }

    /// Errors pointing into no API item; the first kind with `#[genclient]` reports them.
    pub fn orphan_errors(&self) -> impl Iterator<Item = &Diagnostic> + '_ {
        self.diagnostics.iter().filter(move |d| d.severity == Severity::Error && self.owner(d).is_none())
    }

    /// Whether `name` is the first type with `#[genclient]` of the package.
    pub fn is_first_root(&self, name: &str) -> bool {
        self.items.iter().find(|i| i.genclient).is_some_and(|i| i.name == name)
    }
}

/// The identity of the package `file` belongs to (its version directory,
/// or the file itself): one analysis serves every kind of it.
pub fn package_key(file: &Path) -> PathBuf {
    let (dir, paths) = package_of(file);
    if paths.len() == 1 && paths[0] == file { file.to_path_buf() } else { dir }
}

impl Analysis {
    /// Why the kind `name` got no code although its own item has no error,
    /// when no other macro of the package says why: the kind is not among
    /// the items read, or errors keep it from being generated that are in
    /// items whose macros may not run (behind a `cfg` the engine cannot
    /// decide) or in no item while the first kind is such an item. Lists the
    /// first `max` of them, one line each.
    pub fn not_generated(&self, name: &str, max: usize) -> Option<String> {
        if !self.items.iter().any(|i| i.name == name) {
            return Some(format!(
                "kube-codegen did not find `{name}` among the items it read for this package\n\n= help: declare API types as items of a module that `mod` declarations reach (not inside a function, an item macro or a file outside the module tree)"
            ));
        }
        let first_root_runs = self.items.iter().find(|i| i.genclient).is_some_and(|i| !i.conditional);
        let errors: Vec<&Diagnostic> = self.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
        let unreported: Vec<&Diagnostic> = errors
            .iter()
            .copied()
            .filter(|d| match self.owner(d) {
                Some(owner) => owner.name != name && owner.conditional,
                None => !first_root_runs,
            })
            .collect();
        if unreported.is_empty() {
            // Every error is reported by the macro of the item it is in.
            return (errors.is_empty() && !self.kinds.contains_key(name))
                .then(|| format!("kube-codegen generated no code for `{name}` and reported no error; this is a bug"));
        }
        let mut out = format!(
            "no code is generated for `{name}`: its package has {} error{} in code whose macros may not run",
            unreported.len(),
            if unreported.len() == 1 { "" } else { "s" }
        );
        for d in unreported.iter().take(max) {
            out.push_str("\n  ");
            if let Some(l) = &d.location {
                out.push_str(&format!("{}:{}:{}: ", l.file.display(), l.line, l.column + 1));
            }
            out.push_str(&d.message);
        }
        if unreported.len() > max {
            out.push_str(&format!("\n  and {} more", unreported.len() - max));
        }
        out.push_str("\n\n= help: fix them, or keep API types out of code behind `cfg(feature = ..)` and other conditions kube-codegen cannot evaluate");
        Some(out)
    }
}

/// The files of the package `file` belongs to: the files of its `<version>/`
/// directory (and the `<version>.rs` beside it), or the file alone.
pub fn package_of(file: &Path) -> (PathBuf, Vec<PathBuf>) {
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let is_version = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(parse::is_version_name);
    if is_version(&dir) {
        return (dir.clone(), parse::package_files(&dir));
    }
    // `v1.rs` beside a `v1/` directory.
    let stem_dir = file.with_extension("");
    if file.file_stem().and_then(|n| n.to_str()).is_some_and(parse::is_version_name) && stem_dir.is_dir() {
        return (stem_dir.clone(), parse::package_files(&stem_dir));
    }
    (dir, vec![file.to_path_buf()])
}

fn derives_api_type(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|m| {
            found |= m.path.segments.last().is_some_and(|s| s.ident == "ApiType");
            Ok(())
        });
        found
    })
}

fn api_type_of(item: &syn::Item) -> Option<(&syn::Ident, &[syn::Attribute])> {
    let (ident, attrs): (&syn::Ident, &[syn::Attribute]) = match item {
        syn::Item::Struct(s) => (&s.ident, &s.attrs),
        syn::Item::Enum(e) => (&e.ident, &e.attrs),
        _ => return None,
    };
    (markers::is_genclient_any(attrs) || derives_api_type(attrs)).then_some((ident, attrs))
}

/// Blanks what the engine does not read of a macro-mode package (in place,
/// so module indexes stay valid): the user's other types and functions (in
/// macro mode the file is often `main.rs`).
fn blank_unkept(items: &mut [syn::Item]) {
    for item in items {
        match item {
            syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => blank_unkept(inner),
            other if !keep(other) => *other = syn::Item::Verbatim(proc_macro2::TokenStream::new()),
            _ => {}
        }
    }
}

/// Keeps what the engine reads of a macro-mode package: API types, type
/// aliases, `use` items, `group_name!`, `impl Clone` and modules.
fn keep(item: &syn::Item) -> bool {
    match item {
        syn::Item::Use(_) | syn::Item::Mod(_) | syn::Item::Type(_) => true,
        syn::Item::Macro(m) => markers::is_group_name_macro(&m.mac.path),
        syn::Item::Impl(i) => {
            i.trait_.as_ref().is_some_and(|(p, _)| p.segments.last().is_some_and(|s| s.ident == "Clone"))
        }
        other => api_type_of(other).is_some(),
    }
}

/// Whether a `#[genclient(..)]` names `version` (looked at token by token,
/// so a marker error elsewhere in the attribute does not hide it).
fn names_version(attr: &syn::Attribute) -> bool {
    match &attr.meta {
        syn::Meta::List(list) => {
            let tokens: Vec<proc_macro2::TokenTree> = list.tokens.clone().into_iter().collect();
            tokens.windows(2).any(|w| {
                matches!((&w[0], &w[1]), (proc_macro2::TokenTree::Ident(i), proc_macro2::TokenTree::Punct(p)) if i == "version" && p.as_char() == '=')
            })
        }
        _ => false,
    }
}

struct Root<'a> {
    name: String,
    file: &'a ParsedFile,
    genclient: Option<GenClient>,
}

/// Analyzes the package of `file` and, in macro mode, generates the code of
/// its kinds. Fails when a file of the package cannot be read or parsed:
/// then no kind of it can have a correct CRD.
pub fn analyze(file: &Path, runtime_path: &str) -> Result<Analysis, Failure> {
    let (dir, paths) = package_of(file);
    let mut diags = Diagnostics::new();
    let mut inputs = paths.clone();
    let mut pkg = parse::parse_files("inline", "v1", &dir, paths, crate::cfg::Build::Any, &mut diags);
    inputs.extend(pkg.files.iter().map(|f| f.source.path.clone()));
    if diags.has_errors() || pkg.files.is_empty() {
        let errors: Vec<String> =
            diags.sorted().iter().filter(|d| d.severity == Severity::Error).map(Diagnostic::render).collect();
        let reason = if errors.is_empty() {
            format!("kube-codegen cannot read `{}`", file.display())
        } else {
            format!("kube-codegen cannot read the package of this kind ({}):\n\n{}", dir.display(), errors.join("\n"))
        };
        inputs.sort();
        inputs.dedup();
        return Err(Failure { reason, inputs });
    }
    for f in &mut pkg.files {
        blank_unkept(&mut f.ast.items);
    }
    let mut out = Analysis::default();
    let mut roots = Vec::new();
    let mut has_group_name = false;
    let mut inline = false;
    for module in &pkg.modules {
        let f = pkg.file_of(module);
        for item in pkg.items(module) {
            if let syn::Item::Macro(_) = item {
                has_group_name = true;
            }
            let Some((ident, attrs)) = api_type_of(item) else { continue };
            let span = item.span();
            let genclient_attr = attrs.iter().find(|a| markers::is_genclient(a));
            out.items.push(ApiItem {
                name: ident.to_string(),
                file: f.source.path.clone(),
                lines: (span.start().line, span.end().line),
                genclient: genclient_attr.is_some(),
                resource: attrs.iter().any(|a| a.path().is_ident("resource")),
                conditional: pkg.is_conditional(&f.source.path, span.start().line),
            });
            if let Some(attr) = genclient_attr {
                inline |= names_version(attr);
                roots.push(Root {
                    name: ident.to_string(),
                    file: f,
                    genclient: markers::parse_genclient_attr(attr).ok(),
                });
            }
        }
    }
    out.inline = inline;
    out.inputs = inputs;
    if !inline {
        missing_version(file, &roots, &mut diags);
        out.diagnostics = diags.sorted();
        return Ok(out);
    }

    // One version per package; the group from `group = ".."` or `group_name!`.
    let mut version: Option<(String, &Root)> = None;
    for root in &roots {
        let Some(v) = root.genclient.as_ref().and_then(|g| g.version.as_ref()) else { continue };
        match &version {
            None => version = Some((v.value.clone(), root)),
            Some((first, first_root)) if *first != v.value => diags.push(
                Diagnostic::error(format!("`{}` says `version = \"{}\"`, `{}` in the same module says `\"{first}\"`", root.name, v.value, first_root.name))
                    .at(root.file.source.location(v.span))
                    .help("kinds of one module share one API version; put each version in its own module (e.g. `mod v1;`, `mod v2;`)"),
            ),
            Some(_) => {}
        }
    }
    let has_group = has_group_name || roots.iter().any(|r| r.genclient.as_ref().is_some_and(|g| g.group.is_some()));
    if let Some((v, root)) = &version
        && !has_group
        && let Some(span) = root.genclient.as_ref().and_then(|g| g.version.as_ref()).map(|s| s.span)
    {
        diags.push(
            Diagnostic::error(format!("`{}` has a version but no API group", root.name))
                .at(root.file.source.location(span))
                .help(format!(
                    "add the group next to the version: `#[genclient(group = \"{}.example.com\", version = \"{v}\")]` (or `codegen_macros::group_name!(\"..\");` in this module)",
                    root.name.to_lowercase()
                )),
        );
    }
    if diags.has_errors() {
        out.diagnostics = diags.sorted();
        return Ok(out);
    }
    // A marker error in some `#[genclient]` leaves the version unknown; the
    // check below reports that error.
    pkg.version = version.map(|(v, _)| v).unwrap_or_else(|| "v1".to_string());

    let mut settings = Settings::new(&dir)
        .with_generators([
            GeneratorKind::Deepcopy,
            GeneratorKind::Register,
            GeneratorKind::ApplyConfig,
            GeneratorKind::Client,
            GeneratorKind::Lister,
            GeneratorKind::Informer,
            GeneratorKind::Crd,
        ])
        .with_runtime_path(runtime_path)
        .with_apis_module("crate");
    settings.inline = true;
    // Where the package sits in the crate (from the compiling crate's
    // `src/`), so `crate::` and `super::` paths resolve; a version directory
    // also sees the other packages of its apis directory, as the CLI does.
    let crate_path = crate_path_of(&dir, file);
    let in_version_dir = dir.file_name().and_then(|n| n.to_str()).is_some_and(parse::is_version_name);
    if in_version_dir && let Some(group_dir) = dir.parent().and_then(|g| g.file_name()).and_then(|n| n.to_str()) {
        pkg.group_package = group_dir.to_string();
    }
    let (others, apis) = match (&crate_path, in_version_dir) {
        (Some(cp), true) if cp.len() >= 2 => {
            let apis_dir = dir.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
            let own =
                format!("{}/{}", pkg.group_package, dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
            (parse::other_packages(&apis_dir, &[own]), Some(cp[..cp.len() - 2].to_vec()))
        }
        _ => (Vec::new(), None),
    };
    out.inputs.extend(others.iter().flat_map(|(p, _)| p.files.iter().map(|f| f.source.path.clone())));
    out.inputs.sort();
    out.inputs.dedup();
    let mut model = crate::check::check_package(&settings, &pkg, crate_path, &others, apis.clone(), &mut diags);
    if diags.has_errors() {
        out.diagnostics = diags.sorted();
        return Ok(out);
    }
    // Apply configurations of the whole package (and the built-in types it
    // embeds) live once, in the module of the first kind whose macro surely
    // runs; every kind re-exports its own.
    let host = out
        .items
        .iter()
        .find(|i| i.genclient && !i.conditional && model.kinds().any(|(_, _, k)| k.rust_name == i.name))
        .map(|i| i.name.clone());
    let p = Paths::new(runtime_path);
    // The module (inside the package) each API type is written in.
    let mut module_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for module in &pkg.modules {
        for item in pkg.items(module) {
            if let Some((ident, _)) = api_type_of(item) {
                module_of.insert(ident.to_string(), module.path.clone());
            }
        }
    }
    let host_module = host.as_ref().and_then(|h| module_of.get(h)).cloned().unwrap_or_default();
    let apply_configs = host.as_ref().map(|host| {
        // From a package module of the tree (host module → hidden module →
        // `applyconfigurations` → group → version) up to the package root.
        let to_root = vec!["super"; 4 + host_module.len()].join("::");
        let types = model
            .groups
            .iter()
            .flat_map(|g| &g.versions)
            .flat_map(|v| v.types.keys().map(move |name| (v.package.clone(), name.clone())))
            .map(|(package, name)| {
                let mut parts = vec![to_root.clone()];
                parts.extend(module_of.get(&name).cloned().unwrap_or_default());
                parts.push(name.clone());
                ((package, name), parts.join("::"))
            })
            .collect();
        let apis =
            apis.as_ref().map(|a| if a.is_empty() { "crate".to_string() } else { format!("crate::{}", a.join("::")) });
        let paths = applyconfig::TypePaths { packages: BTreeMap::new(), types, apis };
        let modules = applyconfig::modules(&model, &p, &paths, settings.kube_version().version);
        let own_types: Vec<String> = modules
            .iter()
            .filter(|m| {
                model.groups.iter().flat_map(|g| &g.versions).any(|v| applyconfig::package_module(&v.package) == m.path)
            })
            .flat_map(|m| m.types.iter().filter(|t| t.kind.is_none()).map(|t| t.name.clone()))
            .collect();
        let root = applyconfig::tree(modules);
        let doc = "Apply configurations of this package's API types and of the built-in types they embed.";
        let child =
            render_apply_configs(&p, Path::new(""), "applyconfigurations", doc, &root, &mut |_, name, rendered| {
                Child { name: name.to_string(), body: Some(rendered.unwrap_or_default()) }
            });
        (format!("__kube_codegen_{}", snake_case(host)), child.body.unwrap_or_default(), own_types)
    });
    // The generated modules sit two levels below the kind's module.
    for g in &mut model.groups {
        for v in &mut g.versions {
            v.module_path = "super::super".to_string();
        }
    }
    let views = views::groups(&model, &p, &settings.plural_exceptions);
    let crd_options = crd::CrdOptions::from_settings(&settings);
    let schema_options = crate::emit::schema::SchemaOptions::from_settings(&settings);
    for (g, gv) in model.groups.iter().zip(&views) {
        for (v, vv) in g.versions.iter().zip(&gv.versions) {
            for (k, kv) in v.kinds.iter().zip(&vv.kinds) {
                // The schema the kind's `validate()` checks against.
                let mut kv = kv.clone();
                let (mut yaml, mut json, mut crd_name) = (String::new(), String::new(), String::new());
                if !k.skip_crd {
                    kv.validation_schema =
                        crate::emit::validate::validation_schema(&model, v, k, &schema_options, kv.status_subresource);
                    let Some(crd) = crd::build(&model, g, &[(v, k)], &crd_options, &mut diags) else { continue };
                    if diags.has_errors() {
                        continue;
                    }
                    yaml = format!("---\n{}", crd::to_yaml(&crd));
                    json = match serde_json::to_string(&crd) {
                        Ok(j) => j,
                        Err(e) => {
                            diags.push(Diagnostic::error(format!("cannot serialize the CRD of `{}`: {e}", k.kind)));
                            continue;
                        }
                    };
                    crd_name = crd.metadata.name.clone();
                }
                let kv = &kv;
                let vis = visibility(&pkg, &k.rust_name);
                let apply = apply_configs.as_ref().map(|(host_name, body, own_types)| InlineApply {
                    // From the kind's module up to the package root and down to the host's.
                    host_module: {
                        let up = module_of.get(&k.rust_name).map_or(0, Vec::len);
                        let mut parts = if up == 0 { vec!["self".to_string()] } else { vec!["super".to_string(); up] };
                        parts.extend(host_module.iter().cloned());
                        parts.push(host_name.clone());
                        parts.join("::")
                    },
                    package_path: applyconfig::package_module(&v.package).join("::"),
                    body: (host.as_deref() == Some(k.rust_name.as_str())).then(|| body.clone()),
                    own_types: own_types.clone(),
                });
                match render_kind(&p, vv, kv, &vis, &yaml, &json, &crd_name, apply.as_ref()) {
                    Ok(code) => {
                        out.kinds.insert(k.rust_name.clone(), InlineKind { code, crd_yaml: yaml });
                    }
                    Err(e) => diags.push(
                        Diagnostic::error(format!("cannot render the code of `{}`: {e}", k.rust_name))
                            .at(k.origin.location())
                            .note("this is a bug in kube-codegen"),
                    ),
                }
            }
        }
    }
    if diags.has_errors() {
        out.kinds.clear();
    }
    out.diagnostics = diags.sorted();
    Ok(out)
}

/// The module path of a package from the crate root, read off its place
/// under the compiling crate's `src/` (`src/apis/net/v1` → `apis::net::v1`;
/// `src/main.rs` or `src/lib.rs` → the root; `src/api.rs` → `api`).
fn crate_path_of(dir: &Path, file: &Path) -> Option<Vec<String>> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let src = std::fs::canonicalize(Path::new(&manifest).join("src")).ok()?;
    let in_version_dir = dir.file_name().and_then(|n| n.to_str()).is_some_and(parse::is_version_name);
    let target = if in_version_dir { std::fs::canonicalize(dir).ok()? } else { std::fs::canonicalize(file).ok()? };
    let rel = target.strip_prefix(&src).ok()?;
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if !in_version_dir {
        let last = parts.pop()?;
        let stem = last.strip_suffix(".rs")?;
        if !(parts.is_empty() && matches!(stem, "main" | "lib")) && stem != "mod" {
            parts.push(stem.to_string());
        }
    }
    Some(parts.into_iter().map(|p| p.replace('-', "_")).collect())
}

/// `#[genclient(group = "..")]` without `version` outside a `<version>/`
/// directory: neither the CLI (which needs the directory) nor the macro
/// (which needs the version) would generate anything.
fn missing_version(file: &Path, roots: &[Root], diags: &mut Diagnostics) {
    let in_version_package =
        file.parent().and_then(|d| d.file_name()).and_then(|n| n.to_str()).is_some_and(parse::is_version_name)
            || file.file_stem().and_then(|n| n.to_str()).is_some_and(parse::is_version_name);
    if in_version_package {
        return;
    }
    for root in roots {
        if let Some(g) = root.genclient.as_ref().and_then(|g| g.group.as_ref()) {
            diags.push(
                Diagnostic::error(format!("`{}` has an API group but no version", root.name))
                    .at(root.file.source.location(g.span))
                    .help(format!(
                        "add the version to generate the kind inline: `#[genclient(group = \"{}\", version = \"v1\")]`; or move the type into a `<group>/<version>/` directory and run kube-codegen",
                        g.value
                    )),
            );
        }
    }
}

fn visibility(pkg: &Package, name: &str) -> syn::Visibility {
    pkg.modules
        .iter()
        .flat_map(|m| pkg.items(m))
        .find_map(|i| match i {
            syn::Item::Struct(s) if s.ident == name => Some(s.vis.clone()),
            _ => None,
        })
        .unwrap_or(syn::Visibility::Inherited)
}

/// The hidden module of one kind and its re-exports (`templates/inline/kind.rs`).
#[derive(Template)]
#[template(path = "inline/kind.rs", escape = "none")]
struct InlineKindTemplate<'a> {
    p: &'a Paths,
    v: &'a VersionView,
    k: &'a KindView,
    module: &'a str,
    vis: &'a str,
    crd_yaml: &'a str,
    crd_json: &'a str,
    crd_name: &'a str,
    /// `register.rs` keeps its `//!` docs: they open the inline module.
    file_docs: bool,
    apply: Option<&'a InlineApply>,
    ac_name: &'a str,
    extract: &'a str,
}

/// Where a kind's apply configuration is, in macro mode.
struct InlineApply {
    /// The hidden module holding the package's configurations.
    host_module: String,
    /// The package's module below `applyconfigurations` (`example::v1`).
    package_path: String,
    /// The rendered `applyconfigurations` module, for the host kind.
    body: Option<String>,
    /// The package's configurations of types other than kinds.
    own_types: Vec<String>,
}

#[allow(clippy::too_many_arguments)]
fn render_kind(
    p: &Paths,
    vv: &VersionView,
    kv: &KindView,
    vis: &syn::Visibility,
    yaml: &str,
    json: &str,
    crd_name: &str,
    apply: Option<&InlineApply>,
) -> Result<String, String> {
    let mut k = kv.clone();
    k.listers_path = "super::lister".to_string();
    if let Some(a) = apply {
        k.apply_config = format!(
            "super::super::{}::applyconfigurations::{}::{}",
            a.host_module.trim_start_matches("self::"),
            a.package_path,
            applyconfig::ac_name(&k.rust_name)
        );
    }
    k.client_expansion = false;
    let v = VersionView { kinds: vec![k.clone()], ..vv.clone() };
    let module = format!("__kube_codegen_{}", k.module.trim_start_matches("r#"));
    let vis = quote::ToTokens::to_token_stream(vis).to_string();
    InlineKindTemplate {
        p,
        v: &v,
        k: &k,
        module: &module,
        vis: &vis,
        crd_yaml: yaml,
        crd_json: json,
        crd_name,
        file_docs: true,
        apply,
        ac_name: &applyconfig::ac_name(&k.rust_name),
        extract: &applyconfig::extract_name(&k.rust_name),
    }
    .render()
    .map_err(|e| e.to_string())
}

/// The stub items of a kind (`templates/inline/stub.rs`).
#[derive(Template)]
#[template(path = "inline/stub.rs", escape = "none")]
struct StubTemplate<'a> {
    name: &'a str,
    rt: &'a str,
}

/// Minimal items for a kind whose generation failed, so the user sees the
/// one real error and not a cascade of "no function `crd`" errors. Empty
/// when `rust_name` is not an identifier or `runtime_path` not a path.
pub fn stub_code(rust_name: &str, runtime_path: &str) -> String {
    if syn::parse_str::<syn::Ident>(rust_name).is_err() || syn::parse_str::<syn::Path>(runtime_path).is_err() {
        return String::new();
    }
    StubTemplate { name: rust_name, rt: runtime_path }.render().unwrap_or_default()
}
