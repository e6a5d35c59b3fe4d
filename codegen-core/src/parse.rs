//! Phase 1, parse: find the requested `<apis>/<group>/<version>/` packages,
//! read and `syn`-parse their files, and remember why every directory that
//! did not contribute was skipped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use proc_macro2::Span;
use syn::spanned::Spanned as _;

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
}

/// One module of a package: a file, or an inline `mod x { .. }` in a file.
#[derive(Clone, Debug)]
pub struct Module {
    /// The module path inside the package (`[]` for the version module,
    /// `["types"]` for `mod types;`).
    pub path: Vec<String>,
    /// The file it is written in (index into [`Package::files`]).
    pub file: usize,
    /// The inline `mod` items leading to it inside the file (indexes into
    /// the items of each level); empty for the file's own module.
    pub inline: Vec<usize>,
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
    /// The files of the package's module tree, generated ones left out.
    pub files: Vec<ParsedFile>,
    /// The module file (`mod.rs`, or `<version>.rs` beside the directory).
    pub module_file: Option<usize>,
    /// Every module, the version module first.
    pub modules: Vec<Module>,
    /// `.rs` files of the directory that no `mod` declaration reaches.
    pub unreached: Vec<PathBuf>,
    /// `mod name;` declarations with no file: where, the module's name, and
    /// the files looked for.
    pub missing_modules: Vec<(Location, String, Vec<PathBuf>)>,
    /// Modules declared (`mod name;`) behind a `cfg` that does not hold in
    /// the build read: their files are not part of it.
    pub excluded_modules: Vec<String>,
    /// The build whose `cfg`s the package was read for.
    pub build: crate::cfg::Build,
    /// Code behind a `cfg` the engine cannot decide: (file, first line, last
    /// line); a whole file when its `mod` declaration is such code.
    pub conditional: Vec<(PathBuf, usize, usize)>,
    /// Each file of [`Package::files`] resolved (symlinks, `..`), to tell
    /// two spellings of one file apart from two files.
    pub(crate) canonical: Vec<PathBuf>,
}

impl Package {
    /// Whether `line` of `file` is behind a `cfg` the engine cannot decide.
    pub fn is_conditional(&self, file: &Path, line: usize) -> bool {
        self.conditional.iter().any(|(f, first, last)| f == file && *first <= line && line <= *last)
    }

    /// The key of the package in the model (`example/v1`).
    pub fn key(&self) -> String {
        format!("{}/{}", self.group_package, self.version)
    }

    /// The items of a module.
    pub fn items(&self, m: &Module) -> &[syn::Item] {
        let mut items: &[syn::Item] = &self.files[m.file].ast.items;
        for &i in &m.inline {
            match &items[i] {
                syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => items = inner,
                _ => return &[],
            }
        }
        items
    }

    /// The file a module is written in.
    pub fn file_of(&self, m: &Module) -> &ParsedFile {
        &self.files[m.file]
    }
}

/// What the parse phase found, and why other directories were skipped.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Packages that exist and parsed.
    pub packages: Vec<Package>,
    /// Directories looked at that contribute nothing, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
    /// The other `<group>/<version>` packages of the apis directory: API
    /// types may use their types. Problems in them are only reported when a
    /// requested package refers to them.
    pub others: Vec<(Package, Vec<Diagnostic>)>,
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
        let what = if apis.exists() { "is not a directory" } else { "does not exist" };
        diags.push(
            Diagnostic::error(format!("apis directory `{}` {what}", apis.display()))
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
        if !is_module_name(&gv.package) {
            diags.push(
                Diagnostic::error(format!("group directory `{}` is not a Rust module name", group_dir.display()))
                    .help(format!(
                        "rename it to `{}`: a group directory is a Rust module (the API group's name comes from `group_name!`)",
                        module_name_like(&gv.package)
                    )),
            );
            out.skipped.push((group_dir, "not a Rust module name".into()));
            continue;
        }
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
            // `example:v1,v1` or `example:v1 example:v1` name one package.
            if out.packages.iter().any(|p| p.group_package == gv.package && p.version == *version) {
                continue;
            }
            out.packages.push(parse_package(&gv.package, version, &dir, diags));
        }
    }
    let requested: Vec<String> = out.packages.iter().map(Package::key).collect();
    out.others = other_packages(apis, &requested);
    out
}

/// Parses every `<group>/<version>` package of the apis directory except
/// `skip` (package keys), keeping each one's problems for later.
pub fn other_packages(apis: &Path, skip: &[String]) -> Vec<(Package, Vec<Diagnostic>)> {
    let mut out = Vec::new();
    for group_dir in sorted_dir(apis).into_iter().filter(|p| p.is_dir()) {
        let group = file_name(&group_dir);
        for version_dir in sorted_dir(&group_dir).into_iter().filter(|p| p.is_dir()) {
            let version = file_name(&version_dir);
            if skip.contains(&format!("{group}/{version}")) || !is_version_name(&version) {
                continue;
            }
            let mut own = Diagnostics::new();
            let pkg = parse_package(&group, &version, &version_dir, &mut own);
            out.push((pkg, own.sorted()));
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
    let module = dir.join("mod.rs");
    if module.exists() && !module.is_file() {
        diags.push(
            Diagnostic::error(format!("`{}` is not a regular file", module.display()))
                .help("the version module is a file: `mod.rs`, or `<version>.rs` beside the directory"),
        );
    }
    parse_files(group, version, dir, package_files(dir), crate::cfg::Build::Normal, diags)
}

/// Reads and parses `paths` as one package (generated files are skipped).
///
/// With a module file (`mod.rs`, or `<dir>.rs` beside the directory) the
/// package is its module tree: `mod x;` declarations (with `#[path]`) and
/// inline `mod x { .. }` are followed, items whose `#[cfg]` is false are left
/// out ([`crate::cfg`]), and other files of `paths` are listed as unreached. Without one, every file
/// is a module of its own (`x.rs` is `x`), and a single file is the
/// package's version module itself.
pub fn parse_files(
    group: &str,
    version: &str,
    dir: &Path,
    paths: Vec<PathBuf>,
    build: crate::cfg::Build,
    diags: &mut Diagnostics,
) -> Package {
    let mut pkg = Package {
        group_package: group.to_string(),
        version: version.to_string(),
        dir: dir.to_path_buf(),
        files: Vec::new(),
        module_file: None,
        modules: Vec::new(),
        unreached: Vec::new(),
        missing_modules: Vec::new(),
        excluded_modules: Vec::new(),
        build,
        conditional: Vec::new(),
        canonical: Vec::new(),
    };
    let sibling = dir.with_extension("rs");
    let root = paths.iter().find(|p| **p == sibling || (p.parent() == Some(dir) && file_name(p) == "mod.rs")).cloned();
    match root {
        Some(root) => {
            let child_dir = if file_name(&root) == "mod.rs" { dir.to_path_buf() } else { sibling.with_extension("") };
            if let Some(idx) = read_file(&mut pkg, &root, resolved(&root), diags) {
                pkg.module_file = Some(idx);
                walk_module(
                    &mut pkg,
                    Module { path: Vec::new(), file: idx, inline: Vec::new() },
                    &child_dir,
                    true,
                    &[idx],
                    diags,
                );
            }
            let reached: Vec<PathBuf> = pkg.files.iter().map(|f| f.source.path.clone()).collect();
            pkg.unreached = paths
                .into_iter()
                .filter(|p| !reached.contains(p) && read_source(p).is_ok_and(|t| !crate::write::is_generated(&t)))
                .collect();
        }
        None if paths.len() == 1 => {
            // A lone file (macro mode outside a version directory): its inline
            // modules belong to the package, files it declares do not.
            if let Some(idx) = read_file(&mut pkg, &paths[0], resolved(&paths[0]), diags) {
                walk_module(
                    &mut pkg,
                    Module { path: Vec::new(), file: idx, inline: Vec::new() },
                    dir,
                    false,
                    &[idx],
                    diags,
                );
            }
        }
        None => {
            for path in paths {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                if let Some(idx) = read_file(&mut pkg, &path, resolved(&path), diags) {
                    walk_module(
                        &mut pkg,
                        Module { path: vec![stem.clone()], file: idx, inline: Vec::new() },
                        &dir.join(&stem),
                        true,
                        &[idx],
                        diags,
                    );
                }
            }
        }
    }
    pkg
}

/// `path` resolved (symlinks, `.`, `..`), as the package's files are
/// compared; as written when it cannot be.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads and parses one file into the package; `None` for unreadable,
/// unparsable (reported) and generated (skipped) files.
fn read_file(pkg: &mut Package, path: &Path, canonical: PathBuf, diags: &mut Diagnostics) -> Option<usize> {
    let text = match read_source(path) {
        Ok(t) => t,
        Err(d) => {
            diags.push(*d);
            return None;
        }
    };
    if text.lines().next().is_some_and(|l| l.trim() == GENERATED_MARKER) {
        return None;
    }
    let source = Arc::new(SourceFile::new(path.to_path_buf(), text));
    // Lexed once: the depth check walks the tokens syn then parses. A file
    // that does not lex, or starts with a shebang line (which only syn's
    // own entry point strips), goes to `syn::parse_file`, which says why.
    let body = source.text.strip_prefix('\u{feff}').unwrap_or(&source.text);
    let tokens: Option<proc_macro2::TokenStream> = body.parse().ok();
    if let Some(span) = tokens.clone().and_then(nested_too_deep) {
        diags.push(
            Diagnostic::error(format!("nesting deeper than {MAX_NESTING} levels"))
                .at(source.location(span))
                .help("give an inner level a name of its own (a struct, or a type alias)"),
        );
        return None;
    }
    let parsed = match tokens {
        Some(tokens) if !body.starts_with("#!") || body.starts_with("#![") => syn::parse2::<syn::File>(tokens),
        _ => syn::parse_file(&source.text),
    };
    match parsed {
        Ok(mut ast) => {
            for item in &ast.items {
                if let syn::Item::Mod(m) = item
                    && m.content.is_none()
                    && crate::cfg::of_attrs(&m.attrs, pkg.build) == crate::cfg::Cfg::False
                {
                    pkg.excluded_modules.push(m.ident.to_string());
                }
            }
            for (first, last) in crate::cfg::strip(&mut ast.items, pkg.build, &source, diags) {
                pkg.conditional.push((source.path.clone(), first, last));
            }
            pkg.canonical.push(canonical);
            pkg.files.push(ParsedFile { source, ast });
            Some(pkg.files.len() - 1)
        }
        Err(e) => {
            for err in e {
                // The lexer's error for an unbalanced delimiter says only that
                // the text is not tokens.
                let what = match err.to_string().as_str() {
                    "cannot parse string into token stream" => {
                        "a `(`, `[` or `{` is never closed, or a closing one has no opening".to_string()
                    }
                    other => other.to_string(),
                };
                diags.push(
                    Diagnostic::error(format!("cannot parse Rust file: {what}"))
                        .at(source.location(err.span()))
                        .help("the file must compile; fix the syntax error first"),
                );
            }
            None
        }
    }
}

/// Reads a source file: a regular file (a FIFO or a device could block or
/// never end) of UTF-8 text (an error says where it is not).
pub(crate) fn read_source(path: &Path) -> Result<String, Box<Diagnostic>> {
    let bytes = crate::write::read_regular_bytes(path).map_err(|e| {
        Box::new(if matches!(e.kind(), std::io::ErrorKind::InvalidInput | std::io::ErrorKind::IsADirectory) {
            Diagnostic::error(format!("`{}` is not a regular file", path.display()))
                .help("a module's source must be a file; move what is there out of the way")
        } else {
            Diagnostic::error(format!("cannot read `{}`: {e}", path.display()))
        })
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line_end =
            e.as_bytes()[line_start..].iter().position(|&b| b == b'\n').map_or(e.as_bytes().len(), |i| line_start + i);
        let column = String::from_utf8_lossy(&valid[line_start..]).chars().count();
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        Box::new(
            Diagnostic::error(format!("`{}` is not UTF-8 text", path.display()))
                .at(Location {
                    file: path.to_path_buf(),
                    line,
                    column,
                    end_line: line,
                    end_column: column + 1,
                    line_text: String::from_utf8_lossy(&e.as_bytes()[line_start..line_end]).into_owned(),
                })
                .help("Rust source must be UTF-8; save the file as UTF-8"),
        )
    })
}

/// How deep delimiters and angle brackets may nest in a source file: far
/// beyond any API type, and well within what the engine's stack parses
/// (each level is a few frames of `syn`'s recursive descent).
pub(crate) const MAX_NESTING: usize = 1000;

/// The first token of `tokens` nested deeper than [`MAX_NESTING`], counting
/// groups and the angle brackets open in the current statement.
pub(crate) fn nested_too_deep(tokens: proc_macro2::TokenStream) -> Option<Span> {
    use proc_macro2::{Spacing, TokenTree};
    // One entry per open group: its tokens and the angle brackets open in it.
    let mut stack = vec![(tokens.into_iter(), 0usize)];
    let mut joint_after: Option<char> = None;
    loop {
        let open = stack.len();
        let Some((tokens, angles)) = stack.last_mut() else { break };
        let Some(token) = tokens.next() else {
            stack.pop();
            continue;
        };
        let after = joint_after.take();
        match token {
            TokenTree::Punct(p) => {
                match p.as_char() {
                    '<' => *angles += 1,
                    // `->` and `=>` close nothing.
                    '>' if !matches!(after, Some('-' | '=')) => *angles = angles.saturating_sub(1),
                    ';' => *angles = 0,
                    _ => {}
                }
                if open + *angles > MAX_NESTING {
                    return Some(p.span());
                }
                if p.spacing() == Spacing::Joint {
                    joint_after = Some(p.as_char());
                }
            }
            TokenTree::Group(g) => {
                if open + *angles + 1 > MAX_NESTING {
                    return Some(g.span_open());
                }
                stack.push((g.stream().into_iter(), 0));
            }
            _ => {}
        }
    }
    None
}

/// Registers `module` and follows its `mod` items; `dir` is where its child
/// module files live. Without `follow_files` only inline modules are
/// followed. `enclosing` are the files of the modules around this one, its
/// own file last.
fn walk_module(
    pkg: &mut Package,
    module: Module,
    dir: &Path,
    follow_files: bool,
    enclosing: &[usize],
    diags: &mut Diagnostics,
) {
    let Module { path, file, inline } = module.clone();
    let mut children = Vec::new();
    for (i, item) in pkg.items(&module).iter().enumerate() {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        let explicit = path_attr(&m.attrs);
        children.push((i, name, explicit, m.content.is_some()));
    }
    let source = pkg.files[file].source.clone();
    pkg.modules.push(module.clone());
    for (i, name, explicit, is_inline) in children {
        let mut child_path = path.clone();
        child_path.push(name.clone());
        if is_inline {
            let mut chain = inline.clone();
            chain.push(i);
            let child_dir = match &explicit {
                Some(p) => dir.join(p),
                None => dir.join(&name),
            };
            walk_module(
                pkg,
                Module { path: child_path, file, inline: chain },
                &child_dir,
                follow_files,
                enclosing,
                diags,
            );
            continue;
        }
        if !follow_files {
            continue;
        }
        let candidates = match &explicit {
            // `#[path]` is relative to the directory of the declaring file.
            Some(p) => vec![source.path.parent().map(|d| d.join(p)).unwrap_or_else(|| PathBuf::from(p))],
            None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
        };
        // A module without a file is reported as a warning by the checker
        // (a generated module such as `register` may not be written yet).
        let Some(found) = candidates.iter().find(|c| c.is_file()) else {
            let declared = pkg.items(&module)[i].span();
            pkg.missing_modules.push((source.location(declared), name, candidates));
            continue;
        };
        let canonical = resolved(found);
        if let Some(seen) = pkg.canonical.iter().position(|c| *c == canonical) {
            let declared = source.location(pkg.items(&module)[i].span());
            let module_name = |p: &[String]| {
                if p.is_empty() { "the version module".to_string() } else { format!("module `{}`", p.join("::")) }
            };
            if enclosing.contains(&seen) {
                diags.push(
                    Diagnostic::error(format!(
                        "circular modules: `mod {name}` declares `{}`, the file of this module or of one around it",
                        found.display()
                    ))
                    .at(declared)
                    .help("point `mod` at a file of its own (rustc refuses circular modules too)"),
                );
            } else {
                let first =
                    pkg.modules.iter().find(|m| m.file == seen && m.inline.is_empty()).map(|m| module_name(&m.path));
                diags.push(
                    Diagnostic::warning(format!(
                        "`{}` is declared as a module twice: its types are read once, as {}",
                        found.display(),
                        first.unwrap_or_else(|| "the first module".to_string())
                    ))
                    .at(declared)
                    .help(format!("remove this `mod {name}`, or point it at a file of its own")),
                );
            }
            continue;
        }
        let Some(idx) = read_file(pkg, found, canonical, diags) else { continue };
        let declared_at = pkg.items(&module)[i].span().start().line;
        if pkg.is_conditional(&source.path, declared_at) {
            pkg.conditional.push((found.clone(), 0, usize::MAX));
        }
        let child_dir = if file_name(found) == "mod.rs" {
            found.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            found.with_extension("")
        };
        let mut inner = enclosing.to_vec();
        inner.push(idx);
        walk_module(pkg, Module { path: child_path, file: idx, inline: Vec::new() }, &child_dir, true, &inner, diags);
    }
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

/// Whether a directory name can be a Rust module's: ASCII letters, digits
/// and `_`, not starting with a digit.
fn is_module_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name != "_"
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `name` with what a module name cannot hold replaced by `_`.
fn module_name_like(name: &str) -> String {
    let out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) { format!("_{out}") } else { out }
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
}
