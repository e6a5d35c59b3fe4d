//! Indexer and lister lookups over a 100,000-object cache, and informer event
//! dispatch throughput to three handlers fed by a synthetic watch stream.
//!
//! Run with `cargo bench -p codegen-runtime --bench informer`; each group
//! finishes in well under a minute.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use codegen_runtime::indexer::Indexer;
use codegen_runtime::lister::{Lister, Selector, everything};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::watcher::Event;
use support::dispatch::dispatch;

#[path = "support/mod.rs"]
mod support;

const LOST: &str = "handlers did not receive every event";

const OBJECTS: usize = 100_000;
const NAMESPACES: usize = 100;

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

fn objects(n: usize) -> Vec<Arc<ConfigMap>> {
    (0..n).map(|i| Arc::new(config_map(i))).collect()
}

fn indexer(c: &mut Criterion) {
    let indexer = Indexer::new();
    indexer.replace(objects(OBJECTS));
    let lister = Lister::new(indexer.clone());
    let keys: Vec<String> = (0..OBJECTS).map(|i| format!("ns-{}/cm-{i}", i % NAMESPACES)).collect();

    let mut group = c.benchmark_group("indexer_100k");
    group.sample_size(30).measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(1));
    let mut next = 0;
    group.bench_function("get_by_key", |b| {
        b.iter(|| {
            next = (next + 7919) % OBJECTS;
            black_box(indexer.get_by_key(black_box(&keys[next])))
        })
    });

    // One namespace holds OBJECTS / NAMESPACES = 1,000 objects.
    group.throughput(Throughput::Elements((OBJECTS / NAMESPACES) as u64));
    let namespace = lister.namespace("ns-42");
    group.bench_function("namespace_list_all_1k", |b| b.iter(|| black_box(namespace.list(&everything()))));
    let app: Selector = [("app", "app-2")].into_iter().collect();
    group.bench_function("namespace_list_selector_1k", |b| b.iter(|| black_box(namespace.list(&app))));

    group.throughput(Throughput::Elements(OBJECTS as u64));
    group.sample_size(10);
    group.bench_function("lister_list_selector_100k", |b| b.iter(|| black_box(lister.list(&app))));
    let items = objects(OBJECTS);
    group.bench_function("replace_100k", |b| b.iter(|| indexer.replace(black_box(items.clone()))));
    group.finish();
}

fn informer_dispatch(c: &mut Criterion) {
    const EVENTS: usize = 10_000;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime");
    let objs: Vec<ConfigMap> = (0..EVENTS).map(config_map).collect();

    let mut group = c.benchmark_group("informer_dispatch_3_handlers");
    group.sample_size(10).measurement_time(Duration::from_secs(8));
    group.throughput(Throughput::Elements(EVENTS as u64));

    let initial_list: Vec<_> = std::iter::once(Event::Init)
        .chain(objs.iter().cloned().map(Event::InitApply))
        .chain(std::iter::once(Event::InitDone))
        .collect();
    group.bench_function(BenchmarkId::new("initial_list", EVENTS), |b| {
        b.iter_custom(|iters| (0..iters).map(|_| dispatch(&runtime, initial_list.clone(), EVENTS).expect(LOST)).sum())
    });

    // An empty initial list, then one watch event per object: adds, then
    // an update for each.
    let watch_events: Vec<_> = [Event::Init, Event::InitDone]
        .into_iter()
        .chain(objs.iter().cloned().map(Event::Apply))
        .chain(objs.iter().cloned().map(Event::Apply))
        .collect();
    group.throughput(Throughput::Elements(2 * EVENTS as u64));
    group.bench_function(BenchmarkId::new("watch_apply", 2 * EVENTS), |b| {
        b.iter_custom(|iters| {
            (0..iters).map(|_| dispatch(&runtime, watch_events.clone(), 2 * EVENTS).expect(LOST)).sum()
        })
    });
    group.finish();
}

criterion_group!(benches, indexer, informer_dispatch);
criterion_main!(benches);
