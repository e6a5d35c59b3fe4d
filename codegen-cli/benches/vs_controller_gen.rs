//! kube-codegen against controller-gen on the same API types: an API tree of
//! 100 kinds in 10 groups, each kind embedding Kubernetes' PodTemplateSpec,
//! written twice — annotated Rust for kube-codegen, its Go twin with
//! kubebuilder markers for controller-gen. Both generate CRDs only, each run
//! a fresh process, alternating, 5 rounds; prints the median times, the
//! ratio, and the size of the CRDs both write (with descriptions, and with
//! `--max-desc-len 0` / `crd:maxDescLen=0`).
//!
//! Run with `cargo bench -p codegen-cli --bench vs_controller_gen`; needs
//! controller-gen (`testenv/build.sh` installs it) and the Go toolchain.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const GROUPS: usize = 10;
const KINDS_PER_GROUP: usize = 10;
const ROUNDS: usize = 5;

fn rust_kind(name: &str) -> String {
    format!(
        r#"
/// The {name} kind.
#[genclient]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(subresource(status), printcolumn(name = "Replicas", type = "integer", json_path = ".spec.replicas"))]
pub struct {name} {{
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: {name}Spec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<{name}Status>,
}}

/// Desired state of {name}.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct {name}Spec {{
    /// Replicas.
    #[validate(minimum = 0, maximum = 100)]
    pub replicas: i32,
    /// Image.
    #[validate(min_length = 1, pattern = "^[a-z0-9./:-]+$")]
    pub image: String,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The pods to run.
    pub template: PodTemplateSpec,
}}

/// Observed state of {name}.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct {name}Status {{
    /// Ready replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
}}
"#
    )
}

fn go_kind(name: &str) -> String {
    format!(
        r#"
// The {name} kind.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Replicas,type=integer,JSONPath=`.spec.replicas`
type {name} struct {{
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              {name}Spec    `json:"spec"`
	Status            *{name}Status `json:"status,omitempty"`
}}

// Desired state of {name}.
type {name}Spec struct {{
	// Replicas.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas int32 `json:"replicas"`
	// Image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9./:-]+$`
	Image string `json:"image"`
	// Labels.
	Labels map[string]string `json:"labels,omitempty"`
	// The pods to run.
	Template corev1.PodTemplateSpec `json:"template"`
}}

// Observed state of {name}.
type {name}Status struct {{
	// Ready replicas.
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
}}
"#
    )
}

/// Writes the Rust tree under `root/rust` and the Go twin under `root/go`.
fn synthesize(root: &Path, twins: &Path) -> Vec<String> {
    let mut groups = Vec::new();
    for g in 0..GROUPS {
        let group = format!("group{g}");
        let rust = root.join("rust/pkg/apis").join(&group).join("v1");
        let go = root.join("go").join(&group).join("v1");
        std::fs::create_dir_all(&rust).expect("rust dir");
        std::fs::create_dir_all(&go).expect("go dir");
        let mut rs = String::from(
            "use std::collections::BTreeMap;\nuse codegen_macros::{ApiType, genclient};\nuse k8s_openapi::api::core::v1::PodTemplateSpec;\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n",
        );
        let mut gs = String::from(
            "package v1\n\nimport (\n\tcorev1 \"k8s.io/api/core/v1\"\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n)\n",
        );
        for k in 0..KINDS_PER_GROUP {
            let name = format!("Kind{g}x{k}");
            rs.push_str(&rust_kind(&name));
            gs.push_str(&go_kind(&name));
        }
        std::fs::write(rust.join("types.rs"), rs).expect("types.rs");
        std::fs::write(
            rust.join("mod.rs"),
            format!("codegen_macros::group_name!(\"{group}.example.com\");\nmod types;\npub use types::*;\nmod register;\npub use register::*;\n"),
        )
        .expect("mod.rs");
        std::fs::write(go.join("doc.go"), format!("// +groupName={group}.example.com\npackage v1\n")).expect("doc.go");
        std::fs::write(go.join("types.go"), gs).expect("types.go");
        groups.push(format!("{group}:v1"));
    }
    // The Go twin reuses the twins module's dependencies (go.mod, go.sum).
    let module = std::fs::read_to_string(twins.join("go.mod")).expect("go.mod").replacen(
        "module kube-codegen.invalid/controller-gen-twins",
        "module kube-codegen.invalid/bench-twin",
        1,
    );
    std::fs::write(root.join("go/go.mod"), module).expect("go.mod");
    std::fs::copy(twins.join("go.sum"), root.join("go/go.sum")).expect("go.sum");
    groups
}

fn controller_gen() -> PathBuf {
    let cache = std::env::var_os("KUBE_CODEGEN_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/kube-codegen"));
    let versions = std::fs::read_to_string(workspace().join("testenv/versions.env")).expect("versions.env");
    let version = versions
        .lines()
        .find_map(|l| l.strip_prefix("CONTROLLER_GEN_VERSION="))
        .expect("CONTROLLER_GEN_VERSION in testenv/versions.env");
    let path = cache.join("tools").join(format!("controller-gen-{version}")).join("controller-gen");
    assert!(path.is_file(), "{} is missing: run testenv/build.sh", path.display());
    path
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf()
}

fn dir_size(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("crd dir")
        .map(|e| std::fs::metadata(e.expect("entry").path()).expect("meta").len() as usize)
        .sum()
}

fn timed(mut cmd: Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("running a generator");
    let elapsed = start.elapsed();
    assert!(out.status.success(), "{:?} failed:\n{}", cmd, String::from_utf8_lossy(&out.stderr));
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let groups = synthesize(root, &workspace().join("tests/controller-gen"));
    let controller_gen = controller_gen();
    let ours = |out: &Path, extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kube-codegen"));
        c.arg("crd").arg("pkg/apis").args(&groups).arg("--crd-dir").arg(out).args(extra).current_dir(root.join("rust"));
        c
    };
    let theirs = |out: &Path, option: &str| {
        let mut c = Command::new(&controller_gen);
        c.arg(option).arg("paths=./...").arg(format!("output:crd:dir={}", out.display())).current_dir(root.join("go"));
        c
    };
    // Warm-up: Go's build and module caches, the file system.
    timed(theirs(&root.join("warm-cg"), "crd"));
    timed(ours(&root.join("warm-kc"), &[]));

    let (mut kc, mut cg) = (Vec::new(), Vec::new());
    let mut ratios = Vec::new();
    for round in 0..ROUNDS {
        let a = timed(ours(&root.join(format!("kc{round}")), &[]));
        let b = timed(theirs(&root.join(format!("cg{round}")), "crd"));
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
        kc.push(a);
        cg.push(b);
    }
    ratios.sort_by(|a, b| a.total_cmp(b));
    let (kc_size, cg_size) = (dir_size(&root.join("kc0")), dir_size(&root.join("cg0")));
    timed(ours(&root.join("kc-nodesc"), &["--max-desc-len", "0"]));
    timed(theirs(&root.join("cg-nodesc"), "crd:maxDescLen=0"));
    let (kc_small, cg_small) = (dir_size(&root.join("kc-nodesc")), dir_size(&root.join("cg-nodesc")));
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!(
        "CRDs of {} kinds (each with a PodTemplateSpec), {ROUNDS} alternating rounds, fresh processes:",
        GROUPS * KINDS_PER_GROUP
    );
    println!("  kube-codegen crd   median {:>8.1} ms", median(kc).as_secs_f64() * 1e3);
    println!("  controller-gen crd median {:>8.1} ms", median(cg).as_secs_f64() * 1e3);
    println!("  ratio (median of per-round ratios): {:.3}", ratios[ratios.len() / 2]);
    println!("CRD YAML size:");
    println!(
        "  with descriptions: kube-codegen {:.2} MiB, controller-gen {:.2} MiB ({:.3}x)",
        mib(kc_size),
        mib(cg_size),
        kc_size as f64 / cg_size as f64
    );
    println!(
        "  without (maxDescLen 0): kube-codegen {:.2} MiB, controller-gen {:.2} MiB ({:.3}x)",
        mib(kc_small),
        mib(cg_small),
        kc_small as f64 / cg_small as f64
    );
}
