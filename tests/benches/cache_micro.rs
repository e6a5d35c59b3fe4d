//! codegen-runtime's indexer, lister, work queues and event dispatch next
//! to client-go's, on the workloads of the runtime's micro-benchmarks
//! (`runtime/benches/informer.rs`, `runtime/benches/workqueue.rs`):
//! get_by_key over 100,000 ConfigMaps in 100 namespaces, namespace lists
//! of 1,000 with and without a label selector, a cluster-wide list with a
//! selector, replace of 100,000, work-queue add+get+done cycles and
//! rate-limited adds, and an informer dispatching to 3 handlers.
//!
//! `cargo bench -p kube-codegen-tests --bench cache_micro`
//!
//! The client-go side is `tests/go/cache-bench/` (client-go v0.37.2, built
//! with `go build` into `$KUBE_CODEGEN_CACHE/tools/` on first use; its
//! README lists the intended differences); the Rust side is this binary
//! re-executed with `--child`. Both measure every figure in one fresh
//! process (warm-up, then a fixed time budget; the median of its slices or
//! runs counts) and print one JSON line of nanoseconds per operation. They
//! alternate, who goes first swaps every round, round 0 warms up, and per
//! figure the medians of 5 rounds and the median of the per-round ratios
//! (Go time / Rust time, i.e. Rust throughput / Go throughput: above 1 the
//! Rust side is faster) are printed as a markdown table.
//! `CACHE_MICRO_ROUNDS=N` measures N rounds; `CACHE_MICRO_ONLY=figure,...`
//! measures only those figures. Needs the Go toolchain (`go`; `.ci/run`
//! installs it).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use codegen_runtime::indexer::Indexer;
use codegen_runtime::lister::{Lister, Selector, everything};
use codegen_runtime::workqueue::{RateLimitingQueue, WorkQueue};
use futures::FutureExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::watcher::Event;
use support::dispatch::dispatch;

#[path = "../../runtime/benches/support/mod.rs"]
mod support;

const OBJECTS: usize = 100_000;
const NAMESPACES: usize = 100;
/// Objects of the dispatch figures.
const EVENTS: usize = 10_000;
/// Measured rounds, after a warm-up round; `CACHE_MICRO_ROUNDS` overrides.
const ROUNDS: usize = 5;

// The time budgets of `tests/go/cache-bench/main.go`.
const WARMUP: Duration = Duration::from_millis(100);
const BUDGET: Duration = Duration::from_millis(400);
/// The budget is measured in this many slices; the median slice counts.
const SLICES: u32 = 5;
/// Replace and dispatch: one untimed run, then runs until their budget has
/// passed and at least `MIN_RUNS` were made; the median run counts.
const REPLACE_BUDGET: Duration = Duration::from_millis(1000);
const DISPATCH_BUDGET: Duration = Duration::from_millis(500);
const MIN_RUNS: usize = 5;

/// How a figure (nanoseconds per operation) is shown.
#[derive(Clone, Copy)]
enum Show {
    /// Time per operation in this unit (`"ns"`, `"µs"`, `"ms"`).
    Time(&'static str),
    /// Operations per second, in millions.
    MillionsPerSecond,
    /// Events per second, an operation being this many events.
    EventsPerSecond(f64),
}

struct Figure {
    key: &'static str,
    /// The client-go figure it is compared with, when not `key`.
    anchor: Option<&'static str>,
    label: &'static str,
    show: Show,
    /// The target for the ratio (Rust throughput / Go throughput).
    target: Option<f64>,
}

const FIGURES: &[Figure] = &[
    Figure {
        key: "get_by_key",
        anchor: None,
        label: "indexer get_by_key, 100,000 objects",
        show: Show::Time("ns"),
        target: Some(1.5),
    },
    Figure {
        key: "get_by_key_read",
        anchor: None,
        label: "indexer get_by_key and a read of the object, 100,000 objects",
        show: Show::Time("ns"),
        target: None,
    },
    Figure {
        key: "get_by_key_with",
        anchor: Some("get_by_key"),
        label: "indexer get_by_key_with (borrowed, no handle), 100,000 objects",
        show: Show::Time("ns"),
        target: Some(1.5),
    },
    Figure {
        key: "get_by_key_with_read",
        anchor: Some("get_by_key_read"),
        label: "indexer get_by_key_with and a read of the object, 100,000 objects",
        show: Show::Time("ns"),
        target: None,
    },
    Figure {
        key: "namespace_list_1k",
        anchor: None,
        label: "namespace list, 1,000 of 100,000",
        show: Show::Time("µs"),
        target: None,
    },
    Figure {
        key: "namespace_list_selector_1k",
        anchor: None,
        label: "namespace list, 1,000 of 100,000, label selector",
        show: Show::Time("µs"),
        target: None,
    },
    Figure {
        key: "list_selector_100k",
        anchor: None,
        label: "cluster list, label selector over 100,000",
        show: Show::Time("ms"),
        target: None,
    },
    Figure {
        key: "replace_100k",
        anchor: None,
        label: "indexer replace of 100,000",
        show: Show::Time("ms"),
        target: Some(1.0),
    },
    Figure {
        key: "queue_add_get_done",
        anchor: None,
        label: "work queue add+get+done, one thread",
        show: Show::MillionsPerSecond,
        target: None,
    },
    Figure {
        key: "queue_add_rate_limited",
        anchor: None,
        label: "rate-limited queue add_rate_limited",
        show: Show::MillionsPerSecond,
        target: None,
    },
    Figure {
        key: "queue_add_rate_limited_forget",
        anchor: None,
        label: "rate-limited queue add_rate_limited + forget",
        show: Show::MillionsPerSecond,
        target: None,
    },
    Figure {
        key: "dispatch_initial_list_10k",
        anchor: None,
        label: "dispatch to 3 handlers, initial list of 10,000",
        show: Show::EventsPerSecond(EVENTS as f64),
        target: Some(2.0),
    },
    Figure {
        key: "dispatch_watch_20k",
        anchor: None,
        label: "dispatch to 3 handlers, 20,000 watch events",
        show: Show::EventsPerSecond(2.0 * EVENTS as f64),
        target: Some(2.0),
    },
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--child") {
        let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned();
        return child(only.as_deref());
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` / test harness probes: nothing to list.
        return Ok(());
    }
    if !args.iter().any(|a| a == "--bench") {
        // Run by `cargo test --benches` / `--all-targets`, not `cargo bench`.
        eprintln!("cache_micro: measures only under `cargo bench -p kube-codegen-tests --bench cache_micro`");
        return Ok(());
    }
    parent()
}

fn parent() -> Result<()> {
    let go = codegen_testenv::go_program(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("go/cache-bench"),
        "cache-bench",
        "the cache_micro benchmark compares against client-go and",
    )?;
    let exe = std::env::current_exe()?;
    let rounds = match std::env::var("CACHE_MICRO_ROUNDS") {
        Ok(n) => n.parse().context("CACHE_MICRO_ROUNDS")?,
        Err(_) => ROUNDS,
    };
    let only = std::env::var("CACHE_MICRO_ONLY").ok();
    let figures: Vec<&Figure> =
        FIGURES.iter().filter(|f| only.as_deref().is_none_or(|only| only.split(',').any(|o| o == f.key))).collect();
    if figures.is_empty() {
        bail!("CACHE_MICRO_ONLY={only:?} names none of the figures");
    }

    // Per side (0: Go, 1: Rust), per figure, per measured round.
    let mut results: [BTreeMap<&str, Vec<f64>>; 2] = Default::default();
    for round in 0..=rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let mut command = if side == 0 {
                Command::new(&go)
            } else {
                let mut c = Command::new(&exe);
                c.arg("--child");
                c
            };
            if only.is_some() {
                let keys: Vec<&str> =
                    figures.iter().map(|f| if side == 0 { f.anchor.unwrap_or(f.key) } else { f.key }).collect();
                command.args(["--only", &keys.join(",")]);
            }
            let name = ["client-go", "codegen-runtime"][side];
            let out = command.output().with_context(|| format!("running the {name} side"))?;
            if !out.status.success() {
                bail!("the {name} side failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            let line = String::from_utf8_lossy(&out.stdout);
            let measured: BTreeMap<String, f64> =
                serde_json::from_str(line.trim()).with_context(|| format!("the {name} side printed {line:?}"))?;
            for figure in &figures {
                let key = if side == 0 { figure.anchor.unwrap_or(figure.key) } else { figure.key };
                let ns = *measured.get(key).with_context(|| format!("{name} did not measure {key}"))?;
                if round > 0 {
                    results[side].entry(figure.key).or_default().push(ns);
                }
            }
        }
        if round == 0 {
            eprintln!("round 0: warm-up");
        } else {
            let ratios: Vec<String> = figures
                .iter()
                .map(|f| format!("{} ×{:.2}", f.key, results[0][f.key][round - 1] / results[1][f.key][round - 1]))
                .collect();
            eprintln!("round {round}: {}", ratios.join(", "));
        }
    }

    println!(
        "indexer, lister, work queue and dispatch: client-go v0.37.2 and codegen-runtime, fresh process per \
         side and round, sides alternating; median of {rounds} rounds after a warm-up round; ratio = Rust \
         throughput / Go throughput (median of per-round ratios; above ×1 the Rust side is faster)"
    );
    println!();
    println!("| figure | client-go | codegen-runtime | ratio | target |");
    println!("| --- | --- | --- | --- | --- |");
    for figure in &figures {
        let go = &results[0][figure.key];
        let rust = &results[1][figure.key];
        let ratio = median(go.iter().zip(rust).map(|(g, r)| g / r).collect());
        let target = match figure.target {
            Some(t) if ratio >= t => format!("≥ ×{t:.1} (met)"),
            Some(t) => format!("≥ ×{t:.1} (**not met**)"),
            None => String::new(),
        };
        println!(
            "| {} | {} | {} | ×{ratio:.2} | {target} |",
            figure.label,
            show(figure.show, median(go.clone())),
            show(figure.show, median(rust.clone())),
        );
    }
    Ok(())
}

fn show(how: Show, ns: f64) -> String {
    match how {
        Show::Time("ns") => format!("{ns:.1} ns"),
        Show::Time("µs") => format!("{:.1} µs", ns / 1e3),
        Show::Time(unit) => format!("{:.1} {unit}", ns / 1e6),
        Show::MillionsPerSecond => format!("{:.2} M/s", 1e3 / ns),
        Show::EventsPerSecond(events) => format!("{:.0} k/s", events / ns * 1e6),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// ---------------------------------------------------------------------------
// The Rust side: the workloads of tests/go/cache-bench/main.go on
// codegen-runtime's public API.

fn config_map(i: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("cm-{i}")),
            namespace: Some(format!("ns-{}", i % NAMESPACES)),
            resource_version: Some(i.to_string()),
            labels: Some([("app".to_owned(), format!("app-{}", i % 10))].into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Calls `batch` (`ops` operations each) for the warm-up, then for
/// `SLICES` slices of the budget; nanoseconds per operation of the median
/// slice, so that a slice disturbed by another process on the machine
/// does not count.
fn measure(ops: usize, mut batch: impl FnMut()) -> f64 {
    let mut run = |budget: Duration| {
        let start = Instant::now();
        let mut n = 0;
        loop {
            batch();
            n += ops;
            let elapsed = start.elapsed();
            if elapsed >= budget {
                return elapsed.as_nanos() as f64 / n as f64;
            }
        }
    };
    run(WARMUP);
    median((0..SLICES).map(|_| run(BUDGET / SLICES)).collect())
}

/// Calls `run` (which times itself) once untimed, then until `budget` has
/// passed and at least `MIN_RUNS` were made; nanoseconds of the median
/// run.
fn measure_runs(budget: Duration, mut run: impl FnMut() -> Duration) -> f64 {
    run();
    let mut total = Duration::ZERO;
    let mut runs = Vec::new();
    while runs.len() < MIN_RUNS || total < budget {
        let elapsed = run();
        total += elapsed;
        runs.push(elapsed.as_nanos() as f64);
    }
    median(runs)
}

/// Nanoseconds per `lookup` of the keys in the benchmark's order (`next =
/// (next + 7919) % OBJECTS`); `lookup` returns what it read of the object
/// found, and an error says how many keys were missing.
fn lookups(keys: &[String], mut lookup: impl FnMut(&str) -> Option<usize>) -> Result<f64> {
    let (mut next, mut missing, mut read) = (0, 0, 0);
    let ns = measure(10_000, || {
        for _ in 0..10_000 {
            next = (next + 7919) % OBJECTS;
            match lookup(black_box(&keys[next])) {
                Some(n) => read += n,
                None => missing += 1,
            }
        }
    });
    black_box(read);
    if missing != 0 {
        bail!("{missing} keys missing");
    }
    Ok(ns)
}

fn child(only: Option<&str>) -> Result<()> {
    let selected = |name: &str| only.is_none_or(|only| only.split(',').any(|o| o == name));
    let mut figures = BTreeMap::new();
    indexer_figures(&selected, &mut figures)?;
    queue_figures(&selected, &mut figures)?;
    dispatch_figures(&selected, &mut figures)?;
    println!("{}", serde_json::to_string(&figures)?);
    Ok(())
}

fn indexer_figures(selected: &dyn Fn(&str) -> bool, figures: &mut BTreeMap<&str, f64>) -> Result<()> {
    let items: Vec<Arc<ConfigMap>> = (0..OBJECTS).map(|i| Arc::new(config_map(i))).collect();
    let indexer = Indexer::new();
    indexer.replace(items.clone());
    let lister = Lister::new(indexer.clone());
    let keys: Vec<String> = (0..OBJECTS).map(|i| format!("ns-{}/cm-{i}", i % NAMESPACES)).collect();

    // `get_by_key` and `get_by_key_with` (client-go's figure for both is
    // `GetByKey`: it hands back a pointer without touching the object, as
    // the `Cached` handle of `get_by_key` does; an `Arc` would be counted
    // in the object's first cache line), then the same lookups each
    // followed by a read of the object found, as a caller reads it.
    let version_len = |obj: &ConfigMap| obj.metadata.resource_version.as_ref().map_or(0, String::len);
    if selected("get_by_key") {
        let ns = lookups(&keys, |key| black_box(indexer.get_by_key(key)).map(|_| 1));
        figures.insert("get_by_key", ns.context("get_by_key")?);
    }
    if selected("get_by_key_with") {
        let ns =
            lookups(&keys, |key| indexer.get_by_key_with(key, |obj| black_box(obj as *const ConfigMap)).map(|_| 1));
        figures.insert("get_by_key_with", ns.context("get_by_key_with")?);
    }
    if selected("get_by_key_read") {
        let ns = lookups(&keys, |key| indexer.get_by_key(key).map(|obj| version_len(&obj)));
        figures.insert("get_by_key_read", ns.context("get_by_key_read")?);
    }
    if selected("get_by_key_with_read") {
        let ns = lookups(&keys, |key| indexer.get_by_key_with(key, version_len));
        figures.insert("get_by_key_with_read", ns.context("get_by_key_with_read")?);
    }

    // One namespace holds OBJECTS / NAMESPACES = 1,000 objects. Every
    // object in ns-42 has app=app-2 (42 ≡ 2 mod 10), so the selector matches
    // all of them.
    let namespace = lister.namespace("ns-42");
    let app: Selector = [("app", "app-2")].into_iter().collect();
    for (name, selector) in [("namespace_list_1k", everything()), ("namespace_list_selector_1k", app.clone())] {
        if !selected(name) {
            continue;
        }
        let mut wrong = None;
        figures.insert(
            name,
            measure(10, || {
                for _ in 0..10 {
                    let n = black_box(namespace.list(black_box(&selector))).len();
                    if n != OBJECTS / NAMESPACES {
                        wrong = Some(n);
                    }
                }
            }),
        );
        if let Some(n) = wrong {
            bail!("{name}: {n} objects");
        }
    }

    if selected("list_selector_100k") {
        let mut wrong = None;
        figures.insert(
            "list_selector_100k",
            measure(1, || {
                let n = black_box(lister.list(black_box(&app))).len();
                if n != OBJECTS / 10 {
                    wrong = Some(n);
                }
            }),
        );
        if let Some(n) = wrong {
            bail!("list_selector_100k: {n} objects");
        }
    }

    if selected("replace_100k") {
        figures.insert(
            "replace_100k",
            measure_runs(REPLACE_BUDGET, || {
                // `replace` takes the list by value; Go's `Replace` reads a
                // slice it is handed. The copy is made outside the timing.
                let items = items.clone();
                let start = Instant::now();
                indexer.replace(black_box(items));
                start.elapsed()
            }),
        );
        if indexer.len() != OBJECTS {
            bail!("replace_100k: {} objects after replace", indexer.len());
        }
    }
    Ok(())
}

fn queue_figures(selected: &dyn Fn(&str) -> bool, figures: &mut BTreeMap<&str, f64>) -> Result<()> {
    let mut next = 0u64;
    if selected("queue_add_get_done") {
        let queue = WorkQueue::new();
        let mut missed = 0u64;
        figures.insert(
            "queue_add_get_done",
            measure(100_000, || {
                for _ in 0..100_000 {
                    next = next.wrapping_add(1);
                    queue.add(black_box(next % 1024));
                    // Polled once: the item is queued, so it is ready
                    // without parking.
                    match queue.get().now_or_never().flatten() {
                        Some(item) => queue.done(&item),
                        None => missed += 1,
                    }
                }
            }),
        );
        queue.shut_down();
        if missed != 0 {
            bail!("queue_add_get_done: get found no item {missed} times");
        }
    }

    // The default controller rate limiter; keys cycle over 1024 items so
    // the per-item backoff grows and every add goes through the delay
    // heap. The queue's timer task runs on a 2-worker Tokio runtime, as in
    // a controller, while this thread adds.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let guard = rt.enter();
    if selected("queue_add_rate_limited") {
        let queue = RateLimitingQueue::<u64>::new();
        figures.insert(
            "queue_add_rate_limited",
            measure(100_000, || {
                for _ in 0..100_000 {
                    next = next.wrapping_add(1);
                    queue.add_rate_limited(black_box(next % 1024));
                }
            }),
        );
        queue.shut_down();
    }
    // The success path: forget after every add.
    if selected("queue_add_rate_limited_forget") {
        let queue = RateLimitingQueue::<u64>::new();
        figures.insert(
            "queue_add_rate_limited_forget",
            measure(100_000, || {
                for _ in 0..100_000 {
                    next = next.wrapping_add(1);
                    let key = black_box(next % 1024);
                    queue.add_rate_limited(key);
                    queue.forget(&key);
                }
            }),
        );
        queue.shut_down();
    }
    drop(guard);
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok(())
}

fn dispatch_figures(selected: &dyn Fn(&str) -> bool, figures: &mut BTreeMap<&str, f64>) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let objs: Vec<ConfigMap> = (0..EVENTS).map(config_map).collect();
    let mut failed = None;
    let mut run = |events: &Vec<Event<ConfigMap>>, expected| {
        // The events are copied outside the timing, as the Go side builds
        // its list and watch before starting the informer.
        let events = events.clone();
        dispatch(&runtime, events, expected).unwrap_or_else(|| {
            failed = Some(anyhow::anyhow!("handlers did not receive every event"));
            Duration::ZERO
        })
    };

    // An initial list of 10,000 objects.
    if selected("dispatch_initial_list_10k") {
        let initial_list: Vec<_> = std::iter::once(Event::Init)
            .chain(objs.iter().cloned().map(Event::InitApply))
            .chain(std::iter::once(Event::InitDone))
            .collect();
        figures.insert("dispatch_initial_list_10k", measure_runs(DISPATCH_BUDGET, || run(&initial_list, EVENTS)));
    }
    // An empty initial list, then one watch event per object: adds, then
    // an update for each.
    if selected("dispatch_watch_20k") {
        let watch_events: Vec<_> = [Event::Init, Event::InitDone]
            .into_iter()
            .chain(objs.iter().cloned().map(Event::Apply))
            .chain(objs.iter().cloned().map(Event::Apply))
            .collect();
        figures.insert("dispatch_watch_20k", measure_runs(DISPATCH_BUDGET, || run(&watch_events, 2 * EVENTS)));
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
