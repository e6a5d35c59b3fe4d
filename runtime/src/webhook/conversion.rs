//! Conversion webhooks: hub-and-spoke conversion between the versions of a
//! kind, answering `apiextensions.k8s.io/v1` ConversionReviews.
//!
//! As in kubebuilder (`sigs.k8s.io/controller-runtime/pkg/conversion`), one
//! version of a kind is the hub — usually the storage version — and every
//! other version (a spoke) converts to and from it. A conversion between two
//! spokes goes through the hub, so n versions need n - 1 pairs of functions.
//!
//! ```ignore
//! use codegen_runtime::webhook::{Conversion, ConversionError, Convertible, Hub};
//!
//! impl Hub for v2::Task {}
//!
//! impl Convertible for v1::Task {
//!     type Hub = v2::Task;
//!     fn to_hub(self) -> Result<v2::Task, ConversionError> { /* ... */ }
//!     fn from_hub(hub: v2::Task) -> Result<Self, ConversionError> { /* ... */ }
//! }
//!
//! // Serves v1 <-> v2 of Task (and registers v2 as its hub).
//! let conversion = Conversion::new().spoke::<v1::Task>();
//! ```
//!
//! The tests of this module (`webhook/tests.rs`) and
//! `tests/tests/e2e_webhooks.rs` show it whole.

use std::collections::BTreeMap;
use std::fmt;

use kube::Resource;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The version every other version of a kind converts to and from
/// (kubebuilder's `conversion.Hub`); usually the storage version.
pub trait Hub: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static {}

/// A version of a kind that is not the hub (kubebuilder's
/// `conversion.Convertible`): it converts itself to the hub and back.
///
/// Copy `metadata` across unchanged: the API server keeps the object's
/// metadata, labels and annotations apart, from its own copy. A field only
/// one version has is lost on the way through the other unless it is kept
/// somewhere both have (kubebuilder keeps it in an annotation).
pub trait Convertible: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Sized + 'static {
    /// The hub this version converts through.
    type Hub: Hub;

    /// Converts this version to the hub (kubebuilder's `ConvertTo`).
    fn to_hub(self) -> Result<Self::Hub, ConversionError>;

    /// Converts the hub to this version (kubebuilder's `ConvertFrom`).
    fn from_hub(hub: Self::Hub) -> Result<Self, ConversionError>;
}

/// Why an object could not be converted; its message is what the API server
/// reports to the client (`conversion webhook for <group/version, Kind>
/// failed: <message>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError {
    message: String,
}

impl ConversionError {
    /// A conversion failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ConversionError { message: message.into() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConversionError {}

type ConvertFn = Box<dyn Fn(Value) -> Result<Value, ConversionError> + Send + Sync>;

/// One spoke version: to the hub and back, on JSON.
struct Spoke {
    to_hub: ConvertFn,
    from_hub: ConvertFn,
}

/// The versions of one kind.
struct KindVersions {
    hub_api_version: String,
    spokes: BTreeMap<String, Spoke>,
}

/// The conversions a conversion webhook serves: for each kind its hub and
/// spokes. One `Conversion` may serve several kinds (each with its own hub)
/// at one path, also kinds of one name in several groups.
#[derive(Default)]
pub struct Conversion {
    /// By `group/Kind` (`/Kind` for the core group).
    kinds: BTreeMap<String, KindVersions>,
}

/// The key of a kind among a conversion's kinds.
fn kind_key(group: &str, kind: &str) -> String {
    format!("{group}/{kind}")
}

impl fmt::Debug for Conversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (kind, versions) in &self.kinds {
            let spokes: Vec<&String> = versions.spokes.keys().collect();
            map.entry(kind, &(&versions.hub_api_version, spokes));
        }
        map.finish()
    }
}

fn decode<K: DeserializeOwned>(value: Value, what: impl FnOnce() -> String) -> Result<K, ConversionError> {
    crate::object::from_json_value(&value).map_err(|e| ConversionError::new(format!("decoding {}: {e}", what())))
}

fn encode<K: Serialize>(object: &K) -> Result<Value, ConversionError> {
    crate::object::to_json_value(object)
        .map_err(|e| ConversionError::new(format!("encoding the converted object: {e}")))
}

impl Conversion {
    /// No conversions yet.
    pub fn new() -> Self {
        Conversion::default()
    }

    /// Registers `H` as the hub of its kind. [`spoke`](Self::spoke) does this
    /// too; a kind with a hub and no spokes converts nothing.
    ///
    /// # Panics
    ///
    /// When another hub was registered for the same kind.
    pub fn hub<H: Hub>(mut self) -> Self {
        self.hub_entry::<H>();
        self
    }

    fn hub_entry<H: Hub>(&mut self) -> &mut KindVersions {
        let kind = H::kind(&()).into_owned();
        let api_version = H::api_version(&()).into_owned();
        let entry = self
            .kinds
            .entry(kind_key(&H::group(&()), &kind))
            .or_insert_with(|| KindVersions { hub_api_version: api_version.clone(), spokes: BTreeMap::new() });
        assert_eq!(entry.hub_api_version, api_version, "two hubs for kind {kind}");
        entry
    }

    /// Registers `S` as a spoke of its hub `S::Hub` (and that hub).
    ///
    /// # Panics
    ///
    /// When `S` has another kind than its hub, is the hub's own version, or
    /// was registered already with another hub.
    pub fn spoke<S: Convertible>(mut self) -> Self {
        let kind = S::kind(&()).into_owned();
        let api_version = S::api_version(&()).into_owned();
        assert_eq!(kind, <S::Hub as Resource>::kind(&()), "a spoke has the kind of its hub");
        let entry = self.hub_entry::<S::Hub>();
        assert_ne!(entry.hub_api_version, api_version, "{kind} {api_version} is the hub");
        let (hub_av, to_av) = (entry.hub_api_version.clone(), api_version.clone());
        let spoke = Spoke {
            to_hub: Box::new(move |value| {
                let spoke: S = decode(value, || format!("{} {}", S::kind(&()), S::api_version(&())))?;
                encode(&spoke.to_hub()?)
            }),
            from_hub: Box::new(move |value| {
                let hub: S::Hub = decode(value, || format!("{} {hub_av}", S::kind(&())))?;
                encode(&S::from_hub(hub)?)
            }),
        };
        assert!(entry.spokes.insert(to_av, spoke).is_none(), "{kind} {api_version} registered twice");
        self
    }

    /// Converts one object (JSON with `apiVersion` and `kind`) to
    /// `desired_api_version`: unchanged when it is there already, else to
    /// the hub and from the hub. The result carries the desired
    /// `apiVersion` and the object's `kind`.
    pub fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, ConversionError> {
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_owned();
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default().to_owned();
        if api_version == desired_api_version {
            return Ok(object);
        }
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let versions = self.kinds.get(&kind_key(group, &kind)).ok_or_else(|| {
            let which = if group.is_empty() { format!("{kind:?}") } else { format!("{kind:?} of group {group:?}") };
            ConversionError::new(format!("no conversion is registered for kind {which}"))
        })?;
        let spoke = |version: &str| {
            versions.spokes.get(version).ok_or_else(|| {
                let mut known: Vec<&str> = versions.spokes.keys().map(String::as_str).collect();
                known.push(&versions.hub_api_version);
                known.sort_unstable();
                ConversionError::new(format!("{kind} has no version {version:?} (known: {})", known.join(", ")))
            })
        };
        let metadata = object.get("metadata").cloned();
        let hub = if api_version == versions.hub_api_version { object } else { (spoke(&api_version)?.to_hub)(object)? };
        let mut converted = if desired_api_version == versions.hub_api_version {
            hub
        } else {
            (spoke(desired_api_version)?.from_hub)(hub)?
        };
        let Some(fields) = converted.as_object_mut() else {
            return Err(ConversionError::new("the converted object is not a JSON object"));
        };
        fields.insert("apiVersion".into(), Value::String(desired_api_version.to_owned()));
        fields.insert("kind".into(), Value::String(kind));
        // The API server takes only labels and annotations from a converted
        // object's metadata and refuses a changed name, namespace or uid:
        // the rest comes back as it came, whatever the conversion did.
        if let Some(Value::Object(mut metadata)) = metadata {
            // A conversion that wrote no metadata at all changed none of it.
            if let Some(converted_meta) = fields.get("metadata").and_then(Value::as_object) {
                for key in ["labels", "annotations"] {
                    match converted_meta.get(key) {
                        Some(value) => metadata.insert(key.to_owned(), value.clone()),
                        None => metadata.remove(key),
                    };
                }
            }
            fields.insert("metadata".into(), Value::Object(metadata));
        }
        Ok(converted)
    }

    /// Answers a ConversionReview: every object converted, in order, or a
    /// failure Status naming the first object that could not be converted.
    pub fn review(&self, review: ConversionReview) -> ConversionReview {
        let request = match ConversionRequest::from_review(review) {
            Ok(request) => request,
            Err(_) => {
                return ConversionResponse::invalid(
                    Status::failure("the ConversionReview has no request", "BadRequest").with_code(400),
                )
                .into_review();
            }
        };
        let desired = request.desired_api_version.clone();
        let mut converted = Vec::with_capacity(request.objects.len());
        for object in &request.objects {
            match self.convert(object.clone(), &desired) {
                Ok(object) => converted.push(object),
                Err(err) => {
                    let message = format!("converting {} to {desired}: {err}", describe(object));
                    return ConversionResponse::for_request(request)
                        .failure(Status::failure(&message, ""))
                        .into_review();
                }
            }
        }
        ConversionResponse::for_request(request).success(converted).into_review()
    }
}

/// Copies the fields at `pointers` (JSON pointers, such as the
/// `HUB_COMMON_FIELDS` kube-codegen generates on each spoke of a kind with a
/// conversion webhook) from `src` into `dst`: a field `src` has replaces
/// `dst`'s, a field `src` lacks is removed from `dst`. It serves both ways,
/// spoke to hub in [`Convertible::to_hub`] and hub to spoke in
/// [`Convertible::from_hub`].
pub fn copy_fields<S, D>(src: &S, dst: D, pointers: &[&str]) -> Result<D, ConversionError>
where
    S: Serialize,
    D: Serialize + DeserializeOwned,
{
    let from = encode(src)?;
    let mut to = encode(&dst)?;
    for pointer in pointers {
        let tokens: Vec<String> = pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
        let Some((last, parents)) = tokens.split_last() else { continue };
        match from.pointer(pointer) {
            Some(value) => {
                let mut at = &mut to;
                for token in parents {
                    if !at.get(token).is_some_and(Value::is_object) {
                        at[token.as_str()] = Value::Object(Default::default());
                    }
                    at = &mut at[token.as_str()];
                }
                if let Some(object) = at.as_object_mut() {
                    object.insert(last.clone(), value.clone());
                }
            }
            None => {
                let parent = parents.iter().try_fold(&mut to, |at, token| at.get_mut(token.as_str()));
                if let Some(object) = parent.and_then(Value::as_object_mut) {
                    object.remove(last);
                }
            }
        }
    }
    crate::object::from_json_value(&to).map_err(|e| ConversionError::new(format!("decoding the copied fields: {e}")))
}

/// `Kind namespace/name` (or `Kind name`) of an object, for messages.
fn describe(object: &Value) -> String {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("object");
    let meta = &object["metadata"];
    match (meta["namespace"].as_str(), meta["name"].as_str()) {
        (Some(ns), Some(name)) => format!("{kind} {ns}/{name}"),
        (None, Some(name)) => format!("{kind} {name}"),
        _ => kind.to_owned(),
    }
}
