//! Phase 4, generate: model → files. Rust files are rendered from the askama
//! templates in `templates/`, parsed back with syn and printed with
//! prettyplease; CRDs are serialized from typed structs.

pub mod crd;
pub mod schema;
pub mod views;
pub mod yaml;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use askama::Template;

use crate::diag::{Diagnostic, Diagnostics};
use crate::model::Model;
use crate::settings::{GeneratorKind, Settings};
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
}

#[derive(Template)]
#[template(path = "register.rs", escape = "none")]
pub(crate) struct RegisterTemplate<'a> {
    pub(crate) p: &'a Paths,
    pub(crate) v: &'a VersionView,
}

#[derive(Template)]
#[template(path = "modules.rs", escape = "none")]
struct ModulesTemplate<'a> {
    doc: &'a str,
    modules: &'a [String],
    reexports: &'a [String],
}

#[derive(Template)]
#[template(path = "client_mod.rs", escape = "none")]
struct ClientModTemplate<'a> {
    modules: &'a [String],
}

#[derive(Template)]
#[template(path = "clientset/clientset.rs", escape = "none")]
struct ClientsetTemplate<'a> {
    p: &'a Paths,
    groups: &'a [GroupView],
}

#[derive(Template)]
#[template(path = "clientset/group_version.rs", escape = "none")]
struct GroupVersionClientTemplate<'a> {
    p: &'a Paths,
    v: &'a VersionView,
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
}

#[derive(Template)]
#[template(path = "informer/group.rs", escape = "none")]
struct InformerGroupTemplate<'a> {
    p: &'a Paths,
    g: &'a GroupView,
}

#[derive(Template)]
#[template(path = "informer/version.rs", escape = "none")]
struct InformerVersionTemplate<'a> {
    p: &'a Paths,
    v: &'a VersionView,
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
        let chunk = files.len().div_ceil(threads.max(1)).max(1);
        let results: Vec<Result<GeneratedFile, Diagnostic>> = std::thread::scope(|scope| {
            let handles: Vec<_> = files
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(path, text)| match format_rust(text) {
                                Ok(body) => Ok(GeneratedFile {
                                    path: path.clone(),
                                    contents: with_header(GENERATED_MARKER, "//", header, &body),
                                }),
                                Err(e) => Err(Diagnostic::error(format!(
                                    "generated `{}` does not parse: {e}",
                                    path.display()
                                ))
                                .note("this is a bug in kube-codegen")
                                .note(
                                    text.lines()
                                        .nth(e.span().start().line.saturating_sub(1))
                                        .unwrap_or_default()
                                        .trim()
                                        .to_string(),
                                )),
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        });
        for r in results {
            match r {
                Ok(f) => self.output.files.push(f),
                Err(d) => self.diags.push(d),
            }
        }
    }

    fn modules(&mut self, dir: &Path, doc: &str, modules: Vec<String>, reexports: Vec<String>) {
        let t = ModulesTemplate { doc, modules: &modules, reexports: &reexports };
        self.rust(dir.join("mod.rs"), t.render());
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
    let mut e = Emitter { header, output: Output::default(), unformatted: Vec::new(), diags };
    let p = Paths::new(&settings.runtime_path);
    let all = views::groups(model, &p, &settings.plural_exceptions);

    if settings.runs(GeneratorKind::Register) {
        for (g, group) in all.iter().zip(&model.groups) {
            for (v, version) in g.versions.iter().zip(&group.versions) {
                if v.kinds.is_empty() {
                    continue;
                }
                let file = version.dir.join(&settings.register_file);
                let dir = file.parent().map(Path::to_path_buf).unwrap_or_else(|| version.dir.clone());
                e.rust(file, RegisterTemplate { p: &p, v }.render());
                e.output.owned.insert(OwnedDir { dir, recursive: false });
            }
        }
    }
    if settings.runs(GeneratorKind::Crd) {
        let crd_dir = settings.crd_dir();
        let files = crd::generate(model, &crd::CrdOptions::from_settings(settings), &crd_dir, header, e.diags);
        e.output.files.extend(files);
        e.output.owned.insert(OwnedDir { dir: crd_dir, recursive: false });
    }

    let out_dir = settings.output_dir();
    let mut client_modules = BTreeSet::new();
    let with_client = views::filter(&all, |k| k.has_client);
    if settings.runs(GeneratorKind::Client) && !with_client.is_empty() {
        client_modules.insert("clientset".to_string());
        let dir = out_dir.join("clientset");
        e.rust(dir.join("mod.rs"), ClientsetTemplate { p: &p, groups: &with_client }.render());
        for g in &with_client {
            let gdir = dir.join(g.module.trim_start_matches("r#"));
            e.modules(
                &gdir,
                &format!("Clients of the `{}` group.", g.name),
                g.versions.iter().map(|v| v.module.clone()).collect(),
                vec![],
            );
            for v in &g.versions {
                let vdir = gdir.join(v.module.trim_start_matches("r#"));
                let mut v = v.clone();
                for k in &mut v.kinds {
                    k.client_expansion = existing
                        .expansions
                        .contains(&vdir.join(format!("{}_expansion.rs", k.module.trim_start_matches("r#"))));
                }
                e.rust(vdir.join("mod.rs"), GroupVersionClientTemplate { p: &p, v: &v }.render());
                for k in &v.kinds {
                    e.rust(
                        vdir.join(format!("{}.rs", k.module.trim_start_matches("r#"))),
                        KindClientTemplate { p: &p, k }.render(),
                    );
                }
            }
        }
        e.output.owned.insert(OwnedDir { dir, recursive: true });
    }
    let with_lister = views::filter(&all, |k| k.has_lister);
    if settings.runs(GeneratorKind::Lister) && !with_lister.is_empty() {
        client_modules.insert("listers".to_string());
        let dir = out_dir.join("listers");
        e.modules(
            &dir,
            "Typed listers over informer caches (lister-gen).",
            with_lister.iter().map(|g| g.module.clone()).collect(),
            vec![],
        );
        for g in &with_lister {
            let gdir = dir.join(g.module.trim_start_matches("r#"));
            e.modules(
                &gdir,
                &format!("Listers of the `{}` group.", g.name),
                g.versions.iter().map(|v| v.module.clone()).collect(),
                vec![],
            );
            for v in &g.versions {
                let vdir = gdir.join(v.module.trim_start_matches("r#"));
                let mods: Vec<String> = v.kinds.iter().map(|k| k.module.clone()).collect();
                let mut reexports: Vec<String> =
                    v.kinds.iter().map(|k| format!("{}::{}", k.module, k.lister)).collect();
                reexports
                    .extend(v.kinds.iter().filter(|k| k.namespaced).map(|k| format!("{}::{}", k.module, k.ns_lister)));
                reexports.sort();
                e.modules(&vdir, &format!("Listers of `{}`.", v.api_version), mods, reexports);
                for k in &v.kinds {
                    e.rust(
                        vdir.join(format!("{}.rs", k.module.trim_start_matches("r#"))),
                        ListerTemplate { p: &p, k }.render(),
                    );
                }
            }
        }
        e.output.owned.insert(OwnedDir { dir, recursive: true });
    }
    let with_informer = views::filter(&all, |k| k.has_informer);
    if settings.runs(GeneratorKind::Informer) && !with_informer.is_empty() {
        client_modules.insert("informers".to_string());
        let dir = out_dir.join("informers");
        e.rust(dir.join("mod.rs"), InformerFactoryTemplate { p: &p, groups: &with_informer }.render());
        for g in &with_informer {
            let gdir = dir.join(g.module.trim_start_matches("r#"));
            e.rust(gdir.join("mod.rs"), InformerGroupTemplate { p: &p, g }.render());
            for v in &g.versions {
                let vdir = gdir.join(v.module.trim_start_matches("r#"));
                e.rust(vdir.join("mod.rs"), InformerVersionTemplate { p: &p, v }.render());
                for k in &v.kinds {
                    e.rust(
                        vdir.join(format!("{}.rs", k.module.trim_start_matches("r#"))),
                        InformerKindTemplate { p: &p, k }.render(),
                    );
                }
            }
        }
        e.output.owned.insert(OwnedDir { dir, recursive: true });
    }
    if settings.runs(GeneratorKind::Fake) && !with_client.is_empty() {
        client_modules.insert("fake".to_string());
        let dir = out_dir.join("fake");
        e.rust(dir.join("mod.rs"), FakeTemplate { p: &p, groups: &with_client }.render());
        e.output.owned.insert(OwnedDir { dir, recursive: true });
    }
    if !client_modules.is_empty() {
        // Modules generated by an earlier run with other generators stay declared.
        for m in ["clientset", "fake", "informers", "listers"] {
            if !client_modules.contains(m) && existing.generated_modules.contains(m) {
                client_modules.insert(m.to_string());
            }
        }
        let modules: Vec<String> = client_modules.into_iter().collect();
        e.rust(out_dir.join("mod.rs"), ClientModTemplate { modules: &modules }.render());
        e.output.owned.insert(OwnedDir { dir: out_dir, recursive: false });
    }
    e.format_all();
    let mut output = e.output;
    output.files.sort_by(|a, b| a.path.cmp(&b.path));
    output
}
