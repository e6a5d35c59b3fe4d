//! What an informer tells its handlers: the `ResourceEventHandler` trait,
//! a closure-based implementation and a filtering wrapper.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::object::{ErasedObject, downcast};

/// An object the informer saw disappear without seeing its deletion: it was
/// cached, but missing from a relist (client-go's
/// `cache.DeletedFinalStateUnknown`). `obj` is the last state the cache had.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The object's `namespace/name` key.
    pub key: String,
    /// The last cached state of the object; it may be stale.
    pub obj: Arc<K>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        Self { key: self.key.clone(), obj: self.obj.clone() }
    }
}

/// What [`ResourceEventHandler::on_delete`] receives.
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// The deletion was watched: the object's final state as the server sent it.
    Object(Arc<K>),
    /// The deletion happened while the watch was down and was noticed on a
    /// relist.
    Tombstone(DeletedFinalStateUnknown<K>),
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(obj.clone()),
            Self::Tombstone(tombstone) => Self::Tombstone(tombstone.clone()),
        }
    }
}

impl<K> DeletedObject<K> {
    /// The deleted object, whichever way the deletion was noticed.
    pub fn object(&self) -> &Arc<K> {
        match self {
            Self::Object(obj) => obj,
            Self::Tombstone(tombstone) => &tombstone.obj,
        }
    }

    /// The deleted object, whichever way the deletion was noticed.
    pub fn into_object(self) -> Arc<K> {
        match self {
            Self::Object(obj) => obj,
            Self::Tombstone(tombstone) => tombstone.obj,
        }
    }

    /// Whether the deletion was noticed on a relist rather than watched.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Tombstone(_))
    }
}

/// A deletion as the informer's dispatch carries it, for any kind.
#[derive(Clone)]
pub(crate) enum Deleted {
    Object(ErasedObject),
    Tombstone { key: String, obj: ErasedObject },
}

impl Deleted {
    /// The deletion as a handler of `K` sees it.
    fn typed<K: Send + Sync + 'static>(self) -> DeletedObject<K> {
        match self {
            Deleted::Object(obj) => DeletedObject::Object(downcast(obj)),
            Deleted::Tombstone { key, obj } => {
                DeletedObject::Tombstone(DeletedFinalStateUnknown { key, obj: downcast(obj) })
            }
        }
    }
}

/// A handler as the informer's dispatch calls it, for any kind: the
/// dispatch is compiled once, [`Typed`] once per kind and handler.
pub(crate) trait ErasedHandler: Send + 'static {
    fn on_add(&mut self, obj: ErasedObject, is_in_initial_list: bool);
    fn on_update(&mut self, old: ErasedObject, new: ErasedObject);
    fn on_delete(&mut self, obj: Deleted);
}

/// A handler of `K`, called with the `K`s the informer holds.
pub(crate) struct Typed<K, H> {
    handler: H,
    kind: PhantomData<fn() -> K>,
}

impl<K, H> Typed<K, H> {
    pub(crate) fn new(handler: H) -> Self {
        Typed { handler, kind: PhantomData }
    }
}

impl<K: Send + Sync + 'static, H: ResourceEventHandler<K>> ErasedHandler for Typed<K, H> {
    fn on_add(&mut self, obj: ErasedObject, is_in_initial_list: bool) {
        self.handler.on_add(downcast(obj), is_in_initial_list);
    }

    fn on_update(&mut self, old: ErasedObject, new: ErasedObject) {
        self.handler.on_update(downcast(old), downcast(new));
    }

    fn on_delete(&mut self, obj: Deleted) {
        self.handler.on_delete(obj.typed());
    }
}

/// Receives the changes an informer observes, in order, one at a time
/// (client-go's `ResourceEventHandler`).
///
/// Each handler runs on its own thread with its own unbounded queue, so a
/// slow or even blocking handler delays only itself. The thread is in the
/// informer's Tokio runtime (`tokio::spawn`, `Handle::current()` and a work
/// queue's `add_after` work there), but it is not a worker of it: block
/// freely, do not `block_on`. The usual handler just
/// computes a key and adds it to a work queue. Objects are shared with the
/// cache: never mutate them (clone first).
pub trait ResourceEventHandler<K>: Send + 'static {
    /// An object appeared. `is_in_initial_list` is true for objects from the
    /// informer's first list, and for the replay of the cache a handler gets
    /// when it is added to a running informer.
    fn on_add(&mut self, _obj: Arc<K>, _is_in_initial_list: bool) {}

    /// An object changed. Also called on periodic resyncs, with `old` and
    /// `new` identical. A relist (after a watch error) calls it only for
    /// objects whose resourceVersion changed; client-go calls it for every
    /// object of the relist, changed or not (an intended difference: an
    /// unchanged object needs no new reconcile, and resyncs still come on
    /// each handler's clock).
    fn on_update(&mut self, _old: Arc<K>, _new: Arc<K>) {}

    /// An object was deleted; see [`DeletedObject`].
    fn on_delete(&mut self, _obj: DeletedObject<K>) {}
}

type AddFn<K> = Box<dyn FnMut(Arc<K>, bool) + Send>;
type UpdateFn<K> = Box<dyn FnMut(Arc<K>, Arc<K>) + Send>;
type DeleteFn<K> = Box<dyn FnMut(DeletedObject<K>) + Send>;

/// A [`ResourceEventHandler`] made of closures; unset ones ignore their event
/// (client-go's `ResourceEventHandlerFuncs`).
///
/// ```
/// # use std::sync::Arc;
/// # use codegen_runtime::informer::ResourceEventHandlerFuncs;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// let handler = ResourceEventHandlerFuncs::<ConfigMap>::new()
///     .on_add(|cm, _initial| println!("added {:?}", cm.metadata.name))
///     .on_delete(|deleted| println!("deleted {:?}", deleted.object().metadata.name));
/// ```
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        Self { add: None, update: None, delete: None }
    }
}

impl<K> fmt::Debug for ResourceEventHandlerFuncs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEventHandlerFuncs")
            .field("on_add", &self.add.is_some())
            .field("on_update", &self.update.is_some())
            .field("on_delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores everything until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the closure called for [`ResourceEventHandler::on_add`].
    pub fn on_add(mut self, f: impl FnMut(Arc<K>, bool) + Send + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the closure called for [`ResourceEventHandler::on_update`].
    pub fn on_update(mut self, f: impl FnMut(Arc<K>, Arc<K>) + Send + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the closure called for [`ResourceEventHandler::on_delete`].
    pub fn on_delete(mut self, f: impl FnMut(DeletedObject<K>) + Send + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&mut self, obj: Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &mut self.add {
            f(obj, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: Arc<K>, new: Arc<K>) {
        if let Some(f) = &mut self.update {
            f(old, new);
        }
    }

    fn on_delete(&mut self, obj: DeletedObject<K>) {
        if let Some(f) = &mut self.delete {
            f(obj);
        }
    }
}

/// Passes on only events about objects that match a filter, translating
/// updates that cross the filter into adds and deletes (client-go's
/// `FilteringResourceEventHandler`).
pub struct FilteringResourceEventHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send>,
    handler: H,
}

impl<K, H: fmt::Debug> fmt::Debug for FilteringResourceEventHandler<K, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteringResourceEventHandler").field("handler", &self.handler).finish()
    }
}

impl<K, H> FilteringResourceEventHandler<K, H> {
    /// Wraps `handler`, showing it only objects for which `filter` is true.
    pub fn new(filter: impl Fn(&K) -> bool + Send + 'static, handler: H) -> Self {
        Self { filter: Box::new(filter), handler }
    }
}

impl<K, H> ResourceEventHandler<K> for FilteringResourceEventHandler<K, H>
where
    K: Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    fn on_add(&mut self, obj: Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(&obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }

    fn on_update(&mut self, old: Arc<K>, new: Arc<K>) {
        match ((self.filter)(&old), (self.filter)(&new)) {
            (true, true) => self.handler.on_update(old, new),
            (false, true) => self.handler.on_add(new, false),
            (true, false) => self.handler.on_delete(DeletedObject::Object(old)),
            (false, false) => {}
        }
    }

    fn on_delete(&mut self, obj: DeletedObject<K>) {
        if (self.filter)(obj.object()) {
            self.handler.on_delete(obj);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn funcs_call_only_what_is_set() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (a, d) = (seen.clone(), seen.clone());
        let mut handler = ResourceEventHandlerFuncs::<u32>::new()
            .on_add(move |obj, initial| a.lock().unwrap().push(format!("add {obj} {initial}")))
            .on_delete(move |obj| d.lock().unwrap().push(format!("delete {}", obj.object())));
        ResourceEventHandler::on_add(&mut handler, Arc::new(1), true);
        ResourceEventHandler::on_update(&mut handler, Arc::new(1), Arc::new(2));
        ResourceEventHandler::on_delete(
            &mut handler,
            DeletedObject::Tombstone(DeletedFinalStateUnknown { key: "k".into(), obj: Arc::new(2) }),
        );
        assert_eq!(*seen.lock().unwrap(), ["add 1 true", "delete 2"]);
    }

    #[test]
    fn filtering_handler_turns_crossings_into_adds_and_deletes() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (a, u, d) = (seen.clone(), seen.clone(), seen.clone());
        let inner = ResourceEventHandlerFuncs::<u32>::new()
            .on_add(move |obj, initial| a.lock().unwrap().push(format!("add {obj} {initial}")))
            .on_update(move |old, new| u.lock().unwrap().push(format!("update {old}->{new}")))
            .on_delete(move |obj| d.lock().unwrap().push(format!("delete {} {}", obj.object(), obj.is_tombstone())));
        let mut handler = FilteringResourceEventHandler::new(|n: &u32| n.is_multiple_of(2), inner);
        handler.on_add(Arc::new(1), true);
        handler.on_add(Arc::new(2), true);
        handler.on_update(Arc::new(2), Arc::new(4));
        handler.on_update(Arc::new(4), Arc::new(5));
        handler.on_update(Arc::new(5), Arc::new(6));
        handler.on_update(Arc::new(7), Arc::new(9));
        handler.on_delete(DeletedObject::Object(Arc::new(3)));
        handler.on_delete(DeletedObject::Tombstone(DeletedFinalStateUnknown { key: "k".into(), obj: Arc::new(6) }));
        assert_eq!(
            *seen.lock().unwrap(),
            ["add 2 true", "update 2->4", "delete 4 false", "add 6 false", "delete 6 true"]
        );
    }
}
