//! The indexer's table of objects: a hash table from each object's key
//! text to the object, the text being client-go's key (`namespace/name`,
//! or `name` for cluster-scoped objects).
//!
//! Each slot holds the object and its key's text, in the slot itself up to
//! 30 bytes (longer texts apart, behind a pointer): 48 bytes a slot. A
//! lookup by key hashes the caller's text and compares it with the slot's
//! as they are, so for such keys it reads the table's control bytes and
//! one slot, and never touches the object (the handle it hands back holds
//! the object in a slot of the thread's, see [`Cached`](super::Cached)).
//! The table before kept every
//! key's text in an allocation of its own, which a lookup had to wait for
//! after the slot: in the benchmark's child processes, alternating, a
//! borrowed lookup among 100,000 objects took about 0.75 of that table's
//! time, and the sync benchmark's informer held 0.25 MB less for 10,000
//! objects (docs/benchmarks.md).
//!
//! Keys are exact: a namespace containing `/`, or a cluster-scoped name
//! containing one (neither exists on an API server), is kept under a text
//! no `namespace/name` key can spell, so that a key names at most one
//! object, its namespace being the text before the first `/`.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;
use hashbrown::hash_table::{Entry, IntoIter};

use super::cached::{retire, retire_all};
use super::{KeyParts, parts_of};
use crate::object::ErasedObject;

/// The first byte of a key text that `namespace/name` cannot spell (valid
/// UTF-8 never holds it), for the parts a `/` would make ambiguous.
const UNSPELLABLE: u8 = 0xFF;

/// Key texts up to this long are built on the stack when looking up by
/// namespace and name.
const ON_STACK: usize = 128;

/// Key texts up to this long are kept in the table's entry itself.
const INLINE: usize = 30;

/// Calls `f` with the key text of `(ns, name)`: `ns/name`, or `name` when
/// `ns` is empty, unless a `/` would make that ambiguous; then
/// [`UNSPELLABLE`], the namespace's length (four bytes, little-endian; no
/// namespace is anywhere near 4 GiB long), the namespace and the name.
#[inline(always)]
fn with_text<R>((ns, name): KeyParts<'_>, f: impl FnOnce(&[u8]) -> R) -> R {
    let ambiguous = ns.contains('/') || (ns.is_empty() && name.contains('/'));
    if ns.is_empty() && !ambiguous {
        return f(name.as_bytes());
    }
    let ns_len = (ns.len() as u32).to_le_bytes();
    let parts: [&[u8]; 4] = if ambiguous {
        [&[UNSPELLABLE], &ns_len, ns.as_bytes(), name.as_bytes()]
    } else {
        [b"", ns.as_bytes(), b"/", name.as_bytes()]
    };
    let len = parts.iter().map(|part| part.len()).sum();
    let mut stack = [0; ON_STACK];
    let mut heap = Vec::new();
    let text: &mut [u8] = if len <= ON_STACK {
        &mut stack[..len]
    } else {
        heap.resize(len, 0);
        &mut heap
    };
    let mut at = 0;
    for part in parts {
        text[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    f(text)
}

/// A key text as an entry keeps it: in the entry when short enough.
enum Text {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Text {
    fn new(text: &[u8]) -> Self {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text);
            Self::Inline { len: text.len() as u8, bytes }
        } else {
            Self::Heap(text.into())
        }
    }

    #[inline(always)]
    fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Self::Heap(bytes) => bytes,
        }
    }
}

/// The hash of a key text.
#[inline(always)]
fn hash_text(hasher: &foldhash::fast::RandomState, text: &[u8]) -> u64 {
    let mut hasher = hasher.build_hasher();
    hasher.write(text);
    hasher.finish()
}

/// One object and its key text: 48 bytes.
pub(crate) struct Slot {
    text: Text,
    obj: ErasedObject,
}

/// The stored objects, each under the key text of its namespace and name.
pub(crate) struct Items {
    table: HashTable<Slot>,
    hasher: foldhash::fast::RandomState,
    /// Whether every object here has been retired already (see
    /// [`retired`](Self::retired)), so none is retired again when it goes.
    retired: bool,
}

impl Items {
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self { table: HashTable::with_capacity(capacity), hasher: Default::default(), retired: false }
    }

    /// A table taken out of an indexer, its objects retired at once (see
    /// [`Cached`](super::Cached)): what it gives away from now on needs no
    /// retiring one by one.
    pub(super) fn retired(mut self) -> Self {
        retire_all(self.iter());
        self.retired = true;
        self
    }

    #[inline(always)]
    fn hash(&self, text: &[u8]) -> u64 {
        hash_text(&self.hasher, text)
    }

    /// The object stored under `key`, a key text: a `namespace/name` or
    /// `name` key not starting with `/` is its own text.
    #[inline(always)]
    pub(super) fn get_text(&self, key: &[u8]) -> Option<&ErasedObject> {
        self.table.find(self.hash(key), |slot| slot.text.as_bytes() == key).map(|slot| &slot.obj)
    }

    #[inline(always)]
    pub(super) fn get(&self, parts: KeyParts<'_>) -> Option<&ErasedObject> {
        with_text(parts, |text| self.get_text(text))
    }

    /// Stores `obj`, returning the object stored under its key before.
    pub(super) fn insert(&mut self, obj: ErasedObject) -> Option<ErasedObject> {
        let parts = || parts_of(&*obj);
        let hasher = &self.hasher;
        let retired = self.retired;
        let hash = with_text(parts(), |text| hash_text(hasher, text));
        let same_key = |slot: &Slot| with_text(parts(), |text| slot.text.as_bytes() == text);
        match self.table.entry(hash, same_key, |slot| hash_text(hasher, slot.text.as_bytes())) {
            Entry::Occupied(mut entry) => {
                let old = std::mem::replace(&mut entry.get_mut().obj, obj);
                if !retired {
                    retire(&old);
                }
                Some(old)
            }
            Entry::Vacant(entry) => {
                // The text is built only for a new slot: an update of an
                // object with a long key allocates nothing.
                let text = with_text(parts(), Text::new);
                entry.insert(Slot { text, obj });
                None
            }
        }
    }

    /// Removes and returns the object stored under `parts`.
    pub(crate) fn remove(&mut self, parts: KeyParts<'_>) -> Option<ErasedObject> {
        with_text(parts, |text| {
            let hash = self.hash(text);
            let old = self.table.find_entry(hash, |slot| slot.text.as_bytes() == text).ok()?.remove().0.obj;
            if !self.retired {
                retire(&old);
            }
            Some(old)
        })
    }

    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &ErasedObject> {
        self.table.iter().map(|slot| &slot.obj)
    }
}

impl IntoIterator for Items {
    type Item = ErasedObject;
    type IntoIter = std::iter::Map<IntoIter<Slot>, fn(Slot) -> ErasedObject>;

    fn into_iter(mut self) -> Self::IntoIter {
        let table = std::mem::take(&mut self.table);
        if !self.retired {
            retire_all(table.iter().map(|slot| &slot.obj));
        }
        table.into_iter().map(|slot| slot.obj)
    }
}

impl Drop for Items {
    fn drop(&mut self) {
        if !self.retired && !self.table.is_empty() {
            retire_all(self.iter());
        }
    }
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

    /// Keys short and long (longer ones built on the heap), namespaced and
    /// cluster-scoped, pairs a naive concatenation would confuse (`ab` +
    /// `c` against `a` + `bc`), and parts with a `/` in them.
    fn key(i: usize) -> (String, String) {
        let ns = match i % 4 {
            0 => String::new(),
            1 => format!("ns-{}", i % 7),
            2 => format!("a{}", i % 3),
            3 if i % 8 == 3 => "long-namespace-".repeat(10),
            _ => format!("a/{}", i % 3),
        };
        let name = match i % 5 {
            0 => format!("{i}-{}", "n".repeat(40)),
            1 if i % 10 == 1 => format!("{}/{i}", i % 3),
            _ => format!("{}{i}", i % 3),
        };
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
            for obj in items.iter() {
                let parts = parts_of(&**obj);
                let found = with_text(parts, |text| items.get_text(text));
                assert!(found.is_some_and(|found| Arc::ptr_eq(found, obj)), "{parts:?} under its own text");
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
        let long = "x".repeat(40);
        items.insert(object("ab", "c", 1));
        items.insert(object(&long, "c", 2));
        assert!(items.get(("a", "bc")).is_none());
        assert!(items.get(("", "abc")).is_none());
        assert!(items.get((&long[1..], "xc")).is_none());
        assert_eq!(items.get(("ab", "c")).map(version), Some("1"));
        assert_eq!(items.get((&long, "c")).map(version), Some("2"));
    }

    /// A `/` inside a part never makes two keys one: a `namespace/name`
    /// text names the object whose namespace is the text before its first
    /// `/`, and only that one.
    #[test]
    fn a_slash_inside_a_part_makes_no_second_spelling() {
        let mut items = Items::with_capacity(0);
        for (i, (ns, name)) in [("a/b", "c"), ("a", "b/c"), ("", "a/b/c"), ("", "c")].into_iter().enumerate() {
            assert!(items.insert(object(ns, name, i as u32)).is_none(), "{ns:?} {name:?} is a key of its own");
        }
        assert_eq!(items.len(), 4);
        assert_eq!(items.get_text(b"a/b/c").map(version), Some("1"));
        assert_eq!(items.get_text(b"c").map(version), Some("3"));
        for (i, parts) in [("a/b", "c"), ("a", "b/c"), ("", "a/b/c")].into_iter().enumerate() {
            assert_eq!(items.get(parts).map(version), Some(i.to_string().as_str()));
        }
    }

    #[test]
    fn a_slot_holds_a_key_of_30_bytes_in_48() {
        assert_eq!(std::mem::size_of::<Slot>(), 48);
        assert!(matches!(Text::new(&[b'x'; INLINE]), Text::Inline { .. }));
        assert!(matches!(Text::new(&[b'x'; INLINE + 1]), Text::Heap(_)));
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
            let room = items.table.capacity();
            for i in 0..capacity {
                items.insert(object("ns", &format!("o-{i}"), 1));
            }
            assert_eq!(items.table.capacity(), room, "capacity {capacity}");
            assert_eq!(items.len(), capacity);
        }
    }
}
