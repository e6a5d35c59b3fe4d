//! The macro-generated client and informer of `User` against a real
//! kube-apiserver: the CRD from `User::crd()` is applied and established,
//! Users are created, read, listed, updated and deleted through
//! `User::client(..)`, the informer from `User::informer(..)` sees add,
//! update and delete, its lister serves the cache, and the server enforces
//! the CRD's validation (userID 999999 is rejected).

use std::time::Duration;

use anyhow::{Context, Result};
use codegen_runtime::client::{ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, UpdateOptions};
use codegen_runtime::factory::SharedInformerFactory;
use codegen_runtime::informer::ResourceEventHandlerFuncs;
use codegen_runtime::lister::everything;
use codegen_testenv::TestEnv;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use tokio::sync::mpsc;
use users_macro::api::{User, UserApplyConfiguration, UserSpec, UserSpecApplyConfiguration, extract_user};

#[derive(Debug, PartialEq)]
enum Seen {
    Add(String),
    Update(String, i32),
    Delete(String),
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Seen>) -> Result<Seen> {
    // A hang guard, not a timing assertion.
    tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .context("no informer event within 60s")?
        .context("handler dropped")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn macro_client_and_informer_on_a_real_apiserver() -> Result<()> {
    let env = TestEnv::shared();
    let client = env.admin_client().await?;

    // The CRD straight from the macro.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(User::CRD_NAME, &PatchParams::apply("users-macro-e2e").force(), &Patch::Apply(User::crd())).await?;
    env.wait_crd_established(User::CRD_NAME, Duration::from_secs(60)).await?;

    let ns = env.create_namespace("users-macro").await?;
    let users = User::client(client.clone(), &ns);

    // The informer, limited to the test's namespace.
    let factory = SharedInformerFactory::builder(client.clone()).namespace(ns.clone()).build();
    let informer = User::informer(&factory);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tx_u, tx_d) = (tx.clone(), tx.clone());
    informer.informer().add_event_handler(
        ResourceEventHandlerFuncs::new()
            .on_add(move |u: std::sync::Arc<User>, _| {
                let _ = tx.send(Seen::Add(u.metadata.name.clone().unwrap_or_default()));
            })
            .on_update(move |_, u: std::sync::Arc<User>| {
                let _ = tx_u.send(Seen::Update(u.metadata.name.clone().unwrap_or_default(), u.spec.user_id));
            })
            .on_delete(move |d| {
                let _ = tx_d.send(Seen::Delete(d.object().metadata.name.clone().unwrap_or_default()));
            }),
    );
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert!(synced.values().all(|s| *s), "{synced:?}");

    // Create, get, list.
    let alice = User::new("alice", UserSpec { user_id: 1000, groups: vec!["dev".into()], ..Default::default() });
    let created = users.create(&alice, &CreateOptions::default()).await?;
    assert_eq!(created.spec.user_id, 1000);
    assert_eq!(created.spec.shell.as_deref(), Some("bash"), "the CRD's default applies");
    assert_eq!(next(&mut rx).await?, Seen::Add("alice".into()));
    let got = users.get("alice", &GetOptions::default()).await?;
    assert_eq!(got.spec.groups, vec!["dev".to_string()]);
    users
        .create(&User::new("bob", UserSpec { user_id: 1001, ..Default::default() }), &CreateOptions::default())
        .await?;
    assert_eq!(next(&mut rx).await?, Seen::Add("bob".into()));
    let mut names: Vec<String> =
        users.list_all(&ListOptions::default()).await?.into_iter().filter_map(|u| u.metadata.name).collect();
    names.sort();
    assert_eq!(names, ["alice", "bob"]);
    assert_eq!(users.list(&ListOptions::default()).await?.items.len(), 2);

    // The lister serves the informer's cache.
    let lister = informer.lister();
    assert_eq!(lister.users(&ns).get("alice").map(|u| u.spec.user_id), Some(1000));
    assert_eq!(lister.list(&everything()).len(), 2);

    // Update.
    let mut changed = got.clone();
    changed.spec.user_id = 2000;
    let updated = users.update(&changed, &UpdateOptions::default()).await?;
    assert_eq!(updated.spec.user_id, 2000);
    assert_eq!(next(&mut rx).await?, Seen::Update("alice".into(), 2000));

    // The server enforces the CRD's validation.
    let invalid = User::new("mallory", UserSpec { user_id: 999_999, ..Default::default() });
    let err = users.create(&invalid, &CreateOptions::default()).await.expect_err("userID 999999 must be rejected");
    assert!(err.is_invalid(), "{err}");
    assert!(err.to_string().contains("65535"), "{err}");

    // Typed server-side apply from the macro's apply configuration: a
    // second manager adds a group without touching alice's userID, and
    // extract gives back exactly what it applied.
    let ac = UserApplyConfiguration::new("alice", &ns)
        .with_spec(UserSpecApplyConfiguration::new().with_groups(["dev", "ops"]).with_user_id(2000));
    let applied = users.apply(&ac, &ApplyOptions::new("group-sync")).await?;
    assert_eq!((applied.spec.user_id, applied.spec.groups.len()), (2000, 2));
    assert_eq!(next(&mut rx).await?, Seen::Update("alice".into(), 2000));
    assert_eq!(extract_user(&applied, "group-sync")?, ac);

    // Delete.
    users.delete("bob", &DeleteOptions::default()).await?;
    assert_eq!(next(&mut rx).await?, Seen::Delete("bob".into()));
    assert!(users.get("bob", &GetOptions::default()).await.expect_err("deleted").is_not_found());

    factory.shutdown().await;
    Ok(())
}
