//! The runtime's error type: API failures keep the server's `Status` so
//! callers can match on NotFound, Conflict, Invalid... like apimachinery's
//! `errors.IsNotFound(err)`.

use kube::core::Status;
use kube::core::response::{StatusCause, reason};

/// Errors returned by the typed client and the rest of the runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API server answered with a failure `Status` (NotFound, Conflict,
    /// AlreadyExists, Invalid, Forbidden, Gone, ...).
    ///
    /// Use the `is_*` helpers rather than matching reasons by hand.
    #[error("{}", describe_status(.0))]
    Api(Box<Status>),

    /// A transport, request-building or other kube client failure that
    /// carries no API `Status`.
    #[error("kube client error: {0}")]
    Kube(#[source] kube::Error),

    /// An object could not be converted to or from JSON.
    #[error("serialization error: {0}")]
    Serialize(#[from] serde_json::Error),

    /// The request was rejected before it was sent, e.g. an update of an
    /// object without `metadata.name`.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

/// `Result` with the runtime's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn describe_status(status: &Status) -> String {
    let reason = if status.reason.is_empty() { "Failure" } else { &status.reason };
    format!("API error {} ({reason}): {}", status.code, status.message)
}

impl From<kube::Error> for Error {
    fn from(err: kube::Error) -> Self {
        match err {
            kube::Error::Api(status) => Error::Api(status),
            other => Error::Kube(other),
        }
    }
}

impl From<Status> for Error {
    fn from(status: Status) -> Self {
        Error::Api(Box::new(status))
    }
}

impl From<kube::runtime::watcher::Error> for Error {
    fn from(err: kube::runtime::watcher::Error) -> Self {
        use kube::runtime::watcher::Error as W;
        match err {
            W::InitialListFailed(e) | W::WatchStartFailed(e) | W::WatchFailed(e) => e.into(),
            W::WatchError(status) => Error::Api(status),
            W::NoResourceVersion => Error::InvalidRequest("watch event without metadata.resourceVersion".to_owned()),
        }
    }
}

impl Error {
    /// The API `Status` of a server-side failure, if this is one.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api(status) => Some(status),
            _ => None,
        }
    }

    /// The HTTP code of a server-side failure (0 when the server sent none).
    pub fn code(&self) -> Option<u16> {
        self.status().map(|s| s.code)
    }

    /// The machine-readable reason of a server-side failure (`"NotFound"`,
    /// `"Conflict"`, ...); empty when the server gave none.
    pub fn reason(&self) -> Option<&str> {
        self.status().map(|s| s.reason.as_str())
    }

    /// The field causes of a failure, chiefly of an Invalid (422) error:
    /// each names the offending field (`spec.replicas`) and what is wrong.
    pub fn causes(&self) -> Vec<StatusCause> {
        self.status().and_then(|s| s.details.as_ref()).map(|d| d.causes.clone()).unwrap_or_default()
    }

    // apimachinery's rule: a known reason decides; only when the reason is
    // unknown does the HTTP code decide.
    fn reason_or_code(&self, wanted: &str, code: u16) -> bool {
        match self.status() {
            Some(s) => s.reason == wanted || (!reason::is_known(&s.reason) && s.code == code),
            None => false,
        }
    }

    /// The object does not exist (404 NotFound).
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code(reason::NOT_FOUND, 404)
    }

    /// The object to create already exists (409 AlreadyExists).
    pub fn is_already_exists(&self) -> bool {
        self.status().is_some_and(|s| s.reason == reason::ALREADY_EXISTS)
    }

    /// The write lost an optimistic-concurrency race: the object's
    /// `resourceVersion` was stale (409 Conflict).
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code(reason::CONFLICT, 409)
    }

    /// The fields a server-side apply could not take because other field
    /// managers own them with other values (409 Conflict with
    /// `FieldManagerConflict` causes); empty for every other error. Apply
    /// again with `force` to take them over.
    pub fn apply_conflicts(&self) -> Vec<ApplyConflict> {
        if !self.is_conflict() {
            return Vec::new();
        }
        self.causes().iter().filter(|c| c.reason == "FieldManagerConflict").map(ApplyConflict::from_cause).collect()
    }

    /// Whether this is a server-side apply conflict (see [`Error::apply_conflicts`]).
    pub fn is_apply_conflict(&self) -> bool {
        !self.apply_conflicts().is_empty()
    }

    /// The object failed validation (422 Invalid); see [`Error::causes`].
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code(reason::INVALID, 422)
    }

    /// The caller is not allowed to do this (403 Forbidden).
    pub fn is_forbidden(&self) -> bool {
        self.reason_or_code(reason::FORBIDDEN, 403)
    }

    /// The caller is not authenticated (401 Unauthorized).
    pub fn is_unauthorized(&self) -> bool {
        self.reason_or_code(reason::UNAUTHORIZED, 401)
    }

    /// The request can never succeed as sent (400 BadRequest).
    pub fn is_bad_request(&self) -> bool {
        self.reason_or_code(reason::BAD_REQUEST, 400)
    }

    /// The requested resource version is no longer available (410): reason
    /// Gone, or Expired as sent for a too old watch or continue token.
    pub fn is_gone(&self) -> bool {
        self.reason_or_code(reason::GONE, 410) || self.is_resource_expired()
    }

    /// A watch or list resource version has expired (410 Expired).
    pub fn is_resource_expired(&self) -> bool {
        self.status().is_some_and(|s| s.reason == reason::EXPIRED)
    }

    /// The server throttled the request (429 TooManyRequests; by the code
    /// whatever the reason, as apimachinery's `IsTooManyRequests`).
    pub fn is_too_many_requests(&self) -> bool {
        self.status().is_some_and(|s| s.reason == reason::TOO_MANY_REQUESTS || s.code == 429)
    }

    /// The verb is not served for this resource (405 MethodNotAllowed).
    pub fn is_method_not_supported(&self) -> bool {
        self.reason_or_code(reason::METHOD_NOT_ALLOWED, 405)
    }

    /// The server does not take the request's content type (415
    /// UnsupportedMediaType), e.g. a strategic merge patch of a custom
    /// resource.
    pub fn is_unsupported_media_type(&self) -> bool {
        self.reason_or_code(reason::UNSUPPORTED_MEDIA_TYPE, 415)
    }

    /// The server cannot answer in an accepted content type (406
    /// NotAcceptable).
    pub fn is_not_acceptable(&self) -> bool {
        self.reason_or_code(reason::NOT_ACCEPTABLE, 406)
    }

    /// The request body is too large (413 RequestEntityTooLarge). As
    /// apimachinery's, the code 413 counts whatever the reason.
    pub fn is_request_entity_too_large(&self) -> bool {
        self.status().is_some_and(|s| s.reason == reason::REQUEST_ENTITY_TOO_LARGE || s.code == 413)
    }

    /// The server is not ready to serve (503 ServiceUnavailable).
    pub fn is_service_unavailable(&self) -> bool {
        self.reason_or_code(reason::SERVICE_UNAVAILABLE, 503)
    }

    /// The server could not finish in time and asks to retry (500
    /// ServerTimeout); [`is_timeout`](Self::is_timeout) includes it.
    pub fn is_server_timeout(&self) -> bool {
        self.status().is_some_and(|s| s.reason == reason::SERVER_TIMEOUT)
    }

    /// The seconds the server asks the client to wait before retrying:
    /// `details.retryAfterSeconds` when above zero (a 429, a 503 with
    /// `Retry-After`, ...), and that value, zero included, for 500
    /// ServerTimeout (apimachinery's `SuggestsClientDelay`).
    pub fn suggests_client_delay(&self) -> Option<u32> {
        let status = self.status()?;
        let seconds = status.details.as_ref().map(|d| d.retry_after_seconds)?;
        (status.reason == reason::SERVER_TIMEOUT || seconds > 0).then_some(seconds)
    }

    /// The request timed out on the server (504 Timeout or 500 ServerTimeout).
    pub fn is_timeout(&self) -> bool {
        self.reason_or_code(reason::TIMEOUT, 504) || self.status().is_some_and(|s| s.reason == reason::SERVER_TIMEOUT)
    }

    /// The server failed unexpectedly (500 InternalError).
    pub fn is_internal_error(&self) -> bool {
        self.reason_or_code(reason::INTERNAL_ERROR, 500)
    }
}

/// A field of a server-side apply that another manager owns: one cause of
/// a 409 Conflict (see [`Error::apply_conflicts`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyConflict {
    /// The field manager that owns the field (`"other-controller"`).
    pub manager: String,
    /// The field, as the server writes it (`.spec.replicas`).
    pub field: String,
    /// The server's message (`conflict with "other-controller" using apps/v1`).
    pub message: String,
}

impl ApplyConflict {
    fn from_cause(cause: &StatusCause) -> Self {
        // `conflict with "<manager>"[ with subresource "<s>"] using <apiVersion>[ at <time>]`,
        // the manager quoted as Go's `%q` quotes it.
        let manager = cause
            .message
            .split_once("conflict with \"")
            .and_then(|(_, rest)| go_unquote_prefix(rest))
            .unwrap_or_default();
        ApplyConflict { manager, field: cause.field.clone(), message: cause.message.clone() }
    }
}

/// The text of a Go `%q` string whose opening quote was just read, up to
/// its closing quote: `a\"b\\c" using v1` reads as `a"b\c`.
fn go_unquote_prefix(rest: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = rest.chars();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                escape @ ('x' | 'u' | 'U') => {
                    let digits = match escape {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = chars.by_ref().take(digits).collect();
                    out.push(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
}

/// A request whose failure [`from_response`] describes: the HTTP method
/// and what it addressed, as client-go's `rest.Request` knows them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target<'a> {
    /// The HTTP method.
    pub(crate) method: &'a http::Method,
    /// The resource's group (empty for the core group).
    pub(crate) group: &'a str,
    /// The resource (plural name).
    pub(crate) resource: &'a str,
    /// The object's name, for requests of one object.
    pub(crate) name: Option<&'a str>,
}

/// client-go's cap on the text of an answer that is not a `Status`.
const MAX_UNSTRUCTURED_TEXT: usize = 2048;

/// The error of a failed answer (`code` ≥ 400), as client-go's
/// `rest.Result.Error` makes it: a body that is a `Status` (`kind:
/// Status`, `status: Failure`) is the error, its code the answer's when
/// it has none; any other body (a proxy's JSON, HTML or text) is
/// apimachinery's `NewGenericServerResponse` for the code: the reason the
/// code stands for (404 NotFound, 409 Conflict or for a POST
/// AlreadyExists, ...), client-go's message naming the verb, resource and
/// name, the text of a text answer as an `UnexpectedServerResponse`
/// cause, and a `Retry-After` header's seconds.
/// A `Status` of `Failure` in `body` (whatever the HTTP code: client-go
/// turns one into an error on a 2xx too), with `code` where it has none.
pub(crate) fn failure_status(code: u16, body: &[u8]) -> Option<Error> {
    // Most answers are objects: a scan is cheaper than a parse of each.
    if !body.windows(8).any(|w| w == b"\"Status\"") {
        return None;
    }
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(body)
        && map.get("kind").and_then(serde_json::Value::as_str) == Some("Status")
        && map.get("status").and_then(serde_json::Value::as_str) == Some("Failure")
        && let Ok(mut status) = serde_json::from_value::<Status>(serde_json::Value::Object(map))
    {
        if status.code == 0 {
            status.code = code;
        }
        return Some(Error::Api(Box::new(status)));
    }
    None
}

pub(crate) fn from_response(target: Target<'_>, code: u16, headers: &http::HeaderMap, body: &[u8]) -> Error {
    if let Some(failure) = failure_status(code, body) {
        return failure;
    }
    let header = |name: http::header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    // client-go's isTextResponse: no content type, or a `text/` one.
    let text = header(http::header::CONTENT_TYPE)
        .is_none_or(|t| t.split(';').next().unwrap_or_default().trim().to_ascii_lowercase().starts_with("text/"));
    let server_message = if text {
        let cut = (0..=body.len().min(MAX_UNSTRUCTURED_TEXT)).rev().find(|&i| std::str::from_utf8(&body[..i]).is_ok());
        String::from_utf8_lossy(&body[..cut.unwrap_or(0)]).trim().to_owned()
    } else {
        "unknown".to_owned()
    };
    let (reason, message) = match code {
        409 if target.method == http::Method::POST => {
            (reason::ALREADY_EXISTS, "the server reported a conflict".to_owned())
        }
        409 => (reason::CONFLICT, "the server reported a conflict".to_owned()),
        404 => (reason::NOT_FOUND, "the server could not find the requested resource".to_owned()),
        400 => (reason::BAD_REQUEST, "the server rejected our request for an unknown reason".to_owned()),
        401 => (reason::UNAUTHORIZED, "the server has asked for the client to provide credentials".to_owned()),
        403 => (reason::FORBIDDEN, server_message.clone()),
        406 if server_message.is_empty() || server_message == "unknown" => (
            reason::NOT_ACCEPTABLE,
            "the server was unable to respond with a content type that the client supports".to_owned(),
        ),
        406 => (reason::NOT_ACCEPTABLE, server_message.clone()),
        415 => (reason::UNSUPPORTED_MEDIA_TYPE, server_message.clone()),
        405 => {
            (reason::METHOD_NOT_ALLOWED, "the server does not allow this method on the requested resource".to_owned())
        }
        422 => (reason::INVALID, "the server rejected our request due to an error in our request".to_owned()),
        503 => (reason::SERVICE_UNAVAILABLE, "the server is currently unable to handle the request".to_owned()),
        504 => (
            reason::TIMEOUT,
            "the server was unable to return a response in the time allotted, but may still be processing the request"
                .to_owned(),
        ),
        429 => (
            reason::TOO_MANY_REQUESTS,
            "the server has received too many requests and has asked us to try again later".to_owned(),
        ),
        500.. => (
            reason::INTERNAL_ERROR,
            format!(
                "an error on the server ({}) has prevented the request from succeeding",
                crate::gofmt::go_quote(&server_message)
            ),
        ),
        _ => ("", format!("the server responded with the status code {code} but did not return more information")),
    };
    let qualified = if target.group.is_empty() {
        target.resource.to_owned()
    } else {
        format!("{}.{}", target.resource, target.group)
    };
    let verb = target.method.as_str().to_ascii_lowercase();
    let message = match target.name.filter(|n| !n.is_empty()) {
        _ if target.resource.is_empty() => message,
        Some(name) => format!("{message} ({verb} {qualified} {name})"),
        None => format!("{message} ({verb} {qualified})"),
    };
    let retry_after = header(http::header::RETRY_AFTER).and_then(|s| s.trim().parse::<u32>().ok()).unwrap_or(0);
    let mut status = Status::failure(&message, reason).with_code(code);
    status.details = Some(kube::core::response::StatusDetails {
        name: target.name.unwrap_or_default().to_owned(),
        group: target.group.to_owned(),
        kind: target.resource.to_owned(),
        causes: vec![StatusCause {
            reason: "UnexpectedServerResponse".to_owned(),
            message: server_message,
            field: String::new(),
        }],
        uid: String::new(),
        retry_after_seconds: retry_after,
    });
    Error::Api(Box::new(status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::response::StatusDetails;

    fn api(code: u16, reason: &str) -> Error {
        Status::failure("boom", reason).with_code(code).into()
    }

    #[test]
    fn reasons_decide_before_codes() {
        assert!(api(404, "NotFound").is_not_found());
        assert!(api(404, "").is_not_found());
        assert!(api(409, "AlreadyExists").is_already_exists());
        assert!(!api(409, "AlreadyExists").is_conflict());
        assert!(api(409, "Conflict").is_conflict());
        assert!(api(409, "").is_conflict());
        assert!(api(422, "Invalid").is_invalid());
        assert!(api(403, "Forbidden").is_forbidden());
        assert!(api(410, "Expired").is_gone());
        assert!(api(410, "Gone").is_gone());
        assert!(api(410, "").is_gone());
        assert!(!api(500, "InternalError").is_not_found());
    }

    #[test]
    fn the_rest_of_apimachinerys_helpers() {
        assert!(api(429, "").is_too_many_requests());
        assert!(api(429, "Unknown-but-set").is_too_many_requests(), "429 whatever the reason");
        assert!(api(405, "MethodNotAllowed").is_method_not_supported());
        assert!(api(415, "UnsupportedMediaType").is_unsupported_media_type());
        assert!(api(406, "").is_not_acceptable());
        assert!(api(413, "RequestEntityTooLarge").is_request_entity_too_large());
        assert!(api(503, "ServiceUnavailable").is_service_unavailable());
        assert!(api(500, "ServerTimeout").is_server_timeout() && api(500, "ServerTimeout").is_timeout());
        assert!(!api(504, "Timeout").is_server_timeout());
        let delayed = |code: u16, reason: &str, seconds: u32| -> Error {
            Status::failure("slow down", reason)
                .with_code(code)
                .with_details(StatusDetails {
                    name: String::new(),
                    group: String::new(),
                    kind: String::new(),
                    uid: String::new(),
                    causes: Vec::new(),
                    retry_after_seconds: seconds,
                })
                .into()
        };
        assert_eq!(delayed(429, "TooManyRequests", 3).suggests_client_delay(), Some(3));
        assert_eq!(delayed(500, "ServerTimeout", 2).suggests_client_delay(), Some(2));
        assert_eq!(delayed(429, "TooManyRequests", 0).suggests_client_delay(), None);
        assert_eq!(delayed(422, "Invalid", 3).suggests_client_delay(), Some(3), "any retryAfterSeconds, as Go's");
        assert_eq!(delayed(503, "ServiceUnavailable", 5).suggests_client_delay(), Some(5));
        assert_eq!(delayed(500, "ServerTimeout", 0).suggests_client_delay(), Some(0), "ServerTimeout asks for a delay");
        assert!(api(413, "Invalid").is_request_entity_too_large(), "413 whatever the reason");
    }

    #[test]
    fn kube_api_errors_keep_their_status() {
        let status = Status::failure("x", "Invalid").with_code(422).with_details(StatusDetails {
            name: "a".into(),
            group: String::new(),
            kind: "configmaps".into(),
            uid: String::new(),
            causes: vec![StatusCause {
                reason: "FieldValueRequired".into(),
                message: "required".into(),
                field: "data.key".into(),
            }],
            retry_after_seconds: 0,
        });
        let err: Error = kube::Error::Api(status.boxed()).into();
        assert!(err.is_invalid());
        assert_eq!(err.code(), Some(422));
        assert_eq!(err.causes()[0].field, "data.key");
        assert!(err.to_string().contains("422"));
    }

    #[test]
    fn apply_conflicts_name_the_other_manager() {
        let cause = |manager: &str, field: &str| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with \"{manager}\" using example.k8s.io/v1"),
            field: field.into(),
        };
        let status =
            Status::failure("Apply failed with 2 conflicts", "Conflict").with_code(409).with_details(StatusDetails {
                name: "a".into(),
                group: String::new(),
                kind: "students".into(),
                uid: String::new(),
                causes: vec![cause("a", ".spec.x"), cause("b", ".spec.y"), cause(r#"say \"hi\" \\ \u00e9"#, ".spec.z")],
                retry_after_seconds: 0,
            });
        let err: Error = status.into();
        let conflicts = err.apply_conflicts();
        assert!(err.is_apply_conflict());
        assert_eq!(conflicts[0].manager, "a");
        assert_eq!(conflicts[1].field, ".spec.y");
        // The server quotes the manager as Go's `%q` does.
        assert_eq!(conflicts[2].manager, "say \"hi\" \\ \u{e9}");
        assert!(!api(409, "Conflict").is_apply_conflict());
    }

    #[test]
    fn transport_errors_have_no_status() {
        let err: Error = kube::Error::LinesCodecMaxLineLengthExceeded.into();
        assert!(err.status().is_none());
        assert!(!err.is_not_found());
        assert!(err.causes().is_empty());
    }
}
