//! The API server's warnings (client-go's `rest.WarningHandler`): a write
//! naming fields the schema does not declare (`fieldValidation=Warn`, the
//! server's default), a deprecated API version, a quota near its limit.
//! They arrive as `Warning: 299 - "text"` response headers, which kube's
//! client drops; [`WarningLayer`] reads them on every response and hands
//! each to a handler.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use codegen_runtime::warnings::WarningLayer;
//! let config = kube::Config::infer().await?;
//! // Log each warning once, as kubectl prints them.
//! let client = kube::client::ClientBuilder::try_from(config)?
//!     .with_layer(&WarningLayer::logging().deduplicated())
//!     .build();
//! # let _ = client;
//! # Ok(())
//! # }
//! ```

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response};

/// One warning: the `Warning` header's code, agent and text (RFC 7234;
/// the API server sends code 299 and agent `-`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Warning {
    /// The warn-code; the API server's are 299 ("miscellaneous persistent
    /// warning").
    pub code: u16,
    /// The warn-agent, `-` when not given.
    pub agent: String,
    /// The text, unquoted.
    pub text: String,
}

/// The warnings of a `Warning` header value: one or more
/// `code agent "text" ["date"]`, separated by commas. A value that does not
/// parse yields the warnings before it, as client-go's
/// `ParseWarningHeaders` does; a warning followed by anything but a comma
/// does not parse.
pub fn parse_warning_header(value: &str) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut rest = value.trim_start();
    while !rest.is_empty() {
        let Some((warning, after)) = parse_one(rest) else { break };
        rest = after.trim_start();
        if !rest.is_empty() {
            let Some(next) = rest.strip_prefix(',') else { break };
            rest = next.trim_start();
        }
        out.push(warning);
    }
    out
}

// One warning and the text after it.
fn parse_one(input: &str) -> Option<(Warning, &str)> {
    let (code, rest) = input.split_once(' ')?;
    if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let code = code.parse().ok()?;
    let (agent, rest) = rest.trim_start().split_once(' ')?;
    let (text, rest) = quoted(rest.trim_start())?;
    // An optional warn-date, also quoted.
    let after = rest.trim_start();
    let rest = if after.starts_with('"') { quoted(after)?.1 } else { rest };
    Some((Warning { code, agent: agent.to_owned(), text }, rest))
}

// A quoted-string at the start of `input` (backslash escapes), unquoted,
// and the text after it.
fn quoted(input: &str) -> Option<(String, &str)> {
    let body = input.strip_prefix('"')?;
    let mut text = String::new();
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?.1),
            '"' => return Some((text, &body[at + 1..])),
            c => text.push(c),
        }
    }
    None
}

type Handler = Arc<dyn Fn(&Warning) + Send + Sync>;

/// A tower layer for kube's `ClientBuilder` that hands every warning of
/// every response to a handler (client-go's `WarningHandler`). Only code
/// 299 warnings are handed over, as client-go does.
#[derive(Clone)]
pub struct WarningLayer {
    handler: Handler,
    seen: Option<Arc<Mutex<HashSet<String>>>>,
}

impl std::fmt::Debug for WarningLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarningLayer").field("deduplicated", &self.seen.is_some()).finish_non_exhaustive()
    }
}

impl WarningLayer {
    /// Calls `handler` with each warning, on the task that made the
    /// request.
    pub fn new(handler: impl Fn(&Warning) + Send + Sync + 'static) -> Self {
        Self { handler: Arc::new(handler), seen: None }
    }

    /// Logs each warning with `tracing::warn!` (client-go's default
    /// `WarningLogger`).
    pub fn logging() -> Self {
        Self::new(|w| tracing::warn!(target: "kube_warnings", "Warning: {}", w.text))
    }

    /// Hands each distinct text over once for the life of the layer and
    /// every client built with it (client-go's `Deduplicate` option).
    #[must_use]
    pub fn deduplicated(mut self) -> Self {
        self.seen = Some(Arc::default());
        self
    }

    fn handle(&self, response: &http::HeaderMap) {
        for value in response.get_all(http::header::WARNING) {
            // The API server writes the text as UTF-8, which `to_str` refuses.
            let value = String::from_utf8_lossy(value.as_bytes());
            for warning in parse_warning_header(&value) {
                if warning.code != 299 || warning.text.is_empty() {
                    continue;
                }
                if let Some(seen) = &self.seen
                    && !seen.lock().unwrap_or_else(PoisonError::into_inner).insert(warning.text.clone())
                {
                    continue;
                }
                (self.handler)(&warning);
            }
        }
    }
}

impl<S> tower::Layer<S> for WarningLayer {
    type Service = WarningService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WarningService { inner, layer: self.clone() }
    }
}

/// The service [`WarningLayer`] wraps around the HTTP stack.
#[derive(Clone, Debug)]
pub struct WarningService<S> {
    inner: S,
    layer: WarningLayer,
}

impl<S, B, RB> tower::Service<Request<B>> for WarningService<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
{
    type Response = Response<RB>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response<RB>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let future = self.inner.call(request);
        let layer = self.layer.clone();
        Box::pin(async move {
            let response = future.await?;
            layer.handle(response.headers());
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(value: &str) -> Vec<(u16, String, String)> {
        parse_warning_header(value).into_iter().map(|w| (w.code, w.agent, w.text)).collect()
    }

    #[test]
    fn headers_parse_as_rfc_7234_warnings() {
        assert_eq!(
            texts(r#"299 - "unknown field \"spec.x\"""#),
            [(299, "-".to_owned(), r#"unknown field "spec.x""#.to_owned())]
        );
        assert_eq!(
            texts(r#"299 - "a, b", 299 kube "c" "Sat, 05 Dec 2026 10:00:00 GMT" , 199 - "d""#),
            [(299, "-".into(), "a, b".into()), (299, "kube".into(), "c".into()), (199, "-".into(), "d".into())]
        );
        // What does not parse ends the list.
        assert_eq!(texts(r#"299 - "a", bogus"#).len(), 1);
        assert!(texts("29 - \"a\"").is_empty());
        assert!(texts("299 - \"unterminated").is_empty());
        // Anything but a comma after a warning: that warning is invalid.
        assert_eq!(texts(r#"299 - "a", 299 - "b" junk, 299 - "c""#).len(), 1);
        assert!(texts(r#"299 - "a" "Sat, 05 Dec 2026 10:00:00 GMT" junk"#).is_empty());
    }

    #[tokio::test]
    async fn the_layer_hands_over_299_warnings_once_when_deduplicated() {
        use tower::{Layer as _, ServiceExt as _};
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let layer = WarningLayer::new(move |w| sink.lock().unwrap().push(w.text.clone())).deduplicated();
        let inner = tower::service_fn(|_: Request<()>| async {
            let response = Response::builder()
                .header("Warning", r#"299 - "one""#)
                .header("Warning", r#"299 - "two", 199 - "not a 299""#)
                .header(
                    "Warning",
                    http::HeaderValue::from_bytes("299 - \"unknown field \\\"spec.ñ\\\"\"".as_bytes()).unwrap(),
                )
                .body(())
                .unwrap();
            Ok::<_, std::convert::Infallible>(response)
        });
        let service = layer.layer(inner);
        service.clone().oneshot(Request::new(())).await.unwrap();
        service.oneshot(Request::new(())).await.unwrap();
        assert_eq!(*seen.lock().unwrap(), ["one", "two", "unknown field \"spec.ñ\""]);
    }
}
