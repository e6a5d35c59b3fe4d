//! Phase 1, parse: find the requested `<apis>/<group>/<version>/` packages,
//! read and `syn`-parse their files, and remember why every directory that
//! did not contribute was skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proc_macro2::Span;

use crate::diag::{Diagnostic, Diagnostics, Location, SourceFile};
use crate::settings::Settings;
use crate::write::GENERATED_MARKER;

/// Where something was written: a file and a span in it. The model keeps
/// these so any later phase can point at the user's line.
#[derive(Clone, Debug)]
pub struct Origin {
    /// The file.
    pub file: Arc<SourceFile>,
    /// The span inside the file.
    pub span: Span,
}

impl Origin {
    /// The rendered location.
    pub fn location(&self) -> Location {
        self.file.location(self.span)
    }

    /// Another span in the same file.
    pub fn with_span(&self, span: Span) -> Origin {
        Origin { file: self.file.clone(), span }
    }
}

/// One parsed source file.
#[derive(Debug)]
pub struct ParsedFile {
    /// Path and text.
    pub source: Arc<SourceFile>,
    /// The syntax tree.
    pub ast: syn::File,
    /// `use` imports: local name → full path (`Quantity` →
    /// `k8s_openapi::apimachinery::pkg::api::resource::Quantity`).
    pub uses: BTreeMap<String, String>,
}

/// One `<group>/<version>` directory with its parsed files.
#[derive(Debug)]
pub struct Package {
    /// The group's directory name (`example`).
    pub group_package: String,
    /// The version (`v1`).
    pub version: String,
    /// The version directory.
    pub dir: PathBuf,
    /// Every `.rs` file of the version directory except generated ones, by name.
    pub files: Vec<ParsedFile>,
    /// The module file (`mod.rs`, or `<version>.rs` beside the directory).
    pub module_file: Option<usize>,
}

/// What the parse phase found, and why other directories were skipped.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Packages that exist and parsed.
    pub packages: Vec<Package>,
    /// Directories looked at that contribute nothing, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Whether `name` is a Kubernetes API version (`v1`, `v2beta1`, `v1alpha3`).
pub fn is_version_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('v') else { return false };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let rest = &rest[digits..];
    if rest.is_empty() {
        return true;
    }
    let tail = rest.strip_prefix("alpha").or_else(|| rest.strip_prefix("beta"));
    tail.is_some_and(|t| !t.is_empty() && !t.starts_with('0') && t.chars().all(|c| c.is_ascii_digit()))
}

/// Reads and parses every requested package.
pub fn discover(settings: &Settings, diags: &mut Diagnostics) -> Discovery {
    let mut out = Discovery::default();
    let apis = &settings.apis_dir;
    if !apis.is_dir() {
        diags.push(
            Diagnostic::error(format!("apis directory `{}` does not exist", apis.display()))
                .help("pass the directory that holds `<group>/<version>/` packages, e.g. `pkg/apis`"),
        );
        return out;
    }
    let requested: Vec<&str> = settings.groups.iter().map(|g| g.package.as_str()).collect();
    // Directories present but not requested, so "nothing matched" can say why.
    for entry in sorted_dir(apis) {
        if entry.is_dir() {
            let name = file_name(&entry);
            if !requested.contains(&name.as_str()) {
                out.skipped.push((
                    entry.clone(),
                    format!("not requested on the command line (add `{name}:<versions>` to include it)"),
                ));
            }
        }
    }
    for gv in &settings.groups {
        let group_dir = apis.join(&gv.package);
        if !group_dir.is_dir() {
            let present: Vec<String> =
                sorted_dir(apis).into_iter().filter(|p| p.is_dir()).map(|p| file_name(&p)).collect();
            let names: Vec<&str> = present.iter().map(String::as_str).collect();
            let mut d = Diagnostic::error(format!("group directory `{}` does not exist", group_dir.display()));
            d = match crate::ident::did_you_mean(&gv.package, &names) {
                Some(s) => d.help(format!("did you mean `{s}:{}`?", gv.versions.join(","))),
                None if names.is_empty() => d.help(format!("`{}` has no group directories", apis.display())),
                None => d.help(format!("group directories under `{}`: {}", apis.display(), names.join(", "))),
            };
            diags.push(d);
            out.skipped.push((group_dir, "does not exist".into()));
            continue;
        }
        for entry in sorted_dir(&group_dir) {
            if entry.is_dir() && !gv.versions.contains(&file_name(&entry)) {
                let name = file_name(&entry);
                let reason = if is_version_name(&name) {
                    format!(
                        "version not requested (add it: `{}:{}`)",
                        gv.package,
                        [gv.versions.clone(), vec![name.clone()]].concat().join(",")
                    )
                } else {
                    "not a version directory (expected `v1`, `v1beta1`, `v2alpha1`, ...)".to_string()
                };
                out.skipped.push((entry, reason));
            }
        }
        for version in &gv.versions {
            let dir = group_dir.join(version);
            if !is_version_name(version) {
                diags.push(
                    Diagnostic::error(format!("`{version}` is not a Kubernetes API version"))
                        .help("versions look like `v1`, `v1beta1` or `v2alpha1`"),
                );
                out.skipped.push((dir, "not a Kubernetes version name".into()));
                continue;
            }
            if !dir.is_dir() {
                let present: Vec<String> =
                    sorted_dir(&group_dir).into_iter().filter(|p| p.is_dir()).map(|p| file_name(&p)).collect();
                diags.push(Diagnostic::error(format!("version directory `{}` does not exist", dir.display())).help(
                    if present.is_empty() {
                        format!("create `{}/mod.rs` with `group_name!(..)` and the API types", dir.display())
                    } else {
                        format!("versions present: {}", present.join(", "))
                    },
                ));
                out.skipped.push((dir, "does not exist".into()));
                continue;
            }
            out.packages.push(parse_package(&gv.package, version, &dir, diags));
        }
    }
    out
}

/// The `.rs` files of a version package: the directory's files, and the
/// `<version>.rs` module file beside the directory if there is one.
pub fn package_files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> =
        sorted_dir(dir).into_iter().filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "rs")).collect();
    // `src/apis/example/v1.rs` + `v1/` directory layout.
    let sibling = dir.with_extension("rs");
    if sibling.is_file() {
        paths.insert(0, sibling);
    }
    paths
}

fn parse_package(group: &str, version: &str, dir: &Path, diags: &mut Diagnostics) -> Package {
    parse_files(group, version, dir, package_files(dir), diags)
}

/// Reads and parses `paths` as one package (generated files are skipped);
/// `mod.rs` or `<dir>.rs` is the module file.
pub fn parse_files(group: &str, version: &str, dir: &Path, paths: Vec<PathBuf>, diags: &mut Diagnostics) -> Package {
    let mut files = Vec::new();
    let mut module_file = None;
    let sibling = dir.with_extension("rs");
    for path in paths {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                diags.push(Diagnostic::error(format!("cannot read `{}`: {e}", path.display())));
                continue;
            }
        };
        if text.lines().next().is_some_and(|l| l.trim() == GENERATED_MARKER) {
            continue;
        }
        let source = Arc::new(SourceFile::new(path.clone(), text));
        match syn::parse_file(&source.text) {
            Ok(ast) => {
                let is_module = path == sibling || file_name(&path) == "mod.rs";
                if is_module {
                    module_file = Some(files.len());
                }
                let uses = collect_uses(&ast);
                files.push(ParsedFile { source, ast, uses });
            }
            Err(e) => {
                for err in e {
                    diags.push(
                        Diagnostic::error(format!("cannot parse Rust file: {err}"))
                            .at(source.location(err.span()))
                            .help("the file must compile; fix the syntax error first"),
                    );
                }
            }
        }
    }
    Package {
        group_package: group.to_string(),
        version: version.to_string(),
        dir: dir.to_path_buf(),
        files,
        module_file,
    }
}

/// `use` items of a file as local name → full path.
pub fn collect_uses(file: &syn::File) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for item in &file.items {
        if let syn::Item::Use(u) = item {
            walk_use(&u.tree, String::new(), &mut out);
        }
    }
    out
}

fn walk_use(tree: &syn::UseTree, prefix: String, out: &mut BTreeMap<String, String>) {
    let join = |p: &str, s: &str| if p.is_empty() { s.to_string() } else { format!("{p}::{s}") };
    match tree {
        syn::UseTree::Path(p) => walk_use(&p.tree, join(&prefix, &p.ident.to_string()), out),
        syn::UseTree::Name(n) => {
            out.insert(n.ident.to_string(), join(&prefix, &n.ident.to_string()));
        }
        syn::UseTree::Rename(r) => {
            out.insert(r.rename.to_string(), join(&prefix, &r.ident.to_string()));
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                walk_use(t, prefix.clone(), out);
            }
        }
        syn::UseTree::Glob(_) => {}
    }
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names() {
        for ok in ["v1", "v2", "v1beta1", "v2alpha3", "v10"] {
            assert!(is_version_name(ok), "{ok}");
        }
        for bad in ["1", "v", "v0", "v1beta", "v1gamma1", "version1", "V1", "v01"] {
            assert!(!is_version_name(bad), "{bad}");
        }
    }

    #[test]
    fn uses_are_resolved() {
        let f: syn::File = syn::parse_str(
            "use k8s_openapi::apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::{ObjectMeta, Time as T}}; use serde::*;",
        )
        .unwrap();
        let u = collect_uses(&f);
        assert_eq!(u["Quantity"], "k8s_openapi::apimachinery::pkg::api::resource::Quantity");
        assert_eq!(u["T"], "k8s_openapi::apimachinery::pkg::apis::meta::v1::Time");
        assert_eq!(u.len(), 3);
    }
}
