//! `kube-codegen rbac`: the `#[rbac(...)]` markers of a controller's sources
//! merged into one role manifest (controller-gen's `rbac` generator).
//!
//! Rules are merged and sorted as controller-gen's generator does (see
//! `merge`), so that both write the same rules for the same markers (a
//! differential test checks it). Markers without `namespace` make the
//! `ClusterRole`; each namespace named gets a `Role` of its own, after it
//! in the same file, and `role_name` names a role of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

use crate::diag::{Diagnostic, Diagnostics, SourceFile};
use crate::markers::{RbacRule, is_rbac_attr, parse_rbac_attr};
use crate::write::{GENERATED_MARKER_YAML, GeneratedFile, Output};
use crate::{Mode, Report};

/// What `kube-codegen rbac` reads and writes.
#[derive(Clone, Debug)]
pub struct RbacSettings {
    /// Rust files, or directories searched for `.rs` files (recursively,
    /// skipping `target` and hidden directories).
    pub sources: Vec<PathBuf>,
    /// The manifest to write, e.g. `config/rbac/role.yaml`.
    pub output: PathBuf,
    /// `metadata.name` of the ClusterRole and of every Role.
    pub role_name: String,
}

/// One granted rule after merging.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rule {
    groups: BTreeSet<String>,
    resources: BTreeSet<String>,
    resource_names: BTreeSet<String>,
    urls: BTreeSet<String>,
    verbs: BTreeSet<String>,
}

/// The markers found, with the files they were found in.
struct Found {
    rules: Vec<RbacRule>,
    files: Vec<PathBuf>,
    warnings: Vec<Diagnostic>,
}

/// Reads the markers of `settings.sources` and renders the manifest.
pub fn generate_rbac(settings: &RbacSettings) -> Result<Output, Vec<Diagnostic>> {
    render(settings).map(|(output, _)| output)
}

/// [`generate_rbac`], with the warnings.
fn render(settings: &RbacSettings) -> Result<(Output, Vec<Diagnostic>), Vec<Diagnostic>> {
    let found = collect(&settings.sources)?;
    if found.rules.is_empty() {
        let searched: Vec<String> = settings.sources.iter().map(|p| format!("`{}`", p.display())).collect();
        return Err(vec![
            Diagnostic::error(format!("no `#[rbac(...)]` markers in {}", searched.join(", ")))
                .help("mark the code that calls the API, e.g. `#[rbac(groups = \"\", resources = \"configmaps\", verbs = \"get;list;watch\")]` on the controller's reconcile function"),
        ]);
    }
    // A role per namespace (none: the ClusterRole) and name, in that order.
    let mut by_namespace: BTreeMap<(Option<String>, &str), Vec<&RbacRule>> = BTreeMap::new();
    for rule in &found.rules {
        let name = rule.role_name.as_deref().unwrap_or(&settings.role_name);
        by_namespace.entry((rule.namespace.clone(), name)).or_default().push(rule);
    }
    let mut text = format!("{GENERATED_MARKER_YAML}\n# From the #[rbac] markers in:\n");
    let root = crate_root_of(&settings.output);
    for file in &found.files {
        text.push_str(&format!("#   {}\n", slashed(&relative_to(file, root.as_deref())).display()));
    }
    for (i, ((namespace, name), rules)) in by_namespace.iter().enumerate() {
        if i > 0 {
            text.push_str("---\n");
        }
        render_role(&mut text, name, namespace.as_deref(), &merge(rules));
    }
    let output =
        Output { files: vec![GeneratedFile { path: settings.output.clone(), contents: text }], owned: BTreeSet::new() };
    Ok((output, found.warnings))
}

/// [`generate_rbac`], then compares with the disk and writes (or, in
/// verify mode, only reports what would change).
pub fn run_rbac(settings: &RbacSettings, mode: Mode) -> Result<Report, Vec<Diagnostic>> {
    // syn recurses once per level of nesting in the files read: on the
    // engine's stack, as every other parse.
    let (output, warnings) = crate::on_big_stack(|| render(settings))?;
    crate::commit(&output, mode, warnings)
}

/// The `.rs` files of `sources`, sorted.
fn rust_files(sources: &[PathBuf], diags: &mut Diagnostics) -> Vec<PathBuf> {
    let mut files = BTreeSet::new();
    for source in sources {
        if source.is_file() {
            files.insert(source.clone());
            continue;
        }
        if !source.is_dir() {
            diags.push(
                Diagnostic::error(format!("`{}` is neither a file nor a directory", source.display()))
                    .help("pass the controller's source files or directories, e.g. `src`"),
            );
            continue;
        }
        let mut stack = vec![source.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" {
                        stack.push(path);
                    }
                } else if name.ends_with(".rs") {
                    files.insert(path);
                }
            }
        }
    }
    files.into_iter().collect()
}

fn collect(sources: &[PathBuf]) -> Result<Found, Vec<Diagnostic>> {
    let mut diags = Diagnostics::new();
    let mut found = Found { rules: Vec::new(), files: Vec::new(), warnings: Vec::new() };
    // Every file read and parsed once; its error is said only if it is no
    // test module.
    let parsed: Vec<(PathBuf, Parsed)> =
        rust_files(sources, &mut diags).into_iter().map(|path| (path.clone(), parse_file(path))).collect();
    // The files of `#[cfg(test)] mod name;`, and everything below them.
    let test_modules: Vec<PathBuf> = parsed
        .iter()
        .filter_map(|(path, file)| file.as_ref().ok().map(|(_, file)| test_module_paths(path, file)))
        .flatten()
        .collect();
    for (path, file) in parsed {
        if test_modules.iter().any(|t| path == *t || path.starts_with(t.with_extension(""))) {
            continue;
        }
        let (source, file) = match file {
            Ok(parsed) => parsed,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let mut visitor = Markers { rules: Vec::new(), errors: Vec::new(), others: Vec::new() };
        visitor.visit_file(&file);
        for error in visitor.errors {
            diags.push(Diagnostic::error(error.message).at(source.location(error.span)).help_opt(error.help));
        }
        for span in visitor.others {
            found.warnings.push(
                Diagnostic::warning("an `rbac` attribute that is no `#[rbac(...)]` marker is not read")
                    .at(source.location(span))
                    .help("write `#[codegen_macros::rbac(...)]`, or `#[rbac(...)]` after a `use`, for the role to grant it"),
            );
        }
        if !visitor.rules.is_empty() {
            found.files.push(slashed(&path));
            found.rules.extend(visitor.rules);
        }
    }
    diags.check()?;
    Ok(found)
}

/// A source file and its syntax tree, or what is wrong with it.
type Parsed = Result<(SourceFile, syn::File), Diagnostic>;

/// One source file read (not a FIFO or device, a read that never ends;
/// UTF-8) and parsed, or what is wrong with it.
fn parse_file(path: PathBuf) -> Parsed {
    let text = crate::parse::read_source(&path).map_err(|d| *d)?;
    let source = SourceFile::new(path.clone(), text);
    // syn recurses once per level: deeper than the generator parses is
    // an error here too, not a stack overflow.
    let body = source.text.strip_prefix('\u{feff}').unwrap_or(&source.text);
    if let Some(span) = body.parse::<proc_macro2::TokenStream>().ok().and_then(crate::parse::nested_too_deep) {
        return Err(Diagnostic::error(format!("nesting deeper than {} levels", crate::parse::MAX_NESTING))
            .at(source.location(span))
            .help("give an inner level a name of its own (a struct, or a type alias)"));
    }
    match syn::parse_file(&source.text) {
        Ok(file) => Ok((source, file)),
        Err(err) => Err(Diagnostic::error(format!("cannot parse `{}`: {err}", path.display()))
            .at(source.location(err.span()))
            .help("the file must be valid Rust (run `cargo check`)")),
    }
}

/// `path` as written in the manifest's header: `/` separators.
/// The nearest ancestor of `output` holding a `Cargo.toml`.
fn crate_root_of(output: &Path) -> Option<PathBuf> {
    output.ancestors().skip(1).find(|d| d.join("Cargo.toml").is_file()).map(Path::to_path_buf)
}

/// `file` relative to the crate root, so that the manifest names the same
/// files whatever directory the command runs in.
fn relative_to(file: &Path, root: Option<&Path>) -> PathBuf {
    // `./src/x.rs` and `src/x.rs` are one file: no `.` components.
    let file = &file.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect::<PathBuf>();
    let Some(root) = root else { return file.to_path_buf() };
    if let Ok(rest) = file.strip_prefix(root) {
        return rest.to_path_buf();
    }
    match (std::fs::canonicalize(file), std::fs::canonicalize(root)) {
        (Ok(file_abs), Ok(root_abs)) => {
            file_abs.strip_prefix(&root_abs).map(Path::to_path_buf).unwrap_or_else(|_| file.to_path_buf())
        }
        _ => file.to_path_buf(),
    }
}

fn slashed(path: &Path) -> PathBuf {
    PathBuf::from(path.to_string_lossy().replace('\\', "/"))
}

/// The files `#[cfg(test)] mod name;` items of `file` (at `path`) load:
/// `name.rs` (and its directory `name/`) beside a `lib.rs`, `main.rs` or
/// `mod.rs`, else in the directory named after `path`.
fn test_module_paths(path: &Path, file: &syn::File) -> Vec<PathBuf> {
    let dir = match path.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => path.parent().map(Path::to_path_buf).unwrap_or_default(),
        _ => path.with_extension(""),
    };
    let mut out = Vec::new();
    for item in &file.items {
        if let syn::Item::Mod(m) = item
            && m.content.is_none()
            && crate::cfg::of_attrs(&m.attrs, crate::cfg::Build::Normal) == crate::cfg::Cfg::False
        {
            let name = m.ident.to_string();
            out.push(dir.join(format!("{name}.rs")));
            out.push(dir.join(&name).join("mod.rs"));
        }
    }
    out
}

/// Every `rbac` attribute of a file, on any item or nested item.
struct Markers {
    rules: Vec<RbacRule>,
    errors: Vec<crate::markers::MarkerError>,
    /// Attributes `<path>::rbac` that are no markers.
    others: Vec<proc_macro2::Span>,
}

impl<'ast> Visit<'ast> for Markers {
    /// Not into test code (`#[cfg(test)]`), which the controller's build
    /// leaves out, as controller-gen reads no test files.
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Trait(t) => &t.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if crate::cfg::of_attrs(attrs, crate::cfg::Build::Normal) != crate::cfg::Cfg::False {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if crate::cfg::of_attrs(&f.attrs, crate::cfg::Build::Normal) != crate::cfg::Cfg::False {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if crate::markers::is_other_rbac_attr(attr) {
            self.others.push(syn::spanned::Spanned::span(attr));
        }
        if is_rbac_attr(attr) {
            match parse_rbac_attr(attr) {
                Ok(rule) => self.rules.push(rule),
                Err(errors) => self.errors.extend(errors),
            }
        }
    }
}

/// The rules of one role, merged and sorted as controller-gen's
/// `NormalizeRules` does: a rule per resource of each marker (a marker of
/// URLs whole), the verbs of rules alike joined; then the resources of
/// rules alike but for them, then their groups, then their URLs; sorted by
/// groups, resources, names and URLs; `*` among the verbs is all of them.
fn merge(markers: &[&RbacRule]) -> Vec<Rule> {
    type Set = BTreeSet<String>;
    let set = |items: &[String]| items.iter().cloned().collect::<Set>();
    // [groups, resources, resource names, URLs] → verbs.
    let mut rules: BTreeMap<[Set; 4], Set> = BTreeMap::new();
    for marker in markers {
        let resources: Vec<Set> = if marker.resources.is_empty() {
            vec![Set::new()]
        } else {
            marker.resources.iter().map(|r| Set::from([r.clone()])).collect()
        };
        for resource in resources {
            let key = [set(&marker.groups), resource, set(&marker.resource_names), set(&marker.urls)];
            rules.entry(key).or_default().extend(marker.verbs.iter().cloned());
        }
    }
    // Field `i` of rules equal in the other fields and the verbs, joined.
    let join = |rules: BTreeMap<[Set; 4], Set>, i: usize| {
        let mut alike: BTreeMap<([Set; 4], Set), Set> = BTreeMap::new();
        for (mut key, verbs) in rules {
            let field = std::mem::take(&mut key[i]);
            alike.entry((key, verbs)).or_default().extend(field);
        }
        let mut out: BTreeMap<[Set; 4], Set> = BTreeMap::new();
        for ((mut key, verbs), field) in alike {
            key[i] = field;
            out.entry(key).or_default().extend(verbs);
        }
        out
    };
    let rules = join(join(join(rules, 1), 0), 3);
    let sort_key = |key: &[Set; 4]| {
        key.iter().map(|s| s.iter().map(String::as_str).collect::<Vec<_>>().join("&")).collect::<Vec<_>>().join(" + ")
    };
    let mut rules: Vec<(String, Rule)> = rules
        .into_iter()
        .map(|(key, verbs)| {
            let verbs = if verbs.contains("*") { Set::from(["*".to_owned()]) } else { verbs };
            let [groups, resources, resource_names, urls] = key.clone();
            (sort_key(&key), Rule { groups, resources, resource_names, urls, verbs })
        })
        .collect();
    rules.sort_by(|a, b| a.0.cmp(&b.0));
    rules.into_iter().map(|(_, rule)| rule).collect()
}

fn render_role(out: &mut String, name: &str, namespace: Option<&str>, rules: &[Rule]) {
    out.push_str("apiVersion: rbac.authorization.k8s.io/v1\n");
    out.push_str(if namespace.is_some() { "kind: Role\n" } else { "kind: ClusterRole\n" });
    out.push_str(&format!("metadata:\n  name: {}\n", quote(name)));
    if let Some(ns) = namespace {
        out.push_str(&format!("  namespace: {}\n", quote(ns)));
    }
    out.push_str("rules:\n");
    for rule in rules {
        let mut first = true;
        // In the order of their names, as controller-gen writes them.
        for (key, values) in [
            ("apiGroups", &rule.groups),
            ("nonResourceURLs", &rule.urls),
            ("resourceNames", &rule.resource_names),
            ("resources", &rule.resources),
            ("verbs", &rule.verbs),
        ] {
            if values.is_empty() {
                continue;
            }
            out.push_str(if first { "- " } else { "  " });
            first = false;
            out.push_str(key);
            out.push_str(":\n");
            for value in values {
                out.push_str(&format!("  - {}\n", quote(value)));
            }
        }
    }
}

/// `value` as a YAML scalar, as controller-gen's YAML writer has it: plain
/// when that reads back as the same string; else `""` for the empty string,
/// double-quoted (JSON) with a character that needs an escape, and
/// single-quoted otherwise (`'*'`).
fn quote(value: &str) -> String {
    if crate::emit::yaml::is_plain_safe(value) {
        value.to_owned()
    } else if value.is_empty() || reads_as_no_string(value) || value.chars().any(|c| c.is_control() || c == '\u{feff}')
    {
        serde_json::to_string(value).expect("a string serializes")
    } else {
        format!("'{}'", value.replace('\'', "''"))
    }
}

/// Whether YAML 1.1 (controller-gen's writer) reads `value` plain as a
/// number, boolean or null: such a string is double-quoted there.
fn reads_as_no_string(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    matches!(lower.as_str(), "~" | "null" | "y" | "yes" | "n" | "no" | "true" | "false" | "on" | "off")
        || value.parse::<f64>().is_ok()
        || lower.strip_prefix("0x").is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        || [".inf", "-.inf", "+.inf", ".nan"].contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;
    use crate::markers::parse_rbac_args;

    fn rule(tokens: proc_macro2::TokenStream) -> RbacRule {
        parse_rbac_args(tokens, proc_macro2::Span::call_site()).unwrap()
    }

    fn rendered(markers: &[RbacRule]) -> String {
        let refs: Vec<&RbacRule> = markers.iter().collect();
        let mut out = String::new();
        render_role(&mut out, "manager-role", None, &merge(&refs));
        out
    }

    #[test]
    fn verbs_merge_per_resource_and_resources_join_per_verbs() {
        let markers = [
            rule(quote!(groups = "", resources = "configmaps", verbs = "get;list")),
            rule(quote!(groups = "", resources = "configmaps", verbs = "watch;get")),
            rule(quote!(groups = "", resources = "secrets", verbs = "get;list;watch")),
            rule(quote!(groups = "apps", resources = "deployments", verbs = "get")),
            rule(quote!(groups = "", resources = "pods", verbs = "get", resource_names = "a;b")),
            rule(quote!(urls = "/metrics", verbs = "get")),
        ];
        assert_eq!(
            rendered(&markers),
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules:\n\
             - nonResourceURLs:\n  - /metrics\n  verbs:\n  - get\n\
             - apiGroups:\n  - \"\"\n  resources:\n  - configmaps\n  - secrets\n  verbs:\n  - get\n  - list\n  - watch\n\
             - apiGroups:\n  - \"\"\n  resourceNames:\n  - a\n  - b\n  resources:\n  - pods\n  verbs:\n  - get\n\
             - apiGroups:\n  - apps\n  resources:\n  - deployments\n  verbs:\n  - get\n"
        );
    }

    /// Rules that end up alike but for their verbs (`/a` and `/b` both get,
    /// then joined, and `/a;/b` list) are one rule with both verbs, where
    /// controller-gen keeps one of the two at random.
    #[test]
    fn rules_alike_but_for_their_verbs_join_them() {
        let markers = [
            rule(quote!(urls = "/a", verbs = "get")),
            rule(quote!(urls = "/b", verbs = "get")),
            rule(quote!(urls = "/a;/b", verbs = "list")),
        ];
        assert!(
            rendered(&markers).ends_with("rules:\n- nonResourceURLs:\n  - /a\n  - /b\n  verbs:\n  - get\n  - list\n"),
            "{}",
            rendered(&markers)
        );
    }

    /// Quoted as controller-gen's YAML writer quotes: `''` but for what it
    /// would read as no string.
    #[test]
    fn scalars_are_quoted_as_controller_gen_quotes_them() {
        for (value, written) in
            [("get", "get"), ("*", "'*'"), ("", "\"\""), ("1", "\"1\""), ("yes", "\"yes\""), ("1.5", "\"1.5\"")]
        {
            assert_eq!(quote(value), written, "{value}");
        }
    }

    /// Test code is not read: `#[cfg(test)]` items, and the files of
    /// `#[cfg(test)] mod name;` (with their submodules). Another crate's
    /// `rbac` attribute is a warning.
    #[test]
    fn test_code_and_other_rbac_attributes_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("tests")).unwrap();
        let marker = |resource: &str| {
            format!("#[rbac(groups = \"\", resources = \"{resource}\", verbs = \"get\")]\nfn f() {{}}\n")
        };
        std::fs::write(src.join("lib.rs"), format!("#[cfg(test)]\nmod tests;\nmod sync;\n{}", marker("pods"))).unwrap();
        std::fs::write(
            src.join("sync.rs"),
            format!("#[cfg(test)]\nmod inline {{\n{}}}\n#[authz::rbac(role = \"x\")]\nfn g() {{}}\n", marker("nodes")),
        )
        .unwrap();
        std::fs::write(src.join("tests.rs"), format!("mod more;\n{}", marker("secrets"))).unwrap();
        std::fs::write(src.join("tests/more.rs"), marker("services")).unwrap();
        let settings = RbacSettings { sources: vec![src], output: dir.path().join("role.yaml"), role_name: "r".into() };
        let (output, warnings) = render(&settings).unwrap();
        let text = &output.files[0].contents;
        assert!(text.contains("- pods"), "{text}");
        for other in ["nodes", "secrets", "services"] {
            assert!(!text.contains(other), "{other}: {text}");
        }
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("no `#[rbac(...)]` marker"), "{}", warnings[0].message);
    }

    #[test]
    fn the_order_of_markers_does_not_matter() {
        let mut markers = vec![
            rule(quote!(groups = "", resources = "configmaps", verbs = "get;list")),
            rule(quote!(groups = "events.k8s.io", resources = "events", verbs = "create;patch")),
            rule(quote!(groups = "example.k8s.io", resources = "students;students/status", verbs = "patch")),
        ];
        let forward = rendered(&markers);
        markers.reverse();
        assert_eq!(rendered(&markers), forward);
    }
}
