//! The object tracker behind the fake API server: objects as JSON per
//! resource, one global resourceVersion, the retained event history, the
//! open watches, and the verbs on top of them (metadata rules in `meta`).

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::ResourceInfo;
use super::meta::{
    finalizers, meta, meta_mut, meta_str, named_as_url, namespace_of, now, prepare_status_update, prepare_update,
    type_meta,
};
use super::objectmeta;
use super::patch::{PatchKind, apply_patch, parse_apply_body};
use super::prune;
use super::scale;
use super::selector::{FieldSelector, LabelSelector};
use super::ssa;
use super::status::ApiError;

/// Identifies a resource: `(group, version, plural)`.
pub(crate) type ResourceKey = (String, String, String);

/// Identifies an object within a resource: `(namespace or "", name)`.
type ObjectKey = (String, String);

/// The order etcd and the watch cache keep objects in, that of their keys
/// `<namespace>/<name>` as bytes: `test-2/x` comes before `test/x`, where
/// the tuple's order puts `test` first.
fn storage_order(a: &ObjectKey, b: &ObjectKey) -> std::cmp::Ordering {
    let key = |k: &ObjectKey| k.0.bytes().chain(std::iter::once(b'/')).chain(k.1.bytes()).collect::<Vec<u8>>();
    if a.0 == b.0 { a.1.cmp(&b.1) } else { key(a).cmp(&key(b)) }
}

/// Query parameters of a request, and its User-Agent (which names the
/// field manager when `fieldManager` does not).
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    pub(crate) params: BTreeMap<String, String>,
    pub(crate) user_agent: Option<String>,
    /// Fields the body gives twice (create, update, merge patches), by path.
    pub(crate) duplicates: Vec<String>,
}

/// `fieldValidation`: what a write does with unknown and duplicate fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

impl Query {
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// Checks `fieldManager` (and `force`) for a write of `kind`
    /// (`CreateOptions`, ...) and returns the manager of a non-apply write.
    fn manager(&self, kind: &str) -> Result<String, ApiError> {
        ssa::validate_options(
            kind,
            self.get("fieldManager"),
            None,
            false,
            self.get("dryRun"),
            self.get("fieldValidation"),
        )?;
        Ok(ssa::manager_of(self.get("fieldManager"), self.user_agent.as_deref()))
    }

    /// A boolean parameter as the API server reads one: given, and not
    /// `0` or `false` in any case (so `force=` and `force=True` are true).
    pub(crate) fn flag(&self, key: &str) -> bool {
        self.params.get(key).is_some_and(|v| !v.eq_ignore_ascii_case("false") && v != "0")
    }

    /// The manager of a JSON, merge or strategic merge patch, once its
    /// options are checked as the API server checks `PatchOptions`.
    fn patch_manager(&self) -> Result<String, ApiError> {
        ssa::validate_options(
            "PatchOptions",
            self.get("fieldManager"),
            Some(false),
            self.params.contains_key("force"),
            self.get("dryRun"),
            self.get("fieldValidation"),
        )?;
        Ok(ssa::manager_of(self.get("fieldManager"), self.user_agent.as_deref()))
    }

    fn dry_run(&self) -> bool {
        self.get("dryRun").is_some()
    }

    /// `fieldValidation` (already checked to be one of the three); the API
    /// server's default is `Warn`.
    fn field_validation(&self) -> FieldValidation {
        match self.get("fieldValidation") {
            Some("Ignore") => FieldValidation::Ignore,
            Some("Strict") => FieldValidation::Strict,
            _ => FieldValidation::Warn,
        }
    }

    /// The duplicate fields of the body and the unknown ones `object` had
    /// (pruned from it), as the API server words them.
    fn decoding_problems(&self, info: &ResourceInfo, object: &mut Value) -> Vec<String> {
        let unknown = match prune::schema_of(info) {
            Some(schema) => prune::prune(object, &schema),
            None => Vec::new(),
        };
        let duplicates = self.duplicates.iter().map(|path| format!("duplicate field {}", ssa::go_quote(path)));
        duplicates.chain(unknown.iter().map(|path| format!("unknown field {}", ssa::go_quote(path)))).collect()
    }
}

/// The resource, namespace and name a request addresses.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) info: ResourceInfo,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
}

impl Target {
    fn key(&self) -> ResourceKey {
        self.info.key()
    }

    pub(crate) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    fn object_key(&self) -> ObjectKey {
        (self.namespace.clone().unwrap_or_default(), self.name().to_owned())
    }
}

/// The type of a watch event about an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One write, as kept in the history and sent to watches.
#[derive(Clone, Debug)]
struct Event {
    resource_version: u64,
    key: ResourceKey,
    kind: EventType,
    object: Value,
    previous: Option<Value>,
}

impl Event {
    /// The object a watch gets for this event seen as `kind`: for an object
    /// modified out of the selection (seen as DELETED), the API server sends
    /// the last state that matched, at the new resourceVersion.
    fn payload(&self, kind: EventType) -> Value {
        match (&self.kind, kind, &self.previous) {
            (EventType::Modified, EventType::Deleted, Some(previous)) => {
                let mut obj = previous.clone();
                if let (Some(meta), Some(rv)) =
                    (obj.get_mut("metadata"), self.object["metadata"].get("resourceVersion"))
                {
                    meta["resourceVersion"] = rv.clone();
                }
                obj
            }
            _ => self.object.clone(),
        }
    }
}

/// Which events of a resource a watch wants.
#[derive(Clone, Debug, Default)]
struct WatchFilter {
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl WatchFilter {
    fn matches(&self, obj: &Value) -> bool {
        let in_namespace = match &self.namespace {
            Some(ns) => meta_str(obj, "namespace") == Some(ns.as_str()),
            None => true,
        };
        in_namespace && self.labels.matches(obj) && self.fields.matches(obj)
    }

    // What the watcher sees: like the API server, an object modified into
    // the selection is ADDED to it, one modified out of it is DELETED.
    fn view(&self, event: &Event) -> Option<EventType> {
        let now = self.matches(&event.object);
        match event.kind {
            EventType::Modified => {
                let before = event.previous.as_ref().is_some_and(|p| self.matches(p));
                match (before, now) {
                    (true, true) => Some(EventType::Modified),
                    (false, true) => Some(EventType::Added),
                    (true, false) => Some(EventType::Deleted),
                    (false, false) => None,
                }
            }
            kind => now.then_some(kind),
        }
    }
}

/// An open watch: where its events go and which it wants.
struct Watcher {
    id: u64,
    /// The version the watch started from: events at or below it are not
    /// sent (the API server's `cacheWatcher` sends only newer ones, also
    /// when a client asks for a version the server has not reached).
    after: u64,
    key: ResourceKey,
    filter: WatchFilter,
    tx: mpsc::UnboundedSender<Bytes>,
}

/// How a watch request starts.
pub(crate) enum WatchStart {
    /// Stream `initial`, then everything arriving on `rx`.
    Open { id: u64, initial: Vec<Bytes>, rx: mpsc::UnboundedReceiver<Bytes> },
    /// The requested version is older than the retained history: a single
    /// ERROR event with a 410 Status, then the end of the stream.
    Expired(Bytes),
}

/// All state of one fake API server.
pub(crate) struct Store {
    resources: BTreeMap<ResourceKey, ResourceInfo>,
    objects: BTreeMap<ResourceKey, BTreeMap<ObjectKey, Value>>,
    resource_version: u64,
    history: VecDeque<Event>,
    history_limit: usize,
    /// Events up to and including this version are no longer retained.
    compacted: u64,
    watchers: Vec<Watcher>,
    next_watcher_id: u64,
    next_uid: u64,
    rng: u64,
    /// Warnings of the request being answered (`Warning` headers).
    warnings: Vec<String>,
}

/// How many events the history keeps by default.
pub(crate) const DEFAULT_HISTORY_LIMIT: usize = 1000;

/// A watch event as the API server writes it: `type` first, then `object`
/// (clients may stream the object only once they know the type).
#[derive(serde::Serialize)]
struct WatchLine<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    object: &'a Value,
}

/// One line of a watch stream.
pub(crate) fn watch_line(kind: &str, object: &Value) -> Bytes {
    let mut bytes = serde_json::to_vec(&WatchLine { kind, object }).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    Bytes::from(bytes)
}

impl Store {
    pub(crate) fn new(history_limit: usize) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        Self {
            resources: BTreeMap::new(),
            objects: BTreeMap::new(),
            resource_version: 0,
            history: VecDeque::new(),
            history_limit,
            compacted: 0,
            watchers: Vec::new(),
            next_watcher_id: 0,
            next_uid: 0,
            rng: seed | 1,
            warnings: Vec::new(),
        }
    }

    pub(crate) fn register(&mut self, info: ResourceInfo) {
        self.objects.entry(info.key()).or_default();
        self.resources.insert(info.key(), info);
    }

    pub(crate) fn resource(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceInfo> {
        self.resources.get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
    }

    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    pub(crate) fn set_history_limit(&mut self, limit: usize) {
        self.history_limit = limit;
        self.trim_history();
    }

    /// Forgets the event history: watches from any older version get 410.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.resource_version;
    }

    /// Ends every open watch stream.
    pub(crate) fn close_watches(&mut self) {
        self.watchers.clear();
    }

    /// Stops feeding the watch `id` (dropping its sender ends its stream).
    pub(crate) fn unregister_watch(&mut self, id: u64) {
        self.watchers.retain(|w| w.id != id);
    }

    /// The stored objects of a resource, in key order.
    pub(crate) fn objects(&self, key: &ResourceKey) -> Vec<Value> {
        self.objects.get(key).map(|m| m.values().cloned().collect()).unwrap_or_default()
    }

    pub(crate) fn object(&self, key: &ResourceKey, namespace: Option<&str>, name: &str) -> Option<Value> {
        let okey = (namespace.unwrap_or_default().to_owned(), name.to_owned());
        self.objects.get(key).and_then(|m| m.get(&okey)).cloned()
    }

    fn random_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| {
                // xorshift64: plenty for unique test names.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                ALPHABET[(self.rng % ALPHABET.len() as u64) as usize] as char
            })
            .collect()
    }

    fn new_uid(&mut self) -> String {
        self.next_uid += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.next_uid)
    }

    fn trim_history(&mut self) {
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.compacted = old.resource_version;
            }
        }
    }

    // Appends an event to the history and hands it to the open watches.
    fn record(&mut self, event: Event) {
        for watcher in &self.watchers {
            if watcher.key == event.key
                && event.resource_version > watcher.after
                && let Some(kind) = watcher.filter.view(&event)
            {
                // A closed receiver is cleaned up below.
                let _ = watcher.tx.send(watch_line(kind.as_str(), &event.payload(kind)));
            }
        }
        self.watchers.retain(|w| !w.tx.is_closed());
        self.history.push_back(event);
        self.trim_history();
    }

    fn put(&mut self, info: &ResourceInfo, okey: ObjectKey, mut obj: Value, previous: Option<Value>) -> Value {
        ssa::normalize(info, &mut obj);
        self.resource_version += 1;
        if let Ok(m) = meta_mut(&mut obj) {
            m.insert("resourceVersion".into(), self.resource_version.to_string().into());
        }
        let kind = if previous.is_some() { EventType::Modified } else { EventType::Added };
        self.objects.entry(info.key()).or_default().insert(okey, obj.clone());
        self.record(Event {
            resource_version: self.resource_version,
            key: info.key(),
            kind,
            object: obj.clone(),
            previous,
        });
        obj
    }

    fn remove(&mut self, info: &ResourceInfo, okey: &ObjectKey, mut obj: Value) -> Value {
        self.resource_version += 1;
        if let Ok(m) = meta_mut(&mut obj) {
            m.insert("resourceVersion".into(), self.resource_version.to_string().into());
        }
        if let Some(objects) = self.objects.get_mut(&info.key()) {
            objects.remove(okey);
        }
        self.record(Event {
            resource_version: self.resource_version,
            key: info.key(),
            kind: EventType::Deleted,
            object: obj.clone(),
            previous: None,
        });
        obj
    }

    fn existing(&self, t: &Target) -> Result<Value, ApiError> {
        self.objects
            .get(&t.key())
            .and_then(|m| m.get(&t.object_key()))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&t.info, t.name()))
    }

    /// Adds an object as is (client-go's `tracker.Add`), filling in only
    /// what is missing: uid, creationTimestamp, generation.
    pub(crate) fn seed(&mut self, info: &ResourceInfo, mut obj: Value) -> Result<Value, ApiError> {
        type_meta(info, &mut obj)?;
        let namespace = meta_str(&obj, "namespace").map(str::to_owned);
        let t = Target {
            info: info.clone(),
            namespace: namespace.clone(),
            name: meta_str(&obj, "name").map(str::to_owned),
        };
        if t.name.is_none() {
            return Err(ApiError::invalid(
                info,
                "",
                &[("FieldValueRequired", "metadata.name", "Required value: name is required")],
            ));
        }
        if info.namespaced && namespace.is_none() {
            return Err(ApiError::invalid(
                info,
                t.name(),
                &[("FieldValueRequired", "metadata.namespace", "Required value")],
            ));
        }
        namespace_of(&t, &mut obj)?;
        if self.existing(&t).is_ok() {
            return Err(ApiError::already_exists(info, t.name()));
        }
        let uid = self.new_uid();
        let m = meta_mut(&mut obj)?;
        m.entry("uid").or_insert(uid.into());
        m.entry("creationTimestamp").or_insert_with(now);
        m.entry("generation").or_insert(1.into());
        Ok(self.put(info, t.object_key(), obj, None))
    }

    pub(crate) fn get(&self, t: &Target) -> Result<Value, ApiError> {
        self.existing(t)
    }

    /// The warnings of the last request, taken.
    pub(crate) fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The API server's decoding of a create's or update's body: unknown
    /// fields are pruned and, with duplicate ones, refused with a 400
    /// (`Strict`) or answered with warnings (`Warn`).
    fn decode(&mut self, info: &ResourceInfo, body: &mut Value, q: &Query) -> Result<(), ApiError> {
        let problems = q.decoding_problems(info, body);
        self.report(problems, q, |list| {
            ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {list}",
                kind = info.kind,
                version = info.version,
            ))
        })
    }

    /// [`decode`](Self::decode) of a patched object: a strict error is a 422
    /// quoting the patched object, as the API server's.
    fn decode_patched(&mut self, info: &ResourceInfo, patched: &mut Value, q: &Query) -> Result<(), ApiError> {
        let text = patched.to_string();
        let problems = q.decoding_problems(info, patched);
        self.report(problems, q, |list| {
            ApiError::invalid_patch(format!("Invalid value: {}: strict decoding error: {list}", ssa::go_quote(&text)))
        })
    }

    /// Decoding problems as `fieldValidation` says: the error `strict`
    /// makes of their list, warnings, or nothing.
    fn report(
        &mut self,
        problems: Vec<String>,
        q: &Query,
        strict: impl FnOnce(String) -> ApiError,
    ) -> Result<(), ApiError> {
        match q.field_validation() {
            FieldValidation::Strict if !problems.is_empty() => Err(strict(problems.join(", "))),
            FieldValidation::Warn => {
                self.warnings.extend(problems);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn create(&mut self, t: &Target, mut body: Value, q: &Query) -> Result<Value, ApiError> {
        let manager = q.manager("CreateOptions")?;
        self.decode(&t.info, &mut body, q)?;
        // etcd's storage refuses it and the API server passes that on as an
        // unclassified 500 (a copied object still carrying its version).
        if meta_str(&body, "resourceVersion").is_some_and(|rv| !rv.is_empty()) {
            return Err(ApiError::server_error("resourceVersion should not be set on objects to be created"));
        }
        self.insert(t, body, q, Some(&manager))
    }

    // Creates an object; `manager` records the create in managedFields,
    // `None` keeps the body's (a create by server-side apply).
    fn insert(&mut self, t: &Target, mut body: Value, q: &Query, manager: Option<&str>) -> Result<Value, ApiError> {
        let info = &t.info;
        type_meta(info, &mut body)?;
        let mut target = t.clone();
        namespace_of(&target, &mut body)?;
        let name = match meta_str(&body, "name") {
            Some(name) => name.to_owned(),
            None => match meta_str(&body, "generateName").map(str::to_owned) {
                Some(prefix) => {
                    // Cut so that the name with its suffix is a DNS label's
                    // length, as the API server's name generator does.
                    let prefix = match prefix.char_indices().nth(objectmeta::MAX_GENERATED_PREFIX) {
                        Some((at, _)) => &prefix[..at],
                        None => &prefix,
                    };
                    let mut name = format!("{prefix}{}", self.random_suffix());
                    for _ in 0..8 {
                        target.name = Some(name.clone());
                        if self.existing(&target).is_err() {
                            break;
                        }
                        name = format!("{prefix}{}", self.random_suffix());
                    }
                    name
                }
                None => {
                    return Err(ApiError::invalid(
                        info,
                        "",
                        &[("FieldValueRequired", "metadata.name", "Required value: name or generateName is required")],
                    ));
                }
            },
        };
        target.name = Some(name.clone());
        let uid = self.new_uid();
        let m = meta_mut(&mut body)?;
        m.insert("name".into(), name.clone().into());
        m.insert("uid".into(), uid.into());
        m.insert("creationTimestamp".into(), now());
        m.insert("generation".into(), 1.into());
        for server_owned in ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"] {
            m.remove(server_owned);
        }
        if info.has_status_subresource
            && let Some(map) = body.as_object_mut()
        {
            // With a status subresource, create ignores status like the API
            // server's PrepareForCreate.
            map.remove("status");
        }
        admit(info, &name, &mut body, None)?;
        // After validation, as the API server's storage refuses it: an
        // invalid object under a taken name is a 422, not a 409.
        if self.existing(&target).is_ok() {
            return Err(ApiError::already_exists(info, &name));
        }
        if let Some(manager) = manager {
            ssa::track_update(info, None, &mut body, manager, None);
        }
        ssa::normalize(info, &mut body);
        if q.dry_run() {
            return Ok(body);
        }
        Ok(self.put(info, target.object_key(), body, None))
    }

    // Stores an updated object: no-op updates change nothing (no new
    // resourceVersion, no event), and an object being deleted whose last
    // finalizer is gone is deleted.
    fn commit_update(&mut self, t: &Target, old: Value, mut new: Value, q: &Query) -> Result<Value, ApiError> {
        admit(&t.info, t.name(), &mut new, Some(&old))?;
        Ok(self.commit_checked(t, old, new, q))
    }

    fn commit_checked(&mut self, t: &Target, old: Value, mut new: Value, q: &Query) -> Value {
        ssa::normalize(&t.info, &mut new);
        if new == old || q.dry_run() {
            return new;
        }
        let deleting = meta(&new).is_some_and(|m| m.contains_key("deletionTimestamp"));
        if deleting && finalizers(&new).is_empty() {
            // As the API server's `deleteWithoutFinalizers`: the stored
            // object is deleted (watchers see it as it was stored, its
            // finalizers still there, at the delete's resourceVersion; the
            // rest of the update is not written), and the request's object
            // is the answer.
            self.remove(&t.info, &t.object_key(), old);
            return new;
        }
        self.put(&t.info, t.object_key(), new, Some(old))
    }

    /// An update; `true` with the object when it created it (a kind that
    /// allows create-on-update, answered 201).
    pub(crate) fn update(&mut self, t: &Target, mut body: Value, q: &Query) -> Result<(Value, bool), ApiError> {
        let manager = q.manager("UpdateOptions")?;
        self.decode(&t.info, &mut body, q)?;
        named_as_url(t, &body)?;
        let old = match self.existing(t) {
            Ok(old) => old,
            Err(_) if creates_on_update(&t.info) => {
                // A uid in the body is a precondition the missing object
                // fails, as in the API server's GuaranteedUpdate.
                uid_precondition(t, &json!({}), &body)?;
                // As the API server's create-via-update: the system fields
                // of the body are wiped, then it is created.
                if let Ok(m) = meta_mut(&mut body) {
                    for system in ["resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"] {
                        m.remove(system);
                    }
                }
                return self.insert(t, body, q, Some(&manager)).map(|created| (created, true));
            }
            Err(err) => return Err(err),
        };
        versioned_update(t, &body)?;
        uid_precondition(t, &old, &body)?;
        let mut new = prepare_update(t, &old, body)?;
        ssa::track_update(&t.info, Some(&old), &mut new, &manager, None);
        self.commit_update(t, old, new, q).map(|updated| (updated, false))
    }

    pub(crate) fn update_status(&mut self, t: &Target, mut body: Value, q: &Query) -> Result<Value, ApiError> {
        let manager = q.manager("UpdateOptions")?;
        self.decode(&t.info, &mut body, q)?;
        named_as_url(t, &body)?;
        let old = self.existing(t)?;
        versioned_update(t, &body)?;
        uid_precondition(t, &old, &body)?;
        let mut new = prepare_status_update(t, &old, &body)?;
        ssa::track_update(&t.info, Some(&old), &mut new, &manager, Some("status"));
        self.commit_update(t, old, new, q)
    }

    pub(crate) fn patch(
        &mut self,
        t: &Target,
        kind: PatchKind,
        patch: &[u8],
        status: bool,
        q: &Query,
    ) -> Result<(Value, bool), ApiError> {
        if kind == PatchKind::Apply {
            return self.apply(t, patch, status, q);
        }
        let manager = q.patch_manager()?;
        let old = self.existing(t)?;
        let mut patched = apply_patch(kind, &t.info.api_version(), &t.info.kind, &old, patch)?;
        self.decode_patched(&t.info, &mut patched, q)?;
        if meta_str(&patched, "name").is_none_or(str::is_empty) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({} based on URL) was undeterminable: name must be provided",
                t.name()
            )));
        }
        versioned_update(t, &patched)?;
        if let Some(uid) = objectmeta::other_uid(&old, &patched) {
            let causes = objectmeta::update_checks(&t.info, vec![objectmeta::uid_changed(uid)]);
            return Err(ApiError::invalid(&t.info, t.name(), &causes.iter().map(cause).collect::<Vec<_>>()));
        }
        let mut new =
            if status { prepare_status_update(t, &old, &patched)? } else { prepare_update(t, &old, patched)? };
        ssa::track_update(&t.info, Some(&old), &mut new, &manager, status.then_some("status"));
        Ok((self.commit_update(t, old, new, q)?, false))
    }

    /// The object's `Scale` (a GET of `/scale`).
    pub(crate) fn get_scale(&self, t: &Target) -> Result<Value, ApiError> {
        scale::scale_of(&t.info, &self.existing(t)?, scale::Missing::Fail)
    }

    /// A PUT of a `Scale` to `/scale`.
    pub(crate) fn update_scale(&mut self, t: &Target, body: Value, q: &Query) -> Result<Value, ApiError> {
        let manager = q.manager("UpdateOptions")?;
        named_as_url(t, &body)?;
        let replicas = scale::replicas_of(&body)?;
        let old = self.existing(t)?;
        self.write_scale(t, old, &body, replicas, &manager, q)
    }

    /// A JSON or merge patch of `/scale`: applied to the object's `Scale`,
    /// which is then written as [`update_scale`](Self::update_scale) writes
    /// one. Server-side apply to `/scale` is not served here.
    pub(crate) fn patch_scale(
        &mut self,
        t: &Target,
        kind: PatchKind,
        patch: &[u8],
        q: &Query,
    ) -> Result<Value, ApiError> {
        if kind == PatchKind::Apply {
            return Err(ApiError::patch_type_not_served(
                "the fake API server does not serve server-side apply to /scale: send a JSON or merge patch, or answer it with a reactor",
            ));
        }
        let manager = q.patch_manager()?;
        let old = self.existing(t)?;
        // Missing replicas stand in as a value no `Scale` can carry: a
        // patch must set them.
        let scale = scale::scale_of(&t.info, &old, scale::Missing::Sentinel)?;
        let patched = apply_patch(kind, "autoscaling/v1", "Scale", &scale, patch)?;
        let replicas = scale::replicas_of(&patched)?;
        if replicas == scale::SENTINEL {
            return Err(scale::replicas_empty(&t.info));
        }
        self.write_scale(t, old, &patched, replicas, &manager, q)
    }

    /// Sets the replicas `scale` asks for in `old` and writes it as an
    /// update (a `resourceVersion` in `scale` is its precondition), as the
    /// API server's scale storage does; answers the new `Scale`.
    fn write_scale(
        &mut self,
        t: &Target,
        old: Value,
        scale: &Value,
        replicas: i64,
        manager: &str,
        q: &Query,
    ) -> Result<Value, ApiError> {
        // The `Scale`'s uid, like its resourceVersion, is a precondition.
        uid_precondition(t, &old, scale)?;
        let before = scale::spec_replicas(&t.info, &old)?.unwrap_or_default();
        let mut body = scale::with_replicas(&t.info, old.clone(), replicas)?;
        if let Some(version) = meta_str(scale, "resourceVersion").filter(|v| !v.is_empty()) {
            meta_mut(&mut body)?.insert("resourceVersion".into(), version.into());
        }
        let mut new = prepare_update(t, &old, body)?;
        let views = (scale::view(&t.info, before)?, scale::view(&t.info, replicas)?);
        ssa::track_scale_update(&t.info, &old, &mut new, manager, (&views.0, &views.1));
        let updated = self.commit_update(t, old, new, q)?;
        scale::scale_of(&t.info, &updated, scale::Missing::Fail)
    }

    /// Server-side apply: merges the body into the object (creating it if
    /// missing, except through `/status`) with field ownership (see `ssa`).
    /// Returns the object and whether it was created.
    fn apply(&mut self, t: &Target, patch: &[u8], status: bool, q: &Query) -> Result<(Value, bool), ApiError> {
        let manager = q.get("fieldManager");
        ssa::validate_options("PatchOptions", manager, Some(true), false, q.get("dryRun"), q.get("fieldValidation"))?;
        let manager = manager.unwrap_or_default();
        let config = parse_apply_body(patch)?;
        let old = match self.existing(t) {
            Ok(old) => Some(old),
            Err(err) if status => return Err(err),
            Err(_) => None,
        };
        let subresource = status.then_some("status");
        let applied = ssa::apply(&t.info, old.as_ref(), &config, manager, q.flag("force"), subresource)?;
        let Some(old) = old else {
            if let Some(uid) = meta_str(&applied, "uid").filter(|u| !u.is_empty()) {
                return Err(ApiError::conflict(
                    &t.info,
                    t.name(),
                    &format!("uid mismatch: the provided object specified uid {uid}, and no existing object was found"),
                ));
            }
            match meta_str(&applied, "name") {
                None => {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({} based on URL) was undeterminable: name must be provided",
                        t.name()
                    )));
                }
                Some(name) if name != t.name() => {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({name}) does not match the name on the URL ({})",
                        t.name()
                    )));
                }
                Some(_) => {}
            }
            return Ok((self.insert(t, applied, q, None)?, true));
        };
        if let Some(uid) = objectmeta::other_uid(&old, &applied) {
            return Err(ApiError::invalid(&t.info, t.name(), &[cause(&objectmeta::uid_changed(uid))]));
        }
        let managed = meta(&applied).and_then(|m| m.get("managedFields")).cloned();
        let mut new =
            if status { prepare_status_update(t, &old, &applied)? } else { prepare_update(t, &old, applied)? };
        let m = meta_mut(&mut new)?;
        match managed {
            Some(fields) => m.insert("managedFields".into(), fields),
            None => m.remove("managedFields"),
        };
        Ok((self.commit_update(t, old, new, q)?, false))
    }

    pub(crate) fn delete(&mut self, t: &Target, opts: &Value, q: &Query) -> Result<Value, ApiError> {
        ssa::validate_delete_options(q.get("dryRun"), opts)?;
        let old = self.existing(t)?;
        let dry_run = q.dry_run() || opts.get("dryRun").is_some_and(|d| !d.is_null());
        if let Some(pre) = opts.get("preconditions") {
            for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
                if let Some(wanted) = pre.get(field).and_then(Value::as_str) {
                    let actual = meta_str(&old, field).unwrap_or_default();
                    if wanted != actual {
                        return Err(ApiError::conflict(
                            &t.info,
                            t.name(),
                            &format!(
                                "Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {actual}"
                            ),
                        ));
                    }
                }
            }
        }
        if finalizers(&old).is_empty() {
            if dry_run {
                return Ok(old);
            }
            return Ok(self.remove(&t.info, &t.object_key(), old));
        }
        // Finalizers hold the object: mark it for deletion and keep it until
        // whoever owns them removes them.
        if meta(&old).is_some_and(|m| m.contains_key("deletionTimestamp")) {
            return Ok(old);
        }
        let mut new = old.clone();
        let m = meta_mut(&mut new)?;
        m.insert("deletionTimestamp".into(), now());
        m.insert("deletionGracePeriodSeconds".into(), 0.into());
        // As the API server's markAsDeleting: a controller that filters on
        // generation changes sees the deletion.
        if let Some(generation) = m.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
            m.insert("generation".into(), (generation + 1).into());
        }
        if dry_run {
            return Ok(new);
        }
        Ok(self.put(&t.info, t.object_key(), new, Some(old)))
    }

    fn filter(t: &Target, q: &Query) -> Result<WatchFilter, ApiError> {
        Ok(WatchFilter {
            namespace: t.namespace.clone(),
            labels: LabelSelector::parse(q.get("labelSelector").unwrap_or_default())
                .map_err(|e| ApiError::bad_request(format!("unable to parse labelSelector: {e}")))?,
            fields: FieldSelector::parse(q.get("fieldSelector").unwrap_or_default())
                .map_err(|e| ApiError::bad_request(format!("unable to parse fieldSelector: {e}")))?,
        })
    }

    fn list_body(&self, info: &ResourceInfo, resource_version: u64, items: Vec<Value>) -> Value {
        json!({
            "apiVersion": info.api_version(),
            "kind": format!("{}List", info.kind),
            "metadata": {"resourceVersion": resource_version.to_string()},
            "items": items,
        })
    }

    pub(crate) fn delete_collection(&mut self, t: &Target, opts: &Value, q: &Query) -> Result<Value, ApiError> {
        ssa::validate_delete_options(q.get("dryRun"), opts)?;
        let filter = Self::filter(t, q)?;
        let mut matching: Vec<ObjectKey> = self
            .objects
            .get(&t.key())
            .map(|objects| objects.iter().filter(|(_, o)| filter.matches(o)).map(|(k, _)| k.clone()).collect())
            .unwrap_or_default();
        matching.sort_by(storage_order);
        // Preconditions name one object; they make no sense here.
        let mut opts = opts.clone();
        if let Some(map) = opts.as_object_mut() {
            map.remove("preconditions");
        }
        let mut deleted = Vec::new();
        for (ns, name) in matching {
            let one = Target { info: t.info.clone(), namespace: (!ns.is_empty()).then_some(ns), name: Some(name) };
            deleted.push(self.delete(&one, &opts, q)?);
        }
        Ok(self.list_body(&t.info, self.resource_version, deleted))
    }

    pub(crate) fn list(&self, t: &Target, q: &Query) -> Result<Value, ApiError> {
        let filter = Self::filter(t, q)?;
        let limit = match q.get("limit") {
            Some(l) => l.parse::<usize>().map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
            None => 0,
        };
        let (list_rv, after) = match q.get("continue") {
            Some(token) => {
                let mut parts = token.splitn(3, ':');
                let rv = parts.next().and_then(|rv| rv.parse::<u64>().ok());
                match (rv, parts.next(), parts.next()) {
                    (Some(rv), Some(ns), Some(name)) => {
                        if rv < self.compacted {
                            return Err(ApiError::expired(
                                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                            ));
                        }
                        (rv, Some((ns.to_owned(), name.to_owned())))
                    }
                    _ => {
                        return Err(ApiError::bad_request(format!("invalid continue token {token:?}")));
                    }
                }
            }
            None => (self.resource_version, None),
        };
        let mut matching: Vec<(&ObjectKey, &Value)> = self
            .objects
            .get(&t.key())
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(|(key, _)| after.as_ref().is_none_or(|a| storage_order(key, a).is_gt()))
            .filter(|(_, o)| filter.matches(o))
            .collect();
        matching.sort_by(|a, b| storage_order(a.0, b.0));
        let mut continue_token = None;
        if limit > 0 && matching.len() > limit {
            let remaining = matching.len() - limit;
            matching.truncate(limit);
            if let Some(((ns, name), _)) = matching.last() {
                continue_token = Some((format!("{list_rv}:{ns}:{name}"), remaining));
            }
        }
        let items = matching.into_iter().map(|(_, o)| o.clone()).collect();
        let mut body = self.list_body(&t.info, list_rv, items);
        if let Some((token, remaining)) = continue_token {
            body["metadata"]["continue"] = token.into();
            body["metadata"]["remainingItemCount"] = remaining.into();
        }
        Ok(body)
    }

    pub(crate) fn watch(&mut self, t: &Target, q: &Query) -> Result<WatchStart, ApiError> {
        let filter = Self::filter(t, q)?;
        let info = &t.info;
        let bookmarks = q.flag("allowWatchBookmarks");
        let send_initial = q.flag("sendInitialEvents");
        let mut initial = Vec::new();
        let mut after = 0;
        match q.get("resourceVersion") {
            Some(rv) if rv != "0" && !send_initial => {
                let rv: u64 =
                    rv.parse().map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?;
                after = rv;
                if rv < self.compacted {
                    let status = ApiError::expired(format!("too old resource version: {rv} ({})", self.compacted));
                    return Ok(WatchStart::Expired(watch_line("ERROR", &status.to_value())));
                }
                for event in self.history.iter().filter(|e| e.resource_version > rv && e.key == info.key()) {
                    if let Some(kind) = filter.view(event) {
                        initial.push(watch_line(kind.as_str(), &event.payload(kind)));
                    }
                }
            }
            // No version, "0", or a streaming list: the current objects
            // first, as synthetic ADDED events.
            _ => initial = self.initial_events(info, &filter, send_initial && bookmarks),
        }
        let (tx, rx) = mpsc::unbounded_channel();
        self.next_watcher_id += 1;
        let id = self.next_watcher_id;
        self.watchers.push(Watcher { id, after, key: info.key(), filter, tx });
        Ok(WatchStart::Open { id, initial, rx })
    }

    /// The current objects `filter` lets through, as ADDED events, then
    /// with `end_bookmark` the BOOKMARK that ends a streaming list.
    fn initial_events(&self, info: &ResourceInfo, filter: &WatchFilter, end_bookmark: bool) -> Vec<Bytes> {
        let mut initial = Vec::new();
        if let Some(objects) = self.objects.get(&info.key()) {
            let mut matching: Vec<_> = objects.iter().filter(|(_, o)| filter.matches(o)).collect();
            matching.sort_by(|a, b| storage_order(a.0, b.0));
            for (_, obj) in matching {
                initial.push(watch_line("ADDED", obj));
            }
        }
        if end_bookmark {
            initial.push(self.bookmark(info, true));
        }
        initial
    }

    /// For a watch a [`FakeWatch`](super::FakeWatch) answers: with
    /// `sendInitialEvents`, the streaming list's initial events of the
    /// server's objects (as a list before the watch would give them);
    /// otherwise nothing.
    pub(crate) fn reactor_initial_events(&self, t: &Target, q: &Query) -> Result<Vec<Bytes>, ApiError> {
        if !q.flag("sendInitialEvents") {
            return Ok(Vec::new());
        }
        let filter = Self::filter(t, q)?;
        Ok(self.initial_events(&t.info, &filter, q.flag("allowWatchBookmarks")))
    }

    /// A BOOKMARK event at the current resourceVersion.
    pub(crate) fn bookmark(&self, info: &ResourceInfo, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": self.resource_version.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        watch_line(
            "BOOKMARK",
            &json!({
                "apiVersion": info.api_version(),
                "kind": info.kind,
                "metadata": metadata,
            }),
        )
    }
}

/// Whether an update of a missing object of this built-in kind creates it
/// (its registry strategy's `AllowCreateOnUpdate`, Kubernetes 1.37).
fn creates_on_update(info: &ResourceInfo) -> bool {
    matches!(
        (info.group.as_str(), info.kind.as_str()),
        ("coordination.k8s.io", "Lease" | "LeaseCandidate")
            | ("", "Endpoints" | "Event" | "LimitRange" | "Service")
            | ("events.k8s.io", "Event")
            | ("node.k8s.io", "RuntimeClass")
            | ("rbac.authorization.k8s.io", "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding")
    ) && info.schema.is_none()
}

/// A custom resource is only updated at a given resourceVersion: an update
/// (or patch) leaving it out is refused before anything else is checked.
fn versioned_update(t: &Target, body: &Value) -> Result<(), ApiError> {
    if !t.info.is_custom() || meta_str(body, "resourceVersion").is_some_and(|rv| !super::meta::unversioned(rv)) {
        return Ok(());
    }
    Err(ApiError::invalid_resource(
        &t.info,
        t.name(),
        ("FieldValueInvalid", "metadata.resourceVersion", "Invalid value: 0: must be specified for an update"),
    ))
}

/// With a validation schema: defaults `object` and refuses it, as the API
/// server does, when it is invalid (as a create, or an update of `old`).
/// A PUT body's uid is a precondition, as the API server reads it.
fn uid_precondition(t: &Target, old: &Value, body: &Value) -> Result<(), ApiError> {
    match objectmeta::other_uid(old, body) {
        Some(uid) => Err(ApiError::conflict(
            &t.info,
            t.name(),
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta_str(old, "uid").unwrap_or_default()
            ),
        )),
        None => Ok(()),
    }
}

fn cause((reason, field, message): &objectmeta::Cause) -> (&str, &str, &str) {
    (reason, field.as_str(), message.as_str())
}

/// The API server's checks of a write: metadata for every kind, then the
/// schema when the resource has one to validate with.
fn admit(info: &ResourceInfo, name: &str, object: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
    let mut problems = objectmeta::validate(info, object);
    if old.is_some() {
        problems = objectmeta::on_update(info, problems);
    }
    if !problems.is_empty() {
        let causes: Vec<_> = problems.iter().map(cause).collect();
        return Err(ApiError::invalid(info, name, &causes));
    }
    let errors = match info.validation {
        Some(schema) => crate::validation::admit(object, old.cloned(), schema),
        None => Vec::new(),
    };
    // After the schema's, the scale subresource's own checks.
    let scale = scale::validate(info, object);
    if errors.is_empty() && scale.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, &str, &str)> = errors
        .iter()
        .map(|e| (e.reason, e.field.as_str(), e.message.as_str()))
        .chain(scale.iter().map(|(reason, field, message)| (*reason, field.as_str(), message.as_str())))
        .collect();
    Err(ApiError::invalid(info, name, &causes))
}
