//! A Student that does not decode into the controller's type, next to 100
//! good ones, on a real kube-apiserver: the CRD is newer than the
//! controller (`spec.school` may also be an integer), and `school: 42`
//! fails serde. The controller reconciles every good Student, records one
//! Warning event per bad Student, and reconciles a bad one once it is
//! fixed. A binary of its own: it changes the Student CRD of its server.

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use codegen_testenv::{TestEnv, kubectl_result};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use student_controller::controller::{FINALIZER, MALFORMED, config_map_name};
use student_controller::pkg::apis::example::v1::Student;

use common::{ControllerProcess, controller_identity, create_students, eventually, install_crd};

/// `spec.school` becomes int-or-string: what a newer version of the API
/// would allow and this controller's `String` does not.
const NEWER_CRD: &str = r#"[{"op": "replace", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/school", "value": {"description": "The school the student attends, or its number.", "x-kubernetes-int-or-string": true}}]"#;

fn bad_student_yaml(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: example.k8s.io/v1\nkind: Student\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  name: {name}\n  school: 42\n"
    )
}

/// Creates a Student whose school is a number, retrying while the API
/// server still validates against the older schema.
async fn create_bad_student(env: &TestEnv, ns: &str, name: &str) -> Result<()> {
    eventually(&format!("the API server to accept {name}"), Duration::from_secs(60), || async {
        let out = env.kubectl_as("admin", &["create", "-f", "-"], Some(&bad_student_yaml(ns, name)));
        Ok(kubectl_result(out).ok().map(|_| ()))
    })
    .await
}

/// Students listed without decoding them into `Student`.
async fn raw_students(env: &TestEnv, ns: &str) -> Result<Vec<DynamicObject>> {
    let resource = ApiResource::erase::<Student>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(env.admin_client().await?, ns, &resource);
    Ok(api.list(&ListParams::default()).await?.items)
}

/// Every Student except those in `bad` has a status for its generation,
/// the finalizer and its ConfigMap; the bad ones have neither.
async fn good_ones_reconciled(env: &TestEnv, ns: &str, good: usize, bad: &[&str]) -> Result<Option<()>> {
    let students = raw_students(env, ns).await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, ns);
    let cms = cms.list(&ListParams::default().labels("app.kubernetes.io/managed-by=student-controller")).await?.items;
    let mut reconciled = 0;
    for s in &students {
        let name = s.metadata.name.clone().unwrap_or_default();
        let done = s.data["status"]["observedGeneration"].as_i64() == s.metadata.generation
            && s.metadata.finalizers.as_ref().is_some_and(|f| f.iter().any(|f| f == FINALIZER));
        let has_cm = cms.iter().any(|c| c.metadata.name.as_deref() == Some(&config_map_name(&name)));
        if bad.contains(&name.as_str()) {
            assert!(!done && !has_cm, "{name} does not decode, yet it was reconciled");
        } else if done && has_cm {
            reconciled += 1;
        }
    }
    Ok((reconciled == good && cms.len() == good).then_some(()))
}

/// The controller's Warning events about undecodable Students, by name.
async fn malformed_events(env: &TestEnv, ns: &str) -> Result<Vec<(String, String)>> {
    let events: Api<Event> = Api::namespaced(env.admin_client().await?, ns);
    let mut out: Vec<(String, String)> = events
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(MALFORMED))
        .map(|e| {
            assert_eq!(e.type_.as_deref(), Some("Warning"));
            let name = e.regarding.and_then(|r| r.name).unwrap_or_default();
            (name, e.note.unwrap_or_default())
        })
        .collect();
    out.sort();
    Ok(out)
}

#[tokio::test]
async fn a_student_that_does_not_decode_is_reported_once_and_the_rest_reconcile() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    kubectl_result(env.kubectl(&["patch", "crd", "students.example.k8s.io", "--type=json", "-p", NEWER_CRD]))?;
    let ns = env.create_namespace("ctl-bad").await?;
    let kubeconfig = controller_identity(env, &ns).await?;

    // In the first list page: one bad Student among 101.
    create_students(env, &ns, "good", 100).await?;
    create_bad_student(env, &ns, "bad").await?;
    let controller = ControllerProcess::start(&kubeconfig, &ns, env.work_dir().join(format!("{ns}.log")))?;
    eventually("the 100 good Students reconciled", Duration::from_secs(180), || {
        good_ones_reconciled(env, &ns, 100, &["bad"])
    })
    .await
    .with_context(|| controller.log_text())?;
    let events = eventually("a Malformed event about `bad`", Duration::from_secs(60), || async {
        let events = malformed_events(env, &ns).await?;
        Ok((!events.is_empty()).then_some(events))
    })
    .await?;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "bad");
    assert!(events[0].1.contains("`spec.school`") && events[0].1.contains("integer `42`"), "{}", events[0].1);

    // In a watch event: a second bad Student, and another good one.
    create_bad_student(env, &ns, "bad-2").await?;
    create_students(env, &ns, "late", 1).await?;
    eventually("101 good Students reconciled", Duration::from_secs(60), || {
        good_ones_reconciled(env, &ns, 101, &["bad", "bad-2"])
    })
    .await
    .with_context(|| controller.log_text())?;
    eventually("a Malformed event about `bad-2`", Duration::from_secs(60), || async {
        let events = malformed_events(env, &ns).await?;
        Ok((events.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>() == ["bad", "bad-2"]).then_some(()))
    })
    .await?;

    // Fixed, `bad` is picked up and reconciled; nothing is reported twice.
    kubectl_result(env.kubectl(&[
        "patch",
        "student",
        "bad",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec": {"school": "fixed"}}"#,
    ]))?;
    eventually("`bad` reconciled once fixed", Duration::from_secs(60), || {
        good_ones_reconciled(env, &ns, 102, &["bad-2"])
    })
    .await
    .with_context(|| controller.log_text())?;
    assert_eq!(malformed_events(env, &ns).await?.len(), 2);
    Ok(())
}
