//! Typed server-side apply through a generated fake clientset: the fake API
//! server gets the kind's structural schema from the generated code, so
//! list-maps merge by key, conflicts name the other manager and extract
//! reads back what was applied — the same calls as against a cluster
//! (`tests/tests/ssa_suite.rs` compares the fake's SSA with the real
//! server's step by step).

use codegen_runtime::client::ApplyOptions;
use kube_codegen_tests::scale::client::applyconfigurations::apps::v1::{
    EnvVarApplyConfiguration, WebAppApplyConfiguration, WebAppSpecApplyConfiguration, extract_web_app,
};
use kube_codegen_tests::scale::client::fake::Clientset;

fn env(name: &str, value: &str) -> EnvVarApplyConfiguration {
    EnvVarApplyConfiguration::new().with_name(name).with_value(value)
}

#[tokio::test]
async fn two_managers_share_a_web_app_on_the_fake_clientset() -> codegen_runtime::Result<()> {
    let fake = Clientset::new([])?;
    let apps = fake.apps_v1().web_apps("ns");

    let alice = WebAppApplyConfiguration::new("web", "ns").with_spec(
        WebAppSpecApplyConfiguration::new().with_image("nginx:1").with_replicas(2).with_env([env("A", "1")]),
    );
    apps.apply(&alice, &ApplyOptions::new("alice")).await?;
    let bob = WebAppApplyConfiguration::new("web", "ns")
        .with_spec(WebAppSpecApplyConfiguration::new().with_env([env("B", "2")]));
    let live = apps.apply(&bob, &ApplyOptions::new("bob")).await?;

    // `env` is a list-map keyed by `name` in the generated schema: both items stay.
    let names: Vec<&str> = live.spec.env.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    assert_eq!((live.spec.image.as_str(), live.spec.replicas), ("nginx:1", 2));
    assert_eq!(serde_json::to_value(extract_web_app(&live, "alice")?)?, serde_json::to_value(&alice)?);
    assert_eq!(serde_json::to_value(extract_web_app(&live, "bob")?)?, serde_json::to_value(&bob)?);

    // Bob asks for alice's image without force: a conflict naming alice.
    let polite = ApplyOptions { force: false, ..ApplyOptions::new("bob") };
    let take =
        bob.clone().with_spec(WebAppSpecApplyConfiguration::new().with_image("nginx:2").with_env([env("B", "2")]));
    let err = apps.apply(&take, &polite).await.expect_err("alice owns the image");
    let conflicts = err.apply_conflicts();
    assert_eq!(conflicts.len(), 1, "{err}");
    assert_eq!((conflicts[0].manager.as_str(), conflicts[0].field.as_str()), ("alice", ".spec.image"));

    // With force bob takes it; alice keeps her replicas and her env item.
    let live = apps.apply(&take, &ApplyOptions::new("bob")).await?;
    assert_eq!(live.spec.image, "nginx:2");
    let alice_owns = extract_web_app(&live, "alice")?;
    let spec = alice_owns.spec.expect("alice still owns spec fields");
    assert_eq!((spec.image, spec.replicas), (None, Some(2)));
    assert_eq!(spec.env.map(|e| e.len()), Some(1));
    Ok(())
}

/// A kind with a top-level field whose builder is also a metadata builder's
/// name (`labels`): the field keeps `with_labels`, the other metadata
/// builders stay (docs/apply.md).
#[test]
fn a_field_named_like_a_metadata_builder_keeps_the_builder() {
    use kube_codegen_tests::twokinds::client::applyconfigurations::shop::v1::ProductApplyConfiguration;
    let ac = ProductApplyConfiguration::new("p", "ns").with_labels([("shelf", "top")]).with_annotations([("a", "b")]);
    assert_eq!(
        serde_json::to_value(&ac).unwrap(),
        serde_json::json!({
            "apiVersion": "shop.example.com/v1",
            "kind": "Product",
            "metadata": {"name": "p", "namespace": "ns", "annotations": {"a": "b"}},
            "labels": {"shelf": "top"},
        })
    );
}

/// A room's apply configuration reads its flattened enum from the one
/// member named as a variant, beside a second flattened struct's members,
/// as serde reads the room itself.
#[test]
fn a_flattened_enum_beside_a_flattened_struct_reads_back() {
    use kube_codegen_tests::student::apis::example::v1::Place;
    use kube_codegen_tests::student::apis::example::v1::rooms::Room;
    use kube_codegen_tests::student::client::applyconfigurations::example::v1::RoomApplyConfiguration;

    let json = serde_json::json!({"number": 7, "boards": 2, "building": {"floor": 3}});
    let room: Room = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(room.place, Place::Building { floor: 3 });
    let config: RoomApplyConfiguration = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(config.place, Some(Place::Building { floor: 3 }), "{config:?}");
    assert_eq!(config.equipment.as_ref().and_then(|e| e.boards), Some(2), "{config:?}");
    assert_eq!(serde_json::to_value(&config).unwrap(), json);
}

/// A `#[serde(transparent)]` struct is a plain string in JSON: its apply
/// configuration field holds the type itself, so an apply sends the string
/// the schema wants and extract reads it back.
#[tokio::test]
async fn a_transparent_struct_is_applied_and_extracted_as_its_json() -> codegen_runtime::Result<()> {
    use kube_codegen_tests::scale::apis::apps::v1::Tier;
    let fake = Clientset::new([])?;
    let apps = fake.apps_v1().web_apps("ns");
    let tier = Tier { value: "gold".into() };
    let applied = WebAppApplyConfiguration::new("web", "ns")
        .with_spec(WebAppSpecApplyConfiguration::new().with_image("nginx:1").with_tier(tier.clone()));
    assert_eq!(serde_json::to_value(&applied)?["spec"]["tier"], "gold");
    let live = apps.apply(&applied, &ApplyOptions::new("alice")).await?;
    assert_eq!(live.spec.tier, Some(tier));
    assert_eq!(serde_json::to_value(extract_web_app(&live, "alice")?)?, serde_json::to_value(&applied)?);
    Ok(())
}
