//! Server-side apply and `metadata.managedFields` with the API server's
//! field-manager semantics (structured-merge-diff), for the fake server.
//!
//! - A [`Type`] tree, read from a structural schema, from the table of
//!   built-in types (`strategic.tsv`) or deduced, says which maps and lists
//!   merge key by key and which are atomic.
//! - A field [`Set`] (serialized as `FieldsV1`) is computed from objects;
//!   sets are compared, united and subtracted path by path.
//! - [`track_update`] records what a create, update or non-apply patch
//!   changed (operation `Update`); [`apply`] merges an applied
//!   configuration into the live object, removes what the manager stopped
//!   applying, and fails with 409 on fields other managers own.
//!
//! The behaviour was checked against kube-apiserver 1.37 (see
//! `tests/tests/ssa_suite.rs`); the comments name the rule each step
//! follows.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::LazyLock;

use serde_json::{Map, Number, Value, json};

pub(crate) use crate::gofmt::go_quote;
use crate::gofmt::is_print;

use super::ResourceInfo;
use super::meta::now;
use super::status::ApiError;

// ------------------------------------------------------------------ types

/// How server-side apply sees a value.
#[derive(Clone, Debug)]
pub(crate) enum Type {
    /// A leaf: string, number, boolean, int-or-string; or an untyped
    /// atomic value of any shape (a built-in `RawExtension`).
    Scalar,
    /// An object: named fields, elements of a map, or both.
    Map(MapType),
    /// An array.
    List(ListType),
    /// Known only from the value (`x-kubernetes-preserve-unknown-fields`):
    /// objects are granular maps whose keys are map elements, arrays are
    /// atomic.
    Deduced,
    /// A kind registered without a schema: like [`Type::Deduced`], but the
    /// keys of objects count as named struct fields, as in the Go types of
    /// built-in kinds (no `.` entry for nested objects).
    Loose,
    /// An object of this definition of Kubernetes' built-in types: the
    /// fields the table lists typed, the others [`Type::Loose`].
    Builtin(&'static str),
}

/// An object type.
#[derive(Clone, Debug, Default)]
pub(crate) struct MapType {
    /// Declared properties (named fields).
    fields: BTreeMap<String, Type>,
    /// The type of other keys (`additionalProperties`, or deduced under
    /// `x-kubernetes-preserve-unknown-fields`); `None`: other keys are not
    /// declared.
    elem: Option<Box<Type>>,
    /// Whether other keys count as named fields ([`Type::Loose`]).
    elem_named: bool,
    /// `x-kubernetes-map-type: atomic`: replaced as a whole.
    atomic: bool,
}

impl MapType {
    /// The type of key `name` and whether it is a named field.
    fn field(&self, name: &str) -> Option<(&Type, bool)> {
        match self.fields.get(name) {
            Some(t) => Some((t, true)),
            None => self.elem.as_deref().map(|t| (t, self.elem_named)),
        }
    }

    fn is_named(&self, name: &str) -> bool {
        self.fields.contains_key(name) || (self.elem.is_some() && self.elem_named)
    }
}

/// An array type.
#[derive(Clone, Debug)]
pub(crate) struct ListType {
    elem: Box<Type>,
    kind: ListKind,
}

/// `x-kubernetes-list-type`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ListKind {
    /// Replaced as a whole (the default).
    Atomic,
    /// Items are scalars identified by their value.
    Set,
    /// Items are objects identified by `x-kubernetes-list-map-keys`, with
    /// the keys' defaults.
    Map(Vec<(String, Option<Value>)>),
}

static DEDUCED: Type = Type::Deduced;
static LOOSE: Type = Type::Loose;
static DEDUCED_MAP: LazyLock<MapType> =
    LazyLock::new(|| MapType { elem: Some(Box::new(Type::Deduced)), ..MapType::default() });
static LOOSE_MAP: LazyLock<MapType> =
    LazyLock::new(|| MapType { elem: Some(Box::new(Type::Loose)), elem_named: true, ..MapType::default() });
static OBJECT_META: LazyLock<Type> = LazyLock::new(object_meta);
static LOOSE_ROOT: LazyLock<Type> = LazyLock::new(|| {
    Type::Map(with_type_meta(MapType { elem: Some(Box::new(Type::Loose)), elem_named: true, ..MapType::default() }))
});

/// ObjectMeta's schema as the API server's field manager has it: labels
/// and annotations granular string maps, finalizers a set, ownerReferences
/// a list of atomic items keyed by `uid` (default ""), managedFields atomic.
fn object_meta() -> Type {
    let mut fields = BTreeMap::new();
    for scalar in [
        "creationTimestamp",
        "deletionGracePeriodSeconds",
        "deletionTimestamp",
        "generateName",
        "generation",
        "name",
        "namespace",
        "resourceVersion",
        "selfLink",
        "uid",
    ] {
        fields.insert(scalar.to_owned(), Type::Scalar);
    }
    for map in ["labels", "annotations"] {
        fields.insert(map.to_owned(), Type::Map(MapType { elem: Some(Box::new(Type::Scalar)), ..MapType::default() }));
    }
    fields.insert("finalizers".into(), Type::List(ListType { elem: Box::new(Type::Scalar), kind: ListKind::Set }));
    fields
        .insert("managedFields".into(), Type::List(ListType { elem: Box::new(Type::Deduced), kind: ListKind::Atomic }));
    let owner = MapType {
        fields: ["apiVersion", "blockOwnerDeletion", "controller", "kind", "name", "uid"]
            .into_iter()
            .map(|f| (f.to_owned(), Type::Scalar))
            .collect(),
        atomic: true,
        ..MapType::default()
    };
    fields.insert(
        "ownerReferences".into(),
        // OwnerReference's `uid` has the OpenAPI default "": an owner
        // without one is keyed `uid=""` and then refused by validation.
        Type::List(ListType {
            elem: Box::new(Type::Map(owner)),
            kind: ListKind::Map(vec![("uid".into(), Some(Value::String(String::new())))]),
        }),
    );
    Type::Map(MapType { fields, ..MapType::default() })
}

/// Adds `apiVersion`, `kind` and ObjectMeta's `metadata`, as the API server
/// does for the root of a custom resource and for embedded resources.
fn with_type_meta(mut m: MapType) -> MapType {
    m.fields.entry("apiVersion".into()).or_insert(Type::Scalar);
    m.fields.entry("kind".into()).or_insert(Type::Scalar);
    m.fields.insert("metadata".into(), OBJECT_META.clone());
    m
}

/// The type of objects of a resource whose CRD version has this
/// `openAPIV3Schema`. What is not understood is deduced from the values.
pub(crate) fn parse_schema(schema: &Value) -> Type {
    match parse_node(schema) {
        Type::Map(m) => Type::Map(with_type_meta(m)),
        _ => LOOSE_ROOT.clone(),
    }
}

fn parse_node(s: &Value) -> Type {
    let flag = |key: &str| s.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag("x-kubernetes-int-or-string") {
        return Type::Scalar;
    }
    let preserve = flag("x-kubernetes-preserve-unknown-fields");
    let embedded = flag("x-kubernetes-embedded-resource");
    let properties = s.get("properties").and_then(Value::as_object);
    let additional = s.get("additionalProperties");
    match s.get("type").and_then(Value::as_str) {
        Some("array") => {
            let elem = s.get("items").map_or(Type::Deduced, parse_node);
            let kind = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    s.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|keys| {
                            keys.iter()
                                .filter_map(Value::as_str)
                                .map(|k| {
                                    let default = s.pointer(&format!("/items/properties/{}/default", pointer_token(k)));
                                    (k.to_owned(), default.cloned())
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            };
            Type::List(ListType { elem: Box::new(elem), kind })
        }
        Some("object") => parse_object(s, properties, additional, preserve, embedded),
        None if properties.is_some() || additional.is_some() || embedded => {
            parse_object(s, properties, additional, preserve, embedded)
        }
        None if preserve => Type::Deduced,
        _ => Type::Scalar,
    }
}

fn parse_object(
    s: &Value,
    properties: Option<&Map<String, Value>>,
    additional: Option<&Value>,
    preserve: bool,
    embedded: bool,
) -> Type {
    let mut m = MapType::default();
    for (name, schema) in properties.into_iter().flatten() {
        m.fields.insert(name.clone(), parse_node(schema));
    }
    m.elem = match additional {
        Some(schema @ Value::Object(_)) => Some(Box::new(parse_node(schema))),
        Some(Value::Bool(true)) => Some(Box::new(Type::Deduced)),
        _ if preserve || properties.is_none() => Some(Box::new(Type::Deduced)),
        _ => None,
    };
    m.atomic = s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
    Type::Map(if embedded { with_type_meta(m) } else { m })
}

/// `key` as one token of a JSON pointer.
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The root type of a resource's objects: its schema's, a built-in kind's
/// from the table, or deduced.
pub(crate) fn root_type(info: &ResourceInfo) -> &Type {
    match &info.schema {
        Some(s) => s.root(),
        None => builtin_root(&info.api_version(), &info.kind).unwrap_or(&LOOSE_ROOT),
    }
}

// ------------------------------------------------------- built-in types

/// The definitions of built-in types the table lists fields of, as apply
/// sees them: the listed fields typed, the rest [`Type::Loose`].
static BUILTIN: LazyLock<HashMap<&'static str, MapType>> = LazyLock::new(|| {
    let table = super::strategic::table();
    let listed: BTreeSet<&'static str> = table.fields.keys().map(|(def, _)| *def).collect();
    let mut maps: HashMap<&'static str, MapType> = HashMap::new();
    for ((def, name), meta) in &table.fields {
        let ty = builtin_field(meta, &listed);
        maps.entry(def).or_insert_with(|| LOOSE_MAP.clone()).fields.insert((*name).to_owned(), ty);
    }
    maps
});

/// The root types of the built-in kinds, by definition.
static BUILTIN_ROOTS: LazyLock<HashMap<&'static str, Type>> = LazyLock::new(|| {
    let table = super::strategic::table();
    table.kinds.values().filter_map(|def| Some((*def, Type::Map(with_type_meta(BUILTIN.get(def)?.clone()))))).collect()
});

/// ObjectMeta's definition, whose type is [`object_meta`]'s.
const OBJECT_META_DEF: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `RawExtension`, untyped and atomic in schemaconv: any value, a leaf.
const RAW_EXTENSION_DEF: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

fn builtin_root(api_version: &str, kind: &str) -> Option<&'static Type> {
    let def = super::strategic::table().kinds.get(&(api_version, kind))?;
    BUILTIN_ROOTS.get(def)
}

fn builtin_map(def: &str) -> &'static MapType {
    BUILTIN.get(def).unwrap_or(&LOOSE_MAP)
}

/// The type of one field the table lists, as kube-openapi's schemaconv
/// makes it from the OpenAPI definitions; `listed` are the definitions the
/// table lists fields of.
fn builtin_field(meta: &super::strategic::FieldMeta, listed: &BTreeSet<&'static str>) -> Type {
    let atomic = || match meta.target {
        Some(RAW_EXTENSION_DEF) => Type::Scalar,
        _ => Type::Map(MapType { atomic: true, ..LOOSE_MAP.clone() }),
    };
    let value = || match meta.target {
        Some(OBJECT_META_DEF) => OBJECT_META.clone(),
        Some(def) if listed.contains(def) => Type::Builtin(def),
        _ => Type::Loose,
    };
    match meta.shape {
        "list" => {
            let kind = match meta.apply_list {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    meta.apply_keys
                        .unwrap_or_default()
                        .split(',')
                        .filter(|k| !k.is_empty())
                        .map(|k| match k.split_once('=') {
                            Some((name, default)) => (name.to_owned(), serde_json::from_str(default).ok()),
                            None => (k.to_owned(), None),
                        })
                        .collect(),
                ),
                _ => ListKind::Atomic,
            };
            Type::List(ListType { elem: Box::new(if meta.atomic { atomic() } else { value() }), kind })
        }
        "map" => Type::Map(MapType { elem: Some(Box::new(value())), atomic: meta.atomic, ..MapType::default() }),
        _ if meta.atomic => atomic(),
        _ => value(),
    }
}

/// How a value is walked.
enum Node<'a> {
    Map(&'a MapType),
    List(&'a ListType),
    Leaf,
}

fn node<'a>(ty: &'a Type, v: &Value) -> Node<'a> {
    match ty {
        Type::Map(m) if !m.atomic && (v.is_object() || v.is_null()) => Node::Map(m),
        Type::List(l) if l.kind != ListKind::Atomic && (v.is_array() || v.is_null()) => Node::List(l),
        Type::Deduced if v.is_object() => Node::Map(&DEDUCED_MAP),
        // Kinds without a schema are typed on the API server, where null in
        // place of an object is an empty map, as for `Type::Map`.
        Type::Loose if v.is_object() || v.is_null() => Node::Map(&LOOSE_MAP),
        Type::Builtin(def) if v.is_object() || v.is_null() => Node::Map(builtin_map(def)),
        _ => Node::Leaf,
    }
}

/// The type below `pe`, for walks without values.
fn child_type<'a>(ty: &'a Type, pe: &PathElement) -> &'a Type {
    match (ty, pe) {
        (Type::Map(m), PathElement::Field(name)) => m.field(name).map_or(&DEDUCED, |(t, _)| t),
        (Type::List(l), _) => &l.elem,
        (Type::Loose, _) => &LOOSE,
        (Type::Builtin(def), PathElement::Field(name)) => builtin_map(def).field(name).map_or(&LOOSE, |(t, _)| t),
        _ => &DEDUCED,
    }
}

fn map_view(ty: &Type) -> Option<&MapType> {
    match ty {
        Type::Map(m) => Some(m),
        Type::Deduced => Some(&DEDUCED_MAP),
        Type::Loose => Some(&LOOSE_MAP),
        Type::Builtin(def) => Some(builtin_map(def)),
        _ => None,
    }
}

// ------------------------------------------------------ values and paths

/// A total order on values: numbers < strings < booleans < arrays <
/// objects < null; numbers compare numerically.
fn value_cmp(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_cmp(x, y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            x.iter().zip(y).map(|(a, b)| value_cmp(a, b)).find(|o| o.is_ne()).unwrap_or_else(|| x.len().cmp(&y.len()))
        }
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .zip(y)
            .map(|((ka, va), (kb, vb))| ka.cmp(kb).then_with(|| value_cmp(va, vb)))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn number_cmp(x: &Number, y: &Number) -> Ordering {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a.cmp(&b);
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a.cmp(&b);
    }
    let (a, b) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// JSON as Go's encoder writes it (`<`, `>`, `&`, U+2028 and U+2029
/// escaped): the text of `k:` and `v:` keys and of manager identifiers.
fn go_json(v: &Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A value as smd's `value.ToString` writes it in paths.
fn path_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => go_quote(s),
        Value::Array(items) => format!("[{}]", items.iter().map(path_value).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            format!("{{{}}}", map.iter().map(|(k, v)| format!("{k}={}", path_value(v))).collect::<Vec<_>>().join(", "))
        }
        other => other.to_string(),
    }
}

/// A value as Go's `%v` prints a decoded JSON value.
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => {
            format!("map[{}]", map.iter().map(|(k, v)| format!("{k}:{}", go_value(v))).collect::<Vec<_>>().join(" "))
        }
        other => other.to_string(),
    }
}

/// One step of a path: a field, a list item by key or by value, or an
/// index.
#[derive(Clone, Debug)]
pub(crate) enum PathElement {
    /// `f:<name>`: a field of an object.
    Field(String),
    /// `k:{...}`: an item of a list-map, by its keys (sorted by name).
    Key(Vec<(String, Value)>),
    /// `v:<json>`: an item of a set.
    Value(Value),
    /// `i:<n>`: an item of a list by position.
    Index(usize),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            Self::Field(_) => 0,
            Self::Key(_) => 1,
            Self::Value(_) => 2,
            Self::Index(_) => 3,
        }
    }

    /// The key of this step in `FieldsV1`.
    fn fields_v1_key(&self) -> String {
        match self {
            Self::Field(name) => format!("f:{name}"),
            Self::Key(keys) => {
                let map: Map<String, Value> = keys.iter().cloned().collect();
                format!("k:{}", go_json(&Value::Object(map)))
            }
            Self::Value(v) => format!("v:{}", go_json(v)),
            Self::Index(i) => format!("i:{i}"),
        }
    }

    fn parse_fields_v1_key(key: &str) -> Result<Self, String> {
        let (prefix, rest) = key.split_at_checked(2).ok_or_else(|| format!("unexpected key {key:?}"))?;
        match prefix {
            "f:" => Ok(Self::Field(rest.to_owned())),
            "k:" => {
                let map: Map<String, Value> =
                    serde_json::from_str(rest).map_err(|e| format!("invalid key {key:?}: {e}"))?;
                Ok(Self::Key(map.into_iter().collect()))
            }
            "v:" => serde_json::from_str(rest).map(Self::Value).map_err(|e| format!("invalid value {key:?}: {e}")),
            "i:" => rest.parse().map(Self::Index).map_err(|e| format!("invalid index {key:?}: {e}")),
            _ => Err(format!("unexpected key {key:?}")),
        }
    }
}

impl std::fmt::Display for PathElement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(keys) => {
                let parts: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={}", path_value(v))).collect();
                write!(f, "[{}]", parts.join(","))
            }
            Self::Value(v) => write!(f, "[={}]", path_value(v)),
            Self::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Field(a), Self::Field(b)) => a.cmp(b),
            (Self::Key(a), Self::Key(b)) => a
                .iter()
                .zip(b)
                .map(|((ka, va), (kb, vb))| ka.cmp(kb).then_with(|| value_cmp(va, vb)))
                .find(|o| o.is_ne())
                .unwrap_or_else(|| a.len().cmp(&b.len())),
            (Self::Value(a), Self::Value(b)) => value_cmp(a, b),
            (Self::Index(a), Self::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for PathElement {}

/// `.spec.ports[name="http"].port`
fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

// -------------------------------------------------------------- field sets

/// A set of paths, as a tree: `members` are paths ending here, `children`
/// the non-empty sets below a step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path`; the empty path (the whole object) is never owned.
    fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [pe] => {
                self.members.insert(pe.clone());
            }
            [pe, rest @ ..] => self.children.entry(pe.clone()).or_default().insert(rest),
        }
    }

    #[cfg(test)]
    fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [pe] => self.members.contains(pe),
            [pe, rest @ ..] => self.children.get(pe).is_some_and(|c| c.has(rest)),
        }
    }

    fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// The paths of `self` that are not paths of `other` (each path on its
    /// own: removing a path does not remove the paths below it).
    fn difference(&self, other: &Set) -> Set {
        let mut out = Set { members: self.members.difference(&other.members).cloned().collect(), ..Set::default() };
        for (pe, child) in &self.children {
            let rest = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    fn intersection(&self, other: &Set) -> Set {
        let mut out = Set { members: self.members.intersection(&other.members).cloned().collect(), ..Set::default() };
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// `self` without the paths of `other` and everything below them.
    fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set { members: self.members.difference(&other.members).cloned().collect(), ..Set::default() };
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// Every path, the members of a level before the levels below it.
    fn paths(&self) -> Vec<Vec<PathElement>> {
        fn walk(set: &Set, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
            for pe in &set.members {
                let mut path = prefix.clone();
                path.push(pe.clone());
                out.push(path);
            }
            for (pe, child) in &set.children {
                prefix.push(pe.clone());
                walk(child, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }

    /// The `FieldsV1` JSON: `{}` for a member without children, `"."` for
    /// a member that also has children.
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        for pe in &self.members {
            if !self.children.contains_key(pe) {
                out.insert(pe.fields_v1_key(), json!({}));
            }
        }
        for (pe, child) in &self.children {
            let mut inner = child.to_fields_v1();
            if self.members.contains(pe)
                && let Some(map) = inner.as_object_mut()
            {
                map.insert(".".into(), json!({}));
            }
            out.insert(pe.fields_v1_key(), inner);
        }
        Value::Object(out)
    }

    pub(crate) fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let map = v.as_object().ok_or_else(|| format!("expected an object, got {v}"))?;
        let mut out = Set::default();
        for (key, child) in map {
            if key == "." {
                continue;
            }
            let pe = PathElement::parse_fields_v1_key(key)?;
            let inner = child.as_object().ok_or_else(|| format!("expected an object at {key:?}"))?;
            if inner.is_empty() || inner.contains_key(".") {
                out.members.insert(pe.clone());
            }
            let below = Set::from_fields_v1(child)?;
            if !below.is_empty() {
                out.children.insert(pe, below);
            }
        }
        Ok(out)
    }
}

/// Builds a set from dotted field paths (`"metadata.name"`).
fn fields(paths: &[&str]) -> Set {
    let mut set = Set::default();
    for path in paths {
        let path: Vec<PathElement> = path.split('.').map(|f| PathElement::Field(f.to_owned())).collect();
        set.insert(&path);
    }
    set
}

/// What the field manager never records: type meta and server-owned
/// metadata.
static STRIPPED: LazyLock<Set> = LazyLock::new(|| {
    fields(&[
        "apiVersion",
        "kind",
        "metadata",
        "metadata.name",
        "metadata.namespace",
        "metadata.creationTimestamp",
        "metadata.selfLink",
        "metadata.uid",
        "metadata.clusterName",
        "metadata.generation",
        "metadata.managedFields",
        "metadata.resourceVersion",
    ])
});

static STATUS: LazyLock<Set> = LazyLock::new(|| fields(&["status"]));

// ------------------------------------------------------- typed operations

/// The identity of a list item within its list.
fn item_element(list: &ListType, item: &Value, index: usize) -> Result<PathElement, String> {
    match &list.kind {
        ListKind::Atomic => Ok(PathElement::Index(index)),
        ListKind::Set => Ok(PathElement::Value(item.clone())),
        ListKind::Map(keys) => {
            let Some(obj) = item.as_object() else {
                return Err("associative list with keys may not have non-map elements".into());
            };
            // A key the item lacks is its default, or else left out of
            // the identity (structured-merge-diff's rule).
            let mut found: Vec<(String, Value)> = keys
                .iter()
                .filter_map(|(k, default)| obj.get(k).or(default.as_ref()).map(|v| (k.clone(), v.clone())))
                .collect();
            if found.is_empty() {
                let quoted: Vec<String> = keys.iter().map(|(k, _)| go_quote(k)).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    quoted.join(" ")
                ));
            }
            found.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(found))
        }
    }
}

/// The items of a list with their identities (items without one skipped).
fn index_items<'v>(list: &ListType, items: &'v [Value]) -> Vec<(PathElement, &'v Value)> {
    items.iter().enumerate().filter_map(|(i, item)| item_element(list, item, i).ok().map(|pe| (pe, item))).collect()
}

/// What the API server's typed conversion reports: undeclared fields,
/// list items without keys, duplicate items (unless `allow_duplicates`),
/// objects or arrays of the wrong shape.
fn validate(v: &Value, ty: &Type, allow_duplicates: bool) -> Vec<String> {
    fn walk(v: &Value, ty: &Type, path: &mut Vec<PathElement>, allow_duplicates: bool, errs: &mut Vec<String>) {
        let expects_map = matches!(ty, Type::Map(_) | Type::Builtin(_));
        let expects_list = matches!(ty, Type::List(_));
        if (expects_map && !v.is_object() && !v.is_null()) || (expects_list && !v.is_array() && !v.is_null()) {
            let what = if expects_map { "map" } else { "list" };
            errs.push(format!("{}: expected {what}, got &{{{}}}", path_string(path), go_value(v)));
            return;
        }
        match node(ty, v) {
            Node::Map(m) => {
                for (key, child) in v.as_object().into_iter().flatten() {
                    path.push(PathElement::Field(key.clone()));
                    match m.field(key) {
                        Some((child_ty, _)) => walk(child, child_ty, path, allow_duplicates, errs),
                        None => {
                            errs.push(format!("{}: field not declared in schema", path_string(path)));
                            path.pop();
                            // The API server stops at the first one.
                            break;
                        }
                    }
                    path.pop();
                }
            }
            Node::List(l) => {
                let mut seen = BTreeSet::new();
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    match item_element(l, item, i) {
                        Ok(pe) => {
                            if !seen.insert(pe.clone()) && !allow_duplicates {
                                errs.push(format!("{}: duplicate entries for key {pe}", path_string(path)));
                                continue;
                            }
                            path.push(pe);
                            walk(item, &l.elem, path, allow_duplicates, errs);
                            path.pop();
                        }
                        Err(e) => errs.push(format!("{}: element {i}: {e}", path_string(path))),
                    }
                }
            }
            Node::Leaf => {}
        }
    }
    let mut errs = Vec::new();
    walk(v, ty, &mut Vec::new(), allow_duplicates, &mut errs);
    errs
}

/// The paths `v` sets: scalars, atomic values, list items, map elements,
/// empty objects and nulls (the named fields holding non-empty objects are
/// implied by their children).
pub(crate) fn to_set(v: &Value, ty: &Type) -> Set {
    fn walk(v: &Value, ty: &Type, path: &mut Vec<PathElement>, out: &mut Set) {
        match node(ty, v) {
            Node::Leaf => out.insert(path),
            Node::Map(m) => {
                for (key, child) in v.as_object().into_iter().flatten() {
                    let (child_ty, named) = m.field(key).unwrap_or((&DEDUCED, false));
                    path.push(PathElement::Field(key.clone()));
                    walk(child, child_ty, path, out);
                    if child.is_null() || child.as_object().is_some_and(Map::is_empty) || !named {
                        out.insert(path);
                    }
                    path.pop();
                }
            }
            Node::List(l) => {
                for (pe, item) in index_items(l, v.as_array().map(Vec::as_slice).unwrap_or_default()) {
                    path.push(pe);
                    walk(item, &l.elem, path, out);
                    out.insert(path);
                    path.pop();
                }
            }
        }
    }
    let mut out = Set::default();
    walk(v, ty, &mut Vec::new(), &mut out);
    out
}

/// The paths added, modified and removed from one object to another.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    added: Set,
    modified: Set,
    removed: Set,
}

impl Comparison {
    fn filter(self, scope: Scope) -> Self {
        Self {
            added: scope.filter(&self.added),
            modified: scope.filter(&self.modified),
            removed: scope.filter(&self.removed),
        }
    }

    fn changed(&self) -> Set {
        self.added.union(&self.modified)
    }
}

pub(crate) fn compare(lhs: &Value, rhs: &Value, ty: &Type) -> Comparison {
    fn walk(l: Option<&Value>, r: Option<&Value>, ty: &Type, path: &mut Vec<PathElement>, out: &mut Comparison) {
        let ln = l.map(|v| node(ty, v));
        let rn = r.map(|v| node(ty, v));
        let container = match (ln, rn) {
            (Some(Node::Map(m)), None | Some(Node::Map(_))) | (None, Some(Node::Map(m))) => Some(Node::Map(m)),
            (Some(Node::List(t)), None | Some(Node::List(_))) | (None, Some(Node::List(t))) => Some(Node::List(t)),
            _ => None,
        };
        match container {
            Some(Node::Map(m)) => {
                let lo = l.and_then(Value::as_object);
                let ro = r.and_then(Value::as_object);
                let keys: BTreeSet<&String> = lo.into_iter().chain(ro).flat_map(Map::keys).collect();
                for key in keys {
                    let child_ty = m.field(key).map_or(&DEDUCED, |(t, _)| t);
                    path.push(PathElement::Field(key.clone()));
                    walk(lo.and_then(|o| o.get(key)), ro.and_then(|o| o.get(key)), child_ty, path, out);
                    path.pop();
                }
            }
            Some(Node::List(t)) => {
                let li = index_items(t, l.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default());
                let ri = index_items(t, r.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default());
                let mut lmap: BTreeMap<&PathElement, &Value> = BTreeMap::new();
                for (pe, item) in &li {
                    lmap.entry(pe).or_insert(item);
                }
                let mut rmap: BTreeMap<&PathElement, &Value> = BTreeMap::new();
                for (pe, item) in &ri {
                    rmap.entry(pe).or_insert(item);
                }
                let keys: BTreeSet<&PathElement> = lmap.keys().chain(rmap.keys()).copied().collect();
                for pe in keys {
                    path.push(pe.clone());
                    walk(lmap.get(pe).copied(), rmap.get(pe).copied(), &t.elem, path, out);
                    path.pop();
                }
            }
            _ => {
                match (l, r) {
                    (None, _) => out.added.insert(path),
                    (_, None) => out.removed.insert(path),
                    (Some(a), Some(b)) if a != b => out.modified.insert(path),
                    _ => {}
                }
                return;
            }
        }
        if l.is_none() {
            out.added.insert(path);
        } else if r.is_none() {
            out.removed.insert(path);
        }
    }
    let mut out = Comparison::default();
    walk(Some(lhs), Some(rhs), ty, &mut Vec::new(), &mut out);
    out
}

/// `rhs` merged into `lhs`: granular objects key by key, list-maps and sets
/// item by item (items of `lhs` only keep their place, the others follow
/// `rhs`'s order), everything else replaced by `rhs`.
pub(crate) fn merge(lhs: Option<&Value>, rhs: &Value, ty: &Type) -> Value {
    let Some(lhs) = lhs else { return rhs.clone() };
    match (node(ty, lhs), node(ty, rhs)) {
        (Node::Map(m), Node::Map(_)) => {
            let lo = lhs.as_object();
            let ro = rhs.as_object();
            // Empty or null on both sides: a leaf, which keeps `{}` and
            // `null` apart.
            if lo.is_none_or(Map::is_empty) && ro.is_none_or(Map::is_empty) {
                return rhs.clone();
            }
            let mut out = lo.cloned().unwrap_or_default();
            for (key, value) in ro.into_iter().flatten() {
                let child_ty = m.field(key).map_or(&DEDUCED, |(t, _)| t);
                let merged = merge(out.get(key), value, child_ty);
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        (Node::List(t), Node::List(_)) => {
            let la = lhs.as_array().map(Vec::as_slice).unwrap_or_default();
            let ra = rhs.as_array().map(Vec::as_slice).unwrap_or_default();
            if la.is_empty() && ra.is_empty() {
                return rhs.clone();
            }
            Value::Array(merge_items(t, la, ra))
        }
        _ => rhs.clone(),
    }
}

fn merge_items(t: &ListType, la: &[Value], ra: &[Value]) -> Vec<Value> {
    let lhs = index_items(t, la);
    let rhs = index_items(t, ra);
    let mut lmap: BTreeMap<&PathElement, &Value> = BTreeMap::new();
    for (pe, item) in &lhs {
        lmap.entry(pe).or_insert(item);
    }
    let mut rmap: BTreeMap<&PathElement, &Value> = BTreeMap::new();
    for (pe, item) in &rhs {
        rmap.entry(pe).or_insert(item);
    }
    // The items on both sides, in rhs order: each is placed when rhs
    // reaches it, not where lhs had it.
    let mut shared = rhs.iter().map(|(pe, _)| pe).filter(|pe| lmap.contains_key(pe));
    let mut next_shared = shared.next();
    let mut placed: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let lpe = &lhs[li].0;
            if *lpe == rhs[ri].0 {
                placed.insert(lpe);
                out.push(merge(lmap.get(lpe).copied(), rmap[lpe], &t.elem));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if rmap.contains_key(lpe) && next_shared.is_some_and(|n| n != lpe) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let lpe = &lhs[li].0;
            if !rmap.contains_key(lpe) {
                out.push(lhs[li].1.clone());
                li += 1;
                continue;
            }
            if placed.contains(lpe) || ri >= rhs.len() {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            let rpe = &rhs[ri].0;
            if placed.insert(rpe) {
                out.push(merge(lmap.get(rpe).copied(), rmap[rpe], &t.elem));
            }
            ri += 1;
            if next_shared.is_some_and(|n| n == rpe) {
                next_shared = shared.next();
            }
        }
    }
    out
}

/// `v` without the paths in `set` (and what is below them). An object or
/// list that loses all its entries becomes `null`, as on the API server.
fn remove_items(v: &Value, set: &Set, ty: &Type) -> Value {
    if set.is_empty() {
        return v.clone();
    }
    match node(ty, v) {
        Node::Map(m) => match v.as_object() {
            Some(obj) if !obj.is_empty() => {
                let mut out = Map::new();
                for (key, value) in obj {
                    let pe = PathElement::Field(key.clone());
                    if set.members.contains(&pe) {
                        continue;
                    }
                    let value = match set.children.get(&pe) {
                        Some(below) => remove_items(value, below, m.field(key).map_or(&DEDUCED, |(t, _)| t)),
                        None => value.clone(),
                    };
                    out.insert(key.clone(), value);
                }
                if out.is_empty() { Value::Null } else { Value::Object(out) }
            }
            _ => v.clone(),
        },
        Node::List(t) => match v.as_array() {
            Some(items) if !items.is_empty() => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let Ok(pe) = item_element(t, item, i) else {
                        out.push(item.clone());
                        continue;
                    };
                    if set.members.contains(&pe) {
                        continue;
                    }
                    out.push(match set.children.get(&pe) {
                        Some(below) => remove_items(item, below, &t.elem),
                        None => item.clone(),
                    });
                }
                if out.is_empty() { Value::Null } else { Value::Array(out) }
            }
            _ => v.clone(),
        },
        Node::Leaf => v.clone(),
    }
}

/// `set` plus the named fields that only have children in it (`spec` when
/// `spec.replicas` is in the set; not the keys of maps).
fn ensure_named(set: &Set, ty: &Type) -> Set {
    let view = map_view(ty);
    let mut out = Set { members: set.members.clone(), children: BTreeMap::new() };
    for (pe, child) in &set.children {
        if let (PathElement::Field(name), Some(m)) = (pe, view)
            && m.is_named(name)
        {
            out.members.insert(pe.clone());
        }
        out.children.insert(pe.clone(), ensure_named(child, child_type(ty, pe)));
    }
    out
}

// ------------------------------------------------------------- managers

/// `managedFields[].operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// One `managedFields` entry.
#[derive(Clone, Debug)]
struct Entry {
    manager: String,
    operation: Operation,
    api_version: String,
    subresource: String,
    /// RFC 3339, seconds, UTC.
    time: Option<String>,
    set: Set,
}

/// The entries by manager identifier.
type Managers = BTreeMap<String, Entry>;

/// The manager identifier the API server keys entries by: the entry's JSON
/// without time and fields, and without apiVersion for appliers (who keep
/// one entry across versions).
fn identifier(manager: &str, operation: Operation, api_version: &str, subresource: &str) -> String {
    let mut id = String::from("{");
    let mut sep = "";
    for (key, value) in [
        ("manager", manager),
        ("operation", operation.as_str()),
        ("apiVersion", if operation == Operation::Apply { "" } else { api_version }),
        ("subresource", subresource),
    ] {
        if !value.is_empty() {
            let _ = write!(id, "{sep}\"{key}\":{}", go_json(&Value::String(value.to_owned())));
            sep = ",";
        }
    }
    id.push('}');
    id
}

fn seconds(time: Option<&str>) -> i64 {
    time.and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok()).map_or(0, |t| t.as_second())
}

fn format_time(ts: k8s_openapi::jiff::Timestamp) -> String {
    k8s_openapi::jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", ts).unwrap_or_else(|_| ts.to_string())
}

impl Entry {
    fn id(&self) -> String {
        identifier(&self.manager, self.operation, &self.api_version, &self.subresource)
    }

    /// How conflict messages name the manager.
    fn printed(&self) -> String {
        let mut out = go_quote(&self.manager);
        if !self.subresource.is_empty() {
            let _ = write!(out, " with subresource {}", go_quote(&self.subresource));
        }
        if self.operation == Operation::Update {
            let _ = write!(out, " using {}", self.api_version);
        }
        out
    }

    fn decode(v: &Value, index: usize) -> Result<Entry, String> {
        let text = |key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let operation = match v.get("operation").and_then(Value::as_str) {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            _ => return Err("operation must be `Apply` or `Update`".into()),
        };
        let api_version = text("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match v.get("fieldsType").and_then(Value::as_str) {
            Some("FieldsV1") => {}
            None | Some("") => return Err(format!("missing fieldsType in managed fields entry {index}")),
            Some(other) => return Err(format!("invalid fieldsType {other:?} in managed fields entry {index}")),
        }
        let set = match v.get("fieldsV1") {
            None | Some(Value::Null) => Set::default(),
            Some(f) => Set::from_fields_v1(f)?,
        };
        let time = match v.get("time") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => Some(format_time(
                t.parse::<k8s_openapi::jiff::Timestamp>().map_err(|e| format!("invalid time {t:?}: {e}"))?,
            )),
            Some(other) => return Err(format!("invalid time {other}")),
        };
        Ok(Entry { manager: text("manager"), operation, api_version, subresource: text("subresource"), time, set })
    }

    fn encode(&self) -> Value {
        let mut entry = Map::new();
        if !self.manager.is_empty() {
            entry.insert("manager".into(), self.manager.clone().into());
        }
        entry.insert("operation".into(), self.operation.as_str().into());
        entry.insert("apiVersion".into(), self.api_version.clone().into());
        if let Some(time) = &self.time {
            entry.insert("time".into(), time.clone().into());
        }
        entry.insert("fieldsType".into(), "FieldsV1".into());
        entry.insert("fieldsV1".into(), self.set.to_fields_v1());
        if !self.subresource.is_empty() {
            entry.insert("subresource".into(), self.subresource.clone().into());
        }
        Value::Object(entry)
    }
}

fn managed_fields_of(obj: &Value) -> Option<&Value> {
    obj.get("metadata").and_then(|m| m.get("managedFields"))
}

/// Decodes `metadata.managedFields`; a later entry with the same
/// identifier replaces an earlier one.
fn decode(list: Option<&Value>) -> Result<Managers, String> {
    let mut managers = Managers::new();
    let entries = match list {
        None | Some(Value::Null) => return Ok(managers),
        Some(Value::Array(entries)) => entries,
        Some(other) => return Err(format!("managedFields must be a list, got {other}")),
    };
    for (i, raw) in entries.iter().enumerate() {
        let entry = Entry::decode(raw, i)?;
        managers.insert(entry.id(), entry);
    }
    Ok(managers)
}

/// `[{}]`: the request that clears `managedFields`.
fn is_reset(list: Option<&Value>) -> bool {
    matches!(list, Some(Value::Array(entries)) if entries.len() == 1 && entries[0].as_object().is_some_and(Map::is_empty))
}

/// The entries in the API server's order: operation, time (seconds),
/// manager, apiVersion, subresource.
fn encode(managers: &Managers) -> Vec<Value> {
    let mut entries: Vec<&Entry> = managers.values().collect();
    entries.sort_by(|a, b| {
        a.operation
            .cmp(&b.operation)
            .then_with(|| seconds(a.time.as_deref()).cmp(&seconds(b.time.as_deref())))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    entries.into_iter().map(Entry::encode).collect()
}

/// Sets (or removes, when there are none) `metadata.managedFields`.
fn store_managed(obj: &mut Value, managers: &Managers) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    if managers.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(encode(managers)));
    }
}

fn without_managed_fields(obj: &Value) -> Value {
    let mut obj = obj.clone();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    obj
}

/// At most this many `Update` entries are kept; older ones are merged into
/// one `ancient-changes` entry.
const MAX_UPDATE_MANAGERS: usize = 10;
const ANCIENT_CHANGES: &str = "ancient-changes";

fn cap_update_managers(managers: &mut Managers) {
    let mut updaters: Vec<(i64, String)> = managers
        .iter()
        .filter(|(_, e)| e.operation == Operation::Update)
        .map(|(id, e)| (seconds(e.time.as_deref()), id.clone()))
        .collect();
    let mut count = updaters.len();
    if count <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort();
    for (_, id) in updaters {
        if count <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(entry) = managers.get(&id) else { continue };
        let bucket_id = identifier(ANCIENT_CHANGES, Operation::Update, &entry.api_version, "");
        if bucket_id == id {
            continue;
        }
        let Some(entry) = managers.remove(&id) else { continue };
        match managers.get_mut(&bucket_id) {
            Some(bucket) => {
                bucket.set = entry.set.union(&bucket.set);
                bucket.time = entry.time;
                count -= 1;
            }
            None => {
                managers
                    .insert(bucket_id, Entry { manager: ANCIENT_CHANGES.into(), subresource: String::new(), ..entry });
            }
        }
    }
}

// ---------------------------------------------------------- field manager

/// Which fields a write may own: with a status subresource, the main
/// resource never owns `status` and `/status` owns nothing else.
#[derive(Clone, Copy, Debug)]
enum Scope {
    Whole,
    Main,
    Status,
}

impl Scope {
    fn of(info: &ResourceInfo, subresource: Option<&str>) -> Self {
        match subresource {
            Some(_) => Self::Status,
            None if info.has_status_subresource => Self::Main,
            None => Self::Whole,
        }
    }

    fn filter(self, set: &Set) -> Set {
        match self {
            Self::Whole => set.clone(),
            Self::Main => set.recursive_difference(&STATUS),
            Self::Status => {
                let status = PathElement::Field("status".into());
                let mut out = Set::default();
                if set.members.contains(&status) {
                    out.members.insert(status.clone());
                }
                if let Some(below) = set.children.get(&status) {
                    out.children.insert(status, below.clone());
                }
                out
            }
        }
    }
}

/// One write's view of the resource.
struct Ctx<'a> {
    root: &'a Type,
    api_version: String,
    subresource: String,
    scope: Scope,
}

impl<'a> Ctx<'a> {
    fn new(info: &'a ResourceInfo, subresource: Option<&str>) -> Self {
        Self {
            root: root_type(info),
            api_version: info.api_version(),
            subresource: subresource.unwrap_or_default().to_owned(),
            scope: Scope::of(info, subresource),
        }
    }

    /// Entries of other versions would need a conversion the fake cannot
    /// do.
    fn check_versions(&self, managers: &Managers) -> Result<(), String> {
        match managers.values().find(|e| e.api_version != self.api_version) {
            Some(e) => Err(format!(
                "no conversion from {} to {} for the managed fields of {}",
                e.api_version,
                self.api_version,
                go_quote(&e.manager)
            )),
            None => Ok(()),
        }
    }

    /// Moves the fields `cmp` changed away from every manager but
    /// `workflow` (or reports them as conflicts), drops removed fields
    /// from everyone, and drops managers left with nothing.
    fn take_ownership(
        &self,
        managers: &mut Managers,
        workflow: Option<&str>,
        cmp: &Comparison,
        force: bool,
    ) -> Result<(), Vec<(Entry, Set)>> {
        let changed = cmp.changed();
        let conflicts: Vec<(String, Set)> = managers
            .iter()
            .filter(|(id, _)| Some(id.as_str()) != workflow)
            .map(|(id, e)| (id.clone(), e.set.intersection(&changed)))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        if !force && !conflicts.is_empty() {
            return Err(conflicts
                .into_iter()
                .filter_map(|(id, c)| managers.get(&id).map(|e| (e.clone(), c)))
                .collect());
        }
        for (id, taken) in &conflicts {
            if let Some(e) = managers.get_mut(id) {
                e.set = e.set.difference(taken);
            }
        }
        for e in managers.values_mut() {
            e.set = e.set.difference(&cmp.removed);
        }
        managers.retain(|_, e| !e.set.is_empty());
        Ok(())
    }

    /// An `Update` by `manager` from `live` to `new` (both without
    /// managedFields): takes what changed from everyone else and adds it to
    /// the manager's entry, stamped now.
    fn update(&self, live: &Value, new: &Value, managers: &mut Managers, manager: &str) -> Result<(), String> {
        self.check_versions(managers)?;
        let cmp = compare(live, new, self.root).filter(self.scope);
        // The change is first owned by a nameless current operation, so
        // the manager's own earlier entry loses what changed as well...
        let _ = self.take_ownership(managers, None, &cmp, true);
        let set = cmp.changed().difference(&STRIPPED);
        if set.is_empty() {
            return Ok(());
        }
        // ...and then gets it back, merged with what it still owned.
        let id = identifier(manager, Operation::Update, &self.api_version, &self.subresource);
        let set = match managers.remove(&id) {
            Some(previous) => set.union(&previous.set),
            None => set,
        };
        managers.insert(
            id,
            Entry {
                manager: manager.to_owned(),
                operation: Operation::Update,
                api_version: self.api_version.clone(),
                subresource: self.subresource.clone(),
                time: now().as_str().map(str::to_owned),
                set,
            },
        );
        Ok(())
    }
}

/// The manager of a non-apply write: the `fieldManager` parameter, or the
/// User-Agent up to its first `/` (printable characters, at most 128
/// bytes), or `unknown`.
pub(crate) fn manager_of(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    let prefix = user_agent.unwrap_or_default().split('/').next().unwrap_or_default();
    let mut out = String::new();
    for c in prefix.chars().filter(|c| is_print(*c)) {
        if out.len() + c.len_utf8() > MAX_FIELD_MANAGER_LEN {
            break;
        }
        out.push(c);
    }
    if out.is_empty() { "unknown".into() } else { out }
}

const MAX_FIELD_MANAGER_LEN: usize = 128;

/// The API server's checks of `fieldManager` and `force` on a write, as
/// 422 on `{kind}.meta.k8s.io` (`CreateOptions`, `UpdateOptions`,
/// `PatchOptions`).
pub(crate) fn validate_options(
    kind: &str,
    field_manager: Option<&str>,
    apply: Option<bool>,
    force_given: bool,
    dry_run: Option<&str>,
    field_validation: Option<&str>,
) -> Result<(), ApiError> {
    let mut causes: Vec<(&'static str, String, String)> = Vec::new();
    let manager = field_manager.unwrap_or_default();
    match apply {
        Some(true) if manager.is_empty() => causes.push((
            "FieldValueRequired",
            "fieldManager".into(),
            "Required value: is required for apply patch".into(),
        )),
        Some(false) if force_given => causes.push((
            "FieldValueForbidden",
            "force".into(),
            "Forbidden: may not be specified for non-apply patch".into(),
        )),
        _ => {}
    }
    if manager.len() > MAX_FIELD_MANAGER_LEN {
        causes.push((
            "FieldValueTooLong",
            "fieldManager".into(),
            format!("Too long: may not be more than {MAX_FIELD_MANAGER_LEN} bytes"),
        ));
    }
    for (i, c) in manager.char_indices() {
        if !is_print(c) {
            causes.push((
                "FieldValueInvalid",
                "fieldManager".into(),
                format!("Invalid value: {}: invalid character U+{:04X} (at position {i})", go_quote(manager), c as u32),
            ));
        }
    }
    if let Some(value) = dry_run.filter(|v| *v != "All") {
        causes.push((
            "FieldValueNotSupported",
            "dryRun".into(),
            format!("Unsupported value: [{}]: supported values: \"All\"", go_quote(value)),
        ));
    }
    if let Some(value) = field_validation.filter(|v| !matches!(*v, "Ignore" | "Strict" | "Warn")) {
        causes.push((
            "FieldValueNotSupported",
            "fieldValidation".into(),
            format!("Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"", go_quote(value)),
        ));
    }
    if causes.is_empty() { Ok(()) } else { Err(ApiError::invalid_options(kind, causes)) }
}

/// The API server's check of a delete's `dryRun` (`ValidateDeleteOptions`):
/// every value `All`, from the body's `DeleteOptions` when there is one
/// (`{}` included), else from the query (the server decodes one or the
/// other).
pub(crate) fn validate_delete_options(query_dry_run: Option<&str>, opts: &Value) -> Result<(), ApiError> {
    let values: Vec<&str> = match opts {
        Value::Object(body) => match body.get("dryRun") {
            Some(Value::Array(values)) => values.iter().map(|v| v.as_str().unwrap_or_default()).collect(),
            _ => Vec::new(),
        },
        _ => query_dry_run.into_iter().collect(),
    };
    if values.iter().all(|v| *v == "All") {
        return Ok(());
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    Err(ApiError::invalid_options(
        "DeleteOptions",
        vec![(
            "FieldValueNotSupported",
            "dryRun".into(),
            format!("Unsupported value: [{}]: supported values: \"All\"", quoted.join(" ")),
        )],
    ))
}

/// Records a create, update or non-apply patch (operation `Update`) in
/// `new`'s managedFields. `live` is the stored object (`None` on create);
/// `new` is what will be stored, with the managedFields the request sent
/// (or the live ones). Like the API server:
///
/// - managedFields sent with the request replace the live ones, unless they
///   are empty, invalid, or the write is to a subresource; `[{}]` clears
///   them;
/// - an object without managedFields stays without (only creates start
///   tracking);
/// - if the managers cannot be updated, the live managedFields are kept.
pub(crate) fn track_update(
    info: &ResourceInfo,
    live: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
) {
    let ctx = Ctx::new(info, subresource);
    let live_fields = live.and_then(managed_fields_of).cloned();
    let sent = managed_fields_of(new).cloned();
    let from_live = || decode(live_fields.as_ref()).unwrap_or_default();
    let mut managers = if subresource.is_some() {
        from_live()
    } else if is_reset(sent.as_ref()) {
        Managers::new()
    } else {
        match decode(sent.as_ref()) {
            Ok(m) if !m.is_empty() => m,
            _ => from_live(),
        }
    };
    let keep_live = |new: &mut Value| {
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            match &live_fields {
                Some(f) => meta.insert("managedFields".into(), f.clone()),
                None => meta.remove("managedFields"),
            };
        }
    };
    // Objects without managedFields are only tracked from their creation.
    if managers.is_empty() && live.is_some() {
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        return;
    }
    // Unlike apply bodies, stored objects are not checked against the
    // schema: the fake does not prune unknown fields, which are deduced.
    let before = live.map_or_else(|| empty_object(info), without_managed_fields);
    let after = without_managed_fields(new);
    match ctx.update(&before, &after, &mut managers, manager) {
        Ok(()) => {
            cap_update_managers(&mut managers);
            store_managed(new, &managers);
        }
        Err(_) => keep_live(new),
    }
}

/// Records in `new`'s `managedFields` a write of `manager` through a custom
/// resource's `scale` subresource, as the API server's scale handler does:
/// ownership is computed on the `Scale`, whose only field a write can change
/// is the desired replicas (absent when 0, as Go omits it), and mapped to
/// the object's replicas path. `before` and `after` are the object's view
/// of the `Scale` (an object holding only the replicas at that path, when
/// not 0). Other managers lose the replicas a write changes; an entry with
/// `subresource: scale` owns them while they are not 0.
pub(crate) fn track_scale_update(
    info: &ResourceInfo,
    live: &Value,
    new: &mut Value,
    manager: &str,
    (before, after): (&Value, &Value),
) {
    let ctx = Ctx {
        root: root_type(info),
        api_version: info.api_version(),
        subresource: "scale".into(),
        scope: Scope::Whole,
    };
    let live_fields = managed_fields_of(live).cloned();
    let Ok(mut managers) = decode(live_fields.as_ref()) else { return };
    // Objects without managedFields are only tracked from their creation.
    if managers.is_empty() {
        return;
    }
    if ctx.update(before, after, &mut managers, manager).is_ok() {
        cap_update_managers(&mut managers);
        store_managed(new, &managers);
    }
}

/// What decoding into Go types does to a stored object on the API server:
/// `metadata` (ObjectMeta, every optional field `omitempty`) loses null,
/// empty-object and empty-list values, and objects of kinds without a schema
/// (built-in kinds, typed on the API server) lose null values. This is
/// where a map emptied by server-side apply disappears.
pub(crate) fn normalize(info: &ResourceInfo, obj: &mut Value) {
    fn drop_nulls(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                map.values_mut().for_each(drop_nulls);
            }
            Value::Array(items) => items.iter_mut().for_each(drop_nulls),
            _ => {}
        }
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|_, v| match v {
            Value::Null => false,
            Value::Object(m) => !m.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => true,
        });
    }
    if !info.is_custom() {
        drop_nulls(obj);
    }
}

/// What a new object of the resource looks like before a write fills it.
fn empty_object(info: &ResourceInfo) -> Value {
    json!({"apiVersion": info.api_version(), "kind": info.kind})
}

/// `Group/Version, Kind=Kind` as Go prints a GroupVersionKind.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    format!("{group}/{version}, Kind={kind}")
}

/// Server-side apply of `config` by `manager` to `live` (`None`: the object
/// does not exist and is created). Returns the object to store, with its
/// managedFields, before the write's usual rules (server-owned metadata,
/// status or spec reset) apply.
pub(crate) fn apply(
    info: &ResourceInfo,
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    subresource: Option<&str>,
) -> Result<Value, ApiError> {
    let ctx = Ctx::new(info, subresource);
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or_default();
    if api_version != ctx.api_version || kind != info.kind {
        return Err(ApiError::bad_request(format!("invalid object type: {}", gvk_string(api_version, kind))));
    }
    if managed_fields_of(config).is_some_and(|f| !f.is_null()) {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let describe = |obj: &Value| {
        let meta_str =
            |key: &str| obj.get("metadata").and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or_default();
        format!("{}/{}; {}", meta_str("namespace"), meta_str("name"), gvk_string(api_version, kind))
    };
    let typed_errors = |obj: &Value, errs: Vec<String>| {
        let detail = if errs.len() == 1 {
            errs.into_iter().next().unwrap_or_default()
        } else {
            format!("errors:\n  {}", errs.join("\n  "))
        };
        ApiError::server_error(format!("failed to create typed patch object ({}): {detail}", describe(obj)))
    };
    let errs = validate(config, ctx.root, false);
    if !errs.is_empty() {
        return Err(typed_errors(config, errs));
    }
    let live_obj = live.map_or_else(|| empty_object(info), without_managed_fields);
    let mut managers = decode(live.and_then(managed_fields_of))
        .map_err(|e| ApiError::server_error(format!("failed to decode managed fields: {e}")))?;
    ctx.check_versions(&managers).map_err(ApiError::server_error)?;
    // An object nobody manages yet: what it holds is owned by
    // `before-first-apply`, so that the first applier conflicts with it.
    if managers.is_empty() {
        ctx.update(&empty_object(info), &live_obj, &mut managers, "before-first-apply")
            .map_err(ApiError::server_error)?;
    }

    let merged = merge(Some(&live_obj), config, ctx.root);
    let id = identifier(manager, Operation::Apply, "", &ctx.subresource);
    let last = managers.get(&id).map(|e| e.set.clone());
    let time = managers.get(&id).and_then(|e| e.time.clone());
    managers.insert(
        id.clone(),
        Entry {
            manager: manager.to_owned(),
            operation: Operation::Apply,
            api_version: ctx.api_version.clone(),
            subresource: ctx.subresource.clone(),
            time,
            set: ctx.scope.filter(&to_set(config, ctx.root)),
        },
    );
    let new = prune(&merged, &managers, last.as_ref(), ctx.root);
    let cmp = compare(&live_obj, &new, ctx.root).filter(ctx.scope);
    if let Err(conflicts) = ctx.take_ownership(&mut managers, Some(&id), &cmp, force) {
        return Err(conflict_error(&conflicts));
    }
    if let Some(entry) = managers.get_mut(&id) {
        entry.set = entry.set.difference(&STRIPPED);
        // The time says when the manager last changed the object.
        if new != live_obj {
            entry.time = now().as_str().map(str::to_owned);
        }
        if entry.set.is_empty() {
            managers.remove(&id);
        }
    }
    cap_update_managers(&mut managers);
    let mut new = new;
    store_managed(&mut new, &managers);
    Ok(new)
}

/// `merged` without what the applier applied last time (`last`) and no
/// longer applies, unless another manager owns it; fields nobody owned
/// before are left alone.
fn prune(merged: &Value, managers: &Managers, last: Option<&Set>, ty: &Type) -> Value {
    let Some(last) = last.filter(|s| !s.is_empty()) else { return merged.clone() };
    let last = ensure_named(last, ty);
    // Everything the applier had, gone...
    let without_last = remove_items(merged, &last, ty);
    // ...then back what anyone (the applier's new configuration included)
    // owns...
    let owned = managers.values().fold(Set::default(), |acc, e| acc.union(&e.set));
    let merged_set = ensure_named(&to_set(merged, ty), ty);
    let keep = ensure_named(&to_set(&without_last, ty), ty).union(&ensure_named(&owned, ty));
    let pruned = remove_items(merged, &merged_set.difference(&keep), ty);
    // ...and only what the applier had is really removed.
    let gone = merged_set.difference(&ensure_named(&to_set(&pruned, ty), ty)).intersection(&last);
    remove_items(merged, &gone, ty)
}

/// The 409 of an apply that would change fields other managers own.
fn conflict_error(conflicts: &[(Entry, Set)]) -> ApiError {
    let mut conflicts: Vec<(&Entry, Vec<Vec<PathElement>>)> =
        conflicts.iter().map(|(e, set)| (e, set.paths())).collect();
    conflicts.sort_by_key(|(e, _)| e.id());
    let total: usize = conflicts.iter().map(|(_, paths)| paths.len()).sum();
    let mut causes = Vec::new();
    for (entry, paths) in &conflicts {
        for path in paths {
            causes.push(json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", entry.printed()),
                "field": path_string(path),
            }));
        }
    }
    let message = if total == 1 {
        let (entry, paths) = &conflicts[0];
        format!("Apply failed with 1 conflict: conflict with {}: {}", entry.printed(), path_string(&paths[0]))
    } else {
        let mut lines = Vec::new();
        for (entry, paths) in &conflicts {
            lines.push(format!("conflicts with {}:", entry.printed()));
            lines.extend(paths.iter().map(|p| format!("- {}", path_string(p))));
        }
        format!("Apply failed with {total} conflicts: {}", lines.join("\n"))
    };
    ApiError::apply_conflict(message, causes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    fn schema() -> Type {
        parse_schema(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "nested": {"type": "object", "properties": {"a": {"type": "string"}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "selector": {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic"},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                    "routes": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["path", "host"],
                        "items": {"type": "object", "properties": {"host": {"type": "string"}, "path": {"type": "string"}, "w": {"type": "integer"}}}},
                    "target": {"x-kubernetes-int-or-string": true},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
                }},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
            }
        }))
    }

    fn info() -> ResourceInfo {
        ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
            has_status_subresource: true,
            schema: None,
            validation: None,
            aggregated: false,
            scale: None,
        }
        .with_schema(json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "image": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}
                }},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
            }
        }))
    }

    fn widget(body: Value) -> Value {
        let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
        if let (Some(obj), Some(body)) = (obj.as_object_mut(), body.as_object()) {
            for (k, v) in body {
                obj.insert(k.clone(), v.clone());
            }
        }
        obj
    }

    /// `(manager, operation, fieldsV1)` of each entry.
    fn entries(obj: &Value) -> Vec<(String, String, Value)> {
        obj["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["manager"].as_str().unwrap_or_default().to_owned(),
                    e["operation"].as_str().unwrap().to_owned(),
                    e["fieldsV1"].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn field_sets_follow_the_schema() {
        let ty = schema();
        let obj = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "labels": {"a": "b"}, "finalizers": ["x/y"], "ownerReferences": [{"uid": "u1", "name": "o"}]},
            "spec": {
                "replicas": 1, "nested": {"a": "x"}, "labels": {"k": "v"}, "selector": {"s": "t"},
                "args": ["a"], "tags": ["t"], "ports": [{"name": "http", "port": 80}],
                "routes": [{"host": "h", "path": "/", "w": 1}], "target": "50%",
                "extra": {"u": {"v": 1}}, "template": {"metadata": {"name": "p"}, "spec": {"x": 1}},
                "empty": {}
            }
        });
        let set = to_set(&obj, &ty).difference(&STRIPPED);
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:metadata": {
                    "f:labels": {"f:a": {}}, "f:finalizers": {"v:\"x/y\"": {}},
                    "f:ownerReferences": {"k:{\"uid\":\"u1\"}": {}}
                },
                "f:spec": {
                    "f:replicas": {}, "f:nested": {"f:a": {}}, "f:labels": {"f:k": {}}, "f:selector": {},
                    "f:args": {}, "f:tags": {"v:\"t\"": {}},
                    "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                    "f:routes": {"k:{\"host\":\"h\",\"path\":\"/\"}": {".": {}, "f:host": {}, "f:path": {}, "f:w": {}}},
                    "f:target": {},
                    "f:extra": {"f:u": {".": {}, "f:v": {}}},
                    "f:template": {"f:metadata": {"f:name": {}}, "f:spec": {".": {}, "f:x": {}}},
                    "f:empty": {}
                }
            })
        );
        // Empty non-atomic lists set nothing; empty objects and atomic
        // lists are leaves.
        let empty = to_set(&json!({"spec": {"tags": [], "ports": [], "args": [], "labels": {}}}), &ty);
        assert_eq!(empty.to_fields_v1(), json!({"f:spec": {"f:args": {}, "f:labels": {}}}));
    }

    #[test]
    fn fields_v1_round_trips() {
        let v = json!({"f:spec": {".": {}, "f:a": {}, "k:{\"name\":\"x\",\"port\":80}": {".": {}, "f:name": {}}, "v:1": {}, "i:3": {}}});
        let set = Set::from_fields_v1(&v).unwrap();
        assert!(set.has(&[f("spec")]));
        assert!(set.has(&[f("spec"), PathElement::Key(vec![("name".into(), json!("x")), ("port".into(), json!(80))])]));
        assert!(set.has(&[f("spec"), PathElement::Value(json!(1))]));
        assert_eq!(set.to_fields_v1(), v);
        assert!(Set::from_fields_v1(&json!({"x:y": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
    }

    #[test]
    fn set_algebra() {
        let a = Set::from_fields_v1(&json!({"f:spec": {".": {}, "f:a": {}, "f:b": {"f:c": {}}}})).unwrap();
        let b = Set::from_fields_v1(&json!({"f:spec": {"f:a": {}, "f:b": {}}})).unwrap();
        assert_eq!(a.difference(&b).to_fields_v1(), json!({"f:spec": {".": {}, "f:b": {"f:c": {}}}}));
        assert_eq!(a.intersection(&b).to_fields_v1(), json!({"f:spec": {"f:a": {}}}));
        assert_eq!(a.recursive_difference(&b).to_fields_v1(), json!({"f:spec": {}}));
        assert_eq!(b.union(&a), a.union(&b));
        let paths: Vec<String> = a.paths().iter().map(|p| path_string(p)).collect();
        assert_eq!(paths, [".spec", ".spec.a", ".spec.b.c"]);
    }

    #[test]
    fn paths_print_like_the_api_server() {
        let key = PathElement::Key(vec![("host".into(), json!("a")), ("path".into(), json!("/1"))]);
        assert_eq!(path_string(&[f("spec"), f("routes"), key, f("w")]), ".spec.routes[host=\"a\",path=\"/1\"].w");
        assert_eq!(path_string(&[f("tags"), PathElement::Value(json!("x"))]), ".tags[=\"x\"]");
        assert_eq!(PathElement::Value(json!("<&>")).fields_v1_key(), "v:\"\\u003c\\u0026\\u003e\"");
    }

    #[test]
    fn comparisons_mark_new_containers() {
        let ty = schema();
        let before = json!({"spec": {"replicas": 1, "ports": [{"name": "a", "port": 1}]}});
        let after =
            json!({"spec": {"replicas": 2, "ports": [{"name": "a", "port": 1}, {"name": "b"}], "labels": {"x": "y"}}});
        let cmp = compare(&before, &after, &ty);
        assert_eq!(cmp.modified.to_fields_v1(), json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(
            cmp.added.to_fields_v1(),
            json!({"f:spec": {"f:labels": {".": {}, "f:x": {}}, "f:ports": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}}}}})
        );
        let back = compare(&after, &before, &ty);
        assert_eq!(back.removed, cmp.added);
    }

    #[test]
    fn merges_keep_the_api_servers_order() {
        let ty = schema();
        let ports =
            |names: &[&str]| json!({"spec": {"ports": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}});
        let merged = merge(Some(&ports(&["a", "b", "c"])), &ports(&["d", "c", "a"]), &ty);
        assert_eq!(merged, ports(&["b", "d", "c", "a"]));
        let tags = |t: &[&str]| json!({"spec": {"tags": t}});
        assert_eq!(merge(Some(&tags(&["x", "y", "z"])), &tags(&["w", "z", "x"]), &ty), tags(&["y", "w", "z", "x"]));
        // Atomic values are replaced, granular ones merged.
        let live = json!({"spec": {"args": ["a", "b"], "selector": {"a": "1"}, "labels": {"a": "1"}}});
        let applied = json!({"spec": {"args": ["c"], "selector": {"b": "2"}, "labels": {"b": "2"}}});
        assert_eq!(
            merge(Some(&live), &applied, &ty),
            json!({"spec": {"args": ["c"], "selector": {"b": "2"}, "labels": {"a": "1", "b": "2"}}})
        );
    }

    #[test]
    fn removing_every_entry_leaves_null() {
        let ty = schema();
        let obj = json!({"spec": {"labels": {"x": "1"}, "ports": [{"name": "a"}], "replicas": 1}});
        let set =
            Set::from_fields_v1(&json!({"f:spec": {"f:labels": {"f:x": {}}, "f:ports": {"k:{\"name\":\"a\"}": {}}}}))
                .unwrap();
        assert_eq!(remove_items(&obj, &set, &ty), json!({"spec": {"labels": null, "ports": null, "replicas": 1}}));
    }

    #[test]
    fn built_in_kinds_are_typed_from_the_table() {
        let deployment = builtin_root("apps/v1", "Deployment").expect("Deployment is in the table");
        let obj = json!({
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {"spec": {
                    "nodeSelector": {"disk": "ssd"},
                    "containers": [{"name": "app", "image": "i", "ports": [{"containerPort": 80}], "args": ["-v"]}],
                    "tolerations": [{"key": "k"}]
                }}
            }
        });
        // Containers by name, ports by port and protocol (TCP by default),
        // the selector and node selector atomic, args and tolerations
        // atomic lists.
        let port = r#"k:{"containerPort":80,"protocol":"TCP"}"#;
        assert_eq!(
            to_set(&obj, deployment).to_fields_v1(),
            json!({
                "f:metadata": {"f:labels": {"f:a": {}}},
                "f:spec": {
                    "f:selector": {},
                    "f:template": {"f:spec": {
                        "f:nodeSelector": {},
                        "f:containers": {r#"k:{"name":"app"}"#: {
                            ".": {}, "f:name": {}, "f:image": {}, "f:args": {},
                            "f:ports": {port: {".": {}, "f:containerPort": {}}}
                        }},
                        "f:tolerations": {}
                    }}
                }
            })
        );
        // A ServiceAccount's secrets: a list-map of atomic references.
        let account = builtin_root("v1", "ServiceAccount").expect("ServiceAccount is in the table");
        let set = to_set(&json!({"secrets": [{"name": "a", "namespace": "n"}]}), account);
        assert_eq!(set.to_fields_v1(), json!({"f:secrets": {r#"k:{"name":"a"}"#: {}}}));
        // A RawExtension is untyped and atomic: any value, owned whole.
        let revision = builtin_root("apps/v1", "ControllerRevision").expect("ControllerRevision is in the table");
        assert!(validate(&json!({"data": "x"}), revision, false).is_empty());
        assert!(validate(&json!({"data": [1]}), revision, false).is_empty());
        assert_eq!(to_set(&json!({"data": {"a": 1}}), revision).to_fields_v1(), json!({"f:data": {}}));
        // Kinds the table does not know stay loose.
        assert!(builtin_root("example.com/v1", "Thing").is_none());
    }

    #[test]
    fn missing_list_map_keys_take_their_default_or_are_left_out() {
        let list = ListType {
            elem: Box::new(Type::Loose),
            kind: ListKind::Map(vec![("port".into(), None), ("protocol".into(), Some(json!("TCP")))]),
        };
        let key = |item: Value| item_element(&list, &item, 0).map(|pe| pe.to_string());
        assert_eq!(key(json!({"port": 1})).unwrap(), key(json!({"port": 1, "protocol": "TCP"})).unwrap());
        assert_ne!(key(json!({"port": 1})).unwrap(), key(json!({"port": 1, "protocol": "UDP"})).unwrap());
        // Only the defaulted key: still an identity.
        assert!(key(json!({"name": "x"})).is_ok());
        let without_defaults =
            ListType { elem: Box::new(Type::Loose), kind: ListKind::Map(vec![("name".into(), None)]) };
        assert!(item_element(&without_defaults, &json!({"port": 1}), 0).is_err());
        // A CRD's schema gives the defaults of its items' key properties.
        let ty = parse_schema(&json!({"type": "object", "properties": {"ports": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
            "items": {"type": "object", "properties": {
                "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}
            }}
        }}}));
        let Type::Map(root) = &ty else { panic!("{ty:?}") };
        let Some((Type::List(ports), _)) = root.field("ports") else { panic!("{root:?}") };
        assert_eq!(ports.kind, list.kind);
    }

    #[test]
    fn deduced_and_loose_types() {
        // Without a schema, object keys are struct fields (no `.`), lists
        // atomic, metadata is ObjectMeta.
        let set = to_set(
            &json!({"metadata": {"labels": {"a": "b"}}, "data": {"k": "v"}, "spec": {"nested": {"x": 1}, "list": [1]}}),
            &LOOSE_ROOT,
        );
        assert_eq!(
            set.to_fields_v1(),
            json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:data": {"f:k": {}}, "f:spec": {"f:nested": {"f:x": {}}, "f:list": {}}})
        );
    }

    #[test]
    fn typed_errors_like_the_api_server() {
        let ty = schema();
        let errs = validate(
            &json!({"spec": {"ports": [{"port": 1}], "tags": ["x", "x"], "labels": "x"}, "other": 1}),
            &ty,
            false,
        );
        assert_eq!(errs, [".other: field not declared in schema".to_owned(),]);
        let errs = validate(&json!({"spec": {"ports": [{"port": 1}], "tags": ["x", "x"], "labels": "x"}}), &ty, false);
        assert_eq!(
            errs,
            [
                ".spec.labels: expected map, got &{x}".to_owned(),
                ".spec.ports: element 0: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)".to_owned(),
                ".spec.tags: duplicate entries for key [=\"x\"]".to_owned(),
            ]
        );
        assert!(validate(&json!({"spec": {"tags": ["x", "x"]}}), &ty, true).is_empty());
    }

    #[test]
    fn managers_and_options() {
        assert_eq!(manager_of(Some("ctrl"), Some("kubectl/v1")), "ctrl");
        assert_eq!(manager_of(None, Some("kubectl-edit/v1.2 (linux)")), "kubectl-edit");
        assert_eq!(manager_of(None, None), "unknown");
        assert_eq!(manager_of(None, Some("/x")), "unknown");
        assert_eq!(
            identifier("a", Operation::Apply, "v1", "status"),
            r#"{"manager":"a","operation":"Apply","subresource":"status"}"#
        );
        assert_eq!(
            identifier("a", Operation::Update, "v1", ""),
            r#"{"manager":"a","operation":"Update","apiVersion":"v1"}"#
        );

        let err = validate_options("PatchOptions", None, Some(true), false, None, None).unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        let err = validate_options("PatchOptions", Some("m"), Some(false), true, None, None).unwrap_err();
        assert_eq!(
            err.message,
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
        let err = validate_options("CreateOptions", Some("a\tb"), None, false, None, None).unwrap_err();
        assert_eq!(
            err.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"a\\tb\": invalid character U+0009 (at position 1)"
        );
        assert!(validate_options("UpdateOptions", Some(&"m".repeat(129)), None, false, None, None).is_err());
        assert!(validate_options("UpdateOptions", Some(&"m".repeat(128)), None, false, None, None).is_ok());
    }

    #[test]
    fn apply_co_owns_conflicts_and_forces() {
        let info = info();
        let a = apply(&info, None, &widget(json!({"spec": {"replicas": 1, "image": "i"}})), "a", false, None).unwrap();
        assert_eq!(entries(&a), [("a".into(), "Apply".into(), json!({"f:spec": {"f:image": {}, "f:replicas": {}}}))]);

        // The same value: co-owned, and the object is unchanged, so the new
        // entry has no time.
        let b = apply(&info, Some(&a), &widget(json!({"spec": {"replicas": 1}})), "b", false, None).unwrap();
        assert_eq!(entries(&b)[0].0, "b");
        assert!(b["metadata"]["managedFields"][0].get("time").is_none());

        let err = apply(&info, Some(&b), &widget(json!({"spec": {"replicas": 2}})), "c", false, None).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.replicas\nconflicts with \"b\":\n- .spec.replicas"
        );

        let c = apply(&info, Some(&b), &widget(json!({"spec": {"replicas": 2}})), "c", true, None).unwrap();
        assert_eq!(c["spec"]["replicas"], 2);
        let managers: Vec<String> = entries(&c).into_iter().map(|e| e.0).collect();
        assert_eq!(managers, ["a", "c"]);
        assert_eq!(entries(&c)[0].2, json!({"f:spec": {"f:image": {}}}));
    }

    #[test]
    fn apply_removes_what_the_manager_dropped_unless_co_owned() {
        let info = info();
        let a = apply(
            &info,
            None,
            &widget(json!({"spec": {"replicas": 1, "labels": {"x": "1", "y": "2"}, "ports": [{"name": "a"}, {"name": "b"}]}})),
            "a",
            false,
            None,
        )
        .unwrap();
        let b = apply(
            &info,
            Some(&a),
            &widget(json!({"spec": {"labels": {"y": "2"}, "ports": [{"name": "b"}]}})),
            "b",
            false,
            None,
        )
        .unwrap();
        let a2 = apply(&info, Some(&b), &widget(json!({"spec": {"replicas": 1}})), "a", false, None).unwrap();
        assert_eq!(a2["spec"], json!({"replicas": 1, "labels": {"y": "2"}, "ports": [{"name": "b"}]}));
    }

    #[test]
    fn updates_take_fields_and_apply_then_conflicts() {
        let info = info();
        let a = apply(&info, None, &widget(json!({"spec": {"replicas": 1}})), "a", false, None).unwrap();
        let mut updated = a.clone();
        updated["spec"]["replicas"] = json!(3);
        updated["spec"]["image"] = json!("x");
        track_update(&info, Some(&a), &mut updated, "editor", None);
        assert_eq!(
            entries(&updated),
            [("editor".into(), "Update".into(), json!({"f:spec": {"f:image": {}, "f:replicas": {}}}))]
        );
        let err =
            apply(&info, Some(&updated), &widget(json!({"spec": {"replicas": 1}})), "a", false, None).unwrap_err();
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"editor\" using example.com/v1: .spec.replicas"
        );
        assert_eq!(err.details.unwrap()["causes"][0]["reason"], "FieldManagerConflict");
    }

    #[test]
    fn status_applies_own_only_status() {
        let info = info();
        let a =
            apply(&info, None, &widget(json!({"spec": {"replicas": 1}, "status": {"phase": "x"}})), "a", false, None)
                .unwrap();
        assert_eq!(entries(&a)[0].2, json!({"f:spec": {"f:replicas": {}}}));
        let s = apply(
            &info,
            Some(&a),
            &widget(json!({"metadata": {"name": "w", "labels": {"l": "1"}}, "spec": {"replicas": 5}, "status": {"phase": "y"}})),
            "s",
            false,
            Some("status"),
        )
        .unwrap();
        let status_entry =
            s["metadata"]["managedFields"].as_array().unwrap().iter().find(|e| e["manager"] == "s").unwrap().clone();
        assert_eq!(status_entry["subresource"], "status");
        assert_eq!(status_entry["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
    }

    #[test]
    fn objects_without_managed_fields() {
        let info = info();
        let live = widget(json!({"metadata": {"name": "w", "uid": "1"}, "spec": {"replicas": 1}}));
        // Updates do not start tracking...
        let mut updated = live.clone();
        updated["spec"]["replicas"] = json!(2);
        track_update(&info, Some(&live), &mut updated, "u", None);
        assert!(updated["metadata"].get("managedFields").is_none());
        // ...and the first apply meets `before-first-apply`.
        let err = apply(&info, Some(&live), &widget(json!({"spec": {"replicas": 3}})), "a", false, None).unwrap_err();
        assert!(
            err.message.contains("conflict with \"before-first-apply\" using example.com/v1: .spec.replicas"),
            "{}",
            err.message
        );
    }

    #[test]
    fn managed_fields_sent_with_updates() {
        let info = info();
        let a = apply(&info, None, &widget(json!({"spec": {"replicas": 1, "image": "i"}})), "a", false, None).unwrap();
        // `[{}]` clears them.
        let mut reset = a.clone();
        reset["metadata"]["managedFields"] = json!([{}]);
        track_update(&info, Some(&a), &mut reset, "u", None);
        assert!(reset["metadata"].get("managedFields").is_none());
        // Valid entries replace the live ones.
        let mut replaced = a.clone();
        replaced["metadata"]["managedFields"] = json!([{"manager": "z", "operation": "Apply", "apiVersion": "example.com/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]);
        replaced["spec"]["image"] = json!("j");
        track_update(&info, Some(&a), &mut replaced, "u", None);
        let names: Vec<String> = entries(&replaced).into_iter().map(|e| e.0).collect();
        assert_eq!(names, ["z", "u"]);
        // Invalid ones are ignored.
        let mut invalid = a.clone();
        invalid["metadata"]["managedFields"] = json!([{"manager": "z", "operation": "Bogus"}]);
        invalid["spec"]["image"] = json!("j");
        track_update(&info, Some(&a), &mut invalid, "u", None);
        let names: Vec<String> = entries(&invalid).into_iter().map(|e| e.0).collect();
        assert_eq!(names, ["a", "u"]);
    }

    #[test]
    fn update_managers_are_capped() {
        let info = info();
        let mut obj = apply(&info, None, &widget(json!({"spec": {"replicas": 1}})), "a", false, None).unwrap();
        for i in 0..12 {
            let mut next = obj.clone();
            next["spec"]["labels"][format!("k{i}")] = json!("v");
            track_update(&info, Some(&obj), &mut next, &format!("u{i:02}"), None);
            obj = next;
        }
        let names: Vec<String> = entries(&obj).into_iter().map(|e| e.0).collect();
        assert_eq!(names.len(), 11);
        assert!(names.contains(&"ancient-changes".to_owned()));
        assert!(!names.contains(&"u00".to_owned()) && !names.contains(&"u02".to_owned()));
        let ancient = entries(&obj).into_iter().find(|e| e.0 == "ancient-changes").unwrap();
        assert_eq!(ancient.2, json!({"f:spec": {"f:labels": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}}}));
    }

    #[test]
    fn apply_body_checks() {
        let info = info();
        let err = apply(&info, None, &json!({"apiVersion": "example.com/v2", "kind": "Widget"}), "a", false, None)
            .unwrap_err();
        assert_eq!(err.message, "invalid object type: example.com/v2, Kind=Widget");
        let err = apply(&info, None, &json!({"kind": "Widget"}), "a", false, None).unwrap_err();
        assert_eq!(err.message, "invalid object type: /, Kind=Widget");
        let err =
            apply(&info, None, &widget(json!({"metadata": {"name": "w", "managedFields": []}})), "a", false, None)
                .unwrap_err();
        assert_eq!((err.code, err.message.as_str()), (400, "metadata.managedFields must be nil"));
        let err = apply(&info, None, &widget(json!({"spec": {"bogus": 1}})), "a", false, None).unwrap_err();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message,
            "failed to create typed patch object (/w; example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema"
        );
    }
}
