{% if file_docs -%}
//! Registration of the `{{ v.api_version }}` API types: the group/version
//! constants, `kube::Resource` (through k8s-openapi's `Resource`, `Metadata`
//! and `ListableResource`), list types and constructors. Like register-gen's
//! `zz_generated.register.go`.
{%- endif %}

/// The API group of this package.
pub const GROUP: &str = {{ v.group|rust_str }};

/// The API version of this package.
pub const VERSION: &str = {{ v.version|rust_str }};

/// `group/version`, as written in `apiVersion`.
pub const API_VERSION: &str = {{ v.api_version|rust_str }};

/// The group/version/resource of a resource of this package (client-go's `Resource()`).
pub fn resource(resource: &str) -> {{ p.kube }}::core::GroupVersionResource {
    {{ p.kube }}::core::GroupVersionResource::gvr(GROUP, VERSION, resource)
}

/// The group/version/kind of a kind of this package (client-go's `Kind()`).
pub fn kind(kind: &str) -> {{ p.kube }}::core::GroupVersionKind {
    {{ p.kube }}::core::GroupVersionKind::gvk(GROUP, VERSION, kind)
}
{% for k in v.kinds %}
/// A list of [`{{ k.rust_name }}`](super::{{ k.rust_name }}) (`{{ k.list_kind }}`).
pub type {{ k.list_kind_type }} = {{ p.kube }}::core::ObjectList<super::{{ k.rust_name }}>;

#[automatically_derived]
impl {{ p.k8s }}::Resource for super::{{ k.rust_name }} {
    const API_VERSION: &'static str = API_VERSION;
    const GROUP: &'static str = GROUP;
    const KIND: &'static str = {{ k.kind|rust_str }};
    const VERSION: &'static str = VERSION;
    const URL_PATH_SEGMENT: &'static str = {{ k.plural|rust_str }};
    type Scope = {{ p.k8s }}::{{ k.scope }};
}

#[automatically_derived]
impl {{ p.k8s }}::ListableResource for super::{{ k.rust_name }} {
    const LIST_KIND: &'static str = {{ k.list_kind|rust_str }};
}

#[automatically_derived]
impl {{ p.k8s }}::Metadata for super::{{ k.rust_name }} {
    type Ty = {{ p.k8s }}::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn metadata(&self) -> &Self::Ty {
        &self.{{ k.metadata_field }}
    }

    fn metadata_mut(&mut self) -> &mut Self::Ty {
        &mut self.{{ k.metadata_field }}
    }
}

impl super::{{ k.rust_name }} {
{%- if !k.skip_crd %}
    /// The OpenAPI schema of this kind's CRD version without descriptions:
    /// what [`validate`](Self::validate) checks against.
    pub const VALIDATION_SCHEMA: &'static str = {{ k.validation_schema|rust_raw_str }};

    /// Checks this object the way kube-apiserver checks a create:
    /// defaults applied, then the schema (types, bounds, lengths, patterns,
    /// enums, required fields, item and property counts), list-type
    /// uniqueness and, with the runtime's feature `cel`, the CEL rules. The
    /// errors carry the server's field paths and messages. String formats
    /// are left to the server{% if k.status_subresource %}; `status`, which a create or
    /// update ignores with the status subresource, is not checked{% endif %}.
    // Inline: compiled only in crates that call it.
    #[inline]
    pub fn validate(&self) -> ::std::result::Result<(), {{ p.rt }}::validation::FieldErrors> {
        {{ p.rt }}::validation::validate(self, Self::VALIDATION_SCHEMA)
    }

    /// Checks this object as an update of `old`: [`validate`](Self::validate)
    /// plus the transition rules (CEL rules reading `oldSelf`, such as
    /// immutability), with errors in parts the update leaves unchanged
    /// dropped, as the server ratchets them.
    #[inline]
    pub fn validate_update(&self, old: &Self) -> ::std::result::Result<(), {{ p.rt }}::validation::FieldErrors> {
        {{ p.rt }}::validation::validate_update(self, old, Self::VALIDATION_SCHEMA)
    }
{%- endif %}
{%- if k.has_new %}
    /// A new `{{ k.kind }}` named `name`{% if k.spec.is_some() %} with `spec`{% endif %}, `apiVersion` and `kind` set.
    pub fn new(name: &str{% if let Some(spec) = k.spec %}, spec: {{ spec }}{% endif %}) -> Self {
        Self {
        {%- for f in k.new_fields %}
            {%- if f.value == NewValue::Spec && f.ident == "spec" %}
            spec,
            {%- else %}
            {{ f.ident }}: {% match f.value %}
                {%- when NewValue::TypeMeta %}{{ p.kube }}::core::TypeMeta { api_version: API_VERSION.to_string(), kind: {{ k.kind|rust_str }}.to_string() }
                {%- when NewValue::ApiVersion %}API_VERSION.to_string()
                {%- when NewValue::Kind %}{{ k.kind|rust_str }}.to_string()
                {%- when NewValue::Metadata %}{{ p.k8s }}::apimachinery::pkg::apis::meta::v1::ObjectMeta { name: ::std::option::Option::Some(name.to_string()), ..::std::default::Default::default() }
                {%- when NewValue::Spec %}spec
                {%- when NewValue::None %}::std::option::Option::None
                {%- when NewValue::Default %}::std::default::Default::default()
            {%- endmatch %},
            {%- endif %}
        {%- endfor %}
        }
    }
{%- endif %}

    /// Sets `apiVersion` and `kind` to this type's values (the generated
    /// clients call it before sending an object).
    pub fn set_type_meta(&mut self) {
        {%- match k.type_meta %}
        {%- when TypeMetaView::Flatten(field) %}
        self.{{ field }} = {{ p.kube }}::core::TypeMeta { api_version: API_VERSION.to_string(), kind: {{ k.kind|rust_str }}.to_string() };
        {%- when TypeMetaView::Fields { api_version, kind } %}
        self.{{ api_version }} = API_VERSION.to_string();
        self.{{ kind }} = {{ k.kind|rust_str }}.to_string();
        {%- endmatch %}
    }
}
{% endfor %}
