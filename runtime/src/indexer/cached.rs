//! [`Cached`], the handle a lookup returns, and the hazard slots behind it.
//!
//! A lookup that returned an `Arc` had to count a reference in the object's
//! first cache line: among 100,000 cached objects that line is a cache miss,
//! taken by an atomic read-modify-write, and it made `get_by_key` slower than
//! client-go's, which hands back the pointer it stored without reading the
//! object. A [`Cached`] is that pointer plus a hazard slot: the lookup writes
//! the object's address into a slot of its thread's own block (a line the
//! thread keeps in its cache) while the table is locked for reading, and
//! nothing is written to the object.
//!
//! The table's own reference keeps a looked-up object alive until the table
//! gives it away (an update replaces it, a delete or replace removes it, the
//! indexer is dropped). Each of those happens after any lookup that found
//! the object (under the write lock, or once no lookup can reach the table)
//! and calls [`retire`] (or [`retire_all`]) before the reference can go:
//! when a slot holds the object's address, a clone of the reference is kept
//! in a list of retired objects, dropped by a later retirement (of any
//! indexer) that finds no slot holding it any more; while some wait, every
//! retirement takes the list's lock and reads the slots a second time.
//! Unlike an epoch, a held handle keeps only its own object, not every
//! object retired after it.
//!
//! Each thread that looks objects up owns one block of [`SLOTS`] slots,
//! handed to another thread when it exits; a lookup in a thread whose slots
//! are all held (or that is exiting) counts a reference in the object
//! instead, as an `Arc` clone does. A retirement reads every block's mask
//! of slots in use, and the slots it marks: one or two cache lines per
//! block, and there are as many blocks as threads have looked up at once.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::address;
use crate::object::ErasedObject;

/// A cached object as a lookup hands it out: it dereferences to the object,
/// and keeps it alive like an `Arc` does, however the cache changes, until
/// it is dropped.
///
/// Looking an object up writes nothing to the object's memory (see the
/// module's documentation in the source): a `Cached` holds the object's
/// address and a slot of the thread's own that says the object is in use,
/// which is what makes [`Indexer::get_by_key`](super::Indexer::get_by_key)
/// as cheap as client-go's `GetByKey`. Up to 14 lookups per thread are held
/// this way at once (fewer while handles a thread that has exited gave
/// away hold slots of the block it handed on); beyond that, and for
/// clones, a `Cached` counts a reference in the object like an `Arc`.
///
/// Objects are shared read-only with the cache and every other reader:
/// clone the object (`K::clone(&cached)`) before changing it, or take an
/// `Arc` with [`to_arc`](Self::to_arc) to keep it in a structure that wants
/// one.
pub struct Cached<K> {
    obj: NonNull<K>,
    /// The hazard slot holding the object's address, or `None` when this
    /// handle counts a reference in the object instead.
    slot: Option<&'static AtomicUsize>,
    /// A `Cached` owns a share of a `K` as an `Arc<K>` does: the same
    /// `Send`, `Sync` and drop-check rules.
    kind: PhantomData<Arc<K>>,
}

// SAFETY: a `Cached<K>` gives shared access to a `K` from any thread that
// holds it and may be the last holder to let go of it, exactly as an `Arc<K>`
// does; its slot is an atomic that any thread may clear.
unsafe impl<K: Send + Sync> Send for Cached<K> {}
// SAFETY: as for `Send`; `&Cached<K>` gives only `&K`.
unsafe impl<K: Send + Sync> Sync for Cached<K> {}

impl<K> Cached<K> {
    /// A handle on the object at `obj`.
    ///
    /// # Safety
    /// `obj` is `Arc::as_ptr` of an `Arc<K>` (so it may reach the counts)
    /// stored in an indexer's table, and the caller holds that table's read
    /// lock: the table calls [`retire`] for it under its write lock, or
    /// once no lookup can reach the table any more, before its reference
    /// can go.
    #[inline]
    pub(crate) unsafe fn found(obj: NonNull<K>) -> Self {
        let slot = protect(obj.as_ptr() as usize);
        if slot.is_none() {
            // SAFETY: `obj` is an `Arc<K>`'s object, alive while the lock is
            // held (the caller's contract).
            unsafe { Arc::increment_strong_count(obj.as_ptr()) };
        }
        Self { obj, slot, kind: PhantomData }
    }

    /// An `Arc` of the object, counting a reference in it (which a lookup
    /// does not do).
    pub fn to_arc(&self) -> Arc<K> {
        // SAFETY: the object came from an `Arc<K>` and is alive while `self`
        // is (see `found`): one more count, handed to the new `Arc`.
        unsafe {
            Arc::increment_strong_count(self.obj.as_ptr());
            Arc::from_raw(self.obj.as_ptr())
        }
    }

    /// Whether `a` and `b` are handles on the same object.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        a.obj == b.obj
    }

    /// The object's address: the same as `Arc::as_ptr` of an `Arc` of it.
    pub fn as_ptr(this: &Self) -> *const K {
        this.obj.as_ptr()
    }
}

impl<K> Deref for Cached<K> {
    type Target = K;

    #[inline]
    fn deref(&self) -> &K {
        // SAFETY: the object is alive while `self` is (see `found`).
        unsafe { self.obj.as_ref() }
    }
}

impl<K> AsRef<K> for Cached<K> {
    fn as_ref(&self) -> &K {
        self
    }
}

impl<K> std::borrow::Borrow<K> for Cached<K> {
    fn borrow(&self) -> &K {
        self
    }
}

impl<K> Clone for Cached<K> {
    /// Another handle on the object, counting a reference in it: a slot of
    /// this thread taken now might be missed by a retirement already under
    /// way, which this handle's slot (or count) is not.
    fn clone(&self) -> Self {
        // SAFETY: the object came from an `Arc<K>` and is alive while `self`
        // is; the new handle owns the count taken here.
        unsafe { Arc::increment_strong_count(self.obj.as_ptr()) };
        Self { obj: self.obj, slot: None, kind: PhantomData }
    }
}

impl<K> Drop for Cached<K> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            // Release: every read of the object through this handle comes
            // before a retirement that sees the slot cleared frees it.
            Some(slot) => slot.store(0, Ordering::Release),
            // SAFETY: this handle owns one count of the `Arc<K>`'s object.
            None => unsafe { Arc::decrement_strong_count(self.obj.as_ptr()) },
        }
    }
}

impl<K> From<Cached<K>> for Arc<K> {
    fn from(cached: Cached<K>) -> Self {
        cached.to_arc()
    }
}

impl<K: fmt::Debug> fmt::Debug for Cached<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        K::fmt(self, f)
    }
}

impl<K: PartialEq> PartialEq for Cached<K> {
    fn eq(&self, other: &Self) -> bool {
        K::eq(self, other)
    }
}

impl<K: Eq> Eq for Cached<K> {}

impl<K: PartialOrd> PartialOrd for Cached<K> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        K::partial_cmp(self, other)
    }
}

impl<K: Ord> Ord for Cached<K> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        K::cmp(self, other)
    }
}

impl<K: std::hash::Hash> std::hash::Hash for Cached<K> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        K::hash(self, state)
    }
}

impl<K: fmt::Display> fmt::Display for Cached<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        K::fmt(self, f)
    }
}

impl<K: serde::Serialize> serde::Serialize for Cached<K> {
    /// The object, as an `Arc` of it serializes.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        K::serialize(self, serializer)
    }
}

/// Hazard slots per thread: as many as fit a block in 128 bytes.
const SLOTS: usize = 14;

/// One thread's hazard slots: 128 bytes, two cache lines of their own.
#[repr(align(128))]
struct Block {
    /// Bit `i` set: slot `i` may hold an address. Written by the owning
    /// thread only, which sets a bit before it fills the slot and clears
    /// it only after it has seen the slot cleared.
    in_use: AtomicU32,
    /// Whether a live thread owns the block.
    owned: AtomicBool,
    slots: [AtomicUsize; SLOTS],
    /// The block published before this one (set before it is published).
    next: AtomicPtr<Block>,
}

/// Every block ever made; blocks are never freed, only handed on.
static BLOCKS: AtomicPtr<Block> = AtomicPtr::new(std::ptr::null_mut());

/// A block no live thread owns, or a new one.
#[cold]
fn claim() -> &'static Block {
    let mut at = BLOCKS.load(Ordering::Acquire);
    // SAFETY: published blocks are leaked, never freed.
    while let Some(block) = unsafe { at.as_ref() } {
        if !block.owned.load(Ordering::Relaxed)
            && block.owned.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
        {
            return block;
        }
        at = block.next.load(Ordering::Acquire);
    }
    let block: &'static Block = Box::leak(Box::new(Block {
        in_use: AtomicU32::new(0),
        owned: AtomicBool::new(true),
        slots: Default::default(),
        next: AtomicPtr::new(std::ptr::null_mut()),
    }));
    let mut head = BLOCKS.load(Ordering::Relaxed);
    loop {
        block.next.store(head, Ordering::Relaxed);
        let new = std::ptr::from_ref(block).cast_mut();
        match BLOCKS.compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return block,
            Err(now) => head = now,
        }
    }
}

/// The calling thread's block and the slot its next lookup tries first.
struct Local {
    block: Cell<Option<&'static Block>>,
    next: Cell<usize>,
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(block) = self.block.get() {
            // Release: the next owner reads the masks this thread wrote.
            block.owned.store(false, Ordering::Release);
        }
    }
}

thread_local! {
    static LOCAL: Local = const { Local { block: Cell::new(None), next: Cell::new(0) } };
}

/// A slot of the calling thread's block, now holding `addr`; `None` when
/// every slot is held or the thread is exiting.
#[inline]
fn protect(addr: usize) -> Option<&'static AtomicUsize> {
    LOCAL.try_with(|local| local.protect(addr)).ok().flatten()
}

impl Local {
    #[inline]
    fn protect(&self, addr: usize) -> Option<&'static AtomicUsize> {
        if let Some(block) = self.block.get() {
            // The slot of the last lookup, its bit still set, is free again
            // once that handle is gone: the usual case.
            let slot = &block.slots[self.next.get()];
            // Acquire: the handle that cleared the slot read its object
            // before a retirement that sees this slot's next address (or
            // its bit cleared) may free that object.
            if slot.load(Ordering::Acquire) == 0 {
                // The read lock's release publishes this store to the
                // writer that retires the object.
                slot.store(addr, Ordering::Release);
                return Some(slot);
            }
        }
        self.protect_elsewhere(addr)
    }

    /// [`protect`](Self::protect) in a slot other than the last one's,
    /// clearing the bits of slots seen free on the way.
    #[cold]
    fn protect_elsewhere(&self, addr: usize) -> Option<&'static AtomicUsize> {
        let block = match self.block.get() {
            Some(block) => block,
            None => {
                let block = claim();
                self.block.set(Some(block));
                block
            }
        };
        let mut held = 0u32;
        let mut free = None;
        for (at, slot) in block.slots.iter().enumerate() {
            // Acquire: as in `protect`.
            if slot.load(Ordering::Acquire) != 0 {
                held |= 1 << at;
            } else if free.is_none() {
                free = Some(at);
            }
        }
        let at = free?;
        block.in_use.store(held | 1 << at, Ordering::Release);
        self.next.set(at);
        let slot = &block.slots[at];
        slot.store(addr, Ordering::Release);
        Some(slot)
    }
}

/// Calls `f` with every address a hazard slot holds.
fn each_hazard(mut f: impl FnMut(usize)) {
    let mut at = BLOCKS.load(Ordering::Acquire);
    // SAFETY: published blocks are leaked, never freed.
    while let Some(block) = unsafe { at.as_ref() } {
        let mut in_use = block.in_use.load(Ordering::Acquire);
        while in_use != 0 {
            let slot = in_use.trailing_zeros() as usize;
            in_use &= in_use - 1;
            // Acquire: pairs with a handle's release in `drop`.
            let addr = block.slots[slot].load(Ordering::Acquire);
            if addr != 0 {
                f(addr);
            }
        }
        at = block.next.load(Ordering::Acquire);
    }
}

/// Retired objects some slot still held when they left their table.
static RETIRED: Mutex<Vec<ErasedObject>> = Mutex::new(Vec::new());

/// The length of [`RETIRED`], read without its lock.
static RETIRED_LEN: AtomicUsize = AtomicUsize::new(0);

/// Called by a table for `obj` before its reference to it can go: keeps the
/// object alive while a handle from a lookup holds it.
pub(crate) fn retire(obj: &ErasedObject) {
    let addr = address(obj);
    let mut held = false;
    each_hazard(|hazard| held |= hazard == addr);
    keep_and_reclaim(held.then(|| obj.clone()).into_iter().collect());
}

/// [`retire`] for many objects, reading the slots once.
pub(crate) fn retire_all<'a>(objs: impl Iterator<Item = &'a ErasedObject>) {
    let mut hazards = Vec::new();
    each_hazard(|hazard| hazards.push(hazard));
    if hazards.is_empty() {
        keep_and_reclaim(Vec::new());
        return;
    }
    hazards.sort_unstable();
    let kept = objs.filter(|obj| hazards.binary_search(&address(obj)).is_ok()).cloned().collect();
    keep_and_reclaim(kept);
}

/// Adds `kept` to the retired objects and drops those no slot holds any
/// more. An object retired while this runs elsewhere waits for the next
/// retirement.
fn keep_and_reclaim(kept: Vec<ErasedObject>) {
    if kept.is_empty() && RETIRED_LEN.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut retired = RETIRED.lock().unwrap_or_else(PoisonError::into_inner);
    retired.extend(kept);
    let mut hazards = Vec::new();
    each_hazard(|hazard| hazards.push(hazard));
    hazards.sort_unstable();
    let mut freed = Vec::new();
    let mut at = 0;
    while at < retired.len() {
        if hazards.binary_search(&address(&retired[at])).is_ok() {
            at += 1;
        } else {
            freed.push(retired.swap_remove(at));
        }
    }
    RETIRED_LEN.store(retired.len(), Ordering::Relaxed);
    drop(retired);
    // The objects' own drops run outside the lock.
    drop(freed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_reuses_the_slot_of_its_last_lookup() {
        let first = protect(0x1000).unwrap();
        first.store(0, Ordering::Release);
        let second = protect(0x2000).unwrap();
        assert!(std::ptr::eq(first, second));
        second.store(0, Ordering::Release);
    }

    #[test]
    fn a_thread_holds_its_blocks_slots_then_none() {
        std::thread::spawn(|| {
            // A block handed on from an exited thread may still have slots
            // held by handles that thread gave away: at most 14 are free.
            let mut held = Vec::new();
            while let Some(slot) = protect((held.len() + 1) * 8) {
                held.push(slot);
            }
            assert!((1..=SLOTS).contains(&held.len()), "{} slots", held.len());
            held[0].store(0, Ordering::Release);
            let again = protect(0x9000).expect("a freed slot");
            again.store(0, Ordering::Release);
            for slot in held {
                slot.store(0, Ordering::Release);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_handle_compares_hashes_shows_and_serializes_as_its_object() {
        let indexer = crate::indexer::Indexer::<k8s_openapi::api::core::v1::ConfigMap>::new();
        let mut cm = k8s_openapi::api::core::v1::ConfigMap::default();
        cm.metadata.name = Some("a".into());
        indexer.add(Arc::new(cm.clone()));
        let found = indexer.get_by_key("a").expect("cached");
        assert_eq!(serde_json::to_value(&found).unwrap(), serde_json::to_value(&cm).unwrap());
        assert_eq!(format!("{found:?}"), format!("{cm:?}"));
        assert!(found == found.clone() && Cached::ptr_eq(&found, &indexer.get_by_key("a").unwrap()));
        assert_eq!(*found.to_arc(), cm);
        // Order, hash and text as the object's own (a `String` has them all).
        let (x, y) = (Arc::new("x".to_owned()), Arc::new("y".to_owned()));
        // SAFETY: `x` and `y` are `Arc`s that outlive the handles.
        let (hx, hy) = unsafe { (Cached::found(arc_ptr(&x)), Cached::found(arc_ptr(&y))) };
        assert!(hx < hy && hx.cmp(&hy) == std::cmp::Ordering::Less);
        assert_eq!(format!("{hx} {hy:?}"), "x \"y\"");
        let hash = |value: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            value(&mut hasher);
            std::hash::Hasher::finish(&hasher)
        };
        assert_eq!(hash(&|h| std::hash::Hash::hash(&hx, h)), hash(&|h| std::hash::Hash::hash("x", h)));
        drop((hx, hy));
    }

    fn arc_ptr<T>(arc: &Arc<T>) -> NonNull<T> {
        NonNull::new(Arc::as_ptr(arc).cast_mut()).expect("an Arc's object")
    }

    #[test]
    fn a_block_is_one_128_byte_line_pair() {
        assert_eq!(std::mem::size_of::<Block>(), 128);
    }

    #[test]
    fn a_block_outlives_its_thread_and_is_claimed_again() {
        let addr = 0xdead_0000;
        let slot = std::thread::spawn(move || protect(addr).unwrap()).join().unwrap();
        let mut seen = false;
        each_hazard(|hazard| seen |= hazard == addr);
        assert!(seen, "a handle moved out of an exited thread still holds its slot");
        slot.store(0, Ordering::Release);
        let mut seen = false;
        each_hazard(|hazard| seen |= hazard == addr);
        assert!(!seen);
    }
}
