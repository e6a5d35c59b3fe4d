//! Apply configurations of built-in kinds a controller commonly owns.
//!
//! Built-in types embedded in a user's kinds get generated configurations;
//! a top-level built-in kind has none there, so the runtime carries the
//! ones controllers write most: ConfigMap.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use serde::{Deserialize, Serialize};

use super::{ApplyConfiguration, ObjectMetaApplyConfiguration, insert_entries};

/// A `v1` ConfigMap as an apply configuration (client-go's
/// `corev1.ConfigMapApplyConfiguration`). `data` and `binaryData` are
/// granular maps: each key is owned on its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapApplyConfiguration {
    /// `apiVersion`, set by [`ConfigMapApplyConfiguration::new`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind`, set by [`ConfigMapApplyConfiguration::new`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMetaApplyConfiguration>,
    /// `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<BTreeMap<String, String>>,
    /// `binaryData`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_data: Option<BTreeMap<String, ByteString>>,
    /// `immutable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
}

impl ConfigMapApplyConfiguration {
    /// The ConfigMap `name` in `namespace`, with `apiVersion` and `kind` set.
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        let mut ac = Self {
            metadata: Some(ObjectMetaApplyConfiguration::new().with_name(name).with_namespace(namespace)),
            ..Self::default()
        };
        ac.set_type_meta();
        ac
    }

    /// Changes the metadata with `f`.
    #[must_use]
    pub fn with_metadata(
        mut self,
        f: impl FnOnce(ObjectMetaApplyConfiguration) -> ObjectMetaApplyConfiguration,
    ) -> Self {
        self.metadata = Some(f(self.metadata.take().unwrap_or_default()));
        self
    }

    /// Adds entries to `data`.
    #[must_use]
    pub fn with_data(mut self, entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>) -> Self {
        insert_entries(&mut self.data, entries.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Adds entries to `binaryData`.
    #[must_use]
    pub fn with_binary_data(mut self, entries: impl IntoIterator<Item = (impl Into<String>, ByteString)>) -> Self {
        insert_entries(&mut self.binary_data, entries.into_iter().map(|(k, v)| (k.into(), v)));
        self
    }

    /// Sets `immutable`.
    #[must_use]
    pub fn with_immutable(mut self, value: bool) -> Self {
        self.immutable = Some(value);
        self
    }
}

impl ApplyConfiguration for ConfigMapApplyConfiguration {
    type Object = ConfigMap;

    fn metadata(&self) -> Option<&ObjectMetaApplyConfiguration> {
        self.metadata.as_ref()
    }

    fn metadata_mut(&mut self) -> &mut ObjectMetaApplyConfiguration {
        self.metadata.get_or_insert_with(Default::default)
    }

    fn set_type_meta(&mut self) {
        self.api_version = Some("v1".to_owned());
        self.kind = Some("ConfigMap".to_owned());
    }
}

/// The part of `config_map` that `field_manager` applied (client-go's
/// `ExtractConfigMap`).
pub fn extract_config_map(config_map: &ConfigMap, field_manager: &str) -> crate::Result<ConfigMapApplyConfiguration> {
    super::extract(config_map, field_manager, None)
}
