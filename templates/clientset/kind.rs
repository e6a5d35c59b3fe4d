//! The typed client for `{{ k.kind }}` (`{{ k.plural }}.{{ k.group }}/{{ k.version }}`).

use {{ k.api_type }};

/// Reads and writes `{{ k.kind }}` objects{% if k.namespaced %} of one namespace{% endif %}.
///
/// Add your own methods with an `impl {{ k.client }}` block in a hand-written
/// `{{ k.module }}_expansion.rs` beside this file; the generator includes it and
/// never touches it.
#[derive(Clone)]
pub struct {{ k.client }} {
    inner: {{ p.rt }}::client::TypedClient<{{ k.rust_name }}>,
}

// The verbs are `#[inline]`: a crate compiles the ones it calls (each is a
// future over the runtime's client for this kind), not every verb of every
// kind of the crate that holds the types.
impl {{ k.client }} {
{% if k.namespaced %}
    /// A client for `{{ k.kind }}` objects in `namespace`.
    pub fn new(client: {{ p.kube }}::Client, namespace: &str) -> Self {
        Self { inner: {{ p.rt }}::client::TypedClient::new(client, ::std::option::Option::Some(namespace)) }
    }
{% else %}
    /// A client for `{{ k.kind }}` objects.
    pub fn new(client: {{ p.kube }}::Client) -> Self {
        Self { inner: {{ p.rt }}::client::TypedClient::new(client, ::std::option::Option::None) }
    }
{% endif %}

    /// The runtime's generic typed client, for anything not generated here.
    pub fn inner(&self) -> &{{ p.rt }}::client::TypedClient<{{ k.rust_name }}> {
        &self.inner
    }
{% if k.verbs.create %}
    /// Creates `obj` and returns what the server stored.
    #[inline]
    pub async fn create(&self, obj: &{{ k.rust_name }}, opts: &{{ p.rt }}::client::CreateOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        let mut obj = obj.clone();
        obj.set_type_meta();
        self.inner.create(&obj, opts).await
    }
{% endif %}{% if k.verbs.update %}
    /// Replaces `obj` (optimistic concurrency on its resourceVersion).
    #[inline]
    pub async fn update(&self, obj: &{{ k.rust_name }}, opts: &{{ p.rt }}::client::UpdateOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        let mut obj = obj.clone();
        obj.set_type_meta();
        self.inner.update(&obj, opts).await
    }
{% endif %}{% if k.verbs.update_status %}
    /// Replaces the status of `obj` through the status subresource.
    #[inline]
    pub async fn update_status(&self, obj: &{{ k.rust_name }}, opts: &{{ p.rt }}::client::UpdateOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        let mut obj = obj.clone();
        obj.set_type_meta();
        self.inner.update_status(&obj, opts).await
    }
{% endif %}{% if k.verbs.delete %}
    /// Deletes the object named `name`.
    #[inline]
    pub async fn delete(&self, name: &str, opts: &{{ p.rt }}::client::DeleteOptions) -> {{ p.rt }}::Result<()> {
        self.inner.delete(name, opts).await
    }
{% endif %}{% if k.verbs.delete_collection %}
    /// Deletes every object matching `list_opts`.
    #[inline]
    pub async fn delete_collection(&self, opts: &{{ p.rt }}::client::DeleteOptions, list_opts: &{{ p.rt }}::client::ListOptions) -> {{ p.rt }}::Result<()> {
        self.inner.delete_collection(opts, list_opts).await
    }
{% endif %}{% if k.verbs.get %}
    /// Reads the object named `name`.
    #[inline]
    pub async fn get(&self, name: &str, opts: &{{ p.rt }}::client::GetOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        self.inner.get(name, opts).await
    }
{% endif %}{% if k.verbs.list %}
    /// Lists one page of objects (honours `limit` and `continue_token`).
    #[inline]
    pub async fn list(&self, opts: &{{ p.rt }}::client::ListOptions) -> {{ p.rt }}::Result<{{ p.kube }}::core::ObjectList<{{ k.rust_name }}>> {
        self.inner.list(opts).await
    }

    /// Lists every object, following continue tokens.
    #[inline]
    pub async fn list_all(&self, opts: &{{ p.rt }}::client::ListOptions) -> {{ p.rt }}::Result<::std::vec::Vec<{{ k.rust_name }}>> {
        self.inner.list_all(opts).await
    }
{% endif %}{% if k.verbs.watch %}
    /// Watches objects matching `opts`.
    #[inline]
    pub async fn watch(
        &self,
        opts: &{{ p.rt }}::client::ListOptions,
    ) -> {{ p.rt }}::Result<{{ p.rt }}::__private::futures::stream::BoxStream<'static, {{ p.rt }}::Result<{{ p.kube }}::core::WatchEvent<{{ k.rust_name }}>>>> {
        self.inner.watch(opts).await
    }
{% endif %}{% if k.verbs.patch %}
    /// Patches the object named `name`.
    #[inline]
    pub async fn patch(&self, name: &str, patch: &{{ p.rt }}::client::PatchType, opts: &{{ p.rt }}::client::PatchOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        self.inner.patch(name, patch, opts).await
    }
{% endif %}{% if k.verbs.update_status && k.verbs.patch %}
    /// Patches the status of the object named `name`.
    #[inline]
    pub async fn patch_status(&self, name: &str, patch: &{{ p.rt }}::client::PatchType, opts: &{{ p.rt }}::client::PatchOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        self.inner.patch_status(name, patch, opts).await
    }
{% endif %}{% if k.verbs.apply %}
    /// Server-side applies `ac` as `opts.field_manager`: the manager claims
    /// exactly the fields `ac` sets. Fields another manager owns with other
    /// values fail with a conflict (see `Error::apply_conflicts`)
    /// unless `opts.force` is set.
    #[inline]
    pub async fn apply(&self, ac: &{{ k.apply_config }}, opts: &{{ p.rt }}::client::ApplyOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        self.inner.apply_configuration(ac, opts).await
    }
{% endif %}{% if k.verbs.apply_status %}
    /// Server-side applies the status in `ac` through the status subresource.
    #[inline]
    pub async fn apply_status(&self, ac: &{{ k.apply_config }}, opts: &{{ p.rt }}::client::ApplyOptions) -> {{ p.rt }}::Result<{{ k.rust_name }}> {
        self.inner.apply_configuration_status(ac, opts).await
    }
{% endif %}
{% for m in k.methods %}
{% if m.update %}
    /// `{{ m.verb }}` on the `{{ m.subresource }}` subresource.
    #[inline]
    pub async fn {{ m.name }}(&self, name: &str, value: &{{ m.result }}, opts: &{{ p.rt }}::client::UpdateOptions) -> {{ p.rt }}::Result<{{ m.result }}> {
        self.inner.update_subresource({{ m.subresource|rust_str }}, name, value, opts).await
    }
{% else %}
    /// `{{ m.verb }}` on the `{{ m.subresource }}` subresource.
    #[inline]
    pub async fn {{ m.name }}(&self, name: &str) -> {{ p.rt }}::Result<{{ m.result }}> {
        self.inner.get_subresource({{ m.subresource|rust_str }}, name).await
    }
{% endif %}
{% endfor %}
}
