//! The generated clientset, informer factory and lister of the example on a
//! real kube-apiserver: create, get, list, update, update_status, delete,
//! and the informer sees each change.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use codegen_runtime::client::{CreateOptions, DeleteOptions, GetOptions, ListOptions, UpdateOptions};
use codegen_runtime::informer::{DeletedObject, ResourceEventHandlerFuncs};
use codegen_runtime::lister::everything;
use codegen_testenv::TestEnv;
use student_controller::pkg::apis::example::v1::{Student, StudentSpec, StudentStatus};
use student_controller::pkg::client::clientset::Clientset;
use student_controller::pkg::client::informers::SharedInformerFactory;
use tokio::sync::mpsc;

#[tokio::test]
async fn clientset_informer_and_lister_round_trip() -> Result<()> {
    let env = TestEnv::shared();
    env.kubectl_apply_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/crd/example.k8s.io_students.yaml"),
    )?;
    env.wait_crd_established("students.example.k8s.io", Duration::from_secs(60)).await?;
    let ns = env.create_namespace("generated").await?;
    let client = env.admin_client().await?;
    let students = Clientset::new(client.clone()).example_v1().students(&ns);

    let factory = SharedInformerFactory::from_runtime(
        codegen_runtime::factory::SharedInformerFactory::builder(client).namespace(ns.clone()).build(),
    );
    let informer = factory.example().v1().students();
    let (tx, mut events) = mpsc::unbounded_channel::<String>();
    let (a, u, d) = (tx.clone(), tx.clone(), tx);
    informer.informer().add_event_handler(
        ResourceEventHandlerFuncs::new()
            .on_add(move |s: Arc<Student>, _| {
                let _ = a.send(format!("add {}", s.metadata.name.clone().unwrap_or_default()));
            })
            .on_update(move |_old: Arc<Student>, s: Arc<Student>| {
                let _ = u.send(format!("update {} {}", s.metadata.name.clone().unwrap_or_default(), s.spec.school));
            })
            .on_delete(move |s: DeletedObject<Student>| {
                let _ = d.send(format!("delete {}", s.object().metadata.name.clone().unwrap_or_default()));
            }),
    );
    let lister = informer.lister();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|ok| *ok));

    let mut next = async || -> String {
        tokio::time::timeout(Duration::from_secs(30), events.recv()).await.ok().flatten().unwrap_or_default()
    };

    let created = students
        .create(
            &Student::new("wang", StudentSpec { name: "wang".into(), school: "china".into() }),
            &CreateOptions::default(),
        )
        .await?;
    assert_eq!(created.types.api_version, "example.k8s.io/v1");
    assert_eq!(next().await, "add wang");
    assert_eq!(students.get("wang", &GetOptions::default()).await?.spec.school, "china");
    assert_eq!(students.list(&ListOptions::default()).await?.items.len(), 1);

    let mut edited = created.clone();
    edited.spec.school = "tsinghua".into();
    let updated = students.update(&edited, &UpdateOptions::default()).await?;
    assert_eq!(next().await, "update wang tsinghua");
    assert_eq!(lister.students(&ns).get("wang").map(|s| s.spec.school.clone()), Some("tsinghua".into()));
    assert_eq!(lister.list(&everything()).len(), 1);

    // Status goes through the status subresource only.
    let mut with_status = updated.clone();
    with_status.status = Some(StudentStatus { observed_generation: updated.metadata.generation, conditions: vec![] });
    with_status.spec.school = "ignored by /status".into();
    let after = students.update_status(&with_status, &UpdateOptions::default()).await?;
    assert_eq!(after.spec.school, "tsinghua");
    assert_eq!(after.status.and_then(|s| s.observed_generation), updated.metadata.generation);
    assert_eq!(next().await, "update wang tsinghua");

    // A stale update is a Conflict the caller can match.
    let err = students.update(&edited, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.is_conflict(), "{err:?}");

    students.delete("wang", &DeleteOptions::default()).await?;
    assert_eq!(next().await, "delete wang");
    assert!(lister.students(&ns).get("wang").is_none());
    assert!(students.get("wang", &GetOptions::default()).await.unwrap_err().is_not_found());
    factory.shutdown().await;
    Ok(())
}
