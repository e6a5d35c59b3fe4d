//! client-go's `SharedIndexInformer`: one watch per type feeding a local
//! [`Indexer`] and any number of event handlers, on top of kube's `watcher`.
//!
//! kube's [`watcher()`] does the list, watch, relist and bookmarks; a
//! backoff like client-go's reflector's (0.8 s doubling to 30 s, reset
//! after two minutes without a failure) paces retries. The informer turns its events into cache writes and handler
//! notifications with client-go's semantics: a relist (`Init`, `InitApply`…,
//! `InitDone`) replaces the cache atomically, objects that vanished meanwhile
//! are reported as [`DeletedFinalStateUnknown`] tombstones, and
//! [`has_synced`](SharedIndexInformer::has_synced) flips once the first list is
//! in the cache.
//!
//! Everything behind [`SharedIndexInformer<K>`] — the watch loop, kube's
//! watcher, the cache, the dispatch to handlers — works on objects with
//! their kind erased and is compiled once, in this crate. Per kind there are
//! only the typed façade, the decoding function and the handler adapters,
//! so an informer adds little to the build of a crate that uses it.

mod handler;
pub(crate) mod lenient;
mod processor;
mod short_watch;
mod sync;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use std::future::Future;
use std::marker::PhantomData;

use futures::stream::BoxStream;
use futures::{FutureExt, Stream, StreamExt};
use kube::api::ApiResource;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use tokio::sync::{Notify, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::indexer::{ErasedIndexer, IndexFunc, Indexer, ManagedTexts, address, erase_index_funcs};
use crate::lister::Lister;
use crate::object::{AnyObject, ErasedObject, Object, meta_key, meta_key_parts};

pub use handler::{
    DeletedFinalStateUnknown, DeletedObject, FilteringResourceEventHandler, ResourceEventHandler,
    ResourceEventHandlerFuncs,
};
pub use lenient::MalformedObject;
pub use processor::HandlerRegistration;
pub use sync::{HasSynced, wait_for_cache_sync};

use handler::Typed;
pub(crate) use handler::{Deleted, ErasedHandler};
use lenient::{Decode, Decoding, Item};
use processor::{Notification, Processor, SyncState};

/// Rewrites an object before it is cached and handed to handlers, e.g. to
/// drop `managedFields` and save memory (client-go's `TransformFunc`).
pub type Transform<K> = Arc<dyn Fn(K) -> K + Send + Sync>;

/// Called with every error the watch reports; the watch then retries with
/// backoff (client-go's `WatchErrorHandler`).
pub type WatchErrorHandler = Arc<dyn Fn(&watcher::Error) + Send + Sync>;

/// A stream of watcher events, the informer's only input.
pub type WatchEventStream<K> = BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>;

/// Called once for every version of an object that does not decode into
/// the informer's type.
pub type MalformedObjectHandler = Arc<dyn Fn(&MalformedObject) + Send + Sync>;

/// The informer's input: watcher events whose objects may not decode.
type ItemEventStream = BoxStream<'static, Result<watcher::Event<Item>, watcher::Error>>;

/// How a [`SharedIndexInformer`] lists, watches and caches.
pub struct InformerConfig<K> {
    /// Label and field selectors, page size, timeouts and list strategy of
    /// the watch. With `initial_list_strategy: StreamingList` (or
    /// `watcher::Config::streaming_lists()`), the initial list and every
    /// relist come as one watch (`sendInitialEvents`, no paged lists); if
    /// the server refuses that, the informer goes back to paged lists.
    pub watcher_config: watcher::Config,
    /// Default resync period of handlers added with
    /// [`SharedIndexInformer::add_event_handler`]; `None` or zero never
    /// resyncs. Periods under one second are raised to one second.
    pub resync: Option<Duration>,
    /// Applied to every object before it is cached.
    pub transform: Option<Transform<K>>,
    /// Extra named indexes, next to the built-in namespace index.
    pub indexers: BTreeMap<String, IndexFunc<K>>,
    /// A watch that delivers nothing (no event, no bookmark, no error) for
    /// this long is taken for a dead connection (a partition that swallowed
    /// the server's close) and started again, with a relist. The API server
    /// sends a bookmark at least every minute to a watch that asks for them
    /// (kube's watcher does), so a healthy idle watch never reaches the
    /// default of [`DEFAULT_WATCH_IDLE_TIMEOUT`]. `None` waits forever.
    /// Only for informers over an `Api`, not over a stream.
    pub watch_idle_timeout: Option<Duration>,
    /// Where each object's `metadata.managedFields` are kept: as JSON text
    /// beside the object (the default), in it, or nowhere. Applied before
    /// `transform`.
    pub managed_fields: ManagedFields,
}

/// What an informer keeps of each object's `metadata.managedFields`, the
/// server-side apply bookkeeping that is most of a typical object's size
/// once decoded: k8s-openapi types each `fieldsV1` as a JSON value tree,
/// where client-go keeps its raw bytes.
///
/// The default is [`Text`](Self::Text): cached objects (and the objects
/// handed to event handlers and transforms) have `managedFields: None`,
/// and the lister gives them back on demand. Before `extract_<kind>` on a
/// cached object, put them back with [`Lister::with_managed_fields`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ManagedFields {
    /// In the object, decoded, as any `Api::get` returns it: about three
    /// KiB per object for a typical one or two managers.
    Decoded,
    /// As the JSON text the API server sent, beside the cached object
    /// instead of in it (the default; about a tenth of the memory of
    /// [`Decoded`](Self::Decoded), as client-go keeps them): cached
    /// objects have `managedFields: None`, and [`Lister::managed_fields`] /
    /// [`Indexer::managed_fields`] decode them on demand for an object while
    /// it is cached. The text is cut out of
    /// each object before it is decoded, so no value trees are built, and
    /// it is not checked then: managedFields that do not fit their type
    /// (which the API server never sends) leave the object cached, and
    /// reading them is the error.
    #[default]
    Text,
    /// Dropped before the object is decoded (what client-go's common
    /// `TransformStripManagedFields` does after).
    Dropped,
}

/// The default [`InformerConfig::watch_idle_timeout`]: two and a half
/// times the API server's bookmark period.
pub const DEFAULT_WATCH_IDLE_TIMEOUT: Duration = Duration::from_secs(150);

impl<K> Default for InformerConfig<K> {
    fn default() -> Self {
        Self {
            watcher_config: watcher::Config::default(),
            resync: None,
            transform: None,
            indexers: BTreeMap::new(),
            watch_idle_timeout: Some(DEFAULT_WATCH_IDLE_TIMEOUT),
            managed_fields: ManagedFields::Text,
        }
    }
}

impl<K> Clone for InformerConfig<K> {
    fn clone(&self) -> Self {
        Self {
            watcher_config: self.watcher_config.clone(),
            resync: self.resync,
            transform: self.transform.clone(),
            indexers: self.indexers.clone(),
            watch_idle_timeout: self.watch_idle_timeout,
            managed_fields: self.managed_fields,
        }
    }
}

impl<K> fmt::Debug for InformerConfig<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerConfig")
            .field("watcher_config", &self.watcher_config)
            .field("resync", &self.resync)
            .field("transform", &self.transform.is_some())
            .field("indexers", &self.indexers.keys().collect::<Vec<_>>())
            .field("watch_idle_timeout", &self.watch_idle_timeout)
            .field("managed_fields", &self.managed_fields)
            .finish()
    }
}

/// Where the events come from, until the informer starts.
enum Source {
    /// A list+watch of the kind, decoding each item with the kind's function.
    Api(Box<(Api<Item>, ApiResource, watcher::Config, Arc<Decode>)>),
    /// Events of already decoded (and transformed) objects.
    Stream(ItemEventStream),
}

/// Where the informer is in its life.
enum Lifecycle {
    NotStarted(Source),
    Running { stop: oneshot::Sender<()>, task: JoinHandle<()> },
    Stopped,
}

/// The informer, for objects of any kind.
pub(crate) struct Shared {
    /// `apiVersion` and kind of the objects, for reports and logs.
    api_version: String,
    kind: String,
    indexer: ErasedIndexer,
    /// The dispatch lock: held while the cache changes and the matching
    /// notifications are queued, and while a new handler snapshots the cache.
    processor: Mutex<Processor>,
    sync: watch::Sender<SyncState>,
    default_resync: Option<Duration>,
    watch_idle_timeout: Option<Duration>,
    watch_error_handler: Mutex<Option<WatchErrorHandler>>,
    malformed_handler: Mutex<Option<MalformedObjectHandler>>,
    /// Objects whose latest version does not decode, by key.
    malformed: Mutex<BTreeMap<String, MalformedObject>>,
    lifecycle: Mutex<Lifecycle>,
    /// Wakes the run loop when a handler with a resync period is added.
    resync_changed: Arc<Notify>,
    /// Held for the whole of `shutdown`.
    shutdown_lock: tokio::sync::Mutex<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Handlers never run under these locks, so a poisoned lock only means a
    // panic in an index function or transform; the data stays usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One list+watch of a type shared by a local cache and many event handlers:
/// client-go's `SharedIndexInformer`.
///
/// Cloning is cheap; clones share the watch, cache and handlers. Build it,
/// add handlers, [`start`](Self::start) it, then
/// [`wait_for_cache_sync`](Self::wait_for_cache_sync) before trusting the
/// [`lister`](Self::lister). Handlers may also be added while it runs: they
/// first get the current cache as initial-list adds.
pub struct SharedIndexInformer<K> {
    shared: Arc<Shared>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone(), kind: PhantomData }
    }
}

impl<K> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sync = *self.shared.sync.borrow();
        f.debug_struct("SharedIndexInformer")
            .field("synced", &sync.synced)
            .field("stopped", &sync.stopped)
            .field("indexer", &self.shared.indexer)
            .finish()
    }
}

impl<K: Object> SharedIndexInformer<K> {
    /// An informer watching `api` (its namespace, or all namespaces) with
    /// kube's `watcher` and default backoff.
    pub fn new(api: Api<K>, config: InformerConfig<K>) -> Self {
        // Each item of a list page and each watch event is decoded on its
        // own, so that one bad object cannot fail the rest.
        let resource = ApiResource::erase::<K>(&());
        let namespace = api.namespace().map(str::to_owned);
        let client = api.into_client();
        let api = match namespace {
            Some(ns) => Api::<Item>::namespaced_with(client, &ns, &resource),
            None => Api::<Item>::all_with(client, &resource),
        };
        let decode = lenient::decoder::<K>(config.transform.clone(), config.managed_fields);
        let source = Source::Api(Box::new((api, resource, config.watcher_config.clone(), decode)));
        Self::with_source(source, config)
    }

    /// An informer fed by any stream of watcher events instead of a live
    /// watch: a pre-built `watcher` chain, or a synthetic sequence in tests.
    /// `config.watcher_config` is ignored. Errors in the stream go to the
    /// watch error handler; when the stream ends the cache stays as it is.
    pub fn from_stream(
        events: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
        config: InformerConfig<K>,
    ) -> Self {
        let transform = config.transform.clone();
        let managed = config.managed_fields;
        let item = move |mut obj: K| {
            let text = match managed {
                ManagedFields::Decoded => None,
                ManagedFields::Text => obj
                    .meta_mut()
                    .managed_fields
                    .take()
                    .and_then(|fields| serde_json::to_string(&fields).ok().map(String::into_boxed_str)),
                ManagedFields::Dropped => {
                    obj.meta_mut().managed_fields = None;
                    None
                }
            };
            let obj = match &transform {
                Some(transform) => transform(obj),
                None => obj,
            };
            Item::decoded(obj, text)
        };
        let events = events.map(move |event| {
            event.map(|event| match event {
                watcher::Event::Init => watcher::Event::Init,
                watcher::Event::InitApply(obj) => watcher::Event::InitApply(item(obj)),
                watcher::Event::InitDone => watcher::Event::InitDone,
                watcher::Event::Apply(obj) => watcher::Event::Apply(item(obj)),
                watcher::Event::Delete(obj) => watcher::Event::Delete(item(obj)),
            })
        });
        Self::with_source(Source::Stream(events.boxed()), config)
    }

    fn with_source(source: Source, config: InformerConfig<K>) -> Self {
        let indexers = erase_index_funcs(config.indexers);
        let shared = Shared::new(
            K::api_version(&()).into_owned(),
            K::kind(&()).into_owned(),
            ErasedIndexer::with_indexers(indexers),
            config.resync,
            config.watch_idle_timeout,
            source,
        );
        Self::from_shared(Arc::new(shared))
    }
}

impl<K> SharedIndexInformer<K> {
    /// The typed view of an informer of `K`s.
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Self { shared, kind: PhantomData }
    }

    /// The informer behind this view.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Starts the watch and the handler threads on the current Tokio
    /// runtime. Does nothing if already started or shut down.
    ///
    /// # Panics
    ///
    /// Like `tokio::spawn`, when called outside a Tokio runtime.
    pub fn start(&self) {
        self.shared.start();
    }
}

impl<K: Object> SharedIndexInformer<K> {
    /// Registers `handler` with the informer's default resync period. On a
    /// running informer the handler first gets the current cache as
    /// `on_add(obj, true)`, then live events. On a shut-down informer the
    /// handler is dropped and the registration never syncs.
    pub fn add_event_handler(&self, handler: impl ResourceEventHandler<K>) -> HandlerRegistration {
        self.shared.add_handler(Box::new(Typed::new(handler)), self.shared.default_resync)
    }

    /// [`add_event_handler`](Self::add_event_handler) of a handler that
    /// does not name `K`: it gets each object as a
    /// [`GenericObject`](crate::lister::GenericObject) (client-go's handler
    /// on a `GenericInformer`'s informer; the generated
    /// `GenericInformer::add_event_handler`).
    pub fn add_generic_event_handler(&self, handler: impl crate::lister::GenericEventHandler) -> HandlerRegistration {
        let handler = crate::lister::Generic { handler, to_json: crate::lister::to_json::<K> };
        self.shared.add_handler(Box::new(handler), self.shared.default_resync)
    }

    /// [`add_event_handler`](Self::add_event_handler) with this handler's
    /// own resync period: every `resync`, it alone gets `on_update(obj, obj)`
    /// for every cached object. Zero never resyncs; periods under one second
    /// are raised to one second. Each handler resyncs on its own clock, also
    /// when added to a running informer (client-go raises such a handler's
    /// period to the informer's check period, and gives it none when the
    /// informer has no default resync).
    pub fn add_event_handler_with_resync(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync: Duration,
    ) -> HandlerRegistration {
        self.shared.add_handler(Box::new(Typed::new(handler)), Some(resync))
    }
}

impl<K> SharedIndexInformer<K> {
    /// Removes a handler: it gets no further events, and its thread ends
    /// after the event it is busy with. A registration of another informer
    /// removes nothing.
    pub fn remove_event_handler(&self, registration: &HandlerRegistration) {
        lock(&self.shared.processor).remove_listener(registration.id);
    }

    /// Sets the function called with every watch error (the default logs a
    /// warning). The watch retries on its own, with backoff.
    pub fn set_watch_error_handler(&self, handler: impl Fn(&watcher::Error) + Send + Sync + 'static) {
        *lock(&self.shared.watch_error_handler) = Some(Arc::new(handler));
    }

    /// Sets the function called once for every version of an object that
    /// does not decode into `K` (the watch error handler hears of it too).
    /// Such an object is left out of the cache (an older version that
    /// decoded stays), every other object syncs, and it is picked up again
    /// as soon as a new version decodes.
    pub fn set_malformed_object_handler(&self, handler: impl Fn(&MalformedObject) + Send + Sync + 'static) {
        *lock(&self.shared.malformed_handler) = Some(Arc::new(handler));
    }

    /// How many objects the informer has seen whose latest version does not
    /// decode into `K`.
    pub fn malformed_count(&self) -> usize {
        lock(&self.shared.malformed).len()
    }

    /// The objects whose latest version does not decode into `K`, by key.
    pub fn malformed_objects(&self) -> Vec<MalformedObject> {
        lock(&self.shared.malformed).values().cloned().collect()
    }

    /// The informer's cache.
    pub fn indexer(&self) -> Indexer<K> {
        Indexer::from_raw(self.shared.indexer.clone())
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::from_indexer(self.indexer())
    }

    /// True once the first full list has been applied to the cache.
    pub fn has_synced(&self) -> bool {
        self.shared.sync.borrow().synced
    }

    /// Waits until the first full list is in the cache (true) or the
    /// informer is shut down before that (false). Wrap it in a timeout if the
    /// informer may never be started.
    pub fn wait_for_cache_sync(&self) -> impl Future<Output = bool> + Send + 'static {
        self.shared.clone().wait_for_cache_sync()
    }

    /// Stops the watch and every handler thread and waits for them to end.
    /// Handlers drop the events still queued to them; the cache stays
    /// readable. A handler blocked forever makes this wait forever.
    pub fn shutdown(&self) -> impl Future<Output = ()> + Send + 'static {
        self.shared.clone().shutdown()
    }
}

impl<K> HasSynced for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn is_stopped(&self) -> bool {
        self.shared.sync.borrow().stopped
    }
}

impl Shared {
    fn new(
        api_version: String,
        kind: String,
        indexer: ErasedIndexer,
        default_resync: Option<Duration>,
        watch_idle_timeout: Option<Duration>,
        source: Source,
    ) -> Self {
        let (sync, _) = watch::channel(SyncState::default());
        Shared {
            api_version,
            kind,
            indexer,
            processor: Mutex::new(Processor::default()),
            sync,
            default_resync,
            watch_idle_timeout,
            watch_error_handler: Mutex::new(None),
            malformed_handler: Mutex::new(None),
            malformed: Mutex::new(BTreeMap::new()),
            lifecycle: Mutex::new(Lifecycle::NotStarted(source)),
            resync_changed: Arc::new(Notify::new()),
            shutdown_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// See [`SharedIndexInformer::start`].
    pub(crate) fn start(self: &Arc<Self>) {
        let mut lifecycle = lock(&self.lifecycle);
        if !matches!(*lifecycle, Lifecycle::NotStarted(_)) {
            return;
        }
        let runtime = tokio::runtime::Handle::current();
        let Lifecycle::NotStarted(source) = std::mem::replace(&mut *lifecycle, Lifecycle::Stopped) else {
            return;
        };
        let watch = match source {
            Source::Api(api) => {
                let (api, resource, config, decode) = *api;
                // Built here, inside the runtime, which the client's buffer
                // task needs.
                let namespace = api.namespace().map(str::to_owned);
                let (client, heard) = short_watch::pace_short_watches(api.into_client());
                let api = match namespace {
                    Some(ns) => Api::<Item>::namespaced_with(client, &ns, &resource),
                    None => Api::<Item>::all_with(client, &resource),
                };
                let streaming = config.initial_list_strategy == watcher::InitialListStrategy::StreamingList;
                let open = move |strategy: watcher::InitialListStrategy| {
                    let config = watcher::Config { initial_list_strategy: strategy, ..config.clone() };
                    let events = watcher(api.clone(), config).backoff(short_watch::ReflectorBackoff::default());
                    Decoding::new(events.boxed(), decode.clone()).boxed()
                };
                let strategy = if streaming {
                    watcher::InitialListStrategy::StreamingList
                } else {
                    watcher::InitialListStrategy::ListWatch
                };
                Watch {
                    events: open(strategy),
                    reopen: Some(Box::new(open)),
                    idle_timeout: self.watch_idle_timeout,
                    heard: Some(heard),
                    streaming,
                    listed: false,
                }
            }
            Source::Stream(events) => {
                Watch { events, reopen: None, idle_timeout: None, heard: None, streaming: false, listed: false }
            }
        };
        lock(&self.processor).start(runtime.clone());
        let (stop, stopped) = oneshot::channel();
        let task = runtime.spawn(run(Arc::downgrade(self), self.resync_changed.clone(), watch, stopped));
        *lifecycle = Lifecycle::Running { stop, task };
    }

    fn add_handler(&self, handler: Box<dyn ErasedHandler>, resync: Option<Duration>) -> HandlerRegistration {
        let mut processor = lock(&self.processor);
        let resync_from = self.sync.borrow().synced.then(Instant::now);
        let registration =
            processor.add_listener(handler, resync, self.indexer.list(), resync_from, self.sync.subscribe());
        drop(processor);
        if registration.is_stopped() {
            tracing::warn!("event handler not added: the informer has been shut down");
        }
        self.resync_changed.notify_one();
        registration
    }

    /// See [`SharedIndexInformer::wait_for_cache_sync`].
    pub(crate) async fn wait_for_cache_sync(self: Arc<Self>) -> bool {
        let mut sync = self.sync.subscribe();
        match sync.wait_for(|state| state.synced || state.stopped).await {
            Ok(state) => state.synced,
            Err(_) => false,
        }
    }

    /// See [`SharedIndexInformer::shutdown`].
    pub(crate) async fn shutdown(self: Arc<Self>) {
        // A second caller waits for the first to finish instead of
        // returning while the watch task may still write to the cache.
        let _serial = self.shutdown_lock.lock().await;
        let lifecycle = std::mem::replace(&mut *lock(&self.lifecycle), Lifecycle::Stopped);
        if let Lifecycle::Running { stop, task } = lifecycle {
            // The run loop may already have ended on its own; nothing to stop then.
            let _ = stop.send(());
            if let Err(err) = task.await {
                tracing::error!(error = %err, "informer watch task failed");
            }
        }
        let handler_tasks = lock(&self.processor).stop();
        for task in handler_tasks {
            if let Err(err) = task.await {
                tracing::error!(error = %err, "informer event handler panicked");
            }
        }
        self.sync.send_modify(|state| state.stopped = true);
    }

    /// Marks a never-started informer as shut down (for a factory that is
    /// already shutting down), so `wait_for_cache_sync` returns false.
    /// `apiVersion/Kind` of the objects.
    pub(crate) fn gvk(&self) -> String {
        format!("{}/{}", self.api_version, self.kind)
    }

    pub(crate) fn mark_stopped(&self) {
        *lock(&self.lifecycle) = Lifecycle::Stopped;
        self.sync.send_modify(|state| state.stopped = true);
    }

    fn on_event(&self, event: watcher::Event<Item>, relist: &mut Relist) {
        match event {
            watcher::Event::Init => relist.clear(),
            watcher::Event::InitApply(Item::Decoded(obj, _, managed)) => {
                if let Some(text) = managed {
                    relist.managed.insert(address(&obj), text);
                }
                relist.objects.push(obj);
            }
            watcher::Event::InitApply(bad) => {
                let Some(report) = bad.malformed(&self.api_version, &self.kind) else { return };
                // The last version that decoded stays cached.
                if let Some(old) = self.indexer.get_by_key(&report.key) {
                    relist.objects.push(old);
                }
                relist.malformed.insert(report.key.clone(), report);
            }
            watcher::Event::InitDone => {
                self.replace(std::mem::take(&mut relist.objects), std::mem::take(&mut relist.managed));
                let found = std::mem::take(&mut relist.malformed);
                let new: Vec<MalformedObject> = {
                    let mut known = lock(&self.malformed);
                    let new = found.values().filter(|m| known.get(&m.key) != Some(*m)).cloned().collect();
                    *known = found;
                    new
                };
                for report in &new {
                    self.report(report);
                }
            }
            watcher::Event::Apply(Item::Decoded(obj, _, managed)) => {
                lock(&self.malformed).remove(meta_key(obj.object_meta()).as_str());
                self.apply(obj, managed);
            }
            watcher::Event::Apply(bad) => {
                let Some(report) = bad.malformed(&self.api_version, &self.kind) else { return };
                let new = lock(&self.malformed).insert(report.key.clone(), report.clone()).as_ref() != Some(&report);
                if new {
                    self.report(&report);
                }
            }
            watcher::Event::Delete(Item::Decoded(obj, _, _)) => {
                lock(&self.malformed).remove(meta_key(obj.object_meta()).as_str());
                self.delete(obj);
            }
            watcher::Event::Delete(bad) => {
                let key = meta_key(bad.meta());
                lock(&self.malformed).remove(&key);
                // Handlers see the last state that decoded, if any.
                if let Some(old) = self.indexer.get_by_key(&key) {
                    self.delete(old);
                }
            }
        }
    }

    /// Tells the malformed-object handler and the watch error handler.
    fn report(&self, report: &MalformedObject) {
        let handler = lock(&self.malformed_handler).clone();
        if let Some(handler) = handler {
            handler(report);
        }
        let serde_error = <serde_json::Error as serde::de::Error>::custom(report);
        self.on_error(&watcher::Error::WatchFailed(kube::Error::SerdeError(serde_error)));
    }

    /// client-go's `Replace` followed by `processDeltas`: vanished objects
    /// get a tombstone first (so that a handler sees an object go before
    /// another takes its place), then known objects an update and new ones
    /// an add, in the list's order.
    fn replace(&self, objs: Vec<ErasedObject>, managed: ManagedTexts) {
        let mut processor = lock(&self.processor);
        let first_list = !self.sync.borrow().synced;
        let mut old = self.indexer.replace_returning_old(&objs, managed);
        let replaced: Vec<_> = objs
            .into_iter()
            .map(|new| {
                let old = old.remove(meta_key_parts(new.object_meta()));
                (old, new)
            })
            .collect();
        let mut vanished: Vec<_> = old.into_iter().map(|obj| (meta_key(obj.object_meta()), obj)).collect();
        vanished.sort_by(|(a, _), (b, _)| a.cmp(b));
        for (key, obj) in vanished {
            processor.distribute(Notification::Delete(Deleted::Tombstone { key, obj }));
        }
        for (old, new) in replaced {
            match old {
                // Unchanged across the relist: not handed to handlers (see
                // docs/status.md; client-go hands it on as an update).
                Some(old) if unchanged(&*old, &*new) => {}
                Some(old) => processor.distribute(Notification::Update { old, new }),
                None => processor.distribute(Notification::Add { obj: new, is_in_initial_list: first_list }),
            }
        }
        if first_list {
            processor.start_resync_clocks(Instant::now());
            self.sync.send_modify(|state| state.synced = true);
        }
    }

    fn apply(&self, obj: ErasedObject, managed: Option<Box<str>>) {
        let mut processor = lock(&self.processor);
        let is_in_initial_list = !self.sync.borrow().synced;
        match self.indexer.update_with_text(obj.clone(), managed) {
            Some(old) => processor.distribute(Notification::Update { old, new: obj }),
            None => processor.distribute(Notification::Add { obj, is_in_initial_list }),
        }
    }

    /// A watched delete. Handlers hear of it only when the cache held the
    /// object, as client-go's `DeltaFIFO.Delete` drops a delete of a key it
    /// does not know: no `on_delete` without an `on_add` before it (every
    /// earlier state of the object may have failed to decode).
    fn delete(&self, obj: ErasedObject) {
        let mut processor = lock(&self.processor);
        if self.indexer.delete(&*obj).is_some() {
            processor.distribute(Notification::Delete(Deleted::Object(obj)));
        }
    }

    fn on_error(&self, err: &watcher::Error) {
        let handler = lock(&self.watch_error_handler).clone();
        match handler {
            Some(handler) => handler(err),
            None => tracing::warn!(
                kind = %self.kind,
                error = %err,
                "informer watch failed; retrying with backoff"
            ),
        }
    }

    fn next_resync(&self) -> Option<Instant> {
        lock(&self.processor).next_resync()
    }

    fn resync(&self) {
        lock(&self.processor).resync(Instant::now(), || self.indexer.list());
    }

    /// Hands the notifications of the events applied so far to the handlers.
    fn flush(&self) {
        lock(&self.processor).flush();
    }
}

/// The informer's task: applies watch events and fires resyncs until told to
/// stop or the informer is dropped. Holds the informer only weakly, so an
/// informer dropped without `shutdown` still ends its task.
async fn run(shared: Weak<Shared>, resync_changed: Arc<Notify>, mut watch: Watch, mut stop: oneshot::Receiver<()>) {
    let _ends = EndsOnPanic(shared.clone());
    let mut relist = Relist { objects: Vec::new(), managed: ManagedTexts::default(), malformed: BTreeMap::new() };
    let mut events_done = false;
    let mut last_heard = Instant::now();
    loop {
        // An idle timeout beyond the clock's range is none.
        let idle_deadline = watch
            .idle_timeout
            .filter(|_| watch.reopen.is_some())
            .and_then(|idle| watch.quiet_since(last_heard).checked_add(idle));
        let Some(next_resync) = shared.upgrade().map(|shared| shared.next_resync()) else {
            return;
        };
        tokio::select! {
            biased;
            _ = &mut stop => return,
            () = resync_changed.notified() => {}
            () = sleep_until(next_resync), if next_resync.is_some() => {
                let Some(shared) = shared.upgrade() else { return };
                shared.resync();
            }
            () = sleep_until(idle_deadline), if idle_deadline.is_some() && !events_done => {
                let idle = watch.idle_timeout.unwrap_or_default();
                if watch.quiet_since(last_heard).elapsed() < idle {
                    // Heard from meanwhile (a bookmark, a watch started
                    // again): not idle.
                    continue;
                }
                let Some(shared) = shared.upgrade() else { return };
                let Some(reopen) = &watch.reopen else { continue };
                tracing::warn!(kind = %shared.kind, "the watch delivered nothing for {idle:?}; taking the connection for dead and starting again");
                let silent = <serde_json::Error as serde::de::Error>::custom(format!(
                    "no event, bookmark or error for {idle:?}; the watch is started again with a relist"
                ));
                shared.on_error(&watcher::Error::WatchFailed(kube::Error::SerdeError(silent)));
                watch.events = reopen(watch.strategy());
                relist.clear();
                last_heard = Instant::now();
            }
            event = watch.events.next(), if !events_done => {
                last_heard = Instant::now();
                let Some(shared) = shared.upgrade() else { return };
                // Apply what else the watch has ready right now, then wake
                // the handlers once for all of it.
                let mut event = event;
                let mut applied = 0;
                loop {
                    events_done = shared.on_watch_item(event, &mut watch, &mut relist);
                    applied += 1;
                    if events_done || applied == MAX_BURST {
                        break;
                    }
                    match watch.events.next().now_or_never() {
                        Some(next) => event = next,
                        None => break,
                    }
                }
                shared.flush();
            }
        }
    }
}

/// Marks the informer stopped, with an error in the log, when its task
/// unwinds (a transform, an index function or an error handler of the
/// user's panicked): `wait_for_cache_sync` then returns instead of waiting
/// for a task that is gone.
struct EndsOnPanic(Weak<Shared>);

impl Drop for EndsOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(shared) = self.0.upgrade()
        {
            tracing::error!(kind = %shared.kind, "the informer's watch task panicked; the informer has stopped");
            shared.sync.send_modify(|state| state.stopped = true);
        }
    }
}

/// The most watch events applied before the handlers are woken.
const MAX_BURST: usize = 256;

impl Shared {
    /// Applies one item of the watch stream; true when the stream has ended.
    fn on_watch_item(
        &self,
        event: Option<Result<watcher::Event<Item>, watcher::Error>>,
        watch: &mut Watch,
        relist: &mut Relist,
    ) -> bool {
        match event {
            Some(Ok(event)) => {
                if matches!(event, watcher::Event::InitDone) {
                    watch.listed = true;
                }
                self.on_event(event, relist);
            }
            Some(Err(err)) => {
                self.on_error(&err);
                if watch.streaming
                    && !watch.listed
                    && refuses_streaming(&err)
                    && let Some(reopen) = &watch.reopen
                {
                    tracing::warn!(kind = %self.kind, "the API server refuses streaming lists ({err}); listing page by page instead");
                    watch.streaming = false;
                    watch.events = reopen(watcher::InitialListStrategy::ListWatch);
                    relist.clear();
                }
            }
            None => return true,
        }
        false
    }
}

/// The informer's input and how to open it again.
struct Watch {
    events: ItemEventStream,
    /// A fresh list+watch with the given initial list strategy (for an
    /// informer over an `Api`).
    reopen: Option<Box<dyn Fn(watcher::InitialListStrategy) -> ItemEventStream + Send>>,
    idle_timeout: Option<Duration>,
    /// When the server was last heard from, below kube's watcher (which
    /// keeps bookmarks to itself): a watch is idle only when this and the
    /// events are older than `idle_timeout`.
    heard: Option<short_watch::Heard>,
    /// The initial list comes as a watch (`sendInitialEvents`); falls back
    /// to paged lists when the server refuses it.
    streaming: bool,
    /// A first full list has arrived on this watch.
    listed: bool,
}

impl Watch {
    /// Since when neither an event (`last_event`) nor anything else from
    /// the server has come.
    fn quiet_since(&self, last_event: Instant) -> Instant {
        self.heard.as_ref().map_or(last_event, |heard| heard.last().max(last_event))
    }

    fn strategy(&self) -> watcher::InitialListStrategy {
        if self.streaming {
            watcher::InitialListStrategy::StreamingList
        } else {
            watcher::InitialListStrategy::ListWatch
        }
    }
}

/// Whether `err` says that the server does not serve streaming lists: the
/// watch request with `sendInitialEvents` is rejected as a bad request
/// (older servers, or the `WatchList` feature off).
fn refuses_streaming(err: &watcher::Error) -> bool {
    let status = match err {
        watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => status.as_ref(),
        watcher::Error::WatchError(status) => status.as_ref(),
        _ => return false,
    };
    matches!(status.code, 400 | 403 | 422 | 501) || status.message.contains("sendInitialEvents")
}

/// What a relist has brought so far.
struct Relist {
    objects: Vec<ErasedObject>,
    /// The `managedFields` texts of `objects`, when kept apart.
    managed: ManagedTexts,
    malformed: BTreeMap<String, MalformedObject>,
}

impl Relist {
    fn clear(&mut self) {
        self.objects.clear();
        self.managed.clear();
        self.malformed.clear();
    }
}

/// Same object at the same resourceVersion (an object without one always
/// counts as changed).
fn unchanged(old: &dyn AnyObject, new: &dyn AnyObject) -> bool {
    matches!((&old.object_meta().resource_version, &new.object_meta().resource_version), (Some(a), Some(b)) if a == b)
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
