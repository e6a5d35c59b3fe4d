//! Entry points of the fuzz targets (`fuzz/`, cargo-fuzz on nightly), here
//! so that the committed corpora replay as ordinary tests on stable
//! (`tests/tests/fuzz_corpora.rs`). Each takes the fuzzer's bytes and panics
//! only when the runtime broke a promise.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::indexer::{Indexer, NAMESPACE_INDEX};
use crate::testing::selector::{FieldSelector, LabelSelector};
use crate::testing::{FakeApiServer, ResourceInfo};
use crate::workqueue::{ItemExponentialFailureRateLimiter, RateLimiter, WorkQueue};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a current-thread runtime")
    })
}

/// A few objects to match selectors against.
fn objects() -> [Value; 4] {
    [
        json!({"metadata": {"name": "a", "namespace": "default", "labels": {"app": "web", "gen": "3"}}}),
        json!({"metadata": {"name": "b", "namespace": "kube-system", "labels": {"app": "db", "tier": ""}}}),
        json!({"metadata": {"name": "c"}}),
        json!({"metadata": {"labels": {"app": 5}}}),
    ]
}

/// The fake API server's label selector parser: accepts or says why; an
/// accepted selector matches without panicking, and the empty selector
/// matches everything.
pub fn label_selector(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match LabelSelector::parse(&text) {
        Ok(selector) => {
            let matched = objects().iter().filter(|o| selector.matches(o)).count();
            if text.trim().is_empty() {
                assert_eq!(matched, objects().len(), "the empty selector matches everything");
            }
        }
        Err(e) => assert!(!e.is_empty(), "an error without a message for {text:?}"),
    }
}

/// The fake API server's field selector parser, like [`label_selector`];
/// `a=x` and `a!=x` split every object between them.
pub fn field_selector(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match FieldSelector::parse(&text) {
        Ok(selector) => {
            let _ = objects().iter().filter(|o| selector.matches(o)).count();
            if !text.contains(',')
                && let Some((field, value)) = text.split_once("==").or_else(|| text.split_once('='))
                && !field.ends_with('!')
                && !value.contains('=')
            {
                let negated = FieldSelector::parse(&format!("{field}!={value}")).expect("the negation parses");
                for o in objects() {
                    assert_ne!(selector.matches(&o), negated.matches(&o), "{text:?} and its negation on {o}");
                }
            }
        }
        Err(e) => assert!(!e.is_empty(), "an error without a message for {text:?}"),
    }
}

/// One request to the fake API server.
#[derive(Arbitrary, Debug)]
struct Request {
    method: u8,
    path: Vec<Segment>,
    query: Vec<(u8, String)>,
    content_type: u8,
    body: Body,
}

#[derive(Arbitrary, Debug)]
enum Segment {
    Known(u8),
    Free(String),
}

#[derive(Arbitrary, Debug)]
enum Body {
    Empty,
    Raw(Vec<u8>),
    Object { name: u8, namespace: u8, labels: Vec<(u8, u8)>, resource_version: Option<String>, spec: Option<i64> },
    Json(String),
}

const SEGMENTS: &[&str] = &[
    "apis",
    "api",
    "v1",
    "example.com",
    "widgets",
    "clusterwidgets",
    "namespaces",
    "default",
    "other",
    "a",
    "b",
    "status",
    "scale",
    "%2F",
    "configmaps",
    "..",
];
const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
const QUERY_KEYS: &[&str] = &[
    "watch",
    "labelSelector",
    "fieldSelector",
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "timeoutSeconds",
    "allowWatchBookmarks",
    "dryRun",
    "fieldManager",
    "force",
    "propagationPolicy",
    "sendInitialEvents",
];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "",
];
const NAMES: &[&str] = &["a", "b", "", "UPPER", "c"];

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

impl Request {
    fn to_http(&self) -> Option<(http::request::Parts, Bytes)> {
        let mut path = String::new();
        for s in &self.path {
            path.push('/');
            match s {
                Segment::Known(i) => path.push_str(pick(SEGMENTS, *i)),
                Segment::Free(f) => path.push_str(&encode(f)),
            }
        }
        if path.is_empty() {
            path.push('/');
        }
        let query: Vec<String> =
            self.query.iter().map(|(k, v)| format!("{}={}", pick(QUERY_KEYS, *k), encode(v))).collect();
        let uri = if query.is_empty() { path } else { format!("{path}?{}", query.join("&")) };
        let body = match &self.body {
            Body::Empty => Bytes::new(),
            Body::Raw(b) => Bytes::from(b.clone()),
            Body::Json(s) => Bytes::from(s.clone().into_bytes()),
            Body::Object { name, namespace, labels, resource_version, spec } => {
                let labels: serde_json::Map<String, Value> =
                    labels.iter().map(|(k, v)| (pick(NAMES, *k).to_owned(), json!(pick(NAMES, *v)))).collect();
                let mut obj = json!({
                    "apiVersion": "example.com/v1",
                    "kind": "Widget",
                    "metadata": {"name": pick(NAMES, *name), "namespace": pick(NAMES, *namespace), "labels": labels},
                    "spec": {"size": spec},
                });
                if let Some(rv) = resource_version {
                    obj["metadata"]["resourceVersion"] = json!(rv);
                }
                Bytes::from(serde_json::to_vec(&obj).ok()?)
            }
        };
        let request = http::Request::builder()
            .method(pick(METHODS, self.method))
            .uri(uri)
            .header(http::header::CONTENT_TYPE, pick(CONTENT_TYPES, self.content_type))
            .body(())
            .ok()?;
        Some((request.into_parts().0, body))
    }
}

/// Reads a body that is not a watch to its end.
async fn read_body(mut body: crate::testing::FakeBody) -> Vec<u8> {
    use http_body::Body as _;
    let mut out = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
        let Ok(frame) = frame;
        if let Ok(data) = frame.into_data() {
            out.extend_from_slice(&data);
        }
    }
    out
}

/// A sequence of arbitrary requests (method, path, query, content type,
/// body) to a fake API server serving a namespaced and a cluster-scoped
/// kind: every request gets an HTTP status, and afterwards the server still
/// answers a list with a JSON list whose items are unique by namespace/name.
pub fn fake_server(data: &[u8]) {
    let Ok(requests) = Vec::<Request>::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let server = FakeApiServer::new();
    let widget = |kind: &str, plural: &str, namespaced| ResourceInfo {
        group: "example.com".into(),
        version: "v1".into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced,
        has_status_subresource: true,
        schema: None,
        validation: None,
        aggregated: false,
        scale: None,
    };
    server.register_resource(widget("Widget", "widgets", true));
    server.register_resource(widget("ClusterWidget", "clusterwidgets", false));
    runtime().block_on(async {
        for r in requests.iter().take(32) {
            let Some((parts, body)) = r.to_http() else { continue };
            let response = crate::testing::server::handle(&server.shared, &parts, &body);
            let code = response.status().as_u16();
            assert!((200..600).contains(&code), "{r:?} got {code}");
        }
        let (parts, ()) =
            http::Request::builder().uri("/apis/example.com/v1/widgets").body(()).expect("a request").into_parts();
        let response = crate::testing::server::handle(&server.shared, &parts, &Bytes::new());
        assert_eq!(response.status().as_u16(), 200, "list after the sequence");
        let list: Value = serde_json::from_slice(&read_body(response.into_body()).await).expect("the list is JSON");
        let items = list["items"].as_array().expect("a list has items");
        let mut keys = HashSet::new();
        for item in items {
            let key = (item["metadata"]["namespace"].clone(), item["metadata"]["name"].clone());
            assert!(keys.insert(key.clone()), "{key:?} listed twice");
        }
    });
}

/// One operation on a work queue.
#[derive(Arbitrary, Debug)]
enum Op {
    Add(u8),
    Get,
    Done(u8),
    ShutDown,
    Fail(u8),
    Forget(u8),
}

/// client-go's work queue as a plain model: a FIFO of distinct items, the
/// items handed out, and those added again while handed out.
#[derive(Default)]
struct Model {
    queue: VecDeque<u8>,
    processing: HashSet<u8>,
    dirty: HashSet<u8>,
    shutting_down: bool,
    failures: HashMap<u8, u32>,
}

impl Model {
    fn add(&mut self, item: u8) {
        if self.shutting_down || !self.dirty.insert(item) {
            return;
        }
        if !self.processing.contains(&item) {
            self.queue.push_back(item);
        }
    }

    fn get(&mut self) -> Option<u8> {
        let item = self.queue.pop_front()?;
        self.processing.insert(item);
        self.dirty.remove(&item);
        Some(item)
    }

    fn done(&mut self, item: u8) {
        if self.processing.remove(&item) && self.dirty.contains(&item) {
            self.queue.push_back(item);
        }
    }
}

/// The work queue and the exponential rate limiter against [`Model`]: the
/// same items in the same order, the same lengths, the same requeue counts
/// and backoffs.
pub fn workqueue(data: &[u8]) {
    let Ok(ops) = Vec::<Op>::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let queue = WorkQueue::<u8>::new();
    let limiter = ItemExponentialFailureRateLimiter::<u8>::new(Duration::from_millis(5), Duration::from_secs(1000));
    let mut model = Model::default();
    runtime().block_on(async {
        for op in ops {
            match op {
                Op::Add(i) => {
                    queue.add(i % 8);
                    model.add(i % 8);
                }
                Op::Get => {
                    // `get` waits while the queue is empty and open: ask only
                    // when the model says it returns at once.
                    if model.queue.is_empty() && !model.shutting_down {
                        continue;
                    }
                    assert_eq!(queue.get().await, model.get(), "get");
                }
                Op::Done(i) => {
                    queue.done(&(i % 8));
                    model.done(i % 8);
                }
                Op::ShutDown => {
                    queue.shut_down();
                    model.shutting_down = true;
                }
                Op::Fail(i) => {
                    let n = model.failures.entry(i % 8).or_default();
                    let expected = 1u32
                        .checked_shl(*n)
                        .and_then(|f| Duration::from_millis(5).checked_mul(f))
                        .map_or(Duration::from_secs(1000), |d| d.min(Duration::from_secs(1000)));
                    *n = n.saturating_add(1);
                    assert_eq!(limiter.when(&(i % 8)), expected, "backoff");
                }
                Op::Forget(i) => {
                    limiter.forget(&(i % 8));
                    model.failures.remove(&(i % 8));
                }
            }
            assert_eq!(queue.len(), model.queue.len(), "len");
            assert_eq!(queue.is_shutting_down(), model.shutting_down);
            for i in 0..8 {
                assert_eq!(limiter.num_requeues(&i), model.failures.get(&i).copied().unwrap_or(0), "requeues of {i}");
            }
        }
    });
}

/// One object of a list page or a watch event, as the informer decodes it
/// (as a ConfigMap) with managedFields decoded, kept as text and dropped:
/// never a panic; where `metadata.managedFields` is found, it is one JSON
/// value and the text without it is still JSON; an object that decodes with
/// them decoded decodes with them kept or dropped too, to the same object,
/// and the kept text reads back as the managedFields it had.
pub fn informer_item(data: &[u8]) {
    if let Ok(json) = std::str::from_utf8(data) {
        crate::informer::lenient::check_item(json);
    }
}

/// One operation on an indexer.
#[derive(Arbitrary, Debug)]
enum IndexerOp {
    Add { key: u8, version: u8 },
    Delete(u8),
    DeleteByKey(u8),
    Replace(Vec<(u8, u8)>),
}

/// Namespaces and names of the keys an [`IndexerOp`] names: namespaced and
/// cluster-scoped, short and too long for the indexer to keep beside the
/// object, and pairs whose texts run together alike (`d` + `efault0`,
/// `default` + `0`...).
const INDEXER_NAMESPACES: [&str; 4] = ["", "default", "d", "namespace-namespace-namespace-"];
const INDEXER_NAMES: [&str; 4] = ["efault", "", "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn-", "x"];

fn indexer_key(key: u8) -> (String, String) {
    let ns = INDEXER_NAMESPACES[usize::from(key & 3)];
    let name = format!("{}{}", INDEXER_NAMES[usize::from((key >> 2) & 3)], (key >> 4) % 4);
    (ns.to_owned(), name)
}

fn key_text((ns, name): &(String, String)) -> String {
    if ns.is_empty() { name.clone() } else { format!("{ns}/{name}") }
}

fn config_map(key: u8, version: u8) -> Arc<ConfigMap> {
    let (ns, name) = indexer_key(key);
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: (!ns.is_empty()).then_some(ns),
            name: Some(name),
            resource_version: Some(version.to_string()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

fn version_of(obj: &ConfigMap) -> Option<u8> {
    obj.metadata.resource_version.as_deref().and_then(|v| v.parse().ok())
}

/// The indexer against a map from key to version: every operation returns
/// what the map says was there, and afterwards every key is found with its
/// version, no other key is, the keys listed are the map's, and the
/// namespace index files each object under its namespace; handles from
/// earlier lookups still read the version they were given.
pub fn indexer(data: &[u8]) {
    let Ok(ops) = Vec::<IndexerOp>::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let indexer = Indexer::<ConfigMap>::new();
    let mut model: BTreeMap<(String, String), u8> = BTreeMap::new();
    let mut held: std::collections::VecDeque<(u8, crate::indexer::Cached<ConfigMap>)> = Default::default();
    for op in ops {
        match op {
            IndexerOp::Add { key, version } => {
                let old = indexer.add(config_map(key, version));
                assert_eq!(old.as_deref().and_then(version_of), model.insert(indexer_key(key), version), "add");
            }
            IndexerOp::Delete(key) => {
                let old = indexer.delete(&config_map(key, 0));
                assert_eq!(old.as_deref().and_then(version_of), model.remove(&indexer_key(key)), "delete");
            }
            IndexerOp::DeleteByKey(key) => {
                let old = indexer.delete_by_key(&key_text(&indexer_key(key)));
                assert_eq!(old.as_deref().and_then(version_of), model.remove(&indexer_key(key)), "delete_by_key");
            }
            IndexerOp::Replace(items) => {
                indexer.replace(items.iter().map(|&(key, version)| config_map(key, version)).collect());
                model = items.iter().map(|&(key, version)| (indexer_key(key), version)).collect();
            }
        }
        assert_eq!(indexer.len(), model.len(), "len");
        for (version, obj) in &held {
            assert_eq!(version_of(obj), Some(*version), "a handle from an earlier get_by_key");
        }
        for key in 0..=u8::MAX {
            let at = key;
            let key = indexer_key(key);
            let found = indexer.get_by_key(&key_text(&key));
            assert_eq!(found.as_deref().and_then(version_of), model.get(&key).copied(), "get_by_key {key:?}");
            // Some handles are held across the next operations, more than
            // a thread's hazard slots.
            if let Some(obj) = found.filter(|_| at % 16 == 0) {
                held.push_back((version_of(&obj).unwrap_or_default(), obj));
                if held.len() > 20 {
                    held.pop_front();
                }
            }
        }
        let mut listed = indexer.list_keys();
        listed.sort();
        let mut expected: Vec<String> = model.keys().map(key_text).collect();
        expected.sort();
        assert_eq!(listed, expected, "list_keys");
        for ns in INDEXER_NAMESPACES {
            let filed: BTreeSet<String> = indexer
                .by_index(NAMESPACE_INDEX, ns)
                .expect("the namespace index exists")
                .iter()
                .map(|obj| obj.metadata.name.clone().unwrap_or_default())
                .collect();
            let expected: BTreeSet<String> =
                model.keys().filter(|(n, _)| n == ns).map(|(_, name)| name.clone()).collect();
            assert_eq!(filed, expected, "namespace {ns:?}");
        }
    }
}
