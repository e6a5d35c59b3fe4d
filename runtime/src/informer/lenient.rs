//! Decoding one object at a time, so that one object that does not fit the
//! Rust type cannot stop a list page or a watch.
//!
//! The watch runs kube's `watcher` over one concrete type, [`Item`], for
//! every kind: its list/watch state machine is compiled once, in this crate,
//! not once per kind in every crate with an informer. An [`Item`] keeps the
//! item's JSON text (not a JSON value tree) only until the kind's [`Decode`]
//! function has made the typed object from it; the function is the one piece
//! of per-kind code, and the watch finds it through [`Decoding`], which
//! installs it while the watch stream is polled (kube decodes list pages and
//! watch events inside that poll). When decoding fails, the failure's place
//! in the item is worked out from serde's position and the object's metadata
//! is read on its own. The text is taken straight from the response, which
//! needs a watch event's `type` before its `object`, the order in which the
//! API server writes them.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::{ApiResource, ObjectMeta};
use serde::de::{
    Deserialize, DeserializeOwned, DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor,
};
use serde_json::value::RawValue;

use super::ManagedFields;
use crate::object::{AnyObject, ErasedObject, downcast_ref, meta_key};

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
    /// Where decoding failed, as a path (`spec.replicas`,
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

/// Turns the JSON text of one object into the kind's object (transformed,
/// ready to cache), or says why it is not one.
pub(crate) type Decode = dyn Fn(&str) -> Item + Send + Sync;

/// Copies an object of the kind (for [`Item`]'s `meta_mut` on a shared one).
type CloneObject = fn(&dyn AnyObject) -> ErasedObject;

/// An item of a list page or a watch event: an object of the watched kind
/// (with its `managedFields` as JSON text when they are kept apart from
/// it), or why it is not one.
#[derive(Clone)]
pub(crate) enum Item {
    Decoded(ErasedObject, CloneObject, Option<Box<str>>),
    Malformed(Box<Bad>),
}

/// Why an item is not an object of the kind, and what is known of it.
#[derive(Clone, Debug)]
pub(crate) struct Bad {
    meta: ObjectMeta,
    path: String,
    error: String,
}

impl fmt::Debug for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Decoded(obj, _, _) => f.debug_tuple("Decoded").field(&meta_key(obj.object_meta())).finish(),
            Item::Malformed(bad) => f.debug_tuple("Malformed").field(bad).finish(),
        }
    }
}

impl Item {
    /// A decoded object of kind `K`, and its `managedFields` as JSON text
    /// when they are kept apart from it.
    pub(crate) fn decoded<K: Clone + Resource + Send + Sync + 'static>(obj: K, managed: Option<Box<str>>) -> Self {
        Item::Decoded(Arc::new(obj), clone_object::<K>, managed)
    }

    /// The report of a malformed item (`None` for a decoded one).
    pub(crate) fn malformed(&self, api_version: &str, kind: &str) -> Option<MalformedObject> {
        let Item::Malformed(bad) = self else { return None };
        let Bad { meta, path, error } = &**bad;
        Some(MalformedObject {
            key: meta_key(meta),
            reference: ObjectReference {
                api_version: Some(api_version.to_owned()),
                kind: Some(kind.to_owned()),
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

fn clone_object<K: Clone + Resource + Send + Sync + 'static>(obj: &dyn AnyObject) -> ErasedObject {
    Arc::new(downcast_ref::<K>(obj).clone())
}

/// The decoding function of a kind: `K` from JSON (list items of built-in
/// and aggregated API servers without `apiVersion`/`kind` get `K`'s), then
/// `transform`. Unless `managed` is [`ManagedFields::Decoded`], the text of
/// `metadata.managedFields` is cut out of the object's text before it is
/// decoded (no JSON value trees are built for it) and kept or dropped.
pub(crate) fn decoder<K>(transform: Option<Arc<dyn Fn(K) -> K + Send + Sync>>, managed: ManagedFields) -> Arc<Decode>
where
    K: Clone + Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
{
    Arc::new(move |json: &str| {
        let span = if managed == ManagedFields::Decoded { None } else { managed_fields_span(json) };
        let (json, kept) = match span {
            Some(span) => {
                let mut rest = String::with_capacity(json.len() - span.len() + 4);
                rest.push_str(&json[..span.start]);
                rest.push_str("null");
                rest.push_str(&json[span.end..]);
                let kept = (managed == ManagedFields::Text).then(|| Box::from(&json[span]));
                (Cow::Owned(rest), kept)
            }
            None => (Cow::Borrowed(json), None),
        };
        match crate::object::from_json_filling_type_meta::<K>(&json) {
            Ok(obj) => Item::decoded(
                match &transform {
                    Some(transform) => transform(obj),
                    None => obj,
                },
                kept,
            ),
            Err(err) => Item::Malformed(Box::new(Bad::new(&json, &err))),
        }
    })
}

/// Where the value of `metadata.managedFields` is in the JSON text of one
/// object, as a byte range: `None` when it is absent or `null`, when the
/// text is not a JSON object with an object `metadata`, and when the object
/// has two `metadata` members or its metadata two `managedFields` (the
/// object is then decoded as a whole, as without this probe, so that it
/// decodes to the same object either way). Nothing is built while reading.
pub(crate) fn managed_fields_span(json: &str) -> Option<Range<usize>> {
    let metadata = only_member(json, "metadata")?;
    let fields = only_member(metadata, "managedFields")?;
    if fields == "null" {
        return None;
    }
    let start = (fields.as_ptr() as usize).checked_sub(json.as_ptr() as usize)?;
    Some(start..start + fields.len()).filter(|span| span.end <= json.len())
}

/// The text of the value of the member `key` of the JSON object `json`, a
/// slice of `json`: `None` unless `json` is one JSON object with exactly
/// one such member.
fn only_member<'a>(json: &'a str, key: &'static str) -> Option<&'a str> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = de.deserialize_map(OnlyMember(key)).ok()??;
    de.end().ok()?;
    Some(value.get())
}

/// Reads the members of a JSON object, keeping the text of the one called
/// `.0` and skipping the others without building anything; a second one of
/// that name is an error.
struct OnlyMember(&'static str);

impl<'de> Visitor<'de> for OnlyMember {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(wanted) = map.next_key_seed(IsKey(self.0))? {
            if !wanted {
                map.next_value::<IgnoredAny>()?;
            } else if found.replace(map.next_value::<&'de RawValue>()?).is_some() {
                return Err(A::Error::custom(format_args!("two `{}` members", self.0)));
            }
        }
        Ok(found)
    }
}

/// The property of the fuzz target `informer_item` (see
/// [`crate::fuzz::informer_item`]), on ConfigMaps.
#[cfg(feature = "fuzzing")]
pub(crate) fn check_item(json: &str) {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    let span = managed_fields_span(json);
    if let Some(span) = &span {
        assert!(serde_json::from_str::<&RawValue>(&json[span.clone()]).is_ok(), "the span is not one JSON value");
        let rest = format!("{}null{}", &json[..span.start], &json[span.end..]);
        assert!(serde_json::from_str::<IgnoredAny>(&rest).is_ok(), "the text without managedFields is not JSON");
    }
    let decode = |managed| decoder::<ConfigMap>(None, managed)(json);
    let Item::Decoded(decoded, _, kept) = decode(ManagedFields::Decoded) else { return };
    assert!(kept.is_none(), "text kept although decoded");
    let decoded = downcast_ref::<ConfigMap>(&*decoded);
    for managed in [ManagedFields::Text, ManagedFields::Dropped] {
        let Item::Decoded(obj, _, kept) = decode(managed) else {
            panic!("decodes with managedFields decoded, not with {managed:?}")
        };
        let mut obj = downcast_ref::<ConfigMap>(&*obj).clone();
        if span.is_some() {
            assert_eq!(obj.metadata.managed_fields, None, "{managed:?} left them in the object");
        }
        obj.metadata.managed_fields = match (managed, kept) {
            (ManagedFields::Text, Some(text)) => {
                Some(serde_json::from_str::<Vec<ManagedFieldsEntry>>(&text).expect("the kept text reads back"))
            }
            (_, Some(_)) => panic!("{managed:?} kept text"),
            (ManagedFields::Text, None) => obj.metadata.managed_fields,
            (_, None) if span.is_some() => decoded.metadata.managed_fields.clone(),
            (_, None) => obj.metadata.managed_fields,
        };
        assert_eq!(&obj, decoded, "{managed:?} decodes to another object");
    }
}

/// A map key: whether it is the one wanted (read in place, not copied).
struct IsKey(&'static str);

impl<'de> DeserializeSeed<'de> for IsKey {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for IsKey {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// Only the metadata of an object that does not decode as a whole.
#[derive(serde::Deserialize)]
struct MetaOnly {
    #[serde(default)]
    metadata: ObjectMeta,
}

impl Bad {
    /// What is known of `json`, whose decoding failed with `err`.
    fn new(json: &str, err: &serde_json::Error) -> Self {
        let meta = serde_json::from_str::<MetaOnly>(json).map(|m| m.metadata).unwrap_or_default();
        Bad { meta, path: path_at(json, err.line(), err.column()), error: message(err) }
    }
}

/// serde's message without " at line 1 column N" (a position in the
/// item's own text, which the reader never sees).
fn message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&position).unwrap_or(&text).to_owned()
}

/// Where a JSON document is, while scanning it.
enum Frame {
    /// In an object, after this key (`None` before the first key, and
    /// between a comma and the next key).
    Object(Option<String>),
    /// In an array, at this index.
    Array(usize),
}

/// The path (`spec.ports[0].port`, `.` for the document itself) of the
/// innermost value that holds the character at 1-based `line` and `column`
/// of `json`: where serde stopped when it failed. A container whose opening
/// bracket is that character counts as the value itself, not as its first
/// member, since serde refuses a value of the wrong type at its first
/// character.
pub(crate) fn path_at(json: &str, line: usize, column: usize) -> String {
    let bytes = json.as_bytes();
    let line_start = if line <= 1 {
        0
    } else {
        bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(line - 2).map_or(bytes.len(), |(i, _)| i + 1)
    };
    let end = (line_start + column).min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'{' if i + 1 < end => stack.push(Frame::Object(None)),
            b'[' if i + 1 < end => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(index)) => *index += 1,
                Some(Frame::Object(key)) => *key = None,
                None => {}
            },
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object(key @ None)) = stack.last_mut() {
                    let text = &json[start..(i + 1).min(json.len())];
                    *key = Some(
                        serde_json::from_str::<String>(text).unwrap_or_else(|_| text.trim_matches('"').to_owned()),
                    );
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object(None) => break,
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    if path.is_empty() { ".".to_owned() } else { path }
}

thread_local! {
    /// The decoding function of the watch being polled on this thread.
    static DECODER: RefCell<Option<Arc<Decode>>> = const { RefCell::new(None) };
}

/// Puts the previous decoding function back when a poll ends (or unwinds).
struct Installed(Option<Arc<Decode>>);

impl Drop for Installed {
    fn drop(&mut self) {
        let previous = self.0.take();
        DECODER.with(|decoder| *decoder.borrow_mut() = previous);
    }
}

/// A watch stream of [`Item`]s, polled with its kind's decoding function
/// installed.
pub(crate) struct Decoding<S> {
    inner: S,
    decode: Arc<Decode>,
}

impl<S> Decoding<S> {
    pub(crate) fn new(inner: S, decode: Arc<Decode>) -> Self {
        Decoding { inner, decode }
    }
}

impl<S: Stream + Unpin> Stream for Decoding<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let previous = DECODER.with(|decoder| decoder.replace(Some(self.decode.clone())));
        let _restore = Installed(previous);
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <Box<RawValue>>::deserialize(deserializer)?;
        let decode = DECODER.with(|decoder| decoder.borrow().clone());
        match decode {
            Some(decode) => Ok(decode(raw.get())),
            None => Err(D::Error::custom("an informer item was decoded outside its informer's watch")),
        }
    }
}

/// The resource of the watched kind, as an [`ApiResource`], so that one
/// `Api<Item>` type serves every kind.
impl Resource for Item {
    type DynamicType = ApiResource;
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.kind)
    }

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.group)
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.version)
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.api_version)
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        Cow::Borrowed(&dt.plural)
    }

    fn meta(&self) -> &ObjectMeta {
        match self {
            Item::Decoded(obj, _, _) => obj.object_meta(),
            Item::Malformed(bad) => &bad.meta,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Item::Decoded(obj, clone, _) => {
                // Copy on write: the cache may share the object already.
                if Arc::get_mut(obj).is_none() {
                    *obj = clone(&**obj);
                }
                match Arc::get_mut(obj) {
                    Some(obj) => obj.object_meta_mut(),
                    None => unreachable!("a fresh copy is not shared"),
                }
            }
            Item::Malformed(bad) => &mut bad.meta,
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    use super::*;

    /// Decodes `json` as `T` with the decoding function of ConfigMaps
    /// installed, the way the watch does.
    fn with_decoder<T: DeserializeOwned + Send + 'static>(json: &'static str) -> T {
        let stream = futures::stream::once(async move { serde_json::from_str::<T>(json).unwrap() }).boxed();
        let mut decoding = Decoding::new(stream, decoder::<ConfigMap>(None, ManagedFields::Decoded));
        futures::executor::block_on(decoding.next()).unwrap()
    }

    fn config_map(item: &Item) -> &ConfigMap {
        match item {
            Item::Decoded(obj, _, _) => downcast_ref::<ConfigMap>(&**obj),
            Item::Malformed(bad) => panic!("malformed: {bad:?}"),
        }
    }

    #[test]
    fn decodes_good_items_and_names_the_path_of_bad_ones() {
        let page = r#"{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":[
            {"metadata":{"name":"good","namespace":"ns","resourceVersion":"7"},"data":{"a":"b"}},
            {"metadata":{"name":"bad","namespace":"ns","uid":"u-1","resourceVersion":"8"},"data":{"a":42}},
            {"metadata":{"name":"worse","namespace":"ns"},"data":7}
        ]}"#;
        let list: kube::core::ObjectList<Item> = with_decoder(page);
        assert_eq!(list.metadata.resource_version.as_deref(), Some("9"));
        let [good, bad, worse] = &list.items[..] else { panic!("three items") };
        assert_eq!(config_map(good).data.as_ref().unwrap()["a"], "b");
        assert!(good.malformed("v1", "ConfigMap").is_none());
        let bad = bad.malformed("v1", "ConfigMap").unwrap();
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
        assert_eq!(worse.malformed("v1", "ConfigMap").unwrap().path, "data");
    }

    #[test]
    fn a_watch_event_with_a_bad_object_still_decodes() {
        let line = r#"{"type":"MODIFIED","object":{"metadata":{"name":"bad","namespace":"ns"},"data":[]}}"#;
        let event: kube::core::WatchEvent<Item> = with_decoder(line);
        let kube::core::WatchEvent::Modified(obj) = event else { panic!("a MODIFIED event") };
        let report = obj.malformed("v1", "ConfigMap").unwrap();
        assert_eq!((report.key.as_str(), report.path.as_str()), ("ns/bad", "data"));
    }

    #[test]
    fn finds_the_managed_fields_of_the_metadata_only_when_unambiguous() {
        let span = |json: &str| managed_fields_span(json).map(|span| json[span].to_owned());
        let fields = r#"[{"manager":"m","fieldsV1":{"f:data":{"f:a":{}}}}]"#;
        let json = format!(r#"{{"kind":"ConfigMap","metadata":{{"name":"a","managedFields":{fields}}},"data":{{}}}}"#);
        assert_eq!(span(&json).as_deref(), Some(fields));
        // Escaped keys, metadata after the rest, nested look-alikes.
        let json = format!(
            r#"{{"spec":{{"metadata":{{"managedFields":[1]}}}},"metadata":{{"labels":{{"managedFields":"x"}},"manag\u0065dFields":{fields}}}}}"#
        );
        assert_eq!(span(&json).as_deref(), Some(fields));
        for none in [
            r#"{"metadata":{"name":"a"},"data":{}}"#,
            r#"{"metadata":{"name":"a","managedFields":null}}"#,
            r#"{"spec":{"metadata":{"managedFields":[1]}}}"#,
            r#"{"metadata":{"name":"a","managedFields":[{"manager":"m""#,
            r#"{"metadata":"#,
            r#"{"metadata":{"managedFields":[1]},"metadata":{"name":"b"}}"#,
            r#"{"metadata":{"managedFields":[1],"managedFields":[2]}}"#,
            r#"{"metadata":{"managedFields":[1]}} trailing"#,
            r#"[]"#,
            "",
        ] {
            assert_eq!(span(none), None, "{none}");
        }
    }

    /// Decodes one item as a ConfigMap informer keeping managedFields as
    /// `managed` does.
    fn decode(json: &str, managed: ManagedFields) -> Item {
        decoder::<ConfigMap>(None, managed)(json)
    }

    #[test]
    fn managed_fields_are_decoded_kept_as_text_or_dropped() {
        let fields = r#"[{"manager":"kubectl","operation":"Apply","apiVersion":"v1","time":"2026-01-02T03:04:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]"#;
        let json = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"a","namespace":"ns","managedFields":{fields}}},"data":{{"a":"b"}}}}"#
        );
        let decoded = decode(&json, ManagedFields::Decoded);
        let Item::Decoded(_, _, None) = &decoded else { panic!("no text when decoded") };
        let entries = config_map(&decoded).metadata.managed_fields.clone().expect("decoded in the object");
        assert_eq!(entries[0].manager.as_deref(), Some("kubectl"));

        let text = decode(&json, ManagedFields::Text);
        let Item::Decoded(_, _, Some(kept)) = &text else { panic!("kept as text") };
        assert_eq!(&**kept, fields);
        assert_eq!(serde_json::from_str::<Vec<ManagedFieldsEntry>>(kept).unwrap(), entries);
        let mut without = config_map(&decoded).clone();
        without.metadata.managed_fields = None;
        assert_eq!(config_map(&text), &without, "the rest decodes as before");

        let dropped = decode(&json, ManagedFields::Dropped);
        let Item::Decoded(_, _, None) = &dropped else { panic!("nothing kept when dropped") };
        assert_eq!(config_map(&dropped), &without);
    }

    #[test]
    fn a_bad_object_without_its_managed_fields_is_reported_where_it_is_bad() {
        let json = r#"{"metadata":{"name":"bad","namespace":"ns","managedFields":[{"manager":"m"}]},"data":{"a":1}}"#;
        for managed in [ManagedFields::Decoded, ManagedFields::Text, ManagedFields::Dropped] {
            let report = decode(json, managed).malformed("v1", "ConfigMap").expect("malformed");
            assert_eq!((report.key.as_str(), report.path.as_str()), ("ns/bad", "data.a"), "{managed:?}");
        }
    }

    #[test]
    fn outside_a_watch_an_item_is_an_error_not_a_panic() {
        let err = serde_json::from_str::<Item>(r#"{"metadata":{"name":"a"}}"#).unwrap_err();
        assert!(err.to_string().contains("outside its informer's watch"), "{err}");
    }

    #[test]
    fn paths_agree_with_serde_path_to_error() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Port {
            port: i32,
            #[serde(default)]
            name: Option<String>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Spec {
            replicas: i32,
            ports: Vec<Port>,
            labels: std::collections::BTreeMap<String, String>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Doc {
            spec: Spec,
        }
        for json in [
            r#"{"spec":{"replicas":"x","ports":[],"labels":{}}}"#,
            r#"{"spec":{"replicas":1,"ports":[{"port":1},{"port":"p"}],"labels":{}}}"#,
            r#"{"spec":{"replicas":1,"ports":[{"port":1},{"name":7}],"labels":{}}}"#,
            r#"{"spec":{"replicas":1,"ports":[{"port":1},{"name":"n"}],"labels":{}}}"#,
            r#"{"spec":{"replicas":1,"ports":{},"labels":{}}}"#,
            r#"{"spec":{"replicas":1,"ports":[7],"labels":{}}}"#,
            r#"{"spec":{"replicas":1,"ports":[],"labels":{"a\"b":1}}}"#,
            r#"{"spec":{"replicas":1,"ports":[]}}"#,
            r#"{"spec":[]}"#,
            r#"{}"#,
            "{\n  \"spec\": {\n    \"replicas\": 1,\n    \"ports\": [\n      {\"port\": true}\n    ],\n    \"labels\": {}\n  }\n}",
        ] {
            let err = serde_json::from_str::<Doc>(json).unwrap_err();
            let mut de = serde_json::Deserializer::from_str(json);
            let expected = serde_path_to_error::deserialize::<_, Doc>(&mut de).unwrap_err().path().to_string();
            assert_eq!(path_at(json, err.line(), err.column()), expected, "{json}: {err}");
        }
    }
}
