//! `kube-codegen`: the command-line front end over codegen-core. Flags map
//! one to one onto [`codegen_core::Settings`]; `kube-codegen rbac` onto
//! [`codegen_core::rbac::RbacSettings`].

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

Exit status: 0 success, 1 --verify found drift, 2 errors.";

/// Generates a typed clientset, listers, informers, a fake clientset and CRD
/// YAML from annotated Rust API types (Go's generate-groups.sh + controller-gen).
#[derive(Parser, Debug)]
#[command(name = "kube-codegen", version, after_help = EXAMPLES)]
struct Cli {
    /// `all`, or a comma list of: deepcopy,register,applyconfig,client,fake,lister,informer,crd.
    /// Generators they need are added: client and lister add register,
    /// informer adds lister, fake adds client
    generators: String,
    /// Directory holding `<group>/<version>/` packages, e.g. `pkg/apis`
    apis_dir: PathBuf,
    /// `<group-dir>:<version>[,<version>...]`, e.g. `example:v1`; repeat for more groups
    #[arg(required = true, value_name = "GROUP:VERSIONS")]
    groups: Vec<String>,
    /// Where clientset/, listers/, informers/ and fake/ go [default: <apis-dir>/../client]
    #[arg(long)]
    output_dir: Option<PathBuf>,
    /// Where CRD YAML goes [default: <crate root>/config/crd]
    #[arg(long)]
    crd_dir: Option<PathBuf>,
    /// Text file (e.g. a license) put, commented, at the top of every generated file
    #[arg(long)]
    header_file: Option<PathBuf>,
    /// Write nothing; print a unified diff of what would change and exit 1 on drift
    #[arg(long)]
    verify: bool,
    /// Rust path of the apis module [default: derived from <apis-dir>, e.g. crate::pkg::apis]
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
    /// Cap every CRD description at N bytes (cut at a sentence or word); 0 drops them
    /// (controller-gen's crd:maxDescLen)
    #[arg(long, value_name = "N")]
    max_desc_len: Option<usize>,
    /// Give an embedded ObjectMeta (a pod template's metadata) its name, namespace,
    /// labels, annotations and finalizers (controller-gen's crd:generateEmbeddedObjectMeta)
    #[arg(long)]
    generate_embedded_object_meta: bool,
    /// Where the register code goes, relative to each version directory
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
#[command(name = "kube-codegen rbac", version, after_help = RBAC_EXAMPLES)]
struct RbacCli {
    /// Rust files, or directories searched recursively for `.rs` files
    #[arg(required = true, value_name = "SOURCES")]
    sources: Vec<PathBuf>,
    /// The manifest to write
    #[arg(long, default_value = "config/rbac/role.yaml")]
    output: PathBuf,
    /// `metadata.name` of the ClusterRole and of every namespaced Role
    #[arg(long, default_value = "manager-role")]
    role_name: String,
    /// Write nothing; print a unified diff of what would change and exit 1 on drift
    #[arg(long)]
    verify: bool,
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
    }
    if let Some(path) = &cli.header_file {
        match std::fs::read_to_string(path) {
            Ok(text) => s = s.with_header(text),
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
    let cli = Cli::parse_from(args);
    let result =
        settings(&cli).and_then(|s| codegen_core::run(&s, if cli.verify { Mode::Verify } else { Mode::Write }));
    report(result, cli.verify)
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
