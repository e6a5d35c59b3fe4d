//! The typed shared informer factory (informer-gen's
//! `informers/externalversions`): one informer per kind however many callers
//! ask, group/version accessors, and a generic lookup by resource.
{% include "child_modules.rs" %}

/// A shared informer factory over the kinds of this crate.
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: {{ p.rt }}::factory::SharedInformerFactory,
}

impl SharedInformerFactory {
    /// A factory over `client` with a default resync period (`None`: never).
    pub fn new(client: {{ p.kube }}::Client, default_resync: ::std::option::Option<::std::time::Duration>) -> Self {
        Self { inner: {{ p.rt }}::factory::SharedInformerFactory::new(client, default_resync) }
    }

    /// Wraps a runtime factory built with its builder (namespace, list-option
    /// tweaks, per-kind resync, transforms).
    pub fn from_runtime(inner: {{ p.rt }}::factory::SharedInformerFactory) -> Self {
        Self { inner }
    }

    /// The runtime factory, for kinds of other crates (`informer_for::<K>()`).
    pub fn runtime(&self) -> &{{ p.rt }}::factory::SharedInformerFactory {
        &self.inner
    }

    /// Starts every informer created so far that is not running yet.
    pub fn start(&self) {
        self.inner.start()
    }

    /// Waits until every started informer has synced; keyed `group/version/Kind`.
    pub async fn wait_for_cache_sync(&self) -> ::std::collections::BTreeMap<::std::string::String, bool> {
        self.inner.wait_for_cache_sync().await
    }

    /// Stops every informer and waits for them.
    pub async fn shutdown(&self) {
        self.inner.shutdown().await
    }
{% for g in groups %}
    /// Informers of the `{{ g.name }}` group.
    pub fn {{ g.module }}(&self) -> {{ g.module }}::Informers {
        {{ g.module }}::Informers::new(self.inner.clone())
    }
{% endfor %}

    /// The informer of a resource, by group/version/resource (informer-gen's `ForResource`).
    #[inline]
    pub fn for_resource(&self, gvr: &{{ p.kube }}::core::GroupVersionResource) -> ::std::option::Option<GenericInformer> {
        match (gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str()) {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
            ({{ k.group|rust_str }}, {{ k.version|rust_str }}, {{ k.plural|rust_str }}) => {
                ::std::option::Option::Some(GenericInformer::{{ k.generic_variant }}(self.inner.informer_for::<{{ k.api_type }}>()))
            }
{% endfor %}{% endfor %}{% endfor %}
            _ => ::std::option::Option::None,
        }
    }
}

/// An informer found by [`SharedInformerFactory::for_resource`].
#[derive(Clone)]
pub enum GenericInformer {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
    /// `{{ k.plural }}.{{ k.group }}/{{ k.version }}`
    {{ k.generic_variant }}({{ p.rt }}::informer::SharedIndexInformer<{{ k.api_type }}>),
{% endfor %}{% endfor %}{% endfor %}
}

impl GenericInformer {
    /// Whether the informer's cache has synced.
    #[inline]
    pub fn has_synced(&self) -> bool {
        match self {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
            GenericInformer::{{ k.generic_variant }}(i) => i.has_synced(),
{% endfor %}{% endfor %}{% endfor %}
        }
    }

    /// Registers `handler` with the informer, handing it each object
    /// without naming its type (client-go's `GenericInformer.Informer()`'s
    /// `AddEventHandler`).
    #[inline]
    pub fn add_event_handler(&self, handler: impl {{ p.rt }}::lister::GenericEventHandler) -> {{ p.rt }}::informer::HandlerRegistration {
        match self {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
            GenericInformer::{{ k.generic_variant }}(i) => {{ p.rt }}::informer::SharedIndexInformer::add_generic_event_handler(i, handler),
{% endfor %}{% endfor %}{% endfor %}
        }
    }

    /// A lister of the informer's cache that hands out its objects without
    /// naming their type (client-go's `GenericInformer.Lister`).
    #[inline]
    pub fn lister(&self) -> {{ p.rt }}::lister::GenericLister {
        match self {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
            GenericInformer::{{ k.generic_variant }}(i) => {{ p.rt }}::lister::GenericLister::new(&i.indexer()),
{% endfor %}{% endfor %}{% endfor %}
        }
    }
}
