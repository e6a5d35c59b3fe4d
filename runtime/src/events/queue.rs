//! Events recorded without waiting for the API server: client-go's
//! broadcaster, which queues each event and writes it from a goroutine.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::Resource;
use tokio::sync::{mpsc, oneshot};

use super::{EventRecorder, EventType, object_reference};

/// Events a queue holds before it drops new ones (client-go's
/// `maxQueuedEvents`).
pub const QUEUE_CAPACITY: usize = 1000;
/// Attempts to create an event before it is given up (client-go's
/// `maxTriesPerEvent`).
pub const MAX_TRIES: u32 = 12;
/// The pause between two attempts, plus up to a quarter (client-go's sleep
/// duration, jittered).
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// What the queue's task is handed.
enum Job {
    /// One recorded occurrence.
    Event(Box<Queued>),
    /// A `flush`: answered once every job before it is done.
    Flush(oneshot::Sender<()>),
}

/// One recorded occurrence, as queued.
struct Queued {
    regarding: ObjectReference,
    related: Option<ObjectReference>,
    event_type: EventType,
    reason: String,
    action: String,
    message: String,
}

/// Counts shared by a queue's handles and its task.
#[derive(Debug, Default)]
struct Counts {
    dropped: AtomicU64,
    failed: AtomicU64,
}

/// Records events without waiting: each call queues the event and returns
/// at once, and a task writes the queued events in order through the
/// [`EventRecorder`] (with its series), as client-go's `EventRecorder`
/// hands events to its broadcaster.
///
/// As in client-go:
/// - at most [`QUEUE_CAPACITY`] events wait; an event recorded while the
///   queue is full is dropped and counted ([`dropped`](Self::dropped));
/// - an event whose create fails in transport (no answer from the server)
///   is sent again, the same event (so one that reached the server is not
///   made twice), after 10 to 12.5 s, at most [`MAX_TRIES`] times in all,
///   while later events go on; one the server refuses is given up and
///   counted ([`failed`](Self::failed)), as are those out of tries. A
///   series count that fails in transport is not counted: the recorder
///   writes it at its next flush.
///
/// Errors are logged (`tracing`), not returned. Cheap to clone; the task
/// ends when the last clone is dropped, after writing what is queued.
///
/// ```no_run
/// # async fn demo(client: kube::Client, pod: k8s_openapi::api::core::v1::Pod) {
/// use codegen_runtime::events::EventRecorder;
///
/// let events = EventRecorder::new(client, "student-controller", None).queue();
/// events.normal(&pod, "Synced", "Pod synced successfully");
/// // Before the controller exits: wait for what is queued.
/// events.flush().await;
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct EventQueue {
    tx: mpsc::Sender<Job>,
    recorder: EventRecorder,
    counts: Arc<Counts>,
}

impl EventRecorder {
    /// A queue that records events through this recorder without waiting
    /// (see [`EventQueue`]). Its task runs on the current Tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn queue(&self) -> EventQueue {
        let (tx, rx) = mpsc::channel(QUEUE_CAPACITY);
        let counts = Arc::new(Counts::default());
        tokio::spawn(run(self.clone(), rx, counts.clone()));
        EventQueue { tx, recorder: self.clone(), counts }
    }
}

impl EventQueue {
    /// Queues a `Normal` event about `regarding` (see
    /// [`EventRecorder::normal`]); `false` when the queue was full and the
    /// event is dropped.
    pub fn normal<K>(&self, regarding: &K, reason: &str, message: &str) -> bool
    where
        K: Resource<DynamicType = ()>,
    {
        self.event(&object_reference(regarding), EventType::Normal, reason, reason, message)
    }

    /// Queues a `Warning` event about `regarding`; see
    /// [`normal`](Self::normal).
    pub fn warning<K>(&self, regarding: &K, reason: &str, message: &str) -> bool
    where
        K: Resource<DynamicType = ()>,
    {
        self.event(&object_reference(regarding), EventType::Warning, reason, reason, message)
    }

    /// Queues an event (see [`EventRecorder::event`]); `false` when it is
    /// dropped.
    pub fn event(
        &self,
        regarding: &ObjectReference,
        event_type: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) -> bool {
        self.event_with_related(regarding, None, event_type, reason, action, message)
    }

    /// Queues an event naming a related object (see
    /// [`EventRecorder::event_with_related`]); `false` when it is dropped.
    pub fn event_with_related(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        event_type: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) -> bool {
        let job = Job::Event(Box::new(Queued {
            regarding: regarding.clone(),
            related: related.cloned(),
            event_type,
            reason: reason.to_owned(),
            action: action.to_owned(),
            message: message.to_owned(),
        }));
        match self.tx.try_send(job) {
            Ok(()) => true,
            Err(_) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(reason, "event queue full: event dropped");
                false
            }
        }
    }

    /// Waits until every event queued before the call has had its first
    /// attempt, then writes the series counts the server does not have yet
    /// ([`EventRecorder::flush`]). Events queued later, and events waiting
    /// to be tried again, are not waited for. Waits for room when the queue
    /// is full.
    pub async fn flush(&self) {
        let (done, answered) = oneshot::channel();
        // The task answers once it reaches the mark; a task that is gone
        // (its runtime shut down) answers nothing and drops the mark.
        if self.tx.send(Job::Flush(done)).await.is_ok() {
            let _ = answered.await;
        }
        if let Err(e) = self.recorder.flush().await {
            tracing::warn!(error = %e, "could not write event counts");
        }
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.counts.dropped.load(Ordering::Relaxed)
    }

    /// Events given up: refused by the server, or out of tries.
    pub fn failed(&self) -> u64 {
        self.counts.failed.load(Ordering::Relaxed)
    }
}

/// Writes the queued events in order; a create that failed in transport is
/// tried again by a task of its own, so that later events go on.
async fn run(recorder: EventRecorder, mut rx: mpsc::Receiver<Job>, counts: Arc<Counts>) {
    while let Some(job) = rx.recv().await {
        let job = match job {
            Job::Event(job) => job,
            Job::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let (result, created) = attempt(&recorder, &job).await;
        match (result, created) {
            (Ok(()), _) => {}
            (Err(e), None) if e.status().is_none() => {
                tracing::debug!(error = %e, reason = %job.reason, "could not write event count; the next flush writes it");
            }
            (Err(e), Some(event)) if e.status().is_none() => {
                tracing::warn!(error = %e, reason = %job.reason, "could not write event; trying again");
                tokio::spawn(retry(recorder.clone(), event, job.reason.clone(), counts.clone()));
            }
            (Err(e), _) => {
                counts.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, reason = %job.reason, "event not written");
            }
        }
    }
}

async fn attempt(recorder: &EventRecorder, job: &Queued) -> (crate::Result<()>, Option<K8sEvent>) {
    recorder.record(&job.regarding, job.related.as_ref(), job.event_type, &job.reason, &job.action, &job.message).await
}

/// Sends the same `event` again (its name and time as first sent), as
/// client-go's recorder does: a create that reached the server without
/// an answer then finds it there, instead of making a second event.
async fn retry(recorder: EventRecorder, event: K8sEvent, reason: String, counts: Arc<Counts>) {
    for tries in 2..=MAX_TRIES {
        tokio::time::sleep(jittered(RETRY_AFTER)).await;
        match recorder.create_again(&event).await {
            Ok(()) => return,
            Err(e) if e.status().is_none() && tries < MAX_TRIES => {
                tracing::debug!(error = %e, tries, "could not write event; trying again");
            }
            Err(e) => {
                tracing::warn!(error = %e, tries, %reason, "event not written");
                if e.status().is_some() {
                    recorder.forget(&event);
                }
                break;
            }
        }
    }
    counts.failed.fetch_add(1, Ordering::Relaxed);
}

/// `base` plus up to a quarter of it (`wait.Jitter(base, 0.25)`), so that
/// clients do not retry in step.
fn jittered(base: Duration) -> Duration {
    let unit = (uuid::Uuid::new_v4().as_u128() % 1_000) as f64 / 1_000.0;
    base.mul_f64(1.0 + 0.25 * unit)
}
