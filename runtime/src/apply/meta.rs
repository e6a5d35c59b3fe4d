//! `metav1.ObjectMeta` and `OwnerReference` as apply configurations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{insert_entries, merge_items};

/// The metadata of an apply configuration (client-go's
/// `ObjectMetaApplyConfiguration`): every field optional, sent only when set.
///
/// `labels` and `annotations` are granular maps (each key owned on its own),
/// `finalizers` a set, `ownerReferences` a list-map keyed by `uid`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetaApplyConfiguration {
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `generateName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// `namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `uid`: a precondition when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `resourceVersion`: a precondition when set (optimistic concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `labels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `annotations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `ownerReferences`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReferenceApplyConfiguration>>,
    /// `finalizers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
}

impl ObjectMetaApplyConfiguration {
    /// Empty metadata.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets `generateName`.
    #[must_use]
    pub fn with_generate_name(mut self, generate_name: impl Into<String>) -> Self {
        self.generate_name = Some(generate_name.into());
        self
    }

    /// Sets `namespace`.
    #[must_use]
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Sets `uid`.
    #[must_use]
    pub fn with_uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = Some(uid.into());
        self
    }

    /// Sets `resourceVersion`.
    #[must_use]
    pub fn with_resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.resource_version = Some(resource_version.into());
        self
    }

    /// Adds labels (a key given twice keeps the last value).
    #[must_use]
    pub fn with_labels(mut self, entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>) -> Self {
        insert_entries(&mut self.labels, entries.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Adds annotations (a key given twice keeps the last value).
    #[must_use]
    pub fn with_annotations(
        mut self,
        entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) -> Self {
        insert_entries(&mut self.annotations, entries.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Adds owner references; one with the `uid` of an earlier one replaces it.
    #[must_use]
    pub fn with_owner_references(mut self, values: impl IntoIterator<Item = OwnerReferenceApplyConfiguration>) -> Self {
        merge_items(&mut self.owner_references, values, |a, b| a.uid == b.uid);
        self
    }

    /// Adds finalizers, each once.
    #[must_use]
    pub fn with_finalizers(mut self, values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        merge_items(&mut self.finalizers, values.into_iter().map(Into::into), |a, b| a == b);
        self
    }
}

/// What the generated apply configurations of kinds call to fill their
/// `metadata`: `new` and the metadata builders (`with_name`,
/// `with_labels`, ...) of every kind are each one call of a function here,
/// named as the builder it stands for.
///
/// A body that is one call of a plain path is what costs a user's crate
/// least to compile, in every build of it: the builders of 100 kinds, as
/// method chains on the metadata instead, added about 0.4 s to each
/// rebuild of the crate after a one-line edit
/// (`codegen-cli/benches/build_cost.rs`).
pub mod metadata {
    use super::{ObjectMetaApplyConfiguration, OwnerReferenceApplyConfiguration};

    /// Applies the metadata builder `with` to `metadata`, empty when unset.
    fn update(
        metadata: &mut Option<ObjectMetaApplyConfiguration>,
        with: impl FnOnce(ObjectMetaApplyConfiguration) -> ObjectMetaApplyConfiguration,
    ) {
        *metadata = Some(with(metadata.take().unwrap_or_default()));
    }

    /// Metadata with `name` (a cluster-scoped kind's `new`).
    pub fn named(name: impl Into<String>) -> Option<ObjectMetaApplyConfiguration> {
        Some(ObjectMetaApplyConfiguration::new().with_name(name))
    }

    /// Metadata with `name` and `namespace` (a namespaced kind's `new`).
    pub fn named_in(name: impl Into<String>, namespace: impl Into<String>) -> Option<ObjectMetaApplyConfiguration> {
        Some(ObjectMetaApplyConfiguration::new().with_name(name).with_namespace(namespace))
    }

    /// [`ObjectMetaApplyConfiguration::with_name`].
    pub fn with_name(metadata: &mut Option<ObjectMetaApplyConfiguration>, value: impl Into<String>) {
        update(metadata, |m| m.with_name(value));
    }

    /// [`ObjectMetaApplyConfiguration::with_generate_name`].
    pub fn with_generate_name(metadata: &mut Option<ObjectMetaApplyConfiguration>, value: impl Into<String>) {
        update(metadata, |m| m.with_generate_name(value));
    }

    /// [`ObjectMetaApplyConfiguration::with_namespace`].
    pub fn with_namespace(metadata: &mut Option<ObjectMetaApplyConfiguration>, value: impl Into<String>) {
        update(metadata, |m| m.with_namespace(value));
    }

    /// [`ObjectMetaApplyConfiguration::with_uid`].
    pub fn with_uid(metadata: &mut Option<ObjectMetaApplyConfiguration>, value: impl Into<String>) {
        update(metadata, |m| m.with_uid(value));
    }

    /// [`ObjectMetaApplyConfiguration::with_resource_version`].
    pub fn with_resource_version(metadata: &mut Option<ObjectMetaApplyConfiguration>, value: impl Into<String>) {
        update(metadata, |m| m.with_resource_version(value));
    }

    /// [`ObjectMetaApplyConfiguration::with_labels`].
    pub fn with_labels(
        metadata: &mut Option<ObjectMetaApplyConfiguration>,
        entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) {
        update(metadata, |m| m.with_labels(entries));
    }

    /// [`ObjectMetaApplyConfiguration::with_annotations`].
    pub fn with_annotations(
        metadata: &mut Option<ObjectMetaApplyConfiguration>,
        entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) {
        update(metadata, |m| m.with_annotations(entries));
    }

    /// [`ObjectMetaApplyConfiguration::with_owner_references`].
    pub fn with_owner_references(
        metadata: &mut Option<ObjectMetaApplyConfiguration>,
        values: impl IntoIterator<Item = OwnerReferenceApplyConfiguration>,
    ) {
        update(metadata, |m| m.with_owner_references(values));
    }

    /// [`ObjectMetaApplyConfiguration::with_finalizers`].
    pub fn with_finalizers(
        metadata: &mut Option<ObjectMetaApplyConfiguration>,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) {
        update(metadata, |m| m.with_finalizers(values));
    }
}

/// An owner reference as an apply configuration (client-go's
/// `OwnerReferenceApplyConfiguration`); items of `ownerReferences` merge by
/// `uid`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReferenceApplyConfiguration {
    /// `apiVersion` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `name` of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `uid` of the owner: the list-map key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Whether the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether the owner's foreground deletion waits for this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

impl OwnerReferenceApplyConfiguration {
    /// An empty owner reference.
    pub fn new() -> Self {
        Self::default()
    }

    /// A controller reference to `owner` (client-go's `NewControllerRef`):
    /// every field set, `controller` and `blockOwnerDeletion` true.
    pub fn controller_of<K: crate::Object>(owner: &K) -> Self {
        let meta = owner.meta();
        Self {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: Some(K::kind(&()).into_owned()),
            name: meta.name.clone(),
            uid: meta.uid.clone(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
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

    /// Sets `name`.
    #[must_use]
    pub fn with_name(mut self, value: impl Into<String>) -> Self {
        self.name = Some(value.into());
        self
    }

    /// Sets `uid`.
    #[must_use]
    pub fn with_uid(mut self, value: impl Into<String>) -> Self {
        self.uid = Some(value.into());
        self
    }

    /// Sets `controller`.
    #[must_use]
    pub fn with_controller(mut self, value: bool) -> Self {
        self.controller = Some(value);
        self
    }

    /// Sets `blockOwnerDeletion`.
    #[must_use]
    pub fn with_block_owner_deletion(mut self, value: bool) -> Self {
        self.block_owner_deletion = Some(value);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The functions generated builders call fill unset metadata as the
    /// builders of the metadata itself do, and add to metadata already set.
    #[test]
    fn metadata_functions_do_what_the_metadata_builders_do() {
        let owner = || OwnerReferenceApplyConfiguration::new().with_uid("u").with_name("o");
        let mut built = metadata::named_in("a", "ns");
        metadata::with_labels(&mut built, [("app", "web")]);
        metadata::with_labels(&mut built, [("tier", "front")]);
        metadata::with_annotations(&mut built, [("note", "x")]);
        metadata::with_owner_references(&mut built, [owner()]);
        metadata::with_finalizers(&mut built, ["f", "f"]);
        metadata::with_generate_name(&mut built, "a-");
        metadata::with_uid(&mut built, "1");
        metadata::with_resource_version(&mut built, "7");
        let chained = ObjectMetaApplyConfiguration::new()
            .with_name("a")
            .with_namespace("ns")
            .with_labels([("app", "web"), ("tier", "front")])
            .with_annotations([("note", "x")])
            .with_owner_references([owner()])
            .with_finalizers(["f"])
            .with_generate_name("a-")
            .with_uid("1")
            .with_resource_version("7");
        assert_eq!(built, Some(chained));

        let mut unset = None;
        metadata::with_namespace(&mut unset, "ns");
        metadata::with_name(&mut unset, "b");
        assert_eq!(unset, metadata::named_in("b", "ns"));
        assert_eq!(metadata::named("c"), Some(ObjectMetaApplyConfiguration::new().with_name("c")));
    }

    #[test]
    fn unset_fields_are_not_sent() {
        let meta = ObjectMetaApplyConfiguration::new().with_name("a");
        assert_eq!(serde_json::to_value(&meta).unwrap(), serde_json::json!({"name": "a"}));
    }

    #[test]
    fn owner_references_merge_by_uid_and_finalizers_by_value() {
        let r = |uid: &str, name: &str| OwnerReferenceApplyConfiguration::new().with_uid(uid).with_name(name);
        let meta = ObjectMetaApplyConfiguration::new()
            .with_owner_references([r("1", "a"), r("2", "b")])
            .with_owner_references([r("1", "c")])
            .with_finalizers(["x", "y", "x"])
            .with_labels([("k", "1")])
            .with_labels([("k", "2"), ("l", "3")]);
        let refs = meta.owner_references.as_ref().unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].name.as_deref(), Some("c"));
        assert_eq!(meta.finalizers.as_deref(), Some(&["x".to_string(), "y".to_string()][..]));
        assert_eq!(meta.labels.unwrap().get("k").map(String::as_str), Some("2"));
    }
}
