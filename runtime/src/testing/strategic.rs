//! Strategic merge patches of Kubernetes' built-in kinds, merged as
//! apimachinery's `strategicpatch` merges them on the API server: lists
//! with the `merge` strategy are merged by their merge key (or, for lists of
//! scalars, as sets), the rest as in a JSON merge patch; the directives
//! `$patch` (`replace`, `delete`), `$retainKeys`,
//! `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are
//! understood.
//!
//! Which fields merge how comes from `strategic.tsv`, the Go types'
//! `patchStrategy`/`patchMergeKey` tags as Kubernetes' OpenAPI definitions
//! carry them (written by `runtime/strategic/regen.sh`). The same table
//! carries the list and map types server-side apply reads
//! (`super::ssa` builds the built-in kinds' types from it).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::status::ApiError;

/// How a field of a built-in type merges.
#[derive(Debug)]
pub(crate) struct FieldMeta {
    /// The definition of the value: the object's, the list items' or the
    /// map values'.
    pub(crate) target: Option<&'static str>,
    /// `merge`, `replace`, `retainKeys` or `merge,retainKeys`.
    strategy: Option<&'static str>,
    merge_key: Option<&'static str>,
    /// `object`, `list` or `map`.
    pub(crate) shape: &'static str,
    /// Server-side apply's list type: `set` or `map` (else atomic).
    pub(crate) apply_list: Option<&'static str>,
    /// The keys of an apply list-map, each `name` or `name=<JSON default>`,
    /// comma-separated.
    pub(crate) apply_keys: Option<&'static str>,
    /// Whether apply replaces the value (object), the map itself (map) or
    /// each item (list) as a whole.
    pub(crate) atomic: bool,
}

/// The table of `strategic.tsv`.
#[derive(Default)]
pub(crate) struct Table {
    /// `(apiVersion, kind)` → the kind's definition.
    pub(crate) kinds: HashMap<(&'static str, &'static str), &'static str>,
    /// `(definition, field)` → how the field merges.
    pub(crate) fields: HashMap<(&'static str, &'static str), FieldMeta>,
}

/// The table, read once.
pub(crate) fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Table::default();
        let opt = |s: &'static str| (s != "-").then_some(s);
        for line in include_str!("strategic.tsv").lines().filter(|l| !l.starts_with('#')) {
            let cols: Vec<&'static str> = line.split('\t').collect();
            match cols.as_slice() {
                ["kind", api_version, kind, def] => {
                    t.kinds.insert((api_version, kind), def);
                }
                ["field", def, name, shape, target, strategy, merge_key, apply_list, apply_keys, atomic] => {
                    let meta = FieldMeta {
                        target: opt(target),
                        strategy: opt(strategy),
                        merge_key: opt(merge_key),
                        shape,
                        apply_list: opt(apply_list),
                        apply_keys: opt(apply_keys),
                        atomic: *atomic == "atomic",
                    };
                    t.fields.insert((def, name), meta);
                }
                _ => {}
            }
        }
        t
    })
}

/// Where in the built-in types a map being merged is.
#[derive(Clone, Copy)]
enum Schema {
    /// A type without strategic fields below it (or an unknown one).
    None,
    /// An object of this definition.
    Def(&'static str),
    /// A map whose values are of this definition.
    MapOf(Option<&'static str>),
    /// An object of a kind the table does not list: its `metadata` is
    /// ObjectMeta.
    Root,
}

impl Schema {
    /// The strategy, merge key and schema of field `key`.
    fn lookup(self, key: &str) -> (Option<&'static str>, Option<&'static str>, Schema) {
        match self {
            Schema::None => (None, None, Schema::None),
            Schema::Root if key == "metadata" => (None, None, Schema::Def(OBJECT_META)),
            Schema::Root => (None, None, Schema::None),
            Schema::MapOf(values) => (None, None, values.map_or(Schema::None, Schema::Def)),
            Schema::Def(def) => match table().fields.get(&(def, key)) {
                None => (None, None, Schema::None),
                Some(f) => {
                    let below = match (f.shape == "map", f.target) {
                        (true, target) => Schema::MapOf(target),
                        (false, Some(target)) => Schema::Def(target),
                        (false, None) => Schema::None,
                    };
                    // `retainKeys` only says `$retainKeys` may be sent; the
                    // other strategy is how the field merges.
                    let strategy = f.strategy.and_then(|s| s.split(',').find(|s| *s != "retainKeys"));
                    (strategy, f.merge_key, below)
                }
            },
        }
    }
}

/// Applies the strategic merge patch `patch` to `original`, an object of
/// the built-in `api_version`/`kind` (a kind without strategic fields
/// merges like a JSON merge patch).
pub(crate) fn merge(api_version: &str, kind: &str, original: Value, patch: Value) -> Result<Value, ApiError> {
    // A kind the table does not have (of an older Kubernetes version, or
    // without strategic fields) still has ObjectMeta's.
    let schema = table().kinds.get(&(api_version, kind)).map_or(Schema::Root, |d| Schema::Def(d));
    let (Value::Object(original), Value::Object(patch)) = (original, patch) else {
        return Err(ApiError::bad_request("invalid JSON document"));
    };
    merge_map(original, patch, schema).map(Value::Object).map_err(Error::into_api)
}

/// apimachinery's `mergepatch` errors, by how the API server answers them.
enum Error {
    /// A malformed directive: 400.
    BadRequest(&'static str),
    /// Anything else (lists of lists too: the API server's 422 for them is
    /// never reached, as the error arrives wrapped): 500 with the message.
    Internal(String),
}

impl Error {
    fn into_api(self) -> ApiError {
        match self {
            Error::BadRequest(message) => ApiError::bad_request(message),
            Error::Internal(message) => ApiError::internal(message),
        }
    }
}

type Merged<T> = std::result::Result<T, Error>;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// The key of a `$prefix/key` directive.
fn directive_key<'a>(key: &'a str, prefix: &str, error: &'static str) -> Merged<&'a str> {
    match key.split_once('/') {
        Some((p, rest)) if p == prefix => Ok(rest),
        _ => Err(Error::BadRequest(error)),
    }
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: Schema,
) -> Merged<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(Error::Internal(format!("unknown patch type: {directive} in map"))),
        };
    }
    retain_keys(&mut original, &mut patch)?;
    set_element_order(&mut original, &mut patch, schema)?;

    for (key, patch_value) in patch {
        let (key, delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            let k = directive_key(&key, DELETE_FROM_PRIMITIVE_LIST, "invalid patch format of primitive list")?;
            (k.to_string(), true)
        } else {
            (key, false)
        };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let same_kind = match (original.get(&key), &patch_value) {
            (None, _) => false,
            (Some(Value::Object(_)), Value::Object(_)) | (Some(Value::Array(_)), Value::Array(_)) => true,
            (Some(o), p) => !(o.is_object() || o.is_array() || p.is_object() || p.is_array()),
        };
        if !same_kind {
            if !delete_list {
                let mut v = patch_value;
                discard_nulls(&mut v);
                match remove_directives(v) {
                    Some(v) => original.insert(key, v),
                    None => original.remove(&key),
                };
            }
            continue;
        }
        let current = original.remove(&key).unwrap_or(Value::Null);
        let (strategy, merge_key, below) = schema.lookup(&key);
        let merged = match (current, patch_value) {
            (Value::Object(o), Value::Object(p)) => {
                if strategy == Some("replace") {
                    Value::Object(p)
                } else {
                    Value::Object(merge_map(o, p, below)?)
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                if strategy == Some("merge") || delete_list {
                    Value::Array(merge_list(o, p, below, merge_key, delete_list)?)
                } else {
                    Value::Array(p)
                }
            }
            (_, p) => match remove_directives(p) {
                Some(v) => v,
                None => continue,
            },
        };
        original.insert(key, merged);
    }
    Ok(original)
}

/// `$retainKeys`: keys of the original not listed are cleared; every key
/// the patch sets must be listed.
fn retain_keys(original: &mut Map<String, Value>, patch: &mut Map<String, Value>) -> Merged<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else { return Ok(()) };
    let bad = Error::BadRequest("invalid patch format of retainKeys");
    let Value::Array(keys) = retain else { return Err(bad) };
    let listed = |k: &str| keys.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null() || k.starts_with(DELETE_FROM_PRIMITIVE_LIST) || k.starts_with(SET_ELEMENT_ORDER) {
            continue;
        }
        if !listed(k) {
            return Err(bad);
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `$setElementOrder/<field>`: the field's list merged, then ordered as
/// listed (the items the order does not list keep their place among them
/// by the original's order).
fn set_element_order(original: &mut Map<String, Value>, patch: &mut Map<String, Value>, schema: Schema) -> Merged<()> {
    let keys: Vec<String> = patch.keys().filter(|k| k.starts_with(SET_ELEMENT_ORDER)).cloned().collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else { continue };
        let Value::Array(order) = order else {
            return Err(Error::Internal(format!("expected a []interface {{}}, but received {}", go_type(&order))));
        };
        let field = directive_key(&key, SET_ELEMENT_ORDER, "invalid patch format of setElementOrder list")?.to_string();
        let original_list = match original.get(&field) {
            None => None,
            Some(Value::Array(l)) => Some(l.clone()),
            Some(other) => return Err(Error::Internal(format!("expected a list, but received {}", go_type(other)))),
        };
        let patch_list = match patch.get(&field) {
            None => None,
            Some(Value::Array(l)) => Some(l.clone()),
            Some(other) => return Err(Error::Internal(format!("expected a list, but received {}", go_type(other)))),
        };
        let (strategy, merge_key, below) = schema.lookup(&field);
        check_order(patch_list.as_deref().unwrap_or_default(), &order, merge_key)?;
        let merged = match (&original_list, &patch_list) {
            (Some(o), None) => o.clone(),
            (None, Some(p)) => match remove_directives(Value::Array(p.clone())) {
                Some(Value::Array(l)) => l,
                _ => continue,
            },
            (Some(o), Some(p)) => {
                if strategy == Some("merge") {
                    merge_list(o.clone(), p.clone(), below, merge_key, false)?
                } else {
                    p.clone()
                }
            }
            (None, None) => continue,
        };
        let original_items = original_list.unwrap_or_default();
        let all: Vec<&Value> = original_items.iter().chain(patch_list.iter().flatten()).collect();
        let maps = element_kind(&all)? == Kind::Map;
        let key = merge_key.filter(|_| maps);
        // The server's order is read from the original list after the
        // merge wrote into it in place (as Go's slices share memory).
        let server_order = match (&patch_list, key) {
            (Some(p), Some(k)) if strategy == Some("merge") => order_after_merge(&original_items, p, k),
            _ => original_items,
        };
        let (in_order, server_only) = partition(merged, &order, key)?;
        let both = normalize_order(in_order, server_only, &order, &server_order, key)?;
        original.insert(field.clone(), Value::Array(both));
        patch.remove(&field);
    }
    Ok(())
}

/// The original list of maps as apimachinery's `$setElementOrder` reads it
/// after merging `patch` into it: Go removes `$patch: delete` items by
/// shifting the rest left in the list's own memory and appends new items
/// into the slots that frees, so the original's length now shows the items
/// left, then the first new ones (then stale copies of the last items).
fn order_after_merge(original: &[Value], patch: &[Value], key: &str) -> Vec<Value> {
    let mut slots = original.to_vec();
    let mut len = slots.len();
    let replace = patch.iter().any(|p| p.get(DIRECTIVE).and_then(Value::as_str) == Some("replace"));
    for item in patch.iter().filter(|p| p.get(DIRECTIVE).and_then(Value::as_str) == Some("delete")) {
        let Some(value) = item.get(key) else { continue };
        while let Some(i) = slots[..len].iter().position(|o| o.get(key) == Some(value)) {
            slots[i..len].rotate_left(1);
            slots[len - 1] = slots[len.saturating_sub(2).max(i)].clone();
            len -= 1;
        }
    }
    if !replace {
        // Go appends to its own copy of the slice header: into the freed
        // slots while they last (the original sees those), then into new
        // memory it never sees; duplicates are looked for in its own slice.
        let mut added: Vec<Value> = Vec::new();
        for item in patch.iter().filter(|p| p.get(DIRECTIVE).is_none()) {
            let value = item.get(key);
            if slots[..len].iter().chain(&added).any(|o| o.get(key) == value) {
                continue;
            }
            added.push(item.clone());
        }
        for (slot, item) in slots[len..].iter_mut().zip(added) {
            *slot = item;
        }
    }
    slots
}

/// apimachinery's check that a `$setElementOrder` list holds the patch
/// list's items in the same order.
fn check_order(patch_list: &[Value], order: &[Value], merge_key: Option<&str>) -> Merged<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let items: Vec<&Value> = patch_list
        .iter()
        .filter(|v| merge_key.is_none() || v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
        .collect();
    let (mut p, mut o) = (0, 0);
    while p < items.len() && o < order.len() {
        if items[p].get(DIRECTIVE).is_some() {
            p += 1;
            continue;
        }
        let equal = match merge_key {
            None => items[p] == &order[o],
            Some(k) => key_of(items[p], k)? == key_of(&order[o], k)?,
        };
        if equal {
            p += 1;
        }
        o += 1;
    }
    if p < items.len() && o >= order.len() {
        return Err(Error::Internal("the order in the patch list doesn't match the $setElementOrder list".into()));
    }
    Ok(())
}

/// The merge key's value of a list item.
fn key_of<'v>(item: &'v Value, merge_key: &str) -> Merged<&'v Value> {
    item.get(merge_key)
        .ok_or_else(|| Error::Internal(format!("map: {item} does not contain declared merge key: {merge_key}")))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Map,
    Other,
}

/// What the items of lists are (they must all be of one JSON type, and
/// not lists); an error when there are none.
fn element_kind(items: &[&Value]) -> Merged<Kind> {
    let mut seen: Option<&'static str> = None;
    for v in items {
        let t = go_type(v);
        if t == "[]interface {}" {
            return Err(Error::Internal("lists of lists are not supported".into()));
        }
        match seen {
            None => seen = Some(t),
            Some(s) if s != t => return Err(Error::Internal("list element types are not identical".into())),
            Some(_) => {}
        }
    }
    match seen {
        None => Err(Error::Internal("no elements in any of the given slices".into())),
        Some("map[string]interface {}") => Ok(Kind::Map),
        Some(_) => Ok(Kind::Other),
    }
}

/// The Go type a JSON value decodes to in the API server (integers stay
/// integers).
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Merges a list with the `merge` strategy (or a `$deleteFromPrimitiveList`).
fn merge_list(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    schema: Schema,
    merge_key: Option<&str>,
    delete_list: bool,
) -> Merged<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let all: Vec<&Value> = original.iter().chain(patch.iter()).collect();
    let kind = element_kind(&all)?;
    let (merged, order_patch, order_original);
    if kind != Kind::Map {
        if delete_list {
            return Ok(original.into_iter().filter(|v| !patch.contains(v)).collect());
        }
        let mut both = original.clone();
        both.extend(patch.iter().cloned());
        merged = dedup_scalars(both);
        order_patch = patch;
        order_original = original;
    } else {
        let Some(key) = merge_key else {
            return Err(Error::Internal("cannot merge lists without merge key".into()));
        };
        // `$patch` items: `delete` removes the original's items with that
        // key, `replace` makes the list the patch's other items.
        let mut rest = Vec::new();
        let mut replace = false;
        for item in &patch {
            match item.get(DIRECTIVE) {
                None => rest.push(item.clone()),
                Some(d) if d == "delete" => {
                    let value = key_of(item, key)?.clone();
                    original.retain(|o| o.get(key) != Some(&value));
                }
                Some(d) if d == "replace" => replace = true,
                Some(d) if d == "merge" => {
                    return Err(Error::Internal("merging lists cannot yet be specified in the patch".into()));
                }
                Some(d) => return Err(Error::Internal(format!("unknown patch type: {d} in map"))),
            }
        }
        // From here on the patch is its other items (none after a
        // `replace`), the original what is left of it.
        let (original, rest) = if replace { (rest, Vec::new()) } else { (original, rest) };
        let mut out = original.clone();
        for item in &rest {
            let value = key_of(item, key)?;
            match out.iter().position(|o| o.get(key) == Some(value)) {
                Some(i) => {
                    let (Value::Object(o), Value::Object(p)) = (out[i].take(), item.clone()) else {
                        return Err(Error::Internal("list items to merge are not maps".into()));
                    };
                    out[i] = Value::Object(merge_map(o, p, schema)?);
                }
                None => out.push(item.clone()),
            }
        }
        merged = out;
        order_patch = rest;
        order_original = original;
    }
    let key = merge_key.filter(|_| kind == Kind::Map);
    let (in_patch, server_only) = partition(merged, &order_patch, key)?;
    normalize_order(in_patch, server_only, &order_patch, &order_original, key)
}

/// apimachinery's `deduplicateScalars`: a later duplicate is replaced by
/// the last item (the order is set again afterwards).
fn dedup_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut length = s.len().saturating_sub(1);
    let mut i = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if s[i] == s[j] {
                s[j] = s[length].clone();
                s.truncate(length);
                length -= 1;
                continue;
            }
            j += 1;
        }
        i += 1;
    }
    s
}

/// Where `item` is in `list` (by merge key for maps), if it is.
fn index(list: &[Value], item: &Value, merge_key: Option<&str>) -> Option<usize> {
    match merge_key {
        Some(k) => list.iter().position(|v| v.get(k).unwrap_or(&Value::Null) == item.get(k).unwrap_or(&Value::Null)),
        None => list.iter().position(|v| v == item),
    }
}

/// The items present in `by` and those that are not.
fn partition(items: Vec<Value>, by: &[Value], merge_key: Option<&str>) -> Merged<(Vec<Value>, Vec<Value>)> {
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for item in items {
        if let Some(k) = merge_key {
            key_of(&item, k)?;
        }
        if index(by, &item, merge_key).is_some() { present.push(item) } else { absent.push(item) }
    }
    Ok((present, absent))
}

/// The patch's items in the patch's order, interleaved with the server's
/// items in the original's order (apimachinery's `normalizeElementOrder`).
fn normalize_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: Option<&str>,
) -> Merged<Vec<Value>> {
    let patch_items = sort_by(patch_items, patch_order, merge_key)?;
    let server_only = sort_by(server_only, server_order, merge_key)?;
    // Each server item goes before the first patch item the original has
    // after it.
    let less = |l: &Value, r: &Value| match (index(server_order, l, merge_key), index(server_order, r, merge_key)) {
        (Some(li), Some(ri)) => li < ri,
        _ => false,
    };
    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    loop {
        match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => {
                if less(l, r) {
                    out.extend(left.next());
                } else {
                    out.extend(right.next());
                }
            }
            (Some(_), None) => out.extend(left.next()),
            (None, Some(_)) => out.extend(right.next()),
            (None, None) => break,
        }
    }
    Ok(out)
}

/// `items` stably sorted by their place in `order`; `$patch: delete` items
/// go last.
fn sort_by(items: Vec<Value>, order: &[Value], merge_key: Option<&str>) -> Merged<Vec<Value>> {
    let (mut keep, deleted): (Vec<Value>, Vec<Value>) = match merge_key {
        Some(k) => {
            for v in items.iter().chain(order) {
                key_of(v, k)?;
            }
            items.into_iter().partition(|v| v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
        }
        None => (items, Vec::new()),
    };
    keep.sort_by_key(|v| index(order, v, merge_key).unwrap_or(usize::MAX));
    keep.extend(deleted);
    Ok(keep)
}

/// The value without `$patch` directives: a map carrying one is dropped
/// (`None` for the value itself).
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(map) => {
            if map.contains_key(DIRECTIVE) {
                return None;
            }
            Some(Value::Object(map.into_iter().filter_map(|(k, v)| remove_directives(v).map(|v| (k, v))).collect()))
        }
        Value::Array(items) => Some(Value::Array(items.into_iter().filter_map(remove_directives).collect())),
        other => Some(other),
    }
}

/// Drops every null member of the maps in `v`.
fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(patch: Value) -> Value {
        let live = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "finalizers": ["a", "b"]},
            "spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                {"name": "side", "image": "side:1"},
            ]}}},
        });
        merge("apps/v1", "Deployment", live, patch).unwrap()
    }

    #[test]
    fn lists_merge_by_key_and_scalars_as_sets() {
        let out = deployment(json!({
            "metadata": {"finalizers": ["c", "a"]},
            "spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": "app:2", "env": [{"name": "C", "value": "3"}]},
                {"name": "new", "image": "new:1"},
            ]}}},
        }));
        // Patch items first where the original does not order them.
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers[0]["image"], "app:2");
        let env: Vec<&str> =
            containers[0]["env"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(env, ["C", "A", "B"]);
        let names: Vec<&str> = containers.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["app", "new", "side"]);
    }

    #[test]
    fn directives() {
        let out = deployment(json!({
            "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]},
            "spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}},
        }));
        assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
        assert_eq!(out["spec"]["template"]["spec"]["containers"].as_array().unwrap().len(), 1);
        let out = deployment(json!({
            "spec": {"template": {"spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}}},
        }));
        assert_eq!(out["spec"]["template"]["spec"]["containers"], json!([{"name": "only", "image": "x"}]));
        let out = deployment(json!({
            "spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}],
                "containers": [{"name": "app", "image": "app:3"}],
            }}},
        }));
        let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["side", "app"]);
        let bad = merge("apps/v1", "Deployment", json!({"spec": {}}), json!({"spec": {"$retainKeys": "x"}}));
        assert_eq!(bad.unwrap_err().code, 400);
    }

    #[test]
    fn kinds_the_table_lacks_merge_their_metadata() {
        let live = json!({"metadata": {"finalizers": ["a"]}, "spec": {"items": [1]}});
        let out =
            merge("example.com/v1", "Old", live, json!({"metadata": {"finalizers": ["b"]}, "spec": {"items": [2]}}));
        assert_eq!(out.unwrap(), json!({"metadata": {"finalizers": ["b", "a"]}, "spec": {"items": [2]}}));
    }

    #[test]
    fn set_element_order_reads_the_original_as_go_leaves_it() {
        let item = |n: &str| json!({"name": n});
        let original = [item("A"), item("B"), item("X")];
        let patch = [json!({"name": "B", "$patch": "delete"}), item("A"), item("N")];
        // B deleted: [A, X | X]; N appended into the freed slot.
        assert_eq!(order_after_merge(&original, &patch, "name"), [item("A"), item("X"), item("N")]);
        let patch = [json!({"name": "X", "$patch": "delete"})];
        assert_eq!(order_after_merge(&original, &patch, "name"), [item("A"), item("B"), item("X")]);
        // More new items than freed slots: the first fill them, the rest
        // went to memory the original does not share.
        let patch = [json!({"name": "B", "$patch": "delete"}), item("N"), item("M")];
        assert_eq!(order_after_merge(&original, &patch, "name"), [item("A"), item("X"), item("N")]);
        // No original list at all (nothing to share), and no deletes.
        assert!(order_after_merge(&[], &[item("N"), item("M"), item("N")], "name").is_empty());
        assert_eq!(order_after_merge(&original, &[item("N"), item("M")], "name"), original);
    }

    #[test]
    fn the_table_knows_the_kinds() {
        let knows = |api_version, kind| table().kinds.contains_key(&(api_version, kind));
        assert!(knows("apps/v1", "Deployment"));
        assert!(knows("v1", "Pod"));
        assert!(!knows("example.com/v1", "Widget"));
    }
}
