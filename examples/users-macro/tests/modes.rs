//! The macro and build.rs modes give the same CRD and the same object shape
//! for the same types.

use users_macro::{api, built};

#[test]
fn macro_and_build_rs_crds_are_identical() {
    let built_yaml = built::USERS_CRD_YAML;
    let body = &built_yaml[built_yaml.find("---\n").expect("a YAML document")..];
    assert_eq!(api::User::CRD_YAML, body);
    let typed: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
        serde_yaml::from_str(body).unwrap();
    assert_eq!(api::User::crd(), typed);
    let v = &typed.spec.versions[0];
    let user_id = &v.schema.as_ref().unwrap().open_api_v3_schema.as_ref().unwrap().properties.as_ref().unwrap()["spec"]
        .properties
        .as_ref()
        .unwrap()["userID"];
    assert_eq!((user_id.minimum, user_id.maximum), (Some(1.0), Some(65535.0)));
}

#[test]
fn both_modes_build_the_same_objects() {
    let a = api::User::new("alice", api::UserSpec { user_id: 7, ..Default::default() });
    let b = built::apis::auth::v1beta1::User::new(
        "alice",
        built::apis::auth::v1beta1::UserSpec { user_id: 7, ..Default::default() },
    );
    assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
    assert_eq!(serde_json::to_value(&a).unwrap()["apiVersion"], "auth.ilinux.io/v1beta1");
    assert_eq!(<api::User as kube::Resource>::plural(&()), "users");
}

#[test]
fn both_modes_generate_the_same_apply_configurations() {
    use built::client::applyconfigurations::auth::v1beta1 as b;
    let a = api::UserApplyConfiguration::new("alice", "ns")
        .with_labels([("team", "a")])
        .with_spec(api::UserSpecApplyConfiguration::new().with_user_id(7).with_groups(["dev"]));
    let built = b::UserApplyConfiguration::new("alice", "ns")
        .with_labels([("team", "a")])
        .with_spec(b::UserSpecApplyConfiguration::new().with_user_id(7).with_groups(["dev"]));
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json, serde_json::to_value(&built).unwrap());
    // Only what the builders set is sent: no `email`, `shell`, `role` defaults.
    assert_eq!(
        json,
        serde_json::json!({
            "apiVersion": "auth.ilinux.io/v1beta1",
            "kind": "User",
            "metadata": {"name": "alice", "namespace": "ns", "labels": {"team": "a"}},
            "spec": {"userID": 7, "groups": ["dev"]}
        })
    );
}

#[test]
fn both_modes_validate_alike() {
    // The same schema in both modes: an out-of-range id, a short password
    // and an unknown shell are refused with the same errors.
    let bad = api::User::new(
        "alice",
        api::UserSpec { user_id: 0, password: Some("short".into()), shell: Some("csh".into()), ..Default::default() },
    );
    let built_bad: built::apis::auth::v1beta1::User =
        serde_json::from_value(serde_json::to_value(&bad).unwrap()).unwrap();
    let a = bad.validate().unwrap_err();
    let b = built_bad.validate().unwrap_err();
    assert_eq!(a, b);
    let fields: Vec<&str> = a.0.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["spec.password", "spec.shell", "spec.userID"], "{a}");
    assert_eq!(api::User::VALIDATION_SCHEMA, built::apis::auth::v1beta1::User::VALIDATION_SCHEMA);
    assert!(api::User::new("bob", api::UserSpec { user_id: 7, ..Default::default() }).validate().is_ok());
}
