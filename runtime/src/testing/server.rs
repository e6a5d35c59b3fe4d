//! The tower service `kube::Client` talks to: parses Kubernetes REST paths
//! and queries, logs the action, runs reactors, then the object store.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode, header};
use serde_json::Value;

use super::patch::PatchKind;
use super::reactor::{Action, react};
use super::status::ApiError;
use super::store::{Query, Target, WatchStart};
use super::watch::{FakeBody, WatchStream};
use super::{ResourceInfo, Shared};

/// The fake API server as a tower `Service`; what
/// [`FakeApiServer::client`](super::FakeApiServer::client) wraps in a
/// `kube::Client`. Use it directly to put tower layers in between.
#[derive(Clone)]
pub struct FakeApiService {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeApiService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiService").finish_non_exhaustive()
    }
}

impl tower::Service<Request<kube::client::Body>> for FakeApiService {
    type Response = Response<FakeBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<FakeBody>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let body = match body.collect_bytes().await {
                Ok(bytes) => bytes,
                Err(e) => {
                    return Ok(error_response(&ApiError::bad_request(format!("could not read the request body: {e}"))));
                }
            };
            // A bug in the fake must fail the request, not the test thread
            // that happens to poll it.
            let response = catch_unwind(AssertUnwindSafe(|| handle(&shared, &parts, &body)))
                .unwrap_or_else(|_| error_response(&ApiError::internal("the fake API server panicked")));
            Ok(response)
        })
    }
}

fn json_response(code: StatusCode, body: &Value) -> Response<FakeBody> {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = Response::new(FakeBody::full(bytes));
    *response.status_mut() = code;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

fn error_response(err: &ApiError) -> Response<FakeBody> {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, &err.to_value())
}

fn watch_response(stream: WatchStream) -> Response<FakeBody> {
    let mut response = Response::new(FakeBody::watch(stream));
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

/// `%XX` decoding; `+` is a space in query strings only.
fn decode(input: &str, plus_is_space: bool) -> String {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(query: Option<&str>) -> Query {
    let mut params = BTreeMap::new();
    for pair in query.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        params.insert(decode(k, true), decode(v, true));
    }
    Query { params, ..Query::default() }
}

/// What a request addresses, from its path.
struct Route {
    info: ResourceInfo,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

fn route(shared: &Shared, path: &str) -> Option<Route> {
    let segments: Vec<String> = path.split('/').filter(|s| !s.is_empty()).map(|s| decode(s, false)).collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let store = shared.lock_store();
    // `/namespaces/{ns}/{plural}` addresses a namespaced resource; anything
    // else under `namespaces` is the Namespace kind itself.
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, ..] if store.resource(group, version, plural).is_some_and(|i| i.namespaced) => {
            (Some((*ns).to_owned()), &rest[2..])
        }
        _ => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
        _ => return None,
    };
    let info = store.resource(group, version, plural)?.clone();
    if info.namespaced && namespace.is_none() && name.is_some() {
        return None;
    }
    Some(Route { info, namespace, name: name.map(str::to_owned), subresource: subresource.map(str::to_owned) })
}

pub(crate) fn handle(shared: &Arc<Shared>, parts: &http::request::Parts, body: &Bytes) -> Response<FakeBody> {
    let Some(route) = route(shared, parts.uri.path()) else {
        return error_response(&ApiError::no_route());
    };
    let mut query = parse_query(parts.uri.query());
    query.user_agent = parts.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let has_name = route.name.is_some();
    let verb = match (&parts.method, has_name) {
        (&Method::GET, false) if query.flag("watch") => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, false) => "create",
        (&Method::POST, true) if route.subresource.is_some() => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) if route.info.namespaced && route.namespace.is_none() => {
            // Like the real server: a namespaced kind is only listed and
            // watched across namespaces, never deleted across them.
            return error_response(&ApiError::method_not_allowed(
                "deletecollection of a namespaced resource needs a namespace".to_owned(),
            ));
        }
        (&Method::DELETE, false) => "delete-collection",
        (method, _) => {
            return error_response(&ApiError::method_not_allowed(format!("{method} is not supported on this path")));
        }
    };
    let content_type =
        parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let patch_kind = (verb == "patch").then(|| PatchKind::from_content_type(&content_type, route.info.is_custom()));
    // The API server's JSON decoding finds keys given twice in a body it
    // decodes as an object (not in JSON patches or apply bodies).
    if matches!(verb, "create" | "update") || matches!(patch_kind, Some(Ok(PatchKind::Merge | PatchKind::Strategic))) {
        query.duplicates = super::prune::duplicates(body);
    }
    let json_body: Option<Value> = if body.is_empty() { None } else { serde_json::from_slice(body).ok() };
    let action = Action {
        verb: verb.to_owned(),
        group: route.info.group.clone(),
        version: route.info.version.clone(),
        resource: route.info.plural.clone(),
        namespace: route.namespace.clone(),
        name: route.name.clone(),
        subresource: route.subresource.clone(),
        params: query.params.clone(),
        patch_type: patch_kind.as_ref().and_then(|k| k.as_ref().ok()).map(|k| k.as_str().to_owned()),
        body: json_body.clone(),
    };
    shared.lock_actions().push(action.clone());

    if verb == "watch"
        && route.subresource.is_none()
        && let Some(watch) = shared.watch_reactor(&route.info.plural)
    {
        let timeout = watch_timeout(&query);
        let target = Target { info: route.info.clone(), namespace: route.namespace.clone(), name: route.name.clone() };
        let initial = match shared.lock_store().reactor_initial_events(&target, &query) {
            Ok(initial) => initial,
            Err(err) => return error_response(&err),
        };
        return watch_response(watch.open(route.info, initial, timeout));
    }
    let reactors = shared.lock_reactors().clone();
    match react(&reactors, &action) {
        Some(Ok(value)) if verb == "watch" => {
            // `{"type": .., "object": ..}` keeps the API server's field order.
            let line = match (value.get("type").and_then(Value::as_str), value.get("object")) {
                (Some(kind), Some(object)) if value.as_object().is_some_and(|m| m.len() == 2) => {
                    super::store::watch_line(kind, object)
                }
                _ => {
                    let mut line = serde_json::to_vec(&value).unwrap_or_default();
                    line.push(b'\n');
                    Bytes::from(line)
                }
            };
            return watch_response(WatchStream::finished(route.info, vec![line]));
        }
        Some(Ok(value)) => return json_response(StatusCode::OK, &value),
        Some(Err(status)) => {
            let (code, body) = ApiError::from_status(&status);
            return json_response(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), &body);
        }
        None => {}
    }

    let (status, scale) = match route.subresource.as_deref() {
        None => (false, false),
        Some("status") if route.info.has_status_subresource && matches!(verb, "get" | "update" | "patch") => {
            (true, false)
        }
        Some("scale") if route.info.scale.is_some() && matches!(verb, "get" | "update" | "patch") => (false, true),
        // Other subresources (custom ones) only exist through reactors.
        Some(_) => return error_response(&ApiError::no_route()),
    };
    let target = Target { info: route.info.clone(), namespace: route.namespace, name: route.name };
    let body_json = || -> Result<Value, ApiError> {
        match &json_body {
            Some(v) => Ok(v.clone()),
            None if body.is_empty() => Err(ApiError::bad_request("the request has no body")),
            None => Err(ApiError::bad_request("the request body is not valid JSON")),
        }
    };
    if verb == "watch" {
        let start = shared.lock_store().watch(&target, &query);
        return match start {
            Ok(WatchStart::Expired(line)) => watch_response(WatchStream::finished(target.info, vec![line])),
            Ok(WatchStart::Open { id, initial, rx }) => {
                let timeout = watch_timeout(&query);
                let bookmarks = query.flag("allowWatchBookmarks");
                watch_response(WatchStream::open(
                    Arc::downgrade(shared),
                    id,
                    target.info,
                    initial,
                    rx,
                    timeout,
                    bookmarks,
                ))
            }
            Err(err) => error_response(&err),
        };
    }
    let mut store = shared.lock_store();
    let created = |value: Value| (value, verb == "create");
    let result = match verb {
        "get" if scale => store.get_scale(&target).map(created),
        "update" if scale => body_json().and_then(|b| store.update_scale(&target, b, &query)).map(created),
        "get" => store.get(&target).map(created),
        "list" => store.list(&target, &query).map(created),
        "create" => body_json().and_then(|b| store.create(&target, b, &query)).map(created),
        "update" if status => body_json().and_then(|b| store.update_status(&target, b, &query)).map(created),
        "update" => body_json().and_then(|b| store.update(&target, b, &query)),
        // A server-side apply that creates the object answers 201.
        "patch" => match patch_kind {
            Some(Ok(kind)) if scale => store.patch_scale(&target, kind, body, &query).map(created),
            Some(Ok(kind)) => store.patch(&target, kind, body, status, &query),
            Some(Err(err)) => Err(err),
            None => Err(ApiError::internal("patch without a patch type")),
        },
        // No body is no DeleteOptions: the query gives them.
        "delete" => store.delete(&target, json_body.as_ref().unwrap_or(&Value::Null), &query).map(created),
        _ => store.delete_collection(&target, json_body.as_ref().unwrap_or(&Value::Null), &query).map(created),
    };
    let warnings = store.take_warnings();
    drop(store);
    let mut response = match result {
        Ok((value, true)) => json_response(StatusCode::CREATED, &value),
        Ok((value, false)) => json_response(StatusCode::OK, &value),
        Err(err) => error_response(&err),
    };
    for warning in warnings {
        // As kube-apiserver, the text goes as UTF-8 bytes.
        if let Ok(value) = header::HeaderValue::from_bytes(warning_header(&warning).as_bytes()) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// A `Warning` header's value as the API server writes it: code 299, no
/// agent, the text quoted.
/// How long a watch may stay open: `timeoutSeconds`, where `0` (or none)
/// is the server's own long default (kube-apiserver's `getTimeout` makes 0
/// its minimum request timeout, 30 to 60 minutes), not a watch that ends
/// at once.
fn watch_timeout(query: &Query) -> Option<Duration> {
    query.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok()).filter(|t| *t > 0).map(Duration::from_secs)
}

fn warning_header(text: &str) -> String {
    let mut out = String::from("299 - \"");
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding() {
        assert_eq!(decode("app%3Dweb%2Cx+in+%28a%29", true), "app=web,x in (a)");
        assert_eq!(decode("a+b", false), "a+b");
        assert_eq!(decode("100%", true), "100%");
        assert_eq!(decode("%zz", true), "%zz");
        let q = parse_query(Some("watch=true&labelSelector=a%3Db&empty="));
        assert_eq!(q.get("watch"), Some("true"));
        assert_eq!(q.get("labelSelector"), Some("a=b"));
        assert_eq!(q.get("empty"), None);
    }
}
