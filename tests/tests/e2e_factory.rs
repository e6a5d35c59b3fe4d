//! The shared informer factory on a real kube-apiserver: however many
//! consumers ask for a type's informer, the server sees one list and one
//! watch for it (counted in the server's audit log).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use codegen_runtime::client::{CreateOptions, TypedClient};
use codegen_runtime::factory::SharedInformerFactory;
use codegen_runtime::informer::{InformerConfig, ResourceEventHandlerFuncs, SharedIndexInformer};
use codegen_runtime::lister::Selector;
use codegen_testenv::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use tokio::sync::mpsc;

/// Distinct requests (by audit ID) with `verb` on configmaps in `namespace`.
fn audited_requests(env: &TestEnv, verb: &str, namespace: &str) -> usize {
    env.audit_events()
        .into_iter()
        .filter(|e| {
            e["verb"] == verb && e["objectRef"]["resource"] == "configmaps" && e["objectRef"]["namespace"] == namespace
        })
        .filter_map(|e| e["auditID"].as_str().map(str::to_owned))
        .collect::<BTreeSet<_>>()
        .len()
}

async fn wait_for_requests(env: &TestEnv, verb: &str, namespace: &str, at_least: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = audited_requests(env, verb, namespace);
        if n >= at_least || Instant::now() > deadline {
            // Give a second request, if one were coming, time to show up.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            return audited_requests(env, verb, namespace);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn seed(env: &TestEnv, ns: &str, n: usize) -> Result<()> {
    let cms: TypedClient<ConfigMap> = TypedClient::new(env.admin_client().await?, Some(ns));
    for i in 0..n {
        let cm = ConfigMap {
            metadata: ObjectMeta { name: Some(format!("cm-{i}")), ..Default::default() },
            ..Default::default()
        };
        cms.create(&cm, &CreateOptions::default()).await?;
    }
    Ok(())
}

#[tokio::test]
async fn two_consumers_share_one_list_and_one_watch() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("factory").await?;
    seed(env, &ns, 3).await?;

    let factory = SharedInformerFactory::builder(env.admin_client().await?).namespace(ns.clone()).build();
    // Two consumers, as two controllers in one process would.
    let first = factory.informer_for::<ConfigMap>();
    let second = factory.informer_for::<ConfigMap>();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let tx2 = tx.clone();
    first.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |cm: std::sync::Arc<ConfigMap>, _| {
        let _ = tx.send(("first", cm.metadata.name.clone().unwrap_or_default()));
    }));
    second.add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |cm: std::sync::Arc<ConfigMap>, _| {
        let _ = tx2.send(("second", cm.metadata.name.clone().unwrap_or_default()));
    }));
    factory.start();
    factory.start(); // idempotent
    let synced = factory.wait_for_cache_sync().await;
    assert_eq!(synced.len(), 1, "{synced:?}");
    assert!(synced.values().all(|ok| *ok), "{synced:?}");

    let mut seen = BTreeSet::new();
    while seen.len() < 6 {
        let got = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await?.expect("handlers alive");
        seen.insert(got);
    }
    assert_eq!(second.lister().namespace(&ns).list(&Selector::default()).len(), 3);

    assert_eq!(wait_for_requests(env, "watch", &ns, 1).await, 1, "one watch for two consumers");
    assert_eq!(audited_requests(env, "list", &ns), 1, "one list for two consumers");
    factory.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn unshared_informers_each_open_their_own_watch() -> Result<()> {
    // The control for the test above: the audit count does see a second
    // watch when there is one.
    let env = TestEnv::shared();
    let ns = env.create_namespace("unshared").await?;
    seed(env, &ns, 1).await?;
    let client = env.admin_client().await?;
    let a: SharedIndexInformer<ConfigMap> =
        SharedIndexInformer::new(kube::Api::namespaced(client.clone(), &ns), InformerConfig::default());
    let b: SharedIndexInformer<ConfigMap> =
        SharedIndexInformer::new(kube::Api::namespaced(client, &ns), InformerConfig::default());
    a.start();
    b.start();
    assert!(a.wait_for_cache_sync().await && b.wait_for_cache_sync().await);
    assert_eq!(wait_for_requests(env, "watch", &ns, 2).await, 2);
    a.shutdown().await;
    b.shutdown().await;
    Ok(())
}
