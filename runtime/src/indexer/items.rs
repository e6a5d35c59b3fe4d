//! The indexer's table of objects: open addressing with linear probing,
//! each slot one cache line holding the object and its key's text, and
//! beside the slots one byte per slot with seven bits of the key's hash.
//!
//! A lookup hashes the key, scans the bytes (128 KiB for 100,000 objects,
//! so they mostly stay in the core's cache) for its own, reads the one slot
//! whose byte matches (rarely another) and compares the key with the text
//! kept in the slot, so it touches the object only to hand back a counted
//! reference to it. Keys too long to keep in a slot are compared with the
//! object's own namespace and name.
//!
//! Which slot to read is decided by the bytes alone, so the branches of a
//! lookup rarely wait for a slot to arrive from memory, and the processor
//! goes on to the next lookup of a loop meanwhile: with the probe run
//! followed slot by slot instead, a lookup among 100,000 objects took about
//! a fifth longer (×1.15 to ×1.22, medians of 21 alternating rounds). The
//! parts of a lookup are `#[inline(always)]` for the same reason: with
//! calls between them (hashing, probing, comparing) it took about a third
//! longer.

use std::hash::{BuildHasher, Hash, Hasher};

use super::{KeyParts, parts_of};
use crate::object::ErasedObject;

/// Bytes of key text a slot holds: namespace and name, without the `/`.
const INLINE: usize = 40;

/// [`Head::ns_len`] of a key longer than [`INLINE`].
const LONG: u8 = u8::MAX;

/// The byte of an empty slot in [`Items::tags`].
const EMPTY: u8 = 0;

/// The byte kept in [`Items::tags`] for a key of `hash`: its top seven
/// bits (the low ones choose the slot) and a high bit, never [`EMPTY`].
#[inline(always)]
fn tag_of(hash: u32) -> u8 {
    0x80 | (hash >> 25) as u8
}

/// One place of the table, aligned so that it fills one cache line.
#[repr(align(64))]
pub(crate) struct Slot {
    obj: ErasedObject,
    head: Head,
    /// The text of namespace and name side by side, zero-padded, in words
    /// (compared in a few loads, without a call); zero for a [`LONG`] key.
    words: [u64; INLINE / 8],
}

/// What a slot keeps of its key besides the text.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Head {
    /// The low 32 bits of the key's hash (foldhash mixes them as well as the
    /// high ones): where the slot belongs (`hash & mask`) and a quick test
    /// before the text is compared.
    hash: u32,
    /// Length of the namespace at the start of the text, or [`LONG`].
    ns_len: u8,
    /// Length of the name after the namespace.
    name_len: u8,
}

/// A key being looked up, as slots keep it, made once per lookup.
struct Probe<'a> {
    head: Head,
    words: [u64; INLINE / 8],
    parts: KeyParts<'a>,
}

impl<'a> Probe<'a> {
    #[inline(always)]
    fn new(hash: u32, (ns, name): KeyParts<'a>) -> Self {
        let mut probe =
            Self { head: Head { hash, ns_len: LONG, name_len: 0 }, words: [0; INLINE / 8], parts: (ns, name) };
        if ns.len() + name.len() <= INLINE {
            let mut text = [0; INLINE];
            text[..ns.len()].copy_from_slice(ns.as_bytes());
            text[ns.len()..ns.len() + name.len()].copy_from_slice(name.as_bytes());
            for (word, bytes) in probe.words.iter_mut().zip(text.chunks_exact(8)) {
                *word = u64::from_ne_bytes(bytes.try_into().unwrap_or_default());
            }
            // Both fit in a `u8`: together they are at most `INLINE`.
            probe.head.ns_len = ns.len() as u8;
            probe.head.name_len = name.len() as u8;
        }
        probe
    }
}

impl Slot {
    #[inline(always)]
    fn has_key(&self, probe: &Probe<'_>) -> bool {
        self.head == probe.head
            && self.words == probe.words
            && (self.head.ns_len != LONG || parts_of(&*self.obj) == probe.parts)
    }
}

/// The stored objects, each under the key read from the object itself.
pub(crate) struct Items {
    /// A power of two long (or empty), never fuller than
    /// [`fits`](Self::fits) allows: a probe always ends at an empty slot.
    slots: Box<[Option<Slot>]>,
    /// [`tag_of`] the key in each slot, [`EMPTY`] for an empty one.
    tags: Box<[u8]>,
    len: usize,
    hasher: foldhash::fast::RandomState,
}

impl Items {
    pub(super) fn with_capacity(capacity: usize) -> Self {
        let mut items = Self { slots: Box::default(), tags: Box::default(), len: 0, hasher: Default::default() };
        if capacity > 0 {
            (items.slots, items.tags) = empty_slots(slots_for(capacity));
        }
        items
    }

    /// Whether `len` objects fit in `slots` places: at most 13 in 16 are
    /// taken, so that probes stay short.
    fn fits(len: usize, slots: usize) -> bool {
        len <= slots / 16 * 13
    }

    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The key `parts` as slots keep it, and the low 32 bits of its hash
    /// (foldhash mixes them as well as the high ones). The hasher is driven
    /// here rather than through `BuildHasher::hash_one`, which the compiler
    /// left as a call of its own in the lookups of a user's crate.
    #[inline(always)]
    #[allow(clippy::manual_hash_one)]
    fn probe<'a>(&self, parts: KeyParts<'a>) -> Probe<'a> {
        let mut hasher = self.hasher.build_hasher();
        parts.hash(&mut hasher);
        Probe::new(hasher.finish() as u32, parts)
    }

    /// The index of the slot holding the key of `probe`, or else that of
    /// the empty slot that ended the search, where the key would go
    /// (`None` in an empty table).
    #[inline(always)]
    fn search(&self, probe: &Probe<'_>) -> Result<usize, Option<usize>> {
        if self.slots.is_empty() {
            return Err(None);
        }
        let mask = self.mask();
        let tag = tag_of(probe.head.hash);
        let mut at = probe.head.hash as usize & mask;
        loop {
            let here = self.tags[at];
            if here == EMPTY {
                return Err(Some(at));
            }
            if here == tag && self.slots[at].as_ref().is_some_and(|slot| slot.has_key(probe)) {
                return Ok(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// Puts `slot` at `at`, an empty place.
    fn set(&mut self, at: usize, slot: Slot) {
        self.tags[at] = tag_of(slot.head.hash);
        self.slots[at] = Some(slot);
    }

    /// Empties the place `at`.
    fn take(&mut self, at: usize) -> Option<Slot> {
        self.tags[at] = EMPTY;
        self.slots[at].take()
    }

    #[inline(always)]
    pub(super) fn get(&self, parts: KeyParts<'_>) -> Option<&ErasedObject> {
        let at = self.search(&self.probe(parts)).ok()?;
        self.slots[at].as_ref().map(|slot| &slot.obj)
    }

    /// Stores `obj`, returning the object stored under its key before.
    pub(super) fn insert(&mut self, obj: ErasedObject) -> Option<ErasedObject> {
        let probe = self.probe(parts_of(&*obj));
        let vacant = match self.search(&probe) {
            Ok(at) => {
                let slot = self.slots[at].as_mut().expect("found slots are taken");
                return Some(std::mem::replace(&mut slot.obj, obj));
            }
            Err(vacant) => vacant,
        };
        let Probe { head, words, .. } = probe;
        let slot = Slot { obj, head, words };
        match vacant {
            // The first empty slot from where the key belongs is where
            // `place` would put it.
            Some(at) if Self::fits(self.len + 1, self.slots.len()) => self.set(at, slot),
            _ => {
                self.grow();
                self.place(slot);
            }
        }
        self.len += 1;
        None
    }

    /// Puts `slot` in the first free place from where it belongs.
    fn place(&mut self, slot: Slot) {
        let mask = self.mask();
        let mut at = slot.head.hash as usize & mask;
        while self.tags[at] != EMPTY {
            at = (at + 1) & mask;
        }
        self.set(at, slot);
    }

    fn grow(&mut self) {
        let (slots, tags) = empty_slots(slots_for(self.len + 1).max(self.slots.len() * 2));
        self.tags = tags;
        let old = std::mem::replace(&mut self.slots, slots);
        for slot in old.into_vec().into_iter().flatten() {
            self.place(slot);
        }
    }

    /// Removes and returns the object stored under `parts`.
    pub(crate) fn remove(&mut self, parts: KeyParts<'_>) -> Option<ErasedObject> {
        let at = self.search(&self.probe(parts)).ok()?;
        let removed = self.take(at).map(|slot| slot.obj);
        self.len -= 1;
        // Moves back the slots after the hole that may sit there, so that
        // no probe stops at the hole before reaching them.
        let mask = self.mask();
        let (mut hole, mut next) = (at, at);
        loop {
            next = (next + 1) & mask;
            let Some(slot) = &self.slots[next] else { break };
            let home = slot.head.hash as usize & mask;
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                if let Some(slot) = self.take(next) {
                    self.set(hole, slot);
                }
                hole = next;
            }
        }
        removed
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &ErasedObject> {
        self.slots.iter().flatten().map(|slot| &slot.obj)
    }
}

impl IntoIterator for Items {
    type Item = ErasedObject;
    type IntoIter = std::iter::FlatMap<
        std::vec::IntoIter<Option<Slot>>,
        Option<ErasedObject>,
        fn(Option<Slot>) -> Option<ErasedObject>,
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.slots.into_vec().into_iter().flat_map(|slot| slot.map(|slot| slot.obj))
    }
}

/// The number of slots (a power of two) that holds `len` objects.
fn slots_for(len: usize) -> usize {
    let mut slots = 16;
    while !Items::fits(len, slots) {
        slots *= 2;
    }
    slots
}

/// `len` empty slots and their bytes in [`Items::tags`].
fn empty_slots(len: usize) -> (Box<[Option<Slot>]>, Box<[u8]>) {
    (std::iter::repeat_with(|| None).take(len).collect(), vec![EMPTY; len].into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn object(ns: &str, name: &str, version: u32) -> ErasedObject {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                namespace: (!ns.is_empty()).then(|| ns.to_owned()),
                name: Some(name.to_owned()),
                resource_version: Some(version.to_string()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        })
    }

    fn version(obj: &ErasedObject) -> &str {
        obj.object_meta().resource_version.as_deref().unwrap_or_default()
    }

    /// Keys short and long (kept in the slot, compared on the object),
    /// namespaced and cluster-scoped, and pairs a naive concatenation
    /// would confuse (`ab` + `c` against `a` + `bc`).
    fn key(i: usize) -> (String, String) {
        let ns = match i % 4 {
            0 => String::new(),
            1 => format!("ns-{}", i % 7),
            2 => format!("a{}", i % 3),
            _ => "long-namespace-".repeat(3),
        };
        let name = if i.is_multiple_of(5) { format!("{i}-{}", "n".repeat(40)) } else { format!("{}{i}", i % 3) };
        (ns, name)
    }

    /// The table against a `BTreeMap` through inserts, replacements and
    /// removals that make it grow and punch holes into probe runs.
    #[test]
    fn agrees_with_a_map_through_inserts_replacements_and_removals() {
        let mut items = Items::with_capacity(0);
        let mut model: BTreeMap<(String, String), u32> = BTreeMap::new();
        let mut step = 0u32;
        for round in 0..3usize {
            for i in 0..2_000usize {
                step += 1;
                let (ns, name) = key(i * 7 % 1_999 + round);
                let old = items.insert(object(&ns, &name, step));
                let expected = model.insert((ns, name), step);
                assert_eq!(old.as_ref().map(|o| version(o).to_owned()), expected.map(|v| v.to_string()));
            }
            for i in (0..2_000usize).step_by(3) {
                let (ns, name) = key(i + round * 11);
                let removed = items.remove((&ns, &name));
                let expected = model.remove(&(ns, name));
                assert_eq!(removed.as_ref().map(|o| version(o).to_owned()), expected.map(|v| v.to_string()));
            }
            assert_eq!(items.len(), model.len());
            for (slot, &tag) in items.slots.iter().zip(&*items.tags) {
                let want = slot.as_ref().map_or(EMPTY, |slot| tag_of(slot.head.hash));
                assert_eq!(tag, want, "each slot's byte follows the slot");
            }
            for ((ns, name), v) in &model {
                let found = items.get((ns, name)).unwrap_or_else(|| panic!("{ns}/{name} is missing"));
                assert_eq!(version(found), v.to_string());
            }
            let mut listed: Vec<_> =
                items.iter().map(|o| parts_of(&**o)).map(|(a, b)| (a.to_owned(), b.to_owned())).collect();
            listed.sort();
            assert_eq!(listed, model.keys().cloned().collect::<Vec<_>>());
        }
        let drained: Vec<_> = items.into_iter().collect();
        assert_eq!(drained.len(), model.len());
    }

    #[test]
    fn namespace_and_name_are_compared_apart() {
        let mut items = Items::with_capacity(0);
        let long = "x".repeat(INLINE);
        items.insert(object("ab", "c", 1));
        items.insert(object(&long, "c", 2));
        assert!(items.get(("a", "bc")).is_none());
        assert!(items.get(("", "abc")).is_none());
        assert!(items.get((&long[1..], "xc")).is_none());
        assert_eq!(items.get(("ab", "c")).map(version), Some("1"));
        assert_eq!(items.get((&long, "c")).map(version), Some("2"));
    }

    #[test]
    fn a_slot_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Option<Slot>>(), 64);
        assert_eq!(std::mem::align_of::<Option<Slot>>(), 64);
    }

    #[test]
    fn an_empty_table_finds_and_removes_nothing() {
        let mut items = Items::with_capacity(0);
        assert!(items.get(("ns", "a")).is_none());
        assert!(items.remove(("ns", "a")).is_none());
        assert_eq!(items.iter().count(), 0);
        assert_eq!(items.into_iter().count(), 0);
    }

    #[test]
    fn sized_tables_hold_their_capacity_without_growing() {
        for capacity in [1, 13, 14, 100, 10_000] {
            let mut items = Items::with_capacity(capacity);
            let slots = items.slots.len();
            for i in 0..capacity {
                items.insert(object("ns", &format!("o-{i}"), 1));
            }
            assert_eq!(items.slots.len(), slots, "capacity {capacity}");
            assert_eq!(items.len(), capacity);
        }
    }
}
