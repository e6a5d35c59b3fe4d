//! Differential test of the fake API server's write checks: the same
//! ConfigMap writes — metadata the API server refuses (names, labels,
//! annotations, owner references, finalizers), a create carrying a
//! resourceVersion, an update body without the URL's name or with another
//! uid, a patch of the uid, an update and a patch at resourceVersion 0, a long `generateName`, an apply of an owner
//! reference without uid — go to kube-apiserver and to `FakeApiServer`, and
//! each answer must be the same: HTTP code, reason and every cause (field,
//! reason, message). The fake is what users' unit
//! tests run on; a write it accepts and the cluster refuses is a bug a
//! green unit test hides.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use codegen_runtime::testing::FakeApiServer;
use codegen_testenv::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};

/// An answer: HTTP code, reason and causes (field, reason, message), or the
/// created object's name length for a success.
#[derive(Debug, PartialEq)]
enum Answer {
    Ok(usize),
    Failed { code: u16, reason: String, causes: Vec<(String, String, String)> },
}

fn answer<K: kube::Resource>(result: kube::Result<K>) -> Result<Answer> {
    match result {
        Ok(obj) => Ok(Answer::Ok(obj.meta().name.as_deref().unwrap_or_default().len())),
        Err(kube::Error::Api(status)) => {
            let mut causes: Vec<_> = status
                .details
                .map(|d| d.causes.into_iter().map(|c| (c.field, c.reason, c.message)).collect())
                .unwrap_or_default();
            causes.sort();
            Ok(Answer::Failed { code: status.code, reason: status.reason, causes })
        }
        Err(other) => Err(other).context("a write"),
    }
}

fn cm(name: &str, edit: impl FnOnce(&mut ObjectMeta)) -> ConfigMap {
    let mut meta = ObjectMeta { name: Some(name.into()), ..Default::default() };
    edit(&mut meta);
    ConfigMap { metadata: meta, data: Some(BTreeMap::from([("k".into(), "v".into())])), ..Default::default() }
}

fn owner(name: &str, uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(controller),
        ..Default::default()
    }
}

/// The creates, by what they try.
fn creates() -> Vec<(&'static str, ConfigMap)> {
    let labels = |pairs: &[(&str, &str)]| Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
    vec![
        ("valid", cm("valid", |m| m.labels = labels(&[("app.kubernetes.io/name", "web"), ("empty", "")]))),
        ("upper-case name", cm("Upper", |_| {})),
        ("taken name with a bad label", cm("valid", |m| m.labels = labels(&[("k", "-v")]))),
        ("taken name", cm("valid", |_| {})),
        ("underscore in name", cm("a_b", |_| {})),
        ("label value of 64", cm("l1", |m| m.labels = labels(&[("owner", &"x".repeat(64))]))),
        ("label key starting with -", cm("l2", |m| m.labels = labels(&[("-k", "v")]))),
        ("label key with two slashes", cm("l3", |m| m.labels = labels(&[("a/b/c", "v")]))),
        ("label value with a space", cm("l4", |m| m.labels = labels(&[("k", "two words")]))),
        ("label key with an empty prefix", cm("l5", |m| m.labels = labels(&[("/k", "v")]))),
        ("annotation key with a space", cm("a1", |m| m.annotations = labels(&[("bad key", "v")]))),
        ("annotations over 256 KiB", cm("a2", |m| m.annotations = labels(&[("k", &"x".repeat(256 * 1024))]))),
        ("owner without uid", cm("o1", |m| m.owner_references = Some(vec![owner("x", "", false)]))),
        ("owner without name", cm("o3", |m| m.owner_references = Some(vec![owner("", "u", false)]))),
        (
            "owner without apiVersion and kind",
            cm("o4", |m| {
                let mut o = owner("x", "u", false);
                o.api_version = String::new();
                o.kind = String::new();
                m.owner_references = Some(vec![o]);
            }),
        ),
        ("name of 254", cm(&"n".repeat(254), |_| {})),
        ("name of 254 ending in -", cm(&format!("{}-", "n".repeat(253)), |_| {})),
        ("label key with a bad prefix", cm("l6", |m| m.labels = labels(&[("Example.com/k", "v")]))),
        ("label key name of 64", cm("l7", |m| m.labels = labels(&[(&"k".repeat(64), "v")]))),
        ("finalizer with two slashes", cm("f2", |m| m.finalizers = Some(vec!["a/b/c".into()]))),
        (
            "two controllers",
            cm("o2", |m| m.owner_references = Some(vec![owner("x", "u1", true), owner("y", "u2", true)])),
        ),
        ("finalizer with an empty name", cm("f1", |m| m.finalizers = Some(vec!["example.com/".into()]))),
        ("resourceVersion on create", cm("rv", |m| m.resource_version = Some("5".into()))),
        (
            "long generateName",
            cm("", |m| {
                m.name = None;
                m.generate_name = Some(format!("{}-", "p".repeat(70)));
            }),
        ),
    ]
}

/// Every write, in order, against one API: the creates, then writes to an
/// existing object.
async fn answers(api: &Api<ConfigMap>) -> Result<Vec<(&'static str, Answer)>> {
    let mut out = Vec::new();
    for (what, object) in creates() {
        out.push((what, answer(api.create(&PostParams::default(), &object).await)?));
    }
    let stored = api.create(&PostParams::default(), &cm("target", |_| {})).await.context("create target")?;
    let mut unnamed = stored.clone();
    unnamed.metadata.name = Some(String::new());
    out.push(("update without a name", answer(api.replace("target", &PostParams::default(), &unnamed).await)?));
    let mut other_uid = stored.clone();
    other_uid.metadata.uid = Some("00000000-0000-0000-0000-000000000000".into());
    out.push(("update with another uid", answer(api.replace("target", &PostParams::default(), &other_uid).await)?));
    let patch = Patch::Merge(serde_json::json!({"metadata": {"uid": "00000000-0000-0000-0000-000000000000"}}));
    out.push(("patch of the uid", answer(api.patch("target", &PatchParams::default(), &patch).await)?));
    let bad_label = Patch::Merge(serde_json::json!({"metadata": {"labels": {"k": "-v"}}}));
    out.push(("patch to a bad label", answer(api.patch("target", &PatchParams::default(), &bad_label).await)?));
    // resourceVersion 0 is none: an unconditional write of a built-in kind.
    let mut zero = api.get("target").await.context("get target")?;
    zero.metadata.resource_version = Some("0".into());
    zero.data = Some(BTreeMap::from([("k".into(), "w".into())]));
    out.push(("update at resourceVersion 0", answer(api.replace("target", &PostParams::default(), &zero).await)?));
    let zero = Patch::Merge(serde_json::json!({"metadata": {"resourceVersion": "0"}, "data": {"k": "x"}}));
    out.push(("patch at resourceVersion 0", answer(api.patch("target", &PatchParams::default(), &zero).await)?));
    let no_uid = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied",
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}]}});
    let apply = api.patch("applied", &PatchParams::apply("test"), &Patch::Apply(no_uid)).await;
    out.push(("apply of an owner without uid", answer(apply)?));
    Ok(out)
}

#[tokio::test]
async fn the_fake_server_answers_writes_as_kube_apiserver() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("fake-metadata").await?;
    let real: Api<ConfigMap> = Api::namespaced(env.admin_client().await?, &ns);
    let fake = FakeApiServer::new();
    fake.register::<ConfigMap>();
    let fake: Api<ConfigMap> = Api::namespaced(fake.client(), &ns);

    let theirs = answers(&real).await?;
    let ours = answers(&fake).await?;
    let mut differ = Vec::new();
    for ((what, server), (_, fake)) in theirs.iter().zip(&ours) {
        if server != fake {
            differ.push(format!("{what}:\n  kube-apiserver: {server:?}\n  fake:           {fake:?}"));
        }
    }
    assert!(differ.is_empty(), "{} of {} writes differ:\n{}", differ.len(), theirs.len(), differ.join("\n"));
    // Not all of them were refused: the valid create and the generated name.
    assert_eq!(theirs[0].1, Answer::Ok(5));
    Ok(())
}

/// An update of a missing object creates it for the kinds whose registry
/// allows create-on-update (a Lease, a Role) and is a 404 for the others
/// (a ConfigMap), on both servers.
#[tokio::test]
async fn updates_of_missing_objects_create_them_where_the_api_server_does() -> Result<()> {
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::rbac::v1::Role;

    async fn put<K>(api: &Api<K>, obj: &K) -> Result<(u16, Option<String>)>
    where
        K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let name = obj.meta().name.clone().unwrap_or_default();
        Ok(match api.replace(&name, &PostParams::default(), obj).await {
            Ok(stored) => (0, stored.meta().name.clone()),
            Err(kube::Error::Api(status)) => (status.code, None),
            Err(other) => return Err(other).context("a replace"),
        })
    }
    let env = TestEnv::shared();
    let ns = env.create_namespace("fake-create-on-update").await?;
    let fake = FakeApiServer::new();
    fake.register::<ConfigMap>();
    fake.register::<Lease>();
    fake.register::<Role>();
    let named =
        |name: &str| ObjectMeta { name: Some(name.into()), resource_version: Some("7".into()), ..Default::default() };
    let mut answers = Vec::new();
    for client in [env.admin_client().await?, fake.client()] {
        let lease = Lease { metadata: named("lease"), ..Default::default() };
        let role = Role { metadata: named("role"), ..Default::default() };
        let cm = ConfigMap { metadata: named("cm"), ..Default::default() };
        let mut held = Lease { metadata: named("held"), ..Default::default() };
        held.metadata.uid = Some("6a1f9c3e-0000-4000-8000-000000000001".into());
        answers.push([
            put(&Api::<Lease>::namespaced(client.clone(), &ns), &lease).await?,
            put(&Api::<Role>::namespaced(client.clone(), &ns), &role).await?,
            put(&Api::<ConfigMap>::namespaced(client.clone(), &ns), &cm).await?,
            // A uid is a precondition the missing object fails.
            put(&Api::<Lease>::namespaced(client, &ns), &held).await?,
        ]);
    }
    assert_eq!(answers[0], answers[1], "kube-apiserver, then the fake");
    assert_eq!(answers[0][2].0, 404, "a ConfigMap is not created by an update");
    assert_eq!(answers[0][0], (0, Some("lease".into())), "a Lease is");
    assert_eq!(answers[0][3].0, 409, "but not one sent with a uid");
    Ok(())
}

/// Names are checked by each kind's rule: a Role's may hold a `:` (any URL
/// path segment), a Service's and a StatefulSet's must be DNS labels (no
/// `.`, at most 63 characters), as kube-apiserver checks them.
#[tokio::test]
async fn names_follow_each_kinds_rule_as_on_kube_apiserver() -> Result<()> {
    use k8s_openapi::api::apps::v1::StatefulSet;
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::api::rbac::v1::Role;

    async fn create<K>(api: &Api<K>, obj: &K) -> Result<Answer>
    where
        K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        answer(api.create(&PostParams { dry_run: true, ..Default::default() }, obj).await)
    }
    let env = TestEnv::shared();
    let ns = env.create_namespace("fake-names").await?;
    let fake = FakeApiServer::new();
    fake.register::<Role>();
    fake.register::<Service>();
    fake.register::<StatefulSet>();
    let meta = |name: &str| ObjectMeta { name: Some(name.into()), ..Default::default() };
    let service = |name: &str| Service {
        metadata: meta(name),
        spec: Some(k8s_openapi::api::core::v1::ServiceSpec {
            ports: Some(vec![k8s_openapi::api::core::v1::ServicePort { port: 80, ..Default::default() }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let long = "s".repeat(70);
    let mut answers = Vec::new();
    for client in [env.admin_client().await?, fake.client()] {
        let roles = Api::<Role>::namespaced(client.clone(), &ns);
        let services = Api::<Service>::namespaced(client.clone(), &ns);
        let sets = Api::<StatefulSet>::namespaced(client, &ns);
        answers.push(vec![
            (
                "role with a colon",
                create(&roles, &Role { metadata: meta("myop:manager"), ..Default::default() }).await?,
            ),
            ("role with a slash", create(&roles, &Role { metadata: meta("a/b"), ..Default::default() }).await?),
            ("service with a dot", create(&services, &service("a.b")).await?),
            ("service of 70", create(&services, &service(&long)).await?),
            (
                "statefulset with a dot",
                create(&sets, &StatefulSet { metadata: meta("a.b"), ..Default::default() }).await?,
            ),
        ]);
    }
    let (theirs, ours) = (&answers[0], &answers[1]);
    for ((what, server), (_, fake)) in theirs.iter().zip(ours) {
        if let (Answer::Failed { code: 422, causes: s, .. }, Answer::Failed { code: 422, causes: f, .. }) =
            (server, fake)
        {
            // The fake checks metadata only: compare the name's causes.
            let name = |c: &Vec<(String, String, String)>| {
                c.iter().filter(|c| c.0 == "metadata.name").cloned().collect::<Vec<_>>()
            };
            assert_eq!(name(s), name(f), "{what}");
            assert!(!name(s).is_empty(), "{what}: refused for its name");
        } else {
            assert!(
                matches!((server, fake), (Answer::Ok(_), Answer::Ok(_))),
                "{what}:\n  kube-apiserver: {server:?}\n  fake: {fake:?}"
            );
        }
    }
    Ok(())
}
