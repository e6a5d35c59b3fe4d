//! Informers of the `{{ g.name }}` group.
{% include "child_modules.rs" %}

/// Version accessors of the `{{ g.name }}` group.
#[derive(Clone)]
pub struct Informers {
    factory: {{ p.rt }}::factory::SharedInformerFactory,
}

impl Informers {
    /// Accessors over `factory`.
    pub fn new(factory: {{ p.rt }}::factory::SharedInformerFactory) -> Self {
        Self { factory }
    }
{% for v in g.versions %}
    /// Informers of `{{ v.api_version }}`.
    pub fn {{ v.module }}(&self) -> {{ v.module }}::Informers {
        {{ v.module }}::Informers::new(self.factory.clone())
    }
{% endfor %}
}
