//! `TypedClient` against `FakeApiServer`: every client-gen verb, the API
//! server semantics the fake implements, and kube's watcher on top of it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use codegen_runtime::client::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, PatchOptions, PatchType, TypedClient,
    UpdateOptions, json_patch,
};
use codegen_runtime::testing::{FakeApiServer, ResourceInfo};
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, NamespaceStatus};
use kube::api::{Api, ObjectMeta, WatchEvent};
use kube::core::Status;
use kube::runtime::watcher;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A custom resource written by hand, as kube-codegen would generate it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Foo {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: FooSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<FooStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct FooSpec {
    replicas: i32,
    #[serde(default)]
    image: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FooStatus {
    ready_replicas: i32,
}

impl kube::Resource for Foo {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Foo".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "example.com".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "foos".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

fn foo(name: &str, replicas: i32) -> Foo {
    Foo {
        api_version: "example.com/v1".into(),
        kind: "Foo".into(),
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("ns".into()), ..Default::default() },
        spec: FooSpec { replicas, image: "nginx".into() },
        status: None,
    }
}

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("k".to_string(), "v".to_string())])),
        ..Default::default()
    }
}

fn rv<K: kube::Resource>(obj: &K) -> u64 {
    obj.meta().resource_version.as_deref().unwrap_or_default().parse().unwrap_or(0)
}

fn names(items: &[ConfigMap]) -> Vec<String> {
    items.iter().map(|c| c.metadata.name.clone().unwrap_or_default()).collect()
}

/// The next item of a stream; a hang is a failure, not a timing assertion.
async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    tokio::time::timeout(Duration::from_secs(30), stream.next()).await.expect("stream stalled")
}

fn server() -> FakeApiServer {
    let server = FakeApiServer::new();
    server.register::<ConfigMap>();
    server.register::<Foo>();
    server.register::<Namespace>();
    server
}

#[tokio::test]
async fn create_get_update_delete() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));

    let created = client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();
    assert_eq!(rv(&created), 1);
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns"));

    let err = client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    let details = err.status().and_then(|s| s.details.clone()).unwrap();
    assert_eq!((details.name.as_str(), details.kind.as_str()), ("a", "configmaps"));

    let got = client.get("a", &GetOptions::default()).await.unwrap();
    assert_eq!(got, created);

    let mut changed = got.clone();
    changed.data = Some(BTreeMap::from([("k".to_string(), "w".to_string())]));
    let updated = client.update(&changed, &UpdateOptions::default()).await.unwrap();
    assert_eq!(rv(&updated), 2);

    // `changed` still carries version 1: a lost optimistic-concurrency race.
    let err = client.update(&changed, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");

    // An update that changes nothing writes nothing.
    let same = client.update(&updated, &UpdateOptions::default()).await.unwrap();
    assert_eq!(rv(&same), 2);
    assert_eq!(server.resource_version(), 2);

    let mut generated = cm("", &[]);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let g = client.create(&generated, &CreateOptions::default()).await.unwrap();
    let gname = g.metadata.name.clone().unwrap();
    assert!(gname.starts_with("gen-") && gname.len() == 9, "{gname}");

    let mut nameless = cm("", &[]);
    nameless.metadata.name = None;
    let err = client.create(&nameless, &CreateOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err}");
    assert_eq!(err.causes()[0].field, "metadata.name");

    // A copy of a stored object still carrying its resourceVersion: the API
    // server answers 500, so the fake does too.
    let mut copied = updated.clone();
    copied.metadata.name = Some("copy".into());
    let err = client.create(&copied, &CreateOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), Some(500), "{err:?}");
    assert!(err.to_string().contains("resourceVersion should not be set on objects to be created"), "{err}");

    // Metadata is checked on every write, as ValidateObjectMeta does there.
    let invalid = |labels: &[(&str, &str)]| cm("bad", labels);
    let long = "x".repeat(64);
    let err = client.create(&invalid(&[("owner", &long)]), &CreateOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err}");
    assert_eq!(err.causes()[0].field, "metadata.labels");
    let mut owned = cm("owned", &[]);
    owned.metadata.owner_references = Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "a".into(),
        uid: String::new(),
        ..Default::default()
    }]);
    let err = client.create(&owned, &CreateOptions::default()).await.unwrap_err();
    assert_eq!(err.causes()[0].field, "metadata.ownerReferences[0].uid");
    let mut upper = cm("Upper", &[]);
    upper.metadata.name = Some("Upper".into());
    assert_eq!(client.create(&upper, &CreateOptions::default()).await.unwrap_err().causes()[0].field, "metadata.name");
    let mut long_prefix = cm("", &[]);
    long_prefix.metadata.name = None;
    long_prefix.metadata.generate_name = Some(format!("{}-", "p".repeat(70)));
    let generated = client.create(&long_prefix, &CreateOptions::default()).await.unwrap();
    assert_eq!(generated.metadata.name.unwrap().len(), 63, "the prefix is cut to 58 bytes");

    // A uid in an update body is a precondition; a patch may not change it.
    let mut other = updated.clone();
    other.metadata.uid = Some("another".into());
    assert!(client.update(&other, &UpdateOptions::default()).await.unwrap_err().is_conflict());
    let err = client
        .patch("a", &PatchType::Merge(json!({"metadata": {"uid": "another"}})), &PatchOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_invalid(), "{err}");
    assert_eq!(err.causes()[0].field, "metadata.uid");

    // An update body names its object (the API server's checkName).
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
    let mut unnamed = updated.clone();
    unnamed.metadata.name = Some(String::new());
    let code = |err: kube::Error| match err {
        kube::Error::Api(status) => (status.code, status.message),
        other => panic!("{other:?}"),
    };
    let (status, message) = code(api.replace("a", &Default::default(), &unnamed).await.unwrap_err());
    assert_eq!(status, 400);
    assert!(message.contains("the name of the object () does not match the name on the URL (a)"), "{message}");
    let (status, _) = code(api.replace_status("a", &Default::default(), &unnamed).await.unwrap_err());
    assert_eq!(status, 400);

    let dry = CreateOptions { dry_run: true, ..Default::default() };
    client.create(&cm("dry", &[]), &dry).await.unwrap();
    assert!(server.object::<ConfigMap>(Some("ns"), "dry").unwrap().is_none());

    client.delete("a", &DeleteOptions::default()).await.unwrap();
    let err = client.get("a", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = client.delete("a", &DeleteOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");

    let verbs: Vec<String> = server.actions().iter().map(|a| a.verb.clone()).collect();
    assert_eq!(verbs[..5], ["create", "create", "get", "update", "update"]);
    server.clear_actions();
    assert!(server.actions().is_empty());
}

#[tokio::test]
async fn create_uses_the_object_namespace_when_unbound() {
    let server = server();
    let all = TypedClient::<ConfigMap>::new(server.client(), None);
    all.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();
    let action = &server.actions()[0];
    assert_eq!(action.namespace.as_deref(), Some("ns"));
    assert_eq!(all.list_all(&ListOptions::default()).await.unwrap().len(), 1);
}

#[tokio::test]
async fn generation_and_status_subresource() {
    let server = server();
    let foos = TypedClient::<Foo>::new(server.client(), Some("ns"));

    let mut with_status = foo("f", 1);
    with_status.status = Some(FooStatus { ready_replicas: 9 });
    let created = foos.create(&with_status, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    assert_eq!(created.status, None, "create ignores status");

    // Status through the main resource is ignored: nothing changes at all.
    let mut status_only = created.clone();
    status_only.status = Some(FooStatus { ready_replicas: 1 });
    let same = foos.update(&status_only, &UpdateOptions::default()).await.unwrap();
    assert_eq!(same.status, None);
    assert_eq!(rv(&same), rv(&created));

    // A spec change bumps the generation.
    let mut scaled = created.clone();
    scaled.spec.replicas = 3;
    let scaled = foos.update(&scaled, &UpdateOptions::default()).await.unwrap();
    assert_eq!(scaled.metadata.generation, Some(2));

    // A metadata change does not.
    let mut labelled = scaled.clone();
    labelled.metadata.labels = Some(BTreeMap::from([("a".to_string(), "b".to_string())]));
    let labelled = foos.update(&labelled, &UpdateOptions::default()).await.unwrap();
    assert_eq!(labelled.metadata.generation, Some(2));
    assert!(rv(&labelled) > rv(&scaled));

    // Status writes change only status, never the generation.
    let mut status = labelled.clone();
    status.status = Some(FooStatus { ready_replicas: 3 });
    status.spec.replicas = 100;
    let status = foos.update_status(&status, &UpdateOptions::default()).await.unwrap();
    assert_eq!(status.status, Some(FooStatus { ready_replicas: 3 }));
    assert_eq!(status.spec.replicas, 3);
    assert_eq!(status.metadata.generation, Some(2));

    let patched = foos
        .patch_status(
            "f",
            &PatchType::Merge(json!({"status": {"readyReplicas": 2}, "spec": {"replicas": 7}})),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(patched.status, Some(FooStatus { ready_replicas: 2 }));
    assert_eq!(patched.spec.replicas, 3);

    let action = server.actions().into_iter().find(|a| a.subresource.is_some()).unwrap();
    assert_eq!((action.verb.as_str(), action.subresource.as_deref()), ("update", Some("status")));

    // Without a status subresource, status is part of the object.
    server.register_resource(ResourceInfo::of::<Foo>().with_status_subresource(false));
    let mut plain = patched.clone();
    plain.status = Some(FooStatus { ready_replicas: 5 });
    let plain = foos.update(&plain, &UpdateOptions::default()).await.unwrap();
    assert_eq!(plain.status, Some(FooStatus { ready_replicas: 5 }));
    assert_eq!(plain.metadata.generation, Some(3));
    let err = foos.update_status(&plain, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn patch_types() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();

    let merged = client
        .patch("a", &PatchType::Merge(json!({"data": {"k": null, "m": "1"}})), &PatchOptions::default())
        .await
        .unwrap();
    assert_eq!(merged.data, Some(BTreeMap::from([("m".to_string(), "1".to_string())])));

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/data/m", "value": "1"},
        {"op": "add", "path": "/data/n", "value": "2"},
    ]))
    .unwrap();
    let patched = client.patch("a", &PatchType::Json(ops), &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.data.unwrap()["n"], "2");

    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/data/m", "value": "0"}])).unwrap();
    let err = client.patch("a", &PatchType::Json(failing), &PatchOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err}");

    let strategic = client
        .patch("a", &PatchType::StrategicMerge(json!({"data": {"s": "3"}})), &PatchOptions::default())
        .await
        .unwrap();
    assert_eq!(strategic.data.unwrap()["s"], "3");

    // A stale resourceVersion inside a patch is a precondition failure.
    let err = client
        .patch("a", &PatchType::Merge(json!({"metadata": {"resourceVersion": "1"}})), &PatchOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    let err = client.patch("missing", &PatchType::Merge(json!({})), &PatchOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");

    let types: Vec<Option<String>> =
        server.actions().iter().filter(|a| a.verb == "patch").map(|a| a.patch_type.clone()).collect();
    assert_eq!(types[..4], [Some("merge".into()), Some("json".into()), Some("json".into()), Some("strategic".into())]);
}

#[tokio::test]
async fn server_side_apply() {
    let server = server();
    let foos = TypedClient::<Foo>::new(server.client(), Some("ns"));

    // Apply creates what is missing; the body is typed, with apiVersion/kind.
    let mut desired = foo("f", 2);
    desired.api_version = String::new();
    desired.kind = String::new();
    let applied = foos.apply("f", &desired, &ApplyOptions::new("ctrl")).await.unwrap();
    assert_eq!(applied.spec.replicas, 2);

    let action = server.actions().pop().unwrap();
    assert_eq!(action.verb, "patch");
    assert_eq!(action.patch_type.as_deref(), Some("apply"));
    assert_eq!(action.params.get("fieldManager").map(String::as_str), Some("ctrl"));
    assert_eq!(action.params.get("force").map(String::as_str), Some("true"));
    let body = action.body.unwrap();
    assert_eq!(body["apiVersion"], "example.com/v1");
    assert_eq!(body["kind"], "Foo");
    assert_eq!(body["metadata"]["name"], "f");

    desired.spec.replicas = 4;
    let applied = foos.apply("f", &desired, &ApplyOptions::new("ctrl")).await.unwrap();
    assert_eq!(applied.spec.replicas, 4);
    assert_eq!(applied.metadata.generation, Some(2));

    desired.status = Some(FooStatus { ready_replicas: 4 });
    let applied = foos.apply_status("f", &desired, &ApplyOptions::new("ctrl")).await.unwrap();
    assert_eq!(applied.status, Some(FooStatus { ready_replicas: 4 }));
    let action = server.actions().pop().unwrap();
    assert_eq!(action.subresource.as_deref(), Some("status"));

    let err = foos.apply("f", &desired, &ApplyOptions::default()).await.unwrap_err();
    assert!(matches!(err, codegen_runtime::Error::InvalidRequest(_)), "{err}");
}

#[tokio::test]
async fn list_paging_and_selectors() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    for (name, app, tier) in
        [("a", "web", "front"), ("b", "web", "back"), ("c", "db", "back"), ("d", "cache", ""), ("e", "web", "front")]
    {
        let mut labels = vec![("app", app)];
        if !tier.is_empty() {
            labels.push(("tier", tier));
        }
        client.create(&cm(name, &labels), &CreateOptions::default()).await.unwrap();
    }
    let mut other = cm("z", &[("app", "web")]);
    other.metadata.namespace = Some("other".into());
    TypedClient::<ConfigMap>::new(server.client(), Some("other"))
        .create(&other, &CreateOptions::default())
        .await
        .unwrap();

    let page = client.list(&ListOptions { limit: Some(2), ..Default::default() }).await.unwrap();
    assert_eq!(names(&page.items), ["a", "b"]);
    let token = page.metadata.continue_.clone().unwrap();
    assert_eq!(page.metadata.remaining_item_count, Some(3));
    let list_rv = page.metadata.resource_version.clone().unwrap();
    assert_eq!(list_rv, server.resource_version().to_string());
    let page2 =
        client.list(&ListOptions { limit: Some(2), continue_token: Some(token), ..Default::default() }).await.unwrap();
    assert_eq!(names(&page2.items), ["c", "d"]);
    assert_eq!(page2.metadata.resource_version, Some(list_rv));

    let all = client.list_all(&ListOptions { limit: Some(2), ..Default::default() }).await.unwrap();
    assert_eq!(names(&all), ["a", "b", "c", "d", "e"]);
    let everywhere = TypedClient::<ConfigMap>::new(server.client(), None);
    assert_eq!(everywhere.list_all(&ListOptions::default()).await.unwrap().len(), 6);

    let select = |labels: &str| {
        let client = client.clone();
        let labels = labels.to_owned();
        async move {
            let opts = ListOptions { label_selector: Some(labels), ..Default::default() };
            names(&client.list(&opts).await.unwrap().items)
        }
    };
    assert_eq!(select("app=web").await, ["a", "b", "e"]);
    assert_eq!(select("app==web,tier=front").await, ["a", "e"]);
    assert_eq!(select("app!=web").await, ["c", "d"]);
    assert_eq!(select("app in (db,cache)").await, ["c", "d"]);
    assert_eq!(select("tier notin (front)").await, ["b", "c", "d"]);
    assert_eq!(select("tier").await, ["a", "b", "c", "e"]);
    assert_eq!(select("!tier").await, ["d"]);

    let by_name = ListOptions { field_selector: Some("metadata.name=c".into()), ..Default::default() };
    assert_eq!(names(&client.list(&by_name).await.unwrap().items), ["c"]);
    let by_ns = ListOptions { field_selector: Some("metadata.namespace!=ns".into()), ..Default::default() };
    assert_eq!(names(&everywhere.list(&by_ns).await.unwrap().items), ["z"]);

    let bad = ListOptions { label_selector: Some("app in web".into()), ..Default::default() };
    assert!(client.list(&bad).await.unwrap_err().is_bad_request());
    let bad = ListOptions { field_selector: Some("spec.x=1".into()), ..Default::default() };
    assert!(client.list(&bad).await.unwrap_err().is_bad_request());

    let web = ListOptions { label_selector: Some("app=web".into()), ..Default::default() };
    client.delete_collection(&DeleteOptions::default(), &web).await.unwrap();
    assert_eq!(names(&client.list_all(&ListOptions::default()).await.unwrap()), ["c", "d"]);
    assert_eq!(everywhere.list_all(&ListOptions::default()).await.unwrap().len(), 3, "other namespaces untouched");
    // As on a real server, a namespaced kind is not deleted across namespaces.
    let err = everywhere.delete_collection(&DeleteOptions::default(), &ListOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), Some(405), "{err:?}");
}

#[tokio::test]
async fn finalizers_and_preconditions() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    let mut held = cm("a", &[]);
    held.metadata.finalizers = Some(vec!["example.com/cleanup".into()]);
    let created = client.create(&held, &CreateOptions::default()).await.unwrap();

    let stale_rv = DeleteOptions { preconditions_resource_version: Some("999".into()), ..Default::default() };
    assert!(client.delete("a", &stale_rv).await.unwrap_err().is_conflict());
    let wrong_uid = DeleteOptions { preconditions_uid: Some("nope".into()), ..Default::default() };
    assert!(client.delete("a", &wrong_uid).await.unwrap_err().is_conflict());

    let exact = DeleteOptions { preconditions_uid: created.metadata.uid.clone(), ..Default::default() };
    client.delete("a", &exact).await.unwrap();
    let deleting = client.get("a", &GetOptions::default()).await.unwrap();
    assert!(deleting.metadata.deletion_timestamp.is_some());
    // Marking it for deletion bumps the generation, as the API server's
    // markAsDeleting does, so generation-filtered controllers see it.
    assert_eq!(deleting.metadata.generation, Some(created.metadata.generation.unwrap() + 1));

    let mut more = deleting.clone();
    more.metadata.finalizers.as_mut().unwrap().push("another".into());
    assert!(client.update(&more, &UpdateOptions::default()).await.unwrap_err().is_invalid());

    // The last finalizer goes, with a label in the same update: the object
    // is deleted as it was stored (kube-apiserver's deleteWithoutFinalizers):
    // watchers see its finalizer and not the label, at a new version.
    let mut watch = client
        .watch(&ListOptions { resource_version: deleting.metadata.resource_version.clone(), ..Default::default() })
        .await
        .unwrap();
    let mut released = deleting.clone();
    released.metadata.finalizers = None;
    released.metadata.labels = Some(BTreeMap::from([("late".to_string(), "yes".to_string())]));
    let answer = client.update(&released, &UpdateOptions::default()).await.unwrap();
    assert_eq!(answer.metadata.labels, released.metadata.labels, "the request's object is the answer");
    assert!(client.get("a", &GetOptions::default()).await.unwrap_err().is_not_found());
    match next(&mut watch).await.unwrap().unwrap() {
        WatchEvent::Deleted(o) => {
            assert_eq!(o.metadata.finalizers, Some(vec!["example.com/cleanup".to_owned()]));
            assert_eq!(o.metadata.labels, deleting.metadata.labels, "the update's label was never stored");
            assert!(rv(&o) > rv(&deleting));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn watch_delivers_events_in_order() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    client.create(&cm("before", &[]), &CreateOptions::default()).await.unwrap();
    let start = server.resource_version().to_string();

    let mut from_now =
        client.watch(&ListOptions { resource_version: Some(start), ..Default::default() }).await.unwrap();
    let mut from_zero =
        client.watch(&ListOptions { resource_version: Some("0".into()), ..Default::default() }).await.unwrap();
    let mut web_only =
        client.watch(&ListOptions { label_selector: Some("app=web".into()), ..Default::default() }).await.unwrap();

    let created = client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();
    let mut labelled = created.clone();
    labelled.metadata.labels = Some(BTreeMap::from([("app".to_string(), "web".to_string())]));
    let labelled = client.update(&labelled, &UpdateOptions::default()).await.unwrap();
    let mut unlabelled = labelled.clone();
    unlabelled.metadata.labels = None;
    client.update(&unlabelled, &UpdateOptions::default()).await.unwrap();
    client.delete("a", &DeleteOptions::default()).await.unwrap();

    let mut seen = Vec::new();
    for _ in 0..4 {
        match next(&mut from_now).await.unwrap().unwrap() {
            WatchEvent::Added(o) => seen.push(("ADDED", rv(&o))),
            WatchEvent::Modified(o) => seen.push(("MODIFIED", rv(&o))),
            WatchEvent::Deleted(o) => seen.push(("DELETED", rv(&o))),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, [("ADDED", 2), ("MODIFIED", 3), ("MODIFIED", 4), ("DELETED", 5)]);

    match next(&mut from_zero).await.unwrap().unwrap() {
        WatchEvent::Added(o) => assert_eq!(o.metadata.name.as_deref(), Some("before")),
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(next(&mut from_zero).await.unwrap().unwrap(), WatchEvent::Added(_)));

    // Modified into the selection is ADDED, out of it DELETED.
    assert!(matches!(next(&mut web_only).await.unwrap().unwrap(), WatchEvent::Added(o) if rv(&o) == 3));
    // The DELETED event carries the last state that matched (still labelled
    // app=web), at the new resourceVersion, as the API server's does.
    match next(&mut web_only).await.unwrap().unwrap() {
        WatchEvent::Deleted(o) => {
            assert_eq!(rv(&o), 4);
            assert_eq!(o.metadata.labels.unwrap_or_default().get("app").map(String::as_str), Some("web"));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn watch_from_a_compacted_version_is_gone() {
    let server = server().with_history_limit(2);
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    for name in ["a", "b", "c", "d"] {
        client.create(&cm(name, &[]), &CreateOptions::default()).await.unwrap();
    }
    // Versions 3 and 4 are retained: watching after 2 works, after 1 not.
    let mut ok = client.watch(&ListOptions { resource_version: Some("2".into()), ..Default::default() }).await.unwrap();
    assert!(matches!(next(&mut ok).await.unwrap().unwrap(), WatchEvent::Added(o) if rv(&o) == 3));

    let mut gone =
        client.watch(&ListOptions { resource_version: Some("1".into()), ..Default::default() }).await.unwrap();
    match next(&mut gone).await.unwrap().unwrap() {
        WatchEvent::Error(status) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
            // The watch cache's wording: the oldest version it has, less one.
            assert_eq!(status.message, "too old resource version: 1 (2)");
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    assert!(next(&mut gone).await.is_none(), "the stream ends after the error");

    server.compact();
    let mut gone =
        client.watch(&ListOptions { resource_version: Some("3".into()), ..Default::default() }).await.unwrap();
    assert!(matches!(next(&mut gone).await.unwrap().unwrap(), WatchEvent::Error(s) if s.code == 410));

    // A continue token from before the compaction is expired too.
    let page = client.list(&ListOptions { limit: Some(1), ..Default::default() }).await.unwrap();
    let token = page.metadata.continue_.unwrap();
    client.create(&cm("e", &[]), &CreateOptions::default()).await.unwrap();
    server.compact();
    let err = client
        .list(&ListOptions { limit: Some(1), continue_token: Some(token), ..Default::default() })
        .await
        .unwrap_err();
    assert!(err.is_gone() && err.is_resource_expired(), "{err}");
}

#[tokio::test]
async fn watch_honours_timeout_and_bookmarks() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();
    let opts = ListOptions {
        resource_version: Some(server.resource_version().to_string()),
        timeout_seconds: Some(1),
        allow_watch_bookmarks: true,
        ..Default::default()
    };
    let mut stream = client.watch(&opts).await.unwrap();
    match next(&mut stream).await.unwrap().unwrap() {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, "1"),
        other => panic!("expected the closing bookmark, got {other:?}"),
    }
    assert!(next(&mut stream).await.is_none());

    let mut closed = client.watch(&ListOptions::default()).await.unwrap();
    assert!(matches!(next(&mut closed).await.unwrap().unwrap(), WatchEvent::Added(_)));
    server.close_watches();
    assert!(next(&mut closed).await.is_none());

    // `timeoutSeconds=0` is the server's long default, as kube-apiserver's,
    // not a watch that ends at once (a watcher would watch again in a loop).
    let zero = ListOptions { timeout_seconds: Some(0), allow_watch_bookmarks: true, ..opts };
    let mut open = client.watch(&zero).await.unwrap();
    let waited = tokio::time::timeout(Duration::from_millis(300), next(&mut open)).await;
    assert!(waited.is_err(), "a watch with timeoutSeconds=0 ended at once: {waited:?}");
    client.create(&cm("b", &[]), &CreateOptions::default()).await.unwrap();
    assert!(matches!(next(&mut open).await.unwrap().unwrap(), WatchEvent::Added(_)));
}

#[tokio::test]
async fn reactors_inject_responses() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();

    server.prepend_reactor("get", "configmaps", |action| {
        (action.name.as_deref() == Some("a"))
            .then(|| Err(Status::failure("configmaps \"a\" is forbidden", "Forbidden").with_code(403).boxed()))
    });
    let err = client.get("a", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_forbidden(), "{err}");

    server.prepend_reactor("*", "*", |action| {
        (action.verb == "delete").then(|| Err(Status::failure("boom", "InternalError").boxed()))
    });
    let err = client.delete("a", &DeleteOptions::default()).await.unwrap_err();
    assert!(err.is_internal_error(), "{err}");
    assert_eq!(err.code(), Some(500));

    let mut canned = cm("canned", &[]);
    canned.metadata.resource_version = Some("42".into());
    let canned_json = serde_json::to_value(&canned).unwrap();
    server.prepend_reactor("get", "configmaps", move |action| {
        (action.name.as_deref() == Some("canned")).then(|| Ok(canned_json.clone()))
    });
    assert_eq!(rv(&client.get("canned", &GetOptions::default()).await.unwrap()), 42);

    // Subresources the fake does not implement come from reactors.
    server.prepend_reactor("get", "configmaps", |action| {
        (action.subresource.as_deref() == Some("scale"))
            .then(|| Ok(json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 3}})))
    });
    let scale: k8s_openapi::api::autoscaling::v1::Scale = client.get_subresource("scale", "a").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));

    // `plural/subresource` targets the subresource alone, as in client-go.
    server.prepend_reactor("update", "configmaps/scale", |action| Some(Ok(action.body.clone().unwrap_or_default())));
    let sent = json!({"spec": {"replicas": 5}});
    let echoed: serde_json::Value =
        client.update_subresource("scale", "a", &sent, &UpdateOptions::default()).await.unwrap();
    assert_eq!(echoed, sent);
    let plain = client.create(&cm("b", &[]), &CreateOptions::default()).await.unwrap();
    let mut changed = plain.clone();
    changed.metadata.labels = Some(BTreeMap::from([("k".to_string(), "v".to_string())]));
    let updated = client.update(&changed, &UpdateOptions::default()).await.unwrap();
    assert!(rv(&updated) > rv(&plain), "not the subresource: the store answers, not the echoing reactor");

    server.clear_reactors();
    assert!(client.get_subresource::<serde_json::Value>("scale", "a").await.unwrap_err().is_not_found());
    assert!(server.actions().iter().any(|a| a.verb == "delete"), "reacted requests are logged too");
}

#[tokio::test]
async fn cluster_scoped_kinds_and_core_routing() {
    let server = server();
    let namespaces = TypedClient::<Namespace>::new(server.client(), Some("ignored"));
    assert_eq!(namespaces.namespace(), None);
    let ns =
        Namespace { metadata: ObjectMeta { name: Some("team".into()), ..Default::default() }, ..Default::default() };
    namespaces.create(&ns, &CreateOptions::default()).await.unwrap();
    let mut ns = namespaces.get("team", &GetOptions::default()).await.unwrap();
    ns.status = Some(NamespaceStatus { phase: Some("Active".into()), ..Default::default() });
    let ns = namespaces.update_status(&ns, &UpdateOptions::default()).await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
    assert_eq!(namespaces.list_all(&ListOptions::default()).await.unwrap().len(), 1);

    // `/api/v1/namespaces/team/configmaps` is a ConfigMap path, not a Namespace's.
    let cms = TypedClient::<ConfigMap>::new(server.client(), Some("team"));
    let mut c = cm("x", &[]);
    c.metadata.namespace = Some("team".into());
    cms.create(&c, &CreateOptions::default()).await.unwrap();
    assert_eq!(server.objects::<ConfigMap>().unwrap().len(), 1);

    // Unregistered resources are not served.
    let secrets = TypedClient::<k8s_openapi::api::core::v1::Secret>::new(server.client(), Some("team"));
    assert!(secrets.list(&ListOptions::default()).await.unwrap_err().is_not_found());

    // events.k8s.io/v1 is served once registered.
    use k8s_openapi::api::events::v1::Event;
    server.register::<Event>();
    let events = TypedClient::<Event>::new(server.client(), Some("team"));
    let event = Event {
        metadata: ObjectMeta { generate_name: Some("x.".into()), ..Default::default() },
        reason: Some("Synced".into()),
        ..Default::default()
    };
    let created = events.create(&event, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("team"));
    assert_eq!(server.actions().last().unwrap().group, "events.k8s.io");
}

#[tokio::test]
async fn seeded_objects_keep_their_status() {
    let server = FakeApiServer::new();
    let mut f = foo("seeded", 1);
    f.status = Some(FooStatus { ready_replicas: 1 });
    server.seed([f.clone()]).unwrap();
    let err = server.seed([f]).unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    let stored = server.object::<Foo>(Some("ns"), "seeded").unwrap().unwrap();
    assert_eq!(stored.status, Some(FooStatus { ready_replicas: 1 }));
    assert_eq!(stored.metadata.generation, Some(1));
    assert!(server.actions().is_empty(), "seeding is not a request");
}

#[tokio::test]
async fn kube_watcher_runs_on_the_fake() {
    let server = server();
    server.seed([cm("a", &[]), cm("b", &[])]).unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
    let mut events = watcher(api.clone(), watcher::Config::default().page_size(1)).boxed();

    let mut initial = Vec::new();
    loop {
        match next(&mut events).await.unwrap().unwrap() {
            watcher::Event::Init => initial.push("Init".to_string()),
            watcher::Event::InitApply(o) => initial.push(o.metadata.name.unwrap()),
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(initial, ["Init", "a", "b"]);

    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    client.create(&cm("c", &[]), &CreateOptions::default()).await.unwrap();
    client.delete("a", &DeleteOptions::default()).await.unwrap();
    assert!(
        matches!(next(&mut events).await.unwrap().unwrap(), watcher::Event::Apply(o) if o.metadata.name.as_deref() == Some("c"))
    );
    assert!(
        matches!(next(&mut events).await.unwrap().unwrap(), watcher::Event::Delete(o) if o.metadata.name.as_deref() == Some("a"))
    );

    // A closed watch is resumed from the last version, without a relist.
    server.close_watches();
    client.create(&cm("d", &[]), &CreateOptions::default()).await.unwrap();
    assert!(
        matches!(next(&mut events).await.unwrap().unwrap(), watcher::Event::Apply(o) if o.metadata.name.as_deref() == Some("d"))
    );

    // A write to another kind moves the version past the watcher's; after a
    // compaction its resumed watch gets 410 and it relists.
    let foos = TypedClient::<Foo>::new(server.client(), Some("ns"));
    foos.create(&foo("f", 1), &CreateOptions::default()).await.unwrap();
    server.compact();
    server.close_watches();
    client.create(&cm("e", &[]), &CreateOptions::default()).await.unwrap();
    let mut after = Vec::new();
    loop {
        match next(&mut events).await.unwrap() {
            Err(err) => after.push(format!("error {}", codegen_runtime::Error::from(err).code().unwrap_or(0))),
            Ok(watcher::Event::Init) => after.push("Init".into()),
            Ok(watcher::Event::InitApply(o)) => after.push(o.metadata.name.unwrap()),
            Ok(watcher::Event::InitDone) => break,
            Ok(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(after, ["error 410", "Init", "b", "c", "d", "e"]);
}

#[tokio::test]
async fn kube_watcher_streaming_lists() {
    let server = server();
    server.seed([cm("a", &[])]).unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
    let mut events = watcher(api, watcher::Config::default().streaming_lists()).boxed();
    assert!(matches!(next(&mut events).await.unwrap().unwrap(), watcher::Event::Init));
    assert!(matches!(next(&mut events).await.unwrap().unwrap(), watcher::Event::InitApply(_)));
    assert!(matches!(next(&mut events).await.unwrap().unwrap(), watcher::Event::InitDone));
}

/// The scale subresource through the typed client's subresource verbs
/// (what generated `get_scale`, `update_scale` and `patch_scale` call):
/// served from the paths given, written back as an update of the object;
/// a reactor still answers first. (Checked against kube-apiserver by
/// `tests/tests/e2e_fake_scale.rs`.)
#[tokio::test]
async fn scale_subresource() {
    use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec};

    let server = FakeApiServer::new();
    server.register_resource(ResourceInfo::of::<Foo>().with_scale_subresource(
        ".spec.replicas",
        ".status.readyReplicas",
        None,
    ));
    let foos = TypedClient::<Foo>::new(server.client(), Some("ns"));
    let created = foos.create(&foo("a", 2), &CreateOptions::default()).await.unwrap();

    let scale: Scale = foos.get_subresource("scale", "a").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(0));
    assert_eq!(scale.metadata.uid, created.metadata.uid);
    assert_eq!(scale.metadata.resource_version, created.metadata.resource_version);

    let mut wanted = scale.clone();
    wanted.spec = Some(ScaleSpec { replicas: Some(5) });
    let written: Scale = foos.update_subresource("scale", "a", &wanted, &UpdateOptions::default()).await.unwrap();
    assert_eq!(written.spec.and_then(|s| s.replicas), Some(5));
    let stored = foos.get("a", &GetOptions::default()).await.unwrap();
    assert_eq!((stored.spec.replicas, stored.spec.image.as_str()), (5, "nginx"));
    assert!(rv(&stored) > rv(&created));
    assert_eq!(stored.metadata.generation, Some(2));
    // The Scale read before the write is stale now.
    let stale = foos.update_subresource("scale", "a", &wanted, &UpdateOptions::default()).await.unwrap_err();
    assert!(stale.is_conflict(), "{stale}");

    let patch = PatchType::Merge(json!({"spec": {"replicas": 1}}));
    let patched: Scale = foos.patch_subresource("scale", "a", &patch, &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(1));
    let negative = PatchType::Merge(json!({"spec": {"replicas": -1}}));
    let err = foos.patch_subresource::<Scale>("scale", "a", &negative, &PatchOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err}");
    let apply = PatchType::Apply(
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "a"}, "spec": {"replicas": 2}}),
    );
    let opts = PatchOptions { field_manager: Some("test".into()), ..Default::default() };
    let err = foos.patch_subresource::<Scale>("scale", "a", &apply, &opts).await.unwrap_err();
    assert!(err.to_string().contains("does not serve server-side apply to /scale"), "{err}");
    assert_eq!(foos.get("a", &GetOptions::default()).await.unwrap().spec.replicas, 1);

    // A missing object's scale is a 404; without the scale paths there is
    // no /scale at all; a reactor answers first.
    let missing = foos.get_subresource::<Scale>("scale", "b").await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    let plain = FakeApiServer::new();
    plain.register::<Foo>();
    let unscaled = TypedClient::<Foo>::new(plain.client(), Some("ns"));
    unscaled.create(&foo("a", 2), &CreateOptions::default()).await.unwrap();
    assert!(unscaled.get_subresource::<Scale>("scale", "a").await.unwrap_err().is_not_found());
    server.prepend_reactor("get", "foos/scale", |_| {
        Some(Ok(json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 9}})))
    });
    let reacted: Scale = foos.get_subresource("scale", "a").await.unwrap();
    assert_eq!(reacted.spec.and_then(|s| s.replicas), Some(9));
}

/// Lists of several namespaces, their pages and a watch's initial events
/// come in the order of the objects' storage keys `<namespace>/<name>`, as
/// from etcd: `test-2/x` before `test/x`.
#[tokio::test]
async fn objects_of_several_namespaces_come_in_storage_key_order() {
    let server = server();
    for ns in ["test", "test-2", "a"] {
        let client = TypedClient::<ConfigMap>::new(server.client(), Some(ns));
        let mut obj = cm("x", &[]);
        obj.metadata.namespace = Some(ns.into());
        client.create(&obj, &CreateOptions::default()).await.unwrap();
    }
    let everywhere = TypedClient::<ConfigMap>::new(server.client(), None);
    let namespaces = |items: &[ConfigMap]| {
        items.iter().map(|o| o.metadata.namespace.clone().unwrap_or_default()).collect::<Vec<_>>()
    };
    let expected = ["a", "test-2", "test"];
    assert_eq!(namespaces(&everywhere.list(&ListOptions::default()).await.unwrap().items), expected);
    assert_eq!(
        namespaces(&everywhere.list_all(&ListOptions { limit: Some(1), ..Default::default() }).await.unwrap()),
        expected
    );
    let mut watch = everywhere.watch(&ListOptions::default()).await.unwrap();
    let mut initial = Vec::new();
    for _ in 0..3 {
        match next(&mut watch).await.unwrap().unwrap() {
            WatchEvent::Added(o) => initial.push(o),
            other => panic!("expected ADDED, got {other:?}"),
        }
    }
    assert_eq!(namespaces(&initial), expected);
}

/// A resourceVersion of `"0"` is no precondition, as the API server reads
/// it: a built-in kind's update or patch with it is unconditional, a
/// custom resource's is refused as one without a version (422).
#[tokio::test]
async fn resource_version_zero_is_an_unconditional_write_of_a_builtin_kind() {
    let server = server();
    let configmaps = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    configmaps.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();
    let mut zero = cm("a", &[("x", "1")]);
    zero.metadata.resource_version = Some("0".into());
    let updated = configmaps.update(&zero, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.metadata.labels.unwrap()["x"], "1");
    let patch = PatchType::Merge(json!({"metadata": {"resourceVersion": "0", "labels": {"y": "2"}}}));
    let patched = configmaps.patch("a", &patch, &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["y"], "2");

    let custom = FakeApiServer::new();
    custom.register_resource(
        ResourceInfo::of::<Foo>().with_schema(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
    );
    let foos = TypedClient::<Foo>::new(custom.client(), Some("ns"));
    foos.create(&foo("f", 1), &CreateOptions::default()).await.unwrap();
    let mut zero = foo("f", 2);
    zero.metadata.resource_version = Some("0".into());
    let err = foos.update(&zero, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.is_invalid() && err.to_string().contains("must be specified for an update"), "{err}");
    let err = foos.patch("f", &patch, &PatchOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err}");
}

/// A Deployment's generation follows its annotations too (its strategy
/// copies them to the ReplicaSets); other kinds' follow only what is not
/// metadata.
#[tokio::test]
async fn a_deployments_generation_follows_its_annotations() {
    use k8s_openapi::api::apps::v1::Deployment;
    let server = FakeApiServer::new();
    server.register::<Deployment>();
    server.register::<ConfigMap>();
    let deployments = TypedClient::<Deployment>::new(server.client(), Some("ns"));
    let created = deployments
        .create(
            &Deployment { metadata: ObjectMeta { name: Some("d".into()), ..Default::default() }, ..Default::default() },
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let annotate = |value: &str| PatchType::Merge(json!({"metadata": {"annotations": {"a": value}}}));
    let patched = deployments.patch("d", &annotate("1"), &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.metadata.generation, Some(2));
    let same = deployments.patch("d", &annotate("1"), &PatchOptions::default()).await.unwrap();
    assert_eq!(same.metadata.generation, Some(2));
    let labelled = PatchType::Merge(json!({"metadata": {"labels": {"l": "1"}}}));
    let patched = deployments.patch("d", &labelled, &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.metadata.generation, Some(2), "labels are no reason");

    let configmaps = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    configmaps.create(&cm("c", &[]), &CreateOptions::default()).await.unwrap();
    let patched = configmaps.patch("c", &annotate("1"), &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.metadata.generation, Some(1));
}

/// A delete's `dryRun` is checked as the API server's `ValidateDeleteOptions`
/// checks it: anything but `All` is a 422, and nothing is deleted.
#[tokio::test]
async fn a_delete_with_a_dry_run_other_than_all_is_refused() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    client.create(&cm("a", &[]), &CreateOptions::default()).await.unwrap();
    let raw = |uri: &str, body: Vec<u8>| {
        http::Request::delete(uri).header("content-type", "application/json").body(body).unwrap()
    };
    let err = server
        .client()
        .request_text(raw("/api/v1/namespaces/ns/configmaps/a?dryRun=true", Vec::new()))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else { panic!("{err}") };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.contains("DeleteOptions.meta.k8s.io") && status.message.contains("[\"true\"]"),
        "{status:?}"
    );
    // Every value `All` is a dry run, as the API server takes it.
    let twice = serde_json::to_vec(&json!({"dryRun": ["All", "All"]})).unwrap();
    server.client().request_text(raw("/api/v1/namespaces/ns/configmaps/a", twice)).await.unwrap();
    let body = serde_json::to_vec(&json!({"dryRun": ["Some"]})).unwrap();
    let err = server.client().request_text(raw("/api/v1/namespaces/ns/configmaps", body)).await.unwrap_err();
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 422), "{err}");
    assert!(client.get("a", &GetOptions::default()).await.is_ok(), "nothing was deleted");
    let dry = client.delete("a", &DeleteOptions { dry_run: true, ..Default::default() }).await;
    assert!(dry.is_ok(), "{dry:?}");
    assert!(client.get("a", &GetOptions::default()).await.is_ok(), "a dry run deletes nothing");
}

/// A watch from a version the server has not reached yet gets only the
/// events after it, as from the API server's watch cache.
#[tokio::test]
async fn a_watch_from_a_future_version_skips_the_events_up_to_it() {
    let server = server();
    let client = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    let from = server.resource_version() + 2;
    let opts = ListOptions { resource_version: Some(from.to_string()), ..Default::default() };
    let mut events = client.watch(&opts).await.unwrap();
    for name in ["a", "b", "c"] {
        client.create(&cm(name, &[]), &CreateOptions::default()).await.unwrap();
    }
    match next(&mut events).await.unwrap().unwrap() {
        WatchEvent::Added(o) => assert_eq!(o.metadata.name.as_deref(), Some("c")),
        other => panic!("expected ADDED c, got {other:?}"),
    }
}
