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

/// The integer at `path` (0 when missing), or the API server's accessor
/// error for another type.
fn int_at(obj: &Value, path: &str) -> Result<i64, ApiError> {
    match at(obj, path) {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value.as_i64().ok_or_else(|| {
            ApiError::internal(format!(
                "{path} accessor error: {value} is of the type {}, expected int64",
                go_type(value)
            ))
        }),
    }
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

/// The `Scale` of `obj`: its replicas at the spec and status paths (0 when
/// missing), its selector, and the object's name, namespace, uid,
/// resourceVersion and creationTimestamp. Fields Go leaves out when empty
/// are left out (`spec.replicas` 0, an empty selector).
pub(crate) fn scale_of(info: &ResourceInfo, obj: &Value) -> Result<Value, ApiError> {
    let paths = paths(info)?;
    let spec = int_at(obj, &paths.spec_replicas_path)?;
    let status = int_at(obj, &paths.status_replicas_path)?;
    let selector = match paths.label_selector_path.as_deref().and_then(|p| at(obj, p).map(|v| (p, v))) {
        None | Some((_, Value::Null)) => String::new(),
        Some((_, Value::String(s))) => s.clone(),
        Some((path, other)) => {
            return Err(ApiError::internal(format!(
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

/// The desired replicas of a `Scale` written to `/scale` of an object of
/// `info` named `name`, as Go decodes it into an `int32` (missing is 0);
/// negative ones are refused as the API server's scale storage refuses
/// them, at the resource's replicas path.
pub(crate) fn replicas_of(info: &ResourceInfo, scale: &Value, name: &str) -> Result<i64, ApiError> {
    let replicas = match scale.get("spec").and_then(|spec| spec.get("replicas")) {
        None | Some(Value::Null) => 0,
        Some(value) => match value.as_i64().filter(|r| i32::try_from(*r).is_ok()) {
            Some(replicas) => replicas,
            None => {
                let what = match value {
                    Value::Number(_) => format!("number {value}"),
                    Value::String(_) => "string".to_owned(),
                    Value::Bool(_) => "bool".to_owned(),
                    Value::Array(_) => "array".to_owned(),
                    _ => "object".to_owned(),
                };
                return Err(ApiError::bad_request(format!(
                    "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {what} into Go struct field ScaleSpec.spec.replicas of type int32"
                )));
            }
        },
    };
    if replicas < 0 {
        let path = &paths(info)?.spec_replicas_path;
        let message = format!("Invalid value: {replicas}: should be a non-negative integer");
        return Err(ApiError::invalid(info, name, &[("FieldValueInvalid", path, &message)]));
    }
    Ok(replicas)
}

/// The object's view of a `Scale` with `replicas`: an object holding them
/// at the spec replicas path unless they are 0 (Go omits them), for
/// field ownership.
pub(crate) fn view(info: &ResourceInfo, replicas: i64) -> Result<Value, ApiError> {
    let paths = paths(info)?;
    let names: Vec<&str> = fields(&paths.spec_replicas_path).collect();
    let mut view = json!({});
    let mut at = &mut view;
    for (i, field) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        if last && replicas == 0 {
            break;
        }
        let value = if last { replicas.into() } else { json!({}) };
        at = at
            .as_object_mut()
            .map(|m| m.entry(field.to_string()).or_insert(value))
            .ok_or_else(|| ApiError::internal("the scale view is not an object"))?;
    }
    Ok(view)
}

/// `obj` with `replicas` at the spec replicas path (the objects on the way
/// made when missing).
pub(crate) fn with_replicas(info: &ResourceInfo, mut obj: Value, replicas: i64) -> Result<Value, ApiError> {
    let paths = paths(info)?;
    let names: Vec<&str> = fields(&paths.spec_replicas_path).collect();
    let Some((last, parents)) = names.split_last() else {
        return Err(ApiError::internal("the scale subresource has no spec replicas path"));
    };
    let mut at = &mut obj;
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
    map.insert(last.to_string(), replicas.into());
    Ok(obj)
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
            scale_of(&info(), &obj).unwrap(),
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
                   "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                                "creationTimestamp": "2026-01-01T00:00:00Z"},
                   "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=a"}})
        );
        // Missing replicas are 0; 0 desired replicas and no selector are
        // left out, as Go's `omitempty` leaves them; status replicas stay.
        let bare = json!({"metadata": {"name": "a"}, "spec": {}});
        assert_eq!(scale_of(&info(), &bare).unwrap()["spec"], json!({}));
        assert_eq!(scale_of(&info(), &bare).unwrap()["status"], json!({"replicas": 0}));
    }

    #[test]
    fn replicas_of_another_type_are_the_accessor_error() {
        let err = scale_of(&info(), &json!({"spec": {"replicas": "3"}})).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (500, ".spec.replicas accessor error: \"3\" is of the type string, expected int64")
        );
        let err = scale_of(&info(), &json!({"status": {"selector": 1}})).unwrap_err();
        assert!(err.message.ends_with("expected string"), "{}", err.message);
    }

    #[test]
    fn written_replicas_are_checked_and_set() {
        assert_eq!(replicas_of(&info(), &json!({"spec": {"replicas": 4}}), "a").unwrap(), 4);
        assert_eq!(replicas_of(&info(), &json!({"metadata": {"name": "a"}}), "a").unwrap(), 0);
        let err = replicas_of(&info(), &json!({"spec": {"replicas": -1}}), "a").unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "WebApp.apps.example.com \"a\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer"
        );
        assert_eq!(err.details.as_ref().unwrap()["causes"][0]["field"], ".spec.replicas");
        for bad in [json!("3"), json!(2.5), json!(1_i64 << 40)] {
            let err = replicas_of(&info(), &json!({"spec": {"replicas": bad}}), "a").unwrap_err();
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
