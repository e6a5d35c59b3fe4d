//! The apply configuration of a kind made of metadata, a spec and a status,
//! written once for every such kind.
//!
//! Most custom kinds have exactly that shape, and their configurations
//! differ only in the kind and in the types of `spec` and `status`. A
//! generated crate names this type once per kind
//! (`pub type StudentApplyConfiguration = ObjectApplyConfiguration<Student,
//! StudentSpecApplyConfiguration, StudentStatusApplyConfiguration,
//! NamespaceResourceScope>`) instead of declaring a struct with its own
//! serde code, constructor, metadata builders and trait impl: the compiler
//! checks and encodes that code once, in this crate, rather than once per
//! kind in the user's. A kind with a spec and no status names
//! [`NoStatus`] as its status. Kinds of another shape keep a generated
//! struct of their own with the same methods.

use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::Resource;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::{ApplyConfiguration, ConfigWriter, ObjectMetaApplyConfiguration, OwnerReferenceApplyConfiguration};
use super::{deserialize_config, metadata};
use crate::Object;

/// The apply configuration of kind `K` with a spec configured by `Spec` and
/// a status configured by `Status` ([`NoStatus`] for a kind without one);
/// `Scope` is `K`'s scope
/// (`NamespaceResourceScope` or `ClusterResourceScope`), which decides the
/// arguments of `new`.
///
/// Generated crates refer to it through an alias per kind
/// (`StudentApplyConfiguration`); its fields and methods are those a
/// generated struct for the same kind would have.
pub struct ObjectApplyConfiguration<K, Spec, Status, Scope> {
    /// `apiVersion`, set by `new`.
    pub api_version: Option<String>,
    /// `kind`, set by `new`.
    pub kind: Option<String>,
    /// `metadata`.
    pub metadata: Option<ObjectMetaApplyConfiguration>,
    /// `spec`.
    pub spec: Option<Spec>,
    /// `status`.
    pub status: Option<Status>,
    /// The kind and scope configured; holds no data (`PhantomData`), and is
    /// public so that `Config { spec: None, ..config }` works.
    pub object: PhantomData<fn() -> (K, Scope)>,
}

impl<K, Spec, Status, Scope> Default for ObjectApplyConfiguration<K, Spec, Status, Scope> {
    fn default() -> Self {
        Self { api_version: None, kind: None, metadata: None, spec: None, status: None, object: PhantomData }
    }
}

impl<K, Spec: Clone, Status: Clone, Scope> Clone for ObjectApplyConfiguration<K, Spec, Status, Scope> {
    fn clone(&self) -> Self {
        Self {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            metadata: self.metadata.clone(),
            spec: self.spec.clone(),
            status: self.status.clone(),
            object: PhantomData,
        }
    }
}

impl<K, Spec: fmt::Debug, Status: fmt::Debug, Scope> fmt::Debug for ObjectApplyConfiguration<K, Spec, Status, Scope> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectApplyConfiguration")
            .field("api_version", &self.api_version)
            .field("kind", &self.kind)
            .field("metadata", &self.metadata)
            .field("spec", &self.spec)
            .field("status", &self.status)
            .finish()
    }
}

impl<K, Spec: PartialEq, Status: PartialEq, Scope> PartialEq for ObjectApplyConfiguration<K, Spec, Status, Scope> {
    fn eq(&self, other: &Self) -> bool {
        self.api_version == other.api_version
            && self.kind == other.kind
            && self.metadata == other.metadata
            && self.spec == other.spec
            && self.status == other.status
    }
}

impl<K, Spec: Serialize, Status: Serialize, Scope> Serialize for ObjectApplyConfiguration<K, Spec, Status, Scope> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = ConfigWriter::new(serializer)?;
        map.field("apiVersion", &self.api_version)?;
        map.field("kind", &self.kind)?;
        map.field("metadata", &self.metadata)?;
        map.field("spec", &self.spec)?;
        map.field("status", &self.status)?;
        map.end()
    }
}

impl<'de, K, Spec: DeserializeOwned, Status: DeserializeOwned, Scope> Deserialize<'de>
    for ObjectApplyConfiguration<K, Spec, Status, Scope>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_config(deserializer, |fields| {
            Ok(Self {
                api_version: fields.take("apiVersion")?,
                kind: fields.take("kind")?,
                metadata: fields.take("metadata")?,
                spec: fields.take("spec")?,
                status: fields.take("status")?,
                object: PhantomData,
            })
        })
    }
}

impl<K, Spec, Status> ObjectApplyConfiguration<K, Spec, Status, NamespaceResourceScope>
where
    Self: ApplyConfiguration,
{
    /// The object named `name` in `namespace`, with `apiVersion` and `kind` set.
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self::from_metadata(metadata::named_in(name, namespace))
    }
}

impl<K, Spec, Status> ObjectApplyConfiguration<K, Spec, Status, ClusterResourceScope>
where
    Self: ApplyConfiguration,
{
    /// The object named `name`, with `apiVersion` and `kind` set.
    pub fn new(name: impl Into<String>) -> Self {
        Self::from_metadata(metadata::named(name))
    }
}

impl<K, Spec, Status, Scope> ObjectApplyConfiguration<K, Spec, Status, Scope>
where
    Self: ApplyConfiguration,
{
    /// `new` of either scope: the configuration with `metadata` and its
    /// type meta set.
    fn from_metadata(metadata: Option<ObjectMetaApplyConfiguration>) -> Self {
        let mut ac = Self { metadata, ..Default::default() };
        ac.set_type_meta();
        ac
    }
}

impl<K, Spec, Status, Scope> ObjectApplyConfiguration<K, Spec, Status, Scope> {
    /// Sets `metadata.name`.
    #[must_use]
    pub fn with_name(mut self, value: impl Into<String>) -> Self {
        metadata::with_name(&mut self.metadata, value);
        self
    }

    /// Sets `metadata.generateName`.
    #[must_use]
    pub fn with_generate_name(mut self, value: impl Into<String>) -> Self {
        metadata::with_generate_name(&mut self.metadata, value);
        self
    }

    /// Sets `metadata.namespace`.
    #[must_use]
    pub fn with_namespace(mut self, value: impl Into<String>) -> Self {
        metadata::with_namespace(&mut self.metadata, value);
        self
    }

    /// Sets `metadata.uid`.
    #[must_use]
    pub fn with_uid(mut self, value: impl Into<String>) -> Self {
        metadata::with_uid(&mut self.metadata, value);
        self
    }

    /// Sets `metadata.resourceVersion`.
    #[must_use]
    pub fn with_resource_version(mut self, value: impl Into<String>) -> Self {
        metadata::with_resource_version(&mut self.metadata, value);
        self
    }

    /// Adds `metadata.labels` entries.
    #[must_use]
    pub fn with_labels(mut self, entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>) -> Self {
        metadata::with_labels(&mut self.metadata, entries);
        self
    }

    /// Adds `metadata.annotations` entries.
    #[must_use]
    pub fn with_annotations(
        mut self,
        entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) -> Self {
        metadata::with_annotations(&mut self.metadata, entries);
        self
    }

    /// Adds `metadata.ownerReferences` (merged by `uid`).
    #[must_use]
    pub fn with_owner_references(mut self, values: impl IntoIterator<Item = OwnerReferenceApplyConfiguration>) -> Self {
        metadata::with_owner_references(&mut self.metadata, values);
        self
    }

    /// Adds `metadata.finalizers`, each once.
    #[must_use]
    pub fn with_finalizers(mut self, values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        metadata::with_finalizers(&mut self.metadata, values);
        self
    }

    /// Sets `apiVersion`.
    #[must_use]
    pub fn with_api_version(mut self, value: impl Into<String>) -> Self {
        self.api_version = Some(value.into());
        self
    }

    /// Sets `kind`.
    #[must_use]
    pub fn with_kind(mut self, value: impl Into<String>) -> Self {
        self.kind = Some(value.into());
        self
    }

    /// Sets `metadata`.
    #[must_use]
    pub fn with_metadata(mut self, value: ObjectMetaApplyConfiguration) -> Self {
        self.metadata = Some(value);
        self
    }

    /// Sets `spec`.
    #[must_use]
    pub fn with_spec(mut self, value: Spec) -> Self {
        self.spec = Some(value);
        self
    }

    /// Sets `status`.
    #[must_use]
    pub fn with_status(mut self, value: Status) -> Self {
        self.status = Some(value);
        self
    }
}

impl<K, Spec, Status, Scope> ApplyConfiguration for ObjectApplyConfiguration<K, Spec, Status, Scope>
where
    K: Object + Resource<Scope = Scope>,
    Spec: Serialize + DeserializeOwned,
    Status: Serialize + DeserializeOwned,
{
    type Object = K;

    fn metadata(&self) -> Option<&ObjectMetaApplyConfiguration> {
        self.metadata.as_ref()
    }

    fn metadata_mut(&mut self) -> &mut ObjectMetaApplyConfiguration {
        self.metadata.get_or_insert_with(Default::default)
    }

    fn set_type_meta(&mut self) {
        self.api_version = Some(K::api_version(&()).into_owned());
        self.kind = Some(K::kind(&()).into_owned());
    }
}

/// The status of a kind that has none: `ObjectApplyConfiguration<K, Spec,
/// NoStatus, Scope>` configures such a kind, and its `status` is always
/// `None` (no value of this type exists).
///
/// Reading a configuration with a `status` member into it is an error
/// naming the member, rather than dropping what was written there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoStatus {}

impl Serialize for NoStatus {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        match *self {}
    }
}

impl<'de> Deserialize<'de> for NoStatus {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(de::Error::custom("this kind has no status; remove the member"))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Namespace;
    use serde_json::{Value, json};

    use super::*;

    type DeploymentConfig = ObjectApplyConfiguration<Deployment, Value, Value, NamespaceResourceScope>;
    type NamespaceConfig = ObjectApplyConfiguration<Namespace, Value, Value, ClusterResourceScope>;

    #[test]
    fn new_names_the_object_and_sets_its_type_and_only_set_fields_are_sent() {
        let ac = DeploymentConfig::new("web", "prod").with_labels([("app", "web")]).with_spec(json!({"replicas": 2}));
        assert_eq!(ac.name(), Some("web"));
        assert_eq!(ac.namespace(), Some("prod"));
        assert_eq!(
            serde_json::to_value(&ac).unwrap(),
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}},
                "spec": {"replicas": 2},
            })
        );
        let ns = NamespaceConfig::new("prod").with_finalizers(["kubernetes", "kubernetes"]);
        assert_eq!(
            serde_json::to_value(&ns).unwrap(),
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "prod", "finalizers": ["kubernetes"]},
            })
        );
    }

    #[test]
    fn reads_back_what_it_writes_and_compares_and_updates_like_a_struct() {
        let ac = DeploymentConfig::new("web", "prod").with_status(json!({"readyReplicas": 1}));
        let text = serde_json::to_string(&ac).unwrap();
        let back: DeploymentConfig = serde_json::from_str(&text).unwrap();
        assert_eq!(back, ac);
        assert_eq!(back.clone().with_status(json!({})), DeploymentConfig { status: Some(json!({})), ..ac.clone() });
        assert_ne!(back, DeploymentConfig { metadata: None, ..ac.clone() });
        assert!(format!("{ac:?}").contains("readyReplicas"));
        let err = serde_json::from_str::<DeploymentConfig>(r#"{"kind": 3}"#).unwrap_err();
        assert!(err.to_string().contains("field `kind`"), "{err}");
    }

    #[test]
    fn a_kind_without_status_never_writes_one_and_refuses_to_read_one() {
        type SpecOnly = ObjectApplyConfiguration<Namespace, Value, NoStatus, ClusterResourceScope>;
        let ac = SpecOnly::new("prod").with_spec(json!({"finalizers": ["kubernetes"]}));
        let text = serde_json::to_string(&ac).unwrap();
        assert!(!text.contains("status"), "{text}");
        assert_eq!(serde_json::from_str::<SpecOnly>(&text).unwrap(), ac);
        let null = serde_json::from_str::<SpecOnly>(r#"{"kind": "Namespace", "status": null}"#).unwrap();
        assert_eq!(null.status, None);
        let err = serde_json::from_str::<SpecOnly>(r#"{"status": {"phase": "Active"}}"#).unwrap_err();
        assert!(err.to_string().contains("field `status`: this kind has no status"), "{err}");
    }
}
