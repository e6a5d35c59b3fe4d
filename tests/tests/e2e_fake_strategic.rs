//! Differential test of the fake API server's strategic merge patches of a
//! built-in kind: each patch goes to a fresh Deployment on kube-apiserver
//! and on `FakeApiServer`, and the answers must match — the code and, for
//! a patched object, what the patch touched (labels, finalizers, the
//! containers with their images, arguments, environment, ports and mounts,
//! the volumes and the update strategy, in order). Lists merged by key,
//! lists of scalars merged as sets, lists and maps replaced, and the
//! directives `$patch`, `$retainKeys`, `$deleteFromPrimitiveList` and
//! `$setElementOrder`.

use anyhow::{Context, Result};
use codegen_runtime::testing::FakeApiServer;
use codegen_testenv::TestEnv;
use http::Method;
use k8s_openapi::api::apps::v1::Deployment;
use serde_json::{Value, json};

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "web", "tier": "front"},
                     "finalizers": ["example.com/a", "example.com/b"]},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "metadata": {"labels": {"app": "web", "v": "1"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:1", "args": ["a", "b"],
                         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                         "ports": [{"containerPort": 80}, {"containerPort": 443}],
                         "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}]},
                        {"name": "side", "image": "side:1"},
                    ],
                    "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    })
}

/// The patches, each applied to a fresh copy of [`deployment`].
fn patches() -> Vec<(&'static str, Value)> {
    let containers = |c: Value| json!({"spec": {"template": {"spec": {"containers": c}}}});
    vec![
        (
            "containers merged by name, env by name, a new container",
            containers(json!([
                {"name": "app", "image": "app:2", "env": [{"name": "C", "value": "3"}, {"name": "B", "value": "9"}]},
                {"name": "new", "image": "new:1"},
            ])),
        ),
        ("a container deleted", containers(json!([{"name": "side", "$patch": "delete"}]))),
        ("the containers replaced", containers(json!([{"name": "only", "image": "only:1"}, {"$patch": "replace"}]))),
        ("arguments replaced (no strategy)", containers(json!([{"name": "app", "args": ["c"]}]))),
        ("ports merged by containerPort", containers(json!([{"name": "app", "ports": [{"containerPort": 8080}]}]))),
        ("finalizers merged as a set", json!({"metadata": {"finalizers": ["example.com/c", "example.com/a"]}})),
        (
            "finalizers deleted from a primitive list",
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}}),
        ),
        ("labels: one removed, one added", json!({"metadata": {"labels": {"tier": null, "new": "x"}}})),
        (
            "template labels replaced",
            json!({"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "app": "web", "v": "2"}}}}}),
        ),
        (
            "containers ordered by $setElementOrder",
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}],
                "containers": [{"name": "app", "image": "app:3"}],
            }}}}),
        ),
        (
            "env ordered by $setElementOrder inside a container",
            containers(json!([{
                "name": "app",
                "$setElementOrder/env": [{"name": "B"}, {"name": "C"}, {"name": "A"}],
                "env": [{"name": "C", "value": "3"}],
            }])),
        ),
        (
            "the strategy switched with $retainKeys",
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        ),
        (
            "a volume's source switched with $retainKeys",
            json!({"spec": {"template": {"spec": {"volumes": [
                {"name": "cfg", "$retainKeys": ["name", "secret"], "secret": {"secretName": "s"}},
            ]}}}}),
        ),
        (
            "a volume deleted, one added",
            json!({"spec": {"template": {"spec": {"volumes": [
                {"name": "tmp", "$patch": "delete"}, {"name": "data", "emptyDir": {}},
            ]}}}}),
        ),
        (
            "volumes ordered by $setElementOrder after a delete and an add",
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/volumes": [{"name": "data"}],
                "volumes": [{"name": "tmp", "$patch": "delete"}, {"name": "data", "emptyDir": {}}],
            }}}}),
        ),
        (
            "env of a container without env, ordered by $setElementOrder (kubectl apply's patch)",
            containers(json!([{
                "name": "side",
                "$setElementOrder/env": [{"name": "X"}, {"name": "Y"}, {"name": "Z"}],
                "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}, {"name": "Z", "value": "3"}],
            }])),
        ),
        (
            "volumes ordered by $setElementOrder after a delete and two adds",
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/volumes": [{"name": "cfg"}, {"name": "d1"}, {"name": "d2"}],
                "volumes": [{"name": "tmp", "$patch": "delete"}, {"name": "d2", "emptyDir": {}}, {"name": "d1", "emptyDir": {}}],
            }}}}),
        ),
        ("a null patch", Value::Null),
        ("a container without its merge key", containers(json!([{"image": "x:1"}]))),
        ("finalizers as a list of lists", json!({"metadata": {"finalizers": [["example.com/x"]]}})),
        ("$retainKeys that is not a list", json!({"spec": {"strategy": {"$retainKeys": "type"}}})),
        (
            "$retainKeys that leaves out a patched key",
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}}}}),
        ),
        ("a malformed $deleteFromPrimitiveList", json!({"metadata": {"$deleteFromPrimitiveList": ["example.com/a"]}})),
    ]
}

/// What a patch can change, as comparable JSON: defaults the API server
/// fills in (protocols, pull policies, a volume's default mode) are left
/// out.
fn touched(object: &Value) -> Value {
    let pod = &object["spec"]["template"]["spec"];
    let containers: Vec<Value> = pod["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            json!({
                "name": c["name"], "image": c["image"], "args": c["args"],
                "env": c["env"],
                "ports": c["ports"].as_array().map(|p| p.iter().map(|p| p["containerPort"].clone()).collect::<Vec<_>>()),
                "mounts": c["volumeMounts"].as_array().map(|m| m.iter().map(|m| m["mountPath"].clone()).collect::<Vec<_>>()),
            })
        })
        .collect();
    let volumes: Vec<Value> = pod["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let mut keys: Vec<&String> = v.as_object().map(|m| m.keys().collect()).unwrap_or_default();
            keys.sort();
            json!({"name": v["name"], "keys": keys})
        })
        .collect();
    json!({
        "labels": object["metadata"]["labels"],
        "finalizers": object["metadata"]["finalizers"],
        "templateLabels": object["spec"]["template"]["metadata"]["labels"],
        "strategy": object["spec"]["strategy"]["type"],
        "rollingUpdate": object["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "containers": containers,
        "volumes": volumes,
    })
}

async fn request(
    client: &kube::Client,
    method: Method,
    uri: &str,
    content_type: &str,
    body: &Value,
) -> Result<(u16, Value)> {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(kube::client::Body::from(serde_json::to_vec(body)?))?;
    let response = client.send(request).await.with_context(|| format!("sending to {uri}"))?;
    let code = response.status().as_u16();
    let bytes = response.into_body().collect_bytes().await?;
    let value: Value = serde_json::from_slice(&bytes).with_context(|| String::from_utf8_lossy(&bytes).into_owned())?;
    Ok((code, value))
}

/// Each patch's answer on one server: the code and what it touched.
async fn answers(client: &kube::Client, ns: &str) -> Result<Vec<(u16, Value)>> {
    let collection = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let mut out = Vec::new();
    for (i, (_, patch)) in patches().into_iter().enumerate() {
        let name = format!("d{i}");
        let (code, created) =
            request(client, Method::POST, &collection, "application/json", &deployment(&name)).await?;
        anyhow::ensure!(code == 201, "creating {name}: {created}");
        let uri = format!("{collection}/{name}");
        let (code, answer) =
            request(client, Method::PATCH, &uri, "application/strategic-merge-patch+json", &patch).await?;
        out.push((code, if code == 200 { touched(&answer) } else { Value::Null }));
    }
    Ok(out)
}

#[tokio::test]
async fn strategic_merge_patches_of_a_deployment_match_kube_apiserver() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("strategic").await?;
    let real = answers(&env.admin_client().await?, &ns).await?;
    let fake = FakeApiServer::new();
    fake.register::<Deployment>();
    let ours = answers(&fake.client(), &ns).await?;

    let mut differences = Vec::new();
    let mut merged = 0;
    for (((what, patch), theirs), mine) in patches().iter().zip(&real).zip(&ours) {
        merged += usize::from(theirs.0 == 200);
        if theirs != mine {
            differences.push(format!(
                "{what}: {patch}\n  kube-apiserver: {} {}\n  fake:           {} {}",
                theirs.0, theirs.1, mine.0, mine.1
            ));
        }
    }
    for ((what, _), (code, answer)) in patches().iter().zip(&real) {
        println!("{what}: {code} {answer}");
    }
    println!(
        "strategic merge patches, fake vs kube-apiserver: {} of {} agree",
        real.len() - differences.len(),
        real.len()
    );
    assert!(merged >= 14, "only {merged} patches succeeded on kube-apiserver: {real:?}");
    assert!(differences.is_empty(), "{} of {} differ:\n{}", differences.len(), real.len(), differences.join("\n"));
    Ok(())
}
