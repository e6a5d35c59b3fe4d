//! Work queue metrics: the figures client-go's `workqueue` reports through
//! its `MetricsProvider` (depth, adds, queue and work durations, unfinished
//! work, retries), handed to a [`WorkQueueMetrics`] of the user's.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::queue::Shared;

/// How often unfinished work is reported (client-go's 500 ms).
const UNFINISHED_EVERY: Duration = Duration::from_millis(500);

/// Receives a work queue's metrics, the figures of client-go's
/// `workqueue.MetricsProvider` (in parentheses, the names client-go's
/// Prometheus provider gives them, each labelled with the queue's name).
///
/// Every method has an empty default, so an implementation takes only what
/// it exports. The queue calls them while it holds its lock: keep them
/// cheap (a counter increment, a histogram observation).
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use codegen_runtime::workqueue::{WorkQueue, WorkQueueMetrics};
///
/// #[derive(Default)]
/// struct Adds(AtomicU64);
/// impl WorkQueueMetrics for Adds {
///     fn add(&self) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let adds = Arc::new(Adds::default());
/// let queue = WorkQueue::with_metrics(adds.clone());
/// queue.add("default/foo".to_string());
/// queue.add("default/foo".to_string()); // deduplicated: not an add
/// assert_eq!(adds.0.load(Ordering::Relaxed), 1);
/// ```
pub trait WorkQueueMetrics: Send + Sync + 'static {
    /// An item was added that was not waiting already (`workqueue_adds_total`).
    fn add(&self) {}
    /// Items added and not yet handed out (`workqueue_depth`); as in
    /// client-go, an item added again while it is processing counts.
    fn depth(&self, _depth: usize) {}
    /// How long an item waited between its add and [`get`](super::WorkQueue::get)
    /// (`workqueue_queue_duration_seconds`).
    fn queued_for(&self, _waited: Duration) {}
    /// How long an item was processing, from `get` to
    /// [`done`](super::WorkQueue::done) (`workqueue_work_duration_seconds`).
    fn worked_for(&self, _worked: Duration) {}
    /// Every half second until the queue shuts down: the sum of the time so
    /// far of the items processing and the longest one's, zero when none is
    /// (`workqueue_unfinished_work_seconds`,
    /// `workqueue_longest_running_processor_seconds`). Needs a Tokio runtime
    /// where the queue is created.
    fn unfinished(&self, _total: Duration, _longest: Duration) {}
    /// A delayed add ([`add_after`](super::WorkQueue::add_after),
    /// `add_rate_limited`) (`workqueue_retries_total`).
    fn retry(&self) {}
}

/// The queue's side of its metrics: the sink and the times it measures.
pub(super) struct Metered<T> {
    pub(super) sink: Arc<dyn WorkQueueMetrics>,
    depth: usize,
    added: HashMap<T, Instant>,
    started: HashMap<T, Instant>,
}

impl<T: Clone + Eq + Hash> Metered<T> {
    pub(super) fn new(sink: Arc<dyn WorkQueueMetrics>) -> Self {
        Self { sink, depth: 0, added: HashMap::new(), started: HashMap::new() }
    }

    /// An item went into the queue, or was marked to go again after `done`.
    pub(super) fn added(&mut self, item: &T) {
        self.sink.add();
        self.depth += 1;
        self.sink.depth(self.depth);
        self.added.entry(item.clone()).or_insert_with(Instant::now);
    }

    /// An item is being handed out (called before the queue lets go of it:
    /// a panic in the sink leaves the item queued).
    pub(super) fn handed_out(&mut self, item: &T) {
        let now = Instant::now();
        self.depth = self.depth.saturating_sub(1);
        self.sink.depth(self.depth);
        if let Some(at) = self.added.remove(item) {
            self.sink.queued_for(now.duration_since(at));
        }
        self.started.insert(item.clone(), now);
    }

    /// An item's processing ended: how long it took, for the sink.
    pub(super) fn done(&mut self, item: &T) -> Option<(Arc<dyn WorkQueueMetrics>, Duration)> {
        let at = self.started.remove(item)?;
        Some((self.sink.clone(), at.elapsed()))
    }

    /// Reports the time spent on the items processing now.
    fn report_unfinished(&self) {
        let now = Instant::now();
        let (total, longest) = self.started.values().fold((Duration::ZERO, Duration::ZERO), |(total, longest), at| {
            let d = now.duration_since(*at);
            (total.saturating_add(d), longest.max(d))
        });
        self.sink.unfinished(total, longest);
    }
}

/// Reports unfinished work every half second, the first time half a second
/// after the queue's creation, until the queue shuts down or is dropped (as
/// client-go's `updateUnfinishedWorkLoop`).
pub(super) async fn report_unfinished<T: Clone + Eq + Hash + Send + Sync + 'static>(shared: Weak<Shared<T>>) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + UNFINISHED_EVERY, UNFINISHED_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else { return };
        let state = shared.lock();
        if state.is_shutting_down() {
            return;
        }
        if let Some(metered) = &state.metrics {
            metered.report_unfinished();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::super::{RateLimitingQueue, WorkQueue};
    use super::*;

    /// Everything reported, in order.
    #[derive(Default)]
    struct Recorded(Mutex<Vec<String>>);

    impl Recorded {
        fn push(&self, what: String) {
            self.0.lock().unwrap().push(what);
        }
        /// What was reported since the last call, unfinished work (reported
        /// every half second, also as zero) left out.
        fn take(&self) -> Vec<String> {
            self.drain().into_iter().filter(|r| !r.starts_with("unfinished")).collect()
        }
        fn drain(&self) -> Vec<String> {
            std::mem::take(&mut *self.0.lock().unwrap())
        }
    }

    impl WorkQueueMetrics for Recorded {
        fn add(&self) {
            self.push("add".into());
        }
        fn depth(&self, depth: usize) {
            self.push(format!("depth {depth}"));
        }
        fn queued_for(&self, waited: Duration) {
            self.push(format!("queued {}s", waited.as_secs()));
        }
        fn worked_for(&self, worked: Duration) {
            self.push(format!("worked {}s", worked.as_secs()));
        }
        fn unfinished(&self, total: Duration, longest: Duration) {
            self.push(format!("unfinished {}s longest {}s", total.as_secs(), longest.as_secs()));
        }
        fn retry(&self) {
            self.push("retry".into());
        }
    }

    /// client-go's accounting: a deduplicated add is not an add, an add
    /// while processing is (and counts in the depth), the queue time runs
    /// from the first add, the work time from `get` to `done`.
    #[tokio::test(start_paused = true)]
    async fn a_queue_reports_client_gos_figures() {
        let seen = Arc::new(Recorded::default());
        let queue = WorkQueue::with_metrics(seen.clone());
        queue.add("a");
        queue.add("a");
        queue.add("b");
        assert_eq!(seen.take(), ["add", "depth 1", "add", "depth 2"]);

        tokio::time::sleep(Duration::from_secs(3)).await;
        let a = queue.get().await.unwrap();
        assert_eq!(seen.take(), ["depth 1", "queued 3s"]);
        queue.add("a");
        assert_eq!(seen.take(), ["add", "depth 2"], "added again while processing");

        // Unfinished work, every half second while `a` is processing.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let unfinished = seen.drain();
        assert!(unfinished.iter().all(|u| u.starts_with("unfinished")), "{unfinished:?}");
        assert_eq!(unfinished.last().map(String::as_str), Some("unfinished 2s longest 2s"));

        queue.done(&a);
        assert_eq!(seen.take(), ["worked 2s"]);
        let again = queue.get().await.unwrap();
        let b = queue.get().await.unwrap();
        assert_eq!((again, b), ("b", "a"));
        assert_eq!(seen.take(), ["depth 1", "queued 5s", "depth 0", "queued 2s"]);

        // Shut down (still processing both): no more unfinished work reports.
        queue.shut_down();
        tokio::time::sleep(Duration::from_millis(600)).await;
        seen.drain();
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(seen.drain(), Vec::<String>::new(), "the reporting ends with the shutdown");
    }

    #[tokio::test(start_paused = true)]
    async fn unfinished_work_is_first_reported_after_half_a_second() {
        let seen = Arc::new(Recorded::default());
        let _queue: WorkQueue<&str> = WorkQueue::with_metrics(seen.clone());
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(seen.drain(), Vec::<String>::new());
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(seen.drain(), ["unfinished 0s longest 0s"]);
    }

    /// A metrics sink that panics as an item is handed out leaves it queued:
    /// the next `get` hands it out, and a drain still ends.
    #[tokio::test]
    async fn a_panicking_sink_in_get_leaves_the_item_queued() {
        struct PanicsOnce(std::sync::atomic::AtomicBool);
        impl WorkQueueMetrics for PanicsOnce {
            fn queued_for(&self, _waited: Duration) {
                if !self.0.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    panic!("sink failed");
                }
            }
        }
        let queue = WorkQueue::with_metrics(Arc::new(PanicsOnce(Default::default())));
        queue.add("a");
        let first = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        assert!(first.await.is_err(), "the sink's panic reaches the caller");
        let a = tokio::time::timeout(Duration::from_secs(5), queue.get()).await.expect("still queued");
        assert_eq!(a, Some("a"));
        queue.done(&"a");
        tokio::time::timeout(Duration::from_secs(5), queue.shut_down_with_drain()).await.expect("the drain ends");
    }

    /// A metrics sink whose first `add` panics.
    struct PanicsOnceOnAdd(std::sync::atomic::AtomicBool);

    impl WorkQueueMetrics for PanicsOnceOnAdd {
        fn add(&self) {
            if !self.0.swap(true, std::sync::atomic::Ordering::SeqCst) {
                panic!("sink failed");
            }
        }
    }

    /// A metrics sink that panics in a plain `add` reaches the caller, and
    /// the item, queued before the sink heard of it, wakes a waiting worker.
    #[tokio::test]
    async fn a_panicking_sink_in_add_still_wakes_a_waiting_worker() {
        let queue = WorkQueue::with_metrics(Arc::new(PanicsOnceOnAdd(Default::default())));
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        while queue.shared.lock().waiters() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let added = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.add("a")));
        assert!(added.is_err(), "the sink's panic reaches the caller");
        let got = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("the worker was woken");
        assert_eq!(got.unwrap(), Some("a"));
    }

    /// A metrics sink that panics as a delayed item is added loses neither
    /// that item nor the timer: later delayed adds still arrive.
    #[tokio::test]
    async fn a_panicking_sink_in_a_delayed_add_stops_no_later_one() {
        let queue = WorkQueue::with_metrics(Arc::new(PanicsOnceOnAdd(Default::default())));
        queue.add_after("a", Duration::from_millis(10));
        let a = tokio::time::timeout(Duration::from_secs(5), queue.get()).await.expect("the first delayed item");
        assert_eq!(a, Some("a"));
        queue.done(&"a");
        queue.add_after("b", Duration::from_millis(10));
        let b = tokio::time::timeout(Duration::from_secs(5), queue.get()).await.expect("a later delayed item");
        assert_eq!(b, Some("b"));
    }

    /// A metrics sink that panics in `worked_for` does not leave the item
    /// counted as processing: a drain still ends.
    #[tokio::test]
    async fn a_panicking_sink_in_done_leaves_the_queue_consistent() {
        struct Panics;
        impl WorkQueueMetrics for Panics {
            fn worked_for(&self, _worked: Duration) {
                panic!("sink failed");
            }
        }
        let queue = WorkQueue::with_metrics(Arc::new(Panics));
        queue.add("a");
        let a = queue.get().await.unwrap();
        queue.add("a");
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.done(&a)));
        assert!(done.is_err(), "the sink's panic reaches the caller");
        let again = tokio::time::timeout(Duration::from_secs(5), queue.get()).await.expect("the requeued item");
        assert_eq!(again, Some("a"));
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.done(&"a")));
        tokio::time::timeout(Duration::from_secs(5), queue.shut_down_with_drain()).await.expect("the drain ends");
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_adds_are_retries() {
        let seen = Arc::new(Recorded::default());
        let queue = RateLimitingQueue::with_queue(
            WorkQueue::with_metrics(seen.clone()),
            crate::workqueue::default_controller_rate_limiter(),
        );
        queue.add_rate_limited("a");
        assert_eq!(seen.take(), ["retry"]);
        let item = queue.get().await.unwrap();
        assert_eq!(seen.take(), ["add", "depth 1", "depth 0", "queued 0s"]);
        queue.done(&item);
        queue.shut_down();
        queue.add_after("b", Duration::from_secs(1));
        assert_eq!(seen.take(), ["worked 0s"], "no retry after shutdown");
    }
}
