//! `codegen_runtime::client::TypedClient` against a real kube-apiserver:
//! every client-gen verb on a namespaced kind, a cluster-scoped kind, the
//! status and scale subresources, the patch types, server-side apply and the
//! error classification.

use std::collections::BTreeMap;

use anyhow::Result;
use codegen_runtime::client::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, PatchOptions, PatchType, TypedClient,
    UpdateOptions,
};
use codegen_testenv::TestEnv;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Namespace, PodSpec, PodTemplateSpec};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::ObjectMeta;
use kube::core::WatchEvent;
use serde_json::json;

fn config_map(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..Default::default()
        },
        data: Some(data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
        ..Default::default()
    }
}

#[tokio::test]
async fn every_verb_on_a_namespaced_kind() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("typed").await?;
    let cms: TypedClient<ConfigMap> = TypedClient::new(env.admin_client().await?, Some(&ns));

    // create / get / AlreadyExists
    let created = cms.create(&config_map("a", &[("app", "web")], &[("k", "1")]), &CreateOptions::default()).await?;
    assert_eq!(created.metadata.namespace.as_deref(), Some(ns.as_str()));
    let err = cms.create(&config_map("a", &[], &[]), &CreateOptions::default()).await.unwrap_err();
    assert!(err.is_already_exists(), "{err:?}");
    let got = cms.get("a", &GetOptions::default()).await?;
    assert_eq!(got.data.as_ref().and_then(|d| d.get("k")).map(String::as_str), Some("1"));

    // dry-run create persists nothing
    cms.create(&config_map("dry", &[], &[]), &CreateOptions { dry_run: true, ..Default::default() }).await?;
    assert!(cms.get("dry", &GetOptions::default()).await.unwrap_err().is_not_found());

    // update, then a stale update is a Conflict
    let mut next = got.clone();
    next.data.get_or_insert_with(BTreeMap::new).insert("k".into(), "2".into());
    let updated = cms.update(&next, &UpdateOptions::default()).await?;
    assert_ne!(updated.metadata.resource_version, got.metadata.resource_version);
    let err = cms.update(&next, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.is_conflict(), "{err:?}");

    // the three patch types
    cms.patch("a", &PatchType::Merge(json!({"data": {"merge": "yes"}})), &PatchOptions::default()).await?;
    let json_patch: codegen_runtime::client::json_patch::Patch =
        serde_json::from_value(json!([{ "op": "add", "path": "/data/json", "value": "yes" }]))?;
    cms.patch("a", &PatchType::Json(json_patch), &PatchOptions::default()).await?;
    cms.patch("a", &PatchType::StrategicMerge(json!({"data": {"smp": "yes"}})), &PatchOptions::default()).await?;
    let patched = cms.get("a", &GetOptions::default()).await?;
    let data = patched.data.unwrap_or_default();
    for key in ["merge", "json", "smp"] {
        assert_eq!(data.get(key).map(String::as_str), Some("yes"), "{key} in {data:?}");
    }
    // a failing JSON-patch test operation rejects the whole patch
    let failing: codegen_runtime::client::json_patch::Patch = serde_json::from_value(json!([
        { "op": "test", "path": "/data/k", "value": "nope" },
        { "op": "add", "path": "/data/never", "value": "x" }
    ]))?;
    let err = cms.patch("a", &PatchType::Json(failing), &PatchOptions::default()).await.unwrap_err();
    assert!(err.code().is_some_and(|c| c == 422 || c == 409), "{err:?}");

    // server-side apply: create through apply, then a second manager conflicts unless forced
    let applied = cms
        .apply(
            "applied",
            &config_map("applied", &[("app", "web")], &[("owner", "one")]),
            &ApplyOptions::new("manager-one"),
        )
        .await?;
    let managers: Vec<_> =
        applied.metadata.managed_fields.unwrap_or_default().into_iter().filter_map(|m| m.manager).collect();
    assert_eq!(managers, vec!["manager-one".to_string()]);
    let polite = ApplyOptions { force: false, ..ApplyOptions::new("manager-two") };
    let err = cms.apply("applied", &config_map("applied", &[], &[("owner", "two")]), &polite).await.unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
    let forced = cms
        .apply("applied", &config_map("applied", &[], &[("owner", "two")]), &ApplyOptions::new("manager-two"))
        .await?;
    assert_eq!(forced.data.unwrap_or_default().get("owner").map(String::as_str), Some("two"));

    // list with a label selector, and paging
    for i in 0..5 {
        cms.create(&config_map(&format!("page-{i}"), &[("paged", "true")], &[]), &CreateOptions::default()).await?;
    }
    let selected = cms.list(&ListOptions { label_selector: Some("app=web".into()), ..Default::default() }).await?;
    let mut names: Vec<_> = selected.items.iter().filter_map(|c| c.metadata.name.clone()).collect();
    names.sort();
    assert_eq!(names, vec!["a", "applied"]);
    let page = cms
        .list(&ListOptions { label_selector: Some("paged=true".into()), limit: Some(2), ..Default::default() })
        .await?;
    assert_eq!(page.items.len(), 2);
    assert!(page.metadata.continue_.as_deref().is_some_and(|c| !c.is_empty()));
    let all = cms
        .list_all(&ListOptions { label_selector: Some("paged=true".into()), limit: Some(2), ..Default::default() })
        .await?;
    assert_eq!(all.len(), 5);

    // watch from the current version sees a modification and a deletion in order
    let from = cms.list(&ListOptions::default()).await?.metadata.resource_version;
    let mut events =
        cms.watch(&ListOptions { resource_version: from, timeout_seconds: Some(30), ..Default::default() }).await?;
    cms.patch("page-0", &PatchType::Merge(json!({"data": {"w": "1"}})), &PatchOptions::default()).await?;
    cms.delete("page-0", &DeleteOptions::default()).await?;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let next = tokio::time::timeout(std::time::Duration::from_secs(30), events.next()).await?;
        match next {
            Some(Ok(WatchEvent::Modified(cm))) => {
                seen.push(format!("MODIFIED {}", cm.metadata.name.unwrap_or_default()))
            }
            Some(Ok(WatchEvent::Deleted(cm))) => seen.push(format!("DELETED {}", cm.metadata.name.unwrap_or_default())),
            Some(Ok(WatchEvent::Bookmark(_))) => {}
            other => panic!("unexpected watch event {other:?}"),
        }
    }
    assert_eq!(seen, vec!["MODIFIED page-0", "DELETED page-0"]);

    // delete with a stale precondition is a Conflict; delete_collection by selector
    let err = cms
        .delete("page-1", &DeleteOptions { preconditions_resource_version: Some("1".into()), ..Default::default() })
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
    cms.delete_collection(
        &DeleteOptions::default(),
        &ListOptions { label_selector: Some("paged=true".into()), ..Default::default() },
    )
    .await?;
    let left = cms.list(&ListOptions { label_selector: Some("paged=true".into()), ..Default::default() }).await?;
    assert!(left.items.is_empty());
    let err = cms.get("page-1", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn cluster_scoped_kinds_ignore_the_namespace() -> Result<()> {
    let env = TestEnv::shared();
    let roles: TypedClient<ClusterRole> = TypedClient::new(env.admin_client().await?, Some("ignored"));
    let name = format!("typed-client-{}", std::process::id());
    let role =
        ClusterRole { metadata: ObjectMeta { name: Some(name.clone()), ..Default::default() }, ..Default::default() };
    roles.create(&role, &CreateOptions::default()).await?;
    let got = roles.get(&name, &GetOptions::default()).await?;
    assert_eq!(got.metadata.namespace, None);
    let namespaces: TypedClient<Namespace> = TypedClient::new(env.admin_client().await?, None);
    let listed = namespaces.list_all(&ListOptions::default()).await?;
    assert!(listed.iter().any(|n| n.metadata.name.as_deref() == Some("default")));
    roles.delete(&name, &DeleteOptions::default()).await?;
    Ok(())
}

fn deployment(name: &str) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    Deployment {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("busybox".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn status_and_scale_subresources() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("subres").await?;
    let deployments: TypedClient<Deployment> = TypedClient::new(env.admin_client().await?, Some(&ns));
    let created = deployments.create(&deployment("web"), &CreateOptions::default()).await?;

    // update_status changes status only; a spec change sent with it is ignored
    let mut with_status = created.clone();
    with_status.status =
        Some(DeploymentStatus { observed_generation: Some(1), replicas: Some(1), ..Default::default() });
    with_status.spec.replicas = Some(7);
    let after = deployments.update_status(&with_status, &UpdateOptions::default()).await?;
    assert_eq!(after.status.as_ref().and_then(|s| s.observed_generation), Some(1));
    assert_eq!(after.spec.replicas, Some(1));

    // apply_status as a controller would
    // (k8s-openapi's DeploymentSpec is not optional; /status ignores spec)
    let mut applied = deployment("web");
    applied.status = Some(DeploymentStatus { ready_replicas: Some(1), ..Default::default() });
    let after = deployments.apply_status("web", &applied, &ApplyOptions::new("status-writer")).await?;
    assert_eq!(after.status.as_ref().and_then(|s| s.ready_replicas), Some(1));

    // the scale subresource
    let scale: Scale = deployments.get_subresource("scale", "web").await?;
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    let mut bigger = scale.clone();
    bigger.spec.get_or_insert_with(Default::default).replicas = Some(3);
    let scaled: Scale = deployments.update_subresource("scale", "web", &bigger, &UpdateOptions::default()).await?;
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(3));
    let now = deployments.get("web", &GetOptions::default()).await?;
    assert_eq!(now.spec.replicas, Some(3));
    Ok(())
}

#[tokio::test]
async fn errors_keep_the_api_status() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("errors").await?;
    let cms: TypedClient<ConfigMap> = TypedClient::new(env.admin_client().await?, Some(&ns));
    let err = cms.get("missing", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(err.code(), Some(404));

    let mut bad = config_map("Not_A_Valid_Name", &[], &[]);
    bad.metadata.labels = Some([("bad key!".to_string(), "v".to_string())].into());
    let err = cms.create(&bad, &CreateOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    let fields: Vec<String> = err.causes().into_iter().map(|c| c.field).collect();
    assert!(fields.iter().any(|f| f == "metadata.name"), "{fields:?}");
    assert!(fields.iter().any(|f| f.starts_with("metadata.labels")), "{fields:?}");

    let as_user: TypedClient<ConfigMap> = TypedClient::new(env.user_client().await?, Some(&ns));
    let err = as_user.list(&ListOptions::default()).await.unwrap_err();
    assert!(err.is_forbidden(), "{err:?}");
    Ok(())
}
