//! Reconciles per second of the Student controller next to its client-go
//! twin (`tests/go/student-controller/`, built from Go modules and cached
//! like the test server), on one real kube-apiserver in the same run.
//!
//! `cargo bench -p student-controller --bench throughput`
//!
//! Each round and each controller: a fresh namespace with N Students
//! (default 1,000; `THROUGHPUT_STUDENTS`) created before the controller
//! starts, then the controller (2 workers, watching that namespace) is
//! started and timed until every Student has its owned ConfigMap and a
//! status for its generation — the finalizer, ConfigMap, status and Synced
//! event of each. The two alternate (who goes first swaps every round),
//! round 0 warms up, and the median of 5 rounds and the median of the
//! per-round ratios are printed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use codegen_testenv::TestEnv;
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use student_controller::pkg::apis::example::v1::{Student, StudentSpec};

const ROUNDS: usize = 5;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the Go twin into the cache, keyed by its sources, once.
fn go_twin() -> Result<PathBuf> {
    let src = crate_dir().join("../../tests/go/student-controller");
    codegen_testenv::go_program(&src, "student-controller", "the throughput benchmark runs a client-go twin and")
}

fn start(bin: &Path, kubeconfig: &Path, ns: &str) -> Result<Child> {
    Ok(Command::new(bin)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--namespace", ns, "--workers", "2"])
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?)
}

async fn create_students(client: &kube::Client, ns: &str, n: usize) -> Result<()> {
    let api: Api<Student> = Api::namespaced(client.clone(), ns);
    stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                let name = format!("s-{i:05}");
                let s = Student::new(&name, StudentSpec { name: name.clone(), school: format!("school-{}", i % 7) });
                api.create(&PostParams::default(), &s).await
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// Whether all `n` Students have a status for their generation and a
/// ConfigMap.
async fn all_done(client: &kube::Client, ns: &str, n: usize) -> Result<bool> {
    let students: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &ApiResource::erase::<Student>(&()));
    let done = students
        .list(&ListParams::default())
        .await?
        .items
        .iter()
        .filter(|s| s.data["status"]["observedGeneration"].as_i64() == s.metadata.generation)
        .count();
    if done < n {
        return Ok(false);
    }
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let lp = ListParams::default().labels("app.kubernetes.io/managed-by=student-controller");
    Ok(cms.list(&lp).await?.items.len() >= n)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let n: usize = std::env::var("THROUGHPUT_STUDENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let go = go_twin()?;
    let rust = PathBuf::from(env!("CARGO_BIN_EXE_student-controller"));
    let env = TestEnv::start()?;
    let rt = tokio::runtime::Runtime::new()?;
    let client = rt.block_on(async {
        env.kubectl_apply_file(&crate_dir().join("config/crd/example.k8s.io_students.yaml"))?;
        env.wait_crd_established("students.example.k8s.io", Duration::from_secs(60)).await?;
        env.admin_client().await
    })?;
    let kubeconfig = env.admin_kubeconfig();
    let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut ratios = Vec::new();
    for round in 0..=ROUNDS {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut this_round = [0.0; 2];
        for which in order {
            let bin = if which == 0 { &rust } else { &go };
            let secs = rt.block_on(async {
                let ns = env.create_namespace(if which == 0 { "rust" } else { "go" }).await?;
                create_students(&client, &ns, n).await?;
                let started = Instant::now();
                let mut child = start(bin, &kubeconfig, &ns)?;
                let deadline = started + Duration::from_secs(600);
                while !all_done(&client, &ns, n).await? {
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        bail!("{} did not reconcile {n} Students in 10 minutes", bin.display());
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let secs = started.elapsed().as_secs_f64();
                let _ = child.kill();
                let _ = child.wait();
                anyhow::Ok(secs)
            })?;
            this_round[which] = n as f64 / secs;
        }
        eprintln!("round {round}: Rust {:.0}/s, client-go {:.0}/s", this_round[0], this_round[1]);
        if round > 0 {
            rates[0].push(this_round[0]);
            rates[1].push(this_round[1]);
            ratios.push(this_round[0] / this_round[1]);
        }
    }
    println!("Student controller, {n} Students from start to all reconciled (2 workers), median of {ROUNDS}:");
    println!("  kube-codegen (Rust)   {:>7.1} reconciles/s", median(rates[0].clone()));
    println!("  client-go twin (Go)   {:>7.1} reconciles/s", median(rates[1].clone()));
    println!("  ratio Rust / Go       ×{:.2} (median of per-round ratios)", median(ratios));
    Ok(())
}
