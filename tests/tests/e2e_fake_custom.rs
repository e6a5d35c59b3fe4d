//! Differential tests of the fake API server on a custom resource: the
//! same raw requests go to kube-apiserver and to `FakeApiServer`, and every
//! answer must match — code, reason, message (for a patch's strict decoding
//! error, the part after the quoted object), causes, `Warning` headers and
//! the answered `spec`.
//!
//! - Decoding (`fieldValidation`): the typed client sends it on create,
//!   update and patch, `warnings::WarningLayer` reads the warnings it
//!   brings, and the fake prunes fields its schema does not declare and
//!   refuses them and fields given twice (`Strict`: 400, or 422 for a
//!   patch), warns about them (`Warn`, the default) or drops them silently
//!   (`Ignore`).
//! - Patches and metadata: failing and malformed JSON and merge patches,
//!   media types, request options, names, deletion fields, finalizers and
//!   resource versions as the API server checks them for custom resources.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use codegen_runtime::client::{CreateOptions, FieldValidation, PatchOptions, PatchType, TypedClient, UpdateOptions};
use codegen_runtime::testing::{FakeApiServer, ResourceInfo};
use codegen_runtime::warnings::WarningLayer;
use codegen_testenv::TestEnv;
use http::Method;
use k8s_openapi::NamespaceResourceScope;
use kube::api::ObjectMeta;
use raw_requests::{RawAnswer, install_crd, send_raw};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[path = "../support/raw_requests.rs"]
mod raw_requests;

const GROUP: &str = "fieldvalidation.kube-codegen.test";
const CRD_NAME: &str = "gadgets.fieldvalidation.kube-codegen.test";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                         "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}
            }},
            "status": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        }
    })
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "names": {"kind": "Gadget", "listKind": "GadgetList", "plural": "gadgets", "singular": "gadget"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": schema()},
            }],
        },
    })
}

/// A Gadget as a Rust type that knows more fields than the installed CRD
/// (`spec` is free-form here): what a controller built against a newer CRD
/// sends to a cluster with the older one.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Gadget {
    #[serde(rename = "apiVersion")]
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Value,
}

impl kube::Resource for Gadget {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Gadget".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "gadgets".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

fn fake_server() -> FakeApiServer {
    let server = FakeApiServer::new();
    let schema: &'static str = Box::leak(schema().to_string().into_boxed_str());
    server.register_resource(ResourceInfo::of::<Gadget>().with_validation(schema));
    server
}

/// An answer to compare: code, reason, message (a patch's strict error
/// from `strict decoding error:` on), causes' fields and reasons, the
/// `Warning` texts and the answered object's `spec` and `status`.
#[derive(Debug, PartialEq)]
struct Answer {
    code: u16,
    reason: String,
    message: String,
    causes: Vec<(String, String)>,
    warnings: Vec<String>,
    spec: Value,
    status: Value,
}

async fn send(client: &kube::Client, method: Method, uri: &str, content_type: &str, body: &str) -> Result<Answer> {
    let RawAnswer { code, body: value, warnings } = send_raw(client, method, uri, content_type, body).await?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut message = text(&value["message"]);
    if code == 422
        && let Some(at) = message.find("strict decoding error:")
    {
        message = message[at..].to_owned();
    }
    let causes = value["details"]["causes"]
        .as_array()
        .map(|c| c.iter().map(|c| (text(&c["field"]), text(&c["reason"]))).collect())
        .unwrap_or_default();
    let object = value["kind"] != "Status";
    Ok(Answer {
        code,
        reason: text(&value["reason"]),
        message: if object { String::new() } else { message },
        causes,
        warnings,
        spec: if object { value["spec"].clone() } else { Value::Null },
        status: if object { value["status"].clone() } else { Value::Null },
    })
}

const UNKNOWN: &str = r#"{"apiVersion":"fieldvalidation.kube-codegen.test/v1","kind":"Gadget","metadata":{"name":"NAME","bogus":1,"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"n","uid":"u","q":1}]},"spec":{"size":1,"extra":2,"items":[{"name":"x","q":1}],"labels":{"k":{"v":"1","z":2}},"free":{"anything":1,"known":{"a":"b","c":"d"}},"emb":{"apiVersion":"v1","kind":"X","metadata":{"name":"n","foo":1},"spec":{"x":"1","y":2},"other":3}},"status":{"ok":true,"no":1},"top":1}"#;
const DUPLICATE: &str = r#"{"apiVersion":"fieldvalidation.kube-codegen.test/v1","kind":"Gadget","metadata":{"name":"NAME","name":"NAME"},"spec":{"size":1,"zzz":1,"items":[{"name":"a","name":"b"}],"size":2,"extra":1}}"#;

/// Every decoding request, in order, against one server; `ns` is the
/// namespace.
async fn answers(client: &kube::Client, ns: &str) -> Result<Vec<(String, Answer)>> {
    let collection = format!("/apis/{GROUP}/v1/namespaces/{ns}/gadgets");
    let json = "application/json";
    let mut out = Vec::new();
    let creates: &[(&str, &str, &str, &str)] = &[
        ("create, unknown fields, Strict", "c1", "?fieldValidation=Strict", UNKNOWN),
        ("create, unknown fields, Warn", "c2", "?fieldValidation=Warn", UNKNOWN),
        ("create, unknown fields, Ignore", "c3", "?fieldValidation=Ignore", UNKNOWN),
        ("create, unknown fields, default", "c4", "", UNKNOWN),
        ("create, duplicate fields, Strict", "c5", "?fieldValidation=Strict", DUPLICATE),
        ("create, duplicate fields, default", "c6", "", DUPLICATE),
        ("create, fieldValidation=strict", "c7", "?fieldValidation=strict", DUPLICATE),
        ("create, Bogus and a long manager", "c8", "?fieldValidation=Bogus&fieldManager=MANAGER", DUPLICATE),
    ];
    for (what, name, query, body) in creates {
        let query = query.replace("MANAGER", &"m".repeat(129));
        let answer =
            send(client, Method::POST, &format!("{collection}{query}"), json, &body.replace("NAME", name)).await?;
        out.push((what.to_string(), answer));
    }

    // Writes to an existing object: c2, as Warn stored it.
    let item = format!("{collection}/c2");
    let current = send(client, Method::GET, &item, json, "").await?;
    if current.code != 200 {
        bail!("reading c2: {current:?}");
    }
    let version = {
        let request = http::Request::get(&item).body(Vec::new())?;
        let object: Value = client.request(request).await?;
        object["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_owned()
    };
    let put = |extra: &str| {
        format!(
            r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"c2","resourceVersion":"{version}"}},"spec":{{"size":3,"extra":1}},"status":{{"ok":false,"no":1}}{extra}}}"#
        )
    };
    for (what, uri, body) in [
        ("update, Strict", format!("{item}?fieldValidation=Strict"), put("")),
        ("update of the status, Strict", format!("{item}/status?fieldValidation=Strict"), put(r#","top":1"#)),
        ("update of the status, dry run, default", format!("{item}/status?dryRun=All"), put("")),
        ("update, dry run, Ignore", format!("{item}?dryRun=All&fieldValidation=Ignore"), put("")),
    ] {
        out.push((what.to_owned(), send(client, Method::PUT, &uri, json, &body).await?));
    }
    let merge = "application/merge-patch+json";
    let json_patch = "application/json-patch+json";
    for (what, query, content_type, body) in [
        ("merge patch, Strict", "?fieldValidation=Strict", merge, r#"{"spec":{"extra":1,"items":[{"q":1}]},"top":2}"#),
        ("merge patch, duplicate, Strict", "?fieldValidation=Strict", merge, r#"{"spec":{"size":1,"size":3}}"#),
        ("merge patch, dry run, default", "?dryRun=All", merge, r#"{"spec":{"extra":1,"size":1,"size":4}}"#),
        (
            "json patch, Strict",
            "?fieldValidation=Strict",
            json_patch,
            r#"[{"op":"add","path":"/spec/extra","value":1}]"#,
        ),
        ("merge patch, Bogus", "?fieldValidation=Bogus", merge, r#"{"spec":{"size":5}}"#),
        ("merge patch, Ignore", "?fieldValidation=Ignore", merge, r#"{"spec":{"size":6,"extra":1}}"#),
    ] {
        out.push((what.to_owned(), send(client, Method::PATCH, &format!("{item}{query}"), content_type, body).await?));
    }
    Ok(out)
}

async fn install(env: &TestEnv) -> Result<kube::Client> {
    install_crd(env, &crd(), "field-validation").await
}

/// Waits until gadgets are served in `ns`.
async fn wait_served(client: &kube::Client, ns: &str) -> Result<()> {
    raw_requests::wait_served(client, &format!("/apis/{GROUP}/v1/namespaces/{ns}/gadgets")).await
}

/// A client of kube-apiserver with the Gadget CRD installed, a namespace
/// there named from `prefix` where gadgets are served, and the fake.
async fn both_servers(prefix: &str) -> Result<(kube::Client, String, FakeApiServer)> {
    let env = TestEnv::shared();
    let real = install(env).await?;
    let ns = env.create_namespace(prefix).await?;
    wait_served(&real, &ns).await?;
    Ok((real, ns, fake_server()))
}

/// Fails with every request whose answers differ.
fn assert_same_answers(theirs: &[(String, Answer)], ours: &[(String, Answer)]) {
    assert_eq!(theirs.len(), ours.len());
    let differ: Vec<String> = theirs
        .iter()
        .zip(ours)
        .filter(|((_, server), (_, fake))| server != fake)
        .map(|((what, server), (_, fake))| format!("{what}:\n  kube-apiserver: {server:?}\n  fake:           {fake:?}"))
        .collect();
    assert!(differ.is_empty(), "{} of {} answers differ:\n{}", differ.len(), theirs.len(), differ.join("\n"));
}

#[tokio::test]
async fn the_fake_server_decodes_writes_as_kube_apiserver() -> Result<()> {
    let (real, ns, fake) = both_servers("field-validation").await?;

    let theirs = answers(&real, &ns).await?;
    let ours = answers(&fake.client(), &ns).await?;
    assert_same_answers(&theirs, &ours);
    // The comparison is not of two empty lists: what the requests are
    // meant to show happened on the API server.
    let by_name = |name: &str| &theirs.iter().find(|(what, _)| what == name).unwrap().1;
    assert_eq!(by_name("create, unknown fields, Strict").code, 400);
    assert_eq!(by_name("create, unknown fields, default").warnings.len(), 11);
    assert!(by_name("create, unknown fields, Ignore").warnings.is_empty());
    assert_eq!(by_name("merge patch, Strict").code, 422);
    Ok(())
}

/// The typed client's `field_validation` reaches the server on create,
/// update and patch, and `WarningLayer` hands over the warnings of the
/// default mode — on kube-apiserver and on the fake alike.
#[tokio::test]
async fn the_typed_client_sends_field_validation_and_reads_warnings() -> Result<()> {
    let env = TestEnv::shared();
    install(env).await?;
    let ns = env.create_namespace("field-validation-typed").await?;
    wait_served(&env.admin_client().await?, &ns).await?;

    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let layer = WarningLayer::new(move |w| sink.lock().unwrap().push(w.text.clone()));
    let kubeconfig = kube::config::Kubeconfig::read_from(env.admin_kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let real = kube::client::ClientBuilder::try_from(config)?.with_layer(&layer).build();
    let server = fake_server();
    let fake = kube::client::ClientBuilder::new(server.service(), "default").with_layer(&layer).build();

    let mut outcomes = Vec::new();
    for client in [real, fake] {
        seen.lock().unwrap().clear();
        let gadgets = TypedClient::<Gadget>::new(client, Some(&ns));
        let mut gadget = Gadget {
            api_version: format!("{GROUP}/v1"),
            kind: "Gadget".into(),
            metadata: ObjectMeta { name: Some("g".into()), ..Default::default() },
            spec: json!({"size": 1, "color": "red"}),
        };
        let strict = CreateOptions { field_validation: Some(FieldValidation::Strict), ..Default::default() };
        let refused = gadgets.create(&gadget, &strict).await.expect_err("Strict refuses spec.color");
        let created = gadgets.create(&gadget, &CreateOptions::default()).await?;
        let warned = std::mem::take(&mut *seen.lock().unwrap());
        gadget.metadata = created.metadata.clone();
        gadget.spec = json!({"size": 2, "shape": "round"});
        let strict = UpdateOptions { field_validation: Some(FieldValidation::Strict), ..Default::default() };
        let update_refused = gadgets.update(&gadget, &strict).await.expect_err("Strict refuses spec.shape");
        let ignore = UpdateOptions { field_validation: Some(FieldValidation::Ignore), ..Default::default() };
        let updated = gadgets.update(&gadget, &ignore).await?;
        let ignored = std::mem::take(&mut *seen.lock().unwrap());
        let patch = PatchType::Merge(json!({"spec": {"weight": 3}}));
        let strict = PatchOptions { field_validation: Some(FieldValidation::Strict), ..Default::default() };
        let patch_refused = gadgets.patch("g", &patch, &strict).await.expect_err("Strict refuses spec.weight");
        outcomes.push((
            refused.to_string(),
            created.spec,
            warned,
            update_refused.to_string(),
            updated.spec,
            ignored,
            patch_refused.is_invalid(),
        ));
    }
    let (real, fake) = (&outcomes[0], &outcomes[1]);
    assert_eq!(real, fake, "kube-apiserver and the fake differ");
    assert!(real.0.contains(r#"strict decoding error: unknown field "spec.color""#), "{}", real.0);
    assert_eq!(real.1, json!({"size": 1}));
    assert_eq!(real.2, [r#"unknown field "spec.color""#]);
    assert!(real.3.contains(r#"unknown field "spec.shape""#), "{}", real.3);
    assert_eq!(real.4, json!({"size": 2}));
    assert!(real.5.is_empty(), "{:?}", real.5);
    assert!(real.6);
    Ok(())
}

/// Creates the Gadget `name` in `ns` (with `finalizers`) and returns its
/// resourceVersion.
async fn gadget(client: &kube::Client, ns: &str, name: &str, finalizers: &[&str]) -> Result<String> {
    let body = json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "Gadget",
        "metadata": {"name": name, "finalizers": finalizers},
        "spec": {"size": 1, "items": [{"name": "a"}]},
    });
    let request = http::Request::post(format!("/apis/{GROUP}/v1/namespaces/{ns}/gadgets"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body)?)?;
    let created: Value = client.request(request).await.with_context(|| format!("creating {name}"))?;
    Ok(created["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_owned())
}

/// The patch and metadata requests, in order, against one server.
async fn patch_answers(client: &kube::Client, ns: &str) -> Result<Vec<(String, Answer)>> {
    let collection = format!("/apis/{GROUP}/v1/namespaces/{ns}/gadgets");
    let item = format!("{collection}/p");
    let version = gadget(client, ns, "p", &[]).await?;
    let (json, merge, json_patch, apply) = (
        "application/json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/apply-patch+yaml",
    );
    let many_tests = serde_json::to_string(&vec![json!({"op": "test", "path": "/kind", "value": "Gadget"}); 10_001])?;
    let long_manager = "m".repeat(129);
    let put = |rv: &str| {
        format!(r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"p"{rv}}},"spec":{{"size":2}}}}"#)
    };
    let with_version = put(&format!(r#","resourceVersion":"{version}""#));
    let requests: Vec<(&str, Method, String, &str, String)> = vec![
        (
            "json patch, failed test",
            Method::PATCH,
            item.clone(),
            json_patch,
            r#"[{"op":"test","path":"/spec/size","value":0}]"#.into(),
        ),
        (
            "json patch, missing path",
            Method::PATCH,
            item.clone(),
            json_patch,
            r#"[{"op":"replace","path":"/spec/nope/x","value":0}]"#.into(),
        ),
        ("json patch, unknown op", Method::PATCH, item.clone(), json_patch, r#"[{"op":"frob","path":"/spec"}]"#.into()),
        (
            "json patch, a missing member tested as null",
            Method::PATCH,
            format!("{item}?dryRun=All"),
            json_patch,
            r#"[{"op":"test","path":"/spec/free","value":null},{"op":"add","path":"/spec/free","value":{}}]"#.into(),
        ),
        (
            "json patch, add without a value",
            Method::PATCH,
            format!("{item}?dryRun=All"),
            json_patch,
            r#"[{"op":"add","path":"/spec/free","value":{"a":1}},{"op":"add","path":"/spec/free/b"}]"#.into(),
        ),
        ("json patch, 10001 operations", Method::PATCH, item.clone(), json_patch, many_tests),
        ("strategic merge patch", Method::PATCH, item.clone(), "application/strategic-merge-patch+json", "{}".into()),
        (
            "apply patch as JSON",
            Method::PATCH,
            format!("{item}?fieldManager=m"),
            "application/apply-patch+json",
            "{}".into(),
        ),
        ("unknown patch type", Method::PATCH, item.clone(), "application/foo", "{}".into()),
        ("patch, dryRun=true", Method::PATCH, format!("{item}?dryRun=true"), merge, "{}".into()),
        (
            "create, three bad options",
            Method::POST,
            format!("{collection}?dryRun=x&fieldValidation=bogus&fieldManager={long_manager}"),
            json,
            format!(r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"o"}}}}"#),
        ),
        ("merge patch removing the name", Method::PATCH, item.clone(), merge, r#"{"metadata":{"name":null}}"#.into()),
        (
            "merge patch setting deletionTimestamp",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"deletionTimestamp":"2030-01-01T00:00:00Z"}}"#.into(),
        ),
        (
            "merge patch setting deletionGracePeriodSeconds",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"deletionGracePeriodSeconds":5}}"#.into(),
        ),
        ("merge patch, an array", Method::PATCH, item.clone(), merge, "[1]".into()),
        ("merge patch, null", Method::PATCH, item.clone(), merge, "null".into()),
        ("merge patch, a number", Method::PATCH, item.clone(), merge, "5".into()),
        ("merge patch, malformed", Method::PATCH, item.clone(), merge, r#"{"a":"#.into()),
        (
            "merge patch, nulls in lists",
            Method::PATCH,
            format!("{item}?dryRun=All"),
            merge,
            r#"{"spec":{"items":[{"name":null}],"free":{"x":[{"a":null,"b":1}]}}}"#.into(),
        ),
        (
            "merge patch, a bad label",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"labels":{"k":"-v"}}}"#.into(),
        ),
        (
            "merge patch, a bad annotation key",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"annotations":{"a b":"v"}}}"#.into(),
        ),
        (
            "merge patch of the uid",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"uid":"00000000-0000-0000-0000-000000000000"}}"#.into(),
        ),
        (
            "merge patch, a bad finalizer",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"finalizers":["a/b/c"]}}"#.into(),
        ),
        (
            "merge patch, an empty resourceVersion",
            Method::PATCH,
            item.clone(),
            merge,
            r#"{"metadata":{"resourceVersion":""}}"#.into(),
        ),
        ("update without a resourceVersion", Method::PUT, item.clone(), json, put("")),
        ("update with it", Method::PUT, format!("{item}?dryRun=All"), json, with_version),
        (
            "apply creating with a uid",
            Method::PATCH,
            format!("{collection}/q?fieldManager=m"),
            apply,
            format!(r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"q","uid":"X"}}}}"#),
        ),
        (
            "apply of an owner reference without uid",
            Method::PATCH,
            format!("{collection}/r?fieldManager=m"),
            apply,
            format!(
                r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"r","ownerReferences":[{{"apiVersion":"v1","kind":"ConfigMap","name":"o"}}]}}}}"#
            ),
        ),
        (
            "apply, force=True",
            Method::PATCH,
            format!("{item}?fieldManager=other&force=True"),
            apply,
            format!(r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"p"}},"spec":{{"size":9}}}}"#),
        ),
        (
            "create with a bad label",
            Method::POST,
            format!("{collection}?dryRun=All"),
            json,
            format!(r#"{{"apiVersion":"{GROUP}/v1","kind":"Gadget","metadata":{{"name":"l","labels":{{"k":"-v"}}}}}}"#),
        ),
    ];
    let mut out = Vec::new();
    for (what, method, uri, content_type, body) in requests {
        out.push((what.to_owned(), send(client, method, &uri, content_type, &body).await?));
    }
    // An object being deleted takes no new finalizer.
    gadget(client, ns, "f", &["example.com/a"]).await?;
    let item = format!("{collection}/f");
    out.push(("delete with a finalizer".into(), send(client, Method::DELETE, &item, json, "").await?));
    let add = r#"{"metadata":{"finalizers":["example.com/a","example.com/b"]}}"#;
    out.push(("a finalizer added while deleting".into(), send(client, Method::PATCH, &item, merge, add).await?));
    let gone = r#"{"metadata":{"finalizers":null}}"#;
    out.push(("the finalizer removed".into(), send(client, Method::PATCH, &item, merge, gone).await?));
    Ok(out)
}

#[tokio::test]
async fn the_fake_server_patches_and_checks_metadata_as_kube_apiserver() -> Result<()> {
    let (real, ns, fake) = both_servers("fake-custom").await?;

    let theirs = patch_answers(&real, &ns).await?;
    let ours = patch_answers(&fake.client(), &ns).await?;
    assert_same_answers(&theirs, &ours);
    let codes: Vec<u16> = theirs.iter().map(|(_, a)| a.code).collect();
    assert!(codes.contains(&413) && codes.contains(&415) && codes.contains(&409), "{codes:?}");
    Ok(())
}
