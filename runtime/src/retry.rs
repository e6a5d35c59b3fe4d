//! client-go's retries of a request: only an answer that asks for it (429,
//! or a 5xx, with a `Retry-After` of whole seconds) is sent again, after
//! the seconds it names, at most ten times (`rest.Request`'s `maxRetries`).
//! A GET that fails in transport before its answer — the connection reset,
//! or closed before the answer was complete — is sent again after a second,
//! as client-go does (its `IsConnectionReset` and `IsProbableEOF`); any
//! other verb is not, for it may have taken effect.
//!
//! kube's default client retries otherwise: every 429, 503 and 504, with or
//! without `Retry-After`, up to 15 times with a backoff of up to 1000 s, a
//! create too. A 504 of a create the API server "may still be processing"
//! then creates a second object (with `generateName`), and an aggregated
//! API that is down (503) holds a call for minutes instead of failing it.
//! [`client`] and [`default_client`] build a `kube::Client` without kube's
//! retries and with [`RetryAfterLayer`]; the generated clientset's
//! `try_default` uses [`default_client`].

use std::time::Duration;

use http::{Request, Response};
use kube::client::{Body, ClientBuilder};

/// client-go's `maxRetries` of a request.
pub const MAX_RETRIES: u32 = 10;

/// When to send a request again: client-go's `checkWait` (429 or 5xx with
/// `Retry-After` seconds), at most `max_retries` times.
#[derive(Clone, Debug)]
pub struct RetryAfterPolicy {
    max_retries: u32,
    retried: u32,
}

/// Whether a request's transport error is one client-go sends a GET again
/// for: the connection reset by the peer, or closed before the answer was
/// complete (Go's `io.EOF` / `io.ErrUnexpectedEOF`).
fn is_transient(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_incomplete_message) {
            return true;
        }
        if let Some(error) = error.downcast_ref::<std::io::Error>() {
            if matches!(error.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof) {
                return true;
            }
            // An `io::Error` made from another error hands out that error's
            // source, not the error itself.
            if let Some(inner) = error.get_ref() {
                cause = Some(inner);
                continue;
            }
        }
        cause = error.source();
    }
    false
}

impl<B, E> tower::retry::Policy<Request<Body>, Response<B>, E> for RetryAfterPolicy
where
    E: std::ops::Deref<Target = dyn std::error::Error + Send + Sync>,
{
    type Future = tokio::time::Sleep;

    fn retry(&mut self, req: &mut Request<Body>, result: &mut Result<Response<B>, E>) -> Option<Self::Future> {
        let response = match result {
            Ok(response) => response,
            Err(error) => {
                if req.method() != http::Method::GET || self.retried >= self.max_retries || !is_transient(&**error) {
                    return None;
                }
                // client-go answers such an error with a made-up
                // `Retry-After: 1`.
                self.retried += 1;
                return Some(tokio::time::sleep(Duration::from_secs(1)));
            }
        };
        let code = response.status().as_u16();
        if !(code == 429 || code >= 500) || self.retried >= self.max_retries {
            return None;
        }
        let header = response.headers().get(http::header::RETRY_AFTER)?;
        // Go's Atoi: a negative number is a retry at once.
        let seconds: i64 = header.to_str().ok()?.trim().parse().ok()?;
        self.retried += 1;
        Some(tokio::time::sleep(Duration::from_secs(seconds.max(0).unsigned_abs())))
    }

    fn clone_request(&mut self, req: &Request<Body>) -> Option<Request<Body>> {
        // A streamed body cannot be sent twice: such a request is not retried.
        let body = req.body().try_clone()?;
        let mut copy = Request::builder().method(req.method().clone()).uri(req.uri().clone()).version(req.version());
        if let Some(headers) = copy.headers_mut() {
            headers.extend(req.headers().clone());
        }
        let mut copy = copy.body(body).ok()?;
        *copy.extensions_mut() = req.extensions().clone();
        Some(copy)
    }
}

/// A layer for `kube::client::ClientBuilder::with_layer` that retries as
/// client-go does (see the [module](self)). Use it on a `kube::Config` with
/// `default_retry = false`, or kube retries underneath it too.
#[derive(Clone, Debug)]
pub struct RetryAfterLayer {
    max_retries: u32,
}

impl Default for RetryAfterLayer {
    fn default() -> Self {
        Self { max_retries: MAX_RETRIES }
    }
}

impl RetryAfterLayer {
    /// At most `max_retries` retries of a request.
    pub fn new(max_retries: u32) -> Self {
        Self { max_retries }
    }
}

impl<S, B> tower::Layer<S> for RetryAfterLayer
where
    S: tower::Service<Request<Body>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<tower::BoxError> + Send + Sync,
{
    type Service = tower::retry::Retry<RetryAfterPolicy, tower::buffer::Buffer<Request<Body>, S::Future>>;

    /// Must be called inside a Tokio runtime (the layer's buffer runs a
    /// task there), as `kube::Client::new` must.
    fn layer(&self, inner: S) -> Self::Service {
        let policy = RetryAfterPolicy { max_retries: self.max_retries, retried: 0 };
        tower::retry::Retry::new(policy, tower::buffer::Buffer::new(inner, 1024))
    }
}

/// A client for `config` that retries as client-go does: kube's default
/// retries off, [`RetryAfterLayer`] on.
pub fn client(mut config: kube::Config) -> Result<kube::Client, kube::Error> {
    config.default_retry = false;
    Ok(ClientBuilder::try_from(config)?.with_layer(&RetryAfterLayer::default()).build())
}

/// [`client`] for the configuration kube infers: `$KUBECONFIG` or
/// `~/.kube/config`, else the pod's service account.
pub async fn default_client() -> Result<kube::Client, kube::Error> {
    client(kube::Config::infer().await.map_err(kube::Error::InferConfig)?)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A client over a stub answering each request with the next of
    /// `answers` (the last one again when they run out), counting them.
    fn stub(answers: Vec<(u16, Option<&'static str>)>) -> (kube::Client, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let mut log = log.lock().unwrap();
            log.push(req.method().to_string());
            let (code, retry_after) = answers[(log.len() - 1).min(answers.len() - 1)];
            let mut response = Response::builder().status(code);
            if let Some(seconds) = retry_after {
                response = response.header(http::header::RETRY_AFTER, seconds);
            }
            let body = if code == 200 { r#"{"kind":"Status","apiVersion":"v1","status":"Success"}"# } else { "" };
            std::future::ready(response.body(Body::from(body.as_bytes().to_vec())))
        });
        let layered = tower::Layer::layer(&RetryAfterLayer::default(), service);
        (kube::Client::new(layered, "default"), seen)
    }

    async fn send(client: &kube::Client, method: &str) -> u16 {
        let request = Request::builder().method(method).uri("/api/v1/namespaces").body(b"{}".to_vec()).unwrap();
        client.send(request.map(Body::from)).await.unwrap().status().as_u16()
    }

    #[tokio::test(start_paused = true)]
    async fn only_answers_with_retry_after_are_retried() {
        // 429 and 503 with Retry-After: tried again after the seconds given.
        let (client, seen) = stub(vec![(429, Some("1")), (503, Some("2")), (200, None)]);
        let started = tokio::time::Instant::now();
        assert_eq!(send(&client, "POST").await, 200);
        assert_eq!(seen.lock().unwrap().len(), 3);
        assert_eq!(started.elapsed().as_secs(), 3, "waited what the server asked");

        // A 504 without Retry-After (a create that may still be going on)
        // and a 4xx other than 429 are answers, not retried.
        for answer in [(504, None), (503, None), (409, Some("1")), (429, Some("soon"))] {
            let (client, seen) = stub(vec![answer, (200, None)]);
            assert_eq!(send(&client, "POST").await, answer.0);
            assert_eq!(seen.lock().unwrap().len(), 1, "{answer:?}");
        }

        // At most ten retries.
        let (client, seen) = stub(vec![(429, Some("0"))]);
        assert_eq!(send(&client, "GET").await, 429);
        assert_eq!(seen.lock().unwrap().len(), 1 + MAX_RETRIES as usize);
    }

    /// A loopback HTTP server answering every request with `head`,
    /// counting the requests.
    async fn answering(head: &'static str) -> (String, Arc<Mutex<usize>>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let count = Arc::new(Mutex::new(0));
        let counter = count.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut tcp, _)) = listener.accept().await else { return };
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Ok(n) = tcp.read(&mut chunk).await else { return };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            *counter.lock().unwrap() += 1;
                            if tcp.write_all(head.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (url, count)
    }

    /// Through the whole client: kube's retries are off (a 503 without
    /// Retry-After is sent once; kube would send it again) and the layer's
    /// are on (a 429 with Retry-After is sent eleven times in all).
    #[tokio::test]
    async fn a_client_from_a_config_retries_as_client_go() {
        for (head, requests) in [
            ("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n", 1),
            ("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n", 1 + MAX_RETRIES as usize),
        ] {
            let (url, count) = answering(head).await;
            let client = client(kube::Config::new(url.parse().unwrap())).unwrap();
            let request = Request::builder().uri("/api/v1/namespaces").body(Vec::new()).unwrap();
            let response = client.send(request.map(Body::from)).await.unwrap();
            assert_ne!(response.status().as_u16(), 200);
            assert_eq!(*count.lock().unwrap(), requests, "{head:?}");
        }
    }

    /// A loopback HTTP server that reads each request and then, for the
    /// first `failures` connections, closes the connection without an
    /// answer (resetting it when `reset`), and answers 200 afterwards.
    async fn failing(failures: usize, reset: bool) -> (String, Arc<Mutex<usize>>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let count = Arc::new(Mutex::new(0));
        let counter = count.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut tcp, _)) = listener.accept().await else { return };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let seen = {
                    let mut count = counter.lock().unwrap();
                    *count += 1;
                    *count
                };
                if seen <= failures {
                    if reset {
                        tcp.set_zero_linger().unwrap();
                    }
                    drop(tcp);
                    continue;
                }
                let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
                let _ = tcp.write_all(answer.as_bytes()).await;
            }
        });
        (url, count)
    }

    /// client-go's transport retries: a GET whose connection is closed or
    /// reset before the answer is sent again a second later; a POST is not
    /// (it may have taken effect).
    #[tokio::test]
    async fn a_get_is_sent_again_after_a_transport_error() {
        for reset in [false, true] {
            let (url, count) = failing(1, reset).await;
            let get_client = client(kube::Config::new(url.parse().unwrap())).unwrap();
            let started = std::time::Instant::now();
            let request = Request::builder().uri("/api/v1/namespaces").body(Vec::new()).unwrap();
            let response = get_client.send(request.map(Body::from)).await.unwrap();
            assert_eq!(response.status().as_u16(), 200, "reset: {reset}");
            assert_eq!(*count.lock().unwrap(), 2, "reset: {reset}");
            assert!(started.elapsed() >= Duration::from_secs(1), "waited a second, as client-go");

            let (url, count) = failing(1, reset).await;
            let post_client = client(kube::Config::new(url.parse().unwrap())).unwrap();
            let request = Request::builder().method("POST").uri("/api/v1/namespaces").body(b"{}".to_vec()).unwrap();
            assert!(post_client.send(request.map(Body::from)).await.is_err(), "reset: {reset}");
            assert_eq!(*count.lock().unwrap(), 1, "a POST is not sent again (reset: {reset})");
        }
    }

    #[test]
    fn transport_errors_that_are_retried() {
        use std::io::{Error, ErrorKind};
        let wrapped = |kind| -> tower::BoxError { Box::new(Error::other(Error::from(kind))) };
        assert!(is_transient(&*wrapped(ErrorKind::ConnectionReset)));
        assert!(is_transient(&*wrapped(ErrorKind::UnexpectedEof)));
        assert!(
            !is_transient(&*wrapped(ErrorKind::ConnectionRefused)),
            "refused: no request reached the server, but client-go does not retry it"
        );
        assert!(!is_transient(&*wrapped(ErrorKind::TimedOut)));
    }
}
