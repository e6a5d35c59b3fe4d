//! What a field manager owns in a live object, read from `managedFields`
//! (client-go's `ExtractInto`).
//!
//! An entry's `fieldsV1` is a tree of path elements: `f:<field>` (a field of
//! a struct or a key of a map), `k:{"key":"value"}` (the item of a list-map
//! whose keys have those values), `v:<json>` (a member of a set), `i:<n>`
//! (a list index) and `.` (the node itself). A node without children is a
//! leaf: the manager owns the value under it as a whole (a scalar, or an
//! atomic list or map). Walking the tree over the object keeps exactly the
//! owned values, and the keys of every list-map item on the way, so the
//! result can be applied back.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::object::same_value;
use crate::{Object, Result};

/// The part of `object` (a serialized API object) that `field_manager` owns
/// through server-side apply — the `managedFields` entry with operation
/// `Apply`, that manager and `subresource` (`None` for the main resource,
/// `Some("status")` for the status subresource). `apiVersion`, `kind`,
/// `metadata.name` and `metadata.namespace` are always included; nothing
/// else is when the manager owns nothing.
pub fn owned_fields(object: &Value, field_manager: &str, subresource: Option<&str>) -> Value {
    let wanted = subresource.unwrap_or("");
    let entries = object.pointer("/metadata/managedFields").and_then(Value::as_array);
    let mut out = Map::new();
    for entry in entries.into_iter().flatten() {
        let field = |name: &str| entry.get(name).and_then(Value::as_str);
        if field("manager") != Some(field_manager)
            || field("operation") != Some("Apply")
            || field("subresource").unwrap_or("") != wanted
        {
            continue;
        }
        if let (Some(fields), Some(_)) = (entry.get("fieldsV1").and_then(Value::as_object), object.as_object())
            && let Value::Object(owned) = walk(fields, object)
        {
            merge(&mut out, owned);
        }
    }
    for key in ["apiVersion", "kind"] {
        if let Some(v) = object.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    let meta = out.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.remove("managedFields");
        for key in ["name", "namespace"] {
            if let Some(v) = object.pointer(&format!("/metadata/{key}")) {
                meta.insert(key.to_owned(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// The apply configuration `field_manager` owns in `obj` (see
/// [`owned_fields`]): extract → change → apply as the same manager updates
/// exactly the fields that manager is responsible for.
///
/// Fails only when the owned part does not deserialize into `A` (an apply
/// configuration of another kind).
pub fn extract<K: Object, A: DeserializeOwned>(obj: &K, field_manager: &str, subresource: Option<&str>) -> Result<A> {
    let mut value = crate::object::to_json_value(obj)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".to_owned(), Value::String(K::api_version(&()).into_owned()));
        map.insert("kind".to_owned(), Value::String(K::kind(&()).into_owned()));
    }
    Ok(serde_json::from_value(owned_fields(&value, field_manager, subresource))?)
}

/// The values under `fields` in `value`.
fn walk(fields: &Map<String, Value>, value: &Value) -> Value {
    if is_leaf(fields) {
        return value.clone();
    }
    match value {
        Value::Object(object) => {
            let mut out = Map::new();
            for (element, children) in fields {
                let Some(name) = element.strip_prefix("f:") else { continue };
                let (Some(child), Some(children)) = (object.get(name), children.as_object()) else { continue };
                out.insert(name.to_owned(), walk(children, child));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for (index, item) in items.iter().enumerate() {
                for (element, children) in fields {
                    let Some(children) = children.as_object() else { continue };
                    if let Some(keys) = element.strip_prefix("k:") {
                        let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(keys) else { continue };
                        if keys.iter().all(|(k, v)| item.get(k).is_some_and(|i| same_value(i, v))) {
                            let mut owned = walk(children, item);
                            if let Some(owned) = owned.as_object_mut() {
                                owned.extend(keys);
                            }
                            out.push(owned);
                            break;
                        }
                    } else if let Some(member) = element.strip_prefix("v:") {
                        if serde_json::from_str::<Value>(member).is_ok_and(|m| same_value(&m, item)) {
                            out.push(item.clone());
                            break;
                        }
                    } else if element.strip_prefix("i:").and_then(|i| i.parse::<usize>().ok()) == Some(index) {
                        out.push(walk(children, item));
                        break;
                    }
                }
            }
            Value::Array(out)
        }
        scalar => scalar.clone(),
    }
}

/// A node owned as a whole: no children other than `.`.
fn is_leaf(fields: &Map<String, Value>) -> bool {
    fields.keys().all(|k| k == ".")
}

/// Merges `from` into `into` (entries of two managed-fields entries of the
/// same manager, which do not overlap).
fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(a)), Value::Object(b)) => merge(a, b),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object() -> Value {
        json!({
            "apiVersion": "example.k8s.io/v1",
            "kind": "Student",
            "metadata": {
                "name": "a",
                "namespace": "ns",
                "labels": {"mine": "1", "theirs": "2"},
                "finalizers": ["x", "y"],
                "managedFields": [
                    {"manager": "me", "operation": "Apply", "apiVersion": "example.k8s.io/v1",
                     "fieldsType": "FieldsV1", "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:mine": {}}, "f:finalizers": {"v:\"y\"": {}}},
                        "f:spec": {"f:school": {}, "f:selector": {}, "f:items": {
                            "k:{\"name\":\"b\",\"port\":2}": {".": {}, "f:value": {}}}}}},
                    {"manager": "me", "operation": "Update", "apiVersion": "example.k8s.io/v1",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:name": {}}}},
                    {"manager": "me", "operation": "Apply", "subresource": "status",
                     "apiVersion": "example.k8s.io/v1", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:status": {"f:phase": {}}}},
                    {"manager": "other", "operation": "Apply", "apiVersion": "example.k8s.io/v1",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:name": {}}}}
                ]
            },
            "spec": {
                "name": "n", "school": "s",
                "selector": {"matchLabels": {"a": "b"}},
                "items": [{"name": "a", "port": 1, "value": 1}, {"name": "b", "port": 2, "value": 2, "extra": 3}]
            },
            "status": {"phase": "Ready", "other": 1}
        })
    }

    #[test]
    fn keeps_only_what_the_manager_applied() {
        let owned = owned_fields(&object(), "me", None);
        assert_eq!(
            owned,
            json!({
                "apiVersion": "example.k8s.io/v1",
                "kind": "Student",
                "metadata": {"name": "a", "namespace": "ns", "labels": {"mine": "1"}, "finalizers": ["y"]},
                "spec": {"school": "s", "selector": {"matchLabels": {"a": "b"}},
                         "items": [{"name": "b", "port": 2, "value": 2}]}
            })
        );
    }

    /// A key or set member that is a whole number matches the item whose
    /// Rust `f64` wrote it back as `1.0`.
    #[test]
    fn whole_number_keys_and_members_match_floats() {
        let object = json!({
            "metadata": {"managedFields": [{"manager": "me", "operation": "Apply", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {
                    "f:weights": {"k:{\"weight\":1}": {".": {}, "f:name": {}}},
                    "f:levels": {"v:2": {}}}}}]},
            "spec": {
                "weights": [{"weight": 1.0, "name": "a"}, {"weight": 2.5, "name": "b"}],
                "levels": [1.0, 2.0]
            }
        });
        let owned = owned_fields(&object, "me", None);
        assert_eq!(owned["spec"]["weights"], json!([{"weight": 1, "name": "a"}]));
        assert_eq!(owned["spec"]["levels"], json!([2.0]));
        assert!(!same_value(&json!(9007199254740993_u64), &json!(9007199254740992_u64)), "integers stay exact");
    }

    #[test]
    fn status_comes_from_the_status_entry() {
        let owned = owned_fields(&object(), "me", Some("status"));
        assert_eq!(owned["status"], json!({"phase": "Ready"}));
        assert!(owned.get("spec").is_none());
    }

    #[test]
    fn a_manager_without_entries_owns_only_the_identity() {
        let owned = owned_fields(&object(), "nobody", None);
        assert_eq!(
            owned,
            json!({"apiVersion": "example.k8s.io/v1", "kind": "Student", "metadata": {"name": "a", "namespace": "ns"}})
        );
    }
}
