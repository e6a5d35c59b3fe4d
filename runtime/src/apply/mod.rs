//! Typed server-side apply: apply configurations and extraction from
//! `managedFields` (client-go's `applyconfigurations` and `Extract*`).
//!
//! An apply configuration is a kind's shape with every field optional and
//! left out of the request when unset. Server-side apply makes the field
//! manager the owner of exactly the fields it sends, so a configuration
//! claims only what its builder set — a `0`, `""` or `false` the caller never
//! wrote is not sent, and another manager's value survives.
//!
//! kube-codegen generates one configuration per API type of the packages it
//! reads (`StudentApplyConfiguration`, `StudentSpecApplyConfiguration`, ..)
//! and for Kubernetes' own types embedded in them; the typed clients take
//! them in `apply` and `apply_status`. This module holds what every
//! generated configuration shares: [`ObjectMetaApplyConfiguration`], the
//! [`ApplyConfiguration`] trait the clients read names from, and
//! [`extract`], the inverse of an apply: the configuration a manager owns in
//! a live object, read from its `managedFields`.
//!
//! The update loop client-go documents for apply works unchanged:
//!
//! ```
//! use codegen_runtime::apply::{ConfigMapApplyConfiguration, extract};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! # fn demo(live: &ConfigMap) -> codegen_runtime::Result<ConfigMapApplyConfiguration> {
//! // What "my-controller" applied last time, and nothing else...
//! let mut owned: ConfigMapApplyConfiguration = extract(live, "my-controller", None)?;
//! // ...changed, and applied again as the same manager.
//! owned = owned.with_data([("mode", "fast")]);
//! # Ok(owned)
//! # }
//! ```

mod builtin;
mod extract;
mod fields;
mod meta;
mod object;

pub use builtin::{ConfigMapApplyConfiguration, extract_config_map};
pub use extract::{extract, owned_fields};
pub use fields::{ConfigWriter, Fields, deserialize_config};
pub use meta::{ObjectMetaApplyConfiguration, OwnerReferenceApplyConfiguration, metadata};
pub use object::{NoStatus, ObjectApplyConfiguration};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Object;

/// The apply configuration of a kind: what a typed client's `apply` sends.
///
/// Generated for every kind of another shape than metadata, spec and status;
/// the runtime implements it for [`ObjectApplyConfiguration`] (the kinds of
/// that shape) and [`ConfigMapApplyConfiguration`].
pub trait ApplyConfiguration: Serialize + DeserializeOwned {
    /// The kind this configures.
    type Object: Object;

    /// The configuration's metadata, if any field of it is set.
    fn metadata(&self) -> Option<&ObjectMetaApplyConfiguration>;

    /// Mutable metadata, created empty when unset.
    fn metadata_mut(&mut self) -> &mut ObjectMetaApplyConfiguration;

    /// Sets `apiVersion` and `kind` to the kind's.
    fn set_type_meta(&mut self);

    /// `metadata.name`, when set and not empty.
    fn name(&self) -> Option<&str> {
        self.metadata().and_then(|m| m.name.as_deref()).filter(|n| !n.is_empty())
    }

    /// `metadata.namespace`, when set and not empty.
    fn namespace(&self) -> Option<&str> {
        self.metadata().and_then(|m| m.namespace.as_deref()).filter(|n| !n.is_empty())
    }
}

/// Appends `values` to an optional list, replacing the items `same` says
/// are the same entry (list-map keys, set members) instead of adding them
/// twice. Generated builders call it.
pub fn merge_items<T>(list: &mut Option<Vec<T>>, values: impl IntoIterator<Item = T>, same: impl Fn(&T, &T) -> bool) {
    let list = list.get_or_insert_with(Vec::new);
    for value in values {
        match list.iter_mut().find(|old| same(old, &value)) {
            Some(old) => *old = value,
            None => list.push(value),
        }
    }
}

/// Appends `values` to an optional list (an atomic list: the server takes
/// the list as a whole). Generated builders call it.
pub fn push_items<T>(list: &mut Option<Vec<T>>, values: impl IntoIterator<Item = T>) {
    list.get_or_insert_with(Vec::new).extend(values);
}

/// Inserts `entries` into an optional map. Generated builders call it.
pub fn insert_entries<V>(
    map: &mut Option<std::collections::BTreeMap<String, V>>,
    entries: impl IntoIterator<Item = (String, V)>,
) {
    map.get_or_insert_with(Default::default).extend(entries);
}
