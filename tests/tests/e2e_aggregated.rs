//! Generated clients for an aggregated API server: the `wardle` fixture
//! (`#[resource(skip_crd)]`: everything but the CRD) against
//! k8s.io/sample-apiserver registered behind APIServices on the real
//! kube-apiserver. Every request goes to kube-apiserver, whose aggregation
//! layer proxies it to the sample server: the clientset's verbs, watches,
//! an informer and its lister, server-side apply, the sample server's
//! defaulting and version conversion, its `BanFlunder` admission plugin and
//! the delegated authorization, each as a typed result or error.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use codegen_runtime::client::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, PatchOptions, PatchType, UpdateOptions,
};
use codegen_runtime::lister::everything;
use codegen_testenv::{SAMPLE_GROUP, TestEnv, UNPRIVILEGED_USER};
use futures::StreamExt;
use kube::core::WatchEvent;
use kube_codegen_tests::wardle::apis::wardle::{v1alpha1, v1beta1};
use kube_codegen_tests::wardle::client::applyconfigurations::wardle::v1alpha1::{
    FischerApplyConfiguration, FlunderApplyConfiguration, FlunderSpecApplyConfiguration,
};
use kube_codegen_tests::wardle::client::clientset::Clientset;
use kube_codegen_tests::wardle::client::informers::SharedInformerFactory;
use serde_json::json;

/// The shared environment with the sample server registered and Available.
fn env() -> &'static TestEnv {
    let env = TestEnv::shared();
    if let Err(e) = env.sample_apiserver() {
        panic!("{e:#}");
    }
    env
}

fn flunder(name: &str, reference: &str) -> v1alpha1::Flunder {
    v1alpha1::Flunder::new(name, v1alpha1::FlunderSpec { reference: reference.into(), reference_type: None })
}

/// A name unique to this process and call, for cluster-scoped fischers.
fn unique(prefix: &str) -> String {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!("{prefix}-{}-{}", std::process::id(), SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// Requests kube-apiserver audited for `resource` of the wardle group with
/// `verb` in `namespace`: proof they went through the aggregation layer.
fn audited(env: &TestEnv, verb: &str, resource: &str, namespace: &str) -> usize {
    env.audit_events()
        .iter()
        .filter(|e| {
            e["verb"] == verb
                && e["objectRef"]["apiGroup"] == SAMPLE_GROUP
                && e["objectRef"]["resource"] == resource
                && e["objectRef"]["namespace"] == namespace
        })
        .filter_map(|e| e["auditID"].as_str().map(str::to_owned))
        .collect::<BTreeSet<_>>()
        .len()
}

#[tokio::test]
async fn every_verb_through_the_aggregation_layer() -> Result<()> {
    let env = env();
    let ns = env.create_namespace("wardle").await?;
    let clientset = Clientset::new(env.admin_client().await?);
    let flunders = clientset.wardle_v1alpha1().flunders(&ns);

    // Create: the sample server defaults referenceType when reference is set.
    let created = flunders.create(&flunder("alpha", "beta"), &CreateOptions::default()).await?;
    assert_eq!(created.spec.reference, "beta");
    assert_eq!(created.spec.reference_type, Some(v1alpha1::ReferenceType::Flunder), "defaulted by the server");
    assert!(created.metadata.uid.is_some() && created.metadata.resource_version.is_some());
    assert_eq!(created.types.api_version, "wardle.example.com/v1alpha1");

    // Get and list.
    let got = flunders.get("alpha", &GetOptions::default()).await?;
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let listed = flunders.list(&ListOptions::default()).await?;
    assert_eq!(listed.items.iter().map(|f| f.metadata.name.clone().unwrap_or_default()).collect::<Vec<_>>(), ["alpha"]);

    // The other version of the same object: the sample server converts
    // v1alpha1's `reference` into v1beta1's `flunderReference`.
    let beta = clientset.wardle_v1beta1().flunders(&ns).get("alpha", &GetOptions::default()).await?;
    assert_eq!(beta.types.api_version, "wardle.example.com/v1beta1");
    assert_eq!(beta.spec.flunder_reference, "beta");
    assert_eq!(beta.spec.reference_type, Some(v1beta1::ReferenceType::Flunder));

    // Update, with optimistic concurrency: a stale resourceVersion conflicts.
    let mut changed = got.clone();
    changed.spec.reference = "gamma".into();
    let updated = flunders.update(&changed, &UpdateOptions::default()).await?;
    assert_eq!(updated.spec.reference, "gamma");
    let stale = flunders.update(&changed, &UpdateOptions::default()).await.expect_err("stale update");
    assert!(stale.is_conflict(), "{stale:?}");

    // Merge patch, then server-side apply through the apply configuration.
    let patched = flunders
        .patch("alpha", &PatchType::Merge(json!({"metadata": {"labels": {"tier": "gold"}}})), &PatchOptions::default())
        .await?;
    assert_eq!(patched.metadata.labels.as_ref().and_then(|l| l.get("tier")).map(String::as_str), Some("gold"));
    let applied = flunders
        .apply(
            &FlunderApplyConfiguration::new("applied", &ns)
                .with_spec(FlunderSpecApplyConfiguration::new().with_reference("alpha")),
            &ApplyOptions::new("wardle-e2e"),
        )
        .await?;
    assert_eq!(applied.spec.reference, "alpha");
    let managers: Vec<String> =
        applied.metadata.managed_fields.iter().flatten().filter_map(|m| m.manager.clone()).collect();
    assert!(managers.contains(&"wardle-e2e".to_owned()), "{managers:?}");

    // Watch from the list's resourceVersion: the next create and delete.
    let rv = flunders.list(&ListOptions::default()).await?.metadata.resource_version.context("list RV")?;
    let mut events = flunders
        .watch(&ListOptions { resource_version: Some(rv), timeout_seconds: Some(30), ..Default::default() })
        .await?;
    flunders.create(&flunder("watched", ""), &CreateOptions::default()).await?;
    flunders.delete("watched", &DeleteOptions::default()).await?;
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < 2 && Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(20), events.next()).await {
            Ok(Some(Ok(WatchEvent::Added(f)))) => seen.push(format!("ADDED {}", f.metadata.name.unwrap_or_default())),
            Ok(Some(Ok(WatchEvent::Deleted(f)))) => {
                seen.push(format!("DELETED {}", f.metadata.name.unwrap_or_default()))
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(e))) => bail!("watch error: {e:?}"),
            Ok(None) | Err(_) => break,
        }
    }
    assert_eq!(seen, ["ADDED watched", "DELETED watched"]);

    // Delete; the object is gone.
    flunders.delete("alpha", &DeleteOptions::default()).await?;
    let gone = flunders.get("alpha", &GetOptions::default()).await.expect_err("deleted");
    assert!(gone.is_not_found(), "{gone:?}");
    flunders.delete_collection(&DeleteOptions::default(), &ListOptions::default()).await?;
    assert!(flunders.list_all(&ListOptions::default()).await?.is_empty());

    // Cluster-scoped fischers: no namespace anywhere.
    let fischers = clientset.wardle_v1alpha1().fischers();
    let name = unique("fischer");
    let mut fischer = v1alpha1::Fischer::new(&name);
    fischer.disallowed_flunders = vec!["nobody".into()];
    let created = fischers.create(&fischer, &CreateOptions::default()).await?;
    assert_eq!(created.metadata.namespace, None);
    assert_eq!(created.disallowed_flunders, ["nobody"]);
    let applied = fischers
        .apply(
            &FischerApplyConfiguration::new(&name).with_disallowed_flunders(["nobody", "noone"]),
            &ApplyOptions::new("wardle-e2e"),
        )
        .await?;
    assert_eq!(applied.disallowed_flunders, ["nobody", "noone"], "an atomic list is replaced");
    assert!(
        fischers.list_all(&ListOptions::default()).await?.iter().any(|f| f.metadata.name.as_deref() == Some(&name))
    );
    fischers.delete(&name, &DeleteOptions::default()).await?;

    // Each of these went to kube-apiserver, which audited it and proxied it.
    assert!(audited(env, "create", "flunders", &ns) >= 2, "creates audited by kube-apiserver");
    assert!(audited(env, "watch", "flunders", &ns) >= 1, "the watch audited by kube-apiserver");
    Ok(())
}

#[tokio::test]
async fn informer_and_lister_sync_through_the_aggregation_layer() -> Result<()> {
    let env = env();
    let ns = env.create_namespace("wardle-informer").await?;
    let clientset = Clientset::new(env.admin_client().await?);
    let flunders = clientset.wardle_v1alpha1().flunders(&ns);
    for i in 0..3 {
        flunders.create(&flunder(&format!("seed-{i}"), ""), &CreateOptions::default()).await?;
    }
    let fischer_name = unique("cached");
    clientset
        .wardle_v1alpha1()
        .fischers()
        .create(&v1alpha1::Fischer::new(&fischer_name), &CreateOptions::default())
        .await?;

    let factory = SharedInformerFactory::new(env.admin_client().await?, None);
    let flunder_informer = factory.wardle().v1alpha1().flunders();
    let fischer_informer = factory.wardle().v1alpha1().fischers();
    let (lister, fischer_lister) = (flunder_informer.lister(), fischer_informer.lister());
    factory.start();
    let synced = tokio::time::timeout(Duration::from_secs(60), factory.wait_for_cache_sync()).await?;
    assert_eq!(synced.len(), 2, "{synced:?}");
    assert!(synced.values().all(|ok| *ok), "{synced:?}");

    let names = |lister: &kube_codegen_tests::wardle::client::listers::wardle::v1alpha1::FlunderLister| {
        lister.flunders(&ns).list(&everything()).iter().filter_map(|f| f.metadata.name.clone()).collect::<BTreeSet<_>>()
    };
    assert_eq!(names(&lister), ["seed-0", "seed-1", "seed-2"].map(String::from).into());
    assert!(fischer_lister.get(&fischer_name).is_some(), "the cluster-scoped lister has the fischer");

    // Later writes reach the cache through the proxied watch.
    flunders.create(&flunder("late", "seed-0"), &CreateOptions::default()).await?;
    flunders.delete("seed-1", &DeleteOptions::default()).await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while names(&lister) != ["late", "seed-0", "seed-2"].map(String::from).into() {
        assert!(Instant::now() < deadline, "the lister did not follow: {:?}", names(&lister));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let late = lister.flunders(&ns).get("late").context("late in the cache")?;
    assert_eq!(late.spec.reference_type, Some(v1alpha1::ReferenceType::Flunder), "the cache holds the server's object");

    factory.shutdown().await;
    clientset.wardle_v1alpha1().fischers().delete(&fischer_name, &DeleteOptions::default()).await?;
    Ok(())
}

#[tokio::test]
async fn banned_name_is_a_typed_forbidden_error() -> Result<()> {
    let env = env();
    let ns = env.create_namespace("wardle-banned").await?;
    let clientset = Clientset::new(env.admin_client().await?);
    let banned = unique("banned");
    let fischer = unique("ban-list");
    let mut ban = v1alpha1::Fischer::new(&fischer);
    ban.disallowed_flunders = vec![banned.clone()];
    clientset.wardle_v1alpha1().fischers().create(&ban, &CreateOptions::default()).await?;

    // BanFlunder reads fischers from its own informer: retry until it has
    // seen this one (a create that got through is undone).
    let flunders = clientset.wardle_v1alpha1().flunders(&ns);
    let deadline = Instant::now() + Duration::from_secs(30);
    let err = loop {
        match flunders.create(&flunder(&banned, ""), &CreateOptions::default()).await {
            Err(e) => break e,
            Ok(_) => {
                flunders.delete(&banned, &DeleteOptions::default()).await?;
                assert!(Instant::now() < deadline, "BanFlunder never refused `{banned}`");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    assert!(err.is_forbidden(), "{err:?}");
    assert_eq!(err.reason(), Some("Forbidden"), "{err:?}");
    let status = err.status().context("the server's Status")?;
    assert_eq!(status.code, 403);
    assert!(
        status.message.contains("this name may not be used, please change the resource name"),
        "{}",
        status.message
    );
    // Another name passes the same plugin.
    flunders.create(&flunder(&format!("{banned}-ok"), ""), &CreateOptions::default()).await?;
    clientset.wardle_v1alpha1().fischers().delete(&fischer, &DeleteOptions::default()).await?;
    Ok(())
}

#[tokio::test]
async fn the_sample_server_asks_kube_apiserver_to_authorize() -> Result<()> {
    let env = env();
    let ns = env.create_namespace("wardle-rbac").await?;
    // alice has no role: the sample server's SubjectAccessReview says no.
    let as_alice = Clientset::new(env.client_for(UNPRIVILEGED_USER).await?);
    let err = as_alice.wardle_v1alpha1().flunders(&ns).list(&ListOptions::default()).await.expect_err("no RBAC");
    assert!(err.is_forbidden(), "{err:?}");
    let message = err.status().map(|s| s.message.clone()).unwrap_or_default();
    assert!(message.contains(UNPRIVILEGED_USER), "the user the front proxy named: {message}");

    // A Role on the wardle group lets her read.
    env.create_role(&ns, "flunder-reader", SAMPLE_GROUP, &["flunders"], &["get", "list", "watch"]).await?;
    env.bind_role(&ns, "alice-reads", "Role", "flunder-reader", codegen_testenv::user_subject(UNPRIVILEGED_USER))
        .await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match as_alice.wardle_v1alpha1().flunders(&ns).list(&ListOptions::default()).await {
            Ok(list) => {
                assert!(list.items.is_empty());
                break;
            }
            // The sample server caches authorization decisions briefly.
            Err(e) if e.is_forbidden() && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    let denied = as_alice.wardle_v1alpha1().flunders(&ns).create(&flunder("x", ""), &CreateOptions::default()).await;
    assert!(denied.expect_err("read-only role").is_forbidden());
    Ok(())
}
