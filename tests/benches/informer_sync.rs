//! Initial sync of 10,000 custom objects from a real kube-apiserver:
//! codegen-runtime's `SharedIndexInformer` (paged lists, and the server's
//! streaming list) next to kube's `reflector` + `Store` and next to
//! client-go's generated informer (`tests/go/informer-sync/`, built from Go
//! modules and cached under `$KUBE_CODEGEN_CACHE/tools/`) over the same
//! objects in the same run.
//!
//! `cargo bench -p kube-codegen-tests --bench informer_sync`
//!
//! Each measurement runs in its own child process
//! (`tests/src/bin/informer_sync_child.rs`, or the Go program) so that peak
//! RSS (`VmHWM`) belongs to one sync only. The variants alternate (the
//! order rotates every round), round 0 warms up, and the medians of 5
//! rounds and the medians of the per-round ratios against client-go (paged lists; its default, the
//! streaming list; and the like-for-like client-go variant) are printed.
//! `INFORMER_SYNC_ROUNDS=N` measures N rounds instead of 5;
//! `INFORMER_SYNC_VARIANTS=informer-streaming-stripped,...` (the child's
//! variant names) measures only those Rust variants, with their client-go
//! counterparts and client-go's two list modes; and
//! `INFORMER_SYNC_COMPARE=PATH` also runs each Rust variant with the child
//! program at `PATH` (another build of `informer_sync_child`, say of the
//! commit before a change), as `... [compare]`, in the same rounds. Needs
//! the Go toolchain (`go`; `.ci/run` installs it).
//!
//! Then event delivery: in a namespace of 100 Widgets, the codegen informer
//! and client-go's (each in a fresh process, alternating) sync, say
//! `ready`, and this process sends 1,000 updates, one every 5 ms, each
//! stamped with its send time (annotation `bench.kube-codegen.dev/sent`,
//! Unix nanoseconds, taken just before the request). Each informer's update
//! handler takes the delay from send to handler (API server, watch stream,
//! decode, cache, dispatch); the first tenth is dropped (the watch warming
//! up) and p50, p99 and the largest delay of the rest are compared, medians
//! over the rounds and of the per-round ratios. `INFORMER_SYNC_ONLY=latency`
//! or `=sync` runs one part.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use codegen_testenv::TestEnv;
use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};

#[path = "informer_sync/variants.rs"]
mod variants;
#[path = "informer_sync/widget.rs"]
mod widget;

use variants::{GO_DEFAULT, GO_PAGED, Run};
use widget::{GROUP, LATENCY_UPDATES, OBJECTS, SENT_ANNOTATION, Widget, WidgetSpec};

/// Measured rounds, after a warm-up round; `INFORMER_SYNC_ROUNDS` overrides.
const ROUNDS: usize = 5;
/// The delivery benchmark: Widgets in its namespace, and the pause between
/// two updates.
const LATENCY_OBJECTS: usize = 100;
const LATENCY_INTERVAL: Duration = Duration::from_millis(5);

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.bench.kube-codegen.dev
spec:
  group: bench.kube-codegen.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              owner: {type: string}
              replicas: {type: integer}
              tags: {type: array, items: {type: string}}
"#;

fn main() -> Result<()> {
    if std::env::args().any(|a| a == "--list") {
        // `cargo bench -- --list` / test harness probes: nothing to list.
        return Ok(());
    }
    parent()
}

fn parent() -> Result<()> {
    // Before the server starts: without Go there is no baseline to compare.
    let go = go_baseline()?;
    let env = TestEnv::start()?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let path = env.work_dir().join("widgets-crd.yaml");
        std::fs::write(&path, CRD)?;
        env.kubectl_apply_file(&path)?;
        env.wait_crd_established("widgets.bench.kube-codegen.dev", Duration::from_secs(60)).await
    })?;
    let rounds = match std::env::var("INFORMER_SYNC_ROUNDS") {
        Ok(n) => n.parse().context("INFORMER_SYNC_ROUNDS")?,
        Err(_) => ROUNDS,
    };
    let only = std::env::var("INFORMER_SYNC_ONLY").unwrap_or_default();
    if only != "latency" {
        let namespace = rt.block_on(async {
            let ns = env.create_namespace("bench").await?;
            let started = Instant::now();
            create_widgets(&env, &ns, OBJECTS).await?;
            eprintln!("created {OBJECTS} widgets in {:.1?}", started.elapsed());
            anyhow::Ok(ns)
        })?;
        sync_rounds(&env, &go, &namespace, rounds)?;
    }
    if only != "sync" {
        latency_rounds(&env, &rt, &go, rounds)?;
    }
    Ok(())
}

/// Creates `count` Widgets in `ns`, 16 requests at a time.
async fn create_widgets(env: &TestEnv, ns: &str, count: usize) -> Result<()> {
    let api: kube::Api<Widget> = kube::Api::namespaced(env.admin_client().await?, ns);
    stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            async move {
                let w = Widget {
                    api_version: format!("{GROUP}/v1"),
                    kind: "Widget".into(),
                    metadata: ObjectMeta {
                        name: Some(format!("widget-{i:05}")),
                        labels: Some([("app".to_string(), format!("app-{}", i % 50))].into()),
                        ..Default::default()
                    },
                    spec: WidgetSpec {
                        owner: format!("team-{}", i % 17),
                        replicas: (i % 5) as i64,
                        tags: vec!["a".into(), "b".into(), format!("t{i}")],
                    },
                };
                api.create(&PostParams::default(), &w).await
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// The sync comparison: every variant in a fresh process, `rounds` rounds
/// after a warm-up round.
fn sync_rounds(env: &TestEnv, go: &std::path::Path, namespace: &str, rounds: usize) -> Result<()> {
    let exe = env!("CARGO_BIN_EXE_informer_sync_child");
    let kubeconfig = env.admin_kubeconfig();
    let kubeconfig = kubeconfig.to_string_lossy();
    let variants = variants::variants(
        std::env::var("INFORMER_SYNC_VARIANTS").ok().as_deref(),
        std::env::var_os("INFORMER_SYNC_COMPARE").map(PathBuf::from),
    )?;
    // Per variant, per measured round: (seconds, peak RSS in KiB).
    let mut results: Vec<Vec<(f64, u64)>> = vec![Vec::new(); variants.len()];
    for round in 0..=rounds {
        for k in 0..variants.len() {
            let i = (k + round) % variants.len();
            let mut command = match &variants[i].run {
                Run::Rust(variant, other) => {
                    let mut c = Command::new(other.as_deref().unwrap_or(std::path::Path::new(exe)));
                    c.args([variant, &*kubeconfig, namespace]);
                    c
                }
                Run::Go(args) => {
                    let mut c = Command::new(go);
                    c.args(["--kubeconfig", &kubeconfig, "--namespace", namespace, "--expect"])
                        .arg(OBJECTS.to_string())
                        .args(*args)
                        .env_remove("KUBE_FEATURE_WatchListClient");
                    c
                }
            };
            let out = command.output()?;
            let name = &variants[i].name;
            if !out.status.success() {
                bail!("{name} failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            let line = String::from_utf8_lossy(&out.stdout);
            let mut parts = line.split_whitespace();
            let secs: f64 = parts.next().context("seconds")?.parse()?;
            let rss: u64 = parts.next().context("rss")?.parse()?;
            // Round 0 warms the server's watch cache and the page cache.
            if round == 0 {
                if let Run::Go(_) = variants[i].run {
                    // Which requests client-go's reflector made.
                    eprint!("{}", String::from_utf8_lossy(&out.stderr));
                }
            } else {
                eprintln!("round {round}: {name:<46} {:>6.1} ms {:>6.1} MiB", secs * 1000.0, rss as f64 / 1024.0);
                results[i].push((secs, rss));
            }
        }
    }
    println!(
        "initial sync of {OBJECTS} custom objects from kube-apiserver {} (median of {rounds} rounds; \
         ratios are medians of per-round ratios, time / peak RSS)",
        *codegen_testenv::KUBERNETES_VERSION
    );
    println!(
        "  {:<46} {:>9} {:>10}   {:<15} {:<15} vs client-go counterpart",
        "variant", "sync", "peak RSS", "vs Go paged", "vs Go default"
    );
    let paged = variants.iter().position(|v| v.name == GO_PAGED).context("client-go paged variant")?;
    let default = variants.iter().position(|v| v.name == GO_DEFAULT).context("client-go default variant")?;
    for (i, variant) in variants.iter().enumerate() {
        let runs = &results[i];
        let time = median(runs.iter().map(|r| r.0).collect());
        let rss = median(runs.iter().map(|r| r.1 as f64).collect());
        let ratios = |base: usize| {
            let t = median(runs.iter().zip(&results[base]).map(|(r, b)| r.0 / b.0).collect());
            let m = median(runs.iter().zip(&results[base]).map(|(r, b)| r.1 as f64 / b.1 as f64).collect());
            format!("×{t:.2} / ×{m:.2}")
        };
        let counterpart = match variant.counterpart {
            Some(name) => {
                let j = variants.iter().position(|v| v.name == name).context("counterpart")?;
                format!("{} ({name})", ratios(j))
            }
            None => String::new(),
        };
        println!(
            "  {:<46} {:>6.1} ms {:>6.1} MiB   {:<15} {:<15} {counterpart}",
            &variant.name,
            time * 1000.0,
            rss / 1024.0,
            ratios(paged),
            ratios(default),
        );
    }
    Ok(())
}

/// The delivery comparison: the codegen informer and client-go's, each in
/// a fresh process per round, alternating, while this process sends the
/// updates.
fn latency_rounds(env: &TestEnv, rt: &tokio::runtime::Runtime, go: &std::path::Path, rounds: usize) -> Result<()> {
    let exe = env!("CARGO_BIN_EXE_informer_sync_child");
    let kubeconfig = env.admin_kubeconfig();
    let kubeconfig = kubeconfig.to_string_lossy();
    let (namespace, api) = rt.block_on(async {
        let ns = env.create_namespace("latency").await?;
        create_widgets(env, &ns, LATENCY_OBJECTS).await?;
        let api: kube::Api<Widget> = kube::Api::namespaced(env.admin_client().await?, &ns);
        anyhow::Ok((ns, api))
    })?;
    let updates = LATENCY_UPDATES.to_string();
    let names = ["codegen informer", "client-go, default"];
    // Per variant, per measured round: (p50, p99, max) in µs.
    let mut results: Vec<Vec<[f64; 3]>> = vec![Vec::new(); names.len()];
    for round in 0..=rounds {
        for k in 0..names.len() {
            let i = (k + round) % names.len();
            let mut command = if i == 0 {
                let mut c = Command::new(exe);
                c.args(["latency", &kubeconfig, &namespace]);
                c
            } else {
                let mut c = Command::new(go);
                c.args(["--kubeconfig", &kubeconfig, "--namespace", &namespace, "--expect"])
                    .arg(LATENCY_OBJECTS.to_string())
                    .args(["--list", "default", "--latency", &updates])
                    .env_remove("KUBE_FEATURE_WatchListClient");
                c
            };
            let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
            let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
            let failed = |child: std::process::Child| -> anyhow::Error {
                let out = child.wait_with_output().map(|o| String::from_utf8_lossy(&o.stderr).into_owned());
                anyhow::anyhow!("{} failed: {}", names[i], out.unwrap_or_default())
            };
            match lines.next() {
                Some(Ok(line)) if line == "ready" => {}
                _ => return Err(failed(child)),
            }
            rt.block_on(send_updates(&api, round))?;
            let figures: Vec<f64> = match lines.next() {
                Some(Ok(line)) => line.split_whitespace().map(str::parse).collect::<Result<_, _>>()?,
                _ => return Err(failed(child)),
            };
            let status = child.wait()?;
            let [p50, p99, max] = figures[..] else { bail!("{}: expected p50 p99 max, got {figures:?}", names[i]) };
            if !status.success() {
                bail!("{} exited with {status}", names[i]);
            }
            if round > 0 {
                eprintln!("round {round}: {:<20} p50 {p50:>8.1} µs  p99 {p99:>8.1} µs  max {max:>8.1} µs", names[i]);
                results[i].push([p50, p99, max]);
            }
        }
    }
    println!(
        "watch event → update handler, {LATENCY_UPDATES} updates at one per {LATENCY_INTERVAL:?}, first tenth \
         dropped (median of {rounds} rounds; ratios are medians of per-round ratios against client-go)"
    );
    println!("  {:<20} {:>10} {:>10} {:>10}   vs client-go p50 / p99 / max", "informer", "p50", "p99", "max");
    for (i, name) in names.iter().enumerate() {
        let at = |j: usize| median(results[i].iter().map(|r| r[j]).collect());
        let ratio = |j: usize| median(results[i].iter().zip(&results[1]).map(|(r, b)| r[j] / b[j]).collect());
        println!(
            "  {name:<20} {:>7.1} µs {:>7.1} µs {:>7.1} µs   ×{:.2} / ×{:.2} / ×{:.2}",
            at(0),
            at(1),
            at(2),
            ratio(0),
            ratio(1),
            ratio(2)
        );
    }
    Ok(())
}

/// Sends [`LATENCY_UPDATES`] updates, one every [`LATENCY_INTERVAL`], each
/// to the next Widget, stamped with its send time.
async fn send_updates(api: &kube::Api<Widget>, round: usize) -> Result<()> {
    let mut tick = tokio::time::interval(LATENCY_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for j in 0..LATENCY_UPDATES {
        tick.tick().await;
        let sent = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos();
        let patch = serde_json::json!({
            "metadata": {"annotations": {SENT_ANNOTATION: sent.to_string()}},
            "spec": {"replicas": (round * LATENCY_UPDATES + j) as i64},
        });
        api.patch(&format!("widget-{:05}", j % LATENCY_OBJECTS), &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Builds the client-go baseline (`tests/go/informer-sync/`) into the
/// cache, keyed by its sources, once.
fn go_baseline() -> Result<PathBuf> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("go/informer-sync");
    codegen_testenv::go_program(&src, "informer-sync", "the informer_sync benchmark compares against client-go and")
}
