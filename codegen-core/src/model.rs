//! Phase 3, model: the plain-data IR every generator reads. Groups, versions,
//! kinds (names, scope, verbs, subresources, columns) and the API types with
//! their serde view and validation markers. Nodes keep their `Origin`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::ident::RenameRule;
use crate::markers::{AdmissionWebhook, ConversionWebhook, Method, PrintColumn, Scale, Spanned, Validate, Verb};
use crate::parse::Origin;

/// Everything the generators need.
#[derive(Debug, Default)]
pub struct Model {
    /// API groups, sorted by name.
    pub groups: Vec<Group>,
    /// Types of other API packages of the tree (not requested on the
    /// command line) that the requested packages use.
    pub external_types: BTreeMap<TypeKey, TypeDef>,
}

impl Model {
    /// Every kind with its group and version.
    pub fn kinds(&self) -> impl Iterator<Item = (&Group, &Version, &Kind)> {
        self.groups.iter().flat_map(|g| g.versions.iter().flat_map(move |v| v.kinds.iter().map(move |k| (g, v, k))))
    }

    /// The definition of an API type of any package of the model.
    pub fn type_def(&self, key: &TypeKey) -> Option<&TypeDef> {
        self.groups
            .iter()
            .flat_map(|g| &g.versions)
            .find(|v| v.package == key.package)
            .and_then(|v| v.types.get(&key.name))
            .or_else(|| self.external_types.get(key))
    }
}

/// Identifies an API type: its package (`example/v1`) and Rust name. Type
/// names are unique within a package.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeKey {
    /// The package: `<group-dir>/<version>`.
    pub package: String,
    /// The Rust type name.
    pub name: String,
}

impl std::fmt::Display for TypeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{}", self.package.replace('/', "::"), self.name)
    }
}

/// One API group (`example.k8s.io`).
#[derive(Debug)]
pub struct Group {
    /// The group name.
    pub name: String,
    /// The directory / Rust module name of the group (`example`).
    pub package: String,
    /// Versions, sorted by name.
    pub versions: Vec<Version>,
}

/// One version of a group, i.e. one `<apis>/<group>/<version>/` package.
#[derive(Debug)]
pub struct Version {
    /// The version (`v1`).
    pub name: String,
    /// The package key (`example/v1`), as in [`TypeKey::package`].
    pub package: String,
    /// The package directory.
    pub dir: PathBuf,
    /// The Rust path of the version module (`crate::pkg::apis::example::v1`).
    pub module_path: String,
    /// Root types (kinds), sorted by name.
    pub kinds: Vec<Kind>,
    /// Every struct and enum of the package, by Rust name.
    pub types: BTreeMap<String, TypeDef>,
    /// Whether the module file declares `mod register;` (None: no module file).
    pub declares_register: Option<bool>,
    /// The module file, for "add `mod register;`" hints.
    pub module_origin: Option<Origin>,
}

/// How a root type carries `apiVersion` and `kind`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeMetaForm {
    /// `#[serde(flatten)] pub <field>: TypeMeta`.
    Flatten(String),
    /// `pub api_version: String` and `pub kind: String`: the Rust names of
    /// the fields serialized as `apiVersion` and `kind`.
    Fields {
        /// The field serialized as `apiVersion`.
        api_version: String,
        /// The field serialized as `kind`.
        kind: String,
    },
}

/// A kind: a root type with its resource names, scope and client verbs.
#[derive(Debug)]
pub struct Kind {
    /// Rust type name.
    pub rust_name: String,
    /// The Kubernetes kind.
    pub kind: String,
    /// The resource (plural, lower case).
    pub plural: String,
    /// Singular name (lower case).
    pub singular: String,
    /// List kind.
    pub list_kind: String,
    /// Short names.
    pub short_names: Vec<String>,
    /// Categories.
    pub categories: Vec<String>,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Client verbs and methods, if the type has `#[genclient]`.
    pub client: Option<ClientSpec>,
    /// Whether the type has a `status` field.
    pub has_status_field: bool,
    /// Whether the CRD has the status subresource.
    pub status_subresource: bool,
    /// Scale subresource.
    pub scale: Option<Scale>,
    /// Printer columns.
    pub print_columns: Vec<PrintColumn>,
    /// Selectable fields (JSON paths), with their marker spans.
    pub selectable_fields: Vec<Spanned<String>>,
    /// `#[resource(storage)]`.
    pub storage: Option<Origin>,
    /// Whether this version is served.
    pub served: bool,
    /// Deprecated, with an optional warning.
    pub deprecated: Option<Option<String>>,
    /// `#[resource(conversion_webhook(..))]`: the CRD's conversion webhook.
    pub conversion_webhook: Option<ConversionWebhook>,
    /// `#[resource(mutating_webhook(..))]`: the kind's defaulting webhook.
    pub mutating_webhook: Option<AdmissionWebhook>,
    /// `#[resource(validating_webhook(..))]`: the kind's validating webhook.
    pub validating_webhook: Option<AdmissionWebhook>,
    /// Extra CRD annotations (`api-approved.kubernetes.io` among them).
    pub annotations: BTreeMap<String, String>,
    /// CRD labels.
    pub labels: BTreeMap<String, String>,
    /// How apiVersion/kind are carried.
    pub type_meta: TypeMetaForm,
    /// The Rust name of the field serialized as `metadata`.
    pub metadata_field: String,
    /// The type of the `spec` field when it is an API type or a built-in
    /// type (`Kind::new(name, spec)` takes it).
    pub spec_type: Option<TypeRef>,
    /// The struct (its ident span).
    /// `#[resource(skip_crd)]`: no CRD, no `validate()` (an aggregated API
    /// server serves the kind and validates it itself).
    pub skip_crd: bool,
    pub origin: Origin,
}

impl Kind {
    /// Whether the client has `verb`.
    pub fn has_verb(&self, verb: Verb) -> bool {
        self.client.as_ref().is_some_and(|c| c.verbs.contains(&verb))
    }

    /// Listers are generated for kinds with get and list (lister-gen's rule).
    pub fn has_lister(&self) -> bool {
        self.has_verb(Verb::Get) && self.has_verb(Verb::List)
    }

    /// Informers are generated for kinds with list and watch (informer-gen's rule).
    pub fn has_informer(&self) -> bool {
        self.has_verb(Verb::List) && self.has_verb(Verb::Watch)
    }
}

/// What `#[genclient]` asked for.
#[derive(Debug)]
pub struct ClientSpec {
    /// Verbs to generate.
    pub verbs: BTreeSet<Verb>,
    /// Extra methods (`method(..)`).
    pub methods: Vec<Method>,
}

/// A struct or enum of an API package.
#[derive(Debug)]
pub struct TypeDef {
    /// Rust name.
    pub name: String,
    /// The type's ident.
    pub origin: Origin,
    /// Doc comment.
    pub doc: Option<String>,
    /// Whether it derives or implements `Clone`.
    pub implements_clone: bool,
    /// Whether it derives `ApiType`.
    pub derives_api_type: bool,
    /// Whether it derives `Debug` (apply configurations holding it derive it too).
    pub derives_debug: bool,
    /// Whether it derives `PartialEq` (apply configurations holding it derive it too).
    pub derives_partial_eq: bool,
    /// Fields or variants.
    pub body: Body,
    /// Type-level `#[validate]` markers.
    pub validate: Validate,
    /// Container serde attributes.
    pub serde: ContainerSerde,
    /// Every named field as written (skipped ones too), with whether its
    /// type is syntactically an `Option`: what a struct literal must list.
    pub rust_fields: Vec<(String, bool)>,
    /// Names of the fields in `rust_fields` whose type is known to implement
    /// `Default` (`Option`, `#[serde(default)]`, `#[serde(skip)]`), or all of
    /// them when the type derives `Default`.
    pub default_fields: std::collections::BTreeSet<String>,
}

impl TypeDef {
    /// Calls `f` with the type of every field and variant.
    pub fn visit_types(&self, f: &mut dyn FnMut(&TypeRef)) {
        match &self.body {
            Body::Struct(fields) => fields.iter().for_each(|x| f(&x.ty)),
            Body::Newtype(t, _) => f(t),
            Body::Enum(vars) => {
                for var in vars {
                    match &var.body {
                        VariantBody::Newtype(t) => f(t),
                        VariantBody::Struct(fields) => fields.iter().for_each(|x| f(&x.ty)),
                        VariantBody::Unit | VariantBody::Tuple => {}
                    }
                }
            }
            Body::Other => {}
        }
    }
}

/// The shape of a type.
#[derive(Debug)]
pub enum Body {
    /// A struct with named fields.
    Struct(Vec<Field>),
    /// A newtype struct `struct X(T);` (serialized as `T`), with the
    /// `#[validate]` markers of its field.
    Newtype(Box<TypeRef>, Box<Validate>),
    /// A unit or multi-field tuple struct (unsupported in schemas).
    Other,
    /// An enum.
    Enum(Vec<Variant>),
}

/// Container-level `#[serde(..)]`.
#[derive(Debug, Default, Clone)]
pub struct ContainerSerde {
    /// `rename_all`.
    pub rename_all: Option<RenameRule>,
    /// `rename_all_fields` (enums): the default rule of every struct variant's fields.
    pub rename_all_fields: Option<RenameRule>,
    /// `tag = ".."`.
    pub tag: Option<String>,
    /// `content = ".."`.
    pub content: Option<String>,
    /// `untagged`.
    pub untagged: bool,
    /// `transparent`.
    pub transparent: bool,
    /// `default`.
    pub default: bool,
}

/// Field-level `#[serde(..)]`.
#[derive(Debug, Default, Clone)]
pub struct FieldSerde {
    /// `rename`.
    pub rename: Option<String>,
    /// `default` / `default = ".."`.
    pub default: bool,
    /// `default = ".."` (a function, not `Default::default`).
    pub default_fn: bool,
    /// `skip` or `skip_serializing`.
    pub skip: bool,
    /// `skip_deserializing` (or `skip`): deserialized as its default.
    pub skip_deserializing: bool,
    /// The first key that changes the wire format in a way no schema can
    /// follow (`with`, `serialize_with`, ..), with its span.
    pub custom: Option<(String, proc_macro2::Span)>,
    /// `skip_serializing_if`.
    pub skip_serializing_if: bool,
    /// `flatten`.
    pub flatten: bool,
    /// `alias = ".."`: other names it is read by.
    pub aliases: Vec<String>,
    /// `other` (on a unit variant): read from any value no other variant
    /// names.
    pub other: bool,
    /// An attribute serde itself would refuse, or a name read differently
    /// from the one written: where, what is wrong, how to fix it.
    pub problem: Option<(proc_macro2::Span, String, String)>,
}

/// A named field.
#[derive(Debug)]
pub struct Field {
    /// Rust name (without `r#`).
    pub rust_name: String,
    /// Name on the wire.
    pub json_name: String,
    /// Resolved type.
    pub ty: TypeRef,
    /// Doc comment (or that of the type alias its type names).
    pub doc: Option<String>,
    /// Doc comments of the type aliases its items or values name, one per
    /// level of lists and maps (`Vec<Vec<Phase>>`: the inner list's, then
    /// `Phase`'s); `None` where no alias has one.
    pub item_docs: Vec<Option<String>>,
    /// serde attributes.
    pub serde: FieldSerde,
    /// `#[validate]` markers.
    pub validate: Validate,
    /// The field's ident.
    pub origin: Origin,
}

impl Field {
    /// Whether the field goes into the schema's `required` list
    /// (controller-gen's rule, read through serde: absent `Option`, `default`
    /// and `skip_serializing_if` make a field optional).
    pub fn required(&self, container_default: bool) -> bool {
        if self.validate.optional.is_some() {
            return false;
        }
        if self.validate.required.is_some() {
            return true;
        }
        !(matches!(self.ty, TypeRef::Option(_))
            || self.serde.default
            || container_default
            || self.serde.skip_serializing_if
            || self.serde.flatten)
    }
}

/// An enum variant.
#[derive(Debug)]
pub struct Variant {
    /// Rust name.
    pub rust_name: String,
    /// Name on the wire.
    pub json_name: String,
    /// Doc comment.
    pub doc: Option<String>,
    /// Shape.
    pub body: VariantBody,
    /// The markers of a newtype variant's field (`A(#[validate(..)] T)`).
    pub validate: Validate,
    /// `#[serde(alias = "..")]`: other names it is read by.
    pub aliases: Vec<String>,
    /// `#[serde(other)]`: read from any value no other variant names.
    pub other: bool,
    /// The variant's ident.
    pub origin: Origin,
}

/// The shape of a variant.
#[derive(Debug)]
pub enum VariantBody {
    /// `A`
    Unit,
    /// `A(T)`
    Newtype(TypeRef),
    /// `A(T, U)`
    Tuple,
    /// `A { .. }`
    Struct(Vec<Field>),
}

/// Integer/number formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumFormat {
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `float`
    Float,
    /// `double`
    Double,
}

/// The range of a Rust integer type, where its schema format allows more,
/// and the type's name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntBounds {
    /// Smallest value (`0` for unsigned types).
    pub min: Option<i64>,
    /// Largest value (for 8- and 16-bit types).
    pub max: Option<i64>,
    /// The Rust type as generated code names it (`u64`,
    /// `::std::num::NonZeroU32`), when known.
    pub rust: Option<&'static str>,
}

/// Types from outside the Kubernetes table with a fixed schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// kube's `TypeMeta` (flattened `apiVersion` + `kind`).
    TypeMeta,
    /// kube's `Duration` (a Go duration string, `"1h2m"`): `string`.
    Duration,
    /// `chrono::DateTime`, `jiff::Timestamp`: `string`, `date-time`.
    DateTime,
    /// `k8s_openapi::ByteString` (Go's `[]byte`): `string`, `byte`.
    ByteString,
    /// A type that serializes as a string of an OpenAPI format
    /// (`uuid::Uuid`: `uuid`, `std::net::Ipv4Addr`: `ipv4`, ...).
    Format(&'static str),
}

/// A field type after resolution.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeRef {
    /// `String`
    String,
    /// `bool`
    Bool,
    /// Integers, with the range of the Rust type where the format is wider.
    Integer(NumFormat, IntBounds),
    /// Floats.
    Number(NumFormat),
    /// `serde_json::Value`
    Json,
    /// `serde_json::Map<String, Value>`
    JsonObject,
    /// `Option<T>`
    Option(Box<TypeRef>),
    /// `Vec<T>` and friends.
    List(Box<TypeRef>),
    /// `BTreeSet<T>` / `HashSet<T>` (`x-kubernetes-list-type: set`).
    Set(Box<TypeRef>),
    /// `BTreeMap<String, T>` and friends.
    Map(Box<TypeRef>),
    /// An API type of a package of the tree.
    Named(TypeKey),
    /// A Kubernetes type from the built-in table (its definition name,
    /// `io.k8s.api.core.v1.PodTemplateSpec`).
    Builtin(String),
    /// A type with a fixed schema.
    Known(Known),
}

impl TypeRef {
    /// The type without `Option`.
    pub fn unwrap_option(&self) -> &TypeRef {
        match self {
            TypeRef::Option(inner) => inner.unwrap_option(),
            other => other,
        }
    }

    /// Whether this is `ObjectMeta`.
    pub fn is_object_meta(&self) -> bool {
        matches!(self, TypeRef::Builtin(d) if d == crate::builtin::OBJECT_META)
    }
}

/// A kind's extra method, re-exported for templates.
pub type ExtraMethod = Method;
