//! Patch application by content type: JSON merge patch, JSON patch and
//! strategic merge patch (built-in kinds, merged by `strategic`); apply
//! patches are parsed here and merged with field ownership by `ssa`.

use serde_json::Value;

use super::status::ApiError;

/// The patch types the fake server understands, by `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    /// `application/merge-patch+json`
    Merge,
    /// `application/json-patch+json`
    Json,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (JSON is YAML, and kube sends JSON)
    Apply,
}

impl PatchKind {
    /// The patch type of a request's `Content-Type`; custom resources
    /// take no strategic merge patches, as on the API server.
    pub(crate) fn from_content_type(content_type: &str, custom: bool) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        match media {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" if !custom => Ok(Self::Strategic),
            "application/apply-patch+yaml" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_media_type(custom)),
        }
    }

    /// Client-go's name for the patch type, as recorded in actions.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Merge => "merge",
            Self::Json => "json",
            Self::Strategic => "strategic",
            Self::Apply => "apply",
        }
    }
}

/// The body of an apply patch: a JSON object (YAML is not parsed).
pub(crate) fn parse_apply_body(patch: &[u8]) -> Result<Value, ApiError> {
    let body: Value = serde_json::from_slice(patch).map_err(|e| {
        ApiError::bad_request(format!(
            "error decoding patch: the apply patch body is not JSON (the fake API server does not parse YAML): {e}"
        ))
    })?;
    if !body.is_object() {
        return Err(ApiError::bad_request("error decoding patch: the apply patch body must be an object"));
    }
    Ok(body)
}

/// The most operations a JSON patch may have (the API server's limit).
const MAX_JSON_PATCH_OPS: usize = 10_000;

/// The most bytes the `copy` operations of one JSON patch may copy.
const MAX_JSON_PATCH_COPY: usize = 3 * 1024 * 1024;

/// The deepest a patched object may nest: clients read no deeper (serde's
/// limit is 128), and the server's own walks stay well within the stack.
const MAX_NESTING: usize = 100;

/// How deep `value` nests, walked without recursion.
fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Applies `patch` (the request body) to a copy of `live`, an object of
/// `api_version`/`object_kind`; apply patches go through `ssa::apply`
/// instead.
pub(crate) fn apply_patch(
    kind: PatchKind,
    api_version: &str,
    object_kind: &str,
    live: &Value,
    patch: &[u8],
) -> Result<Value, ApiError> {
    let mut doc = live.clone();
    match kind {
        PatchKind::Json => {
            let ops = json_patch_ops(patch)?;
            // The fake's own limits, past the API server's.
            let unprocessable = |message: String| {
                let mut err = ApiError::bad_request(message);
                err.code = 422;
                err.reason = "Invalid";
                err
            };
            // One operation at a time on the copy: `copy` can double a
            // document per operation, so what it copies is counted (as the
            // API server does) and the nesting checked before the next one.
            let mut copied = 0usize;
            for op in &ops {
                if let json_patch::PatchOperation::Copy(c) = op
                    && let Some(from) = doc.pointer(c.from.as_str())
                {
                    copied += serde_json::to_vec(from).map_or(0, |bytes| bytes.len());
                    if copied > MAX_JSON_PATCH_COPY {
                        return Err(unprocessable(format!(
                            "the JSON patch copies more than {MAX_JSON_PATCH_COPY} bytes"
                        )));
                    }
                }
                if absent_tested_as_null(&doc, op) {
                    continue;
                }
                json_patch::patch_unsafe(&mut doc, std::slice::from_ref(op)).map_err(|_| ApiError::patch_rejected())?;
                if nesting(&doc) > MAX_NESTING {
                    return Err(unprocessable(format!(
                        "the JSON patch nests the object deeper than {MAX_NESTING} levels"
                    )));
                }
            }
        }
        PatchKind::Apply => return Err(ApiError::internal("apply patches are merged with field ownership")),
        PatchKind::Merge | PatchKind::Strategic => {
            // The API server's messages, from its JSON patch library and
            // Go's decoding of the patch into a map.
            let patch: Value =
                serde_json::from_slice(patch).map_err(|_| ApiError::bad_request("invalid JSON patch"))?;
            match &patch {
                Value::Object(_) if kind == PatchKind::Strategic => {
                    return super::strategic::merge(api_version, object_kind, doc, patch);
                }
                // Go decodes `null` into the empty map: nothing to merge.
                Value::Null if kind == PatchKind::Strategic => {}
                Value::Object(_) => merge(&mut doc, &patch),
                Value::Null => return Err(ApiError::bad_request("Invalid JSON Patch")),
                other => {
                    return Err(ApiError::bad_request(format!(
                        "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                        go_json_type(other)
                    )));
                }
            }
        }
    }
    Ok(doc)
}

/// The operations of a JSON patch as the API server reads them: an
/// operation it does not know, or one that does not parse, fails the patch
/// when applied (422, without details); a missing `value` is `null`.
fn json_patch_ops(patch: &[u8]) -> Result<Vec<json_patch::PatchOperation>, ApiError> {
    let raw: Value = serde_json::from_slice(patch).map_err(|_| ApiError::bad_request("invalid JSON patch"))?;
    let ops = match raw {
        Value::Array(ops) => ops,
        Value::Null => Vec::new(),
        other => {
            return Err(ApiError::bad_request(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                go_json_type(&other)
            )));
        }
    };
    if ops.len() > MAX_JSON_PATCH_OPS {
        return Err(ApiError::entity_too_large(format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS}, got {}",
            ops.len()
        )));
    }
    ops.into_iter()
        .map(|mut op| {
            if let Some(map) = op.as_object_mut()
                && matches!(map.get("op").and_then(Value::as_str), Some("add" | "replace" | "test"))
            {
                map.entry("value").or_insert(Value::Null);
            }
            serde_json::from_value(op).map_err(|_| ApiError::patch_rejected())
        })
        .collect()
}

/// A `test` that a member is `null` passes on the API server when the
/// member is missing from an object that exists (Go's JSON patch library
/// reads a missing member as null); the `json_patch` crate fails it.
fn absent_tested_as_null(doc: &Value, op: &json_patch::PatchOperation) -> bool {
    let json_patch::PatchOperation::Test(test) = op else { return false };
    if !test.value.is_null() {
        return false;
    }
    let path = test.path.as_str();
    let Some((parent, key)) = path.rsplit_once('/') else { return false };
    let key = key.replace("~1", "/").replace("~0", "~");
    doc.pointer(parent).and_then(Value::as_object).is_some_and(|members| !members.contains_key(&key))
}

/// Go's name of a JSON value's type in its decoding errors.
fn go_json_type(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// RFC 7386 merge as the API server's JSON patch library does it: a value
/// the patch sets loses its `null` members at every depth, inside lists
/// too (`[{"a": null}]` is stored as `[{}]`).
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = without_nulls(patch);
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in members {
            if value.is_null() {
                map.remove(key);
            } else {
                merge(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_patch_that_doubles_the_object_is_refused_before_it_grows() {
        let live = json!({"a": {"b": "x"}});
        // Each copy puts `/a` inside itself: the depth doubles per op.
        let mut ops = Vec::new();
        let mut path = "/a".to_string();
        for _ in 0..16 {
            ops.push(json!({"op": "copy", "from": "/a", "path": format!("{path}/a")}));
            path.push_str("/a");
        }
        let err =
            apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, &serde_json::to_vec(&ops).unwrap()).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.contains("deeper than 100"), "{}", err.message);
        // Copies side by side: the bytes copied are counted.
        let live = json!({"a": "x".repeat(1 << 20)});
        let ops: Vec<Value> = (0..4).map(|i| json!({"op": "copy", "from": "/a", "path": format!("/k{i}")})).collect();
        let err =
            apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, &serde_json::to_vec(&ops).unwrap()).unwrap_err();
        assert!(err.message.contains("copies more than"), "{}", err.message);
        let ops: Vec<Value> = (0..2).map(|i| json!({"op": "copy", "from": "/a", "path": format!("/k{i}")})).collect();
        assert!(apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, &serde_json::to_vec(&ops).unwrap()).is_ok());
    }
    use serde_json::json;

    #[test]
    fn merge_and_json_patches() {
        let live = json!({"metadata": {"name": "a"}, "data": {"x": "1", "y": "2"}});
        let merged =
            apply_patch(PatchKind::Merge, "v1", "ConfigMap", &live, br#"{"data":{"x":null,"z":"3"}}"#).unwrap();
        assert_eq!(merged["data"], json!({"y": "2", "z": "3"}));

        let patched = apply_patch(
            PatchKind::Json,
            "v1",
            "ConfigMap",
            &live,
            br#"[{"op":"test","path":"/data/x","value":"1"},{"op":"replace","path":"/data/x","value":"9"}]"#,
        )
        .unwrap();
        assert_eq!(patched["data"]["x"], "9");

        let failed =
            apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, br#"[{"op":"test","path":"/data/x","value":"0"}]"#);
        assert_eq!(failed.unwrap_err().code, 422);
        assert_eq!(apply_patch(PatchKind::Merge, "v1", "ConfigMap", &live, b"[1]").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(b"[1]").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(b"a: b").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(br#"{"kind":"ConfigMap"}"#).unwrap()["kind"], "ConfigMap");
    }

    #[test]
    fn merged_values_lose_their_nulls_inside_lists_too() {
        let live = json!({"spec": {"items": [{"name": "a"}], "keep": 1}});
        let merged = apply_patch(
            PatchKind::Merge,
            "v1",
            "ConfigMap",
            &live,
            br#"{"spec":{"items":[{"name":null},null],"m":{"a":null,"b":[{"c":null}]}}}"#,
        )
        .unwrap();
        assert_eq!(merged, json!({"spec": {"items": [{}, null], "keep": 1, "m": {"b": [{}]}}}));
    }

    #[test]
    fn json_patches_read_as_the_api_server_reads_them() {
        let live = json!({"spec": {}});
        // A missing value is null; an unknown operation fails as applied.
        let added =
            apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, br#"[{"op":"add","path":"/spec/a"}]"#).unwrap();
        assert_eq!(added, json!({"spec": {"a": null}}));
        let unknown =
            apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, br#"[{"op":"frob","path":"/spec"}]"#).unwrap_err();
        assert_eq!((unknown.code, unknown.reason), (422, "Invalid"));
        let many = serde_json::to_vec(&vec![json!({"op": "test", "path": "/spec", "value": {}}); 10_001]).unwrap();
        assert_eq!(apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, &many).unwrap_err().code, 413);
        assert_eq!(apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, b"{}").unwrap_err().code, 400);
        // A missing member tests as null, in an object that exists.
        let tested = br#"[{"op":"test","path":"/spec/x","value":null},{"op":"add","path":"/spec/x","value":1}]"#;
        assert_eq!(apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, tested).unwrap(), json!({"spec": {"x": 1}}));
        let no_parent = br#"[{"op":"test","path":"/status/x","value":null}]"#;
        assert_eq!(apply_patch(PatchKind::Json, "v1", "ConfigMap", &live, no_parent).unwrap_err().code, 422);
    }

    #[test]
    fn content_types() {
        assert_eq!(PatchKind::from_content_type("application/apply-patch+yaml", true).unwrap(), PatchKind::Apply);
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8", true).unwrap(),
            PatchKind::Merge
        );
        assert_eq!(PatchKind::from_content_type("text/plain", false).unwrap_err().code, 415);
        // Strategic merge patches are for built-in kinds only.
        let strategic = "application/strategic-merge-patch+json";
        assert_eq!(PatchKind::from_content_type(strategic, false).unwrap(), PatchKind::Strategic);
        assert_eq!(PatchKind::from_content_type(strategic, true).unwrap_err().code, 415);
        assert!(PatchKind::from_content_type("application/apply-patch+json", true).is_err());
    }
}
