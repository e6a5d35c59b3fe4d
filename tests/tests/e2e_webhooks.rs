//! The runtime's webhook server called by the real kube-apiserver over TLS
//! on loopback: conversion between the two versions of the `conversion`
//! fixture's Task (tests/fixtures/conversion, its webhooks in
//! tests/src/webhooks.rs), defaulting and validating admission, and what the
//! failure policy does when a webhook is down.
//!
//! One webhook server serves every test of this binary (a thread with its
//! own runtime); its serving certificate for 127.0.0.1 is signed by a CA
//! made here with openssl, and the CA goes into each `caBundle`. Admission
//! webhooks are scoped to the namespace of the test that installs them.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use codegen_runtime::webhook::manifests::{
    ClientConfig, FailurePolicy, crd_conversion, validating_webhook_configuration,
};
use codegen_runtime::webhook::{Conversion, ServerTls, WebhookServer, Webhooks};
use codegen_testenv::TestEnv;
use k8s_openapi::api::admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_tests::conversion::apis::batch::{v1, v2};
use kube_codegen_tests::webhooks::{DEFAULT_TIMEOUT_SECONDS, PROTECTED_LABEL, V2_SPEC_ANNOTATION};

const CRD_NAME: &str = "tasks.batch.example.com";

/// The shared webhook server: its address and the CA of its certificate.
struct Served {
    addr: SocketAddr,
    ca_pem: Vec<u8>,
}

fn webhooks() -> Webhooks {
    Webhooks::new()
        .conversion("/convert", Conversion::new().spoke::<v1::Task>())
        .mutating::<v2::Task>("/mutate-task")
        .validating::<v2::Task>("/validate-task")
}

fn served() -> &'static Served {
    static SERVED: OnceLock<Served> = OnceLock::new();
    SERVED.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (ca_pem, cert, key) = codegen_testenv::tls::loopback_certificates(dir.path()).expect("certificates");
        let tls = ServerTls::from_pem(&cert, &key).expect("the serving certificate");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let server =
                    WebhookServer::bind("127.0.0.1:0", tls, webhooks()).await.expect("binding the webhook server");
                tx.send(server.local_addr()).expect("the test is waiting");
                std::future::pending::<()>().await;
            });
        });
        Served { addr: rx.recv().expect("the webhook server's address"), ca_pem }
    })
}

fn client_config(addr: SocketAddr) -> ClientConfig {
    ClientConfig::url(format!("https://{addr}")).with_ca_bundle(served().ca_pem.clone())
}

/// Installs the generated Task CRD with its conversion pointed at the
/// shared server (idempotent: every test calls it).
async fn install_task_crd(env: &TestEnv) -> Result<()> {
    let file = Path::new(kube_codegen_tests::conversion::CRD_DIR).join("batch.example.com_tasks.yaml");
    let mut crd: CustomResourceDefinition = serde_yaml::from_str(&std::fs::read_to_string(&file)?)?;
    assert_eq!(
        crd.spec.versions.iter().map(|v| (v.name.as_str(), v.storage)).collect::<Vec<_>>(),
        [("v1", false), ("v2", true)]
    );
    // `#[resource(conversion_webhook)]` wrote kubebuilder's stanza (a Service
    // in the cluster); here the server is on loopback, so its clientConfig
    // is replaced, as a deployment injects the CA bundle.
    let generated = crd.spec.conversion.as_ref().expect("the generated CRD has a conversion");
    let webhook = generated.webhook.as_ref().expect("a conversion webhook");
    assert_eq!(
        (generated.strategy.as_str(), webhook.conversion_review_versions.as_slice()),
        ("Webhook", ["v1".to_owned()].as_slice())
    );
    let service = webhook.client_config.as_ref().and_then(|c| c.service.as_ref()).expect("a Service");
    assert_eq!(
        (service.namespace.as_str(), service.name.as_str(), service.path.as_deref()),
        ("system", "webhook-service", Some("/convert"))
    );
    crd.spec.conversion = Some(crd_conversion("/convert", &client_config(served().addr)));
    let api: Api<CustomResourceDefinition> = Api::all(env.admin_client().await?);
    api.patch(CRD_NAME, &PatchParams::apply("e2e-webhooks").force(), &Patch::Apply(&crd)).await?;
    env.wait_crd_established(CRD_NAME, Duration::from_secs(60)).await
}

/// Retries `f` until it returns `Ok(Some(_))` (the API server picks up CRD
/// and webhook configuration changes a moment after they are made).
async fn eventually<T, F, Fut>(what: &str, mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = String::new();
    while Instant::now() < deadline {
        match f().await {
            Ok(Some(value)) => return Ok(value),
            Ok(None) => {}
            Err(e) => last = format!("{e:#}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("{what}: not within 30 s (last error: {last})")
}

fn task_v1(name: &str, command: &str) -> v1::Task {
    v1::Task::new(name, v1::TaskSpec { command: command.into(), priority: None })
}

fn task_v2(name: &str, args: &[&str], timeout_seconds: Option<i64>) -> v2::Task {
    v2::Task::new(
        name,
        v2::TaskSpec { args: args.iter().map(|a| (*a).to_owned()).collect(), timeout_seconds, priority: None },
    )
}

fn api_status(err: kube::Error) -> Box<kube::core::Status> {
    match err {
        kube::Error::Api(status) => status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_created_in_v1_are_read_in_v2_and_back() -> Result<()> {
    let env = TestEnv::shared();
    install_task_crd(env).await?;
    let ns = env.create_namespace("convert").await?;
    let client = env.admin_client().await?;
    let (tasks_v1, tasks_v2) =
        (Api::<v1::Task>::namespaced(client.clone(), &ns), Api::<v2::Task>::namespaced(client, &ns));

    // The fields both versions have, found by the generator from the two
    // schemas, copied by `copy_fields` both ways.
    assert_eq!(v1::Task::HUB_COMMON_FIELDS, ["/metadata", "/spec/priority"]);

    // Created in v1, stored in v2 (the hub) through the webhook.
    let mut hello = task_v1("hello", "echo hello");
    hello.spec.priority = Some(7);
    let created = tasks_v1.create(&PostParams::default(), &hello).await?;
    let as_v2 = tasks_v2.get("hello").await?;
    assert_eq!(as_v2.api_version, "batch.example.com/v2");
    assert_eq!(as_v2.spec.args, ["sh", "-c", "echo hello"]);
    assert_eq!(as_v2.spec.timeout_seconds, None);
    assert_eq!(as_v2.spec.priority, Some(7));
    assert_eq!(as_v2.metadata.uid, created.metadata.uid);
    let back = tasks_v1.get("hello").await?;
    assert_eq!(back.api_version, "batch.example.com/v1");
    assert_eq!((back.spec.command.as_str(), back.spec.priority), ("echo hello", Some(7)));
    assert_eq!(back.metadata.annotations, None);

    // Created in v2 with what v1 has no field for: read in v1, written back
    // in v1, and nothing is lost.
    tasks_v2.create(&PostParams::default(), &task_v2("argv", &["printf", "%s\n", "it's"], Some(30))).await?;
    let mut as_v1 = tasks_v1.get("argv").await?;
    assert_eq!(as_v1.spec.command, "printf '%s\n' 'it'\\''s'");
    let kept = as_v1.metadata.annotations.as_ref().and_then(|a| a.get(V2_SPEC_ANNOTATION)).cloned();
    assert_eq!(kept.as_deref(), Some(r#"{"args":["printf","%s\n","it's"],"timeoutSeconds":30}"#));
    as_v1.metadata.labels = Some([("edited".to_owned(), "in-v1".to_owned())].into());
    tasks_v1.replace("argv", &PostParams::default(), &as_v1).await?;
    let as_v2 = tasks_v2.get("argv").await?;
    assert_eq!(as_v2.spec.args, ["printf", "%s\n", "it's"]);
    assert_eq!(as_v2.spec.timeout_seconds, Some(30));
    assert_eq!(as_v2.metadata.labels.unwrap()["edited"], "in-v1");
    assert_eq!(as_v2.metadata.annotations, None, "the annotation is v1's only");

    // A list is converted in one batch.
    let listed = tasks_v1.list(&ListParams::default()).await?;
    let mut commands: Vec<_> = listed.items.iter().map(|t| (t.api_version.as_str(), t.spec.command.as_str())).collect();
    commands.sort();
    assert_eq!(
        commands,
        [("batch.example.com/v1", "echo hello"), ("batch.example.com/v1", "printf '%s\n' 'it'\\''s'")]
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_conversion_is_a_clear_api_error() -> Result<()> {
    let env = TestEnv::shared();
    install_task_crd(env).await?;
    let ns = env.create_namespace("convert-fail").await?;
    let client = env.admin_client().await?;
    let (tasks_v1, tasks_v2) =
        (Api::<v1::Task>::namespaced(client.clone(), &ns), Api::<v2::Task>::namespaced(client, &ns));

    tasks_v2.create(&PostParams::default(), &task_v2("nul", &["printf", "a\0b"], None)).await?;
    assert_eq!(tasks_v2.get("nul").await?.spec.args[1], "a\0b");
    let status = api_status(tasks_v1.get("nul").await.expect_err("v1 cannot hold a NUL"));
    assert_eq!(status.code, 500, "{status:?}");
    let expected = format!(
        "conversion webhook for batch.example.com/v2, Kind=Task failed: converting Task {ns}/nul to batch.example.com/v1: \
         spec.args[1] holds a NUL character, which no v1 command can hold"
    );
    assert!(status.message.contains(&expected), "{}", status.message);
    let status = api_status(tasks_v1.list(&ListParams::default()).await.expect_err("the list holds it"));
    assert!(status.message.contains(&expected), "{}", status.message);
    Ok(())
}

/// Only requests in namespace `ns` go to a webhook with this selector.
fn only_namespace(ns: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some([("kubernetes.io/metadata.name".to_owned(), ns.to_owned())].into()),
        ..Default::default()
    }
}

/// Installs ValidatingWebhookConfiguration `name` for Tasks in `ns`, served
/// at `addr`.
async fn install_validating(
    env: &TestEnv,
    name: &str,
    ns: &str,
    addr: SocketAddr,
    policy: FailurePolicy,
) -> Result<()> {
    let mut config = validating_webhook_configuration::<v2::Task>(
        name,
        "vtask.batch.example.com",
        "/validate-task",
        &client_config(addr),
        policy,
    );
    for w in config.webhooks.iter_mut().flatten() {
        w.namespace_selector = Some(only_namespace(ns));
    }
    Api::<ValidatingWebhookConfiguration>::all(env.admin_client().await?)
        .create(&PostParams::default(), &config)
        .await?;
    Ok(())
}

/// Installs the generated `config/webhook/manifests.yaml` of the fixture
/// (`#[resource(mutating_webhook(..), validating_webhook(..))]` on v2 Task)
/// for Tasks in `ns`: its Service clientConfig replaced by the loopback
/// server's URL and CA, as kustomize and cert-manager do in a cluster.
async fn install_generated(env: &TestEnv, ns: &str) -> Result<()> {
    use serde::Deserialize;
    let file = Path::new(kube_codegen_tests::conversion::CRD_DIR).join("../webhook/manifests.yaml");
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let docs: Vec<serde_json::Value> =
        serde_yaml::Deserializer::from_str(&text).map(serde_json::Value::deserialize).collect::<Result<_, _>>()?;
    assert_eq!(docs.len(), 2);
    let local = |mut doc: serde_json::Value| -> Result<serde_json::Value> {
        let kind = doc["kind"].as_str().unwrap_or_default().to_lowercase();
        doc["metadata"]["name"] = format!("e2e-{ns}-{kind}").into();
        for w in doc["webhooks"].as_array_mut().into_iter().flatten() {
            let path = w["clientConfig"]["service"]["path"].as_str().context("a Service path")?.to_owned();
            assert_eq!(w["clientConfig"]["service"]["name"], "webhook-service");
            let ca_bundle = k8s_openapi::ByteString(served().ca_pem.clone());
            w["clientConfig"] =
                serde_json::json!({"url": format!("https://{}{path}", served().addr), "caBundle": ca_bundle});
            w["namespaceSelector"] = serde_json::to_value(only_namespace(ns))?;
        }
        Ok(doc)
    };
    let client = env.admin_client().await?;
    let mutating: MutatingWebhookConfiguration = serde_json::from_value(local(docs[0].clone())?)?;
    let names: Vec<&str> = mutating.webhooks.iter().flatten().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["mtask.batch.example.com"]);
    Api::<MutatingWebhookConfiguration>::all(client.clone()).create(&PostParams::default(), &mutating).await?;
    let validating: ValidatingWebhookConfiguration = serde_json::from_value(local(docs[1].clone())?)?;
    let names: Vec<&str> = validating.webhooks.iter().flatten().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["vtask.batch.example.com"]);
    Api::<ValidatingWebhookConfiguration>::all(client).create(&PostParams::default(), &validating).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaulting_and_validating_webhooks_on_the_real_server() -> Result<()> {
    let env = TestEnv::shared();
    install_task_crd(env).await?;
    let ns = env.create_namespace("admission").await?;
    install_generated(env, &ns).await?;
    let client = env.admin_client().await?;
    let (tasks_v1, tasks_v2) =
        (Api::<v1::Task>::namespaced(client.clone(), &ns), Api::<v2::Task>::namespaced(client, &ns));

    // Defaults are applied (once the server has picked up the configuration).
    eventually("the defaulting webhook", || async {
        let dry = PostParams { dry_run: true, ..Default::default() };
        let task = tasks_v2.create(&dry, &task_v2("probe", &["true"], None)).await?;
        Ok(task.spec.timeout_seconds.is_some().then_some(()))
    })
    .await?;
    let task = tasks_v2.create(&PostParams::default(), &task_v2("defaulted", &["echo", "hi"], None)).await?;
    assert_eq!(task.spec.timeout_seconds, Some(DEFAULT_TIMEOUT_SECONDS));
    let task = tasks_v2.create(&PostParams::default(), &task_v2("explicit", &["echo", "hi"], Some(5))).await?;
    assert_eq!(task.spec.timeout_seconds, Some(5), "a value set is kept");
    // A v1 request reaches the v2 webhooks converted (matchPolicy Equivalent).
    tasks_v1.create(&PostParams::default(), &task_v1("from-v1", "echo v1")).await?;
    assert_eq!(tasks_v2.get("from-v1").await?.spec.timeout_seconds, Some(DEFAULT_TIMEOUT_SECONDS));

    // Invalid objects are rejected with the webhook's message and code.
    let status = api_status(
        tasks_v2.create(&PostParams::default(), &task_v2("rm", &["rm", "-rf", "/"], None)).await.unwrap_err(),
    );
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        r#"admission webhook "vtask.batch.example.com" denied the request: spec.args[0]: Invalid value: "rm": tasks may not run rm"#
    );
    // Updates see the old object; deletes are validated too.
    let mut task = tasks_v2.get("defaulted").await?;
    task.spec.args = vec!["cat".into()];
    let status = api_status(tasks_v2.replace("defaulted", &PostParams::default(), &task).await.unwrap_err());
    assert_eq!(
        status.message,
        r#"admission webhook "vtask.batch.example.com" denied the request: spec.args[0]: Invalid value: the program of a task is immutable"#
    );
    let mut task = tasks_v2.get("defaulted").await?;
    task.metadata.labels = Some([(PROTECTED_LABEL.to_owned(), "yes".to_owned())].into());
    tasks_v2.replace("defaulted", &PostParams::default(), &task).await?;
    let status = api_status(tasks_v2.delete("defaulted", &DeleteParams::default()).await.unwrap_err());
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        format!(
            r#"admission webhook "vtask.batch.example.com" denied the request: the task is protected (label {PROTECTED_LABEL})"#
        )
    );
    tasks_v2.delete("explicit", &DeleteParams::default()).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_policy_decides_when_the_webhook_is_down() -> Result<()> {
    let env = TestEnv::shared();
    install_task_crd(env).await?;
    // An address nothing listens on.
    let down = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let client = env.admin_client().await?;

    let ns = env.create_namespace("down-fail").await?;
    install_validating(env, &format!("e2e-{ns}"), &ns, down, FailurePolicy::Fail).await?;
    let tasks = Api::<v2::Task>::namespaced(client.clone(), &ns);
    let status = eventually("the unreachable webhook with failurePolicy Fail", || async {
        match tasks.create(&PostParams::default(), &task_v2("refused", &["true"], None)).await {
            Ok(_) => {
                tasks.delete("refused", &DeleteParams::default()).await?;
                Ok(None)
            }
            Err(e) => Ok(Some(api_status(e))),
        }
    })
    .await?;
    assert_eq!(status.code, 500, "{status:?}");
    let calling = format!(
        r#"failed calling webhook "vtask.batch.example.com": failed to call webhook: Post "https://{down}/validate-task?timeout=10s""#
    );
    assert!(status.message.contains(&calling), "{}", status.message);
    assert!(status.message.contains("connection refused"), "{}", status.message);

    // The same webhook with failurePolicy Ignore lets requests through. The
    // served webhook installed after it shows when the server has picked up
    // both: it refuses `rm`.
    let ns = env.create_namespace("down-ignore").await?;
    install_validating(env, &format!("e2e-{ns}-down"), &ns, down, FailurePolicy::Ignore).await?;
    install_validating(env, &format!("e2e-{ns}-served"), &ns, served().addr, FailurePolicy::Fail).await?;
    let tasks = Api::<v2::Task>::namespaced(client, &ns);
    eventually("the served webhook", || async {
        match tasks.create(&PostParams { dry_run: true, ..Default::default() }, &task_v2("rm", &["rm"], None)).await {
            Ok(_) => Ok(None),
            Err(e) => Ok(api_status(e).message.contains("tasks may not run rm").then_some(())),
        }
    })
    .await?;
    let task = tasks.create(&PostParams::default(), &task_v2("admitted", &["true"], None)).await?;
    assert_eq!(task.spec.args, ["true"]);
    Ok(())
}
