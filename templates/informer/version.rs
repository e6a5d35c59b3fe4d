//! Informers of `{{ v.api_version }}`.
{% include "child_modules.rs" %}
{% for k in v.kinds %}
pub use {{ k.module }}::{{ k.informer }};
{%- endfor %}

/// Kind accessors of `{{ v.api_version }}`.
#[derive(Clone)]
pub struct Informers {
    factory: {{ p.rt }}::factory::SharedInformerFactory,
}

impl Informers {
    /// Accessors over `factory`.
    pub fn new(factory: {{ p.rt }}::factory::SharedInformerFactory) -> Self {
        Self { factory }
    }
{% for k in v.kinds %}
    /// The `{{ k.kind }}` informer and lister.
    pub fn {{ k.accessor }}(&self) -> {{ k.informer }} {
        {{ k.informer }}::new(self.factory.clone())
    }
{% endfor %}
}
