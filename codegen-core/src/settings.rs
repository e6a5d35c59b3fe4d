//! The one settings builder shared by every front end (CLI, macro, build.rs):
//! which generators run, where the API types are, where output goes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::builtin::KubeVersion;
use crate::diag::Diagnostic;

/// One of the generators, named as in Go's `generate-groups.sh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GeneratorKind {
    /// `deepcopy`: checks every API type implements `Clone` (Rust's deep copy).
    Deepcopy,
    /// `register`: group/version constants, `kube::Resource` impls, list types.
    Register,
    /// `applyconfig`: apply configurations and `extract_<kind>` functions
    /// for typed server-side apply (applyconfiguration-gen).
    ApplyConfig,
    /// `client`: the typed clientset.
    Client,
    /// `fake`: the clientset over the runtime's in-memory API server.
    Fake,
    /// `lister`: typed listers.
    Lister,
    /// `informer`: the typed shared informer factory.
    Informer,
    /// `crd`: CustomResourceDefinition YAML.
    Crd,
}

impl GeneratorKind {
    /// Every generator, in the order they run.
    pub const ALL: [GeneratorKind; 8] = [
        GeneratorKind::Deepcopy,
        GeneratorKind::Register,
        GeneratorKind::ApplyConfig,
        GeneratorKind::Client,
        GeneratorKind::Fake,
        GeneratorKind::Lister,
        GeneratorKind::Informer,
        GeneratorKind::Crd,
    ];

    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GeneratorKind::Deepcopy => "deepcopy",
            GeneratorKind::Register => "register",
            GeneratorKind::Client => "client",
            GeneratorKind::Fake => "fake",
            GeneratorKind::Lister => "lister",
            GeneratorKind::Informer => "informer",
            GeneratorKind::Crd => "crd",
            GeneratorKind::ApplyConfig => "applyconfig",
        }
    }

    /// Parses `all` or a comma list (`client,lister`).
    pub fn parse_list(s: &str) -> Result<BTreeSet<GeneratorKind>, Diagnostic> {
        if s == "all" {
            return Ok(GeneratorKind::ALL.into_iter().collect());
        }
        let names: Vec<&str> = GeneratorKind::ALL.iter().map(|g| g.as_str()).collect();
        let mut out = BTreeSet::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match GeneratorKind::ALL.into_iter().find(|g| g.as_str() == part) {
                Some(g) => {
                    out.insert(g);
                }
                None => {
                    let aliases = [
                        ("deepcopy-gen", "deepcopy"),
                        ("client-gen", "client"),
                        ("lister-gen", "lister"),
                        ("informer-gen", "informer"),
                        ("register-gen", "register"),
                        ("clientset", "client"),
                        ("listers", "lister"),
                        ("informers", "informer"),
                        ("crds", "crd"),
                        ("applyconfiguration-gen", "applyconfig"),
                        ("applyconfigurations", "applyconfig"),
                        ("applyconfiguration", "applyconfig"),
                    ];
                    let hint = aliases
                        .iter()
                        .find(|(a, _)| *a == part)
                        .map(|(_, g)| *g)
                        .or_else(|| crate::ident::did_you_mean(part, &names));
                    let d = Diagnostic::error(format!("unknown generator `{part}`"));
                    return Err(match hint {
                        Some(h) => d.help(format!(
                            "did you mean `{h}`? generators are `all` or a comma list of: {}",
                            names.join(",")
                        )),
                        None => d.help(format!("generators are `all` or a comma list of: {}", names.join(","))),
                    });
                }
            }
        }
        if out.is_empty() {
            return Err(Diagnostic::error("no generator given").help("pass `all` or e.g. `client,lister,informer`"));
        }
        Ok(GeneratorKind::with_dependencies(out))
    }

    /// The generators whose output this one's generated code refers to:
    /// `lister`, `applyconfig` → `register`; `client` → `applyconfig` (its
    /// `apply` takes apply configurations); `informer` → `lister`; `fake` →
    /// `client`.
    pub fn requires(self) -> &'static [GeneratorKind] {
        match self {
            GeneratorKind::Lister | GeneratorKind::ApplyConfig => &[GeneratorKind::Register],
            GeneratorKind::Client => &[GeneratorKind::ApplyConfig],
            GeneratorKind::Informer => &[GeneratorKind::Lister],
            GeneratorKind::Fake => &[GeneratorKind::Client],
            GeneratorKind::Deepcopy | GeneratorKind::Register | GeneratorKind::Crd => &[],
        }
    }

    /// `set` plus everything its generators require (transitively), so a
    /// subset like `informer` still produces code that compiles.
    pub fn with_dependencies(mut set: BTreeSet<GeneratorKind>) -> BTreeSet<GeneratorKind> {
        let mut stack: Vec<GeneratorKind> = set.iter().copied().collect();
        while let Some(g) = stack.pop() {
            for dep in g.requires() {
                if set.insert(*dep) {
                    stack.push(*dep);
                }
            }
        }
        set
    }
}

impl fmt::Display for GeneratorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `<group>:<version>,<version>` command-line argument: the group's
/// directory name under the apis dir and the version directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupVersions {
    /// Directory (and Rust module) name of the group, e.g. `example`.
    pub package: String,
    /// Version directory names, e.g. `v1`, `v2beta1`.
    pub versions: Vec<String>,
}

impl GroupVersions {
    /// Parses `example:v1,v2`.
    pub fn parse(s: &str) -> Result<GroupVersions, Diagnostic> {
        let Some((group, versions)) = s.split_once(':') else {
            return Err(Diagnostic::error(format!("`{s}` is not a `<group>:<versions>` argument"))
                .help(format!("write e.g. `{s}:v1` (group directory, colon, comma-separated versions)")));
        };
        let versions: Vec<String> =
            versions.split(',').map(str::trim).filter(|v| !v.is_empty()).map(String::from).collect();
        if group.is_empty() || versions.is_empty() {
            return Err(Diagnostic::error(format!("`{s}` names no group or no version"))
                .help("write e.g. `example:v1` or `example:v1,v2beta1`"));
        }
        if group.contains('.') {
            return Err(Diagnostic::error(format!("`{group}` looks like an API group name, not a directory"))
                .help(format!(
                    "pass the group's directory under the apis dir (e.g. `{}:{}`); the API group comes from `group_name!`",
                    group.split('.').next().unwrap_or(group),
                    versions.join(",")
                )));
        }
        Ok(GroupVersions { package: group.to_string(), versions })
    }
}

/// Everything a run needs; CLI flags map onto these fields one to one.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Generators to run.
    pub generators: BTreeSet<GeneratorKind>,
    /// The apis directory (`pkg/apis`).
    pub apis_dir: PathBuf,
    /// Requested groups and versions.
    pub groups: Vec<GroupVersions>,
    /// Where the clientset, listers, informers and fake go (default: `<apis>/../client`).
    pub output_dir: Option<PathBuf>,
    /// Where CRD YAML goes (default: `<crate root>/config/crd`).
    pub crd_dir: Option<PathBuf>,
    /// Boilerplate (license) text put after the generated-file line.
    pub header: Option<String>,
    /// Rust path of the apis module (default: derived from the apis dir, `pkg/apis` → `crate::pkg::apis`).
    pub apis_module: Option<String>,
    /// Rust path of the runtime crate (default `::codegen_runtime`).
    pub runtime_path: String,
    /// Plural exceptions, `Kind` → `plural` (client-gen's `--plural-exceptions`).
    pub plural_exceptions: BTreeMap<String, String>,
    /// Macro mode: kinds carry `#[genclient(version = "..")]` and their code
    /// is generated inline by the proc macro (set by [`crate::inline`]).
    /// The CLI and build.rs reject such kinds instead.
    pub inline: bool,
    /// The Kubernetes version whose built-in schemas are used (default: the
    /// `v1_*` feature of k8s-openapi in the crate's Cargo.toml, else the
    /// newest supported).
    pub kube_version: Option<KubeVersion>,
    /// Cap descriptions at this many bytes, cut at a word and marked `...`;
    /// 0 drops them (controller-gen's `crd:maxDescLen`).
    pub max_desc_len: Option<usize>,
    /// Render an embedded `ObjectMeta` (a pod template's metadata) with its
    /// name, namespace, labels, annotations and finalizers
    /// (controller-gen's `crd:generateEmbeddedObjectMeta`).
    pub embedded_object_meta: bool,
    /// Where the register code goes, relative to each version directory
    /// (default `register.rs`; register-gen's `--output-file`).
    pub register_file: PathBuf,
    /// How the generated Rust is laid out on disk.
    pub layout: Layout,
}

/// How the generated Rust is laid out on disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// A module tree: one file per module, `pub mod x;` declarations (the
    /// CLI; the tree is part of the user's crate).
    #[default]
    Tree,
    /// Files for `include!` (build.rs): the client tree as one `mod.rs`
    /// with inline modules, and no inner doc comments at the top of a file
    /// (`include!` does not accept them).
    Include,
}

/// The Kubernetes version of a run and why it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeVersionChoice {
    /// The version.
    pub version: KubeVersion,
    /// Why (for messages): "`--kube-version 1.36`", "k8s-openapi's feature `v1_36` in `Cargo.toml`", ...
    pub reason: String,
}

impl Settings {
    /// Settings for `apis_dir` with every generator and no groups yet.
    pub fn new(apis_dir: impl Into<PathBuf>) -> Self {
        Settings {
            generators: GeneratorKind::ALL.into_iter().collect(),
            apis_dir: apis_dir.into(),
            groups: Vec::new(),
            output_dir: None,
            crd_dir: None,
            header: None,
            apis_module: None,
            runtime_path: "::codegen_runtime".to_string(),
            plural_exceptions: BTreeMap::new(),
            inline: false,
            kube_version: None,
            max_desc_len: None,
            embedded_object_meta: false,
            register_file: PathBuf::from("register.rs"),
            layout: Layout::Tree,
        }
    }

    /// Selects the Kubernetes version of the built-in schemas.
    pub fn with_kube_version(mut self, version: KubeVersion) -> Self {
        self.kube_version = Some(version);
        self
    }

    /// Selects how the generated Rust is laid out.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Caps (or with 0 drops) descriptions.
    pub fn with_max_desc_len(mut self, len: usize) -> Self {
        self.max_desc_len = Some(len);
        self
    }

    /// Expands embedded `ObjectMeta` (controller-gen's `generateEmbeddedObjectMeta`).
    pub fn with_embedded_object_meta(mut self, on: bool) -> Self {
        self.embedded_object_meta = on;
        self
    }

    /// Where the register code goes, relative to each version directory.
    pub fn with_register_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.register_file = path.into();
        self
    }

    /// The module name the version module declares for the register code
    /// (`register` for `register.rs`); `None` when the file is not a direct
    /// child (the user declares it with `#[path]`).
    pub fn register_module(&self) -> Option<String> {
        let mut comps = self.register_file.components();
        let only = comps.next()?;
        if comps.next().is_some() {
            return None;
        }
        let name = Path::new(only.as_os_str());
        (name.extension().is_some_and(|e| e == "rs")).then(|| name.file_stem()?.to_str().map(String::from))?
    }

    /// The Kubernetes version of the built-in schemas: the setting, else the
    /// `v1_*` feature of k8s-openapi in the crate's (or its workspace's)
    /// Cargo.toml, else the newest supported version.
    pub fn kube_version(&self) -> KubeVersionChoice {
        if let Some(v) = self.kube_version {
            return KubeVersionChoice {
                version: v,
                reason: format!("the explicit Kubernetes version {v} (`--kube-version`, `Builder::kube_version`)"),
            };
        }
        if let Some((v, reason)) = detect_kube_version(&self.crate_root()) {
            return KubeVersionChoice { version: v, reason };
        }
        let v = KubeVersion::latest();
        KubeVersionChoice {
            version: v,
            reason: format!("the newest supported version, {v} (no k8s-openapi `v1_*` feature in Cargo.toml)"),
        }
    }

    /// Selects generators, plus the ones they require
    /// ([`GeneratorKind::with_dependencies`]).
    pub fn with_generators(mut self, generators: impl IntoIterator<Item = GeneratorKind>) -> Self {
        self.generators = GeneratorKind::with_dependencies(generators.into_iter().collect());
        self
    }

    /// Adds a `<group>:<versions>` request.
    pub fn with_group(mut self, group: GroupVersions) -> Self {
        self.groups.push(group);
        self
    }

    /// Sets the client output directory.
    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.output_dir = Some(dir.into());
        self
    }

    /// Sets the CRD output directory.
    pub fn with_crd_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.crd_dir = Some(dir.into());
        self
    }

    /// Sets the boilerplate header text.
    pub fn with_header(mut self, header: impl Into<String>) -> Self {
        self.header = Some(header.into());
        self
    }

    /// Overrides the apis module path.
    pub fn with_apis_module(mut self, path: impl Into<String>) -> Self {
        self.apis_module = Some(path.into());
        self
    }

    /// Overrides the runtime crate path.
    pub fn with_runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = path.into();
        self
    }

    /// Adds a plural exception.
    pub fn with_plural_exception(mut self, kind: impl Into<String>, plural: impl Into<String>) -> Self {
        self.plural_exceptions.insert(kind.into(), plural.into());
        self
    }

    /// Whether `g` runs.
    pub fn runs(&self, g: GeneratorKind) -> bool {
        self.generators.contains(&g)
    }

    /// The crate root: the nearest ancestor of the apis dir with a
    /// `Cargo.toml`, or the apis dir's grandparent.
    pub fn crate_root(&self) -> PathBuf {
        let apis = self.apis_dir_named();
        let mut cur = Some(apis.as_path());
        while let Some(dir) = cur {
            if dir.join("Cargo.toml").is_file() {
                return dir.to_path_buf();
            }
            cur = dir.parent();
        }
        // The path as written ran out before the crate root (a relative
        // path given below it, `apis` from `pkg/`): the real directories
        // decide.
        if let Some(root) = absolute(&apis).ancestors().find(|dir| dir.join("Cargo.toml").is_file()) {
            return root.to_path_buf();
        }
        apis.parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .or_else(|| absolute(&apis).parent().and_then(Path::parent).map(Path::to_path_buf))
            .unwrap_or_default()
    }

    /// The apis dir as a path that ends in its own name: as given, unless
    /// that ends in `.` or `..` (`kube-codegen all .`), whose parent as
    /// written is not the directory's.
    fn apis_dir_named(&self) -> PathBuf {
        match self.apis_dir.components().next_back() {
            Some(std::path::Component::Normal(_)) => self.apis_dir.clone(),
            _ => absolute(&self.apis_dir),
        }
    }

    /// The client output directory.
    pub fn output_dir(&self) -> PathBuf {
        self.output_dir.clone().unwrap_or_else(|| match self.apis_dir_named().parent() {
            Some(p) => p.join("client"),
            None => PathBuf::from("client"),
        })
    }

    /// The CRD output directory.
    pub fn crd_dir(&self) -> PathBuf {
        self.crd_dir.clone().unwrap_or_else(|| self.crate_root().join("config").join("crd"))
    }

    /// The Rust path of the apis module.
    pub fn apis_module(&self) -> String {
        if let Some(m) = &self.apis_module {
            return m.clone();
        }
        self.apis_module_in_crate()
    }

    /// The apis module's path as another crate names it
    /// (`my_api::apis`) when the client output directory is set and lies in
    /// another crate than the apis directory (the nearest ancestors with a
    /// `Cargo.toml` differ): the apis crate's `[lib]` or package name and
    /// the module's path in it. `Ok(None)` in the same crate, without an
    /// output directory, or when an apis module is set; an error when the
    /// apis crate's manifest names no package.
    ///
    /// The CLI applies it when `--apis-module` is not given; build.rs output
    /// is always included into the types' own crate and never needs it.
    pub fn apis_module_from_another_crate(&self) -> Result<Option<String>, Diagnostic> {
        let Some(output) = self.output_dir.as_deref().filter(|_| self.apis_module.is_none()) else {
            return Ok(None);
        };
        let (Some(apis_root), Some(output_root)) = (nearest_manifest_dir(&self.apis_dir), nearest_manifest_dir(output))
        else {
            return Ok(None);
        };
        if apis_root == output_root {
            return Ok(None);
        }
        let manifest_path = apis_root.join("Cargo.toml");
        let name = std::fs::read_to_string(&manifest_path)
            .ok()
            .and_then(|text| text.parse::<toml::Table>().ok())
            .and_then(|manifest| {
                let lib = manifest.get("lib").and_then(|l| l.get("name"));
                lib.or_else(|| manifest.get("package").and_then(|p| p.get("name")))
                    .and_then(toml::Value::as_str)
                    .map(str::to_owned)
            });
        let Some(name) = name else {
            return Err(Diagnostic::error(format!(
                "the clients go to another crate than the types, and `{}` names no package to reach the types by",
                manifest_path.display()
            ))
            .help("give the types' module as the clients' crate names it, e.g. `--apis-module my_api::apis`"));
        };
        let apis_dir = absolute(&self.apis_dir);
        Ok(Some(module_path(&name.replace('-', "_"), apis_dir.strip_prefix(&apis_root).unwrap_or(&apis_dir))))
    }

    /// These settings with [`apis_module_from_another_crate`](Self::apis_module_from_another_crate)
    /// as the apis module when it gives one.
    pub fn with_inferred_apis_module(self) -> Result<Self, Diagnostic> {
        Ok(match self.apis_module_from_another_crate()? {
            Some(module) => self.with_apis_module(module),
            None => self,
        })
    }

    /// The apis module's path inside its own crate, from the directories:
    /// `crate::` and the apis dir's path under the crate root, without `src`.
    fn apis_module_in_crate(&self) -> String {
        let (root, apis) = (self.crate_root(), self.apis_dir_named());
        match apis.strip_prefix(&root) {
            Ok(rel) => module_path("crate", rel),
            // One of the two was found through the real directories.
            Err(_) => {
                let apis = absolute(&apis);
                module_path("crate", apis.strip_prefix(absolute(&root)).unwrap_or(&apis))
            }
        }
    }
}

/// `start` and the modules of the directory `rel` (relative to a crate's
/// root; a leading `src` is not a module), e.g. `crate::pkg::apis`.
fn module_path(start: &str, rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.first().is_some_and(|p| p == "src") {
        parts.remove(0);
    }
    let mut path = String::from(start);
    for p in parts {
        path.push_str("::");
        path.push_str(&crate::ident::rust_ident(&p.replace('-', "_")));
    }
    path
}

/// `dir` from the current directory, without `.` and `..` where the
/// directories exist.
fn absolute(dir: &Path) -> PathBuf {
    let joined = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().map(|cwd| cwd.join(dir)).unwrap_or_else(|_| dir.to_path_buf())
    };
    std::fs::canonicalize(&joined).unwrap_or(joined)
}

/// The nearest of `dir` and its ancestors holding a `Cargo.toml` (`dir` need
/// not exist yet).
fn nearest_manifest_dir(dir: &Path) -> Option<PathBuf> {
    // An output directory may not exist yet: its nearest existing ancestor
    // stands for it.
    let dir = absolute(dir);
    let existing = dir.ancestors().find(|d| d.exists())?;
    let existing = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    existing.ancestors().find(|d| d.join("Cargo.toml").is_file()).map(Path::to_path_buf)
}

/// The `v1_*` feature enabled on k8s-openapi by the Cargo.toml of `crate_root`
/// (any dependency table, the workspace's `[workspace.dependencies]` for
/// `workspace = true`), with the reason for messages.
pub fn detect_kube_version(crate_root: &Path) -> Option<(KubeVersion, String)> {
    let manifest = crate_root.join("Cargo.toml");
    let doc: toml::Table = std::fs::read_to_string(&manifest).ok()?.parse().ok()?;
    let mut found = None;
    let mut inherits = false;
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        let Some(dep) = doc.get(table).and_then(|t| t.get("k8s-openapi")) else { continue };
        inherits |= dep.get("workspace").and_then(toml::Value::as_bool) == Some(true);
        found = found.or_else(|| version_feature(dep));
    }
    if let Some(v) = found {
        return Some((v, format!("k8s-openapi's feature `{}` in `{}`", v.feature(), manifest.display())));
    }
    if inherits {
        let mut dir = crate_root.parent();
        while let Some(d) = dir {
            let ws = d.join("Cargo.toml");
            if let Some(doc) = std::fs::read_to_string(&ws).ok().and_then(|t| t.parse::<toml::Table>().ok())
                && let Some(workspace) = doc.get("workspace")
            {
                let v = workspace.get("dependencies").and_then(|t| t.get("k8s-openapi")).and_then(version_feature)?;
                return Some((v, format!("k8s-openapi's feature `{}` in `{}`", v.feature(), ws.display())));
            }
            dir = d.parent();
        }
    }
    None
}

fn version_feature(dep: &toml::Value) -> Option<KubeVersion> {
    let features = dep.get("features")?.as_array()?;
    features
        .iter()
        .filter_map(toml::Value::as_str)
        .filter(|f| f.starts_with("v1_"))
        .filter_map(KubeVersion::parse)
        .max()
        .or_else(|| features.iter().any(|f| f.as_str() == Some("latest")).then(KubeVersion::latest))
        .or_else(|| features.iter().any(|f| f.as_str() == Some("earliest")).then(|| KubeVersion::supported()[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_lists() {
        assert_eq!(GeneratorKind::parse_list("all").unwrap().len(), 8);
        let some = GeneratorKind::parse_list("client,lister").unwrap();
        assert!(some.contains(&GeneratorKind::Client) && some.contains(&GeneratorKind::Lister));
        // Dependencies are added: informer needs lister and register, fake the client.
        let informer: Vec<GeneratorKind> = GeneratorKind::parse_list("informer").unwrap().into_iter().collect();
        assert_eq!(informer, [GeneratorKind::Register, GeneratorKind::Lister, GeneratorKind::Informer]);
        let fake: Vec<GeneratorKind> = GeneratorKind::parse_list("fake,crd").unwrap().into_iter().collect();
        assert_eq!(
            fake,
            [
                GeneratorKind::Register,
                GeneratorKind::ApplyConfig,
                GeneratorKind::Client,
                GeneratorKind::Fake,
                GeneratorKind::Crd
            ]
        );
        let crd: Vec<GeneratorKind> =
            Settings::new("apis").with_generators([GeneratorKind::Crd]).generators.into_iter().collect();
        assert_eq!(crd, [GeneratorKind::Crd]);
        let lister = Settings::new("apis").with_generators([GeneratorKind::Lister]);
        assert!(lister.runs(GeneratorKind::Register));
        let err = GeneratorKind::parse_list("client,listr").unwrap_err();
        assert_eq!(err.message, "unknown generator `listr`");
        assert!(err.help.unwrap().starts_with("did you mean `lister`?"));
    }

    #[test]
    fn group_versions() {
        assert_eq!(
            GroupVersions::parse("example:v1,v2").unwrap(),
            GroupVersions { package: "example".into(), versions: vec!["v1".into(), "v2".into()] }
        );
        assert!(GroupVersions::parse("example").is_err());
        assert!(GroupVersions::parse("example.k8s.io:v1").is_err());
    }

    #[test]
    fn derived_paths() {
        let s = Settings::new("/nonexistent/proj/pkg/apis");
        assert_eq!(s.output_dir(), PathBuf::from("/nonexistent/proj/pkg/client"));
        assert_eq!(s.crd_dir(), PathBuf::from("/nonexistent/proj/config/crd"));
        assert_eq!(s.apis_module(), "crate::pkg::apis");
        let s = Settings::new("/nonexistent/proj/src/apis").with_apis_module("crate::api");
        assert_eq!(s.apis_module(), "crate::api");
    }

    /// Clients written into another crate name the types through the types
    /// crate's name; in the same crate, or with the module given, nothing is
    /// inferred; a types crate without a name is an error.
    #[test]
    fn the_apis_module_seen_from_another_crate() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        for (krate, manifest) in [
            ("api", "[package]\nname = \"my-api\"\n"),
            ("client", "[package]\nname = \"my-client\"\n"),
            ("lib-named", "[package]\nname = \"pkg-name\"\n[lib]\nname = \"lib_name\"\n"),
            ("virtual", "[workspace]\nmembers = []\n"),
        ] {
            std::fs::create_dir_all(ws.join(krate).join("src/apis")).unwrap();
            std::fs::write(ws.join(krate).join("Cargo.toml"), manifest).unwrap();
        }
        let inferred = |apis: PathBuf, output: PathBuf| {
            Settings::new(apis).with_output_dir(output).apis_module_from_another_crate().map_err(|e| e.message)
        };
        let apis = ws.join("api/src/apis");
        let client = ws.join("client/src/client");
        assert_eq!(inferred(apis.clone(), client.clone()), Ok(Some("my_api::apis".into())));
        assert_eq!(inferred(ws.join("lib-named/src/apis"), client.clone()), Ok(Some("lib_name::apis".into())));
        // Written with `..` and `.`: the same directories.
        let roundabout = ws.join("client/../api/src/./apis");
        assert_eq!(inferred(roundabout, client.clone()), Ok(Some("my_api::apis".into())));
        // The same crate, the default output directory, an explicit module.
        assert_eq!(inferred(apis.clone(), ws.join("api/src/client")), Ok(None));
        assert_eq!(Settings::new(&apis).apis_module_from_another_crate(), Ok(None));
        let explicit = Settings::new(&apis).with_output_dir(&client).with_apis_module("my_api::apis::v2");
        assert_eq!(explicit.apis_module_from_another_crate(), Ok(None));
        assert_eq!(explicit.apis_module(), "my_api::apis::v2");
        // No package to name the types by.
        let err = inferred(ws.join("virtual/src/apis"), client).unwrap_err();
        assert!(err.contains("names no package"), "{err}");
    }

    /// The Kubernetes version from k8s-openapi's `v1_*` feature in the
    /// crate's Cargo.toml, or, with `workspace = true`, in the workspace's
    /// `[workspace.dependencies]`.
    #[test]
    fn kube_version_from_the_crates_or_the_workspaces_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let member = dir.path().join("member");
        std::fs::create_dir_all(&member).unwrap();
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"m\"\n\n[dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"v1_34\"] }\n",
        )
        .unwrap();
        let (v, why) = detect_kube_version(&member).unwrap();
        assert_eq!(v, KubeVersion::parse("1.34").unwrap());
        assert!(why.contains("v1_34") && why.contains("member"), "{why}");

        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"m\"\n\n[dependencies]\nk8s-openapi = { workspace = true }\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[workspace]\nmembers = [\"member\"]\n\n[workspace.dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"v1_35\"] }\n",
        )
        .unwrap();
        let (v, why) = detect_kube_version(&member).unwrap();
        assert_eq!(v, KubeVersion::parse("1.35").unwrap());
        assert!(why.contains(&dir.path().join("Cargo.toml").display().to_string()), "{why}");

        std::fs::write(member.join("Cargo.toml"), "[package]\nname = \"m\"\n").unwrap();
        assert!(detect_kube_version(&member).is_none());
    }
}
