//! Listers: read-only, label-selector queries over an informer's [`Indexer`],
//! the counterpart of lister-gen's `<Kind>Lister` and `<Kind>NamespaceLister`.

use std::sync::Arc;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
use kube::Resource;
use serde_json::Value;

use crate::indexer::{Cached, ErasedIndexer, Indexer, NAMESPACE_INDEX, address, downcast_all};
use crate::object::{AnyObject, ErasedObject, Object, downcast, downcast_ref};

pub use kube::core::{Expression, Selector, SelectorExt};

/// A selector matching every object (client-go's `labels.Everything()`); the
/// same as `Selector::default()`.
pub fn everything() -> Selector {
    Selector::default()
}

/// The objects of `objs` whose labels match `selector`, as `K`s.
fn select<K: Send + Sync + 'static>(objs: Vec<ErasedObject>, selector: &Selector) -> Vec<Arc<K>> {
    downcast_all(select_erased(objs, selector))
}

/// The objects of `objs` whose labels match `selector` (compiled once, not
/// per kind).
fn select_erased(mut objs: Vec<ErasedObject>, selector: &Selector) -> Vec<ErasedObject> {
    if !selector.selects_all() {
        let no_labels = BTreeMap::new();
        objs.retain(|obj| selector.matches(obj.object_meta().labels.as_ref().unwrap_or(&no_labels)));
    }
    objs
}

/// Lists and gets objects of one kind from the local cache.
///
/// Returned objects are shared with the cache and every other reader: treat
/// them as read-only and clone before changing anything.
pub struct Lister<K> {
    indexer: Indexer<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self { indexer: self.indexer.clone() }
    }
}

impl<K> std::fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lister").field("indexer", &self.indexer).finish()
    }
}

impl<K> Lister<K> {
    /// A lister reading `indexer`, for any `K`.
    pub(crate) fn from_indexer(indexer: Indexer<K>) -> Self {
        Self { indexer }
    }
}

impl<K: Resource + Send + Sync + 'static> Lister<K> {
    /// A lister reading `indexer`.
    pub fn new(indexer: Indexer<K>) -> Self {
        Self { indexer }
    }

    /// Every cached object whose labels match `selector`, in no particular
    /// order. Pass [`everything()`] for all objects.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        select(self.indexer.raw().list(), selector)
    }

    /// The cached cluster-scoped object called `name`. For namespaced kinds
    /// use [`Lister::namespace`].
    pub fn get(&self, name: &str) -> Option<Cached<K>> {
        self.indexer.get_by_key(name)
    }

    /// `f` of the cached cluster-scoped object called `name`, without
    /// handing out a handle: see [`Indexer::get_by_key_with`], whose rules
    /// for `f` apply.
    pub fn get_with<R>(&self, name: &str, f: impl FnOnce(&K) -> R) -> Option<R> {
        self.indexer.get_by_key_with(name, f)
    }

    /// A lister restricted to namespace `namespace`; the empty string means
    /// all namespaces (client-go's `metav1.NamespaceAll`).
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister { indexer: self.indexer.clone(), namespace: namespace.to_owned() }
    }

    /// The indexer behind this lister, for queries by custom index.
    pub fn indexer(&self) -> &Indexer<K> {
        &self.indexer
    }

    /// The `metadata.managedFields` of `obj`, an object this lister handed
    /// out, wherever the informer keeps them ([`Indexer::managed_fields`]).
    pub fn managed_fields(&self, obj: &K) -> Result<Option<Vec<ManagedFieldsEntry>>, serde_json::Error> {
        self.indexer.managed_fields(obj)
    }

    /// A copy of `obj` with its `metadata.managedFields` in it
    /// ([`Indexer::with_managed_fields`]): pass it to `extract_<kind>`.
    pub fn with_managed_fields(&self, obj: &K) -> Result<K, serde_json::Error>
    where
        K: Clone,
    {
        self.indexer.with_managed_fields(obj)
    }
}

/// Lists and gets objects of one namespaced kind within one namespace, using
/// the namespace index.
pub struct NamespaceLister<K> {
    indexer: Indexer<K>,
    namespace: String,
}

impl<K> Clone for NamespaceLister<K> {
    fn clone(&self) -> Self {
        Self { indexer: self.indexer.clone(), namespace: self.namespace.clone() }
    }
}

impl<K> std::fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceLister").field("namespace", &self.namespace).field("indexer", &self.indexer).finish()
    }
}

impl<K: Resource + Send + Sync + 'static> NamespaceLister<K> {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The cached object called `name` in this namespace.
    pub fn get(&self, name: &str) -> Option<Cached<K>> {
        self.indexer.raw().cached_in((&self.namespace, name))
    }

    /// `f` of the cached object called `name` in this namespace, without
    /// handing out a handle: see [`Indexer::get_by_key_with`], whose rules
    /// for `f` apply.
    pub fn get_with<R>(&self, name: &str, f: impl FnOnce(&K) -> R) -> Option<R> {
        self.indexer.raw().with_in((&self.namespace, name), |obj| f(downcast_ref(obj)))
    }

    /// The cached objects in this namespace whose labels match `selector`,
    /// sorted by name (in no particular order for the all-namespaces
    /// lister). Pass [`everything()`] for all of them.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        downcast_all(in_namespace(self.indexer.raw(), &self.namespace, selector))
    }
}

/// The objects of `indexer` in `namespace` (all of them for the empty
/// string) whose labels match `selector`.
fn in_namespace(indexer: &ErasedIndexer, namespace: &str, selector: &Selector) -> Vec<ErasedObject> {
    if namespace.is_empty() {
        return select_erased(indexer.list(), selector);
    }
    // The namespace index is built into every indexer, so this lookup
    // cannot name a missing index; an empty list is the safe answer anyway.
    select_erased(indexer.by_index(NAMESPACE_INDEX, namespace).unwrap_or_default(), selector)
}

/// How the objects of one kind become JSON, for [`GenericObject::to_json`].
pub(crate) type ToJson = fn(&dyn AnyObject) -> serde_json::Result<Value>;

/// `obj`, a `K`, as JSON with its `apiVersion` and `kind` (filled in from
/// `K` where the object has none, as objects from a list often do).
pub(crate) fn to_json<K: Object>(obj: &dyn AnyObject) -> serde_json::Result<Value> {
    let mut value = crate::object::to_json_value(downcast_ref::<K>(obj))?;
    if let Some(fields) = value.as_object_mut() {
        for (field, given) in [("apiVersion", K::api_version(&())), ("kind", K::kind(&()))] {
            if fields.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
                fields.insert(field.to_owned(), Value::String(given.into_owned()));
            }
        }
    }
    Ok(value)
}

/// A cached object of a kind the caller knows only at run time, as a
/// [`GenericLister`] hands it out (client-go's `runtime.Object` from a
/// `GenericLister`). It shares the cached object: nothing is copied until
/// [`to_json`](Self::to_json) or a clone of the downcast object.
#[derive(Clone)]
pub struct GenericObject {
    obj: ErasedObject,
    to_json: ToJson,
}

impl std::fmt::Debug for GenericObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let meta = self.meta();
        f.debug_struct("GenericObject").field("namespace", &meta.namespace).field("name", &meta.name).finish()
    }
}

impl GenericObject {
    /// The object's metadata.
    pub fn meta(&self) -> &ObjectMeta {
        self.obj.object_meta()
    }

    /// Whether the object is a `K`.
    pub fn is<K: 'static>(&self) -> bool {
        self.obj.is_type(std::any::TypeId::of::<K>())
    }

    /// The object as the `K` it is, shared with the cache; the object back
    /// when it is of another kind.
    pub fn downcast<K: Send + Sync + 'static>(self) -> Result<Arc<K>, Self> {
        if self.is::<K>() { Ok(downcast(self.obj)) } else { Err(self) }
    }

    /// The object as a `&K`, or `None` when it is of another kind.
    pub fn downcast_ref<K: 'static>(&self) -> Option<&K> {
        self.is::<K>().then(|| downcast_ref(&*self.obj))
    }

    /// The object as JSON, with `apiVersion` and `kind` (filled in from its
    /// type when the cached object has none). `metadata.managedFields` is
    /// there only if the informer keeps it in the object: see
    /// [`GenericLister::managed_fields`] otherwise.
    pub fn to_json(&self) -> serde_json::Result<Value> {
        (self.to_json)(&*self.obj)
    }
}

/// A deletion as a [`GenericEventHandler`] sees it (see
/// [`DeletedObject`](crate::informer::DeletedObject)).
#[derive(Clone, Debug)]
pub enum GenericDeleted {
    /// The deletion was watched: the object's final state.
    Object(GenericObject),
    /// The deletion was noticed on a relist: the last state the cache had,
    /// under its key.
    Tombstone {
        /// `namespace/name`, or `name`.
        key: String,
        /// The last state the cache had.
        obj: GenericObject,
    },
}

/// Receives an informer's changes without naming the kind's type (client-go's
/// `ResourceEventHandler` on a `GenericInformer`'s informer, which hands out
/// `interface{}`); otherwise as
/// [`ResourceEventHandler`](crate::informer::ResourceEventHandler).
pub trait GenericEventHandler: Send + 'static {
    /// An object appeared (`is_in_initial_list`: from the first list, or
    /// the replay to a handler added to a running informer).
    fn on_add(&mut self, _obj: GenericObject, _is_in_initial_list: bool) {}
    /// An object changed (also on resyncs, `old` and `new` the same).
    fn on_update(&mut self, _old: GenericObject, _new: GenericObject) {}
    /// An object was deleted.
    fn on_delete(&mut self, _obj: GenericDeleted) {}
}

/// A [`GenericEventHandler`] as the informer's dispatch calls it.
pub(crate) struct Generic<H> {
    pub(crate) handler: H,
    pub(crate) to_json: ToJson,
}

impl<H: GenericEventHandler> crate::informer::ErasedHandler for Generic<H> {
    fn on_add(&mut self, obj: ErasedObject, is_in_initial_list: bool) {
        self.handler.on_add(GenericObject { obj, to_json: self.to_json }, is_in_initial_list);
    }

    fn on_update(&mut self, old: ErasedObject, new: ErasedObject) {
        let to_json = self.to_json;
        self.handler.on_update(GenericObject { obj: old, to_json }, GenericObject { obj: new, to_json });
    }

    fn on_delete(&mut self, deleted: crate::informer::Deleted) {
        let to_json = self.to_json;
        self.handler.on_delete(match deleted {
            crate::informer::Deleted::Object(obj) => GenericDeleted::Object(GenericObject { obj, to_json }),
            crate::informer::Deleted::Tombstone { key, obj } => {
                GenericDeleted::Tombstone { key, obj: GenericObject { obj, to_json } }
            }
        });
    }
}

/// Lists and gets the cached objects of one kind without naming the kind's
/// type: client-go's `cache.GenericLister`, which the generated
/// `GenericInformer::lister` of an informer found by resource returns.
#[derive(Clone, Debug)]
pub struct GenericLister {
    indexer: ErasedIndexer,
    to_json: ToJson,
}

impl GenericLister {
    /// A lister over `indexer`, handing out its objects as
    /// [`GenericObject`]s.
    pub fn new<K: Object>(indexer: &Indexer<K>) -> Self {
        Self { indexer: indexer.raw().clone(), to_json: to_json::<K> }
    }

    fn wrap(&self, objs: Vec<ErasedObject>) -> Vec<GenericObject> {
        objs.into_iter().map(|obj| GenericObject { obj, to_json: self.to_json }).collect()
    }

    /// Every cached object whose labels match `selector`, in no particular
    /// order. Pass [`everything()`] for all objects.
    pub fn list(&self, selector: &Selector) -> Vec<GenericObject> {
        self.wrap(select_erased(self.indexer.list(), selector))
    }

    /// The cached object under `key`: the name of a cluster-scoped one, or
    /// `namespace/name` (client-go's `GenericLister.Get`, a work queue's
    /// key). [`GenericLister::namespace`] is client-go's `ByNamespace`.
    pub fn get(&self, key: &str) -> Option<GenericObject> {
        self.indexer.get_by_key(key).map(|obj| GenericObject { obj, to_json: self.to_json })
    }

    /// A lister restricted to namespace `namespace`; the empty string means
    /// all namespaces.
    pub fn namespace(&self, namespace: &str) -> GenericNamespaceLister {
        GenericNamespaceLister { lister: self.clone(), namespace: namespace.to_owned() }
    }

    /// The `metadata.managedFields` of `obj`, an object this lister handed
    /// out, wherever the informer keeps them (as [`Lister::managed_fields`]).
    pub fn managed_fields(&self, obj: &GenericObject) -> Result<Option<Vec<ManagedFieldsEntry>>, serde_json::Error> {
        if let Some(fields) = &obj.meta().managed_fields {
            return Ok(Some(fields.clone()));
        }
        self.indexer.managed_text(address(&obj.obj)).map(|text| serde_json::from_str(&text)).transpose()
    }
}

/// A [`GenericLister`] restricted to one namespace (client-go's
/// `GenericNamespaceLister`).
#[derive(Clone, Debug)]
pub struct GenericNamespaceLister {
    lister: GenericLister,
    namespace: String,
}

impl GenericNamespaceLister {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The cached object called `name` in this namespace.
    pub fn get(&self, name: &str) -> Option<GenericObject> {
        let lister = &self.lister;
        lister.indexer.get_in((&self.namespace, name)).map(|obj| GenericObject { obj, to_json: lister.to_json })
    }

    /// The cached objects in this namespace whose labels match `selector`,
    /// sorted by name (in no particular order for the all-namespaces
    /// lister). Pass [`everything()`] for all of them.
    pub fn list(&self, selector: &Selector) -> Vec<GenericObject> {
        self.lister.wrap(in_namespace(&self.lister.indexer, &self.namespace, selector))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::ResourceExt;
    use kube::api::ObjectMeta;

    fn cm(ns: &str, name: &str, labels: &[(&str, &str)]) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn names<K: Resource>(objs: Vec<Arc<K>>) -> Vec<String> {
        let mut names: Vec<_> =
            objs.iter().map(|o| format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any())).collect();
        names.sort();
        names
    }

    fn lister() -> Lister<ConfigMap> {
        let indexer = Indexer::new();
        indexer.add(cm("a", "web-1", &[("app", "web"), ("tier", "front")]));
        indexer.add(cm("a", "db-1", &[("app", "db")]));
        indexer.add(cm("b", "web-2", &[("app", "web")]));
        indexer.add(cm("b", "plain", &[]));
        Lister::new(indexer)
    }

    #[test]
    fn list_filters_by_label_selector() {
        let lister = lister();
        assert_eq!(lister.list(&everything()).len(), 4);
        let web: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(names(lister.list(&web)), ["a/web-1", "b/web-2"]);
        let mut not_web = Selector::default();
        not_web.extend(Expression::NotEqual("app".into(), "web".into()));
        assert_eq!(names(lister.list(&not_web)), ["a/db-1", "b/plain"]);
        let front = Selector::from(Expression::Exists("tier".into()));
        assert_eq!(names(lister.list(&front)), ["a/web-1"]);
    }

    #[test]
    fn namespace_lister_gets_and_lists_within_one_namespace() {
        let lister = lister();
        let a = lister.namespace("a");
        assert_eq!(a.namespace(), "a");
        assert!(a.get("web-1").is_some());
        assert!(a.get("web-2").is_none());
        assert_eq!(a.get_with("web-1", |cm| cm.labels()["tier"].clone()).as_deref(), Some("front"));
        assert_eq!(a.get_with("web-2", |_| ()), None, "web-2 is in namespace b");
        assert_eq!(names(a.list(&everything())), ["a/db-1", "a/web-1"]);
        let web: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(names(lister.namespace("b").list(&web)), ["b/web-2"]);
        assert!(lister.namespace("c").list(&everything()).is_empty());
        assert_eq!(lister.namespace("").list(&web).len(), 2, "empty namespace means all");
    }

    #[test]
    fn generic_lister_lists_gets_and_hands_out_json() {
        let typed = lister();
        let generic = GenericLister::new(typed.indexer());
        let web: Selector = [("app", "web")].into_iter().collect();
        let mut listed: Vec<String> = generic.list(&web).iter().map(|o| o.meta().name.clone().unwrap()).collect();
        listed.sort();
        assert_eq!(listed, ["web-1", "web-2"]);
        assert_eq!(generic.list(&everything()).len(), 4);

        let a = generic.namespace("a");
        assert_eq!(a.namespace(), "a");
        let names = |objs: Vec<GenericObject>| objs.iter().map(|o| o.meta().name.clone().unwrap()).collect::<Vec<_>>();
        assert_eq!(names(a.list(&everything())), ["db-1", "web-1"], "sorted by name, namespace a only");
        assert_eq!(names(generic.namespace("b").list(&web)), ["web-2"]);
        assert_eq!(generic.namespace("").list(&web).len(), 2, "empty namespace means all");
        assert!(a.get("web-2").is_none(), "web-2 is in namespace b");
        assert!(generic.get("web-1").is_none(), "a namespaced object is not found by name alone");
        assert!(generic.get("a/web-1").is_some(), "but by its key, as client-go's GenericLister.Get");

        let obj = a.get("web-1").expect("cached");
        assert!(obj.is::<ConfigMap>() && !obj.is::<Namespace>());
        assert!(obj.downcast_ref::<Namespace>().is_none());
        assert_eq!(obj.downcast_ref::<ConfigMap>().map(|cm| cm.labels()["tier"].as_str()), Some("front"));
        let json = obj.to_json().unwrap();
        assert_eq!((json["apiVersion"].as_str(), json["kind"].as_str()), (Some("v1"), Some("ConfigMap")));
        assert_eq!(json["metadata"]["labels"]["app"], "web");
        let obj = obj.downcast::<Namespace>().expect_err("not a Namespace");
        let shared = obj.downcast::<ConfigMap>().expect("a ConfigMap");
        let cached = typed.namespace("a").get("web-1").unwrap();
        assert!(std::ptr::eq(Arc::as_ptr(&shared), Cached::as_ptr(&cached)), "the cached object itself, not a copy");
    }

    #[test]
    fn generic_objects_take_kind_from_their_type_and_managed_fields_from_the_cache() {
        // An object as a list hands it out: no apiVersion or kind of its own.
        #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
        struct Bare {
            metadata: ObjectMeta,
            #[serde(default, rename = "apiVersion", skip_serializing_if = "String::is_empty")]
            api_version: String,
        }
        impl Resource for Bare {
            type DynamicType = ();
            type Scope = k8s_openapi::ClusterResourceScope;
            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                "Bare".into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                "example.com".into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                "v1".into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                "bares".into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
        let indexer: Indexer<Bare> = Indexer::new();
        let bare = Arc::new(Bare {
            metadata: ObjectMeta { name: Some("one".into()), ..Default::default() },
            ..Default::default()
        });
        indexer.raw().update_with_text(bare.clone(), Some(r#"[{"manager":"kubectl"}]"#.into()));
        indexer.add(Arc::new(Bare {
            metadata: ObjectMeta { name: Some("two".into()), ..Default::default() },
            api_version: "example.com/v2".into(),
        }));
        let generic = GenericLister::new(&indexer);
        let one = generic.get("one").expect("cluster-scoped get");
        let json = one.to_json().unwrap();
        assert_eq!((json["apiVersion"].as_str(), json["kind"].as_str()), (Some("example.com/v1"), Some("Bare")));
        assert!(json["metadata"].get("managedFields").is_none(), "kept as text beside the object");
        let managers =
            generic.managed_fields(&one).unwrap().map(|f| f.into_iter().map(|e| e.manager).collect::<Vec<_>>());
        assert_eq!(managers, Some(vec![Some("kubectl".to_owned())]));
        let two = generic.get("two").unwrap().to_json().unwrap();
        assert_eq!(two["apiVersion"], "example.com/v2", "an object's own apiVersion is kept");
        assert_eq!(generic.managed_fields(&generic.get("two").unwrap()).unwrap(), None);
        assert_eq!(format!("{one:?}"), r#"GenericObject { namespace: None, name: Some("one") }"#);
    }

    #[test]
    fn cluster_scoped_get_by_name() {
        let indexer = Indexer::new();
        indexer.add(Arc::new(Namespace {
            metadata: ObjectMeta { name: Some("prod".into()), ..Default::default() },
            ..Default::default()
        }));
        let lister = Lister::new(indexer);
        assert_eq!(lister.get("prod").map(|n| n.name_any()).as_deref(), Some("prod"));
        assert!(lister.get("dev").is_none());
        assert_eq!(lister.get_with("prod", |n| n.name_any()).as_deref(), Some("prod"));
        assert_eq!(lister.get_with("dev", |n| n.name_any()), None);
        assert_eq!(lister.list(&everything()).len(), 1);
    }
}
