//! The typed lister for `{{ k.kind }}` (lister-gen's `{{ k.lister }}`).

use {{ k.api_type }};

/// Lists `{{ k.kind }}` objects from an informer's cache. The objects are
/// shared with the cache: treat them as read-only (clone before changing).
#[derive(Clone)]
pub struct {{ k.lister }} {
    inner: {{ p.rt }}::lister::Lister<{{ k.rust_name }}>,
}

impl {{ k.lister }} {
    /// A lister over `indexer` (usually an informer's).
    pub fn new(indexer: {{ p.rt }}::indexer::Indexer<{{ k.rust_name }}>) -> Self {
        Self { inner: {{ p.rt }}::lister::Lister::new(indexer) }
    }

    /// Every cached object matching `selector` ([`everything()`]({{ p.rt }}::lister::everything) matches all).
    #[inline]
    pub fn list(&self, selector: &{{ p.rt }}::lister::Selector) -> ::std::vec::Vec<::std::sync::Arc<{{ k.rust_name }}>> {
        self.inner.list(selector)
    }
{% if k.namespaced %}
    /// The objects of one namespace.
    pub fn {{ k.accessor }}(&self, namespace: &str) -> {{ k.ns_lister }} {
        {{ k.ns_lister }} { inner: self.inner.namespace(namespace) }
    }
{% else %}
    /// The cached object named `name`.
    #[inline]
    pub fn get(&self, name: &str) -> ::std::option::Option<{{ p.rt }}::indexer::Cached<{{ k.rust_name }}>> {
        self.inner.get(name)
    }

    /// `f` of the cached object named `name`, without a handle to drop;
    /// `f` runs under the cache's read lock ([`get_by_key_with`]({{ p.rt }}::indexer::Indexer::get_by_key_with)).
    #[inline]
    pub fn get_with<R>(&self, name: &str, f: impl ::std::ops::FnOnce(&{{ k.rust_name }}) -> R) -> ::std::option::Option<R> {
        self.inner.get_with(name, f)
    }
{% endif %}
    /// The runtime's generic lister.
    pub fn inner(&self) -> &{{ p.rt }}::lister::Lister<{{ k.rust_name }}> {
        &self.inner
    }
}
{% if k.namespaced %}
/// Lists and gets `{{ k.kind }}` objects of one namespace from the cache.
#[derive(Clone)]
pub struct {{ k.ns_lister }} {
    inner: {{ p.rt }}::lister::NamespaceLister<{{ k.rust_name }}>,
}

impl {{ k.ns_lister }} {
    /// Every cached object of the namespace matching `selector`.
    #[inline]
    pub fn list(&self, selector: &{{ p.rt }}::lister::Selector) -> ::std::vec::Vec<::std::sync::Arc<{{ k.rust_name }}>> {
        self.inner.list(selector)
    }

    /// The cached object named `name` in the namespace.
    #[inline]
    pub fn get(&self, name: &str) -> ::std::option::Option<{{ p.rt }}::indexer::Cached<{{ k.rust_name }}>> {
        self.inner.get(name)
    }

    /// `f` of the cached object named `name` in the namespace, without a handle to drop;
    /// `f` runs under the cache's read lock ([`get_by_key_with`]({{ p.rt }}::indexer::Indexer::get_by_key_with)).
    #[inline]
    pub fn get_with<R>(&self, name: &str, f: impl ::std::ops::FnOnce(&{{ k.rust_name }}) -> R) -> ::std::option::Option<R> {
        self.inner.get_with(name, f)
    }
}
{% endif %}
