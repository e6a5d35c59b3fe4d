//! The Student controller end to end on a real kube-apiserver, running as a
//! separate process with a service-account token bound only to
//! `config/rbac/role.yaml`. Each test runs its own controller limited to its
//! own namespace (`--namespace`), so tests run in parallel.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use codegen_runtime::apply::extract_config_map;
use codegen_testenv::{TestEnv, kubectl_result, service_account_subject};
use common::{ControllerProcess, controller_identity, create_students, eventually, install_crd};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use student_controller::controller::{CONFLICT_RECHECK, FIELD_MANAGER, FINALIZER, config_map_name, desired_config_map};
use student_controller::pkg::apis::example::v1::Student;
use student_controller::pkg::client::applyconfigurations::example::v1::extract_student_status;

fn student_yaml(ns: &str, name: &str, school: &str) -> String {
    format!(
        "apiVersion: example.k8s.io/v1\nkind: Student\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  name: \"{name}\"\n  school: \"{school}\"\n"
    )
}

async fn config_map_school(env: &TestEnv, ns: &str, student: &str) -> Result<Option<String>> {
    let cms: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, ns);
    Ok(cms.get_opt(&config_map_name(student)).await?.and_then(|cm| cm.data).and_then(|d| d.get("school").cloned()))
}

#[tokio::test]
async fn reconciles_create_edit_delete_with_status_and_events() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    let mut controller = ControllerProcess::start(&kubeconfig, &ns, env.work_dir().join(format!("{ns}.log")))?;

    // `kubectl get stu` works on the generated CRD.
    let out = kubectl_result(env.kubectl(&["get", "stu", "-n", &ns]))?;
    assert!(out.is_empty() || out.contains("No resources"), "{out}");

    kubectl_result(env.kubectl_as("admin", &["create", "-f", "-"], Some(&student_yaml(&ns, "wang", "china"))))?;
    // The controller's log goes with a timeout, to tell a slow start (RBAC,
    // discovery) from a lost event.
    let log = |e: anyhow::Error| e.context(format!("controller log:\n{}", controller.log_text()));
    let school = eventually("the ConfigMap", Duration::from_secs(60), || config_map_school(env, &ns, "wang"))
        .await
        .map_err(log)?;
    assert_eq!(school, "china");

    let students: Api<Student> = Api::namespaced(env.admin_client().await?, &ns);
    let ready = eventually("Ready status", Duration::from_secs(60), || {
        let students = students.clone();
        async move {
            let s = students.get("wang").await?;
            let ok = s.status.as_ref().is_some_and(|st| {
                st.observed_generation == s.metadata.generation
                    && st.conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True")
            });
            Ok(ok.then_some(s))
        }
    })
    .await
    .map_err(log)?;
    assert!(ready.metadata.finalizers.clone().unwrap_or_default().iter().any(|f| f == FINALIZER));

    // Both writes are typed server-side applies by the controller's field
    // manager: extract gives back exactly what it applied.
    let status = extract_student_status(&ready, FIELD_MANAGER)?;
    let condition = &status.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default()[0];
    assert_eq!((condition.type_.as_deref(), condition.status.as_deref()), (Some("Ready"), Some("True")));
    assert_eq!(status.status.as_ref().and_then(|s| s.observed_generation), ready.metadata.generation);
    let cm: ConfigMap = Api::namespaced(env.admin_client().await?, &ns).get(&config_map_name("wang")).await?;
    let applied = extract_config_map(&cm, FIELD_MANAGER)?;
    assert_eq!(applied, desired_config_map(&ready), "the controller owns exactly the ConfigMap it applies");
    assert!(
        cm.metadata
            .managed_fields
            .iter()
            .flatten()
            .any(|m| m.manager.as_deref() == Some(FIELD_MANAGER) && m.operation.as_deref() == Some("Apply")),
        "{:?}",
        cm.metadata.managed_fields
    );

    let events: Api<Event> = Api::namespaced(env.admin_client().await?, &ns);
    let synced = eventually("the Synced event", Duration::from_secs(60), || {
        let events = events.clone();
        async move {
            let list = events.list(&ListParams::default()).await?;
            Ok(list.items.into_iter().find(|e| {
                e.reason.as_deref() == Some("Synced")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("wang")
            }))
        }
    })
    .await?;
    assert_eq!(synced.note.as_deref(), Some("Student synced successfully"));
    assert_eq!(synced.type_.as_deref(), Some("Normal"));
    let listed = kubectl_result(env.kubectl(&["get", "events", "-n", &ns]))?;
    assert!(listed.contains("Student synced successfully"), "{listed}");

    // Edit the school: the ConfigMap follows. (A second later, so that a
    // new transition time would differ: it has whole seconds.)
    tokio::time::sleep(Duration::from_millis(1100)).await;
    kubectl_result(env.kubectl(&[
        "patch",
        "stu",
        "wang",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"school":"tsinghua"}}"#,
    ]))?;
    eventually("the edited ConfigMap", Duration::from_secs(60), || {
        let ns = ns.clone();
        async move { Ok(config_map_school(env, &ns, "wang").await?.filter(|s| s == "tsinghua")) }
    })
    .await?;
    // Ready for the new generation too, since the same time: no transition.
    let ready_since = |s: &Student| {
        s.status.as_ref().and_then(|st| st.conditions.iter().find(|c| c.type_ == "Ready"))?.last_transition_time.clone()
    };
    let edited = eventually("Ready for the edit", Duration::from_secs(60), || {
        let students = students.clone();
        async move {
            let s = students.get("wang").await?;
            Ok((s.status.as_ref().and_then(|st| st.observed_generation) == s.metadata.generation).then_some(s))
        }
    })
    .await?;
    assert!(edited.metadata.generation > ready.metadata.generation);
    assert_eq!(ready_since(&edited), ready_since(&ready), "{:?}", edited.status);

    // Delete: the finalizer removes the ConfigMap, then the Student goes.
    kubectl_result(env.kubectl(&["delete", "stu", "wang", "-n", &ns, "--wait=false"]))?;
    eventually("the Student to be gone", Duration::from_secs(60), || {
        let students = students.clone();
        async move { Ok(students.get_opt("wang").await?.is_none().then_some(())) }
    })
    .await?;
    assert_eq!(config_map_school(env, &ns, "wang").await?, None);

    // A graceful stop exits 0.
    controller.signal(libc::SIGTERM);
    let status = controller.wait(Duration::from_secs(30))?;
    assert_eq!(status.code(), Some(0), "log:\n{}", controller.log_text());
    assert!(controller.log_text().contains("workers finished"), "{}", controller.log_text());
    Ok(())
}

async fn all_reconciled(env: &TestEnv, ns: &str, expected: usize) -> Result<Option<()>> {
    let client = env.admin_client().await?;
    let students: Api<Student> = Api::namespaced(client.clone(), ns);
    let cms: Api<ConfigMap> = Api::namespaced(client, ns);
    let students = students.list(&ListParams::default()).await?.items;
    let cms = cms.list(&ListParams::default().labels("app.kubernetes.io/managed-by=student-controller")).await?.items;
    let ready = students
        .iter()
        .filter(|s| {
            s.status.as_ref().is_some_and(|st| st.observed_generation == s.metadata.generation)
                && s.metadata.finalizers.as_ref().is_some_and(|f| f.iter().any(|f| f == FINALIZER))
        })
        .count();
    if students.len() != expected || ready != expected || cms.len() != expected {
        return Ok(None);
    }
    // Exactly one owned ConfigMap per Student, with the Student's data.
    for s in &students {
        let name = s.metadata.name.clone().unwrap_or_default();
        let cm = cms
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(&config_map_name(&name)))
            .with_context(|| format!("no ConfigMap for {name}"))?;
        let owners = cm.metadata.owner_references.clone().unwrap_or_default();
        assert_eq!(owners.len(), 1, "{owners:?}");
        assert_eq!(Some(&owners[0].uid), s.metadata.uid.as_ref());
        assert_eq!(cm.data.as_ref().and_then(|d| d.get("school")), Some(&s.spec.school));
    }
    Ok(Some(()))
}

#[tokio::test]
async fn fifty_students_converge_across_a_controller_crash() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl-many").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    let log = env.work_dir().join(format!("{ns}.log"));

    let _first = {
        let first = ControllerProcess::start(&kubeconfig, &ns, log.clone())?;
        create_students(env, &ns, "a", 50).await?;
        eventually("50 Students reconciled", Duration::from_secs(120), || all_reconciled(env, &ns, 50)).await?;
        first
    };

    // Kill it mid-way through a second batch (SIGKILL: no graceful stop)...
    let mut second = ControllerProcess::start(&kubeconfig, &ns, log.clone())?;
    drop(_first);
    create_students(env, &ns, "b", 25).await?;
    second.signal(libc::SIGKILL);
    let _ = second.wait(Duration::from_secs(10))?;
    create_students(env, &ns, "c", 25).await?;

    // ...and a restarted controller converges: nothing lost, nothing twice.
    let third = ControllerProcess::start(&kubeconfig, &ns, log)?;
    eventually("100 Students reconciled after the restart", Duration::from_secs(180), || all_reconciled(env, &ns, 100))
        .await
        .with_context(|| third.log_text())?;
    Ok(())
}

#[tokio::test]
async fn too_little_rbac_is_reported_as_forbidden_not_retried_forever() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl-rbac").await?;
    // A role that can read Students but not ConfigMaps.
    let kubeconfig = env.service_account_kubeconfig(&ns, "too-little").await?;
    env.create_role(&ns, "students-only", "example.k8s.io", &["students"], &["get", "list", "watch"]).await?;
    env.bind_role(&ns, "too-little", "Role", "students-only", service_account_subject(&ns, "too-little")).await?;
    let started = Instant::now();
    let mut controller = ControllerProcess::start(&kubeconfig, &ns, env.work_dir().join(format!("{ns}.log")))?;
    let status = controller.wait(Duration::from_secs(60))?;
    let log = controller.log_text();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("forbidden") || log.contains("Forbidden"), "{log}");
    assert!(log.contains("configmaps"), "names what it may not do: {log}");
    assert!(log.contains("config/rbac"), "says how to fix it: {log}");
    assert!(started.elapsed() < Duration::from_secs(60));
    Ok(())
}

/// Permissions taken away after the start are not an exit: the informers
/// keep their caches and retry, as client-go's reflectors do, and once the
/// permissions are back the controller goes on.
#[tokio::test]
async fn rbac_lost_after_the_start_is_retried_not_an_exit() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl-revoked").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    let log = env.work_dir().join(format!("{ns}.log"));
    // A short idle timeout starts the watches again soon after the
    // binding is gone, so that they meet the 403.
    let mut controller = ControllerProcess::start_with(&kubeconfig, &ns, log, &["--watch-idle-timeout", "2s"])?;
    create_students(env, &ns, "before", 1).await?;
    eventually("the first Student reconciled", Duration::from_secs(60), || all_reconciled(env, &ns, 1)).await?;

    let bindings: Api<RoleBinding> = Api::namespaced(env.admin_client().await?, &ns);
    bindings.delete("student-controller", &Default::default()).await?;
    eventually("a forbidden watch logged", Duration::from_secs(60), || {
        let text = controller.log_text();
        async move { Ok(text.lines().any(|l| l.contains("cannot list/watch") && l.ends_with("retrying")).then_some(())) }
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(controller.running(), "the controller exited:\n{}", controller.log_text());

    let subject = service_account_subject(&ns, "student-controller");
    env.bind_role(&ns, "student-controller", "ClusterRole", "student-controller", subject).await?;
    create_students(env, &ns, "after", 1).await?;
    eventually("both Students reconciled", Duration::from_secs(60), || all_reconciled(env, &ns, 2)).await?;
    controller.signal(libc::SIGTERM);
    let status = controller.wait(Duration::from_secs(30))?;
    assert_eq!(status.code(), Some(0), "{}", controller.log_text());
    Ok(())
}

#[tokio::test]
async fn a_conflicting_config_map_is_a_warning_not_a_retry_loop() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl-conflict").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    // Someone else's ConfigMaps already have the names the controller
    // wants: one with the controller's label, one without.
    let cms: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, &ns);
    let foreign = |student: &str, labelled: bool| ConfigMap {
        metadata: ObjectMeta {
            name: Some(config_map_name(student)),
            labels: labelled
                .then(|| [("app.kubernetes.io/managed-by".to_string(), "student-controller".to_string())].into()),
            ..Default::default()
        },
        data: Some([("owner".to_string(), "someone else".to_string())].into()),
        ..Default::default()
    };
    cms.create(&PostParams::default(), &foreign("li", true)).await?;
    cms.create(&PostParams::default(), &foreign("wu", false)).await?;
    let controller = ControllerProcess::start(&kubeconfig, &ns, env.work_dir().join(format!("{ns}.log")))?;
    for name in ["li", "wu"] {
        kubectl_result(env.kubectl_as("admin", &["create", "-f", "-"], Some(&student_yaml(&ns, name, "peking"))))?;
    }

    let events: Api<Event> = Api::namespaced(env.admin_client().await?, &ns);
    let warnings = eventually("the ErrResourceExists warnings", Duration::from_secs(60), || {
        let events = events.clone();
        async move {
            let list = events.list(&ListParams::default()).await?;
            let warnings: Vec<Event> =
                list.items.into_iter().filter(|e| e.reason.as_deref() == Some("ErrResourceExists")).collect();
            Ok((warnings.len() == 2).then_some(warnings))
        }
    })
    .await?;
    for warning in &warnings {
        assert_eq!(warning.type_.as_deref(), Some("Warning"));
        assert!(warning.note.as_deref().unwrap_or_default().contains("already exists and is not managed by Student"));
    }
    // The foreign ConfigMaps are left alone, and the keys are not retried:
    // the failures logged stop growing (one per change of a Student: adding
    // the finalizer is one), and none is requeued.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let log_before = controller.log_text();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let log = controller.log_text();
    let untouched = |cm: ConfigMap| {
        cm.data.unwrap_or_default().get("owner").map(String::as_str) == Some("someone else")
            && cm.metadata.owner_references.unwrap_or_default().is_empty()
    };
    for name in ["li", "wu"] {
        let key = format!("'{ns}/{name}'");
        let failures = |log: &str| log.lines().filter(|l| l.contains(&key) && l.contains("not retrying")).count();
        let before = failures(&log_before);
        assert!((1..=2).contains(&before), "{name}: {log}");
        assert_eq!(failures(&log), before, "{name}: no retry loop: {log}");
        assert!(!log.lines().any(|l| l.contains(&key) && l.contains("requeuing")), "{name}: {log}");
        assert!(untouched(cms.get(&config_map_name(name)).await?), "{name}'s ConfigMap was changed");
    }

    // The other ConfigMap gone, the Student gets its own (its deletion
    // queues the Student; the 30 s look again is the fallback).
    cms.delete(&config_map_name("wu"), &Default::default()).await?;
    let within = CONFLICT_RECHECK + Duration::from_secs(30);
    let school = eventually("wu's own ConfigMap", within, || config_map_school(env, &ns, "wu")).await?;
    assert_eq!(school, "peking");

    // Deleting the Students (their finalizer runs) deletes only the
    // ConfigMap a Student controls.
    let students: Api<Student> = Api::namespaced(env.admin_client().await?, &ns);
    for name in ["li", "wu"] {
        students.delete(name, &Default::default()).await?;
    }
    eventually("the Students to be gone", Duration::from_secs(60), || {
        let students = students.clone();
        async move { Ok(students.list(&ListParams::default()).await?.items.is_empty().then_some(())) }
    })
    .await?;
    assert!(untouched(cms.get(&config_map_name("li")).await?), "li's ConfigMap was changed or deleted");
    assert_eq!(config_map_school(env, &ns, "wu").await?, None, "wu's own ConfigMap is deleted");
    Ok(())
}

/// The CRD installed, a new namespace (named from `prefix`), the controller's
/// kubeconfig there, and a proxy to the API server whose link a test cuts.
async fn behind_a_proxy(
    env: &TestEnv,
    prefix: &str,
) -> Result<(String, std::path::PathBuf, codegen_testenv::proxy::Proxy)> {
    install_crd(env).await?;
    let ns = env.create_namespace(prefix).await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    let proxy = codegen_testenv::proxy::Proxy::start(env.api_port()).await?;
    Ok((ns, kubeconfig, proxy))
}

#[tokio::test]
async fn the_controller_converges_after_a_partition() -> Result<()> {
    use codegen_testenv::proxy::Link;

    let env = TestEnv::shared();
    let (ns, kubeconfig, proxy) = behind_a_proxy(env, "ctl-partition").await?;
    let url = proxy.url();
    let flags = ["--master", url.as_str(), "--watch-idle-timeout", "5s", "--request-timeout", "10s"];
    let controller = ControllerProcess::start_with(&kubeconfig, &ns, env.work_dir().join(format!("{ns}.log")), &flags)?;
    create_students(env, &ns, "before", 5).await?;
    eventually("5 Students reconciled", Duration::from_secs(60), || all_reconciled(env, &ns, 5)).await?;

    // Students arrive while the controller cannot reach the server: first
    // with every connection black-holed for good, then with the link down.
    for (prefix, link) in [("blackhole", Link::Blackhole), ("down", Link::Down)] {
        proxy.set(link);
        create_students(env, &ns, prefix, 5).await?;
        tokio::time::sleep(Duration::from_secs(4)).await;
        proxy.set(Link::Up);
    }
    eventually("15 Students reconciled after the partitions", Duration::from_secs(120), || {
        all_reconciled(env, &ns, 15)
    })
    .await
    .with_context(|| controller.log_text())?;
    Ok(())
}

/// `replica-0`.. `replica-<n-1>`, each a controller process with `flags`
/// and short Lease timings: lease 4 s, renew deadline 3 s, retry 0.5 s.
fn start_replicas(
    env: &TestEnv,
    kubeconfig: &std::path::Path,
    ns: &str,
    n: usize,
    flags: &[&str],
) -> Result<Vec<(String, ControllerProcess)>> {
    let mut replicas = Vec::new();
    for i in 0..n {
        let instance = format!("replica-{i}");
        let mut all = flags.to_vec();
        all.extend([
            "--leader-elect-lease-duration",
            "4s",
            "--leader-elect-renew-deadline",
            "3s",
            "--leader-elect-retry-period",
            "500ms",
            "--instance",
            instance.as_str(),
        ]);
        let log = env.work_dir().join(format!("{ns}-{instance}.log"));
        replicas.push((instance.clone(), ControllerProcess::start_with(kubeconfig, ns, log, &all)?));
    }
    Ok(replicas)
}

/// The User-Agent a replica sends (`--instance` in it).
fn agent(instance: &str) -> String {
    format!("student-controller/{} ({instance})", env!("CARGO_PKG_VERSION"))
}

/// The holder of the controller's leader election Lease in `ns`.
async fn lease_holder(env: &TestEnv, ns: &str) -> Result<Option<String>> {
    use k8s_openapi::api::coordination::v1::Lease;
    let leases: Api<Lease> = Api::namespaced(env.admin_client().await?, ns);
    Ok(leases.get_opt("student-controller").await?.and_then(|l| l.spec?.holder_identity).filter(|h| !h.is_empty()))
}

/// Waits until the Lease names a holder other than `previous`; returns it
/// and how long that took.
async fn next_leader(env: &TestEnv, ns: &str, previous: &str) -> Result<(String, Duration)> {
    let since = Instant::now();
    let holder = eventually("another leader", Duration::from_secs(60), || async {
        Ok(lease_holder(env, ns).await?.filter(|h| h != previous))
    })
    .await?;
    Ok((holder, since.elapsed()))
}

#[tokio::test]
async fn of_three_replicas_only_the_leader_reconciles_and_another_takes_over() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl-leader").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    // Short timings: lease 4 s, renew deadline 3 s, retry 0.5 s.
    let (lease, retry) = (Duration::from_secs(4), Duration::from_millis(500));
    let mut replicas = start_replicas(env, &kubeconfig, &ns, 3, &["--leader-elect"])?;
    create_students(env, &ns, "a", 10).await?;
    eventually("10 Students reconciled", Duration::from_secs(60), || all_reconciled(env, &ns, 10)).await?;
    let leader = lease_holder(env, &ns).await?.context("no leader")?;

    // Only the leader started workers, and every Synced event is its own.
    for (instance, process) in &replicas {
        let started = process.log_text().contains("starting workers");
        assert_eq!(started, *instance == leader, "{instance} (leader {leader}):\n{}", process.log_text());
    }
    let reporters = synced_reporters(env, &ns).await?;
    assert_eq!(reporters, std::slice::from_ref(&leader), "Synced events by {reporters:?}");
    // And in the audit log, every write but the Lease's came from it.
    let writers = writers_in_audit_log(env, &ns);
    assert_eq!(writers, [agent(&leader)], "{writers:?}");

    // SIGKILL: the lease is not released; another replica takes over once
    // the lease duration has passed on its own clock.
    let index = replicas.iter().position(|(i, _)| *i == leader).context("the leader is a replica")?;
    let (_, mut killed) = replicas.remove(index);
    killed.signal(libc::SIGKILL);
    let _ = killed.wait(Duration::from_secs(10))?;
    let (second, took) = next_leader(env, &ns, &leader).await?;
    eprintln!("failover after SIGKILL of the leader: {took:?} (lease {lease:?}, retry {retry:?})");
    assert!(took <= lease + 2 * retry + Duration::from_secs(2), "failover took {took:?}");
    create_students(env, &ns, "b", 5).await?;
    eventually("15 Students reconciled by the new leader", Duration::from_secs(60), || all_reconciled(env, &ns, 15))
        .await?;

    // SIGTERM: the leader releases the lease; the last replica leads at once.
    let index = replicas.iter().position(|(i, _)| *i == second).context("the new leader is a replica")?;
    let (_, mut stopped) = replicas.remove(index);
    let since = Instant::now();
    stopped.signal(libc::SIGTERM);
    let (third, _) = next_leader(env, &ns, &second).await?;
    let took = since.elapsed();
    eprintln!("handover after SIGTERM of the leader: {took:?}");
    assert!(took < Duration::from_secs(3), "handover took {took:?}");
    assert!(stopped.wait(Duration::from_secs(20))?.success(), "{}", stopped.log_text());
    assert_eq!(third, replicas[0].0);
    // Each leader recorded client-go's leader election events about the
    // Lease; the one stopped by SIGTERM also that it stopped leading.
    let notes = lease_event_notes(env, &ns).await?;
    for expected in
        [format!("{leader} became leader"), format!("{second} became leader"), format!("{second} stopped leading")]
    {
        assert!(notes.contains(&expected), "no event {expected:?} about the Lease: {notes:?}");
    }
    create_students(env, &ns, "c", 5).await?;
    eventually("20 Students reconciled by the third leader", Duration::from_secs(60), || all_reconciled(env, &ns, 20))
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_leader_that_cannot_renew_its_lease_exits_with_code_1() -> Result<()> {
    use codegen_testenv::proxy::Link;

    let env = TestEnv::shared();
    let (ns, kubeconfig, proxy) = behind_a_proxy(env, "ctl-lost-lease").await?;
    let url = proxy.url();
    let flags = ["--leader-elect", "--master", url.as_str(), "--request-timeout", "2s"];
    let mut replicas = start_replicas(env, &kubeconfig, &ns, 1, &flags)?;
    create_students(env, &ns, "a", 3).await?;
    eventually("3 Students reconciled", Duration::from_secs(60), || all_reconciled(env, &ns, 3)).await?;
    assert_eq!(lease_holder(env, &ns).await?.as_deref(), Some("replica-0"));

    // The link to the server goes down: the leader cannot renew within the
    // renew deadline (3 s), stops leading and exits 1, as client-go's
    // sample controller does.
    let (_, mut leader) = replicas.remove(0);
    let since = Instant::now();
    proxy.set(Link::Down);
    let status = leader.wait(Duration::from_secs(30))?;
    let took = since.elapsed();
    eprintln!("exit after the link went down: {took:?}");
    assert_eq!(status.code(), Some(1), "{status}: {}", leader.log_text());
    assert!(leader.log_text().contains("leadership lost"), "{}", leader.log_text());
    // It renewed at most one retry period (0.5 s) before the link went
    // down, so it cannot have stopped leading much before 3 s on; then the
    // controller stops (requests in flight fail within the 2 s request
    // timeout) and the process exits.
    assert!(took >= Duration::from_millis(2300), "exited after {took:?}: {}", leader.log_text());
    let bound = Duration::from_secs(3) + Duration::from_secs(2) + Duration::from_millis(500) + Duration::from_secs(2);
    assert!(took <= bound, "exited after {took:?}, more than {bound:?}: {}", leader.log_text());
    Ok(())
}

/// The reporting instances of the Synced events in `ns`.
/// The notes of the `LeaderElection` events about the controller's Lease.
async fn lease_event_notes(env: &TestEnv, ns: &str) -> Result<Vec<String>> {
    let events: Api<Event> = Api::namespaced(env.admin_client().await?, ns);
    Ok(events
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("LeaderElection"))
        .filter(|e| e.regarding.as_ref().is_some_and(|r| r.kind.as_deref() == Some("Lease")))
        .filter_map(|e| e.note)
        .collect())
}

async fn synced_reporters(env: &TestEnv, ns: &str) -> Result<Vec<String>> {
    let events: Api<Event> = Api::namespaced(env.admin_client().await?, ns);
    let mut reporters: Vec<String> = events
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("Synced"))
        .filter_map(|e| e.reporting_instance)
        .collect();
    reporters.sort();
    reporters.dedup();
    Ok(reporters)
}

/// The controller's writes (create, update, patch, delete) in `ns`, from
/// the API server's audit log.
fn controller_writes(env: &TestEnv, ns: &str) -> Vec<serde_json::Value> {
    let user = format!("system:serviceaccount:{ns}:student-controller");
    env.audit_events()
        .into_iter()
        .filter(|e| {
            e["user"]["username"] == user.as_str()
                && e["objectRef"]["namespace"] == ns
                && matches!(e["verb"].as_str(), Some("create" | "update" | "patch" | "delete"))
        })
        .collect()
}

/// The User-Agents of the controller's writes in `ns` other than to its
/// Lease.
fn writers_in_audit_log(env: &TestEnv, ns: &str) -> Vec<String> {
    let mut agents: Vec<String> = controller_writes(env, ns)
        .iter()
        .filter(|e| e["objectRef"]["resource"] != "leases")
        .filter_map(|e| e["userAgent"].as_str().map(str::to_owned))
        .collect();
    agents.sort();
    agents.dedup();
    agents
}

/// For each Student in `ns`: the User-Agents that wrote it (itself or its
/// status).
fn student_writers(env: &TestEnv, ns: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in controller_writes(env, ns).iter().filter(|e| e["objectRef"]["resource"] == "students") {
        if let (Some(name), Some(agent)) = (e["objectRef"]["name"].as_str(), e["userAgent"].as_str()) {
            out.entry(name.to_owned()).or_default().insert(agent.to_owned());
        }
    }
    out
}

#[tokio::test]
async fn four_replicas_share_three_shards_and_a_standby_takes_over_a_dead_one() -> Result<()> {
    use codegen_runtime::sharding::shard_of;
    use k8s_openapi::api::coordination::v1::Lease;

    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("ctl-shards").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    let mut replicas = start_replicas(env, &kubeconfig, &ns, 4, &["--shards", "3", "--max-shards", "1"])?;
    let leases: Api<Lease> = Api::namespaced(env.admin_client().await?, &ns);
    let holders = || async {
        let mut out = Vec::new();
        for shard in 0..3 {
            let lease = leases.get_opt(&format!("student-controller-shard-{shard}")).await?;
            out.push(lease.and_then(|l| l.spec?.holder_identity).filter(|h| !h.is_empty()));
        }
        anyhow::Ok(out)
    };
    let first = eventually("three shards held by three replicas", Duration::from_secs(60), || async {
        let held = holders().await?;
        let mut distinct: Vec<&String> = held.iter().flatten().collect();
        distinct.sort();
        distinct.dedup();
        Ok((distinct.len() == 3).then(|| held.into_iter().flatten().collect::<Vec<String>>()))
    })
    .await?;

    create_students(env, &ns, "s", 300).await?;
    eventually("300 Students reconciled", Duration::from_secs(180), || all_reconciled(env, &ns, 300))
        .await
        .with_context(|| replicas.iter().map(|(_, p)| p.log_text()).collect::<Vec<_>>().join("\n----\n"))?;
    // Each Student was written by exactly one replica: the holder of its shard.
    let writers = student_writers(env, &ns);
    assert_eq!(writers.len(), 300);
    for (name, agents) in &writers {
        let shard = shard_of(&format!("{ns}/{name}"), 3) as usize;
        assert_eq!(agents.len(), 1, "{name} written by {agents:?}");
        assert!(agents.contains(&agent(&first[shard])), "{name} (shard {shard}) written by {agents:?}");
    }

    // SIGKILL one shard holder: the standby takes the shard over.
    let dead = first[0].clone();
    let index = replicas.iter().position(|(i, _)| *i == dead).context("a replica")?;
    let (_, mut killed) = replicas.remove(index);
    killed.signal(libc::SIGKILL);
    let _ = killed.wait(Duration::from_secs(10))?;
    let since = Instant::now();
    let standby = eventually("shard 0 taken over", Duration::from_secs(60), || async {
        Ok(holders().await?[0].clone().filter(|h| *h != dead))
    })
    .await?;
    eprintln!("shard 0 taken over by {standby} {:?} after SIGKILL of {dead}", since.elapsed());
    assert!(!first.contains(&standby), "{standby} already held a shard");
    create_students(env, &ns, "t", 30).await?;
    eventually("330 Students reconciled after the takeover", Duration::from_secs(120), || {
        all_reconciled(env, &ns, 330)
    })
    .await?;
    Ok(())
}
