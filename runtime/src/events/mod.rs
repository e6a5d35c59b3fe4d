//! Recording Kubernetes events (events.k8s.io/v1) about objects, the
//! counterpart of client-go's `tools/events` `EventRecorder`.
//!
//! Repeats are counted as client-go counts them: an event like one recorded
//! before (same object, related object, type, reason, action and reporter;
//! the message is not part of that key) is not created again until its
//! series has been quiet for six minutes and its count written. The second
//! occurrence patches the first event's `series` (count 2 and the last
//! observed time); later ones only count, in memory, and the count is
//! written when the series has been quiet for six minutes, every 30 minutes
//! while it goes on, or on [`EventRecorder::flush`]. A series whose event is
//! gone from the server (a 404 on the patch: deleted, or expired by the
//! server's event TTL) is created again.
//!
//! The recorder's methods write in the call and return their errors.
//! [`EventRecorder::queue`] gives an [`EventQueue`], which records as
//! client-go's recorder does: the call queues the event and returns, a task
//! writes it, and failed creates are tried again. The object
//! reference leaves out the resourceVersion (see [`object_reference`]), so
//! repeats about an object that changed in between are one series; a note
//! over 1 kB is cut (the API server would refuse the event).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use kube::api::{Api, Patch, PatchParams, PostParams};
use tokio::time::Instant;

pub use kube::runtime::events::{EventType, Reporter};

use crate::Result;

mod queue;
pub use queue::{EventQueue, MAX_TRIES, QUEUE_CAPACITY};

/// Longest note the API server accepts (`note` must be at most 1 kB).
const MAX_NOTE_BYTES: usize = 1024;
/// A series quiet for this long is finished: its count is written and a
/// new occurrence starts a new event (client-go's `finishTime`).
const FINISH_AFTER: Duration = Duration::from_secs(6 * 60);
/// A running series' count is written at least this often (client-go's
/// `refreshTime`).
const REFRESH_EVERY: Duration = Duration::from_secs(30 * 60);
/// How often the background task looks for series to finish or refresh.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// What makes two events one series (client-go's `eventKey`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    regarding: String,
    related: Option<String>,
    type_: &'static str,
    reason: String,
    action: String,
}

/// An event recorded in the last six minutes.
#[derive(Debug)]
struct Recorded {
    /// The event as created (its name and namespace address the patches).
    event: K8sEvent,
    /// Occurrences so far, and the time of the last one.
    count: i32,
    last_observed: Timestamp,
    last_seen: Instant,
    /// The count the server has, and when it was written.
    written: i32,
    written_at: Instant,
}

impl Recorded {
    /// Whether the series is over: quiet for six minutes with its count
    /// written. Until then a new occurrence counts in it, as in client-go,
    /// where a series stays until its last count is written.
    fn finished(&self, now: Instant) -> bool {
        now.duration_since(self.last_seen) >= FINISH_AFTER && self.count == self.written
    }
}

/// The series of one recorder and its clones.
#[derive(Debug)]
struct Series {
    recorded: HashMap<Key, Recorded>,
    /// When finished series were last forgotten.
    purged_at: Instant,
}

impl Series {
    /// Forgets finished series: by the background task every minute, and
    /// by recording at most once a minute, so that a recorder without the
    /// task (made outside a Tokio runtime) does not grow without bound.
    fn purge(&mut self, now: Instant) {
        self.recorded.retain(|_, r| !r.finished(now));
        self.purged_at = now;
    }
}

type Cache = Mutex<Series>;

/// The request an occurrence makes.
enum Write {
    Create(K8sEvent),
    Series(K8sEvent),
}

/// Records events about objects on behalf of one controller.
///
/// Cheap to clone; clones share the series, so create one per controller
/// and hand clones to its workers. Created inside a Tokio runtime, it
/// writes the counts of quiet series from a background task (which ends
/// with the last clone); without one, only [`flush`](Self::flush) does.
///
/// ```no_run
/// # async fn demo(client: kube::Client, pod: k8s_openapi::api::core::v1::Pod) -> codegen_runtime::Result<()> {
/// use codegen_runtime::events::EventRecorder;
///
/// let recorder = EventRecorder::new(client, "student-controller", None);
/// recorder.normal(&pod, "Synced", "Pod synced successfully").await?;
/// # Ok(()) }
/// ```
///
/// The controller needs RBAC to `create` and `patch` `events` in the API
/// group `events.k8s.io`. Events about cluster-scoped objects are written to
/// the `default` namespace.
#[derive(Clone)]
pub struct EventRecorder {
    client: kube::Client,
    reporter: Reporter,
    cache: Arc<Cache>,
}

impl EventRecorder {
    /// A recorder reporting as `reporting_controller` (the event's
    /// `reportingController`, e.g. `example.com/student-controller`) from
    /// `reporting_instance` (`reportingInstance`, usually the pod name;
    /// `None` uses `<controller>-<hostname>`, as client-go's `NewRecorder`).
    pub fn new(client: kube::Client, reporting_controller: &str, reporting_instance: Option<&str>) -> Self {
        Self::with_reporter(
            client,
            Reporter { controller: reporting_controller.to_owned(), instance: reporting_instance.map(str::to_owned) },
        )
    }

    /// A recorder for a [`Reporter`] built by the caller (an `instance` of
    /// `None` is `<controller>-<hostname>`).
    pub fn with_reporter(client: kube::Client, mut reporter: Reporter) -> Self {
        if reporter.instance.is_none() {
            // Go's os.Hostname() error leaves the name empty, as here.
            let host = hostname::get().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default();
            reporter.instance = Some(format!("{}-{host}", reporter.controller));
        }
        let series = Series { recorded: HashMap::new(), purged_at: Instant::now() };
        let recorder = Self { client, reporter, cache: Arc::new(Mutex::new(series)) };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(sweep(recorder.client.clone(), Arc::downgrade(&recorder.cache)));
        }
        recorder
    }

    /// Who the events are reported by.
    pub fn reporter(&self) -> &Reporter {
        &self.reporter
    }

    /// Records a `Normal` event about `regarding` (client-go's
    /// `Event(obj, corev1.EventTypeNormal, reason, message)`).
    ///
    /// events.k8s.io/v1 also requires an `action`; these shorthands use the
    /// reason for it. Use [`event`](Self::event) to set it separately.
    pub async fn normal<K>(&self, regarding: &K, reason: &str, message: &str) -> Result<()>
    where
        K: Resource<DynamicType = ()>,
    {
        let reference = object_reference(regarding);
        self.event(&reference, EventType::Normal, reason, reason, message).await
    }

    /// Records a `Warning` event about `regarding`; see
    /// [`normal`](Self::normal).
    pub async fn warning<K>(&self, regarding: &K, reason: &str, message: &str) -> Result<()>
    where
        K: Resource<DynamicType = ()>,
    {
        let reference = object_reference(regarding);
        self.event(&reference, EventType::Warning, reason, reason, message).await
    }

    /// Records an event about the object `regarding` refers to (client-go's
    /// `Eventf(regarding, nil, type, reason, action, note)`).
    ///
    /// `reason` is a short `PascalCase` word for why (e.g. `FailedCreate`),
    /// `action` what was done or failed (e.g. `Reconcile`); both must be at
    /// most 128 bytes or the API server rejects the event. A `message` over
    /// 1 kB is cut at a character boundary.
    pub async fn event(
        &self,
        regarding: &ObjectReference,
        event_type: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) -> Result<()> {
        self.event_with_related(regarding, None, event_type, reason, action, message).await
    }

    /// Like [`event`](Self::event), also naming a secondary object the
    /// action affected (the event's `related`), e.g. the `Deployment` a
    /// controller created for its custom resource.
    pub async fn event_with_related(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        event_type: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) -> Result<()> {
        self.record(regarding, related, event_type, reason, action, message).await.0
    }

    /// Records an occurrence; with the event when the write was a create.
    /// A create the server refused is not in the cache (recording again
    /// creates a new event); one without an answer is, as the event may be
    /// on the server: later occurrences patch its series (or create it, with
    /// the series, when the server does not have it), and the
    /// [`EventQueue`] sends the same event again
    /// ([`create_again`](Self::create_again)).
    async fn record(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        event_type: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) -> (Result<()>, Option<K8sEvent>) {
        let type_ = match event_type {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        let key = Key {
            regarding: reference_key(regarding),
            related: related.map(reference_key),
            type_,
            reason: reason.to_owned(),
            action: action.to_owned(),
        };
        let (now, seen) = (Timestamp::now(), Instant::now());
        // Decided under the lock, as client-go does, so that two workers
        // reporting the same event at once make one event and count both.
        let write = {
            let mut cache = lock(&self.cache);
            if seen.duration_since(cache.purged_at) >= SWEEP_EVERY {
                cache.purge(seen);
            }
            match cache.recorded.get_mut(&key).filter(|r| !r.finished(seen)) {
                Some(recorded) => {
                    recorded.count = recorded.count.saturating_add(1);
                    recorded.last_observed = now;
                    recorded.last_seen = seen;
                    if recorded.count > 2 {
                        return (Ok(()), None);
                    }
                    recorded.written = recorded.count;
                    recorded.written_at = seen;
                    Write::Series(series_of(&recorded.event, recorded.count, now))
                }
                None => {
                    let event = K8sEvent {
                        action: Some(action.to_owned()),
                        reason: Some(reason.to_owned()),
                        event_time: Some(MicroTime(now)),
                        regarding: Some(regarding.clone()),
                        related: related.cloned(),
                        note: Some(truncate_note(message).to_owned()),
                        metadata: ObjectMeta {
                            namespace: Some(
                                regarding.namespace.as_deref().filter(|ns| !ns.is_empty()).unwrap_or("default").into(),
                            ),
                            name: Some(event_name(regarding.name.as_deref().unwrap_or_default(), now)),
                            ..Default::default()
                        },
                        reporting_controller: Some(self.reporter.controller.clone()),
                        reporting_instance: self.reporter.instance.clone(),
                        type_: Some(type_.to_owned()),
                        ..Default::default()
                    };
                    let created = event.clone();
                    cache.recorded.insert(
                        key.clone(),
                        Recorded { event, count: 1, last_observed: now, last_seen: seen, written: 1, written_at: seen },
                    );
                    Write::Create(created)
                }
            }
        };
        // A failed write is undone in the cache: a refused create is made
        // again by the next occurrence, a count is written by the next
        // flush. A create without an answer stays (the event may be on the
        // server): the queue sends it again, and the next occurrence
        // patches its series (creating it when the server has none).
        let (written, created) = match write {
            Write::Create(event) => (self.create_again(&event).await, Some(event)),
            Write::Series(event) => (write_series(&self.client, event).await, None),
        };
        if let Err(e) = &written {
            let mut cache = lock(&self.cache);
            if created.is_some() && e.status().is_some() {
                cache.recorded.remove(&key);
            } else if let Some(recorded) = cache.recorded.get_mut(&key)
                && created.is_none()
                && e.status().is_none()
            {
                // A transport error: the count is written by the next flush.
                // One the server refused is given up (see `flush`).
                recorded.written = 1;
            }
        }
        (written, created)
    }

    /// Creates `event`, named as it is: the first write of an occurrence,
    /// and the same event again after a create that got no answer (client-go
    /// tries the same event again, so that one that did reach the server is
    /// not made twice). AlreadyExists is no error: the event is there (the
    /// earlier create, or the second occurrence, which found no event to
    /// patch and created it with its series; client-go drops this error
    /// too).
    pub(crate) async fn create_again(&self, event: &K8sEvent) -> Result<()> {
        match events_api(&self.client, event).create(&PostParams::default(), event).await {
            Err(e) if already_exists(&e) => Ok(()),
            result => result.map(drop).map_err(Into::into),
        }
    }

    /// Drops the series of `event` from the cache, after the server
    /// refused to create it: the next occurrence creates a new event (and
    /// shows its error) instead of counting into one that is not there.
    pub(crate) fn forget(&self, event: &K8sEvent) {
        lock(&self.cache).recorded.retain(|_, recorded| recorded.event.metadata.name != event.metadata.name);
    }

    /// Writes every series count the server does not have yet (recorded
    /// since the last write), e.g. before the controller exits.
    pub async fn flush(&self) -> Result<()> {
        let result = flush(&self.client, &self.cache, |_| true).await;
        lock(&self.cache).purge(Instant::now());
        result
    }
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder").field("reporter", &self.reporter).finish_non_exhaustive()
    }
}

fn lock(cache: &Cache) -> std::sync::MutexGuard<'_, Series> {
    cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn reference_key(r: &ObjectReference) -> String {
    let part = |s: &Option<String>| s.clone().unwrap_or_default();
    [&r.api_version, &r.kind, &r.namespace, &r.name, &r.uid, &r.field_path]
        .iter()
        .map(|s| part(s))
        .collect::<Vec<_>>()
        .join("\u{0}")
}

/// client-go's `GenerateEventName`: `<name>.<nanoseconds in hex>`, or a
/// random UUID where that is no valid object name (a name with `:` as some
/// ClusterRoles have, one over 236 bytes, a reference without a name).
fn event_name(regarding: &str, now: Timestamp) -> String {
    let name = format!("{regarding}.{:x}", now.as_nanosecond());
    if name.len() <= 253 && crate::testing::objectmeta::is_dns_subdomain(&name) {
        name
    } else {
        uuid::Uuid::new_v4().to_string()
    }
}

fn already_exists(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.code == 409 && status.reason == "AlreadyExists")
}

fn events_api(client: &kube::Client, event: &K8sEvent) -> Api<K8sEvent> {
    Api::namespaced(client.clone(), event.metadata.namespace.as_deref().unwrap_or("default"))
}

/// `event` with its series at `count` occurrences, the last at `now`.
fn series_of(event: &K8sEvent, count: i32, now: Timestamp) -> K8sEvent {
    K8sEvent { series: Some(EventSeries { count, last_observed_time: MicroTime(now) }), ..event.clone() }
}

/// Patches a series' count onto its event; creates the event again (with
/// the series) when the server no longer has it, as client-go does. When
/// that create finds the event created meanwhile (by the first occurrence,
/// still on its way when the second one patched), the patch is tried again.
async fn write_series(client: &kube::Client, event: K8sEvent) -> Result<()> {
    let api = events_api(client, &event);
    let name = event.metadata.name.clone().unwrap_or_default();
    let patch = serde_json::json!({"series": event.series});
    let mut again = event;
    again.metadata.resource_version = None;
    let mut tries = 0;
    loop {
        tries += 1;
        match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Err(kube::Error::Api(status)) if status.code == 404 => {
                match api.create(&PostParams::default(), &again).await {
                    Err(e) if already_exists(&e) && tries < 3 => continue,
                    result => return result.map(drop).map_err(Into::into),
                }
            }
            result => return result.map(drop).map_err(Into::into),
        }
    }
}

/// Writes the unwritten counts of the series `due` picks; a failed write is
/// tried again next time.
async fn flush(client: &kube::Client, cache: &Cache, due: impl Fn(&Recorded) -> bool) -> Result<()> {
    let pending: Vec<(Key, K8sEvent, i32)> = lock(cache)
        .recorded
        .iter()
        .filter(|(_, r)| r.count > r.written && due(r))
        .map(|(k, r)| (k.clone(), series_of(&r.event, r.count, r.last_observed), r.count))
        .collect();
    let mut first_error = None;
    for (key, event, count) in pending {
        match write_series(client, event).await {
            Ok(()) => {
                if let Some(r) = lock(cache).recorded.get_mut(&key) {
                    r.written = r.written.max(count);
                    r.written_at = Instant::now();
                }
            }
            Err(e) => {
                // The server refused it (403, 404 of the namespace, ...):
                // given up, as client-go gives up what the server rejects,
                // so that the series can end. A transport error is tried
                // again next time.
                if e.status().is_some()
                    && let Some(r) = lock(cache).recorded.get_mut(&key)
                {
                    r.written = r.written.max(count);
                }
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Finishes quiet series (their last count written, then forgotten) and
/// refreshes long ones, until the recorder is dropped.
async fn sweep(client: kube::Client, cache: Weak<Cache>) {
    let mut tick = tokio::time::interval_at(Instant::now() + SWEEP_EVERY, SWEEP_EVERY);
    loop {
        tick.tick().await;
        let Some(cache) = cache.upgrade() else { return };
        let now = Instant::now();
        let quiet = |r: &Recorded| now.duration_since(r.last_seen) >= FINISH_AFTER;
        let stale = |r: &Recorded| now.duration_since(r.written_at) >= REFRESH_EVERY;
        if let Err(e) = flush(&client, &cache, |r| quiet(r) || stale(r)).await {
            tracing::warn!(error = %e, "could not write an event series' count");
        }
        lock(&cache).purge(now);
    }
}

/// A reference to `obj` for an event's `regarding` or `related` field:
/// apiVersion, kind, namespace (none for cluster-scoped kinds), name and uid,
/// as client-go's `reference.GetReference`. The resourceVersion is left out
/// so that repeats about an object that changed in between still count as
/// one series.
pub fn object_reference<K: Resource<DynamicType = ()>>(obj: &K) -> ObjectReference {
    obj.object_ref(&())
}

/// `message` cut to the longest prefix of at most [`MAX_NOTE_BYTES`] that
/// ends on a character boundary.
fn truncate_note(message: &str) -> &str {
    if message.len() <= MAX_NOTE_BYTES {
        return message;
    }
    let mut end = MAX_NOTE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use http::{Method, Request, Response};
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use k8s_openapi::api::events::v1::Event as K8sEvent;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::client::Body;
    use serde_json::Value;

    use super::*;

    fn config_map() -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                namespace: Some("team-a".into()),
                uid: Some("1234".into()),
                resource_version: Some("42".into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn reference_to_a_namespaced_object() {
        let reference = object_reference(&config_map());
        assert_eq!(reference.api_version.as_deref(), Some("v1"));
        assert_eq!(reference.kind.as_deref(), Some("ConfigMap"));
        assert_eq!(reference.namespace.as_deref(), Some("team-a"));
        assert_eq!(reference.name.as_deref(), Some("settings"));
        assert_eq!(reference.uid.as_deref(), Some("1234"));
        assert_eq!(reference.resource_version, None);
    }

    #[test]
    fn reference_to_a_cluster_scoped_object_in_a_group() {
        use k8s_openapi::api::rbac::v1::ClusterRole;
        let role = ClusterRole {
            metadata: ObjectMeta { name: Some("viewer".into()), ..Default::default() },
            ..Default::default()
        };
        let reference = object_reference(&role);
        assert_eq!(reference.api_version.as_deref(), Some("rbac.authorization.k8s.io/v1"));
        assert_eq!(reference.kind.as_deref(), Some("ClusterRole"));
        assert_eq!(reference.namespace, None);
        assert_eq!(reference.name.as_deref(), Some("viewer"));
    }

    #[test]
    fn long_notes_are_cut_on_a_char_boundary() {
        assert_eq!(truncate_note("short"), "short");
        let exact = "a".repeat(MAX_NOTE_BYTES);
        assert_eq!(truncate_note(&exact), exact);
        // 'é' is two bytes: 1023 ASCII bytes + 'é' straddles the limit.
        let straddling = format!("{}é tail", "a".repeat(MAX_NOTE_BYTES - 1));
        let cut = truncate_note(&straddling);
        assert_eq!(cut.len(), MAX_NOTE_BYTES - 1);
        assert!(straddling.starts_with(cut));
    }

    /// A failure `Status` as the API server answers it.
    fn failure(code: u16, reason: &str, message: &str) -> Value {
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": message, "reason": reason, "code": code})
    }

    /// A request the stub API server received.
    #[derive(Debug)]
    struct Seen {
        method: Method,
        path: String,
        body: Value,
    }

    /// A `kube::Client` over a stub service that records each request and
    /// echoes its body back as the stored event.
    fn stub_client() -> (kube::Client, Arc<Mutex<Vec<Seen>>>) {
        stub_client_where_patches_find(true)
    }

    /// The stub; without `found`, patches get 404 (the event is gone).
    fn stub_client_where_patches_find(found: bool) -> (kube::Client, Arc<Mutex<Vec<Seen>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let log = log.clone();
            async move {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await?;
                let body: Value = serde_json::from_slice(&bytes)?;
                let gone = parts.method == Method::PATCH && !found;
                let reply = if gone {
                    serde_json::to_vec(&failure(404, "NotFound", "events.events.k8s.io not found"))?
                } else {
                    serde_json::to_vec(&body)?
                };
                log.lock().unwrap().push(Seen { method: parts.method, path: parts.uri.path().to_owned(), body });
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder().status(if gone { 404 } else { 201 }).body(Body::from(reply))?,
                )
            }
        });
        (kube::Client::new(service, "default"), seen)
    }

    fn methods(seen: &Mutex<Vec<Seen>>) -> Vec<Method> {
        seen.lock().unwrap().iter().map(|s| s.method.clone()).collect()
    }

    #[tokio::test]
    async fn first_event_is_created_with_reporter_and_reference() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "example.com/student-controller", Some("pod-0"));
        recorder.warning(&config_map(), "FailedSync", "could not sync").await.unwrap();

        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].method, Method::POST);
        assert_eq!(seen[0].path, "/apis/events.k8s.io/v1/namespaces/team-a/events");
        let event: K8sEvent = serde_json::from_value(seen[0].body.clone()).unwrap();
        assert_eq!(event.type_.as_deref(), Some("Warning"));
        assert_eq!(event.reason.as_deref(), Some("FailedSync"));
        assert_eq!(event.action.as_deref(), Some("FailedSync"));
        assert_eq!(event.note.as_deref(), Some("could not sync"));
        assert_eq!(event.reporting_controller.as_deref(), Some("example.com/student-controller"));
        assert_eq!(event.reporting_instance.as_deref(), Some("pod-0"));
        assert_eq!(event.regarding, Some(object_reference(&config_map())));
        assert!(event.series.is_none());
    }

    /// As client-go: the second occurrence patches the series, later ones
    /// are counted in memory until a flush.
    #[tokio::test]
    async fn repeats_become_a_series_written_twice() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "ctl", None);
        let cm = config_map();
        for message in ["ok", "ok", "ok", "still ok"] {
            recorder.normal(&cm, "Synced", message).await.unwrap();
        }
        // A different reason is a different event.
        recorder.normal(&cm, "Scaled", "to 3").await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::POST]);
        {
            let seen = seen.lock().unwrap();
            let first_name = seen[0].body["metadata"]["name"].as_str().unwrap().to_owned();
            assert!(seen[1].path.ends_with(&format!("/namespaces/team-a/events/{first_name}")));
            assert_eq!(seen[1].body["series"]["count"], 2);
            assert_eq!(seen[2].body["reason"], "Scaled");
        }
        recorder.flush().await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::POST, Method::PATCH]);
        assert_eq!(seen.lock().unwrap()[3].body["series"]["count"], 4);
        recorder.flush().await.unwrap();
        assert_eq!(seen.lock().unwrap().len(), 4, "nothing new to write");
    }

    /// A series whose event the server no longer has is created again,
    /// with its count.
    #[tokio::test]
    async fn a_series_of_a_deleted_event_is_created_again() {
        let (client, seen) = stub_client_where_patches_find(false);
        let recorder = EventRecorder::new(client, "ctl", None);
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::POST]);
        assert_eq!(seen.lock().unwrap()[2].body["series"]["count"], 2);
    }

    /// A series quiet for six minutes gets its last count written and ends:
    /// the next occurrence is a new event.
    #[tokio::test(start_paused = true)]
    async fn quiet_series_are_finished_in_the_background() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "ctl", None);
        for _ in 0..3 {
            recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        }
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH]);
        tokio::time::sleep(Duration::from_secs(5 * 60)).await;
        assert_eq!(methods(&seen).len(), 2, "not quiet for six minutes yet");
        tokio::time::sleep(Duration::from_secs(2 * 60)).await;
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::PATCH]);
        assert_eq!(seen.lock().unwrap()[2].body["series"]["count"], 3);
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert_eq!(methods(&seen)[3], Method::POST);
        assert!(seen.lock().unwrap()[3].body.get("series").is_none_or(Value::is_null));
    }

    #[tokio::test]
    async fn cluster_scoped_objects_get_events_in_default() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "ctl", None);
        let ns = Namespace {
            metadata: ObjectMeta { name: Some("team-a".into()), ..Default::default() },
            ..Default::default()
        };
        recorder.normal(&ns, "Labelled", "added team label").await.unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].path, "/apis/events.k8s.io/v1/namespaces/default/events");
        let host = hostname::get().unwrap().to_string_lossy().into_owned();
        assert_eq!(seen[0].body["reportingInstance"], format!("ctl-{host}"), "client-go's default instance");
    }

    /// client-go's `GenerateEventName`: a name that would not be a valid
    /// object name becomes a random UUID; the namespace "" is `default`.
    #[tokio::test]
    async fn invalid_event_names_become_uuids() {
        use k8s_openapi::api::rbac::v1::ClusterRole;
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "example.com/ctl", Some("pod-0"));
        let role = |name: &str| ClusterRole {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            ..Default::default()
        };
        recorder.normal(&role("viewer"), "Synced", "ok").await.unwrap();
        recorder.normal(&role("system:controller:x"), "Synced", "ok").await.unwrap();
        recorder.normal(&role(&"r".repeat(240)), "Synced", "ok").await.unwrap();
        let nameless =
            ObjectReference { kind: Some("Thing".into()), namespace: Some(String::new()), ..Default::default() };
        recorder.event(&nameless, EventType::Normal, "Synced", "Sync", "ok").await.unwrap();
        let seen = seen.lock().unwrap();
        let names: Vec<&str> = seen.iter().map(|s| s.body["metadata"]["name"].as_str().unwrap()).collect();
        assert!(names[0].starts_with("viewer.") && names[0].len() > "viewer.".len(), "{}", names[0]);
        for name in &names[1..] {
            assert!(uuid::Uuid::parse_str(name).is_ok(), "{name}");
        }
        assert_eq!(seen[3].path, "/apis/events.k8s.io/v1/namespaces/default/events");
    }

    /// A series that went quiet with a count the server does not have yet
    /// goes on with the next occurrence instead of losing that count (the
    /// background task had not written it yet).
    #[tokio::test(start_paused = true)]
    async fn a_quiet_series_with_an_unwritten_count_goes_on() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "ctl", None);
        tokio::time::sleep(Duration::from_secs(30)).await;
        for _ in 0..3 {
            recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        }
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH], "count 3, the server has 2");
        // Quiet for 6m01s; the next sweep would be at 7m.
        tokio::time::sleep(Duration::from_secs(6 * 60 + 1)).await;
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH], "counted in the series, not a new event");
        recorder.flush().await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::PATCH]);
        assert_eq!(seen.lock().unwrap()[2].body["series"]["count"], 4);
    }

    /// Without the background task (a recorder made outside a runtime),
    /// recording forgets finished series once a minute.
    #[test]
    fn without_a_runtime_finished_series_are_forgotten() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
        // kube's client needs a runtime to be made; the recorder is made
        // outside it, so it starts no background task.
        let (client, seen) = {
            let _inside = runtime.enter();
            stub_client()
        };
        let recorder = EventRecorder::new(client, "ctl", None);
        runtime.block_on(async {
            for i in 0..50 {
                let mut cm = config_map();
                cm.metadata.name = Some(format!("cm-{i}"));
                recorder.normal(&cm, "Synced", "ok").await.unwrap();
            }
            assert_eq!(lock(&recorder.cache).recorded.len(), 50);
            tokio::time::sleep(FINISH_AFTER).await;
            recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
            assert_eq!(lock(&recorder.cache).recorded.len(), 1, "the 50 finished series are gone");
        });
        assert_eq!(seen.lock().unwrap().len(), 51);
    }

    /// The second occurrence's patch finds no event while the first one's
    /// create is on its way, so it creates the event with its series; the
    /// first create's AlreadyExists is no error (client-go drops it too),
    /// and the series goes on.
    #[tokio::test]
    async fn a_create_raced_by_the_second_occurrence_is_no_error() {
        let release = Arc::new(tokio::sync::Notify::new());
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let (log, gate) = (seen.clone(), release.clone());
        let service = tower::service_fn(move |req: Request<Body>| {
            let (log, gate) = (log.clone(), gate.clone());
            async move {
                let (parts, body) = req.into_parts();
                let body: Value = serde_json::from_slice(&body.collect_bytes().await?)?;
                let first_create = parts.method == Method::POST && body.get("series").is_none_or(Value::is_null);
                let method = parts.method.clone();
                log.lock().unwrap().push(Seen {
                    method: parts.method,
                    path: parts.uri.path().to_owned(),
                    body: body.clone(),
                });
                let (code, reply) = if first_create {
                    gate.notified().await;
                    (409, failure(409, "AlreadyExists", "events.events.k8s.io \"x\" already exists"))
                } else if method == Method::PATCH {
                    (404, failure(404, "NotFound", "not found"))
                } else {
                    (201, body)
                };
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder().status(code).body(Body::from(serde_json::to_vec(&reply)?))?,
                )
            }
        });
        let recorder = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None);
        let first = tokio::spawn({
            let recorder = recorder.clone();
            async move { recorder.normal(&config_map(), "Synced", "ok").await }
        });
        while seen.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        release.notify_one();
        first.await.unwrap().unwrap();
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::POST], "the third occurrence only counts");
        assert_eq!(seen.lock().unwrap()[2].body["series"]["count"], 2);
    }

    #[tokio::test]
    async fn related_object_and_action_are_sent() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "ctl", None);
        let regarding = object_reference(&config_map());
        let related = ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("Deployment".into()),
            name: Some("web".into()),
            namespace: Some("team-a".into()),
            ..Default::default()
        };
        recorder
            .event_with_related(
                &regarding,
                Some(&related),
                EventType::Normal,
                "Created",
                "CreateDeployment",
                "created web",
            )
            .await
            .unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].body["action"], "CreateDeployment");
        assert_eq!(seen[0].body["related"]["name"], "web");
    }

    /// A series count the server refuses (no RBAC to patch events) is given
    /// up, as client-go gives it up: the series still ends once quiet, and
    /// a later occurrence is a new event.
    #[tokio::test(start_paused = true)]
    async fn a_refused_series_count_is_given_up_and_the_series_ends() {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let log = log.clone();
            async move {
                let (parts, body) = req.into_parts();
                let body: Value = serde_json::from_slice(&body.collect_bytes().await?)?;
                let forbidden = parts.method == Method::PATCH;
                log.lock().unwrap().push(Seen {
                    method: parts.method,
                    path: parts.uri.path().to_owned(),
                    body: body.clone(),
                });
                let (code, reply) = if forbidden {
                    (403, failure(403, "Forbidden", "events.events.k8s.io is forbidden"))
                } else {
                    (201, body)
                };
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder().status(code).body(Body::from(serde_json::to_vec(&reply)?))?,
                )
            }
        });
        let recorder = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None);
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert!(recorder.normal(&config_map(), "Synced", "ok").await.unwrap_err().is_forbidden());
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH], "the third only counts");
        // The sweeps write the third occurrence's count once (refused again),
        // then the quiet series ends.
        tokio::time::sleep(Duration::from_secs(8 * 60)).await;
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::PATCH], "not tried again and again");
        assert!(lock(&recorder.cache).recorded.is_empty(), "the series ended");
        recorder.normal(&config_map(), "Synced", "ok").await.unwrap();
        assert_eq!(methods(&seen)[3], Method::POST, "a new event");
    }

    /// A create the server refused is tried again by the next occurrence,
    /// which gets the error too (nothing is counted silently).
    #[tokio::test]
    async fn a_refused_create_is_tried_again() {
        let calls = Arc::new(Mutex::new(0));
        let counter = calls.clone();
        let service = tower::service_fn(move |_req: Request<Body>| {
            *counter.lock().unwrap() += 1;
            async {
                let status = failure(403, "Forbidden", "events.events.k8s.io is forbidden");
                Response::builder().status(403).body(Body::from(serde_json::to_vec(&status).unwrap()))
            }
        });
        let recorder = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None);
        for _ in 0..3 {
            assert!(recorder.normal(&config_map(), "Synced", "ok").await.unwrap_err().is_forbidden());
        }
        assert_eq!(*calls.lock().unwrap(), 3);
    }

    #[tokio::test]
    async fn server_errors_surface_as_crate_errors() {
        let service = tower::service_fn(|_req: Request<Body>| async {
            let status = failure(403, "Forbidden", "events.events.k8s.io is forbidden");
            Response::builder().status(403).body(Body::from(serde_json::to_vec(&status).unwrap()))
        });
        let recorder = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None);
        let err = recorder.normal(&config_map(), "Synced", "ok").await.unwrap_err();
        assert!(err.is_forbidden(), "{err:?}");
    }

    /// A stub that fails the requests `fail` picks (by method and number)
    /// in transport and answers a POST of an event with reason `Refused`
    /// with 422.
    fn flaky_client(
        fail: impl Fn(&Method, usize) -> bool + Clone + Send + 'static,
    ) -> (kube::Client, Arc<Mutex<Vec<Seen>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let service = tower::service_fn(move |req: Request<Body>| {
            let (log, calls, fail) = (log.clone(), calls.clone(), fail.clone());
            async move {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await?;
                let body: Value = serde_json::from_slice(&bytes)?;
                if fail(&parts.method, calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst)) {
                    return Err::<Response<Body>, _>("connection reset by peer".into());
                }
                let refused = body["reason"] == "Refused";
                let reply = if refused { failure(422, "Invalid", "no") } else { body.clone() };
                log.lock().unwrap().push(Seen { method: parts.method, path: parts.uri.path().to_owned(), body });
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder()
                        .status(if refused { 422 } else { 201 })
                        .body(Body::from(serde_json::to_vec(&reply)?))?,
                )
            }
        });
        (kube::Client::new(service, "default"), seen)
    }

    fn reasons(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
        seen.lock()
            .unwrap()
            .iter()
            .map(|s| format!("{} {}", s.method, s.body["reason"].as_str().unwrap_or("-")))
            .collect()
    }

    /// client-go's broadcaster: recording returns at once, the events are
    /// written in order with their series, and `flush` waits for them.
    #[tokio::test]
    async fn a_queue_writes_in_order_without_waiting() {
        let (client, seen) = stub_client();
        let events = EventRecorder::new(client, "ctl", None).queue();
        let cm = config_map();
        for reason in ["Synced", "Synced", "Synced", "Scaled"] {
            assert!(events.normal(&cm, reason, "fine"));
        }
        events.flush().await;
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH, Method::POST, Method::PATCH]);
        assert_eq!(seen.lock().unwrap()[3].body["series"]["count"], 3, "the flush wrote the count");
        assert_eq!((events.dropped(), events.failed()), (0, 0));
    }

    /// A create that fails in transport is tried again ten seconds later
    /// while later events go on; one the server refuses is given up.
    #[tokio::test(start_paused = true)]
    async fn a_queue_tries_transport_failures_again_and_gives_up_refusals() {
        let (client, seen) = flaky_client(|_, call| call < 1);
        let events = EventRecorder::new(client, "ctl", None).queue();
        let cm = config_map();
        events.normal(&cm, "First", "fails once");
        events.normal(&cm, "Second", "fine");
        events.warning(&cm, "Refused", "the server refuses it");
        events.flush().await;
        assert_eq!(reasons(&seen), ["POST Second", "POST Refused"], "later events went on");
        assert_eq!(events.failed(), 1, "the refused one");
        tokio::time::sleep(Duration::from_secs(13)).await;
        assert_eq!(reasons(&seen), ["POST Second", "POST Refused", "POST First"], "tried again");
        assert_eq!(events.failed(), 1);

        // Out of tries: twelve attempts, then given up.
        let (client, seen) = flaky_client(|_, _| true);
        let events = EventRecorder::new(client, "ctl", None).queue();
        events.normal(&cm, "Never", "the server is gone");
        events.flush().await;
        tokio::time::sleep(Duration::from_secs(12 * 13)).await;
        assert!(seen.lock().unwrap().is_empty());
        assert_eq!(events.failed(), 1);
    }

    /// A create that reached the server but whose answer was lost is sent
    /// again as the same event (name and time): the server has it
    /// (AlreadyExists), and there is one event. A new name per try made a
    /// second event of the same occurrence.
    #[tokio::test(start_paused = true)]
    async fn a_create_without_an_answer_is_sent_again_as_the_same_event() {
        let stored: Arc<Mutex<Vec<String>>> = Arc::default();
        let posted: Arc<Mutex<Vec<String>>> = Arc::default();
        let (store, log) = (stored.clone(), posted.clone());
        let service = tower::service_fn(move |req: Request<Body>| {
            let (store, log) = (store.clone(), log.clone());
            async move {
                let body: Value = serde_json::from_slice(&req.into_body().collect_bytes().await?)?;
                let name = body["metadata"]["name"].as_str().unwrap_or_default().to_owned();
                let first = log.lock().unwrap().is_empty();
                log.lock().unwrap().push(name.clone());
                if store.lock().unwrap().contains(&name) {
                    let exists =
                        failure(409, "AlreadyExists", &format!("events.events.k8s.io {name:?} already exists"));
                    return Ok(Response::builder().status(409).body(Body::from(serde_json::to_vec(&exists)?))?);
                }
                store.lock().unwrap().push(name);
                if first {
                    return Err::<Response<Body>, _>("connection reset by peer".into());
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder().status(201).body(Body::from(serde_json::to_vec(&body)?))?,
                )
            }
        });
        let events = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None).queue();
        events.normal(&config_map(), "Synced", "ok");
        events.flush().await;
        tokio::time::sleep(Duration::from_secs(13)).await;
        let posted = posted.lock().unwrap().clone();
        assert_eq!(posted.len(), 2, "tried again once: {posted:?}");
        assert_eq!(posted[0], posted[1], "the same event");
        assert_eq!(stored.lock().unwrap().len(), 1, "one event");
        assert_eq!(events.failed(), 0);
    }

    /// A create without an answer that the server then refuses when it is
    /// sent again leaves no series behind: the next occurrence creates an
    /// event (and meets the server's answer) instead of counting into one
    /// that is not there.
    #[tokio::test(start_paused = true)]
    async fn a_create_refused_when_sent_again_is_forgotten() {
        let requests: Arc<Mutex<Vec<Method>>> = Arc::default();
        let log = requests.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let log = log.clone();
            async move {
                let method = req.method().clone();
                let body: Value = serde_json::from_slice(&req.into_body().collect_bytes().await?)?;
                let call = {
                    let mut log = log.lock().unwrap();
                    log.push(method);
                    log.len()
                };
                match call {
                    1 => Err::<Response<Body>, _>("connection reset by peer".into()),
                    2 => Ok(Response::builder().status(403).body(Body::from(serde_json::to_vec(&failure(
                        403,
                        "Forbidden",
                        "no",
                    ))?))?),
                    _ => Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                        Response::builder().status(201).body(Body::from(serde_json::to_vec(&body)?))?,
                    ),
                }
            }
        });
        let events = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None).queue();
        events.normal(&config_map(), "Synced", "ok");
        events.flush().await;
        tokio::time::sleep(Duration::from_secs(13)).await;
        assert_eq!(events.failed(), 1, "refused when sent again");
        events.normal(&config_map(), "Synced", "ok");
        events.flush().await;
        assert_eq!(*requests.lock().unwrap(), [Method::POST, Method::POST, Method::POST]);
    }

    /// A full queue drops what comes next, as client-go's
    /// `DropIfChannelFull`.
    #[tokio::test]
    async fn a_full_queue_drops_events() {
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let open = gate.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let gate = gate.clone();
            async move {
                let _permit = gate.acquire().await?;
                let bytes = req.into_body().collect_bytes().await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder().status(201).body(Body::from(bytes.to_vec()))?,
                )
            }
        });
        let events = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None).queue();
        let cm = config_map();
        let queued = (0..QUEUE_CAPACITY + 10).filter(|i| events.normal(&cm, &format!("R{i}"), "m")).count();
        assert!(events.dropped() >= 9, "{} dropped", events.dropped());
        assert_eq!(queued as u64 + events.dropped(), QUEUE_CAPACITY as u64 + 10);
        open.add_permits(usize::MAX >> 4);
        events.flush().await;
        assert_eq!(events.failed(), 0);
    }

    /// A series count that fails in transport is not given up: the next
    /// flush writes it, and it is not counted as failed.
    #[tokio::test]
    async fn a_queue_leaves_failed_counts_to_the_next_flush() {
        let down = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let patches_fail = down.clone();
        let (client, seen) = flaky_client(move |method, _| {
            *method == Method::PATCH && patches_fail.load(std::sync::atomic::Ordering::SeqCst)
        });
        let events = EventRecorder::new(client, "ctl", None).queue();
        let cm = config_map();
        events.normal(&cm, "Synced", "fine");
        events.normal(&cm, "Synced", "fine");
        events.flush().await;
        assert_eq!(reasons(&seen), ["POST Synced"], "the PATCHes failed in transport");
        assert_eq!(events.failed(), 0);
        // Back: the next flush writes the count.
        down.store(false, std::sync::atomic::Ordering::SeqCst);
        events.flush().await;
        assert_eq!(methods(&seen), [Method::POST, Method::PATCH]);
        assert_eq!(seen.lock().unwrap()[1].body["series"]["count"], 2);
    }

    /// `flush` waits for the events queued before it, not for an empty
    /// queue: under a steady stream of events it still returns.
    #[tokio::test(start_paused = true)]
    async fn a_queue_flushes_under_a_steady_stream() {
        let service = tower::service_fn(|req: Request<Body>| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let bytes = req.into_body().collect_bytes().await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                Response::builder().status(201).body(Body::from(bytes.to_vec()))?,
            )
        });
        let events = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None).queue();
        let cm = config_map();
        let stream = {
            let (events, cm) = (events.clone(), cm.clone());
            tokio::spawn(async move {
                for i in 0.. {
                    events.normal(&cm, &format!("R{i}"), "m");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let flushed = tokio::time::timeout(Duration::from_secs(600), events.flush()).await;
        stream.abort();
        assert!(flushed.is_ok(), "flush did not return while events kept coming");
    }

    /// A queue whose task is gone (its runtime shut down while it wrote
    /// an event) does not hang `flush`.
    #[tokio::test]
    async fn a_queue_without_its_task_flushes_at_once() {
        let service = tower::service_fn(|_req: Request<Body>| {
            std::future::pending::<Result<Response<Body>, Box<dyn std::error::Error + Send + Sync>>>()
        });
        let recorder = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None);
        let cm = config_map();
        let events = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let events = recorder.queue();
                events.normal(&cm, "Synced", "never answered");
                // The task takes the event and waits for the server.
                tokio::time::sleep(Duration::from_millis(50)).await;
                events
            })
        })
        .join()
        .unwrap();
        let flushed = tokio::time::timeout(Duration::from_secs(10), events.flush()).await;
        assert!(flushed.is_ok(), "flush hung on a queue without its task");
    }
}
