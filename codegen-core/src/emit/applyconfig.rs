//! Apply configurations (applyconfiguration-gen): for every struct of the
//! API packages, every type of other packages they use, and every built-in
//! Kubernetes type embedded in them, a twin with every field optional and
//! skipped when unset, builder methods, and for kinds `new(name, ..)`, the
//! runtime's `ApplyConfiguration` trait and `extract_<kind>` functions.
//!
//! The configurations form one module tree: `<group>/<version>` per API
//! package and `k8s/<k8s-openapi module path>` for built-in types. Types
//! refer to each other by paths relative to the tree's root, so the same
//! rendering works as files (CLI, build.rs) and inline (macro mode).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::Value;

use crate::builtin::{self, KubeVersion, OBJECT_META};
use crate::ident::{rust_ident, snake_case, unraw};
use crate::model::{Body, Field, IntBounds, Kind, Model, NumFormat, TypeDef, TypeKey, TypeMetaForm, TypeRef};

use super::views::Paths;

/// One module of the tree and the configurations it holds.
#[derive(Clone, Debug)]
pub struct AcModule {
    /// Module names from the tree's root (`["example", "v1"]`).
    pub path: Vec<String>,
    /// The module's doc line.
    pub doc: String,
    /// Its configurations, sorted by name.
    pub types: Vec<AcType>,
}

/// One apply configuration.
#[derive(Clone, Debug)]
pub struct AcType {
    /// `StudentSpecApplyConfiguration`.
    pub name: String,
    /// Doc line.
    pub doc: String,
    /// Whether it derives `Debug` (every type it holds does).
    pub derive_debug: bool,
    /// Whether it derives `PartialEq` (every type it holds does).
    pub derive_eq: bool,
    /// Fields, in declaration order.
    pub fields: Vec<AcField>,
    /// For kinds: constructor, trait impl and extract functions.
    pub kind: Option<AcKind>,
}

impl AcType {
    /// A kind whose configuration is the runtime's generic one: the kind,
    /// and its spec and status configuration types (no status type for a
    /// kind without status).
    pub fn shared(&self) -> Option<(&AcKind, &str, Option<&str>)> {
        let k = self.kind.as_ref()?;
        let (spec, status) = k.shared.as_ref()?;
        Some((k, spec, status.as_deref()))
    }
}

/// One field of a configuration.
#[derive(Clone, Debug)]
pub struct AcField {
    /// The Rust field (`r#type`).
    pub ident: String,
    /// The builder (`with_type`).
    pub builder: String,
    /// Its wire name.
    pub json: String,
    /// `#[serde(flatten)]`.
    pub flatten: bool,
    /// A flattened externally tagged enum: read from the one member named
    /// as a variant, as serde's flatten reads it.
    pub variant: bool,
    /// The type inside `Option`.
    pub ty: String,
    /// Doc line.
    pub doc: String,
    /// `value`, `list` or `map`: the builder's shape.
    pub mode: &'static str,
    /// For `value`: the parameter type (`impl Into<String>` for strings).
    pub param: String,
    /// For `value`: whether the argument goes through `.into()`.
    pub into: bool,
    /// For `list`/`map`: the item or value type.
    pub item: String,
    /// For `list`/`map`: the parameter type of one item or value:
    /// `impl Into<item>`, or a primitive number itself, so that a literal
    /// (`[("gold", 10)]`) takes the item's type.
    pub item_param: String,
    /// For `list`/`map`: whether an item goes through `.into()`.
    pub item_into: bool,
    /// For `list`: when two items are the same entry (`a.name == b.name`
    /// for a list-map, `a == b` for a set); `None` for atomic lists.
    pub same: Option<String>,
    /// Doc line of the builder.
    pub builder_doc: String,
    /// The configuration a `value` field holds directly, by [`Item::id`].
    target: Option<String>,
    /// Whether the field is boxed: its configuration contains this one.
    pub boxed: bool,
}

/// What a kind's configuration adds.
#[derive(Clone, Debug)]
pub struct AcKind {
    /// The Rust path of the kind's type.
    pub object: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Whether `new` takes a namespace.
    pub namespaced: bool,
    /// The Rust field serialized as `metadata`.
    pub metadata: String,
    /// `extract_student`.
    pub extract: String,
    /// `extract_student_status`, for kinds with a status subresource.
    pub extract_status: Option<String>,
    /// Metadata builders that no field builder shadows, with the metadata
    /// field each sets (each calls the runtime's `apply::metadata` function
    /// of its name).
    pub meta_builders: Vec<(String, String)>,
    /// For a kind of metadata, `spec` and, if it has one, `status` only:
    /// the types of its spec and status configurations. Its configuration
    /// is then an alias of the runtime's `apply::ObjectApplyConfiguration`
    /// instead of a struct of its own.
    pub shared: Option<(String, Option<String>)>,
}

/// Where the Rust types of API packages are, from an apply configuration module.
pub struct TypePaths {
    /// Package → module path of its types.
    pub packages: BTreeMap<String, String>,
    /// Paths of single types (package, name) → path, before `packages`.
    pub types: BTreeMap<(String, String), String>,
    /// The module path of the apis directory, for packages not in `packages`.
    pub apis: Option<String>,
}

impl TypePaths {
    /// The paths of the CLI and build.rs layouts: absolute crate paths.
    pub fn absolute(model: &Model) -> Self {
        let packages: BTreeMap<String, String> =
            model.groups.iter().flat_map(|g| &g.versions).map(|v| (v.package.clone(), v.module_path.clone())).collect();
        let apis = packages.values().next().and_then(|m| m.rsplitn(3, "::").nth(2)).map(str::to_string);
        TypePaths { packages, types: BTreeMap::new(), apis }
    }

    /// The Rust path of type `name` of `package`.
    fn of(&self, package: &str, name: &str) -> Option<String> {
        if let Some(p) = self.types.get(&(package.to_string(), name.to_string())) {
            return Some(p.clone());
        }
        if let Some(p) = self.packages.get(package) {
            return Some(format!("{p}::{name}"));
        }
        let (group, version) = package.split_once('/')?;
        Some(format!(
            "{}::{}::{}::{name}",
            self.apis.as_ref()?,
            rust_ident(&group.replace('-', "_")),
            rust_ident(version)
        ))
    }
}

/// The module path of an API package in the tree.
pub fn package_module(package: &str) -> Vec<String> {
    package.split('/').map(|s| rust_ident(&s.replace(['-', '.'], "_"))).collect()
}

/// The name of the configuration of type `name`.
pub fn ac_name(name: &str) -> String {
    format!("{name}ApplyConfiguration")
}

/// The name of a kind's extract function.
pub fn extract_name(rust_name: &str) -> String {
    format!("extract_{}", snake_case(rust_name))
}

const META_BUILDERS: &[(&str, &str)] = &[
    ("with_name", "name"),
    ("with_generate_name", "generateName"),
    ("with_namespace", "namespace"),
    ("with_uid", "uid"),
    ("with_resource_version", "resourceVersion"),
    ("with_labels", "labels"),
    ("with_annotations", "annotations"),
    ("with_owner_references", "ownerReferences"),
    ("with_finalizers", "finalizers"),
];

/// Whether `def` gets an apply configuration of its own: a struct, unless
/// it is `#[serde(transparent)]` (serialized as its one field, it is kept
/// as its Rust type, as newtypes are).
fn has_configuration(def: &TypeDef) -> bool {
    matches!(def.body, Body::Struct(_)) && !def.serde.transparent
}

/// Builds the tree for the requested packages of `model`.
pub fn modules(model: &Model, p: &Paths, paths: &TypePaths, version: KubeVersion) -> Vec<AcModule> {
    let mut b =
        Builder { model, p, paths, version, modules: BTreeMap::new(), queue: VecDeque::new(), seen: BTreeSet::new() };
    for v in model.groups.iter().flat_map(|g| &g.versions) {
        for def in v.types.values().filter(|d| has_configuration(d)) {
            b.seen.insert(Item::Api(TypeKey { package: v.package.clone(), name: def.name.clone() }));
        }
    }
    for g in &model.groups {
        for v in &g.versions {
            let kinds: BTreeMap<&str, &Kind> = v.kinds.iter().map(|k| (k.rust_name.as_str(), k)).collect();
            for def in v.types.values().filter(|d| has_configuration(d)) {
                if let Body::Struct(fields) = &def.body {
                    let key = TypeKey { package: v.package.clone(), name: def.name.clone() };
                    let kind = kinds.get(def.name.as_str()).map(|k| (*k, g.name.as_str(), v.name.as_str()));
                    b.api_type(&key, def, fields, kind);
                }
            }
        }
    }
    while let Some(item) = b.queue.pop_front() {
        match item {
            Item::Api(key) => {
                if let Some(def) = model.type_def(&key).filter(|d| has_configuration(d))
                    && let Body::Struct(fields) = &def.body
                {
                    b.api_type(&key, def, fields, None);
                }
            }
            Item::Builtin(def) => b.builtin_type(&def),
        }
    }
    let mut out: Vec<AcModule> = b.modules.into_values().collect();
    box_cycles(&mut out);
    for m in &mut out {
        m.types.sort_by(|a, b| a.name.cmp(&b.name));
        for t in &mut m.types {
            let shared = shared_shape(t);
            if let Some(k) = &mut t.kind {
                k.shared = shared;
            }
        }
    }
    out
}

/// The spec and status types of a kind's configuration when it has exactly
/// the fields of the runtime's `ObjectApplyConfiguration` (type meta,
/// `metadata`, `spec` and, if the kind has one, `status`, in that order,
/// named so in Rust and on the wire, spec and status set whole and not
/// boxed), so that the generic configuration has the same fields and
/// methods the struct would have.
fn shared_shape(t: &AcType) -> Option<(String, Option<String>)> {
    let k = t.kind.as_ref()?;
    let (api_version, kind, metadata, spec, status) = match t.fields.as_slice() {
        [api_version, kind, metadata, spec] => (api_version, kind, metadata, spec, None),
        [api_version, kind, metadata, spec, status] => (api_version, kind, metadata, spec, Some(status)),
        _ => return None,
    };
    let expected = [
        (Some(api_version), "api_version", "apiVersion"),
        (Some(kind), "kind", "kind"),
        (Some(metadata), "metadata", "metadata"),
        (Some(spec), "spec", "spec"),
        (status, "status", "status"),
    ];
    let named = expected.iter().all(|(f, ident, json)| {
        f.is_none_or(|f| f.ident == *ident && f.json == *json && !f.flatten && !f.boxed && f.mode == "value")
    });
    let plain = |f: &AcField| !f.into && f.param == f.ty;
    let whole = named
        && k.metadata == "metadata"
        && k.meta_builders.len() == META_BUILDERS.len()
        && metadata.ty.ends_with("::apply::ObjectMetaApplyConfiguration")
        && plain(spec)
        && status.is_none_or(plain);
    whole.then(|| (spec.ty.clone(), status.map(|f| f.ty.clone())))
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    Api(TypeKey),
    Builtin(String),
}

impl Item {
    /// The configuration's path in the tree.
    fn id(&self) -> String {
        match self {
            Item::Api(key) => format!("{}::{}", package_module(&key.package).join("::"), ac_name(&key.name)),
            Item::Builtin(def) => {
                format!("{}::{}", Builder::builtin_module(def).join("::"), ac_name(builtin::short_name(def)))
            }
        }
    }
}

/// Boxes every field whose configuration contains, through fields held
/// directly, the configuration the field is in (a recursive type).
fn box_cycles(modules: &mut [AcModule]) {
    let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in modules.iter() {
        for t in &m.types {
            let id = format!("{}::{}", m.path.join("::"), t.name);
            edges.entry(id).or_default().extend(t.fields.iter().filter_map(|f| f.target.clone()));
        }
    }
    let reaches = |from: &str, to: &str| {
        let mut stack = vec![from.to_string()];
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n.clone()) {
                stack.extend(edges.get(&n).into_iter().flatten().cloned());
            }
        }
        false
    };
    for m in modules.iter_mut() {
        let path = m.path.join("::");
        for t in &mut m.types {
            let id = format!("{path}::{}", t.name);
            for f in &mut t.fields {
                f.boxed = f.target.as_deref().is_some_and(|target| reaches(target, &id));
            }
        }
    }
}

struct Builder<'a> {
    model: &'a Model,
    p: &'a Paths,
    paths: &'a TypePaths,
    version: KubeVersion,
    modules: BTreeMap<Vec<String>, AcModule>,
    queue: VecDeque<Item>,
    seen: BTreeSet<Item>,
}

/// A field type as a configuration holds it.
struct Mapped {
    ty: String,
    /// Whether the type implements `Debug`.
    debug: bool,
    /// Whether the type implements `PartialEq`.
    eq: bool,
    /// Strings take `impl Into<String>`.
    string: bool,
    /// The configuration struct it is, for list-map keys: (module, name).
    ac: Option<Item>,
}

impl Mapped {
    fn plain(ty: impl Into<String>) -> Self {
        Mapped { ty: ty.into(), debug: true, eq: true, string: false, ac: None }
    }
}

/// How a list merges.
enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

fn first_line(doc: Option<&str>) -> Option<String> {
    let doc = doc?.trim();
    let para = doc.split("\n\n").next()?.replace('\n', " ");
    let para = para.trim();
    if para.is_empty() {
        return None;
    }
    // The first sentence, when the paragraph is long.
    let sentence = match para.find(". ") {
        Some(i) if para.len() > 160 => &para[..=i],
        _ => para,
    };
    Some(crate::rustdoc::rustdoc_text(sentence))
}

impl Builder<'_> {
    fn module(&mut self, path: Vec<String>, doc: impl FnOnce() -> String) -> &mut AcModule {
        self.modules.entry(path.clone()).or_insert_with(|| AcModule { path, doc: doc(), types: Vec::new() })
    }

    fn enqueue(&mut self, item: Item) {
        if self.seen.insert(item.clone()) {
            self.queue.push_back(item);
        }
    }

    /// `super::super` from a module at `from` to the root, then `to`.
    fn relative(from: &[String], to: &[String], name: &str) -> String {
        if from == to {
            return name.to_string();
        }
        let mut parts: Vec<String> = vec!["super".to_string(); from.len()];
        parts.extend(to.iter().cloned());
        parts.push(name.to_string());
        parts.join("::")
    }

    fn builtin_module(def: &str) -> Vec<String> {
        let rest = def.strip_prefix("io.k8s.").unwrap_or(def);
        let mut parts: Vec<String> = rest.split('.').map(|s| rust_ident(&s.replace('-', "_"))).collect();
        parts.pop();
        parts.insert(0, "k8s".to_string());
        parts
    }

    fn k8s(&self, path: &str) -> String {
        format!("{}::{path}", self.p.k8s)
    }

    fn map_type(&mut self, t: &TypeRef, from: &[String]) -> Mapped {
        match t {
            TypeRef::String => Mapped { string: true, ..Mapped::plain("String") },
            TypeRef::Bool => Mapped::plain("bool"),
            // The field's own integer type, so that a value of the type
            // goes in as it is (`with_port(spec.port)` for a `u64`).
            TypeRef::Integer(_, IntBounds { rust: Some(rust), .. }) => Mapped::plain(*rust),
            TypeRef::Integer(NumFormat::Int32, _) => Mapped::plain("i32"),
            TypeRef::Integer(..) => Mapped::plain("i64"),
            TypeRef::Number(NumFormat::Float) => Mapped::plain("f32"),
            TypeRef::Number(_) => Mapped::plain("f64"),
            TypeRef::Json => Mapped::plain(format!("{}::__private::serde_json::Value", self.p.rt)),
            TypeRef::JsonObject => Mapped::plain(format!(
                "{rt}::__private::serde_json::Map<String, {rt}::__private::serde_json::Value>",
                rt = self.p.rt
            )),
            TypeRef::Option(inner) => self.map_type(inner, from),
            TypeRef::List(inner) | TypeRef::Set(inner) => {
                let m = self.map_type(inner, from);
                Mapped { ty: format!("Vec<{}>", m.ty), debug: m.debug, eq: m.eq, string: false, ac: None }
            }
            TypeRef::Map(inner) => {
                let m = self.map_type(inner, from);
                Mapped {
                    ty: format!("::std::collections::BTreeMap<String, {}>", m.ty),
                    debug: m.debug,
                    eq: m.eq,
                    string: false,
                    ac: None,
                }
            }
            TypeRef::Named(key) => {
                let def = self.model.type_def(key);
                match def.filter(|d| has_configuration(d)).map(|d| &d.body) {
                    Some(Body::Struct(_)) => {
                        self.enqueue(Item::Api(key.clone()));
                        Mapped {
                            ty: Self::relative(from, &package_module(&key.package), &ac_name(&key.name)),
                            debug: def.is_some_and(|d| self.struct_has(d, &|d| d.derives_debug, &mut BTreeSet::new())),
                            eq: def
                                .is_some_and(|d| self.struct_has(d, &|d| d.derives_partial_eq, &mut BTreeSet::new())),
                            string: false,
                            ac: Some(Item::Api(key.clone())),
                        }
                    }
                    _ => match self.paths.of(&key.package, &key.name) {
                        Some(path) => Mapped {
                            ty: path,
                            debug: def.is_some_and(|d| d.derives_debug),
                            eq: def.is_some_and(|d| d.derives_partial_eq),
                            string: false,
                            ac: None,
                        },
                        None => Mapped::plain(format!("{}::__private::serde_json::Value", self.p.rt)),
                    },
                }
            }
            TypeRef::Builtin(def) => self.builtin_ref(def, from),
            TypeRef::Known(known) => match known {
                crate::model::Known::ByteString => Mapped::plain(self.k8s("ByteString")),
                _ => Mapped { string: true, ..Mapped::plain("String") },
            },
        }
    }

    /// Whether the configuration of `def` can derive a trait: every
    /// non-struct API type it holds (its configurations hold those as they
    /// are) derives it (`has`).
    fn struct_has(&self, def: &TypeDef, has: &dyn Fn(&TypeDef) -> bool, stack: &mut BTreeSet<String>) -> bool {
        if !stack.insert(def.name.clone()) {
            return true;
        }
        let mut ok = true;
        def.visit_types(&mut |t| ok &= self.type_has(t, has, stack));
        ok
    }

    fn type_has(&self, t: &TypeRef, has: &dyn Fn(&TypeDef) -> bool, stack: &mut BTreeSet<String>) -> bool {
        match t {
            TypeRef::Option(i) | TypeRef::List(i) | TypeRef::Set(i) | TypeRef::Map(i) => self.type_has(i, has, stack),
            TypeRef::Named(key) => match self.model.type_def(key) {
                // A struct with a configuration of its own: as that is;
                // anything else (a transparent struct too) is held as it is.
                Some(d) if has_configuration(d) => self.struct_has(d, has, stack),
                Some(d) => has(d),
                None => false,
            },
            _ => true,
        }
    }

    fn builtin_ref(&mut self, def: &str, from: &[String]) -> Mapped {
        let leaf = |path: &str| Mapped::plain(format!("{}::{path}", self.p.k8s));
        match def {
            OBJECT_META => Mapped::plain(format!("{}::apply::ObjectMetaApplyConfiguration", self.p.rt)),
            "io.k8s.apimachinery.pkg.api.resource.Quantity" => leaf("apimachinery::pkg::api::resource::Quantity"),
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => leaf("apimachinery::pkg::util::intstr::IntOrString"),
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => leaf("apimachinery::pkg::apis::meta::v1::Time"),
            "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => leaf("apimachinery::pkg::apis::meta::v1::MicroTime"),
            _ => {
                let raw = builtin::raw(def, self.version).cloned().unwrap_or(Value::Null);
                if raw.get("properties").is_some_and(Value::is_object) {
                    self.enqueue(Item::Builtin(def.to_string()));
                    Mapped {
                        ty: Self::relative(from, &Self::builtin_module(def), &ac_name(builtin::short_name(def))),
                        debug: true,
                        eq: true,
                        string: false,
                        ac: Some(Item::Builtin(def.to_string())),
                    }
                } else {
                    self.schema_type(&raw, from)
                }
            }
        }
    }

    /// The Rust type of a property of a built-in schema.
    fn schema_type(&mut self, schema: &Value, from: &[String]) -> Mapped {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return self.builtin_ref(r, from);
        }
        let json = || Mapped::plain(format!("{}::__private::serde_json::Value", self.p.rt));
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => match schema.get("format").and_then(Value::as_str) {
                Some("byte") => Mapped::plain(self.k8s("ByteString")),
                Some("int-or-string") => Mapped::plain(self.k8s("apimachinery::pkg::util::intstr::IntOrString")),
                _ => Mapped { string: true, ..Mapped::plain("String") },
            },
            Some("integer") => {
                Mapped::plain(if schema.get("format").and_then(Value::as_str) == Some("int32") { "i32" } else { "i64" })
            }
            Some("number") => Mapped::plain("f64"),
            Some("boolean") => Mapped::plain("bool"),
            Some("array") => {
                let m = schema.get("items").map(|i| self.schema_type(i, from)).unwrap_or_else(json);
                Mapped { ty: format!("Vec<{}>", m.ty), debug: m.debug, eq: m.eq, string: false, ac: None }
            }
            Some("object") if schema.get("additionalProperties").is_some_and(Value::is_object) => {
                let m = self.schema_type(&schema["additionalProperties"], from);
                Mapped {
                    ty: format!("::std::collections::BTreeMap<String, {}>", m.ty),
                    debug: m.debug,
                    eq: m.eq,
                    string: false,
                    ac: None,
                }
            }
            _ => json(),
        }
    }

    /// The Rust field of a wire name in a built-in configuration.
    fn field_ident(json: &str) -> String {
        let cleaned: String = json.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let snake = snake_case(&cleaned);
        let snake = if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
            format!("f_{snake}")
        } else {
            snake
        };
        rust_ident(&snake)
    }

    /// The Rust idents of the fields of configuration `item` with wire names `keys`.
    fn key_idents(&self, item: &Item, keys: &[String]) -> Option<Vec<String>> {
        match item {
            Item::Api(key) => {
                let def = self.model.type_def(key)?;
                let Body::Struct(fields) = &def.body else { return None };
                keys.iter()
                    .map(|k| fields.iter().find(|f| &f.json_name == k).map(|f| rust_ident(&f.rust_name)))
                    .collect()
            }
            Item::Builtin(_) => Some(keys.iter().map(|k| Self::field_ident(k)).collect()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn field(
        &self,
        ident: String,
        json: &str,
        doc: Option<String>,
        mapped: Mapped,
        shape: Shape,
        list: ListKind,
        flatten: bool,
    ) -> AcField {
        let builder = format!("with_{}", unraw(&ident).trim_end_matches('_'));
        let doc = format!(" {}", doc.unwrap_or_else(|| format!("`{json}`.")));
        let mut f = AcField {
            builder,
            json: json.to_string(),
            flatten,
            variant: false,
            ty: mapped.ty.clone(),
            doc,
            mode: "value",
            param: mapped.ty.clone(),
            into: false,
            item: String::new(),
            item_param: String::new(),
            item_into: false,
            same: None,
            builder_doc: format!(" Sets `{json}`."),
            ident,
            target: None,
            boxed: false,
        };
        match shape {
            Shape::Value => {
                f.target = mapped.ac.as_ref().map(Item::id);
                if mapped.string {
                    f.param = "impl Into<String>".to_string();
                    f.into = true;
                }
            }
            Shape::List(item) => {
                f.mode = "list";
                f.item = item.ty.clone();
                (f.item_param, f.item_into) = item_param(&item.ty);
                let (same, doc) = match list {
                    ListKind::Atomic => (None, format!("Adds items to `{json}` (an atomic list: sent whole).")),
                    ListKind::Set if item.eq => {
                        (Some("a == b".to_string()), format!("Adds members to the set `{json}`, each once."))
                    }
                    ListKind::Set => (None, format!("Adds members to the set `{json}`.")),
                    ListKind::Map(keys) => {
                        let idents = item.ac.as_ref().and_then(|i| self.key_idents(i, &keys));
                        match idents {
                            Some(idents) if !idents.is_empty() => (
                                Some(idents.iter().map(|i| format!("a.{i} == b.{i}")).collect::<Vec<_>>().join(" && ")),
                                format!(
                                    "Adds items to `{json}`; an item with the keys ({}) of an earlier one replaces it.",
                                    keys.join(", ")
                                ),
                            ),
                            _ => (None, format!("Adds items to `{json}`.")),
                        }
                    }
                };
                f.same = same;
                f.builder_doc = format!(" {doc}");
            }
            Shape::Map(value) => {
                f.mode = "map";
                (f.item_param, f.item_into) = item_param(&value.ty);
                f.item = value.ty;
                f.builder_doc = format!(" Adds entries to `{json}` (a key given twice keeps the last value).");
            }
        }
        f
    }

    fn api_type(&mut self, key: &TypeKey, def: &TypeDef, fields: &[Field], kind: Option<(&Kind, &str, &str)>) {
        let path = package_module(&key.package);
        let mut ac_fields = Vec::new();
        let debug = self.struct_has(def, &|d| d.derives_debug, &mut BTreeSet::new());
        let eq = self.struct_has(def, &|d| d.derives_partial_eq, &mut BTreeSet::new());
        if let Some((k, group, version)) = kind {
            let _ = (group, version);
            for (ident, json, what) in [("api_version", "apiVersion", "`apiVersion`"), ("kind", "kind", "`kind`")] {
                let mapped = Mapped { string: true, ..Mapped::plain("String") };
                let doc = Some(format!("{what}, set by `new`."));
                ac_fields.push(self.field(ident.to_string(), json, doc, mapped, Shape::Value, ListKind::Atomic, false));
            }
            let _ = k;
        }
        for f in fields {
            if f.serde.skip {
                continue;
            }
            if kind.is_some() {
                let type_meta = match &kind.map(|k| &k.0.type_meta) {
                    Some(TypeMetaForm::Flatten(t)) => t == &f.rust_name,
                    Some(TypeMetaForm::Fields { api_version, kind }) => {
                        api_version == &f.rust_name || kind == &f.rust_name
                    }
                    None => false,
                };
                if type_meta {
                    continue;
                }
            }
            if matches!(f.ty.unwrap_option(), TypeRef::Known(crate::model::Known::TypeMeta)) {
                // A kind's are set by `new`. An embedded object's (its own
                // `TypeMeta` flattened in) are fields of it that an apply
                // creating it must send, as client-go's configurations of
                // Go types embedding `metav1.TypeMeta` have them.
                if kind.is_none() && f.serde.flatten {
                    for (ident, json, what) in
                        [("api_version", "apiVersion", "`apiVersion`"), ("kind", "kind", "`kind`")]
                    {
                        let mapped = Mapped { string: true, ..Mapped::plain("String") };
                        let doc = Some(format!("{what} of the object."));
                        ac_fields.push(self.field(
                            ident.to_string(),
                            json,
                            doc,
                            mapped,
                            Shape::Value,
                            ListKind::Atomic,
                            false,
                        ));
                    }
                }
                continue;
            }
            let ty = f.ty.unwrap_option();
            let (shape, list) = match ty {
                TypeRef::List(inner) => {
                    let item = self.map_type(inner, &path);
                    let list =
                        match (f.validate.list_type.as_ref().map(|s| s.value.as_str()), &f.validate.list_map_keys) {
                            (Some("set"), _) => ListKind::Set,
                            (Some("map"), Some(keys)) => {
                                ListKind::Map(keys.value.iter().map(|k| k.value.clone()).collect())
                            }
                            _ => ListKind::Atomic,
                        };
                    (Shape::List(item), list)
                }
                TypeRef::Set(inner) => (Shape::List(self.map_type(inner, &path)), ListKind::Set),
                TypeRef::Map(inner) => (Shape::Map(self.map_type(inner, &path)), ListKind::Atomic),
                _ => (Shape::Value, ListKind::Atomic),
            };
            let mapped = self.map_type(ty, &path);
            let doc = first_line(f.doc.as_deref());
            let ident = rust_ident(&f.rust_name);
            let mut field = self.field(ident, &f.json_name, doc, mapped, shape, list, f.serde.flatten);
            if let TypeRef::Named(key) = ty
                && f.serde.flatten
            {
                field.variant = self
                    .model
                    .type_def(key)
                    .is_some_and(|d| matches!(d.body, Body::Enum(_)) && d.serde.tag.is_none() && !d.serde.untagged);
            }
            ac_fields.push(field);
        }
        let kind_view = kind.map(|(k, group, version)| {
            let taken: BTreeSet<&str> = ac_fields.iter().map(|f| f.builder.as_str()).collect();
            AcKind {
                object: self.paths.of(&key.package, &k.rust_name).unwrap_or_else(|| k.rust_name.clone()),
                api_version: if group.is_empty() { version.to_string() } else { format!("{group}/{version}") },
                kind: k.kind.clone(),
                namespaced: k.namespaced,
                metadata: rust_ident(&k.metadata_field),
                extract: extract_name(&k.rust_name),
                extract_status: k.status_subresource.then(|| format!("{}_status", extract_name(&k.rust_name))),
                meta_builders: META_BUILDERS
                    .iter()
                    .filter(|(b, _)| !taken.contains(b))
                    .map(|(b, f)| (b.to_string(), f.to_string()))
                    .collect(),
                shared: None,
            }
        });
        let doc = match &kind_view {
            Some(k) => format!(" An apply configuration of a `{}` (`{}`).", k.kind, k.api_version),
            None => format!(" An apply configuration of `{}`.", def.name),
        };
        let ac = AcType {
            name: ac_name(&def.name),
            doc,
            derive_debug: debug,
            derive_eq: eq,
            fields: ac_fields,
            kind: kind_view,
        };
        let package = key.package.clone();
        self.module(path, || format!("Apply configurations of the `{package}` API types.")).types.push(ac);
    }

    fn builtin_type(&mut self, def: &str) {
        let path = Self::builtin_module(def);
        let Some(raw) = builtin::raw(def, self.version).cloned() else { return };
        let Some(props) = raw.get("properties").and_then(Value::as_object) else { return };
        let mut fields = Vec::new();
        for (json, schema) in props {
            let (shape, list) = match schema.get("type").and_then(Value::as_str) {
                Some("array") => {
                    let item = match schema.get("items") {
                        Some(items) => self.schema_type(items, &path),
                        None => Mapped::plain(format!("{}::__private::serde_json::Value", self.p.rt)),
                    };
                    let list = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                        Some("set") => ListKind::Set,
                        Some("map") => ListKind::Map(
                            schema
                                .get("x-kubernetes-list-map-keys")
                                .and_then(Value::as_array)
                                .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string).collect())
                                .unwrap_or_default(),
                        ),
                        _ => ListKind::Atomic,
                    };
                    (Shape::List(item), list)
                }
                Some("object") if schema.get("additionalProperties").is_some_and(Value::is_object) => {
                    (Shape::Map(self.schema_type(&schema["additionalProperties"], &path)), ListKind::Atomic)
                }
                _ => (Shape::Value, ListKind::Atomic),
            };
            let mapped = self.schema_type(schema, &path);
            let doc = first_line(schema.get("description").and_then(Value::as_str));
            fields.push(self.field(Self::field_ident(json), json, doc, mapped, shape, list, false));
        }
        let short = builtin::short_name(def);
        let ac = AcType {
            name: ac_name(short),
            doc: format!(" An apply configuration of Kubernetes' `{short}` (`{}`).", builtin::path_of_definition(def)),
            derive_debug: true,
            derive_eq: true,
            fields,
            kind: None,
        };
        let module = path[1..].join("::");
        self.module(path, || format!("Apply configurations of Kubernetes' `{module}` types.")).types.push(ac);
    }
}

enum Shape {
    Value,
    List(Mapped),
    Map(Mapped),
}

/// A node of the module tree: its own configurations and its children.
#[derive(Debug, Default)]
pub struct Node {
    /// The module, when it holds configurations.
    pub module: Option<AcModule>,
    /// Child modules by name.
    pub children: BTreeMap<String, Node>,
}

/// The modules as a tree.
pub fn tree(modules: Vec<AcModule>) -> Node {
    let mut root = Node::default();
    for m in modules {
        let mut node = &mut root;
        for seg in &m.path {
            node = node.children.entry(seg.clone()).or_default();
        }
        node.module = Some(m);
    }
    root
}

/// The Rust path, from a client module `depth` levels below the output
/// directory's root module, of a kind's configuration.
pub fn kind_path(to_root: &str, package: &str, rust_name: &str) -> String {
    let mut parts = vec![to_root.to_string()];
    parts.extend(package_module(package));
    parts.push(ac_name(rust_name));
    parts.join("::")
}

/// Property maps already written by [`ssa_schema`], by address.
pub type SchemaCache =
    std::collections::HashMap<usize, (std::sync::Arc<BTreeMap<String, super::schema::JsonSchemaProps>>, String)>;

/// The structural schema server-side apply reads (types, properties,
/// items, additional properties and the `x-kubernetes-*` list and map
/// markers) of a kind, as compact JSON, for the fake API server. `cache`
/// holds the JSON of property maps already written, by address (and keeps
/// them alive, so an address is never reused): a built-in type's expansion
/// is one shared tree, written once.
pub fn ssa_schema(
    model: &Model,
    version: &crate::model::Version,
    kind: &Kind,
    options: &super::schema::SchemaOptions,
    cache: &mut SchemaCache,
) -> String {
    let mut diags = crate::diag::Diagnostics::new();
    let schema = super::schema::SchemaBuilder::new(model, version, options, &mut diags).root(kind);
    let mut out = String::new();
    structural(&schema, &mut out, cache);
    out
}

/// Writes what server-side apply needs of a schema node, and nothing else:
/// scalars become `{}`, atomic lists and maps lose what is below them
/// (they are owned whole), objects keep their properties and additional
/// properties, lists with a list type keep their items and keys.
fn structural(s: &super::schema::JsonSchemaProps, out: &mut String, cache: &mut SchemaCache) {
    fn key(out: &mut String, first: &mut bool, k: &str) {
        if !std::mem::take(first) {
            out.push(',');
        }
        out.push('"');
        out.push_str(k);
        out.push_str("\":");
    }
    let json = |v: &dyn erased::Json| v.to_json();
    let mut first = true;
    out.push('{');
    if s.x_int_or_string == Some(true) {
        key(out, &mut first, "x-kubernetes-int-or-string");
        out.push_str("true}");
        return;
    }
    for (flag, on) in [
        ("x-kubernetes-embedded-resource", s.x_embedded_resource),
        ("x-kubernetes-preserve-unknown-fields", s.x_preserve_unknown_fields),
    ] {
        if on == Some(true) {
            key(out, &mut first, flag);
            out.push_str("true");
        }
    }
    match s.type_.as_deref() {
        Some("array") => {
            key(out, &mut first, "type");
            out.push_str("\"array\"");
            if let Some(list_type) = s.x_list_type.as_deref().filter(|t| *t != "atomic") {
                key(out, &mut first, "x-kubernetes-list-type");
                out.push_str(&json(&list_type));
                if let Some(keys) = &s.x_list_map_keys {
                    key(out, &mut first, "x-kubernetes-list-map-keys");
                    out.push_str(&json(keys));
                }
                if let Some(items) = &s.items {
                    key(out, &mut first, "items");
                    structural(items, out, cache);
                }
            }
        }
        Some("object") | None if s.x_map_type.as_deref() == Some("atomic") => {
            key(out, &mut first, "type");
            out.push_str("\"object\",\"x-kubernetes-map-type\":\"atomic\"");
        }
        Some("object") | None => {
            if s.type_.is_some() {
                key(out, &mut first, "type");
                out.push_str("\"object\"");
            }
            if let Some(props) = &s.properties {
                key(out, &mut first, "properties");
                let id = std::sync::Arc::as_ptr(props) as usize;
                if let Some((_, done)) = cache.get(&id) {
                    out.push_str(done);
                } else {
                    let mut text = String::from("{");
                    for (i, (name, prop)) in props.iter().enumerate() {
                        if i > 0 {
                            text.push(',');
                        }
                        text.push_str(&json(name));
                        text.push(':');
                        structural(prop, &mut text, cache);
                    }
                    text.push('}');
                    out.push_str(&text);
                    cache.insert(id, (props.clone(), text));
                }
            }
            if let Some(additional) = &s.additional_properties {
                key(out, &mut first, "additionalProperties");
                structural(additional, out, cache);
            }
        }
        Some(_) => {}
    }
    out.push('}');
}

mod erased {
    /// A value written as JSON.
    pub trait Json {
        fn to_json(&self) -> String;
    }

    impl<T: serde::Serialize + ?Sized> Json for T {
        fn to_json(&self) -> String {
            serde_json::to_string(self).unwrap_or_default()
        }
    }
}

/// The parameter type of one item of a list or value of a map whose items
/// are `ty` (see [`AcField::item_param`]), and whether it goes through
/// `.into()`.
fn item_param(ty: &str) -> (String, bool) {
    const NUMBERS: [&str; 12] = ["i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize", "f32", "f64"];
    if NUMBERS.contains(&ty) { (ty.to_string(), false) } else { (format!("impl Into<{ty}>"), true) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::schema::JsonSchemaProps;

    fn parse(v: Value) -> JsonSchemaProps {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_ssa_schema_keeps_what_apply_reads_and_nothing_else() {
        let schema = parse(serde_json::json!({
            "type": "object",
            "description": "dropped",
            "properties": {
                "name": {"type": "string", "maxLength": 3},
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "env": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                             "properties": {"a": {"type": "string"}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }
        }));
        let mut out = String::new();
        structural(&schema, &mut out, &mut SchemaCache::new());
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "name": {},
                    "port": {"x-kubernetes-int-or-string": true},
                    "tags": {"type": "array"},
                    "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {}},
                    "env": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {}}}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
                    "labels": {"type": "object", "additionalProperties": {}},
                    "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            })
        );
    }
}
