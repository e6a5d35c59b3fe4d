//! Delayed adds (client-go's `DelayingInterface`): `add_after` and the
//! per-queue timer task that moves due items onto the queue.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::queue::{Shared, WorkQueue};

/// Stand-in deadline for delays too large to add to `Instant::now()`
/// (about 30 years, the horizon Tokio itself uses for "never").
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// Items waiting for their `add_after` deadline.
///
/// A binary heap with lazy deletion: when an item's deadline moves earlier a
/// new heap entry is pushed and the old one is skipped when it surfaces
/// (its sequence number no longer matches `known`).
pub(super) struct Waiting<T> {
    heap: BinaryHeap<Reverse<Deadline<T>>>,
    known: HashMap<T, (Instant, u64)>,
    next_seq: u64,
}

struct Deadline<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Deadline<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<T> Eq for Deadline<T> {}

impl<T> PartialOrd for Deadline<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Deadline<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl<T> Default for Waiting<T> {
    fn default() -> Self {
        Waiting { heap: BinaryHeap::new(), known: HashMap::new(), next_seq: 0 }
    }
}

impl<T> Waiting<T> {
    /// Number of distinct items waiting.
    pub(super) fn len(&self) -> usize {
        self.known.len()
    }

    pub(super) fn clear(&mut self) {
        self.heap.clear();
        self.known.clear();
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(d)| d.at)
    }
}

impl<T: Clone + Eq + Hash> Waiting<T> {
    /// Records that `item` is due at `at`, keeping the earlier deadline if it
    /// already waits. Returns whether `at` is now the earliest deadline.
    fn insert(&mut self, item: T, at: Instant) -> bool {
        if let Some(&(current, _)) = self.known.get(&item)
            && current <= at
        {
            return false;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let earliest = self.next_deadline().is_none_or(|first| at < first);
        self.known.insert(item.clone(), (at, seq));
        self.heap.push(Reverse(Deadline { at, seq, item }));
        // Stale entries normally surface and vanish on their own; bound them
        // anyway in case one item keeps moving earlier.
        if self.heap.len() > 2 * self.known.len() + 64 {
            self.compact();
        }
        earliest
    }

    fn compact(&mut self) {
        let known = &self.known;
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap.into_iter().filter(|Reverse(d)| known.get(&d.item) == Some(&(d.at, d.seq))).collect();
    }

    /// Removes and returns the next item due at or before `now`.
    fn pop_due(&mut self, now: Instant) -> Option<T> {
        while let Some(Reverse(first)) = self.heap.peek() {
            if first.at > now {
                return None;
            }
            let Reverse(d) = self.heap.pop()?;
            if self.known.get(&d.item) == Some(&(d.at, d.seq)) {
                self.known.remove(&d.item);
                return Some(d.item);
            }
        }
        None
    }
}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> WorkQueue<T> {
    /// Adds `item` once `delay` has passed (client-go's `AddAfter`).
    ///
    /// A zero delay adds immediately. If the item is already waiting, the
    /// earlier of the two deadlines is kept. Ignored while shutting down;
    /// items still waiting when the queue shuts down are dropped.
    ///
    /// # Tokio runtime
    ///
    /// Deadlines are kept by one timer task per queue, spawned on the current
    /// Tokio runtime by the first `add_after` with a non-zero delay, and
    /// stopped by shutdown (or when the last queue handle is dropped). That
    /// first call must therefore happen inside a Tokio runtime; outside one,
    /// the item is added immediately and an error is logged. The timer lives
    /// on the runtime of that first call, so a queue should not outlive it.
    /// Deadlines use `tokio::time`, so a paused test clock applies.
    pub fn add_after(&self, item: T, delay: Duration) {
        if let Some(sink) = &self.shared.metrics
            && !self.is_shutting_down()
        {
            sink.retry();
        }
        if delay.is_zero() {
            self.add(item);
            return;
        }
        if !self.ensure_timer() {
            tracing::error!("WorkQueue::add_after called outside a Tokio runtime; adding the item without delay");
            self.add(item);
            return;
        }
        let now = Instant::now();
        let at = now.checked_add(delay).or_else(|| now.checked_add(FAR_FUTURE)).unwrap_or(now);
        let mut st = self.shared.lock();
        if st.is_shutting_down() {
            return;
        }
        let earliest = st.waiting.insert(item, at);
        drop(st);
        if earliest {
            self.shared.timer_wake.notify_one();
        }
    }

    /// Spawns the timer task unless it runs already; false without a runtime.
    fn ensure_timer(&self) -> bool {
        if self.shared.timer_started.load(AtomicOrdering::Acquire) {
            return true;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        if self
            .shared
            .timer_started
            .compare_exchange(false, true, AtomicOrdering::AcqRel, AtomicOrdering::Acquire)
            .is_ok()
        {
            let weak = Arc::downgrade(&self.shared);
            let wake = Arc::clone(&self.shared.timer_wake);
            handle.spawn(run_timer(weak, wake));
        }
        true
    }
}

/// Moves due items onto the queue, then sleeps until the next deadline or a
/// wake-up. Holds only a `Weak` while sleeping so it never keeps a dropped
/// queue alive.
async fn run_timer<T: Clone + Eq + Hash + Send + Sync + 'static>(weak: Weak<Shared<T>>, wake: Arc<Notify>) {
    loop {
        let next = {
            let Some(shared) = weak.upgrade() else {
                return;
            };
            let mut st = shared.lock();
            if st.is_shutting_down() {
                return;
            }
            let now = Instant::now();
            let mut added = 0;
            while let Some(item) = st.waiting.pop_due(now) {
                // A metrics sink that panics here must not end this task:
                // every later `add_after` would wait forever. The item is
                // queued before the sink hears of it.
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| st.add(item))) {
                    Ok(true) => added += 1,
                    Ok(false) => {}
                    Err(_) => {
                        tracing::error!("work queue: the metrics sink panicked as a delayed item was added");
                        added += 1;
                    }
                }
            }
            let next = st.waiting.next_deadline();
            let waiters = st.waiters();
            drop(st);
            shared.wake_getters(added, waiters);
            next
        };
        // `notify_one` stores a permit when we are not yet waiting, so a
        // wake-up sent between the unlock above and here is not lost.
        match next {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use futures::FutureExt;

    use super::*;

    const MS: Duration = Duration::from_millis(1);
    /// Hang guard only (in paused-clock tests it is virtual time anyway).
    const GUARD: Duration = Duration::from_secs(3600);

    fn alive_tasks() -> usize {
        tokio::runtime::Handle::current().metrics().num_alive_tasks()
    }

    /// Lets the timer task run without advancing the paused clock.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn item_appears_at_its_deadline() {
        let q = WorkQueue::new();
        let start = Instant::now();
        q.add_after("a", 100 * MS);
        settle().await;
        assert_eq!(q.len(), 0);
        tokio::time::advance(99 * MS).await;
        settle().await;
        assert_eq!(q.len(), 0, "not due yet");
        let got = tokio::time::timeout(GUARD, q.get()).await.unwrap();
        assert_eq!(got, Some("a"));
        let waited = start.elapsed();
        // Tokio's timer has millisecond resolution and rounds up.
        assert!((100 * MS..102 * MS).contains(&waited), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn items_come_out_in_deadline_order() {
        let q = WorkQueue::new();
        q.add_after('a', 300 * MS);
        q.add_after('b', 100 * MS);
        q.add_after('c', 200 * MS);
        q.add('d');
        let mut got = Vec::new();
        for _ in 0..4 {
            let item = tokio::time::timeout(GUARD, q.get()).await.unwrap().unwrap();
            q.done(&item);
            got.push(item);
        }
        assert_eq!(got, ['d', 'b', 'c', 'a']);
    }

    #[tokio::test(start_paused = true)]
    async fn earlier_deadline_wins_and_fires_once() {
        for (first, second) in [(10_000, 1_000), (1_000, 10_000)] {
            let q = WorkQueue::new();
            let start = Instant::now();
            q.add_after(1, first * MS);
            q.add_after(1, second * MS);
            let got = tokio::time::timeout(GUARD, q.get()).await.unwrap();
            assert_eq!(got, Some(1));
            let waited = start.elapsed();
            assert!((1_000 * MS..1_002 * MS).contains(&waited), "{waited:?}");
            q.done(&1);
            // The later deadline was dropped, not kept as a second entry.
            tokio::time::advance(20_000 * MS).await;
            settle().await;
            assert_eq!(q.len(), 0, "fired twice for ({first}, {second})");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_item_already_queued_is_not_duplicated() {
        let q = WorkQueue::new();
        q.add(1);
        q.add_after(1, 10 * MS);
        tokio::time::advance(20 * MS).await;
        settle().await;
        assert_eq!(q.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_adds_now_without_a_timer() {
        let q = WorkQueue::new();
        q.add_after(3, Duration::ZERO);
        assert_eq!(q.len(), 1);
        assert!(!q.shared.timer_started.load(AtomicOrdering::Acquire));
        assert_eq!(alive_tasks(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn one_timer_task_per_queue_stopped_by_shutdown() {
        let q = WorkQueue::new();
        for i in 0..10 {
            q.add_after(i, (i + 1) * 10 * MS);
        }
        settle().await;
        assert_eq!(alive_tasks(), 1);
        tokio::time::advance(35 * MS).await;
        settle().await;
        assert_eq!(q.len(), 3);
        q.shut_down();
        settle().await;
        assert_eq!(alive_tasks(), 0);
        // Items still waiting were dropped; queued ones are still handed out.
        tokio::time::advance(GUARD).await;
        let mut got = Vec::new();
        while let Some(item) = q.get().await {
            got.push(item);
        }
        assert_eq!(got, [0, 1, 2]);
        q.add_after(99, MS);
        assert_eq!(alive_tasks(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn timer_does_not_keep_a_dropped_queue_alive() {
        let q = WorkQueue::new();
        q.add_after("x", 1_000 * MS);
        settle().await;
        assert_eq!(alive_tasks(), 1);
        let weak = Arc::downgrade(&q.shared);
        drop(q);
        assert!(weak.upgrade().is_none());
        settle().await;
        assert_eq!(alive_tasks(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn due_items_wake_every_waiting_getter() {
        let q = WorkQueue::new();
        let getters: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.get().await })
            })
            .collect();
        settle().await;
        for i in 0..4 {
            q.add_after(i, 50 * MS);
        }
        let mut got = HashSet::new();
        for g in getters {
            let item = tokio::time::timeout(GUARD, g).await.unwrap().unwrap();
            got.insert(item.unwrap());
        }
        assert_eq!(got, (0..4).collect());
    }

    #[tokio::test(start_paused = true)]
    async fn huge_delays_do_not_overflow() {
        let q = WorkQueue::new();
        q.add_after(1, Duration::MAX);
        q.add_after(2, Duration::from_secs(u64::MAX / 2));
        tokio::time::advance(Duration::from_secs(86_400 * 365)).await;
        settle().await;
        assert_eq!(q.len(), 0);
        assert_eq!(q.shared.lock().waiting.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn moving_a_deadline_earlier_repeatedly_keeps_the_heap_bounded() {
        let q = WorkQueue::new();
        for i in 0..1_000u32 {
            q.add_after(7, Duration::from_secs(2_000 - u64::from(i)));
        }
        {
            let st = q.shared.lock();
            assert_eq!(st.waiting.len(), 1);
            assert!(st.waiting.heap.len() <= 2 * st.waiting.len() + 64);
        }
        let got = tokio::time::timeout(GUARD, q.get()).await.unwrap();
        assert_eq!(got, Some(7));
        q.done(&7);
        tokio::time::advance(Duration::from_secs(3_000)).await;
        settle().await;
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn outside_a_runtime_the_item_is_added_at_once() {
        let q = WorkQueue::new();
        q.add_after("late", Duration::from_secs(60));
        assert_eq!(q.get().now_or_never().flatten(), Some("late"));
    }
}
