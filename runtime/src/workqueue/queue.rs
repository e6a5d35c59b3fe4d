//! The basic work queue: FIFO, deduplicated while queued, and never handing
//! one item to two workers at once (client-go's `workqueue.Typed`).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::pin::pin;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use super::delaying::Waiting;
use super::metrics::{Metered, WorkQueueMetrics, report_unfinished};

/// A FIFO queue of work items with client-go's workqueue semantics.
///
/// - An item added while it is already queued is not queued again (the
///   queue holds a *set* of pending items, in first-added order).
/// - An item handed out by [`get`](Self::get) is *processing* until the
///   worker calls [`done`](Self::done); no other worker receives it in the
///   meantime. Adding it again while it is processing marks it dirty, and
///   `done` queues it again, so the latest change is always processed.
/// - After [`shut_down`](Self::shut_down) new adds are ignored; items
///   already queued are still handed out, and `get` returns `None` once the
///   queue is empty.
///
/// The handle is cheap to clone; all clones share one queue. Items are
/// usually `namespace/name` keys ([`crate::meta_namespace_key`]).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use codegen_runtime::workqueue::WorkQueue;
///
/// let queue = WorkQueue::new();
/// queue.add("default/foo".to_string());
/// queue.add("default/foo".to_string()); // deduplicated
/// assert_eq!(queue.len(), 1);
///
/// let key = queue.get().await.unwrap();
/// // ... reconcile `key` ...
/// queue.done(&key);
/// # }
/// ```
pub struct WorkQueue<T> {
    pub(super) shared: Arc<Shared<T>>,
}

/// What the queue knows about one item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// Waiting in `queue`.
    Queued,
    /// Handed to a worker, not added again since.
    Processing,
    /// Handed to a worker and added again since: queued again on `done`.
    ProcessingDirty,
}

/// Everything the handles of one queue share.
pub(super) struct Shared<T> {
    state: Mutex<State<T>>,
    item_ready: Notify,
    drained: Notify,
    /// Whether the `add_after` timer task was spawned.
    pub(super) timer_started: AtomicBool,
    /// Wakes the timer task: an earlier deadline, or shutdown.
    pub(super) timer_wake: Arc<Notify>,
    /// Where retries are counted (the rest goes through the state's
    /// `metrics`), read without the lock.
    pub(super) metrics: Option<Arc<dyn WorkQueueMetrics>>,
}

/// The queue's state, behind one mutex so every operation locks once.
pub(super) struct State<T> {
    /// Items ready to be handed out, in order. Each is `Mark::Queued` in
    /// `items`, so the queue never holds duplicates.
    queue: VecDeque<T>,
    /// Every item that is queued or processing: one map instead of
    /// client-go's `dirty` and `processing` sets, so the fast path hashes
    /// each item once per operation.
    items: HashMap<T, Mark>,
    /// Number of items currently processing.
    processing: usize,
    /// Number of `get` calls waiting for an item; adds skip the wake-up
    /// entirely when nobody waits.
    waiters: usize,
    shutting_down: bool,
    drain: bool,
    /// Items waiting for their `add_after` deadline.
    pub(super) waiting: Waiting<T>,
    /// The queue's metrics, when it reports them.
    pub(super) metrics: Option<Metered<T>>,
}

impl<T> Shared<T> {
    pub(super) fn lock(&self) -> MutexGuard<'_, State<T>> {
        // The state is consistent between statements, so a panic elsewhere
        // (e.g. in a user's `Hash`) does not make it unusable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes up to `added` waiting `get` calls, given `waiters` counted
    /// under the lock; called after releasing it.
    pub(super) fn wake_getters(&self, added: usize, waiters: usize) {
        for _ in 0..added.min(waiters) {
            self.item_ready.notify_one();
        }
    }
}

impl<T> State<T> {
    pub(super) fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    pub(super) fn waiters(&self) -> usize {
        self.waiters
    }

    fn shut_down(&mut self, drain: bool) {
        self.drain = drain;
        self.shutting_down = true;
        self.waiting.clear();
    }
}

impl<T: Clone + Eq + Hash> State<T> {
    /// Queues `item` unless it is queued already or shutting down; returns
    /// whether it went into the queue (and a waiter should be woken).
    pub(super) fn add(&mut self, item: T) -> bool {
        if self.shutting_down {
            return false;
        }
        match self.items.entry(item) {
            Entry::Occupied(mut entry) => {
                if *entry.get() == Mark::Processing {
                    *entry.get_mut() = Mark::ProcessingDirty;
                    if let Some(m) = &mut self.metrics {
                        m.added(entry.key());
                    }
                }
                false
            }
            Entry::Vacant(entry) => {
                // Queued before the sink hears of it: a sink that panics
                // loses no item.
                let entry = entry.insert_entry(Mark::Queued);
                self.queue.push_back(entry.key().clone());
                if let Some(m) = &mut self.metrics {
                    m.added(entry.key());
                }
                true
            }
        }
    }

    /// Moves the next queued item to processing. The metrics sink hears of
    /// it first: should it panic, the item is still queued for the next
    /// `get`, and no count is off.
    fn pop(&mut self) -> Option<T> {
        let item = self.queue.front()?.clone();
        if let Some(m) = &mut self.metrics {
            m.handed_out(&item);
        }
        self.queue.pop_front();
        if let Some(mark) = self.items.get_mut(&item) {
            *mark = Mark::Processing;
        }
        self.processing += 1;
        Some(item)
    }
}

/// Keeps [`State::waiters`] right even when a `get` future is dropped while
/// it waits.
struct Waiter<'a, T>(&'a Shared<T>);

impl<T> Drop for Waiter<'_, T> {
    fn drop(&mut self) {
        self.0.lock().waiters -= 1;
    }
}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> WorkQueue<T> {
    /// Creates an empty queue.
    pub fn new() -> Self {
        Self::create(None)
    }

    /// Creates an empty queue that reports its metrics to `metrics` (client-go's
    /// queue with a `MetricsProvider`; see [`WorkQueueMetrics`]). Created
    /// inside a Tokio runtime, it also reports unfinished work every half
    /// second, from a task that ends with the queue.
    pub fn with_metrics(metrics: Arc<dyn WorkQueueMetrics>) -> Self {
        let queue = Self::create(Some(Metered::new(metrics)));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(report_unfinished(Arc::downgrade(&queue.shared)));
        }
        queue
    }

    fn create(metrics: Option<Metered<T>>) -> Self {
        let sink = metrics.as_ref().map(|m| m.sink.clone());
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    items: HashMap::new(),
                    processing: 0,
                    waiters: 0,
                    shutting_down: false,
                    drain: false,
                    waiting: Waiting::default(),
                    metrics,
                }),
                item_ready: Notify::new(),
                drained: Notify::new(),
                timer_started: AtomicBool::new(false),
                timer_wake: Arc::new(Notify::new()),
                metrics: sink,
            }),
        }
    }

    /// Queues `item` for processing.
    ///
    /// Does nothing if the item is already queued or the queue is shutting
    /// down. If the item is processing, it is queued again once the worker
    /// calls [`done`](Self::done).
    pub fn add(&self, item: T) {
        let mut st = self.shared.lock();
        // A metrics sink that panics has heard of an item already queued: a
        // waiting worker is woken before the panic goes on to the caller.
        let added = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| st.add(item)));
        let waiters = st.waiters;
        drop(st);
        match added {
            Ok(added) => self.shared.wake_getters(usize::from(added), waiters),
            Err(panic) => {
                self.shared.wake_getters(1, waiters);
                std::panic::resume_unwind(panic);
            }
        }
    }

    /// Waits for the next item and marks it processing.
    ///
    /// Returns `None` once the queue is shutting down and no item is queued.
    /// The caller must call [`done`](Self::done) with the item when finished
    /// with it.
    ///
    /// Cancel-safe: dropping the future before it completes loses no item.
    pub async fn get(&self) -> Option<T> {
        loop {
            let mut notified = pin!(self.shared.item_ready.notified());
            {
                let mut st = self.shared.lock();
                if let Some(item) = st.pop() {
                    return Some(item);
                }
                if st.shutting_down {
                    return None;
                }
                // Registered under the lock, so an add that follows cannot
                // miss this waiter. A notification this future takes but
                // never consumes (it is dropped) is passed on by Tokio.
                notified.as_mut().enable();
                st.waiters += 1;
            }
            let _waiter = Waiter(&self.shared);
            notified.await;
        }
    }

    /// Marks `item` as no longer processing.
    ///
    /// If it was added again while processing, it is queued again now.
    /// Calling `done` for an item that is not processing does nothing.
    pub fn done(&self, item: &T) {
        let mut st = self.shared.lock();
        let Some((item, mark)) = st.items.remove_entry(item) else {
            return;
        };
        let requeued = match mark {
            Mark::Queued => {
                // Not handed out: `done` was called by mistake; keep it queued.
                st.items.insert(item, Mark::Queued);
                return;
            }
            Mark::Processing => false,
            Mark::ProcessingDirty => {
                st.queue.push_back(item.clone());
                st.items.insert(item.clone(), Mark::Queued);
                true
            }
        };
        st.processing -= 1;
        let worked = st.metrics.as_mut().and_then(|m| m.done(&item));
        let drained = st.processing == 0 && st.drain;
        let waiters = st.waiters;
        drop(st);
        if drained {
            self.shared.drained.notify_waiters();
        }
        self.shared.wake_getters(usize::from(requeued), waiters);
        // Last, outside the lock: a panic in the user's metrics sink leaves
        // the queue consistent and every waiter woken.
        if let Some((sink, worked)) = worked {
            sink.worked_for(worked);
        }
    }

    /// Number of items waiting to be handed out (not counting items that
    /// are processing or waiting for their `add_after` delay).
    pub fn len(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Whether no item is waiting to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items.
    ///
    /// New adds are ignored and pending `add_after` items are dropped.
    /// Items already queued are still handed out; `get` returns `None` once
    /// the queue is empty. Does not wait for workers; a concurrent
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) returns at once.
    pub fn shut_down(&self) {
        self.shared.lock().shut_down(false);
        self.wake_all();
        self.shared.drained.notify_waiters();
    }

    /// Stops accepting items like [`shut_down`](Self::shut_down), then waits
    /// until every item handed out so far is marked [`done`](Self::done).
    ///
    /// Workers must keep calling `done`, or this never returns. A concurrent
    /// `shut_down` ends the wait early.
    pub async fn shut_down_with_drain(&self) {
        self.shared.lock().shut_down(true);
        self.wake_all();
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            {
                let st = self.shared.lock();
                if st.processing == 0 || !st.drain {
                    return;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Whether [`shut_down`](Self::shut_down) or
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.lock().shutting_down
    }

    /// Wakes every waiting `get` and the timer task after shutdown.
    fn wake_all(&self) {
        self.shared.item_ready.notify_waiters();
        self.shared.timer_wake.notify_one();
    }
}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> Default for WorkQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        Self { shared: Arc::clone(&self.shared) }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Lets the timer task notice the queue is gone without waiting for
        // its next deadline.
        self.timer_wake.notify_one();
    }
}

impl<T> fmt::Debug for WorkQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.lock();
        f.debug_struct("WorkQueue")
            .field("len", &st.queue.len())
            .field("processing", &st.processing)
            .field("delayed", &st.waiting.len())
            .field("shutting_down", &st.shutting_down)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::time::Duration;

    use futures::FutureExt;

    use super::*;

    /// Hang guard only: generous, never asserted on.
    const GUARD: Duration = Duration::from_secs(30);

    #[test]
    fn dedupes_while_queued_and_keeps_fifo_order() {
        let q = WorkQueue::new();
        q.add(1);
        q.add(2);
        q.add(1);
        q.add(3);
        q.add(2);
        assert_eq!(q.len(), 3);
        let got: Vec<_> = (0..3).map(|_| q.get().now_or_never().flatten().unwrap()).collect();
        assert_eq!(got, [1, 2, 3]);
        assert!(q.is_empty());
    }

    #[test]
    fn readded_while_processing_is_handed_out_again_after_done() {
        let q = WorkQueue::new();
        q.add("a");
        let a = q.get().now_or_never().flatten().unwrap();
        q.add("a");
        q.add("a");
        // Not handed to a second worker while the first holds it.
        assert_eq!(q.len(), 0);
        assert!(q.get().now_or_never().is_none());
        q.done(&a);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get().now_or_never().flatten(), Some("a"));
        q.done(&"a");
        assert!(q.is_empty());
    }

    #[test]
    fn done_without_readd_forgets_the_item() {
        let q = WorkQueue::new();
        q.add(7);
        let item = q.get().now_or_never().flatten().unwrap();
        q.done(&item);
        q.done(&item); // a second done is harmless
        assert!(q.is_empty());
        assert!(q.get().now_or_never().is_none());
        q.add(7);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn done_on_a_queued_item_keeps_it_queued_once() {
        let q = WorkQueue::new();
        q.add(1);
        q.done(&1);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get().now_or_never().flatten(), Some(1));
        assert!(q.get().now_or_never().is_none());
    }

    #[test]
    fn shut_down_ignores_adds_but_hands_out_queued_items() {
        let q = WorkQueue::new();
        q.add(1);
        q.add(2);
        q.shut_down();
        assert!(q.is_shutting_down());
        q.add(3);
        assert_eq!(q.get().now_or_never(), Some(Some(1)));
        assert_eq!(q.get().now_or_never(), Some(Some(2)));
        assert_eq!(q.get().now_or_never(), Some(None));
    }

    #[test]
    fn dirty_item_is_requeued_by_done_even_while_shutting_down() {
        let q = WorkQueue::new();
        q.add(1);
        let one = q.get().now_or_never().flatten().unwrap();
        q.add(1);
        q.shut_down();
        q.done(&one);
        assert_eq!(q.get().now_or_never(), Some(Some(1)));
        assert_eq!(q.get().now_or_never(), Some(None));
    }

    #[tokio::test]
    async fn get_waits_for_an_add() {
        let q = WorkQueue::new();
        let getter = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        q.add(5);
        let got = tokio::time::timeout(GUARD, getter).await.unwrap().unwrap();
        assert_eq!(got, Some(5));
    }

    #[tokio::test]
    async fn shut_down_wakes_waiting_getters() {
        let q: WorkQueue<u32> = WorkQueue::new();
        let getters: Vec<_> = (0..3)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.get().await })
            })
            .collect();
        tokio::task::yield_now().await;
        q.shut_down();
        for g in getters {
            let got = tokio::time::timeout(GUARD, g).await.unwrap().unwrap();
            assert_eq!(got, None);
        }
    }

    #[tokio::test]
    async fn cancelled_get_loses_no_item() {
        let q = WorkQueue::new();
        {
            let mut first = pin!(q.get());
            assert!(futures::poll!(first.as_mut()).is_pending());
            let mut second = pin!(q.get());
            assert!(futures::poll!(second.as_mut()).is_pending());
            q.add(1);
            // `first` (or `second`) was woken for item 1; drop both unpolled.
        }
        let got = tokio::time::timeout(GUARD, q.get()).await.unwrap();
        assert_eq!(got, Some(1));
        assert_eq!(q.shared.lock().waiters, 0);
    }

    #[tokio::test]
    async fn every_waiting_getter_gets_one_of_several_adds() {
        let q = WorkQueue::new();
        let getters: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.get().await })
            })
            .collect();
        tokio::task::yield_now().await;
        for i in 0..4 {
            q.add(i);
        }
        let mut got = HashSet::new();
        for g in getters {
            let item = tokio::time::timeout(GUARD, g).await.unwrap().unwrap();
            got.insert(item.unwrap());
        }
        assert_eq!(got, (0..4).collect());
    }

    #[tokio::test]
    async fn shut_down_with_drain_waits_for_done() {
        let q = WorkQueue::new();
        q.add(1);
        q.add(2);
        let one = q.get().await.unwrap();
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!drain.is_finished());
        assert!(q.is_shutting_down());
        // Queued items are still handed out during the drain.
        let two = q.get().await.unwrap();
        q.done(&one);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!drain.is_finished());
        q.done(&two);
        tokio::time::timeout(GUARD, drain).await.unwrap().unwrap();
        assert_eq!(q.get().await, None);
    }

    #[tokio::test]
    async fn shut_down_ends_a_drain_early() {
        let q = WorkQueue::new();
        q.add(1);
        let _held = q.get().await.unwrap();
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        tokio::time::timeout(GUARD, drain).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn drain_with_nothing_processing_returns_at_once() {
        let q: WorkQueue<u8> = WorkQueue::new();
        tokio::time::timeout(GUARD, q.shut_down_with_drain()).await.unwrap();
        assert!(q.is_shutting_down());
    }

    /// Many workers on several threads hammering few keys: no key is ever
    /// held by two workers, and every key added is processed after its
    /// last add.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_workers_never_share_an_item() {
        const KEYS: u32 = 8;
        let q = WorkQueue::new();
        let in_flight = Arc::new(Mutex::new(HashSet::new()));
        let processed = Arc::new(Mutex::new(Vec::new()));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (q, in_flight, processed) = (q.clone(), in_flight.clone(), processed.clone());
                tokio::spawn(async move {
                    while let Some(key) = q.get().await {
                        assert!(in_flight.lock().unwrap().insert(key), "{key} handed out twice");
                        tokio::task::yield_now().await;
                        processed.lock().unwrap().push(key);
                        assert!(in_flight.lock().unwrap().remove(&key));
                        q.done(&key);
                    }
                })
            })
            .collect();
        for round in 0..200 {
            q.add(round % KEYS);
            if round % 16 == 0 {
                tokio::task::yield_now().await;
            }
        }
        // Final adds of every key, then drain: each must be processed again.
        let before = processed.lock().unwrap().len();
        for key in 0..KEYS {
            q.add(key);
        }
        tokio::time::timeout(GUARD, async {
            loop {
                let idle = q.shared.lock().items.is_empty();
                if idle {
                    break;
                }
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        q.shut_down();
        for w in workers {
            tokio::time::timeout(GUARD, w).await.unwrap().unwrap();
        }
        let processed = processed.lock().unwrap();
        let after: HashSet<_> = processed[before..].iter().copied().collect();
        assert_eq!(after, (0..KEYS).collect());
    }
}
