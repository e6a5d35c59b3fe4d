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

/// Applies `patch` (the request body) to a copy of `live`; apply patches go
/// through `ssa::apply` instead.
pub(crate) fn apply_patch(kind: PatchKind, live: &Value, patch: &[u8]) -> Result<Value, ApiError> {
    let mut doc = live.clone();
    match kind {
        PatchKind::Json => {
            let ops: json_patch::Patch =
                serde_json::from_slice(patch).map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(&mut doc, &ops).map_err(|e| {
                // The API server answers a failed `test` or a missing path
                // with 422, as for any unprocessable patch.
                let mut err = ApiError::bad_request(format!("the JSON patch could not be applied: {e}"));
                err.code = 422;
                err.reason = "Invalid";
                err
            })?;
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
