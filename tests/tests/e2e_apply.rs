//! Typed server-side apply — the generated apply configurations, the typed
//! clients' `apply`/`apply_status` and `extract_<kind>[_status]` — on the
//! real API server:
//!
//! * two field managers co-own one object, each owning exactly what its
//!   configuration set; a field left unset is not claimed, where a whole
//!   serialized typed object claims (and overwrites) its Rust defaults;
//! * a conflict is a typed error naming the other manager and the field;
//!   `force` takes the field over, an equal value is shared;
//! * list-map items (a fixture's own list, Kubernetes' containers and
//!   conditions) of two managers merge by key;
//! * for every kind of every fixture package, `extract_<kind>` of the
//!   applied object is exactly the applied configuration (server defaults
//!   are not the manager's), applying it back is a no-op, and the status
//!   subresource round-trips the same way (the read-only `Report` is
//!   written through the runtime client its generated client wraps; `Task`
//!   v1 cannot keep its spec under v2 storage, which is pinned down
//!   instead); extract → change → apply moves only the changed field.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use codegen_runtime::client::{ApplyOptions, GetOptions};
use codegen_testenv::TestEnv;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::ObjectMeta;
use kube_codegen_tests::{
    FIXTURES, cluster, cronjob, deployment, gateway, readonly, scale, student, twokinds, twoversions, user,
};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

const ALICE: &str = "alice";
const BOB: &str = "bob";

/// Every fixture package and its generated CRD directory.
const CRD_DIRS: &[(&str, &str)] = &[
    ("student", student::CRD_DIR),
    ("user", user::CRD_DIR),
    ("cluster", cluster::CRD_DIR),
    ("scale", scale::CRD_DIR),
    ("twokinds", twokinds::CRD_DIR),
    ("twoversions", twoversions::CRD_DIR),
    ("readonly", readonly::CRD_DIR),
    ("cronjob", cronjob::CRD_DIR),
    ("deployment", deployment::CRD_DIR),
    ("gateway", gateway::CRD_DIR),
];

/// The kinds the extract round trip below covers: `(fixture, apiVersion,
/// kind, has a status subresource)`. Checked against the CRDs.
const COVERED: &[(&str, &str, &str, bool)] = &[
    ("student", "example.k8s.io/v1", "Student", false),
    ("user", "auth.ilinux.io/v1beta1", "User", false),
    ("cluster", "policy.example.com/v1", "ClusterPolicy", false),
    ("cluster", "policy.example.com/v1", "ClusterQuota", false),
    ("scale", "apps.example.com/v1", "WebApp", true),
    ("twokinds", "shop.example.com/v1", "Order", true),
    ("twokinds", "shop.example.com/v1", "Product", false),
    ("twoversions", "batch.example.com/v1", "Task", false),
    ("twoversions", "batch.example.com/v2", "Task", false),
    ("readonly", "audit.example.com/v1", "Report", false),
    ("cronjob", "batch.example.com/v1", "CronTab", true),
    ("deployment", "workloads.example.com/v1", "Rollout", true),
    ("gateway", "net.example.com/v1", "GatewayClass", true),
];

// ---------------------------------------------------------------------------
// Helpers

/// The CRD documents of a directory, as JSON.
fn crds_in(dir: &str) -> Result<Vec<Value>> {
    use serde::Deserialize as _;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {dir}"))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let value = Value::deserialize(doc).with_context(|| format!("parsing {}", path.display()))?;
            if !value.is_null() {
                out.push(value);
            }
        }
    }
    Ok(out)
}

/// Installs the CRDs of every fixture package, once per test binary.
async fn install_crds(env: &TestEnv) -> Result<()> {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    INSTALLED
        .get_or_try_init(|| async {
            for (fixture, dir) in CRD_DIRS {
                for entry in std::fs::read_dir(dir)? {
                    let path = entry?.path();
                    env.kubectl_apply_file(Path::new(&path))
                        .with_context(|| format!("{fixture}: applying {}", path.display()))?;
                }
                for crd in crds_in(dir)? {
                    let name = crd["metadata"]["name"].as_str().context("metadata.name")?;
                    env.wait_crd_established(name, Duration::from_secs(60)).await?;
                }
            }
            anyhow::Ok(())
        })
        .await?;
    Ok(())
}

fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("serializes to JSON")
}

/// Asserts two values serialize to the same JSON (apply configurations
/// holding a fixture's own enums have no `PartialEq`), printing both.
#[track_caller]
fn assert_same_json(actual: &impl Serialize, expected: &impl Serialize, what: &str) {
    let (a, e) = (to_json(actual), to_json(expected));
    assert!(
        a == e,
        "{what}:\n  actual:   {}\n  expected: {}",
        serde_json::to_string(&a).unwrap_or_default(),
        serde_json::to_string(&e).unwrap_or_default()
    );
}

/// The leaf paths of a `fieldsV1` tree: `.spec.name`,
/// `.spec.env[{"name":"A"}].value`, `.spec.namespaces["a"]`. A list item's
/// `.` marker is not listed (its fields are).
fn field_paths(prefix: &str, node: &Value, out: &mut BTreeSet<String>) {
    let Some(children) = node.as_object() else { return };
    let mut leaf = true;
    for (element, child) in children {
        let path = if let Some(name) = element.strip_prefix("f:") {
            format!("{prefix}.{name}")
        } else if let Some(keys) = element.strip_prefix("k:") {
            format!("{prefix}[{keys}]")
        } else if let Some(member) = element.strip_prefix("v:") {
            format!("{prefix}[{member}]")
        } else if let Some(index) = element.strip_prefix("i:") {
            format!("{prefix}[{index}]")
        } else {
            continue; // "."
        };
        leaf = false;
        field_paths(&path, child, out);
    }
    if leaf && !prefix.is_empty() {
        out.insert(prefix.to_owned());
    }
}

/// The fields `manager` owns in `obj` through `Apply` on `subresource`
/// (`""`: the main resource), from `metadata.managedFields`.
fn applied_fields(obj: &impl Serialize, manager: &str, subresource: &str) -> BTreeSet<String> {
    let obj = to_json(obj);
    let mut out = BTreeSet::new();
    for entry in obj.pointer("/metadata/managedFields").and_then(Value::as_array).into_iter().flatten() {
        if entry["manager"] == manager
            && entry["operation"] == "Apply"
            && entry.get("subresource").and_then(Value::as_str).unwrap_or("") == subresource
        {
            field_paths("", &entry["fieldsV1"], &mut out);
        }
    }
    out
}

/// `(manager, operation, subresource)` of every managedFields entry.
fn managers(obj: &impl Serialize) -> BTreeSet<(String, String, String)> {
    let obj = to_json(obj);
    let field = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| (field(e, "manager"), field(e, "operation"), field(e, "subresource")))
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| (*p).to_owned()).collect()
}

fn resource_version(obj: &impl Serialize) -> String {
    to_json(obj).pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Not forced: a conflict fails instead of taking the field.
fn polite(manager: &str) -> ApplyOptions {
    ApplyOptions { field_manager: manager.to_owned(), force: false, dry_run: false }
}

fn time(rfc3339: &str) -> Time {
    Time(rfc3339.parse().expect("an RFC 3339 timestamp"))
}

// ---------------------------------------------------------------------------
// 1. Two managers co-own one object.

#[tokio::test]
async fn two_managers_each_own_exactly_the_fields_they_applied() -> Result<()> {
    use user::apis::auth::v1beta1::Role;
    use user::client::applyconfigurations::auth::v1beta1::{
        LoginWindowApplyConfiguration as Window, UserApplyConfiguration as UserAc, UserSpecApplyConfiguration as SpecAc,
    };
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("apply-coown").await?;
    let users = user::client::clientset::Clientset::new(env.admin_client().await?).auth_v1beta1().users(&ns);

    let alice = UserAc::new("ada", &ns)
        .with_labels([("owner", "alice")])
        .with_spec(SpecAc::new().with_user_id(1000).with_groups(["dev"]).with_email("ada@example.com"));
    users.apply(&alice, &polite(ALICE)).await.context("alice's apply")?;
    let bob = UserAc::new("ada", &ns).with_annotations([("review", "done")]).with_spec(
        SpecAc::new()
            .with_shell("zsh")
            .with_role(Role::Admin)
            .with_labels([("team", "compilers")])
            .with_window(Window::new().with_from(8).with_to(18)),
    );
    let both = users.apply(&bob, &polite(BOB)).await.context("bob's apply: disjoint fields, no conflict")?;

    // Both sets of values, neither clobbered.
    let spec = &both.spec;
    assert_eq!((spec.user_id, spec.groups.as_slice()), (1000, &["dev".to_owned()][..]));
    assert_eq!(spec.email.as_deref(), Some("ada@example.com"));
    assert_eq!(spec.shell.as_deref(), Some("zsh"));
    assert_eq!(to_json(&spec.role), json!("admin"));
    assert_eq!(spec.labels, BTreeMap::from([("team".to_owned(), "compilers".to_owned())]));
    assert_eq!(spec.window.as_ref().map(|w| (w.from, w.to)), Some((8, 18)));
    assert_eq!(both.metadata.labels.as_ref().and_then(|l| l.get("owner")).map(String::as_str), Some("alice"));
    assert_eq!(both.metadata.annotations.as_ref().and_then(|a| a.get("review")).map(String::as_str), Some("done"));

    // One Apply entry per manager, each listing only its own fields.
    let alices = set(&[".metadata.labels.owner", ".spec.email", ".spec.groups", ".spec.userID"]);
    let bobs = set(&[
        ".metadata.annotations.review",
        ".spec.labels.team",
        ".spec.role",
        ".spec.shell",
        ".spec.window.from",
        ".spec.window.to",
    ]);
    assert_eq!(applied_fields(&both, ALICE, ""), alices);
    assert_eq!(applied_fields(&both, BOB, ""), bobs);
    let entries = managers(&both);
    assert!(entries.contains(&(ALICE.into(), "Apply".into(), String::new())), "{entries:?}");
    assert!(entries.contains(&(BOB.into(), "Apply".into(), String::new())), "{entries:?}");

    // Alice applies again — a new email, none of bob's fields: bob's stay.
    let again = UserAc::new("ada", &ns)
        .with_labels([("owner", "alice")])
        .with_spec(SpecAc::new().with_user_id(1000).with_groups(["dev"]).with_email("ada@lovelace.org"));
    let after = users.apply(&again, &polite(ALICE)).await?;
    assert_eq!(after.spec.email.as_deref(), Some("ada@lovelace.org"));
    assert_eq!(after.spec.shell.as_deref(), Some("zsh"), "bob's shell survives alice's apply");
    assert_eq!(to_json(&after.spec.role), json!("admin"), "bob's role survives");
    assert_eq!(after.spec.window.as_ref().map(|w| (w.from, w.to)), Some((8, 18)), "bob's window survives");
    assert_eq!(applied_fields(&after, ALICE, ""), alices);
    assert_eq!(applied_fields(&after, BOB, ""), bobs);

    // A field alice stops applying, and only she owned, is removed; bob's
    // are untouched.
    let without_email = UserAc::new("ada", &ns)
        .with_labels([("owner", "alice")])
        .with_spec(SpecAc::new().with_user_id(1000).with_groups(["dev"]));
    let after = users.apply(&without_email, &polite(ALICE)).await?;
    assert_eq!(after.spec.email, None, "alice dropped her email");
    assert_eq!(after.spec.shell.as_deref(), Some("zsh"));
    assert_eq!(applied_fields(&after, BOB, ""), bobs);
    assert_eq!(applied_fields(&after, ALICE, ""), set(&[".metadata.labels.owner", ".spec.groups", ".spec.userID"]));
    Ok(())
}

#[tokio::test]
async fn unset_fields_are_not_claimed_but_a_serialized_object_claims_its_defaults() -> Result<()> {
    use student::apis::example::v1::{Student, StudentSpec};
    use student::client::applyconfigurations::example::v1::{
        StudentApplyConfiguration as StudentAc, StudentSpecApplyConfiguration as SpecAc,
    };
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("apply-defaults").await?;
    let students = student::client::clientset::Clientset::new(env.admin_client().await?).example_v1().students(&ns);
    let ac = |spec: SpecAc| StudentAc::new("ada", &ns).with_spec(spec);

    // Both spec fields are required, so the first apply sets both; then
    // alice co-owns `name` (same value: no conflict) and bob lets go of it.
    students.apply(&ac(SpecAc::new().with_name("Ada").with_school("MIT")), &polite(BOB)).await?;
    students.apply(&ac(SpecAc::new().with_name("Ada")), &polite(ALICE)).await.context("equal value: shared")?;
    let split = students.apply(&ac(SpecAc::new().with_school("MIT")), &polite(BOB)).await?;
    assert_eq!(applied_fields(&split, ALICE, ""), set(&[".spec.name"]));
    assert_eq!(applied_fields(&split, BOB, ""), set(&[".spec.school"]));
    assert_eq!((split.spec.name.as_str(), split.spec.school.as_str()), ("Ada", "MIT"));

    // An apply configuration with only `name` sends no `school`...
    let rename = ac(SpecAc::new().with_name("Ada Lovelace"));
    assert_eq!(to_json(&rename)["spec"], json!({ "name": "Ada Lovelace" }), "only what the builder set is sent");
    let renamed = students.apply(&rename, &polite(ALICE)).await.context("alice owns name alone: no conflict")?;
    // ...so bob's school survives and stays his.
    assert_eq!((renamed.spec.name.as_str(), renamed.spec.school.as_str()), ("Ada Lovelace", "MIT"));
    assert_eq!(applied_fields(&renamed, ALICE, ""), set(&[".spec.name"]));
    assert_eq!(applied_fields(&renamed, BOB, ""), set(&[".spec.school"]));

    // The old way: a whole typed object, serialized. Its Rust default
    // `school: ""` is sent and claimed like any value the caller meant.
    let whole = Student {
        metadata: ObjectMeta { name: Some("ada".into()), namespace: Some(ns.clone()), ..Default::default() },
        spec: StudentSpec { name: "Ada Lovelace".into(), ..Default::default() },
        ..Default::default()
    };
    assert_eq!(to_json(&whole)["spec"], json!({ "name": "Ada Lovelace", "school": "" }));
    let err = students.inner().apply("ada", &whole, &polite(ALICE)).await.expect_err("school is bob's");
    let conflicts = err.apply_conflicts();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!((conflicts[0].manager.as_str(), conflicts[0].field.as_str()), (BOB, ".spec.school"));
    // Forced (ApplyOptions::new), the default overwrites bob's value and
    // takes his field.
    let clobbered = students.inner().apply("ada", &whole, &ApplyOptions::new(ALICE)).await?;
    assert_eq!(clobbered.spec.school, "", "bob's school overwritten by a Rust default");
    assert_eq!(applied_fields(&clobbered, ALICE, ""), set(&[".spec.name", ".spec.school"]));
    assert_eq!(applied_fields(&clobbered, BOB, ""), BTreeSet::new(), "bob owns nothing any more");
    Ok(())
}

// ---------------------------------------------------------------------------
// 2. Conflicts.

#[tokio::test]
async fn a_conflict_names_the_other_manager_and_force_takes_the_field() -> Result<()> {
    use scale::client::applyconfigurations::apps::v1::{
        WebAppApplyConfiguration as WebAppAc, WebAppSpecApplyConfiguration as SpecAc,
    };
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("apply-conflict").await?;
    let apps = scale::client::clientset::Clientset::new(env.admin_client().await?).apps_v1().web_apps(&ns);
    let ac = |spec: SpecAc| WebAppAc::new("web", &ns).with_spec(spec);

    let bobs = apps.apply(&ac(SpecAc::new().with_image("nginx:1").with_replicas(2)), &polite(BOB)).await?;
    assert_eq!(applied_fields(&bobs, BOB, ""), set(&[".spec.image", ".spec.replicas"]));

    // The same value is no conflict: alice and bob share `image`.
    let shared = apps
        .apply(&ac(SpecAc::new().with_image("nginx:1").with_memory(Quantity("64Mi".into()))), &polite(ALICE))
        .await
        .context("an equal value does not conflict")?;
    assert_eq!(applied_fields(&shared, ALICE, ""), set(&[".spec.image", ".spec.memory"]));
    assert_eq!(applied_fields(&shared, BOB, ""), set(&[".spec.image", ".spec.replicas"]));

    // Other values for bob's fields: a typed conflict naming bob, per field.
    let takeover = ac(SpecAc::new().with_image("nginx:2").with_memory(Quantity("64Mi".into())).with_replicas(5));
    let err = apps.apply(&takeover, &polite(ALICE)).await.expect_err("image and replicas are bob's");
    assert!(err.is_apply_conflict() && err.is_conflict(), "{err:?}");
    let mut conflicts = err.apply_conflicts();
    conflicts.sort_by(|a, b| a.field.cmp(&b.field));
    let found: Vec<(&str, &str)> = conflicts.iter().map(|c| (c.manager.as_str(), c.field.as_str())).collect();
    assert_eq!(found, [(BOB, ".spec.image"), (BOB, ".spec.replicas")], "{conflicts:?}");
    assert!(conflicts.iter().all(|c| c.message.contains("conflict with \"bob\"")), "{conflicts:?}");
    let unchanged = apps.get("web", &GetOptions::default()).await?;
    assert_eq!((unchanged.spec.image.as_str(), unchanged.spec.replicas), ("nginx:1", 2), "nothing was written");
    assert_eq!(resource_version(&unchanged), resource_version(&shared));

    // Forced, alice takes both fields; bob's entry no longer lists them.
    let forced = apps.apply(&takeover, &ApplyOptions { force: true, ..polite(ALICE) }).await?;
    assert_eq!((forced.spec.image.as_str(), forced.spec.replicas), ("nginx:2", 5));
    assert_eq!(applied_fields(&forced, ALICE, ""), set(&[".spec.image", ".spec.memory", ".spec.replicas"]));
    assert_eq!(applied_fields(&forced, BOB, ""), BTreeSet::new());
    assert!(!managers(&forced).iter().any(|(m, ..)| m == BOB), "an entry owning nothing is dropped");
    // A non-apply error is no apply conflict.
    let missing = apps.get("absent", &GetOptions::default()).await.expect_err("not found");
    assert!(!missing.is_apply_conflict() && missing.apply_conflicts().is_empty(), "{missing:?}");
    Ok(())
}

// ---------------------------------------------------------------------------
// 3. List-maps.

#[tokio::test]
async fn list_map_items_of_two_managers_merge_by_key() -> Result<()> {
    use scale::client::applyconfigurations::apps::v1::{
        EnvVarApplyConfiguration as EnvAc, WebAppApplyConfiguration as WebAppAc, WebAppSpecApplyConfiguration as SpecAc,
    };
    // The builder merges by the list-map key too: a second item `A` replaces the first.
    let merged = SpecAc::new()
        .with_env([EnvAc::new().with_name("A").with_value("1")])
        .with_env([EnvAc::new().with_name("A").with_value("2"), EnvAc::new().with_name("B").with_value("3")]);
    assert_eq!(to_json(&merged)["env"], json!([{ "name": "A", "value": "2" }, { "name": "B", "value": "3" }]));

    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("apply-listmap").await?;
    let apps = scale::client::clientset::Clientset::new(env.admin_client().await?).apps_v1().web_apps(&ns);
    let ac = |spec: SpecAc| WebAppAc::new("web", &ns).with_spec(spec);
    let env_of = |app: &scale::apis::apps::v1::WebApp| -> Vec<(String, String)> {
        app.spec.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect()
    };
    let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());

    apps.apply(
        &ac(SpecAc::new().with_image("nginx").with_env([EnvAc::new().with_name("A").with_value("1")])),
        &polite(ALICE),
    )
    .await?;
    let both =
        apps.apply(&ac(SpecAc::new().with_env([EnvAc::new().with_name("B").with_value("2")])), &polite(BOB)).await?;
    assert_eq!(env_of(&both), [pair("A", "1"), pair("B", "2")], "bob's item is added next to alice's");
    assert_eq!(
        applied_fields(&both, ALICE, ""),
        set(&[".spec.env[{\"name\":\"A\"}].name", ".spec.env[{\"name\":\"A\"}].value", ".spec.image"])
    );
    assert_eq!(
        applied_fields(&both, BOB, ""),
        set(&[".spec.env[{\"name\":\"B\"}].name", ".spec.env[{\"name\":\"B\"}].value"])
    );

    // Alice changes her item: bob's stays.
    let changed = apps
        .apply(
            &ac(SpecAc::new().with_image("nginx").with_env([EnvAc::new().with_name("A").with_value("10")])),
            &polite(ALICE),
        )
        .await?;
    assert_eq!(env_of(&changed), [pair("A", "10"), pair("B", "2")]);
    // Alice drops her item (an empty list of hers): only hers goes.
    let dropped = apps.apply(&ac(SpecAc::new().with_image("nginx").with_env([] as [EnvAc; 0])), &polite(ALICE)).await?;
    assert_eq!(env_of(&dropped), [pair("B", "2")]);
    assert_eq!(applied_fields(&dropped, ALICE, ""), set(&[".spec.image"]));
    Ok(())
}

#[tokio::test]
async fn containers_and_conditions_of_two_managers_merge_by_key() -> Result<()> {
    use deployment::client::applyconfigurations::k8s::api::core::v1::{
        ContainerApplyConfiguration as ContainerAc, PodSpecApplyConfiguration as PodSpecAc,
        PodTemplateSpecApplyConfiguration as TemplateAc,
    };
    use deployment::client::applyconfigurations::k8s::apimachinery::pkg::apis::meta::v1::{
        ConditionApplyConfiguration as ConditionAc, LabelSelectorApplyConfiguration as SelectorAc,
    };
    use deployment::client::applyconfigurations::workloads::v1::{
        RolloutApplyConfiguration as RolloutAc, RolloutSpecApplyConfiguration as SpecAc,
        RolloutStatusApplyConfiguration as StatusAc, extract_rollout, extract_rollout_status,
    };
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("apply-containers").await?;
    let rollouts =
        deployment::client::clientset::Clientset::new(env.admin_client().await?).workloads_v1().rollouts(&ns);
    let container = |name: &str, image: &str| ContainerAc::new().with_name(name).with_image(image);
    let pod = |c: ContainerAc| TemplateAc::new().with_spec(PodSpecAc::new().with_containers([c]));

    // The pod template carries no metadata: the generated CRD declares the
    // embedded ObjectMeta as a bare `type: object` (controller-gen's default
    // without `generateEmbeddedObjectMeta`), so the server prunes its labels.
    let alice = RolloutAc::new("web", &ns).with_spec(
        SpecAc::new()
            .with_selector(SelectorAc::new().with_match_labels([("app", "web")]))
            .with_template(pod(container("web", "nginx"))),
    );
    rollouts.apply(&alice, &polite(ALICE)).await?;
    let bob = RolloutAc::new("web", &ns).with_spec(SpecAc::new().with_template(pod(container("sidecar", "busybox"))));
    let both = rollouts.apply(&bob, &polite(BOB)).await.context("bob adds a container")?;
    let containers: Vec<(String, Option<String>)> = both
        .spec
        .template
        .spec
        .as_ref()
        .context("pod spec")?
        .containers
        .iter()
        .map(|c| (c.name.clone(), c.image.clone()))
        .collect();
    assert_eq!(
        containers,
        [("web".to_owned(), Some("nginx".to_owned())), ("sidecar".to_owned(), Some("busybox".to_owned()))],
        "both managers' containers"
    );
    let bobs = applied_fields(&both, BOB, "");
    assert_eq!(
        bobs,
        set(&[
            ".spec.template.spec.containers[{\"name\":\"sidecar\"}].image",
            ".spec.template.spec.containers[{\"name\":\"sidecar\"}].name",
        ])
    );
    assert!(applied_fields(&both, ALICE, "").contains(".spec.template.spec.containers[{\"name\":\"web\"}].image"));
    // What each extracts is their own container only.
    assert_same_json(&extract_rollout(&both, BOB)?, &bob, "bob's extract");
    assert_same_json(&extract_rollout(&both, ALICE)?, &alice, "alice's extract");

    // Conditions through the status subresource, keyed by type.
    let condition = |kind: &str, reason: &str| {
        ConditionAc::new()
            .with_type(kind)
            .with_status("True")
            .with_reason(reason)
            .with_message("")
            .with_last_transition_time(time("2026-01-01T00:00:00Z"))
    };
    let alice_status =
        RolloutAc::new("web", &ns).with_status(StatusAc::new().with_conditions([condition("Ready", "Available")]));
    let bob_status =
        RolloutAc::new("web", &ns).with_status(StatusAc::new().with_conditions([condition("Progressing", "Rolling")]));
    rollouts.apply_status(&alice_status, &polite(ALICE)).await?;
    let both = rollouts.apply_status(&bob_status, &polite(BOB)).await?;
    let types: Vec<&str> =
        both.status.as_ref().context("status")?.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Ready", "Progressing"]);
    assert_same_json(&extract_rollout_status(&both, ALICE)?, &alice_status, "alice's status extract");
    assert_same_json(&extract_rollout_status(&both, BOB)?, &bob_status, "bob's status extract");
    assert!(
        applied_fields(&both, BOB, "status")
            .iter()
            .all(|f| f.starts_with(".status.conditions[{\"type\":\"Progressing\"}]"))
    );

    // Alice's condition changes; bob's is untouched.
    let alice_status =
        RolloutAc::new("web", &ns).with_status(StatusAc::new().with_conditions([condition("Ready", "Degraded")]));
    let after = rollouts.apply_status(&alice_status, &polite(ALICE)).await?;
    let reasons: Vec<(&str, &str)> = after
        .status
        .as_ref()
        .context("status")?
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.reason.as_str()))
        .collect();
    assert_eq!(reasons, [("Ready", "Degraded"), ("Progressing", "Rolling")]);
    Ok(())
}

// ---------------------------------------------------------------------------
// 4. extract round-trips what was applied, for every kind.

/// Applies `apply:` as one manager through the generated typed client and
/// checks that `extract:` of the object the server returned — and of a
/// fresh GET — is exactly the applied configuration, that the listed server
/// defaults are on the object but not in the extract, and that applying the
/// extract back changes nothing. With `status:`, the same for
/// `apply_status` and `extract_status:`.
macro_rules! round_trip {
    (
        $(#[$doc:meta])*
        $test:ident, $prefix:literal, |$cs:ident, $ns:ident, $name:ident| {
            clientset: $fixture:ident,
            client: $client:expr,
            apply: $sample:expr,
            extract: $extract:path,
            server_defaults: [$($default:literal),* $(,)?],
            $(status: $status:expr, extract_status: $extract_status:path,)?
        }
    ) => {
        $(#[$doc])*
        #[tokio::test]
        async fn $test() -> Result<()> {
            const MANAGER: &str = "round-trip";
            let env = TestEnv::shared();
            install_crds(env).await?;
            let $ns = env.create_namespace($prefix).await?;
            // Cluster-scoped objects are named after the (unique) namespace too.
            let $name: &str = &$ns;
            let $cs = $fixture::client::clientset::Clientset::new(env.admin_client().await?);
            let client = $client;
            let what = stringify!($test);

            let applied = $sample;
            let returned = client.apply(&applied, &polite(MANAGER)).await.with_context(|| format!("{what}: apply"))?;
            let extracted = $extract(&returned, MANAGER)?;
            assert_same_json(&extracted, &applied, &format!("{what}: extract of the applied object"));
            let fetched = client.get($name, &GetOptions::default()).await?;
            assert_same_json(&$extract(&fetched, MANAGER)?, &applied, &format!("{what}: extract of a GET"));
            let object = to_json(&fetched);
            let defaults: &[&str] = &[$($default),*];
            for pointer in defaults {
                assert!(object.pointer(pointer).is_some(), "{what}: the server defaults {pointer}: {object}");
                assert!(to_json(&extracted).pointer(pointer).is_none(), "{what}: {pointer} is not the manager's");
            }
            let again = client.apply(&extracted, &polite(MANAGER)).await.with_context(|| format!("{what}: re-apply"))?;
            assert_eq!(resource_version(&again), resource_version(&fetched), "{what}: applying the extract is a no-op");
            assert!(applied_fields(&again, MANAGER, "status").is_empty());
            $(
                let status = $status;
                let returned = client
                    .apply_status(&status, &polite(MANAGER))
                    .await
                    .with_context(|| format!("{what}: apply_status"))?;
                let extracted = $extract_status(&returned, MANAGER)?;
                assert_same_json(&extracted, &status, &format!("{what}: extract_status of the applied status"));
                let main = $extract(&returned, MANAGER)?;
                assert_same_json(&main, &applied, &format!("{what}: apply_status leaves the main entry"));
                assert!(!applied_fields(&returned, MANAGER, "status").is_empty(), "{what}: a status Apply entry");
                let again = client.apply_status(&extracted, &polite(MANAGER)).await?;
                assert_eq!(resource_version(&again), resource_version(&returned), "{what}: status extract re-applied");
            )?
            Ok(())
        }
    };
}

round_trip!(
    round_trip_student, "rt-student", |cs, ns, name| {
        clientset: student,
        client: cs.example_v1().students(&ns),
        apply: {
            use student::client::applyconfigurations::example::v1::*;
            StudentApplyConfiguration::new(name, &ns)
                .with_labels([("grade", "a")])
                .with_spec(StudentSpecApplyConfiguration::new().with_name("Ada").with_school("MIT"))
        },
        extract: student::client::applyconfigurations::example::v1::extract_student,
        server_defaults: [],
    }
);

round_trip!(
    round_trip_user, "rt-user", |cs, ns, name| {
        clientset: user,
        client: cs.auth_v1beta1().users(&ns),
        apply: {
            use user::client::applyconfigurations::auth::v1beta1::*;
            UserApplyConfiguration::new(name, &ns).with_spec(
                UserSpecApplyConfiguration::new()
                    .with_user_id(1000)
                    .with_groups(["dev", "ops"])
                    .with_email("ada@example.com")
                    .with_password("correct horse")
                    .with_role(user::apis::auth::v1beta1::Role::Viewer)
                    .with_labels([("team", "compilers"), ("site", "lab")])
                    .with_window(LoginWindowApplyConfiguration::new().with_from(8).with_to(18)),
            )
        },
        extract: user::client::applyconfigurations::auth::v1beta1::extract_user,
        server_defaults: ["/spec/shell"],
    }
);

round_trip!(
    round_trip_cluster_policy, "rt-cpol", |cs, ns, name| {
        clientset: cluster,
        client: cs.policy_v1().cluster_policies(),
        apply: {
            use cluster::client::applyconfigurations::policy::v1::*;
            ClusterPolicyApplyConfiguration::new(name).with_labels([("tier", "gold")]).with_spec(
                ClusterPolicySpecApplyConfiguration::new()
                    .with_namespaces(["a", "b"])
                    .with_action(cluster::apis::policy::v1::Action::Warn)
                    .with_parameters(json!({ "level": 3, "paths": ["/x"] }))
                    .with_order(1)
                    .with_share(25)
                    .with_selector([("team", "web")])
                    .with_timeout("5m")
                    // An embedded object needs its apiVersion and kind.
                    .with_workload(
                        WorkloadApplyConfiguration::new().with_api_version("apps/v1").with_kind("Deployment").with_replicas(2),
                    ),
            )
        },
        extract: cluster::client::applyconfigurations::policy::v1::extract_cluster_policy,
        server_defaults: [],
    }
);

round_trip!(
    round_trip_cluster_quota, "rt-cquota", |cs, ns, name| {
        clientset: cluster,
        client: cs.policy_v1().cluster_quotas(),
        apply: {
            use cluster::client::applyconfigurations::policy::v1::*;
            // `limits` is flattened into the spec and has no builder.
            let mut spec = ClusterQuotaSpecApplyConfiguration::new().with_speed(cluster::apis::policy::v1::Speed::Slow);
            spec.limits = Some(cluster::apis::policy::v1::Limits(BTreeMap::from([("cpu".to_owned(), "4".to_owned())])));
            ClusterQuotaApplyConfiguration::new(name)
                .with_spec(spec)
                .with_enforcement(cluster::apis::policy::v1::Enforcement::Hard { grace_seconds: 30 })
        },
        extract: cluster::client::applyconfigurations::policy::v1::extract_cluster_quota,
        server_defaults: ["/spec/maxPods"],
    }
);

round_trip!(
    round_trip_web_app, "rt-webapp", |cs, ns, name| {
        clientset: scale,
        client: cs.apps_v1().web_apps(&ns),
        apply: {
            use scale::client::applyconfigurations::apps::v1::*;
            WebAppApplyConfiguration::new(name, &ns).with_spec(
                WebAppSpecApplyConfiguration::new()
                    .with_image("nginx:1.27")
                    .with_port(IntOrString::String("http".into()))
                    .with_memory(Quantity("128Mi".into()))
                    .with_env([
                        EnvVarApplyConfiguration::new().with_name("MODE").with_value("fast"),
                        EnvVarApplyConfiguration::new().with_name("EMPTY"),
                    ])
                    // A transparent struct: a plain string on the wire.
                    .with_tier(scale::apis::apps::v1::Tier { value: "gold".into() }),
            )
        },
        extract: scale::client::applyconfigurations::apps::v1::extract_web_app,
        server_defaults: ["/spec/replicas"],
        status: {
            use scale::client::applyconfigurations::apps::v1::*;
            use scale::client::applyconfigurations::k8s::apimachinery::pkg::apis::meta::v1 as metav1;
            WebAppApplyConfiguration::new(name, &ns).with_status(
                WebAppStatusApplyConfiguration::new()
                    .with_replicas(1)
                    .with_ready_replicas(1)
                    .with_selector("app=web")
                    .with_last_scale_time(time("2026-02-03T04:05:06Z"))
                    .with_conditions([metav1::ConditionApplyConfiguration::new()
                        .with_type("Ready")
                        .with_status("True")
                        .with_reason("Up")
                        .with_message("serving")
                        .with_observed_generation(1)
                        .with_last_transition_time(time("2026-02-03T04:05:06Z"))]),
            )
        },
        extract_status: scale::client::applyconfigurations::apps::v1::extract_web_app_status,
    }
);

round_trip!(
    round_trip_order, "rt-order", |cs, ns, name| {
        clientset: twokinds,
        client: cs.shop_v1().orders(&ns),
        apply: {
            use twokinds::client::applyconfigurations::shop::v1::*;
            OrderApplyConfiguration::new(name, &ns).with_spec(
                OrderSpecApplyConfiguration::new()
                    .with_items([("apple", 3), ("pear", 1)])
                    .with_payment(twokinds::apis::shop::v1::Payment::Card { number: "4111111111111111".into() }),
            )
        },
        extract: twokinds::client::applyconfigurations::shop::v1::extract_order,
        server_defaults: [],
        status: {
            use twokinds::client::applyconfigurations::shop::v1::*;
            OrderApplyConfiguration::new(name, &ns)
                .with_status(twokinds::apis::shop::v1::OrderStatus::Shipped { tracking: "1Z999".into() })
        },
        extract_status: twokinds::client::applyconfigurations::shop::v1::extract_order_status,
    }
);

round_trip!(
    round_trip_product, "rt-product", |cs, ns, name| {
        clientset: twokinds,
        client: cs.shop_v1().products(&ns),
        apply: {
            use twokinds::client::applyconfigurations::shop::v1::*;
            ProductApplyConfiguration::new(name, &ns)
                .with_spec(ProductSpecApplyConfiguration::new().with_price(1999).with_weight(0.25))
        },
        extract: twokinds::client::applyconfigurations::shop::v1::extract_product,
        server_defaults: [],
    }
);

/// `Task` v1 cannot round-trip: the CRD serves v1 and v2 with conversion
/// `None` and stores v2, whose schema has no `command`, so the server
/// prunes v1's only (required) spec field when it stores the object. The
/// apply itself succeeds and records v1 ownership of `.spec.command`, but
/// the object comes back without it and the generated v1 `Task` cannot be
/// decoded — by the v1 client's `apply` nor its `get`. This test pins that
/// down; `extract_task` of v1 is exercised on what the server did keep
/// (`owned_fields` is what it reads).
#[tokio::test]
async fn round_trip_task_v1_loses_command_to_v2_storage() -> Result<()> {
    use twoversions::client::applyconfigurations::batch::v1::{TaskApplyConfiguration, TaskSpecApplyConfiguration};
    const MANAGER: &str = "round-trip";
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("rt-task-v1").await?;
    let client = env.admin_client().await?;
    let tasks = twoversions::client::clientset::Clientset::new(client.clone()).batch_v1().tasks(&ns);
    let applied =
        TaskApplyConfiguration::new("old", &ns).with_spec(TaskSpecApplyConfiguration::new().with_command("echo hi"));
    let err = tasks.apply(&applied, &polite(MANAGER)).await.expect_err("the stored v1 Task has no command");
    assert!(err.to_string().contains("missing field `command`"), "{err}");
    let err = tasks.get("old", &GetOptions::default()).await.expect_err("still no command");
    assert!(err.to_string().contains("missing field `command`"), "{err}");

    let resource = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("batch.example.com", "v1", "Task"),
        "tasks",
    );
    let raw: kube::api::Api<kube::api::DynamicObject> = kube::api::Api::namespaced_with(client, &ns, &resource);
    let stored = to_json(&raw.get("old").await?);
    assert_eq!(stored["spec"], json!({}), "v2's schema pruned v1's command: {stored}");
    assert_eq!(applied_fields(&stored, MANAGER, ""), set(&[".spec.command"]), "ownership was recorded in v1");
    let owned = codegen_runtime::apply::owned_fields(&stored, MANAGER, None);
    let extracted: TaskApplyConfiguration = serde_json::from_value(owned)?;
    assert_eq!(extracted, TaskApplyConfiguration::new("old", &ns).with_spec(TaskSpecApplyConfiguration::new()));
    Ok(())
}

round_trip!(
    round_trip_task_v2, "rt-task-v2", |cs, ns, name| {
        clientset: twoversions,
        client: cs.batch_v2().tasks(&ns),
        apply: {
            use twoversions::client::applyconfigurations::batch::v2::*;
            TaskApplyConfiguration::new(name, &ns)
                .with_spec(TaskSpecApplyConfiguration::new().with_args(["echo", "hi"]).with_timeout_seconds(60))
        },
        extract: twoversions::client::applyconfigurations::batch::v2::extract_task,
        server_defaults: [],
    }
);

round_trip!(
    round_trip_cron_tab, "rt-crontab", |cs, ns, name| {
        clientset: cronjob,
        client: cs.batch_v1().cron_tabs(&ns),
        apply: {
            use cronjob::client::applyconfigurations::batch::v1::*;
            use cronjob::client::applyconfigurations::k8s::api::batch::v1::*;
            use cronjob::client::applyconfigurations::k8s::api::core::v1::*;
            let pod = PodSpecApplyConfiguration::new()
                .with_containers([ContainerApplyConfiguration::new()
                    .with_name("main")
                    .with_image("busybox")
                    .with_args(["date"])])
                .with_restart_policy("OnFailure");
            CronTabApplyConfiguration::new(name, &ns).with_labels([("app", "nightly")]).with_spec(
                CronTabSpecApplyConfiguration::new()
                    .with_schedule("*/5 * * * *")
                    .with_time_zone("Etc/UTC")
                    .with_starting_deadline_seconds(30)
                    .with_suspend(true)
                    .with_job_template(JobTemplateSpecApplyConfiguration::new().with_spec(
                        JobSpecApplyConfiguration::new()
                            .with_backoff_limit(2)
                            .with_template(PodTemplateSpecApplyConfiguration::new().with_spec(pod)),
                    ))
                    .with_history(HistoryLimitsApplyConfiguration::new().with_successful(5).with_failed(2))
                    .with_tags(["nightly", "db"]),
            )
        },
        extract: cronjob::client::applyconfigurations::batch::v1::extract_cron_tab,
        server_defaults: ["/spec/concurrencyPolicy", "/spec/verbose", "/spec/notBefore"],
        status: {
            use cronjob::client::applyconfigurations::batch::v1::*;
            use cronjob::client::applyconfigurations::k8s::api::core::v1::ObjectReferenceApplyConfiguration;
            use cronjob::client::applyconfigurations::k8s::apimachinery::pkg::apis::meta::v1 as metav1;
            CronTabApplyConfiguration::new(name, &ns).with_status(
                CronTabStatusApplyConfiguration::new()
                    .with_active([ObjectReferenceApplyConfiguration::new()
                        .with_api_version("batch/v1")
                        .with_kind("Job")
                        .with_name("nightly-1")
                        .with_namespace(ns.clone())])
                    .with_last_schedule_time(time("2026-03-01T00:05:00Z"))
                    .with_conditions([metav1::ConditionApplyConfiguration::new()
                        .with_type("Scheduled")
                        .with_status("True")
                        .with_reason("OnTime")
                        .with_message("")
                        .with_last_transition_time(time("2026-03-01T00:05:00Z"))]),
            )
        },
        extract_status: cronjob::client::applyconfigurations::batch::v1::extract_cron_tab_status,
    }
);

round_trip!(
    round_trip_rollout, "rt-rollout", |cs, ns, name| {
        clientset: deployment,
        client: cs.workloads_v1().rollouts(&ns),
        apply: {
            use deployment::client::applyconfigurations::k8s::api::apps::v1::DeploymentStrategyApplyConfiguration;
            use deployment::client::applyconfigurations::k8s::api::core::v1::*;
            use deployment::client::applyconfigurations::k8s::apimachinery::pkg::apis::meta::v1 as metav1;
            use deployment::client::applyconfigurations::workloads::v1::*;
            let pod = PodSpecApplyConfiguration::new().with_containers([ContainerApplyConfiguration::new()
                .with_name("web")
                .with_image("nginx")
                .with_env([EnvVarApplyConfiguration::new().with_name("MODE").with_value("fast")])]);
            RolloutApplyConfiguration::new(name, &ns).with_spec(
                RolloutSpecApplyConfiguration::new()
                    .with_replicas(2)
                    .with_selector(metav1::LabelSelectorApplyConfiguration::new().with_match_labels([("app", "web")]))
                    // No template metadata: the CRD prunes it (see
                    // `containers_and_conditions_of_two_managers_merge_by_key`).
                    .with_template(PodTemplateSpecApplyConfiguration::new().with_spec(pod))
                    .with_strategy(DeploymentStrategyApplyConfiguration::new().with_type("Recreate"))
                    .with_tolerations([TolerationApplyConfiguration::new()
                        .with_key("dedicated")
                        .with_operator("Exists")
                        .with_effect("NoSchedule")])
                    .with_config_secret(
                        SecretKeySelectorApplyConfiguration::new().with_name("web-config").with_key("config.yaml"),
                    ),
            )
        },
        extract: deployment::client::applyconfigurations::workloads::v1::extract_rollout,
        server_defaults: ["/spec/tier"],
        status: {
            use deployment::client::applyconfigurations::k8s::apimachinery::pkg::apis::meta::v1 as metav1;
            use deployment::client::applyconfigurations::workloads::v1::*;
            RolloutApplyConfiguration::new(name, &ns).with_status(
                RolloutStatusApplyConfiguration::new()
                    .with_replicas(2)
                    .with_selector("app=web")
                    .with_observed_generation(1)
                    .with_conditions([metav1::ConditionApplyConfiguration::new()
                        .with_type("Ready")
                        .with_status("False")
                        .with_reason("Starting")
                        .with_message("0/2 ready")
                        .with_last_transition_time(time("2026-01-01T00:00:00Z"))]),
            )
        },
        extract_status: deployment::client::applyconfigurations::workloads::v1::extract_rollout_status,
    }
);

round_trip!(
    round_trip_gateway_class, "rt-gwclass", |cs, ns, name| {
        clientset: gateway,
        client: cs.net_v1().gateway_classes(),
        apply: {
            use gateway::client::applyconfigurations::common::v1::SecretKeyRefApplyConfiguration;
            use gateway::client::applyconfigurations::net::v1::*;
            GatewayClassApplyConfiguration::new(name).with_spec(
                GatewayClassSpecApplyConfiguration::new()
                    .with_controller(GatewayControllerApplyConfiguration::new().with_name("example.com/gateway"))
                    .with_listeners([
                        // No protocol: the schema default (HTTP) is the server's.
                        ListenerApplyConfiguration::new().with_name("http").with_port(80),
                        ListenerApplyConfiguration::new().with_name("https").with_port(443).with_protocol("HTTPS"),
                    ])
                    .with_tls(TlsConfigApplyConfiguration::new().with_min_version("1.3"))
                    .with_credentials(
                        SecretKeyRefApplyConfiguration::new()
                            .with_namespace(ns.clone())
                            .with_name("creds")
                            .with_key("token"),
                    )
                    .with_ready_timeout("30s")
                    .with_ca_bundle(k8s_openapi::ByteString(b"-----BEGIN CERTIFICATE-----".to_vec())),
            )
        },
        extract: gateway::client::applyconfigurations::net::v1::extract_gateway_class,
        server_defaults: ["/spec/listeners/0/protocol"],
        status: {
            use gateway::client::applyconfigurations::net::v1::*;
            GatewayClassApplyConfiguration::new(name)
                .with_status(GatewayClassStatusApplyConfiguration::new().with_accepted(true))
        },
        extract_status: gateway::client::applyconfigurations::net::v1::extract_gateway_class_status,
    }
);

/// `Report` is `readonly`: its generated client has no apply verbs, only
/// get/list/watch. The object is applied through the runtime client the
/// generated one wraps (`inner().apply_configuration`) with the generated
/// configuration, read back with the generated `get`, and extracted.
#[tokio::test]
async fn round_trip_report() -> Result<()> {
    use readonly::client::applyconfigurations::audit::v1::{ReportApplyConfiguration, extract_report};
    const MANAGER: &str = "round-trip";
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("rt-report").await?;
    let reports = readonly::client::clientset::Clientset::new(env.admin_client().await?).audit_v1().reports(&ns);
    let applied = ReportApplyConfiguration::new("weekly", &ns)
        .with_annotations([("source", "scanner")])
        .with_findings(2)
        .with_details(["open port 22", "weak cipher"]);
    let returned = reports.inner().apply_configuration(&applied, &polite(MANAGER)).await?;
    assert_eq!(extract_report(&returned, MANAGER)?, applied);
    let fetched = reports.get("weekly", &GetOptions::default()).await?;
    assert_eq!((fetched.findings, fetched.details.len()), (2, 2));
    assert_eq!(extract_report(&fetched, MANAGER)?, applied, "extract of the generated client's GET");
    let again = reports.inner().apply_configuration(&extract_report(&fetched, MANAGER)?, &polite(MANAGER)).await?;
    assert_eq!(resource_version(&again), resource_version(&fetched), "applying the extract is a no-op");
    Ok(())
}

/// The round trips above cover every kind (and every status subresource)
/// of every fixture package: a fixture or kind added later fails here
/// until it gets a round trip.
#[test]
fn every_fixture_kind_has_a_round_trip() -> Result<()> {
    // `wardle` has no CRDs: its apply round trip runs against
    // sample-apiserver in tests/e2e_aggregated.rs.
    let fixtures: BTreeSet<&str> = FIXTURES.iter().map(|(name, _)| *name).filter(|n| *n != "wardle").collect();
    let with_crds: BTreeSet<&str> = CRD_DIRS.iter().map(|(name, _)| *name).collect();
    assert_eq!(with_crds, fixtures, "CRD_DIRS lists every fixture of codegen-core/tests/fixtures/index.rs");

    let mut kinds = BTreeSet::new();
    for (fixture, dir) in CRD_DIRS {
        for crd in crds_in(dir)? {
            let group = crd["spec"]["group"].as_str().context("spec.group")?;
            let kind = crd["spec"]["names"]["kind"].as_str().context("spec.names.kind")?;
            for version in crd["spec"]["versions"].as_array().context("spec.versions")? {
                if version["served"] != true {
                    continue;
                }
                let name = version["name"].as_str().context("version name")?;
                let status = version.pointer("/subresources/status").is_some();
                kinds.insert(((*fixture).to_owned(), format!("{group}/{name}"), kind.to_owned(), status));
            }
        }
    }
    let covered: BTreeSet<_> =
        COVERED.iter().map(|(f, v, k, s)| ((*f).to_owned(), (*v).to_owned(), (*k).to_owned(), *s)).collect();
    if kinds != covered {
        bail!(
            "round trips and fixture kinds differ:\n  without a round trip: {:?}\n  not a fixture kind: {:?}",
            kinds.difference(&covered).collect::<Vec<_>>(),
            covered.difference(&kinds).collect::<Vec<_>>()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 5. extract → change → apply.

#[tokio::test]
async fn extract_change_apply_moves_only_the_changed_field() -> Result<()> {
    use scale::client::applyconfigurations::apps::v1::{
        EnvVarApplyConfiguration as EnvAc, WebAppApplyConfiguration as WebAppAc,
        WebAppSpecApplyConfiguration as SpecAc, extract_web_app,
    };
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("apply-loop").await?;
    let apps = scale::client::clientset::Clientset::new(env.admin_client().await?).apps_v1().web_apps(&ns);

    let alice = WebAppAc::new("web", &ns).with_labels([("app", "web")]).with_spec(
        SpecAc::new()
            .with_image("nginx:1")
            .with_port(IntOrString::Int(8080))
            .with_env([EnvAc::new().with_name("A").with_value("1")]),
    );
    apps.apply(&alice, &polite(ALICE)).await?;
    let bob = WebAppAc::new("web", &ns)
        .with_annotations([("owner", "bob")])
        .with_spec(SpecAc::new().with_replicas(3).with_env([EnvAc::new().with_name("B").with_value("2")]));
    let before = apps.apply(&bob, &polite(BOB)).await?;

    // What alice owns, and nothing of bob's.
    let mut mine = extract_web_app(&before, ALICE)?;
    assert_eq!(mine, alice, "alice's extract is what she applied");
    // Change one field and apply as the same manager.
    mine.spec.as_mut().context("alice's spec")?.image = Some("nginx:2".into());
    let after = apps.apply(&mine, &polite(ALICE)).await.context("re-applying the changed extract")?;

    assert_eq!(after.spec.image, "nginx:2", "the change landed");
    let mut expected = to_json(&before);
    expected["spec"]["image"] = json!("nginx:2");
    let mut actual = to_json(&after);
    for obj in [&mut expected, &mut actual] {
        let meta = obj["metadata"].as_object_mut().context("metadata")?;
        for volatile in ["resourceVersion", "generation", "managedFields"] {
            meta.remove(volatile);
        }
    }
    assert_eq!(actual, expected, "only spec.image moved");
    assert_eq!(after.metadata.generation, before.metadata.generation.map(|g| g + 1));
    assert_eq!(applied_fields(&after, ALICE, ""), applied_fields(&before, ALICE, ""), "alice owns the same fields");
    assert_eq!(applied_fields(&after, BOB, ""), applied_fields(&before, BOB, ""), "bob's are untouched");
    assert_eq!(extract_web_app(&after, BOB)?, bob, "bob's extract is still what he applied");
    Ok(())
}

// ---------------------------------------------------------------------------
// Extra methods on the scale subresource.

/// `method(..)` clients of the scale subresource (`get_scale`,
/// `update_scale`, `patch_scale`) against the CRD's `scale` on the real
/// server; a POST to a subresource the CRD does not serve is the server's
/// 404 (`create_snapshot`).
#[tokio::test]
async fn extra_methods_read_update_and_patch_the_scale_subresource() -> Result<()> {
    use codegen_runtime::client::{CreateOptions, PatchOptions, PatchType, UpdateOptions};
    use scale::client::applyconfigurations::apps::v1::{
        WebAppApplyConfiguration as WebAppAc, WebAppSpecApplyConfiguration as SpecAc,
    };
    let env = TestEnv::shared();
    install_crds(env).await?;
    let ns = env.create_namespace("extra-methods").await?;
    let apps = scale::client::clientset::Clientset::new(env.admin_client().await?).apps_v1().web_apps(&ns);
    apps.apply(
        &WebAppAc::new("web", &ns).with_spec(SpecAc::new().with_image("nginx:1").with_replicas(2)),
        &polite(BOB),
    )
    .await?;

    let scale = apps.get_scale("web").await?;
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    let mut bigger = scale.clone();
    bigger.spec.get_or_insert_with(Default::default).replicas = Some(3);
    let scaled = apps.update_scale("web", &bigger, &UpdateOptions::default()).await?;
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(3));
    let patch = PatchType::Merge(json!({"spec": {"replicas": 4}}));
    let patched = apps.patch_scale("web", &patch, &PatchOptions::default()).await?;
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(4));
    let stored = apps.get("web", &GetOptions::default()).await?;
    assert_eq!(stored.spec.replicas, 4, "through to the object");
    // extract_<kind>_from: the object itself for "", a subresource by name.
    use scale::client::applyconfigurations::apps::v1::{extract_web_app, extract_web_app_from};
    let bobs = extract_web_app_from(&stored, BOB, "")?;
    assert_eq!(bobs, extract_web_app(&stored, BOB)?);
    assert_eq!(bobs.spec.and_then(|s| s.image), Some("nginx:1".into()));
    let via_scale = extract_web_app_from(&stored, "kube-codegen-tests", "scale")?;
    assert!(via_scale.spec.is_none() || via_scale.spec.is_some_and(|s| s.image.is_none()), "scale owns no image");

    let err = apps.create_snapshot("web", &scale, &CreateOptions::default()).await.expect_err("no such subresource");
    assert!(err.is_not_found(), "{err:?}");
    Ok(())
}
