//! Recording Kubernetes events (events.k8s.io/v1) about objects, the
//! counterpart of client-go's `tools/events` `EventRecorder`.
//!
//! Built on kube's [`Recorder`], which keeps client-go's client-side
//! deduplication: an event repeating one already sent for the same object,
//! type, reason, action, related object and reporter within six minutes is
//! not created again; the first event's `series` (count and last observed
//! time) is patched instead. As in client-go, the message is not part of
//! that key: a repeat with a different message only bumps the count.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::runtime::events::{Event, Recorder};

pub use kube::runtime::events::{EventType, Reporter};

use crate::Result;

/// Longest note the API server accepts (`note` must be at most 1 kB).
const MAX_NOTE_BYTES: usize = 1024;

/// Records events about objects on behalf of one controller.
///
/// Cheap to clone; clones share the deduplication cache, so create one per
/// controller and hand clones to its workers.
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
    recorder: Recorder,
    reporter: Reporter,
}

impl EventRecorder {
    /// A recorder reporting as `reporting_controller` (the event's
    /// `reportingController`, e.g. `example.com/student-controller`) from
    /// `reporting_instance` (`reportingInstance`, usually the pod name;
    /// `None` uses the controller name).
    pub fn new(client: kube::Client, reporting_controller: &str, reporting_instance: Option<&str>) -> Self {
        Self::with_reporter(
            client,
            Reporter { controller: reporting_controller.to_owned(), instance: reporting_instance.map(str::to_owned) },
        )
    }

    /// A recorder for a [`Reporter`] built by the caller.
    pub fn with_reporter(client: kube::Client, reporter: Reporter) -> Self {
        Self { recorder: Recorder::new(client, reporter.clone()), reporter }
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
        let event = Event {
            type_: event_type,
            reason: reason.to_owned(),
            note: Some(truncate_note(message).to_owned()),
            action: action.to_owned(),
            secondary: related.cloned(),
        };
        self.recorder.publish(&event, regarding).await?;
        Ok(())
    }
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder").field("reporter", &self.reporter).finish_non_exhaustive()
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
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let log = log.clone();
            async move {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await?;
                let body: Value = serde_json::from_slice(&bytes)?;
                let reply = serde_json::to_vec(&body)?;
                log.lock().unwrap().push(Seen { method: parts.method, path: parts.uri.path().to_owned(), body });
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    Response::builder().status(201).body(Body::from(reply))?,
                )
            }
        });
        (kube::Client::new(service, "default"), seen)
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

    #[tokio::test]
    async fn repeats_become_a_series_patch() {
        let (client, seen) = stub_client();
        let recorder = EventRecorder::new(client, "ctl", None);
        let cm = config_map();
        recorder.normal(&cm, "Synced", "ok").await.unwrap();
        recorder.normal(&cm, "Synced", "ok").await.unwrap();
        recorder.normal(&cm, "Synced", "ok").await.unwrap();
        // A different reason is a different event.
        recorder.normal(&cm, "Scaled", "to 3").await.unwrap();

        let seen = seen.lock().unwrap();
        let methods: Vec<_> = seen.iter().map(|s| s.method.clone()).collect();
        assert_eq!(methods, [Method::POST, Method::PATCH, Method::PATCH, Method::POST]);
        let first_name = seen[0].body["metadata"]["name"].as_str().unwrap().to_owned();
        assert!(seen[1].path.ends_with(&format!("/namespaces/team-a/events/{first_name}")));
        assert_eq!(seen[1].body["series"]["count"], 2);
        assert_eq!(seen[2].body["series"]["count"], 3);
        assert_eq!(seen[3].body["reason"], "Scaled");
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
        assert_eq!(seen[0].body["reportingInstance"], "ctl");
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

    #[tokio::test]
    async fn server_errors_surface_as_crate_errors() {
        let service = tower::service_fn(|_req: Request<Body>| async {
            let status = serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "message": "events.events.k8s.io is forbidden", "reason": "Forbidden", "code": 403
            });
            Response::builder().status(403).body(Body::from(serde_json::to_vec(&status).unwrap()))
        });
        let recorder = EventRecorder::new(kube::Client::new(service, "default"), "ctl", None);
        let err = recorder.normal(&config_map(), "Synced", "ok").await.unwrap_err();
        assert!(err.is_forbidden(), "{err:?}");
    }
}
