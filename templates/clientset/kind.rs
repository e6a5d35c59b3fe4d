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
// kind of the crate that holds the types. They return the runtime's future
// instead of being `async fn`s that await it: an `async fn` is a state
// machine of its own for the compiler to build and check, per verb and kind
// (at 100 kinds about 140 MB of the compiler's peak memory and a tenth of a
// clean build).
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
    pub fn create<'a>(&'a self, obj: &{{ k.rust_name }}, opts: &'a {{ p.rt }}::client::CreateOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        let mut obj = obj.clone();
        obj.set_type_meta();
        self.inner.create_owned(obj, opts)
    }
{% endif %}{% if k.verbs.update %}
    /// Replaces `obj` (optimistic concurrency on its resourceVersion).
    #[inline]
    pub fn update<'a>(&'a self, obj: &{{ k.rust_name }}, opts: &'a {{ p.rt }}::client::UpdateOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        let mut obj = obj.clone();
        obj.set_type_meta();
        self.inner.update_owned(obj, opts)
    }
{% endif %}{% if k.verbs.update_status %}
    /// Replaces the status of `obj` through the status subresource.
    #[inline]
    pub fn update_status<'a>(&'a self, obj: &{{ k.rust_name }}, opts: &'a {{ p.rt }}::client::UpdateOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        let mut obj = obj.clone();
        obj.set_type_meta();
        self.inner.update_status_owned(obj, opts)
    }
{% endif %}{% if k.verbs.delete %}
    /// Deletes the object named `name`.
    #[inline]
    pub fn delete<'a>(&'a self, name: &'a str, opts: &'a {{ p.rt }}::client::DeleteOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<()>> + 'a {
        self.inner.delete(name, opts)
    }
{% endif %}{% if k.verbs.delete_collection %}
    /// Deletes every object matching `list_opts`.
    #[inline]
    pub fn delete_collection<'a>(&'a self, opts: &'a {{ p.rt }}::client::DeleteOptions, list_opts: &'a {{ p.rt }}::client::ListOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<()>> + 'a {
        self.inner.delete_collection(opts, list_opts)
    }
{% endif %}{% if k.verbs.get %}
    /// Reads the object named `name`.
    #[inline]
    pub fn get<'a>(&'a self, name: &'a str, opts: &'a {{ p.rt }}::client::GetOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        self.inner.get(name, opts)
    }
{% endif %}{% if k.verbs.list %}
    /// Lists one page of objects (honours `limit` and `continue_token`).
    #[inline]
    pub fn list<'a>(&'a self, opts: &'a {{ p.rt }}::client::ListOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ p.kube }}::core::ObjectList<{{ k.rust_name }}>>> + 'a {
        self.inner.list(opts)
    }

    /// Lists every object, following continue tokens.
    #[inline]
    pub fn list_all<'a>(&'a self, opts: &'a {{ p.rt }}::client::ListOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<::std::vec::Vec<{{ k.rust_name }}>>> + 'a {
        self.inner.list_all(opts)
    }
{% endif %}{% if k.verbs.watch %}
    /// Watches objects matching `opts`.
    #[inline]
    pub fn watch<'a>(
        &'a self,
        opts: &'a {{ p.rt }}::client::ListOptions,
    ) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ p.rt }}::__private::futures::stream::BoxStream<'static, {{ p.rt }}::Result<{{ p.kube }}::core::WatchEvent<{{ k.rust_name }}>>>>> + 'a {
        self.inner.watch(opts)
    }
{% endif %}{% if k.verbs.patch %}
    /// Patches the object named `name`.
    #[inline]
    pub fn patch<'a>(&'a self, name: &'a str, patch: &'a {{ p.rt }}::client::PatchType, opts: &'a {{ p.rt }}::client::PatchOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        self.inner.patch(name, patch, opts)
    }
{% endif %}{% if k.verbs.patch_status %}
    /// Patches the status of the object named `name`.
    #[inline]
    pub fn patch_status<'a>(&'a self, name: &'a str, patch: &'a {{ p.rt }}::client::PatchType, opts: &'a {{ p.rt }}::client::PatchOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        self.inner.patch_status(name, patch, opts)
    }
{% endif %}{% if k.verbs.apply %}
    /// Server-side applies `ac` as `opts.field_manager`: the manager claims
    /// exactly the fields `ac` sets. Fields another manager owns with other
    /// values fail with a conflict (see `Error::apply_conflicts`)
    /// unless `opts.force` is set.
    #[inline]
    pub fn apply<'a>(&'a self, ac: &'a {{ k.apply_config }}, opts: &'a {{ p.rt }}::client::ApplyOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        self.inner.apply_configuration(ac, opts)
    }
{% endif %}{% if k.verbs.apply_status %}
    /// Server-side applies the status in `ac` through the status subresource.
    #[inline]
    pub fn apply_status<'a>(&'a self, ac: &'a {{ k.apply_config }}, opts: &'a {{ p.rt }}::client::ApplyOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ k.rust_name }}>> + 'a {
        self.inner.apply_configuration_status(ac, opts)
    }
{% endif %}
{% for m in k.methods %}
{% if m.update %}
    /// `{{ m.verb }}` on the `{{ m.subresource }}` subresource.
    #[inline]
    pub fn {{ m.name }}<'a>(&'a self, name: &'a str, value: &'a {{ m.result }}, opts: &'a {{ p.rt }}::client::UpdateOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ m.result }}>> + 'a {
        self.inner.update_subresource({{ m.subresource|rust_str }}, name, value, opts)
    }
{% else if m.verb == "create" %}
    /// `create` on the `{{ m.subresource }}` subresource (POST).
    #[inline]
    pub fn {{ m.name }}<'a>(&'a self, name: &'a str, value: &'a {{ m.input }}, opts: &'a {{ p.rt }}::client::CreateOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ m.result }}>> + 'a {
        self.inner.create_subresource({{ m.subresource|rust_str }}, name, value, opts)
    }
{% else if m.verb == "patch" %}
    /// `patch` on the `{{ m.subresource }}` subresource.
    #[inline]
    pub fn {{ m.name }}<'a>(&'a self, name: &'a str, patch: &'a {{ p.rt }}::client::PatchType, opts: &'a {{ p.rt }}::client::PatchOptions) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ m.result }}>> + 'a {
        self.inner.patch_subresource({{ m.subresource|rust_str }}, name, patch, opts)
    }
{% else %}
    /// `{{ m.verb }}` on the `{{ m.subresource }}` subresource.
    #[inline]
    pub fn {{ m.name }}<'a>(&'a self, name: &'a str) -> impl ::std::future::Future<Output = {{ p.rt }}::Result<{{ m.result }}>> + 'a {
        self.inner.get_subresource({{ m.subresource|rust_str }}, name)
    }
{% endif %}
{% endfor %}
}
