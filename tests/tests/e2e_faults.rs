//! codegen-runtime's informer through API-server faults, on a real
//! kube-apiserver + etcd: the server killed with SIGKILL and restarted
//! while objects change through a second API server on the same etcd (an
//! HA control plane's other member), and a watch that has to resume from a
//! compacted revision (410 Gone). A binary of its own with environments of
//! its own: it kills servers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use codegen_runtime::informer::{DeletedObject, InformerConfig, ResourceEventHandler, SharedIndexInformer};
use codegen_testenv::TestEnv;
use codegen_testenv::proxy::{Link, Proxy};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;

/// What a handler saw, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Add { key: String, rv: u64 },
    Update { key: String, old: u64, new: u64 },
    Delete { key: String, rv: u64, tombstone: bool },
}

fn rv(cm: &ConfigMap) -> u64 {
    cm.resource_version().and_then(|rv| rv.parse().ok()).unwrap_or_default()
}

fn key(cm: &ConfigMap) -> String {
    format!("{}/{}", cm.namespace().unwrap_or_default(), cm.name_any())
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    fn seen(&self) -> MutexGuard<'_, Vec<Seen>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ResourceEventHandler<ConfigMap> for Recorder {
    fn on_add(&mut self, obj: Arc<ConfigMap>, _: bool) {
        self.seen().push(Seen::Add { key: key(&obj), rv: rv(&obj) });
    }

    fn on_update(&mut self, old: Arc<ConfigMap>, new: Arc<ConfigMap>) {
        self.seen().push(Seen::Update { key: key(&new), old: rv(&old), new: rv(&new) });
    }

    fn on_delete(&mut self, obj: DeletedObject<ConfigMap>) {
        let tombstone = matches!(obj, DeletedObject::Tombstone(_));
        self.seen().push(Seen::Delete { key: key(obj.object()), rv: rv(obj.object()), tombstone });
    }
}

fn config_map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        data: Some([("value".to_string(), value.to_string())].into()),
        ..Default::default()
    }
}

/// `key → (uid, resourceVersion)`.
type State = BTreeMap<String, (String, String)>;

fn state<'a>(objects: impl IntoIterator<Item = &'a ConfigMap>) -> State {
    objects
        .into_iter()
        .map(|cm| (key(cm), (cm.uid().unwrap_or_default(), cm.resource_version().unwrap_or_default())))
        .collect()
}

/// Waits until the informer's cache equals the server's list, object by
/// object (uid and resourceVersion).
async fn converged(informer: &SharedIndexInformer<ConfigMap>, api: &Api<ConfigMap>, timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let server = match api.list(&ListParams::default()).await {
            Ok(list) => state(&list.items),
            Err(_) => State::new(),
        };
        let cache = state(informer.indexer().list().iter().map(|cm| &**cm));
        if !server.is_empty() && server == cache {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the cache did not converge in {timeout:?}:\nserver {server:?}\ncache  {cache:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// No handler saw an object's resourceVersion go backwards.
fn assert_monotonic(seen: &[Seen]) {
    let mut last: BTreeMap<&str, u64> = BTreeMap::new();
    for event in seen {
        let (key, rv) = match event {
            Seen::Add { key, rv } | Seen::Delete { key, rv, .. } => (key, *rv),
            Seen::Update { key, old, new } => {
                assert!(old <= new, "{event:?} goes backwards");
                (key, *new)
            }
        };
        let previous = last.insert(key, rv).unwrap_or(0);
        assert!(rv >= previous, "{key}: resourceVersion {rv} after {previous} in {seen:?}");
    }
}

/// Lines of the audit log that list ConfigMaps in `ns`.
fn list_requests(env: &TestEnv, ns: &str) -> usize {
    env.audit_events()
        .into_iter()
        .filter(|e| {
            e["verb"] == "list" && e["objectRef"]["resource"] == "configmaps" && e["objectRef"]["namespace"] == ns
        })
        .count()
}

async fn started_informer(api: &Api<ConfigMap>) -> Result<(SharedIndexInformer<ConfigMap>, Recorder)> {
    let informer = SharedIndexInformer::new(api.clone(), InformerConfig::default());
    let recorder = Recorder::default();
    informer.add_event_handler(recorder.clone());
    informer.start();
    if !tokio::time::timeout(Duration::from_secs(60), informer.wait_for_cache_sync()).await? {
        bail!("the informer did not sync");
    }
    converged(&informer, api, Duration::from_secs(60)).await?;
    Ok((informer, recorder))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_converges_across_an_api_server_restart_and_every_delete_is_delivered() -> Result<()> {
    let env = TestEnv::start()?;
    let second = env.start_second_apiserver()?;
    let ns = env.create_namespace("restart").await?;
    let api: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, &ns);
    for i in 0..30 {
        api.create(&PostParams::default(), &config_map(&format!("cm-{i}"), "v1")).await?;
    }
    let (informer, recorder) = started_informer(&api).await?;

    // The outage: changes go through the other API server meanwhile.
    env.kill_apiserver()?;
    let other: Api<ConfigMap> = Api::namespaced(second.admin_client().await?, &ns);
    for i in 30..35 {
        other.create(&PostParams::default(), &config_map(&format!("cm-{i}"), "v1")).await?;
    }
    for i in 0..5 {
        let patch = Patch::Merge(json!({"data": {"value": "v2"}}));
        other.patch(&format!("cm-{i}"), &PatchParams::default(), &patch).await?;
    }
    for i in 5..10 {
        other.delete(&format!("cm-{i}"), &DeleteParams::default()).await?;
    }
    other.create(&PostParams::default(), &config_map("short-lived", "v1")).await?;
    other.delete("short-lived", &DeleteParams::default()).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    env.restart_apiserver()?;

    converged(&informer, &api, Duration::from_secs(120)).await?;
    let seen = recorder.seen().clone();
    for i in 5..10 {
        let k = format!("{ns}/cm-{i}");
        assert!(
            seen.iter().any(|e| matches!(e, Seen::Delete { key, .. } if *key == k)),
            "the delete of {k} made during the outage never reached the handler: {seen:?}"
        );
    }
    for i in 0..5 {
        let k = format!("{ns}/cm-{i}");
        assert!(seen.iter().any(|e| matches!(e, Seen::Update { key, old, new } if *key == k && new > old)), "{k}");
    }
    assert_monotonic(&seen);
    informer.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_from_a_compacted_revision_relists_without_duplicate_adds() -> Result<()> {
    let env = TestEnv::start()?;
    let ns = env.create_namespace("gone").await?;
    let busy = env.create_namespace("busy").await?;
    let client = env.admin_client().await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    for i in 0..20 {
        api.create(&PostParams::default(), &config_map(&format!("cm-{i}"), "v1")).await?;
    }
    let (informer, recorder) = started_informer(&api).await?;
    let lists_before = list_requests(&env, &ns);

    // The informer's resourceVersion falls behind (writes elsewhere), etcd
    // forgets the history, and the API server restarts with an empty watch
    // cache: the watch can only resume with 410 Gone.
    let elsewhere: Api<ConfigMap> = Api::namespaced(client, &busy);
    for i in 0..30 {
        elsewhere.create(&PostParams::default(), &config_map(&format!("noise-{i}"), "v1")).await?;
    }
    env.compact_etcd()?;
    env.kill_apiserver()?;
    env.restart_apiserver()?;
    let api: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, &ns);
    api.create(&PostParams::default(), &config_map("after", "v1")).await?;
    converged(&informer, &api, Duration::from_secs(120)).await?;

    assert!(list_requests(&env, &ns) > lists_before, "no relist after 410 Gone");
    let seen = recorder.seen().clone();
    let adds: Vec<&str> = seen
        .iter()
        .filter_map(|e| match e {
            Seen::Add { key, .. } => Some(key.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(adds.len(), 21, "one add per object, none again after the relist: {seen:?}");
    assert!(
        seen.iter()
            .all(|e| !matches!(e, Seen::Update { old, new, .. } if old == new) && !matches!(e, Seen::Delete { .. })),
        "unchanged objects were notified again: {seen:?}"
    );
    assert_monotonic(&seen);
    informer.shutdown().await;
    Ok(())
}

/// An admin client whose connections go through `proxy`.
/// With `timeout`, requests (TLS handshakes included) give up after it.
async fn client_via(env: &TestEnv, proxy: &Proxy, timeout: Option<Duration>) -> Result<kube::Client> {
    let kubeconfig = kube::config::Kubeconfig::read_from(env.admin_kubeconfig())?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default()).await?;
    config.cluster_url = proxy.url().parse()?;
    if timeout.is_some() {
        config.connect_timeout = timeout;
        config.read_timeout = timeout;
        config.write_timeout = timeout;
    }
    Ok(kube::Client::try_from(config)?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_partition_heals_no_informer_stays_stuck_and_retries_go_through() -> Result<()> {
    use codegen_runtime::workqueue::RateLimitingQueue;

    let env = TestEnv::start()?;
    let proxy = Proxy::start(env.api_port()).await?;
    let ns = env.create_namespace("partition").await?;
    let direct: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, &ns);
    for i in 0..10 {
        direct.create(&PostParams::default(), &config_map(&format!("cm-{i}"), "v1")).await?;
    }

    // The informer over the proxy, with the default HTTP timeouts (minutes):
    // only its own idle timeout can notice a connection that went silent.
    let through: Api<ConfigMap> = Api::namespaced(client_via(&env, &proxy, None).await?, &ns);
    let config = InformerConfig { watch_idle_timeout: Some(Duration::from_secs(5)), ..Default::default() };
    let informer = SharedIndexInformer::new(through, config);
    let resyncs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    informer.add_event_handler_with_resync(
        codegen_runtime::informer::ResourceEventHandlerFuncs::new().on_update({
            let resyncs = resyncs.clone();
            move |old: Arc<ConfigMap>, new: Arc<ConfigMap>| {
                if old.resource_version() == new.resource_version() {
                    resyncs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
        }),
        Duration::from_secs(1),
    );
    informer.start();
    assert!(tokio::time::timeout(Duration::from_secs(60), informer.wait_for_cache_sync()).await?);
    converged(&informer, &direct, Duration::from_secs(60)).await?;

    // A work queue whose worker reads each key through the proxy (with a
    // short HTTP timeout) and retries failures with backoff.
    let queue: RateLimitingQueue<String> = RateLimitingQueue::new();
    let worker_api: Api<ConfigMap> =
        Api::namespaced(client_via(&env, &proxy, Some(Duration::from_secs(2))).await?, &ns);
    let done = Arc::new(Mutex::new(Vec::<(String, u32)>::new()));
    let worker = tokio::spawn({
        let (queue, done) = (queue.clone(), done.clone());
        async move {
            while let Some(key) = queue.get().await {
                match worker_api.get(&key).await {
                    Ok(_) => {
                        done.lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push((key.clone(), queue.num_requeues(&key)));
                        queue.forget(&key);
                    }
                    Err(_) => queue.add_rate_limited(key.clone()),
                }
                queue.done(&key);
            }
        }
    });

    for (round, link) in [Link::Blackhole, Link::Down].into_iter().enumerate() {
        proxy.set(link);
        let resyncs_before = resyncs.load(std::sync::atomic::Ordering::SeqCst);
        for i in 0..3 {
            let name = format!("during-{round}-{i}");
            direct.create(&PostParams::default(), &config_map(&name, "v1")).await?;
            queue.add(name);
        }
        direct.delete(&format!("cm-{round}"), &DeleteParams::default()).await?;
        tokio::time::sleep(Duration::from_secs(6)).await;
        // Resync is local: it goes on while the server is unreachable.
        assert!(resyncs.load(std::sync::atomic::Ordering::SeqCst) > resyncs_before, "{link:?}: no resync");
        proxy.set(Link::Up);
        converged(&informer, &direct, Duration::from_secs(60))
            .await
            .map_err(|e| e.context(format!("after {link:?}")))?;
    }

    // Every key was retried while the link was bad, and went through after.
    let deadline = Instant::now() + Duration::from_secs(60);
    while done.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len() < 6 {
        if Instant::now() > deadline {
            bail!("the work queue did not drain: {:?}", done.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let done = done.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    assert!(done.iter().all(|(_, requeues)| *requeues > 0), "each key failed and was retried first: {done:?}");
    queue.shut_down();
    worker.await?;
    informer.shutdown().await;
    Ok(())
}

/// `(resourceVersion, allowWatchBookmarks)` of every watch of ConfigMaps in
/// `ns`, from the audit log, in order.
fn watch_requests(env: &TestEnv, ns: &str) -> Vec<(u64, bool)> {
    env.audit_events()
        .into_iter()
        .filter(|e| {
            e["verb"] == "watch"
                && e["stage"] == "ResponseStarted"
                && e["objectRef"]["resource"] == "configmaps"
                && e["objectRef"]["namespace"] == ns
        })
        .filter_map(|e| {
            let uri = e["requestURI"].as_str()?.to_owned();
            let query = uri.split_once('?').map(|(_, q)| q.to_owned()).unwrap_or_default();
            let param = |name: &str| {
                query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
                    .map(str::to_owned)
            };
            let rv = param("resourceVersion").and_then(|v| v.parse().ok()).unwrap_or(0);
            Some((rv, param("allowWatchBookmarks").as_deref() == Some("true")))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_watch_resumes_from_its_bookmarks_without_a_relist() -> Result<()> {
    let env = TestEnv::start()?;
    let ns = env.create_namespace("idle").await?;
    let busy = env.create_namespace("busy").await?;
    let client = env.admin_client().await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    for i in 0..5 {
        api.create(&PostParams::default(), &config_map(&format!("cm-{i}"), "v1")).await?;
    }
    // The server ends each watch after 3 s; the informer watches again.
    let mut config = InformerConfig::default();
    config.watcher_config.timeout = Some(3);
    let informer = SharedIndexInformer::new(api.clone(), config);
    informer.start();
    assert!(tokio::time::timeout(Duration::from_secs(60), informer.wait_for_cache_sync()).await?);

    // Nothing changes in the informer's namespace; elsewhere the
    // resourceVersion moves on, all through the informer's watches (the
    // server sends a bookmark from a once-a-second timer, 2 s before a
    // watch ends: with all the changes made at once, the few watches after
    // them sometimes got none on a loaded machine).
    let elsewhere: Api<ConfigMap> = Api::namespaced(client, &busy);
    let mut first_elsewhere = None;
    for i in 0..24 {
        let cm = elsewhere.create(&PostParams::default(), &config_map(&format!("noise-{i}"), "v1")).await?;
        first_elsewhere.get_or_insert(rv(&cm));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let first_elsewhere = first_elsewhere.expect("noise created");

    let watches = watch_requests(&env, &ns);
    assert!(watches.len() >= 3, "the watch was not resumed: {watches:?}");
    assert!(watches.iter().all(|(_, bookmarks)| *bookmarks), "bookmarks not requested: {watches:?}");
    // A later watch starts from a resourceVersion the informer only knows
    // from a bookmark: no object of its namespace has it.
    assert!(
        watches.iter().any(|(rv, _)| *rv >= first_elsewhere),
        "no watch resumed from a bookmark's resourceVersion (≥ {first_elsewhere}): {watches:?}"
    );
    assert_eq!(list_requests(&env, &ns), 1, "an idle watch was resumed with a relist");
    converged(&informer, &api, Duration::from_secs(10)).await?;
    informer.shutdown().await;
    Ok(())
}
