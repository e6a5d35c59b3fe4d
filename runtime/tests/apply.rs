//! `TypedClient::apply_configuration` with the runtime's ConfigMap
//! configuration on the fake API server: what is sent, what extract reads
//! back, and the requests refused before they are sent.

use codegen_runtime::apply::{ConfigMapApplyConfiguration, OwnerReferenceApplyConfiguration, extract_config_map};
use codegen_runtime::client::{ApplyOptions, TypedClient};
use codegen_runtime::testing::FakeApiServer;
use k8s_openapi::api::core::v1::ConfigMap;

fn desired() -> ConfigMapApplyConfiguration {
    ConfigMapApplyConfiguration::new("cm", "ns")
        .with_metadata(|m| {
            m.with_labels([("app", "web")]).with_owner_references([OwnerReferenceApplyConfiguration::new()
                .with_api_version("example.k8s.io/v1")
                .with_kind("Student")
                .with_name("wang")
                .with_uid("u-1")
                .with_controller(true)])
        })
        .with_data([("school", "china")])
}

#[tokio::test]
async fn a_config_map_applied_is_extracted_back_exactly() -> codegen_runtime::Result<()> {
    let server = FakeApiServer::new();
    server.register::<ConfigMap>();
    let cms = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    let live = cms.apply_configuration(&desired(), &ApplyOptions::new("ctl")).await?;
    assert_eq!(live.data.as_ref().and_then(|d| d.get("school")).map(String::as_str), Some("china"));
    assert_eq!(extract_config_map(&live, "ctl")?, desired());

    // Another manager adds a key; ctl's extract does not change.
    let other = ConfigMapApplyConfiguration::new("cm", "ns").with_data([("extra", "1")]);
    let live = cms.apply_configuration(&other, &ApplyOptions::new("other")).await?;
    assert_eq!(live.data.as_ref().map(|d| d.len()), Some(2));
    assert_eq!(extract_config_map(&live, "ctl")?, desired());
    assert_eq!(extract_config_map(&live, "other")?, other);
    // An unknown manager owns only the identity.
    assert_eq!(extract_config_map(&live, "nobody")?, ConfigMapApplyConfiguration::new("cm", "ns"));
    Ok(())
}

#[tokio::test]
async fn requests_without_a_name_manager_or_with_another_namespace_are_refused() {
    let server = FakeApiServer::new();
    server.register::<ConfigMap>();
    let cms = TypedClient::<ConfigMap>::new(server.client(), Some("ns"));
    let nameless = ConfigMapApplyConfiguration { metadata: None, ..desired() };
    let err = cms.apply_configuration(&nameless, &ApplyOptions::new("ctl")).await.unwrap_err();
    assert!(err.to_string().contains("no metadata.name"), "{err}");
    let elsewhere = ConfigMapApplyConfiguration::new("cm", "other");
    let err = cms.apply_configuration(&elsewhere, &ApplyOptions::new("ctl")).await.unwrap_err();
    assert!(err.to_string().contains("namespace \"other\""), "{err}");
    let err = cms.apply_configuration(&desired(), &ApplyOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("field manager"), "{err}");
    assert!(server.actions().is_empty(), "nothing was sent: {:?}", server.actions());

    // A client for all namespaces applies into the configuration's namespace.
    let all = TypedClient::<ConfigMap>::new(server.client(), None);
    let live = all.apply_configuration(&desired(), &ApplyOptions::new("ctl")).await.unwrap();
    assert_eq!(live.metadata.namespace.as_deref(), Some("ns"));
}
