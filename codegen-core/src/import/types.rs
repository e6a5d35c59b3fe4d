//! Import phase 2, model: a CRD version's `openAPIV3Schema` into Rust types
//! with markers, chosen so that the generator writes the same schema back.
//!
//! Each schema node becomes a Rust type plus `#[validate(..)]` markers. A
//! node whose keys the markers cannot say (`allOf`, a `type: integer`
//! without a format, ...) is kept whole: a `serde_json::Value` field with
//! `#[validate(schema_json = "..")]`, which the generator writes back as
//! given. What even that cannot hold is dropped with a warning.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::{Map, Number, Value};

use super::builtin_index::{BuiltinIndex, NO_DEFAULT};
use crate::builtin;
use crate::ident::{RenameRule, rust_ident, unraw};
use crate::markers::FORMATS;

/// A Rust type of a field.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ty {
    String,
    Bool,
    I32,
    I64,
    F32,
    F64,
    /// `serde_json::Value`.
    Json,
    /// `serde_json::Map<String, serde_json::Value>`.
    JsonObject,
    Vec(Box<Ty>),
    /// `BTreeMap<String, T>`.
    Map(Box<Ty>),
    /// A type of the imported module.
    Named(String),
    /// A k8s-openapi type, by definition name.
    Builtin(&'static str),
    /// `kube::core::TypeMeta` (the root's apiVersion and kind).
    TypeMeta,
    /// `ObjectMeta` (the root's metadata).
    ObjectMeta,
}

impl Ty {
    pub fn tokens(&self) -> TokenStream {
        match self {
            Ty::String => quote!(String),
            Ty::Bool => quote!(bool),
            Ty::I32 => quote!(i32),
            Ty::I64 => quote!(i64),
            Ty::F32 => quote!(f32),
            Ty::F64 => quote!(f64),
            Ty::Json => quote!(serde_json::Value),
            Ty::JsonObject => quote!(serde_json::Map<String, serde_json::Value>),
            Ty::Vec(t) => {
                let t = t.tokens();
                quote!(Vec<#t>)
            }
            Ty::Map(t) => {
                let t = t.tokens();
                quote!(std::collections::BTreeMap<String, #t>)
            }
            Ty::Named(n) => {
                let n = format_ident!("{n}");
                quote!(#n)
            }
            Ty::Builtin(def) => builtin::path_of_definition(def).parse().unwrap_or_default(),
            Ty::TypeMeta => quote!(TypeMeta),
            Ty::ObjectMeta => quote!(ObjectMeta),
        }
    }

    fn is_float(&self) -> bool {
        match self {
            Ty::F32 | Ty::F64 => true,
            Ty::Vec(t) | Ty::Map(t) => t.is_float(),
            _ => false,
        }
    }
}

/// A struct field.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    /// The JSON name.
    pub json: String,
    /// The Rust name (`r#type` for keywords).
    pub ident: String,
    pub ty: Ty,
    /// `Option<T>`.
    pub option: bool,
    /// Not required: `#[serde(default, skip_serializing_if = "Option::is_none")]`.
    pub optional: bool,
    /// `#[serde(flatten, ..)]`: the root's TypeMeta or a map of unknown fields.
    pub flatten: bool,
    pub doc: Option<String>,
    pub validate: Vec<TokenStream>,
}

/// A type of the module.
#[derive(Clone, Debug)]
pub(crate) enum Item {
    Struct {
        name: String,
        doc: Option<String>,
        fields: Vec<Field>,
        /// Type-level markers (the root's CEL rules).
        validate: Vec<TokenStream>,
        /// `#[genclient(..)]` and then `#[resource(..)]` of a root type.
        root: Vec<TokenStream>,
    },
    /// A string enum.
    Enum { name: String, doc: Option<String>, variants: Vec<(String, String)>, default: usize },
    /// A described scalar in a list or map: `pub struct Name(pub T);`.
    Newtype { name: String, doc: Option<String>, inner: Ty },
}

impl Item {
    pub fn name(&self) -> &str {
        match self {
            Item::Struct { name, .. } | Item::Enum { name, .. } | Item::Newtype { name, .. } => name,
        }
    }
}

/// Where a node sits: a field (whose doc comment gives the description) or
/// a list's items / a map's values (where only the type's doc can).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pos {
    Field,
    Element,
}

/// Builds the types of one version module.
pub(crate) struct TypeBuilder<'a> {
    index: &'a BuiltinIndex,
    /// Names taken in the module.
    taken: BTreeSet<String>,
    /// The types made, in order.
    pub items: Vec<Item>,
    /// What could not be carried over: (JSON path, what), for warnings.
    pub dropped: Vec<(String, String)>,
    /// The import path of each struct's schema node, by type name.
    pub paths: BTreeMap<String, String>,
}

/// Names a type of the module must not take: the imports of every kind file
/// and the prelude.
const RESERVED: &[&str] = &[
    "ApiType",
    "Deserialize",
    "Serialize",
    "ObjectMeta",
    "TypeMeta",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Vec",
    "String",
    "Box",
    "Self",
];

/// A node whose `allOf` only bounds lengths, counts and values (what
/// controller-gen writes for a field and its type that both set one), with
/// the bounds folded in: the tighter of each, as the generator writes it.
/// `None` when there is no such `allOf`, or it says more (two patterns,
/// nested schemas), which stays for `schema_json` or a warning.
fn fold_all_of(node: &Map<String, Value>) -> Option<Map<String, Value>> {
    const LOWER: &[&str] = &["minLength", "minItems", "minProperties", "minimum"];
    const UPPER: &[&str] = &["maxLength", "maxItems", "maxProperties", "maximum"];
    let parts = node.get("allOf")?.as_array()?;
    let mut out = node.clone();
    out.remove("allOf");
    for part in parts {
        for (key, value) in part.as_object()? {
            let lower = LOWER.contains(&key.as_str());
            if !lower && !UPPER.contains(&key.as_str()) {
                return None;
            }
            let new = value.as_f64()?;
            let keep = match out.get(key).and_then(Value::as_f64) {
                Some(old) if lower => new > old,
                Some(old) => new < old,
                None => true,
            };
            if keep {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Some(out)
}

/// The schema keys the generator's `JsonSchemaProps` holds (what
/// `schema_json` can carry).
const SCHEMA_KEYS: &[&str] = &[
    "additionalProperties",
    "allOf",
    "anyOf",
    "default",
    "description",
    "enum",
    "example",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "externalDocs",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "nullable",
    "oneOf",
    "pattern",
    "properties",
    "required",
    "title",
    "type",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];

/// `v` with only the keys the generator's schema type holds, in every
/// nested schema: what reads as its `JsonSchemaProps`.
pub(crate) fn generator_keys_only(v: &Value) -> Value {
    let Some(m) = v.as_object() else { return v.clone() };
    let nested = |x: &Value| match x {
        Value::Array(a) => Value::Array(a.iter().map(generator_keys_only).collect()),
        other => generator_keys_only(other),
    };
    let out = m
        .iter()
        .filter(|(k, _)| SCHEMA_KEYS.contains(&k.as_str()))
        .map(|(k, x)| {
            let x = match k.as_str() {
                "properties" => Value::Object(
                    x.as_object()
                        .map(|p| p.iter().map(|(n, s)| (n.clone(), generator_keys_only(s))).collect())
                        .unwrap_or_default(),
                ),
                "items" | "additionalProperties" | "not" | "allOf" | "anyOf" | "oneOf" => nested(x),
                _ => x.clone(),
            };
            (k.clone(), x)
        })
        .collect();
    Value::Object(out)
}

/// A string literal token; raw (`r#".."#`) when it holds quotes or
/// backslashes, so JSON and regular expressions read as written.
pub(crate) fn lit(s: &str) -> TokenStream {
    if (s.contains('"') || s.contains('\\')) && !s.contains('\r') {
        let mut hashes = String::from("#");
        while s.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        if let Ok(t) = format!("r{hashes}\"{s}\"{hashes}").parse::<TokenStream>() {
            return t;
        }
    }
    let l = Literal::string(s);
    quote!(#l)
}

/// A JSON number as a literal (`-1`, `0.5`).
fn number(n: &Number) -> Option<TokenStream> {
    if let Some(i) = n.as_i64() {
        let l = Literal::u64_unsuffixed(i.unsigned_abs());
        return Some(if i < 0 { quote!(-#l) } else { quote!(#l) });
    }
    if n.as_u64().is_some() {
        // Beyond i64: the marker parser reads integers as i64.
        return None;
    }
    let f = n.as_f64()?;
    let l = Literal::f64_unsuffixed(f.abs());
    Some(if f < 0.0 { quote!(-#l) } else { quote!(#l) })
}

/// A JSON value as a marker literal (`"a"`, `1`, `true`, `[1, 2]`), if it is one.
fn value_literal(v: &Value) -> Option<TokenStream> {
    match v {
        Value::String(s) => Some(lit(s)),
        Value::Bool(b) => Some(quote!(#b)),
        Value::Number(n) => number(n),
        Value::Array(a) => {
            let items = a.iter().map(value_literal).collect::<Option<Vec<_>>>()?;
            Some(quote!([#(#items),*]))
        }
        _ => None,
    }
}

/// `default = ..` or `default_json = ".."`.
fn default_marker(v: &Value) -> TokenStream {
    match value_literal(v) {
        Some(l) => quote!(default = #l),
        None => {
            let json = lit(&v.to_string());
            quote!(default_json = #json)
        }
    }
}

/// The keys of apiextensions/v1 `JSONSchemaProps`: what the API server
/// reads of a schema node (it drops any other key).
const SERVER_SCHEMA_KEYS: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// The UpperCamel type name of a JSON name (`jobTemplate` → `JobTemplate`).
pub(crate) fn type_name(s: &str) -> String {
    let camel = heck::ToUpperCamelCase::to_upper_camel_case(s);
    let clean: String = camel.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    // `Self` is no type or variant name.
    if clean.is_empty() || clean == "Self" || clean.starts_with(|c: char| c.is_ascii_digit()) {
        format!("T{clean}")
    } else {
        clean
    }
}

/// The field of a struct whose object keeps unknown fields: a flattened
/// map of what the properties do not name (`additional_fields`, with `_`
/// added while a property has that name).
pub(crate) fn push_additional_fields(fields: &mut Vec<Field>) {
    let mut ident = "additional_fields".to_string();
    while fields.iter().any(|f| f.ident == ident) {
        ident.push('_');
    }
    fields.push(Field {
        json: String::new(),
        ident,
        ty: Ty::Map(Box::new(Ty::Json)),
        option: false,
        optional: false,
        flatten: true,
        doc: Some("Fields the schema does not name (`x-kubernetes-preserve-unknown-fields`).".into()),
        validate: Vec::new(),
    });
}

/// The snake_case Rust name of a JSON name, keywords made raw.
pub(crate) fn field_ident(json: &str) -> String {
    let snake = heck::ToSnakeCase::to_snake_case(json);
    let mut clean: String =
        snake.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    while clean.contains("__") {
        clean = clean.replace("__", "_");
    }
    let clean = clean.trim_matches('_').to_string();
    let clean = if clean.is_empty() {
        "field".to_string()
    } else if clean.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{clean}")
    } else {
        clean
    };
    rust_ident(&clean)
}

/// How serde names the fields of a struct: `rename_all = "camelCase"` when
/// it saves renames, and a `rename` for every field it does not cover.
pub(crate) fn renames(fields: &[Field]) -> (bool, Vec<Option<String>>) {
    let named = |f: &Field, camel: bool| {
        let plain = unraw(&f.ident).to_string();
        if camel { RenameRule::Camel.apply_to_field(&plain) } else { plain }
    };
    let needed = |camel: bool| fields.iter().filter(|f| !f.flatten && named(f, camel) != f.json).count();
    let camel = needed(true) < needed(false);
    let list = fields.iter().map(|f| (!f.flatten && named(f, camel) != f.json).then(|| f.json.clone())).collect();
    (camel, list)
}

impl<'a> TypeBuilder<'a> {
    /// A builder for one version module; `taken` are the names already used
    /// there (every kind and its list type).
    pub fn new(index: &'a BuiltinIndex, taken: BTreeSet<String>) -> Self {
        let mut taken = taken;
        taken.extend(RESERVED.iter().map(|s| s.to_string()));
        TypeBuilder { index, taken, items: Vec::new(), dropped: Vec::new(), paths: BTreeMap::new() }
    }

    /// A free type name based on `base`.
    pub fn claim(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    fn drop(&mut self, path: &str, what: String) {
        self.dropped.push((path.to_string(), what));
    }

    /// The fields of an object node (its properties, required ones plain,
    /// the others `Option`s), and whether it keeps unknown fields.
    pub fn fields(&mut self, node: &Map<String, Value>, owner: &str, path: &str) -> Vec<Field> {
        let required: BTreeSet<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        let mut idents = BTreeSet::new();
        let empty = Map::new();
        let props = node.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        for (json, prop) in props {
            let prop_path = format!("{path}.{json}");
            let Some(prop) = prop.as_object() else {
                self.drop(&prop_path, "a property that is not a schema object".into());
                continue;
            };
            let mut ident = field_ident(json);
            let mut n = 2;
            while !idents.insert(ident.clone()) {
                ident = format!("{}_{n}", unraw(&field_ident(json)));
                n += 1;
            }
            let (ty, validate) = self.node(prop, Pos::Field, &format!("{owner}{}", type_name(json)), &prop_path);
            let nullable = prop.get("nullable") == Some(&Value::Bool(true));
            let is_required = required.contains(json.as_str());
            let mut validate = validate;
            if is_required && nullable {
                validate.push(quote!(required));
            }
            if ty.is_float() {
                validate.push(quote!(allow_dangerous_types));
            }
            fields.push(Field {
                json: json.clone(),
                ident,
                ty,
                option: !is_required || nullable,
                optional: !is_required,
                flatten: false,
                doc: prop.get("description").and_then(Value::as_str).map(String::from),
                validate,
            });
        }
        for r in &required {
            if !props.contains_key(*r) {
                self.drop(&format!("{path}.required"), format!("`{r}` is required but not a property"));
            }
        }
        fields
    }

    /// A struct for an object node with properties.
    fn object(&mut self, node: &Map<String, Value>, pos: Pos, name: &str, path: &str, preserve: bool) -> Ty {
        let name = self.claim(name);
        let mut fields = self.fields(node, &name, path);
        if preserve {
            push_additional_fields(&mut fields);
        }
        let _ = pos;
        let doc = node.get("description").and_then(Value::as_str).map(String::from);
        self.paths.insert(name.clone(), path.to_string());
        self.items.push(Item::Struct { name: name.clone(), doc, fields, validate: Vec::new(), root: Vec::new() });
        Ty::Named(name)
    }

    /// The Rust type and the markers of one schema node.
    pub fn node(&mut self, node: &Map<String, Value>, pos: Pos, name: &str, path: &str) -> (Ty, Vec<TokenStream>) {
        // Keys the API server drops on reading a CRD (Go's and OpenAPI's
        // `x-kubernetes-patch-merge-key`, `readOnly`, ...): left out, said,
        // instead of keeping the whole node untyped for them.
        let known;
        let node = if node.keys().all(|k| SERVER_SCHEMA_KEYS.contains(&k.as_str())) {
            node
        } else {
            let mut kept = node.clone();
            kept.retain(|k, _| SERVER_SCHEMA_KEYS.contains(&k.as_str()));
            for k in node.keys().filter(|k| !SERVER_SCHEMA_KEYS.contains(&k.as_str())) {
                self.drop(path, format!("`{k}`, which the API server does not read"));
            }
            known = kept;
            &known
        };
        let folded = fold_all_of(node);
        let node = folded.as_ref().unwrap_or(node);
        let (items, dropped) = (self.items.len(), self.dropped.len());
        match self.typed(node, pos, name, path) {
            Ok(out) => out,
            Err(_) => {
                // The types made for the node's children go: the node is kept whole.
                for item in self.items.drain(items..) {
                    self.taken.remove(item.name());
                    self.paths.remove(item.name());
                }
                self.dropped.truncate(dropped);
                self.whole(node, pos, path)
            }
        }
    }

    /// The node kept whole: `serde_json::Value` with `schema_json`.
    fn whole(&mut self, node: &Map<String, Value>, pos: Pos, path: &str) -> (Ty, Vec<TokenStream>) {
        let mut kept = node.clone();
        if pos == Pos::Field {
            kept.remove("description");
        }
        let kept = self.schema_only(&Value::Object(kept), path);
        if serde_json::from_value::<crate::emit::schema::JsonSchemaProps>(kept.clone()).is_err() {
            self.drop(path, "a schema the generator cannot hold; kept as free-form JSON".into());
            return (Ty::Json, vec![quote!(preserve_unknown_fields)]);
        }
        let json = lit(&serde_json::to_string(&kept).unwrap_or_default());
        (Ty::Json, vec![quote!(schema_json = #json)])
    }

    /// `v` with the keys the generator's schema type lacks removed (each a
    /// warning), in every nested schema.
    fn schema_only(&mut self, v: &Value, path: &str) -> Value {
        let Some(m) = v.as_object() else { return v.clone() };
        let mut out = Map::new();
        for (k, x) in m {
            if !SCHEMA_KEYS.contains(&k.as_str()) {
                self.drop(path, format!("`{k}`"));
                continue;
            }
            let x = match k.as_str() {
                "properties" => Value::Object(
                    x.as_object()
                        .map(|p| {
                            p.iter().map(|(n, s)| (n.clone(), self.schema_only(s, &format!("{path}.{n}")))).collect()
                        })
                        .unwrap_or_default(),
                ),
                "items" => self.schema_only(x, &format!("{path}[*]")),
                "additionalProperties" if !x.is_object() => {
                    self.drop(path, format!("`additionalProperties: {x}`"));
                    continue;
                }
                "additionalProperties" => self.schema_only(x, &format!("{path}.*")),
                "allOf" | "anyOf" | "oneOf" => Value::Array(
                    x.as_array().map(|a| a.iter().map(|s| self.schema_only(s, path)).collect()).unwrap_or_default(),
                ),
                "not" => self.schema_only(x, path),
                _ => x.clone(),
            };
            out.insert(k.clone(), x);
        }
        Value::Object(out)
    }

    /// The node as a Rust type with markers, or `Err` when some key of it
    /// has no marker.
    fn typed(
        &mut self,
        node: &Map<String, Value>,
        pos: Pos,
        name: &str,
        path: &str,
    ) -> Result<(Ty, Vec<TokenStream>), String> {
        let description = node.get("description").and_then(Value::as_str).map(String::from);
        let mut rest = node.clone();
        rest.remove("description");
        let str_of = |k: &str| node.get(k).and_then(Value::as_str);
        let flag = |k: &str| node.get(k) == Some(&Value::Bool(true));

        // Kubernetes' own types; a title, example, external docs or default
        // on the node are markers of the position, not part of the type.
        let mut docs = Map::new();
        let mut bare = node.clone();
        for key in ["title", "example", "externalDocs", "default"] {
            if let Some(v) = bare.remove(key) {
                docs.insert(key.to_string(), v);
            }
        }
        if let Some(m) = self.index.find(&bare, pos == Pos::Field) {
            let markers = self.markers(&mut docs, "any", path)?;
            return Ok((Ty::Builtin(m.definition), markers));
        }

        let ty = if flag("x-kubernetes-int-or-string") {
            rest.remove("x-kubernetes-int-or-string");
            let any_of: Value = serde_json::json!([{"type": "integer"}, {"type": "string"}]);
            if rest.get("anyOf") == Some(&any_of) {
                rest.remove("anyOf");
            }
            if rest.contains_key("type") {
                return Err("type".into());
            }
            // IntOrString, unless its own description would show where the node has none.
            const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
            let own = self.index.description(INT_OR_STRING);
            let ty = if own.is_none() || (pos == Pos::Field && description.is_some()) {
                Ty::Builtin(INT_OR_STRING)
            } else {
                Ty::Json
            };
            let mut markers = if ty == Ty::Json { vec![quote!(int_or_string)] } else { Vec::new() };
            markers.extend(self.markers(&mut rest, "int-or-string", path)?);
            return Ok(self.described(ty, markers, pos, description, name));
        } else {
            match str_of("type") {
                None if flag("x-kubernetes-preserve-unknown-fields") => {
                    rest.remove("x-kubernetes-preserve-unknown-fields");
                    Ty::Json
                }
                None => return Err("no type".into()),
                Some("string") => {
                    rest.remove("type");
                    let values = node.get("enum").and_then(Value::as_array);
                    match values.and_then(|v| self.string_enum(v, node, name)) {
                        Some(ty) => {
                            rest.remove("enum");
                            return Ok((ty, self.markers(&mut rest, "string", path)?));
                        }
                        None => Ty::String,
                    }
                }
                Some("boolean") => {
                    rest.remove("type");
                    Ty::Bool
                }
                Some("integer") => {
                    rest.remove("type");
                    match rest.remove("format").as_ref().and_then(Value::as_str) {
                        Some("int32") => Ty::I32,
                        Some("int64") => Ty::I64,
                        _ => return Err("integer format".into()),
                    }
                }
                Some("number") => {
                    rest.remove("type");
                    match rest.remove("format").as_ref().and_then(Value::as_str) {
                        Some("double") => Ty::F64,
                        Some("float") => Ty::F32,
                        _ => return Err("number format".into()),
                    }
                }
                Some("array") => {
                    rest.remove("type");
                    let Some(items) = rest.remove("items") else { return Err("items".into()) };
                    let Some(items) = items.as_object() else { return Err("items".into()) };
                    let (inner, inner_markers) = self.node(items, Pos::Element, name, &format!("{path}[*]"));
                    let mut markers = self.markers(&mut rest, "array", path)?;
                    if !inner_markers.is_empty() {
                        markers.push(quote!(items(#(#inner_markers),*)));
                    }
                    return Ok(self.described(Ty::Vec(Box::new(inner)), markers, pos, description, name));
                }
                Some("object") => {
                    rest.remove("type");
                    let preserve = flag("x-kubernetes-preserve-unknown-fields");
                    let has_props = node.contains_key("properties");
                    match node.get("additionalProperties") {
                        Some(Value::Object(values)) if !has_props => {
                            rest.remove("additionalProperties");
                            let (inner, inner_markers) = self.node(values, Pos::Element, name, &format!("{path}.*"));
                            let mut markers = self.markers(&mut rest, "object", path)?;
                            if !inner_markers.is_empty() {
                                markers.push(quote!(values(#(#inner_markers),*)));
                            }
                            return Ok(self.described(Ty::Map(Box::new(inner)), markers, pos, description, name));
                        }
                        Some(_) => return Err("additionalProperties".into()),
                        None if has_props => {
                            if !node.get("properties").is_some_and(Value::is_object) {
                                return Err("properties".into());
                            }
                            // Every key must have a marker before any type is made.
                            let mut probe = rest.clone();
                            probe.remove("properties");
                            probe.remove("required");
                            probe.remove("x-kubernetes-preserve-unknown-fields");
                            escape_rules(&mut probe, node.get("properties"));
                            self.markers(&mut probe.clone(), "object", path)?;
                            let ty = self.object(node, pos, name, path, preserve);
                            return Ok((ty, self.markers(&mut probe, "object", path)?));
                        }
                        None if preserve => {
                            rest.remove("x-kubernetes-preserve-unknown-fields");
                            Ty::JsonObject
                        }
                        None => return Err("an object without properties".into()),
                    }
                }
                Some(_) => return Err("type".into()),
            }
        };
        let kind = match &ty {
            Ty::String => "string",
            Ty::I32 | Ty::I64 => "integer",
            Ty::F32 | Ty::F64 => "number",
            Ty::Bool => "boolean",
            Ty::JsonObject => "object",
            _ => "any",
        };
        let markers = self.markers(&mut rest, kind, path)?;
        Ok(self.described(ty, markers, pos, description, name))
    }

    /// In a list's items or a map's values a description needs a type to
    /// carry it: a newtype (`pub struct Name(pub T);`) with that doc.
    fn described(
        &mut self,
        ty: Ty,
        markers: Vec<TokenStream>,
        pos: Pos,
        doc: Option<String>,
        name: &str,
    ) -> (Ty, Vec<TokenStream>) {
        match (pos, doc) {
            (Pos::Element, Some(doc)) if !matches!(ty, Ty::Named(_) | Ty::Builtin(_)) => {
                let name = self.claim(name);
                self.items.push(Item::Newtype { name: name.clone(), doc: Some(doc), inner: ty });
                (Ty::Named(name), markers)
            }
            _ => (ty, markers),
        }
    }

    /// A Rust enum for a string enum whose values all make distinct variants.
    fn string_enum(&mut self, values: &[Value], node: &Map<String, Value>, name: &str) -> Option<Ty> {
        let strings: Vec<&str> = values.iter().map(Value::as_str).collect::<Option<_>>()?;
        if strings.is_empty() {
            return None;
        }
        let mut variants = Vec::new();
        let mut seen = BTreeSet::new();
        for s in &strings {
            let v = if s.is_empty() { "Empty".to_string() } else { type_name(s) };
            if !seen.insert(v.clone()) {
                return None;
            }
            variants.push((v, s.to_string()));
        }
        let default = node.get("default").and_then(Value::as_str).and_then(|d| strings.iter().position(|s| *s == d));
        let name = self.claim(name);
        let doc = node.get("description").and_then(Value::as_str).map(String::from);
        self.items.push(Item::Enum { name: name.clone(), doc, variants, default: default.unwrap_or(0) });
        Some(Ty::Named(name))
    }

    /// Markers for the root schema's own keys (CEL rules, mostly).
    pub fn root_markers(&mut self, rest: &mut Map<String, Value>, path: &str) -> Result<Vec<TokenStream>, String> {
        self.markers(rest, "object", path)
    }

    /// Markers for the keys left in `rest` of a node of JSON type `kind`;
    /// `Err` names the first key no marker says.
    fn markers(&mut self, rest: &mut Map<String, Value>, kind: &str, path: &str) -> Result<Vec<TokenStream>, String> {
        let mut out = Vec::new();
        let numeric = matches!(kind, "integer" | "number");
        let stringish = matches!(kind, "string" | "int-or-string");
        let keys: Vec<String> = rest.keys().cloned().collect();
        for key in keys {
            let v = &rest[&key];
            let marker = match (key.as_str(), v) {
                ("minimum" | "maximum" | "multipleOf", Value::Number(n)) if numeric => {
                    let l = number(n).ok_or(key.clone())?;
                    match key.as_str() {
                        "minimum" => quote!(minimum = #l),
                        "maximum" => quote!(maximum = #l),
                        _ => quote!(multiple_of = #l),
                    }
                }
                ("exclusiveMinimum", Value::Bool(b)) if numeric && rest.contains_key("minimum") => {
                    if *b {
                        quote!(exclusive_minimum)
                    } else {
                        quote!(exclusive_minimum = false)
                    }
                }
                ("exclusiveMaximum", Value::Bool(b)) if numeric && rest.contains_key("maximum") => {
                    if *b {
                        quote!(exclusive_maximum)
                    } else {
                        quote!(exclusive_maximum = false)
                    }
                }
                ("minLength" | "maxLength", Value::Number(n)) if stringish && n.is_u64() => {
                    let l = number(n).ok_or(key.clone())?;
                    if key == "minLength" { quote!(min_length = #l) } else { quote!(max_length = #l) }
                }
                ("pattern", Value::String(p)) if stringish => {
                    let l = lit(p);
                    quote!(pattern = #l)
                }
                ("format", Value::String(f))
                    if matches!(kind, "string" | "integer" | "number") && FORMATS.contains(&f.as_str()) =>
                {
                    let l = lit(f);
                    quote!(format = #l)
                }
                ("enum", Value::Array(values)) if !values.is_empty() && kind != "any" => {
                    let lits = values.iter().map(value_literal).collect::<Option<Vec<_>>>().ok_or(key.clone())?;
                    quote!(enum_values(#(#lits),*))
                }
                ("minItems" | "maxItems", Value::Number(n)) if kind == "array" && n.is_u64() => {
                    let l = number(n).ok_or(key.clone())?;
                    if key == "minItems" { quote!(min_items = #l) } else { quote!(max_items = #l) }
                }
                ("minProperties" | "maxProperties", Value::Number(n)) if kind == "object" && n.is_u64() => {
                    let l = number(n).ok_or(key.clone())?;
                    if key == "minProperties" { quote!(min_properties = #l) } else { quote!(max_properties = #l) }
                }
                ("uniqueItems", _) => {
                    self.drop(
                        path,
                        "`uniqueItems` (the API server rejects it; use `x-kubernetes-list-type: set`)".into(),
                    );
                    continue;
                }
                ("default", d) => default_marker(d),
                ("example", x) => match value_literal(x) {
                    Some(l) => quote!(example = #l),
                    None => {
                        let json = lit(&x.to_string());
                        quote!(example_json = #json)
                    }
                },
                ("title", Value::String(t)) => {
                    let l = lit(t);
                    quote!(title = #l)
                }
                ("externalDocs", Value::Object(docs))
                    if docs.keys().all(|k| k == "url" || k == "description")
                        && docs.values().all(Value::is_string)
                        && docs.get("url").and_then(Value::as_str).is_some_and(crate::markers::absolute_url) =>
                {
                    let url = lit(docs["url"].as_str().unwrap_or_default());
                    match docs.get("description").and_then(Value::as_str) {
                        Some(d) => {
                            let d = lit(d);
                            quote!(external_docs(url = #url, description = #d))
                        }
                        None => quote!(external_docs(url = #url)),
                    }
                }
                ("nullable", Value::Bool(true)) => quote!(nullable),
                ("x-kubernetes-preserve-unknown-fields", Value::Bool(true)) => quote!(preserve_unknown_fields),
                ("x-kubernetes-embedded-resource", Value::Bool(true)) if kind == "object" => quote!(embedded_resource),
                (
                    "nullable"
                    | "x-kubernetes-preserve-unknown-fields"
                    | "x-kubernetes-embedded-resource"
                    | "x-kubernetes-int-or-string",
                    Value::Bool(false),
                ) => {
                    self.drop(path, format!("`{key}: false` (the default)"));
                    continue;
                }
                ("x-kubernetes-list-type", Value::String(t)) if kind == "array" => {
                    let l = lit(t);
                    quote!(list_type = #l)
                }
                ("x-kubernetes-list-map-keys", Value::Array(keys)) if kind == "array" => {
                    let keys: Vec<TokenStream> =
                        keys.iter().map(|k| k.as_str().map(lit)).collect::<Option<_>>().ok_or(key.clone())?;
                    quote!(list_map_keys(#(#keys),*))
                }
                ("x-kubernetes-map-type", Value::String(t)) if kind == "object" => {
                    let l = lit(t);
                    quote!(map_type = #l)
                }
                ("x-kubernetes-validations", Value::Array(rules)) => {
                    let mut all = Vec::new();
                    for r in rules {
                        all.push(rule(r).ok_or(key.clone())?);
                    }
                    if all.is_empty() {
                        continue;
                    }
                    quote!(#(#all),*)
                }
                _ => return Err(key),
            };
            out.push(marker);
        }
        Ok(out)
    }
}

/// Rewrites the rules in `node`'s `x-kubernetes-validations` so that the
/// names of `node`'s own properties that CEL cannot read bare are escaped,
/// as the API server declares them (see `escape_bare_names`).
pub(crate) fn escape_rules(node: &mut Map<String, Value>, properties: Option<&Value>) {
    let Some(props) = properties.and_then(Value::as_object) else { return };
    let Some(Value::Array(rules)) = node.get_mut("x-kubernetes-validations") else { return };
    for r in rules {
        if let Some(Value::String(rule)) = r.get_mut("rule") {
            *rule = escape_bare_names(rule, |name| props.contains_key(name));
        }
    }
}

/// `rule` with the property names the API server's CEL cannot read bare
/// written escaped, as it declares them: `self.service-name` →
/// `self.service__dash__name`, `self.in` → `self.__in__`. controller-gen
/// writes one-of rules with bare names, and the API server refuses its CRD
/// for them; imported, such a rule works. Only a name right after `self.`
/// or `oldSelf.` that the node declares (`declared`) is rewritten, and only
/// if it has a `-` in it or is one of `true`, `false`, `null` and `in`:
/// `self.max-self.min` is a subtraction unless `max-self` is a property.
/// String literals (quoted, triple-quoted, raw, with escapes) are left
/// alone.
fn escape_bare_names(rule: &str, declared: impl Fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(rule.len());
    let mut rest = rule;
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while !rest.is_empty() {
        let at_boundary = !out.chars().last().is_some_and(|c| ident(c) || c == '.');
        let roots = ["self.?", "oldSelf.?", "self.", "oldSelf."];
        if let Some(root) = roots.into_iter().find(|r| rest.starts_with(r)).filter(|_| at_boundary) {
            out.push_str(root);
            rest = &rest[root.len()..];
            let len = rest.find(|c: char| !(ident(c) || c == '-')).unwrap_or(rest.len());
            // The longest declared name among `a-b-c`, `a-b` and `a`.
            let mut name = &rest[..len];
            while !declared(name) {
                match name.rfind('-') {
                    Some(i) => name = &name[..i],
                    None => break,
                }
            }
            let bare = declared(name) && (name.contains('-') || matches!(name, "true" | "false" | "null" | "in"));
            match crate::ident::cel_property(name).filter(|_| bare) {
                Some(escaped) => out.push_str(&escaped),
                None => out.push_str(name),
            }
            rest = &rest[name.len()..];
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        if c == '\'' || c == '"' {
            // A string literal: copied as it is, through its closing quote.
            // A raw string's prefix: `r`, or `rb` / `br` in either case.
            let prefix: String = out.chars().rev().take(2).collect::<String>().to_lowercase();
            let raw = prefix.starts_with('r') || prefix == "br";
            let triple = if c == '\'' { "'''" } else { "\"\"\"" };
            let delim = if rest.starts_with(triple) { triple } else { &rest[..1] };
            let mut i = delim.len();
            while i < rest.len() && !rest[i..].starts_with(delim) {
                i += if !raw && rest[i..].starts_with('\\') { 2 } else { 1 };
                while i < rest.len() && !rest.is_char_boundary(i) {
                    i += 1;
                }
            }
            let end = (i + delim.len()).min(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `rule(rule = .., message = .., ..)` of one `x-kubernetes-validations` entry.
fn rule(r: &Value) -> Option<TokenStream> {
    let m = r.as_object()?;
    let mut parts = Vec::new();
    for (k, v) in m {
        let part = match (k.as_str(), v) {
            ("rule", Value::String(s)) => {
                let l = lit(s);
                quote!(rule = #l)
            }
            ("message", Value::String(s)) => {
                let l = lit(s);
                quote!(message = #l)
            }
            ("messageExpression", Value::String(s)) => {
                let l = lit(s);
                quote!(message_expression = #l)
            }
            ("reason", Value::String(s)) => {
                let l = lit(s);
                quote!(reason = #l)
            }
            ("fieldPath", Value::String(s)) => {
                let l = lit(s);
                quote!(field_path = #l)
            }
            ("optionalOldSelf", Value::Bool(b)) => quote!(optional_old_self = #b),
            _ => return None,
        };
        parts.push((k != "rule", part));
    }
    // `rule` first, as people write it.
    parts.sort_by_key(|(later, _)| *later);
    let parts = parts.into_iter().map(|(_, p)| p);
    m.contains_key("rule").then(|| quote!(rule(#(#parts),*)))
}

/// Whether each type can derive `Default` (a field without a default, not
/// an `Option`, of a type without one rules it out).
pub(crate) fn defaults(items: &[Item]) -> BTreeMap<String, bool> {
    let mut out: BTreeMap<String, bool> = BTreeMap::new();
    fn ty_default(t: &Ty, out: &BTreeMap<String, bool>) -> bool {
        match t {
            Ty::Builtin(def) => !NO_DEFAULT.contains(def),
            Ty::Named(n) => out.get(n).copied().unwrap_or(true),
            _ => true,
        }
    }
    // Types are made before the types that hold them.
    for item in items {
        let d = match item {
            Item::Struct { fields, .. } => fields.iter().all(|f| f.option || ty_default(&f.ty, &out)),
            Item::Enum { .. } => true,
            Item::Newtype { inner, .. } => ty_default(inner, &out),
        };
        out.insert(item.name().to_string(), d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_rust_identifiers() {
        assert_eq!(field_ident("userID"), "user_id");
        assert_eq!(field_ident("type"), "r#type");
        assert_eq!(field_ident("x-kubernetes-thing"), "x_kubernetes_thing");
        assert_eq!(field_ident("$ref"), "r#ref");
        assert_eq!(field_ident("3d"), "_3d");
        assert_eq!(field_ident(""), "field");
        assert_eq!(type_name("jobTemplate"), "JobTemplate");
        assert_eq!(type_name("1Gi"), "T1gi");
    }

    #[test]
    fn literals_are_raw_when_they_hold_quotes() {
        assert_eq!(lit(r#"{"a":1}"#).to_string(), r##"r#"{"a":1}"#"##);
        assert_eq!(lit("plain").to_string(), "\"plain\"");
        assert_eq!(lit("a\"#b").to_string(), r###"r##"a"#b"##"###);
    }

    #[test]
    fn bare_names_in_rules_are_escaped() {
        let declared = |name: &str| ["namespace", "service-name", "in", "max", "min", "a", "b", "a-b"].contains(&name);
        let esc = |rule: &str| escape_bare_names(rule, declared);
        assert_eq!(
            esc("(has(self.namespace)?1:0)+(has(self.service-name)?1:0) == 1"),
            "(has(self.namespace)?1:0)+(has(self.service__dash__name)?1:0) == 1"
        );
        assert_eq!(esc("!has(oldSelf.in) || has(self.in)"), "!has(oldSelf.__in__) || has(self.__in__)");
        // The longest declared name wins; the rest is a subtraction.
        assert_eq!(esc("self.a-b-1 > 0"), "self.a__dash__b-1 > 0");
        assert_eq!(esc("self.x == 'it\\'s' && self.in"), "self.x == 'it\\'s' && self.__in__");
        assert_eq!(esc("self.?service-name.hasValue()"), "self.?service__dash__name.hasValue()");
        assert_eq!(esc(r"self.x == rb'\' && self.in"), r"self.x == rb'\' && self.__in__");
        assert_eq!(esc(r"self.x == BR'\' && self.in"), r"self.x == BR'\' && self.__in__");
        // Left as they are: escaped names, subtractions (with or without
        // spaces), names the node does not declare, nested fields, string
        // literals of every kind and names that only end in `self`.
        for rule in [
            "self.service__dash__name > 0",
            "self.a - self.b > 0",
            "self.max-self.min > 0",
            "self.a-1 > 0 || self.spec.in_use",
            "self.other-name == 1 && self.true == 1",
            "self.x == 'self.a-b'",
            r#"self.x == "it\"s self.a-b" && self.y == 'self.in'"#,
            r"self.x == '''it's self.a-b''' && self.y == r'\' && self.z == 'self.in'",
            "myself.a-b",
        ] {
            assert_eq!(esc(rule), rule);
        }
    }
}
