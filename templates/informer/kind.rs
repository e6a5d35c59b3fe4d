//! The shared informer and lister of `{{ k.kind }}`.

use {{ k.api_type }};

/// Access to the factory's one `{{ k.kind }}` informer and its lister.
#[derive(Clone)]
pub struct {{ k.informer }} {
    factory: {{ p.rt }}::factory::SharedInformerFactory,
}

impl {{ k.informer }} {
    /// Accessor over `factory`.
    pub fn new(factory: {{ p.rt }}::factory::SharedInformerFactory) -> Self {
        Self { factory }
    }

    /// The shared informer (created on first use, started by the factory's `start`).
    #[inline]
    pub fn informer(&self) -> {{ p.rt }}::informer::SharedIndexInformer<{{ k.rust_name }}> {
        self.factory.informer_for::<{{ k.rust_name }}>()
    }
{% if k.has_lister %}
    /// A lister over the informer's cache.
    #[inline]
    pub fn lister(&self) -> {{ k.listers_path }}::{{ k.lister }} {
        {{ k.listers_path }}::{{ k.lister }}::new(self.informer().indexer())
    }
{% endif %}}
