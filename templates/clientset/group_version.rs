//! The `{{ v.api_version }}` client: one typed client per kind.
{% include "child_modules.rs" %}
{% for k in v.kinds %}{% if k.client_expansion %}
mod {{ k.module }}_expansion;
{%- endif %}{% endfor %}
{% for k in v.kinds %}
pub use {{ k.module }}::{{ k.client }};
{%- endfor %}

/// Typed clients for the `{{ v.api_version }}` kinds.
#[derive(Clone)]
pub struct {{ v.gv_client }} {
    client: {{ p.kube }}::Client,
}

impl {{ v.gv_client }} {
    /// A `{{ v.api_version }}` client over `client`.
    pub fn new(client: {{ p.kube }}::Client) -> Self {
        Self { client }
    }

    /// The underlying `kube::Client`.
    pub fn client(&self) -> &{{ p.kube }}::Client {
        &self.client
    }
{% for k in v.kinds %}
{% if k.namespaced %}
    /// `{{ k.kind }}` objects in `namespace`.
    pub fn {{ k.accessor }}(&self, namespace: &str) -> {{ k.client }} {
        {{ k.client }}::new(self.client.clone(), namespace)
    }
{% else %}
    /// `{{ k.kind }}` objects (cluster-scoped).
    pub fn {{ k.accessor }}(&self) -> {{ k.client }} {
        {{ k.client }}::new(self.client.clone())
    }
{% endif %}
{% endfor %}
}
