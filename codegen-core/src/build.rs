//! The build.rs front end: the CLI's generation, written into `OUT_DIR`.
//!
//! ```ignore
//! // build.rs
//! fn main() -> Result<(), codegen_core::BuildError> {
//!     codegen_core::Builder::new("src/apis").group_versions("auth:v1beta1").write_to_out_dir()?;
//!     Ok(())
//! }
//! ```
//!
//! Layout under `$OUT_DIR/kube-codegen/`:
//!
//! * `client.rs` — the CLI's `client/` tree as one file, nested modules
//!   inline: `pub mod client { include!(concat!(env!("OUT_DIR"), "/kube-codegen/client.rs")); }`;
//! * `register/<group-dir>/<version>.rs` — what the CLI writes to
//!   `<version>/register.rs`: `mod register { include!(..); } pub use register::*;`;
//! * `crd/<group>_<plural>.yaml` — the CRDs (`include_str!` them).
//!
//! Cargo reruns the script only when a package file or directory changes
//! (`cargo:rerun-if-changed`); errors are rendered rustc-style with file,
//! line and column.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::builtin::KubeVersion;
use crate::diag::{Diagnostic, render_all};
use crate::settings::{GeneratorKind, GroupVersions, Layout, Settings};

/// Configures a build.rs generation: the CLI's options as methods.
#[derive(Clone, Debug)]
pub struct Builder {
    settings: Settings,
    out_dir: Option<PathBuf>,
    errors: Vec<Diagnostic>,
}

/// Errors of a build.rs generation, rendered rustc-style by both `Display`
/// and `Debug` (so `fn main() -> Result<(), BuildError>` prints them well).
pub struct BuildError {
    /// The diagnostics.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render_all(&self.diagnostics))
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

impl std::error::Error for BuildError {}

/// What [`Builder::write_to_out_dir`] wrote.
#[derive(Debug)]
pub struct BuildOutput {
    /// `$OUT_DIR/kube-codegen`.
    pub dir: PathBuf,
    /// Every file of the output, by path.
    pub files: BTreeMap<PathBuf, String>,
    /// The input files and directories (printed as `cargo:rerun-if-changed`).
    pub inputs: Vec<PathBuf>,
    /// Warnings (also printed as `cargo:warning`).
    pub warnings: Vec<Diagnostic>,
}

impl Builder {
    /// A builder over the apis directory (relative to the crate root, where
    /// build scripts run), every generator but `fake` selected.
    pub fn new(apis_dir: impl Into<PathBuf>) -> Self {
        let settings = Settings::new(apis_dir)
            .with_generators(GeneratorKind::ALL.into_iter().filter(|g| *g != GeneratorKind::Fake));
        Builder { settings, out_dir: None, errors: Vec::new() }
    }

    /// Adds `<group-dir>:<version>[,<version>..]` (the CLI's positional arguments).
    pub fn group_versions(mut self, spec: &str) -> Self {
        match GroupVersions::parse(spec) {
            Ok(gv) => self.settings = self.settings.with_group(gv),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Selects generators: `all` or a comma list (the CLI's first argument).
    pub fn generators(mut self, list: &str) -> Self {
        match GeneratorKind::parse_list(list) {
            Ok(g) => self.settings = self.settings.with_generators(g),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Boilerplate put after the generated-file line (`--header-file`'s text).
    pub fn header(mut self, text: impl Into<String>) -> Self {
        self.settings = self.settings.with_header(text);
        self
    }

    /// The Rust path of the apis module (`--apis-module`).
    pub fn apis_module(mut self, path: impl Into<String>) -> Self {
        self.settings = self.settings.with_apis_module(path);
        self
    }

    /// The Rust path of the runtime crate (`--runtime-path`).
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.settings = self.settings.with_runtime_path(path);
        self
    }

    /// The Kubernetes version of built-in types (`--kube-version`); by default
    /// the version k8s-openapi is built for (`DEP_K8S_OPENAPI_*_VERSION`,
    /// set for build scripts of crates that depend on k8s-openapi), else the
    /// crate's Cargo.toml feature.
    pub fn kube_version(mut self, version: &str) -> Self {
        match KubeVersion::parse(version).filter(|v| v.is_supported()) {
            Some(v) => self.settings = self.settings.with_kube_version(v),
            None => self.errors.push(Diagnostic::error(format!("`{version}` is not a supported Kubernetes version"))),
        }
        self
    }

    /// Caps descriptions (`--max-desc-len`).
    pub fn max_desc_len(mut self, len: usize) -> Self {
        self.settings = self.settings.with_max_desc_len(len);
        self
    }

    /// Expands embedded ObjectMeta (`--generate-embedded-object-meta`).
    pub fn generate_embedded_object_meta(mut self, on: bool) -> Self {
        self.settings = self.settings.with_embedded_object_meta(on);
        self
    }

    /// A plural exception (`--plural-exceptions Kind:plural`).
    pub fn plural_exception(mut self, kind: impl Into<String>, plural: impl Into<String>) -> Self {
        self.settings = self.settings.with_plural_exception(kind, plural);
        self
    }

    /// Writes into `dir` instead of `$OUT_DIR` (tests).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The settings this builder runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Generates, writes changed files under `$OUT_DIR/kube-codegen/` and
    /// prints `cargo:rerun-if-changed` for every input and `cargo:warning`
    /// for every warning.
    pub fn write_to_out_dir(self) -> Result<BuildOutput, BuildError> {
        let out = self.render()?;
        for input in &out.inputs {
            println!("cargo:rerun-if-changed={}", input.display());
        }
        for w in &out.warnings {
            let at = w.location.as_ref().map(|l| format!("{}:{}: ", l.file.display(), l.line)).unwrap_or_default();
            println!("cargo:warning={at}{}", w.message);
        }
        for (path, text) in &out.files {
            if crate::write::read_regular(path).is_ok_and(|old| old == *text) {
                continue;
            }
            let written =
                path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(path, text));
            if let Err(e) = written {
                return Err(BuildError {
                    diagnostics: vec![Diagnostic::error(format!("cannot write `{}`: {e}", path.display()))],
                });
            }
        }
        // What an earlier build wrote for a kind or group since removed (its
        // CRD would be taken for a current one): `kube-codegen/` in OUT_DIR
        // holds nothing else.
        remove_stale(&out.dir, &out.files);
        Ok(out)
    }

    /// Generates without writing anything.
    pub fn render(mut self) -> Result<BuildOutput, BuildError> {
        if !self.errors.is_empty() {
            return Err(BuildError { diagnostics: self.errors });
        }
        if self.settings.kube_version.is_none()
            && let Some(v) = k8s_openapi_build_version()
        {
            self.settings = self.settings.with_kube_version(v);
        }
        let base = match self.out_dir.clone().or_else(|| std::env::var_os("OUT_DIR").map(PathBuf::from)) {
            Some(d) => d.join("kube-codegen"),
            None => {
                return Err(BuildError {
                    diagnostics: vec![
                        Diagnostic::error("`OUT_DIR` is not set")
                            .help("call the builder from a build script, or set `out_dir(..)`"),
                    ],
                });
            }
        };
        let client_dir = base.join("client");
        let settings = self
            .settings
            .clone()
            .with_output_dir(&client_dir)
            .with_crd_dir(base.join("crd"))
            .with_layout(Layout::Include);
        let inputs = inputs(&settings);
        let generation = crate::on_big_stack(|| crate::generate(&settings).map(|g| (g.output, g.warnings)))
            .map_err(|diagnostics| BuildError { diagnostics })?;
        let (output, warnings) = generation;
        let mut files = BTreeMap::new();
        for f in output.files {
            if f.path == client_dir.join("mod.rs") {
                // The whole client tree, folded into one file by the emitter.
                files.insert(base.join("client.rs"), f.contents);
            } else if f.path.starts_with(base.join("crd")) {
                files.insert(f.path, f.contents);
            } else if f.path.file_name().is_some_and(|n| n == "register.rs") {
                // `<apis>/<group>/<version>/register.rs` → `register/<group>/<version>.rs`.
                let version_dir = f.path.parent().unwrap_or(Path::new(""));
                let version = version_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let group = version_dir
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                files.insert(base.join("register").join(group).join(format!("{version}.rs")), f.contents);
            }
        }
        Ok(BuildOutput { dir: base, files, inputs, warnings })
    }
}

/// Removes the files under `dir` that are not in `keep`, and the
/// directories left empty. Errors are ignored: a stale file left is no
/// reason to fail a build.
fn remove_stale(dir: &Path, keep: &BTreeMap<PathBuf, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                remove_stale(&path, keep);
                let _ = std::fs::remove_dir(&path);
            }
            Ok(_) if !keep.contains_key(&path) => {
                let _ = std::fs::remove_file(&path);
            }
            _ => {}
        }
    }
}

/// The Kubernetes version k8s-openapi is being built for, as its build
/// script tells the build scripts of crates depending on it
/// (`DEP_K8S_OPENAPI_<crate version>_VERSION = 0x0001MM00`).
fn k8s_openapi_build_version() -> Option<KubeVersion> {
    // `vars()` would panic on a variable that is not Unicode (a directory
    // name in `OLDPWD`, ...); those are not k8s-openapi's.
    k8s_openapi_version_in(
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    )
}

/// [`k8s_openapi_build_version`] from the given environment variables.
fn k8s_openapi_version_in(mut vars: impl Iterator<Item = (String, String)>) -> Option<KubeVersion> {
    vars.find_map(|(k, v)| {
        if !(k.starts_with("DEP_K8S_OPENAPI_") && k.ends_with("_VERSION")) {
            return None;
        }
        let n: u32 = v.trim().parse().ok()?;
        (n >> 16 == 1).then_some(KubeVersion { minor: (n >> 8) & 0xff }).filter(|v| v.is_supported())
    })
}

/// The package files and directories of the run: every package of the
/// apis directory, since API types may use types of packages that are not
/// generated themselves.
fn inputs(settings: &Settings) -> Vec<PathBuf> {
    let mut out = vec![settings.apis_dir.clone()];
    let mut stack = vec![settings.apis_dir.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                out.push(path.clone());
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && crate::write::read_regular(&path).is_ok_and(|t| !crate::write::is_generated(&t))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, String)]) -> impl Iterator<Item = (String, String)> {
        list.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect::<Vec<_>>().into_iter()
    }

    /// The value k8s-openapi's build script gives (`cargo::metadata=version=`):
    /// `0x0001MM00` in decimal.
    fn metadata(minor: u32) -> String {
        (0x0001_0000_u32 | (minor << 8)).to_string()
    }

    #[test]
    fn the_kubernetes_version_k8s_openapi_is_built_for() {
        let supported = KubeVersion::supported()[0];
        // Cargo names the variable after `links = "k8s-openapi-<version>"`.
        let found = k8s_openapi_version_in(vars(&[
            ("PATH", "/bin".into()),
            ("DEP_K8S_OPENAPI_0.29.0_VERSION", metadata(supported.minor)),
        ]));
        assert_eq!(found, Some(supported));
        // Other crates' metadata, versions this generator does not know and
        // text that is not k8s-openapi's number are passed over.
        assert_eq!(k8s_openapi_version_in(vars(&[("DEP_OTHER_VERSION", metadata(supported.minor))])), None);
        assert_eq!(k8s_openapi_version_in(vars(&[("DEP_K8S_OPENAPI_0.29.0_VERSION", metadata(5))])), None);
        assert_eq!(k8s_openapi_version_in(vars(&[("DEP_K8S_OPENAPI_0.29.0_VERSION", "0x00012500".into())])), None);
        assert_eq!(
            k8s_openapi_version_in(vars(&[("DEP_K8S_OPENAPI_0.29.0_VERSION", (2 << 16 | 37 << 8).to_string())])),
            None
        );
    }
}
