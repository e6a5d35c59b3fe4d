//! The CRDs kube-codegen generates for every fixture package of
//! codegen-core, on a real kube-apiserver: each is accepted and Established,
//! and the validation, defaults, CEL rules, printer columns, scale
//! subresource and multi-version serving they declare are enforced by the
//! server.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};
use codegen_testenv::{TestEnv, kubectl_result};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube_codegen_tests::{FIXTURES, generate_fixture};
use serde_json::json;

/// Runs the generator on every fixture once per test binary; returns the
/// CRD files it wrote.
fn generated_crds() -> &'static Vec<PathBuf> {
    static CRDS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    CRDS.get_or_init(|| {
        let root = tempfile::tempdir().expect("tempdir").keep();
        let mut crds = Vec::new();
        for (name, groups) in FIXTURES {
            let dir = generate_fixture(&root, name, groups);
            if !dir.exists() {
                // `wardle`: served by an aggregated API server (tests/e2e_aggregated.rs).
                continue;
            }
            for entry in std::fs::read_dir(dir).expect("crd dir") {
                crds.push(entry.expect("entry").path());
            }
        }
        crds.sort();
        crds
    })
}

/// The one CRD document of a generated file (after the header comment and
/// the `---` separator).
fn read_crd(path: &Path) -> Result<serde_yaml::Value> {
    use serde::Deserialize as _;
    let text = std::fs::read_to_string(path)?;
    let mut docs = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let value = serde_yaml::Value::deserialize(doc).with_context(|| format!("parsing {}", path.display()))?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    anyhow::ensure!(docs.len() == 1, "{} holds {} documents", path.display(), docs.len());
    Ok(docs.remove(0))
}

async fn install_all(env: &TestEnv) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for path in generated_crds() {
        env.kubectl_apply_file(path).with_context(|| format!("applying {}", path.display()))?;
        let yaml = read_crd(path)?;
        let name = yaml["metadata"]["name"].as_str().context("metadata.name")?.to_owned();
        env.wait_crd_established(&name, Duration::from_secs(60)).await?;
        names.push(name);
    }
    Ok(names)
}

#[tokio::test]
async fn every_fixture_crd_is_accepted_and_established() -> Result<()> {
    let env = TestEnv::shared();
    let names = install_all(env).await?;
    assert!(names.len() >= FIXTURES.len() - 1, "{names:?}");
    for expected in ["students.example.k8s.io", "users.auth.ilinux.io", "webapps.apps.example.com"] {
        assert!(names.iter().any(|n| n == expected), "{expected} in {names:?}");
    }
    // kubectl knows them by their short names.
    let out = kubectl_result(env.kubectl(&["api-resources", "--api-group=apps.example.com", "-o", "name"]))?;
    assert!(out.contains("webapps.apps.example.com"), "{out}");
    Ok(())
}

fn users() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("auth.ilinux.io", "v1beta1", "User"), "users")
}

#[tokio::test]
async fn the_generated_user_crd_validates_like_the_seed() -> Result<()> {
    let env = TestEnv::shared();
    install_all(env).await?;
    let ns = env.create_namespace("fixture-users").await?;
    let api: Api<DynamicObject> = Api::namespaced_with(env.admin_client().await?, &ns, &users());
    let user = |name: &str, spec: serde_json::Value| DynamicObject::new(name, &users()).data(json!({ "spec": spec }));

    // Valid, and the server applies the declared default.
    let created =
        api.create(&PostParams::default(), &user("admin", json!({ "userID": 1, "groups": ["superusers"] }))).await?;
    assert_eq!(created.data["spec"]["shell"], "bash");

    let reject = |spec: serde_json::Value| {
        let api = api.clone();
        let obj = user("bad", spec);
        async move {
            match api.create(&PostParams::default(), &obj).await {
                Err(kube::Error::Api(s)) => s,
                other => panic!("expected a rejection, got {other:?}"),
            }
        }
    };
    let s = reject(json!({ "userID": 999999, "groups": [] })).await;
    assert_eq!(s.code, 422);
    assert!(s.message.contains("spec.userID"), "{}", s.message);
    let s = reject(json!({ "userID": 7 })).await;
    assert!(s.message.contains("spec.groups") && s.message.contains("Required value"), "{}", s.message);
    let s = reject(json!({ "userID": 7, "groups": [], "shell": "csh" })).await;
    assert!(s.message.contains("spec.shell") && s.message.contains("Unsupported value"), "{}", s.message);
    let s = reject(json!({ "userID": 7, "groups": [], "window": { "from": 20, "to": 8 } })).await;
    assert!(s.message.contains("from must be before to"), "CEL rule message: {}", s.message);
    let s = reject(json!({ "userID": 7, "groups": [], "password": "short" })).await;
    assert!(s.message.contains("spec.password"), "{}", s.message);
    Ok(())
}

#[tokio::test]
async fn scale_subresource_and_printer_columns_work_through_kubectl() -> Result<()> {
    let env = TestEnv::shared();
    install_all(env).await?;
    let ns = env.create_namespace("fixture-scale").await?;
    let yaml = format!(
        "apiVersion: apps.example.com/v1\nkind: WebApp\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  image: nginx\n"
    );
    kubectl_result(env.kubectl_as("admin", &["create", "-f", "-"], Some(&yaml)))?;
    // Defaulted replicas (1), shown in the Desired column; short name wa.
    let table = kubectl_result(env.kubectl(&["get", "wa", "-n", &ns]))?;
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "DESIRED", "READY", "AGE"], "{table}");
    let row: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(&row[..2], ["web", "1"], "{table}");
    let wide = kubectl_result(env.kubectl(&["get", "wa", "-n", &ns, "-o", "wide"]))?;
    assert!(wide.contains("IMAGE") && wide.contains("nginx"), "priority-1 column in -o wide: {wide}");

    kubectl_result(env.kubectl(&["scale", "webapp", "web", "-n", &ns, "--replicas=3"]))?;
    let replicas =
        kubectl_result(env.kubectl(&["get", "webapp", "web", "-n", &ns, "-o", "jsonpath={.spec.replicas}"]))?;
    assert_eq!(replicas, "3");
    Ok(())
}

#[tokio::test]
async fn two_versions_are_served_from_one_storage_version() -> Result<()> {
    let env = TestEnv::shared();
    install_all(env).await?;
    let crd = generated_crds()
        .iter()
        .find(|p| p.components().any(|c| c.as_os_str() == "twoversions"))
        .context("the twoversions CRD")?;
    let doc = read_crd(crd)?;
    let versions = doc["spec"]["versions"].as_sequence().context("versions")?;
    assert_eq!(versions.len(), 2);
    let storage: Vec<_> = versions.iter().filter(|v| v["storage"] == true).collect();
    assert_eq!(storage.len(), 1, "exactly one storage version");
    let plural = doc["spec"]["names"]["plural"].as_str().context("plural")?;
    let out = kubectl_result(env.kubectl(&["api-versions"]))?;
    assert!(out.contains("batch.example.com/v1") && out.contains("batch.example.com/v2"), "{out}");
    let listed = kubectl_result(env.kubectl(&["get", &format!("{plural}.v2.batch.example.com"), "-A"]));
    assert!(listed.is_ok(), "{listed:?}");
    Ok(())
}
