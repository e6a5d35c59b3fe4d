//! Kinds that embed Kubernetes' own types (a CronJob-like kind with a
//! JobTemplateSpec and ObjectReferences, a Deployment-like kind with a
//! PodTemplateSpec and a LabelSelector), on the real API server:
//!
//! * objects that controller-gen's CRD (from the Go twin) rejects are
//!   rejected by kube-codegen's with the same status code and field paths;
//! * valid objects round-trip through the generated clientset, and reach
//!   the generated informer and lister;
//! * the standard Ready column (a JSONPath filter) and the selectable field
//!   work through kubectl.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use codegen_runtime::client::{CreateOptions, GetOptions, ListOptions};
use codegen_testenv::{TestEnv, kubectl_result};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::core::GroupVersionResource;
use kube_codegen_tests::{cronjob, deployment, workspace};
use serde_json::{Value, json};

/// The only CRD file of a directory.
fn crd_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("crd dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// controller-gen's CRD for a fixture's Go twin, moved to the group
/// `cg.<group>` so it can be installed next to kube-codegen's.
fn controller_gen_crd(fixture: &str) -> Result<PathBuf> {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let root = DIR.get_or_init(|| tempfile::tempdir().expect("tempdir").keep());
    let out = root.join(fixture);
    if !out.exists() {
        let status = Command::new(codegen_testenv::controller_gen()?)
            .arg("crd:allowDangerousTypes=true")
            .arg(format!("paths=./{fixture}/..."))
            .arg(format!("output:crd:dir={}", out.display()))
            .current_dir(workspace().join("tests/controller-gen"))
            .status()?;
        anyhow::ensure!(status.success(), "controller-gen failed on the {fixture} twin");
    }
    let mut crd = read_yaml(&crd_file(&out))?;
    let group = crd["spec"]["group"].as_str().context("group")?.to_string();
    let plural = crd["spec"]["names"]["plural"].as_str().context("plural")?.to_string();
    crd["spec"]["group"] = format!("cg.{group}").into();
    crd["metadata"]["name"] = format!("{plural}.cg.{group}").into();
    let moved = root.join(format!("{fixture}-cg.yaml"));
    // kube-codegen's YAML writer: serde_yaml would write `off` unquoted, which
    // kubectl (a YAML 1.1 reader) takes for a boolean.
    std::fs::write(&moved, codegen_core::emit::yaml::to_string(&crd))?;
    Ok(moved)
}

/// The one document of a CRD file, as JSON.
fn read_yaml(path: &Path) -> Result<Value> {
    use serde::Deserialize as _;
    let text = std::fs::read_to_string(path)?;
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let v = Value::deserialize(doc)?;
        if !v.is_null() {
            return Ok(v);
        }
    }
    bail!("{} holds no document", path.display())
}

/// Installs kube-codegen's and controller-gen's CRDs of a fixture; returns
/// (ours, theirs) as API resources.
async fn install(env: &TestEnv, fixture: &str, ours_dir: &str) -> Result<(ApiResource, ApiResource)> {
    let mut out = Vec::new();
    for path in [crd_file(Path::new(ours_dir)), controller_gen_crd(fixture)?] {
        env.kubectl_apply_file(&path).with_context(|| format!("applying {}", path.display()))?;
        let crd = read_yaml(&path)?;
        let name = crd["metadata"]["name"].as_str().context("name")?.to_string();
        env.wait_crd_established(&name, Duration::from_secs(60)).await?;
        let gvk = GroupVersionKind::gvk(
            crd["spec"]["group"].as_str().context("group")?,
            "v1",
            crd["spec"]["names"]["kind"].as_str().context("kind")?,
        );
        out.push(ApiResource::from_gvk_with_plural(&gvk, crd["spec"]["names"]["plural"].as_str().context("plural")?));
    }
    Ok((out.remove(0), out.remove(0)))
}

/// What the server says about an invalid object: status code and the field
/// paths it names.
#[derive(Debug, PartialEq, Eq)]
struct Rejection {
    code: u16,
    fields: BTreeSet<String>,
}

async fn rejection(client: &kube::Client, ns: &str, ar: &ApiResource, name: &str, spec: &Value) -> Result<Rejection> {
    let obj = DynamicObject::new(name, ar).data(json!({ "spec": spec }));
    // Strict field validation, as kubectl sends it: unknown fields are errors.
    let url = format!("/apis/{}/{}/namespaces/{ns}/{}?fieldValidation=Strict", ar.group, ar.version, ar.plural);
    let req = http::Request::post(url).header("content-type", "application/json").body(serde_json::to_vec(&obj)?)?;
    match client.request::<DynamicObject>(req).await {
        Ok(_) => bail!("{name} was accepted by {}", ar.group),
        Err(kube::Error::Api(s)) => {
            // Strict decoding reports unknown fields in the message; schema
            // validation in the causes. Paths are taken from both.
            let mut fields: BTreeSet<String> = s
                .details
                .iter()
                .flat_map(|d| d.causes.iter())
                .map(|c| c.field.clone())
                .filter(|f| !f.is_empty())
                .collect();
            for word in s.message.split(['"', ' ', ',']) {
                if word.starts_with("spec.") {
                    fields.insert(word.trim_end_matches(':').to_string());
                }
            }
            Ok(Rejection { code: s.code, fields })
        }
        Err(e) => Err(e.into()),
    }
}

/// Creates each invalid spec against both CRDs; both must reject it, with
/// the same code and field paths, and the paths must include `expected`.
async fn same_verdicts(
    env: &TestEnv,
    ours: &ApiResource,
    theirs: &ApiResource,
    ns: &str,
    cases: &[(&str, Value, &str)],
) -> Result<()> {
    let client = env.admin_client().await?;
    for (name, spec, expected) in cases {
        let a =
            rejection(&client, ns, ours, name, spec).await.with_context(|| format!("kube-codegen's CRD, {name}"))?;
        let b = rejection(&client, ns, theirs, name, spec)
            .await
            .with_context(|| format!("controller-gen's CRD, {name}"))?;
        assert_eq!(a, b, "{name}: kube-codegen's CRD and controller-gen's reject differently");
        assert!(a.fields.iter().any(|f| f.contains(expected)), "{name}: {a:?} names no `{expected}`");
    }
    Ok(())
}

fn container(extra: Value) -> Value {
    let mut c = json!({ "name": "main", "image": "busybox" });
    c.as_object_mut().expect("object").extend(extra.as_object().cloned().unwrap_or_default());
    c
}

#[tokio::test]
async fn cronjob_like_kind_rejects_what_controller_gens_crd_rejects() -> Result<()> {
    let env = TestEnv::shared();
    let (ours, theirs) = install(env, "cronjob", cronjob::CRD_DIR).await?;
    let ns = env.create_namespace("builtin-cron").await?;
    let template = |pod_spec: Value| json!({ "schedule": "*/5 * * * *", "jobTemplate": { "spec": { "template": { "spec": pod_spec } } } });
    same_verdicts(
        env,
        &ours,
        &theirs,
        &ns,
        &[
            (
                "containers-not-a-list",
                template(json!({ "containers": "not-a-list" })),
                "spec.jobTemplate.spec.template.spec.containers",
            ),
            (
                "unknown-container-field",
                template(json!({ "containers": [container(json!({ "bogus": 1 }))] })),
                "spec.jobTemplate.spec.template.spec.containers[0].bogus",
            ),
            ("containers-missing", template(json!({ "restartPolicy": "Never" })), "containers"),
            (
                "restart-policy-not-a-string",
                template(json!({ "containers": [container(json!({}))], "restartPolicy": 7 })),
                "spec.jobTemplate.spec.template.spec.restartPolicy",
            ),
        ],
    )
    .await?;

    // A valid object round-trips through the generated clientset with the
    // defaults of the CRD applied, and reaches the informer and lister.
    let client = env.admin_client().await?;
    let clientset = cronjob::client::clientset::Clientset::new(client.clone());
    let crontabs = clientset.batch_v1().cron_tabs(&ns);
    let spec: cronjob::apis::batch::v1::CronTabSpec = serde_json::from_value(json!({
        "schedule": "*/5 * * * *",
        "jobTemplate": { "spec": { "template": { "spec": {
            "containers": [ { "name": "main", "image": "busybox", "ports": [ { "containerPort": 8080 } ] } ],
            "restartPolicy": "OnFailure"
        } } } }
    }))?;
    let created =
        crontabs.create(&cronjob::apis::batch::v1::CronTab::new("nightly", spec), &CreateOptions::default()).await?;
    let got = crontabs.get("nightly", &GetOptions::default()).await?;
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let pod = got.spec.job_template.spec.as_ref().and_then(|j| j.template.spec.as_ref()).context("pod spec")?;
    assert_eq!(
        pod.containers[0].ports.as_ref().context("ports")?[0].protocol.as_deref(),
        Some("TCP"),
        "upstream default"
    );
    assert_eq!(got.spec.tags, ["cron"], "list default");
    assert_eq!(got.spec.history.as_ref().map(|h| (h.successful, h.failed)), Some((3, 1)), "object default");
    assert_eq!(got.spec.verbose.as_deref(), Some("off"));
    assert_eq!(got.spec.not_before.as_deref(), Some("1970-01-01T00:00:00Z"));

    // Status with ObjectReferences through the status subresource.
    let mut with_status = got.clone();
    with_status.status = Some(serde_json::from_value(json!({
        "active": [ { "kind": "Job", "name": "nightly-1", "namespace": ns, "apiVersion": "batch/v1" } ]
    }))?);
    let updated = crontabs.update_status(&with_status, &Default::default()).await?;
    assert_eq!(updated.status.as_ref().map(|s| s.active.len()), Some(1));

    let factory = cronjob::client::informers::SharedInformerFactory::new(client, None);
    let lister = factory.batch().v1().cron_tabs().lister();
    // The same informer found by resource, as generic controllers find theirs.
    let generic = factory
        .for_resource(&GroupVersionResource::gvr("batch.example.com", "v1", "crontabs"))
        .context("crontabs by resource")?;
    assert!(factory.for_resource(&GroupVersionResource::gvr("batch.example.com", "v1", "cronjobs")).is_none());
    struct Names(std::sync::mpsc::Sender<String>);
    impl codegen_runtime::lister::GenericEventHandler for Names {
        fn on_add(&mut self, obj: codegen_runtime::lister::GenericObject, _: bool) {
            let _ = self.0.send(obj.meta().name.clone().unwrap_or_default());
        }
    }
    let (names_tx, names) = std::sync::mpsc::channel();
    let registration = generic.add_event_handler(Names(names_tx));
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert!(!synced.is_empty() && synced.values().all(|s| *s), "{synced:?}");
    assert_eq!(synced.len(), 1, "for_resource shares the typed informer: {synced:?}");
    let listed = lister.cron_tabs(&ns).get("nightly").context("in the lister")?;
    assert_eq!(listed.status.as_ref().map(|s| s.active[0].name.as_deref()), Some(Some("nightly-1")));
    assert!(generic.has_synced());
    let found = generic.lister().namespace(&ns).get("nightly").context("in the generic lister")?;
    assert_eq!(found.meta().uid, created.metadata.uid);
    let json = found.to_json()?;
    assert_eq!((json["apiVersion"].as_str(), json["kind"].as_str()), (Some("batch.example.com/v1"), Some("CronTab")));
    assert_eq!(json["status"]["active"][0]["name"], "nightly-1");
    let typed = found.downcast::<cronjob::apis::batch::v1::CronTab>().map_err(|o| anyhow::anyhow!("{o:?}"))?;
    assert!(
        std::ptr::eq(std::sync::Arc::as_ptr(&typed), codegen_runtime::indexer::Cached::as_ptr(&listed)),
        "the cached object itself"
    );
    assert_eq!(generic.lister().list(&Default::default()).len(), 1);
    assert_eq!(names.recv_timeout(Duration::from_secs(10))?, "nightly", "the generic handler saw it");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !registration.has_synced() {
        assert!(std::time::Instant::now() < deadline, "the generic handler never synced");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let all = crontabs.list(&ListOptions::default()).await?;
    assert_eq!(all.items.len(), 1);
    factory.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn deployment_like_kind_rejects_what_controller_gens_crd_rejects() -> Result<()> {
    let env = TestEnv::shared();
    let (ours, theirs) = install(env, "deployment", deployment::CRD_DIR).await?;
    let ns = env.create_namespace("builtin-deploy").await?;
    let spec = |template_spec: Value| json!({ "selector": { "matchLabels": { "app": "web" } }, "template": { "spec": template_spec } });
    same_verdicts(
        env,
        &ours,
        &theirs,
        &ns,
        &[
            ("containers-not-a-list", spec(json!({ "containers": "not-a-list" })), "spec.template.spec.containers"),
            (
                "unknown-container-field",
                spec(json!({ "containers": [container(json!({ "imagePullPolicyy": "Always" }))] })),
                "spec.template.spec.containers[0].imagePullPolicyy",
            ),
            ("containers-missing", spec(json!({ "hostNetwork": true })), "containers"),
            (
                "bad-quantity",
                spec(json!({ "containers": [container(json!({ "resources": { "limits": { "cpu": "lots" } } }))] })),
                "spec.template.spec.containers[0].resources.limits.cpu",
            ),
            (
                "selector-operator-missing",
                json!({ "selector": { "matchExpressions": [ { "key": "app" } ] }, "template": { "spec": { "containers": [container(json!({}))] } } }),
                "spec.selector.matchExpressions[0].operator",
            ),
        ],
    )
    .await?;

    // Valid: round trip, defaults, the Ready column and the selectable field.
    let client = env.admin_client().await?;
    let clientset = deployment::client::clientset::Clientset::new(client.clone());
    let rollouts = clientset.workloads_v1().rollouts(&ns);
    let spec: deployment::apis::workloads::v1::RolloutSpec = serde_json::from_value(spec(json!({
        "containers": [ { "name": "web", "image": "nginx", "resources": { "limits": { "cpu": "500m", "memory": "64Mi" } } } ]
    })))?;
    let mut web = deployment::apis::workloads::v1::Rollout::new("web", spec.clone());
    web.spec.tier = Some("frontend".into());
    rollouts.create(&web, &CreateOptions::default()).await?;
    rollouts.create(&deployment::apis::workloads::v1::Rollout::new("api", spec), &CreateOptions::default()).await?;
    let got = rollouts.get("web", &GetOptions::default()).await?;
    assert_eq!(got.spec.replicas, Some(1), "default");
    assert_eq!(got.spec.tier.as_deref(), Some("frontend"));
    let api = rollouts.get("api", &GetOptions::default()).await?;
    assert_eq!(api.spec.tier.as_deref(), Some("backend"), "the schema default, applied by the server");
    let limits = got
        .spec
        .template
        .spec
        .as_ref()
        .and_then(|p| p.containers[0].resources.as_ref())
        .and_then(|r| r.limits.as_ref());
    assert_eq!(limits.map(|l| l["cpu"].0.as_str()), Some("500m"));

    let mut ready = got.clone();
    ready.status = Some(serde_json::from_value(json!({
        "replicas": 1,
        "conditions": [ { "type": "Ready", "status": "True", "reason": "Available", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z" } ]
    }))?);
    rollouts.update_status(&ready, &Default::default()).await?;
    let table = kubectl_result(env.kubectl(&["get", "rollouts.workloads.example.com", "-n", &ns]))?;
    let web_row: Vec<&str> =
        table.lines().find(|l| l.starts_with("web ")).context("web row")?.split_whitespace().collect();
    assert_eq!(web_row[1], "True", "the Ready column reads the filtered condition:\n{table}");
    let selected = kubectl_result(env.kubectl(&[
        "get",
        "rollouts.workloads.example.com",
        "-n",
        &ns,
        "--field-selector",
        "spec.tier=backend",
        "-o",
        "name",
    ]))?;
    assert_eq!(selected.trim(), "rollout.workloads.example.com/api", "selectable field");

    let factory = deployment::client::informers::SharedInformerFactory::new(client, None);
    let lister = factory.workloads().v1().rollouts().lister();
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    assert!(!synced.is_empty() && synced.values().all(|s| *s), "{synced:?}");
    let cached = lister.rollouts(&ns).get("web").context("in the lister")?;
    assert_eq!(cached.status.as_ref().map(|s| s.conditions[0].status.as_str()), Some("True"));
    assert_eq!(lister.rollouts(&ns).list(&codegen_runtime::lister::everything()).len(), 2);
    factory.shutdown().await;
    Ok(())
}
