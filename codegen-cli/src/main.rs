//! `kube-codegen`: the command-line front end over codegen-core. Flags map
//! one to one onto [`codegen_core::Settings`]; `kube-codegen rbac` onto
//! [`codegen_core::rbac::RbacSettings`]; `init` and `create api` onto
//! [`codegen_core::scaffold`]'s settings; `import` onto
//! [`codegen_core::import::ImportSettings`].
// The `///` comments of the command-line types are clap's help text, written
// for a terminal (`<APIS_DIR>`, `[default: ...]`), not as Markdown.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use codegen_core::KubeVersion;
use codegen_core::{Diagnostic, GeneratorKind, GroupVersions, Mode, Settings, diag::render_all};

const EXAMPLES: &str = "\
Examples:
  # everything for the seed's layout (pkg/apis/example/v1), like generate-groups.sh all
  kube-codegen all pkg/apis example:v1

  # every group and version found under pkg/apis
  kube-codegen all pkg/apis

  # two versions of one group, and a second group
  kube-codegen all pkg/apis example:v1,v2 auth:v1beta1

  # only the clientset and CRDs, into custom directories
  kube-codegen client,crd pkg/apis example:v1 --output-dir src/client --crd-dir deploy/crds

  # CI: fail (exit 1) and print a diff when the committed output is stale
  kube-codegen all pkg/apis example:v1 --verify

  # CRDs for Kubernetes 1.35 clusters, descriptions capped like crd:maxDescLen=200
  kube-codegen crd pkg/apis example:v1 --kube-version 1.35 --max-desc-len 200

  # config/rbac/role.yaml from the #[rbac(...)] markers of the controller (see `kube-codegen rbac --help`)
  kube-codegen rbac src

  # a new operator crate, and another kind in it (see `kube-codegen init --help`)
  kube-codegen init memcached-operator --group cache.example.com --version v1alpha1 --kind Memcached
  cd memcached-operator && kube-codegen create api --kind Backup

  # Rust types, clients and CRDs from existing CRDs (see `kube-codegen import --help`)
  kube-codegen import crontabs.yaml --apis-dir pkg/apis

Exit status: 0 success, 1 --verify found drift, 2 errors.";

/// Generates a typed clientset, apply configurations, listers, informers, a fake
/// clientset and CRD YAML from annotated Rust API types (Go's generate-groups.sh +
/// controller-gen).
#[derive(Parser, Debug)]
#[command(name = "kube-codegen", version, after_help = EXAMPLES)]
struct Cli {
    /// `all`, or a comma list of: deepcopy,register,applyconfig,client,fake,lister,informer,crd.
    /// Generators they need are added: lister and applyconfig add register,
    /// client adds applyconfig, informer adds lister, fake adds client
    generators: String,
    /// Directory holding `<group>/<version>/` packages, e.g. `pkg/apis`
    apis_dir: PathBuf,
    /// `<group-dir>:<version>[,<version>...]`, e.g. `example:v1`; repeat for more groups
    /// [default: every `<group>/<version>/` under <APIS_DIR> whose version module (mod.rs, or
    /// <version>.rs beside it) has `group_name!`]
    #[arg(value_name = "GROUP:VERSIONS")]
    groups: Vec<String>,
    /// Where clientset/, listers/, informers/, applyconfigurations/ and fake/ go
    /// [default: <apis-dir>/../client]
    #[arg(long)]
    output_dir: Option<PathBuf>,
    /// Where CRD YAML goes [default: <crate root>/config/crd]. The admission webhooks'
    /// manifests.yaml goes to the directory `webhook` beside it (<CRD_DIR>/../webhook)
    #[arg(long)]
    crd_dir: Option<PathBuf>,
    /// Text file (e.g. a license) put, commented, under the generated-file line of every
    /// generated file
    #[arg(long)]
    header_file: Option<PathBuf>,
    /// Year put for ` YEAR` in the header file's text (controller-gen's `year`; kubebuilder's
    /// boilerplate says `Copyright YEAR ...`); only with --header-file
    #[arg(long, requires = "header_file")]
    year: Option<u16>,
    /// Write nothing; print a unified diff of what would change and exit 1 on drift
    #[arg(long)]
    verify: bool,
    /// Rust path of the apis module [default: derived from <apis-dir>, e.g. crate::pkg::apis; with an
    /// --output-dir in another crate, that of the types crate, e.g. my_api::apis]
    #[arg(long)]
    apis_module: Option<String>,
    /// Rust path of the runtime crate
    #[arg(long, default_value = "::codegen_runtime")]
    runtime_path: String,
    /// Plural exceptions, `Kind:plural` comma-separated (client-gen's --plural-exceptions)
    #[arg(long, value_delimiter = ',')]
    plural_exceptions: Vec<String>,
    /// Kubernetes version of the built-in types embedded in CRDs (1.33 .. 1.37)
    /// [default: k8s-openapi's `v1_*` feature in Cargo.toml, else the newest]
    #[arg(long, value_name = "1.NN")]
    kube_version: Option<String>,
    /// Cut CRD descriptions longer than N bytes back to a sentence end within N bytes, else
    /// to a word followed by `...`; 0 drops them (controller-gen's crd:maxDescLen)
    #[arg(long, value_name = "N")]
    max_desc_len: Option<usize>,
    /// Give an embedded ObjectMeta (a pod template's metadata) its name, namespace,
    /// labels, annotations and finalizers (controller-gen's crd:generateEmbeddedObjectMeta)
    #[arg(long)]
    generate_embedded_object_meta: bool,
    /// Where the register code goes, relative to each version directory; an absolute path,
    /// or one with a `..` component, is an error (it must stay inside the directory)
    #[arg(long, value_name = "PATH", default_value = "register.rs")]
    register_file: PathBuf,
}

const RBAC_EXAMPLES: &str = "\
Examples:
  # the ClusterRole `manager-role` from every #[rbac(...)] under src/, into config/rbac/role.yaml
  kube-codegen rbac src

  # another role name and file; CI: exit 1 with a diff when the committed role is stale
  kube-codegen rbac src --role-name student-controller --output deploy/role.yaml --verify

Exit status: 0 success, 1 --verify found drift, 2 errors.";

/// Writes the role a controller needs from the `#[rbac(...)]` markers in its
/// sources (controller-gen's rbac generator): rules merged and sorted, a
/// ClusterRole, plus a Role per namespace that markers name.
#[derive(Parser, Debug)]
#[command(name = "kube-codegen rbac", bin_name = "kube-codegen rbac", version, after_help = RBAC_EXAMPLES)]
struct RbacCli {
    /// Rust files, or directories searched recursively for `.rs` files
    #[arg(required = true, value_name = "SOURCES")]
    sources: Vec<PathBuf>,
    /// The manifest to write
    #[arg(long, default_value = "config/rbac/role.yaml")]
    output: PathBuf,
    /// `metadata.name` of the ClusterRole and of every namespaced Role, but for the markers
    /// that name their own (`role_name`)
    #[arg(long, default_value = "manager-role")]
    role_name: String,
    /// Write nothing; print a unified diff of what would change and exit 1 on drift
    #[arg(long)]
    verify: bool,
}

const INIT_EXAMPLES: &str = "\
Examples:
  # a crate in ./memcached-operator with the kind Memcached of cache.example.com/v1alpha1
  kube-codegen init memcached-operator --group cache.example.com --version v1alpha1 --kind Memcached

  # then, in the new crate
  cd memcached-operator && cargo test

  # the same as a workspace: api/ (types), client/ (generated clients), controller
  kube-codegen init memcached-operator --group cache.example.com --version v1alpha1 --kind Memcached --workspace

Exit status: 0 success, 2 errors (nothing written).";

/// Creates an operator crate (kubebuilder's `init` + `create api`): the API
/// type in pkg/apis/<group>/<version>/ (api/src/apis/.. with --workspace)
/// with a status subresource and printer
/// columns, its generated clientset, listers, informers, fake clientset and
/// CRD, a controller on codegen-runtime (informer, rate-limited work queue,
/// events, leader election, signal handling) with #[rbac] markers and the
/// role generated from them, a unit test on the fake API server, a sample
/// object and a README with the next commands. Writes only new files.
#[derive(Parser, Debug)]
#[command(name = "kube-codegen init", bin_name = "kube-codegen init", disable_version_flag = true, after_help = INIT_EXAMPLES)]
struct InitCli {
    /// The crate's directory (created when missing)
    dir: PathBuf,
    /// The API group, a DNS name with at least one dot, e.g. `cache.example.com`
    #[arg(long)]
    group: String,
    /// The API version, e.g. `v1alpha1`
    #[arg(long)]
    version: String,
    /// The kind, e.g. `Memcached`
    #[arg(long)]
    kind: String,
    /// The package name [default: the directory's name]
    #[arg(long)]
    name: Option<String>,
    /// The kube-codegen checkout the crate depends on by path (its runtime/ and
    /// codegen-macros/) [default: the checkout this kube-codegen was built from]
    #[arg(long, value_name = "DIR")]
    codegen_path: Option<PathBuf>,
    /// A workspace of three packages instead of one crate: api/ (the types),
    /// client/ (the generated clients) and the controller at the root, so that
    /// each compiles on its own (docs/layout.md)
    #[arg(long)]
    workspace: bool,
}

const CREATE_API_EXAMPLES: &str = "\
Examples:
  # another kind in the crate's only group and version
  kube-codegen create api --kind Backup

  # a new version of a group, and a new group
  kube-codegen create api --kind Memcached --version v1beta1 --group cache.example.com
  kube-codegen create api --kind Alert --group monitoring.example.com --version v1

Exit status: 0 success, 2 errors (nothing written).";

/// Adds a kind to a crate made by `kube-codegen init` (a new version or group
/// when they do not exist yet), then regenerates the clients and CRDs of
/// every group. Writes only new files; the module files get the new `mod`
/// lines above their `// +kube-codegen:scaffold:*` marker line.
#[derive(Parser, Debug)]
#[command(name = "kube-codegen create api", bin_name = "kube-codegen create api", disable_version_flag = true, after_help = CREATE_API_EXAMPLES)]
struct CreateApiCli {
    /// The kind, e.g. `Backup`
    #[arg(long)]
    kind: String,
    /// The API version [default: the group's only version]
    #[arg(long)]
    version: Option<String>,
    /// The API group [default: the crate's only group]
    #[arg(long)]
    group: Option<String>,
    /// The crate's root directory
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

const IMPORT_EXAMPLES: &str = "\
Examples:
  # Rust types for every served version of these CRDs, then their clientset,
  # listers, informers, fake clientset and (regenerated) CRDs
  kube-codegen import crontabs.yaml --apis-dir pkg/apis

  # CRDs already in config/crd: write the regenerated ones elsewhere, or only the types
  kube-codegen import config/crd/*.yaml --apis-dir pkg/apis --crd-dir config/crd-generated
  kube-codegen import config/crd/*.yaml --apis-dir pkg/apis --types-only

Exit status: 0 success, 2 errors (nothing written). See docs/import.md.";

/// Turns CustomResourceDefinitions into annotated Rust API types (like
/// kopium), one module per group and served version under the apis dir, then
/// generates their clientset, listers, informers, fake clientset and CRDs.
/// The types are yours to edit: no existing file is ever replaced.
#[derive(Parser, Debug)]
#[command(name = "kube-codegen import", bin_name = "kube-codegen import", disable_version_flag = true, after_help = IMPORT_EXAMPLES)]
struct ImportCli {
    /// CRD YAML files (one or more documents each)
    #[arg(required = true, value_name = "CRD_YAML")]
    crds: Vec<PathBuf>,
    /// The directory the `<group>/<version>/` modules go to [default: pkg/apis; in a workspace
    /// made by `init --workspace`, api/src/apis]
    #[arg(long)]
    apis_dir: Option<PathBuf>,
    /// Where the generated clientset/, listers/, informers/, applyconfigurations/ and fake/ go
    /// [default: <apis-dir>/../client;
    /// for a workspace's api/src/apis, client/src/client]
    #[arg(long)]
    output_dir: Option<PathBuf>,
    /// Where the regenerated CRD YAML goes [default: <crate root>/config/crd; for a workspace's
    /// api/src/apis, config/crd at the workspace's root]
    #[arg(long)]
    crd_dir: Option<PathBuf>,
    /// Write the types only; generate nothing
    #[arg(long, conflicts_with_all = ["output_dir", "crd_dir"])]
    types_only: bool,
}

fn settings(cli: &Cli) -> Result<Settings, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let generators = GeneratorKind::parse_list(&cli.generators).map_err(|e| errors.push(e)).ok();
    let mut s = Settings::new(&cli.apis_dir).with_runtime_path(&cli.runtime_path);
    for g in &cli.groups {
        match GroupVersions::parse(g) {
            Ok(gv) => s = s.with_group(gv),
            Err(e) => errors.push(e),
        }
    }
    if cli.groups.is_empty() {
        match codegen_core::scaffold::discover_groups(&cli.apis_dir) {
            Ok(found) if found.is_empty() => errors.push(
                Diagnostic::error(format!(
                    "no `<group>/<version>/mod.rs` with `group_name!` under `{}`",
                    cli.apis_dir.display()
                ))
                .help("name the groups, e.g. `kube-codegen all pkg/apis example:v1`, or check the apis directory"),
            ),
            Ok(found) => {
                for g in found {
                    s = s.with_group(GroupVersions { package: g.dir, versions: g.versions });
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if let Some(g) = generators {
        s = s.with_generators(g);
    }
    if let Some(d) = &cli.output_dir {
        s = s.with_output_dir(d);
    }
    if let Some(d) = &cli.crd_dir {
        s = s.with_crd_dir(d);
    }
    if let Some(m) = &cli.apis_module {
        s = s.with_apis_module(m);
    } else {
        match s.clone().with_inferred_apis_module() {
            Ok(inferred) => s = inferred,
            Err(e) => errors.push(e),
        }
    }
    if let Some(path) = &cli.header_file {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                s = s.with_header(match cli.year {
                    Some(year) => text.replace(" YEAR", &format!(" {year}")),
                    None => text,
                })
            }
            Err(e) => errors.push(Diagnostic::error(format!("cannot read header file `{}`: {e}", path.display()))),
        }
    }
    if let Some(v) = &cli.kube_version {
        match KubeVersion::parse(v).filter(|v| v.is_supported()) {
            Some(v) => s = s.with_kube_version(v),
            None => {
                let supported: Vec<String> = KubeVersion::supported().iter().map(ToString::to_string).collect();
                errors.push(
                    Diagnostic::error(format!("`--kube-version {v}` is not a supported Kubernetes version"))
                        .help(format!("supported: {}", supported.join(", "))),
                );
            }
        }
    }
    if let Some(n) = cli.max_desc_len {
        s = s.with_max_desc_len(n);
    }
    s = s.with_embedded_object_meta(cli.generate_embedded_object_meta);
    if cli.register_file.is_absolute()
        || cli.register_file.components().any(|c| matches!(c, std::path::Component::ParentDir))
    {
        errors.push(
            Diagnostic::error(format!(
                "`--register-file {}` must stay inside the version directory",
                cli.register_file.display()
            ))
            .help("give a relative path such as `register.rs` or `generated/register.rs`"),
        );
    } else {
        s = s.with_register_file(&cli.register_file);
    }
    for pe in &cli.plural_exceptions {
        match pe.split_once(':') {
            Some((kind, plural)) if !kind.is_empty() && !plural.is_empty() => s = s.with_plural_exception(kind, plural),
            _ => errors.push(
                Diagnostic::error(format!("plural exception `{pe}` is not `Kind:plural`"))
                    .help("e.g. `--plural-exceptions Endpoints:endpoints`"),
            ),
        }
    }
    if errors.is_empty() { Ok(s) } else { Err(errors) }
}

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "rbac") {
        args.remove(1);
        let cli = RbacCli::parse_from(args);
        let settings =
            codegen_core::rbac::RbacSettings { sources: cli.sources, output: cli.output, role_name: cli.role_name };
        let mode = if cli.verify { Mode::Verify } else { Mode::Write };
        return report(codegen_core::rbac::run_rbac(&settings, mode), cli.verify);
    }
    if args.get(1).is_some_and(|a| a == "init") {
        args.remove(1);
        let cli = InitCli::parse_from(args);
        let settings = codegen_core::scaffold::InitSettings {
            dir: cli.dir.clone(),
            crate_name: cli.name,
            api: codegen_core::scaffold::ApiSpec { group: cli.group, version: cli.version, kind: cli.kind },
            codegen_path: cli.codegen_path.unwrap_or_else(codegen_core::scaffold::default_codegen_path),
            layout: if cli.workspace {
                codegen_core::scaffold::CrateLayout::Workspace
            } else {
                codegen_core::scaffold::CrateLayout::OneCrate
            },
        };
        return scaffolded(codegen_core::scaffold::init(&settings), Some(&cli.dir));
    }
    if args.get(1).is_some_and(|a| a == "import") {
        args.remove(1);
        let cli = ImportCli::parse_from(args);
        // In a workspace made by `init --workspace`, its directories are the
        // defaults (and the apis dir's when it is not given).
        use codegen_core::scaffold::CrateLayout;
        let layout = match CrateLayout::of(std::path::Path::new("")) {
            Ok(layout) => layout,
            Err(e) if cli.apis_dir.is_none() => return imported(Err(vec![e])),
            Err(_) => None,
        };
        let apis_dir = cli.apis_dir.clone().unwrap_or_else(|| layout.unwrap_or_default().apis_dir().into());
        let workspace = layout == Some(CrateLayout::Workspace)
            && apis_dir == std::path::Path::new(CrateLayout::Workspace.apis_dir());
        let settings = codegen_core::import::ImportSettings { crds: cli.crds, apis_dir: apis_dir.clone() };
        let generation = match (!cli.types_only).then(|| {
            let mut s = Settings::new(&apis_dir);
            let output_dir =
                cli.output_dir.clone().or_else(|| workspace.then(|| CrateLayout::Workspace.client_dir().into()));
            if let Some(d) = output_dir {
                s = s.with_output_dir(d);
            }
            let crd_dir = cli.crd_dir.clone().or_else(|| workspace.then(|| CrateLayout::Workspace.crd_dir().into()));
            if let Some(d) = crd_dir {
                s = s.with_crd_dir(d);
            }
            s.with_inferred_apis_module()
        }) {
            None => None,
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => return imported(Err(vec![e])),
        };
        return imported(codegen_core::import::run_import(&settings, generation));
    }
    if args.get(1).is_some_and(|a| a == "create") {
        if args.get(2).is_some_and(|a| a == "api") {
            args.drain(1..3);
            let cli = CreateApiCli::parse_from(args);
            let settings = codegen_core::scaffold::CreateApiSettings {
                root: cli.dir,
                group: cli.group,
                version: cli.version,
                kind: cli.kind,
            };
            return scaffolded(codegen_core::scaffold::create_api(&settings), None);
        }
        eprint!(
            "{}",
            Diagnostic::error("`kube-codegen create` needs what to create")
                .help("write `kube-codegen create api --kind <Kind>` (see `kube-codegen create api --help`)")
                .render()
        );
        return ExitCode::from(2);
    }
    let cli = Cli::parse_from(args);
    let result =
        settings(&cli).and_then(|s| codegen_core::run(&s, if cli.verify { Mode::Verify } else { Mode::Write }));
    report(result, cli.verify)
}

/// Prints what `import` wrote and generated.
fn imported(result: Result<codegen_core::import::ImportReport, Vec<Diagnostic>>) -> ExitCode {
    let done = match result {
        Err(diags) => {
            eprint!("{}", render_all(&diags));
            return ExitCode::from(2);
        }
        Ok(done) => done,
    };
    let generated = done.generated.as_ref();
    for path in &done.edited {
        eprintln!("edited    {}", path.display());
    }
    for w in done.warnings.iter().chain(generated.iter().flat_map(|r| &r.warnings)) {
        eprintln!("{}", w.render());
    }
    eprintln!(
        "kube-codegen: imported {}: {} file(s) written, {} edited, {} unchanged{}",
        done.groups.join(" "),
        done.created.len(),
        done.edited.len(),
        done.unchanged,
        generated.map(|r| format!(", {} generated", r.changes.len())).unwrap_or_default()
    );
    ExitCode::SUCCESS
}

/// Prints what `init` or `create api` wrote and the next commands.
fn scaffolded(
    result: Result<codegen_core::scaffold::Scaffolded, Vec<Diagnostic>>,
    new_crate: Option<&std::path::Path>,
) -> ExitCode {
    let done = match result {
        Err(diags) => {
            eprint!("{}", render_all(&diags));
            return ExitCode::from(2);
        }
        Ok(done) => done,
    };
    for report in &done.generated {
        for w in &report.warnings {
            eprintln!("{}", w.render());
        }
    }
    let generated: usize = done.generated.iter().map(|r| r.changes.len()).sum();
    let user_files = done.created.len()
        - done
            .generated
            .iter()
            .flat_map(|r| &r.changes)
            .filter(|c| matches!(c, codegen_core::Change::Create { .. }))
            .count();
    for path in &done.edited {
        eprintln!("edited    {}", path.display());
    }
    eprintln!(
        "kube-codegen: {} {}/{} ({}): {user_files} file(s) created, {} edited, {generated} generated",
        done.api.kind,
        done.api.group,
        done.api.version,
        done.plural,
        done.edited.len()
    );
    let next = match new_crate {
        Some(dir) => format!(
            "next:\n  cd {}\n  cargo test\n  kubectl apply -f config/crd && cargo run\n  kubectl apply -f config/samples && kubectl get {}",
            dir.display(),
            done.plural
        ),
        None => format!(
            "next: edit the new type, then `kube-codegen all {}` and `kubectl apply -f config/crd`",
            done.layout.all_args()
        ),
    };
    eprintln!("{next}");
    ExitCode::SUCCESS
}

/// Prints what a run did (or, verifying, would do) and picks the exit status.
fn report(result: Result<codegen_core::Report, Vec<Diagnostic>>, verify: bool) -> ExitCode {
    match result {
        Err(diags) => {
            eprint!("{}", render_all(&diags));
            ExitCode::from(2)
        }
        Ok(report) => {
            for w in &report.warnings {
                eprintln!("{}", w.render());
            }
            let n = report.changes.len();
            if verify {
                if n == 0 {
                    eprintln!("kube-codegen: up to date ({} files)", report.unchanged);
                    ExitCode::SUCCESS
                } else {
                    print!("{}", report.diff());
                    eprintln!("kube-codegen: {n} file(s) out of date; run without --verify to update them");
                    ExitCode::from(1)
                }
            } else {
                let deleted =
                    report.changes.iter().filter(|c| matches!(c, codegen_core::Change::Delete { .. })).count();
                eprintln!(
                    "kube-codegen: {} file(s) written, {} unchanged, {deleted} stale removed",
                    n - deleted,
                    report.unchanged
                );
                ExitCode::SUCCESS
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own consistency checks of every command line (they panic at
    /// parse time otherwise).
    #[test]
    fn every_command_line_is_consistent() {
        super::Cli::command().debug_assert();
        super::RbacCli::command().debug_assert();
        super::InitCli::command().debug_assert();
        super::CreateApiCli::command().debug_assert();
        super::ImportCli::command().debug_assert();
    }
}
