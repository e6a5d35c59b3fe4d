//! The API server's rules for object metadata on writes: type meta and
//! namespace checks, server-owned fields, optimistic concurrency,
//! `metadata.generation`, status as a subresource, and finalizers.

use serde_json::{Map, Value};

use super::ResourceInfo;
use super::objectmeta;
use super::status::ApiError;
use super::store::Target;

/// The `metadata` map of an object, if it has one.
pub(crate) fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// A non-empty string field of `metadata`.
pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    meta(obj).and_then(|m| m.get(field)).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The `metadata` map of a request body, created when missing.
pub(crate) fn meta_mut(obj: &mut Value) -> Result<&mut Map<String, Value>, ApiError> {
    let map = obj.as_object_mut().ok_or_else(|| ApiError::bad_request("the request body must be a JSON object"))?;
    let metadata = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    metadata.as_object_mut().ok_or_else(|| ApiError::internal("metadata is not an object"))
}

/// `metadata.finalizers`.
pub(crate) fn finalizers(obj: &Value) -> Vec<&str> {
    meta(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The current time as the API server writes timestamps.
pub(crate) fn now() -> Value {
    let ts = k8s_openapi::jiff::Timestamp::now();
    let text = k8s_openapi::jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", ts).unwrap_or_else(|_| ts.to_string());
    Value::String(text)
}

/// Whether anything but metadata (and status, when it is a subresource)
/// differs: what bumps `metadata.generation`.
fn spec_changed(old: &Value, new: &Value, has_status: bool) -> bool {
    let strip = |v: &Value| -> Map<String, Value> {
        let mut map = v.as_object().cloned().unwrap_or_default();
        for key in ["metadata", "apiVersion", "kind"] {
            map.remove(key);
        }
        if has_status {
            map.remove("status");
        }
        map
    };
    strip(old) != strip(new)
}

/// Checks apiVersion/kind of a request body and fills them in.
pub(crate) fn type_meta(info: &ResourceInfo, body: &mut Value) -> Result<(), ApiError> {
    let map = body.as_object_mut().ok_or_else(|| ApiError::bad_request("the request body must be a JSON object"))?;
    let api_version = info.api_version();
    match map.get("apiVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() && v != api_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
        _ => {}
    }
    match map.get("kind").and_then(Value::as_str) {
        Some(k) if !k.is_empty() && k != info.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                info.kind
            )));
        }
        _ => {}
    }
    map.insert("apiVersion".into(), api_version.into());
    map.insert("kind".into(), info.kind.clone().into());
    Ok(())
}

/// Checks the body's namespace against the URL's and fills it in.
pub(crate) fn namespace_of(t: &Target, body: &mut Value) -> Result<(), ApiError> {
    let m = meta_mut(body)?;
    if !t.info.namespaced {
        m.remove("namespace");
        return Ok(());
    }
    let Some(ns) = t.namespace.as_deref() else {
        return Err(ApiError::method_not_allowed(format!(
            "{} are namespaced: write them under /namespaces/{{namespace}}",
            t.info.plural
        )));
    };
    match m.get("namespace").and_then(Value::as_str) {
        Some(body_ns) if !body_ns.is_empty() && body_ns != ns => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => {
            m.insert("namespace".into(), ns.into());
            Ok(())
        }
    }
}

/// 409 Conflict when the body carries a resourceVersion other than the
/// stored one; none, or `"0"`, means an unconditional write (of a built-in
/// kind: a custom resource's update without one is refused before this).
fn check_resource_version(t: &Target, old: &Value, body: &Value) -> Result<(), ApiError> {
    match meta_str(body, "resourceVersion") {
        Some(rv) if !unversioned(rv) && Some(rv) != meta_str(old, "resourceVersion") => {
            Err(ApiError::stale(&t.info, t.name()))
        }
        _ => Ok(()),
    }
}

/// A resourceVersion that the API server reads as none: empty, or a number
/// that is 0 (its versioner parses `"0"` and `"00"` to 0).
pub(crate) fn unversioned(rv: &str) -> bool {
    rv.is_empty() || rv.parse::<u64>() == Ok(0)
}

/// A PUT body names the object of its URL, as the API server's `checkName`
/// requires before it looks the object up (an empty name too is a 400).
pub(crate) fn named_as_url(t: &Target, body: &Value) -> Result<(), ApiError> {
    let name = meta_str(body, "name").unwrap_or_default();
    if name == t.name() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "the name of the object ({name}) does not match the name on the URL ({})",
        t.name()
    )))
}

/// Checks the body's name against the URL's and fills it in.
pub(crate) fn check_name(t: &Target, body: &mut Value) -> Result<(), ApiError> {
    let m = meta_mut(body)?;
    match m.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() && n != t.name() => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({})",
            t.name()
        ))),
        _ => {
            m.insert("name".into(), t.name().into());
            Ok(())
        }
    }
}

/// The new state of a main-resource update: the body, with server-owned
/// metadata (and status, when it is a subresource) kept from `old`.
pub(crate) fn prepare_update(t: &Target, old: &Value, mut body: Value) -> Result<Value, ApiError> {
    let info = &t.info;
    type_meta(info, &mut body)?;
    check_name(t, &mut body)?;
    namespace_of(t, &mut body)?;
    check_resource_version(t, old, &body)?;
    let old_meta = meta(old).cloned().unwrap_or_default();
    let mut causes: Vec<objectmeta::Cause> = Vec::new();
    if old_meta.contains_key("deletionTimestamp") {
        let before = finalizers(old);
        let added: Vec<&str> = finalizers(&body).into_iter().filter(|f| !before.contains(f)).collect();
        if !added.is_empty() {
            causes.push((
                "FieldValueForbidden",
                "metadata.finalizers".into(),
                format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    objectmeta::go_string_slice(&added)
                ),
            ));
        }
    }
    // An update never sets, moves or removes the deletion fields: kept from
    // `old` when it has them, refused when it has none (or another grace).
    let new_meta = meta(&body).cloned().unwrap_or_default();
    for field in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
        if let Some(value) = new_meta.get(field).filter(|v| !v.is_null())
            && old_meta.get(field).is_none_or(|o| o != value)
            && (field == "deletionGracePeriodSeconds" || !old_meta.contains_key(field))
        {
            causes.push(objectmeta::immutable(&format!("metadata.{field}"), value));
        }
    }
    if !causes.is_empty() {
        let causes = objectmeta::update_checks(info, causes);
        let causes: Vec<(&str, &str, &str)> = causes.iter().map(|(r, f, m)| (*r, f.as_str(), m.as_str())).collect();
        return Err(ApiError::invalid(info, t.name(), &causes));
    }
    let m = meta_mut(&mut body)?;
    for owned in
        ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "resourceVersion"]
    {
        match old_meta.get(owned) {
            Some(v) => m.insert(owned.into(), v.clone()),
            None => m.remove(owned),
        };
    }
    if !m.contains_key("managedFields")
        && let Some(v) = old_meta.get("managedFields")
    {
        m.insert("managedFields".into(), v.clone());
    }
    if info.has_status_subresource
        && let Some(map) = body.as_object_mut()
    {
        match old.get("status") {
            Some(status) => map.insert("status".into(), status.clone()),
            None => map.remove("status"),
        };
    }
    // A Deployment's annotations are copied to its ReplicaSets: its
    // strategy bumps the generation when they change too.
    let annotations = |v: &Value| v.get("metadata").and_then(|m| m.get("annotations")).cloned();
    let deployment_annotated = (info.group.as_str(), info.kind.as_str()) == ("apps", "Deployment")
        && annotations(old).filter(|a| a.as_object().is_none_or(|m| !m.is_empty()))
            != annotations(&body).filter(|a| a.as_object().is_none_or(|m| !m.is_empty()));
    if deployment_annotated || spec_changed(old, &body, info.has_status_subresource) {
        let generation = old_meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
        meta_mut(&mut body)?.insert("generation".into(), (generation + 1).into());
    }
    Ok(body)
}

/// The new state of a status update: `old` with the body's status.
pub(crate) fn prepare_status_update(t: &Target, old: &Value, body: &Value) -> Result<Value, ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request("the request body must be a JSON object"));
    }
    check_resource_version(t, old, body)?;
    let mut new = old.clone();
    if let Some(map) = new.as_object_mut() {
        match body.get("status") {
            Some(status) => map.insert("status".into(), status.clone()),
            None => map.remove("status"),
        };
    }
    Ok(new)
}
