//! Informer semantics checked against synthetic watcher event streams.

use std::sync::mpsc as std_mpsc;
use std::task::Poll;

use futures::channel::mpsc as stream_mpsc;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::ObjectMeta;
use kube::runtime::watcher::Event;
use tokio::sync::mpsc;
use tokio::time::timeout;

use super::*;

/// Hang guard only: nothing here should take more than a fraction of it.
const GUARD: Duration = Duration::from_secs(30);

fn cm(name: &str, rv: u32) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            resource_version: Some(rv.to_string()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// What a handler saw, by object name and resource version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seen {
    Add(String, u32, bool),
    Update(String, u32, u32),
    /// Name, resource version, and the tombstone key if it was one.
    Delete(String, u32, Option<String>),
}

fn rv(obj: &ConfigMap) -> u32 {
    obj.resource_version().and_then(|rv| rv.parse().ok()).unwrap_or_default()
}

fn add(name: &str, rv: u32, initial: bool) -> Seen {
    Seen::Add(name.into(), rv, initial)
}

fn update(name: &str, old: u32, new: u32) -> Seen {
    Seen::Update(name.into(), old, new)
}

fn delete(name: &str, rv: u32, tombstone: bool) -> Seen {
    Seen::Delete(name.into(), rv, tombstone.then(|| format!("default/{name}")))
}

/// A handler reporting everything it sees on a channel.
struct Recorder(mpsc::UnboundedSender<Seen>);

impl ResourceEventHandler<ConfigMap> for Recorder {
    fn on_add(&mut self, obj: Arc<ConfigMap>, is_in_initial_list: bool) {
        let _ = self.0.send(Seen::Add(obj.name_any(), rv(&obj), is_in_initial_list));
    }

    fn on_update(&mut self, old: Arc<ConfigMap>, new: Arc<ConfigMap>) {
        let _ = self.0.send(Seen::Update(new.name_any(), rv(&old), rv(&new)));
    }

    fn on_delete(&mut self, obj: DeletedObject<ConfigMap>) {
        let key = match &obj {
            DeletedObject::Object(_) => None,
            DeletedObject::Tombstone(tombstone) => Some(tombstone.key.clone()),
        };
        let _ = self.0.send(Seen::Delete(obj.object().name_any(), rv(obj.object()), key));
    }
}

fn recorder() -> (Recorder, mpsc::UnboundedReceiver<Seen>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Recorder(tx), rx)
}

/// A handler that waits for a permit from `gate` before each event: a stand-in
/// for a handler stuck on a slow call. Dropping the gate's sender frees it.
fn blocked(gate: std_mpsc::Receiver<()>, seen: mpsc::UnboundedSender<Seen>) -> impl ResourceEventHandler<ConfigMap> {
    let mut recorder = Recorder(seen);
    ResourceEventHandlerFuncs::new().on_add(move |obj, initial| {
        let _ = gate.recv();
        recorder.on_add(obj, initial);
    })
}

async fn take(seen: &mut mpsc::UnboundedReceiver<Seen>, n: usize) -> Vec<Seen> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        match timeout(GUARD, seen.recv()).await {
            Ok(Some(event)) => out.push(event),
            Ok(None) => panic!("handler gone after {out:?}"),
            Err(_) => panic!("hang guard: waited for {n} events, got {out:?}"),
        }
    }
    out
}

fn sorted(mut events: Vec<Seen>) -> Vec<Seen> {
    events.sort();
    events
}

/// The test's end of a synthetic watch: sends events and waits until the
/// informer has handled all of them.
struct Feed {
    tx: stream_mpsc::UnboundedSender<Result<Event<ConfigMap>, watcher::Error>>,
    sent: usize,
    /// How many events the informer had taken when it last found the stream
    /// empty; it handles an event fully before polling again, so this
    /// reaching `sent` means everything sent has been handled.
    idle: watch::Receiver<usize>,
}

impl Feed {
    fn send(&mut self, event: Event<ConfigMap>) -> &mut Self {
        self.send_result(Ok(event))
    }

    fn send_result(&mut self, event: Result<Event<ConfigMap>, watcher::Error>) -> &mut Self {
        self.tx.unbounded_send(event).expect("informer stream dropped");
        self.sent += 1;
        self
    }

    fn relist(&mut self, objs: &[(&str, u32)]) -> &mut Self {
        self.send(Event::Init);
        for (name, rv) in objs {
            self.send(Event::InitApply(cm(name, *rv)));
        }
        self.send(Event::InitDone)
    }

    async fn settle(&mut self) {
        let sent = self.sent;
        let settled = timeout(GUARD, self.idle.wait_for(|taken| *taken >= sent)).await;
        assert!(matches!(settled, Ok(Ok(_))), "hang guard: informer did not take {sent} events");
    }
}

fn informer(config: InformerConfig<ConfigMap>) -> (SharedIndexInformer<ConfigMap>, Feed) {
    let (tx, mut rx) = stream_mpsc::unbounded();
    let (idle_tx, idle) = watch::channel(0);
    let mut taken = 0;
    let events = futures::stream::poll_fn(move |cx| match rx.poll_next_unpin(cx) {
        Poll::Ready(event) => {
            taken += usize::from(event.is_some());
            Poll::Ready(event)
        }
        Poll::Pending => {
            idle_tx.send_replace(taken);
            Poll::Pending
        }
    });
    (SharedIndexInformer::from_stream(events, config), Feed { tx, sent: 0, idle })
}

async fn synced(items: &[&dyn HasSynced]) -> bool {
    timeout(GUARD, wait_for_cache_sync(items)).await.expect("hang guard: never synced")
}

fn cached(informer: &SharedIndexInformer<ConfigMap>) -> Vec<(String, u32)> {
    let mut objs: Vec<_> = informer.indexer().list().iter().map(|o| (o.name_any(), rv(o))).collect();
    objs.sort();
    objs
}

/// docs/status.md: a watch idle for 150 s is restarted by default (the
/// server sends a bookmark every minute).
#[test]
fn the_default_watch_idle_timeout_is_150_seconds() {
    assert_eq!(InformerConfig::<ConfigMap>::default().watch_idle_timeout, Some(Duration::from_secs(150)));
}

#[tokio::test]
async fn delivers_initial_list_then_live_events() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (handler, mut seen) = recorder();
    let registration = informer.add_event_handler(handler);
    informer.start();
    feed.relist(&[("a", 1), ("b", 1)]);
    assert!(timeout(GUARD, informer.wait_for_cache_sync()).await.unwrap());
    assert_eq!(take(&mut seen, 2).await, [add("a", 1, true), add("b", 1, true)]);

    feed.send(Event::Apply(cm("a", 2))).send(Event::Apply(cm("c", 3))).send(Event::Delete(cm("b", 4)));
    assert_eq!(take(&mut seen, 3).await, [update("a", 1, 2), add("c", 3, false), delete("b", 4, false)]);
    assert_eq!(cached(&informer), [("a".into(), 2), ("c".into(), 3)]);
    assert!(informer.lister().namespace("default").get("c").is_some());
    assert!(synced(&[&registration, &informer]).await);
    informer.shutdown().await;
}

/// A handler's thread is in the informer's runtime, as a goroutine is in
/// Go's: a delayed work-queue add keeps its delay, `tokio::spawn` works.
#[tokio::test]
async fn handlers_run_in_the_informers_runtime() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let queue = crate::workqueue::WorkQueue::<String>::new();
    let (spawned_tx, mut spawned) = mpsc::unbounded_channel();
    let in_handler = queue.clone();
    informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |obj: Arc<ConfigMap>, _| {
        in_handler.add_after(obj.name_any(), Duration::from_millis(300));
        let tx = spawned_tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(());
        });
    }));
    informer.start();
    let added = std::time::Instant::now();
    feed.relist(&[("a", 1)]);
    timeout(GUARD, spawned.recv()).await.expect("hang guard: the spawned task never ran");
    let key = timeout(GUARD, queue.get()).await.expect("hang guard: the delayed key never came");
    assert_eq!(key.as_deref(), Some("a"));
    assert!(added.elapsed() >= Duration::from_millis(300), "the delay was dropped: {:?}", added.elapsed());
    informer.shutdown().await;
}

#[tokio::test]
async fn relist_replaces_the_cache_and_tombstones_vanished_objects() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    informer.start();
    feed.relist(&[("a", 1), ("b", 1), ("c", 1)]);
    take(&mut seen, 3).await;

    // A relist cut short by a restart is dropped; only the complete one counts.
    feed.send(Event::Init).send(Event::InitApply(cm("x", 5)));
    feed.relist(&[("a", 2), ("d", 2)]);
    assert_eq!(
        take(&mut seen, 4).await,
        [delete("b", 1, true), delete("c", 1, true), update("a", 1, 2), add("d", 2, false)],
        "deletions first, as client-go's Replace hands them on"
    );
    feed.settle().await;
    assert_eq!(cached(&informer), [("a".into(), 2), ("d".into(), 2)]);
    informer.shutdown().await;
}

#[tokio::test]
async fn has_synced_flips_only_after_the_first_full_list() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (gate, gate_rx) = std_mpsc::channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let registration = informer.add_event_handler(blocked(gate_rx, seen_tx));
    informer.start();

    feed.send(Event::Init).send(Event::InitApply(cm("a", 1))).send(Event::InitApply(cm("b", 1)));
    feed.settle().await;
    assert!(!informer.has_synced());
    assert!(informer.indexer().is_empty(), "a partial list is not cached");

    feed.send(Event::InitDone);
    feed.settle().await;
    assert!(informer.has_synced());
    assert_eq!(informer.indexer().len(), 2);
    assert!(!registration.has_synced(), "the handler has not processed the initial list yet");

    gate.send(()).unwrap();
    assert_eq!(take(&mut seen, 1).await, [add("a", 1, true)]);
    assert!(!registration.has_synced(), "one initial add is still pending");
    gate.send(()).unwrap();
    assert!(synced(&[&registration]).await);
    assert_eq!(take(&mut seen, 1).await, [add("b", 1, true)]);
    informer.shutdown().await;
}

#[tokio::test]
async fn late_handler_gets_the_cache_replayed_first() {
    let (informer, mut feed) = informer(InformerConfig::default());
    informer.start();
    feed.relist(&[("a", 1), ("b", 1)]);
    assert!(timeout(GUARD, informer.wait_for_cache_sync()).await.unwrap());

    let (handler, mut seen) = recorder();
    let registration = informer.add_event_handler(handler);
    assert_eq!(sorted(take(&mut seen, 2).await), [add("a", 1, true), add("b", 1, true)]);
    assert!(synced(&[&registration]).await);
    feed.send(Event::Apply(cm("a", 2)));
    assert_eq!(take(&mut seen, 1).await, [update("a", 1, 2)]);
    informer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_handler_replay_does_not_race_live_events() {
    const LAST: u32 = 3000;
    let (informer, mut feed) = informer(InformerConfig::default());
    informer.start();
    feed.relist(&[("a", 1)]);
    assert!(timeout(GUARD, informer.wait_for_cache_sync()).await.unwrap());

    let tx = feed.tx.clone();
    let writer = tokio::spawn(async move {
        for rv in 2..=LAST {
            let _ = tx.unbounded_send(Ok(Event::Apply(cm("a", rv))));
            if rv % 16 == 0 {
                tokio::task::yield_now().await;
            }
        }
    });
    // Register while updates stream in.
    while informer.indexer().get_by_key("default/a").is_none_or(|a| rv(&a) < 50) {
        tokio::task::yield_now().await;
    }
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);

    // Whatever the replay caught, the handler sees one add and then every
    // later version exactly once, in order.
    let Seen::Add(_, mut current, true) = take(&mut seen, 1).await[0].clone() else {
        panic!("the first event must be the replayed add");
    };
    while current < LAST {
        let [Seen::Update(_, old, new)] = take(&mut seen, 1).await[..] else {
            panic!("expected an update after version {current}");
        };
        assert_eq!((old, new), (current, current + 1));
        current = new;
    }
    writer.await.unwrap();
    informer.shutdown().await;
}

#[tokio::test]
async fn a_blocked_handler_blocks_neither_the_watch_nor_other_handlers() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (gate, gate_rx) = std_mpsc::channel::<()>();
    let (stuck_tx, mut stuck_seen) = mpsc::unbounded_channel();
    let stuck = informer.add_event_handler(blocked(gate_rx, stuck_tx));
    let (handler, mut seen) = recorder();
    let flowing = informer.add_event_handler(handler);
    informer.start();

    feed.relist(&[("a", 1), ("b", 1)]);
    feed.send(Event::Apply(cm("c", 2))).send(Event::Delete(cm("a", 3)));
    assert_eq!(
        take(&mut seen, 4).await,
        [add("a", 1, true), add("b", 1, true), add("c", 2, false), delete("a", 3, false)]
    );
    feed.settle().await;
    assert_eq!(cached(&informer), [("b".into(), 1), ("c".into(), 2)]);
    assert!(synced(&[&flowing, &informer]).await);
    assert!(!stuck.has_synced());

    drop(gate);
    assert_eq!(take(&mut stuck_seen, 3).await, [add("a", 1, true), add("b", 1, true), add("c", 2, false)]);
    assert!(synced(&[&stuck]).await);
    informer.shutdown().await;
}

#[tokio::test]
async fn resync_goes_only_to_handlers_that_asked_for_it() {
    let config = InformerConfig { resync: Some(Duration::from_millis(10)), ..Default::default() };
    let (informer, mut feed) = informer(config);
    let (resyncing, mut resynced) = recorder();
    informer.add_event_handler(resyncing);
    let (quiet, mut quiet_seen) = recorder();
    informer.add_event_handler_with_resync(quiet, Duration::ZERO);
    informer.start();
    feed.relist(&[("a", 1), ("b", 1)]);

    assert_eq!(take(&mut resynced, 2).await, [add("a", 1, true), add("b", 1, true)]);
    for _round in 0..2 {
        assert_eq!(sorted(take(&mut resynced, 2).await), [update("a", 1, 1), update("b", 1, 1)]);
    }
    // Handlers see events in order, so an event sent after the resyncs
    // arriving right after the initial list proves none were sent here.
    feed.send(Event::Apply(cm("c", 2)));
    assert_eq!(take(&mut quiet_seen, 3).await, [add("a", 1, true), add("b", 1, true), add("c", 2, false)]);
    informer.shutdown().await;
}

#[tokio::test]
async fn transform_runs_before_caching() {
    let config = InformerConfig {
        transform: Some(Arc::new(|mut cm: ConfigMap| {
            cm.metadata.managed_fields = None;
            cm.labels_mut().insert("seen".into(), "yes".into());
            cm
        })),
        // Kept in the object, so that only the transform takes them out.
        managed_fields: ManagedFields::Decoded,
        ..Default::default()
    };
    let (informer, mut feed) = informer(config);
    let labels = Arc::new(Mutex::new(Vec::new()));
    let recorded = labels.clone();
    let registration =
        informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |obj: Arc<ConfigMap>, _| {
            lock(&recorded).push(obj.labels().get("seen").cloned());
        }));
    informer.start();
    let mut obj = cm("a", 1);
    obj.metadata.managed_fields = Some(Vec::new());
    feed.send(Event::Init).send(Event::InitApply(obj)).send(Event::InitDone);
    feed.settle().await;
    let cached = informer.indexer().get_by_key("default/a").expect("cached");
    assert!(cached.metadata.managed_fields.is_none());
    assert_eq!(cached.labels().get("seen").map(String::as_str), Some("yes"));
    assert!(synced(&[&registration]).await);
    informer.shutdown().await;
    assert_eq!(*lock(&labels), [Some("yes".to_owned())]);
}

#[tokio::test]
async fn watch_errors_reach_the_error_handler_and_the_watch_goes_on() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (errors_tx, mut errors) = mpsc::unbounded_channel();
    informer.set_watch_error_handler(move |err| {
        let _ = errors_tx.send(err.to_string());
    });
    informer.start();
    feed.send_result(Err(watcher::Error::NoResourceVersion));
    let first = timeout(GUARD, errors.recv()).await.unwrap();
    assert!(first.is_some_and(|err| err.contains("resourceVersion")));
    feed.relist(&[("a", 1)]);
    assert!(timeout(GUARD, informer.wait_for_cache_sync()).await.unwrap());
    informer.shutdown().await;
}

#[tokio::test]
async fn removed_handler_gets_nothing_more() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (removed, mut removed_seen) = recorder();
    let registration = informer.add_event_handler(removed);
    let (kept, mut kept_seen) = recorder();
    informer.add_event_handler(kept);
    informer.start();
    feed.relist(&[("a", 1)]);
    assert_eq!(take(&mut removed_seen, 1).await, [add("a", 1, true)]);

    informer.remove_event_handler(&registration);
    assert!(registration.is_stopped());
    // It had synced (its one initial add is handled): that stays so, as
    // client-go's registration does.
    timeout(GUARD, async {
        while !registration.has_synced() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("hang guard: the handled initial list never counted");
    feed.send(Event::Apply(cm("b", 2)));
    assert_eq!(take(&mut kept_seen, 2).await, [add("a", 1, true), add("b", 2, false)]);
    // The removed handler's thread ends and drops it, closing its channel.
    assert_eq!(timeout(GUARD, removed_seen.recv()).await.unwrap(), None);
    informer.shutdown().await;
}

/// A handler that does not name the kind gets the same events as generic
/// objects: the cached objects themselves, their JSON, tombstones by key.
#[tokio::test]
async fn a_generic_handler_gets_the_events_as_generic_objects() {
    use crate::lister::{GenericDeleted, GenericEventHandler, GenericObject};
    struct Names(mpsc::UnboundedSender<String>);
    impl GenericEventHandler for Names {
        fn on_add(&mut self, obj: GenericObject, initial: bool) {
            let json = obj.to_json().unwrap();
            let _ = self.0.send(format!("add {} {} {initial}", json["kind"], obj.meta().name.as_deref().unwrap_or("")));
        }
        fn on_update(&mut self, old: GenericObject, new: GenericObject) {
            let rv = |o: &GenericObject| o.meta().resource_version.clone().unwrap_or_default();
            let _ = self.0.send(format!("update {} {}", rv(&old), rv(&new)));
        }
        fn on_delete(&mut self, obj: GenericDeleted) {
            let _ = self.0.send(match obj {
                GenericDeleted::Object(o) => format!("delete {}", o.downcast_ref::<ConfigMap>().is_some()),
                GenericDeleted::Tombstone { key, .. } => format!("tombstone {key}"),
            });
        }
    }
    let (informer, mut feed) = informer(InformerConfig::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    informer.add_generic_event_handler(Names(tx));
    informer.start();
    feed.relist(&[("a", 1)]);
    feed.send(Event::Apply(cm("a", 2))).send(Event::Delete(cm("a", 3)));
    feed.relist(&[("b", 4)]);
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(timeout(GUARD, rx.recv()).await.unwrap().unwrap());
    }
    assert_eq!(seen, ["add \"ConfigMap\" a true", "update 1 2", "delete true", "add \"ConfigMap\" b false"]);
    feed.relist(&[]);
    assert_eq!(timeout(GUARD, rx.recv()).await.unwrap().unwrap(), "tombstone default/b");
    informer.shutdown().await;
}

#[tokio::test]
async fn a_registration_of_another_informer_removes_nothing() {
    let (first, mut first_feed) = informer(InformerConfig::default());
    let (second, mut second_feed) = informer(InformerConfig::default());
    let (on_first, _first_seen) = recorder();
    let foreign = first.add_event_handler(on_first);
    let (on_second, mut second_seen) = recorder();
    let own = second.add_event_handler(on_second);
    second.remove_event_handler(&foreign);
    assert!(!own.is_stopped() && !foreign.is_stopped());
    first.start();
    second.start();
    first_feed.relist(&[]);
    second_feed.relist(&[("a", 1)]);
    assert_eq!(take(&mut second_seen, 1).await, [add("a", 1, true)], "the second informer's handler is still there");
    first.shutdown().await;
    second.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_the_watch_and_waits_for_handlers() {
    struct DropSignal(std_mpsc::Sender<()>);
    impl ResourceEventHandler<ConfigMap> for DropSignal {}
    impl Drop for DropSignal {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    let (informer, _feed) = informer(InformerConfig::default());
    let (dropped_tx, dropped) = std_mpsc::channel();
    let registration = informer.add_event_handler(DropSignal(dropped_tx));
    informer.start();
    informer.start();
    let waiting = tokio::spawn({
        let informer = informer.clone();
        async move { informer.wait_for_cache_sync().await }
    });
    informer.shutdown().await;
    assert_eq!(dropped.try_recv(), Ok(()), "shutdown returned before the handler's thread ended");
    assert!(!timeout(GUARD, waiting).await.unwrap().unwrap(), "never synced");
    assert!(!informer.has_synced());
    assert!(registration.is_stopped());
    assert!(!timeout(GUARD, wait_for_cache_sync(&[&registration, &informer])).await.unwrap());

    let late = informer.add_event_handler(recorder().0);
    assert!(late.is_stopped());
    informer.start();
    informer.shutdown().await;
}

/// A started informer with a recording handler that has seen the initial
/// list of one object, `a`.
async fn synced_with_a() -> (SharedIndexInformer<ConfigMap>, Feed, mpsc::UnboundedReceiver<Seen>) {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    informer.start();
    feed.relist(&[("a", 1)]);
    take(&mut seen, 1).await;
    (informer, feed, seen)
}

/// A handler added after the informer synced and shut down never syncs:
/// it gets no event (client-go refuses it with an error).
#[tokio::test]
async fn a_handler_added_after_a_synced_informer_shut_down_never_syncs() {
    let (informer, _feed, _seen) = synced_with_a().await;
    assert!(informer.has_synced());
    informer.shutdown().await;
    let late = informer.add_event_handler(recorder().0);
    assert!(late.is_stopped());
    assert!(!late.has_synced());
    assert!(!timeout(GUARD, wait_for_cache_sync(&[&late])).await.unwrap());
}

/// A watched delete of an object the cache does not hold reaches no
/// handler: no `on_delete` without an `on_add` (client-go's DeltaFIFO
/// drops it).
#[tokio::test]
async fn a_delete_of_an_object_never_cached_reaches_no_handler() {
    let (informer, mut feed, mut seen) = synced_with_a().await;
    feed.send(Event::Delete(cm("never", 2)));
    feed.send(Event::Delete(cm("a", 3)));
    assert_eq!(take(&mut seen, 1).await, [delete("a", 3, false)]);
    feed.settle().await;
    assert!(seen.try_recv().is_err(), "no delete of the object never cached");
    informer.shutdown().await;
}

#[tokio::test]
async fn handlers_added_before_start_run_once_started() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    feed.relist(&[("a", 1)]);
    informer.start();
    assert_eq!(take(&mut seen, 1).await, [add("a", 1, true)]);
    informer.shutdown().await;
}

#[tokio::test]
async fn relist_does_not_notify_objects_at_the_same_resource_version() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    informer.start();
    feed.relist(&[("a", 1), ("b", 1)]);
    take(&mut seen, 2).await;
    // After a 410 the watcher relists: `a` is unchanged, `b` moved on.
    feed.relist(&[("a", 1), ("b", 2)]);
    feed.send(Event::Apply(cm("c", 3)));
    assert_eq!(take(&mut seen, 2).await, [update("b", 1, 2), add("c", 3, false)]);
    feed.settle().await;
    assert!(seen.try_recv().is_err(), "no update for the unchanged object");
    informer.shutdown().await;
}

#[tokio::test]
async fn a_panicking_handler_stops_its_registration_instead_of_hanging_sync() {
    let (informer, mut feed) = informer(InformerConfig::default());
    let registration = informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(|obj: Arc<ConfigMap>, _| {
        assert_ne!(obj.name_any(), "poison", "handler bug");
    }));
    let (healthy, mut seen) = recorder();
    let other = informer.add_event_handler(healthy);
    informer.start();
    feed.relist(&[("poison", 1), ("ok", 1)]);
    take(&mut seen, 2).await;
    let done = timeout(GUARD, wait_for_cache_sync(&[&registration])).await.expect("hang guard");
    assert!(!done, "a dead handler never reports synced");
    assert!(registration.is_stopped());
    assert!(synced(&[&other]).await, "the other handler is unaffected");
    informer.shutdown().await;
}

/// Waits (under the hang guard) until `check` holds.
async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let waited = timeout(GUARD, async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "hang guard: never {what}");
}

#[tokio::test]
async fn a_malformed_object_is_skipped_reported_once_and_picked_up_when_it_decodes() {
    use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
    use serde_json::json;

    let server = crate::testing::FakeApiServer::new();
    let plain = |name: &str| ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        ..Default::default()
    };
    server.seed((0..5).map(|i| plain(&format!("good-{i}")))).unwrap();
    let client = server.client();
    // The fake server keeps whatever JSON it is sent: `data` values must be
    // strings for a ConfigMap to decode.
    let raw: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &ApiResource::erase::<ConfigMap>(&()));
    let bad = |name: &str| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"a": 42}
        }))
        .unwrap()
    };
    raw.create(&PostParams::default(), &bad("bad-0")).await.unwrap();

    let informer = SharedIndexInformer::new(Api::<ConfigMap>::namespaced(client, "default"), InformerConfig::default());
    let reports = Arc::new(Mutex::new(Vec::<MalformedObject>::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let (r, e) = (reports.clone(), errors.clone());
    informer.set_malformed_object_handler(move |m| lock(&r).push(m.clone()));
    informer.set_watch_error_handler(move |err| lock(&e).push(err.to_string()));
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    informer.start();

    // The list page holds the bad item: everything else syncs.
    assert!(synced(&[&informer]).await);
    let names =
        |informer: &SharedIndexInformer<ConfigMap>| cached(informer).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    assert_eq!(names(&informer), ["good-0", "good-1", "good-2", "good-3", "good-4"]);
    assert_eq!(informer.malformed_count(), 1);
    {
        let reports = lock(&reports);
        assert_eq!(reports.len(), 1);
        assert_eq!((reports[0].key.as_str(), reports[0].path.as_str()), ("default/bad-0", "data.a"));
        assert_eq!(reports[0].reference.name.as_deref(), Some("bad-0"));
        assert!(reports[0].reference.uid.is_some());
    }
    assert_eq!(lock(&errors).len(), 1);
    assert!(lock(&errors)[0].contains("ConfigMap default/bad-0 does not decode"), "{:?}", lock(&errors));
    assert_eq!(take(&mut seen, 5).await.len(), 5);

    // A bad watch event: reported, not cached; the watch goes on.
    raw.create(&PostParams::default(), &bad("bad-1")).await.unwrap();
    raw.create(&PostParams::default(), &{
        let mut o = bad("later");
        o.data = json!({"data": {"a": "fine"}});
        o
    })
    .await
    .unwrap();
    until("saw `later`", || informer.indexer().get_by_key("default/later").is_some()).await;
    assert_eq!(informer.malformed_count(), 2);
    assert_eq!(lock(&reports).len(), 2);

    // A relist (history compacted, watch closed: 410 Gone) sees the same
    // bad versions again and does not report them again.
    server.compact();
    server.close_watches();
    raw.create(&PostParams::default(), &{
        let mut o = bad("after-relist");
        o.data = json!({});
        o
    })
    .await
    .unwrap();
    until("saw `after-relist`", || informer.indexer().get_by_key("default/after-relist").is_some()).await;
    assert_eq!(informer.malformed_count(), 2);
    assert_eq!(lock(&reports).len(), 2, "{:?}", lock(&reports));

    // A good object turning bad keeps its last good version in the cache.
    let to_bad = Patch::Merge(json!({"data": {"x": 1}}));
    raw.patch("good-0", &PatchParams::default(), &to_bad).await.unwrap();
    until("reported good-0", || informer.malformed_count() == 3).await;
    assert!(informer.indexer().get_by_key("default/good-0").is_some());

    // Fixed objects are picked up; a deleted bad one is forgotten.
    let fix = Patch::Merge(json!({"data": {"a": "fixed", "x": "fixed"}}));
    raw.patch("bad-0", &PatchParams::default(), &fix).await.unwrap();
    raw.patch("good-0", &PatchParams::default(), &fix).await.unwrap();
    raw.delete("bad-1", &Default::default()).await.unwrap();
    until("fixed", || informer.malformed_count() == 0).await;
    until("bad-0 cached", || informer.indexer().get_by_key("default/bad-0").is_some()).await;
    let good0 = informer.indexer().get_by_key("default/good-0").unwrap();
    assert_eq!(good0.data.as_ref().unwrap()["x"], "fixed");
    assert_eq!(lock(&reports).len(), 3);
    assert!(informer.malformed_objects().is_empty());
    informer.shutdown().await;
}

#[tokio::test]
async fn a_streaming_list_needs_no_list_request_and_falls_back_when_refused() {
    let plain = |name: &str| ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() },
        ..Default::default()
    };
    let streaming = || InformerConfig::<ConfigMap> {
        watcher_config: watcher::Config::default().streaming_lists(),
        ..Default::default()
    };
    let verbs = |server: &crate::testing::FakeApiServer| -> Vec<(String, bool)> {
        server.actions().into_iter().map(|a| (a.verb, a.params.contains_key("sendInitialEvents"))).collect()
    };

    // A server that streams: the initial list is one watch.
    let server = crate::testing::FakeApiServer::new();
    server.seed((0..3).map(|i| plain(&format!("cm-{i}")))).unwrap();
    let informer = SharedIndexInformer::new(Api::<ConfigMap>::namespaced(server.client(), "default"), streaming());
    informer.start();
    assert!(synced(&[&informer]).await);
    assert_eq!(informer.indexer().list().len(), 3);
    assert!(verbs(&server).iter().all(|(verb, _)| verb == "watch"), "{:?}", verbs(&server));
    assert!(verbs(&server)[0].1, "sendInitialEvents asked for");
    informer.shutdown().await;

    // A server that refuses it (as one without the WatchList feature):
    // the informer lists page by page instead.
    let server = crate::testing::FakeApiServer::new();
    server.seed((0..3).map(|i| plain(&format!("cm-{i}")))).unwrap();
    server.prepend_reactor("watch", "configmaps", |action| {
        action.params.contains_key("sendInitialEvents").then(|| {
            Err(kube::core::Status::failure(
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                "Invalid",
            )
            .with_code(422)
            .boxed())
        })
    });
    let informer = SharedIndexInformer::new(Api::<ConfigMap>::namespaced(server.client(), "default"), streaming());
    informer.start();
    assert!(synced(&[&informer]).await);
    assert_eq!(informer.indexer().list().len(), 3);
    assert!(verbs(&server).iter().any(|(verb, _)| verb == "list"), "{:?}", verbs(&server));
    informer.shutdown().await;
}

#[tokio::test]
async fn bursts_longer_than_one_wake_up_reach_every_handler_in_order() {
    // More events at once than the informer applies between two wake-ups
    // of the handlers: none may be lost at the seams, none reordered.
    let total = 3 * MAX_BURST + 7;
    let (informer, mut feed) = informer(InformerConfig::default());
    let (first, mut seen_first) = recorder();
    let (second, mut seen_second) = recorder();
    informer.add_event_handler(first);
    informer.add_event_handler(second);
    feed.relist(&[]);
    for i in 0..total {
        feed.send(Event::Apply(cm("burst", i as u32 + 1)));
    }
    informer.start();
    let mut expected = vec![add("burst", 1, false)];
    expected.extend((1..total as u32).map(|rv| update("burst", rv, rv + 1)));
    assert_eq!(take(&mut seen_first, total).await, expected);
    assert_eq!(take(&mut seen_second, total).await, expected);
    assert_eq!(cached(&informer), [("burst".to_owned(), total as u32)]);
    informer.shutdown().await;
}

#[tokio::test]
async fn a_panic_in_the_watch_task_stops_the_informer_instead_of_hanging_sync() {
    let config = InformerConfig {
        transform: Some(Arc::new(|cm: ConfigMap| {
            assert_ne!(cm.name_any(), "poison", "transform bug");
            cm
        })),
        ..Default::default()
    };
    let (informer, mut feed) = informer(config);
    informer.start();
    feed.send(Event::Init).send(Event::InitApply(cm("poison", 1)));
    let done = timeout(GUARD, informer.wait_for_cache_sync()).await.expect("hang guard: the informer never stopped");
    assert!(!done, "never synced");
    informer.shutdown().await;
}

#[tokio::test]
async fn a_resync_period_beyond_the_clock_means_never() {
    let config = InformerConfig { resync: Some(Duration::MAX), ..Default::default() };
    let (informer, mut feed) = informer(config);
    let (handler, mut seen) = recorder();
    let registration = informer.add_event_handler(handler);
    informer.start();
    feed.relist(&[("a", 1)]);
    assert_eq!(take(&mut seen, 1).await, [add("a", 1, true)]);
    assert!(synced(&[&registration]).await, "the task did not die on the period");
    feed.send(Event::Apply(cm("a", 2)));
    assert_eq!(take(&mut seen, 1).await, [update("a", 1, 2)]);
    informer.shutdown().await;
}

/// A test drives an informer with events of its own through a watch
/// reactor (client-go's `PrependWatchReactor` with a `FakeWatcher`): events
/// sent before the watch opened wait for it, later ones arrive as sent,
/// an ERROR 410 makes the informer list again, and after `stop` the
/// server's own watch is not reached.
#[tokio::test]
async fn a_fake_watch_drives_an_informer() {
    let server = crate::testing::FakeApiServer::new();
    server.seed([cm("stored", 0)]).unwrap();
    let stored_rv = server.resource_version() as u32;
    let watch = crate::testing::FakeWatch::new();
    server.prepend_watch_reactor("configmaps", &watch);
    // Sent before the informer starts: waits for its watch.
    watch.add(&cm("early", 100));

    let informer =
        SharedIndexInformer::new(Api::<ConfigMap>::namespaced(server.client(), "default"), InformerConfig::default());
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    informer.start();
    assert!(synced(&[&informer]).await);
    assert_eq!(take(&mut seen, 2).await, [add("stored", stored_rv, true), add("early", 100, false)]);

    watch.modify(&cm("early", 101));
    watch.add(&cm("late", 102));
    watch.delete(&cm("stored", 103));
    assert_eq!(
        take(&mut seen, 3).await,
        [update("early", 100, 101), add("late", 102, false), delete("stored", 103, false)]
    );
    assert_eq!(cached(&informer), [("early".to_string(), 101), ("late".to_string(), 102)]);

    // A 410 from the watch: the informer lists the server's objects again,
    // and what only the fake watch sent is gone.
    let lists = || server.actions().iter().filter(|a| a.verb == "list").count();
    let lists_before = lists();
    watch.error(&kube::core::Status::failure("too old resource version", "Expired").with_code(410));
    let mut relisted = take(&mut seen, 3).await;
    relisted.sort();
    // `stored` was deleted by the fake watch: listed again, it is new.
    assert_eq!(relisted, [add("stored", stored_rv, false), delete("early", 101, true), delete("late", 102, true)]);
    assert!(lists() > lists_before, "listed again");
    assert_eq!(cached(&informer), [("stored".to_string(), stored_rv)]);

    // Stopped: the open stream ends, and the informer's next watch stays
    // open without events instead of reaching the server's own watch (or
    // ending at once, which kube's watcher would answer by watching again
    // at once).
    let watches = || server.actions().iter().filter(|a| a.verb == "watch").count();
    let watches_before = watches();
    watch.stop();
    assert!(watch.is_stopped());
    watch.add(&cm("dropped", 200));
    server.seed([cm("after-stop", 0)]).unwrap();
    // (The watch the stop ended had no event and lasted under a second:
    // the informer waits 0.8 to 1.6 s before the next, as client-go's.)
    assert!(timeout(Duration::from_millis(2500), seen.recv()).await.is_err(), "nothing after the stop");
    assert_eq!(watches(), watches_before + 1, "one watch after the stop, still open");
    informer.shutdown().await;
}

/// An informer that asks for a streaming list, on a watch reactor: the
/// reactor's first watch opens with the server's objects and the bookmark
/// that ends them, so the informer syncs without a list request and then
/// gets the events the test sends.
#[tokio::test]
async fn a_fake_watch_serves_a_streaming_list() {
    let server = crate::testing::FakeApiServer::new();
    server.seed([cm("stored", 0)]).unwrap();
    let stored_rv = server.resource_version() as u32;
    let watch = crate::testing::FakeWatch::new();
    server.prepend_watch_reactor("configmaps", &watch);
    watch.add(&cm("early", 100));
    let config = InformerConfig::<ConfigMap> {
        watcher_config: watcher::Config::default().streaming_lists(),
        ..Default::default()
    };
    let informer = SharedIndexInformer::new(Api::<ConfigMap>::namespaced(server.client(), "default"), config);
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    informer.start();
    assert!(timeout(Duration::from_secs(10), synced(&[&informer])).await.unwrap_or(false), "synced");
    assert_eq!(take(&mut seen, 2).await, [add("stored", stored_rv, true), add("early", 100, false)]);
    watch.modify(&cm("early", 101));
    assert_eq!(take(&mut seen, 1).await, [update("early", 100, 101)]);
    let verbs: Vec<String> = server.actions().into_iter().map(|a| a.verb).collect();
    assert_eq!(verbs, ["watch"], "one watch, no list");
    informer.shutdown().await;
}

/// A server whose watches end at once without an event: the informer
/// waits before watching again (0.8 s, then 1.6 s, ...), as client-go's
/// reflector does after a very short watch, instead of asking again in a
/// loop as kube's watcher would.
#[tokio::test]
async fn watches_that_end_at_once_are_paced() {
    use http::{Request, Response};
    use kube::client::Body;

    let watches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = watches.clone();
    let service = tower::service_fn(move |req: Request<Body>| {
        let counter = counter.clone();
        async move {
            let watch = req.uri().query().is_some_and(|q| q.contains("watch=true"));
            let body = if watch {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Vec::new()
            } else {
                br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}"#.to_vec()
            };
            Ok::<_, std::convert::Infallible>(Response::builder().status(200).body(Body::from(body)).unwrap())
        }
    });
    let client = kube::Client::new(service, "default");
    let informer = SharedIndexInformer::new(Api::<ConfigMap>::namespaced(client, "default"), InformerConfig::default());
    informer.start();
    assert!(synced(&[&informer]).await);
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let watches = watches.load(std::sync::atomic::Ordering::SeqCst);
    informer.shutdown().await;
    assert!((2..=3).contains(&watches), "{watches} watches in 2 s");
}

/// A quiet watch that the server keeps alive with bookmarks is not idle:
/// kube's watcher keeps bookmarks to itself, and the informer hears them
/// below it (it listed again at every idle timeout before). A silent watch
/// is taken for dead and started again, with a list.
#[tokio::test]
async fn bookmarks_keep_a_quiet_watch_from_the_idle_timeout() {
    let server = crate::testing::FakeApiServer::new();
    server.seed([cm("stored", 0)]).unwrap();
    let watch = crate::testing::FakeWatch::new();
    server.prepend_watch_reactor("configmaps", &watch);
    let config =
        InformerConfig::<ConfigMap> { watch_idle_timeout: Some(Duration::from_millis(600)), ..Default::default() };
    let informer = SharedIndexInformer::new(Api::<ConfigMap>::namespaced(server.client(), "default"), config);
    informer.start();
    assert!(synced(&[&informer]).await);
    let lists = || server.actions().iter().filter(|a| a.verb == "list").count();
    for _ in 0..10 {
        watch.bookmark("v1", "ConfigMap", "5");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(lists(), 1, "listed again while bookmarks came");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(lists() > 1, "a silent watch was not started again");
    informer.shutdown().await;
}

/// A list that fails every time is tried again after 0.8 s, 1.6 s, 3.2 s,
/// ... up to 30 s (each up to twice that with jitter), as client-go's
/// reflector does: not every second, which kube's backoff came to, reset
/// by the `Init` its watcher yields before each list.
#[tokio::test(start_paused = true)]
async fn a_list_that_keeps_failing_backs_off_exponentially() {
    let server = crate::testing::FakeApiServer::new();
    server.register::<ConfigMap>();
    server.prepend_reactor("list", "configmaps", |_| {
        Some(Err(kube::core::Status::failure("etcd is gone", "InternalError").with_code(500).boxed()))
    });
    let informer =
        SharedIndexInformer::new(Api::<ConfigMap>::namespaced(server.client(), "default"), InformerConfig::default());
    informer.start();
    tokio::time::sleep(Duration::from_secs(20)).await;
    let lists = server.actions().iter().filter(|a| a.verb == "list").count();
    informer.shutdown().await;
    // Lists at 0 s, then at least 0.8, 2.4, 5.6 and 12 s: 5 in 20 s (kube's
    // reset backoff: at least 13).
    assert!((3..=5).contains(&lists), "{lists} lists in 20 s");
}
