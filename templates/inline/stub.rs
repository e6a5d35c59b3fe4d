{#- Macro mode: the items of a kind whose generation failed, so that the
    user sees the one real error and not a cascade of "no function `crd`". -#}
#[allow(dead_code)]
type {{ name }}List = {{ rt }}::__private::kube::core::ObjectList<{{ name }}>;
#[allow(dead_code, clippy::all)]
impl {{ name }} {
    pub const CRD_YAML: &'static str = "";
    pub const CRD_NAME: &'static str = "";
    pub fn crd() -> {{ rt }}::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
        ::std::default::Default::default()
    }
    pub fn crd_yaml() -> &'static str {
        ""
    }
}
