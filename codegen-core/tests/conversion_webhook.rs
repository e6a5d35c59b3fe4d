//! The webhook markers through the whole engine:
//! `#[resource(conversion_webhook(..))]` (the CRD's `spec.conversion`, the
//! checks across the versions of a kind) and `mutating_webhook` /
//! `validating_webhook` (`config/webhook/manifests.yaml`).

use std::path::Path;

use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};

const MOD_RS: &str = "codegen_macros::group_name!(\"batch.example.com\");\n\nmod types;\npub use types::*;\n";

fn types(marker: &str) -> String {
    format!(
        "use codegen_macros::{{ApiType, genclient}};\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         /// A task.\n\
         #[genclient(no_status)]\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         {marker}\n\
         pub struct Task {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: TaskSpec,\n}}\n\n\
         /// What to run.\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct TaskSpec {{\n    /// The command.\n    pub command: String,\n}}\n"
    )
}

/// Writes `versions` (name, marker line) of the Task into `root/apis/batch`
/// and runs the CRD generator; the CRD text, or the rendered diagnostics.
fn generate(root: &Path, versions: &[(&str, &str)]) -> (Result<String, String>, Vec<String>) {
    let mut names = Vec::new();
    for (version, marker) in versions {
        let dir = root.join("apis/batch").join(version);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mod.rs"), MOD_RS).unwrap();
        std::fs::write(dir.join("types.rs"), types(marker)).unwrap();
        names.push(*version);
    }
    let settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_generators([GeneratorKind::Crd])
        .with_group(GroupVersions::parse(&format!("batch:{}", names.join(","))).unwrap());
    match codegen_core::run(&settings, Mode::Write) {
        Ok(report) => (
            Ok(std::fs::read_to_string(root.join("crd/batch.example.com_tasks.yaml")).unwrap()),
            report.warnings.iter().map(|d| d.message.clone()).collect(),
        ),
        Err(diags) => (Err(codegen_core::diag::render_all(&diags)), Vec::new()),
    }
}

#[test]
fn the_crd_gets_the_conversion_of_any_version_that_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    let (crd, warnings) = generate(
        dir.path(),
        &[
            ("v1", "#[resource(conversion_webhook(service = \"tasks/tasks-webhook\", port = 9443))]"),
            ("v2", "#[resource(storage)]"),
        ],
    );
    assert_eq!(warnings, Vec::<String>::new());
    let crd = crd.unwrap();
    let expected = "spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service:\n          \
                    name: tasks-webhook\n          namespace: tasks\n          path: /convert\n          port: 9443\n      \
                    conversionReviewVersions:\n      - v1\n  group: batch.example.com\n";
    assert!(crd.contains(expected), "{crd}");
}

#[test]
fn without_the_marker_there_is_no_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let (crd, _) = generate(dir.path(), &[("v1", ""), ("v2", "#[resource(storage)]")]);
    assert!(!crd.unwrap().contains("conversion"));
}

#[test]
fn versions_must_agree_on_the_conversion_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let (crd, _) = generate(
        dir.path(),
        &[
            ("v1", "#[resource(conversion_webhook)]"),
            ("v2", "#[resource(storage, conversion_webhook(url = \"https://h/convert\"))]"),
        ],
    );
    let err = crd.unwrap_err();
    assert!(
        err.contains("error: kind `Task` has a different `conversion_webhook` in version `v2` than in `v1`"),
        "{err}"
    );
    assert!(err.contains("one CRD has one conversion webhook"), "{err}");
    // The same marker on both is fine.
    let dir = tempfile::tempdir().unwrap();
    let (crd, _) = generate(
        dir.path(),
        &[("v1", "#[resource(conversion_webhook)]"), ("v2", "#[resource(storage, conversion_webhook)]")],
    );
    assert!(crd.unwrap().contains("strategy: Webhook"));
}

#[test]
fn one_version_gets_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (crd, warnings) = generate(dir.path(), &[("v1", "#[resource(conversion_webhook)]")]);
    assert!(crd.unwrap().contains("strategy: Webhook"));
    assert_eq!(warnings, ["`conversion_webhook` on kind `Task`, which has one version"]);
}

#[test]
fn admission_webhook_markers_write_the_webhook_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let (crd, _) = generate(
        dir.path(),
        &[
            ("v1", "#[resource(validating_webhook(failure_policy = \"Ignore\"))]"),
            (
                "v2",
                "#[resource(storage, mutating_webhook, validating_webhook(path = \"/validate-task\", name = \"vtask.batch.example.com\", verbs = \"create;update;delete\"))]",
            ),
        ],
    );
    crd.unwrap();
    let manifests = std::fs::read_to_string(dir.path().join("webhook/manifests.yaml")).unwrap();
    let expected = r#"# Code generated by kube-codegen. DO NOT EDIT.

---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-batch-example-com-v2-task
  failurePolicy: Fail
  name: mtask-v2.batch.example.com
  rules:
  - apiGroups:
    - batch.example.com
    apiVersions:
    - v2
    operations:
    - CREATE
    - UPDATE
    resources:
    - tasks
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-batch-example-com-v1-task
  failurePolicy: Ignore
  name: vtask-v1.batch.example.com
  rules:
  - apiGroups:
    - batch.example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - tasks
  sideEffects: None
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-task
  failurePolicy: Fail
  name: vtask.batch.example.com
  rules:
  - apiGroups:
    - batch.example.com
    apiVersions:
    - v2
    operations:
    - CREATE
    - UPDATE
    - DELETE
    resources:
    - tasks
  sideEffects: None
"#;
    assert_eq!(manifests, expected);

    // Without the markers the file is not written, and a stale one goes.
    let (crd, _) = generate(dir.path(), &[("v1", ""), ("v2", "#[resource(storage)]")]);
    crd.unwrap();
    assert!(!dir.path().join("webhook/manifests.yaml").exists());
}

#[test]
fn webhook_verbs_are_checked_as_the_api_server_checks_operations() {
    for (verbs, message) in [
        ("*;create", "error: `*` with other webhook verbs"),
        ("create;update;create", "error: webhook verb `create` given twice"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("#[resource(validating_webhook(verbs = \"{verbs}\"))]");
        let (crd, _) = generate(dir.path(), &[("v1", &marker)]);
        let err = crd.unwrap_err();
        assert!(err.contains(message), "{verbs}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (crd, _) = generate(dir.path(), &[("v1", "#[resource(validating_webhook(verbs = \"*\"))]")]);
    crd.unwrap();
    let manifests = std::fs::read_to_string(dir.path().join("webhook/manifests.yaml")).unwrap();
    assert!(manifests.contains("operations:\n    - '*'\n"), "{manifests}");
}

#[test]
fn admission_webhook_marker_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    let (crd, _) = generate(
        dir.path(),
        &[(
            "v1",
            "#[resource(mutating_webhook(path = \"mutate\", name = \"mtask\", failure_policy = \"fail\", verbs = \"create;patch\"), validating_webhook = \"x\")]",
        )],
    );
    let err = crd.unwrap_err();
    for message in [
        "error: path `mutate` does not start with `/`",
        "error: webhook name `mtask` has fewer than three DNS segments",
        "error: unknown failure policy `fail`",
        "error: unknown webhook verb `patch`",
        "error: `validating_webhook` takes a list, not a value",
    ] {
        assert!(err.contains(message), "{message}\n{err}");
    }
}
