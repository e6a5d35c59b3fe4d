//! Differential test against controller-gen for `kube-codegen rbac`: the
//! same rules as `#[rbac(...)]` markers (below) and as `+kubebuilder:rbac`
//! markers (their Go twin, tests/controller-gen/rbac), through both
//! generators. The manifests must be the same text, comments and document
//! separators aside: the same roles, rules in the same order, keys and
//! quoting as controller-gen writes them (the `core` alias, rules of
//! several groups joined, `*` standing for every verb, `roleName`, a Role
//! per namespace).

use std::process::Command;

use codegen_core::rbac::{RbacSettings, generate_rbac};

const MARKERS_RS: &str = r#"
#[rbac(groups = "", resources = "configmaps", verbs = "get;list")]
#[rbac(groups = "core", resources = "configmaps;secrets", verbs = "watch;get")]
#[rbac(groups = "core", resources = "secrets", verbs = "list")]
#[rbac(groups = "apps;extensions", resources = "deployments", verbs = "get;list")]
#[rbac(groups = "batch", resources = "jobs;cronjobs", verbs = "get;list")]
#[rbac(groups = "batch", resources = "jobs/status", verbs = "get;update;patch")]
#[rbac(groups = "example.com", resources = "widgets", verbs = "get")]
#[rbac(groups = "example.com", resources = "widgets", verbs = "*")]
#[rbac(groups = "", resources = "pods", resource_names = "one;two", verbs = "get")]
#[rbac(urls = "/metrics", verbs = "get")]
#[rbac(urls = "/healthz;/readyz", verbs = "get")]
#[rbac(groups = "coordination.k8s.io", resources = "leases", verbs = "get;update", namespace = "kube-system")]
#[rbac(groups = "", resources = "secrets", verbs = "get", namespace = "kube-system", role_name = "secret-reader")]
#[rbac(groups = "policy", resources = "poddisruptionbudgets", verbs = "get", role_name = "pdb-reader")]
pub fn reconcile() {}

#[cfg(test)]
mod tests {
    // Test code is not read (controller-gen reads no test files either).
    #[rbac(groups = "", resources = "nodes", verbs = "delete")]
    fn helper() {}
}
"#;

/// The manifest without comments and document separators.
fn body(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with('#') && *l != "---").map(|l| format!("{l}\n")).collect()
}

#[test]
fn role_manifests_match_controller_gen() {
    let controller_gen = codegen_testenv::controller_gen().unwrap_or_else(|e| panic!("{e:#}"));
    let out = tempfile::tempdir().unwrap();
    let twins = kube_codegen_tests::workspace().join("tests/controller-gen");
    let run = Command::new(controller_gen)
        .args(["rbac:roleName=manager-role", "paths=./rbac/..."])
        .arg(format!("output:rbac:artifacts:config={}", out.path().join("rbac").display()))
        .current_dir(&twins)
        .env("GOFLAGS", "-mod=readonly")
        .output()
        .expect("running controller-gen");
    assert!(run.status.success(), "controller-gen: {}", String::from_utf8_lossy(&run.stderr));
    let theirs = std::fs::read_to_string(out.path().join("rbac/role.yaml")).unwrap();

    let src = out.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("controller.rs"), MARKERS_RS).unwrap();
    let settings = RbacSettings {
        sources: vec![src],
        output: out.path().join("config/rbac/role.yaml"),
        role_name: "manager-role".into(),
    };
    let output = generate_rbac(&settings).unwrap_or_else(|e| panic!("{}", codegen_core::diag::render_all(&e)));
    let ours = &output.files[0].contents;
    assert_eq!(body(ours), body(&theirs), "ours:\n{ours}\ncontroller-gen:\n{theirs}");
}
