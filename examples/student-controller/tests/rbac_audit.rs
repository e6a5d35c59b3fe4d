//! Least privilege, proven from the API server's audit log. The controller
//! runs as a service account bound only to the role generated from its
//! `#[rbac]` markers (`config/rbac/role.yaml`), with leader election on,
//! while a Student is created, edited and deleted. Then, from the audit log
//! (metadata level, every request), for this controller's identity only:
//! every request it made is allowed by a rule of that role, and every
//! permission of the role (verb × group × resource) was used by at least
//! one request. A permission nobody used fails the test, named.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context, Result};
use codegen_testenv::{TestEnv, kubectl_result};
use common::{ControllerProcess, controller_identity, eventually, install_crd};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use kube::api::Api;
use serde_json::Value;
use student_controller::controller::config_map_name;
use student_controller::pkg::apis::example::v1::Student;

/// One request of the controller, as the audit log records it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Request {
    verb: String,
    group: String,
    /// `resource` or `resource/subresource`; empty for a non-resource URL.
    resource: String,
    /// The non-resource URL, when there is no resource.
    url: String,
    /// The HTTP status of the response.
    code: i64,
}

impl Request {
    fn from_audit(event: &Value) -> Self {
        let object = &event["objectRef"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let resource = match (object["resource"].as_str(), object["subresource"].as_str()) {
            (Some(r), Some(s)) => format!("{r}/{s}"),
            (Some(r), None) => r.to_owned(),
            _ => String::new(),
        };
        Request {
            verb: text(&event["verb"]),
            group: text(&object["apiGroup"]),
            url: if resource.is_empty() { text(&event["requestURI"]) } else { String::new() },
            resource,
            code: event["responseStatus"]["code"].as_i64().unwrap_or_default(),
        }
    }

    /// The verbs the API server authorized for it: a server-side apply that
    /// created its object (201) is also checked for `create`.
    fn verbs(&self) -> Vec<&str> {
        if self.verb == "patch" && self.code == 201 { vec!["patch", "create"] } else { vec![self.verb.as_str()] }
    }

    fn allowed_by(&self, rule: &PolicyRule, verb: &str) -> bool {
        let has =
            |list: &Option<Vec<String>>, value: &str| list.iter().flatten().any(|item| item == "*" || item == value);
        let verb_ok = rule.verbs.iter().any(|v| v == "*" || v == verb);
        if self.resource.is_empty() {
            return verb_ok && has(&rule.non_resource_urls, &self.url);
        }
        verb_ok
            && has(&rule.api_groups, &self.group)
            && has(&rule.resources, &self.resource)
            && rule.resource_names.as_ref().is_none_or(|names| names.is_empty())
    }
}

/// Every permission a rule grants, `verb resource.group`.
fn permissions(rule: &PolicyRule) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for group in rule.api_groups.iter().flatten() {
        for resource in rule.resources.iter().flatten() {
            for verb in &rule.verbs {
                out.push((verb.clone(), group.clone(), resource.clone()));
            }
        }
    }
    out
}

fn show((verb, group, resource): &(String, String, String)) -> String {
    if group.is_empty() { format!("{verb} {resource}") } else { format!("{verb} {resource}.{group}") }
}

#[tokio::test]
async fn every_request_is_allowed_by_the_generated_role_and_every_permission_is_used() -> Result<()> {
    let env = TestEnv::shared();
    install_crd(env).await?;
    let ns = env.create_namespace("rbac").await?;
    let kubeconfig = controller_identity(env, &ns).await?;
    let log = env.work_dir().join(format!("{ns}.log"));
    let mut controller = ControllerProcess::start_with(
        &kubeconfig,
        &ns,
        log,
        &[
            "--leader-elect",
            "--leader-elect-lease-duration",
            "4s",
            "--leader-elect-renew-deadline",
            "3s",
            "--leader-elect-retry-period",
            "500ms",
        ],
    )?;
    let admin = env.admin_client().await?;
    let config_maps: Api<ConfigMap> = Api::namespaced(admin.clone(), &ns);
    let students: Api<Student> = Api::namespaced(admin.clone(), &ns);
    let school = |want: &'static str| {
        let config_maps = config_maps.clone();
        move || {
            let config_maps = config_maps.clone();
            async move {
                let cm = config_maps.get_opt(&config_map_name("li")).await?;
                Ok(cm.and_then(|cm| cm.data).and_then(|d| d.get("school").cloned()).filter(|s| s == want))
            }
        }
    };

    // Create, edit (a second Synced event: a repeat, patched as a series),
    // delete (the finalizer deletes the ConfigMap).
    let student = format!(
        "apiVersion: example.k8s.io/v1\nkind: Student\nmetadata:\n  name: li\n  namespace: {ns}\nspec:\n  name: li\n  school: pku\n"
    );
    kubectl_result(env.kubectl_as("admin", &["create", "-f", "-"], Some(&student)))?;
    eventually("the ConfigMap", Duration::from_secs(60), school("pku")).await?;
    kubectl_result(env.kubectl(&[
        "patch",
        "stu",
        "li",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"school":"ruc"}}"#,
    ]))?;
    eventually("the edited ConfigMap", Duration::from_secs(60), school("ruc")).await?;
    kubectl_result(env.kubectl(&["delete", "stu", "li", "-n", &ns, "--wait=false"]))?;
    eventually("the Student to be gone", Duration::from_secs(60), || {
        let students = students.clone();
        async move { Ok(students.get_opt("li").await?.is_none().then_some(())) }
    })
    .await?;
    // The leader renews its Lease every 0.5 s; a graceful stop releases it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    controller.signal(libc::SIGTERM);
    let status = controller.wait(Duration::from_secs(30))?;
    assert_eq!(status.code(), Some(0), "log:\n{}", controller.log_text());

    let user = format!("system:serviceaccount:{ns}:student-controller");
    let requests: BTreeSet<Request> = env
        .audit_events()
        .iter()
        .filter(|e| e["user"]["username"] == user.as_str() && e["stage"] == "ResponseComplete")
        .map(Request::from_audit)
        .collect();
    assert!(!requests.is_empty(), "no request of {user} in the audit log");

    let role: ClusterRole = Api::all(admin).get("student-controller").await.context("the generated ClusterRole")?;
    let rules = role.rules.unwrap_or_default();
    let not_allowed: Vec<String> = requests
        .iter()
        .filter(|r| !r.verbs().iter().all(|verb| rules.iter().any(|rule| r.allowed_by(rule, verb))))
        .map(|r| format!("{r:?}"))
        .collect();
    assert!(not_allowed.is_empty(), "requests no rule of config/rbac/role.yaml allows:\n{}", not_allowed.join("\n"));

    let mut used: BTreeSet<(String, String, String)> = requests
        .iter()
        .flat_map(|r| r.verbs().into_iter().map(|verb| (verb.to_owned(), r.group.clone(), r.resource.clone())))
        .collect();
    // A ConfigMap created with its owner reference (blockOwnerDeletion) is
    // checked by the OwnerReferencesPermissionEnforcement admission plugin,
    // on in the test server, for update on students/finalizers: a check of
    // the authorizer's, not a request of its own in the audit log.
    if requests.iter().any(|r| r.resource == "configmaps" && r.verb == "patch" && r.code == 201) {
        used.insert(("update".into(), "example.k8s.io".into(), "students/finalizers".into()));
    }
    let unused: Vec<String> =
        rules.iter().flat_map(permissions).filter(|p| !used.contains(p)).map(|p| show(&p)).collect();
    assert!(
        unused.is_empty(),
        "permissions of config/rbac/role.yaml no request used (drop them from the #[rbac] markers): {}",
        unused.join(", ")
    );
    Ok(())
}
