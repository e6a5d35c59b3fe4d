//! The dispatch workload shared by `runtime/benches/informer.rs` and
//! `tests/benches/cache_micro.rs` (through `#[path]`): an informer fed from
//! a stream, with three counting handlers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use codegen_runtime::informer::{InformerConfig, ResourceEventHandlerFuncs, SharedIndexInformer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::watcher::Event;

/// Feeds `events` to an informer with three counting handlers and returns
/// how long it took until all three had handled `expected` notifications;
/// `None` when they did not within two minutes.
pub fn dispatch(runtime: &tokio::runtime::Runtime, events: Vec<Event<ConfigMap>>, expected: usize) -> Option<Duration> {
    let remaining = Arc::new(AtomicUsize::new(3 * expected));
    let (done_tx, done) = mpsc::channel();
    let stream = futures::stream::iter(events.into_iter().map(Ok));
    let informer = SharedIndexInformer::from_stream(stream, InformerConfig::default());
    for _ in 0..3 {
        let remaining = remaining.clone();
        let done_tx = done_tx.clone();
        let count = move || {
            if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                let _ = done_tx.send(());
            }
        };
        let count_update = count.clone();
        informer.add_event_handler(
            ResourceEventHandlerFuncs::new().on_add(move |_, _| count()).on_update(move |_, _| count_update()),
        );
    }
    let start = Instant::now();
    runtime.block_on(async { informer.start() });
    // The hang guard only; a run takes a small fraction of it.
    let finished = done.recv_timeout(Duration::from_secs(120)).is_ok();
    let elapsed = start.elapsed();
    runtime.block_on(informer.shutdown());
    finished.then_some(elapsed)
}
