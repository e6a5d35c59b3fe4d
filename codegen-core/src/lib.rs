//! The kube-codegen engine: parse annotated Rust API types, check them, build
//! a model, generate the clientset, listers, informers, fake client and CRD
//! YAML, and write the result.
//!
//! The phases are modules of their own and run in order, each reporting into
//! one [`diag::Diagnostics`] and stopping the run only between phases:
//!
//! 1. `parse`: find `<apis>/<group>/<version>/` packages and parse their
//!    files, following the module tree;
//! 2. `check`: read markers and serde attributes, resolve types, lower to the
//!    model; every error about the user's input is found here;
//! 3. `emit`: render files from the model (pure: no disk access);
//! 4. [`write`](mod@write): compare with the disk, then write (or print a diff for `--verify`).
//!
//! The public API is what front ends need: [`Settings`], [`generate`] and
//! [`run`], the build.rs [`Builder`], [`diag`] and [`write`](mod@write). The phases are
//! internal; `inline` and `markers` serve the proc-macro crate and are
//! hidden from the docs.
//!
//! Every front end (CLI, proc macro, build.rs) configures a run through one
//! [`Settings`] builder: the CLI maps its flags onto it, [`Builder`] (build.rs)
//! wraps it, and the macro mode (`inline`) sets it for one package.
#![deny(missing_docs)]

pub mod build;
#[doc(hidden)]
pub mod builtin;
pub(crate) mod cfg;
pub(crate) mod check;
pub mod diag;
#[doc(hidden)]
pub mod emit;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
pub(crate) mod ident;
pub mod import;
#[doc(hidden)]
pub mod inline;
pub(crate) mod jsonpath;
#[doc(hidden)]
pub mod markers;
#[doc(hidden)]
pub mod model;
pub(crate) mod parse;
#[doc(hidden)]
pub mod plural;
pub mod rbac;
pub(crate) mod rustdoc;
pub mod scaffold;
pub mod settings;
pub mod write;

pub use build::{BuildError, BuildOutput, Builder};
pub use builtin::KubeVersion;
pub use diag::{Diagnostic, Diagnostics, Severity};
pub use settings::{GeneratorKind, GroupVersions, Layout, Settings};
pub use write::{Change, Output};

/// The result of a successful run: the files and any warnings.
#[derive(Debug)]
pub struct Generation {
    /// The generated files and owned directories.
    pub output: Output,
    /// Warnings (generation went on).
    pub warnings: Vec<Diagnostic>,
    /// The model the files were generated from.
    pub model: model::Model,
}

/// Runs parse → check → model → generate. Nothing is written: pass the
/// output to [`write::plan`] and [`write::apply`].
pub fn generate(settings: &Settings) -> Result<Generation, Vec<Diagnostic>> {
    let mut diags = Diagnostics::new();
    if settings.groups.is_empty() {
        return Err(vec![
            Diagnostic::error("no `<group>:<versions>` given")
                .help("pass e.g. `example:v1` (the group's directory under the apis dir)"),
        ]);
    }
    let discovery = parse::discover(settings, &mut diags);
    diags.check()?;
    let model = check::check(settings, &discovery, &mut diags);
    diags.check()?;
    if let Some(d) = nothing_matched(&discovery, &model) {
        diags.push(d);
        return Err(diags.sorted());
    }
    // Generated Rust names these paths; a CRD-only run does not.
    let writes_rust = settings.generators.iter().any(|g| *g != GeneratorKind::Crd);
    for (what, path, flag) in [
        ("the API types' module", settings.apis_module(), "--apis-module"),
        ("the runtime crate's path", settings.runtime_path.clone(), "--runtime-path"),
    ] {
        if writes_rust && syn::parse_str::<syn::Path>(&path).is_err() {
            diags.push(
                Diagnostic::error(format!("{what} would be `{path}`, which is not a Rust path"))
                    .help(format!("give it with `{flag} crate::..` (in build.rs: the builder's method of that name); a directory name that is no Rust identifier cannot be a module")),
            );
        }
    }
    diags.check()?;
    let existing = write::existing(&settings.output_dir());
    let output = emit::generate(settings, &model, &existing, &mut diags);
    diags.check()?;
    Ok(Generation { output, warnings: diags.sorted(), model })
}

/// The "nothing matched" error: what was searched and why each directory
/// contributed nothing.
fn nothing_matched(discovery: &parse::Discovery, model: &model::Model) -> Option<Diagnostic> {
    if model.kinds().next().is_some() {
        return None;
    }
    let mut d = Diagnostic::error("no API types found: nothing to generate");
    for pkg in &discovery.packages {
        let files: Vec<String> = pkg
            .files
            .iter()
            .map(|f| f.source.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
            .collect();
        let reason = if files.is_empty() {
            "no .rs files".to_string()
        } else {
            format!(
                "{} file(s) ({}), but no struct has `#[genclient]` or `#[resource(..)]`",
                files.len(),
                files.join(", ")
            )
        };
        d = d.note(format!("searched `{}`: {reason}", pkg.dir.display()));
    }
    for (dir, reason) in &discovery.skipped {
        d = d.note(format!("skipped `{}`: {reason}", dir.display()));
    }
    Some(d.help(
        "mark each kind with `#[genclient]` (and `#[derive(ApiType)]`), give the version module a `group_name!(\"...\")`, \
         and pass `<group-dir>:<version>` arguments that match `<apis>/<group-dir>/<version>/`",
    ))
}

/// The stack the engine runs on. syn parses recursively, once per level of
/// nesting in the user's files; rustc grows its own stack on demand, so
/// code it accepts may nest deeper than a default 8 MiB thread (or a 2 MiB
/// test thread) can parse in a debug build. Only touched pages are
/// committed: the reservation costs nothing on ordinary input. The engine's
/// worker threads (formatting, the CRD writer) get it too: they recurse as
/// deep as the user's types nest.
pub(crate) const ENGINE_STACK: usize = 256 << 20;

/// Runs `f` on a thread with a 256 MiB stack (on this thread if none can be
/// spawned); a panic in `f` continues on this thread. The CLI, build.rs
/// and the macro run the engine through it.
#[doc(hidden)]
pub fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let f = std::sync::Mutex::new(Some(f));
    let run = || f.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take().map(|f| f());
    let spawned = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("kube-codegen".into())
            .stack_size(ENGINE_STACK)
            .spawn_scoped(scope, run)
            .map(|handle| handle.join())
    });
    let result = match spawned {
        Ok(Ok(result)) => result,
        Ok(Err(payload)) => std::panic::resume_unwind(payload),
        Err(_) => run(),
    };
    result.expect("`f` runs exactly once")
}

/// What [`run`] does with the generated files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Write changed files and remove stale generated ones.
    Write,
    /// Write nothing; report what would change.
    Verify,
}

/// The outcome of [`run`].
#[derive(Debug)]
pub struct Report {
    /// What changed (or, in verify mode, would change).
    pub changes: Vec<Change>,
    /// Files already up to date.
    pub unchanged: usize,
    /// Warnings.
    pub warnings: Vec<Diagnostic>,
}

impl Report {
    /// The changes as a unified diff.
    pub fn diff(&self) -> String {
        write::unified_diff(&self.changes)
    }
}

/// The whole pipeline: generate, compare with the disk, and write (or only
/// compare, for `--verify`). On any error nothing is written.
pub fn run(settings: &Settings, mode: Mode) -> Result<Report, Vec<Diagnostic>> {
    on_big_stack(|| run_here(settings, mode))
}

fn run_here(settings: &Settings, mode: Mode) -> Result<Report, Vec<Diagnostic>> {
    let generation = generate(settings)?;
    commit(&generation.output, mode, generation.warnings)
}

/// Compares `output` with the disk and, in write mode, writes it.
pub(crate) fn commit(output: &Output, mode: Mode, warnings: Vec<Diagnostic>) -> Result<Report, Vec<Diagnostic>> {
    let changes = write::plan(output)?;
    let unchanged = output.files.len() - changes.iter().filter(|c| !matches!(c, Change::Delete { .. })).count();
    if mode == Mode::Write {
        write::apply(&changes).map_err(|d| vec![d])?;
    }
    Ok(Report { changes, unchanged, warnings })
}
