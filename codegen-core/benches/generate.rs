//! Generation speed: synthesizes an API tree of 100 kinds in 10 groups,
//! each kind embedding Kubernetes' `PodTemplateSpec` (its full schema is
//! expanded into every CRD), and times `all` on it (cold: writes
//! everything; warm: nothing changes) and `--verify` on the up-to-date tree.
//! Prints the figures. `codegen-cli/benches/vs_controller_gen.rs` compares
//! the same tree with controller-gen.
//!
//! Run with `cargo bench -p codegen-core --bench generate`.

use std::path::Path;
use std::time::{Duration, Instant};

use codegen_core::{GroupVersions, Mode, Settings};
use synthetic_kind::{KindShape, kind_source};

#[path = "../../tests/support/synthetic_kind.rs"]
mod synthetic_kind;

const GROUPS: usize = 10;
const KINDS_PER_GROUP: usize = 10;

fn synthesize(root: &Path) -> Settings {
    let apis = root.join("pkg").join("apis");
    let mut settings = Settings::new(&apis);
    for g in 0..GROUPS {
        let group = format!("group{g}");
        let dir = apis.join(&group).join("v1");
        std::fs::create_dir_all(&dir).expect("create dir");
        let mut types = String::from(
            "use codegen_macros::{ApiType, genclient};\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n",
        );
        for k in 0..KINDS_PER_GROUP {
            types.push_str(&kind_source(
                &format!("Kind{g}x{k}"),
                &KindShape { pod_template: true, mode_and_message: true, ..KindShape::default() },
            ));
        }
        std::fs::write(dir.join("types.rs"), types).expect("write types");
        std::fs::write(
            dir.join("mod.rs"),
            format!("codegen_macros::group_name!(\"{group}.example.com\");\nmod types;\npub use types::*;\nmod register;\npub use register::*;\n"),
        )
        .expect("write mod");
        settings = settings.with_group(GroupVersions { package: group, versions: vec!["v1".into()] });
    }
    settings
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = synthesize(dir.path());
    let run = |mode: Mode| match codegen_core::run(&settings, mode) {
        Ok(report) => report,
        Err(diags) => panic!("{}", codegen_core::diag::render_all(&diags)),
    };
    let start = Instant::now();
    let first = run(Mode::Write);
    let cold = start.elapsed();
    let files = first.changes.len();
    let warm = time(7, || {
        let r = run(Mode::Write);
        assert!(r.changes.is_empty());
    });
    let verify = time(7, || {
        let r = run(Mode::Verify);
        assert!(r.changes.is_empty());
    });
    let generate_only = time(7, || {
        codegen_core::generate(&settings).expect("generate");
    });
    let kinds = GROUPS * KINDS_PER_GROUP;
    let crd_bytes: usize = std::fs::read_dir(settings.crd_dir())
        .expect("crd dir")
        .map(|e| std::fs::metadata(e.expect("entry").path()).expect("metadata").len() as usize)
        .sum();
    println!("kube-codegen `all`: {kinds} kinds in {GROUPS} groups, each with a PodTemplateSpec, {files} files");
    println!("  CRD YAML written: {:.1} MiB", crd_bytes as f64 / (1024.0 * 1024.0));
    println!("  first run (writes everything):   {:>8.1} ms", cold.as_secs_f64() * 1e3);
    println!("  full run, up to date (median):   {:>8.1} ms", warm.as_secs_f64() * 1e3);
    println!(
        "  --verify, up to date (median):   {:>8.1} ms  ({:.2}x a full run)",
        verify.as_secs_f64() * 1e3,
        verify.as_secs_f64() / warm.as_secs_f64()
    );
    println!("  generate only, in memory (median): {:>6.1} ms", generate_only.as_secs_f64() * 1e3);
    let target = Duration::from_millis(500);
    println!(
        "  target < {} ms: {}",
        target.as_millis(),
        if cold <= target && warm <= target { "met" } else { "NOT met" }
    );
}
