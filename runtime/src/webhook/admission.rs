//! Admission webhooks: defaulting (mutating) and validating webhooks from
//! traits on the kinds, answering `admission.k8s.io/v1` AdmissionReviews.
//!
//! The traits are kubebuilder's `webhook.Defaulter` and `webhook.Validator`:
//! a kind implements [`Defaulter`] to fill in defaults and [`Validator`] to
//! accept or refuse creates, updates and deletes. The mutating webhook
//! answers with a JSON patch from the object as it came to the object after
//! [`Defaulter::apply_defaults`], as controller-runtime does (its
//! `PatchResponseFromRaw`), without the `remove` operations that reading
//! into the Rust type alone would make (controller-runtime's default,
//! `dropSchemeRemovals`): a field the Rust type does not know, e.g. one a
//! newer CRD added, stays as the client sent it.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::ByteString;
use kube::Resource;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionReview, Operation};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Warnings returned to the client with an allowed or denied request
/// (`kubectl` prints them as `Warning: ...`).
pub type Warnings = Vec<String>;

/// A kind that fills in its own defaults (kubebuilder's
/// `webhook.Defaulter`), served by a mutating webhook.
pub trait Defaulter: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static {
    /// Sets the defaults on this object, as it is created or updated.
    fn apply_defaults(&mut self);
}

/// A kind that validates itself (kubebuilder's `webhook.Validator`), served
/// by a validating webhook. Each method allows the request (with warnings,
/// maybe none) or denies it.
pub trait Validator: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static {
    /// A create of this object. Allowed unless overridden.
    fn validate_create(&self) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// An update from `old` to this object. By default the object is
    /// validated as on create, unless it is being deleted (it has a
    /// `deletionTimestamp`): refusing the update that removes its last
    /// finalizer would keep an object that no longer passes the rules from
    /// ever going away.
    fn validate_update(&self, old: &Self) -> Result<Warnings, Denied> {
        let _ = old;
        if self.meta().deletion_timestamp.is_some() {
            return Ok(Warnings::new());
        }
        self.validate_create()
    }

    /// A delete of this object. Allowed unless overridden.
    fn validate_delete(&self) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

/// A refused admission request: the API server answers the client with
/// `admission webhook "<name>" denied the request: <message>` and `code`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied {
    /// The message for the client.
    pub message: String,
    /// The HTTP status code for the client (403 unless set; the API server
    /// raises codes below 400 to 400).
    pub code: u16,
    /// The Status reason (`Forbidden` unless set).
    pub reason: String,
    /// Warnings sent with the denial.
    pub warnings: Warnings,
}

impl Denied {
    /// Denied with this message, 403 Forbidden (controller-runtime's
    /// `admission.Denied`).
    pub fn new(message: impl Into<String>) -> Self {
        Denied { message: message.into(), code: 403, reason: "Forbidden".into(), warnings: Warnings::new() }
    }

    /// Denied with this message, 422 Invalid: for an object that breaks a
    /// rule of its fields.
    pub fn invalid(message: impl Into<String>) -> Self {
        Denied { message: message.into(), code: 422, reason: "Invalid".into(), warnings: Warnings::new() }
    }

    /// With another status code and reason.
    pub fn with_code(mut self, code: u16, reason: impl Into<String>) -> Self {
        self.code = code;
        self.reason = reason.into();
        self
    }

    /// With these warnings.
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Denied {}

/// The `status` of a denied response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseStatus {
    /// `Failure`.
    pub status: String,
    /// The message for the client.
    pub message: String,
    /// The Status reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The HTTP status code for the client.
    pub code: u16,
}

/// The `response` of an AdmissionReview, as the API server reads it: the
/// patch is base64 of a JSON patch (RFC 6902).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's uid.
    pub uid: String,
    /// Whether the request is allowed.
    pub allowed: bool,
    /// Why it was denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResponseStatus>,
    /// The JSON patch (base64 in JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<ByteString>,
    /// `JSONPatch` when there is a patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Warnings for the client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Warnings,
    /// Audit annotations (prefixed with the webhook's name by the server).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<String, String>,
}

impl AdmissionResponse {
    /// Allows the request with the given uid.
    pub fn allow(uid: impl Into<String>) -> Self {
        AdmissionResponse { uid: uid.into(), allowed: true, ..Default::default() }
    }

    /// Denies the request with the given uid.
    pub fn deny(uid: impl Into<String>, denied: Denied) -> Self {
        AdmissionResponse {
            uid: uid.into(),
            allowed: false,
            status: Some(ResponseStatus {
                status: "Failure".into(),
                message: denied.message,
                reason: denied.reason,
                code: denied.code,
            }),
            warnings: denied.warnings,
            ..Default::default()
        }
    }

    /// The JSON patch, decoded; `None` without a patch.
    pub fn json_patch(&self) -> Option<json_patch::Patch> {
        self.patch.as_ref().and_then(|p| serde_json::from_slice(&p.0).ok())
    }
}

/// The AdmissionReview sent back: `apiVersion` and `kind` of the request's
/// review and the response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponseReview {
    /// `admission.k8s.io/v1`, as in the request.
    pub api_version: String,
    /// `AdmissionReview`.
    pub kind: String,
    /// The answer.
    pub response: AdmissionResponse,
}

/// An admission webhook: an AdmissionReview in, an AdmissionReview out.
pub trait AdmissionHandler: Send + Sync + 'static {
    /// Answers one request.
    fn admit(&self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse;

    /// Answers a review as JSON; a body that is no AdmissionReview with a
    /// request is an error message (the server answers 400).
    fn review(&self, body: &[u8]) -> Result<AdmissionResponseReview, String> {
        let review: AdmissionReview<DynamicObject> =
            serde_json::from_slice(body).map_err(|e| format!("reading the AdmissionReview: {e}"))?;
        let api_version = review.types.api_version.clone();
        let request = review.request.ok_or("the AdmissionReview has no request")?;
        let response = self.admit(&request);
        Ok(AdmissionResponseReview { api_version, kind: "AdmissionReview".into(), response })
    }
}

/// The mutating (defaulting) webhook of kind `K`.
pub struct Mutating<K>(std::marker::PhantomData<fn() -> K>);

impl<K> Default for Mutating<K> {
    fn default() -> Self {
        Mutating(std::marker::PhantomData)
    }
}

impl<K> fmt::Debug for Mutating<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mutating<{}>", std::any::type_name::<K>())
    }
}

impl<K: Defaulter> Mutating<K> {
    /// The mutating webhook of `K`.
    pub fn new() -> Self {
        Mutating::default()
    }
}

/// The validating webhook of kind `K`.
pub struct Validating<K>(std::marker::PhantomData<fn() -> K>);

impl<K> Default for Validating<K> {
    fn default() -> Self {
        Validating(std::marker::PhantomData)
    }
}

impl<K> fmt::Debug for Validating<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Validating<{}>", std::any::type_name::<K>())
    }
}

impl<K: Validator> Validating<K> {
    /// The validating webhook of `K`.
    pub fn new() -> Self {
        Validating::default()
    }
}

/// Decodes the request's object as `K`, checking its group, version and kind.
fn decode<K>(request: &AdmissionRequest<DynamicObject>, object: &DynamicObject) -> Result<(Value, K), Denied>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let (group, version, kind) = (K::group(&()), K::version(&()), K::kind(&()));
    let gvk = &request.kind;
    if gvk.group != group || gvk.version != version || gvk.kind != kind {
        let want = if group.is_empty() {
            format!("{version}, Kind={kind}")
        } else {
            format!("{group}/{version}, Kind={kind}")
        };
        return Err(Denied::new(format!(
            "this webhook admits {want}, not {}/{}, Kind={} (check the webhook's rules and matchPolicy)",
            gvk.group, gvk.version, gvk.kind
        ))
        .with_code(400, "BadRequest"));
    }
    let raw = serde_json::to_value(object)
        .map_err(|e| Denied::new(format!("encoding the object: {e}")).with_code(400, "BadRequest"))?;
    let typed = crate::object::from_json_value(&raw)
        .map_err(|e| Denied::new(format!("decoding {kind} {version}: {e}")).with_code(400, "BadRequest"))?;
    Ok((raw, typed))
}

impl<K: Defaulter> AdmissionHandler for Mutating<K> {
    fn admit(&self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let uid = request.uid.clone();
        let object = match (&request.operation, &request.object) {
            (Operation::Create | Operation::Update, Some(object)) => object,
            _ => return AdmissionResponse::allow(uid),
        };
        let (mut raw, mut typed) = match decode::<K>(request, object) {
            Ok(decoded) => decoded,
            Err(denied) => return AdmissionResponse::deny(uid, denied),
        };
        let encode = |typed: &K| {
            crate::object::to_json_value(typed).map(|mut value| {
                // A whole number read into an `f64` comes back as `1.0`: the
                // same number, no change to patch.
                integral_floats_as_integers(&mut value);
                value
            })
        };
        let encoding_failed = |e: serde_json::Error| {
            let denied = Denied::new(format!("encoding the defaulted object: {e}"));
            AdmissionResponse::deny(uid.clone(), denied.with_code(500, "InternalError"))
        };
        integral_floats_as_integers(&mut raw);
        // What reading into the Rust type alone drops (fields it does not
        // know): not removed by the patch, as controller-runtime's
        // `dropSchemeRemovals`. Removals `apply_defaults` makes are kept.
        let read_back = match encode(&typed) {
            Ok(value) => value,
            Err(e) => return encoding_failed(e),
        };
        let dropped_by_reading: std::collections::HashSet<String> = json_patch::diff(&raw, &read_back)
            .0
            .into_iter()
            .filter_map(|op| match op {
                json_patch::PatchOperation::Remove(r) => Some(r.path.to_string()),
                _ => None,
            })
            .collect();
        typed.apply_defaults();
        let defaulted = match encode(&typed) {
            Ok(value) => value,
            Err(e) => return encoding_failed(e),
        };
        let mut patch = json_patch::diff(&raw, &defaulted);
        patch.0.retain(|op| !matches!(op, json_patch::PatchOperation::Remove(r) if dropped_by_reading.contains(&r.path.to_string())));
        let mut response = AdmissionResponse::allow(uid);
        if !patch.0.is_empty() {
            let bytes = serde_json::to_vec(&patch).expect("a JSON patch serializes");
            response.patch = Some(ByteString(bytes));
            response.patch_type = Some("JSONPatch".into());
        }
        response
    }
}

/// Every float of `value` that is a whole number in `i64`'s range, as an
/// integer (`1.0` as `1`).
fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f >= i64::MIN as f64
                && f < i64::MAX as f64
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

impl<K: Validator> AdmissionHandler for Validating<K> {
    fn admit(&self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let uid = request.uid.clone();
        let verdict = (|| match request.operation {
            Operation::Create => {
                let Some(object) = &request.object else { return Ok(Warnings::new()) };
                decode::<K>(request, object)?.1.validate_create()
            }
            Operation::Update => {
                let (Some(object), Some(old)) = (&request.object, &request.old_object) else {
                    return Ok(Warnings::new());
                };
                let new: K = decode(request, object)?.1;
                match decode::<K>(request, old) {
                    Ok((_, old)) => new.validate_update(&old),
                    // Stored before the Rust type changed (a field it now
                    // requires, say): the new object is still checked on
                    // its own, as on create, instead of refusing every
                    // update of the old object (its finalizer's removal too).
                    Err(_) if new.meta().deletion_timestamp.is_some() => Ok(Warnings::new()),
                    Err(_) => new.validate_create(),
                }
            }
            Operation::Delete => {
                let Some(old) = &request.old_object else { return Ok(Warnings::new()) };
                decode::<K>(request, old)?.1.validate_delete()
            }
            Operation::Connect => Ok(Warnings::new()),
        })();
        match verdict {
            Ok(warnings) => AdmissionResponse { warnings, ..AdmissionResponse::allow(uid) },
            Err(denied) => AdmissionResponse::deny(uid, denied),
        }
    }
}
