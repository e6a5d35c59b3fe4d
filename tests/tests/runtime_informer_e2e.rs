//! codegen-runtime's shared informer on a real kube-apiserver, over the
//! seed's Student CRD: add/update/delete delivery, a blocked handler not
//! holding back another one, and `has_synced` over a 2,000-object initial
//! list.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use codegen_runtime::factory::SharedInformerFactory;
use codegen_runtime::informer::{
    DeletedObject, InformerConfig, ManagedFields, ResourceEventHandler, ResourceEventHandlerFuncs, SharedIndexInformer,
    wait_for_cache_sync,
};
use codegen_runtime::lister::everything;
use codegen_testenv::TestEnv;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::NamespaceResourceScope;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::timeout;

/// Hang guard only; on an idle machine everything here takes seconds.
const GUARD: Duration = Duration::from_secs(120);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Student {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: StudentSpec,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct StudentSpec {
    #[serde(default)]
    name: String,
    #[serde(default)]
    school: String,
}

impl kube::Resource for Student {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Student".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "example.k8s.io".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "students".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

fn student(name: &str, school: &str) -> Student {
    Student {
        api_version: "example.k8s.io/v1".into(),
        kind: "Student".into(),
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: StudentSpec { name: "wang".into(), school: school.into() },
    }
}

/// Installs the Student CRD and returns a fresh namespace and an admin client.
async fn setup(prefix: &str) -> Result<(kube::Client, String)> {
    let env = TestEnv::shared();
    let crd = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crds/students.example.k8s.io.yaml");
    env.kubectl_apply_file(&crd)?;
    env.wait_crd_established("students.example.k8s.io", Duration::from_secs(60)).await?;
    let ns = env.create_namespace(prefix).await?;
    Ok((env.admin_client().await?, ns))
}

/// What a handler saw: event, name, school.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Add(String, String, bool),
    Update(String, String, String),
    Delete(String, bool),
}

struct Recorder(mpsc::UnboundedSender<Seen>);

impl ResourceEventHandler<Student> for Recorder {
    fn on_add(&mut self, obj: Arc<Student>, is_in_initial_list: bool) {
        let name = obj.metadata.name.clone().unwrap_or_default();
        let _ = self.0.send(Seen::Add(name, obj.spec.school.clone(), is_in_initial_list));
    }

    fn on_update(&mut self, old: Arc<Student>, new: Arc<Student>) {
        let name = new.metadata.name.clone().unwrap_or_default();
        let _ = self.0.send(Seen::Update(name, old.spec.school.clone(), new.spec.school.clone()));
    }

    fn on_delete(&mut self, obj: DeletedObject<Student>) {
        let name = obj.object().metadata.name.clone().unwrap_or_default();
        let _ = self.0.send(Seen::Delete(name, obj.is_tombstone()));
    }
}

fn recorder() -> (Recorder, mpsc::UnboundedReceiver<Seen>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Recorder(tx), rx)
}

async fn next(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Result<Seen> {
    timeout(GUARD, seen.recv()).await.context("hang guard: no event")?.context("handler gone")
}

fn add(name: &str, school: &str, initial: bool) -> Seen {
    Seen::Add(name.into(), school.into(), initial)
}

#[tokio::test]
async fn informer_over_a_crd_sees_add_update_delete() -> Result<()> {
    let (client, ns) = setup("informer-crud").await?;
    let api: Api<Student> = Api::namespaced(client.clone(), &ns);
    api.create(&PostParams::default(), &student("before", "peking")).await?;

    let factory = SharedInformerFactory::builder(client).namespace(ns.clone()).build();
    let informer = factory.informer_for::<Student>();
    let (handler, mut seen) = recorder();
    informer.add_event_handler(handler);
    factory.start();
    let synced = timeout(GUARD, factory.wait_for_cache_sync()).await?;
    assert_eq!(synced, [("example.k8s.io/v1/Student".to_owned(), true)].into());
    assert_eq!(next(&mut seen).await?, add("before", "peking", true));

    api.create(&PostParams::default(), &student("wang", "china")).await?;
    assert_eq!(next(&mut seen).await?, add("wang", "china", false));

    let patch = json!({ "spec": { "school": "tsinghua" } });
    api.patch("wang", &PatchParams::default(), &Patch::Merge(&patch)).await?;
    assert_eq!(next(&mut seen).await?, Seen::Update("wang".into(), "china".into(), "tsinghua".into()));
    let cached = informer.lister().namespace(&ns).get("wang").context("cached")?;
    assert_eq!(cached.spec.school, "tsinghua");

    api.delete("wang", &DeleteParams::default()).await?;
    assert_eq!(next(&mut seen).await?, Seen::Delete("wang".into(), false));
    assert!(informer.lister().namespace(&ns).get("wang").is_none());
    assert_eq!(informer.lister().list(&everything()).len(), 1);
    factory.shutdown().await;
    Ok(())
}

/// With `ManagedFields::Text` (the default) the cached objects carry no
/// managedFields, and the lister hands back exactly those the API server
/// has, after the initial list (paged or streamed) and after a watch event.
#[tokio::test]
async fn managed_fields_kept_as_text_read_back_as_the_server_has_them() -> Result<()> {
    let (client, ns) = setup("informer-managed").await?;
    let api: Api<Student> = Api::namespaced(client.clone(), &ns);
    api.patch("kept", &PatchParams::apply("e2e-apply"), &Patch::Apply(&student("kept", "peking"))).await?;
    let label = json!({ "metadata": { "labels": { "by": "merge" } } });
    api.patch(
        "kept",
        &PatchParams { field_manager: Some("e2e-merge".into()), ..Default::default() },
        &Patch::Merge(&label),
    )
    .await?;
    let on_server = |obj: Student| obj.metadata.managed_fields;

    for streaming in [false, true] {
        let mut config = InformerConfig::default();
        assert_eq!(config.managed_fields, ManagedFields::Text);
        if streaming {
            config.watcher_config = watcher::Config::default().streaming_lists();
        }
        let informer = SharedIndexInformer::new(api.clone(), config);
        let (handler, mut seen) = recorder();
        informer.add_event_handler(handler);
        informer.start();
        assert!(timeout(GUARD, informer.wait_for_cache_sync()).await?);
        let listed_school = if streaming { "tsinghua" } else { "peking" };
        assert_eq!(next(&mut seen).await?, add("kept", listed_school, true));
        let cached = informer.lister().namespace(&ns).get("kept").context("cached")?;
        assert_eq!(cached.metadata.managed_fields, None, "not in the object");
        let kept = informer.lister().managed_fields(&cached)?;
        let managers: Vec<_> = kept.iter().flatten().filter_map(|entry| entry.manager.as_deref()).collect();
        assert_eq!(managers, ["e2e-apply", "e2e-merge"], "streaming: {streaming}");
        assert_eq!(kept, on_server(api.get("kept").await?), "streaming: {streaming}");
        let whole = informer.lister().with_managed_fields(&cached)?;
        assert_eq!((whole.metadata.managed_fields, whole.spec.school), (kept, cached.spec.school.clone()));

        let school = if streaming { "fudan" } else { "tsinghua" };
        api.patch("kept", &PatchParams::apply("e2e-apply"), &Patch::Apply(&student("kept", school))).await?;
        let Seen::Update(_, _, new_school) = next(&mut seen).await? else { panic!("an update") };
        assert_eq!(new_school, school);
        let updated = informer.lister().namespace(&ns).get("kept").context("cached")?;
        assert_eq!(informer.lister().managed_fields(&updated)?, on_server(api.get("kept").await?));
        assert_eq!(informer.lister().managed_fields(&cached)?, None, "the old object has left the cache");
        informer.shutdown().await;
    }
    Ok(())
}

#[tokio::test]
async fn a_blocked_handler_does_not_hold_back_another() -> Result<()> {
    let (client, ns) = setup("informer-blocked").await?;
    let api: Api<Student> = Api::namespaced(client.clone(), &ns);
    let informer = SharedIndexInformer::new(api.clone(), InformerConfig::default());

    // Waits for a permit before every event, like a handler stuck on a slow
    // call; dropping `gate` frees it.
    let (gate, gate_rx) = std_mpsc::channel::<()>();
    let (stuck_tx, mut stuck_seen) = mpsc::unbounded_channel();
    let stuck =
        informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |obj: Arc<Student>, initial| {
            let _ = gate_rx.recv();
            let _ = stuck_tx.send(add(obj.metadata.name.as_deref().unwrap_or_default(), &obj.spec.school, initial));
        }));
    let (handler, mut seen) = recorder();
    let flowing = informer.add_event_handler(handler);
    informer.start();
    assert!(timeout(GUARD, informer.wait_for_cache_sync()).await?);

    for name in ["a", "b", "c"] {
        api.create(&PostParams::default(), &student(name, "china")).await?;
    }
    for name in ["a", "b", "c"] {
        assert_eq!(next(&mut seen).await?, add(name, "china", false));
    }
    assert_eq!(informer.indexer().len(), 3, "the watch kept going too");
    assert!(timeout(GUARD, wait_for_cache_sync(&[&flowing])).await?);

    drop(gate);
    for name in ["a", "b", "c"] {
        assert_eq!(next(&mut stuck_seen).await?, add(name, "china", false));
    }
    assert!(stuck.has_synced());
    informer.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn has_synced_flips_only_after_all_initial_adds_are_delivered() -> Result<()> {
    const OBJECTS: usize = 2_000;
    let (client, ns) = setup("informer-2k").await?;
    let api: Api<Student> = Api::namespaced(client.clone(), &ns);
    futures::stream::iter(0..OBJECTS)
        .map(|i| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &student(&format!("s-{i:04}"), "china")).await }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await?;

    // The default page size (500) makes the initial list four pages.
    let informer = SharedIndexInformer::new(api, InformerConfig::default());
    let (gate, gate_rx) = std_mpsc::channel::<()>();
    let delivered = Arc::new(AtomicUsize::new(0));
    let not_initial = Arc::new(AtomicUsize::new(0));
    let (counted, late) = (delivered.clone(), not_initial.clone());
    let mut first = Some(gate_rx);
    let registration =
        informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |_: Arc<Student>, initial| {
            // Hold the first add until the test has looked at the flags.
            if let Some(gate) = first.take() {
                let _ = gate.recv();
            }
            if !initial {
                late.fetch_add(1, Ordering::AcqRel);
            }
            counted.fetch_add(1, Ordering::AcqRel);
        }));
    informer.start();
    assert!(timeout(GUARD, informer.wait_for_cache_sync()).await?);
    assert_eq!(informer.indexer().len(), OBJECTS, "synced means the whole list is cached");
    assert!(!registration.has_synced(), "the handler has not processed the initial list");
    assert_eq!(delivered.load(Ordering::Acquire), 0);

    drop(gate);
    assert!(timeout(GUARD, wait_for_cache_sync(&[&registration])).await?);
    assert_eq!(delivered.load(Ordering::Acquire), OBJECTS, "synced only after every initial add");
    assert_eq!(not_initial.load(Ordering::Acquire), 0, "every add came from the initial list");
    informer.shutdown().await;
    Ok(())
}
