//! The {{ kind }} controller: an informer feeds a rate-limited work queue,
//! workers reconcile each queued object and report through its status and
//! events (client-go's sample-controller, on codegen-runtime).
//!
//! `reconcile` is where your logic goes. The `#[rbac(...)]` markers name
//! every API call the controller makes; `kube-codegen rbac src` turns them
//! into `config/rbac/role.yaml`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, anyhow};
use codegen_runtime::client::UpdateOptions;
use codegen_runtime::conditions::{is_status_condition_true, set_status_condition};
use codegen_runtime::events::EventRecorder;
use codegen_runtime::factory::SharedInformerFactory as RuntimeFactory;
use codegen_runtime::informer::{DeletedObject, ManagedFields, ResourceEventHandlerFuncs};
use codegen_runtime::signal::ShutdownSignal;
use codegen_runtime::workqueue::RateLimitingQueue;
use codegen_runtime::{meta_namespace_key, split_meta_namespace_key};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use {{ apis_path }}::{{ group_dir }}::{{ version }}::{{ kind }};
use {{ client_path }}::clientset::Clientset;
use {{ client_path }}::informers::SharedInformerFactory;
use {{ client_path }}::listers::{{ group_dir }}::{{ version }}::{{ kind }}Lister;

/// Name of the controller in events and logs.
pub const NAME: &str = "{{ crate_name }}";
/// How often a failing reconcile is retried before it is dropped.
pub const MAX_RETRIES: u32 = 15;

/// Settings of a [`Controller`].
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// Workers reconciling at once.
    pub workers: usize,
    /// Watch only this namespace; `None` watches all namespaces.
    pub namespace: Option<String>,
}

/// Informer, lister, work queue and event recorder of the {{ kind }} controller.
pub struct Controller {
    clientset: Clientset,
    factory: SharedInformerFactory,
    {{ accessor }}: {{ kind }}Lister,
    queue: RateLimitingQueue<String>,
    recorder: EventRecorder,
    options: ControllerOptions,
    /// Set once the controller stops: workers take no more keys.
    stopping: AtomicBool,
}

impl Controller {
    /// Wires the informer, lister, queue and recorder; starts nothing.
    // The informer lists and watches {{ kind }}s; the recorder writes
    // events.k8s.io/v1 Events and patches repeated ones.
    #[codegen_macros::rbac(groups = "{{ group }}", resources = "{{ plural }}", verbs = "list;watch")]
    #[codegen_macros::rbac(groups = "events.k8s.io", resources = "events", verbs = "create;patch")]
    pub fn new(client: kube::Client, options: ControllerOptions) -> Arc<Self> {
        // managedFields stay the server's JSON text beside each cached
        // object (`lister.managed_fields(&obj)` reads them): about half the
        // memory of decoding them into every object. `ManagedFields::Decoded`
        // keeps them in the objects.
        let mut builder = RuntimeFactory::builder(client.clone()).managed_fields(ManagedFields::Text);
        if let Some(ns) = &options.namespace {
            builder = builder.namespace(ns.clone());
        }
        let factory = SharedInformerFactory::from_runtime(builder.build());
        let {{ accessor }} = factory.{{ group_dir }}().{{ version }}().{{ accessor }}().lister();
        Arc::new(Self {
            clientset: Clientset::new(client.clone()),
            factory,
            {{ accessor }},
            queue: RateLimitingQueue::new(),
            recorder: EventRecorder::new(client, NAME, None),
            options,
            stopping: AtomicBool::new(false),
        })
    }

    /// Runs until `shutdown` fires, then lets in-flight reconciles finish
    /// and leaves what is still queued.
    pub async fn run(self: Arc<Self>, shutdown: ShutdownSignal) -> Result<()> {
        let queue = self.queue.clone();
        self.factory.{{ group_dir }}().{{ version }}().{{ accessor }}().informer().add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add({
                    let queue = queue.clone();
                    move |obj: Arc<{{ kind }}>, _| queue.add(meta_namespace_key(obj.as_ref()))
                })
                .on_update({
                    let queue = queue.clone();
                    move |_old: Arc<{{ kind }}>, new: Arc<{{ kind }}>| queue.add(meta_namespace_key(new.as_ref()))
                })
                .on_delete({
                    let queue = queue.clone();
                    move |gone: DeletedObject<{{ kind }}>| queue.add(meta_namespace_key(gone.object().as_ref()))
                }),
        );
        tracing::info!("starting; waiting for the informer cache to sync");
        self.factory.start();
        tokio::select! {
            synced = self.factory.wait_for_cache_sync() => {
                if !synced.values().all(|ok| *ok) {
                    self.factory.shutdown().await;
                    return Err(anyhow!("the informer cache did not sync"));
                }
            }
            () = shutdown.recv() => {
                self.factory.shutdown().await;
                return Ok(());
            }
        }
        tracing::info!(workers = self.options.workers, "cache synced; starting workers");
        let workers: Vec<_> = (0..self.options.workers)
            .map(|_| {
                let this = self.clone();
                tokio::spawn(async move { this.run_worker().await })
            })
            .collect();
        shutdown.recv().await;
        tracing::info!("shutting down; finishing in-flight work");
        self.stopping.store(true, Ordering::Release);
        self.queue.shut_down_with_drain().await;
        for worker in workers {
            let _ = worker.await;
        }
        self.factory.shutdown().await;
        // Event repeats past the second are counted in memory; write them.
        if let Err(e) = self.recorder.flush().await {
            tracing::warn!(error = %e, "could not write the last event counts");
        }
        Ok(())
    }

    async fn run_worker(self: Arc<Self>) {
        while let Some(key) = self.queue.get().await {
            if self.stopping.load(Ordering::Acquire) {
                self.queue.done(&key);
                break;
            }
            // A reconcile that panics is a failed one, retried like any
            // other (controller-runtime's RecoverPanic): its key is not
            // left processing forever, and the worker goes on.
            let reconcile = tokio::spawn({
                let (this, key) = (self.clone(), key.clone());
                async move { this.reconcile(&key).await }
            });
            match reconcile.await.unwrap_or_else(|e| Err(anyhow!("reconcile panicked: {e}"))) {
                Ok(()) => self.queue.forget(&key),
                Err(e) if self.queue.num_requeues(&key) < MAX_RETRIES => {
                    tracing::info!("reconciling {key} failed, retrying: {e:#}");
                    self.queue.add_rate_limited(key.clone());
                }
                Err(e) => {
                    tracing::error!("reconciling {key} failed {MAX_RETRIES} times, dropping it: {e:#}");
                    self.queue.forget(&key);
                }
            }
            self.queue.done(&key);
        }
    }

    /// Brings the cluster in line with the {{ kind }} `key` (`namespace/name`).
    /// This skeleton only reports: it marks the object `Ready` for its
    /// current generation and records an event. Put your logic here.
    #[codegen_macros::rbac(groups = "{{ group }}", resources = "{{ plural }}/status", verbs = "update")]
    pub async fn reconcile(&self, key: &str) -> Result<()> {
        let (ns, name) = match split_meta_namespace_key(key) {
            Ok(parts) => parts,
            Err(e) => {
                // Not retried: the same key would fail the same way.
                tracing::error!("invalid resource key: {e}");
                return Ok(());
            }
        };
        let ns = ns.unwrap_or_default();
        let Some(obj) = self.{{ accessor }}.{{ accessor }}(ns).get(name) else {
            // Deleted: nothing to clean up (owned objects go with their owner).
            return Ok(());
        };
        let generation = obj.metadata.generation;
        let mut status = obj.status.clone().unwrap_or_default();
        if status.observed_generation == generation && is_status_condition_true(&status.conditions, "Ready") {
            return Ok(());
        }
        status.observed_generation = generation;
        // Other conditions stay, and the time Ready last changed is kept
        // while it stays True (apimachinery's `meta.SetStatusCondition`).
        set_status_condition(
            &mut status.conditions,
            Condition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: "Reconciled".into(),
                message: format!("{{ kind }} reconciled by {NAME}"),
                observed_generation: generation,
                last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
            },
        );
        let mut updated = (*obj).clone();
        updated.status = Some(status);
        // A stale cache makes this a Conflict: the worker retries later.
        let api = self.clientset.{{ gv_accessor }}().{{ accessor }}(ns);
        let updated = api.update_status(&updated, &UpdateOptions::default()).await?;
        if let Err(e) = self.recorder.normal(&updated, "Reconciled", "{{ kind }} reconciled").await {
            tracing::warn!("could not record an event for {key}: {e}");
        }
        tracing::info!("reconciled {key}");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use codegen_runtime::client::GetOptions;
    use k8s_openapi::api::events::v1::Event;

    use super::*;
    use {{ apis_path }}::{{ group_dir }}::{{ version }}::{ {{- kind }}Spec, {{ kind }}Status};
    use {{ client_path }}::fake;

    /// The controller marks a new {{ kind }} Ready and records an event,
    /// on the in-memory fake API server.
    #[tokio::test]
    async fn a_new_object_becomes_ready() {
        let mut obj = {{ kind }}::new("sample", {{ kind }}Spec::default());
        obj.metadata.namespace = Some("default".into());
        obj.metadata.generation = Some(1);
        // A condition someone else set stays.
        let degraded = Condition {
            type_: "Degraded".into(),
            status: "False".into(),
            reason: "Fine".into(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        };
        obj.status = Some({{ kind }}Status { observed_generation: None, conditions: vec![degraded.clone()] });
        let cs = fake::Clientset::new([obj.into()]).unwrap();
        cs.server().register::<Event>();
        let controller = Controller::new(cs.client().clone(), ControllerOptions { workers: 1, namespace: None });
        let stop = ShutdownSignal::manual();
        let running = tokio::spawn(controller.run(stop.clone()));

        let api = cs.{{ gv_accessor }}().{{ accessor }}("default");
        let mut ready = None;
        for _ in 0..200 {
            let got = api.get("sample", &GetOptions::default()).await.unwrap();
            if let Some(status) = got.status.filter(|s| s.conditions.iter().any(|c| c.type_ == "Ready")) {
                ready = Some(status);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let status = ready.expect("the controller never wrote a Ready condition");
        assert_eq!(status.observed_generation, Some(1));
        assert!(is_status_condition_true(&status.conditions, "Ready"), "{status:?}");
        assert!(status.conditions.contains(&degraded), "{status:?}");
        let events = cs.server().objects::<Event>().unwrap();
        assert!(events.iter().any(|e| e.reason.as_deref() == Some("Reconciled")), "{events:?}");

        stop.trigger();
        running.await.unwrap().unwrap();
    }
}
