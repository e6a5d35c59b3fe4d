//! Phase 4, generate: model → files. Rust files are rendered from the askama
//! templates in `templates/`, parsed back with syn and printed with
//! prettyplease; CRDs are serialized from typed structs.

pub mod applyconfig;
#[cfg(feature = "cel")]
mod cel_check;
#[cfg(feature = "cel")]
pub mod cel_cost;
pub mod conversion;
pub mod crd;
pub mod schema;
pub mod validate;
pub mod views;
pub mod webhook;
pub mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use askama::Template;

use crate::diag::{Diagnostic, Diagnostics};
use crate::model::Model;
use crate::settings::{GeneratorKind, Layout, Settings};
use crate::write::{Existing, GENERATED_MARKER, GeneratedFile, Output, OwnedDir, with_header};
use views::{GroupView, KindView, NewValue, Paths, TypeMetaView, VersionView};

/// The one place where template values become Rust syntax.
pub(crate) mod filters {
    /// A Rust string literal holding `value` exactly (quotes, backslashes,
    /// control characters escaped; other characters as they are).
    #[askama::filter_fn]
    pub fn rust_str<T: std::fmt::Display>(value: T, _: &dyn askama::Values) -> askama::Result<String> {
        Ok(format!("{:?}", value.to_string()))
    }

    /// A raw Rust string literal holding `value` exactly (`r#"..."#`, with
    /// as many `#` as it needs): cheaper to parse for large data.
    #[askama::filter_fn]
    pub fn rust_raw_str<T: std::fmt::Display>(value: T, _: &dyn askama::Values) -> askama::Result<String> {
        let value = value.to_string();
        let hashes = "#".repeat((1..).find(|n| !value.contains(&format!("\"{}", "#".repeat(*n)))).unwrap_or(1));
        Ok(format!("r{hashes}\"{value}\"{hashes}"))
    }
}

#[derive(Template)]
#[template(path = "register.rs", escape = "none")]
pub(crate) struct RegisterTemplate<'a> {
    pub(crate) p: &'a Paths,
    pub(crate) v: &'a VersionView,
    /// Whether the file starts with its `//!` docs (not in a file for `include!`).
    pub(crate) file_docs: bool,
}

/// A module declared by a generated file; `body` holds its rendered
/// contents when the tree is folded into one file ([`Layout::Include`]).
pub(crate) struct Child {
    pub(crate) name: String,
    pub(crate) body: Option<String>,
}

/// One module of the apply-configuration tree (`templates/applyconfig/module.rs`).
#[derive(Template)]
#[template(path = "applyconfig/module.rs", escape = "none")]
pub(crate) struct ApplyConfigTemplate<'a> {
    pub(crate) p: &'a Paths,
    pub(crate) doc: &'a str,
    pub(crate) file_docs: bool,
    pub(crate) children: &'a [Child],
    pub(crate) types: &'a [applyconfig::AcType],
}

/// Renders the apply-configuration tree below `node`; `emit` places each
/// rendered module (its directory, name and text) and returns how its
/// parent declares it.
pub(crate) fn render_apply_configs(
    p: &Paths,
    dir: &Path,
    name: &str,
    doc: &str,
    node: &applyconfig::Node,
    emit: &mut dyn FnMut(&Path, &str, askama::Result<String>) -> Child,
) -> Child {
    let children: Vec<Child> = node
        .children
        .iter()
        .map(|(child, n)| {
            let seg = child.trim_start_matches("r#");
            let doc = match &n.module {
                Some(m) => m.doc.clone(),
                None => format!("Apply configurations under `{}`.", seg),
            };
            render_apply_configs(p, &dir.join(seg), child, &doc, n, emit)
        })
        .collect();
    let types = node.module.as_ref().map(|m| m.types.as_slice()).unwrap_or_default();
    let rendered = ApplyConfigTemplate { p, doc, file_docs: true, children: &children, types }.render();
    emit(dir, name, rendered)
}

#[derive(Template)]
#[template(path = "modules.rs", escape = "none")]
struct ModulesTemplate<'a> {
    doc: &'a str,
    children: &'a [Child],
    /// `(module, item)`: `pub use module::item;`.
    reexports: &'a [(&'a str, &'a str)],
}

#[derive(Template)]
#[template(path = "client_mod.rs", escape = "none")]
struct ClientModTemplate<'a> {
    children: &'a [Child],
    file_docs: bool,
}

#[derive(Template)]
#[template(path = "clientset/clientset.rs", escape = "none")]
struct ClientsetTemplate<'a> {
    p: &'a Paths,
    groups: &'a [GroupView],
    children: &'a [Child],
}

#[derive(Template)]
#[template(path = "clientset/group_version.rs", escape = "none")]
struct GroupVersionClientTemplate<'a> {
    p: &'a Paths,
    v: &'a VersionView,
    children: &'a [Child],
}

#[derive(Template)]
#[template(path = "clientset/kind.rs", escape = "none")]
pub(crate) struct KindClientTemplate<'a> {
    pub(crate) p: &'a Paths,
    pub(crate) k: &'a KindView,
}

#[derive(Template)]
#[template(path = "lister/kind.rs", escape = "none")]
pub(crate) struct ListerTemplate<'a> {
    pub(crate) p: &'a Paths,
    pub(crate) k: &'a KindView,
}

#[derive(Template)]
#[template(path = "informer/factory.rs", escape = "none")]
struct InformerFactoryTemplate<'a> {
    p: &'a Paths,
    groups: &'a [GroupView],
    children: &'a [Child],
}

#[derive(Template)]
#[template(path = "informer/group.rs", escape = "none")]
struct InformerGroupTemplate<'a> {
    p: &'a Paths,
    g: &'a GroupView,
    children: &'a [Child],
}

#[derive(Template)]
#[template(path = "informer/version.rs", escape = "none")]
struct InformerVersionTemplate<'a> {
    p: &'a Paths,
    v: &'a VersionView,
    children: &'a [Child],
}

#[derive(Template)]
#[template(path = "informer/kind.rs", escape = "none")]
pub(crate) struct InformerKindTemplate<'a> {
    pub(crate) p: &'a Paths,
    pub(crate) k: &'a KindView,
}

#[derive(Template)]
#[template(path = "fake/clientset.rs", escape = "none")]
struct FakeTemplate<'a> {
    p: &'a Paths,
    groups: &'a [GroupView],
}

/// Collects rendered files.
struct Emitter<'a> {
    header: Option<&'a str>,
    layout: Layout,
    output: Output,
    /// Rendered Rust files waiting to be formatted.
    unformatted: Vec<(PathBuf, String)>,
    diags: &'a mut Diagnostics,
}

impl Emitter<'_> {
    fn rust(&mut self, path: PathBuf, rendered: askama::Result<String>) {
        match rendered {
            Ok(text) => self.unformatted.push((path, text)),
            Err(e) => self.diags.push(
                Diagnostic::error(format!("cannot render `{}`: {e}", path.display()))
                    .note("this is a bug in kube-codegen"),
            ),
        }
    }

    /// Formats the rendered Rust files, on as many threads as there are
    /// cores, into the output.
    fn format_all(&mut self) {
        let files = std::mem::take(&mut self.unformatted);
        let header = self.header;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len().max(1));
        // The largest files first, each taken by whichever thread is free:
        // one big file (a fake clientset carrying every schema) must not
        // leave a core idle.
        let mut order: Vec<usize> = (0..files.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(files[i].1.len()));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let format = |(path, text): &(PathBuf, String)| match format_rust(text) {
            Ok(body) => {
                Ok(GeneratedFile { path: path.clone(), contents: with_header(GENERATED_MARKER, "//", header, &body) })
            }
            Err(e) => Err(Diagnostic::error(format!("generated `{}` does not parse: {e}", path.display()))
                .note("this is a bug in kube-codegen")
                .note(
                    text.lines().nth(e.span().start().line.saturating_sub(1)).unwrap_or_default().trim().to_string(),
                )),
        };
        // Each worker takes the next file until none is left. It only
        // borrows, so it is `Copy`: a thread that cannot be spawned (with
        // the engine's stack, since formatting recurses as deep as the
        // types nest) leaves its share to this thread.
        let work = || {
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                done.push((i, format(&files[i])));
            }
            done
        };
        let mut results: Vec<(usize, Result<GeneratedFile, Diagnostic>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads)
                .map(|_| std::thread::Builder::new().stack_size(crate::ENGINE_STACK).spawn_scoped(scope, work))
                .collect();
            let mut results = work();
            for handle in handles.into_iter().flatten() {
                results.extend(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            }
            results
        });
        results.sort_by_key(|(i, _)| *i);
        for (_, r) in results {
            match r {
                Ok(f) => self.output.files.push(f),
                Err(d) => self.diags.push(d),
            }
        }
    }

    /// A rendered module file at `path`, declared by its parent as `name`:
    /// a file of its own in the tree layout, the body of an inline module
    /// when the tree is folded into one file.
    fn module(&mut self, path: PathBuf, name: &str, rendered: askama::Result<String>) -> Child {
        let name = name.to_string();
        match (self.layout, rendered) {
            (Layout::Include, Ok(text)) => Child { name, body: Some(text) },
            (_, rendered) => {
                self.rust(path, rendered);
                Child { name, body: None }
            }
        }
    }

    /// A `mod.rs` that only declares `children` and re-exports `reexports`.
    fn modules(&mut self, dir: &Path, name: &str, doc: &str, children: &[Child], reexports: &[(&str, &str)]) -> Child {
        let t = ModulesTemplate { doc, children, reexports };
        self.module(dir.join("mod.rs"), name, t.render())
    }
}

/// Parses generated source and prints it with prettyplease.
pub fn format_rust(src: &str) -> syn::Result<String> {
    let file = syn::parse_file(src)?;
    Ok(prettyplease::unparse(&file))
}

/// Runs the selected generators over the model. Pure: what it needs to know
/// of the disk comes in `existing` ([`crate::write::existing`]).
pub fn generate(settings: &Settings, model: &Model, existing: &Existing, diags: &mut Diagnostics) -> Output {
    let header = settings.header.as_deref();
    let layout = settings.layout;
    let mut e = Emitter { header, layout, output: Output::default(), unformatted: Vec::new(), diags };
    let p = Paths::new(&settings.runtime_path);
    let all = views::groups(model, &p, &settings.plural_exceptions);
    let file = |module: &str| format!("{}.rs", module.trim_start_matches("r#"));
    let sub = |dir: &Path, module: &str| dir.join(module.trim_start_matches("r#"));

    if settings.runs(GeneratorKind::Register) {
        for (g, group) in all.iter().zip(&model.groups) {
            for (v, version) in g.versions.iter().zip(&group.versions) {
                if v.kinds.is_empty() {
                    continue;
                }
                let file = version.dir.join(&settings.register_file);
                let dir = file.parent().map(Path::to_path_buf).unwrap_or_else(|| version.dir.clone());
                let file_docs = layout == Layout::Tree;
                let options = schema::SchemaOptions::from_settings(settings);
                let mut v = v.clone();
                for k in &mut v.kinds {
                    if let Some(kind) = version.kinds.iter().find(|mk| mk.rust_name == k.rust_name && !mk.skip_crd) {
                        k.validation_schema =
                            validate::validation_schema(model, version, kind, &options, k.status_subresource);
                    }
                }
                let mut rendered = RegisterTemplate { p: &p, v: &v, file_docs }.render();
                if let Ok(text) = &mut rendered {
                    for kind in &version.kinds {
                        if let Some((hub, fields)) =
                            conversion::hub_common_fields(model, group, version, kind, &options)
                        {
                            text.push_str(&conversion::register_items(kind, &hub, &fields));
                        }
                    }
                }
                e.rust(file, rendered);
                e.output.owned.insert(OwnedDir::new(dir, false));
            }
        }
    }
    if settings.runs(GeneratorKind::Crd) {
        let crd_dir = settings.crd_dir();
        let files = crd::generate(model, &crd::CrdOptions::from_settings(settings), &crd_dir, header, e.diags);
        e.output.files.extend(files);
        e.output.files.extend(webhook::generate(model, &crd_dir, header));
        e.output.owned.insert(OwnedDir::new(webhook::dir(&crd_dir), false));
        // Only the CRDs of the groups generated: a run for some groups leaves
        // the others' CRDs alone (as controller-gen does).
        let only = model.groups.iter().map(|g| format!("{}_", g.name)).collect();
        e.output.owned.insert(OwnedDir { dir: crd_dir, recursive: false, only });
    }

    let out_dir = settings.output_dir();
    // Rendered bottom-up: a module's children come before the module, so that
    // the include layout can put them inside it.
    let mut client_modules = BTreeMap::new();
    // A generator that runs owns its directory even when it writes nothing
    // there: what an earlier run wrote for kinds that lost it is stale.
    let with_client = views::filter(&all, |k| k.has_client);
    if settings.runs(GeneratorKind::Client) {
        e.output.owned.insert(OwnedDir::new(out_dir.join("clientset"), true));
    }
    if settings.runs(GeneratorKind::Client) && !with_client.is_empty() {
        let dir = out_dir.join("clientset");
        let mut groups = Vec::new();
        for g in &with_client {
            let gdir = sub(&dir, &g.module);
            let mut versions = Vec::new();
            for v in &g.versions {
                let vdir = sub(&gdir, &v.module);
                let mut v = v.clone();
                for k in &mut v.kinds {
                    k.client_expansion = existing
                        .expansions
                        .contains(&vdir.join(format!("{}_expansion.rs", k.module.trim_start_matches("r#"))));
                }
                let kinds: Vec<Child> = v
                    .kinds
                    .iter()
                    .map(|k| e.module(vdir.join(file(&k.module)), &k.module, KindClientTemplate { p: &p, k }.render()))
                    .collect();
                let t = GroupVersionClientTemplate { p: &p, v: &v, children: &kinds };
                versions.push(e.module(vdir.join("mod.rs"), &v.module, t.render()));
            }
            let doc = format!("Clients of the `{}` group.", g.name);
            groups.push(e.modules(&gdir, &g.module, &doc, &versions, &[]));
        }
        let t = ClientsetTemplate { p: &p, groups: &with_client, children: &groups };
        client_modules.insert("clientset", e.module(dir.join("mod.rs"), "clientset", t.render()));
    }
    if settings.runs(GeneratorKind::ApplyConfig) {
        e.output.owned.insert(OwnedDir::new(out_dir.join("applyconfigurations"), true));
    }
    if settings.runs(GeneratorKind::ApplyConfig) && model.kinds().next().is_some() {
        let dir = out_dir.join("applyconfigurations");
        let paths = applyconfig::TypePaths::absolute(model);
        let root = applyconfig::tree(applyconfig::modules(model, &p, &paths, settings.kube_version().version));
        let doc = "Apply configurations for typed server-side apply (applyconfiguration-gen): every API type with every field optional, and `extract_<kind>` functions.";
        let child = render_apply_configs(&p, &dir, "applyconfigurations", doc, &root, &mut |d, name, rendered| {
            e.module(d.join("mod.rs"), name, rendered)
        });
        client_modules.insert("applyconfigurations", child);
    }
    let with_lister = views::filter(&all, |k| k.has_lister);
    if settings.runs(GeneratorKind::Lister) {
        e.output.owned.insert(OwnedDir::new(out_dir.join("listers"), true));
    }
    if settings.runs(GeneratorKind::Lister) && !with_lister.is_empty() {
        let dir = out_dir.join("listers");
        let mut groups = Vec::new();
        for g in &with_lister {
            let gdir = sub(&dir, &g.module);
            let mut versions = Vec::new();
            for v in &g.versions {
                let vdir = sub(&gdir, &v.module);
                let kinds: Vec<Child> = v
                    .kinds
                    .iter()
                    .map(|k| e.module(vdir.join(file(&k.module)), &k.module, ListerTemplate { p: &p, k }.render()))
                    .collect();
                let mut reexports: Vec<(&str, &str)> =
                    v.kinds.iter().map(|k| (k.module.as_str(), k.lister.as_str())).collect();
                reexports
                    .extend(v.kinds.iter().filter(|k| k.namespaced).map(|k| (k.module.as_str(), k.ns_lister.as_str())));
                reexports.sort();
                let doc = format!("Listers of `{}`.", v.api_version);
                versions.push(e.modules(&vdir, &v.module, &doc, &kinds, &reexports));
            }
            let doc = format!("Listers of the `{}` group.", g.name);
            groups.push(e.modules(&gdir, &g.module, &doc, &versions, &[]));
        }
        let doc = "Typed listers over informer caches (lister-gen).";
        client_modules.insert("listers", e.modules(&dir, "listers", doc, &groups, &[]));
    }
    let with_informer = views::filter(&all, |k| k.has_informer);
    if settings.runs(GeneratorKind::Informer) {
        e.output.owned.insert(OwnedDir::new(out_dir.join("informers"), true));
    }
    if settings.runs(GeneratorKind::Informer) && !with_informer.is_empty() {
        let dir = out_dir.join("informers");
        let mut groups = Vec::new();
        for g in &with_informer {
            let gdir = sub(&dir, &g.module);
            let mut versions = Vec::new();
            for v in &g.versions {
                let vdir = sub(&gdir, &v.module);
                let kinds: Vec<Child> = v
                    .kinds
                    .iter()
                    .map(|k| {
                        e.module(vdir.join(file(&k.module)), &k.module, InformerKindTemplate { p: &p, k }.render())
                    })
                    .collect();
                let t = InformerVersionTemplate { p: &p, v, children: &kinds };
                versions.push(e.module(vdir.join("mod.rs"), &v.module, t.render()));
            }
            let t = InformerGroupTemplate { p: &p, g, children: &versions };
            groups.push(e.module(gdir.join("mod.rs"), &g.module, t.render()));
        }
        let t = InformerFactoryTemplate { p: &p, groups: &with_informer, children: &groups };
        client_modules.insert("informers", e.module(dir.join("mod.rs"), "informers", t.render()));
    }
    if settings.runs(GeneratorKind::Fake) {
        e.output.owned.insert(OwnedDir::new(out_dir.join("fake"), true));
    }
    if settings.runs(GeneratorKind::Fake) && !with_client.is_empty() {
        let dir = out_dir.join("fake");
        let options = schema::SchemaOptions::from_settings(settings);
        let mut cache = std::collections::HashMap::new();
        let mut groups = with_client.clone();
        for g in &mut groups {
            for v in &mut g.versions {
                let Some(version) = model
                    .groups
                    .iter()
                    .flat_map(|mg| mg.versions.iter().map(move |mv| (mg, mv)))
                    .find(|(mg, mv)| mg.name == g.name && mv.name == v.version)
                    .map(|(_, mv)| mv)
                else {
                    continue;
                };
                for k in &mut v.kinds {
                    if let Some(kind) = version.kinds.iter().find(|mk| mk.rust_name == k.rust_name) {
                        k.ssa_schema = applyconfig::ssa_schema(model, version, kind, &options, &mut cache);
                    }
                }
            }
        }
        let rendered = FakeTemplate { p: &p, groups: &groups }.render();
        client_modules.insert("fake", e.module(dir.join("mod.rs"), "fake", rendered));
    }
    let client_generators = [
        ("applyconfigurations", GeneratorKind::ApplyConfig),
        ("clientset", GeneratorKind::Client),
        ("fake", GeneratorKind::Fake),
        ("informers", GeneratorKind::Informer),
        ("listers", GeneratorKind::Lister),
    ];
    if client_generators.iter().any(|(_, g)| settings.runs(*g)) {
        // With nothing left to declare, the client `mod.rs` is stale too.
        e.output.owned.insert(OwnedDir::new(out_dir.clone(), false));
    }
    if !client_modules.is_empty() {
        // Modules generated by an earlier run with other generators stay
        // declared (their files are still there in the tree layout).
        if layout == Layout::Tree {
            for (m, generator) in client_generators {
                if !settings.runs(generator) && existing.generated_modules.contains(m) {
                    client_modules.entry(m).or_insert_with(|| Child { name: m.to_string(), body: None });
                }
            }
        }
        let children: Vec<Child> = client_modules.into_values().collect();
        let t = ClientModTemplate { children: &children, file_docs: layout == Layout::Tree };
        e.rust(out_dir.join("mod.rs"), t.render());
    }
    e.format_all();
    let mut output = e.output;
    output.files.sort_by(|a, b| a.path.cmp(&b.path));
    output
}
