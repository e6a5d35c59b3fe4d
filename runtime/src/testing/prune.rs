//! The API server's decoding of a written custom resource: fields its
//! schema does not declare are pruned, fields given twice are found, and
//! both are reported as `fieldValidation` asks (ignored, `Warning`
//! headers, or a strict decoding error).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::ResourceInfo;

/// ObjectMeta's fields, and those of its lists' items.
const OBJECT_META: &[&str] = &[
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];
const OWNER_REFERENCE: &[&str] = &["apiVersion", "blockOwnerDeletion", "controller", "kind", "name", "uid"];
const MANAGED_FIELDS_ENTRY: &[&str] =
    &["apiVersion", "fieldsType", "fieldsV1", "manager", "operation", "subresource", "time"];

/// Pruning schemas by the addresses of their validation schema's text and
/// of the structural schema they were made with. The structural schema is
/// held weakly: its address cannot be reused for another schema while the
/// entry holds it, and entries whose structural schema is gone (its fake
/// servers dropped) are removed when another is added, so the cache holds
/// what live servers use.
type SchemaCache = HashMap<(usize, usize), (Option<Weak<Value>>, Arc<Value>)>;

static SCHEMAS: OnceLock<Mutex<SchemaCache>> = OnceLock::new();

/// The schema unknown fields are pruned by: the resource's validation
/// schema (a generated kind's leaves out `status` when it is a
/// subresource; the structural schema's `status` stands in for it), else
/// its structural one; `None` for kinds without a schema (built-in kinds),
/// which are not pruned.
pub(crate) fn schema_of(info: &ResourceInfo) -> Option<Arc<Value>> {
    if !info.is_custom() {
        return None;
    }
    let Some(text) = info.validation else {
        return info.schema.as_ref().map(|s| s.value());
    };
    let structural = info.schema.as_ref().map(|s| s.value());
    let key = (text.as_ptr() as usize, structural.as_ref().map_or(0, |s| Arc::as_ptr(s) as usize));
    let mut cache = SCHEMAS.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, parsed)) = cache.get(&key) {
        return parsed.is_object().then(|| parsed.clone());
    }
    let mut schema: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let status = structural.as_ref().and_then(|s| s.pointer("/properties/status")).cloned();
    if let (Some(status), Some(properties)) = (status, schema.get_mut("properties").and_then(Value::as_object_mut)) {
        properties.entry("status").or_insert(status);
    }
    let parsed = Arc::new(schema);
    cache.retain(|_, (weak, _)| weak.as_ref().is_none_or(|w| w.strong_count() > 0));
    cache.insert(key, (structural.as_ref().map(Arc::downgrade), parsed.clone()));
    parsed.is_object().then_some(parsed)
}

/// How many pruning schemas are cached for the validation schema `text`.
#[cfg(test)]
fn cached_for(text: &'static str) -> usize {
    let cache = SCHEMAS.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    cache.keys().filter(|(t, _)| *t == text.as_ptr() as usize).count()
}

/// Removes from `object` every field `schema` (a CRD version's
/// `openAPIV3Schema`) does not declare and returns their paths as the API
/// server lists them: sorted, and those inside embedded resources'
/// `metadata` after the rest. `apiVersion`, `kind` and ObjectMeta's fields
/// are known at the root and in embedded resources; nothing is pruned below
/// `x-kubernetes-preserve-unknown-fields` but what its declared properties
/// say.
pub(crate) fn prune(object: &mut Value, schema: &Value) -> Vec<String> {
    let mut found = Pruned::default();
    prune_node(object, schema, "", true, &mut found);
    found.sorted.sort();
    found.sorted.extend(found.late);
    found.sorted
}

#[derive(Default)]
struct Pruned {
    sorted: Vec<String>,
    late: Vec<String>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn prune_node(value: &mut Value, schema: &Value, path: &str, resource: bool, out: &mut Pruned) {
    let flag = |key: &str| schema.get(key).and_then(Value::as_bool).unwrap_or(false);
    match value {
        Value::Object(map) => {
            // What a structural schema leaves undescribed is kept: a
            // scalar's `{}` and an atomic map (whose fields the fake's
            // structural schemas do not list).
            let has = |key: &str| schema.get(key).is_some();
            let described = has("type") || has("properties") || has("additionalProperties");
            let atomic = schema.get("x-kubernetes-map-type").is_some_and(|t| t == "atomic")
                && !has("properties")
                && !has("additionalProperties");
            if !described || atomic {
                return;
            }
            let resource = resource || flag("x-kubernetes-embedded-resource");
            let preserve = flag("x-kubernetes-preserve-unknown-fields");
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let child_path = join(path, &key);
                if resource && (key == "apiVersion" || key == "kind") {
                    continue;
                }
                if resource && key == "metadata" {
                    let mut found = Vec::new();
                    if let Some(meta) = map.get_mut(&key) {
                        prune_object_meta(meta, &child_path, &mut found);
                    }
                    // The root's metadata is pruned with the rest; embedded
                    // resources' afterwards.
                    if path.is_empty() {
                        out.sorted.extend(found)
                    } else {
                        out.late.extend(found)
                    }
                    continue;
                }
                let child_schema = properties.and_then(|p| p.get(&key)).or(match additional {
                    Some(a @ Value::Object(_)) => Some(a),
                    _ => None,
                });
                match child_schema {
                    Some(s) => {
                        if let Some(child) = map.get_mut(&key) {
                            prune_node(child, s, &child_path, false, out);
                        }
                    }
                    None if preserve || matches!(additional, Some(Value::Bool(true))) => {}
                    None => {
                        map.remove(&key);
                        out.sorted.push(child_path);
                    }
                }
            }
        }
        Value::Array(items) => {
            // Items left undescribed (an atomic list in a structural schema)
            // are kept.
            let Some(items_schema) = schema.get("items") else { return };
            for (i, item) in items.iter_mut().enumerate() {
                prune_node(item, items_schema, &format!("{path}[{i}]"), false, out);
            }
        }
        _ => {}
    }
}

/// Prunes `metadata` to ObjectMeta's fields (and its owner references' and
/// managedFields entries' fields).
fn prune_object_meta(meta: &mut Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = meta.as_object_mut() else { return };
    prune_keys(map, OBJECT_META, path, out);
    for (list, fields) in [("managedFields", MANAGED_FIELDS_ENTRY), ("ownerReferences", OWNER_REFERENCE)] {
        if let Some(Value::Array(items)) = map.get_mut(list) {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(item) = item.as_object_mut() {
                    prune_keys(item, fields, &format!("{path}.{list}[{i}]"), out);
                }
            }
        }
    }
}

fn prune_keys(map: &mut Map<String, Value>, known: &[&str], path: &str, out: &mut Vec<String>) {
    let unknown: Vec<String> = map.keys().filter(|k| !known.contains(&k.as_str())).cloned().collect();
    for key in unknown {
        map.remove(&key);
        out.push(format!("{path}.{key}"));
    }
}

/// The paths of the fields given more than once in the JSON `body`, in the
/// order they appear (the value given last is the one kept); empty when the
/// body is not JSON.
pub(crate) fn duplicates(body: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    if (Walk { path: String::new(), out: &mut out }).deserialize(&mut de).is_err() {
        return Vec::new();
    }
    out
}

/// Walks a JSON document, noting duplicate keys of every object.
struct Walk<'a> {
    path: String,
    out: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq.next_element_seed(Walk { path: format!("{}[{i}]", self.path), out: &mut *self.out })?.is_some() {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = join(&self.path, &key);
            if !seen.insert(key) {
                self.out.push(path.clone());
            }
            map.next_value_seed(Walk { path, out: &mut *self.out })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Kinds registered again and again (a fake server per test) leave one
    /// cached schema, each pruning by its own structural schema.
    #[test]
    fn the_schema_cache_keeps_what_live_kinds_use() {
        static TEXT: &str =
            r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}"#;
        let info = |status: &str| {
            ResourceInfo {
                group: "cache.example.com".into(),
                version: "v1".into(),
                kind: "Probe".into(),
                plural: "probes".into(),
                namespaced: true,
                has_status_subresource: true,
                schema: None,
                validation: None,
                aggregated: false,
                scale: None,
            }
            .with_validation(TEXT)
            .with_schema(json!({"type": "object", "properties": {"status": {"type": "object", "properties": {status: {"type": "string"}}}}}))
        };
        for round in 0..50 {
            let status = if round % 2 == 0 { "even" } else { "odd" };
            let info = info(status);
            let schema = schema_of(&info).unwrap();
            assert!(schema.pointer(&format!("/properties/status/properties/{status}")).is_some(), "round {round}");
            assert!(schema.pointer("/properties/spec/properties/a").is_some());
            assert!(cached_for(TEXT) <= 2, "round {round}: {} cached", cached_for(TEXT));
        }
        // Two live registrations at once are two entries, both kept.
        let (even, odd) = (info("even"), info("odd"));
        let (a, b) = (schema_of(&even).unwrap(), schema_of(&odd).unwrap());
        assert!(Arc::ptr_eq(&a, &schema_of(&even).unwrap()), "cached");
        assert!(Arc::ptr_eq(&b, &schema_of(&odd).unwrap()), "cached");
    }

    /// The schema and the write of tests/tests/e2e_fake_custom.rs,
    /// with the API server's answer.
    #[test]
    fn unknown_fields_are_pruned_and_listed_as_the_api_server_lists_them() {
        let schema = json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                             "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                    "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                            "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}
                }},
                "status": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            }
        });
        let mut object = json!({
            "apiVersion": "fv.example.com/v1", "kind": "Widget",
            "metadata": {"name": "a", "bogus": 1, "ownerReferences": [{"uid": "u", "q": 1}]},
            "spec": {"size": 1, "extra": 2, "items": [{"name": "x", "q": 1}], "labels": {"k": {"v": "1", "z": 2}},
                     "free": {"anything": 1, "known": {"a": "b", "c": "d"}},
                     "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n", "foo": 1}, "spec": {"x": "1", "y": 2}, "other": 3}},
            "status": {"ok": true, "no": 1},
            "top": 1
        });
        assert_eq!(
            prune(&mut object, &schema),
            [
                "metadata.bogus",
                "metadata.ownerReferences[0].q",
                "spec.emb.other",
                "spec.emb.spec.y",
                "spec.extra",
                "spec.free.known.c",
                "spec.items[0].q",
                "spec.labels.k.z",
                "status.no",
                "top",
                "spec.emb.metadata.foo",
            ]
        );
        assert_eq!(
            object,
            json!({
                "apiVersion": "fv.example.com/v1", "kind": "Widget",
                "metadata": {"name": "a", "ownerReferences": [{"uid": "u"}]},
                "spec": {"size": 1, "items": [{"name": "x"}], "labels": {"k": {"v": "1"}},
                         "free": {"anything": 1, "known": {"a": "b"}},
                         "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n"}, "spec": {"x": "1"}}},
                "status": {"ok": true}
            })
        );
    }

    /// The fake's structural schemas leave atomic lists' items, atomic
    /// maps' fields and scalars undescribed: nothing below them is pruned.
    #[test]
    fn what_a_schema_leaves_undescribed_is_kept() {
        let schema = json!({"type": "object", "properties": {
            "list": {"type": "array"},
            "map": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "scalar": {},
            "empty": {"type": "object"}
        }});
        let mut object = json!({"list": [{"a": 1}], "map": {"b": 2}, "scalar": {"c": 3}, "empty": {"d": 4}});
        assert_eq!(prune(&mut object, &schema), ["empty.d"]);
        assert_eq!(object, json!({"list": [{"a": 1}], "map": {"b": 2}, "scalar": {"c": 3}, "empty": {}}));
    }

    /// A generated kind's validation schema has no `status` when it is a
    /// subresource: the structural schema's is used for it.
    #[test]
    fn status_is_pruned_by_the_structural_schema_when_validation_leaves_it_out() {
        static VALIDATION: &str =
            r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}"#;
        let info = ResourceInfo::default().with_validation(VALIDATION).with_schema(json!({
            "type": "object",
            "properties": {"spec": {"type": "object"}, "status": {"type": "object", "properties": {"ok": {}}}}
        }));
        let schema = schema_of(&info).unwrap();
        let mut object = json!({"spec": {"a": "x", "b": 1}, "status": {"ok": true, "no": 1}});
        assert_eq!(prune(&mut object, &schema), ["spec.b", "status.no"]);
        assert!(schema_of(&ResourceInfo::default()).is_none());
    }

    /// A kind of an aggregated API server keeps its structural schema for
    /// apply only: not pruned, not a custom resource.
    #[test]
    fn aggregated_kinds_are_not_pruned() {
        let info =
            ResourceInfo::default().with_schema(json!({"type": "object", "properties": {"spec": {"type": "object"}}}));
        assert!(info.is_custom() && schema_of(&info).is_some());
        let info = info.aggregated();
        assert!(!info.is_custom() && schema_of(&info).is_none());
    }

    #[test]
    fn duplicates_are_found_at_every_depth_in_document_order() {
        let body =
            br#"{"metadata":{"name":"c","name":"d"},"spec":{"size":1,"items":[{"name":"a","name":"b"}],"size":2}}"#;
        assert_eq!(duplicates(body), ["metadata.name", "spec.items[0].name", "spec.size"]);
        assert!(duplicates(b"{\"a\":1}").is_empty());
        assert!(duplicates(b"not json").is_empty());
    }
}
