//! Build cost of generated code (issue 13): the synthetic API tree — by
//! default 100 kinds in 10 groups, each kind a spec with a list of items
//! (`ports`) and a map (`labels`), a status subresource — written as two user
//! crates that share one target directory (dependencies built once, before
//! anything is measured):
//!
//! - `ours`: the annotated types plus what `kube-codegen all` writes (run as
//!   the built binary, as a user runs it), and a `usage` module that, per
//!   kind, gets the typed client from the clientset and calls list, get and
//!   watch (polling the stream once), and gets the kind's informer and lister
//!   from the generated informer factory and reads the lister; `poll_all`
//!   polls each of those futures once (and the factory's `start` and
//!   `wait_for_cache_sync`), so every future is instantiated the way a user
//!   spawning them would (the rest of the generated public code is compiled
//!   as a library's public code is, except what the generator marks
//!   `#[inline]` so that it costs nothing until used: informer and lister
//!   accessors, the generic informer's lookups, extract functions).
//! - `kube_derive`: the same types with kube's `#[derive(CustomResource)]`
//!   (the workspace's kube with its `derive` feature, `schemars` for the
//!   schemas) and, per kind, a function that builds `kube::Api<K>` and calls
//!   list, get and watch (polling the stream once), polled once by
//!   `poll_all`; plus `crds()`, every kind's `CustomResourceExt::crd()` (what
//!   the CRD YAML of `ours` is to kube-derive).
//!
//! Both crates copy the workspace's Cargo.lock (so the versions are the
//! workspace's; kube-derive and schemars, which the workspace does not use,
//! are added at the first build — the only step that may need the network),
//! depend on the workspace's crates by path, and build with the workspace's
//! dev profile (`BUILD_COST_PROFILE`).
//!
//! Each round measures, for each crate (the order swaps every round): a
//! clean build of the crate only (`cargo clean -p` then `cargo build`), then,
//! after an unmeasured `cargo check` of the same sources, a one-line edit of
//! one kind's types file (a serde `alias` on `Kind0x0Status::ready_replicas`,
//! a change of its `Deserialize` code on both sides), the rebuild and the
//! `cargo check` after it (both incremental, the dev profile's default).
//! Each cargo command is one child process reaped with `wait4`: wall time,
//! CPU time (user + sys of cargo and its rustc) and peak RSS (the largest of
//! cargo and its rustc; with the dependencies built, rustc of the user
//! crate). Plus the size of the crate's rlib after the clean build. A
//! warm-up round, then medians of the rounds; ratios (ours / kube-derive)
//! are medians of the per-round ratios.
//!
//! With `BUILD_COST_STAGES`, the generated modules are added one at a time
//! (`register`; + `client`; + `lister`; + `informer`; + `applyconfig`; +
//! `fake`, i.e. `all`) and the clean build of each is measured, to attribute
//! the cost (the `usage` module then uses what is generated). A first stage
//! is the floor of any typed client in the crate: the types and register
//! code, and a `usage` that only decodes each kind with
//! `serde_json::from_str` (one `Deserialize` per kind, which a typed get,
//! list or watch compiles whoever generated the client).
//!
//! Run with `cargo bench -p codegen-cli --bench build_cost` (half an hour or
//! more at 100 kinds on 2 cores). Disk: about 1 GB of dependencies, and
//! while a crate is measured its rlib and incremental state (~2.5 GB for the
//! kube-codegen crate at 100 kinds). Environment:
//!
//! - `BUILD_COST_KINDS` (100), `BUILD_COST_GROUPS` (10): the tree;
//! - `BUILD_COST_POD_TEMPLATE=1`: every spec also embeds a `PodTemplateSpec`
//!   (as the trees of `codegen-core/benches/generate.rs` and
//!   `vs_controller_gen.rs` do); the kube-derive twin then turns on
//!   k8s-openapi's `schemars` feature;
//! - `BUILD_COST_ROUNDS` (5): measured rounds after the warm-up round;
//! - `BUILD_COST_STAGES`: `1` adds the per-module attribution after the
//!   comparison, `only` runs just the attribution;
//!   `BUILD_COST_STAGE_ROUNDS` (3): its rounds;
//! - `BUILD_COST_PROFILE`: `workspace` (default: the crates copy the
//!   workspace's `[profile.*]` sections — line tables for the crate, no
//!   debuginfo for dependencies) or `cargo` (cargo's default dev profile,
//!   full debuginfo everywhere: larger rlibs, longer builds);
//! - `BUILD_COST_WORKSPACE`: the checkout whose `runtime/`, `codegen-macros/`
//!   and Cargo.lock the crates use (default: this one), e.g. an export of a
//!   commit (`git archive`) to measure it while the work tree changes;
//! - `BUILD_COST_DIR`: the work directory (default
//!   `$CARGO_TARGET_DIR/codegen-compile-tests/bench-build-cost`); the crates'
//!   own artifacts are removed at the end (the dependencies stay for the next
//!   run) unless `BUILD_COST_KEEP=1`.
//!
//! Under `cargo test` (no `--bench` argument) it only writes a small tree
//! both ways and runs the generator on it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use synthetic_kind::{KindShape, kind_source};

#[path = "../../tests/support/synthetic_kind.rs"]
mod synthetic_kind;

/// The file of the one-line edit, and the line it replaces.
const EDIT_FILE: &str = "src/apis/group0/v1/types.rs";
const EDIT_LINE: &str = "    #[serde(default)]\n    pub ready_replicas: i32,";

/// The cumulative generator lists of the attribution, with their labels.
/// The first two generate the same; the first one's `usage` only decodes
/// each kind (see [`FLOOR`]).
const STAGES: [(&str, &str); 7] = [
    (FLOOR, "register"),
    ("types + register", "register"),
    ("+ clientset", "register,client"),
    ("+ listers", "register,client,lister"),
    ("+ informers", "register,client,lister,informer"),
    ("+ apply configurations", "register,client,lister,informer,applyconfig"),
    ("+ fake clientset (`all`)", "all"),
];

/// The label of the attribution's first stage: types and register code, each
/// kind decoded once from JSON text (`serde_json::from_str`) and nothing
/// else, what one crate with a typed client of every kind compiles at least.
const FLOOR: &str = "types + register, each kind decoded once (the floor of a typed client)";

struct Config {
    /// `groups[g]` holds the kind names of group `g`.
    groups: Vec<Vec<String>>,
    pod_template: bool,
    rounds: usize,
    stages: Option<usize>,
    compare: bool,
    /// The `[profile.*]` sections of the crates' manifests.
    profile: String,
    keep: bool,
    work: PathBuf,
    ws: PathBuf,
}

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf()
}

/// `kinds` kinds in at most `groups` groups, `Kind{g}x{k}`.
fn tree(kinds: usize, groups: usize) -> Vec<Vec<String>> {
    assert!(kinds > 0 && groups > 0, "BUILD_COST_KINDS and BUILD_COST_GROUPS must be positive");
    let per_group = kinds.div_ceil(groups.min(kinds));
    (0..kinds.div_ceil(per_group))
        .map(|g| (0..per_group.min(kinds - g * per_group)).map(|k| format!("Kind{g}x{k}")).collect())
        .collect()
}

// ---------------------------------------------------------------- sources

/// The kube-derive twin of [`kind_source`]: the same fields, validations as
/// schemars attributes, the kind generated by `CustomResource`.
fn twin_kind(name: &str, group: &str, pod_template: bool) -> String {
    let template = if pod_template {
        "    /// The pods to run.\n    pub template: k8s_openapi::api::core::v1::PodTemplateSpec,\n"
    } else {
        ""
    };
    format!(
        r##"
/// Desired state of {name}.
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "{group}.example.com",
    version = "v1",
    kind = "{name}",
    namespaced,
    status = "{name}Status",
    printcolumn = r#"{{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}}"#
)]
#[serde(rename_all = "camelCase")]
pub struct {name}Spec {{
    /// Replicas.
    #[schemars(range(min = 0, max = 100))]
    pub replicas: i32,
    /// Image.
    #[schemars(length(min = 1), regex(pattern = "^[a-z0-9./:-]+$"))]
    pub image: String,
    /// Labels.
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Ports.
    #[serde(default)]
    pub ports: Vec<{name}Port>,
    /// Timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i64>,
{template}}}

/// A port.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct {name}Port {{
    /// Name.
    pub name: String,
    /// Number.
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,
}}

/// Observed state of {name}.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct {name}Status {{
    /// Ready replicas.
    #[serde(default)]
    pub ready_replicas: i32,
}}
"##
    )
}

/// The value of `name = ...` in the workspace's `[workspace.dependencies]`.
fn workspace_dep(ws: &Path, name: &str) -> String {
    let manifest = std::fs::read_to_string(ws.join("Cargo.toml")).expect("workspace Cargo.toml");
    manifest
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} = ")))
        .unwrap_or_else(|| panic!("`{name}` is not a workspace dependency"))
        .to_string()
}

/// `spec` (a dependency table) with `extra` features in front.
fn with_features(spec: &str, extra: &[&str]) -> String {
    let extra: String = extra.iter().map(|f| format!("\"{f}\", ")).collect();
    assert!(spec.contains("features = ["), "no feature list in `{spec}`");
    spec.replacen("features = [", &format!("features = [{extra}"), 1)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create dirs");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn manifest(name: &str, deps: &str, profile: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n[dependencies]\n{deps}{profile}"
    )
}

/// The `[profile.*]` sections of the workspace's Cargo.toml.
fn workspace_profiles(ws: &Path) -> String {
    let manifest = std::fs::read_to_string(ws.join("Cargo.toml")).expect("workspace Cargo.toml");
    let mut out = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    if out.is_empty() { out } else { format!("\n{}", out.trim_end()) + "\n" }
}

/// What the generator lists of a stage produce, for the `usage` module.
struct Generated {
    client: bool,
    informer: bool,
    /// The `usage` only decodes each kind ([`FLOOR`]).
    decode_only: bool,
}

impl Generated {
    fn of(generators: &str) -> Self {
        let has = |g: &str| generators == "all" || generators.split(',').any(|x| x.trim() == g);
        Generated { client: has("client") || has("fake"), informer: has("informer"), decode_only: false }
    }

    /// The [`FLOOR`] stage's.
    fn floor() -> Self {
        Generated { client: false, informer: false, decode_only: true }
    }
}

const POLL_ONCE: &str = "/// Polls `f` once, as a spawned task's first poll would: instantiates the\n/// future's code.\nfn poll_once<F: Future>(f: F) -> bool {\n    let mut f = std::pin::pin!(f);\n    f.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop())).is_ready()\n}\n";

/// The `usage` module of `ours`: what a user crate instantiates.
fn ours_usage(groups: &[Vec<String>], generated: &Generated) -> String {
    let mut s = String::from("//! A user of the generated code.\n#![allow(clippy::all)]\n");
    if generated.decode_only {
        s.push_str("\n/// Decodes `json` as every kind in turn.\npub fn decode_all(json: &str) -> usize {\n    let mut n = 0;\n");
        for (g, kinds) in groups.iter().enumerate() {
            for kind in kinds {
                let _ = writeln!(
                    s,
                    "    n += serde_json::from_str::<crate::apis::group{g}::v1::{kind}>(json).map_or(0, |o| o.spec.ports.len());"
                );
            }
        }
        s.push_str("    n\n}\n");
        return s;
    }
    if !generated.client && !generated.informer {
        s.push_str("\n/// Nothing generated to use beyond the types.\npub fn poll_all(_client: kube::Client) -> usize {\n    0\n}\n");
        return s;
    }
    s.push_str("use futures::StreamExt as _;\n");
    if generated.client {
        s.push_str("use crate::client::clientset::Clientset;\n");
    }
    if generated.informer {
        s.push_str("use crate::client::informers::SharedInformerFactory;\n");
    }
    s.push('\n');
    s.push_str(POLL_ONCE);
    let (mut params, mut args) = (Vec::new(), Vec::new());
    if generated.client {
        params.push("cs: &Clientset");
        args.push("&cs");
    }
    if generated.informer {
        params.push("factory: &SharedInformerFactory");
        args.push("&factory");
    }
    let (params, args) = (params.join(", "), args.join(", "));
    let mut calls = String::new();
    for (g, kinds) in groups.iter().enumerate() {
        for kind in kinds {
            let f = kind.to_lowercase();
            let plural = format!("{f}s");
            let _ = writeln!(s, "\n/// Uses the `{kind}` client, informer and lister.");
            let _ =
                writeln!(s, "pub async fn use_{f}({params}) -> codegen_runtime::Result<usize> {{\n    let mut n = 0;");
            if generated.client {
                let _ = write!(
                    s,
                    r#"    let client = cs.group{g}_v1().{plural}("default");
    n += client.list(&codegen_runtime::client::ListOptions::default()).await?.items.len();
    n += client.get("name", &codegen_runtime::client::GetOptions::default()).await?.spec.ports.len();
    let mut events = client.watch(&codegen_runtime::client::ListOptions::default()).await?;
    n += usize::from(events.next().await.is_some());
"#
                );
            }
            if generated.informer {
                let _ = write!(
                    s,
                    r#"    let informer = factory.group{g}().v1().{plural}();
    n += usize::from(informer.informer().has_synced());
    let lister = informer.lister();
    n += lister.list(&codegen_runtime::lister::everything()).len();
    n += usize::from(lister.{plural}("default").get("name").is_some());
"#
                );
            }
            s.push_str("    Ok(n)\n}\n");
            let _ = writeln!(calls, "    n += usize::from(poll_once(use_{f}({args})));");
        }
    }
    s.push_str("\n/// Polls every kind's use once.\npub fn poll_all(client: kube::Client) -> usize {\n");
    if generated.client {
        s.push_str("    let cs = Clientset::new(client.clone());\n");
    }
    if generated.informer {
        s.push_str("    let factory = SharedInformerFactory::new(client.clone(), None);\n");
    }
    s.push_str("    let _ = client;\n    let mut n = 0;\n");
    s.push_str(&calls);
    if generated.informer {
        s.push_str("    factory.start();\n    n += usize::from(poll_once(factory.wait_for_cache_sync()));\n");
    }
    s.push_str("    n\n}\n");
    s
}

fn twin_usage(groups: &[Vec<String>]) -> String {
    let mut s = String::from(
        "//! A user of the kube-derive types: `Api<K>` per kind.\n#![allow(clippy::all)]\nuse futures::{StreamExt as _, TryStreamExt as _};\nuse kube::CustomResourceExt as _;\nuse kube::api::{Api, ListParams, WatchParams};\nuse k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;\n\n",
    );
    s.push_str(POLL_ONCE);
    let (mut calls, mut crds) = (String::new(), String::new());
    for (g, kinds) in groups.iter().enumerate() {
        for kind in kinds {
            let f = kind.to_lowercase();
            let _ = write!(
                s,
                r#"
/// Uses `Api<{kind}>`.
pub async fn use_{f}(client: kube::Client) -> kube::Result<usize> {{
    let api: Api<crate::apis::group{g}::v1::{kind}> = Api::namespaced(client, "default");
    let mut n = api.list(&ListParams::default()).await?.items.len();
    n += api.get("name").await?.spec.ports.len();
    let mut events = api.watch(&WatchParams::default(), "0").await?.boxed();
    n += usize::from(events.try_next().await?.is_some());
    Ok(n)
}}
"#
            );
            let _ = writeln!(calls, "    n += usize::from(poll_once(use_{f}(client.clone())));");
            let _ = writeln!(crds, "        crate::apis::group{g}::v1::{kind}::crd(),");
        }
    }
    let _ = write!(
        s,
        "\n/// Polls every kind's use once.\npub fn poll_all(client: kube::Client) -> usize {{\n    let mut n = 0;\n{calls}    n\n}}\n\n/// Every kind's CRD.\npub fn crds() -> Vec<CustomResourceDefinition> {{\n    vec![\n{crds}    ]\n}}\n"
    );
    s
}

/// Writes `ours` (types, `kube-codegen <generators>` output, usage) into `dir`.
/// `generated` says what the `usage` module uses.
fn write_ours(dir: &Path, cfg: &Config, name: &str, generators: &str, generated: &Generated) {
    let _ = std::fs::remove_dir_all(dir.join("src"));
    let mut args: Vec<String> = vec![generators.into(), "src/apis".into()];
    args.extend(write_apis(dir, cfg));
    run_generator(dir, &args, "src/client", "crate::apis");
    let client = if dir.join("src/client/mod.rs").is_file() { "#[rustfmt::skip]\npub mod client;\n" } else { "" };
    write(
        &dir.join("src/lib.rs"),
        &format!(
            "//! Build-cost benchmark crate: kube-codegen output.\n#![allow(missing_docs)]\npub mod apis;\n{client}pub mod usage;\n"
        ),
    );
    write(&dir.join("src/usage.rs"), &ours_usage(&cfg.groups, generated));
    write(&dir.join("Cargo.toml"), &manifest(name, &ours_deps(cfg), &cfg.profile));
    copy_lock(&cfg.ws, dir);
}

/// Writes `ours` as three crates under `dir`, the layout of
/// docs/layout.md for big API trees: `ours_types` (the annotated types and
/// their register code), `ours_client` (what `kube-codegen all` writes,
/// with `--apis-module ours_types::apis`) and `ours_app` (the usage
/// module). The crate measured is `ours_app`: building it builds the other
/// two, one after the other.
fn write_split(dir: &Path, cfg: &Config) {
    for c in ["types", "client", "app"] {
        let _ = std::fs::remove_dir_all(dir.join(c).join("src"));
    }
    let mut args: Vec<String> = vec!["all".into(), "types/src/apis".into()];
    args.extend(write_apis(&dir.join("types"), cfg));
    run_generator(dir, &args, "client/src/client", "ours_types::apis");
    write(
        &dir.join("types/src/lib.rs"),
        "//! Build-cost benchmark crate: the API types.\n#![allow(missing_docs)]\npub mod apis;\n",
    );
    write(
        &dir.join("client/src/lib.rs"),
        "//! Build-cost benchmark crate: the generated clients.\n#![allow(missing_docs)]\n#[rustfmt::skip]\npub mod client;\n",
    );
    write(
        &dir.join("app/src/lib.rs"),
        "//! Build-cost benchmark crate: a user of the clients.\n#![allow(missing_docs)]\npub mod usage;\n",
    );
    let usage =
        ours_usage(&cfg.groups, &Generated::of("all")).replace("use crate::client::", "use ours_client::client::");
    write(&dir.join("app/src/usage.rs"), &usage);
    let deps = ours_deps(cfg);
    let path = |c: &str| format!("ours_{c} = {{ path = \"../{c}\" }}\n");
    write(&dir.join("types/Cargo.toml"), &manifest("ours_types", &deps, &cfg.profile));
    write(&dir.join("client/Cargo.toml"), &manifest("ours_client", &(path("types") + &deps), &cfg.profile));
    write(&dir.join("app/Cargo.toml"), &manifest("ours_app", &(path("types") + &path("client") + &deps), &cfg.profile));
    for c in ["types", "client", "app"] {
        copy_lock(&cfg.ws, &dir.join(c));
    }
}

/// Runs the built `kube-codegen` in `dir` with `args` (generators, apis
/// directory, `group:version`s), writing the clients to `output_dir` and the
/// CRDs to `crd/`.
fn run_generator(dir: &Path, args: &[String], output_dir: &str, apis_module: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(args)
        .args(["--output-dir", output_dir, "--crd-dir", "crd", "--apis-module", apis_module])
        .current_dir(dir)
        .output()
        .expect("run kube-codegen");
    assert!(out.status.success(), "kube-codegen {}:\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// The dependencies of the kube-codegen crates.
fn ours_deps(cfg: &Config) -> String {
    let ws = cfg.ws.to_string_lossy().replace('\\', "/");
    format!(
        "codegen-runtime = {{ path = \"{ws}/runtime\" }}\ncodegen-macros = {{ path = \"{ws}/codegen-macros\" }}\nkube = {}\nk8s-openapi = {}\nserde = {}\nserde_json = {}\nfutures = {}\n",
        workspace_dep(&cfg.ws, "kube"),
        with_features(&workspace_dep(&cfg.ws, "k8s-openapi"), &["latest"]),
        workspace_dep(&cfg.ws, "serde"),
        workspace_dep(&cfg.ws, "serde_json"),
        workspace_dep(&cfg.ws, "futures"),
    )
}

/// Writes the annotated types of the tree under `dir/src/apis`; the
/// `group:version` arguments of the generator.
fn write_apis(dir: &Path, cfg: &Config) -> Vec<String> {
    let apis = dir.join("src/apis");
    let mut mods = String::from("//! API groups.\n");
    let mut args = Vec::new();
    for (g, kinds) in cfg.groups.iter().enumerate() {
        let group = format!("group{g}");
        let mut types = String::from(
            "use codegen_macros::{ApiType, genclient};\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n",
        );
        for kind in kinds {
            types.push_str(&kind_source(kind, &KindShape { pod_template: cfg.pod_template, ..KindShape::default() }));
        }
        write(&apis.join(&group).join("v1/types.rs"), &types);
        write(
            &apis.join(&group).join("v1/mod.rs"),
            &format!(
                "//! {group}.example.com/v1\ncodegen_macros::group_name!(\"{group}.example.com\");\nmod types;\npub use types::*;\n#[rustfmt::skip]\nmod register;\npub use register::*;\n"
            ),
        );
        write(&apis.join(&group).join("mod.rs"), &format!("//! {group}.example.com\npub mod v1;\n"));
        let _ = writeln!(mods, "pub mod {group};");
        args.push(format!("{group}:v1"));
    }
    write(&apis.join("mod.rs"), &mods);
    args
}

/// Writes the kube-derive twin into `dir`.
fn write_twin(dir: &Path, cfg: &Config, name: &str) {
    let _ = std::fs::remove_dir_all(dir.join("src"));
    let apis = dir.join("src/apis");
    let mut mods = String::from("//! API groups.\n");
    for (g, kinds) in cfg.groups.iter().enumerate() {
        let group = format!("group{g}");
        let mut types = String::from(
            "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n",
        );
        for kind in kinds {
            types.push_str(&twin_kind(kind, &group, cfg.pod_template));
        }
        write(&apis.join(&group).join("v1/types.rs"), &types);
        write(
            &apis.join(&group).join("v1/mod.rs"),
            &format!("//! {group}.example.com/v1\nmod types;\npub use types::*;\n"),
        );
        write(&apis.join(&group).join("mod.rs"), &format!("//! {group}.example.com\npub mod v1;\n"));
        let _ = writeln!(mods, "pub mod {group};");
    }
    write(&apis.join("mod.rs"), &mods);
    write(
        &dir.join("src/lib.rs"),
        "//! Build-cost benchmark crate: kube-derive only.\n#![allow(missing_docs)]\npub mod apis;\npub mod usage;\n",
    );
    write(&dir.join("src/usage.rs"), &twin_usage(&cfg.groups));
    let openapi_features: &[&str] = if cfg.pod_template { &["latest", "schemars"] } else { &["latest"] };
    let deps = format!(
        "kube = {}\nk8s-openapi = {}\nschemars = \"1\"\nserde = {}\nserde_json = {}\nfutures = {}\n",
        with_features(&workspace_dep(&cfg.ws, "kube"), &["derive"]),
        with_features(&workspace_dep(&cfg.ws, "k8s-openapi"), openapi_features),
        workspace_dep(&cfg.ws, "serde"),
        workspace_dep(&cfg.ws, "serde_json"),
        workspace_dep(&cfg.ws, "futures"),
    );
    write(&dir.join("Cargo.toml"), &manifest(name, &deps, &cfg.profile));
    copy_lock(&cfg.ws, dir);
}

fn copy_lock(ws: &Path, dir: &Path) {
    std::fs::copy(ws.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
}

/// `(name, version)` of every package in a lock file.
fn locked(lock: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(lock).expect("Cargo.lock");
    let mut out = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            out.push((n, v.trim_matches('"').to_string()));
        }
    }
    out
}

/// Every package of `dir`'s lock file that the workspace also locks has one
/// of the workspace's versions.
fn check_versions(ws: &Path, dir: &Path) {
    let ours = locked(&ws.join("Cargo.lock"));
    for (name, version) in locked(&dir.join("Cargo.lock")) {
        if ours.iter().any(|(n, _)| *n == name) {
            assert!(
                ours.iter().any(|(n, v)| *n == name && *v == version),
                "{}: {name} {version} is not the workspace's version",
                dir.display()
            );
        }
    }
}

// ------------------------------------------------------------- measuring

#[derive(Clone, Copy, Default)]
struct Sample {
    wall: f64,
    cpu: f64,
    /// Bytes.
    peak_rss: f64,
}

struct Crate {
    name: String,
    dir: PathBuf,
    /// The packages built for it: itself, and for the three-crate layout
    /// the two it depends on (cleaned with it; their rlibs count).
    packages: Vec<String>,
    /// The crate holding [`EDIT_FILE`].
    edit_dir: PathBuf,
    /// The original text of [`EDIT_FILE`].
    original: String,
}

impl Crate {
    fn new(name: &str, dir: PathBuf) -> Self {
        Self::with_packages(name, dir.clone(), &[name], dir)
    }

    /// The three crates of [`write_split`] in `dir`, measured as `ours_app`.
    fn split(dir: &Path) -> Self {
        Self::with_packages("ours_app", dir.join("app"), &["ours_types", "ours_client", "ours_app"], dir.join("types"))
    }

    fn with_packages(name: &str, dir: PathBuf, packages: &[&str], edit_dir: PathBuf) -> Self {
        let original = std::fs::read_to_string(edit_dir.join(EDIT_FILE)).expect("types file");
        assert!(original.contains(EDIT_LINE), "{}: no line to edit", edit_dir.display());
        let packages = packages.iter().map(|p| p.to_string()).collect();
        Crate { name: name.into(), dir, packages, edit_dir, original }
    }

    fn cargo(&self, target: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.args(args).arg("--manifest-path").arg(self.dir.join("Cargo.toml")).env("CARGO_TARGET_DIR", target);
        // A user's defaults, whatever the bench runs under (CI turns
        // incremental off).
        for var in [
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_INCREMENTAL",
            "RUSTC_WRAPPER",
            "CARGO_BUILD_RUSTC_WRAPPER",
            "CARGO_PROFILE_DEV_DEBUG",
            "CARGO_PROFILE_DEV_INCREMENTAL",
            "CARGO_PROFILE_DEV_OPT_LEVEL",
        ] {
            c.env_remove(var);
        }
        c
    }

    /// Runs an unmeasured cargo command.
    fn run(&self, target: &Path, args: &[&str]) {
        let out = self.cargo(target, args).output().expect("run cargo");
        assert!(
            out.status.success(),
            "cargo {} ({}):\n{}",
            args.join(" "),
            self.dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs a cargo command in a child process of its own and measures it.
    fn measure(&self, target: &Path, args: &[&str]) -> Sample {
        let log = self.dir.join("cargo.log");
        let stderr = std::fs::File::create(&log).expect("log file");
        let start = Instant::now();
        let child = self.cargo(target, args).stdout(Stdio::null()).stderr(stderr).spawn().expect("spawn cargo");
        let (status, usage) = wait4(child);
        let wall = start.elapsed().as_secs_f64();
        assert!(
            status == 0,
            "cargo {} ({}) failed ({status}):\n{}",
            args.join(" "),
            self.dir.display(),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Sample {
            wall,
            cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
            // Linux reports KiB.
            peak_rss: usage.ru_maxrss as f64 * 1024.0,
        }
    }

    /// Removes the crate's own artifacts (dependencies stay).
    fn clean(&self, target: &Path) {
        let mut args = vec!["clean", "--offline"];
        for p in &self.packages {
            args.extend(["-p", p]);
        }
        self.run(target, &args);
        // The incremental state too, should `clean -p` leave it.
        if let Ok(entries) = std::fs::read_dir(target.join("debug/incremental")) {
            for entry in entries.flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                if file.rsplit_once('-').is_some_and(|(crate_name, _)| self.packages.iter().any(|p| p == crate_name)) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
    }

    fn rlib_size(&self, target: &Path) -> f64 {
        self.packages
            .iter()
            .map(|p| {
                // Cargo copies only the crate built to `debug/`; all of them
                // are in `debug/deps/`, with a hash (the newest is this build's).
                let prefix = format!("lib{p}-");
                let deps = target.join("debug/deps");
                std::fs::read_dir(&deps)
                    .unwrap_or_else(|e| panic!("{}: {e}", deps.display()))
                    .flatten()
                    .filter(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        name.starts_with(&prefix) && name.ends_with(".rlib")
                    })
                    .filter_map(|e| e.metadata().ok())
                    .max_by_key(|m| m.modified().ok())
                    .unwrap_or_else(|| panic!("no {prefix}*.rlib in {}", deps.display()))
                    .len() as f64
            })
            .sum()
    }

    fn set_types(&self, text: &str) {
        write(&self.edit_dir.join(EDIT_FILE), text);
    }

    fn edited(&self, tag: &str) -> String {
        self.original.replacen(
            EDIT_LINE,
            &format!("    #[serde(default, alias = \"readyReplicas{tag}\")]\n    pub ready_replicas: i32,"),
            1,
        )
    }
}

/// Waits for `pid`; its exit status (0: success) and resource usage,
/// which includes the children it waited for (cargo's rustc).
fn wait4(child: std::process::Child) -> (i32, libc::rusage) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: a zeroed `rusage` is valid; `wait4` fills it and `status`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our child, not reaped by anyone else (`child`
        // is never waited on through std); the pointers are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        assert!(err.kind() == std::io::ErrorKind::Interrupted, "wait4: {err}");
    }
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    (code, usage)
}

/// One crate's figures of one round.
#[derive(Clone, Copy, Default)]
struct Round {
    clean: Sample,
    rlib: f64,
    edit: Sample,
    check: Sample,
}

const BUILD: &[&str] = &["build", "--offline", "--locked", "--lib"];
const CHECK: &[&str] = &["check", "--offline", "--locked", "--lib"];

/// Clean build; unmeasured check; one-line edit; rebuild; check.
fn full_round(c: &Crate, target: &Path, tag: &str) -> Round {
    c.set_types(&c.original);
    c.clean(target);
    let clean = c.measure(target, BUILD);
    let rlib = c.rlib_size(target);
    c.run(target, CHECK);
    c.set_types(&c.edited(tag));
    let edit = c.measure(target, BUILD);
    let check = c.measure(target, CHECK);
    Round { clean, rlib, edit, check }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

fn secs(s: f64) -> String {
    format!("{s:.1} s")
}

fn gb(b: f64) -> String {
    format!("{:.2} GB", b / 1e9)
}

fn mib(b: f64) -> String {
    format!("{:.0} MiB", b / (1024.0 * 1024.0))
}

/// Prepares a crate: its first build (dependencies; the twin may add
/// kube-derive and schemars to its lock file here), checked versions.
fn prepare(c: &Crate, ws: &Path, target: &Path) {
    eprintln!("build_cost: first build of {} (dependencies)", c.name);
    let start = Instant::now();
    c.run(target, &["build", "--lib"]);
    c.run(target, &["check", "--offline", "--lib"]);
    check_versions(ws, &c.dir);
    eprintln!("build_cost: {} ready in {:.0} s", c.name, start.elapsed().as_secs_f64());
}

fn compare(cfg: &Config, target: &Path) -> Option<Round> {
    let ours = {
        let dir = cfg.work.join("ours");
        write_ours(&dir, cfg, "ours", "all", &Generated::of("all"));
        Crate::new("ours", dir)
    };
    let twin = {
        let dir = cfg.work.join("kube_derive");
        write_twin(&dir, cfg, "kube_derive");
        Crate::new("kube_derive", dir)
    };
    let split = {
        let dir = cfg.work.join("ours_split");
        write_split(&dir, cfg);
        Crate::split(&dir)
    };
    let crates = [&ours, &twin, &split];
    for c in crates {
        prepare(c, &cfg.ws, target);
    }
    eprintln!("build_cost: warm-up round");
    for c in crates {
        full_round(c, target, "Warm");
    }
    // Per round: ours, kube-derive, ours in three crates; the order
    // rotates every round.
    let mut rounds: Vec<[Round; 3]> = Vec::new();
    for r in 0..cfg.rounds {
        let tag = format!("R{r}");
        let mut round = [Round::default(); 3];
        for k in 0..3 {
            let i = (k + r) % 3;
            round[i] = full_round(crates[i], target, &tag);
        }
        eprintln!(
            "build_cost: round {}/{}: clean {:.1} / {:.1} / {:.1} s, edit {:.1} / {:.1} / {:.1} s, check {:.1} / {:.1} / {:.1} s (ours / kube-derive / ours in three crates)",
            r + 1,
            cfg.rounds,
            round[0].clean.wall,
            round[1].clean.wall,
            round[2].clean.wall,
            round[0].edit.wall,
            round[1].edit.wall,
            round[2].edit.wall,
            round[0].check.wall,
            round[1].check.wall,
            round[2].check.wall
        );
        rounds.push(round);
    }
    if !cfg.keep {
        for c in crates {
            c.clean(target);
        }
    }
    let kinds = cfg.groups.iter().map(Vec::len).sum::<usize>();
    let tree = format!(
        "{kinds} kinds in {} groups{}, {} rounds (order rotating) after a warm-up, medians; ratio = median of the per-round ratios to kube-derive",
        cfg.groups.len(),
        if cfg.pod_template { ", each spec with a PodTemplateSpec" } else { "" },
        cfg.rounds
    );
    println!("\nBuild of the user crate, {tree}:\n");
    print_table(&rounds, 0, "kube-codegen output");
    println!(
        "\nThe same, with the generated code in a crate of its own (`ours_types`: types and register code; `ours_client`: the generated clients; `ours_app`: the usage module; each build is of `ours_app` and the crates it needs, the peak is the largest rustc's), {tree}:\n"
    );
    print_table(&rounds, 2, "kube-codegen, three crates");
    let median_round = |side: usize| Round {
        clean: Sample {
            wall: median(rounds.iter().map(|p| p[side].clean.wall).collect()),
            cpu: median(rounds.iter().map(|p| p[side].clean.cpu).collect()),
            peak_rss: median(rounds.iter().map(|p| p[side].clean.peak_rss).collect()),
        },
        rlib: median(rounds.iter().map(|p| p[side].rlib).collect()),
        ..Round::default()
    };
    Some(median_round(1))
}

/// The comparison table of variant `ours` (an index into each round)
/// against kube-derive's (index 1).
fn print_table(rounds: &[[Round; 3]], ours: usize, label: &str) {
    /// Label, figure, its display, target.
    type Row = (&'static str, fn(&Round) -> f64, fn(f64) -> String, &'static str);
    let rows: [Row; 10] = [
        ("clean build, wall", |r| r.clean.wall, secs, "≤ ×1.5"),
        ("clean build, CPU", |r| r.clean.cpu, secs, ""),
        ("clean build, rustc peak RSS", |r| r.clean.peak_rss, gb, "≤ 1 GB (ours)"),
        ("rlib after the clean build", |r| r.rlib, mib, ""),
        ("rebuild after a one-line edit, wall", |r| r.edit.wall, secs, "≤ ×1.2"),
        ("rebuild after a one-line edit, CPU", |r| r.edit.cpu, secs, ""),
        ("rebuild after a one-line edit, rustc peak RSS", |r| r.edit.peak_rss, gb, "≤ 1 GB (ours)"),
        ("`cargo check` after the edit, wall", |r| r.check.wall, secs, ""),
        ("`cargo check` after the edit, CPU", |r| r.check.cpu, secs, ""),
        ("`cargo check` after the edit, rustc peak RSS", |r| r.check.peak_rss, gb, ""),
    ];
    println!("| figure | {label} | kube-derive only | ratio | target |");
    println!("| --- | --- | --- | --- | --- |");
    for (row, metric, show, target_text) in rows {
        let a = median(rounds.iter().map(|r| metric(&r[ours])).collect());
        let b = median(rounds.iter().map(|r| metric(&r[1])).collect());
        let ratio = median(rounds.iter().map(|r| metric(&r[ours]) / metric(&r[1])).collect());
        let verdict = match target_text {
            "≤ ×1.5" => Some(ratio <= 1.5),
            "≤ ×1.2" => Some(ratio <= 1.2),
            "≤ 1 GB (ours)" => Some(a <= 1e9),
            _ => None,
        };
        let target_cell = match verdict {
            Some(ok) => format!("{target_text}: {}", if ok { "met" } else { "**not met**" }),
            None => String::new(),
        };
        println!("| {row} | {} | {} | ×{ratio:.2} | {target_cell} |", show(a), show(b));
    }
}

/// What the `usage` of stage `i` of [`STAGES`] uses.
fn stage_usage(i: usize, generators: &str) -> Generated {
    if STAGES[i].0 == FLOOR { Generated::floor() } else { Generated::of(generators) }
}

fn stages(cfg: &Config, target: &Path, rounds: usize, twin: Option<Round>) {
    let crates: Vec<(&str, &str, Crate)> = STAGES
        .iter()
        .enumerate()
        .map(|(i, (label, generators))| {
            let name = format!("ours_stage{i}");
            let dir = cfg.work.join(&name);
            write_ours(&dir, cfg, &name, generators, &stage_usage(i, generators));
            (*label, *generators, Crate::new(&name, dir))
        })
        .collect();
    // The dependencies are those of `ours`; one check builds what is missing.
    prepare(&crates[0].2, &cfg.ws, target);
    crates[0].2.clean(target);
    let mut samples: Vec<Vec<(Sample, f64)>> = vec![Vec::new(); crates.len()];
    for r in 0..rounds {
        for k in 0..crates.len() {
            // Rotate the order every round.
            let i = (k + r) % crates.len();
            let c = &crates[i].2;
            c.clean(target);
            let s = c.measure(target, BUILD);
            let rlib = c.rlib_size(target);
            // One stage's artifacts at a time on the disk.
            c.clean(target);
            eprintln!(
                "build_cost: stage round {}/{rounds}: {}: {:.1} s CPU, {:.1} s wall, {}, {}",
                r + 1,
                crates[i].0,
                s.cpu,
                s.wall,
                gb(s.peak_rss),
                mib(rlib)
            );
            samples[i].push((s, rlib));
        }
    }
    println!(
        "\nClean build of the user crate with the generated modules added one at a time ({} rounds, order rotating, medians; `usage` uses what is generated):\n",
        rounds
    );
    println!("| generated | `kube-codegen` generators | CPU | wall | rustc peak RSS | rlib | CPU added |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut previous = None;
    for ((label, generators, _), samples) in crates.iter().zip(samples) {
        let cpu = median(samples.iter().map(|(s, _)| s.cpu).collect());
        let wall = median(samples.iter().map(|(s, _)| s.wall).collect());
        let rss = median(samples.iter().map(|(s, _)| s.peak_rss).collect());
        let rlib = median(samples.iter().map(|(_, r)| *r).collect());
        let added = previous.map(|p: f64| format!("{:+.1} s", cpu - p)).unwrap_or_default();
        println!(
            "| {label} | `{generators}` | {} | {} | {} | {} | {added} |",
            secs(cpu),
            secs(wall),
            gb(rss),
            mib(rlib)
        );
        previous = Some(cpu);
    }
    if let Some(t) = twin {
        println!(
            "| kube-derive only (from the comparison) | – | {} | {} | {} | {} | |",
            secs(t.clean.cpu),
            secs(t.clean.wall),
            gb(t.clean.peak_rss),
            mib(t.rlib)
        );
    }
}

fn config(smoke: bool) -> Config {
    let ws = std::env::var_os("BUILD_COST_WORKSPACE").map(PathBuf::from).unwrap_or_else(workspace);
    let (kinds, groups) =
        if smoke { (3, 2) } else { (env_usize("BUILD_COST_KINDS", 100), env_usize("BUILD_COST_GROUPS", 10)) };
    let stages = match std::env::var("BUILD_COST_STAGES").as_deref() {
        Ok("only") => Some(true),
        Ok(v) if !v.is_empty() && v != "0" => Some(false),
        _ => None,
    };
    let work = match std::env::var_os("BUILD_COST_DIR") {
        Some(d) => PathBuf::from(d),
        None => std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| ws.join("target"))
            .join("codegen-compile-tests/bench-build-cost"),
    };
    Config {
        groups: tree(kinds, groups),
        pod_template: env_flag("BUILD_COST_POD_TEMPLATE"),
        rounds: env_usize("BUILD_COST_ROUNDS", 5).max(1),
        stages: stages.map(|_| env_usize("BUILD_COST_STAGE_ROUNDS", 3).max(1)),
        compare: stages != Some(true),
        profile: match std::env::var("BUILD_COST_PROFILE").as_deref() {
            Ok("cargo") => String::new(),
            Ok("workspace") | Err(_) => workspace_profiles(&ws),
            Ok(other) => panic!("BUILD_COST_PROFILE={other}: `workspace` or `cargo`"),
        },
        keep: env_flag("BUILD_COST_KEEP"),
        work,
        ws,
    }
}

/// Under `cargo test`: both crates of a small tree are written and the
/// generator runs for every stage; nothing is built.
fn smoke() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(true);
    cfg.work = tmp.path().to_path_buf();
    for (i, (_, generators)) in STAGES.iter().enumerate() {
        let dir = cfg.work.join(format!("ours_stage{i}"));
        let generated = stage_usage(i, generators);
        write_ours(&dir, &cfg, &format!("ours_stage{i}"), generators, &generated);
        let usage = std::fs::read_to_string(dir.join("src/usage.rs")).expect("usage.rs");
        assert_eq!(
            usage.contains("serde_json::from_str::<crate::apis::group1::v1::Kind1x0>(json)"),
            generated.decode_only,
            "{usage}"
        );
        assert_eq!(dir.join("src/client/informers").is_dir(), generated.informer, "{generators}");
        assert_eq!(usage.contains("factory.group1().v1().kind1x0s()"), generated.informer, "{usage}");
        assert_eq!(usage.contains("cs.group1_v1().kind1x0s(\"default\")"), generated.client, "{usage}");
        let c = Crate::new("ours", dir);
        assert_eq!(c.edited("T").matches(EDIT_LINE).count() + 1, c.original.matches(EDIT_LINE).count());
    }
    let dir = cfg.work.join("ours_split");
    write_split(&dir, &cfg);
    let usage = std::fs::read_to_string(dir.join("app/src/usage.rs")).expect("usage.rs");
    assert!(usage.contains("use ours_client::client::clientset::Clientset;"), "{usage}");
    let client = std::fs::read_to_string(dir.join("client/src/client/clientset/group1/v1/kind1x0.rs")).expect("client");
    assert!(client.contains("use ours_types::apis::group1::v1::Kind1x0;"), "{client}");
    let c = Crate::split(&dir);
    assert_eq!(c.packages, ["ours_types", "ours_client", "ours_app"]);
    let dir = cfg.work.join("kube_derive");
    write_twin(&dir, &cfg, "kube_derive");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains("[profile.dev]\ndebug = "), "{manifest}");
    let c = Crate::new("kube_derive", dir);
    assert!(
        std::fs::read_to_string(c.dir.join("src/usage.rs"))
            .expect("usage")
            .contains("Api<crate::apis::group1::v1::Kind1x0>")
    );
    assert_eq!(tree(100, 10).iter().map(Vec::len).collect::<Vec<_>>(), [10; 10]);
    assert_eq!(tree(5, 10).len(), 5);
    assert_eq!(tree(7, 3).iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
    println!("build_cost: smoke run passed (`cargo bench -p codegen-cli --bench build_cost` measures)");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        smoke();
        return;
    }
    let cfg = config(false);
    let target = cfg.work.join("target");
    std::fs::create_dir_all(&cfg.work).expect("work dir");
    let rustc =
        Command::new("rustc").arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    eprintln!(
        "build_cost: {} kinds in {} groups, {} rounds, work dir {} ({}, {} cores)",
        cfg.groups.iter().map(Vec::len).sum::<usize>(),
        cfg.groups.len(),
        cfg.rounds,
        cfg.work.display(),
        rustc.unwrap_or_default(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let twin = if cfg.compare { compare(&cfg, &target) } else { None };
    if let Some(rounds) = cfg.stages {
        stages(&cfg, &target, rounds, twin);
    }
}
