{% if file_docs -%}
//! {{ doc }}
{%- endif %}
{% include "child_modules.rs" %}
{#- Prelude names only: these modules declare no other items of those names
    and import none. #}
{% for t in types %}
{%- if let Some((k, spec, status)) = t.shared() %}
#[doc = {{ t.doc|rust_str }}]
pub type {{ t.name }} = {{ p.rt }}::apply::ObjectApplyConfiguration<
    {{ k.object }},
    {{ spec }},
    {% if let Some(status) = status %}{{ status }}{% else %}{{ p.rt }}::apply::NoStatus{% endif %},
    {{ p.rt }}::__private::k8s_openapi::{% if k.namespaced %}NamespaceResourceScope{% else %}ClusterResourceScope{% endif %},
>;
{%- else %}
#[doc = {{ t.doc|rust_str }}]
#[derive(Clone, Default{% if t.derive_debug %}, Debug{% endif %}{% if t.derive_eq %}, PartialEq{% endif %})]
pub struct {{ t.name }} {
{%- for f in t.fields %}
    #[doc = {{ f.doc|rust_str }}]
    pub {{ f.ident }}: Option<{% if f.boxed %}Box<{{ f.ty }}>{% else %}{{ f.ty }}{% endif %}>,
{%- endfor %}
}

impl {{ p.rt }}::__private::serde::Serialize for {{ t.name }} {
    fn serialize<S: {{ p.rt }}::__private::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let {% if !t.fields.is_empty() %}mut {% endif %}map = {{ p.rt }}::apply::ConfigWriter::new(serializer)?;
{%- for f in t.fields %}
{%- if f.flatten %}
        map.flatten(&self.{{ f.ident }})?;
{%- else %}
        map.field({{ f.json|rust_str }}, &self.{{ f.ident }})?;
{%- endif %}
{%- endfor %}
        map.end()
    }
}

impl<'de> {{ p.rt }}::__private::serde::Deserialize<'de> for {{ t.name }} {
    fn deserialize<D: {{ p.rt }}::__private::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        {{ p.rt }}::apply::deserialize_config(deserializer, |{% if t.fields.is_empty() %}_{% endif %}fields| {
            Ok(Self {
{%- for f in t.fields %}{% if !f.flatten %}
                {{ f.ident }}: fields.take({{ f.json|rust_str }})?,
{%- endif %}{% endfor %}
{%- for f in t.fields %}{% if f.flatten %}
{%- if f.variant %}
                {{ f.ident }}: fields.rest_variant(),
{%- else %}
                {{ f.ident }}: fields.rest(),
{%- endif %}
{%- endif %}{% endfor %}
            })
        })
    }
}

impl {{ t.name }} {
{%- match t.kind %}
{%- when Some with (k) %}
{%- if k.namespaced %}
    /// The `{{ k.kind }}` named `name` in `namespace`, with `apiVersion` and `kind` set.
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        let mut ac = Self {
            {{ k.metadata }}: {{ p.rt }}::apply::metadata::named_in(name, namespace),
            ..Default::default()
        };
        {{ p.rt }}::apply::ApplyConfiguration::set_type_meta(&mut ac);
        ac
    }
{%- else %}
    /// The `{{ k.kind }}` named `name`, with `apiVersion` and `kind` set.
    pub fn new(name: impl Into<String>) -> Self {
        let mut ac = Self {
            {{ k.metadata }}: {{ p.rt }}::apply::metadata::named(name),
            ..Default::default()
        };
        {{ p.rt }}::apply::ApplyConfiguration::set_type_meta(&mut ac);
        ac
    }
{%- endif %}
{%- for (b, field) in k.meta_builders %}
{%- if b == "with_labels" || b == "with_annotations" %}

    /// Adds `metadata.{{ field }}` entries.
    #[must_use]
    pub fn {{ b }}(mut self, entries: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>) -> Self {
        {{ p.rt }}::apply::metadata::{{ b }}(&mut self.{{ k.metadata }}, entries);
        self
    }
{%- else if b == "with_owner_references" %}

    /// Adds `metadata.ownerReferences` (merged by `uid`).
    #[must_use]
    pub fn {{ b }}(mut self, values: impl IntoIterator<Item = {{ p.rt }}::apply::OwnerReferenceApplyConfiguration>) -> Self {
        {{ p.rt }}::apply::metadata::{{ b }}(&mut self.{{ k.metadata }}, values);
        self
    }
{%- else if b == "with_finalizers" %}

    /// Adds `metadata.finalizers`, each once.
    #[must_use]
    pub fn {{ b }}(mut self, values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        {{ p.rt }}::apply::metadata::{{ b }}(&mut self.{{ k.metadata }}, values);
        self
    }
{%- else %}

    /// Sets `metadata.{{ field }}`.
    #[must_use]
    pub fn {{ b }}(mut self, value: impl Into<String>) -> Self {
        {{ p.rt }}::apply::metadata::{{ b }}(&mut self.{{ k.metadata }}, value);
        self
    }
{%- endif %}
{%- endfor %}
{%- when None %}
    /// An empty configuration: nothing is sent until a builder sets it.
    pub fn new() -> Self {
        Default::default()
    }
{%- endmatch %}
{%- for f in t.fields %}

    #[doc = {{ f.builder_doc|rust_str }}]
    #[must_use]
{%- if f.mode == "list" %}
    pub fn {{ f.builder }}(mut self, values: impl IntoIterator<Item = {{ f.item_param }}>) -> Self {
{%- match f.same %}
{%- when Some with (same) %}
        {{ p.rt }}::apply::merge_items(&mut self.{{ f.ident }}, {% if f.item_into %}values.into_iter().map(Into::into){% else %}values{% endif %}, |a: &{{ f.item }}, b: &{{ f.item }}| { {{ same }} });
{%- when None %}
        {{ p.rt }}::apply::push_items(&mut self.{{ f.ident }}, {% if f.item_into %}values.into_iter().map(Into::into){% else %}values{% endif %});
{%- endmatch %}
        self
    }
{%- else if f.mode == "map" %}
    pub fn {{ f.builder }}(mut self, entries: impl IntoIterator<Item = (impl Into<String>, {{ f.item_param }})>) -> Self {
        {{ p.rt }}::apply::insert_entries(&mut self.{{ f.ident }}, entries.into_iter().map(|(k, v)| (k.into(), v{% if f.item_into %}.into(){% endif %})));
        self
    }
{%- else %}
    pub fn {{ f.builder }}(mut self, value: {{ f.param }}) -> Self {
        self.{{ f.ident }} = Some({% if f.boxed %}Box::new(value){% else %}value{% if f.into %}.into(){% endif %}{% endif %});
        self
    }
{%- endif %}
{%- endfor %}
}
{%- match t.kind %}
{%- when Some with (k) %}

impl {{ p.rt }}::apply::ApplyConfiguration for {{ t.name }} {
    type Object = {{ k.object }};

    fn metadata(&self) -> Option<&{{ p.rt }}::apply::ObjectMetaApplyConfiguration> {
        self.{{ k.metadata }}.as_ref()
    }

    fn metadata_mut(&mut self) -> &mut {{ p.rt }}::apply::ObjectMetaApplyConfiguration {
        self.{{ k.metadata }}.get_or_insert_with(Default::default)
    }

    fn set_type_meta(&mut self) {
        self.api_version = Some({{ k.api_version|rust_str }}.into());
        self.kind = Some({{ k.kind|rust_str }}.into());
    }
}
{%- when None %}
{%- endmatch %}
{%- endif %}
{%- match t.kind %}
{%- when Some with (k) %}

/// The apply configuration `field_manager` owns in `obj`, read from its
/// `managedFields` (client-go's `Extract{{ k.kind }}`): change it and apply it
/// again as the same manager to update exactly that manager's fields.
#[inline]
pub fn {{ k.extract }}(obj: &{{ k.object }}, field_manager: &str) -> {{ p.rt }}::Result<{{ t.name }}> {
    {{ p.rt }}::apply::extract(obj, field_manager, None)
}

/// What `field_manager` owns in `obj` through `subresource` (`""` for the
/// object itself, `"status"`, `"scale"`, ...; client-go's
/// `Extract{{ k.kind }}From`).
#[inline]
pub fn {{ k.extract }}_from(obj: &{{ k.object }}, field_manager: &str, subresource: &str) -> {{ p.rt }}::Result<{{ t.name }}> {
    {{ p.rt }}::apply::extract(obj, field_manager, Some(subresource).filter(|s| !s.is_empty()))
}
{%- match k.extract_status %}
{%- when Some with (status) %}

/// The status `field_manager` owns in `obj` through the status subresource
/// (client-go's `Extract{{ k.kind }}Status`).
#[inline]
pub fn {{ status }}(obj: &{{ k.object }}, field_manager: &str) -> {{ p.rt }}::Result<{{ t.name }}> {
    {{ p.rt }}::apply::extract(obj, field_manager, Some("status"))
}
{%- when None %}
{%- endmatch %}
{%- when None %}
{%- endmatch %}
{% endfor %}
