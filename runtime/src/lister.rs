//! Listers: read-only, label-selector queries over an informer's [`Indexer`],
//! the counterpart of lister-gen's `<Kind>Lister` and `<Kind>NamespaceLister`.

use std::sync::Arc;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::Resource;

use crate::indexer::{Indexer, NAMESPACE_INDEX, downcast_all};
use crate::object::{ErasedObject, downcast, downcast_ref};

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
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.indexer.get_by_key(name)
    }

    /// `f` of the cached cluster-scoped object called `name`, without
    /// handing out an `Arc`: see [`Indexer::get_by_key_with`], whose rules
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
    pub fn managed_fields(&self, obj: &Arc<K>) -> Result<Option<Vec<ManagedFieldsEntry>>, serde_json::Error> {
        self.indexer.managed_fields(obj)
    }

    /// A copy of `obj` with its `metadata.managedFields` in it
    /// ([`Indexer::with_managed_fields`]): pass it to `extract_<kind>`.
    pub fn with_managed_fields(&self, obj: &Arc<K>) -> Result<K, serde_json::Error>
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
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.indexer.raw().get_in((&self.namespace, name)).map(downcast)
    }

    /// `f` of the cached object called `name` in this namespace, without
    /// handing out an `Arc`: see [`Indexer::get_by_key_with`], whose rules
    /// for `f` apply.
    pub fn get_with<R>(&self, name: &str, f: impl FnOnce(&K) -> R) -> Option<R> {
        self.indexer.raw().with_in((&self.namespace, name), |obj| f(downcast_ref(obj)))
    }

    /// The cached objects in this namespace whose labels match `selector`,
    /// sorted by name (in no particular order for the all-namespaces
    /// lister). Pass [`everything()`] for all of them.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        if self.namespace.is_empty() {
            return select(self.indexer.raw().list(), selector);
        }
        // The namespace index is built into every indexer, so this lookup
        // cannot name a missing index; an empty list is the safe answer anyway.
        let objs = self.indexer.raw().by_index(NAMESPACE_INDEX, &self.namespace).unwrap_or_default();
        select(objs, selector)
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
