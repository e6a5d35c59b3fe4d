{#- Macro mode: everything one kind needs, emitted beside its type by
    `#[genclient(version = "..")]`: the register items, the typed client,
    lister and informer in modules of their own, the CRD, and re-exports. -#}
#[doc(hidden)]
#[allow(dead_code, unused_imports, clippy::all)]
pub(crate) mod {{ module }} {
{% include "register.rs" %}
{%- if k.has_client %}
    /// The typed client.
    pub mod client {
{% include "clientset/kind.rs" %}
    }
{%- endif %}
{%- if k.has_lister %}
    /// The typed lister.
    pub mod lister {
{% include "lister/kind.rs" %}
    }
{%- endif %}
{%- if let Some(a) = apply %}{% if let Some(body) = a.body %}
    /// Apply configurations of this package's API types and of the
    /// built-in types they embed.
    pub mod applyconfigurations {
{{ body }}
    }
{%- endif %}{% endif %}
{%- if k.has_informer %}
    /// The shared informer accessor.
    pub mod informer {
{% include "informer/kind.rs" %}
    }
{%- endif %}

    impl super::{{ k.rust_name }} {
{%- if !k.skip_crd %}
        /// The CustomResourceDefinition of `{{ k.kind }}` as YAML, exactly as `kube-codegen crd` writes it.
        pub const CRD_YAML: &'static str = {{ crd_yaml|rust_str }};

        /// The name of the CustomResourceDefinition (`<plural>.<group>`).
        pub const CRD_NAME: &'static str = {{ crd_name|rust_str }};

        /// The typed CustomResourceDefinition of this kind (the same
        /// object as [`Self::CRD_YAML`]).
        pub fn crd() -> {{ p.k8s }}::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
            // Serialized by kube-codegen from the same typed value as
            // CRD_YAML; it always deserializes.
            {{ p.rt }}::__private::serde_json::from_str({{ crd_json|rust_str }}).expect("kube-codegen: the generated CRD deserializes")
        }

        /// The CRD as YAML (the same text as [`Self::CRD_YAML`]).
        pub fn crd_yaml() -> &'static str {
            Self::CRD_YAML
        }
{%- endif %}
{%- if k.has_client %}
{%- if k.namespaced %}

        /// A typed client for the objects of this kind in `namespace`.
        pub fn client(client: {{ p.kube }}::Client, namespace: &str) -> client::{{ k.client }} {
            client::{{ k.client }}::new(client, namespace)
        }
{%- else %}

        /// A typed client for the objects of this kind (cluster-scoped).
        pub fn client(client: {{ p.kube }}::Client) -> client::{{ k.client }} {
            client::{{ k.client }}::new(client)
        }
{%- endif %}
{%- endif %}
{%- if k.has_informer %}

        /// The informer of this kind in `factory` (one per factory, however
        /// often it is asked for) and its lister.
        pub fn informer(factory: &{{ p.rt }}::factory::SharedInformerFactory) -> informer::{{ k.informer }} {
            informer::{{ k.informer }}::new(factory.clone())
        }
{%- endif %}
    }
}
#[allow(unused_imports)]
{{ vis }} use {{ module }}::{
    {{ k.list_kind_type }},
{%- if k.has_client %}
    client::{{ k.client }},
{%- endif %}
{%- if k.has_lister %}
    lister::{{ k.lister }},
{%- if k.namespaced %}
    lister::{{ k.ns_lister }},
{%- endif %}
{%- endif %}
{%- if k.has_informer %}
    informer::{{ k.informer }},
{%- endif %}
};
{%- if let Some(a) = apply %}
#[allow(unused_imports)]
{{ vis }} use {{ a.host_module }}::applyconfigurations::{{ a.package_path }}::{
    {{ ac_name }},
    {{ extract }},
    {{ extract }}_from,
{%- if k.status_subresource %}
    {{ extract }}_status,
{%- endif %}
};
{%- if a.body.is_some() %}
#[allow(unused_imports)]
{{ vis }} use {{ a.host_module }}::applyconfigurations;
{%- if !a.own_types.is_empty() %}
#[allow(unused_imports)]
{{ vis }} use {{ a.host_module }}::applyconfigurations::{{ a.package_path }}::{
{%- for t in a.own_types %}
    {{ t }},
{%- endfor %}
};
{%- endif %}
{%- endif %}
{%- endif %}
