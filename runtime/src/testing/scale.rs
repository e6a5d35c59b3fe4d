//! A custom resource's `scale` subresource: the `autoscaling/v1` `Scale`
//! the API server makes of the object (apiextensions-apiserver's
//! `scaleFromCustomResource`), and the replicas a `Scale` written to it
//! sets.

use serde_json::{Map, Value, json};

use super::meta::meta;
use super::status::ApiError;
use super::{ResourceInfo, ScaleSubresource};

/// The scale paths of `info`; a resource without them has no route to
/// `/scale`, so this is not reached for one.
fn paths(info: &ResourceInfo) -> Result<&ScaleSubresource, ApiError> {
    info.scale.as_ref().ok_or_else(ApiError::no_route)
}

/// The field names of a CRD's JSON path (`.spec.replicas`).
fn fields(path: &str) -> impl Iterator<Item = &str> {
    path.strip_prefix('.').unwrap_or(path).split('.').filter(|f| !f.is_empty())
}

/// The value at `path` in `obj`, if every field on the way is there.
fn at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    fields(path).try_fold(obj, |at, field| at.as_object()?.get(field))
}

/// The integer at `path`, `None` when missing, or the API server's
/// accessor error for another type.
fn int_at(obj: &Value, path: &str) -> Result<Option<i64>, String> {
    match at(obj, path) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("{path} accessor error: {value} is of the type {}, expected int64", go_type(value))),
    }
}

/// What a `Scale` shows for an object without replicas at the spec path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missing {
    /// Nothing: a GET of `/scale` is the API server's 500.
    Fail,
    /// [`SENTINEL`], which a patch must replace.
    Sentinel,
}

/// The replicas a patched `Scale` starts from when the object has none:
/// the smallest `int32`, as the API server's.
pub(crate) const SENTINEL: i64 = i32::MIN as i64;

/// The desired replicas of `obj` at the spec path, `None` when missing.
pub(crate) fn spec_replicas(info: &ResourceInfo, obj: &Value) -> Result<Option<i64>, ApiError> {
    int_at(obj, &paths(info)?.spec_replicas_path).map_err(ApiError::internal_error)
}

/// The 400 for a patch of `/scale` that leaves missing replicas missing.
pub(crate) fn replicas_empty(info: &ResourceInfo) -> ApiError {
    let path = info.scale.as_ref().map(|s| s.spec_replicas_path.as_str()).unwrap_or_default();
    ApiError::bad_request(format!("the spec replicas field {path:?} cannot be empty"))
}

/// The scale subresource's checks of a write, after the schema's: the
/// replicas at both paths are integers from 0 to 2147483647 and the
/// selector a string (the API server's `ValidateScaleSpec` and
/// `ValidateScaleStatus`). Causes as `(reason, field, message)`.
pub(crate) fn validate(info: &ResourceInfo, obj: &Value) -> Vec<(&'static str, String, String)> {
    let Some(paths) = info.scale.as_ref() else { return Vec::new() };
    let mut causes = Vec::new();
    for path in [&paths.spec_replicas_path, &paths.status_replicas_path] {
        let message = match int_at(obj, path) {
            Ok(None) => continue,
            Err(err) => format!("Invalid value: 0: {err}"),
            Ok(Some(replicas)) if replicas < 0 => {
                format!("Invalid value: {replicas}: should be a non-negative integer")
            }
            Ok(Some(replicas)) if replicas > i64::from(i32::MAX) => {
                format!("Invalid value: {replicas}: should be less than or equal to {}", i32::MAX)
            }
            Ok(Some(_)) => continue,
        };
        causes.push(("FieldValueInvalid", path.clone(), message));
    }
    if let Some(path) = &paths.label_selector_path
        && let Some(value) = at(obj, path).filter(|v| !v.is_null() && !v.is_string())
    {
        let message = format!(
            "Invalid value: \"\": {path} accessor error: {value} is of the type {}, expected string",
            go_type(value)
        );
        causes.push(("FieldValueInvalid", path.clone(), message));
    }
    causes
}

/// The Go type unstructured content holds for `value`.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The `Scale` of `obj`: its replicas at the spec and status paths (missing
/// status replicas are 0, missing spec replicas as `missing` says), its
/// selector, and the object's name, namespace, uid, resourceVersion and
/// creationTimestamp. Fields Go leaves out when empty are left out
/// (`spec.replicas` 0, an empty selector).
pub(crate) fn scale_of(info: &ResourceInfo, obj: &Value, missing: Missing) -> Result<Value, ApiError> {
    let paths = paths(info)?;
    let spec = match (spec_replicas(info, obj)?, missing) {
        (Some(replicas), _) => replicas,
        (None, Missing::Sentinel) => SENTINEL,
        (None, Missing::Fail) => {
            return Err(ApiError::internal_error(format!(
                "the spec replicas field {:?} does not exist",
                paths.spec_replicas_path
            )));
        }
    };
    let status = int_at(obj, &paths.status_replicas_path).map_err(ApiError::internal_error)?.unwrap_or_default();
    let selector = match paths.label_selector_path.as_deref().and_then(|p| at(obj, p).map(|v| (p, v))) {
        None | Some((_, Value::Null)) => String::new(),
        Some((_, Value::String(s))) => s.clone(),
        Some((path, other)) => {
            return Err(ApiError::internal_error(format!(
                "{path} accessor error: {other} is of the type {}, expected string",
                go_type(other)
            )));
        }
    };
    let mut metadata = Map::new();
    if let Some(m) = meta(obj) {
        for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
            if let Some(value) = m.get(field).filter(|v| v.as_str().is_some_and(|s| !s.is_empty())) {
                metadata.insert(field.into(), value.clone());
            }
        }
    }
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {},
        "status": {"replicas": status},
    });
    if spec != 0 {
        scale["spec"]["replicas"] = spec.into();
    }
    if !selector.is_empty() {
        scale["status"]["selector"] = selector.into();
    }
    Ok(scale)
}

/// The desired replicas of a `Scale` written to `/scale`, as Go decodes
/// them into an `int32` (missing is 0). Whether the object may have them
/// is the write's validation ([`validate`]).
pub(crate) fn replicas_of(scale: &Value) -> Result<i64, ApiError> {
    match scale.get("spec").and_then(|spec| spec.get("replicas")) {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value.as_i64().filter(|r| i32::try_from(*r).is_ok()).ok_or_else(|| {
            let what = match value {
                Value::Number(_) => format!("number {value}"),
                Value::String(_) => "string".to_owned(),
                Value::Bool(_) => "bool".to_owned(),
                Value::Array(_) => "array".to_owned(),
                _ => "object".to_owned(),
            };
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {what} into Go struct field ScaleSpec.spec.replicas of type int32"
            ))
        }),
    }
}

/// The object's view of a `Scale` with `replicas`: an object holding them
/// at the spec replicas path unless they are 0 (Go omits them), for
/// field ownership.
pub(crate) fn view(info: &ResourceInfo, replicas: i64) -> Result<Value, ApiError> {
    let mut view = json!({});
    let (map, last) = replicas_slot(paths(info)?, &mut view)?;
    if replicas != 0 {
        map.insert(last.to_owned(), replicas.into());
    }
    Ok(view)
}

/// `obj` with `replicas` at the spec replicas path (the objects on the way
/// made when missing).
pub(crate) fn with_replicas(info: &ResourceInfo, mut obj: Value, replicas: i64) -> Result<Value, ApiError> {
    let (map, last) = replicas_slot(paths(info)?, &mut obj)?;
    map.insert(last.to_owned(), replicas.into());
    Ok(obj)
}

/// The object in `obj` that holds the spec replicas (made where missing)
/// and the replicas' field name in it.
fn replicas_slot<'a, 'p>(
    paths: &'p ScaleSubresource,
    obj: &'a mut Value,
) -> Result<(&'a mut Map<String, Value>, &'p str), ApiError> {
    let names: Vec<&str> = fields(&paths.spec_replicas_path).collect();
    let Some((last, parents)) = names.split_last() else {
        return Err(ApiError::internal("the scale subresource has no spec replicas path"));
    };
    let mut at = obj;
    for field in parents {
        let map = at.as_object_mut().ok_or_else(|| ApiError::internal("the object is not a JSON object"))?;
        let next = map.entry(field.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            return Err(ApiError::internal(format!(
                "value cannot be set because {} is not a map[string]interface{{}}",
                paths.spec_replicas_path
            )));
        }
        at = next;
    }
    let map = at.as_object_mut().ok_or_else(|| ApiError::internal("the object is not a JSON object"))?;
    Ok((map, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> ResourceInfo {
        ResourceInfo {
            group: "apps.example.com".into(),
            version: "v1".into(),
            kind: "WebApp".into(),
            plural: "webapps".into(),
            namespaced: true,
            ..ResourceInfo::default()
        }
        .with_scale_subresource(".spec.replicas", ".status.replicas", Some(".status.selector"))
    }

    #[test]
    fn the_scale_reads_the_paths_and_leaves_out_what_go_omits() {
        let obj = json!({
            "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                         "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"x": "y"}, "generation": 2},
            "spec": {"replicas": 3},
            "status": {"replicas": 2, "selector": "app=a"},
        });
        assert_eq!(
            scale_of(&info(), &obj, Missing::Fail).unwrap(),
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
                   "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                                "creationTimestamp": "2026-01-01T00:00:00Z"},
                   "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=a"}})
        );
        // 0 desired replicas and no selector are left out, as Go's
        // `omitempty` leaves them; missing status replicas are 0.
        let zero = json!({"metadata": {"name": "a"}, "spec": {"replicas": 0}});
        assert_eq!(scale_of(&info(), &zero, Missing::Fail).unwrap()["spec"], json!({}));
        assert_eq!(scale_of(&info(), &zero, Missing::Fail).unwrap()["status"], json!({"replicas": 0}));
    }

    #[test]
    fn missing_spec_replicas_fail_a_read_and_must_be_patched() {
        let bare = json!({"metadata": {"name": "a"}, "spec": {}});
        let err = scale_of(&info(), &bare, Missing::Fail).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (500, "Internal error occurred: the spec replicas field \".spec.replicas\" does not exist")
        );
        let start = scale_of(&info(), &bare, Missing::Sentinel).unwrap();
        assert_eq!(replicas_of(&start).unwrap(), SENTINEL);
        assert_eq!(replicas_empty(&info()).message, "the spec replicas field \".spec.replicas\" cannot be empty");
    }

    #[test]
    fn replicas_of_another_type_are_the_accessor_error() {
        let err = scale_of(&info(), &json!({"spec": {"replicas": "3"}}), Missing::Fail).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                500,
                "Internal error occurred: .spec.replicas accessor error: \"3\" is of the type string, expected int64"
            )
        );
        let err = scale_of(&info(), &json!({"spec": {"replicas": 1}, "status": {"selector": 1}}), Missing::Fail);
        assert!(err.unwrap_err().message.ends_with("expected string"));
    }

    #[test]
    fn writes_are_checked_at_the_scale_paths() {
        let causes = |obj: Value| validate(&info(), &obj);
        assert!(causes(json!({"spec": {"replicas": 2}, "status": {"replicas": 1, "selector": "a=b"}})).is_empty());
        assert!(causes(json!({"spec": {}})).is_empty());
        assert_eq!(
            causes(json!({"spec": {"replicas": -1}, "status": {"replicas": 3_000_000_000_i64, "selector": 7}})),
            [
                (
                    "FieldValueInvalid",
                    ".spec.replicas".to_owned(),
                    "Invalid value: -1: should be a non-negative integer".to_owned()
                ),
                (
                    "FieldValueInvalid",
                    ".status.replicas".to_owned(),
                    "Invalid value: 3000000000: should be less than or equal to 2147483647".to_owned()
                ),
                (
                    "FieldValueInvalid",
                    ".status.selector".to_owned(),
                    "Invalid value: \"\": .status.selector accessor error: 7 is of the type int64, expected string"
                        .to_owned()
                ),
            ]
        );
        assert_eq!(
            causes(json!({"spec": {"replicas": 2.5}}))[0].2,
            "Invalid value: 0: .spec.replicas accessor error: 2.5 is of the type float64, expected int64"
        );
    }

    #[test]
    fn written_replicas_are_decoded_and_set() {
        assert_eq!(replicas_of(&json!({"spec": {"replicas": 4}})).unwrap(), 4);
        assert_eq!(replicas_of(&json!({"spec": {"replicas": -4}})).unwrap(), -4);
        assert_eq!(replicas_of(&json!({"metadata": {"name": "a"}})).unwrap(), 0);
        for bad in [json!("3"), json!(2.5), json!(1_i64 << 40)] {
            let err = replicas_of(&json!({"spec": {"replicas": bad}})).unwrap_err();
            assert_eq!(err.code, 400, "{bad}: {}", err.message);
        }
        assert_eq!(view(&info(), 3).unwrap(), json!({"spec": {"replicas": 3}}));
        assert_eq!(view(&info(), 0).unwrap(), json!({"spec": {}}));
        let obj = with_replicas(&info(), json!({"metadata": {"name": "a"}}), 5).unwrap();
        assert_eq!(obj["spec"]["replicas"], 5);
        let obj = with_replicas(&info(), json!({"spec": {"replicas": 1, "image": "x"}}), 0).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 0, "image": "x"}));
    }
}
