//! Pausing after watches that end at once.
//!
//! client-go's reflector takes a watch that ends within a second without
//! an event for an error (`VeryShortWatchError`) and waits before it lists
//! and watches again: 0.8 s, doubled each time up to 30 s, with up to as
//! much again of jitter, back to 0.8 s after two minutes without one.
//! kube's watcher watches again at once when a watch ends, so a server (or
//! a proxy) that ends every watch at once would be asked again in a tight
//! loop. The informer's client goes through [`pace_short_watches`], which
//! waits as client-go's reflector does before a watch that follows such a
//! watch, and notes when the server was last heard from ([`Heard`]): kube's
//! watcher keeps bookmarks and the ends of watches to itself, so the
//! informer's idle timeout could not tell a quiet watch from a dead one by
//! the events it gets.
//!
//! [`ReflectorBackoff`] paces what follows a failed list or watch.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request};
use http_body::Frame;
use kube::client::Body;
use kube::runtime::watcher;
use tokio::time::Instant;

/// A watch shorter than this without an event is "very short".
const SHORT: Duration = Duration::from_secs(1);
/// client-go's reflector backoff: first pause, longest pause, and the
/// quiet time after which it starts again from the first.
const FIRST_PAUSE: Duration = Duration::from_millis(800);
const LONGEST_PAUSE: Duration = Duration::from_secs(30);
const RESET_AFTER: Duration = Duration::from_secs(120);

/// The short watches in a row, and when the last one ended.
#[derive(Debug, Default)]
struct Pace {
    short_in_a_row: u32,
    last_short: Option<Instant>,
}

impl Pace {
    /// How long to wait before the next watch.
    fn pause(&mut self, now: Instant) -> Duration {
        let Some(last) = self.last_short else { return Duration::ZERO };
        if now.duration_since(last) >= RESET_AFTER {
            *self = Pace::default();
            return Duration::ZERO;
        }
        let doubled = FIRST_PAUSE.saturating_mul(1 << self.short_in_a_row.saturating_sub(1).min(16));
        let pause = doubled.min(LONGEST_PAUSE);
        // Jitter 1.0: up to the pause again.
        let unit = (uuid::Uuid::new_v4().as_u128() % 1_000) as f64 / 1_000.0;
        pause.mul_f64(1.0 + unit)
    }

    fn ended(&mut self, short: bool, now: Instant) {
        if short {
            self.short_in_a_row = self.short_in_a_row.saturating_add(1);
            self.last_short = Some(now);
        } else {
            *self = Pace::default();
        }
    }
}

type Shared = Arc<Mutex<Pace>>;

fn lock(pace: &Shared) -> std::sync::MutexGuard<'_, Pace> {
    pace.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `request` is a watch (`GET ...?watch=true`).
fn is_watch(request: &Request<Body>) -> bool {
    request.method() == Method::GET
        && request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| matches!(p, "watch=true" | "watch=1" | "watch=True")))
}

/// `client`, waiting before a watch as client-go's reflector waits after a
/// very short watch (see the [module](self)). Other requests pass as they
/// are.
/// Also answers when the server was last heard from through it.
pub(crate) fn pace_short_watches(client: kube::Client) -> (kube::Client, Heard) {
    let namespace = client.default_namespace().to_owned();
    let pace: Shared = Arc::default();
    let heard = Heard(Arc::new(Mutex::new(Instant::now())));
    let heard_here = heard.clone();
    let service = tower::service_fn(move |request: Request<Body>| {
        let (client, pace, heard) = (client.clone(), pace.clone(), heard_here.clone());
        async move {
            if !is_watch(&request) {
                let response = client.send(request).await?;
                heard.touch();
                return Ok(response.map(|body| Watched { body, heard, watch: None }));
            }
            let pause = lock(&pace).pause(Instant::now());
            if !pause.is_zero() {
                tracing::debug!(?pause, "the last watch ended at once without an event; waiting before the next");
                tokio::time::sleep(pause).await;
            }
            let started = Instant::now();
            let response = client.send(request).await?;
            heard.touch();
            Ok::<_, kube::Error>(response.map(|body| Watched { body, heard, watch: Some((pace, started, false)) }))
        }
    });
    (kube::Client::new(service, namespace), heard)
}

/// When a client made by [`pace_short_watches`] last heard from the server:
/// a response's head, a frame of its body (a watch's events and bookmarks)
/// or its end.
#[derive(Clone, Debug)]
pub(crate) struct Heard(Arc<Mutex<Instant>>);

impl Heard {
    fn touch(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// The last time the server was heard from.
    pub(crate) fn last(&self) -> Instant {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A response body, the clock of when the server was heard from, and for
/// a watch: the pace, when it started and whether an event came.
struct Watched {
    body: Body,
    heard: Heard,
    watch: Option<(Shared, Instant, bool)>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = kube::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, kube::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(Some(Ok(_)) | None)) {
            this.heard.touch();
        }
        if let Some((pace, started, seen)) = &mut this.watch {
            match &polled {
                Poll::Ready(Some(Ok(frame))) if frame.data_ref().is_some_and(|d| !d.is_empty()) && !*seen => {
                    *seen = true;
                    lock(pace).ended(false, Instant::now());
                }
                Poll::Ready(None) => {
                    let now = Instant::now();
                    let short = !*seen && now.duration_since(*started) < SHORT;
                    lock(pace).ended(short, now);
                    this.watch = None;
                }
                _ => {}
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// kube's [`DefaultBackoff`](watcher::DefaultBackoff) for the informer's
/// watcher (0.8 s, doubled up to 30 s, jittered, back to 0.8 s after two
/// minutes without a failure: client-go's reflector backoff), except that
/// events do not reset it. kube's watcher yields `Init` before each list, so
/// with its reset a list that fails every time (no RBAC for it, a CRD not
/// installed, an overloaded server) was sent again about every second,
/// forever; client-go's waits up to 30 s.
#[derive(Default)]
pub(crate) struct ReflectorBackoff(watcher::DefaultBackoff);

impl Iterator for ReflectorBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.0.next()
    }
}

impl kube::runtime::utils::Backoff for ReflectorBackoff {
    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_thirty_seconds_and_reset() {
        let start = Instant::now();
        let mut pace = Pace::default();
        assert_eq!(pace.pause(start), Duration::ZERO, "no short watch yet");
        let mut bounds = Vec::new();
        for _ in 0..8 {
            pace.ended(true, start);
            let pause = pace.pause(start);
            bounds.push(pause);
        }
        for (i, pause) in bounds.iter().enumerate() {
            let base = FIRST_PAUSE.saturating_mul(1 << i).min(LONGEST_PAUSE);
            assert!(*pause >= base && *pause <= base * 2, "{i}: {pause:?} for {base:?}");
        }
        // An event, or a watch that lasted, starts again from nothing.
        pace.ended(false, start);
        assert_eq!(pace.pause(start), Duration::ZERO);
        // Two quiet minutes after the last short watch, too.
        pace.ended(true, start);
        assert_eq!(pace.pause(start + RESET_AFTER), Duration::ZERO);
    }

    #[test]
    fn only_watches_are_paced() {
        let request = |method: &str, uri: &str| Request::builder().method(method).uri(uri).body(Body::empty()).unwrap();
        assert!(is_watch(&request("GET", "/api/v1/configmaps?watch=true&resourceVersion=5")));
        assert!(is_watch(&request("GET", "/api/v1/configmaps?resourceVersion=5&watch=1")));
        assert!(!is_watch(&request("GET", "/api/v1/configmaps?limit=500")));
        assert!(!is_watch(&request("GET", "/api/v1/configmaps?watchful=true")));
        assert!(!is_watch(&request("POST", "/api/v1/configmaps?watch=true")));
    }
}
