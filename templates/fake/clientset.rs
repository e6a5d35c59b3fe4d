//! A clientset over the runtime's in-memory API server, for unit tests
//! (client-gen's `fake.NewSimpleClientset`).

/// The fake clientset: the real [`Clientset`](super::clientset::Clientset)
/// (through `Deref`) talking to a [`FakeApiServer`]({{ p.rt }}::testing::FakeApiServer)
/// that serves every kind of this crate.
#[derive(Clone)]
pub struct Clientset {
    server: {{ p.rt }}::testing::FakeApiServer,
    clientset: super::clientset::Clientset,
}

/// An object to seed the fake server with.
// Kinds differ in size; a seed is moved once into the server, so boxing
// the big ones would only make the callers' code longer.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Object {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
    /// A `{{ k.kind }}` (`{{ k.api_version }}`).
    {{ k.generic_variant }}({{ k.api_type }}),
{% endfor %}{% endfor %}{% endfor %}
}
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
impl ::std::convert::From<{{ k.api_type }}> for Object {
    fn from(obj: {{ k.api_type }}) -> Self {
        Object::{{ k.generic_variant }}(obj)
    }
}
{% endfor %}{% endfor %}{% endfor %}

impl Clientset {
    /// A fake clientset serving every kind of this crate, seeded with
    /// `objects` (as they are: status kept, watches see them as added).
    /// Creates and updates are defaulted and validated as the API server
    /// does it (metadata, then each kind's `validate()`), invalid ones
    /// refused with a 422; kinds without a CRD (`skip_crd`) get the metadata
    /// checks only. Kinds with a scale subresource serve `/scale` as the API
    /// server serves a custom resource's.
    /// Must be called inside a Tokio runtime.
    pub fn new(objects: impl ::std::iter::IntoIterator<Item = Object>) -> {{ p.rt }}::Result<Self> {
        let server = {{ p.rt }}::testing::FakeApiServer::new();
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
        server.register_resource(
            {{ p.rt }}::testing::ResourceInfo::of::<{{ k.api_type }}>()
                .with_status_subresource({{ k.status_subresource }})
                {%- if let Some(scale) = k.scale %}
                .with_scale_subresource({{ scale.spec|rust_str }}, {{ scale.status|rust_str }}, {% if let Some(selector) = scale.selector %}Some({{ selector|rust_str }}){% else %}None{% endif %})
                {%- endif %}
                .with_schema({{ p.rt }}::__private::serde_json::from_str({{ k.ssa_schema|rust_raw_str }}).unwrap_or_default())
                {%- if !k.skip_crd %}
                .with_validation({{ k.api_type }}::VALIDATION_SCHEMA)
                {%- else %}
                .aggregated()
                {%- endif %},
        );
{% endfor %}{% endfor %}{% endfor %}
        for object in objects {
            match object {
{% for g in groups %}{% for v in g.versions %}{% for k in v.kinds %}
                Object::{{ k.generic_variant }}(obj) => server.seed([obj])?,
{% endfor %}{% endfor %}{% endfor %}
            }
        }
        let clientset = super::clientset::Clientset::new(server.client());
        Ok(Self { server, clientset })
    }

    /// The in-memory server: recorded actions, reactors, stored objects.
    pub fn server(&self) -> &{{ p.rt }}::testing::FakeApiServer {
        &self.server
    }

    /// The real clientset talking to the fake server.
    pub fn clientset(&self) -> &super::clientset::Clientset {
        &self.clientset
    }
}

impl ::std::ops::Deref for Clientset {
    type Target = super::clientset::Clientset;

    fn deref(&self) -> &Self::Target {
        &self.clientset
    }
}
