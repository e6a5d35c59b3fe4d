//! The Student controller: informers → rate-limited work queue → sync
//! handler → status, owned ConfigMap and events, in the shape of
//! sample-controller.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, anyhow};
use codegen_runtime::apply::{ConfigMapApplyConfiguration, OwnerReferenceApplyConfiguration, extract_config_map};
use codegen_runtime::client::{ApplyOptions, DeleteOptions, PatchOptions, PatchType, TypedClient};
use codegen_runtime::events::{EventRecorder, EventType};
use codegen_runtime::factory::SharedInformerFactory as RuntimeFactory;
use codegen_runtime::informer::{DeletedObject, MalformedObject, ResourceEventHandlerFuncs};
use codegen_runtime::lister::Lister;
use codegen_runtime::lister::everything;
use codegen_runtime::sharding::{Held, ShardOwnership, shard_of};
use codegen_runtime::signal::ShutdownSignal;
use codegen_runtime::workqueue::RateLimitingQueue;
use codegen_runtime::{meta_namespace_key, split_meta_namespace_key};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::watcher;
use serde_json::json;
use tokio::sync::mpsc;

use crate::pkg::apis::example::v1::Student;
use crate::pkg::client::applyconfigurations::example::v1::{
    StudentApplyConfiguration, StudentConditionApplyConfiguration, StudentStatusApplyConfiguration,
};
use crate::pkg::client::clientset::Clientset;
use crate::pkg::client::informers::SharedInformerFactory;
use crate::pkg::client::listers::example::v1::StudentLister;

/// The finalizer that makes the controller clean up a Student's ConfigMap.
pub const FINALIZER: &str = "example.k8s.io/student-cleanup";
/// The label put on every ConfigMap the controller owns.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "student-controller");
/// Event reason and message of a successful sync (the seed's wording).
pub const SYNCED: (&str, &str) = ("Synced", "Student synced successfully");
/// The field manager of the controller's server-side applies.
pub const FIELD_MANAGER: &str = "student-controller";
/// Reason of the Warning event about a Student that does not decode.
pub const MALFORMED: &str = "Malformed";
/// How often a transient failure is retried before it is reported and
/// dropped (with the default limiter: about 3 minutes of backoff).
pub const MAX_RETRIES: u32 = 15;

/// Settings of a [`Controller`].
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// Workers reconciling Students at once.
    pub workers: usize,
    /// Informer resync period; `None` never resyncs.
    pub resync: Option<Duration>,
    /// Reporting instance recorded on events.
    pub instance: String,
    /// Watch only this namespace; `None` watches all namespaces.
    pub namespace: Option<String>,
    /// A watch silent for this long is taken for a dead connection and
    /// started again; `None` waits forever.
    pub watch_idle_timeout: Option<Duration>,
    /// With shards: reconcile only the Students of the shards held.
    pub shards: Option<ShardOwnership>,
}

/// The name of the ConfigMap a Student owns.
pub fn config_map_name(student: &str) -> String {
    format!("student-{student}")
}

/// How long a Student whose ConfigMap name is taken by another object
/// waits before it is synced again.
pub const CONFLICT_RECHECK: Duration = Duration::from_secs(30);

/// Whether `student` controls `cm` (sample-controller's `IsControlledBy`);
/// if not, sample-controller's `ErrResourceExists`.
fn owned_by(cm: &ConfigMap, student: &Student) -> Result<(), SyncError> {
    let owned = cm.metadata.owner_references.as_ref().is_some_and(|refs| {
        refs.iter().any(|r| r.controller == Some(true) && Some(&r.uid) == student.metadata.uid.as_ref())
    });
    if owned {
        return Ok(());
    }
    let name = cm.metadata.name.as_deref().unwrap_or_default();
    Err(SyncError::Permanent {
        reason: "ErrResourceExists",
        message: format!("Resource \"{name}\" already exists and is not managed by Student"),
    })
}

/// `sync` run as a task of its own: one that panics is a failed sync,
/// retried like any other (controller-runtime's `RecoverPanic`), so that its
/// key is not left processing forever and its worker goes on.
async fn catching_panics(sync: impl Future<Output = Result<(), SyncError>> + Send + 'static) -> Result<(), SyncError> {
    tokio::spawn(sync).await.unwrap_or_else(|e| Err(SyncError::Transient(anyhow!("the sync panicked: {e}"))))
}

/// Why a sync failed, and whether it is worth retrying.
#[derive(Debug)]
enum SyncError {
    /// Retried with the rate limiter.
    Transient(anyhow::Error),
    /// Reported as a Warning event and not retried.
    Permanent { reason: &'static str, message: String },
}

impl From<codegen_runtime::Error> for SyncError {
    fn from(e: codegen_runtime::Error) -> Self {
        // The OwnerReferencesPermissionEnforcement admission plugin looks the
        // owner's kind up in a discovery cache it renews every 30 s: just
        // after the CRD is installed it may not know Students yet.
        if e.is_forbidden() && e.to_string().contains("cannot find RESTMapping") {
            SyncError::Transient(e.into())
        } else if e.is_forbidden() {
            SyncError::Permanent {
                reason: "Forbidden",
                message: format!("{e}; grant the controller the permissions in config/rbac/role.yaml"),
            }
        } else if e.is_invalid() || e.is_bad_request() {
            SyncError::Permanent { reason: "Invalid", message: e.to_string() }
        } else {
            SyncError::Transient(e.into())
        }
    }
}

/// The Student controller.
pub struct Controller {
    clientset: Clientset,
    factory: SharedInformerFactory,
    config_maps_factory: RuntimeFactory,
    students: StudentLister,
    config_maps: Lister<ConfigMap>,
    queue: RateLimitingQueue<String>,
    recorder: EventRecorder,
    options: ControllerOptions,
    /// Set once the controller stops: workers take no more keys.
    stopping: AtomicBool,
}

impl Controller {
    /// Wires informers, listers, the queue and the recorder; starts nothing.
    // The informers list and watch Students and the ConfigMaps the
    // controller owns; the recorder writes events.k8s.io/v1 Events and
    // patches repeats.
    #[codegen_macros::rbac(groups = "example.k8s.io", resources = "students", verbs = "list;watch")]
    #[codegen_macros::rbac(groups = "", resources = "configmaps", verbs = "list;watch")]
    #[codegen_macros::rbac(groups = "events.k8s.io", resources = "events", verbs = "create;patch")]
    pub fn new(client: kube::Client, options: ControllerOptions) -> Arc<Self> {
        let clientset = Clientset::new(client.clone());
        let builder = || {
            let mut builder = RuntimeFactory::builder(client.clone());
            if let Some(ns) = &options.namespace {
                builder = builder.namespace(ns.clone());
            }
            if let Some(resync) = options.resync {
                builder = builder.default_resync(resync);
            }
            builder.watch_idle_timeout(options.watch_idle_timeout)
        };
        let factory = SharedInformerFactory::from_runtime(builder().build());
        // Every ConfigMap of the namespaces, not only the labelled ones (as
        // sample-controller caches every Deployment): one that has the name
        // a Student's ConfigMap would take and is someone else's is seen,
        // and never taken over.
        let config_maps_factory = builder().build();
        let students = factory.example().v1().students().lister();
        let config_maps = config_maps_factory.informer_for::<ConfigMap>().lister();
        let recorder = EventRecorder::new(client, "student-controller", Some(&options.instance));
        Arc::new(Self {
            clientset,
            factory,
            config_maps_factory,
            students,
            config_maps,
            queue: RateLimitingQueue::new(),
            recorder,
            options,
            stopping: AtomicBool::new(false),
        })
    }

    /// Runs until `shutdown` fires, then stops taking work, lets in-flight
    /// syncs finish and returns.
    pub async fn run(self: Arc<Self>, shutdown: ShutdownSignal) -> Result<()> {
        let (forbidden_tx, mut forbidden_rx) = mpsc::unbounded_channel::<String>();
        let student_informer = self.factory.example().v1().students().informer();
        let config_map_informer = self.config_maps_factory.informer_for::<ConfigMap>();
        for (what, informer_errors) in [("students.example.k8s.io", forbidden_tx.clone()), ("configmaps", forbidden_tx)]
        {
            let report = move |e: &watcher::Error| {
                if is_forbidden(e) {
                    let _ = informer_errors.send(format!("cannot list/watch {what}: {e}"));
                } else {
                    tracing::warn!("watch of {what} failed, retrying: {e}");
                }
            };
            if what == "configmaps" {
                config_map_informer.set_watch_error_handler(report);
            } else {
                student_informer.set_watch_error_handler(report);
            }
        }

        // A Student that does not decode (a CRD newer than this controller)
        // is left out of the cache while every other Student syncs; say so
        // once, on the object itself.
        let (malformed_tx, mut malformed_rx) = mpsc::unbounded_channel::<MalformedObject>();
        student_informer.set_malformed_object_handler(move |m| {
            let _ = malformed_tx.send(m.clone());
        });
        let recorder = self.recorder.clone();
        tokio::spawn(async move {
            while let Some(m) = malformed_rx.recv().await {
                let message = format!("skipped: `{}` does not fit this controller's Student type: {}", m.path, m.error);
                if let Err(e) = recorder.event(&m.reference, EventType::Warning, MALFORMED, "Decode", &message).await {
                    tracing::warn!("cannot record an event about {}: {e}", m.key);
                }
            }
        });

        let queue = self.queue.clone();
        student_informer.add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add({
                    let queue = queue.clone();
                    move |s: Arc<Student>, _| queue.add(meta_namespace_key(s.as_ref()))
                })
                .on_update({
                    let queue = queue.clone();
                    move |_old: Arc<Student>, new: Arc<Student>| queue.add(meta_namespace_key(new.as_ref()))
                })
                .on_delete({
                    let queue = queue.clone();
                    move |gone: DeletedObject<Student>| queue.add(meta_namespace_key(gone.object().as_ref()))
                }),
        );
        let owner_of = |cm: &ConfigMap| -> Option<String> {
            let owner = cm.metadata.owner_references.as_ref()?.iter().find(|o| o.controller == Some(true))?;
            (owner.kind == "Student")
                .then(|| format!("{}/{}", cm.metadata.namespace.as_deref().unwrap_or_default(), owner.name))
        };
        // A ConfigMap of a Student's name that is someone else's, gone: the
        // Student may have its own now.
        let named_for = |cm: &ConfigMap| -> Option<String> {
            let student = cm.metadata.name.as_deref()?.strip_prefix("student-")?;
            Some(format!("{}/{student}", cm.metadata.namespace.as_deref().unwrap_or_default()))
        };
        config_map_informer.add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add({
                    let queue = queue.clone();
                    move |cm: Arc<ConfigMap>, _| owner_of(&cm).into_iter().for_each(|k| queue.add(k))
                })
                .on_update({
                    let queue = queue.clone();
                    move |_old, cm: Arc<ConfigMap>| owner_of(&cm).into_iter().for_each(|k| queue.add(k))
                })
                .on_delete({
                    let queue = queue.clone();
                    move |gone: DeletedObject<ConfigMap>| {
                        let cm = gone.object();
                        owner_of(cm).or_else(|| named_for(cm)).into_iter().for_each(|k| queue.add(k))
                    }
                }),
        );

        tracing::info!("starting the Student controller; waiting for informer caches to sync");
        self.factory.start();
        self.config_maps_factory.start();
        let synced = async {
            let students = self.factory.wait_for_cache_sync().await;
            let config_maps = self.config_maps_factory.wait_for_cache_sync().await;
            students.values().chain(config_maps.values()).all(|ok| *ok)
        };
        tokio::select! {
            ok = synced => {
                if !ok {
                    return Err(anyhow!("informer caches did not sync"));
                }
            }
            Some(message) = forbidden_rx.recv() => {
                self.stop_informers().await;
                return Err(anyhow!(
                    "{message}\nthe controller's identity lacks RBAC permissions: apply config/rbac/ and bind the role to it"
                ));
            }
            _ = shutdown.recv() => {
                self.stop_informers().await;
                return Ok(());
            }
        }

        if let Some(shards) = self.options.shards.clone() {
            // A shard taken over: its Students are this replica's now.
            let this = self.clone();
            tokio::spawn(async move {
                let mut changes = shards.subscribe();
                let mut held = Held::default();
                loop {
                    let now = changes.borrow_and_update().clone();
                    // Also a shard lost and taken back since the last look:
                    // its keys were dropped meanwhile.
                    let gained = now.gained_since(&held);
                    if !gained.is_empty() {
                        tracing::info!(?gained, "queueing the Students of newly held shards");
                        for student in this.students.list(&everything()) {
                            let key = meta_namespace_key(student.as_ref());
                            if gained.contains(&shard_of(&key, shards.shards())) {
                                this.queue.add(key);
                            }
                        }
                    }
                    held = now;
                    if changes.changed().await.is_err() {
                        return;
                    }
                }
            });
        }
        tracing::info!(workers = self.options.workers, "caches synced; starting workers");
        let mut workers = Vec::new();
        for _ in 0..self.options.workers {
            let this = self.clone();
            workers.push(tokio::spawn(async move { this.run_worker().await }));
        }

        loop {
            tokio::select! {
                _ = shutdown.recv() => break,
                // Permissions taken away after the start: the informer
                // keeps its cache and retries with backoff, as client-go's
                // reflector does.
                Some(message) = forbidden_rx.recv() => tracing::error!("{message}; retrying"),
            }
        }
        tracing::info!("shutdown signal received; finishing in-flight work (a second signal exits at once)");
        self.stop_taking_work().await;
        for worker in workers {
            let _ = worker.await;
        }
        self.stop_informers().await;
        // Repeats of an event are counted in memory after the second one;
        // the counts the server does not have yet are written now.
        if let Err(e) = self.recorder.flush().await {
            tracing::warn!(error = %e, "could not write the last event counts");
        }
        tracing::info!("workers finished; exiting");
        Ok(())
    }

    /// Workers finish the syncs they are in and take no more keys; what
    /// is still queued is left (client-go's controllers return and the
    /// process exits). Returns once the in-flight syncs are done.
    async fn stop_taking_work(&self) {
        self.stopping.store(true, Ordering::Release);
        self.queue.shut_down_with_drain().await;
    }

    async fn stop_informers(&self) {
        self.factory.shutdown().await;
        self.config_maps_factory.shutdown().await;
    }

    async fn run_worker(self: Arc<Self>) {
        while let Some(key) = self.queue.get().await {
            if self.stopping.load(Ordering::Acquire) {
                self.queue.done(&key);
                break;
            }
            if self.options.shards.as_ref().is_some_and(|s| !s.owns_key(&key)) {
                // Another replica's shard.
                self.queue.forget(&key);
                self.queue.done(&key);
                continue;
            }
            let result = catching_panics({
                let (this, key) = (self.clone(), key.clone());
                async move { this.sync(&key).await }
            })
            .await;
            match result {
                Ok(()) => {
                    self.queue.forget(&key);
                    tracing::info!("successfully synced '{key}'");
                }
                Err(SyncError::Transient(e)) if self.queue.num_requeues(&key) < MAX_RETRIES => {
                    tracing::warn!("error syncing '{key}', requeuing: {e:#}");
                    self.queue.add_rate_limited(key.clone());
                }
                Err(e) => {
                    let (reason, message) = match e {
                        SyncError::Transient(e) => {
                            ("SyncFailed", format!("giving up after {MAX_RETRIES} retries: {e:#}"))
                        }
                        SyncError::Permanent { reason, message } => (reason, message),
                    };
                    tracing::error!("error syncing '{key}', not retrying: {message}");
                    self.queue.forget(&key);
                    self.warn(&key, reason, &message).await;
                    if reason == "ErrResourceExists" {
                        // The other ConfigMap's deletion queues the Student
                        // (see `run`); look again now and then too, without
                        // a retry loop, in case that event is missed.
                        self.queue.add_after(key.clone(), CONFLICT_RECHECK);
                    }
                }
            }
            self.queue.done(&key);
        }
    }

    async fn warn(&self, key: &str, reason: &str, message: &str) {
        let Ok((ns, name)) = split_meta_namespace_key(key) else { return };
        if let Some(student) = self.students.students(ns.unwrap_or_default()).get(name)
            && let Err(e) = self.recorder.warning(student.as_ref(), reason, message).await
        {
            tracing::warn!("could not record a Warning event for '{key}': {e}");
        }
    }

    /// Brings the world in line with the Student `key`.
    // Adds the finalizer (a patch), applies the ConfigMap (a patch; the
    // first apply creates it, which also needs create) and applies status.
    // The ConfigMap's owner reference blocks the Student's deletion, which
    // clusters with the OwnerReferencesPermissionEnforcement admission
    // plugin allow only with update on students/finalizers.
    #[codegen_macros::rbac(groups = "example.k8s.io", resources = "students", verbs = "patch")]
    #[codegen_macros::rbac(groups = "example.k8s.io", resources = "students/finalizers", verbs = "update")]
    #[codegen_macros::rbac(groups = "", resources = "configmaps", verbs = "create;patch")]
    #[codegen_macros::rbac(groups = "example.k8s.io", resources = "students/status", verbs = "patch")]
    async fn sync(&self, key: &str) -> Result<(), SyncError> {
        let (ns, name) = match split_meta_namespace_key(key) {
            Ok(parts) => parts,
            Err(e) => {
                // Not retried: the same key would fail the same way.
                tracing::error!("invalid resource key: {e}");
                return Ok(());
            }
        };
        let ns = ns.unwrap_or_default();
        let Some(student) = self.students.students(ns).get(name) else {
            // Gone: its ConfigMap was removed by the finalizer before.
            return Ok(());
        };
        let students = self.clientset.example_v1().students(ns);
        if student.metadata.deletion_timestamp.is_some() {
            return self.finalize(&student).await;
        }

        let mut student = (*student).clone();
        let mut changed = false;
        if !student.metadata.finalizers.as_ref().is_some_and(|f| f.iter().any(|f| f == FINALIZER)) {
            let mut finalizers = student.metadata.finalizers.clone().unwrap_or_default();
            finalizers.push(FINALIZER.to_owned());
            // resourceVersion in a merge patch is a precondition: a stale
            // cache gives a Conflict and a retry, never a lost finalizer.
            let patch = json!({ "metadata": { "finalizers": finalizers, "resourceVersion": student.metadata.resource_version } });
            student = students.patch(name, &PatchType::Merge(patch), &PatchOptions::default()).await?;
            changed = true;
        }

        // The ConfigMap and the status are written with typed server-side
        // apply as FIELD_MANAGER: the controller owns exactly the fields it
        // sets, and what it applied last is read back from managedFields.
        let config_maps: TypedClient<ConfigMap> = TypedClient::new(self.clientset.client().clone(), Some(ns));
        let desired = desired_config_map(&student);
        let cm_name = config_map_name(name);
        let (up_to_date, force) = match self.config_maps.namespace(ns).get(&cm_name) {
            Some(existing) => {
                owned_by(&existing, &student)?;
                // The informers keep managedFields as text beside each
                // cached object (`ManagedFields::Text`, the default): put
                // them back for extract.
                let existing =
                    self.config_maps.with_managed_fields(&existing).map_err(|e| SyncError::Transient(e.into()))?;
                // Forced: the controller is the authority for the fields it
                // applies (a `kubectl edit` of them is undone).
                (extract_config_map(&existing, FIELD_MANAGER)? == desired, true)
            }
            // Not there, as far as the cache knows. Not forced: one that
            // someone else made since the cache last heard (a moment ago, or
            // while its watch was down) and that sets a field the controller
            // sets conflicts, and a retry finds it in the cache; one that
            // shares no field with it would be taken over.
            None => (false, false),
        };
        if !up_to_date {
            let options = ApplyOptions { force, ..ApplyOptions::new(FIELD_MANAGER) };
            config_maps.apply_configuration(&desired, &options).await?;
            changed = true;
        }

        let generation = student.metadata.generation;
        let ready = student.status.as_ref().is_some_and(|s| {
            s.observed_generation == generation && s.conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True")
        });
        if !ready {
            // The time Ready last changed, as `meta.SetStatusCondition`
            // keeps it: a new generation that is ready again is no
            // transition.
            let since = student
                .status
                .as_ref()
                .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
                .and_then(|c| c.last_transition_time.clone())
                .unwrap_or_else(|| Time(k8s_openapi::jiff::Timestamp::now()));
            let mut status =
                StudentStatusApplyConfiguration::new().with_conditions([StudentConditionApplyConfiguration::new()
                    .with_type("Ready")
                    .with_status("True")
                    .with_reason(SYNCED.0)
                    .with_message(SYNCED.1)
                    .with_last_transition_time(since)]);
            if let Some(generation) = generation {
                status = status.with_observed_generation(generation);
            }
            let ac = StudentApplyConfiguration::new(name, ns).with_status(status);
            student = students.apply_status(&ac, &ApplyOptions::new(FIELD_MANAGER)).await?;
            changed = true;
        }

        if changed && let Err(e) = self.recorder.normal(&student, SYNCED.0, SYNCED.1).await {
            tracing::warn!("could not record the Synced event for '{key}': {e}");
        }
        Ok(())
    }

    /// Deletes the Student's ConfigMap, then lets the Student go.
    #[codegen_macros::rbac(groups = "", resources = "configmaps", verbs = "delete")]
    #[codegen_macros::rbac(groups = "example.k8s.io", resources = "students", verbs = "patch")]
    async fn finalize(&self, student: &Student) -> Result<(), SyncError> {
        let Some(finalizers) = student.metadata.finalizers.as_ref().filter(|f| f.iter().any(|f| f == FINALIZER)) else {
            return Ok(());
        };
        let ns = student.metadata.namespace.as_deref().unwrap_or_default();
        let name = student.metadata.name.as_deref().unwrap_or_default();
        // Only the ConfigMap this Student controls, and only that very
        // object (its uid a precondition): one of that name that is
        // someone else's stays. One the cache has not seen (a Student
        // deleted right after its first sync) is taken for the Student's:
        // the cache holds every ConfigMap, so only one made since it last
        // heard could be another's.
        let config_maps: TypedClient<ConfigMap> = TypedClient::new(self.clientset.client().clone(), Some(ns));
        let options = match self.config_maps.namespace(ns).get(&config_map_name(name)) {
            Some(cm) if owned_by(&cm, student).is_ok() => {
                Some(DeleteOptions { preconditions_uid: cm.metadata.uid.clone(), ..DeleteOptions::default() })
            }
            Some(_) => None,
            None => Some(DeleteOptions::default()),
        };
        if let Some(options) = options {
            match config_maps.delete(&config_map_name(name), &options).await {
                Ok(()) => {}
                // Gone, or replaced by another object of that name.
                Err(e) if e.is_not_found() || e.is_conflict() => {}
                Err(e) => return Err(e.into()),
            }
        }
        let rest: Vec<&String> = finalizers.iter().filter(|f| *f != FINALIZER).collect();
        let patch = json!({ "metadata": { "finalizers": rest, "resourceVersion": student.metadata.resource_version } });
        match self
            .clientset
            .example_v1()
            .students(ns)
            .patch(name, &PatchType::Merge(patch), &PatchOptions::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

fn is_forbidden(e: &watcher::Error) -> bool {
    let api = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s.code,
        watcher::Error::WatchError(s) => s.code,
        _ => 0,
    };
    api == 403
}

/// The ConfigMap a Student owns: its name and school, owned by it, as the
/// apply configuration the controller applies.
pub fn desired_config_map(student: &Student) -> ConfigMapApplyConfiguration {
    let name = student.metadata.name.clone().unwrap_or_default();
    let namespace = student.metadata.namespace.clone().unwrap_or_default();
    ConfigMapApplyConfiguration::new(config_map_name(&name), namespace)
        .with_metadata(|m| {
            m.with_labels([MANAGED_BY])
                .with_owner_references([OwnerReferenceApplyConfiguration::controller_of(student)])
        })
        .with_data([("name", student.spec.name.as_str()), ("school", student.spec.school.as_str())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pkg::client::fake;

    #[tokio::test]
    async fn a_panicking_sync_is_a_failed_one() {
        let result = catching_panics(async { panic!("a bug in sync") }).await;
        let Err(SyncError::Transient(e)) = result else { panic!("{result:?}") };
        assert!(e.to_string().contains("a bug in sync"), "{e}");
        assert!(catching_panics(async { Ok(()) }).await.is_ok());
    }

    /// A stopping controller's workers take no more keys: what is queued
    /// is left, not synced.
    #[tokio::test]
    async fn a_stopping_worker_takes_no_more_keys() {
        let cs = fake::Clientset::new([]).unwrap();
        let options = ControllerOptions {
            workers: 1,
            resync: None,
            instance: "test".into(),
            namespace: None,
            watch_idle_timeout: None,
            shards: None,
        };
        let controller = Controller::new(cs.client().clone(), options);
        for key in ["default/a", "default/b", "default/c"] {
            controller.queue.add(key.to_owned());
        }
        controller.stopping.store(true, Ordering::Release);
        let worker = tokio::time::timeout(Duration::from_secs(10), controller.clone().run_worker());
        worker.await.expect("the worker returns");
        assert_eq!(controller.queue.len(), 2, "one key taken and dropped, two left");
        controller.stop_taking_work().await;
    }
}
