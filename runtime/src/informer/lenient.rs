//! Decoding one object at a time, so that one object that does not fit the
//! Rust type cannot stop a list page or a watch: [`Lenient<K>`] is what the
//! informer's watch decodes each item of a page and each watch event into.
//! It keeps the item's JSON text (not a JSON value tree) only until `K` is
//! decoded from it; when that fails, the failure's serde path is worked out
//! and the object's metadata is read on its own. The text is taken straight
//! from the response, which needs a watch event's `type` before its
//! `object`, the order in which the API server writes them.

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::ObjectMeta;
use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::value::RawValue;

use crate::object::meta_namespace_key;

/// An object the informer saw but could not decode into its Rust type: a
/// newer CRD than the controller was built for, a field with
/// `preserve_unknown_fields`, version skew. It is not cached; every other
/// object still syncs.
#[derive(Clone, Debug, PartialEq)]
pub struct MalformedObject {
    /// `namespace/name` (client-go's cache key).
    pub key: String,
    /// apiVersion, kind, namespace, name and uid, e.g. for an event about it.
    pub reference: ObjectReference,
    /// The resourceVersion that did not decode.
    pub resource_version: Option<String>,
    /// Where decoding failed, as a serde path (`spec.replicas`,
    /// `spec.ports[0].port`; `.` for the object itself).
    pub path: String,
    /// What serde said.
    pub error: String,
}

impl fmt::Display for MalformedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.reference.kind.as_deref().unwrap_or("object");
        write!(f, "{kind} {} does not decode", self.key)?;
        if let Some(rv) = &self.resource_version {
            write!(f, " (resourceVersion {rv})")?;
        }
        write!(f, " at `{}`: {}", self.path, self.error)
    }
}

/// An item of a list page or a watch event: `K`, or why it is not one.
#[derive(Clone, Debug)]
pub(crate) enum Lenient<K> {
    Decoded(K),
    Malformed(Box<Bad>),
}

/// Why an item is not a `K`, and what is known of it.
#[derive(Clone, Debug)]
pub(crate) struct Bad {
    meta: ObjectMeta,
    path: String,
    error: String,
}

impl<K: Resource<DynamicType = ()>> Lenient<K> {
    /// The report of a malformed item (`None` for a decoded one).
    pub(crate) fn malformed(&self) -> Option<MalformedObject> {
        let Lenient::Malformed(bad) = self else { return None };
        let Bad { meta, path, error } = &**bad;
        Some(MalformedObject {
            key: meta_namespace_key(self),
            reference: ObjectReference {
                api_version: Some(K::api_version(&()).into_owned()),
                kind: Some(K::kind(&()).into_owned()),
                namespace: meta.namespace.clone(),
                name: meta.name.clone(),
                uid: meta.uid.clone(),
                ..ObjectReference::default()
            },
            resource_version: meta.resource_version.clone(),
            path: path.clone(),
            error: error.clone(),
        })
    }
}

/// Only the metadata of an object that does not decode as a whole.
#[derive(serde::Deserialize)]
struct MetaOnly {
    #[serde(default)]
    metadata: ObjectMeta,
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <Box<RawValue>>::deserialize(deserializer)?;
        Ok(decode(raw.get()))
    }
}

/// `K` from `json`; on failure, the serde path and message of the first
/// error and whatever metadata can be read.
pub(crate) fn decode<K: DeserializeOwned>(json: &str) -> Lenient<K> {
    match serde_json::from_str::<K>(json) {
        Ok(obj) => Lenient::Decoded(obj),
        Err(plain) => {
            // Again with the path tracked: only objects that fail pay for it.
            let mut de = serde_json::Deserializer::from_str(json);
            let (path, error) = match serde_path_to_error::deserialize::<_, K>(&mut de) {
                Err(e) => (e.path().to_string(), message(e.inner())),
                Ok(_) => (".".to_string(), message(&plain)),
            };
            let meta = serde_json::from_str::<MetaOnly>(json).map(|m| m.metadata).unwrap_or_default();
            Lenient::Malformed(Box::new(Bad { meta, path, error }))
        }
    }
}

/// `K`'s resource; the scope is dynamic so that an `Api` for it can be
/// built in `K`'s namespace whatever `K`'s scope type is (the URL is
/// `K`'s).
/// serde's message without " at line 1 column N" (a position in the
/// item's own text, which the reader never sees).
fn message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&position).unwrap_or(&text).to_owned()
}

impl<K: Resource> Resource for Lenient<K> {
    type DynamicType = K::DynamicType;
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn api_version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::api_version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn url_path(dt: &Self::DynamicType, namespace: Option<&str>) -> String {
        K::url_path(dt, namespace)
    }

    fn meta(&self) -> &ObjectMeta {
        match self {
            Lenient::Decoded(obj) => obj.meta(),
            Lenient::Malformed(bad) => &bad.meta,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Lenient::Decoded(obj) => obj.meta_mut(),
            Lenient::Malformed(bad) => &mut bad.meta,
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn decodes_good_items_and_names_the_path_of_bad_ones() {
        let page = r#"{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":[
            {"metadata":{"name":"good","namespace":"ns","resourceVersion":"7"},"data":{"a":"b"}},
            {"metadata":{"name":"bad","namespace":"ns","uid":"u-1","resourceVersion":"8"},"data":{"a":42}},
            {"metadata":{"name":"worse","namespace":"ns"},"data":7}
        ]}"#;
        let list: kube::core::ObjectList<Lenient<ConfigMap>> = serde_json::from_str(page).unwrap();
        assert_eq!(list.metadata.resource_version.as_deref(), Some("9"));
        let [good, bad, worse] = &list.items[..] else { panic!("three items") };
        assert!(matches!(good, Lenient::Decoded(cm) if cm.data.as_ref().unwrap()["a"] == "b"));
        assert!(good.malformed().is_none());
        let bad = bad.malformed().unwrap();
        assert_eq!(bad.key, "ns/bad");
        assert_eq!(bad.path, "data.a");
        assert_eq!(bad.resource_version.as_deref(), Some("8"));
        assert_eq!(bad.reference.uid.as_deref(), Some("u-1"));
        assert_eq!(bad.reference.kind.as_deref(), Some("ConfigMap"));
        assert!(bad.error.contains("invalid type: integer `42`"), "{}", bad.error);
        assert_eq!(
            bad.to_string(),
            format!("ConfigMap ns/bad does not decode (resourceVersion 8) at `data.a`: {}", bad.error)
        );
        assert_eq!(worse.malformed().unwrap().path, "data");
    }

    #[test]
    fn a_watch_event_with_a_bad_object_still_decodes() {
        let line = r#"{"type":"MODIFIED","object":{"metadata":{"name":"bad","namespace":"ns"},"data":[]}}"#;
        let event: kube::core::WatchEvent<Lenient<ConfigMap>> = serde_json::from_str(line).unwrap();
        let kube::core::WatchEvent::Modified(obj) = event else { panic!("a MODIFIED event") };
        assert_eq!(obj.malformed().unwrap().key, "ns/bad");
    }
}
