//! The child process of the informer_sync benchmark
//! (`tests/benches/informer_sync.rs`): one initial sync of the benchmark's
//! Widgets by one variant (codegen-runtime's informer in one of its
//! configurations, or kube's reflector), printing the seconds it took and
//! the process's peak RSS (`VmHWM`, KiB); or, as `latency`, the delays from
//! an update's send time to the informer's update handler.
//!
//! A binary of its own, as the client-go side is (`tests/go/informer-sync/`):
//! the peak RSS of a process counts the pages of its program that were
//! touched, and the benchmark's own code (the test server's harness, the Go
//! build, the report) is not part of what it measures.
//!
//! `informer_sync_child VARIANT KUBECONFIG NAMESPACE`

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use codegen_runtime::informer::{InformerConfig, ManagedFields, ResourceEventHandlerFuncs, SharedIndexInformer};
use futures::StreamExt;
use kube::runtime::{WatchStreamExt, reflector, watcher};

#[path = "../../benches/informer_sync/widget.rs"]
mod widget;

use widget::{LATENCY_UPDATES, OBJECTS, SENT_ANNOTATION, Widget};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: informer_sync_child VARIANT KUBECONFIG NAMESPACE";
    let variant = args.next().context(usage)?;
    let kubeconfig = args.next().context(usage)?;
    let namespace = args.next().context(usage)?;
    child(&variant, &kubeconfig, &namespace)
}

fn child(variant: &str, kubeconfig: &str, namespace: &str) -> Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    let secs = rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
        let client = kube::Client::try_from(config)?;
        let api: kube::Api<Widget> = kube::Api::namespaced(client, namespace);
        if variant == "latency" {
            latency_child(api).await?;
            return anyhow::Ok(None);
        }
        // Timed until the cache holds every object (and the handler has
        // seen every add); shutting down is not part of the sync, as in the
        // client-go program.
        let started = Instant::now();
        let (n, secs) = match variant {
            "reflector" => {
                let (reader, writer) = reflector::store();
                let stream = reflector(writer, watcher(api, watcher::Config::default()).default_backoff());
                let task = tokio::spawn(stream.for_each(|_| async {}));
                reader.wait_until_ready().await?;
                let n = reader.len();
                let secs = started.elapsed().as_secs_f64();
                task.abort();
                (n, secs)
            }
            "informer"
            | "informer-handler"
            | "informer-streaming"
            | "informer-stripped"
            | "informer-streaming-stripped"
            | "informer-decoded"
            | "informer-streaming-decoded"
            | "informer-cache-list" => {
                let mut config = InformerConfig::default();
                if variant.starts_with("informer-streaming") {
                    config.watcher_config = watcher::Config::default().streaming_lists();
                }
                if variant == "informer-cache-list" {
                    config.watcher_config = watcher::Config::default().any_semantic();
                }
                if variant.ends_with("-stripped") {
                    // What `strip_managed_fields(true)` sets.
                    config.managed_fields = ManagedFields::Dropped;
                }
                if variant.ends_with("-decoded") {
                    config.managed_fields = ManagedFields::Decoded;
                }
                let informer = SharedIndexInformer::new(api, config);
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
                let registration = (variant == "informer-handler").then(|| {
                    let mut seen = 0usize;
                    informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |_w: Arc<Widget>, _| {
                        seen += 1;
                        if seen == OBJECTS {
                            let _ = tx.send(());
                        }
                    }))
                });
                informer.start();
                if !informer.wait_for_cache_sync().await {
                    bail!("informer did not sync");
                }
                if registration.is_some() {
                    rx.recv().await;
                }
                let n = informer.indexer().len();
                let secs = started.elapsed().as_secs_f64();
                informer.shutdown().await;
                (n, secs)
            }
            other => bail!("unknown variant {other}"),
        };
        if n != OBJECTS {
            bail!("{variant} cached {n} objects, expected {OBJECTS}");
        }
        anyhow::Ok(Some(secs))
    })?;
    let Some(secs) = secs else { return Ok(()) };
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("VmHWM")?;
    println!("{secs} {hwm_kib}");
    Ok(())
}

/// The latency child: syncs, says `ready`, times [`LATENCY_UPDATES`]
/// updates from their send time to the update handler, and prints p50, p99
/// and the largest delay (µs) of all but the first tenth.
async fn latency_child(api: kube::Api<Widget>) -> Result<()> {
    let informer = SharedIndexInformer::new(api, InformerConfig::default());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<Duration>>();
    let mut seen = Vec::with_capacity(LATENCY_UPDATES);
    let _registration = informer.add_event_handler(ResourceEventHandlerFuncs::new().on_update(
        move |_old: Arc<Widget>, new: Arc<Widget>| {
            let arrived = SystemTime::now();
            if seen.len() == LATENCY_UPDATES {
                return;
            }
            let Some(sent) = new.metadata.annotations.as_ref().and_then(|a| a.get(SENT_ANNOTATION)) else { return };
            let Ok(sent) = sent.parse::<u64>() else { return };
            let sent = UNIX_EPOCH + Duration::from_nanos(sent);
            seen.push(arrived.duration_since(sent).unwrap_or_default());
            if seen.len() == LATENCY_UPDATES {
                let _ = tx.send(std::mem::take(&mut seen));
            }
        },
    ));
    informer.start();
    if !informer.wait_for_cache_sync().await {
        bail!("informer did not sync");
    }
    println!("ready");
    let mut seen = tokio::time::timeout(Duration::from_secs(120), rx.recv())
        .await
        .context("updates did not arrive within 2 minutes")?
        .context("handler gone")?;
    informer.shutdown().await;
    let mut kept = seen.split_off(seen.len() / 10);
    kept.sort();
    let at = |q: f64| {
        let rank = ((q * kept.len() as f64).ceil() as usize).clamp(1, kept.len());
        kept[rank - 1].as_nanos() as f64 / 1000.0
    };
    println!("{:.1} {:.1} {:.1}", at(0.5), at(0.99), kept[kept.len() - 1].as_nanos() as f64 / 1000.0);
    Ok(())
}
