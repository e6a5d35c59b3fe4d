//! `kube-codegen import`: CustomResourceDefinitions in, annotated Rust API
//! types out, laid out as the generator reads them, so that a run of the
//! `crd` generator on the result writes the same CRDs back (what cannot
//! round-trip is listed in `docs/import.md`).
//!
//! The phases: `read` the YAML into checked CRDs, model each served
//! version's schema as Rust types with markers (`types`, `root`, and
//! `builtin_index` for Kubernetes' own types), then `render` the files.
//! [`import`] writes nothing; [`run_import`] writes the types (creating
//! files, merging module files at their markers) and runs the generators,
//! undoing everything when a step fails.
//!
//! The files are the user's to edit afterwards, so they carry no
//! generated-file header, and import refuses to replace any existing file
//! (one with the very same contents is left as it is); an existing `mod.rs`
//! with its scaffold marker line gets the new module lines above it.

mod builtin_index;
mod origin;
mod read;
mod render;
mod root;
mod spots;
mod types;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::diag::{Diagnostic, Diagnostics, Location};
use crate::write::{GeneratedFile, Output};

#[cfg(feature = "fuzzing")]
pub(crate) use read::yaml_lines;
use read::{Crd, CrdVersion, display};
use types::{Item, Ty, TypeBuilder};

/// What `kube-codegen import` does.
#[derive(Clone, Debug, Default)]
pub struct ImportSettings {
    /// The CustomResourceDefinition YAML files (one or more documents each).
    pub crds: Vec<PathBuf>,
    /// The `apis` directory the types go to (`pkg/apis`).
    pub apis_dir: PathBuf,
}

/// What an import produced.
#[derive(Debug)]
pub struct Imported {
    /// The files to write (no `owned` directories: nothing is ever removed).
    pub output: Output,
    /// The `<group dir>:<versions>` arguments of the generator run that
    /// follows (`example:v1,v2`), one per group, sorted.
    pub groups: Vec<String>,
    /// What the CRDs hold that the Rust types do not carry over (one warning
    /// per CRD, the schema paths as notes).
    pub warnings: Vec<Diagnostic>,
    /// The CRD node behind each type file, for the generator's errors.
    origins: Vec<origin::Origin>,
}

/// What [`run_import`] did.
#[derive(Debug)]
pub struct ImportReport {
    /// Type files created.
    pub created: Vec<PathBuf>,
    /// Module files of an existing tree that got the new modules at their
    /// scaffold marker.
    pub edited: Vec<PathBuf>,
    /// Files that were there with the very same contents.
    pub unchanged: usize,
    /// The `<group dir>:<versions>` the types were written for.
    pub groups: Vec<String>,
    /// What the CRDs hold that the types do not carry over.
    pub warnings: Vec<Diagnostic>,
    /// The generator run on the imported groups, when asked for.
    pub generated: Option<crate::Report>,
}

/// [`import`], then writes the types and, given generator `settings`
/// (apis dir, output and CRD directories; the groups are added here), runs
/// the generators on the imported groups: the clientset, listers,
/// informers, fake clientset and CRDs in the same step, like kopium plus
/// client-gen. When writing or generating fails, the files written are
/// removed again.
pub fn run_import(
    settings: &ImportSettings,
    generate: Option<crate::Settings>,
) -> Result<ImportReport, Vec<Diagnostic>> {
    let imported = import(settings)?;
    let mut unchanged = 0;
    let mut edited = Vec::new();
    let mut txn = crate::scaffold::Transaction::default();
    for file in &imported.output.files {
        match std::fs::read_to_string(&file.path) {
            Ok(old) if old == file.contents => unchanged += 1,
            // A module file merged at its scaffold marker.
            Ok(_) => {
                txn.edit(&file.path, &file.contents).map_err(|e| txn.fail(e))?;
                edited.push(file.path.clone());
            }
            Err(_) => txn.create(&file.path, &file.contents).map_err(|e| txn.fail(e))?,
        }
    }
    // Formatted like the rest of the user's code (`cargo fmt --check` passes).
    crate::scaffold::rustfmt(&txn.created_files());
    // The type files as formatted: the generator's errors have their lines.
    let written: Vec<(PathBuf, String)> = imported
        .origins
        .iter()
        .filter_map(|o| Some((o.file.clone(), std::fs::read_to_string(&o.file).ok()?)))
        .collect();
    let mut generated = Vec::new();
    if let Some(mut generation) = generate {
        for group in &imported.groups {
            match crate::GroupVersions::parse(group) {
                Ok(gv) => generation = generation.with_group(gv),
                Err(e) => return Err(txn.abort(vec![e])),
            }
        }
        txn.generate(&generation, &mut generated).map_err(|mut errors| {
            origin::relocate(&mut errors, &imported.origins, &written);
            // The usual clash: the CRDs imported from the very directory
            // the regenerated ones go to.
            for e in &mut errors {
                if e.message.starts_with("refusing to overwrite") && e.message.contains(".yaml`") {
                    e.notes.push(
                        "import regenerates the CRDs: give `--crd-dir` another directory, or pass `--types-only`"
                            .into(),
                    );
                }
            }
            errors
        })?;
    }
    let created =
        txn.created_files().into_iter().filter(|p| imported.output.files.iter().any(|f| &f.path == p)).collect();
    Ok(ImportReport {
        created,
        edited,
        unchanged,
        groups: imported.groups,
        warnings: imported.warnings,
        generated: generated.pop(),
    })
}

/// Names a group directory cannot have: Rust keywords (it is a module) and
/// the methods of the generated `SharedInformerFactory` (one accessor per group).
pub(crate) const RESERVED_GROUP_DIRS: &[&str] = &[
    "new",
    "from_runtime",
    "runtime",
    "start",
    "wait_for_cache_sync",
    "shutdown",
    "for_resource",
    "crate",
    "self",
    "super",
    "mod",
    "type",
    "fn",
    "impl",
    "use",
    "pub",
    "struct",
    "enum",
    "trait",
    "match",
    "loop",
    "if",
    "else",
    "for",
    "in",
    "as",
    "ref",
    "move",
    "static",
    "const",
    "extern",
    "async",
    "await",
    "dyn",
    "let",
    "mut",
    "return",
    "where",
    "while",
    "break",
    "continue",
    "true",
    "false",
    "unsafe",
    "box",
    "try",
    "yield",
    "macro",
    "gen",
];

/// A kind at one version: its CRD and that version.
type KindVersion<'c> = (&'c Crd, &'c CrdVersion);

/// Reads the CRDs and models their types; nothing is written.
pub fn import(settings: &ImportSettings) -> Result<Imported, Vec<Diagnostic>> {
    let mut diags = Diagnostics::new();
    if settings.crds.is_empty() {
        return Err(vec![
            Diagnostic::error("no CustomResourceDefinition files given")
                .help("pass CRD YAML files, e.g. `kube-codegen import config/crd/*.yaml --apis-dir pkg/apis`"),
        ]);
    }
    let mut warnings = Vec::new();
    let crds = read::read(&settings.crds, &mut diags, &mut warnings);
    diags.check()?;
    check_unique(&crds, &mut diags);
    diags.check()?;

    let version = crate::Settings::new(&settings.apis_dir).kube_version().version;
    let index = builtin_index::BuiltinIndex::new(version);
    let mut dirs = group_dirs(crds.iter().map(|c| c.group.as_str()).collect());
    // An existing tree (e.g. one `kube-codegen init` made): groups it has keep
    // their directory, new groups may not take one of its directories.
    let existing = if settings.apis_dir.join("mod.rs").is_file() {
        crate::scaffold::discover_groups(&settings.apis_dir).map_err(|e| vec![e])?
    } else {
        Vec::new()
    };
    for (group, dir) in &mut dirs {
        if let Some(known) = existing.iter().find(|g| g.group == *group) {
            *dir = known.dir.clone();
        } else if let Some(other) = existing.iter().find(|g| g.dir == *dir) {
            diags.push(
                Diagnostic::error(format!(
                    "the group `{group}` would go to `{}`, which holds the group `{}`",
                    display(&settings.apis_dir.join(dir)),
                    other.group
                ))
                .help("import into another `--apis-dir`, or rename that group's directory (and its module)"),
            );
        }
    }
    diags.check()?;

    // group → version → the kinds served there.
    let mut modules: BTreeMap<&str, BTreeMap<&str, Vec<KindVersion>>> = BTreeMap::new();
    for crd in &crds {
        // (note, where) of each part left out.
        let mut notes: Vec<(String, Location)> = crd
            .dropped
            .iter()
            .map(|d| {
                let at = crd.at(d);
                (format!("`{d}` (line {}) is not imported", at.line), at)
            })
            .collect();
        for v in imported_versions(crd) {
            if !is_module_name(&v.name) {
                diags.push(
                    Diagnostic::error(format!("version `{}` of `{}` is not a Rust module name", v.name, crd.name))
                        .at(crd.at(&format!("spec.versions[{}].name", v.name)))
                        .help("the version is the name of a directory and module (`v1`, `v1beta1`); rename the version in the CRD"),
                );
                continue;
            }
            modules.entry(crd.group.as_str()).or_default().entry(v.name.as_str()).or_default().push((crd, v));
        }
        for v in crd.versions.iter().filter(|v| !v.served && !v.storage) {
            let at = crd.at(&format!("spec.versions[{}]", v.name));
            notes.push((format!("version `{}` (line {}) is not served and not imported", v.name, at.line), at));
        }
        if let Some((_, first)) = notes.first() {
            let mut w = Diagnostic::warning(format!("`{}`: not everything is imported", crd.name))
                .at(first.clone())
                .help("add what is missing by hand; `kube-codegen crd` writes the CRD from the Rust types from now on");
            w.notes = notes.into_iter().map(|(note, _)| note).collect();
            warnings.push(w);
        }
    }
    diags.check()?;

    let apis = &settings.apis_dir;
    let mut files = Vec::new();
    let mut merges = BTreeSet::new();
    let mut groups = Vec::new();
    let mut origins = Vec::new();
    for (group, versions) in &modules {
        let dir = &dirs[group];
        for (version, kinds) in versions {
            let mut taken = BTreeSet::new();
            let mut kinds = kinds.clone();
            kinds.sort_by(|a, b| a.0.kind.cmp(&b.0.kind));
            for (crd, _) in &kinds {
                taken.insert(root::kind_type_name(&crd.kind));
                taken.insert(format!("{}List", crd.kind));
                taken.insert(format!("{}List", root::kind_type_name(&crd.kind)));
            }
            // The types an earlier import (or the user) put in this version:
            // their names are taken too, as the version module exports them
            // all (`pub use <kind>::*`). The files this run writes are not
            // read, so that importing the same CRDs again changes nothing.
            let ours: BTreeSet<String> = kinds
                .iter()
                .map(|(crd, _)| {
                    format!("{}.rs", kind_module(&crate::ident::snake_case(&root::kind_type_name(&crd.kind))))
                })
                .collect();
            let present = existing_type_names(&apis.join(dir).join(version), &ours);
            for (crd, _) in &kinds {
                let name = root::kind_type_name(&crd.kind);
                if let Some((file, _)) = present.iter().find(|(_, t)| **t == name || **t == format!("{name}List")) {
                    diags.push(
                        Diagnostic::error(format!(
                            "the kind `{}` of `{}` is named like a type of `{}`",
                            crd.kind,
                            crd.name,
                            display(&apis.join(dir).join(version).join(file))
                        ))
                        .at(crd.at("spec.names.kind"))
                        .help("the version module exports every type of its files; rename that type (the file is yours), then import again"),
                    );
                }
            }
            taken.extend(present.into_iter().map(|(_, t)| t));
            let mut b = TypeBuilder::new(&index, taken);
            let mut per_kind = Vec::new();
            for (crd, v) in &kinds {
                let start = b.items.len();
                let multi = imported_versions(crd).count() > 1;
                let name = root::kind_type_name(&crd.kind);
                b.dropped.clear();
                root::root(&mut b, crd, v, multi, &name);
                if let Some((first, _)) = b.dropped.first() {
                    let mut seen = BTreeSet::new();
                    let mut w = Diagnostic::warning(format!(
                        "`{}` version `{}`: parts of the schema are not imported",
                        crd.name, v.name
                    ))
                    .at(crd.at(first))
                    .help("add them by hand (`#[validate(..)]` on the field); the round trip drops them");
                    for (path, what) in b.dropped.drain(..) {
                        if seen.insert((path.clone(), what.clone())) {
                            w.notes.push(format!("{path} (line {}): {what}", crd.at(&path).line));
                        }
                    }
                    warnings.push(w);
                }
                per_kind.push((*crd, name, start, b.items.len()));
            }
            let defaults = types::defaults(&b.items);
            let mut module_names = Vec::new();
            for (crd, name, start, end) in &per_kind {
                let items = ordered(&b.items[*start..*end], name);
                let file = kind_module(&crate::ident::snake_case(name));
                let header = format!(
                    "`{}` of `{}/{}`, imported by `kube-codegen import` from the\nCustomResourceDefinition `{}`. These types are yours to edit: import\nnever overwrites them, and `kube-codegen all` generates the rest from them.",
                    crd.kind, group, version, crd.name
                );
                let path = apis.join(dir).join(version).join(format!("{file}.rs"));
                origins.push(origin::Origin::new(path.clone(), crd, &b.items[*start..*end], &b.paths));
                files.push(GeneratedFile { path, contents: render::kind_file(&header, &items, &defaults) });
                module_names.push(file);
            }
            let path = apis.join(dir).join(version).join("mod.rs");
            let lines: String = module_names.iter().map(|m| format!("mod {m};\npub use {m}::*;\n")).collect();
            let contents = merged(&path, crate::scaffold::KINDS_MARKER, &lines, &mut merges)
                .unwrap_or_else(|| version_mod(group, version, &module_names, dir));
            files.push(GeneratedFile { path, contents });
        }
        let mut versions: Vec<&str> = versions.keys().copied().collect();
        let path = apis.join(dir).join("mod.rs");
        let lines: String = versions.iter().map(|v| format!("pub mod {v};\n")).collect();
        let contents = merged(&path, crate::scaffold::VERSIONS_MARKER, &lines, &mut merges)
            .unwrap_or_else(|| group_mod(group, &versions));
        files.push(GeneratedFile { path, contents });
        // The generator runs on every version of the group, old and new.
        let known = existing.iter().find(|g| g.group == *group).map(|g| g.versions.clone()).unwrap_or_default();
        versions.extend(known.iter().map(String::as_str));
        versions.sort();
        versions.dedup();
        groups.push(format!("{dir}:{}", versions.join(",")));
    }
    let mut dir_names: Vec<&String> = modules.keys().map(|g| &dirs[g]).collect();
    dir_names.sort();
    let path = apis.join("mod.rs");
    let lines: String = dir_names.iter().map(|d| format!("pub mod {d};\n")).collect();
    let contents =
        merged(&path, crate::scaffold::GROUPS_MARKER, &lines, &mut merges).unwrap_or_else(|| apis_mod(&dir_names));
    files.push(GeneratedFile { path, contents });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    // Groups of the tree that the import does not touch are generated too.
    for g in existing.iter().filter(|g| !modules.contains_key(g.group.as_str())) {
        groups.push(format!("{}:{}", g.dir, g.versions.join(",")));
    }
    groups.sort();

    for f in files.iter().filter(|f| !merges.contains(&f.path)) {
        refuse_existing(f, &mut diags);
    }
    diags.check()?;
    Ok(Imported { output: Output { files, owned: BTreeSet::new() }, groups, warnings, origins })
}

/// The versions of a CRD that are imported: the served ones, and the storage
/// version even when it is not served (a CRD needs one).
fn imported_versions(crd: &Crd) -> impl Iterator<Item = &CrdVersion> {
    crd.versions.iter().filter(|v| v.served || v.storage)
}

fn is_module_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !reserved(s)
}

/// A name no group directory, version or kind module may have: a method of
/// the informer factory or a Rust keyword.
fn reserved(s: &str) -> bool {
    RESERVED_GROUP_DIRS.contains(&s) || crate::ident::is_keyword(s)
}

/// The types declared at the top of the `.rs` files in `dir`, as (file,
/// type name); none when it does not exist, nor of the files in `skip` and
/// the generated ones.
fn existing_type_names(dir: &std::path::Path, skip: &BTreeSet<String>) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || skip.contains(&name) || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Ok(text) = crate::write::read_regular(entry.path()) else { continue };
        // The generator's files (`register.rs`) name the kinds' own types.
        if crate::write::is_generated(&text) {
            continue;
        }
        let Ok(file) = syn::parse_file(&text) else { continue };
        for item in file.items {
            let ident = match item {
                syn::Item::Struct(s) => s.ident,
                syn::Item::Enum(e) => e.ident,
                syn::Item::Type(t) => t.ident,
                _ => continue,
            };
            out.insert((name.clone(), ident.to_string()));
        }
    }
    out
}

/// The module of a kind's file (`cron_tab`), clear of `mod` and `register`.
fn kind_module(snake: &str) -> String {
    if matches!(snake, "mod" | "register") || reserved(snake) { format!("{snake}_kind") } else { snake.to_string() }
}

/// Two CRDs of one resource, or two kinds of one group, cannot both be imported.
fn check_unique(crds: &[Crd], diags: &mut Diagnostics) {
    let mut seen: BTreeMap<(String, String), &Crd> = BTreeMap::new();
    for crd in crds {
        for key in [("plural", &crd.plural), ("kind", &crd.kind)] {
            if let Some(prev) = seen.insert((crd.group.clone(), format!("{}={}", key.0, key.1)), crd) {
                diags.push(
                    Diagnostic::error(format!(
                        "{} {} `{}` of group `{}` again ({} has it)",
                        crd.provenance.describe(),
                        if key.0 == "kind" { "defines kind" } else { "defines resource" },
                        key.1,
                        crd.group,
                        prev.provenance.describe()
                    ))
                    .at(crd.provenance.location())
                    .help("pass each CustomResourceDefinition once"),
                );
                break;
            }
        }
    }
}

/// The directory (and module) of each group: its first DNS label, or as
/// many labels as make it unique and a usable module name
/// (`example.com` and `example.org` become `example_com` and `example_org`).
fn group_dirs(groups: BTreeSet<&str>) -> BTreeMap<&str, String> {
    let dir = |g: &str, n: usize| {
        let labels: Vec<&str> = g.split('.').collect();
        let n = n.min(labels.len());
        let mut d: String = labels[..n]
            .join("_")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
            .collect();
        if n == labels.len() && reserved(&d) {
            d.push_str("_api");
        }
        if d.starts_with(|c: char| c.is_ascii_digit()) || d.is_empty() {
            d.insert_str(0, "g_");
        }
        d
    };
    let mut labels: BTreeMap<&str, usize> = groups.iter().map(|g| (*g, 1)).collect();
    loop {
        let current: BTreeMap<&str, String> = labels.iter().map(|(g, n)| (*g, dir(g, *n))).collect();
        let mut count: BTreeMap<&String, usize> = BTreeMap::new();
        for d in current.values() {
            *count.entry(d).or_default() += 1;
        }
        let mut changed = false;
        for (g, d) in &current {
            let max = g.split('.').count();
            let clash = count[d] > 1 || reserved(d);
            if clash && labels[g] < max {
                *labels.get_mut(g).expect("every group has a count") += 1;
                changed = true;
            }
        }
        if !changed {
            return current;
        }
    }
}

/// The types of a kind in reading order: the root, then each type after the
/// first type that holds it (depth first, in field order).
fn ordered<'i>(items: &'i [Item], root: &str) -> Vec<&'i Item> {
    let by_name: BTreeMap<&str, &Item> = items.iter().map(|i| (i.name(), i)).collect();
    let mut out: Vec<&Item> = Vec::new();
    let mut seen = BTreeSet::new();
    fn named<'t>(t: &'t Ty, out: &mut Vec<&'t str>) {
        match t {
            Ty::Named(n) => out.push(n),
            Ty::Vec(t) | Ty::Map(t) => named(t, out),
            _ => {}
        }
    }
    fn visit<'i>(name: &str, by_name: &BTreeMap<&str, &'i Item>, seen: &mut BTreeSet<String>, out: &mut Vec<&'i Item>) {
        let Some(item) = by_name.get(name) else { return };
        if !seen.insert(name.to_string()) {
            return;
        }
        out.push(item);
        let mut children = Vec::new();
        match item {
            Item::Struct { fields, .. } => fields.iter().for_each(|f| named(&f.ty, &mut children)),
            Item::Newtype { inner, .. } => named(inner, &mut children),
            Item::Enum { .. } => {}
        }
        for c in children {
            visit(c, by_name, seen, out);
        }
    }
    visit(root, &by_name, &mut seen, &mut out);
    for i in items {
        if !seen.contains(i.name()) {
            out.push(i);
        }
    }
    out
}

fn version_mod(group: &str, version: &str, modules: &[String], dir: &str) -> String {
    let mut out = format!(
        "//! `{group}/{version}`, imported by `kube-codegen import`.\n\ncodegen_macros::group_name!(\"{group}\");\n\n"
    );
    for m in modules {
        out.push_str(&format!("mod {m};\npub use {m}::*;\n\n"));
    }
    out.push_str(&format!(
        "// `kube-codegen create api` adds new kinds above this line.\n{}\n\n",
        crate::scaffold::KINDS_MARKER
    ));
    out.push_str(&format!(
        "// Generated by `kube-codegen all <apis dir> {dir}:{version}`: constants, `kube::Resource`\n// impls, the list types.\n#[rustfmt::skip]\nmod register;\npub use register::*;\n"
    ));
    out
}

fn group_mod(group: &str, versions: &[&str]) -> String {
    let mut out = format!("//! The `{group}` API group.\n\n");
    for v in versions {
        out.push_str(&format!("pub mod {v};\n"));
    }
    out.push_str(&format!(
        "// `kube-codegen create api` adds new versions above this line.\n{}\n",
        crate::scaffold::VERSIONS_MARKER
    ));
    out
}

fn apis_mod(dirs: &[&String]) -> String {
    let mut out = String::from("//! API groups, imported by `kube-codegen import`.\n\n");
    for d in dirs {
        out.push_str(&format!("pub mod {d};\n"));
    }
    out.push_str(&format!(
        "// `kube-codegen create api` adds new groups above this line.\n{}\n",
        crate::scaffold::GROUPS_MARKER
    ));
    out
}

/// An existing module file with the scaffold `marker` (one `kube-codegen
/// init`, `create api` or an earlier import wrote) gets the `lines` it does
/// not declare yet, above the marker; `None` when there is no such file.
fn merged(path: &std::path::Path, marker: &str, lines: &str, merges: &mut BTreeSet<PathBuf>) -> Option<String> {
    let old = std::fs::read_to_string(path).ok().filter(|t| t.contains(marker))?;
    let declared: BTreeSet<&str> = old.lines().map(str::trim).collect();
    let missing: String = lines.split_inclusive('\n').filter(|l| !declared.contains(l.trim())).collect();
    merges.insert(path.to_path_buf());
    Some(crate::scaffold::insert_at_marker(&old, marker, &missing))
}

/// Import writes only new files (or files with exactly its contents).
fn refuse_existing(f: &GeneratedFile, diags: &mut Diagnostics) {
    let path = display(&f.path);
    match std::fs::read_to_string(&f.path) {
        Ok(old) if old == f.contents => {}
        Ok(_) => {
            let is_mod = f.path.file_name().is_some_and(|n| n == "mod.rs");
            let help = if is_mod {
                "import adds its modules to an existing `mod.rs` only above its scaffold marker line (`// +kube-codegen:scaffold:groups`, `:versions` or `:kinds`, as `kube-codegen init` writes them): add that line where the new `pub mod` lines belong, or import into an empty `--apis-dir`".to_string()
            } else {
                "imported types are yours to edit, so import never overwrites them: move the file away (or import into another `--apis-dir`) and merge by hand".to_string()
            };
            diags.push(Diagnostic::error(format!("`{path}` already exists")).help(help));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            diags.push(Diagnostic::error(format!("cannot read `{path}`: {e}")).help("import writes a new file there"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_dirs_grow_until_unique() {
        let dirs = group_dirs(["batch.example.com", "batch.other.io", "apps.example.com", "start.example.com"].into());
        assert_eq!(dirs["batch.example.com"], "batch_example");
        assert_eq!(dirs["batch.other.io"], "batch_other");
        assert_eq!(dirs["apps.example.com"], "apps");
        assert_eq!(dirs["start.example.com"], "start_example");
        let dirs = group_dirs(["example.com", "example.org"].into());
        assert_eq!(dirs["example.com"], "example_com");
        assert_eq!(dirs["example.org"], "example_org");
    }
}
