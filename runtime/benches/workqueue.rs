//! Work-queue throughput: single-threaded add+get+done cycles, and the
//! rate-limited add path.
//!
//! Run with `cargo bench -p codegen-runtime --bench workqueue -- --quick`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use codegen_runtime::workqueue::{RateLimitingQueue, WorkQueue};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::FutureExt;

/// One add+get+done cycle. `get` is polled once: the item is queued, so it
/// is ready without parking.
fn cycle(queue: &WorkQueue<u64>, item: u64) {
    queue.add(item);
    let got = queue.get().now_or_never().flatten();
    if let Some(got) = got {
        queue.done(&got);
    }
}

fn add_get_done(c: &mut Criterion) {
    let mut group = c.benchmark_group("workqueue");
    group.throughput(Throughput::Elements(1));

    let queue = WorkQueue::new();
    let mut next = 0u64;
    group.bench_function("add_get_done", |b| {
        b.iter(|| {
            next = next.wrapping_add(1);
            cycle(&queue, black_box(next % 1024));
        })
    });

    // Several distinct keys queued at once, as after an informer's initial list.
    let queue = WorkQueue::new();
    group.throughput(Throughput::Elements(256));
    group.bench_function("add_256_then_drain", |b| {
        b.iter(|| {
            for i in 0..256u64 {
                queue.add(black_box(i));
            }
            // `now_or_never` yields `None` once the queue is empty.
            while let Some(item) = queue.get().now_or_never().flatten() {
                queue.done(&item);
            }
        })
    });
    group.finish();

    // A plain figure for the report, independent of criterion's output format.
    let queue = WorkQueue::new();
    let n = 2_000_000u64;
    let start = Instant::now();
    for i in 0..n {
        cycle(&queue, i % 1024);
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "workqueue: {:.2} M add+get+done cycles/s single-threaded ({n} cycles in {secs:.3} s)",
        n as f64 / secs / 1e6
    );
}

fn rate_limited_add(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("tokio runtime");
    let _guard = rt.enter();
    let mut group = c.benchmark_group("rate_limiting_queue");
    group.throughput(Throughput::Elements(1));

    // Default controller limiter; keys cycle over 1024 items so the
    // per-item backoff grows and every add goes through the delay heap.
    let queue = RateLimitingQueue::<u64>::new();
    let mut next = 0u64;
    group.bench_function("add_rate_limited", |b| {
        b.iter(|| {
            next = next.wrapping_add(1);
            queue.add_rate_limited(black_box(next % 1024));
        })
    });

    // Success path: forget after every item.
    let queue = RateLimitingQueue::<u64>::new();
    group.bench_function("add_rate_limited_then_forget", |b| {
        b.iter(|| {
            next = next.wrapping_add(1);
            let key = black_box(next % 1024);
            queue.add_rate_limited(key);
            queue.forget(&key);
        })
    });
    group.finish();
    queue.shut_down();
    drop(_guard);
    rt.shutdown_timeout(Duration::from_secs(1));
}

criterion_group!(benches, add_get_done, rate_limited_add);
criterion_main!(benches);
