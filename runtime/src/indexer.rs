//! client-go's `Indexer` (a `ThreadSafeStore` with named indexes): the
//! thread-safe local cache an informer keeps, keyed `namespace/name`.
//!
//! The store itself holds objects with their type erased, so its code is
//! compiled once in this crate; [`Indexer<K>`] is a thin typed façade over
//! it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use kube::{Resource, ResourceExt};

use crate::object::{AnyObject, ErasedObject, downcast, downcast_ref, meta_key, write_meta_key};

/// An index function: the values under which an object is filed in one index
/// (client-go's `IndexFunc`). An object may be filed under several values, or
/// under none.
pub type IndexFunc<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// An [`IndexFunc`] over objects of any kind.
pub(crate) type ErasedIndexFunc = Arc<dyn Fn(&dyn AnyObject) -> Vec<String> + Send + Sync>;

/// Name of the index every [`Indexer`] has from the start, filing objects by
/// namespace (client-go's `cache.NamespaceIndex`).
pub const NAMESPACE_INDEX: &str = "namespace";

/// client-go's `MetaNamespaceIndexFunc`: files an object under its namespace,
/// cluster-scoped objects under the empty string.
pub fn meta_namespace_index_func<K: Resource>(obj: &K) -> Vec<String> {
    vec![obj.namespace().unwrap_or_default()]
}

/// What can go wrong when using named indexes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexerError {
    /// [`Indexer::add_indexers`] was given a name that is already taken.
    #[error("indexer conflict: an index named {0:?} already exists")]
    IndexExists(String),
    /// A query named an index that was never added.
    #[error("index with name {0:?} does not exist")]
    IndexNotFound(String),
}

/// A hash map with foldhash's fast hasher: keys are `namespace/name`
/// strings and index values, hashed on every lookup, where std's SipHash
/// costs more than the lookup itself. Seeded per process like std's.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Keys filed under each value of one index.
type Index = FastMap<String, BTreeSet<Arc<str>>>;

/// How one index files objects: the built-in namespace index reads the
/// namespace in place; the others call the user's function.
#[derive(Clone)]
enum IndexFn {
    Namespace,
    Func(ErasedIndexFunc),
}

impl IndexFn {
    /// The values `obj` is filed under.
    fn values<'a>(&self, obj: &'a dyn AnyObject) -> Vec<Cow<'a, str>> {
        let mut values = Vec::new();
        self.each_value(obj, |value| values.push(value));
        values
    }

    /// Calls `f` with each value `obj` is filed under, without collecting
    /// them first.
    fn each_value<'a>(&self, obj: &'a dyn AnyObject, mut f: impl FnMut(Cow<'a, str>)) {
        match self {
            Self::Namespace => f(Cow::Borrowed(namespace_of(obj))),
            Self::Func(index_func) => index_func(obj).into_iter().for_each(|value| f(Cow::Owned(value))),
        }
    }
}

/// The data behind the lock.
struct Store {
    items: FastMap<Arc<str>, ErasedObject>,
    indexers: BTreeMap<String, IndexFn>,
    indices: FastMap<String, Index>,
}

impl Store {
    /// Moves `key` from the index values of `old` to those of `new`, in every
    /// index, dropping values left with no keys so they do not linger in
    /// [`Indexer::list_index_func_values`].
    fn update_indices(&mut self, old: Option<&dyn AnyObject>, new: Option<&dyn AnyObject>, key: &Arc<str>) {
        for (name, index_fn) in &self.indexers {
            let old_values = old.map(|o| index_fn.values(o)).unwrap_or_default();
            let new_values = new.map(|n| index_fn.values(n)).unwrap_or_default();
            if old_values == new_values {
                continue;
            }
            let index = match self.indices.get_mut(name.as_str()) {
                Some(index) => index,
                None => self.indices.entry(name.clone()).or_default(),
            };
            for value in old_values.iter().filter(|v| !new_values.contains(v)) {
                if let Some(keys) = index.get_mut(value.as_ref()) {
                    keys.remove(key);
                    if keys.is_empty() {
                        index.remove(value.as_ref());
                    }
                }
            }
            for value in new_values.iter().filter(|v| !old_values.contains(v)) {
                match index.get_mut(value.as_ref()) {
                    Some(keys) => {
                        keys.insert(key.clone());
                    }
                    None => {
                        index.insert(value.clone().into_owned(), BTreeSet::from([key.clone()]));
                    }
                }
            }
        }
    }

    /// Files every item in one index. The keys of each value are gathered
    /// first and the value's set is built from them sorted, in one pass,
    /// instead of by one insertion per key.
    fn build_index(&self, index_fn: &IndexFn) -> Index {
        let mut groups: FastMap<String, Vec<Arc<str>>> = FastMap::default();
        for (key, obj) in &self.items {
            index_fn.each_value(&**obj, |value| match groups.get_mut(value.as_ref()) {
                Some(keys) => keys.push(key.clone()),
                None => {
                    groups.insert(value.into_owned(), vec![key.clone()]);
                }
            });
        }
        groups
            .into_iter()
            .map(|(value, mut keys)| {
                keys.sort_unstable();
                (value, keys.into_iter().collect())
            })
            .collect()
    }

    fn index(&self, index_name: &str) -> Result<Option<&Index>, IndexerError> {
        if !self.indexers.contains_key(index_name) {
            return Err(IndexerError::IndexNotFound(index_name.to_owned()));
        }
        Ok(self.indices.get(index_name))
    }

    fn keys_for(&self, index_name: &str, value: &str) -> Result<Option<&BTreeSet<Arc<str>>>, IndexerError> {
        Ok(self.index(index_name)?.and_then(|index| index.get(value)))
    }

    fn objects(&self, keys: impl IntoIterator<Item = impl AsRef<str>>) -> Vec<ErasedObject> {
        keys.into_iter().filter_map(|key| self.items.get(key.as_ref()).cloned()).collect()
    }
}

/// The value of the built-in namespace index: the namespace, or the empty
/// string for cluster-scoped objects.
fn namespace_of(obj: &dyn AnyObject) -> &str {
    obj.object_meta().namespace.as_deref().unwrap_or_default()
}

/// The store behind an [`Indexer`], for objects of any kind.
#[derive(Clone)]
pub(crate) struct ErasedIndexer {
    store: Arc<RwLock<Store>>,
}

impl fmt::Debug for ErasedIndexer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let store = self.read();
        f.debug_struct("Indexer")
            .field("len", &store.items.len())
            .field("indexers", &store.indexers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ErasedIndexer {
    pub(crate) fn with_indexers(indexers: BTreeMap<String, ErasedIndexFunc>) -> Self {
        let mut all: BTreeMap<String, IndexFn> = BTreeMap::new();
        all.insert(NAMESPACE_INDEX.to_owned(), IndexFn::Namespace);
        all.extend(indexers.into_iter().map(|(name, index_func)| (name, IndexFn::Func(index_func))));
        Self {
            store: Arc::new(RwLock::new(Store {
                items: FastMap::default(),
                indexers: all,
                indices: FastMap::default(),
            })),
        }
    }

    // A panicking index function must not make the cache unusable for every
    // other reader, so poisoned locks are entered anyway.
    fn read(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn add_indexers(&self, indexers: BTreeMap<String, ErasedIndexFunc>) -> Result<(), IndexerError> {
        let mut store = self.write();
        if let Some(name) = indexers.keys().find(|name| store.indexers.contains_key(*name)) {
            return Err(IndexerError::IndexExists(name.clone()));
        }
        for (name, index_func) in indexers {
            let index_fn = IndexFn::Func(index_func);
            let index = store.build_index(&index_fn);
            store.indices.insert(name.clone(), index);
            store.indexers.insert(name, index_fn);
        }
        Ok(())
    }

    fn index_names(&self) -> Vec<String> {
        self.read().indexers.keys().cloned().collect()
    }

    pub(crate) fn update(&self, obj: ErasedObject) -> Option<ErasedObject> {
        let key = meta_key(obj.object_meta());
        let mut store = self.write();
        let (key, old) = match store.items.remove_entry(key.as_str()) {
            Some((key, old)) => (key, Some(old)),
            None => (Arc::from(key), None),
        };
        store.update_indices(old.as_deref(), Some(&*obj), &key);
        store.items.insert(key, obj);
        old
    }

    pub(crate) fn delete_by_key(&self, key: &str) -> Option<ErasedObject> {
        let mut store = self.write();
        let (key, old) = store.items.remove_entry(key)?;
        store.update_indices(Some(&*old), None, &key);
        Some(old)
    }

    /// Replaces the whole content with `items`, rebuilds every index, and
    /// hands back the previous content by key so the informer can tell
    /// updates and vanished objects apart.
    pub(crate) fn replace_returning_old(&self, items: Vec<ErasedObject>) -> FastMap<Arc<str>, ErasedObject> {
        let mut new_items = FastMap::with_capacity_and_hasher(items.len(), Default::default());
        let mut key = String::new();
        for obj in items {
            key.clear();
            write_meta_key(&mut key, obj.object_meta());
            new_items.insert(Arc::<str>::from(key.as_str()), obj);
        }
        let mut store = self.write();
        let old = std::mem::replace(&mut store.items, new_items);
        let indices =
            store.indexers.iter().map(|(name, index_func)| (name.clone(), store.build_index(index_func))).collect();
        store.indices = indices;
        old
    }

    pub(crate) fn get_by_key(&self, key: &str) -> Option<ErasedObject> {
        self.read().items.get(key).cloned()
    }

    pub(crate) fn list(&self) -> Vec<ErasedObject> {
        self.read().items.values().cloned().collect()
    }

    fn list_keys(&self) -> Vec<String> {
        self.read().items.keys().map(|key| key.to_string()).collect()
    }

    fn len(&self) -> usize {
        self.read().items.len()
    }

    pub(crate) fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ErasedObject>, IndexerError> {
        let store = self.read();
        Ok(store.keys_for(index_name, indexed_value)?.map(|keys| store.objects(keys)).unwrap_or_default())
    }

    fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<String>, IndexerError> {
        let store = self.read();
        Ok(store
            .keys_for(index_name, indexed_value)?
            .map(|keys| keys.iter().map(|key| key.to_string()).collect())
            .unwrap_or_default())
    }

    fn index(&self, index_name: &str, obj: &dyn AnyObject) -> Result<Vec<ErasedObject>, IndexerError> {
        let store = self.read();
        let index = store.index(index_name)?;
        let Some(index_func) = store.indexers.get(index_name) else {
            return Err(IndexerError::IndexNotFound(index_name.to_owned()));
        };
        let keys: BTreeSet<&Arc<str>> = index_func
            .values(obj)
            .iter()
            .filter_map(|value| index.and_then(|index| index.get(value.as_ref())))
            .flatten()
            .collect();
        Ok(store.objects(keys.into_iter().map(|key| &**key)))
    }

    fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        let store = self.read();
        let mut values: Vec<String> =
            store.indices.get(index_name).map(|index| index.keys().cloned().collect()).unwrap_or_default();
        values.sort();
        values
    }
}

/// `f` over objects of any kind (all of them `K`s).
pub(crate) fn erase_index_func<K: Send + Sync + 'static>(f: IndexFunc<K>) -> ErasedIndexFunc {
    Arc::new(move |obj: &dyn AnyObject| f(downcast_ref::<K>(obj)))
}

/// `indexers` over objects of any kind. Built by insertion, not `collect`:
/// collecting into a `BTreeMap` sorts, and that sort would be compiled once
/// per kind.
pub(crate) fn erase_index_funcs<K: Send + Sync + 'static>(
    indexers: BTreeMap<String, IndexFunc<K>>,
) -> BTreeMap<String, ErasedIndexFunc> {
    let mut erased = BTreeMap::new();
    for (name, f) in indexers {
        erased.insert(name, erase_index_func(f));
    }
    erased
}

/// Objects of any kind as the `K`s they are.
pub(crate) fn downcast_all<K: Send + Sync + 'static>(objs: Vec<ErasedObject>) -> Vec<Arc<K>> {
    objs.into_iter().map(downcast).collect()
}

/// A thread-safe store of `Arc<K>` keyed `namespace/name` (or `name` for
/// cluster-scoped objects), with named secondary indexes kept up to date on
/// every write: client-go's `cache.Indexer`.
///
/// Cloning is cheap and every clone sees the same data. Objects are shared
/// read-only: take a clone of the object (`(*obj).clone()`) before changing
/// it. The [`NAMESPACE_INDEX`] is always present.
pub struct Indexer<K> {
    raw: ErasedIndexer,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Indexer<K> {
    fn clone(&self) -> Self {
        Self { raw: self.raw.clone(), kind: PhantomData }
    }
}

impl<K: Resource + Send + Sync + 'static> Default for Indexer<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> fmt::Debug for Indexer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

impl<K> Indexer<K> {
    /// The typed view of a store that holds only `K`s.
    pub(crate) fn from_raw(raw: ErasedIndexer) -> Self {
        Self { raw, kind: PhantomData }
    }

    /// The store behind this indexer.
    pub(crate) fn raw(&self) -> &ErasedIndexer {
        &self.raw
    }
}

impl<K: Resource + Send + Sync + 'static> Indexer<K> {
    /// An empty indexer with only the [`NAMESPACE_INDEX`].
    pub fn new() -> Self {
        Self::from_raw(ErasedIndexer::with_indexers(BTreeMap::new()))
    }

    /// An empty indexer with the [`NAMESPACE_INDEX`] and `indexers`. An entry
    /// named [`NAMESPACE_INDEX`] replaces the built-in namespace index.
    pub fn with_indexers(indexers: BTreeMap<String, IndexFunc<K>>) -> Self {
        Self::from_raw(ErasedIndexer::with_indexers(erase_index_funcs(indexers)))
    }

    /// Adds named indexes, filing every object already stored in them, so it
    /// may be called at any time. Fails without adding anything if a name is
    /// already taken.
    pub fn add_indexers(&self, indexers: BTreeMap<String, IndexFunc<K>>) -> Result<(), IndexerError> {
        self.raw.add_indexers(erase_index_funcs(indexers))
    }

    /// Names of all indexes, the [`NAMESPACE_INDEX`] included, sorted.
    pub fn index_names(&self) -> Vec<String> {
        self.raw.index_names()
    }

    /// Stores `obj` under its key; the same as [`Indexer::update`].
    pub fn add(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.update(obj)
    }

    /// Stores `obj` under its key, replacing and returning the object stored
    /// there before, and moves it between index values as needed.
    pub fn update(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.raw.update(obj).map(downcast)
    }

    /// Removes the object stored under `obj`'s key, returning it.
    pub fn delete(&self, obj: &K) -> Option<Arc<K>> {
        self.delete_by_key(&meta_key(obj.meta()))
    }

    /// Removes the object stored under `key`, returning it.
    pub fn delete_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.raw.delete_by_key(key).map(downcast)
    }

    /// Replaces the whole content with `items` and rebuilds every index.
    pub fn replace(&self, items: Vec<Arc<K>>) {
        self.raw.replace_returning_old(items.into_iter().map(|obj| obj as ErasedObject).collect());
    }

    /// The object stored under `obj`'s key.
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.get_by_key(&meta_key(obj.meta()))
    }

    /// The object stored under `key` (`namespace/name`, or `name` for
    /// cluster-scoped objects).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.raw.get_by_key(key).map(downcast)
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        downcast_all(self.raw.list())
    }

    /// Every stored key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.raw.list_keys()
    }

    /// The number of stored objects.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// The objects filed under `indexed_value` in index `index_name`, sorted
    /// by key.
    pub fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Vec<Arc<K>>, IndexerError> {
        self.raw.by_index(index_name, indexed_value).map(downcast_all)
    }

    /// The keys filed under `indexed_value` in index `index_name`, sorted.
    pub fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<String>, IndexerError> {
        self.raw.index_keys(index_name, indexed_value)
    }

    /// The objects sharing at least one value with `obj` in index
    /// `index_name` (client-go's `Index`), sorted by key.
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Vec<Arc<K>>, IndexerError> {
        self.raw.index(index_name, obj).map(downcast_all)
    }

    /// Every value that currently has objects filed under it in index
    /// `index_name`, sorted; empty for an unknown index.
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<String> {
        self.raw.list_index_func_values(index_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::meta_namespace_key;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::ObjectMeta;
    use proptest::prelude::*;

    fn cm(ns: &str, name: &str, app: Option<&str>) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: app.map(|app| [("app".to_owned(), app.to_owned())].into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn by_app() -> BTreeMap<String, IndexFunc<ConfigMap>> {
        let index_func: IndexFunc<ConfigMap> =
            Arc::new(|cm: &ConfigMap| cm.labels().get("app").cloned().into_iter().collect());
        [("app".to_owned(), index_func)].into()
    }

    fn sorted(mut keys: Vec<String>) -> Vec<String> {
        keys.sort();
        keys
    }

    #[test]
    fn stores_by_namespace_key() {
        let indexer = Indexer::new();
        assert!(indexer.is_empty());
        assert!(indexer.add(cm("a", "x", None)).is_none());
        indexer.add(cm("b", "x", None));
        assert_eq!(indexer.len(), 2);
        assert_eq!(sorted(indexer.list_keys()), ["a/x", "b/x"]);
        let got = indexer.get_by_key("a/x").map(|o| o.name_any());
        assert_eq!(got.as_deref(), Some("x"));
        assert!(indexer.get(&cm("b", "x", None)).is_some());
        assert!(indexer.get_by_key("x").is_none());

        let ns = Indexer::new();
        ns.add(Arc::new(Namespace {
            metadata: ObjectMeta { name: Some("kube-system".into()), ..Default::default() },
            ..Default::default()
        }));
        assert!(ns.get_by_key("kube-system").is_some());
        assert_eq!(ns.index_keys(NAMESPACE_INDEX, "").unwrap(), ["kube-system"]);
    }

    #[test]
    fn namespace_index_is_built_in() {
        let indexer = Indexer::new();
        indexer.add(cm("a", "x", None));
        indexer.add(cm("a", "y", None));
        indexer.add(cm("b", "z", None));
        assert_eq!(indexer.index_names(), [NAMESPACE_INDEX]);
        assert_eq!(indexer.index_keys(NAMESPACE_INDEX, "a").unwrap(), ["a/x", "a/y"]);
        let names: Vec<_> = indexer.by_index(NAMESPACE_INDEX, "b").unwrap().iter().map(|o| o.name_any()).collect();
        assert_eq!(names, ["z"]);
        assert!(indexer.by_index(NAMESPACE_INDEX, "c").unwrap().is_empty());
        assert_eq!(indexer.list_index_func_values(NAMESPACE_INDEX), ["a", "b"]);
    }

    #[test]
    fn updates_and_deletes_drop_stale_index_entries() {
        let indexer = Indexer::with_indexers(by_app());
        indexer.add(cm("a", "x", Some("web")));
        indexer.add(cm("a", "y", Some("web")));
        let old = indexer.update(cm("a", "x", Some("db")));
        assert_eq!(old.map(|o| o.labels()["app"].clone()).as_deref(), Some("web"));
        assert_eq!(indexer.index_keys("app", "web").unwrap(), ["a/y"]);
        assert_eq!(indexer.index_keys("app", "db").unwrap(), ["a/x"]);

        indexer.update(cm("a", "y", None));
        assert!(indexer.index_keys("app", "web").unwrap().is_empty());
        assert_eq!(indexer.list_index_func_values("app"), ["db"]);

        assert!(indexer.delete(&cm("a", "x", None)).is_some());
        assert!(indexer.delete_by_key("a/x").is_none());
        assert!(indexer.list_index_func_values("app").is_empty());
        assert_eq!(indexer.list_index_func_values(NAMESPACE_INDEX), ["a"]);
        indexer.delete_by_key("a/y");
        assert!(indexer.list_index_func_values(NAMESPACE_INDEX).is_empty());
    }

    #[test]
    fn add_indexers_indexes_existing_items_and_rejects_duplicates() {
        let indexer = Indexer::new();
        indexer.add(cm("a", "x", Some("web")));
        indexer.add(cm("b", "y", Some("web")));
        indexer.add_indexers(by_app()).unwrap();
        assert_eq!(indexer.index_keys("app", "web").unwrap(), ["a/x", "b/y"]);
        assert_eq!(indexer.add_indexers(by_app()), Err(IndexerError::IndexExists("app".into())));

        let ns_again: IndexFunc<ConfigMap> = Arc::new(|_: &ConfigMap| Vec::new());
        let err = indexer
            .add_indexers([("other".to_owned(), ns_again.clone()), (NAMESPACE_INDEX.to_owned(), ns_again)].into());
        assert_eq!(err, Err(IndexerError::IndexExists(NAMESPACE_INDEX.into())));
        assert_eq!(indexer.index_names(), ["app", NAMESPACE_INDEX], "a failed call adds nothing");
    }

    #[test]
    fn unknown_index_is_an_error() {
        let indexer = Indexer::<ConfigMap>::new();
        let missing = Err(IndexerError::IndexNotFound("nope".into()));
        assert_eq!(indexer.by_index("nope", "v").map(|v| v.len()), missing.clone().map(|()| 0));
        assert_eq!(indexer.index_keys("nope", "v"), missing.clone().map(|()| Vec::new()));
        assert_eq!(indexer.index("nope", &cm("a", "x", None)).map(|v| v.len()), missing.map(|()| 0));
        assert!(indexer.list_index_func_values("nope").is_empty());
    }

    #[test]
    fn multi_value_index_and_index_query() {
        let by_letter: IndexFunc<ConfigMap> =
            Arc::new(|cm: &ConfigMap| cm.name_any().chars().map(String::from).collect());
        let indexer = Indexer::with_indexers([("letters".to_owned(), by_letter)].into());
        indexer.add(cm("a", "ab", None));
        indexer.add(cm("a", "bc", None));
        indexer.add(cm("a", "cd", None));
        assert_eq!(indexer.index_keys("letters", "b").unwrap(), ["a/ab", "a/bc"]);
        let names: Vec<_> =
            indexer.index("letters", &cm("a", "bd", None)).unwrap().iter().map(|o| o.name_any()).collect();
        assert_eq!(names, ["ab", "bc", "cd"]);
    }

    #[test]
    fn replace_rebuilds_everything() {
        let indexer = Indexer::with_indexers(by_app());
        indexer.add(cm("a", "x", Some("web")));
        indexer.add(cm("a", "y", Some("web")));
        indexer.replace(vec![cm("b", "x", Some("db")), cm("a", "y", Some("db"))]);
        assert_eq!(sorted(indexer.list_keys()), ["a/y", "b/x"]);
        assert_eq!(indexer.list_index_func_values("app"), ["db"]);
        assert_eq!(indexer.index_keys("app", "db").unwrap(), ["a/y", "b/x"]);
        assert_eq!(indexer.list_index_func_values(NAMESPACE_INDEX), ["a", "b"]);
        indexer.replace(Vec::new());
        assert!(indexer.is_empty());
        assert!(indexer.list_index_func_values("app").is_empty());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Upsert { ns: u8, name: u8, app: Option<u8> },
        Delete { ns: u8, name: u8 },
        Replace(Vec<(u8, u8, Option<u8>)>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let obj = (0u8..3, 0u8..6, proptest::option::of(0u8..3));
        prop_oneof![
            6 => obj.clone().prop_map(|(ns, name, app)| Op::Upsert { ns, name, app }),
            3 => (0u8..3, 0u8..6).prop_map(|(ns, name)| Op::Delete { ns, name }),
            1 => proptest::collection::vec(obj, 0..8).prop_map(Op::Replace),
        ]
    }

    proptest! {
        /// After any sequence of writes, every index agrees with a model
        /// recomputed from scratch, and no index value is left empty.
        #[test]
        fn indexes_match_a_model(ops in proptest::collection::vec(op(), 0..60)) {
            let indexer = Indexer::with_indexers(by_app());
            let mut model: BTreeMap<String, Arc<ConfigMap>> = BTreeMap::new();
            let make = |ns: u8, name: u8, app: Option<u8>| cm(&format!("ns{ns}"), &format!("n{name}"), app.map(|a| format!("app{a}")).as_deref());
            for op in ops {
                match op {
                    Op::Upsert { ns, name, app } => {
                        let obj = make(ns, name, app);
                        let old = indexer.update(obj.clone());
                        let model_old = model.insert(meta_namespace_key(&*obj), obj);
                        prop_assert_eq!(old.is_some(), model_old.is_some());
                    }
                    Op::Delete { ns, name } => {
                        let key = format!("ns{ns}/n{name}");
                        prop_assert_eq!(indexer.delete_by_key(&key).is_some(), model.remove(&key).is_some());
                    }
                    Op::Replace(objs) => {
                        let objs: Vec<_> = objs.into_iter().map(|(ns, name, app)| make(ns, name, app)).collect();
                        model = objs.iter().map(|o| (meta_namespace_key(&**o), o.clone())).collect();
                        indexer.replace(objs);
                    }
                }
            }
            prop_assert_eq!(sorted(indexer.list_keys()), model.keys().cloned().collect::<Vec<_>>());
            for (index, value_of) in [
                ("app", (|o: &ConfigMap| o.labels().get("app").cloned()) as fn(&ConfigMap) -> Option<String>),
                (NAMESPACE_INDEX, |o: &ConfigMap| o.namespace()),
            ] {
                let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (key, obj) in &model {
                    if let Some(value) = value_of(obj) {
                        expected.entry(value).or_default().push(key.clone());
                    }
                }
                prop_assert_eq!(indexer.list_index_func_values(index), expected.keys().cloned().collect::<Vec<_>>());
                for (value, keys) in expected {
                    prop_assert_eq!(indexer.index_keys(index, &value).unwrap(), keys);
                }
            }
        }
    }
}
