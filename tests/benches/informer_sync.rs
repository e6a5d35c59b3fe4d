//! Initial sync of 10,000 custom objects from a real kube-apiserver:
//! codegen-runtime's `SharedIndexInformer` (paged lists, and the server's
//! streaming list) next to kube's `reflector` + `Store` over the same
//! objects in the same run.
//!
//! `cargo bench -p kube-codegen-tests --bench informer_sync`
//!
//! Each measurement runs in its own child process (this binary re-executed
//! with `--child`) so that peak RSS (`VmHWM`) belongs to one sync only. The
//! two variants alternate, and the medians and their ratios are printed.
//! Targets: informer sync time ≤ 1.1× the reflector's, peak RSS ≤ 1.2×.

use std::borrow::Cow;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use codegen_runtime::informer::{InformerConfig, ResourceEventHandlerFuncs, SharedIndexInformer};
use codegen_testenv::TestEnv;
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::NamespaceResourceScope;
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use serde::{Deserialize, Serialize};

const GROUP: &str = "bench.kube-codegen.dev";
const OBJECTS: usize = 10_000;
const ROUNDS: usize = 5;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Widget {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: WidgetSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetSpec {
    owner: String,
    replicas: i64,
    tags: Vec<String>,
}

impl kube::Resource for Widget {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Widget".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "widgets".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

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
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        let variant = args.get(pos + 1).context("--child VARIANT KUBECONFIG NAMESPACE")?;
        let kubeconfig = args.get(pos + 2).context("kubeconfig")?;
        let namespace = args.get(pos + 3).context("namespace")?;
        return child(variant, kubeconfig, namespace);
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` / test harness probes: nothing to list.
        return Ok(());
    }
    parent()
}

fn parent() -> Result<()> {
    let env = TestEnv::start()?;
    let rt = tokio::runtime::Runtime::new()?;
    let namespace = rt.block_on(async {
        let path = env.work_dir().join("widgets-crd.yaml");
        std::fs::write(&path, CRD)?;
        env.kubectl_apply_file(&path)?;
        env.wait_crd_established("widgets.bench.kube-codegen.dev", Duration::from_secs(60)).await?;
        let ns = env.create_namespace("bench").await?;
        let api: kube::Api<Widget> = kube::Api::namespaced(env.admin_client().await?, &ns);
        let started = Instant::now();
        stream::iter(0..OBJECTS)
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
        eprintln!("created {OBJECTS} widgets in {:.1?}", started.elapsed());
        anyhow::Ok(ns)
    })?;

    let exe = std::env::current_exe()?;
    let kubeconfig = env.admin_kubeconfig();
    let mut results: Vec<(&str, Vec<(f64, u64)>)> = vec![
        ("kube reflector", Vec::new()),
        ("codegen informer", Vec::new()),
        ("codegen informer + 1 handler", Vec::new()),
        ("codegen informer, streaming list", Vec::new()),
    ];
    let variants = ["reflector", "informer", "informer-handler", "informer-streaming"];
    for round in 0..=ROUNDS {
        for (i, variant) in variants.iter().enumerate() {
            let out =
                Command::new(&exe).args(["--child", variant, &kubeconfig.to_string_lossy(), &namespace]).output()?;
            if !out.status.success() {
                bail!("{variant} child failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            let line = String::from_utf8_lossy(&out.stdout);
            let mut parts = line.split_whitespace();
            let secs: f64 = parts.next().context("seconds")?.parse()?;
            let rss: u64 = parts.next().context("rss")?.parse()?;
            // Round 0 warms the server's watch cache and the page cache.
            if round > 0 {
                results[i].1.push((secs, rss));
            }
        }
    }
    println!(
        "initial sync of {OBJECTS} custom objects from kube-apiserver {} (median of {ROUNDS})",
        *codegen_testenv::KUBERNETES_VERSION
    );
    let median = |v: &Vec<(f64, u64)>| -> (f64, u64) {
        let mut t: Vec<f64> = v.iter().map(|x| x.0).collect();
        let mut r: Vec<u64> = v.iter().map(|x| x.1).collect();
        t.sort_by(f64::total_cmp);
        r.sort();
        (t[t.len() / 2], r[r.len() / 2])
    };
    let (base_t, base_r) = median(&results[0].1);
    for (name, runs) in &results {
        let (t, r) = median(runs);
        println!(
            "  {name:<30} {:>8.1} ms  peak RSS {:>7.1} MiB   time ×{:.2}  RSS ×{:.2}",
            t * 1000.0,
            r as f64 / 1024.0,
            t / base_t,
            r as f64 / base_r as f64
        );
    }
    Ok(())
}

fn child(variant: &str, kubeconfig: &str, namespace: &str) -> Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    let secs = rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
        let client = kube::Client::try_from(config)?;
        let api: kube::Api<Widget> = kube::Api::namespaced(client, namespace);
        let started = Instant::now();
        let n = match variant {
            "reflector" => {
                let (reader, writer) = reflector::store();
                let stream = reflector(writer, watcher(api, watcher::Config::default()).default_backoff());
                let task = tokio::spawn(stream.for_each(|_| async {}));
                reader.wait_until_ready().await?;
                let n = reader.len();
                task.abort();
                n
            }
            "informer" | "informer-handler" | "informer-streaming" => {
                let mut config = InformerConfig::default();
                if variant == "informer-streaming" {
                    config.watcher_config = watcher::Config::default().streaming_lists();
                }
                let informer = SharedIndexInformer::new(api, config);
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
                let registration = (variant == "informer-handler").then(|| {
                    let mut seen = 0usize;
                    informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(
                        move |_w: std::sync::Arc<Widget>, _| {
                            seen += 1;
                            if seen == OBJECTS {
                                let _ = tx.send(());
                            }
                        },
                    ))
                });
                informer.start();
                if !informer.wait_for_cache_sync().await {
                    bail!("informer did not sync");
                }
                if registration.is_some() {
                    rx.recv().await;
                }
                let n = informer.indexer().len();
                informer.shutdown().await;
                n
            }
            other => bail!("unknown variant {other}"),
        };
        if n != OBJECTS {
            bail!("{variant} cached {n} objects, expected {OBJECTS}");
        }
        anyhow::Ok(started.elapsed().as_secs_f64())
    })?;
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("VmHWM")?;
    println!("{secs} {hwm_kib}");
    Ok(())
}
