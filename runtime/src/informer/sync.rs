//! Waiting for caches and handlers to sync (client-go's `HasSynced` and
//! `cache.WaitForCacheSync`).

use std::time::Duration;

use super::processor::HandlerRegistration;

/// How often [`wait_for_cache_sync`] polls, as client-go's `syncedPollPeriod`.
const SYNCED_POLL_PERIOD: Duration = Duration::from_millis(100);

/// Something that becomes synced once: an informer, or a handler
/// registration.
pub trait HasSynced: Send + Sync {
    /// Whether it has synced.
    fn has_synced(&self) -> bool;

    /// Whether it was stopped, so it will never sync if it has not yet.
    fn is_stopped(&self) -> bool {
        false
    }
}

impl HasSynced for HandlerRegistration {
    fn has_synced(&self) -> bool {
        HandlerRegistration::has_synced(self)
    }

    fn is_stopped(&self) -> bool {
        HandlerRegistration::is_stopped(self)
    }
}

/// Waits until everything in `synced` has synced (true), or until one of
/// them is stopped before syncing (false), polling every 100 ms like
/// client-go's `WaitForCacheSync`. Put it under a timeout to give up earlier.
pub async fn wait_for_cache_sync(synced: &[&dyn HasSynced]) -> bool {
    loop {
        if synced.iter().all(|s| s.has_synced()) {
            return true;
        }
        if synced.iter().any(|s| !s.has_synced() && s.is_stopped()) {
            return false;
        }
        tokio::time::sleep(SYNCED_POLL_PERIOD).await;
    }
}
