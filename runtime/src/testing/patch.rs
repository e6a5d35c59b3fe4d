//! Patch application by content type: JSON merge patch, JSON patch, and an
//! approximation of strategic merge patch; apply patches are parsed here
//! and merged with field ownership by `ssa`.
//!
//! Limitation (documented on `FakeApiServer`): a strategic merge patch is
//! applied as a JSON merge patch (lists are replaced, not merged by key, and
//! `$patch` directives are not understood).

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
    /// The patch type of a request's `Content-Type`.
    pub(crate) fn from_content_type(content_type: &str) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        match media {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_media_type(content_type)),
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

/// Applies `patch` (the request body) to a copy of `live`; apply patches go
/// through `ssa::apply` instead.
pub(crate) fn apply_patch(kind: PatchKind, live: &Value, patch: &[u8]) -> Result<Value, ApiError> {
    let mut doc = live.clone();
    match kind {
        PatchKind::Json => {
            let ops: json_patch::Patch =
                serde_json::from_slice(patch).map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            // The API server answers a failed `test` or a missing path with
            // 422, as for any unprocessable patch.
            let unprocessable = |message: String| {
                let mut err = ApiError::bad_request(message);
                err.code = 422;
                err.reason = "Invalid";
                err
            };
            if ops.0.len() > MAX_JSON_PATCH_OPS {
                return Err(ApiError::bad_request(format!(
                    "the JSON patch has {} operations, more than {MAX_JSON_PATCH_OPS}",
                    ops.0.len()
                )));
            }
            // One operation at a time on the copy: `copy` can double a
            // document per operation, so what it copies is counted (as the
            // API server does) and the nesting checked before the next one.
            let mut copied = 0usize;
            for op in &ops.0 {
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
                json_patch::patch_unsafe(&mut doc, std::slice::from_ref(op))
                    .map_err(|e| unprocessable(format!("the JSON patch could not be applied: {e}")))?;
                if nesting(&doc) > MAX_NESTING {
                    return Err(unprocessable(format!(
                        "the JSON patch nests the object deeper than {MAX_NESTING} levels"
                    )));
                }
            }
        }
        PatchKind::Apply => return Err(ApiError::internal("apply patches are merged with field ownership")),
        PatchKind::Merge | PatchKind::Strategic => {
            let patch: Value = serde_json::from_slice(patch).map_err(|e| {
                ApiError::bad_request(format!(
                    "the {} patch body is not JSON (the fake API server does not parse YAML): {e}",
                    kind.as_str()
                ))
            })?;
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            json_patch::merge(&mut doc, &patch);
        }
    }
    Ok(doc)
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
        let err = apply_patch(PatchKind::Json, &live, &serde_json::to_vec(&ops).unwrap()).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.contains("deeper than 100"), "{}", err.message);
        // Copies side by side: the bytes copied are counted.
        let live = json!({"a": "x".repeat(1 << 20)});
        let ops: Vec<Value> = (0..4).map(|i| json!({"op": "copy", "from": "/a", "path": format!("/k{i}")})).collect();
        let err = apply_patch(PatchKind::Json, &live, &serde_json::to_vec(&ops).unwrap()).unwrap_err();
        assert!(err.message.contains("copies more than"), "{}", err.message);
        let ops: Vec<Value> = (0..2).map(|i| json!({"op": "copy", "from": "/a", "path": format!("/k{i}")})).collect();
        assert!(apply_patch(PatchKind::Json, &live, &serde_json::to_vec(&ops).unwrap()).is_ok());
    }
    use serde_json::json;

    #[test]
    fn merge_and_json_patches() {
        let live = json!({"metadata": {"name": "a"}, "data": {"x": "1", "y": "2"}});
        let merged = apply_patch(PatchKind::Merge, &live, br#"{"data":{"x":null,"z":"3"}}"#).unwrap();
        assert_eq!(merged["data"], json!({"y": "2", "z": "3"}));

        let patched = apply_patch(
            PatchKind::Json,
            &live,
            br#"[{"op":"test","path":"/data/x","value":"1"},{"op":"replace","path":"/data/x","value":"9"}]"#,
        )
        .unwrap();
        assert_eq!(patched["data"]["x"], "9");

        let failed = apply_patch(PatchKind::Json, &live, br#"[{"op":"test","path":"/data/x","value":"0"}]"#);
        assert_eq!(failed.unwrap_err().code, 422);
        assert_eq!(apply_patch(PatchKind::Merge, &live, b"[1]").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(b"[1]").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(b"a: b").unwrap_err().code, 400);
        assert_eq!(parse_apply_body(br#"{"kind":"ConfigMap"}"#).unwrap()["kind"], "ConfigMap");
    }

    #[test]
    fn content_types() {
        assert_eq!(PatchKind::from_content_type("application/apply-patch+yaml").unwrap(), PatchKind::Apply);
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8").unwrap(),
            PatchKind::Merge
        );
        assert_eq!(PatchKind::from_content_type("text/plain").unwrap_err().code, 415);
    }
}
