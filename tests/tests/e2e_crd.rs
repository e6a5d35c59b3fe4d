//! The seeds' CRDs on a real kube-apiserver: the Student CRD and its
//! lifecycle through kube and kubectl, the User CRD's server-side
//! validation, and RBAC for an unprivileged user.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use codegen_testenv::{TestEnv, UNPRIVILEGED_USER, kubectl_result, user_subject};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crds").join(name)
}

async fn install_crd(env: &TestEnv, file: &str, name: &str) -> Result<()> {
    env.kubectl_apply_file(&fixture(file))?;
    env.wait_crd_established(name, Duration::from_secs(60)).await
}

fn students_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.k8s.io", "v1", "Student"), "students")
}

fn student(name: &str, school: &str) -> DynamicObject {
    DynamicObject::new(name, &students_resource()).data(json!({
        "spec": { "name": "wang", "school": school }
    }))
}

#[tokio::test]
async fn student_crd_lifecycle_through_kube_and_kubectl() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env, "students.example.k8s.io.yaml", "students.example.k8s.io").await?;
    let ns = env.create_namespace("students").await?;
    let api: Api<DynamicObject> = Api::namespaced_with(env.admin_client().await?, &ns, &students_resource());

    api.create(&PostParams::default(), &student("object-name", "china")).await?;

    let listed = kubectl_result(env.kubectl(&["get", "stu", "-n", &ns, "-o", "name"]))?;
    assert_eq!(listed.trim(), "student.example.k8s.io/object-name");
    let school =
        kubectl_result(env.kubectl(&["get", "students", "object-name", "-n", &ns, "-o", "jsonpath={.spec.school}"]))?;
    assert_eq!(school, "china");

    // Edit it the way `kubectl edit` would end up: a merge patch of spec.
    kubectl_result(env.kubectl(&[
        "patch",
        "student",
        "object-name",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"school":"tsinghua"}}"#,
    ]))?;
    let edited = api.get("object-name").await?;
    assert_eq!(edited.data["spec"]["school"], "tsinghua");
    assert_eq!(edited.data["spec"]["name"], "wang");

    // And through kube.
    api.patch("object-name", &PatchParams::default(), &Patch::Merge(json!({ "spec": { "school": "peking" } }))).await?;
    let school =
        kubectl_result(env.kubectl(&["get", "stu", "object-name", "-n", &ns, "-o", "jsonpath={.spec.school}"]))?;
    assert_eq!(school, "peking");

    kubectl_result(env.kubectl(&["delete", "stu", "object-name", "-n", &ns]))?;
    let err = api.get("object-name").await.expect_err("the student was deleted");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 404), "{err:?}");
    let listed = kubectl_result(env.kubectl(&["get", "stu", "-n", &ns, "-o", "name"]))?;
    assert_eq!(listed.trim(), "");
    Ok(())
}

#[tokio::test]
async fn kubectl_creates_a_student_from_yaml() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env, "students.example.k8s.io.yaml", "students.example.k8s.io").await?;
    let ns = env.create_namespace("stu-yaml").await?;
    let yaml = format!(
        "apiVersion: example.k8s.io/v1\nkind: Student\nmetadata:\n  name: object-name\n  namespace: {ns}\nspec:\n  name: \"wang\"\n  school: \"china\"\n"
    );
    let out = env.kubectl_as("admin", &["create", "-f", "-"], Some(&yaml));
    let created = kubectl_result(out)?;
    assert_eq!(created.trim(), "student.example.k8s.io/object-name created");
    let table = kubectl_result(env.kubectl(&["get", "stu", "-n", &ns]))?;
    let mut lines = table.lines();
    assert!(lines.next().is_some_and(|h| h.starts_with("NAME")), "{table}");
    assert!(lines.next().is_some_and(|l| l.starts_with("object-name")), "{table}");
    Ok(())
}

fn users_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("auth.ilinux.io", "v1beta1", "User"), "users")
}

#[tokio::test]
async fn user_crd_validation_is_enforced_by_the_server() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env, "users.auth.ilinux.io.yaml", "users.auth.ilinux.io").await?;
    let ns = env.create_namespace("users").await?;
    let api: Api<DynamicObject> = Api::namespaced_with(env.admin_client().await?, &ns, &users_resource());

    let valid = DynamicObject::new("admin", &users_resource()).data(json!({
        "spec": { "userID": 1, "email": "k8s@example.com", "groups": ["superusers", "administrators"], "password": "ikubernetes" }
    }));
    api.create(&PostParams::default(), &valid).await.context("a valid User is accepted")?;

    let invalid = DynamicObject::new("tony", &users_resource()).data(json!({
        "spec": { "userID": 999999, "groups": [] }
    }));
    let err = api.create(&PostParams::default(), &invalid).await.expect_err("userID 999999 must be rejected");
    let kube::Error::Api(status) = err else { panic!("expected an API error, got {err:?}") };
    assert_eq!(status.code, 422, "{status:?}");
    assert_eq!(status.reason, "Invalid", "{status:?}");
    assert!(status.message.contains("spec.userID"), "{}", status.message);
    assert!(status.message.contains("65535"), "{}", status.message);

    let missing = DynamicObject::new("nobody", &users_resource()).data(json!({ "spec": { "userID": 7 } }));
    let err = api.create(&PostParams::default(), &missing).await.expect_err("groups is required");
    let kube::Error::Api(status) = err else { panic!("expected an API error, got {err:?}") };
    assert_eq!(status.code, 422);
    assert!(status.message.contains("spec.groups"), "{}", status.message);
    assert!(status.message.contains("Required value"), "{}", status.message);

    // kubectl shows the same rejection to a user.
    let yaml = format!(
        "apiVersion: auth.ilinux.io/v1beta1\nkind: User\nmetadata:\n  name: tony\n  namespace: {ns}\nspec:\n  userID: 999999\n  groups: []\n"
    );
    let out = env.kubectl_as("admin", &["apply", "-f", "-"], Some(&yaml));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("spec.userID"), "{stderr}");
    Ok(())
}

#[tokio::test]
async fn unprivileged_user_needs_a_role_binding_to_list_students() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env, "students.example.k8s.io.yaml", "students.example.k8s.io").await?;
    let ns = env.create_namespace("rbac").await?;
    let as_user: Api<DynamicObject> = Api::namespaced_with(env.user_client().await?, &ns, &students_resource());

    let err = as_user.list(&Default::default()).await.expect_err("alice has no role yet");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 403 && s.reason == "Forbidden"), "{err:?}");
    let out = env.kubectl_as(UNPRIVILEGED_USER, &["get", "stu", "-n", &ns], None);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("forbidden"));

    env.create_role(&ns, "student-reader", "example.k8s.io", &["students"], &["get", "list", "watch"]).await?;
    env.bind_role(&ns, "alice-reads-students", "Role", "student-reader", user_subject(UNPRIVILEGED_USER)).await?;

    // The authorizer's informers see the binding shortly after it is written.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match as_user.list(&Default::default()).await {
            Ok(list) => {
                assert!(list.items.is_empty());
                break;
            }
            Err(e) if Instant::now() < deadline => {
                assert!(matches!(e, kube::Error::Api(ref s) if s.code == 403), "{e:?}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e).context("alice still forbidden after the RoleBinding"),
        }
    }
    // Reading is granted; writing is not.
    let err = as_user.create(&PostParams::default(), &student("x", "y")).await.expect_err("no create verb");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 403), "{err:?}");
    // And the grant is namespaced.
    let elsewhere = env.create_namespace("rbac-other").await?;
    let other: Api<DynamicObject> = Api::namespaced_with(env.user_client().await?, &elsewhere, &students_resource());
    assert!(other.list(&Default::default()).await.is_err());
    Ok(())
}

#[test]
fn the_server_is_stopped_by_pid_and_leaves_nothing_behind() -> Result<()> {
    // An owned environment (not the shared one): start it, read the PIDs,
    // drop it, and check that both processes are gone.
    let env = TestEnv::start()?;
    let pids = env.pids();
    assert_eq!(pids.len(), 2, "etcd and kube-apiserver");
    for pid in &pids {
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
    let work = env.work_dir().to_path_buf();
    drop(env);
    for pid in &pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or at most a zombie that is not ours any more.
        assert!(stat.is_empty() || stat.contains(") Z "), "pid {pid} still running: {stat}");
    }
    assert!(!work.exists(), "work directory {} removed", work.display());
    Ok(())
}
