//! Failure `Status` bodies shaped like the API server's, so that kube parses
//! them into `kube::Error::Api` with the right code, reason and details.

use kube::core::Status;
use serde_json::{Value, json};

use super::ResourceInfo;

/// A failed request: becomes a `Status` body with HTTP code `code`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into(), details: None }
    }

    fn with_details(mut self, info: &ResourceInfo, name: &str) -> Self {
        let mut details = json!({"name": name, "kind": info.plural});
        if !info.group.is_empty() {
            details["group"] = Value::String(info.group.clone());
        }
        self.details = Some(details);
        self
    }

    pub(crate) fn not_found(info: &ResourceInfo, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", info.qualified())).with_details(info, name)
    }

    /// A path no registered resource serves.
    pub(crate) fn no_route() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
    }

    pub(crate) fn already_exists(info: &ResourceInfo, name: &str) -> Self {
        Self::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", info.qualified()))
            .with_details(info, name)
    }

    pub(crate) fn conflict(info: &ResourceInfo, name: &str, why: &str) -> Self {
        Self::new(409, "Conflict", format!("Operation cannot be fulfilled on {} \"{name}\": {why}", info.qualified()))
            .with_details(info, name)
    }

    /// 409 for an update with a stale `metadata.resourceVersion`.
    pub(crate) fn stale(info: &ResourceInfo, name: &str) -> Self {
        Self::conflict(
            info,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 with field causes `(reason, field, message)`, named by the
    /// group-qualified kind (`Widget.example.com`).
    pub(crate) fn invalid(info: &ResourceInfo, name: &str, causes: &[(&str, &str, &str)]) -> Self {
        let summary: Vec<String> = causes.iter().map(|(_, f, m)| format!("{f}: {m}")).collect();
        let kind = if info.group.is_empty() { info.kind.clone() } else { format!("{}.{}", info.kind, info.group) };
        let mut err = Self::new(422, "Invalid", format!("{kind} \"{name}\" is invalid: {}", aggregate(&summary)))
            .with_details(info, name);
        if let Some(details) = err.details.as_mut() {
            details["kind"] = Value::String(info.kind.clone());
            details["causes"] = causes
                .iter()
                .map(|(reason, field, message)| json!({"reason": reason, "field": field, "message": message}))
                .collect();
        }
        err
    }

    /// 422 with one cause, named by the group-qualified resource
    /// (`widgets.example.com`): what the API server's store answers itself,
    /// e.g. an update of a custom resource without a resourceVersion.
    pub(crate) fn invalid_resource(
        info: &ResourceInfo,
        name: &str,
        (reason, field, message): (&str, &str, &str),
    ) -> Self {
        let mut err =
            Self::new(422, "Invalid", format!("{} \"{name}\" is invalid: {field}: {message}", info.qualified()))
                .with_details(info, name);
        if let Some(details) = err.details.as_mut() {
            details["causes"] = json!([{"reason": reason, "message": message, "field": field}]);
        }
        err
    }

    /// 422 for invalid request options (`CreateOptions`, `UpdateOptions`,
    /// `PatchOptions` of `meta.k8s.io`), with causes `(reason, field,
    /// message)`.
    pub(crate) fn invalid_options(kind: &str, causes: Vec<(&'static str, String, String)>) -> Self {
        let summary: Vec<String> = causes.iter().map(|(_, f, m)| format!("{f}: {m}")).collect();
        let mut err = Self::new(422, "Invalid", format!("{kind}.meta.k8s.io \"\" is invalid: {}", aggregate(&summary)));
        err.details = Some(json!({
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": causes
                .into_iter()
                .map(|(reason, field, message)| json!({"reason": reason, "message": message, "field": field}))
                .collect::<Vec<_>>(),
        }));
        err
    }

    /// 422 for a patch whose result the API server cannot decode (a strict
    /// decoding error): one cause at `patch`, no name or kind.
    pub(crate) fn invalid_patch(message: String) -> Self {
        let mut err = Self::new(422, "Invalid", format!(" \"\" is invalid: patch: {message}"));
        err.details = Some(json!({"causes": [{"reason": "FieldValueInvalid", "message": message, "field": "patch"}]}));
        err
    }

    /// 409 for a server-side apply changing fields other managers own:
    /// details carry only the causes, one per conflicting field.
    pub(crate) fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        let mut err = Self::new(409, "Conflict", message);
        err.details = Some(json!({ "causes": causes }));
        err
    }

    /// 500 without a reason, as the API server answers errors it does not
    /// classify (e.g. an apply body its typed conversion rejects).
    pub(crate) fn server_error(message: impl Into<String>) -> Self {
        Self::new(500, "", message)
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub(crate) fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 415 for a patch type the resource does not take: custom resources
    /// list theirs, built-in kinds answer with the code's text.
    pub(crate) fn unsupported_media_type(custom: bool) -> Self {
        if custom {
            return Self::new(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            );
        }
        let mut err = Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type");
        err.details = Some(json!({}));
        err
    }

    /// 422 for a JSON patch that fails to apply (a failed `test`, a missing
    /// path, an unknown operation): the API server says no more.
    pub(crate) fn patch_rejected() -> Self {
        let mut err = Self::new(422, "Invalid", "the server rejected our request due to an error in our request");
        err.details = Some(json!({}));
        err
    }

    /// 413 for a request over one of the API server's limits.
    pub(crate) fn entity_too_large(message: impl Into<String>) -> Self {
        Self::new(413, "RequestEntityTooLarge", message)
    }

    /// 410 for a watch or continue token older than the retained history.
    pub(crate) fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 500 as the API server wraps an error of its own
    /// (`NewInternalError`): the message prefixed, and as the one cause.
    pub(crate) fn internal_error(message: impl Into<String>) -> Self {
        let message = message.into();
        let mut err = Self::new(500, "InternalError", format!("Internal error occurred: {message}"));
        err.details = Some(json!({"causes": [{"message": message}]}));
        err
    }

    /// 415 for a patch type the fake does not serve where the API server
    /// does (server-side apply to `/scale`).
    pub(crate) fn patch_type_not_served(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// A reactor's injected `Status`; code 0 becomes 500.
    pub(crate) fn from_status(status: &Status) -> (u16, Value) {
        let code = if status.code == 0 { 500 } else { status.code };
        let mut body = serde_json::to_value(status).unwrap_or_else(|_| json!({}));
        if let Some(map) = body.as_object_mut() {
            map.insert("kind".into(), "Status".into());
            map.insert("apiVersion".into(), "v1".into());
            map.entry("status").or_insert_with(|| "Failure".into());
            map.insert("code".into(), code.into());
        }
        (code, body)
    }

    /// The `Status` JSON body.
    pub(crate) fn to_value(&self) -> Value {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Some(map) = body.as_object_mut()
        {
            map.remove("reason");
        }
        if let Some(details) = &self.details {
            body["details"] = details.clone();
        }
        body
    }
}

/// Several field errors as the API server joins them: `[a, b]`, each
/// distinct text once.
fn aggregate(errors: &[String]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for e in errors {
        if !distinct.contains(&e.as_str()) {
            distinct.push(e);
        }
    }
    match distinct.as_slice() {
        [one] => (*one).to_owned(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_parse_as_kube_status() {
        let info = ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Foo".into(),
            plural: "foos".into(),
            namespaced: true,
            has_status_subresource: true,
            schema: None,
            validation: None,
            aggregated: false,
            scale: None,
        };
        let status: Status = serde_json::from_value(ApiError::not_found(&info, "a").to_value()).unwrap();
        assert!(status.is_not_found());
        assert_eq!(status.code, 404);
        assert_eq!(status.message, "foos.example.com \"a\" not found");
        let details = status.details.unwrap();
        assert_eq!(
            (details.name.as_str(), details.group.as_str(), details.kind.as_str()),
            ("a", "example.com", "foos")
        );

        let invalid = ApiError::invalid(&info, "a", &[("FieldValueRequired", "metadata.name", "Required value")]);
        let status: Status = serde_json::from_value(invalid.to_value()).unwrap();
        assert!(status.is_invalid());
        assert_eq!(status.details.unwrap().causes[0].field, "metadata.name");
    }
}
