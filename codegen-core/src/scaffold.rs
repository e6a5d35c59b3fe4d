//! `kube-codegen init` and `kube-codegen create api`: a new operator crate,
//! and new kinds, versions and groups in one (kubebuilder's `init` and
//! `create api`).
//!
//! Scaffolded files are the user's: they carry no generated-file header and
//! are only ever created, never overwritten. `create api` edits the module
//! files of the API tree only at their scaffold marker lines
//! (`// +kube-codegen:scaffold:kinds`, `:versions`, `:groups`), inserting the
//! new `mod` lines above them. After writing, both regenerate the clients
//! and CRDs (`init` the role too); when that fails, every file created is
//! removed and every edit undone, so a failed run leaves the tree as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::Diagnostic;
use crate::ident::{plural_type_name, pluralize, snake_case};
use crate::rbac::RbacSettings;
use crate::settings::{GroupVersions, Settings};
use crate::{KubeVersion, Report};

/// Marker line in a version's `mod.rs`: new kinds' modules go above it.
pub const KINDS_MARKER: &str = "// +kube-codegen:scaffold:kinds";
/// Marker line in a group's `mod.rs`: new versions' modules go above it.
pub const VERSIONS_MARKER: &str = "// +kube-codegen:scaffold:versions";
/// Marker line in the apis `mod.rs`: new groups' modules go above it.
pub const GROUPS_MARKER: &str = "// +kube-codegen:scaffold:groups";

/// Where the API types live in a scaffolded crate.
pub const APIS_DIR: &str = "pkg/apis";

/// How `kube-codegen init` lays out the new operator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CrateLayout {
    /// One package: the API types in `pkg/apis/`, the generated clients in
    /// `pkg/client/`, the controller in `src/` (Go's code-generator layout).
    #[default]
    OneCrate,
    /// A workspace of three packages, each compiled on its own: `api/` (the
    /// types, in `api/src/apis/`), `client/` (the generated clients, in
    /// `client/src/client/`) and the controller at the root (docs/layout.md).
    Workspace,
}

impl CrateLayout {
    /// The layout of the crate `kube-codegen init` made at `root`: `None`
    /// when `root` has no `Cargo.toml` or holds neither `pkg/apis/mod.rs`
    /// nor `api/src/apis/mod.rs`, an error when it holds both.
    pub fn of(root: &Path) -> Result<Option<CrateLayout>, Diagnostic> {
        if !root.join("Cargo.toml").is_file() {
            return Ok(None);
        }
        let found: Vec<CrateLayout> = [CrateLayout::OneCrate, CrateLayout::Workspace]
            .into_iter()
            .filter(|layout| root.join(layout.apis_dir()).join("mod.rs").is_file())
            .collect();
        match found.as_slice() {
            both if both.len() > 1 => Err(Diagnostic::error(format!(
                "`{}` holds API types in both `{}` and `{}`, the places of a one-crate and a workspace layout",
                root.display(),
                CrateLayout::OneCrate.apis_dir(),
                CrateLayout::Workspace.apis_dir()
            ))
            .help("keep the types in one of them (a workspace made by `init --workspace` has them in `api/src/apis`)")),
            found => Ok(found.first().copied()),
        }
    }

    /// The API types' directory, relative to the root.
    pub fn apis_dir(self) -> &'static str {
        match self {
            CrateLayout::OneCrate => APIS_DIR,
            CrateLayout::Workspace => "api/src/apis",
        }
    }

    /// The generated clients' directory, relative to the root.
    pub fn client_dir(self) -> &'static str {
        match self {
            CrateLayout::OneCrate => "pkg/client",
            CrateLayout::Workspace => "client/src/client",
        }
    }

    /// The generated CRDs' directory, relative to the root.
    pub fn crd_dir(self) -> &'static str {
        "config/crd"
    }

    /// The arguments of `kube-codegen all` that regenerate the clients and
    /// CRDs from the root.
    pub fn all_args(self) -> &'static str {
        match self {
            CrateLayout::OneCrate => APIS_DIR,
            CrateLayout::Workspace => "api/src/apis --output-dir client/src/client --crd-dir config/crd",
        }
    }

    /// The generator's settings for the crate at `root` (no groups yet):
    /// in a workspace the clients go to the client crate and name the types
    /// through the types crate, and the CRDs go to the root's `config/crd`.
    pub fn settings(self, root: &Path) -> Result<Settings, Diagnostic> {
        let settings = Settings::new(root.join(self.apis_dir()));
        match self {
            CrateLayout::OneCrate => Ok(settings),
            CrateLayout::Workspace => settings
                .with_output_dir(root.join(self.client_dir()))
                .with_crd_dir(root.join(self.crd_dir()))
                .with_inferred_apis_module(),
        }
    }
}

/// What `kube-codegen init` creates.
#[derive(Clone, Debug)]
pub struct InitSettings {
    /// The crate's directory (created if missing; may exist if none of the
    /// files to write does).
    pub dir: PathBuf,
    /// The package name (default: the directory's name).
    pub crate_name: Option<String>,
    /// The first API: group, version and kind.
    pub api: ApiSpec,
    /// The kube-codegen checkout whose `runtime/` and `codegen-macros/` the
    /// crate depends on by path.
    pub codegen_path: PathBuf,
    /// One crate, or a workspace of types, clients and controller.
    pub layout: CrateLayout,
}

/// A kind in a group and version, e.g. `Memcached` in `cache.example.com/v1alpha1`.
#[derive(Clone, Debug)]
pub struct ApiSpec {
    /// The API group, a DNS subdomain with at least one dot.
    pub group: String,
    /// The version, e.g. `v1`, `v1alpha1`.
    pub version: String,
    /// The kind, UpperCamelCase.
    pub kind: String,
}

/// What `kube-codegen create api` adds.
#[derive(Clone, Debug)]
pub struct CreateApiSettings {
    /// The crate's root (holding `Cargo.toml` and `pkg/apis/`).
    pub root: PathBuf,
    /// The group; default: the crate's only group.
    pub group: Option<String>,
    /// The version; default: the group's only version.
    pub version: Option<String>,
    /// The new kind.
    pub kind: String,
}

/// What a scaffolding command did.
#[derive(Debug)]
pub struct Scaffolded {
    /// User files created.
    pub created: Vec<PathBuf>,
    /// User files edited at a scaffold marker.
    pub edited: Vec<PathBuf>,
    /// The generator run that followed (clients, CRDs and, for `init`, the role).
    pub generated: Vec<Report>,
    /// The groups of the crate after the change, as the generator's arguments.
    pub groups: Vec<GroupVersions>,
    /// The API that was added.
    pub api: ApiSpec,
    /// Its resource (plural).
    pub plural: String,
    /// How the crate is laid out.
    pub layout: CrateLayout,
}

/// The checkout this crate was built from: the default of `--codegen-path`.
pub fn default_codegen_path() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or_else(|| manifest.to_path_buf())
}

/// Creates a new operator crate, then generates its clients, CRD and role.
pub fn init(settings: &InitSettings) -> Result<Scaffolded, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let api = &settings.api;
    check_api(api, &mut errors);
    let crate_name = match &settings.crate_name {
        Some(name) => name.clone(),
        // `init .`: the name of the directory that is, not of `.`.
        None => std::path::absolute(&settings.dir)
            .ok()
            .map(|dir| {
                dir.components().fold(PathBuf::new(), |path, c| match c {
                    std::path::Component::ParentDir => path.parent().map(Path::to_path_buf).unwrap_or(path),
                    std::path::Component::CurDir => path,
                    c => path.join(c),
                })
            })
            .and_then(|dir| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    };
    if !is_package_name(&crate_name) {
        errors.push(
            Diagnostic::error(format!("`{crate_name}` is not a valid package name"))
                .help("give one with `--name my-operator` (letters, digits, `-` and `_`, not starting with a digit)"),
        );
    }
    let deps = match Dependencies::of_checkout(&settings.codegen_path) {
        Ok(deps) => Some(deps),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let deps = deps.expect("checked above");
    let group_dir = group_dir(&api.group);
    let layout = settings.layout;
    let crate_ident = crate_name.replace('-', "_");
    let vars = Vars::new(api, &group_dir, layout).with("crate_name", &crate_name).with("crate_ident", &crate_ident);
    let (apis_path, client_path, layout_note) = match layout {
        CrateLayout::OneCrate => ("crate::pkg::apis".to_owned(), "crate::pkg::client".to_owned(), String::new()),
        CrateLayout::Workspace => (
            format!("{crate_ident}_api::apis"),
            format!("{crate_ident}_client::client"),
            format!(
                "\n\nA workspace of three packages, so that each compiles on its own: `api/`\n(`{crate_name}-api`, the API types), `client/` (`{crate_name}-client`, the\nclients kube-codegen generates for them) and the controller at the root."
            ),
        ),
    };
    let vars = vars
        .with("apis_path", &apis_path)
        .with("client_path", &client_path)
        .with("layout_note", &layout_note)
        .with("codegen_path", &deps.checkout.to_string_lossy().replace('\\', "/"))
        .with("deps.kube", &deps.kube)
        .with("deps.k8s_openapi", &deps.k8s_openapi)
        .with("deps.k8s_feature", &deps.k8s_feature)
        .with("deps.tokio", &deps.tokio)
        .with("deps.clap", &deps.clap);

    let dir = &settings.dir;
    let apis_dir = layout.apis_dir();
    let version_dir = format!("{apis_dir}/{group_dir}/{}", api.version);
    let (manifest, lib) = match layout {
        CrateLayout::OneCrate => (templates::CARGO_TOML, templates::LIB),
        CrateLayout::Workspace => (templates::WORKSPACE_CARGO_TOML, templates::WORKSPACE_LIB),
    };
    let mut files: Vec<(String, String)> = vec![
        ("Cargo.toml".into(), vars.render(manifest)),
        ("README.md".into(), vars.render(templates::README)),
        (".gitignore".into(), templates::GITIGNORE.into()),
        ("rustfmt.toml".into(), templates::RUSTFMT.into()),
        ("src/main.rs".into(), vars.render(templates::MAIN)),
        ("src/lib.rs".into(), vars.render(lib)),
        ("src/controller.rs".into(), vars.render(templates::CONTROLLER)),
    ];
    match layout {
        CrateLayout::OneCrate => files.push(("pkg/mod.rs".into(), templates::PKG_MOD.into())),
        CrateLayout::Workspace => files.extend([
            ("api/Cargo.toml".into(), vars.render(templates::API_CARGO_TOML)),
            ("api/src/lib.rs".into(), vars.render(templates::API_LIB)),
            ("client/Cargo.toml".into(), vars.render(templates::CLIENT_CARGO_TOML)),
            ("client/src/lib.rs".into(), vars.render(templates::CLIENT_LIB)),
        ]),
    }
    files.extend([
        (format!("{apis_dir}/mod.rs"), insert_at_marker(templates::APIS_MOD, GROUPS_MARKER, &mod_line(&group_dir))),
        (
            format!("{apis_dir}/{group_dir}/mod.rs"),
            insert_at_marker(&vars.render(templates::GROUP_MOD), VERSIONS_MARKER, &mod_line(&api.version)),
        ),
        (
            format!("{version_dir}/mod.rs"),
            insert_at_marker(&vars.render(templates::VERSION_MOD), KINDS_MARKER, &kind_lines(&api.kind)),
        ),
        (format!("{version_dir}/{}.rs", snake_case(&api.kind)), vars.render(templates::KIND)),
        (sample_path(api), vars.render(templates::SAMPLE)),
    ]);
    if let Ok(lock) = std::fs::read_to_string(deps.checkout.join("Cargo.lock")) {
        // The versions kube-codegen is tested with; cargo drops what the
        // crate does not use on its first build.
        files.push(("Cargo.lock".into(), lock));
    }
    let existing: Vec<String> = files.iter().filter(|(p, _)| dir.join(p).exists()).map(|(p, _)| p.clone()).collect();
    if !existing.is_empty() {
        return Err(existing
            .iter()
            .map(|p| {
                Diagnostic::error(format!("`{}` already exists", dir.join(p).display())).help(
                    "kube-codegen init writes only new files: pick an empty or new directory, or move the file away",
                )
            })
            .collect());
    }

    let mut txn = Transaction::default();
    for (path, contents) in &files {
        txn.create(&dir.join(path), contents).map_err(|e| txn.fail(e))?;
    }
    rustfmt(&txn.created_files());
    let gv = GroupVersions { package: group_dir.clone(), versions: vec![api.version.clone()] };
    let mut generated = Vec::new();
    let generation = match layout.settings(dir) {
        Ok(generation) => generation.with_group(gv.clone()),
        Err(e) => return Err(txn.abort(vec![e])),
    };
    txn.generate(&generation, &mut generated)?;
    let rbac = RbacSettings {
        sources: vec![dir.join("src")],
        output: dir.join("config/rbac/role.yaml"),
        role_name: "manager-role".into(),
    };
    let role = match crate::rbac::generate_rbac(&rbac) {
        Ok(output) => output,
        Err(errors) => return Err(txn.abort(errors)),
    };
    generated.push(txn.commit_output(&role, Vec::new())?);
    Ok(Scaffolded {
        created: txn.created_files(),
        edited: Vec::new(),
        generated,
        groups: vec![gv],
        api: api.clone(),
        plural: pluralize(&api.kind, &BTreeMap::new()),
        layout,
    })
}

/// Adds a kind (and, when new, its version or group) to a scaffolded crate,
/// then regenerates the clients and CRDs of every group.
pub fn create_api(settings: &CreateApiSettings) -> Result<Scaffolded, Vec<Diagnostic>> {
    // `.` is left out of the paths reported.
    let root = if settings.root == Path::new(".") { Path::new("") } else { settings.root.as_path() };
    let Some(layout) = CrateLayout::of(root).map_err(|e| vec![e])? else {
        let [one, workspace] =
            [CrateLayout::OneCrate, CrateLayout::Workspace].map(|l| root.join(l.apis_dir()).join("mod.rs"));
        return Err(vec![
            Diagnostic::error(format!("`{}` is not a crate scaffolded by kube-codegen: no `Cargo.toml` with `{}` or `{}`", settings.root.display(), one.display(), workspace.display()))
                .help("run it in the directory `kube-codegen init` created (or pass `--dir`), or start one with `kube-codegen init <dir> --group .. --version .. --kind ..`"),
        ]);
    };
    let apis = root.join(layout.apis_dir());
    let apis_mod = apis.join("mod.rs");
    let existing_groups = discover_groups(&apis).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    // The group: given, or the crate's only one.
    let group = match &settings.group {
        Some(g) => g.clone(),
        None => match existing_groups.as_slice() {
            [only] => only.group.clone(),
            [] => {
                errors.push(
                    Diagnostic::error(format!("`{}` holds no API group yet", apis.display()))
                        .help("name one with `--group my.example.com`"),
                );
                String::new()
            }
            many => {
                let names: Vec<&str> = many.iter().map(|g| g.group.as_str()).collect();
                errors.push(
                    Diagnostic::error(format!("the crate has several API groups ({})", names.join(", ")))
                        .help("say which with `--group`"),
                );
                String::new()
            }
        },
    };
    let existing_group = existing_groups.iter().find(|g| g.group == group);
    let version = match (&settings.version, existing_group) {
        (Some(v), _) => v.clone(),
        (None, Some(g)) if g.versions.len() == 1 => g.versions[0].clone(),
        (None, Some(g)) => {
            errors.push(
                Diagnostic::error(format!("`{group}` has several versions ({})", g.versions.join(", ")))
                    .help("say which with `--version`"),
            );
            String::new()
        }
        (None, None) => {
            if !group.is_empty() {
                errors.push(
                    Diagnostic::error(format!("`{group}` is a new group: it needs a version"))
                        .help("give one with `--version v1alpha1`"),
                );
            }
            String::new()
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let api = ApiSpec { group: group.clone(), version: version.clone(), kind: settings.kind.clone() };
    check_api(&api, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let group_dir = match existing_group {
        Some(g) => g.dir.clone(),
        None => {
            let dir = group_dir(&group);
            if let Some(other) = existing_groups.iter().find(|g| g.dir == dir) {
                return Err(vec![Diagnostic::error(format!(
                    "the directory `{}` already holds the group `{}`",
                    apis.join(&dir).display(),
                    other.group
                ))
                .help("kube-codegen names a group's directory after its first label; pick a group whose first label is new")]);
            }
            dir
        }
    };
    let version_dir = apis.join(&group_dir).join(&version);
    let new_version = !existing_group.is_some_and(|g| g.versions.contains(&version));
    if !new_version && let Some(path) = defining_file(&version_dir, &api.kind) {
        return Err(vec![
            Diagnostic::error(format!("the kind `{}` already exists in `{}`", api.kind, path.display()))
                .help("pick another kind, or another version with `--version`"),
        ]);
    }
    // A kind in two versions needs one of them marked as the storage version.
    if let Some(g) = existing_group {
        for other in g.versions.iter().filter(|v| **v != version) {
            if let Some(path) = defining_file(&apis.join(&group_dir).join(other), &api.kind)
                && !marks_storage(&path, &api.kind)
            {
                return Err(vec![
                    Diagnostic::error(format!("`{}` is in `{other}` too, and neither version is marked as the storage version", api.kind))
                        .help(format!("add `storage` to the `#[resource(...)]` of `{}` in `{}` (objects are stored in that version), then run this again", api.kind, path.display())),
                ]);
            }
        }
    }

    let vars = Vars::new(&api, &group_dir, layout);
    let mut files: Vec<(PathBuf, String)> = vec![
        (version_dir.join(format!("{}.rs", snake_case(&api.kind))), vars.render(templates::KIND)),
        (root.join(sample_path(&api)), vars.render(templates::SAMPLE)),
    ];
    let mut edits: Vec<(PathBuf, String)> = Vec::new();
    let version_mod = version_dir.join("mod.rs");
    if new_version {
        files.push((
            version_mod.clone(),
            insert_at_marker(&vars.render(templates::VERSION_MOD), KINDS_MARKER, &kind_lines(&api.kind)),
        ));
        let group_mod = apis.join(&group_dir).join("mod.rs");
        if existing_group.is_some() {
            edits.push((group_mod.clone(), edit_at_marker(&group_mod, VERSIONS_MARKER, &mod_line(&version))?));
        } else {
            files.push((
                group_mod,
                insert_at_marker(&vars.render(templates::GROUP_MOD), VERSIONS_MARKER, &mod_line(&version)),
            ));
            edits.push((apis_mod.clone(), edit_at_marker(&apis_mod, GROUPS_MARKER, &mod_line(&group_dir))?));
        }
    } else {
        edits.push((version_mod.clone(), edit_at_marker(&version_mod, KINDS_MARKER, &kind_lines(&api.kind))?));
    }
    let existing: Vec<&PathBuf> = files.iter().map(|(p, _)| p).filter(|p| p.exists()).collect();
    if !existing.is_empty() {
        return Err(existing
            .iter()
            .map(|p| {
                Diagnostic::error(format!("`{}` already exists", p.display()))
                    .help("kube-codegen create api writes only new files: move the file away, or pick another kind")
            })
            .collect());
    }

    let mut txn = Transaction::default();
    for (path, contents) in &files {
        txn.create(path, contents).map_err(|e| txn.fail(e))?;
    }
    for (path, contents) in &edits {
        txn.edit(path, contents).map_err(|e| txn.fail(e))?;
    }
    rustfmt(&txn.created_files());
    let groups = match discover_groups(&apis) {
        Ok(found) => {
            found.into_iter().map(|g| GroupVersions { package: g.dir, versions: g.versions }).collect::<Vec<_>>()
        }
        Err(e) => return Err(txn.abort(vec![e])),
    };
    let mut generation = match layout.settings(root) {
        Ok(generation) => generation,
        Err(e) => return Err(txn.abort(vec![e])),
    };
    for g in &groups {
        generation = generation.with_group(g.clone());
    }
    let mut generated = Vec::new();
    txn.generate(&generation, &mut generated)?;
    Ok(Scaffolded {
        created: txn.created_files(),
        edited: edits.into_iter().map(|(p, _)| p).collect(),
        generated,
        groups,
        plural: pluralize(&api.kind, &BTreeMap::new()),
        api,
        layout,
    })
}

/// A group of a crate's API tree: its directory, API group and versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveredGroup {
    /// Directory (and module) name under the apis dir.
    pub dir: String,
    /// The API group of its `group_name!`.
    pub group: String,
    /// Versions whose module (`<version>/mod.rs` or `<version>.rs`) has a
    /// `group_name!`, sorted.
    pub versions: Vec<String>,
}

/// The groups and versions under `apis_dir`: every `<group>/<version>/`
/// whose module (`mod.rs` in it, or `<version>.rs` beside it) has a
/// `group_name!("...")`, where `<version>` is a Kubernetes version
/// name. What `kube-codegen all <apis-dir>` generates for when no groups
/// are named.
pub fn discover_groups(apis_dir: &Path) -> Result<Vec<DiscoveredGroup>, Diagnostic> {
    // syn recurses once per level of nesting: on the engine's stack.
    crate::on_big_stack(|| discover_groups_here(apis_dir))
}

fn discover_groups_here(apis_dir: &Path) -> Result<Vec<DiscoveredGroup>, Diagnostic> {
    let read = |dir: &Path| -> Result<Vec<(String, PathBuf)>, Diagnostic> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| Diagnostic::error(format!("cannot read the directory `{}`: {e}", dir.display())))?;
        let mut out: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
            .collect();
        out.sort();
        Ok(out)
    };
    let mut groups = Vec::new();
    for (dir, path) in read(apis_dir)? {
        let mut found: Option<DiscoveredGroup> = None;
        for (version, vpath) in read(&path)? {
            if !is_version(&version) {
                continue;
            }
            // The version module: `<version>/mod.rs`, or `<version>.rs` beside
            // the directory.
            let Some((module, text)) = [vpath.join("mod.rs"), path.join(format!("{version}.rs"))]
                .into_iter()
                .find_map(|m| read_text(&m).map(|t| (m, t)))
            else {
                continue;
            };
            let Some(group) = group_name_in(&text) else { continue };
            let entry = found.get_or_insert_with(|| DiscoveredGroup {
                dir: dir.clone(),
                group: group.clone(),
                versions: Vec::new(),
            });
            if entry.group != group {
                return Err(Diagnostic::error(format!(
                    "`{}` declares the group `{group}`, but `{}` declares `{}`",
                    module.display(),
                    path.display(),
                    entry.group
                ))
                .help("the versions of one group directory must name the same API group in `group_name!`"));
            }
            entry.versions.push(version);
        }
        groups.extend(found);
    }
    Ok(groups)
}

/// `text` parsed, unless it nests deeper than the engine parses (the
/// generator then says where, when it reads the file).
fn parse_shallow(text: &str) -> Option<syn::File> {
    let tokens: proc_macro2::TokenStream = text.strip_prefix('\u{feff}').unwrap_or(text).parse().ok()?;
    if crate::parse::nested_too_deep(tokens.clone()).is_some() {
        return None;
    }
    syn::parse2(tokens).ok()
}

/// The text of the regular file `path` (not a FIFO, whose read would never
/// end), if it is one and UTF-8.
fn read_text(path: &Path) -> Option<String> {
    crate::write::read_regular_bytes(path).ok().filter(|_| path.is_file()).and_then(|b| String::from_utf8(b).ok())
}

/// The string literal of the first `group_name!("...")` in `text`.
fn group_name_in(text: &str) -> Option<String> {
    let file = parse_shallow(text)?;
    file.items.iter().find_map(|item| match item {
        syn::Item::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == "group_name") => {
            m.mac.parse_body::<syn::LitStr>().ok().map(|l| l.value())
        }
        _ => None,
    })
}

/// Whether the struct `kind` in `path` carries `storage` in a
/// `#[resource(...)]` attribute.
fn marks_storage(path: &Path, kind: &str) -> bool {
    let Some(file) = read_text(path).and_then(|t| parse_shallow(&t)) else { return false };
    file.items.iter().any(|item| match item {
        syn::Item::Struct(st) if st.ident == kind => st.attrs.iter().any(|a| {
            a.path().is_ident("resource")
                && a.meta.require_list().is_ok_and(|l| {
                    l.tokens
                        .clone()
                        .into_iter()
                        .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "storage"))
                })
        }),
        _ => false,
    })
}

/// The `.rs` file of `dir` that defines a struct or enum named `kind`.
fn defining_file(dir: &Path, kind: &str) -> Option<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files.into_iter().find(|path| {
        let Some(file) = std::fs::read_to_string(path).ok().and_then(|t| syn::parse_file(&t).ok()) else {
            return false;
        };
        file.items.iter().any(|item| match item {
            syn::Item::Struct(s) => s.ident == kind,
            syn::Item::Enum(e) => e.ident == kind,
            _ => false,
        })
    })
}

fn check_api(api: &ApiSpec, errors: &mut Vec<Diagnostic>) {
    if !api.group.contains('.') || !crate::ident::is_dns_subdomain(&api.group) {
        errors.push(
            Diagnostic::error(format!("`{}` is not an API group for a CRD", api.group))
                .help("a CRD's group is a lower-case DNS name with at least one dot, e.g. `cache.example.com`"),
        );
    } else if !group_dir(&api.group).starts_with(|c: char| c.is_ascii_lowercase())
        || syn::parse_str::<syn::Ident>(&group_dir(&api.group)).is_err()
        || crate::import::RESERVED_GROUP_DIRS.contains(&group_dir(&api.group).as_str())
    {
        errors.push(
            Diagnostic::error(format!(
                "the group `{}` starts with `{}`, which cannot be the group's module (not a name, a Rust keyword, or a method of the generated informer factory)",
                api.group,
                group_dir(&api.group)
            ))
            .help("start the group with another label, e.g. `cache.example.com`"),
        );
    }
    if !is_version(&api.version) {
        errors.push(
            Diagnostic::error(format!("`{}` is not a Kubernetes API version", api.version))
                .help("write `v1`, `v2`, `v1alpha1`, `v1beta2`, ..."),
        );
    }
    let kind = &api.kind;
    if !kind.starts_with(|c: char| c.is_ascii_uppercase())
        || !kind.chars().all(|c| c.is_ascii_alphanumeric())
        || kind == "Self"
    {
        errors.push(
            Diagnostic::error(format!("`{kind}` is not a kind name"))
                .help("write the kind in UpperCamelCase letters and digits, e.g. `Memcached` or `CronJob`"),
        );
    } else if syn::parse_str::<syn::Ident>(&snake_case(kind)).is_err()
        || ["register", "mod"].contains(&snake_case(kind).as_str())
    {
        errors.push(
            Diagnostic::error(format!("the kind `{kind}` would live in the module `{}`, which cannot be one", snake_case(kind)))
                .help("a kind's file and module are named after it in snake_case: pick a kind that is no Rust keyword, `Register` or `Mod`"),
        );
    }
}

/// `v1`, `v2beta1`, `v1alpha3`.
fn is_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let tail = &rest[digits..];
    tail.is_empty()
        || ["alpha", "beta"].iter().any(|stage| {
            tail.strip_prefix(stage)
                .is_some_and(|n| !n.is_empty() && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

fn is_package_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A group's directory: its first label, as a Rust module name.
fn group_dir(group: &str) -> String {
    group.split('.').next().unwrap_or(group).replace('-', "_")
}

fn sample_path(api: &ApiSpec) -> String {
    format!("config/samples/{}_{}_{}.yaml", group_dir(&api.group), api.version, api.kind.to_lowercase())
}

fn mod_line(module: &str) -> String {
    format!("pub mod {module};\n")
}

fn kind_lines(kind: &str) -> String {
    let module = snake_case(kind);
    format!("mod {module};\npub use {module}::*;\n")
}

/// `text` with `lines` inserted above the line holding `marker` and the
/// `//` comment lines right above it (they belong to the marker).
pub(crate) fn insert_at_marker(text: &str, marker: &str, lines: &str) -> String {
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(mut at) = all.iter().position(|l| l.contains(marker)) else {
        return format!("{text}{lines}");
    };
    while at > 0 && all[at - 1].trim_start().starts_with("//") && !all[at - 1].trim_start().starts_with("//!") {
        at -= 1;
    }
    // `pub mod x;` lines right above join the new ones, sorted by name as
    // rustfmt orders consecutive module declarations.
    let is_mod = |l: &str| {
        let l = l.trim();
        l.strip_prefix("pub mod ").and_then(|r| r.strip_suffix(';')).is_some_and(|n| !n.contains(char::is_whitespace))
    };
    let new: Vec<&str> = lines.split_inclusive('\n').collect();
    let mut start = at;
    if new.iter().all(|l| is_mod(l)) {
        while start > 0 && is_mod(all[start - 1]) {
            start -= 1;
        }
    }
    let mut run: Vec<String> = all[start..at].iter().chain(&new).map(|l| l.trim_end().to_string() + "\n").collect();
    if start < at {
        // rustfmt (style edition 2024) sorts by version: `v2` before `v10`.
        run.sort_by(|a, b| version_order(a, b));
        run.dedup();
    }
    let mut out: String = all[..start].concat();
    out.push_str(&run.concat());
    out.push_str(&all[at..].concat());
    out
}

/// Version sorting, as rustfmt's 2024 style orders module declarations:
/// runs of digits compare as numbers, everything else as text.
fn version_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    for (x, y) in chunks(a).into_iter().zip(chunks(b)) {
        let order = match (x, y) {
            ((true, x), (true, y)) => {
                x.trim_start_matches('0').len().cmp(&y.trim_start_matches('0').len()).then(x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if order != std::cmp::Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// The new contents of the user file `path` with `lines` added at `marker`;
/// an error naming the file when the marker is gone.
fn edit_at_marker(path: &Path, marker: &str, lines: &str) -> Result<String, Vec<Diagnostic>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![Diagnostic::error(format!("cannot read `{}`: {e}", path.display()))])?;
    if !text.contains(marker) {
        return Err(vec![Diagnostic::error(format!("`{}` has no `{marker}` line", path.display())).help(format!(
            "kube-codegen adds modules above that line; put it back (where the new `mod` lines belong), or add these lines yourself:\n{}",
            lines.trim_end()
        ))]);
    }
    Ok(insert_at_marker(&text, marker, lines))
}

/// Formats the new Rust files with the crate's rustfmt settings, as `cargo
/// fmt` would (line breaks depend on the names put in). Without rustfmt the
/// files stay as rendered: valid, merely not wrapped.
pub(crate) fn rustfmt(files: &[PathBuf]) {
    let rust: Vec<&PathBuf> = files.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")).collect();
    if rust.is_empty() {
        return;
    }
    let rustfmt = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let _ = std::process::Command::new(rustfmt)
        .args(["--edition", "2024"])
        .args(rust)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Files created and edited so far, undone when a later step fails.
#[derive(Default)]
pub(crate) struct Transaction {
    created: Vec<PathBuf>,
    created_dirs: Vec<PathBuf>,
    edited: Vec<(PathBuf, String)>,
    /// The file being written, for the message when that fails.
    attempted: Option<PathBuf>,
}

impl Transaction {
    pub(crate) fn create(&mut self, path: &Path, contents: &str) -> std::io::Result<()> {
        self.attempted = Some(path.to_path_buf());
        let mut missing = Vec::new();
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d.to_path_buf());
            dir = d.parent();
        }
        for d in missing.into_iter().rev() {
            std::fs::create_dir(&d)?;
            self.created_dirs.push(d);
        }
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        self.created.push(path.to_path_buf());
        std::io::Write::write_all(&mut file, contents.as_bytes())
    }

    pub(crate) fn edit(&mut self, path: &Path, contents: &str) -> std::io::Result<()> {
        self.attempted = Some(path.to_path_buf());
        let old = std::fs::read_to_string(path)?;
        std::fs::write(path, contents)?;
        self.edited.push((path.to_path_buf(), old));
        Ok(())
    }

    /// Records the files a generator run created.
    /// Writes generated `output` (files with the generated-file header,
    /// through the writer's plan), recording the files and the directories
    /// it creates.
    pub(crate) fn commit_output(
        &mut self,
        output: &crate::write::Output,
        warnings: Vec<Diagnostic>,
    ) -> Result<Report, Vec<Diagnostic>> {
        let changes = match crate::write::plan(output) {
            Ok(changes) => changes,
            Err(errors) => return Err(self.abort(errors)),
        };
        for change in &changes {
            if let crate::Change::Create { path, .. } = change {
                let mut dir = path.parent();
                while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
                    if !self.created_dirs.iter().any(|c| c == d) {
                        self.created_dirs.push(d.to_path_buf());
                    }
                    dir = d.parent();
                }
            }
        }
        if let Err(e) = crate::write::apply(&changes) {
            return Err(self.abort(vec![e]));
        }
        let unchanged =
            output.files.len() - changes.iter().filter(|c| !matches!(c, crate::Change::Delete { .. })).count();
        for change in &changes {
            if let crate::Change::Create { path, .. } = change {
                self.created.push(path.clone());
            }
        }
        Ok(Report { changes, unchanged, warnings })
    }

    /// Runs the generators on the tree written so far.
    pub(crate) fn generate(&mut self, settings: &Settings, reports: &mut Vec<Report>) -> Result<(), Vec<Diagnostic>> {
        // The model stays on the big stack's thread; files and warnings come back.
        let (output, warnings) = match crate::on_big_stack(|| crate::generate(settings).map(|g| (g.output, g.warnings)))
        {
            Ok(generated) => generated,
            Err(errors) => return Err(self.abort(errors)),
        };
        reports.push(self.commit_output(&output, warnings)?);
        Ok(())
    }

    pub(crate) fn fail(&mut self, e: std::io::Error) -> Vec<Diagnostic> {
        let at = self.attempted.as_ref().map(|p| format!(" (writing `{}`)", p.display())).unwrap_or_default();
        self.abort(vec![Diagnostic::error(format!("cannot write the new files{at}: {e}"))])
    }

    /// Undoes everything and returns `errors` with a note saying so: edits
    /// restored, files created removed, and the directories created for
    /// them removed when empty (directories that were there stay).
    pub(crate) fn abort(&mut self, mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
        for (path, old) in self.edited.drain(..).rev() {
            let _ = std::fs::write(&path, old);
        }
        for path in self.created.drain(..).rev() {
            let _ = std::fs::remove_file(&path);
        }
        let mut dirs: Vec<PathBuf> = self.created_dirs.drain(..).collect();
        // Deepest first; only directories left empty go.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        dirs.dedup();
        for d in dirs {
            let _ = std::fs::remove_dir(&d);
        }
        if let Some(first) = errors.first_mut() {
            first.notes.push("nothing was written: the files created were removed and the edits undone".into());
        }
        errors
    }

    pub(crate) fn created_files(&self) -> Vec<PathBuf> {
        self.created.clone()
    }
}

/// The dependency versions of a kube-codegen checkout (its workspace
/// `Cargo.toml`), so that a scaffolded crate uses what the runtime is built with.
struct Dependencies {
    checkout: PathBuf,
    kube: String,
    k8s_openapi: String,
    k8s_feature: String,
    tokio: String,
    clap: String,
}

impl Dependencies {
    fn of_checkout(dir: &Path) -> Result<Dependencies, Diagnostic> {
        let help = "pass `--codegen-path <dir>`: a kube-codegen checkout (holding `runtime/` and `codegen-macros/`)";
        let checkout = std::fs::canonicalize(dir)
            .map_err(|e| Diagnostic::error(format!("kube-codegen checkout `{}`: {e}", dir.display())).help(help))?;
        if !checkout.join("runtime/Cargo.toml").is_file() || !checkout.join("codegen-macros/Cargo.toml").is_file() {
            return Err(Diagnostic::error(format!(
                "`{}` is not a kube-codegen checkout: no `runtime/Cargo.toml` and `codegen-macros/Cargo.toml`",
                checkout.display()
            ))
            .help(help));
        }
        let manifest = checkout.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest)
            .map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", manifest.display())))?;
        let value: toml::Table = toml::from_str(&text)
            .map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", manifest.display())))?;
        let deps = value.get("workspace").and_then(|w| w.get("dependencies"));
        let version = |name: &str| -> Result<String, Diagnostic> {
            let dep = deps.and_then(|d| d.get(name));
            dep.and_then(|d| d.as_str().or_else(|| d.get("version").and_then(|v| v.as_str())))
                .map(str::to_string)
                .ok_or_else(|| {
                    Diagnostic::error(format!(
                        "`{}` gives no version of `{name}` in [workspace.dependencies]",
                        manifest.display()
                    ))
                })
        };
        let newest = KubeVersion::supported().last().copied().expect("the built-in table names versions");
        Ok(Dependencies {
            kube: version("kube")?,
            k8s_openapi: version("k8s-openapi")?,
            k8s_feature: format!("v1_{}", newest.minor),
            tokio: version("tokio")?,
            clap: version("clap")?,
            checkout,
        })
    }
}

/// The values of a template's `{{ name }}` placeholders.
struct Vars(BTreeMap<String, String>);

impl Vars {
    fn new(api: &ApiSpec, group_dir: &str, layout: CrateLayout) -> Vars {
        let none = BTreeMap::new();
        let accessor = snake_case(&plural_type_name(&api.kind, &none));
        let vars = Vars(BTreeMap::new())
            .with("group", &api.group)
            .with("version", &api.version)
            .with("kind", &api.kind)
            .with("kind_snake", &snake_case(&api.kind))
            .with("kind_lower", &api.kind.to_lowercase())
            .with("plural", &pluralize(&api.kind, &none))
            .with("group_dir", group_dir)
            .with("gv_accessor", &format!("{group_dir}_{}", api.version))
            .with("apis_dir", layout.apis_dir())
            .with("client_dir", layout.client_dir())
            .with("all_args", layout.all_args());
        vars.with("accessor", &accessor)
    }

    fn with(mut self, name: &str, value: &str) -> Vars {
        self.0.insert(name.to_string(), value.to_string());
        self
    }

    /// Replaces `{{ name }}` with its value; `{{- name }}` also drops the
    /// whitespace before it. Unknown names stay as they are (a test renders
    /// every template and checks that none is left).
    fn render(&self, template: &str) -> String {
        let mut out = String::with_capacity(template.len());
        let mut rest = template;
        while let Some(open) = rest.find("{{") {
            let Some(len) = rest[open..].find("}}") else { break };
            let inner = &rest[open + 2..open + len];
            let (trim, name) = match inner.strip_prefix('-') {
                Some(name) => (true, name.trim()),
                None => (false, inner.trim()),
            };
            match self.0.get(name) {
                Some(value) => {
                    out.push_str(&rest[..open]);
                    if trim {
                        let kept = out.trim_end().len();
                        out.truncate(kept);
                    }
                    out.push_str(value);
                }
                None => out.push_str(&rest[..open + len + 2]),
            }
            rest = &rest[open + len + 2..];
        }
        out.push_str(rest);
        out
    }
}

/// The files of a new crate (`templates/scaffold/`).
mod templates {
    pub const CARGO_TOML: &str = include_str!("../../templates/scaffold/Cargo.toml");
    pub const README: &str = include_str!("../../templates/scaffold/README.md");
    pub const GITIGNORE: &str = include_str!("../../templates/scaffold/gitignore");
    pub const RUSTFMT: &str = include_str!("../../templates/scaffold/rustfmt.toml");
    pub const MAIN: &str = include_str!("../../templates/scaffold/main.rs");
    pub const LIB: &str = include_str!("../../templates/scaffold/lib.rs");
    pub const CONTROLLER: &str = include_str!("../../templates/scaffold/controller.rs");
    pub const PKG_MOD: &str = include_str!("../../templates/scaffold/pkg_mod.rs");
    pub const APIS_MOD: &str = include_str!("../../templates/scaffold/apis_mod.rs");
    pub const GROUP_MOD: &str = include_str!("../../templates/scaffold/group_mod.rs");
    pub const VERSION_MOD: &str = include_str!("../../templates/scaffold/version_mod.rs");
    pub const KIND: &str = include_str!("../../templates/scaffold/kind.rs");
    pub const SAMPLE: &str = include_str!("../../templates/scaffold/sample.yaml");
    pub const WORKSPACE_CARGO_TOML: &str = include_str!("../../templates/scaffold/workspace/Cargo.toml");
    pub const WORKSPACE_LIB: &str = include_str!("../../templates/scaffold/workspace/lib.rs");
    pub const API_CARGO_TOML: &str = include_str!("../../templates/scaffold/workspace/api_Cargo.toml");
    pub const API_LIB: &str = include_str!("../../templates/scaffold/workspace/api_lib.rs");
    pub const CLIENT_CARGO_TOML: &str = include_str!("../../templates/scaffold/workspace/client_Cargo.toml");
    pub const CLIENT_LIB: &str = include_str!("../../templates/scaffold/workspace/client_lib.rs");

    /// Every template, for the test that renders them all.
    #[cfg(test)]
    pub const ALL: [&str; 19] = [
        WORKSPACE_CARGO_TOML,
        WORKSPACE_LIB,
        API_CARGO_TOML,
        API_LIB,
        CLIENT_CARGO_TOML,
        CLIENT_LIB,
        CARGO_TOML,
        README,
        GITIGNORE,
        RUSTFMT,
        MAIN,
        LIB,
        CONTROLLER,
        PKG_MOD,
        APIS_MOD,
        GROUP_MOD,
        VERSION_MOD,
        KIND,
        SAMPLE,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_kubernetes_names() {
        for ok in ["v1", "v2", "v10", "v1alpha1", "v2beta3", "v1beta10"] {
            assert!(is_version(ok), "{ok}");
        }
        for bad in ["1", "v0", "v01", "v1alpha", "v1gamma1", "v1beta01", "V1", "v", "v1-beta1"] {
            assert!(!is_version(bad), "{bad}");
        }
    }

    #[test]
    fn every_template_placeholder_has_a_value() {
        let api = ApiSpec { group: "cache.example.com".into(), version: "v1alpha1".into(), kind: "Memcached".into() };
        let mut vars = Vars::new(&api, "cache", CrateLayout::Workspace);
        for name in [
            "apis_path",
            "client_path",
            "layout_note",
            "crate_name",
            "crate_ident",
            "codegen_path",
            "deps.kube",
            "deps.k8s_openapi",
            "deps.k8s_feature",
            "deps.tokio",
            "deps.clap",
        ] {
            vars = vars.with(name, "x");
        }
        for template in templates::ALL {
            let text = vars.render(template);
            assert!(!text.contains("{{"), "{text}");
        }
        assert_eq!(vars.render("use a::{ {{- kind }}, B};"), "use a::{Memcached, B};");
    }

    #[test]
    fn modules_go_above_the_marker_and_its_comment() {
        let text = "//! doc\n\npub mod v1;\n// comment about the marker\n// +kube-codegen:scaffold:versions\n";
        let out = insert_at_marker(text, VERSIONS_MARKER, "pub mod v2;\n");
        assert_eq!(
            out,
            "//! doc\n\npub mod v1;\npub mod v2;\n// comment about the marker\n// +kube-codegen:scaffold:versions\n"
        );
    }

    #[test]
    fn group_names_are_read_from_the_macro() {
        assert_eq!(group_name_in("codegen_macros::group_name!(\"a.b.io\");\nmod x;"), Some("a.b.io".into()));
        assert_eq!(group_name_in("mod x;"), None);
    }
}
