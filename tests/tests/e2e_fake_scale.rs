//! Differential test of the fake API server's `scale` subresource: the same
//! raw requests go to kube-apiserver (a CRD with `subresources.scale`) and
//! to `FakeApiServer` (`ResourceInfo::with_scale_subresource`), and every
//! answer must match: code, reason, message, causes, the answered `spec`
//! and `status` (of the `Scale`, or of the object), and what the object's
//! `managedFields` record for each write (operation, subresource, fields).

use anyhow::Result;
use codegen_runtime::testing::{FakeApiServer, ResourceInfo};
use codegen_testenv::TestEnv;
use http::Method;
use raw_requests::{RawAnswer, install_crd, send_raw, wait_served};
use serde_json::{Value, json};

#[path = "../support/raw_requests.rs"]
mod raw_requests;

const GROUP: &str = "scale.kube-codegen.test";
const CRD_NAME: &str = "dials.scale.kube-codegen.test";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "maximum": 10},
                "image": {"type": "string"}
            }},
            "status": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "selector": {"type": "string"}
            }}
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
            "names": {"kind": "Dial", "listKind": "DialList", "plural": "dials", "singular": "dial"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector"
                    }
                },
                "schema": {"openAPIV3Schema": schema()},
            }],
        },
    })
}

fn fake_server() -> FakeApiServer {
    let server = FakeApiServer::new();
    let schema: &'static str = Box::leak(schema().to_string().into_boxed_str());
    server.register_resource(
        ResourceInfo {
            group: GROUP.into(),
            version: "v1".into(),
            kind: "Dial".into(),
            plural: "dials".into(),
            namespaced: true,
            has_status_subresource: true,
            ..ResourceInfo::default()
        }
        .with_validation(schema)
        .with_scale_subresource(".spec.replicas", ".status.replicas", Some(".status.selector")),
    );
    server
}

/// An answer to compare.
#[derive(Debug, PartialEq)]
struct Answer {
    code: u16,
    reason: String,
    message: String,
    causes: Vec<(String, String)>,
    /// `kind` of the answered object (`Scale`, `Dial`), or `Status`.
    kind: String,
    spec: Value,
    status: Value,
    /// Per `managedFields` entry of an answered object: operation,
    /// subresource, fields and apiVersion, sorted (the order of entries
    /// written in one second is by apiVersion, of others by time).
    managed: Vec<(String, String, Value, String)>,
}

async fn send(client: &kube::Client, method: Method, uri: &str, content_type: &str, body: &str) -> Result<Answer> {
    let RawAnswer { code, body: value, .. } = send_raw(client, method, uri, content_type, body).await?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let kind = text(&value["kind"]);
    let object = kind != "Status";
    let causes = value["details"]["causes"]
        .as_array()
        .map(|c| c.iter().map(|c| (text(&c["field"]), text(&c["reason"]))).collect())
        .unwrap_or_default();
    let managed = value["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            let mut entries: Vec<_> = entries
                .iter()
                .map(|e| {
                    (text(&e["operation"]), text(&e["subresource"]), e["fieldsV1"].clone(), text(&e["apiVersion"]))
                })
                .collect();
            entries.sort_by(|a, b| (&a.0, &a.1, &a.3).cmp(&(&b.0, &b.1, &b.3)));
            entries
        })
        .unwrap_or_default();
    Ok(Answer {
        code,
        reason: text(&value["reason"]),
        message: if object { String::new() } else { text(&value["message"]) },
        causes,
        kind,
        spec: if object { value["spec"].clone() } else { Value::Null },
        status: if object { value["status"].clone() } else { Value::Null },
        managed,
    })
}

/// The `metadata.resourceVersion` of the dial `name`.
async fn version_of(client: &kube::Client, ns: &str, name: &str) -> Result<String> {
    let request = http::Request::get(format!("/apis/{GROUP}/v1/namespaces/{ns}/dials/{name}")).body(Vec::new())?;
    let object: Value = client.request(request).await?;
    Ok(object["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_owned())
}

fn scale(name: &str, replicas: i64, resource_version: Option<&str>) -> String {
    let mut scale = json!({
        "apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": name},
        "spec": {"replicas": replicas},
    });
    if let Some(version) = resource_version {
        scale["metadata"]["resourceVersion"] = version.into();
    }
    scale.to_string()
}

/// Every request, in order, against one server in namespace `ns`.
async fn answers(client: &kube::Client, ns: &str) -> Result<Vec<(String, Answer)>> {
    let collection = format!("/apis/{GROUP}/v1/namespaces/{ns}/dials");
    let item = format!("{collection}/d1");
    let scale_uri = format!("{item}/scale");
    let (json, merge, json_patch, strategic) = (
        "application/json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
    );
    let mut out = Vec::new();
    let create = json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "Dial",
        "metadata": {"name": "d1"},
        "spec": {"replicas": 2, "image": "web"},
    });
    out.push(("create".to_owned(), send(client, Method::POST, &collection, json, &create.to_string()).await?));
    out.push(("get the scale".to_owned(), send(client, Method::GET, &scale_uri, json, "").await?));
    let puts = [
        ("update the scale", scale("d1", 3, None)),
        ("update the scale, stale resourceVersion", scale("d1", 4, Some("1"))),
        ("update the scale, negative replicas", scale("d1", -1, None)),
        ("update the scale, over the schema's maximum", scale("d1", 11, None)),
        ("update the scale, another name", scale("other", 4, None)),
        ("update the scale, the same replicas", scale("d1", 3, None)),
    ];
    for (what, body) in puts {
        out.push((what.to_owned(), send(client, Method::PUT, &scale_uri, json, &body).await?));
    }
    let version = version_of(client, ns, "d1").await?;
    out.push((
        "update the scale at the current resourceVersion".to_owned(),
        send(client, Method::PUT, &scale_uri, json, &scale("d1", 4, Some(&version))).await?,
    ));
    for (what, content_type, body) in [("merge patch of the scale", merge, r#"{"spec":{"replicas":5}}"#)] {
        out.push((what.to_owned(), send(client, Method::PATCH, &scale_uri, content_type, body).await?));
    }
    out.push(("get the object after scaling".to_owned(), send(client, Method::GET, &item, json, "").await?));
    for (what, content_type, body) in [
        ("json patch of the scale to zero", json_patch, r#"[{"op":"replace","path":"/spec/replicas","value":0}]"#),
        ("strategic merge patch of the scale", strategic, r#"{"spec":{"replicas":6}}"#),
        ("merge patch of the scale, negative", merge, r#"{"spec":{"replicas":-2}}"#),
    ] {
        out.push((what.to_owned(), send(client, Method::PATCH, &scale_uri, content_type, body).await?));
    }
    let status = r#"{"status":{"replicas":2,"selector":"app=d1"}}"#;
    out.push((
        "merge patch of the status".to_owned(),
        send(client, Method::PATCH, &format!("{item}/status"), merge, status).await?,
    ));
    out.push(("get the scale with a status".to_owned(), send(client, Method::GET, &scale_uri, json, "").await?));
    out.push(("get the object".to_owned(), send(client, Method::GET, &item, json, "").await?));
    // Objects whose replicas the scale cannot show or the schema allows.
    for (name, spec) in [
        ("no-replicas", json!({"image": "web"})),
        ("negative", json!({"replicas": -1})),
        ("over-int32", json!({"replicas": 3_000_000_000_i64})),
    ] {
        let create = json!({
            "apiVersion": format!("{GROUP}/v1"), "kind": "Dial",
            "metadata": {"name": name}, "spec": spec,
        });
        out.push((format!("create {name}"), send(client, Method::POST, &collection, json, &create.to_string()).await?));
    }
    let bare = format!("{collection}/no-replicas/scale");
    out.push(("get the scale without replicas".to_owned(), send(client, Method::GET, &bare, json, "").await?));
    out.push((
        "merge patch of the scale without replicas, leaving them out".to_owned(),
        send(client, Method::PATCH, &bare, merge, r#"{"metadata":{"labels":{"a":"b"}}}"#).await?,
    ));
    out.push((
        "update the scale without replicas".to_owned(),
        send(client, Method::PUT, &bare, json, &scale("no-replicas", 2, None)).await?,
    ));
    out.push((
        "update the scale, stale resourceVersion and negative replicas".to_owned(),
        send(client, Method::PUT, &scale_uri, json, &scale("d1", -3, Some("1"))).await?,
    ));
    out.push((
        "get the scale of a missing object".to_owned(),
        send(client, Method::GET, &format!("{collection}/nope/scale"), json, "").await?,
    ));
    out.push((
        "update the scale of a missing object".to_owned(),
        send(client, Method::PUT, &format!("{collection}/nope/scale"), json, &scale("nope", 1, None)).await?,
    ));
    Ok(out)
}

#[tokio::test]
async fn the_fake_server_serves_scale_as_kube_apiserver() -> Result<()> {
    let env = TestEnv::shared();
    let real = install_crd(env, &crd(), "scale-test").await?;
    let ns = env.create_namespace("scale").await?;
    wait_served(&real, &format!("/apis/{GROUP}/v1/namespaces/{ns}/dials")).await?;
    let fake = fake_server();

    let theirs = answers(&real, &ns).await?;
    let ours = answers(&fake.client(), &ns).await?;
    let differ: Vec<String> = theirs
        .iter()
        .zip(&ours)
        .filter(|((_, server), (_, fake))| server != fake)
        .map(|((what, server), (_, fake))| format!("{what}:\n  kube-apiserver: {server:?}\n  fake:           {fake:?}"))
        .collect();
    assert!(differ.is_empty(), "{} of {} answers differ:\n{}", differ.len(), theirs.len(), differ.join("\n"));

    // What the requests are meant to show happened on the API server.
    let by_name = |name: &str| &theirs.iter().find(|(what, _)| what == name).unwrap().1;
    let got = by_name("get the scale");
    assert_eq!((got.code, got.kind.as_str(), &got.spec), (200, "Scale", &json!({"replicas": 2})));
    assert_eq!(by_name("update the scale").spec, json!({"replicas": 3}));
    assert_eq!(by_name("update the scale, stale resourceVersion").code, 409);
    assert_eq!(by_name("update the scale, negative replicas").code, 422);
    assert_eq!(by_name("update the scale, over the schema's maximum").code, 422);
    assert_eq!(by_name("update the scale, another name").code, 400);
    assert_eq!(by_name("json patch of the scale to zero").spec, json!({}));
    assert_eq!(by_name("strategic merge patch of the scale").code, 415);
    assert_eq!(by_name("get the scale with a status").status, json!({"replicas": 2, "selector": "app=d1"}));
    // The scale writes took the replicas over from the creating manager,
    // in an entry of their own...
    let scaled = by_name("get the object after scaling");
    assert_eq!(scaled.spec, json!({"replicas": 5, "image": "web"}));
    let entry = |answer: &Answer, subresource: &str| {
        answer.managed.iter().find(|(_, s, _, _)| s == subresource).map(|(_, _, fields, _)| fields.clone())
    };
    assert_eq!(entry(scaled, "scale"), Some(json!({"f:spec": {"f:replicas": {}}})), "{:?}", scaled.managed);
    assert_eq!(entry(scaled, ""), Some(json!({"f:spec": {".": {}, "f:image": {}}})), "{:?}", scaled.managed);
    // ...which owns nothing once they are 0, absent from the `Scale`.
    let object = by_name("get the object");
    assert_eq!(object.spec, json!({"replicas": 0, "image": "web"}));
    assert_eq!(entry(object, "scale"), None, "{:?}", object.managed);
    assert_eq!(by_name("get the scale of a missing object").code, 404);
    Ok(())
}
