//! The generated fake clientset defaults and validates writes as the API
//! server does (docs/validation.md): an invalid create or update is refused
//! with a 422 whose causes are the kind's own `validate()` errors, and a
//! missing defaulted field is filled in. Patches and applies are checked
//! the same way; objects seeded into the fake are stored as given.

use codegen_runtime::client::{CreateOptions, GetOptions, PatchOptions, PatchType, UpdateOptions};
use kube_codegen_tests::validation::apis::lab::v1::{Probe, ProbeSpec};
use kube_codegen_tests::validation::client::fake::Clientset;

fn probe(port: i32, name: &str) -> Probe {
    let mut p = Probe::new("p", ProbeSpec { port, name: name.into(), ..ProbeSpec::default() });
    p.metadata.namespace = Some("default".into());
    p
}

#[tokio::test]
async fn the_fake_refuses_what_validate_refuses_and_applies_defaults() {
    let cs = Clientset::new([]).unwrap();
    let probes = cs.lab_v1().probes("default");

    let bad = probe(0, "Web");
    let expected = bad.validate().unwrap_err();
    let err = probes.create(&bad, &CreateOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    let status = match &err {
        codegen_runtime::Error::Api(status) => status.clone(),
        other => panic!("{other:?}"),
    };
    let mut causes: Vec<(String, String)> =
        status.details.unwrap().causes.into_iter().map(|c| (c.field, c.message)).collect();
    causes.sort();
    let mut ours: Vec<(String, String)> = expected.0.into_iter().map(|e| (e.field, e.message)).collect();
    ours.sort();
    assert_eq!(causes, ours);
    assert_eq!(causes.len(), 2, "{causes:?}");

    // Valid: stored, with `replicas` defaulted to 1 as the CRD says.
    let created = probes.create(&probe(80, "web"), &CreateOptions::default()).await.unwrap();
    assert_eq!(created.spec.replicas, Some(1));

    // An update breaking the immutability rule is refused too.
    let mut renamed = probes.get("p", &GetOptions::default()).await.unwrap();
    renamed.spec.name = "other".into();
    let err = probes.update(&renamed, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    assert!(format!("{err}").contains("name is immutable"), "{err}");

    // A merge patch and a server-side apply that break a bound are refused.
    let merge = PatchType::Merge(serde_json::json!({"spec": {"port": 0}}));
    let err = probes.patch("p", &merge, &PatchOptions::default()).await.unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    let apply = PatchType::Apply(serde_json::json!({
        "apiVersion": "lab.kube-codegen.test/v1", "kind": "Probe",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"port": 70000, "name": "web"}
    }));
    let opts = PatchOptions { field_manager: Some("test".into()), force: true, ..PatchOptions::default() };
    let err = probes.patch("p", &apply, &opts).await.unwrap_err();
    assert!(err.is_invalid(), "{err:?}");
    assert_eq!(probes.get("p", &GetOptions::default()).await.unwrap().spec.port, 80, "nothing refused was stored");
}

#[tokio::test]
async fn seeded_objects_are_stored_as_given() {
    let bad = probe(0, "Web");
    assert!(bad.validate().is_err());
    let cs = Clientset::new([bad.into()]).unwrap();
    let stored = cs.lab_v1().probes("default").get("p", &GetOptions::default()).await.unwrap();
    assert_eq!((stored.spec.port, stored.spec.name.as_str(), stored.spec.replicas), (0, "Web", None));
}
