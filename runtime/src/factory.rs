//! client-go's `SharedInformerFactory`: one shared informer per type, however
//! many controllers ask for it, all started, synced and shut down together.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use kube::Client;
use kube::runtime::watcher;

use crate::informer::{InformerConfig, ManagedFields, Shared, SharedIndexInformer, Transform};
use crate::object::Object;

/// Adjusts the watch of every informer a factory makes, e.g. to set label or
/// field selectors (client-go's `TweakListOptionsFunc`).
pub type TweakListOptions = Arc<dyn Fn(&mut watcher::Config) + Send + Sync>;

struct Entry {
    /// The informer, whatever its kind: the map is keyed by the kind's type.
    informer: Arc<Shared>,
    /// `group/version/Kind` (`version/Kind` for the core group).
    gvk: String,
    /// The Rust type, to tell apart two types of one kind.
    type_name: &'static str,
    started: bool,
}

#[derive(Default)]
struct State {
    informers: HashMap<TypeId, Entry>,
    shutting_down: bool,
}

struct Inner {
    client: Client,
    namespace: Option<String>,
    tweak_list_options: Option<TweakListOptions>,
    default_resync: Option<Duration>,
    custom_resync: HashMap<TypeId, Duration>,
    /// `Transform<K>` per `TypeId::of::<K>()`.
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    watch_idle_timeout: Option<Duration>,
    managed_fields: ManagedFields,
    state: Mutex<State>,
}

/// Hands out one [`SharedIndexInformer`] per type and starts, syncs and shuts
/// them down together: client-go's `SharedInformerFactory`, and what the
/// generated informer factory wraps.
///
/// Cloning is cheap; clones share the informers.
///
/// ```no_run
/// # async fn demo(client: kube::Client) {
/// use codegen_runtime::factory::SharedInformerFactory;
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// let factory = SharedInformerFactory::builder(client).namespace("default").build();
/// let lister = factory.informer_for::<ConfigMap>().lister();
/// factory.start();
/// assert!(factory.wait_for_cache_sync().await.values().all(|synced| *synced));
/// # let _ = lister;
/// factory.shutdown().await;
/// # }
/// ```
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state();
        let mut informers: Vec<_> = state.informers.values().map(|e| e.gvk.as_str()).collect();
        informers.sort_unstable();
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.inner.namespace)
            .field("default_resync", &self.inner.default_resync)
            .field("informers", &informers)
            .finish()
    }
}

impl SharedInformerFactory {
    /// A factory watching all namespaces, with `default_resync` for every
    /// informer (`None` never resyncs).
    pub fn new(client: Client, default_resync: Option<Duration>) -> Self {
        let builder = Self::builder(client);
        match default_resync {
            Some(resync) => builder.default_resync(resync),
            None => builder,
        }
        .build()
    }

    /// A builder for a factory with options
    /// (client-go's `NewSharedInformerFactoryWithOptions`).
    pub fn builder(client: Client) -> SharedInformerFactoryBuilder {
        SharedInformerFactoryBuilder {
            client,
            namespace: None,
            tweak_list_options: None,
            default_resync: None,
            custom_resync: HashMap::new(),
            transforms: HashMap::new(),
            watch_idle_timeout: Some(crate::informer::DEFAULT_WATCH_IDLE_TIMEOUT),
            managed_fields: ManagedFields::Text,
        }
    }

    /// The client informers are built with.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The namespace informers are restricted to, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.inner.namespace.as_deref()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing user-provided runs under this lock except informer
        // construction, which cannot leave the map half-updated.
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The shared informer for `K`, created on first request with the
    /// factory's namespace, list tweaks, resync and transform. Informers
    /// requested after [`start`](Self::start) run once `start` is called
    /// again.
    pub fn informer_for<K: Object>(&self) -> SharedIndexInformer<K> {
        // Only what needs `K` is generic here: the lookups, the bookkeeping
        // and the configuration shared by every kind are compiled once.
        let type_id = TypeId::of::<K>();
        if let Some(shared) = self.existing(type_id) {
            return SharedIndexInformer::from_shared(shared);
        }
        let informer =
            SharedIndexInformer::new(K::api(self.inner.client.clone(), self.namespace()), self.config_for::<K>());
        SharedIndexInformer::from_shared(self.register(type_id, std::any::type_name::<K>(), informer.shared().clone()))
    }

    /// The shared informer for `K`, created on first request from the
    /// factory's configuration as `configure` changes it: a selector, page
    /// size or indexers of this kind's own (client-go's `InformerFor` with
    /// a custom `NewInformerFunc`). The factory starts, syncs and shuts it
    /// down with the others. When `K`'s informer exists already, it is
    /// returned and `configure` is not called.
    pub fn informer_for_with<K: Object>(
        &self,
        configure: impl FnOnce(&mut InformerConfig<K>),
    ) -> SharedIndexInformer<K> {
        let type_id = TypeId::of::<K>();
        if let Some(shared) = self.existing(type_id) {
            return SharedIndexInformer::from_shared(shared);
        }
        let mut config = self.config_for::<K>();
        configure(&mut config);
        let informer = SharedIndexInformer::new(K::api(self.inner.client.clone(), self.namespace()), config);
        SharedIndexInformer::from_shared(self.register(type_id, std::any::type_name::<K>(), informer.shared().clone()))
    }

    /// The informer already made for the kind `type_id`.
    fn existing(&self, type_id: TypeId) -> Option<Arc<Shared>> {
        self.state().informers.get(&type_id).map(|entry| entry.informer.clone())
    }

    /// Files `informer` as the one of the kind `type_id`, unless another
    /// caller filed one first: the informer filed is returned.
    fn register(&self, type_id: TypeId, type_name: &'static str, informer: Arc<Shared>) -> Arc<Shared> {
        let mut state = self.state();
        if let Some(entry) = state.informers.get(&type_id) {
            return entry.informer.clone();
        }
        if state.shutting_down {
            // It will never start: make waits on it return false at once.
            informer.mark_stopped();
        }
        let gvk = informer.gvk();
        state.informers.insert(type_id, Entry { informer: informer.clone(), gvk, type_name, started: false });
        informer
    }

    fn config_for<K: Object>(&self) -> InformerConfig<K> {
        let transform =
            self.inner.transforms.get(&TypeId::of::<K>()).and_then(|t| t.downcast_ref::<Transform<K>>()).cloned();
        let (watcher_config, resync, watch_idle_timeout) = self.base_config(TypeId::of::<K>());
        InformerConfig {
            watcher_config,
            resync,
            transform,
            indexers: BTreeMap::new(),
            watch_idle_timeout,
            managed_fields: self.inner.managed_fields,
        }
    }

    /// The watch configuration, resync period and idle timeout of the
    /// informer of the kind `type_id`.
    fn base_config(&self, type_id: TypeId) -> (watcher::Config, Option<Duration>, Option<Duration>) {
        let mut watcher_config = watcher::Config::default();
        if let Some(tweak) = &self.inner.tweak_list_options {
            tweak(&mut watcher_config);
        }
        let resync = self.inner.custom_resync.get(&type_id).copied().or(self.inner.default_resync);
        (watcher_config, resync, self.inner.watch_idle_timeout)
    }

    /// Starts every informer not started yet, on the current Tokio runtime.
    /// Calling it again starts only informers requested since; after
    /// [`shutdown`](Self::shutdown) it does nothing.
    ///
    /// # Panics
    ///
    /// Like `tokio::spawn`, when called outside a Tokio runtime.
    pub fn start(&self) {
        let mut state = self.state();
        if state.shutting_down {
            return;
        }
        for entry in state.informers.values_mut().filter(|entry| !entry.started) {
            entry.informer.start();
            entry.started = true;
        }
    }

    /// Waits for every started informer to sync; per informer, keyed
    /// `group/version/Kind` (`version/Kind` for the core group; with the
    /// Rust type in parentheses where two types of one kind have informers),
    /// whether it synced (false: shut down first).
    pub async fn wait_for_cache_sync(&self) -> BTreeMap<String, bool> {
        let started: Vec<_> = self
            .state()
            .informers
            .values()
            .filter(|entry| entry.started)
            .map(|entry| (entry.gvk.clone(), entry.type_name, entry.informer.clone()))
            .collect();
        let shared_kind = |gvk: &str| started.iter().filter(|(g, ..)| g == gvk).count() > 1;
        let keys: Vec<String> = started
            .iter()
            .map(|(gvk, type_name, _)| if shared_kind(gvk) { format!("{gvk} ({type_name})") } else { gvk.clone() })
            .collect();
        let mut synced = BTreeMap::new();
        for (key, (_, _, informer)) in keys.into_iter().zip(&started) {
            synced.insert(key, informer.clone().wait_for_cache_sync().await);
        }
        synced
    }

    /// Shuts every informer down and waits for their tasks to end. Later
    /// calls to [`start`](Self::start) do nothing.
    pub async fn shutdown(&self) {
        let informers: Vec<_> = {
            let mut state = self.state();
            state.shutting_down = true;
            state.informers.values().map(|entry| entry.informer.clone()).collect()
        };
        futures::future::join_all(informers.into_iter().map(Shared::shutdown)).await;
    }
}

/// `obj` without `metadata.managedFields`: a transform for
/// [`SharedInformerFactoryBuilder::transform`] or
/// [`InformerConfig::transform`]. [`ManagedFields::Dropped`] (what
/// [`SharedInformerFactoryBuilder::strip_managed_fields`] sets for every
/// kind) does the same while decoding, without decoding them first.
pub fn strip_managed_fields<K: Object>(mut obj: K) -> K {
    obj.meta_mut().managed_fields = None;
    obj
}

/// Options of a [`SharedInformerFactory`]; see [`SharedInformerFactory::builder`].
pub struct SharedInformerFactoryBuilder {
    client: Client,
    namespace: Option<String>,
    tweak_list_options: Option<TweakListOptions>,
    default_resync: Option<Duration>,
    custom_resync: HashMap<TypeId, Duration>,
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    watch_idle_timeout: Option<Duration>,
    managed_fields: ManagedFields,
}

impl fmt::Debug for SharedInformerFactoryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformerFactoryBuilder")
            .field("namespace", &self.namespace)
            .field("tweak_list_options", &self.tweak_list_options.is_some())
            .field("default_resync", &self.default_resync)
            .field("watch_idle_timeout", &self.watch_idle_timeout)
            .field("managed_fields", &self.managed_fields)
            .finish_non_exhaustive()
    }
}

impl SharedInformerFactoryBuilder {
    /// Restricts namespaced informers to `namespace` (client-go's
    /// `WithNamespace`); cluster-scoped kinds ignore it, and `""` is every
    /// namespace (`metav1.NamespaceAll`).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into()).filter(|n| !n.is_empty());
        self
    }

    /// Adjusts the watch of every informer, e.g. label or field selectors
    /// (client-go's `WithTweakListOptions`).
    pub fn tweak_list_options(mut self, tweak: TweakListOptions) -> Self {
        self.tweak_list_options = Some(tweak);
        self
    }

    /// How long a watch may deliver nothing before it is taken for a dead
    /// connection and started again (see
    /// [`InformerConfig::watch_idle_timeout`]; `None` waits forever).
    pub fn watch_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.watch_idle_timeout = timeout;
        self
    }

    /// The resync period of informers without a custom one; zero (or not
    /// calling this) never resyncs.
    pub fn default_resync(mut self, resync: Duration) -> Self {
        self.default_resync = Some(resync);
        self
    }

    /// The resync period of `K`'s informer (client-go's
    /// `WithCustomResyncConfig`); zero never resyncs.
    pub fn custom_resync<K: Object>(mut self, resync: Duration) -> Self {
        self.custom_resync.insert(TypeId::of::<K>(), resync);
        self
    }

    /// Rewrites every `K` before it is cached, e.g. to drop annotations.
    /// Per kind: client-go's `WithTransform` is one function for every
    /// informer of the factory; here each kind that needs one gets its own
    /// call, and kinds without one are cached as they come (for
    /// `managedFields`, [`strip_managed_fields`](Self::strip_managed_fields)
    /// is for every kind).
    pub fn transform<K: Object>(mut self, transform: impl Fn(K) -> K + Send + Sync + 'static) -> Self {
        let transform: Transform<K> = Arc::new(transform);
        self.transforms.insert(TypeId::of::<K>(), Box::new(transform));
        self
    }

    /// Drops `metadata.managedFields` from every object before it is cached
    /// (client-go's common `SetTransform` use), before any transform of the
    /// kind's. Off by default: they are kept as text beside each object
    /// ([`ManagedFields::Text`]), so nothing a lister could read disappears
    /// unasked; with it on, read `managedFields` (for `extract_<kind>`) from
    /// the API server, not the cache. The same as
    /// `managed_fields(ManagedFields::Dropped)` (`false`: the default,
    /// [`ManagedFields::Text`]).
    pub fn strip_managed_fields(self, strip: bool) -> Self {
        self.managed_fields(if strip { ManagedFields::Dropped } else { ManagedFields::Text })
    }

    /// Where every informer keeps `metadata.managedFields`
    /// ([`InformerConfig::managed_fields`]): as JSON text beside each object
    /// ([`ManagedFields::Text`], the default: read with
    /// `lister.managed_fields(&obj)`), decoded in it
    /// ([`ManagedFields::Decoded`]: about ten times the memory), or nowhere.
    /// Applied before any transform of the kind's.
    pub fn managed_fields(mut self, managed_fields: ManagedFields) -> Self {
        self.managed_fields = managed_fields;
        self
    }

    /// The factory.
    pub fn build(self) -> SharedInformerFactory {
        SharedInformerFactory {
            inner: Arc::new(Inner {
                client: self.client,
                namespace: self.namespace,
                tweak_list_options: self.tweak_list_options,
                default_resync: self.default_resync,
                custom_resync: self.custom_resync,
                transforms: self.transforms,
                watch_idle_timeout: self.watch_idle_timeout,
                managed_fields: self.managed_fields,
                state: Mutex::new(State::default()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kube::ResourceExt;
    use kube::api::ObjectMeta;
    use tokio::sync::mpsc;
    use tokio::time::timeout;

    const GUARD: Duration = Duration::from_secs(30);

    /// A client whose every request fails, as if the server were down.
    fn unreachable_client() -> Client {
        let service = tower::service_fn(|_: http::Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, _>(std::io::Error::other("server down"))
        });
        Client::new(service, "default")
    }

    /// Reports the watch errors of `informer` on a channel.
    fn watch_errors<K: Object>(informer: &SharedIndexInformer<K>) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        informer.set_watch_error_handler(move |err| {
            let _ = tx.send(err.to_string());
        });
        rx
    }

    #[tokio::test]
    async fn one_informer_per_type() {
        let factory = SharedInformerFactory::new(unreachable_client(), None);
        let first = factory.informer_for::<ConfigMap>();
        let again = factory.clone().informer_for::<ConfigMap>();
        let other = factory.informer_for::<Secret>();
        first.indexer().add(Arc::new(ConfigMap {
            metadata: ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() },
            ..Default::default()
        }));
        assert!(again.indexer().get_by_key("ns/a").is_some(), "both callers share one cache");
        assert!(other.indexer().is_empty());
        assert!(format!("{factory:?}").contains("v1/ConfigMap"));
    }

    #[tokio::test]
    async fn managed_fields_are_stripped_only_when_asked_and_before_a_kinds_transform() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
        let with_fields = || ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                managed_fields: Some(vec![ManagedFieldsEntry { manager: Some("m".into()), ..Default::default() }]),
                ..Default::default()
            },
            ..Default::default()
        };
        let plain = SharedInformerFactory::builder(unreachable_client()).build();
        let config = plain.config_for::<ConfigMap>();
        assert_eq!((config.transform.is_none(), config.managed_fields), (true, ManagedFields::Text));

        let stripping = SharedInformerFactory::builder(unreachable_client())
            .strip_managed_fields(true)
            .transform::<ConfigMap>(|mut cm: ConfigMap| {
                // The kind's transform sees the object already stripped.
                let stripped = cm.metadata.managed_fields.is_none();
                cm.labels_mut().insert("stripped-first".into(), stripped.to_string());
                cm
            })
            .build();
        let cached = |config: InformerConfig<ConfigMap>| async move {
            let events = futures::stream::iter([
                Ok(watcher::Event::Init),
                Ok(watcher::Event::InitApply(with_fields())),
                Ok(watcher::Event::InitDone),
            ]);
            let informer = SharedIndexInformer::from_stream(events, config);
            informer.start();
            assert!(timeout(GUARD, informer.wait_for_cache_sync()).await.unwrap());
            let cm = informer.lister().get("a").expect("cached");
            let fields = informer.lister().managed_fields(&cm).unwrap();
            informer.shutdown().await;
            (cm, fields)
        };
        let (cm, fields) = cached(stripping.config_for::<ConfigMap>()).await;
        assert_eq!((cm.metadata.managed_fields.is_none(), cm.labels()["stripped-first"].as_str()), (true, "true"));
        assert_eq!(fields, None, "dropped, not kept apart");
        assert_eq!(stripping.config_for::<Secret>().managed_fields, ManagedFields::Dropped, "every kind");

        let (cm, fields) = cached(plain.config_for::<ConfigMap>()).await;
        assert_eq!(cm.metadata.managed_fields, None, "kept apart from the object by default");
        assert_eq!(fields, with_fields().metadata.managed_fields, "and read back");
        let unstripped = SharedInformerFactory::builder(unreachable_client()).strip_managed_fields(false).build();
        assert_eq!(unstripped.config_for::<ConfigMap>().managed_fields, ManagedFields::Text, "the default");

        let decoded =
            SharedInformerFactory::builder(unreachable_client()).managed_fields(ManagedFields::Decoded).build();
        let (cm, fields) = cached(decoded.config_for::<ConfigMap>()).await;
        assert_eq!(cm.metadata.managed_fields, with_fields().metadata.managed_fields, "in the object");
        assert_eq!(fields, with_fields().metadata.managed_fields);
    }

    #[tokio::test]
    async fn options_reach_each_informer() {
        let factory = SharedInformerFactory::builder(unreachable_client())
            .namespace("team-a")
            .tweak_list_options(Arc::new(|config: &mut watcher::Config| {
                config.label_selector = Some("app=web".into());
            }))
            .default_resync(Duration::from_secs(30))
            .custom_resync::<Secret>(Duration::from_secs(5))
            .transform::<ConfigMap>(|mut cm: ConfigMap| {
                cm.labels_mut().insert("transformed".into(), "true".into());
                cm
            })
            .build();
        assert_eq!(factory.namespace(), Some("team-a"));

        let config = factory.config_for::<ConfigMap>();
        assert_eq!(config.watcher_config.label_selector.as_deref(), Some("app=web"));
        assert_eq!(config.resync, Some(Duration::from_secs(30)));
        let transform = config.transform.expect("transform for ConfigMap");
        assert!(transform(ConfigMap::default()).labels().contains_key("transformed"));

        let config = factory.config_for::<Secret>();
        assert_eq!(config.resync, Some(Duration::from_secs(5)));
        assert!(config.transform.is_none());
        assert_eq!(config.watcher_config.label_selector.as_deref(), Some("app=web"));
    }

    /// A kind's own configuration (client-go's `InformerFor`): its selector
    /// applies to it alone, the factory starts and syncs it with the
    /// others, and a later request gets the same informer.
    #[tokio::test]
    async fn a_kind_can_have_an_informer_of_its_own_configuration() {
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        server.register::<Secret>();
        let labelled = |name: &str, app: &str| ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            labels: Some([("app".to_owned(), app.to_owned())].into()),
            ..Default::default()
        };
        server
            .seed([
                ConfigMap { metadata: labelled("web", "web"), ..Default::default() },
                ConfigMap { metadata: labelled("db", "db"), ..Default::default() },
            ])
            .unwrap();
        server.seed([Secret { metadata: labelled("db", "db"), ..Default::default() }]).unwrap();
        let factory = SharedInformerFactory::new(server.client(), None);
        let config_maps = factory.informer_for_with::<ConfigMap>(|config| {
            config.watcher_config.label_selector = Some("app=web".into());
        });
        let again = factory.informer_for_with::<ConfigMap>(|_| panic!("configured twice"));
        let secrets = factory.informer_for::<Secret>();
        factory.start();
        let synced = timeout(GUARD, factory.wait_for_cache_sync()).await.unwrap();
        assert_eq!(synced.len(), 2, "{synced:?}");
        assert!(synced.values().all(|s| *s));
        assert_eq!(config_maps.indexer().list_keys(), ["ns/web"], "the kind's own selector");
        assert_eq!(again.indexer().list_keys(), ["ns/web"], "the same informer");
        assert_eq!(secrets.indexer().list_keys(), ["ns/db"], "other kinds unfiltered");
        factory.shutdown().await;
    }

    /// Two Rust types of one kind (the object and its metadata) each get
    /// an entry in the sync report, not one overwriting the other.
    #[tokio::test]
    async fn two_types_of_one_kind_are_reported_apart() {
        use kube::core::PartialObjectMeta;
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        server.register::<Secret>();
        let factory = SharedInformerFactory::new(server.client(), None);
        factory.informer_for::<ConfigMap>();
        factory.informer_for::<PartialObjectMeta<ConfigMap>>();
        factory.informer_for::<Secret>();
        factory.start();
        let synced = timeout(GUARD, factory.wait_for_cache_sync()).await.unwrap();
        let keys: Vec<&str> = synced.keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 3, "{keys:?}");
        assert!(keys.contains(&"v1/Secret"), "{keys:?}");
        assert_eq!(keys.iter().filter(|k| k.starts_with("v1/ConfigMap (")).count(), 2, "{keys:?}");
        factory.shutdown().await;
    }

    #[tokio::test]
    async fn start_starts_new_informers_and_shutdown_ends_them() {
        let factory = SharedInformerFactory::new(unreachable_client(), None);
        let config_maps = factory.informer_for::<ConfigMap>();
        let mut config_map_errors = watch_errors(&config_maps);
        factory.start();
        factory.start();
        assert!(timeout(GUARD, config_map_errors.recv()).await.unwrap().is_some(), "the watch runs");

        let secrets = factory.informer_for::<Secret>();
        let mut secret_errors = watch_errors(&secrets);
        factory.start();
        assert!(timeout(GUARD, secret_errors.recv()).await.unwrap().is_some(), "started by the second start");

        let waiting = tokio::spawn({
            let factory = factory.clone();
            async move { factory.wait_for_cache_sync().await }
        });
        factory.shutdown().await;
        let synced = timeout(GUARD, waiting).await.unwrap().unwrap();
        assert_eq!(synced, BTreeMap::from([("v1/ConfigMap".into(), false), ("v1/Secret".into(), false)]));

        // After shutdown nothing starts any more.
        let late = factory.informer_for::<k8s_openapi::api::core::v1::Pod>();
        factory.start();
        assert!(!factory.wait_for_cache_sync().await.contains_key("v1/Pod"));
        assert!(!late.has_synced());
    }

    #[tokio::test]
    async fn informers_requested_after_shutdown_report_stopped() {
        let factory = SharedInformerFactory::new(unreachable_client(), None);
        factory.start();
        factory.shutdown().await;
        let late = factory.informer_for::<ConfigMap>();
        let synced = tokio::time::timeout(std::time::Duration::from_secs(30), late.wait_for_cache_sync()).await;
        assert_eq!(synced.ok(), Some(false), "returns false at once instead of waiting forever");
    }
}
