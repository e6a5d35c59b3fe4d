//! [`RateLimitingQueue`]: a [`WorkQueue`] whose retries are delayed by a
//! [`RateLimiter`] (client-go's `TypedRateLimitingInterface`).

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use super::queue::WorkQueue;
use super::rate_limiter::{RateLimiter, default_controller_rate_limiter};

/// A [`WorkQueue`] with rate-limited re-adds.
///
/// Derefs to the [`WorkQueue`], so `add`, `get`, `done`, `add_after`,
/// `shut_down` … are available directly. Clones share the queue and the
/// limiter.
///
/// The usual controller loop:
///
/// ```no_run
/// # async fn reconcile(_key: &str) -> Result<(), ()> { Ok(()) }
/// # async fn demo() {
/// use codegen_runtime::workqueue::RateLimitingQueue;
///
/// let queue = RateLimitingQueue::<String>::new();
/// while let Some(key) = queue.get().await {
///     match reconcile(&key).await {
///         Ok(()) => queue.forget(&key),
///         Err(()) => queue.add_rate_limited(key.clone()),
///     }
///     queue.done(&key);
/// }
/// # }
/// ```
pub struct RateLimitingQueue<T> {
    queue: WorkQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> RateLimitingQueue<T> {
    /// A queue using [`default_controller_rate_limiter`].
    pub fn new() -> Self {
        Self::with_rate_limiter(default_controller_rate_limiter())
    }

    /// A queue using `limiter`.
    pub fn with_rate_limiter(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_queue(WorkQueue::new(), limiter)
    }

    /// `queue` (e.g. one [`with_metrics`](WorkQueue::with_metrics)) with
    /// rate-limited re-adds by `limiter`.
    pub fn with_queue(queue: WorkQueue<T>, limiter: impl RateLimiter<T> + 'static) -> Self {
        RateLimitingQueue { queue, limiter: Arc::new(limiter) }
    }

    /// Adds `item` after the delay the rate limiter assigns it (client-go's
    /// `AddRateLimited`). Runs on [`add_after`](WorkQueue::add_after), so it
    /// needs a Tokio runtime when the delay is not zero.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Tells the rate limiter `item` succeeded, resetting its backoff. It
    /// does not remove the item from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times `item` was rate limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// The underlying queue.
    pub fn queue(&self) -> &WorkQueue<T> {
        &self.queue
    }
}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> Default for RateLimitingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = WorkQueue<T>;

    fn deref(&self) -> &WorkQueue<T> {
        &self.queue
    }
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue { queue: self.queue.clone(), limiter: Arc::clone(&self.limiter) }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue").field("queue", &self.queue).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;
    use crate::workqueue::ItemFastSlowRateLimiter;

    const MS: Duration = Duration::from_millis(1);
    const GUARD: Duration = Duration::from_secs(3600);

    /// Takes the next item and returns it with the (virtual) time waited.
    async fn next<T: Clone + Eq + Hash + Send + Sync + 'static>(q: &RateLimitingQueue<T>) -> (T, Duration) {
        let start = Instant::now();
        let item = tokio::time::timeout(GUARD, q.get()).await.unwrap().unwrap();
        (item, start.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn retries_back_off_exponentially_until_forgotten() {
        let q = RateLimitingQueue::new();
        q.add("key".to_string());
        let (key, _) = next(&q).await;
        let mut waits = Vec::new();
        for _ in 0..4 {
            // Failed: retry later, as a controller's worker does.
            q.add_rate_limited(key.clone());
            q.done(&key);
            let (again, waited) = next(&q).await;
            assert_eq!(again, key);
            waits.push(waited);
        }
        // Millisecond timer resolution: each wait is its backoff, rounded up.
        for (waited, want) in waits.iter().zip([5, 10, 20, 40]) {
            assert!((want * MS..(want + 2) * MS).contains(waited), "{waits:?}");
        }
        assert_eq!(q.num_requeues(&key), 4);
        q.forget(&key);
        q.done(&key);
        assert_eq!(q.num_requeues(&key), 0);
        q.add_rate_limited(key.clone());
        let (_, waited) = next(&q).await;
        assert!((5 * MS..7 * MS).contains(&waited), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn custom_limiter_and_deref_to_the_queue() {
        let q = RateLimitingQueue::with_rate_limiter(ItemFastSlowRateLimiter::new(MS, Duration::from_secs(60), 1));
        q.add_rate_limited(1u8);
        let (_, fast) = next(&q).await;
        assert!(fast < 3 * MS, "{fast:?}");
        q.done(&1);
        q.add_rate_limited(1);
        let (_, slow) = next(&q).await;
        assert!(slow >= Duration::from_secs(60), "{slow:?}");
        assert_eq!(q.num_requeues(&1), 2);
        // Clones share queue and limiter.
        let clone = q.clone();
        clone.forget(&1);
        assert_eq!(q.num_requeues(&1), 0);
        q.queue().shut_down();
        assert!(clone.is_shutting_down());
    }
}
