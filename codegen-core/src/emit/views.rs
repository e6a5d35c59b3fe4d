//! View models: every name and path the Rust templates print, computed from
//! the model in one place so the templates decide nothing.

use std::collections::BTreeMap;

use crate::ident::{plural_type_name, rust_ident, snake_case, upper_camel};
use crate::markers::Verb;
use crate::model::{Body, Group, Kind, Model, TypeMetaForm, TypeRef, Version};

/// Paths to the runtime and its re-exported dependencies.
#[derive(Clone, Debug)]
pub struct Paths {
    /// The runtime crate (`::codegen_runtime`).
    pub rt: String,
    /// kube, through the runtime.
    pub kube: String,
    /// k8s-openapi, through the runtime.
    pub k8s: String,
}

impl Paths {
    /// Paths under `runtime`.
    pub fn new(runtime: &str) -> Self {
        Paths {
            rt: runtime.to_string(),
            kube: format!("{runtime}::__private::kube"),
            k8s: format!("{runtime}::__private::k8s_openapi"),
        }
    }
}

/// Which verbs a typed client has.
#[derive(Clone, Debug, Default)]
#[allow(missing_docs)]
pub struct Verbs {
    pub create: bool,
    pub update: bool,
    pub update_status: bool,
    pub delete: bool,
    pub delete_collection: bool,
    pub get: bool,
    pub list: bool,
    pub watch: bool,
    pub patch: bool,
    /// `patch` on the status subresource: with `patch` on a kind that has
    /// one (client-go's `Patch(.., "status")`), whatever `update_status`.
    pub patch_status: bool,
    pub apply: bool,
    pub apply_status: bool,
}

/// An extra `method(..)` of a typed client.
#[derive(Clone, Debug)]
pub struct MethodView {
    /// Rust method name.
    pub name: String,
    /// Verb spelling.
    pub verb: String,
    /// Subresource.
    pub subresource: String,
    /// Whether it is an update (PUT) rather than a get.
    pub update: bool,
    /// Result (and, for updates, input) type.
    pub result: String,
    /// What a `create` sends (its `input`, else the result type).
    pub input: String,
}

/// A kind as the templates see it.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct KindView {
    pub rust_name: String,
    pub api_type: String,
    pub kind: String,
    pub plural: String,
    pub list_kind: String,
    pub list_kind_type: String,
    pub group: String,
    pub version: String,
    pub api_version: String,
    pub namespaced: bool,
    pub scope: String,
    pub module: String,
    pub accessor: String,
    pub client: String,
    pub lister: String,
    pub ns_lister: String,
    pub informer: String,
    pub generic_variant: String,
    pub verbs: Verbs,
    pub methods: Vec<MethodView>,
    pub spec: Option<String>,
    /// The fields `new()` sets, in declaration order.
    pub new_fields: Vec<NewField>,
    /// Whether `new()` can be written: every field other than the type
    /// meta, metadata and spec has a known `Default`.
    pub has_new: bool,
    /// The Rust field serialized as `metadata`.
    pub metadata_field: String,
    /// Where `apiVersion` and `kind` live.
    pub type_meta: TypeMetaView,
    pub has_client: bool,
    pub has_lister: bool,
    pub has_informer: bool,
    pub status_subresource: bool,
    /// The scale subresource's paths, which the fake API server serves
    /// `/scale` from.
    pub scale: Option<ScaleView>,
    /// No CRD (`skip_crd`): no `validate()`, the fake does not validate.
    pub skip_crd: bool,
    pub client_expansion: bool,
    pub listers_path: String,
    /// The path of the kind's apply configuration from its client module.
    pub apply_config: String,
    /// The structural schema the fake API server applies with (JSON; set
    /// for the fake clientset only).
    pub ssa_schema: String,
    /// The schema `validate()` checks against (JSON; set for the register
    /// code only).
    pub validation_schema: String,
}

/// A kind's scale subresource: the JSON paths its CRD gives.
#[derive(Clone, Debug)]
pub struct ScaleView {
    /// `specReplicasPath`.
    pub spec: String,
    /// `statusReplicasPath`.
    pub status: String,
    /// `labelSelectorPath`.
    pub selector: Option<String>,
}

/// Where a kind keeps `apiVersion` and `kind`.
#[derive(Clone, Debug)]
pub enum TypeMetaView {
    /// A flattened `kube::core::TypeMeta` field.
    Flatten(String),
    /// Two string fields.
    Fields {
        /// The `apiVersion` field.
        api_version: String,
        /// The `kind` field.
        kind: String,
    },
}

/// One field initializer of a kind's `new()`.
#[derive(Clone, Debug)]
pub struct NewField {
    /// The field (a Rust identifier).
    pub ident: String,
    /// Its value.
    pub value: NewValue,
}

/// The value `new()` gives a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewValue {
    /// `TypeMeta { api_version, kind }`.
    TypeMeta,
    /// The API version string.
    ApiVersion,
    /// The kind string.
    Kind,
    /// `ObjectMeta` with the name.
    Metadata,
    /// The `spec` argument.
    Spec,
    /// `None`.
    None,
    /// `Default::default()`.
    Default,
}

/// A version as the templates see it.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct VersionView {
    pub group: String,
    pub version: String,
    pub api_version: String,
    pub module: String,
    pub gv_client: String,
    pub accessor: String,
    pub kinds: Vec<KindView>,
}

/// A group as the templates see it.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct GroupView {
    pub name: String,
    pub module: String,
    pub versions: Vec<VersionView>,
}

/// Builds the views of the whole model.
pub fn groups(model: &Model, p: &Paths, exceptions: &BTreeMap<String, String>) -> Vec<GroupView> {
    model.groups.iter().map(|g| group(g, p, exceptions)).collect()
}

/// The views restricted to kinds matching `keep`; empty versions and groups dropped.
pub fn filter(groups: &[GroupView], keep: impl Fn(&KindView) -> bool) -> Vec<GroupView> {
    groups
        .iter()
        .filter_map(|g| {
            let versions: Vec<VersionView> = g
                .versions
                .iter()
                .filter_map(|v| {
                    let kinds: Vec<KindView> = v.kinds.iter().filter(|k| keep(k)).cloned().collect();
                    (!kinds.is_empty()).then(|| VersionView { kinds, ..v.clone() })
                })
                .collect();
            (!versions.is_empty()).then(|| GroupView { versions, ..g.clone() })
        })
        .collect()
}

/// The Rust module of the group in directory `package`.
pub(crate) fn group_module(package: &str) -> String {
    rust_ident(&package.replace('-', "_"))
}

/// A kind's variant in the generated `GenericInformer` and the fake's
/// object enum: group module, version and type, in UpperCamelCase.
pub(crate) fn generic_variant(group_module: &str, version: &str, rust_name: &str) -> String {
    format!("{}{}{rust_name}", upper_camel(group_module.trim_start_matches("r#")), upper_camel(version))
}

fn group(g: &Group, p: &Paths, exceptions: &BTreeMap<String, String>) -> GroupView {
    let module = group_module(&g.package);
    GroupView {
        name: g.name.clone(),
        module: module.clone(),
        versions: g.versions.iter().map(|v| version(g, v, &module, p, exceptions)).collect(),
    }
}

fn version(
    g: &Group,
    v: &Version,
    group_module: &str,
    p: &Paths,
    exceptions: &BTreeMap<String, String>,
) -> VersionView {
    let gv = format!("{}_{}", group_module.trim_start_matches("r#"), v.name);
    VersionView {
        group: g.name.clone(),
        version: v.name.clone(),
        api_version: format!("{}/{}", g.name, v.name),
        module: rust_ident(&v.name),
        gv_client: format!("{}Client", upper_camel(&gv)),
        accessor: rust_ident(&gv),
        kinds: v.kinds.iter().map(|k| kind(g, v, k, group_module, p, exceptions)).collect(),
    }
}

fn kind(
    g: &Group,
    v: &Version,
    k: &Kind,
    group_module: &str,
    p: &Paths,
    exceptions: &BTreeMap<String, String>,
) -> KindView {
    let has = |verb: Verb| k.has_verb(verb);
    let verbs = Verbs {
        create: has(Verb::Create),
        update: has(Verb::Update),
        update_status: has(Verb::UpdateStatus),
        delete: has(Verb::Delete),
        delete_collection: has(Verb::DeleteCollection),
        get: has(Verb::Get),
        list: has(Verb::List),
        watch: has(Verb::Watch),
        patch: has(Verb::Patch),
        patch_status: has(Verb::Patch) && k.status_subresource,
        apply: has(Verb::Apply),
        apply_status: has(Verb::ApplyStatus),
    };
    let methods = k
        .client
        .as_ref()
        .map(|c| {
            c.methods
                .iter()
                .map(|m| MethodView {
                    name: rust_ident(&m.name.value),
                    verb: m.verb.value.as_str().to_string(),
                    subresource: m.subresource.as_ref().map(|s| s.value.clone()).unwrap_or_default(),
                    update: m.verb.value == Verb::Update,
                    result: m.result.as_ref().or(m.input.as_ref()).map_or_else(
                        || format!("{}::{}", v.module_path, k.rust_name),
                        |r| absolute_type(&r.value, &v.module_path, p),
                    ),
                    input: m.input.as_ref().or(m.result.as_ref()).map_or_else(
                        || format!("{}::{}", v.module_path, k.rust_name),
                        |r| absolute_type(&r.value, &v.module_path, p),
                    ),
                })
                .collect()
        })
        .unwrap_or_default();
    let module = rust_ident(&snake_case(&k.rust_name));
    let type_meta = match &k.type_meta {
        TypeMetaForm::Flatten(field) => TypeMetaView::Flatten(rust_ident(field)),
        TypeMetaForm::Fields { api_version, kind } => {
            TypeMetaView::Fields { api_version: rust_ident(api_version), kind: rust_ident(kind) }
        }
    };
    KindView {
        rust_name: k.rust_name.clone(),
        api_type: format!("{}::{}", v.module_path, k.rust_name),
        kind: k.kind.clone(),
        plural: k.plural.clone(),
        list_kind: k.list_kind.clone(),
        list_kind_type: format!("{}List", k.rust_name),
        group: g.name.clone(),
        version: v.name.clone(),
        api_version: format!("{}/{}", g.name, v.name),
        namespaced: k.namespaced,
        scope: if k.namespaced { "NamespaceResourceScope" } else { "ClusterResourceScope" }.to_string(),
        accessor: rust_ident(&snake_case(&plural_type_name(&k.rust_name, exceptions))),
        client: format!("{}Client", k.rust_name),
        lister: format!("{}Lister", k.rust_name),
        ns_lister: format!("{}NamespaceLister", k.rust_name),
        informer: format!("{}Informer", k.rust_name),
        generic_variant: generic_variant(group_module, &v.name, &k.rust_name),
        verbs,
        methods,
        spec: spec_path(v, k, p),
        new_fields: new_fields(v, k),
        has_new: has_new(v, k),
        metadata_field: rust_ident(&k.metadata_field),
        type_meta,
        has_client: k.client.is_some(),
        has_lister: k.has_lister(),
        has_informer: k.has_informer(),
        status_subresource: k.status_subresource,
        scale: k.scale.as_ref().map(|s| ScaleView {
            spec: s.spec_replicas_path.value.clone(),
            status: s.status_replicas_path.value.clone(),
            selector: s.label_selector_path.as_ref().map(|p| p.value.clone()),
        }),
        skip_crd: k.skip_crd,
        client_expansion: false,
        listers_path: format!("super::super::super::super::listers::{group_module}::{}", rust_ident(&v.name)),
        apply_config: super::applyconfig::kind_path(
            "super::super::super::super::applyconfigurations",
            &v.package,
            &k.rust_name,
        ),
        ssa_schema: String::new(),
        validation_schema: String::new(),
        module,
    }
}

/// A `method(result = "..")` path made absolute: `crate::`/`::`/`self::`
/// paths stay; a bare name refers to the version module; `k8s_openapi::..`
/// goes through the runtime's re-export (a client crate need not depend on
/// k8s-openapi itself); anything else is a crate path (`::..`).
fn absolute_type(ty: &str, module_path: &str, p: &Paths) -> String {
    if ty.starts_with("::") || ty.starts_with("crate::") {
        ty.to_string()
    } else if !ty.contains("::") {
        format!("{module_path}::{ty}")
    } else if let Some(rest) = ty.strip_prefix("k8s_openapi::") {
        format!("{}::{rest}", p.k8s)
    } else {
        format!("::{ty}")
    }
}

/// The type of `Kind::new`'s `spec` argument, as a path from the register
/// module (a child of the version module).
fn spec_path(v: &Version, k: &Kind, p: &Paths) -> Option<String> {
    match k.spec_type.as_ref()? {
        TypeRef::Named(key) if key.package == v.package => Some(format!("super::{}", key.name)),
        TypeRef::Named(key) => {
            let apis = v.module_path.rsplitn(3, "::").nth(2)?;
            let (group, version) = key.package.split_once('/')?;
            Some(format!("{apis}::{}::{}::{}", rust_ident(&group.replace('-', "_")), rust_ident(version), key.name))
        }
        TypeRef::Builtin(def) => {
            Some(format!("{}::{}", p.k8s, crate::builtin::path_of_definition(def).trim_start_matches("k8s_openapi::")))
        }
        _ => None,
    }
}

/// Whether a kind's `new()` compiles: every field it does not set from its
/// arguments has a known `Default` (else `new()` is not generated).
fn has_new(v: &Version, k: &Kind) -> bool {
    let Some(def) = v.types.get(&k.rust_name) else { return false };
    let spec = match &def.body {
        Body::Struct(fields) if k.spec_type.is_some() => {
            fields.iter().find(|f| f.json_name == "spec").map(|f| f.rust_name.clone())
        }
        _ => None,
    };
    def.rust_fields.iter().all(|(name, _)| {
        let set_by_new = match &k.type_meta {
            TypeMetaForm::Flatten(t) => t == name,
            TypeMetaForm::Fields { api_version, kind } => api_version == name || kind == name,
        };
        set_by_new || *name == k.metadata_field || spec.as_ref() == Some(name) || def.default_fields.contains(name)
    })
}

/// Field initializers of a kind's `new()`: every field of the struct.
fn new_fields(v: &Version, k: &Kind) -> Vec<NewField> {
    let Some(def) = v.types.get(&k.rust_name) else { return Vec::new() };
    let json_name = |rust: &str| match &def.body {
        Body::Struct(fields) => fields.iter().find(|f| f.rust_name == rust).map(|f| f.json_name.clone()),
        _ => None,
    };
    def.rust_fields
        .iter()
        .map(|(name, is_option)| {
            let value = if matches!(&k.type_meta, TypeMetaForm::Flatten(t) if t == name) {
                NewValue::TypeMeta
            } else if matches!(&k.type_meta, TypeMetaForm::Fields { api_version, .. } if api_version == name) {
                NewValue::ApiVersion
            } else if matches!(&k.type_meta, TypeMetaForm::Fields { kind, .. } if kind == name) {
                NewValue::Kind
            } else if *name == k.metadata_field {
                NewValue::Metadata
            } else if json_name(name).as_deref() == Some("spec") && k.spec_type.is_some() {
                NewValue::Spec
            } else if *is_option {
                NewValue::None
            } else {
                NewValue::Default
            };
            NewField { ident: rust_ident(name), value }
        })
        .collect()
}
