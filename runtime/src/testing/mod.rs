//! An in-memory Kubernetes API server for unit tests: client-go's fake
//! clientset, but reached through a real `kube::Client`, so requests go
//! through kube's URL building and serde like against a cluster.
//!
//! [`FakeApiServer::client`] returns a `kube::Client` whose transport is a
//! tower service calling the server in memory (no socket). Generated
//! clientsets, [`TypedClient`](crate::client::TypedClient), kube's `Api`,
//! kube's `watcher` and the runtime's informers all run unchanged on it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> codegen_runtime::Result<()> {
//! use codegen_runtime::client::{GetOptions, TypedClient};
//! use codegen_runtime::testing::FakeApiServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::ObjectMeta;
//!
//! let server = FakeApiServer::new();
//! server.seed([ConfigMap {
//!     metadata: ObjectMeta { name: Some("a".into()), namespace: Some("ns".into()), ..Default::default() },
//!     ..Default::default()
//! }])?;
//! let configmaps = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
//! let cm = configmaps.get("a", &GetOptions::default()).await?;
//! assert_eq!(cm.metadata.resource_version.as_deref(), Some("1"));
//! assert_eq!(server.actions()[0].verb, "get");
//! # Ok(())
//! # }
//! ```
//!
//! # What it implements
//!
//! - Routing of `/api/v1/...` (core group) and `/apis/{group}/{version}/...`,
//!   namespaced (`/namespaces/{ns}/{plural}[/{name}[/status]]`) and
//!   cluster-scoped; requests for unregistered resources get 404.
//! - get, list, create, update, patch, delete, deletecollection, watch, and
//!   the `status` subresource of kinds registered with one: main-resource
//!   writes keep the stored status, status writes change only status, and
//!   create drops status.
//! - One global `resourceVersion` bumped by every write; an update or patch
//!   carrying a stale `metadata.resourceVersion` fails with 409 Conflict;
//!   writes that change nothing are no-ops (no new version, no event).
//! - `uid`, `creationTimestamp`, `generateName` (the prefix cut to 58
//!   bytes); `metadata.generation` starts at 1 and grows when anything but
//!   metadata (and status, for kinds with a status subresource) changes,
//!   and when a delete marks the object for deletion.
//! - The API server's checks of `metadata` on every write, for every kind:
//!   the name (a DNS subdomain; a DNS label for Namespaces), label keys and
//!   values, annotation keys and their 256 KiB total, owner references
//!   (apiVersion, kind, name and uid given; one controller at most) and
//!   finalizer names, each a 422 with the field as its cause. A create
//!   carrying a `resourceVersion` gets the API server's 500; an update body
//!   must name the object of its URL (400), and its `uid` is a
//!   precondition (409); a patch may not change the uid (422).
//! - Finalizers: deleting an object with finalizers sets
//!   `deletionTimestamp` and keeps it until an update removes the last
//!   finalizer, which deletes it; no finalizer may be added meanwhile.
//!   Delete preconditions (uid, resourceVersion) are checked.
//! - Failure `Status` bodies like the API server's (404 NotFound, 409
//!   AlreadyExists / Conflict, 422 Invalid with causes, 400, 405, 410, 415).
//! - list with label selectors (`=`, `==`, `!=`, `in`, `notin`, `exists`,
//!   `!key`, `>`, `<`), `metadata.name` / `metadata.namespace` field
//!   selectors, `limit`/`continue` paging and the list `resourceVersion`.
//! - watch from a resourceVersion (events after it, in order), or with no
//!   version / `"0"` / `sendInitialEvents=true` from the current objects as
//!   ADDED first; objects modified into or out of a selector arrive as
//!   ADDED / DELETED. The response streams and stays open until
//!   `timeoutSeconds` (ending with a BOOKMARK when `allowWatchBookmarks` is
//!   set) or [`FakeApiServer::close_watches`]. A version older than the
//!   retained history (1,000 events by default) gets an ERROR event with a
//!   410 Expired `Status`, like the real server.
//! - An action log and client-go style reactors for injecting responses and
//!   errors, and watch reactors ([`FakeWatch`]) that stream the events a
//!   test sends (client-go's `PrependWatchReactor` with a `FakeWatcher`).
//!
//! ## Server-side apply and managedFields
//!
//! Field ownership follows the API server's field manager
//! (structured-merge-diff); `tests/tests/ssa_suite.rs` runs the same
//! scenarios against this server and kube-apiserver 1.37 and compares
//! every response, object and managedFields entry.
//!
//! - Every write (create, update, each patch type, apply, and their
//!   `/status` forms) maintains `metadata.managedFields`: entries with
//!   `manager`, `operation` (`Apply` or `Update`), `apiVersion`, `time`,
//!   `fieldsType: FieldsV1`, `fieldsV1` and `subresource`, in the API
//!   server's order (operation, time, manager, apiVersion, subresource).
//!   The manager of a non-apply write is `fieldManager`, else the
//!   User-Agent up to its first `/`, else `unknown`; `fieldManager` (at
//!   most 128 printable bytes, required for apply) and `force` (apply
//!   only) are checked with the API server's 422s.
//! - An `Update` takes the fields it adds or changes from every other
//!   manager (never a conflict); fields it removes leave every entry;
//!   entries left without fields are dropped; beyond 10 `Update` entries
//!   the oldest are merged into `ancient-changes`.
//! - managedFields sent with an update replace the stored ones unless they
//!   are empty or do not decode (then the stored ones stay; `/status`
//!   writes always keep them); `[{}]` clears them. Updates do not start
//!   tracking an object without managedFields (e.g. one added with
//!   [`FakeApiServer::seed`]); its first apply finds what it holds owned by
//!   `before-first-apply`.
//! - Apply merges the body into the object by the resource's structural
//!   schema ([`ResourceInfo::with_schema`]): objects and granular maps key
//!   by key, list-maps by their keys and sets by value (in the API server's
//!   item order), atomic lists and maps replaced. Fields the manager
//!   applied before and no longer applies are removed unless another
//!   manager owns them; a map or list emptied that way becomes `null`.
//!   Changing a field another manager owns is a 409 Conflict with the API
//!   server's message (`Apply failed with 1 conflict: conflict with
//!   "other" using group/v1: .spec.x`) and one `FieldManagerConflict`
//!   cause per field, unless `force=true`, which moves the field to the
//!   applier; applying the value it already has makes the applier a
//!   co-owner. An applier's entry gets a new time only when the object
//!   changes.
//! - Apply creates a missing object (201) but not through `/status`
//!   (404). Through `/status` it owns only `status` and records
//!   `subresource: status`; main-resource writes never own `status` of
//!   kinds with a status subresource. Bodies carrying managedFields, an
//!   apiVersion or kind other than the URL's, no name for a new object, a
//!   field the schema does not declare, a list-map item without its keys
//!   or a duplicate item are rejected with the API server's 400 or 500.
//! - Built-in kinds are typed as the API server types them from
//!   Kubernetes 1.37's OpenAPI definitions (`strategic.tsv`): list-maps by
//!   their keys, with the keys' defaults (a Deployment's containers by
//!   name, their ports by port and protocol, `TCP` when left out), sets,
//!   atomic structs, maps and list items (a label selector, a node
//!   selector, a secret reference); other fields as below.
//! - Without a schema (a custom kind registered without one, and the
//!   fields of built-in kinds the table does not list) objects are maps of
//!   named fields and lists are atomic. `metadata` always has ObjectMeta's
//!   schema: labels and annotations granular, finalizers a set,
//!   ownerReferences keyed by `uid`; name, namespace, uid,
//!   resourceVersion, generation, creationTimestamp and managedFields are
//!   never owned.
//! - As the API server's decoding into Go types does, stored `metadata`
//!   loses null, empty-map and empty-list values, and objects of kinds
//!   without a schema lose null values (so a `data` map emptied by apply
//!   disappears).
//! - A resource with a schema ([`ResourceInfo::is_custom`]) is served as a
//!   custom resource: an update or patch leaving out the resourceVersion is
//!   a 422 (built-in kinds take unconditional updates), strategic merge
//!   patches are a 415, and metadata errors of an update are repeated in
//!   the causes as kube-apiserver's custom resource handler repeats them
//!   (labels, annotations and owner references three times, immutable
//!   fields and new finalizers of an object being deleted twice).
//! - Patches fail as on the API server: a JSON patch operation that does
//!   not apply (a failed `test`, a missing path, an unknown operation) is
//!   its bare 422, more than 10,000 operations a 413, a missing `value` is
//!   `null`; a merge patch that is not an object is a 400 with Go's
//!   decoding message, and values it sets lose their `null` members, in
//!   lists too. A patch may not remove the name (400) nor set
//!   `deletionTimestamp` or `deletionGracePeriodSeconds` (422); an apply
//!   that would create an object with a uid is a 409; `dryRun` takes only
//!   `All`, and boolean parameters read as the API server reads them
//!   (`force=True` is true).
//! - Strategic merge patches of built-in kinds merge as apimachinery's
//!   `strategicpatch` merges them: lists with the `merge` strategy by
//!   their merge key (a Deployment's containers by name, their ports by
//!   container port) or, for lists of scalars (finalizers), as sets, in
//!   the API server's order; other lists are replaced, maps merged key by
//!   key (replaced with the `replace` strategy); the directives `$patch`
//!   (`replace`, `delete`), `$retainKeys`, `$deleteFromPrimitiveList/..`
//!   and `$setElementOrder/..` are understood. Malformed directives are a
//!   400 and other failures (a list item without its merge key, lists of
//!   lists, an unknown `$patch`) a 500, as on the API server. The
//!   strategies are those of Kubernetes 1.37's types
//!   (`runtime/src/testing/strategic.tsv`); a kind not in it (one of an
//!   older version only) merges its `metadata` as ObjectMeta and the rest
//!   as a JSON merge patch.
//!
//! # Limitations
//!
//! - Failed strategic merge patches are worded differently from the API
//!   server's. Where the API server looks fields up in the Go types, the
//!   fake goes by the table and merges what Go refuses: a map below a
//!   `RawExtension` (`ControllerRevision.data`), `$setElementOrder/` of a
//!   field that does not exist or of a list of maps without a merge key;
//!   an empty `$setElementOrder` list keeps the merged order where Go's
//!   sort reverses it.
//! - Server-side apply knows the schemas of custom kinds only as given to
//!   [`ResourceInfo::with_schema`], and those of built-in kinds as the
//!   table has them (Kubernetes 1.37; a field the API server does not
//!   declare is not refused here). What built-in kinds' Go types do is not
//!   reproduced: defaults are not set, an empty optional map or list sent
//!   to the API server (`ConfigMap.data: {}`) is not stored there but is
//!   stored here, and an `Update` that creates an object records a `.` for
//!   nested objects whose Go zero value the API server already had (e.g. a
//!   Deployment's `spec`).
//! - Apply bodies must be JSON (kube sends JSON); the kubectl
//!   `last-applied-configuration` annotation is not maintained; a resource
//!   has one version, so managedFields entries of another apiVersion cannot
//!   be converted: applies fail with 500 and updates keep the stored
//!   managedFields. The causes of a conflict with several managers are
//!   ordered by manager (the API server's order varies).
//! - No schema validation, defaulting or pruning of unknown fields unless
//!   the resource has a schema ([`ResourceInfo::with_validation`], else
//!   [`ResourceInfo::with_schema`] for pruning; generated fake clientsets
//!   give their kinds both). With one, writes are decoded as the API server
//!   decodes custom resources: undeclared fields are pruned and, with keys
//!   the JSON gives twice (found for every kind), refused under
//!   `fieldValidation=Strict` or answered with `Warning` headers under
//!   `Warn`, the default. No admission, namespaces' existence, garbage collection
//!   (`propagationPolicy` is ignored) or graceful deletion of pods: e.g.
//!   without a validation schema an apply that leaves `null` where a custom
//!   resource's schema wants a map is stored, where the API server answers
//!   422.
//! - Lists are always served from the current state: `resourceVersion` and
//!   `resourceVersionMatch` on list and get are ignored, and later pages of
//!   a paged list show objects as they are when the page is read.
//! - Subresources other than `status` and a custom resource's `scale`
//!   ([`ResourceInfo::with_scale_subresource`]; generated fake clientsets
//!   give it to the kinds that have one) exist only through reactors, and
//!   a server-side apply to `/scale` is a 415 here. A `Scale` is read
//!   after the object is found (a malformed PUT of a missing object is a
//!   404 here, a 400 on the API server), a patched `Scale` that does not
//!   decode is a 400 (the API server's 422 at `patch`), and its name and
//!   namespace are not compared with the URL's.
//! - Every kind has `metadata.generation`; on the API server only kinds
//!   whose strategy keeps one do (custom resources, Deployments, ...), not
//!   e.g. ConfigMaps or Secrets.
//! - List items keep `apiVersion` and `kind` (the API server leaves them
//!   out of items of built-in and aggregated kinds), and
//!   `remainingItemCount` is set on a paged list with a selector too (the
//!   API server sets it only without one).
//! - Field selectors other than `metadata.name` and `metadata.namespace`
//!   (a CRD's `selectableFields`, a Pod's `spec.nodeName`) are a 400 here.
//! - A delete that removes the object at once answers with the object;
//!   the API server answers most kinds (custom resources, ConfigMaps) with
//!   a `Success` `Status`. Creating over an object being deleted is a plain
//!   409 AlreadyExists, without the API server's "object is being deleted"
//!   message.

mod fake_watch;
mod meta;
pub(crate) mod objectmeta;
mod patch;
mod prune;
mod reactor;
mod scale;
pub(crate) mod selector;
pub(crate) mod server;
mod ssa;
mod status;
mod store;
mod strategic;
mod watch;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::core::Status;

use crate::{Error, Object, Result};

pub use fake_watch::FakeWatch;
pub use reactor::{Action, ReactionFunc, ReactorResult};
pub use server::FakeApiService;
pub use watch::FakeBody;

use fake_watch::WatchReactor;
use reactor::Reactor;
use store::{DEFAULT_HISTORY_LIMIT, ResourceKey, Store};

/// What the fake API server knows about a resource it serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceInfo {
    /// API group; empty for the core group (served under `/api`).
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `status` is a subresource: then main-resource writes ignore
    /// status and `/status` writes ignore everything else.
    pub has_status_subresource: bool,
    /// The structural schema server-side apply merges by (see
    /// [`ResourceInfo::with_schema`]); `None`: deduced from the objects.
    pub schema: Option<StructuralSchema>,
    /// The schema writes are defaulted and validated with (see
    /// [`ResourceInfo::with_validation`]); `None`: nothing is checked.
    pub validation: Option<&'static str>,
    /// Served by an aggregated API server (see
    /// [`ResourceInfo::aggregated`]): never handled as a custom resource.
    pub aggregated: bool,
    /// The `scale` subresource (see [`ResourceInfo::with_scale_subresource`]);
    /// `None`: `/scale` exists only through reactors.
    pub scale: Option<ScaleSubresource>,
}

/// Where a custom resource keeps what its `scale` subresource shows: a CRD
/// version's `subresources.scale`. Paths are JSON paths of plain fields
/// (`.spec.replicas`), as the CRD gives them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScaleSubresource {
    /// The desired replicas, under `.spec` (`specReplicasPath`).
    pub spec_replicas_path: String,
    /// The observed replicas, under `.status` (`statusReplicasPath`).
    pub status_replicas_path: String,
    /// The label selector as a string, under `.status`
    /// (`labelSelectorPath`), if the CRD gives one.
    pub label_selector_path: Option<String>,
}

/// A CRD version's `openAPIV3Schema`, as server-side apply reads it:
/// `properties`, `items`, `additionalProperties`,
/// `x-kubernetes-list-type` (`atomic`, `set`, `map`) with
/// `x-kubernetes-list-map-keys`, `x-kubernetes-map-type` (`atomic`,
/// `granular`), `x-kubernetes-preserve-unknown-fields`,
/// `x-kubernetes-int-or-string` and `x-kubernetes-embedded-resource`.
/// Validation keywords are not read. `metadata` always has ObjectMeta's
/// schema.
///
/// Compared and hashed by its compact JSON text.
#[derive(Clone)]
pub struct StructuralSchema {
    json: Arc<str>,
    value: Arc<serde_json::Value>,
    root: Arc<ssa::Type>,
}

impl StructuralSchema {
    /// Reads `openAPIV3Schema`; what it does not understand is deduced from
    /// the objects, as under `x-kubernetes-preserve-unknown-fields`.
    pub fn new(open_api_v3_schema: &serde_json::Value) -> Self {
        Self {
            json: open_api_v3_schema.to_string().into(),
            value: Arc::new(open_api_v3_schema.clone()),
            root: Arc::new(ssa::parse_schema(open_api_v3_schema)),
        }
    }

    pub(crate) fn value(&self) -> Arc<serde_json::Value> {
        self.value.clone()
    }

    /// The schema as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.json).unwrap_or_default()
    }

    pub(crate) fn root(&self) -> &ssa::Type {
        &self.root
    }
}

impl std::fmt::Debug for StructuralSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StructuralSchema").field(&self.json).finish()
    }
}

impl PartialEq for StructuralSchema {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl Eq for StructuralSchema {}

impl std::hash::Hash for StructuralSchema {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.json.hash(state);
    }
}

impl ResourceInfo {
    /// The resource of `K`, from its `kube::Resource` impl, with a status
    /// subresource (harmless for kinds without a `status` field; use
    /// [`ResourceInfo::with_status_subresource`] to turn it off).
    pub fn of<K: Object>() -> Self {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced: K::NAMESPACED,
            has_status_subresource: true,
            schema: None,
            validation: None,
            aggregated: false,
            scale: None,
        }
    }

    /// Serves the `scale` subresource (`autoscaling/v1` `Scale`) as the API
    /// server serves a custom resource's: `get` reads the replicas and the
    /// selector at these paths (an object without spec replicas is a 500,
    /// missing status replicas are 0), and `update` and JSON or merge
    /// `patch` write `spec.replicas` back at `spec_replicas_path` as an
    /// update of the object (validated, recorded in `managedFields` with
    /// `subresource: scale`); a patch must set replicas the object lacks. A
    /// `Scale`'s `resourceVersion` and `uid` are preconditions. Every write
    /// of the resource is checked at these paths too: replicas from 0 to
    /// 2147483647, a string selector (422 otherwise).
    #[must_use]
    pub fn with_scale_subresource(
        mut self,
        spec_replicas_path: &str,
        status_replicas_path: &str,
        label_selector_path: Option<&str>,
    ) -> Self {
        self.scale = Some(ScaleSubresource {
            spec_replicas_path: spec_replicas_path.to_owned(),
            status_replicas_path: status_replicas_path.to_owned(),
            label_selector_path: label_selector_path.map(str::to_owned),
        });
        self
    }

    /// Defaults and validates every create and update like the API server,
    /// against a CRD version's `openAPIV3Schema` as JSON (a generated kind's
    /// `VALIDATION_SCHEMA`): an invalid object is refused with the server's
    /// 422 and field causes (see [`crate::validation`]).
    #[must_use]
    pub fn with_validation(mut self, open_api_v3_schema: &'static str) -> Self {
        self.validation = Some(open_api_v3_schema);
        self
    }

    /// Sets the structural schema server-side apply merges by: a CRD
    /// version's `openAPIV3Schema` as JSON (see [`StructuralSchema`]).
    /// Without one, objects are maps of fields and lists are atomic.
    #[must_use]
    pub fn with_schema(mut self, open_api_v3_schema: serde_json::Value) -> Self {
        self.schema = Some(StructuralSchema::new(&open_api_v3_schema));
        self
    }

    /// Sets whether `status` is a subresource.
    #[must_use]
    pub fn with_status_subresource(mut self, has_status_subresource: bool) -> Self {
        self.has_status_subresource = has_status_subresource;
        self
    }

    /// Whether the resource is served as a custom resource: it has a schema
    /// ([`ResourceInfo::with_validation`] or [`ResourceInfo::with_schema`])
    /// and is not [`aggregated`](ResourceInfo::aggregated). Custom resources'
    /// unknown fields are pruned, they take no strategic merge patches,
    /// need a resourceVersion on every update, and their metadata errors
    /// are reported as kube-apiserver's custom resource handler reports
    /// them.
    pub fn is_custom(&self) -> bool {
        !self.aggregated && (self.schema.is_some() || self.validation.is_some())
    }

    /// Marks the resource as served by an aggregated API server (a kind
    /// without a CRD, `#[resource(skip_crd)]`): its schema is only for
    /// server-side apply, and writes are handled as for built-in kinds.
    #[must_use]
    pub fn aggregated(mut self) -> Self {
        self.aggregated = true;
        self
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    pub(crate) fn key(&self) -> ResourceKey {
        (self.group.clone(), self.version.clone(), self.plural.clone())
    }

    /// `plural.group` as the API server names a resource in messages.
    pub(crate) fn qualified(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }
}

/// State shared by every handle and client of one fake server.
pub(crate) struct Shared {
    store: Mutex<Store>,
    reactors: Mutex<Vec<Reactor>>,
    watch_reactors: Mutex<Vec<WatchReactor>>,
    actions: Mutex<Vec<Action>>,
}

// A panic while a lock was held is already turned into a 500 for that
// request; later requests keep working on the state as it was left.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn lock_store(&self) -> MutexGuard<'_, Store> {
        lock(&self.store)
    }

    pub(crate) fn lock_reactors(&self) -> MutexGuard<'_, Vec<Reactor>> {
        lock(&self.reactors)
    }

    pub(crate) fn lock_actions(&self) -> MutexGuard<'_, Vec<Action>> {
        lock(&self.actions)
    }

    /// The fake watch that answers a watch of `plural`, if any.
    pub(crate) fn watch_reactor(&self, plural: &str) -> Option<FakeWatch> {
        lock(&self.watch_reactors).iter().find(|r| r.resource == "*" || r.resource == plural).map(|r| r.watch.clone())
    }
}

/// An in-memory Kubernetes API server (see the [module docs](self)).
///
/// Cheap to clone; clones share the same objects, actions and reactors.
#[derive(Clone)]
pub struct FakeApiServer {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer").field("resource_version", &self.resource_version()).finish_non_exhaustive()
    }
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeApiServer {
    /// An empty server keeping the last 1,000 events for watches.
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                store: Mutex::new(Store::new(DEFAULT_HISTORY_LIMIT)),
                reactors: Mutex::new(Vec::new()),
                watch_reactors: Mutex::new(Vec::new()),
                actions: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Keeps only the last `limit` events for watches; a watch from an
    /// older version gets 410 Expired.
    #[must_use]
    pub fn with_history_limit(self, limit: usize) -> Self {
        self.shared.lock_store().set_history_limit(limit);
        self
    }

    /// Serves `K` (see [`ResourceInfo::of`]).
    pub fn register<K: Object>(&self) {
        self.register_resource(ResourceInfo::of::<K>());
    }

    /// Serves a resource described by hand; registering it again replaces
    /// the description and keeps the objects.
    pub fn register_resource(&self, info: ResourceInfo) {
        self.shared.lock_store().register(info);
    }

    /// Adds objects as they are (client-go's `tracker.Add`): status is
    /// kept, missing uid, creationTimestamp and generation are filled in,
    /// and watches see them as ADDED. Registers `K` first if needed.
    /// Fails with AlreadyExists or Invalid (no name, or no namespace for a
    /// namespaced kind).
    pub fn seed<K: Object>(&self, objects: impl IntoIterator<Item = K>) -> Result<()> {
        let info = self.info_of::<K>();
        for obj in objects {
            let value = serde_json::to_value(&obj)?;
            self.shared.lock_store().seed(&info, value).map_err(status_error)?;
        }
        Ok(())
    }

    // The registered description of `K`, registering it if needed.
    fn info_of<K: Object>(&self) -> ResourceInfo {
        let default = ResourceInfo::of::<K>();
        let mut store = self.shared.lock_store();
        match store.resource(&default.group, &default.version, &default.plural) {
            Some(info) => info.clone(),
            None => {
                store.register(default.clone());
                default
            }
        }
    }

    /// The stored object, read directly (no action is logged).
    pub fn object<K: Object>(&self, namespace: Option<&str>, name: &str) -> Result<Option<K>> {
        let info = self.info_of::<K>();
        let value = self.shared.lock_store().object(&info.key(), namespace, name);
        value.map(|v| serde_json::from_value(v).map_err(Error::from)).transpose()
    }

    /// Every stored object of `K`, ordered by namespace and name (no action
    /// is logged).
    pub fn objects<K: Object>(&self) -> Result<Vec<K>> {
        let info = self.info_of::<K>();
        let values = self.shared.lock_store().objects(&info.key());
        values.into_iter().map(|v| serde_json::from_value(v).map_err(Error::from)).collect()
    }

    /// A `kube::Client` talking to this server in memory, with default
    /// namespace `default`. Must be called inside a Tokio runtime (the
    /// client spawns its request buffer there).
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.service(), "default")
    }

    /// The server as a tower service, to wrap in layers before
    /// `kube::Client::new`.
    pub fn service(&self) -> FakeApiService {
        FakeApiService { shared: Arc::clone(&self.shared) }
    }

    /// Every request received so far, in order.
    pub fn actions(&self) -> Vec<Action> {
        self.shared.lock_actions().clone()
    }

    /// Forgets the logged actions.
    pub fn clear_actions(&self) {
        self.shared.lock_actions().clear();
    }

    /// Runs `react` before every reactor added so far, for requests with
    /// this `verb` on this `resource` (plural; `"*"` matches any). Reactors
    /// see the logged [`Action`]; see [`ReactorResult`] for what they return.
    pub fn prepend_reactor<F>(&self, verb: &str, resource: &str, react: F)
    where
        F: Fn(&Action) -> ReactorResult + Send + Sync + 'static,
    {
        let reactor = Reactor { verb: verb.to_owned(), resource: resource.to_owned(), react: Arc::new(react) };
        self.shared.lock_reactors().insert(0, reactor);
    }

    /// Like [`FakeApiServer::prepend_reactor`], but runs `react` after the
    /// reactors added so far (still before the object store).
    pub fn add_reactor<F>(&self, verb: &str, resource: &str, react: F)
    where
        F: Fn(&Action) -> ReactorResult + Send + Sync + 'static,
    {
        let reactor = Reactor { verb: verb.to_owned(), resource: resource.to_owned(), react: Arc::new(react) };
        self.shared.lock_reactors().push(reactor);
    }

    /// Answers watches of `resource` (plural; `"*"` matches any) with the
    /// events sent to `watch`, before the watch reactors added so far and
    /// before every other reactor (client-go's `PrependWatchReactor` with
    /// `DefaultWatchReactor`). The watch requests are still logged.
    pub fn prepend_watch_reactor(&self, resource: &str, watch: &FakeWatch) {
        let reactor = WatchReactor { resource: resource.to_owned(), watch: watch.clone() };
        lock(&self.shared.watch_reactors).insert(0, reactor);
    }

    /// Removes every reactor and watch reactor.
    pub fn clear_reactors(&self) {
        self.shared.lock_reactors().clear();
        lock(&self.shared.watch_reactors).clear();
    }

    /// The latest resourceVersion handed out (0 before the first write).
    pub fn resource_version(&self) -> u64 {
        self.shared.lock_store().resource_version()
    }

    /// Forgets the event history, like an etcd compaction: a watch from any
    /// version older than the current one now gets 410 Expired.
    pub fn compact(&self) {
        self.shared.lock_store().compact();
    }

    /// Ends every open watch stream (clients see the stream end and, like
    /// kube's watcher, re-watch from their last version).
    pub fn close_watches(&self) {
        self.shared.lock_store().close_watches();
    }
}

fn status_error(err: status::ApiError) -> Error {
    let status = Status {
        status: Some(kube::core::response::StatusSummary::Failure),
        code: err.code,
        message: err.message,
        metadata: None,
        reason: err.reason.to_owned(),
        details: err.details.and_then(|d| serde_json::from_value(d).ok()),
    };
    Error::Api(Box::new(status))
}
