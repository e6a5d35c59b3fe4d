//! Response bodies of the fake API server: whole JSON documents, and the
//! streaming watch body that stays open and delivers events as they happen.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Weak;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::Sleep;

use super::{ResourceInfo, Shared};

/// A response body of [`FakeApiService`](super::FakeApiService): a complete
/// JSON document, or a watch stream of newline-delimited JSON events.
#[derive(Debug)]
pub struct FakeBody {
    kind: BodyKind,
}

#[derive(Debug)]
enum BodyKind {
    Full(Option<Bytes>),
    Watch(Box<WatchStream>),
}

impl FakeBody {
    pub(crate) fn full(bytes: Vec<u8>) -> Self {
        Self { kind: BodyKind::Full(Some(Bytes::from(bytes))) }
    }

    pub(crate) fn watch(stream: WatchStream) -> Self {
        Self { kind: BodyKind::Watch(Box::new(stream)) }
    }
}

impl http_body::Body for FakeBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            BodyKind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            BodyKind::Watch(stream) => stream.poll_line(cx).map(|l| l.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, BodyKind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            BodyKind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            BodyKind::Full(None) => SizeHint::with_exact(0),
            BodyKind::Watch(_) => SizeHint::default(),
        }
    }
}

/// One open watch: the events known when it started, then those the store
/// sends while it is registered, until the timeout or the store closes it.
pub(crate) struct WatchStream {
    pending: VecDeque<Bytes>,
    rx: Option<mpsc::UnboundedReceiver<Bytes>>,
    deadline: Option<Pin<Box<Sleep>>>,
    /// Sent after the last event when the timeout ends the watch.
    closing: Option<Bytes>,
    shared: Weak<Shared>,
    id: u64,
    info: ResourceInfo,
    bookmarks: bool,
}

impl std::fmt::Debug for WatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream").field("id", &self.id).field("resource", &self.info.plural).finish()
    }
}

impl WatchStream {
    /// A stream of `lines` that ends after them.
    pub(crate) fn finished(info: ResourceInfo, lines: Vec<Bytes>) -> Self {
        Self {
            pending: lines.into(),
            rx: None,
            deadline: None,
            closing: None,
            shared: Weak::new(),
            id: 0,
            info,
            bookmarks: false,
        }
    }

    /// A live stream; must be created inside a Tokio runtime when a timeout
    /// is given.
    pub(crate) fn open(
        shared: Weak<Shared>,
        id: u64,
        info: ResourceInfo,
        initial: Vec<Bytes>,
        rx: mpsc::UnboundedReceiver<Bytes>,
        timeout: Option<std::time::Duration>,
        bookmarks: bool,
    ) -> Self {
        Self {
            pending: initial.into(),
            rx: Some(rx),
            deadline: timeout.map(|t| Box::pin(tokio::time::sleep(t))),
            closing: None,
            shared,
            id,
            info,
            bookmarks,
        }
    }

    fn poll_line(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(line) = self.pending.pop_front() {
            return Poll::Ready(Some(line));
        }
        let Some(rx) = self.rx.as_mut() else {
            return Poll::Ready(self.closing.take());
        };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(line)) => return Poll::Ready(Some(line)),
            Poll::Ready(None) => {
                self.rx = None;
                return Poll::Ready(self.closing.take());
            }
            Poll::Pending => {}
        }
        if let Some(deadline) = self.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            self.deadline = None;
            // Stop the feed; events already queued still go out, then (when
            // asked for) a bookmark at the version the feed stopped at.
            if let Some(shared) = self.shared.upgrade() {
                let mut store = shared.lock_store();
                store.unregister_watch(self.id);
                if self.bookmarks {
                    self.closing = Some(store.bookmark(&self.info, false));
                }
            }
            let mut rest = Vec::new();
            if let Some(rx) = self.rx.as_mut() {
                while let Ok(line) = rx.try_recv() {
                    rest.push(line);
                }
            }
            self.rx = None;
            self.pending.extend(rest);
            return match self.pending.pop_front() {
                Some(line) => Poll::Ready(Some(line)),
                None => Poll::Ready(self.closing.take()),
            };
        }
        Poll::Pending
    }
}
