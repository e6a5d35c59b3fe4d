//! Fan-out of informer notifications to handlers (client-go's
//! `sharedProcessor` and `processorListener`): one unbounded queue and one
//! thread per handler, so no handler waits for another or stalls the watch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::handler::{Deleted, ErasedHandler};
use crate::object::ErasedObject;

/// The shortest resync period honoured, as client-go's `minimumResyncPeriod`.
pub(crate) const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// One event on its way to one handler.
#[derive(Clone)]
pub(crate) enum Notification {
    Add { obj: ErasedObject, is_in_initial_list: bool },
    Update { old: ErasedObject, new: ErasedObject },
    Delete(Deleted),
}

/// Whether the informer has applied its first full list, and whether it has
/// been shut down.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SyncState {
    pub(crate) synced: bool,
    pub(crate) stopped: bool,
}

/// State a handler's thread shares with its registration.
#[derive(Debug, Default)]
pub(crate) struct ListenerState {
    /// Initial-list notifications queued but not yet handled.
    pending_initial: AtomicUsize,
    /// Set when the handler is removed or the informer shuts down.
    stopped: AtomicBool,
}

/// The handle [`super::SharedIndexInformer::add_event_handler`] returns.
///
/// Use it to ask whether this handler has seen the whole initial list
/// ([`HandlerRegistration::has_synced`]) and to remove the handler.
#[derive(Debug, Clone)]
pub struct HandlerRegistration {
    pub(crate) id: u64,
    state: Arc<ListenerState>,
    sync: watch::Receiver<SyncState>,
}

impl HandlerRegistration {
    /// True once the informer has synced **and** this handler has processed
    /// every notification of the initial list (or, for a handler added later,
    /// of the replay of the cache). Once true it stays true, also after the
    /// handler is removed or the informer stops, as client-go's; a handler
    /// stopped before that never syncs ([`is_stopped`](Self::is_stopped)
    /// tells the two apart).
    pub fn has_synced(&self) -> bool {
        self.sync.borrow().synced && self.state.pending_initial.load(Ordering::Acquire) == 0
    }

    /// Whether this handler was removed or its informer shut down, so it will
    /// never sync.
    pub fn is_stopped(&self) -> bool {
        self.state.stopped.load(Ordering::Acquire) || self.sync.borrow().stopped
    }
}

/// Notifications handed to a handler's thread at once: a burst of events
/// (a list, a chunk of watch events) costs one wake-up of the thread, not
/// one per event.
type Batch = Vec<Notification>;

/// A handler and its queue, waiting for a runtime to run on.
type IdleListener = (Box<dyn ErasedHandler>, mpsc::UnboundedReceiver<Batch>);

/// A registered handler, as the dispatcher sees it.
struct Listener {
    id: u64,
    tx: mpsc::UnboundedSender<Batch>,
    /// Queued by the dispatcher, not yet handed to the thread: see
    /// [`Processor::flush`].
    pending: Batch,
    state: Arc<ListenerState>,
    resync: Option<Duration>,
    next_resync: Option<Instant>,
    /// The handler and its queue, until a runtime is there to run them.
    idle: Option<IdleListener>,
    task: Option<JoinHandle<()>>,
}

impl Listener {
    fn send(&mut self, notification: Notification) {
        if is_initial(&notification) {
            self.state.pending_initial.fetch_add(1, Ordering::AcqRel);
        }
        self.pending.push(notification);
    }

    /// Hands the queued notifications to the handler's thread.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        // Sending fails only when the handler's thread is gone (it panicked
        // or was removed); the events then have nowhere to go, and initial
        // ones never handled keep the registration from syncing.
        let _ = self.tx.send(std::mem::take(&mut self.pending));
    }

    fn spawn(&mut self, runtime: &Handle) {
        if let Some((handler, rx)) = self.idle.take() {
            let state = self.state.clone();
            // A plain thread, not Tokio's blocking pool: the runtime does not
            // wait for it when it is dropped (a handler holding its own
            // informer would otherwise keep it alive forever), and handlers
            // do not use up the pool. The task only reports the thread's end.
            // The thread is in the informer's runtime, as a goroutine is in
            // Go's: a handler may `add_after` to a work queue (its timer is a
            // task), `tokio::spawn` or use `Handle::current()`.
            let (done, ended) = tokio::sync::oneshot::channel::<()>();
            let context = runtime.clone();
            let spawned = std::thread::Builder::new().name("informer-handler".into()).spawn(move || {
                let _in_runtime = context.enter();
                run_listener(handler, rx, state);
                let _ = done.send(());
            });
            match spawned {
                Ok(_) => {
                    self.task = Some(runtime.spawn(async move {
                        let _ = ended.await;
                    }));
                }
                Err(err) => {
                    tracing::error!(error = %err, "could not start an informer handler thread");
                    self.state.stopped.store(true, Ordering::Release);
                }
            }
        }
    }
}

fn is_initial(notification: &Notification) -> bool {
    matches!(notification, Notification::Add { is_in_initial_list: true, .. })
}

/// A handler's thread: handles its notifications one by one, in order.
fn run_listener(
    mut handler: Box<dyn ErasedHandler>,
    mut rx: mpsc::UnboundedReceiver<Batch>,
    state: Arc<ListenerState>,
) {
    /// Marks the registration stopped when the thread ends, also by a panic
    /// in the handler, so waits on its `has_synced` end instead of hanging.
    struct StopOnExit(Arc<ListenerState>);
    impl Drop for StopOnExit {
        fn drop(&mut self) {
            if std::thread::panicking() {
                tracing::error!("an informer event handler panicked; it gets no further events");
            }
            self.0.stopped.store(true, Ordering::Release);
        }
    }
    let _stop_on_exit = StopOnExit(state.clone());
    while let Some(batch) = rx.blocking_recv() {
        for notification in batch {
            if state.stopped.load(Ordering::Acquire) {
                return;
            }
            match notification {
                Notification::Add { obj, is_in_initial_list } => {
                    handler.on_add(obj, is_in_initial_list);
                    if is_in_initial_list {
                        state.pending_initial.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                Notification::Update { old, new } => handler.on_update(old, new),
                Notification::Delete(obj) => handler.on_delete(obj),
            }
        }
    }
}

/// All handlers of one informer. Lives behind the informer's dispatch lock:
/// whoever holds it may change the cache and must queue the matching
/// notifications before letting go, which is what keeps every handler's view
/// consistent with the cache.
#[derive(Default)]
pub(crate) struct Processor {
    listeners: Vec<Listener>,
    runtime: Option<Handle>,
    stopped: bool,
}

impl Processor {
    /// Registers `handler`, first queueing `replay` to it as initial-list adds.
    /// `resync_from` is `Some(now)` once the informer has synced, starting the
    /// handler's resync clock.
    pub(crate) fn add_listener(
        &mut self,
        handler: Box<dyn ErasedHandler>,
        resync: Option<Duration>,
        replay: Vec<ErasedObject>,
        resync_from: Option<Instant>,
        sync: watch::Receiver<SyncState>,
    ) -> HandlerRegistration {
        // Unique across informers, so that removing a registration through
        // another informer removes nothing, as client-go's by identity.
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let state = Arc::new(ListenerState::default());
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        if self.stopped {
            // Added after the informer stopped: it never gets its initial
            // list, so it never syncs (the informer's own sync state may
            // say synced).
            state.pending_initial.store(1, Ordering::Release);
            state.stopped.store(true, Ordering::Release);
            return HandlerRegistration { id, state, sync };
        }
        let resync = resync.filter(|d| !d.is_zero()).map(|d| d.max(MINIMUM_RESYNC_PERIOD));
        let (tx, rx) = mpsc::unbounded_channel();
        let mut listener = Listener {
            id,
            tx,
            pending: Vec::new(),
            state: state.clone(),
            resync,
            next_resync: resync_from.zip(resync).and_then(|(now, d)| now.checked_add(d)),
            idle: Some((handler, rx)),
            task: None,
        };
        for obj in replay {
            listener.send(Notification::Add { obj, is_in_initial_list: true });
        }
        listener.flush();
        if let Some(runtime) = &self.runtime {
            listener.spawn(runtime);
        }
        self.listeners.push(listener);
        HandlerRegistration { id, state, sync }
    }

    /// Removes a handler; its thread ends after the notification it is busy with.
    pub(crate) fn remove_listener(&mut self, id: u64) {
        self.listeners.retain(|listener| {
            if listener.id != id {
                return true;
            }
            listener.state.stopped.store(true, Ordering::Release);
            false
        });
    }

    /// Starts the threads of handlers added before the informer started.
    pub(crate) fn start(&mut self, runtime: Handle) {
        for listener in &mut self.listeners {
            listener.spawn(&runtime);
        }
        self.runtime = Some(runtime);
    }

    /// Queues `notification` to every handler; it reaches them with the
    /// next [`flush`](Self::flush).
    pub(crate) fn distribute(&mut self, notification: Notification) {
        if let Some((last, rest)) = self.listeners.split_last_mut() {
            for listener in rest {
                listener.send(notification.clone());
            }
            last.send(notification);
        }
    }

    /// Hands every handler's queued notifications to its thread. The
    /// informer calls it after each burst of events it applies, before it
    /// waits for more; order per handler is kept, and a handler added in
    /// between gets the cache (which already holds the queued changes) and
    /// none of the queued notifications.
    pub(crate) fn flush(&mut self) {
        for listener in &mut self.listeners {
            listener.flush();
        }
        // A handler whose thread ended (it panicked) gets nothing more:
        // stop copying events and resyncs for it.
        self.listeners.retain(|listener| !(listener.task.is_some() && listener.state.stopped.load(Ordering::Acquire)));
    }

    /// Starts every handler's resync clock at `now` (done when the informer
    /// syncs: there is nothing to resync before).
    pub(crate) fn start_resync_clocks(&mut self, now: Instant) {
        for listener in &mut self.listeners {
            listener.next_resync = listener.resync.and_then(|d| now.checked_add(d));
        }
    }

    /// When the next handler is due for a resync.
    pub(crate) fn next_resync(&self) -> Option<Instant> {
        self.listeners.iter().filter_map(|l| l.next_resync).min()
    }

    /// Queues `update(obj, obj)` for every object in `cache` to each handler
    /// whose resync is due at `now`, and restarts their clocks.
    pub(crate) fn resync(&mut self, now: Instant, cache: impl FnOnce() -> Vec<ErasedObject>) {
        let mut cache = Some(cache);
        let mut snapshot = Vec::new();
        for listener in &mut self.listeners {
            let (Some(due), Some(period)) = (listener.next_resync, listener.resync) else {
                continue;
            };
            if due > now {
                continue;
            }
            if let Some(take) = cache.take() {
                snapshot = take();
            }
            for obj in &snapshot {
                listener.send(Notification::Update { old: obj.clone(), new: obj.clone() });
            }
            listener.flush();
            // A period beyond the clock's range is never.
            listener.next_resync = now.checked_add(period);
        }
    }

    /// Stops every handler and hands back their threads to wait for; later
    /// registrations are refused.
    pub(crate) fn stop(&mut self) -> Vec<JoinHandle<()>> {
        self.stopped = true;
        std::mem::take(&mut self.listeners)
            .into_iter()
            .filter_map(|listener| {
                listener.state.stopped.store(true, Ordering::Release);
                listener.task
            })
            .collect()
    }
}
