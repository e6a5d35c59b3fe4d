//! Work queues with client-go's `util/workqueue` semantics: dedupe while
//! queued, one worker per item, delayed and rate-limited re-adds.
//!
//! * [`WorkQueue`] — `add`, `get`, `done`, `add_after`, `shut_down`,
//!   `shut_down_with_drain` (client-go's `Interface` + `DelayingInterface`).
//! * [`RateLimitingQueue`] — adds `add_rate_limited`, `forget`,
//!   `num_requeues` on top of a [`RateLimiter`].
//! * [`WorkQueueMetrics`] — client-go's queue metrics (depth, adds, queue
//!   and work durations, unfinished work, retries), for
//!   [`WorkQueue::with_metrics`] and [`RateLimitingQueue::with_queue`].
//! * Rate limiters: [`ItemExponentialFailureRateLimiter`],
//!   [`BucketRateLimiter`], [`ItemFastSlowRateLimiter`],
//!   [`MaxOfRateLimiter`], [`WithMaxWaitRateLimiter`] and
//!   [`default_controller_rate_limiter`].
//! * [`parallelize_until`] — client-go's `ParallelizeUntil`: pieces of work
//!   over a number of threads until done or shutdown.

mod delaying;
mod metrics;
mod parallelizer;
mod queue;
mod rate_limiter;
mod rate_limiting;

pub use metrics::WorkQueueMetrics;
pub use parallelizer::parallelize_until;
pub use queue::WorkQueue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter,
    WithMaxWaitRateLimiter, default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;
