//! Typed client helpers behind the generated clientset: every client-gen verb
//! (create, update, updateStatus, delete, deleteCollection, get, list, watch,
//! patch, apply, subresources) for one kind, on top of kube's `Api<K>`.
//!
//! The option structs mirror metav1's `CreateOptions`, `UpdateOptions`, ...
//! and are translated to kube's `PostParams`, `ListParams`, ... per call.

use std::borrow::Cow;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use kube::Client;
use kube::api::{Api, DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchParams};
use kube::core::{ObjectList, WatchEvent};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::apply::ApplyConfiguration;
use crate::{Error, Object, Result};

/// The json-patch crate whose `Patch` kube's JSON patches carry (version 4
/// for kube 5); build [`PatchType::Json`] values with it.
pub use json_patch;
pub use kube::api::PropagationPolicy;

/// metav1 `CreateOptions`.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct CreateOptions {
    /// Validate and default the object but persist nothing (`dryRun=All`).
    pub dry_run: bool,
    /// Name of the actor making the change, recorded in `managedFields`.
    pub field_manager: Option<String>,
    /// What the server does with fields the kind's schema does not declare
    /// and with duplicate fields (`fieldValidation`); `None`: the server's
    /// default, [`FieldValidation::Warn`].
    pub field_validation: Option<FieldValidation>,
}

/// metav1 `UpdateOptions`.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct UpdateOptions {
    /// Validate and default the object but persist nothing (`dryRun=All`).
    pub dry_run: bool,
    /// Name of the actor making the change, recorded in `managedFields`.
    pub field_manager: Option<String>,
    /// What the server does with fields the kind's schema does not declare
    /// and with duplicate fields (`fieldValidation`); `None`: the server's
    /// default, [`FieldValidation::Warn`].
    pub field_validation: Option<FieldValidation>,
}

/// metav1's `fieldValidation` directive: what the API server does with
/// fields of a written object that the kind's schema does not declare (a
/// Rust type newer than the CRD installed in the cluster, a typo in a raw
/// patch) and with fields given twice in the JSON. Unknown fields are
/// dropped before the object is stored in every mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and answer with one `Warning` header per field (the
    /// server's default; see [`crate::warnings`] to read them).
    Warn,
    /// Refuse the write: 400 BadRequest naming every such field
    /// (`strict decoding error: unknown field "spec.x"`); 422 Invalid for a
    /// patch.
    Strict,
}

impl FieldValidation {
    /// The query parameter's value.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldValidation::Ignore => "Ignore",
            FieldValidation::Warn => "Warn",
            FieldValidation::Strict => "Strict",
        }
    }

    fn to_kube(self) -> kube::api::ValidationDirective {
        match self {
            FieldValidation::Ignore => kube::api::ValidationDirective::Ignore,
            FieldValidation::Warn => kube::api::ValidationDirective::Warn,
            FieldValidation::Strict => kube::api::ValidationDirective::Strict,
        }
    }
}

/// metav1 `GetOptions`.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct GetOptions {
    /// `Some("0")` lets the server answer from its cache; `None` reads the
    /// latest state.
    pub resource_version: Option<String>,
}

/// metav1 `ListOptions`, used by list, watch and delete-collection.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct ListOptions {
    /// Label selector, e.g. `app=web,tier!=db,env in (prod,staging)`.
    pub label_selector: Option<String>,
    /// Field selector, e.g. `metadata.name=foo`.
    pub field_selector: Option<String>,
    /// Page size for list; `None` lists everything in one response.
    pub limit: Option<u32>,
    /// Continue token from the previous page's `metadata.continue` (an
    /// empty one is not sent).
    pub continue_token: Option<String>,
    /// List: the version to read at (`"0"`: any cached state, also with a
    /// `limit`, as client-go sends it). Watch: the version to start after;
    /// `None` or `"0"` first replays the current objects as ADDED events.
    pub resource_version: Option<String>,
    /// How `resource_version` is read on a list (metav1's
    /// `resourceVersionMatch`: `NotOlderThan` or `Exact`); sent only with a
    /// resource version.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// Watch only: the server ends the watch after this many seconds;
    /// `None` sends kube's default of 290 (client-go sends none and the
    /// server picks 30 to 60 minutes). A list is not cut short by it.
    pub timeout_seconds: Option<u32>,
    /// Watch only: ask for BOOKMARK events carrying the latest
    /// resourceVersion (client-go's `AllowWatchBookmarks`).
    pub allow_watch_bookmarks: bool,
    /// Watch only: start with the current objects as ADDED events and a
    /// BOOKMARK marking their end (metav1's `sendInitialEvents`, a streaming
    /// list); bookmarks are requested with it.
    pub send_initial_events: bool,
}

/// The page size of [`TypedClient::list_all`] when the options give none
/// (client-go's pager's `defaultPageSize`).
const DEFAULT_PAGE_SIZE: u32 = 500;

/// metav1's `ResourceVersionMatch`: how a list reads its resource version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceVersionMatch {
    /// Data at least as new as the version (from the cache, when it has it).
    NotOlderThan,
    /// Data at exactly that version (from etcd; 410 when compacted).
    Exact,
}

impl ResourceVersionMatch {
    fn to_kube(self) -> kube::api::VersionMatch {
        match self {
            ResourceVersionMatch::NotOlderThan => kube::api::VersionMatch::NotOlderThan,
            ResourceVersionMatch::Exact => kube::api::VersionMatch::Exact,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
            ResourceVersionMatch::Exact => "Exact",
        }
    }
}

/// metav1 `DeleteOptions`.
#[derive(Default, Clone, Debug, PartialEq)]
pub struct DeleteOptions {
    /// Check everything but delete nothing (`dryRun=All`).
    pub dry_run: bool,
    /// Seconds before the object is deleted; `Some(0)` deletes immediately.
    pub grace_period_seconds: Option<u32>,
    /// Whether and how dependents are garbage collected.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Delete only if the object still has this UID (else 409 Conflict).
    pub preconditions_uid: Option<String>,
    /// Delete only if the object is still at this resourceVersion (else 409
    /// Conflict).
    pub preconditions_resource_version: Option<String>,
}

/// metav1 `PatchOptions`.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct PatchOptions {
    /// Compute the result but persist nothing (`dryRun=All`).
    pub dry_run: bool,
    /// Name of the actor making the change; required for apply patches.
    pub field_manager: Option<String>,
    /// Take ownership of conflicting fields; only meaningful for
    /// [`PatchType::Apply`] and not sent with other patch types.
    pub force: bool,
    /// What the server does with fields of the patched object the kind's
    /// schema does not declare (see [`FieldValidation`]); an apply patch
    /// naming an undeclared field fails whatever this says.
    pub field_validation: Option<FieldValidation>,
}

/// metav1 `ApplyOptions` for server-side apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyOptions {
    /// The field manager owning the applied fields; must not be empty.
    pub field_manager: String,
    /// Take ownership of fields another manager owns instead of failing with
    /// 409 Conflict. `true` by default: a controller is the authority for
    /// the fields it applies.
    pub force: bool,
    /// Compute the result but persist nothing (`dryRun=All`).
    pub dry_run: bool,
}

impl ApplyOptions {
    /// Options for applying as `field_manager`, with `force` on.
    pub fn new(field_manager: impl Into<String>) -> Self {
        Self { field_manager: field_manager.into(), force: true, dry_run: false }
    }
}

impl ApplyOptions {
    /// kube's parameters of an apply patch; fails without a field manager.
    fn to_params(&self) -> Result<PatchParams> {
        if self.field_manager.is_empty() {
            return Err(Error::InvalidRequest("server-side apply needs a field manager".to_owned()));
        }
        let mut params = PatchParams::apply(&self.field_manager);
        params.force = self.force;
        params.dry_run = self.dry_run;
        Ok(params)
    }
}

impl Default for ApplyOptions {
    /// Force on and an empty field manager, which apply rejects: set
    /// `field_manager` (or use [`ApplyOptions::new`]).
    fn default() -> Self {
        Self::new("")
    }
}

/// A patch and its type (client-go's `types.PatchType` plus the data).
#[derive(Clone, Debug, PartialEq)]
pub enum PatchType {
    /// JSON merge patch (RFC 7386, `application/merge-patch+json`): objects
    /// merge, `null` deletes a key, lists are replaced.
    Merge(Value),
    /// JSON patch (RFC 6902, `application/json-patch+json`), a list of
    /// operations; a failing `test` operation rejects the whole patch.
    Json(json_patch::Patch),
    /// Strategic merge patch (`application/strategic-merge-patch+json`):
    /// lists merge by their patch merge key. Only built-in kinds support it;
    /// the API server answers 415 for custom resources.
    StrategicMerge(Value),
    /// A raw server-side apply patch (`application/apply-patch+yaml`); the
    /// value must carry `apiVersion`, `kind` and `metadata.name`. Prefer
    /// [`TypedClient::apply`], which builds it from a typed object.
    Apply(Value),
}

impl PatchType {
    fn to_kube(&self) -> Patch<&Value> {
        match self {
            PatchType::Merge(v) => Patch::Merge(v),
            PatchType::Json(p) => Patch::Json(p.clone()),
            PatchType::StrategicMerge(v) => Patch::Strategic(v),
            PatchType::Apply(v) => Patch::Apply(v),
        }
    }
}

impl From<&CreateOptions> for PostParams {
    fn from(o: &CreateOptions) -> Self {
        PostParams { dry_run: o.dry_run, field_manager: o.field_manager.clone() }
    }
}

impl From<&UpdateOptions> for PostParams {
    fn from(o: &UpdateOptions) -> Self {
        PostParams { dry_run: o.dry_run, field_manager: o.field_manager.clone() }
    }
}

impl From<&GetOptions> for GetParams {
    fn from(o: &GetOptions) -> Self {
        GetParams { resource_version: o.resource_version.clone() }
    }
}

impl From<&ListOptions> for ListParams {
    fn from(o: &ListOptions) -> Self {
        ListParams {
            label_selector: o.label_selector.clone(),
            field_selector: o.field_selector.clone(),
            limit: o.limit,
            continue_token: o.continue_token.clone().filter(|c| !c.is_empty()),
            resource_version: o.resource_version.clone(),
            version_match: o.resource_version_match.map(ResourceVersionMatch::to_kube),
            ..ListParams::default()
        }
    }
}

impl From<&ListOptions> for WatchParams {
    fn from(o: &ListOptions) -> Self {
        WatchParams {
            label_selector: o.label_selector.clone(),
            field_selector: o.field_selector.clone(),
            timeout: o.timeout_seconds,
            bookmarks: o.allow_watch_bookmarks || o.send_initial_events,
            send_initial_events: o.send_initial_events,
        }
    }
}

impl From<&DeleteOptions> for DeleteParams {
    fn from(o: &DeleteOptions) -> Self {
        let preconditions =
            (o.preconditions_uid.is_some() || o.preconditions_resource_version.is_some()).then(|| Preconditions {
                resource_version: o.preconditions_resource_version.clone(),
                uid: o.preconditions_uid.clone(),
            });
        DeleteParams {
            dry_run: o.dry_run,
            grace_period_seconds: o.grace_period_seconds,
            propagation_policy: o.propagation_policy.clone(),
            preconditions,
        }
    }
}

impl PatchOptions {
    fn to_params(&self, patch: &PatchType) -> PatchParams {
        PatchParams {
            dry_run: self.dry_run,
            // Apply is the only patch type the API server accepts `force` for.
            force: self.force && matches!(patch, PatchType::Apply(_)),
            field_manager: self.field_manager.clone(),
            field_validation: self.field_validation.map(FieldValidation::to_kube),
        }
    }
}

/// The typed client of one kind in one namespace (or cluster-wide): what a
/// generated `FoosGetter::foos(namespace)` returns.
///
/// For a namespaced kind built without a namespace, list and watch span all
/// namespaces, and create uses the object's own `metadata.namespace`; the
/// by-name verbs and delete-collection need a namespace (the API server does
/// not delete a namespaced kind across namespaces: 405).
pub struct TypedClient<K> {
    client: Client,
    namespace: Option<String>,
    kind: std::marker::PhantomData<fn() -> K>,
}

impl<K: Object> Clone for TypedClient<K> {
    fn clone(&self) -> Self {
        Self { client: self.client.clone(), namespace: self.namespace.clone(), kind: std::marker::PhantomData }
    }
}

impl<K: Object> std::fmt::Debug for TypedClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedClient")
            .field("url", &K::url_path(&(), self.namespace.as_deref()))
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: Object> TypedClient<K> {
    /// A client for `K` in `namespace` (`None` or `""`: every namespace, for
    /// lists and watches); the namespace is ignored for cluster-scoped kinds.
    pub fn new(client: Client, namespace: Option<&str>) -> Self {
        // `""` is every namespace (client-go's `metav1.NamespaceAll`).
        let namespace = if K::NAMESPACED { namespace.filter(|n| !n.is_empty()).map(str::to_owned) } else { None };
        Self { client, namespace, kind: std::marker::PhantomData }
    }

    /// A kube `Api` of `K` over this client's connection and namespace, for
    /// anything this client does not cover. Built when asked for: a client
    /// that never needs one does not compile kube's `Api` code for `K`.
    pub fn api(&self) -> Api<K> {
        K::api(self.client.clone(), self.namespace.as_deref())
    }

    /// The namespace this client is bound to, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The kube client requests go through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    // The request builder to write `obj` through: ours, or for an unbound
    // client of a namespaced kind, one for the object's namespace.
    fn request_for(&self, obj: &K) -> kube::core::Request {
        match self.namespace_for(obj) {
            Some(ns) => kube::core::Request::new(K::url_path(&(), Some(&segment(ns)))),
            None => self.request(),
        }
    }

    // The object's own namespace, when an unbound client of a namespaced
    // kind writes it.
    fn namespace_for<'a>(&self, obj: &'a K) -> Option<&'a str> {
        match (&self.namespace, obj.meta().namespace.as_deref()) {
            (None, Some(ns)) if K::NAMESPACED && !ns.is_empty() => Some(ns),
            _ => None,
        }
    }

    fn name_of(obj: &K) -> Result<String> {
        match obj.meta().name.as_deref() {
            Some(name) if !name.is_empty() => Ok(name.to_owned()),
            _ => Err(Error::InvalidRequest(format!("{} has no metadata.name", K::kind(&())))),
        }
    }

    /// Creates `obj` (POST). `metadata.generateName` works as usual.
    pub async fn create(&self, obj: &K, opts: &CreateOptions) -> Result<K> {
        let body = serde_json::to_vec(obj)?;
        let request = self.request_for(obj).create(&opts.into(), body).map_err(build_error)?;
        self.send(request, "create", None, opts.field_validation).await
    }

    /// Replaces the object named by `obj.metadata.name` (PUT). A set
    /// `metadata.resourceVersion` makes it a compare-and-swap: a stale one
    /// fails with 409 Conflict. Changes to `status` are ignored when the kind
    /// has a status subresource.
    pub async fn update(&self, obj: &K, opts: &UpdateOptions) -> Result<K> {
        let name = Self::name_of(obj)?;
        let body = serde_json::to_vec(obj)?;
        let request = self.request_for(obj).replace(&segment(&name), &opts.into(), body).map_err(build_error)?;
        self.send(request, "replace", Some(&name), opts.field_validation).await
    }

    /// Replaces the status of the object named by `obj.metadata.name` (PUT
    /// `/status`); everything but `status` is ignored.
    pub async fn update_status(&self, obj: &K, opts: &UpdateOptions) -> Result<K> {
        let name = Self::name_of(obj)?;
        let body = serde_json::to_vec(obj)?;
        let request = self
            .request_for(obj)
            .replace_subresource("status", &segment(&name), &opts.into(), body)
            .map_err(build_error)?;
        self.send(request, "replace_status", Some(&name), opts.field_validation).await
    }

    // Sends a write of `K` (of the object `name`, but for a create) with its
    // `fieldValidation` (which kube's `PostParams` lacks) and reads the
    // answer as `K`.
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        verb: &'static str,
        name: Option<&str>,
        validation: Option<FieldValidation>,
    ) -> Result<K> {
        let request = with_field_validation(request, validation);
        self.call_json(request, verb, name).await
    }

    /// Sends `request`; a failed answer is the error client-go makes of it
    /// ([`Error::Api`] with the reason of the HTTP code when the body is
    /// not a `Status`). The future is [`checked_call`]'s, compiled once for
    /// every kind.
    fn call<'a>(
        &'a self,
        request: http::Request<Vec<u8>>,
        verb: &'static str,
        name: Option<&'a str>,
    ) -> impl Future<Output = Result<bytes::Bytes>> + Send + 'a {
        checked_call(&self.client, self.namespace.as_deref(), request, verb, K::group(&()), K::plural(&()), name)
    }

    async fn call_json<T: DeserializeOwned>(
        &self,
        request: http::Request<Vec<u8>>,
        verb: &'static str,
        name: Option<&str>,
    ) -> Result<T> {
        let body = self.call(request, verb, name).await?;
        Ok(decode_body(&body).map_err(kube::Error::SerdeError)?)
    }

    /// [`create`](Self::create) of an object handed over by value: the
    /// generated clients pass their copy with `apiVersion` and `kind` set.
    pub async fn create_owned(&self, obj: K, opts: &CreateOptions) -> Result<K> {
        self.create(&obj, opts).await
    }

    /// [`update`](Self::update) of an object handed over by value.
    pub async fn update_owned(&self, obj: K, opts: &UpdateOptions) -> Result<K> {
        self.update(&obj, opts).await
    }

    /// [`update_status`](Self::update_status) of an object handed over by
    /// value.
    pub async fn update_status_owned(&self, obj: K, opts: &UpdateOptions) -> Result<K> {
        self.update_status(&obj, opts).await
    }

    /// Deletes the object `name`. With finalizers present the object stays,
    /// marked with `deletionTimestamp`, until they are removed.
    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<()> {
        // The answer (the object, or a Status) is not decoded, as client-go
        // does not: an object of a newer version that does not decode into
        // `K` is deleted all the same.
        let request = self.request().delete(&segment(name), &opts.into()).map_err(build_error)?;
        self.call(request, "delete", Some(name)).await?;
        Ok(())
    }

    /// Deletes every object matching `list_opts` (its selectors, and its
    /// resource version, limit and timeout as client-go sends them).
    pub async fn delete_collection(&self, opts: &DeleteOptions, list_opts: &ListOptions) -> Result<()> {
        // The answer (the deleted objects, or a Status) is not decoded: the
        // items of a built-in or aggregated API server's list have no
        // `apiVersion`/`kind`, which kube's typed `delete_collection` needs.
        let request = self.request().delete_collection(&opts.into(), &list_opts.into()).map_err(build_error)?;
        // kube sends only the selectors.
        let request = with_query(
            request,
            &[
                ("resourceVersion", list_opts.resource_version.clone()),
                ("resourceVersionMatch", list_opts.resource_version_match.map(|m| m.as_str().to_owned())),
                ("limit", list_opts.limit.map(|l| l.to_string())),
                ("continue", list_opts.continue_token.clone().filter(|c| !c.is_empty())),
                ("timeoutSeconds", list_opts.timeout_seconds.map(|t| t.to_string())),
            ],
        );
        self.call(request, "delete_collection", None).await?;
        Ok(())
    }

    /// Reads the object `name`.
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<K> {
        let request = self.request().get(&segment(name), &opts.into()).map_err(build_error)?;
        self.call_json(request, "get", Some(name)).await
    }

    /// Lists one page: everything, or at most `limit` objects starting at
    /// `continue_token`; the next token is in `metadata.continue_`.
    pub async fn list(&self, opts: &ListOptions) -> Result<ObjectList<K>> {
        self.list_page(&opts.into()).await
    }

    /// One page, each item decoded on its own: items of a built-in or an
    /// aggregated API server's list carry no `apiVersion`/`kind`, which a
    /// Rust kind usually requires (kube's `Api::list` fails on them).
    async fn list_page(&self, params: &ListParams) -> Result<ObjectList<K>> {
        check_path(self.namespace.as_deref(), None)?;
        let page = list_raw(&self.client, self.request(), params, &K::group(&()), &K::plural(&())).await?;
        let items = page
            .items
            .iter()
            .map(|item| crate::object::from_json_filling_type_meta::<K>(item.get()))
            .collect::<std::result::Result<Vec<K>, _>>()
            .map_err(kube::Error::SerdeError)?;
        Ok(ObjectList { types: page.types, metadata: page.metadata, items })
    }

    /// Lists every matching object, following continue tokens page by page
    /// (`limit` is the page size, 500 when `None`, as client-go's pager).
    /// When a continue token expires midway (410 Expired: the server no
    /// longer has that snapshot), the objects are listed again in one
    /// unpaged list at the resource version asked for, as client-go's pager
    /// does (`FullListIfExpired`).
    pub async fn list_all(&self, opts: &ListOptions) -> Result<Vec<K>> {
        let requested: ListParams = opts.into();
        let mut params = ListParams { limit: Some(requested.limit.unwrap_or(DEFAULT_PAGE_SIZE)), ..requested.clone() };
        let mut items = Vec::new();
        loop {
            let page = match self.list_page(&params).await {
                Ok(page) => page,
                Err(err) if params.continue_token.is_some() && err.is_resource_expired() => {
                    let full = ListParams { limit: None, continue_token: None, ..requested };
                    return Ok(self.list_page(&full).await?.items);
                }
                Err(err) => return Err(err),
            };
            items.extend(page.items);
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                // A server answering a token with itself would page forever.
                Some(token) if params.continue_token.as_ref() == Some(&token) => {
                    return Err(Error::Kube(kube::Error::SerdeError(<serde_json::Error as serde::de::Error>::custom(
                        "the server answered a continue token with the same token",
                    ))));
                }
                Some(token) => {
                    // The server rejects a continue token together with a
                    // resourceVersion or a resourceVersionMatch: the token
                    // already pins the snapshot (client-go's pager does the
                    // same).
                    params.continue_token = Some(token);
                    params.resource_version = None;
                    params.version_match = None;
                }
                None => return Ok(items),
            }
        }
    }

    /// Watches for changes after `opts.resource_version` (or, when that is
    /// unset or `"0"`, replays the current objects as ADDED first). The
    /// stream ends when the server closes the watch (see `timeout_seconds`);
    /// an expired version arrives as a `WatchEvent::Error` with code 410.
    pub async fn watch(&self, opts: &ListOptions) -> Result<BoxStream<'static, Result<WatchEvent<K>>>> {
        check_path(self.namespace.as_deref(), None)?;
        let events = watch_raw(&self.client, self.request(), opts, &K::group(&()), &K::plural(&())).await?;
        Ok(events.map(|event| event.and_then(typed_event::<K>)).boxed())
    }

    /// Patches the object `name`.
    pub async fn patch(&self, name: &str, patch: &PatchType, opts: &PatchOptions) -> Result<K> {
        let request =
            self.request().patch(&segment(name), &opts.to_params(patch), &patch.to_kube()).map_err(build_error)?;
        self.call_json(request, "patch", Some(name)).await
    }

    /// Patches the status of the object `name` (PATCH `/status`).
    pub async fn patch_status(&self, name: &str, patch: &PatchType, opts: &PatchOptions) -> Result<K> {
        let request = self
            .request()
            .patch_subresource("status", &segment(name), &opts.to_params(patch), &patch.to_kube())
            .map_err(build_error)?;
        self.call_json(request, "patch_status", Some(name)).await
    }

    /// Server-side applies `obj` as `name`: sends it as an apply patch with
    /// `apiVersion` and `kind` set and `managedFields` removed. Every field
    /// present in the serialized object is claimed by the field manager; a
    /// set `metadata.resourceVersion` acts as a precondition.
    pub async fn apply(&self, name: &str, obj: &K, opts: &ApplyOptions) -> Result<K> {
        let (params, body) = Self::apply_request(name, obj, opts)?;
        let request =
            self.request_for(obj).patch(&segment(name), &params, &Patch::Apply(&body)).map_err(build_error)?;
        self.call_json(request, "apply", Some(name)).await
    }

    /// Server-side applies the status of `obj` (apply patch to `/status`);
    /// only `status` fields are taken.
    pub async fn apply_status(&self, name: &str, obj: &K, opts: &ApplyOptions) -> Result<K> {
        let (params, body) = Self::apply_request(name, obj, opts)?;
        let request = self
            .request_for(obj)
            .patch_subresource("status", &segment(name), &params, &Patch::Apply(&body))
            .map_err(build_error)?;
        self.call_json(request, "apply_status", Some(name)).await
    }

    /// Server-side applies the apply configuration `ac` (client-go's typed
    /// `Apply`): the field manager claims exactly the fields `ac` sets. The
    /// name comes from `ac`'s metadata; a namespace there must be the
    /// client's. A conflict with another manager fails with
    /// [`Error::apply_conflicts`] naming it, unless `opts.force` is set.
    pub async fn apply_configuration<A: ApplyConfiguration<Object = K>>(
        &self,
        ac: &A,
        opts: &ApplyOptions,
    ) -> Result<K> {
        let (request, name, params, body) = self.configuration_request(ac, opts)?;
        let request = request.patch(&segment(&name), &params, &Patch::Apply(&body)).map_err(build_error)?;
        self.call_json(request, "apply", Some(&name)).await
    }

    /// Server-side applies the status in `ac` through the status subresource
    /// (client-go's `ApplyStatus`); fields outside `status` are ignored by
    /// the server.
    pub async fn apply_configuration_status<A: ApplyConfiguration<Object = K>>(
        &self,
        ac: &A,
        opts: &ApplyOptions,
    ) -> Result<K> {
        let (request, name, params, body) = self.configuration_request(ac, opts)?;
        let request =
            request.patch_subresource("status", &segment(&name), &params, &Patch::Apply(&body)).map_err(build_error)?;
        self.call_json(request, "apply_status", Some(&name)).await
    }

    fn configuration_request<A: ApplyConfiguration<Object = K>>(
        &self,
        ac: &A,
        opts: &ApplyOptions,
    ) -> Result<(kube::core::Request, String, PatchParams, Value)> {
        let kind = K::kind(&());
        let Some(name) = ac.name().map(str::to_owned) else {
            return Err(Error::InvalidRequest(format!("the {kind} apply configuration has no metadata.name")));
        };
        let api = match (self.namespace.as_deref(), ac.namespace()) {
            (Some(client), Some(own)) if K::NAMESPACED && client != own => {
                return Err(Error::InvalidRequest(format!(
                    "the {kind} apply configuration is for namespace {own:?}, the client for {client:?}"
                )));
            }
            (None, Some(own)) if K::NAMESPACED => kube::core::Request::new(K::url_path(&(), Some(&segment(own)))),
            _ => self.request(),
        };
        let params = opts.to_params()?;
        let mut body = serde_json::to_value(ac)?;
        if let Some(map) = body.as_object_mut() {
            map.insert("apiVersion".to_owned(), Value::String(K::api_version(&()).into_owned()));
            map.insert("kind".to_owned(), Value::String(kind.into_owned()));
        }
        Ok((api, name, params, body))
    }

    fn apply_request(name: &str, obj: &K, opts: &ApplyOptions) -> Result<(PatchParams, Value)> {
        Ok((opts.to_params()?, apply_body(name, obj)?))
    }

    /// Reads subresource `subresource` (e.g. `scale`) of the object `name`.
    pub async fn get_subresource<S: DeserializeOwned>(&self, subresource: &str, name: &str) -> Result<S> {
        let req =
            self.request().get_subresource(&subresource_path(subresource), &segment(name)).map_err(build_error)?;
        self.call_json(req, "get_subresource", Some(name)).await
    }

    /// Replaces subresource `subresource` of the object `name` (PUT).
    pub async fn update_subresource<S: Serialize + DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        value: &S,
        opts: &UpdateOptions,
    ) -> Result<S> {
        let body = serde_json::to_vec(value)?;
        let req = self
            .request()
            .replace_subresource(&subresource_path(subresource), &segment(name), &opts.into(), body)
            .map_err(build_error)?;
        self.call_json(with_field_validation(req, opts.field_validation), "replace_subresource", Some(name)).await
    }

    /// Patches subresource `subresource` (e.g. `scale`) of the object
    /// `name` (client-go's `Patch(.., subresource)`).
    pub async fn patch_subresource<S: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        patch: &PatchType,
        opts: &PatchOptions,
    ) -> Result<S> {
        let request = self
            .request()
            .patch_subresource(&subresource_path(subresource), &segment(name), &opts.to_params(patch), &patch.to_kube())
            .map_err(build_error)?;
        self.call_json(request, "patch_subresource", Some(name)).await
    }

    /// Creates subresource `subresource` of the object `name` (POST), e.g.
    /// an `eviction` or a `token` request; the response type may differ from
    /// the input.
    pub async fn create_subresource<I: Serialize, S: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        value: &I,
        opts: &CreateOptions,
    ) -> Result<S> {
        let body = serde_json::to_vec(value)?;
        let req = self
            .request()
            .create_subresource(&subresource_path(subresource), &segment(name), &opts.into(), body)
            .map_err(build_error)?;
        self.call_json(with_field_validation(req, opts.field_validation), "create_subresource", Some(name)).await
    }

    fn request(&self) -> kube::core::Request {
        kube::core::Request::new(K::url_path(&(), self.namespace.as_deref().map(segment).as_deref()))
    }
}

/// A subresource's path (`scale`, or several segments such as
/// `proxy/healthz`, as client-go's `SubResource(..)` takes them), each
/// segment percent-encoded.
fn subresource_path(subresource: &str) -> Cow<'_, str> {
    if !subresource.contains('/') {
        return segment(subresource);
    }
    Cow::Owned(subresource.split('/').map(segment).collect::<Vec<_>>().join("/"))
}

/// `text` percent-encoded as one segment of a URL path, as client-go's
/// `rest.Request` writes names and namespaces (the rules of Go's
/// `URL.EscapedPath`, with `/` escaped too): kube pastes them into the URL
/// as they are, where a `#` or `?` in a name (legal in RBAC kinds' names)
/// would cut the path and address another object (`team#x` → `team`),
/// without the query.
fn segment(text: &str) -> Cow<'_, str> {
    let keep = |b: u8| b.is_ascii_alphanumeric() || b"-_.~$&+,:;=@".contains(&b);
    if text.bytes().all(keep) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for b in text.bytes() {
        if keep(b) {
            escaped.push(char::from(b));
        } else {
            escaped.push_str(&format!("%{b:02X}"));
        }
    }
    Cow::Owned(escaped)
}

/// client-go's checks of a name and namespace before they go into a URL
/// path (`rest.Request.Name`, `Namespace`): no `/` or `%`, not `.` or
/// `..`. `get("web/scale")` would otherwise read a subresource.
fn check_path(namespace: Option<&str>, name: Option<&str>) -> Result<()> {
    for (what, segment) in [("namespace", namespace), ("resource name", name)] {
        if let Some(problem) = segment.and_then(path_segment_problem) {
            let segment = crate::gofmt::go_quote(segment.unwrap_or_default());
            return Err(Error::InvalidRequest(format!("invalid {what} {segment}: [{problem}]")));
        }
    }
    Ok(())
}

/// [`check_path`], then [`call`]: a typed client's request of any kind.
async fn checked_call(
    client: &Client,
    namespace: Option<&str>,
    request: http::Request<Vec<u8>>,
    verb: &'static str,
    group: Cow<'static, str>,
    resource: Cow<'static, str>,
    name: Option<&str>,
) -> Result<bytes::Bytes> {
    check_path(namespace, name)?;
    call(client, request, verb, &group, &resource, name).await
}

/// apimachinery's `IsValidPathSegmentName`: what is wrong with `segment` as
/// one segment of a URL path.
fn path_segment_problem(segment: &str) -> Option<String> {
    if segment == "." || segment == ".." {
        return Some(format!("may not be '{segment}'"));
    }
    ["/", "%"].iter().find(|bad| segment.contains(**bad)).map(|bad| format!("may not contain '{bad}'"))
}

fn build_error(err: kube::core::request::Error) -> Error {
    Error::Kube(kube::Error::BuildRequest(err))
}

/// Adds `fieldValidation` to a create or update, which kube's `PostParams`
/// cannot carry.
fn with_field_validation(
    request: http::Request<Vec<u8>>,
    validation: Option<FieldValidation>,
) -> http::Request<Vec<u8>> {
    with_query(request, &[("fieldValidation", validation.map(|v| v.as_str().to_owned()))])
}

/// `request` with the given query parameters added (those with a value),
/// percent-encoded.
fn with_query(mut request: http::Request<Vec<u8>>, params: &[(&str, Option<String>)]) -> http::Request<Vec<u8>> {
    let mut uri = request.uri().to_string();
    let before = uri.len();
    for (name, value) in params {
        let Some(value) = value else { continue };
        uri.push(if uri.contains('?') { '&' } else { '?' });
        uri.push_str(name);
        uri.push('=');
        for byte in value.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                uri.push(char::from(byte));
            } else {
                uri.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    if uri.len() != before
        && let Ok(parsed) = uri.parse()
    {
        *request.uri_mut() = parsed;
    }
    request
}

/// An answer's body as `T`, read as text: the list items and watch objects
/// of a kind are decoded from text too, so each kind compiles one
/// deserializer (`from_slice` here would compile a second, over bytes).
/// A body that is not UTF-8 fails, as a list page with such an item does,
/// with serde_json's error reading it into a JSON value; `from_slice`
/// skips a field `T` does not have without checking its text.
fn decode_body<T: DeserializeOwned>(body: &[u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => Err(not_utf8(body)),
    }
}

/// The error of a body that is not UTF-8: serde_json's reading it as bytes
/// (into a JSON value, which checks every string; compiled once, not per
/// kind).
fn not_utf8(body: &[u8]) -> serde_json::Error {
    match serde_json::from_slice::<Value>(body) {
        Err(err) => err,
        Ok(_) => <serde_json::Error as serde::de::Error>::custom("the body is not UTF-8"),
    }
}

/// One list page with its items as JSON text, for every kind: the request
/// and the page's decoding are compiled once here, not once per kind.
async fn list_raw(
    client: &Client,
    request: kube::core::Request,
    params: &ListParams,
    group: &str,
    resource: &str,
) -> Result<ObjectList<Box<RawValue>>> {
    let request = cached_read_with_limit(request.list(params).map_err(build_error)?, params);
    let body = call(client, request, "list", group, resource, None).await?;
    Ok(serde_json::from_slice(&body).map_err(kube::Error::SerdeError)?)
}

/// Sends `request` (its verb recorded as kube's `Api` records it) and
/// returns the body of a successful answer; an answer of 400 or above is
/// the error client-go's `rest.Result` makes of it
/// ([`crate::error::from_response`]): kube's own handling would read any
/// JSON body, a proxy's too, as a `Status` with code 0.
async fn call(
    client: &Client,
    mut request: http::Request<Vec<u8>>,
    verb: &'static str,
    group: &str,
    resource: &str,
    name: Option<&str>,
) -> Result<bytes::Bytes> {
    request.extensions_mut().insert(verb);
    let method = request.method().clone();
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let (parts, body) = response.into_parts();
    let body = body.collect_bytes().await?;
    let code = parts.status.as_u16();
    // client-go: anything but 200 to 206 is an error (a redirect too), and
    // so is a Status of Failure in a 2xx answer.
    if !(200..=206).contains(&code) {
        let target = crate::error::Target { method: &method, group, resource, name };
        return Err(crate::error::from_response(target, code, &parts.headers, &body));
    }
    if let Some(failure) = crate::error::failure_status(code, &body) {
        return Err(failure);
    }
    Ok(body)
}

/// kube leaves `resourceVersion=0` out of a list with a `limit`, which makes
/// it a consistent read from etcd; client-go sends it, and the API server
/// answers from its cache. Sent here as client-go does.
fn cached_read_with_limit(mut request: http::Request<Vec<u8>>, params: &ListParams) -> http::Request<Vec<u8>> {
    if params.resource_version.as_deref() != Some("0") || params.limit.is_none() || params.continue_token.is_some() {
        return request;
    }
    let mut uri = request.uri().to_string();
    uri.push_str(if uri.contains('?') { "&resourceVersion=0" } else { "?resourceVersion=0" });
    match params.version_match {
        Some(kube::api::VersionMatch::NotOlderThan) => uri.push_str("&resourceVersionMatch=NotOlderThan"),
        Some(kube::api::VersionMatch::Exact) => uri.push_str("&resourceVersionMatch=Exact"),
        None => {}
    }
    if let Ok(parsed) = uri.parse() {
        *request.uri_mut() = parsed;
    }
    request
}

/// A watch whose objects are JSON text, for every kind: the request, its
/// failure and the event stream (line framing, resumable EOFs, Status lines
/// as errors, [`watch_events`]) are compiled once here; a kind only decodes
/// its objects ([`typed_event`]).
async fn watch_raw(
    client: &Client,
    request: kube::core::Request,
    opts: &ListOptions,
    group: &str,
    resource: &str,
) -> Result<BoxStream<'static, Result<WatchEvent<Box<RawValue>>>>> {
    let version = opts.resource_version.clone().unwrap_or_default();
    let mut request = request.watch(&opts.into(), &version).map_err(build_error)?;
    request.extensions_mut().insert("watch");
    // As kube's `request_events`: the API server gzips a watch one member
    // per event, and the client's decompression reads only the first.
    request.headers_mut().entry(http::header::ACCEPT_ENCODING).or_insert(http::HeaderValue::from_static("identity"));
    let method = request.method().clone();
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let (parts, body) = response.into_parts();
    let code = parts.status.as_u16();
    // A watch that does not start fails as any other request does
    // (`call`): kube's `request_events` read a body that is no `Status` as
    // a Status of code 0 and dropped `Retry-After`.
    if !(200..=206).contains(&code) {
        let body = body.collect_bytes().await?;
        let target = crate::error::Target { method: &method, group, resource, name: None };
        return Err(crate::error::from_response(target, code, &parts.headers, &body));
    }
    Ok(watch_events(body))
}

/// The events of a watch's body, one JSON object per line (as kube's
/// `request_events` reads them): a line that is a `Status` instead is that
/// error; the body cut off mid-stream (an unexpected EOF) ends the events,
/// to be watched again from the last version. A last line without its
/// newline is read too, unless it is JSON cut short.
fn watch_events(body: kube::client::Body) -> BoxStream<'static, Result<WatchEvent<Box<RawValue>>>> {
    struct Lines {
        body: std::pin::Pin<Box<kube::client::Body>>,
        buf: Vec<u8>,
        /// How much of `buf` is known to hold no newline.
        scanned: usize,
        done: bool,
    }
    let lines = Lines { body: Box::pin(body), buf: Vec::new(), scanned: 0, done: false };
    futures::stream::unfold(lines, |mut lines| async move {
        loop {
            if let Some(at) = lines.buf.get(lines.scanned..).and_then(|rest| rest.iter().position(|&b| b == b'\n')) {
                let line: Vec<u8> = lines.buf.drain(..=lines.scanned + at).collect();
                lines.scanned = 0;
                if line.trim_ascii().is_empty() {
                    continue;
                }
                return Some((watch_line(&line), lines));
            }
            lines.scanned = lines.buf.len();
            if lines.done {
                let last = std::mem::take(&mut lines.buf);
                lines.scanned = 0;
                if last.trim_ascii().is_empty() {
                    return None;
                }
                return match watch_line(&last) {
                    Err(Error::Kube(kube::Error::SerdeError(err))) if err.is_eof() => None,
                    event => Some((event, lines)),
                };
            }
            match std::future::poll_fn(|cx| http_body::Body::poll_frame(lines.body.as_mut(), cx)).await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        lines.buf.extend_from_slice(&data);
                    }
                }
                Some(Err(err)) => {
                    lines.done = true;
                    lines.buf = Vec::new();
                    lines.scanned = 0;
                    if !cut_off(&err) {
                        return Some((Err(Error::Kube(err)), lines));
                    }
                    tracing::debug!("the watch was cut off: {err}");
                }
                None => lines.done = true,
            }
        }
    })
    .boxed()
}

/// One line of a watch: an event, or the `Status` of a failure.
fn watch_line(line: &[u8]) -> Result<WatchEvent<Box<RawValue>>> {
    serde_json::from_slice::<WatchEvent<Box<RawValue>>>(line).map_err(|err| {
        match serde_json::from_slice::<kube::core::Status>(line) {
            Ok(status) if !err.is_eof() => Error::from(kube::Error::Api(status.boxed())),
            _ => Error::Kube(kube::Error::SerdeError(err)),
        }
    })
}

/// Whether reading a watch's body failed because the connection ended
/// mid-stream (an unexpected EOF, also as the chunked decoder words it).
/// Looks at most 16 errors down the chain, as kube does, so that a chain
/// that loops cannot hold the watch up.
fn cut_off(err: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    for _ in 0..16 {
        let Some(e) = source else { break };
        if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
            || e.to_string().contains("unexpected EOF")
        {
            return true;
        }
        source = e.source();
    }
    false
}

/// A watch event of `K` from one with the object as JSON text.
fn typed_event<K: Object>(event: WatchEvent<Box<RawValue>>) -> Result<WatchEvent<K>> {
    let decode = |raw: Box<RawValue>| -> Result<K> {
        crate::object::from_json_filling_type_meta::<K>(raw.get()).map_err(|e| Error::from(kube::Error::SerdeError(e)))
    };
    Ok(match event {
        WatchEvent::Added(obj) => WatchEvent::Added(decode(obj)?),
        WatchEvent::Modified(obj) => WatchEvent::Modified(decode(obj)?),
        WatchEvent::Deleted(obj) => WatchEvent::Deleted(decode(obj)?),
        WatchEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark),
        WatchEvent::Error(status) => WatchEvent::Error(status),
    })
}

/// The body of a server-side apply of `obj` as `name`: the serialized object
/// with `apiVersion`, `kind` and `metadata.name` set, without the
/// server-owned `managedFields` (the API server rejects apply bodies
/// carrying them).
pub fn apply_body<K: Object>(name: &str, obj: &K) -> Result<Value> {
    let mut body = crate::object::to_json_value(obj)?;
    let Some(map) = body.as_object_mut() else {
        return Err(Error::InvalidRequest(format!("{} does not serialize to a JSON object", K::kind(&()))));
    };
    map.insert("apiVersion".to_owned(), Value::String(K::api_version(&()).into_owned()));
    map.insert("kind".to_owned(), Value::String(K::kind(&()).into_owned()));
    let metadata = map.entry("metadata").or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Some(meta) = metadata.as_object_mut() {
        meta.remove("managedFields");
        let has_name = meta.get("name").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
        if !has_name {
            meta.insert("name".to_owned(), Value::String(name.to_owned()));
        }
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    #[tokio::test]
    async fn list_all_stops_when_the_server_repeats_its_continue_token() {
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        server.prepend_reactor("list", "configmaps", |_| {
            Some(Ok(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMapList",
                "metadata": {"continue": "again", "resourceVersion": "1"},
                "items": [],
            })))
        });
        let client = TypedClient::<ConfigMap>::new(server.client(), Some("default"));
        let listed = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            client.list_all(&ListOptions { limit: Some(1), ..Default::default() }),
        )
        .await
        .expect("list_all pages forever");
        let err = listed.expect_err("a repeated token is an error");
        assert!(err.to_string().contains("the same token"), "{err}");
    }

    /// Names (and namespaces and subresources) go into the URL
    /// percent-encoded, as client-go's: `#` and `?` are legal in an RBAC
    /// kind's name, and pasted as they are they cut the path, so that the
    /// request reached `team` without its query (a dry-run patch became a
    /// real one).
    #[tokio::test]
    async fn names_are_escaped_as_one_path_segment() {
        use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let query = req.uri().query().unwrap_or_default().split('&').filter(|p| !p.is_empty()).collect::<Vec<_>>();
            record.lock().unwrap().push(format!("{} {}", req.uri().path(), query.join("&")));
            async move {
                let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#;
                Ok::<_, std::convert::Infallible>(
                    http::Response::builder()
                        .status(404)
                        .header(http::header::CONTENT_TYPE, "application/json")
                        .body(kube::client::Body::from(status.as_bytes().to_vec()))
                        .unwrap(),
                )
            }
        });
        let client = Client::new(service, "default");
        let roles = TypedClient::<ClusterRole>::new(client.clone(), None);
        let dry_run = PatchOptions { dry_run: true, ..Default::default() };
        let merge = PatchType::Merge(serde_json::json!({"metadata": {"labels": {"a": "b"}}}));
        assert!(roles.patch("team#x", &merge, &dry_run).await.unwrap_err().is_not_found());
        assert!(roles.get("team?x", &GetOptions::default()).await.unwrap_err().is_not_found());
        assert!(roles.delete("a b", &DeleteOptions::default()).await.unwrap_err().is_not_found());
        let scale = roles.get_subresource::<serde_json::Value>("sc#ale", "ü").await.unwrap_err();
        assert!(scale.is_not_found());
        let proxied = roles.get_subresource::<serde_json::Value>("proxy/a b", "r").await.unwrap_err();
        assert!(proxied.is_not_found());
        let namespaced = TypedClient::<Role>::new(client, Some("ns#1"));
        assert!(namespaced.get("r", &GetOptions::default()).await.unwrap_err().is_not_found());
        let seen = seen.lock().unwrap().clone();
        let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
        assert_eq!(
            seen,
            [
                format!("{roles}/team%23x dryRun=All"),
                format!("{roles}/team%3Fx "),
                format!("{roles}/a%20b "),
                format!("{roles}/%C3%BC/sc%23ale "),
                format!("{roles}/r/proxy/a%20b "),
                "/apis/rbac.authorization.k8s.io/v1/namespaces/ns%231/roles/r ".to_owned(),
            ]
        );
    }

    /// A watch that does not start is the error any other request makes of
    /// the answer: kube's `request_events` made a JSON body that is no
    /// `Status` a Status of code 0 and dropped `Retry-After`.
    #[tokio::test]
    async fn a_watch_that_does_not_start_fails_as_other_requests_do() {
        let watch = |client| async move {
            match TypedClient::<ConfigMap>::new(client, Some("default")).watch(&ListOptions::default()).await {
                Ok(_) => panic!("the watch started"),
                Err(err) => err,
            }
        };
        let err = watch(answering(403, Some("application/json"), None, r#"{"error": "denied by the proxy"}"#)).await;
        assert!(err.is_forbidden(), "{err:?}");
        assert_eq!(err.code(), Some(403));
        let err = watch(answering(429, Some("text/plain"), Some("7"), "slow down")).await;
        assert_eq!((err.code(), err.suggests_client_delay()), (Some(429), Some(7)), "{err:?}");
    }

    /// A watch's body is read line by line: events, a bare `Status` as its
    /// error, blank lines skipped, a partial last line dropped and a whole
    /// one read.
    #[tokio::test]
    async fn watch_events_are_read_line_by_line() {
        let body = concat!(
            r#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}}"#,
            "\n\n",
            r#"{"type":"BOOKMARK","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"9"}}}"#,
            "\n",
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","code":500}"#,
            "\n",
            r#"{"type":"ADDED","obj"#,
        );
        let client =
            TypedClient::<ConfigMap>::new(answering(200, Some("application/json"), None, body), Some("default"));
        let events: Vec<_> = client.watch(&ListOptions::default()).await.unwrap().collect().await;
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(matches!(&events[0], Ok(WatchEvent::Added(cm)) if cm.metadata.name.as_deref() == Some("a")));
        assert!(matches!(&events[1], Ok(WatchEvent::Bookmark(b)) if b.metadata.resource_version == "9"));
        assert_eq!(events[2].as_ref().unwrap_err().code(), Some(500));

        // A complete last line without its newline is an event.
        let body = r#"{"type":"DELETED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}}"#;
        let client =
            TypedClient::<ConfigMap>::new(answering(200, Some("application/json"), None, body), Some("default"));
        let events: Vec<_> = client.watch(&ListOptions::default()).await.unwrap().collect().await;
        assert!(matches!(&events[..], [Ok(WatchEvent::Deleted(cm))] if cm.metadata.name.as_deref() == Some("b")));
    }

    /// A kube client whose every request is answered with `code`, an
    /// optional content type and `Retry-After`, and `body`.
    fn answering(
        code: u16,
        content_type: Option<&'static str>,
        retry_after: Option<&'static str>,
        body: &'static str,
    ) -> Client {
        let service = tower::service_fn(move |_: http::Request<kube::client::Body>| async move {
            let mut response = http::Response::builder().status(code);
            if let Some(t) = content_type {
                response = response.header(http::header::CONTENT_TYPE, t);
            }
            if let Some(r) = retry_after {
                response = response.header(http::header::RETRY_AFTER, r);
            }
            Ok::<_, std::convert::Infallible>(
                response.body(kube::client::Body::from(body.as_bytes().to_vec())).unwrap(),
            )
        });
        Client::new(service, "default")
    }

    /// Failed answers are errors as client-go makes them: a body that is
    /// no `Status` (a proxy's JSON, HTML or text) is an error of the HTTP
    /// code with the reason apimachinery gives it, not a Status of code 0.
    #[tokio::test]
    async fn failed_answers_are_errors_as_client_go_makes_them() {
        let configmaps = |client| TypedClient::<ConfigMap>::new(client, Some("default"));
        let get = |client| async move { configmaps(client).get("a", &GetOptions::default()).await.unwrap_err() };

        // JSON that is not a Status: the code decides, the body is "unknown".
        let err = get(answering(404, Some("application/json"), None, r#"{"error": "no route"}"#)).await;
        assert!(err.is_not_found(), "{err:?}");
        assert_eq!(err.code(), Some(404));
        assert_eq!(
            err.status().unwrap().message,
            "the server could not find the requested resource (get configmaps a)"
        );
        let cause = &err.causes()[0];
        assert_eq!((cause.reason.as_str(), cause.message.as_str()), ("UnexpectedServerResponse", "unknown"));

        // Text is kept as the cause; a 5xx without a reason of its own is an
        // internal error quoting it.
        let err = get(answering(502, None, None, "bad gateway\n")).await;
        assert!(err.is_internal_error(), "{err:?}");
        assert_eq!(
            err.status().unwrap().message,
            "an error on the server (\"bad gateway\") has prevented the request from succeeding (get configmaps a)"
        );
        assert_eq!(err.causes()[0].message, "bad gateway");

        // Retry-After is the suggested delay of a 429.
        let err = configmaps(answering(429, Some("text/plain; charset=utf-8"), Some("7"), "slow down"))
            .list(&ListOptions::default())
            .await
            .unwrap_err();
        assert!(err.is_too_many_requests(), "{err:?}");
        assert_eq!(err.suggests_client_delay(), Some(7));
        assert!(err.status().unwrap().message.ends_with("(get configmaps)"), "{err:?}");

        // A 409 is AlreadyExists for a create, Conflict otherwise.
        let cm =
            ConfigMap { metadata: ObjectMeta { name: Some("a".into()), ..Default::default() }, ..Default::default() };
        let html = || answering(409, Some("text/html"), None, "<html>conflict</html>");
        let err = configmaps(html()).create(&cm, &CreateOptions::default()).await.unwrap_err();
        assert!(err.is_already_exists() && !err.is_conflict(), "{err:?}");
        let err = configmaps(html()).update(&cm, &UpdateOptions::default()).await.unwrap_err();
        assert!(err.is_conflict() && !err.is_already_exists(), "{err:?}");
        assert!(err.status().unwrap().message.ends_with("(put configmaps a)"), "{err:?}");

        // A Status is the error as sent; the answer's code fills a missing one.
        let status = r#"{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                         "message": "configmaps \"a\" not found", "details": {"name": "a", "kind": "configmaps"}}"#;
        let err = get(answering(404, Some("application/json"), None, status)).await;
        assert_eq!((err.code(), err.reason()), (Some(404), Some("NotFound")));
        assert_eq!(err.status().unwrap().message, "configmaps \"a\" not found");

        // A group's resources are named with it.
        let err = TypedClient::<k8s_openapi::api::apps::v1::Deployment>::new(answering(404, None, None, ""), Some("x"))
            .delete("web", &DeleteOptions::default())
            .await
            .unwrap_err();
        assert!(err.status().unwrap().message.ends_with("(delete deployments.apps web)"), "{err:?}");

        // A Status of Failure in a 2xx answer is the error it says; a
        // redirect is an error too, not a body to decode.
        let err = get(answering(200, Some("application/json"), None, status)).await;
        assert_eq!((err.code(), err.reason()), (Some(200), Some("NotFound")), "{err:?}");
        let err = get(answering(302, None, None, "")).await;
        assert_eq!(err.code(), Some(302), "{err:?}");
        assert!(err.status().unwrap().message.starts_with("the server responded with the status code 302"), "{err:?}");
    }

    /// What client-go sends: `""` is every namespace, a cached read keeps
    /// `resourceVersion=0` with a `limit`, an empty continue token is not
    /// sent, a streaming watch asks for bookmarks; a delete succeeds whatever
    /// the answer's body.
    #[tokio::test]
    async fn requests_are_sent_as_client_go_sends_them() {
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        let everywhere = TypedClient::<ConfigMap>::new(server.client(), Some(""));
        assert_eq!(everywhere.namespace(), None);
        everywhere
            .list(&ListOptions {
                resource_version: Some("0".into()),
                limit: Some(5),
                continue_token: Some(String::new()),
                resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
                ..Default::default()
            })
            .await
            .unwrap();
        let action = server.actions().pop().unwrap();
        assert_eq!((action.verb.as_str(), action.namespace.as_deref()), ("list", None));
        let param = |k: &str| action.params.get(k).map(String::as_str);
        assert_eq!(param("resourceVersion"), Some("0"));
        assert_eq!(param("resourceVersionMatch"), Some("NotOlderThan"));
        assert_eq!(param("limit"), Some("5"));
        assert_eq!(param("continue"), None);

        drop(everywhere.watch(&ListOptions { send_initial_events: true, ..Default::default() }).await.unwrap());
        let action = server.actions().pop().unwrap();
        assert_eq!(action.params.get("sendInitialEvents").map(String::as_str), Some("true"));
        assert_eq!(action.params.get("allowWatchBookmarks").map(String::as_str), Some("true"));

        server.prepend_reactor("delete", "configmaps", |_| {
            Some(Ok(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": 5}})))
        });
        TypedClient::<ConfigMap>::new(server.client(), Some("default"))
            .delete("a", &DeleteOptions::default())
            .await
            .expect("an answer that does not decode is no failure of the delete");
    }

    /// A fake server holding the ConfigMaps a, b and c in `default`, and a
    /// client for them.
    async fn three_config_maps() -> (crate::testing::FakeApiServer, TypedClient<ConfigMap>) {
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        let client = TypedClient::<ConfigMap>::new(server.client(), Some("default"));
        for name in ["a", "b", "c"] {
            let cm = ConfigMap {
                metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
                ..Default::default()
            };
            client.create(&cm, &CreateOptions::default()).await.unwrap();
        }
        (server, client)
    }

    /// Later pages carry the continue token alone: a resourceVersionMatch
    /// left from the first page is refused without a resourceVersion.
    #[tokio::test]
    async fn list_all_sends_later_pages_without_the_version_match() {
        let (server, client) = three_config_maps().await;
        let version = server.resource_version().to_string();
        let all = client
            .list_all(&ListOptions {
                limit: Some(1),
                resource_version: Some(version),
                resource_version_match: Some(ResourceVersionMatch::Exact),
                ..Default::default()
            })
            .await
            .expect("every page is listed");
        assert_eq!(all.len(), 3);
        let pages: Vec<_> = server.actions().into_iter().filter(|a| a.verb == "list").collect();
        assert_eq!(pages.len(), 3);
        assert_eq!(pages[0].params.get("resourceVersionMatch").map(String::as_str), Some("Exact"));
        assert!(pages[1..].iter().all(|p| !p.params.contains_key("resourceVersionMatch")));
    }

    /// A continue token that expired midway is answered with one full list,
    /// as client-go's pager answers it.
    #[tokio::test]
    async fn list_all_lists_in_full_when_a_continue_token_expires() {
        let (server, client) = three_config_maps().await;
        let expired = kube::core::Status {
            code: 410,
            reason: "Expired".into(),
            message: "The provided continue parameter is too old".into(),
            ..Default::default()
        };
        server.prepend_reactor("list", "configmaps", move |action| {
            action.params.contains_key("continue").then(|| Err(Box::new(expired.clone())))
        });
        let opts = ListOptions {
            limit: Some(1),
            resource_version: Some("0".into()),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..Default::default()
        };
        let all = client.list_all(&opts).await.unwrap();
        let names: Vec<_> = all.iter().filter_map(|cm| cm.metadata.name.as_deref()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let lists: Vec<_> = server.actions().into_iter().filter(|a| a.verb == "list").collect();
        assert_eq!(lists.len(), 3, "first page, expired second page, full list");
        assert!(!lists[2].params.contains_key("limit") && !lists[2].params.contains_key("continue"));
        assert_eq!(
            (lists[2].params.get("resourceVersion"), lists[2].params.get("resourceVersionMatch")),
            (Some(&"0".to_owned()), Some(&"NotOlderThan".to_owned())),
            "the full list reads at the version asked for, as client-go's pager"
        );

        // Without a limit, pages of 500.
        server.clear_actions();
        server.clear_reactors();
        assert_eq!(client.list_all(&ListOptions::default()).await.unwrap().len(), 3);
        let lists: Vec<_> = server.actions().into_iter().filter(|a| a.verb == "list").collect();
        assert_eq!(lists[0].params.get("limit").map(String::as_str), Some("500"));

        // Without a continue token, a 410 is the caller's to handle.
        server.clear_reactors();
        server.prepend_reactor("list", "configmaps", |_| {
            Some(Err(Box::new(kube::core::Status { code: 410, reason: "Expired".into(), ..Default::default() })))
        });
        let err = client.list_all(&ListOptions { limit: Some(1), ..Default::default() }).await.unwrap_err();
        assert!(err.is_resource_expired(), "{err:?}");
    }

    /// `delete_collection` sends the list options client-go sends, not only
    /// the selectors (kube's).
    #[tokio::test]
    async fn delete_collection_sends_the_list_options() {
        let (server, client) = three_config_maps().await;
        server.clear_actions();
        let list_opts = ListOptions {
            label_selector: Some("app=web".into()),
            resource_version: Some("0".into()),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            limit: Some(10),
            timeout_seconds: Some(300),
            continue_token: Some("a b=".into()),
            ..Default::default()
        };
        let _ = client.delete_collection(&DeleteOptions::default(), &list_opts).await;
        let action = server.actions().into_iter().find(|a| a.verb == "delete-collection").expect("sent");
        let param = |name: &str| action.params.get(name).map(String::as_str);
        assert_eq!(
            [param("labelSelector"), param("resourceVersion"), param("resourceVersionMatch"), param("limit")],
            [Some("app=web"), Some("0"), Some("NotOlderThan"), Some("10")]
        );
        assert_eq!([param("timeoutSeconds"), param("continue")], [Some("300"), Some("a b=")], "percent-encoded");
    }

    /// Names and namespaces that would change the URL's path are refused
    /// before anything is sent, as client-go refuses them.
    #[tokio::test]
    async fn names_that_are_no_path_segment_are_refused_before_sending() {
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        let client = TypedClient::<ConfigMap>::new(server.client(), Some("default"));
        let err = client.get("web/scale", &GetOptions::default()).await.unwrap_err();
        assert_eq!(err.to_string(), r#"invalid request: invalid resource name "web/scale": [may not contain '/']"#);
        assert!(matches!(client.delete("..", &DeleteOptions::default()).await, Err(Error::InvalidRequest(_))));
        assert!(matches!(client.get("a%2Fb", &GetOptions::default()).await, Err(Error::InvalidRequest(_))));
        let odd = TypedClient::<ConfigMap>::new(server.client(), Some("x/y"));
        let err = odd.list(&ListOptions::default()).await.unwrap_err();
        assert_eq!(err.to_string(), r#"invalid request: invalid namespace "x/y": [may not contain '/']"#);
        assert!(matches!(odd.watch(&ListOptions::default()).await, Err(Error::InvalidRequest(_))));
        assert!(server.actions().is_empty(), "nothing was sent: {:?}", server.actions());
        assert!(client.get("a.b-c", &GetOptions::default()).await.unwrap_err().is_not_found(), "a valid name is sent");
    }

    /// `field_validation` is sent on create, update and patch.
    #[tokio::test]
    async fn field_validation_is_sent_with_every_write() {
        let server = crate::testing::FakeApiServer::new();
        server.register::<ConfigMap>();
        let client = TypedClient::<ConfigMap>::new(server.client(), Some("default"));
        let mut cm =
            ConfigMap { metadata: ObjectMeta { name: Some("a".into()), ..Default::default() }, ..Default::default() };
        let strict = Some(FieldValidation::Strict);
        cm = client.create(&cm, &CreateOptions { field_validation: strict, ..Default::default() }).await.unwrap();
        client
            .update(&cm, &UpdateOptions { field_validation: Some(FieldValidation::Ignore), ..Default::default() })
            .await
            .unwrap();
        client.update_status(&cm, &UpdateOptions { field_validation: strict, ..Default::default() }).await.unwrap();
        let patch = PatchType::Merge(serde_json::json!({"data": {"k": "v"}}));
        client
            .patch("a", &patch, &PatchOptions { field_validation: Some(FieldValidation::Warn), ..Default::default() })
            .await
            .unwrap();
        let sent: Vec<_> = server
            .actions()
            .into_iter()
            .map(|a| (a.verb, a.subresource, a.params.get("fieldValidation").cloned().unwrap_or_default()))
            .collect();
        let expected = [
            ("create", None, "Strict"),
            ("update", None, "Ignore"),
            ("update", Some("status"), "Strict"),
            ("patch", None, "Warn"),
        ];
        let expected: Vec<_> =
            expected.iter().map(|(v, s, f)| (v.to_string(), s.map(str::to_owned), f.to_string())).collect();
        assert_eq!(sent, expected);
    }

    /// `api()` builds kube's `Api` over the client's namespace ("" is
    /// every namespace), the URL the client's own requests use.
    #[tokio::test]
    async fn api_and_debug_name_the_clients_url() {
        let server = crate::testing::FakeApiServer::new();
        let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
        assert_eq!(client.api().resource_url(), "/api/v1/namespaces/ns/configmaps");
        assert!(format!("{client:?}").contains(r#"url: "/api/v1/namespaces/ns/configmaps""#), "{client:?}");
        let every = TypedClient::<ConfigMap>::new(server.client(), Some(""));
        assert_eq!(every.api().resource_url(), "/api/v1/configmaps");
        assert_eq!(every.namespace(), None);
    }

    /// An answer's body is read as text; one that is not UTF-8 fails with
    /// the error reading it as bytes gives, even where the bad text is in a
    /// field the kind does not have (as a list page's item does).
    #[test]
    fn bodies_are_decoded_as_text_and_fail_when_not_utf8() {
        let cm: ConfigMap =
            decode_body(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"\u00e9t\u00e9"}}"#).unwrap();
        assert_eq!(cm.metadata.name.as_deref(), Some("\u{e9}t\u{e9}"));
        let bad = b"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"\xff\"}}";
        let err = decode_body::<ConfigMap>(bad).unwrap_err();
        assert_eq!(err.to_string(), serde_json::from_slice::<ConfigMap>(bad).unwrap_err().to_string());
        assert!(err.to_string().starts_with("invalid unicode code point"), "{err}");
        let unknown = b"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{},\"x\":\"\xff\"}";
        assert!(serde_json::from_slice::<ConfigMap>(unknown).is_ok(), "serde_json skips the field unchecked");
        let err = decode_body::<ConfigMap>(unknown).unwrap_err();
        assert!(err.to_string().starts_with("invalid unicode code point"), "{err}");
        let page = [br#"{"metadata":{},"items":["#.as_slice(), unknown, b"]}"].concat();
        assert!(serde_json::from_slice::<ObjectList<Box<RawValue>>>(&page).is_err(), "a list page fails on it");
        let err = decode_body::<ConfigMap>(b"{\"a\": \xff}").unwrap_err();
        assert_eq!(err.to_string(), serde_json::from_slice::<ConfigMap>(b"{\"a\": \xff}").unwrap_err().to_string());
    }

    #[test]
    fn apply_body_sets_type_meta_and_strips_managed_fields() {
        let cm = ConfigMap {
            metadata: ObjectMeta { managed_fields: Some(vec![Default::default()]), ..Default::default() },
            ..Default::default()
        };
        let body = apply_body("a", &cm).unwrap();
        assert_eq!(body["apiVersion"], "v1");
        assert_eq!(body["kind"], "ConfigMap");
        assert_eq!(body["metadata"]["name"], "a");
        assert!(body["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn options_map_onto_kube_params() {
        let dp: DeleteParams =
            (&DeleteOptions { preconditions_resource_version: Some("7".into()), ..Default::default() }).into();
        assert_eq!(dp.preconditions.unwrap().resource_version.as_deref(), Some("7"));
        let dp: DeleteParams = (&DeleteOptions::default()).into();
        assert!(dp.preconditions.is_none());

        let opts = PatchOptions { force: true, ..Default::default() };
        assert!(!opts.to_params(&PatchType::Merge(Value::Null)).force);
        assert!(opts.to_params(&PatchType::Apply(Value::Null)).force);

        let wp: WatchParams = (&ListOptions::default()).into();
        assert!(!wp.bookmarks);
        assert!(ApplyOptions::new("m").force);
    }
}
