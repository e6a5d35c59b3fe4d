//! A watch a test pushes events into (client-go's `watch.FakeWatcher` /
//! `RaceFreeFakeWatcher` behind `PrependWatchReactor`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use kube::core::Status;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{ResourceInfo, lock};
use crate::testing::watch::WatchStream;

/// Events a test sends to the watches of a resource, with
/// [`FakeApiServer::prepend_watch_reactor`](super::FakeApiServer::prepend_watch_reactor),
/// instead of the changes of the server's objects.
///
/// Every watch request the reactor answers gets a stream that stays open
/// and carries the events sent from then on; events sent while no stream
/// is open wait for the next one, so a test may send before its informer
/// has started. A new watch request takes the feed over and ends the
/// stream before it (a client re-watching replaces its own stream), as one
/// client-go `FakeWatcher` serves one consumer. After [`stop`](Self::stop)
/// the open stream ends, and a later watch request gets a stream without
/// events that stays open until the request's timeout (client-go's stopped
/// watcher ends at once, and its reflector waits before it lists and
/// watches again; kube's watcher would watch again at once, in a loop).
///
/// A watch request with `sendInitialEvents` (an informer's streaming list)
/// first gets the server's objects as `ADDED` events and, with bookmarks
/// allowed, the bookmark that ends the initial events: what a list before
/// the watch would have given, so that such an informer syncs as one that
/// lists. (client-go's fake clientsets decline streaming lists, and its
/// informers list instead.)
///
/// Cheap to clone; clones send to the same watches.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use codegen_runtime::testing::{FakeApiServer, FakeWatch};
/// use futures::StreamExt;
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// let server = FakeApiServer::new();
/// server.register::<ConfigMap>();
/// let watch = FakeWatch::new();
/// server.prepend_watch_reactor("configmaps", &watch);
///
/// let mut config_map = ConfigMap::default();
/// config_map.metadata.name = Some("settings".into());
/// config_map.metadata.namespace = Some("default".into());
/// config_map.metadata.resource_version = Some("7".into());
/// watch.add(&config_map);
///
/// let api: kube::Api<ConfigMap> = kube::Api::namespaced(server.client(), "default");
/// let mut events = api.watch(&Default::default(), "0").await.unwrap().boxed();
/// match events.next().await {
///     Some(Ok(kube::api::WatchEvent::Added(cm))) => assert_eq!(cm.metadata.name.as_deref(), Some("settings")),
///     other => panic!("{other:?}"),
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct FakeWatch {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Events sent while no stream was open.
    waiting: VecDeque<Bytes>,
    /// The open stream's feed.
    feed: Option<mpsc::UnboundedSender<Bytes>>,
    stopped: bool,
}

impl FakeWatch {
    /// A watch with no events yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends an `ADDED` event of `object`.
    pub fn add(&self, object: &impl Serialize) {
        self.action("ADDED", object);
    }

    /// Sends a `MODIFIED` event of `object`.
    pub fn modify(&self, object: &impl Serialize) {
        self.action("MODIFIED", object);
    }

    /// Sends a `DELETED` event of `object`.
    pub fn delete(&self, object: &impl Serialize) {
        self.action("DELETED", object);
    }

    /// Sends a `BOOKMARK` event at `resource_version` (the object of a
    /// bookmark carries only its kind and resourceVersion).
    pub fn bookmark(&self, api_version: &str, kind: &str, resource_version: &str) {
        let object = serde_json::json!({
            "apiVersion": api_version,
            "kind": kind,
            "metadata": { "resourceVersion": resource_version },
        });
        self.action("BOOKMARK", &object);
    }

    /// Sends an `ERROR` event carrying `status` (e.g. a 410 Expired, after
    /// which an informer lists again).
    pub fn error(&self, status: &Status) {
        let mut object = serde_json::to_value(status).unwrap_or(Value::Null);
        if let Some(map) = object.as_object_mut() {
            map.entry("apiVersion").or_insert_with(|| "v1".into());
            map.entry("kind").or_insert_with(|| "Status".into());
        }
        self.action("ERROR", &object);
    }

    /// Sends an event of type `kind` (`ADDED`, `MODIFIED`, ...) with
    /// `object` as written (client-go's `FakeWatcher.Action`).
    ///
    /// # Panics
    ///
    /// If `object` does not serialize to JSON.
    pub fn action(&self, kind: &str, object: &impl Serialize) {
        let object = serde_json::to_value(object).expect("a watch event's object serializes to JSON");
        let line = super::store::watch_line(kind, &object);
        let mut state = lock(&self.state);
        if state.stopped {
            return;
        }
        let line = match &state.feed {
            Some(feed) => match feed.send(line) {
                Ok(()) => return,
                // The stream is gone (its client went away or it timed
                // out): the event waits for the next one.
                Err(mpsc::error::SendError(line)) => line,
            },
            None => line,
        };
        state.feed = None;
        state.waiting.push_back(line);
    }

    /// Ends the open stream; later watch requests get a stream without
    /// events, and events sent from now on are dropped.
    pub fn stop(&self) {
        let mut state = lock(&self.state);
        state.stopped = true;
        state.feed = None;
        state.waiting.clear();
    }

    /// Whether [`stop`](Self::stop) was called.
    pub fn is_stopped(&self) -> bool {
        lock(&self.state).stopped
    }

    /// The stream for a watch request: `initial` (a streaming list's), the
    /// waiting events, then those sent while it is open.
    pub(crate) fn open(
        &self,
        info: ResourceInfo,
        mut initial: Vec<Bytes>,
        timeout: Option<std::time::Duration>,
    ) -> WatchStream {
        let mut state = lock(&self.state);
        let (tx, rx) = mpsc::unbounded_channel();
        // Replacing the sender ends the stream before this one. A stopped
        // watch keeps the sender too, sending nothing, so that the stream
        // stays open: one that ended at once would have kube's watcher ask
        // again at once, without pause.
        state.feed = Some(tx);
        initial.extend(state.waiting.drain(..));
        WatchStream::open(std::sync::Weak::new(), 0, info, initial, rx, timeout, false)
    }
}

/// A fake watch bound to a resource (plural, or `"*"`).
#[derive(Clone, Debug)]
pub(crate) struct WatchReactor {
    pub(crate) resource: String,
    pub(crate) watch: FakeWatch,
}

#[cfg(test)]
mod tests {
    use futures::{StreamExt, TryStreamExt};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, WatchEvent, WatchParams};

    use super::*;
    use crate::testing::FakeApiServer;

    fn cm(name: &str, rv: u32) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.metadata.namespace = Some("default".into());
        cm.metadata.resource_version = Some(rv.to_string());
        cm
    }

    fn name(event: WatchEvent<ConfigMap>) -> String {
        match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => o.metadata.name.unwrap(),
            WatchEvent::Bookmark(b) => format!("bookmark {}", b.metadata.resource_version),
            WatchEvent::Error(e) => format!("error {}", e.code),
        }
    }

    #[tokio::test]
    async fn a_new_watch_takes_the_feed_over_and_a_timeout_keeps_the_events() {
        let server = FakeApiServer::new();
        server.register::<ConfigMap>();
        let watch = FakeWatch::new();
        server.prepend_watch_reactor("*", &watch);
        let api: Api<ConfigMap> = Api::namespaced(server.client(), "default");

        let mut first = api.watch(&WatchParams::default(), "0").await.unwrap().boxed();
        watch.add(&cm("a", 1));
        assert_eq!(name(first.try_next().await.unwrap().unwrap()), "a");
        // A second watch ends the first one and gets what follows.
        let mut second = api.watch(&WatchParams::default(), "0").await.unwrap().boxed();
        watch.modify(&cm("b", 2));
        assert!(first.next().await.is_none(), "the first stream ended");
        assert_eq!(name(second.try_next().await.unwrap().unwrap()), "b");

        // A watch that timed out: what is sent meanwhile waits for the next.
        let mut short = api.watch(&WatchParams::default().timeout(1), "0").await.unwrap().boxed();
        drop(second);
        tokio::time::timeout(std::time::Duration::from_secs(5), async { while short.next().await.is_some() {} })
            .await
            .expect("the watch ends at its timeout");
        watch.bookmark("v1", "ConfigMap", "9");
        watch.error(&Status::failure("too old", "Expired").with_code(410));
        let mut next = api.watch(&WatchParams::default(), "0").await.unwrap().boxed();
        assert_eq!(name(next.try_next().await.unwrap().unwrap()), "bookmark 9");
        assert_eq!(name(next.try_next().await.unwrap().unwrap()), "error 410");

        let actions = server.actions().iter().filter(|a| a.verb == "watch").count();
        assert_eq!(actions, 4, "every watch request is logged");

        // Cleared reactors: watches reach the server's objects again.
        server.clear_reactors();
        server.seed([cm("stored", 0)]).unwrap();
        let mut from_store = api.watch(&WatchParams::default(), "0").await.unwrap().boxed();
        assert_eq!(name(from_store.try_next().await.unwrap().unwrap()), "stored");
    }
}
