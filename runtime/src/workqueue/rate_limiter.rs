//! Rate limiters deciding how long a failed item waits before it is retried
//! (client-go's `workqueue.TypedRateLimiter` and its implementations).

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// Decides how long an item waits before it is retried.
///
/// Used by [`RateLimitingQueue::add_rate_limited`](super::RateLimitingQueue::add_rate_limited).
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait now; counts as one more failure of it.
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item` (it succeeded); its next failure starts afresh.
    fn forget(&self, item: &T);
    /// How many times `item` has been rate limited since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultTypedControllerRateLimiter`: the larger of a per-item
/// exponential backoff (5 ms doubling up to 1000 s) and an overall token
/// bucket (10 qps, burst 100).
pub fn default_controller_rate_limiter<T: Clone + Eq + Hash + Send + Sync + 'static>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::default()),
        Box::new(BucketRateLimiter::default()),
    ])
}

fn lock<S>(m: &Mutex<S>) -> MutexGuard<'_, S> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts one more failure of `item`; returns the count before this one.
fn bump<T: Clone + Eq + Hash>(failures: &Mutex<HashMap<T, u32>>, item: &T) -> u32 {
    let mut failures = lock(failures);
    match failures.get_mut(item) {
        Some(n) => {
            let before = *n;
            *n = n.saturating_add(1);
            before
        }
        None => {
            failures.insert(item.clone(), 1);
            0
        }
    }
}

/// Per-item exponential backoff: `base · 2^failures`, capped at `max`
/// (client-go's `ItemExponentialFailureRateLimiter`).
///
/// The default is 5 ms .. 1000 s. The computation saturates at `max` instead
/// of overflowing, however many failures an item has.
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// Backoff starting at `base` and doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialFailureRateLimiter { base, max, failures: Mutex::new(HashMap::new()) }
    }

    /// `base * 2^exp`, at most `max` (client-go's arithmetic, which also
    /// keeps a zero base at zero however many failures there were).
    fn backoff(&self, exp: u32) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        let nanos = 1u128.checked_shl(exp).and_then(|factor| self.base.as_nanos().checked_mul(factor));
        match nanos {
            // Below `max`, so the seconds fit in a u64.
            Some(n) if n < self.max.as_nanos() => Duration::new((n / 1_000_000_000) as u64, (n % 1_000_000_000) as u32),
            _ => self.max,
        }
    }
}

impl<T> Default for ItemExponentialFailureRateLimiter<T> {
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.backoff(bump(&self.failures, item))
    }
    fn forget(&self, item: &T) {
        lock(&self.failures).remove(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        lock(&self.failures).get(item).copied().unwrap_or(0)
    }
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .field("tracked", &lock(&self.failures).len())
            .finish()
    }
}

/// Per-item: `fast` delay for the first `max_fast_attempts` failures, `slow`
/// after that (client-go's `ItemFastSlowRateLimiter`).
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    failures: Mutex<HashMap<T, u32>>,
}

impl<T> ItemFastSlowRateLimiter<T> {
    /// `fast` for the first `max_fast_attempts` failures of an item, then `slow`.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlowRateLimiter { fast, slow, max_fast_attempts, failures: Mutex::new(HashMap::new()) }
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let failures = bump(&self.failures, item).saturating_add(1);
        if failures <= self.max_fast_attempts { self.fast } else { self.slow }
    }
    fn forget(&self, item: &T) {
        lock(&self.failures).remove(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        lock(&self.failures).get(item).copied().unwrap_or(0)
    }
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .field("tracked", &lock(&self.failures).len())
            .finish()
    }
}

/// An overall token bucket shared by all items (client-go's
/// `BucketRateLimiter` over `golang.org/x/time/rate`).
///
/// The bucket starts full with `burst` tokens and refills at `qps` tokens per
/// second. Each [`when`](RateLimiter::when) reserves one token: the delay is
/// zero while tokens remain, otherwise the time until the reserved token
/// exists — so after the burst, items are spaced `1/qps` apart. Default: 10
/// qps, burst 100.
///
/// Edge cases follow `x/time/rate`: an infinite `qps` never delays, and
/// neither does a NaN one (its token count is NaN, never short); with
/// `burst == 0`, or once the burst is spent with `qps <= 0`, the delay is
/// `Duration::MAX` ("never").
pub struct BucketRateLimiter {
    qps: f64,
    burst: u32,
    bucket: Mutex<Bucket>,
}

struct Bucket {
    tokens: f64,
    last: Option<Instant>,
}

impl BucketRateLimiter {
    /// A bucket of `burst` tokens refilled at `qps` tokens per second.
    pub fn new(qps: f64, burst: u32) -> Self {
        BucketRateLimiter { qps, burst, bucket: Mutex::new(Bucket { tokens: f64::from(burst), last: None }) }
    }

    /// Reserves one token at `now`; returns how long until it may be used
    /// (`x/time/rate`'s `Reserve().Delay()`).
    pub(crate) fn reserve_at(&self, now: Instant) -> Duration {
        if self.qps == f64::INFINITY {
            return Duration::ZERO;
        }
        if self.burst == 0 {
            return Duration::MAX;
        }
        if self.qps.is_nan() {
            return Duration::ZERO;
        }
        let refills = self.qps > 0.0;
        let mut bucket = lock(&self.bucket);
        let mut tokens = bucket.tokens;
        if refills && let Some(last) = bucket.last {
            let elapsed = now.saturating_duration_since(last);
            tokens = (tokens + elapsed.as_secs_f64() * self.qps).min(f64::from(self.burst));
        }
        tokens -= 1.0;
        bucket.tokens = tokens;
        bucket.last = Some(now);
        if tokens >= 0.0 {
            Duration::ZERO
        } else if refills {
            Duration::try_from_secs_f64(-tokens / self.qps).unwrap_or(Duration::MAX)
        } else {
            Duration::MAX
        }
    }
}

impl Default for BucketRateLimiter {
    fn default() -> Self {
        Self::new(10.0, 100)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve_at(Instant::now())
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

impl fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketRateLimiter").field("qps", &self.qps).field("burst", &self.burst).finish()
    }
}

/// The largest delay of several limiters (client-go's `MaxOfRateLimiter`).
///
/// Every limiter sees every call, so per-item counters all advance;
/// `num_requeues` is the largest count among them.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`; with none, every delay is zero.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters.iter().map(|l| l.when(item)).max().unwrap_or(Duration::ZERO)
    }
    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters.iter().map(|l| l.num_requeues(item)).max().unwrap_or(0)
    }
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter").field("limiters", &self.limiters.len()).finish()
    }
}

/// Another limiter's delays, capped at `max_delay` (client-go's
/// `WithMaxWaitRateLimiter`); `forget` and `num_requeues` go to it
/// unchanged.
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_delay: Duration,
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// `limiter`'s delays, none longer than `max_delay`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { limiter, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }
    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}

impl<T> fmt::Debug for WithMaxWaitRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithMaxWaitRateLimiter").field("max_delay", &self.max_delay).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn exponential_doubles_from_base_and_caps() {
        let rl = ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1));
        let got: Vec<_> = (0..10).map(|_| rl.when(&"a")).collect();
        let want: Vec<_> = [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000].iter().map(|&n| n * MS).collect();
        assert_eq!(got, want);
        assert_eq!(rl.num_requeues(&"a"), 10);
        // Items are independent.
        assert_eq!(rl.when(&"b"), 5 * MS);
        assert_eq!(rl.num_requeues(&"b"), 1);
    }

    #[test]
    fn exponential_forget_resets() {
        let rl = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1));
        rl.when(&1);
        rl.when(&1);
        assert_eq!(rl.when(&1), 4 * MS);
        rl.forget(&1);
        assert_eq!(rl.num_requeues(&1), 0);
        assert_eq!(rl.when(&1), MS);
    }

    #[test]
    fn exponential_saturates_without_overflow() {
        let max = Duration::from_secs(1000);
        let rl = ItemExponentialFailureRateLimiter::new(Duration::from_secs(u64::MAX / 4), max);
        assert_eq!(rl.when(&"x"), max);
        let rl = ItemExponentialFailureRateLimiter::<&str>::default();
        *lock(&rl.failures).entry("y").or_default() = u32::MAX - 1;
        assert_eq!(rl.when(&"y"), max);
        assert_eq!(rl.when(&"y"), max);
        assert_eq!(rl.num_requeues(&"y"), u32::MAX);
        // 5 ms · 2^17 = 655.36 s < 1000 s < 5 ms · 2^18.
        assert_eq!(rl.backoff(17), Duration::from_millis(655_360));
        assert_eq!(rl.backoff(18), max);
        assert_eq!(rl.backoff(31), max);
        assert_eq!(rl.backoff(32), max);
        // Past 32 failures the arithmetic goes on, as client-go's float
        // arithmetic does: a zero base stays zero, a small one doubles on.
        let zero = ItemExponentialFailureRateLimiter::<&str>::new(Duration::ZERO, max);
        assert_eq!(zero.backoff(40), Duration::ZERO);
        assert_eq!(zero.backoff(u32::MAX), Duration::ZERO);
        let tiny = ItemExponentialFailureRateLimiter::<&str>::new(Duration::from_nanos(1), Duration::from_secs(3600));
        assert_eq!(tiny.backoff(35), Duration::from_nanos(1 << 35));
        assert_eq!(tiny.backoff(127), Duration::from_secs(3600));
        assert_eq!(tiny.backoff(128), Duration::from_secs(3600));
        let unbounded = ItemExponentialFailureRateLimiter::<&str>::new(Duration::from_secs(1), Duration::MAX);
        assert_eq!(unbounded.backoff(40), Duration::from_secs(1 << 40));
        assert_eq!(unbounded.backoff(100), Duration::MAX);
    }

    #[test]
    fn fast_slow_switches_after_max_fast_attempts() {
        let rl = ItemFastSlowRateLimiter::new(5 * MS, 10 * MS, 3);
        let got: Vec<_> = (0..5).map(|_| rl.when(&"a")).collect();
        assert_eq!(got, vec![5 * MS, 5 * MS, 5 * MS, 10 * MS, 10 * MS]);
        assert_eq!(rl.num_requeues(&"a"), 5);
        assert_eq!(rl.when(&"b"), 5 * MS);
        rl.forget(&"a");
        assert_eq!(rl.num_requeues(&"a"), 0);
        assert_eq!(rl.when(&"a"), 5 * MS);
    }

    #[test]
    fn bucket_burst_then_spacing() {
        let rl = BucketRateLimiter::new(10.0, 100);
        let t0 = Instant::now();
        for i in 0..100 {
            assert_eq!(rl.reserve_at(t0), Duration::ZERO, "token {i}");
        }
        assert_eq!(rl.reserve_at(t0), 100 * MS);
        assert_eq!(rl.reserve_at(t0), 200 * MS);
        assert_eq!(rl.reserve_at(t0), 300 * MS);
        // 500 ms later five tokens have refilled; three pay back the
        // reservations above, two are free, then spacing resumes.
        let t1 = t0 + 500 * MS;
        assert_eq!(rl.reserve_at(t1), Duration::ZERO);
        assert_eq!(rl.reserve_at(t1), Duration::ZERO);
        assert_eq!(rl.reserve_at(t1), 100 * MS);
        // After a long pause the bucket is full again, but not beyond burst.
        let later = t0 + Duration::from_secs(3600);
        for _ in 0..100 {
            assert_eq!(rl.reserve_at(later), Duration::ZERO);
        }
        assert_eq!(rl.reserve_at(later), 100 * MS);
        assert_eq!(RateLimiter::<&str>::num_requeues(&rl, &"a"), 0);
    }

    #[test]
    fn bucket_edge_rates() {
        let t0 = Instant::now();
        let unlimited = BucketRateLimiter::new(f64::INFINITY, 0);
        assert!((0..1000).all(|_| unlimited.reserve_at(t0).is_zero()));
        let no_burst = BucketRateLimiter::new(10.0, 0);
        assert_eq!(no_burst.reserve_at(t0), Duration::MAX);
        let no_refill = BucketRateLimiter::new(0.0, 2);
        assert_eq!(no_refill.reserve_at(t0), Duration::ZERO);
        assert_eq!(no_refill.reserve_at(t0), Duration::ZERO);
        assert_eq!(no_refill.reserve_at(t0 + Duration::from_secs(60)), Duration::MAX);
        let nan = BucketRateLimiter::new(f64::NAN, 1);
        assert_eq!(nan.reserve_at(t0), Duration::ZERO);
        assert_eq!(nan.reserve_at(t0), Duration::ZERO, "x/time/rate: NaN tokens are never short");
        assert_eq!(BucketRateLimiter::new(f64::NAN, 0).reserve_at(t0), Duration::MAX);
    }

    #[test]
    fn with_max_wait_caps_the_delay_and_passes_the_rest_on() {
        let inner = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1000));
        let rl = WithMaxWaitRateLimiter::new(Box::new(inner), 10 * MS);
        let got: Vec<_> = (0..6).map(|_| rl.when(&"a")).collect();
        assert_eq!(got, [MS, 2 * MS, 4 * MS, 8 * MS, 10 * MS, 10 * MS]);
        assert_eq!(rl.num_requeues(&"a"), 6, "the inner limiter counts every failure");
        rl.forget(&"a");
        assert_eq!((rl.num_requeues(&"a"), rl.when(&"a")), (0, MS));
    }

    #[test]
    fn max_of_takes_largest_and_forgets_all() {
        let rl: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(5 * MS, 3 * Duration::from_secs(1), 3)),
            Box::new(ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1))),
        ]);
        let got: Vec<_> = (0..5).map(|_| rl.when(&"one")).collect();
        assert_eq!(got, vec![5 * MS, 5 * MS, 5 * MS, Duration::from_secs(3), Duration::from_secs(3)]);
        assert_eq!(rl.num_requeues(&"one"), 5);
        rl.forget(&"one");
        assert_eq!(rl.num_requeues(&"one"), 0);
        assert_eq!(rl.when(&"one"), 5 * MS);
        assert_eq!(MaxOfRateLimiter::<u8>::new(Vec::new()).when(&1), Duration::ZERO);
    }

    // Paused clock: `Instant::now()` stands still, so the bucket does not refill.
    #[tokio::test(start_paused = true)]
    async fn default_controller_limiter_is_exponential_under_the_bucket() {
        let rl = default_controller_rate_limiter::<String>();
        let key = "ns/name".to_string();
        let got: Vec<_> = (0..4).map(|_| rl.when(&key)).collect();
        assert_eq!(got, vec![5 * MS, 10 * MS, 20 * MS, 40 * MS]);
        for _ in 0..30 {
            rl.when(&key);
        }
        assert_eq!(rl.when(&key), Duration::from_secs(1000));
        assert_eq!(rl.num_requeues(&key), 35);
        rl.forget(&key);
        assert_eq!(rl.num_requeues(&key), 0);
        // 35 bucket tokens are spent; spending the other 65 on fresh items
        // keeps their delays exponential, the 101st reservation hits the
        // bucket's 100 ms spacing.
        for i in 0..65 {
            assert_eq!(rl.when(&format!("k{i}")), 5 * MS);
        }
        assert_eq!(rl.when(&"fresh".to_string()), 100 * MS);
        assert_eq!(rl.when(&"fresh2".to_string()), 200 * MS);
    }
}
