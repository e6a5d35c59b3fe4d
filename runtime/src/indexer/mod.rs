//! client-go's `Indexer` (a `ThreadSafeStore` with named indexes): the
//! thread-safe local cache an informer keeps, keyed `namespace/name`.
//!
//! The store itself holds objects with their type erased, so its code is
//! compiled once in this crate; [`Indexer<K>`] is a thin typed façade over
//! it.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::{Resource, ResourceExt};

use crate::object::{AnyObject, ErasedObject, downcast, downcast_ptr, downcast_ref, meta_key, meta_key_parts};

mod cached;
mod items;

pub use cached::Cached;
pub(crate) use items::Items;

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

/// A hash map with foldhash's fast hasher, for index values and object
/// addresses, hashed on every lookup, where std's SipHash costs more than
/// the lookup itself (the table of objects hashes its key texts with the
/// same hasher). Seeded per process like std's.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// An object in the set of one index value, ordered by its key.
#[derive(Clone)]
struct ByKey(ErasedObject);

impl ByKey {
    fn parts(&self) -> KeyParts<'_> {
        parts_of(&*self.0)
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_keys(self.parts(), other.parts())
    }
}

/// The objects filed under each value of one index. The sets hold the
/// objects themselves, so a query by index reads no second table.
type Index = FastMap<String, BTreeSet<ByKey>>;

/// A key in its two parts: namespace (empty for cluster-scoped objects)
/// and name.
type KeyParts<'a> = (&'a str, &'a str);

fn parts_of(obj: &dyn AnyObject) -> KeyParts<'_> {
    meta_key_parts(obj.object_meta())
}

/// The parts of a `namespace/name` or `name` key. Names never contain a
/// `/` (the API server refuses them), so the first one separates the
/// namespace; a key starting with `/` names no object.
fn split_key(key: &str) -> Option<KeyParts<'_>> {
    match key.split_once('/') {
        Some(("", _)) => None,
        Some(parts) => Some(parts),
        None => Some(("", key)),
    }
}

/// The text the table keeps a `namespace/name` or `name` key under: the
/// key itself (see [`items`]), unless it starts with `/` and so names no
/// object.
#[inline(always)]
fn key_text_of(key: &str) -> Option<&[u8]> {
    (!key.starts_with('/')).then_some(key.as_bytes())
}

/// Orders keys as their text `namespace/name` (or `name`) would order.
fn cmp_keys(a: KeyParts<'_>, b: KeyParts<'_>) -> Ordering {
    if a.0 == b.0 {
        return a.1.cmp(b.1);
    }
    key_text(a).cmp(key_text(b))
}

/// The bytes of a key's text, without building it.
fn key_text<'a>((ns, name): KeyParts<'a>) -> impl Iterator<Item = u8> + 'a {
    let separator: &[u8] = if ns.is_empty() { b"" } else { b"/" };
    ns.bytes().chain(separator.iter().copied()).chain(name.bytes())
}

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

/// The `managedFields` of cached objects kept as JSON text
/// ([`ManagedFields::Text`](crate::informer::ManagedFields::Text)), by the
/// address of the object they belong to (see [`address`]).
pub(crate) type ManagedTexts = FastMap<usize, Box<str>>;

/// The address of a shared object: the same for an `Arc<K>` and the
/// `ErasedObject` made from it, and unique among live objects, so a text
/// filed under it while its object is cached cannot belong to another.
pub(crate) fn address<T: ?Sized>(obj: &Arc<T>) -> usize {
    Arc::as_ptr(obj).cast::<()>() as usize
}

/// The data behind the lock.
struct Store {
    items: Items,
    indexers: BTreeMap<String, IndexFn>,
    indices: FastMap<String, Index>,
    /// Texts of cached objects only: an entry leaves with its object.
    managed: ManagedTexts,
}

impl Store {
    /// Files `new` in place of `old` (the object stored under the same key
    /// before) in every index: under values only `old` had it is removed,
    /// under shared ones replaced, under new ones added. Values left with
    /// no objects are dropped so they do not linger in
    /// [`Indexer::list_index_func_values`].
    fn update_indices(&mut self, old: Option<&ErasedObject>, new: Option<&ErasedObject>) {
        for (name, index_fn) in &self.indexers {
            let old_values = old.map(|o| index_fn.values(&**o)).unwrap_or_default();
            let new_values = new.map(|n| index_fn.values(&**n)).unwrap_or_default();
            if old_values.is_empty() && new_values.is_empty() {
                continue;
            }
            let index = match self.indices.get_mut(name.as_str()) {
                Some(index) => index,
                None => self.indices.entry(name.clone()).or_default(),
            };
            if let Some(old) = old {
                for value in old_values.iter().filter(|v| !new_values.contains(v)) {
                    if let Some(objs) = index.get_mut(value.as_ref()) {
                        objs.remove(&ByKey(old.clone()));
                        if objs.is_empty() {
                            index.remove(value.as_ref());
                        }
                    }
                }
            }
            if let Some(new) = new {
                for value in &new_values {
                    match index.get_mut(value.as_ref()) {
                        // Replaces the old object if it was filed here.
                        Some(objs) => {
                            objs.replace(ByKey(new.clone()));
                        }
                        None => {
                            index.insert(value.clone().into_owned(), BTreeSet::from([ByKey(new.clone())]));
                        }
                    }
                }
            }
        }
    }

    /// Files every item in one index. The objects of each value are
    /// gathered first with their keys, sorted by the keys (read from each
    /// object once, not at every comparison), and the value's set is built
    /// from them in one pass, instead of by one insertion per object.
    fn build_index(items: &Items, index_fn: &IndexFn) -> Index {
        if let IndexFn::Namespace = index_fn {
            return Self::build_namespace_index(items);
        }
        let mut groups: FastMap<String, Vec<(KeyParts<'_>, &ErasedObject)>> = FastMap::default();
        for obj in items.iter() {
            let key = parts_of(&**obj);
            index_fn.each_value(&**obj, |value| match groups.get_mut(value.as_ref()) {
                Some(objs) => objs.push((key, obj)),
                None => {
                    groups.insert(value.into_owned(), vec![(key, obj)]);
                }
            });
        }
        groups
            .into_iter()
            .map(|(value, mut objs)| {
                objs.sort_unstable_by(|a, b| cmp_keys(a.0, b.0));
                // In order already: collecting checks that in one pass.
                (value, objs.into_iter().map(|(_, obj)| ByKey(obj.clone())).collect())
            })
            .collect()
    }

    /// [`build_index`](Self::build_index) for the built-in namespace
    /// index: every object of a value has that namespace, so its objects
    /// are ordered by name alone, and only the name is gathered with each
    /// (24 bytes per object rather than 40, which is most of what building
    /// the index holds at once).
    fn build_namespace_index(items: &Items) -> Index {
        let mut groups: FastMap<&str, Vec<(&str, &ErasedObject)>> = FastMap::default();
        for obj in items.iter() {
            let (namespace, name) = parts_of(&**obj);
            match groups.get_mut(namespace) {
                Some(objs) => objs.push((name, obj)),
                None => {
                    groups.insert(namespace, vec![(name, obj)]);
                }
            }
        }
        groups
            .into_iter()
            .map(|(namespace, mut objs)| {
                objs.sort_unstable_by(|a, b| a.0.cmp(b.0));
                (namespace.to_owned(), objs.into_iter().map(|(_, obj)| ByKey(obj.clone())).collect())
            })
            .collect()
    }

    /// Every index built anew from `items`.
    fn build_indices(&self, items: &Items) -> FastMap<String, Index> {
        self.indexers.iter().map(|(name, index_fn)| (name.clone(), Self::build_index(items, index_fn))).collect()
    }

    /// Puts back what was stored under the key of `new` before it (`old`,
    /// or nothing) after an index function panicked halfway through filing
    /// it, and rebuilds the indices from the items: index-backed reads
    /// (namespace lists, `by_index`) then agree with `get` and `list`.
    fn undo_update(&mut self, new: &ErasedObject, old: Option<ErasedObject>) {
        match old {
            Some(old) => {
                self.items.insert(old);
            }
            None => {
                self.items.remove(parts_of(&**new));
            }
        }
        let rebuilt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.build_indices(&self.items)));
        self.indices = rebuilt.unwrap_or_default();
    }

    fn index(&self, index_name: &str) -> Result<Option<&Index>, IndexerError> {
        if !self.indexers.contains_key(index_name) {
            return Err(IndexerError::IndexNotFound(index_name.to_owned()));
        }
        Ok(self.indices.get(index_name))
    }

    fn filed_under(&self, index_name: &str, value: &str) -> Result<Option<&BTreeSet<ByKey>>, IndexerError> {
        Ok(self.index(index_name)?.and_then(|index| index.get(value)))
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
                items: Items::with_capacity(0),
                indexers: all,
                indices: FastMap::default(),
                managed: ManagedTexts::default(),
            })),
        }
    }

    // A panicking index function must not make the cache unusable for every
    // other reader, so poisoned locks are entered anyway. Inline: it is
    // part of every lookup (see `items`).
    #[inline]
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
            let index = Store::build_index(&store.items, &index_fn);
            store.indices.insert(name.clone(), index);
            store.indexers.insert(name, index_fn);
        }
        Ok(())
    }

    fn index_names(&self) -> Vec<String> {
        self.read().indexers.keys().cloned().collect()
    }

    pub(crate) fn update(&self, obj: ErasedObject) -> Option<ErasedObject> {
        self.update_with_text(obj, None)
    }

    /// [`update`](Self::update), keeping `managed` (the object's
    /// `managedFields` as JSON text) beside the object.
    pub(crate) fn update_with_text(&self, obj: ErasedObject, managed: Option<Box<str>>) -> Option<ErasedObject> {
        let mut store = self.write();
        let old = store.items.insert(obj.clone());
        let filed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store.update_indices(old.as_ref(), Some(&obj));
        }));
        if let Err(panic) = filed {
            store.undo_update(&obj, old);
            std::panic::resume_unwind(panic);
        }
        if let Some(old) = &old
            && !store.managed.is_empty()
        {
            store.managed.remove(&address(old));
        }
        if let Some(text) = managed {
            store.managed.insert(address(&obj), text);
        }
        old
    }

    /// Removes the object stored under the key of `obj`, returning it.
    pub(crate) fn delete(&self, obj: &dyn AnyObject) -> Option<ErasedObject> {
        self.delete_parts(parts_of(obj))
    }

    fn delete_by_key(&self, key: &str) -> Option<ErasedObject> {
        self.delete_parts(split_key(key)?)
    }

    fn delete_parts(&self, parts: KeyParts<'_>) -> Option<ErasedObject> {
        let mut store = self.write();
        let old = store.items.remove(parts)?;
        store.update_indices(Some(&old), None);
        if !store.managed.is_empty() {
            store.managed.remove(&address(&old));
        }
        Some(old)
    }

    /// Replaces the whole content with `items`, rebuilds every index, and
    /// hands back the previous content so the informer can tell updates and
    /// vanished objects apart. `managed` holds the `managedFields` texts of
    /// new items; an item that was cached already (the same `Arc`) keeps
    /// the text it had.
    pub(crate) fn replace_returning_old(&self, items: &[ErasedObject], mut managed: ManagedTexts) -> Items {
        let mut new_items = Items::with_capacity(items.len());
        for obj in items {
            // An object displaced by a later one with its key takes its
            // text along: no text may outlive its object's place here.
            if let Some(displaced) = new_items.insert(obj.clone())
                && !managed.is_empty()
                && !Arc::ptr_eq(&displaced, obj)
            {
                managed.remove(&address(&displaced));
            }
        }
        let mut store = self.write();
        // Built before anything changes: an index function that panics
        // leaves the cache as it was, items and indices alike.
        let indices = store.build_indices(&new_items);
        let old = std::mem::replace(&mut store.items, new_items).retired();
        let mut old_managed = std::mem::take(&mut store.managed);
        if !old_managed.is_empty() {
            for obj in items {
                let at = address(obj);
                if let Some(text) = old_managed.remove(&at) {
                    managed.entry(at).or_insert(text);
                }
            }
        }
        store.managed = managed;
        store.indices = indices;
        old
    }

    /// The `managedFields` text kept for the cached object at `at` (see
    /// [`address`]).
    pub(crate) fn managed_text(&self, at: usize) -> Option<Box<str>> {
        self.read().managed.get(&at).cloned()
    }

    pub(crate) fn get_by_key(&self, key: &str) -> Option<ErasedObject> {
        self.read().items.get_text(key_text_of(key)?).cloned()
    }

    /// The object stored under `namespace` (empty for cluster-scoped
    /// objects) and `name`, without building its key.
    pub(crate) fn get_in(&self, (namespace, name): KeyParts<'_>) -> Option<ErasedObject> {
        self.read().items.get((namespace, name)).cloned()
    }

    /// `f` of the object stored under `namespace` and `name`, called under
    /// the read lock and without counting a reference to the object.
    pub(crate) fn with_in<R>(&self, parts: KeyParts<'_>, f: impl FnOnce(&dyn AnyObject) -> R) -> Option<R> {
        self.read().items.get(parts).map(|obj| f(&**obj))
    }

    /// A [`Cached`] handle on the `K` stored under `namespace` and `name`.
    pub(crate) fn cached_in<K: 'static>(&self, parts: KeyParts<'_>) -> Option<Cached<K>> {
        // SAFETY: the object is in the table, which is locked for reading
        // until the end of this statement.
        self.read().items.get(parts).map(|obj| unsafe { Cached::found(downcast_ptr(obj)) })
    }

    /// [`cached_in`](Self::cached_in) by `namespace/name` key.
    pub(crate) fn cached_by_key<K: 'static>(&self, key: &str) -> Option<Cached<K>> {
        // SAFETY: as in `cached_in`.
        self.read().items.get_text(key_text_of(key)?).map(|obj| unsafe { Cached::found(downcast_ptr(obj)) })
    }

    /// [`with_in`](Self::with_in) by `namespace/name` key.
    pub(crate) fn with_by_key<R>(&self, key: &str, f: impl FnOnce(&dyn AnyObject) -> R) -> Option<R> {
        self.read().items.get_text(key_text_of(key)?).map(|obj| f(&**obj))
    }

    pub(crate) fn list(&self) -> Vec<ErasedObject> {
        self.read().items.iter().cloned().collect()
    }

    fn list_keys(&self) -> Vec<String> {
        self.read().items.iter().map(|obj| meta_key(obj.object_meta())).collect()
    }

    fn len(&self) -> usize {
        self.read().items.len()
    }

    pub(crate) fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ErasedObject>, IndexerError> {
        let store = self.read();
        Ok(store
            .filed_under(index_name, indexed_value)?
            .map(|objs| objs.iter().map(|obj| obj.0.clone()).collect())
            .unwrap_or_default())
    }

    fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<String>, IndexerError> {
        let store = self.read();
        Ok(store
            .filed_under(index_name, indexed_value)?
            .map(|objs| objs.iter().map(|obj| meta_key(obj.0.object_meta())).collect())
            .unwrap_or_default())
    }

    fn index(&self, index_name: &str, obj: &dyn AnyObject) -> Result<Vec<ErasedObject>, IndexerError> {
        let store = self.read();
        let index = store.index(index_name)?;
        let Some(index_func) = store.indexers.get(index_name) else {
            return Err(IndexerError::IndexNotFound(index_name.to_owned()));
        };
        let objs: BTreeSet<&ByKey> = index_func
            .values(obj)
            .iter()
            .filter_map(|value| index.and_then(|index| index.get(value.as_ref())))
            .flatten()
            .collect();
        Ok(objs.into_iter().map(|obj| obj.0.clone()).collect())
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
        self.raw.delete(obj).map(downcast)
    }

    /// Removes the object stored under `key`, returning it.
    pub fn delete_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.raw.delete_by_key(key).map(downcast)
    }

    /// Replaces the whole content with `items` and rebuilds every index.
    pub fn replace(&self, items: Vec<Arc<K>>) {
        let items: Vec<ErasedObject> = items.into_iter().map(|obj| obj as ErasedObject).collect();
        self.raw.replace_returning_old(&items, ManagedTexts::default());
    }

    /// The `metadata.managedFields` of `obj`, an object handed out by this
    /// cache: those in the object itself, or, when its informer keeps them
    /// as text beside it ([`ManagedFields::Text`]), those decoded from that
    /// text. `Ok(None)` when there are none, or when `obj` has left the
    /// cache since (a text is kept only while its object is cached: the
    /// `old` object of an update has none). Errors only if the kept text
    /// does not decode.
    ///
    /// [`ManagedFields::Text`]: crate::informer::ManagedFields::Text
    pub fn managed_fields(&self, obj: &K) -> Result<Option<Vec<ManagedFieldsEntry>>, serde_json::Error> {
        if let Some(fields) = &obj.meta().managed_fields {
            return Ok(Some(fields.clone()));
        }
        self.raw.managed_text(std::ptr::from_ref(obj) as usize).map(|text| serde_json::from_str(&text)).transpose()
    }

    /// A copy of `obj` (an object handed out by this cache) with its
    /// `metadata.managedFields` in it, as [`managed_fields`](Self::managed_fields)
    /// reads them: what `extract_<kind>` needs of a cached object when its
    /// informer keeps them as text (the default).
    pub fn with_managed_fields(&self, obj: &K) -> Result<K, serde_json::Error>
    where
        K: Clone,
    {
        let managed_fields = self.managed_fields(obj)?;
        let mut copy = K::clone(obj);
        copy.meta_mut().managed_fields = managed_fields;
        Ok(copy)
    }

    /// The object stored under `obj`'s key.
    pub fn get(&self, obj: &K) -> Option<Cached<K>> {
        self.raw.cached_in(parts_of(obj))
    }

    /// The object stored under `key` (`namespace/name`, or `name` for
    /// cluster-scoped objects). The key is matched against each object's own
    /// namespace and name, the namespace being the text before the first
    /// `/` (names cannot contain one).
    ///
    /// The lookup writes nothing to the object's memory: the [`Cached`]
    /// handle keeps it alive without counting a reference in it, unless
    /// the thread holds 14 such handles already (see [`Cached`]).
    pub fn get_by_key(&self, key: &str) -> Option<Cached<K>> {
        self.raw.cached_by_key(key)
    }

    /// `f` of the object stored under `key`, or `None` when there is none:
    /// [`get_by_key`](Self::get_by_key) for callers that only read the
    /// object, with no handle to drop afterwards.
    ///
    /// `f` runs while the cache is locked for reading: keep it short, and
    /// do not call into this indexer (or a lister or informer over it) from
    /// `f`, as a writer waiting for the lock would block that call and `f`
    /// with it.
    pub fn get_by_key_with<R>(&self, key: &str, f: impl FnOnce(&K) -> R) -> Option<R> {
        self.raw.with_by_key(key, |obj| f(downcast_ref(obj)))
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
    fn get_by_key_with_reads_the_stored_object_without_a_new_reference() {
        let indexer: Indexer<ConfigMap> = Indexer::new();
        let web = cm("ns", "web", Some("web"));
        indexer.add(web.clone());
        indexer.add(cm("", "cluster", None));
        let refs = Arc::strong_count(&web);
        let app = indexer.get_by_key_with("ns/web", |cm| {
            assert_eq!(Arc::strong_count(&web), refs, "no Arc was cloned for f");
            cm.labels().get("app").cloned()
        });
        assert_eq!(app, Some(Some("web".to_owned())));
        assert_eq!(indexer.get_by_key_with("cluster", |cm| cm.name_any()).as_deref(), Some("cluster"));
        for missing in ["ns/db", "web", "other/web", "", "/web"] {
            assert_eq!(indexer.get_by_key_with(missing, |_| ()), None, "{missing:?}");
        }
        indexer.delete(&web);
        assert_eq!(indexer.get_by_key_with("ns/web", |_| ()), None);
    }

    /// A retirement somewhere else, which reclaims retired objects no
    /// handle holds any more.
    fn retire_elsewhere() {
        let other: Indexer<ConfigMap> = Indexer::new();
        other.add(cm("elsewhere", "x", None));
        other.delete_by_key("elsewhere/x");
    }

    /// Whether `freed` comes true within a second of retirements: a
    /// reclamation running on another thread (another test's) may have
    /// taken the objects from the retired list and drop them just after.
    fn freed_soon(freed: impl Fn() -> bool) -> bool {
        (0..1000).any(|_| {
            retire_elsewhere();
            freed() || {
                std::thread::sleep(std::time::Duration::from_millis(1));
                false
            }
        })
    }

    #[test]
    fn a_handle_keeps_its_object_through_every_way_out_of_the_cache() {
        type Way = fn(Indexer<ConfigMap>);
        let ways: [(&str, Way); 5] = [
            ("update", |indexer| drop(indexer.update(cm("ns", "a", Some("db"))))),
            ("delete", |indexer| drop(indexer.delete_by_key("ns/a"))),
            ("replace", |indexer| indexer.replace(vec![cm("ns", "b", None)])),
            ("replace with itself", |indexer| {
                let again = indexer.list();
                indexer.replace(again);
                drop(indexer.delete_by_key("ns/a"));
            }),
            ("drop of the indexer", drop),
        ];
        for (way, out) in ways {
            let indexer: Indexer<ConfigMap> = Indexer::new();
            let obj = cm("ns", "a", Some("web"));
            let weak = Arc::downgrade(&obj);
            indexer.add(obj);
            let held = indexer.get_by_key("ns/a").expect("cached");
            let by_obj = indexer.get(&held).expect("cached");
            let cloned = held.clone();
            out(indexer);
            assert!(weak.upgrade().is_some(), "{way}: alive while held");
            drop(held);
            retire_elsewhere();
            assert_eq!(by_obj.labels()["app"], "web", "{way}");
            drop(by_obj);
            retire_elsewhere();
            assert_eq!(cloned.labels()["app"], "web", "{way}");
            drop(cloned);
            assert!(freed_soon(|| weak.upgrade().is_none()), "{way}: freed once let go");
        }
    }

    #[test]
    fn handles_beyond_a_threads_slots_count_references() {
        let indexer: Indexer<ConfigMap> = Indexer::new();
        let weaks: Vec<_> = (0..40)
            .map(|i| {
                let obj = cm("ns", &format!("o{i}"), None);
                let weak = Arc::downgrade(&obj);
                indexer.add(obj);
                weak
            })
            .collect();
        let held: Vec<_> = (0..40).map(|i| indexer.get_by_key(&format!("ns/o{i}")).expect("cached")).collect();
        indexer.replace(Vec::new());
        retire_elsewhere();
        for (i, obj) in held.iter().enumerate() {
            assert_eq!(obj.name_any(), format!("o{i}"));
        }
        drop(held);
        retire_elsewhere();
        assert!(freed_soon(|| weaks.iter().all(|weak| weak.upgrade().is_none())), "all freed");
    }

    #[test]
    fn handles_stay_valid_while_writers_replace_their_objects() {
        // Readers hold up to 20 handles each (beyond a thread's slots) while
        // a writer updates, deletes and replaces the same keys; every handle
        // must still read the object it was given.
        let indexer: Indexer<ConfigMap> = Indexer::new();
        let versioned = |i: usize, version: usize| {
            let mut obj = ConfigMap::clone(&cm("ns", &format!("o{i}"), None));
            obj.metadata.resource_version = Some(version.to_string());
            obj.data = Some([("version".to_owned(), version.to_string())].into());
            Arc::new(obj)
        };
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|reader| {
                let (indexer, stop) = (indexer.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut held = std::collections::VecDeque::new();
                    let mut lookups = 0usize;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) || lookups < 1000 {
                        let key = format!("ns/o{}", (lookups * 7 + reader) % 16);
                        if let Some(obj) = indexer.get_by_key(&key) {
                            held.push_back(obj);
                        }
                        if held.len() > 20 {
                            held.pop_front();
                        }
                        for obj in &held {
                            let data = obj.data.as_ref().expect("data");
                            assert_eq!(obj.metadata.resource_version.as_ref(), data.get("version"));
                        }
                        lookups += 1;
                    }
                })
            })
            .collect();
        for version in 0..3000 {
            let i = version % 16;
            match version % 7 {
                0 => indexer.replace((0..16).map(|i| versioned(i, version)).collect()),
                3 => drop(indexer.delete_by_key(&format!("ns/o{i}"))),
                _ => drop(indexer.update(versioned(i, version))),
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for reader in readers {
            reader.join().expect("reader");
        }
    }

    #[test]
    fn managed_fields_texts_stay_only_while_their_object_is_cached() {
        let indexer: Indexer<ConfigMap> = Indexer::new();
        let text = |manager: &str| Some(format!(r#"[{{"manager":"{manager}"}}]"#).into_boxed_str());
        let managers = |obj: &Arc<ConfigMap>| {
            indexer.managed_fields(obj).unwrap().map(|fields| fields.into_iter().map(|f| f.manager).collect::<Vec<_>>())
        };
        let (a1, a2, b) = (cm("ns", "a", None), cm("ns", "a", None), cm("ns", "b", None));
        indexer.raw().update_with_text(a1.clone(), text("one"));
        indexer.raw().update_with_text(b.clone(), text("bee"));
        assert_eq!(managers(&a1), Some(vec![Some("one".to_owned())]));
        let copy = indexer.with_managed_fields(&a1).unwrap();
        assert_eq!(
            (copy.metadata.managed_fields.map(|f| f.len()), a1.metadata.managed_fields.is_none()),
            (Some(1), true)
        );
        assert_eq!(managers(&cm("ns", "a", None)), None, "another object with the same key");

        indexer.raw().update_with_text(a2.clone(), text("two"));
        assert_eq!((managers(&a1), managers(&a2)), (None, Some(vec![Some("two".to_owned())])));
        indexer.update(a1.clone());
        assert_eq!((managers(&a1), managers(&a2)), (None, None), "a typed update keeps no text");

        // A relist keeps the text of an object it keeps, drops the others'.
        let c = cm("ns", "c", None);
        let texts: ManagedTexts = [(address(&c), text("sea").unwrap())].into_iter().collect();
        let items: Vec<ErasedObject> = vec![b.clone(), c.clone()];
        indexer.raw().replace_returning_old(&items, texts);
        assert_eq!(
            (managers(&b), managers(&c)),
            (Some(vec![Some("bee".to_owned())]), Some(vec![Some("sea".to_owned())]))
        );
        indexer.delete(&b);
        assert_eq!(managers(&b), None);
        assert_eq!(indexer.raw().read().managed.len(), 1, "no text outlives its object");

        // Two objects with one key in one relist: the later one stays, with
        // its text only.
        let (e1, e2) = (cm("ns", "e", None), cm("ns", "e", None));
        let texts: ManagedTexts =
            [(address(&e1), text("first").unwrap()), (address(&e2), text("second").unwrap())].into_iter().collect();
        indexer.raw().replace_returning_old(&[e1.clone() as ErasedObject, e2.clone()], texts);
        assert_eq!((managers(&e1), managers(&e2)), (None, Some(vec![Some("second".to_owned())])));
        assert_eq!(indexer.raw().read().managed.len(), 1);

        // Fields in the object itself come first; a text that does not
        // decode is an error, not an absence.
        let mut with_fields = (*cm("ns", "d", None)).clone();
        with_fields.metadata.managed_fields = Some(vec![Default::default()]);
        let d = Arc::new(with_fields);
        indexer.raw().update_with_text(d.clone(), Some("{".into()));
        assert_eq!(indexer.managed_fields(&d).unwrap(), Some(vec![Default::default()]));
        indexer.raw().update_with_text(c.clone(), Some("{".into()));
        assert!(indexer.managed_fields(&c).is_err());
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
        assert!(indexer.get_by_key("/x").is_none(), "no namespace before the slash names nothing");
        assert!(indexer.get_by_key("a/x/").is_none());

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

    /// An index function that panics (client-go's indexer panics too) leaves
    /// the cache as it was before the write: index-backed reads agree with
    /// `get` and `list`.
    #[test]
    fn an_index_function_that_panics_leaves_items_and_indices_in_step() {
        let fails_on_boom: IndexFunc<ConfigMap> = Arc::new(|cm: &ConfigMap| {
            let app = cm.labels().get("app").cloned();
            assert_ne!(app.as_deref(), Some("boom"), "the index function failed");
            app.into_iter().collect()
        });
        let indexer = Indexer::with_indexers([("app".to_owned(), fails_on_boom)].into());
        indexer.add(cm("a", "x", Some("web")));
        let fails = |f: &dyn Fn()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();
        let in_step = |indexer: &Indexer<ConfigMap>| {
            assert_eq!(indexer.list().len(), 1);
            assert_eq!(indexer.get_by_key("a/x").unwrap().labels()["app"], "web");
            assert_eq!(indexer.list_index_func_values(NAMESPACE_INDEX), ["a"]);
            assert_eq!(indexer.index_keys("app", "web").unwrap(), ["a/x"]);
            assert_eq!(indexer.list_index_func_values("app"), ["web"]);
        };
        assert!(fails(&|| {
            indexer.update(cm("b", "y", Some("boom")));
        }));
        assert!(indexer.get_by_key("b/y").is_none(), "a new object that could not be filed is not stored");
        in_step(&indexer);
        assert!(fails(&|| {
            indexer.update(cm("a", "x", Some("boom")));
        }));
        in_step(&indexer);
        assert!(fails(&|| indexer.replace(vec![cm("c", "z", Some("db")), cm("d", "w", Some("boom"))])));
        in_step(&indexer);
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
            // Namespaces where ordering by the key's text and by the
            // (namespace, name) pair differ ("a-b/.." < "a/.." < "ab/.."),
            // and cluster-scoped objects ("") beside them.
            const NAMESPACES: [&str; 4] = ["a", "a-b", "ab", ""];
            let make = |ns: u8, name: u8, app: Option<u8>| cm(NAMESPACES[ns as usize], &format!("n{name}"), app.map(|a| format!("app{a}")).as_deref());
            let key = |ns: u8, name: u8| meta_namespace_key(&*make(ns, name, None));
            for op in ops {
                match op {
                    Op::Upsert { ns, name, app } => {
                        let obj = make(ns, name, app);
                        let old = indexer.update(obj.clone());
                        let model_old = model.insert(meta_namespace_key(&*obj), obj);
                        prop_assert_eq!(old.is_some(), model_old.is_some());
                    }
                    Op::Delete { ns, name } => {
                        let key = key(ns, name);
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
            for ns in 0..NAMESPACES.len() as u8 {
                for name in 0..6 {
                    let key = key(ns, name);
                    let got = indexer.get_by_key(&key);
                    prop_assert_eq!(got.is_some(), model.contains_key(&key), "get_by_key({})", key);
                    if let (Some(got), Some(want)) = (got, model.get(&key)) {
                        prop_assert!(std::ptr::eq(Cached::as_ptr(&got), Arc::as_ptr(want)), "get_by_key({}) is the object stored last", key);
                    }
                }
            }
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
                    let objs = indexer.by_index(index, &value).unwrap();
                    prop_assert_eq!(objs.len(), keys.len());
                    for (obj, key) in objs.iter().zip(&keys) {
                        prop_assert!(Arc::ptr_eq(obj, &model[key]), "by_index({}, {}) holds the stored {}", index, value, key);
                    }
                    prop_assert_eq!(indexer.index_keys(index, &value).unwrap(), keys);
                }
            }
        }
    }
}
