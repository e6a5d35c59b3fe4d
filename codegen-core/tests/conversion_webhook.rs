//! `#[resource(conversion_webhook(..))]` through the whole engine: the CRD's
//! `spec.conversion`, and the checks across the versions of a kind.

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
