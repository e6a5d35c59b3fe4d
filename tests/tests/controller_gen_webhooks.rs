//! Differential test against controller-gen for the webhook markers: the
//! `conversion` fixture of the tests crate (tests/fixtures/conversion, a
//! Task in v1 and v2 with `conversion_webhook`, `mutating_webhook` and
//! `validating_webhook`) and its Go twin (tests/controller-gen/webhooks,
//! with `+kubebuilder:webhook:` markers) through controller-gen's `webhook`
//! and `crd` generators.
//!
//! - `config/webhook/manifests.yaml` must equal controller-gen's document
//!   for document, value for value;
//! - the CRDs must agree node by node (descriptions aside) except for
//!   `spec.conversion`, which controller-gen never writes (kubebuilder adds
//!   it with a kustomize patch; kube-codegen writes that patch's content)
//!   and controller-gen's version annotation.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

#[path = "../support/crd_diff.rs"]
mod crd_diff;

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .filter(|v| !v.is_null())
        .collect()
}

/// `v` without descriptions.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| k.as_str() != "description").map(|(k, x)| (k.clone(), strip(x))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

#[test]
fn webhook_manifests_and_crd_match_controller_gen() {
    let controller_gen = codegen_testenv::controller_gen().unwrap_or_else(|e| panic!("{e:#}"));
    let out = tempfile::tempdir().unwrap();
    let twins = kube_codegen_tests::workspace().join("tests/controller-gen");
    let run = Command::new(controller_gen)
        .args(["webhook", "crd:allowDangerousTypes=true", "paths=./webhooks/..."])
        .arg(format!("output:webhook:artifacts:config={}", out.path().join("webhook").display()))
        .arg(format!("output:crd:dir={}", out.path().join("crd").display()))
        .current_dir(&twins)
        .env("GOFLAGS", "-mod=readonly")
        .output()
        .expect("running controller-gen");
    assert!(run.status.success(), "controller-gen: {}", String::from_utf8_lossy(&run.stderr));

    let crd_dir = Path::new(kube_codegen_tests::conversion::CRD_DIR);
    let ours = documents(&crd_dir.join("../webhook/manifests.yaml"));
    let theirs = documents(&out.path().join("webhook/manifests.yaml"));
    assert_eq!(ours, theirs);

    let mut ours = documents(&crd_dir.join("batch.example.com_tasks.yaml"));
    let mut theirs = documents(&out.path().join("crd/batch.example.com_tasks.yaml"));
    // controller-gen stamps its version; kube-codegen does not.
    theirs[0]["metadata"].as_object_mut().unwrap().remove("annotations");
    assert!(ours[0]["spec"]["conversion"].is_object(), "ours has spec.conversion");
    assert!(theirs[0]["spec"].get("conversion").is_none(), "controller-gen writes no spec.conversion");
    ours[0]["spec"].as_object_mut().unwrap().remove("conversion");
    let comparison =
        crd_diff::Comparison { set_like: &["required"], only_left: "only-ours", only_right: "only-controller-gen" };
    let mut diffs = Vec::new();
    comparison.run(&strip(&ours[0]), &strip(&theirs[0]), &mut diffs);
    assert_eq!(diffs, Vec::new());
}
