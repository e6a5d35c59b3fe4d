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

#[tokio::test]
async fn macro_kinds_work_with_the_fake_api_server() {
    use codegen_runtime::client::{CreateOptions, GetOptions};
    use codegen_runtime::factory::SharedInformerFactory;
    use codegen_runtime::testing::{FakeApiServer, ResourceInfo};

    let server = FakeApiServer::new();
    server.register_resource(
        ResourceInfo::of::<api::User>().with_validation(api::User::VALIDATION_SCHEMA).with_status_subresource(false),
    );
    let mut alice = api::User::new("alice", api::UserSpec { user_id: 7, ..Default::default() });
    alice.metadata.namespace = Some("default".into());
    server.seed([alice]).unwrap();
    // `seed` stores objects as given; the inline client goes through the
    // server's defaulting and validation.
    let users = api::User::client(server.client(), "default");
    let bob = users
        .create(&api::User::new("bob", api::UserSpec { user_id: 8, ..Default::default() }), &CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(bob.spec.shell.as_deref(), Some("bash"), "the schema's default");
    assert_eq!(users.get("alice", &GetOptions::default()).await.unwrap().spec.user_id, 7);
    let bad = api::User::new("eve", api::UserSpec { user_id: 0, ..Default::default() });
    let err = users.create(&bad, &CreateOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("spec.userID"), "{err}");

    // The inline informer syncs from it, and its lister sees both.
    let factory = SharedInformerFactory::new(server.client(), None);
    let informer = api::User::informer(&factory);
    let lister = informer.lister();
    informer.informer();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|synced| *synced));
    let mut names: Vec<String> =
        lister.list(&codegen_runtime::lister::everything()).iter().filter_map(|u| u.metadata.name.clone()).collect();
    names.sort();
    assert_eq!(names, ["alice", "bob"]);
    assert_eq!(lister.users("default").get("bob").map(|u| u.spec.user_id), Some(8));
    factory.shutdown().await;
}
