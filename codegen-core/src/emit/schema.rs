//! openAPIV3Schema from the model, aiming at a structural schema: what is
//! known to be rejected by the API server (including defaults that do not
//! validate) is reported at the field or marker that caused it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::yaml::{Emit, Emitter, Layout};
use crate::builtin::{self, ExpandError, ExpandOptions};
use crate::diag::{Diagnostic, Diagnostics};
use crate::markers::{Spanned, Validate};
use crate::model::*;
use crate::parse::Origin;

/// apiextensions.k8s.io/v1 `JSONSchemaProps`, the subset a structural schema
/// may use. Children are shared (`Arc`, copied on write): a built-in type's
/// expansion is the same tree in every kind that embeds it. Fields are declared in alphabetical order of their JSON names so
/// the YAML reads like controller-gen's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct JsonSchemaProps {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Arc<JsonSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_of: Option<Vec<JsonSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<JsonSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Arc<str>>,
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_docs: Option<ExternalDocumentation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Arc<JsonSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not: Option<Arc<JsonSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nullable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<JsonSchemaProps>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Arc<BTreeMap<String, JsonSchemaProps>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Arc<str>>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<Arc<str>>,
    #[serde(rename = "x-kubernetes-embedded-resource", skip_serializing_if = "Option::is_none")]
    pub x_embedded_resource: Option<bool>,
    #[serde(rename = "x-kubernetes-int-or-string", skip_serializing_if = "Option::is_none")]
    pub x_int_or_string: Option<bool>,
    #[serde(rename = "x-kubernetes-list-map-keys", skip_serializing_if = "Option::is_none")]
    pub x_list_map_keys: Option<Vec<String>>,
    #[serde(rename = "x-kubernetes-list-type", skip_serializing_if = "Option::is_none")]
    pub x_list_type: Option<String>,
    #[serde(rename = "x-kubernetes-map-type", skip_serializing_if = "Option::is_none")]
    pub x_map_type: Option<String>,
    #[serde(rename = "x-kubernetes-preserve-unknown-fields", skip_serializing_if = "Option::is_none")]
    pub x_preserve_unknown_fields: Option<bool>,
    #[serde(rename = "x-kubernetes-validations", skip_serializing_if = "Option::is_none")]
    pub x_validations: Option<Vec<ValidationRule>>,
}

/// The smaller of two upper bounds, either of which may be missing.
fn tighter_max(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// controller-gen's count of the set fields among `names`:
/// `(has(self.a)?1:0)+(has(self.b)?1:0)`.
fn sum_of_has(names: &[String]) -> String {
    names.iter().map(|n| format!("(has(self.{n})?1:0)")).collect::<Vec<_>>().join("+")
}

/// A schema node's `externalDocs`: where to read more.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ExternalDocumentation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Emit for ExternalDocumentation {
    fn layout(&self) -> Layout {
        Layout::Map
    }

    fn emit(&self, e: &mut Emitter) {
        e.opt("description", self.description.as_ref());
        e.opt("url", self.url.as_ref());
    }
}

/// One `x-kubernetes-validations` entry.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ValidationRule {
    /// Where the rule was written (an index into the builder's rule
    /// sites), for the CEL check of the finished schema; no part of the
    /// rule (not written, not compared).
    #[serde(skip)]
    pub site: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional_old_self: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub rule: String,
}

impl Emit for JsonSchemaProps {
    fn layout(&self) -> Layout {
        // A schema node almost always has a type or a description.
        if self.type_.is_some() || self.description.is_some() || *self != JsonSchemaProps::default() {
            Layout::Map
        } else {
            Layout::Inline
        }
    }

    /// The keys in byte order, as `serde_json` would sort them.
    fn emit(&self, e: &mut Emitter) {
        if self.layout() == Layout::Inline {
            return e.raw("{}");
        }
        e.opt("additionalProperties", self.additional_properties.as_deref());
        e.opt("allOf", self.all_of.as_ref());
        e.opt("anyOf", self.any_of.as_ref());
        e.opt("default", self.default.as_ref());
        e.opt("description", self.description.as_ref());
        e.opt("enum", self.enum_.as_ref());
        e.opt("example", self.example.as_ref());
        e.opt("exclusiveMaximum", self.exclusive_maximum.as_ref());
        e.opt("exclusiveMinimum", self.exclusive_minimum.as_ref());
        e.opt("externalDocs", self.external_docs.as_ref());
        e.opt("format", self.format.as_ref());
        e.opt("items", self.items.as_deref());
        e.opt("maxItems", self.max_items.as_ref());
        e.opt("maxLength", self.max_length.as_ref());
        e.opt("maxProperties", self.max_properties.as_ref());
        e.opt("maximum", self.maximum.as_ref());
        e.opt("minItems", self.min_items.as_ref());
        e.opt("minLength", self.min_length.as_ref());
        e.opt("minProperties", self.min_properties.as_ref());
        e.opt("minimum", self.minimum.as_ref());
        e.opt("multipleOf", self.multiple_of.as_ref());
        e.opt("not", self.not.as_deref());
        e.opt("nullable", self.nullable.as_ref());
        e.opt("oneOf", self.one_of.as_ref());
        e.opt("pattern", self.pattern.as_ref());
        e.opt("properties", self.properties.as_deref());
        e.opt("required", self.required.as_ref());
        e.opt("title", self.title.as_ref());
        e.opt("type", self.type_.as_ref());
        e.opt("x-kubernetes-embedded-resource", self.x_embedded_resource.as_ref());
        e.opt("x-kubernetes-int-or-string", self.x_int_or_string.as_ref());
        e.opt("x-kubernetes-list-map-keys", self.x_list_map_keys.as_ref());
        e.opt("x-kubernetes-list-type", self.x_list_type.as_ref());
        e.opt("x-kubernetes-map-type", self.x_map_type.as_ref());
        e.opt("x-kubernetes-preserve-unknown-fields", self.x_preserve_unknown_fields.as_ref());
        e.opt("x-kubernetes-validations", self.x_validations.as_ref());
    }
}

impl PartialEq for ValidationRule {
    /// The rule as the API server reads it: where it was written is no
    /// part of it.
    fn eq(&self, other: &Self) -> bool {
        (&self.field_path, &self.message, &self.message_expression, &self.optional_old_self, &self.reason, &self.rule)
            == (
                &other.field_path,
                &other.message,
                &other.message_expression,
                &other.optional_old_self,
                &other.reason,
                &other.rule,
            )
    }
}

impl Emit for ValidationRule {
    fn layout(&self) -> Layout {
        Layout::Map
    }

    fn emit(&self, e: &mut Emitter) {
        e.opt("fieldPath", self.field_path.as_ref());
        e.opt("message", self.message.as_ref());
        e.opt("messageExpression", self.message_expression.as_ref());
        e.opt("optionalOldSelf", self.optional_old_self.as_ref());
        e.opt("reason", self.reason.as_ref());
        e.entry("rule", &self.rule);
    }
}

fn typed(t: &str) -> JsonSchemaProps {
    JsonSchemaProps { type_: Some(t.into()), ..Default::default() }
}

fn with_format(t: &str, f: &str) -> JsonSchemaProps {
    JsonSchemaProps { format: Some(f.into()), ..typed(t) }
}

fn int_or_string() -> JsonSchemaProps {
    JsonSchemaProps {
        any_of: Some(vec![typed("integer"), typed("string")]),
        x_int_or_string: Some(true),
        ..Default::default()
    }
}

const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// One property of two variants whose schemas differ only in their
/// descriptions (`name`, "Name of the Secret." / "Name of the ConfigMap."):
/// the first's schema, without a description where the two disagree.
/// `None` when anything else differs.
fn merged_descriptions(first: &JsonSchemaProps, second: &JsonSchemaProps) -> Option<JsonSchemaProps> {
    /// The schema as JSON without the descriptions of its nodes.
    fn undescribed(schema: &JsonSchemaProps) -> Value {
        fn strip(node: &mut Value) {
            let Some(map) = node.as_object_mut() else { return };
            map.remove("description");
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "properties" | "patternProperties" | "definitions" => {
                        if let Some(children) = child.as_object_mut() {
                            children.values_mut().for_each(strip);
                        }
                    }
                    "items" | "additionalProperties" | "not" => strip(child),
                    "allOf" | "anyOf" | "oneOf" => {
                        if let Some(children) = child.as_array_mut() {
                            children.iter_mut().for_each(strip);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut value = serde_json::to_value(schema).unwrap_or(Value::Null);
        strip(&mut value);
        value
    }
    if undescribed(first) != undescribed(second) {
        return None;
    }
    let mut merged = first.clone();
    if first.description != second.description {
        merged.description = None;
    }
    Some(merged)
}

/// Which keys of two schemas differ, for messages: "`pattern` differs".
fn differing_keys(first: &JsonSchemaProps, second: &JsonSchemaProps) -> String {
    let (a, b) = (serde_json::to_value(first).unwrap_or_default(), serde_json::to_value(second).unwrap_or_default());
    let empty = serde_json::Map::new();
    let (a, b) = (a.as_object().unwrap_or(&empty), b.as_object().unwrap_or(&empty));
    let keys: std::collections::BTreeSet<&String> =
        a.keys().chain(b.keys()).filter(|k| *k != "description" && a.get(*k) != b.get(*k)).collect();
    let keys: Vec<String> = keys.into_iter().map(|k| format!("`{k}`")).collect();
    match keys.len() {
        0 => "they differ".to_string(),
        1 => format!("{} differs", keys[0]),
        _ => format!("{} differ", keys.join(", ")),
    }
}

fn known_schema(k: Known) -> JsonSchemaProps {
    match k {
        Known::TypeMeta => JsonSchemaProps {
            properties: Some(Arc::new(
                [("apiVersion", typed("string")), ("kind", typed("string"))].map(|(k, v)| (k.to_string(), v)).into(),
            )),
            ..typed("object")
        },
        Known::Duration => typed("string"),
        Known::DateTime => with_format("string", "date-time"),
        Known::ByteString => with_format("string", "byte"),
        Known::Format(format) => with_format("string", format),
    }
}

/// How schemas are built: what every front end sets through [`crate::Settings`].
#[derive(Clone, Debug)]
pub struct SchemaOptions {
    /// How built-in types are expanded (the Kubernetes version, embedded ObjectMeta).
    pub builtin: ExpandOptions,
    /// Why that Kubernetes version (for "not defined in 1.33" errors).
    pub version_reason: String,
}

impl SchemaOptions {
    /// The options of a run.
    pub fn from_settings(settings: &crate::Settings) -> Self {
        let choice = settings.kube_version();
        SchemaOptions {
            builtin: ExpandOptions { version: choice.version, embedded_object_meta: settings.embedded_object_meta },
            version_reason: choice.reason,
        }
    }
}

/// Builds schemas for the types of one version, reporting problems.
pub struct SchemaBuilder<'a> {
    model: &'a Model,
    version: &'a Version,
    options: &'a SchemaOptions,
    diags: &'a mut Diagnostics,
    stack: Vec<TypeKey>,
    /// How many "has no structural schema" errors were reported (a
    /// recursive type, an untagged enum of mixed shapes, ...): a position
    /// that replaces its schema takes such a type as free-form JSON.
    no_schema: usize,
    /// Where each CEL rule was written, for the check of the finished
    /// schema.
    #[cfg(feature = "cel")]
    rule_sites: Vec<(String, proc_macro2::Span, Origin)>,
    /// Whether `root` checks the finished schema's CEL rules (their names,
    /// parts and cost).
    #[cfg(feature = "cel")]
    rule_checks: bool,
}

impl<'a> SchemaBuilder<'a> {
    /// A builder over `version`'s types (other packages' types come from `model`).
    pub fn new(model: &'a Model, version: &'a Version, options: &'a SchemaOptions, diags: &'a mut Diagnostics) -> Self {
        SchemaBuilder {
            model,
            version,
            options,
            diags,
            stack: Vec::new(),
            no_schema: 0,
            #[cfg(feature = "cel")]
            rule_sites: Vec::new(),
            #[cfg(feature = "cel")]
            rule_checks: true,
        }
    }

    /// A builder whose `root` leaves the CEL rules unchecked: for a second
    /// build of a schema the CRD's build has checked already.
    pub fn without_rule_checks(self) -> Self {
        #[cfg(feature = "cel")]
        {
            SchemaBuilder { rule_checks: false, ..self }
        }
        #[cfg(not(feature = "cel"))]
        self
    }

    /// The openAPIV3Schema of a kind's root type.
    pub fn root(&mut self, kind: &Kind) -> JsonSchemaProps {
        let Some(def) = self.version.types.get(&kind.rust_name) else { return typed("object") };
        let Body::Struct(fields) = &def.body else { return typed("object") };
        self.stack.push(TypeKey { package: self.version.package.clone(), name: def.name.clone() });
        let mut schema = self.struct_schema(def, fields);
        self.stack.pop();
        schema.description = def.doc.as_deref().map(Arc::from);
        let props = Arc::make_mut(schema.properties.get_or_insert_with(Default::default));
        props.insert("metadata".into(), typed("object"));
        if let Some(p) = props.get_mut("apiVersion") {
            p.description.get_or_insert_with(|| API_VERSION_DOC.into());
        }
        if let Some(p) = props.get_mut("kind") {
            p.description.get_or_insert_with(|| KIND_DOC.into());
        }
        if let Some(req) = &mut schema.required {
            req.retain(|r| r != "metadata" && r != "apiVersion" && r != "kind");
            if req.is_empty() {
                schema.required = None;
            }
        }
        for f in fields {
            if f.json_name == "metadata" && !f.validate.is_empty() {
                self.diags.push(
                    Diagnostic::error("validation markers on `metadata` are not allowed")
                        .at(f.origin.location())
                        .help("the API server only allows restrictions on metadata.name and metadata.generateName"),
                );
            }
        }
        #[cfg(feature = "cel")]
        if self.rule_checks {
            self.check_rules(&schema);
        }
        schema
    }

    #[cfg(feature = "cel")]
    fn warn(&mut self, origin: &Origin, span: Option<proc_macro2::Span>, message: String, help: impl Into<String>) {
        let o = span.map_or_else(|| origin.clone(), |s| origin.with_span(s));
        self.diags.push(Diagnostic::warning(message).at(o.location()).help(help));
    }

    /// An error saying a type has no structural schema (see `no_schema`).
    fn no_schema_error(&mut self, origin: &Origin, message: String, help: impl Into<String>) {
        self.no_schema += 1;
        self.error(origin, None, message, help);
    }

    fn error(&mut self, origin: &Origin, span: Option<proc_macro2::Span>, message: String, help: impl Into<String>) {
        let o = span.map_or_else(|| origin.clone(), |s| origin.with_span(s));
        self.diags.push(Diagnostic::error(message).at(o.location()).help(help));
    }

    fn struct_schema(&mut self, def: &TypeDef, fields: &[Field]) -> JsonSchemaProps {
        let mut properties = BTreeMap::new();
        let mut required = Vec::new();
        let mut preserve = false;
        // A flattened struct is an embedded resource.
        let mut embedded = false;
        // What flattened structs (and the markers on their fields) add to
        // this object besides properties, as controller-gen merges an
        // inline field's schema into its parent: rules, property counts.
        let mut merged = JsonSchemaProps::default();
        // Optional immutable fields, which may be set once but not unset.
        let mut set_once = Vec::new();
        for f in fields {
            if f.serde.flatten {
                // The flattened field is no property of its own: nothing
                // could be immutable or a choice but the fields it brings.
                if let Some(span) = f.validate.immutable {
                    self.error(
                        &f.origin,
                        Some(span),
                        format!("`immutable` on the flattened field `{}`", f.rust_name),
                        "put `#[validate(immutable)]` on the fields of the flattened struct that must not change",
                    );
                }
                if let Some(group) = f.validate.one_of.first() {
                    self.error(
                        &f.origin,
                        Some(group.span),
                        format!("a choice of fields on the flattened field `{}`", f.rust_name),
                        "`at_most_one_of`, `exactly_one_of` and `at_least_one_of` go on the struct whose fields they name",
                    );
                }
                let v = &f.validate;
                for (marker, span) in [
                    ("nullable", v.nullable),
                    ("title", v.title.as_ref().map(|t| t.span)),
                    ("example", v.example.as_ref().map(|e| e.span)),
                    ("default", v.default.as_ref().map(|d| d.span)),
                ] {
                    if let Some(span) = span {
                        self.error(
                            &f.origin,
                            Some(span),
                            format!("`{marker}` on the flattened field `{}`, which is no property of its own", f.rust_name),
                            format!("put `{marker}` on the fields of the flattened struct, or on the struct it is flattened into"),
                        );
                    }
                }
                match f.ty.unwrap_option() {
                    TypeRef::Known(Known::TypeMeta) => {
                        properties.insert("apiVersion".to_string(), typed("string"));
                        properties.insert("kind".to_string(), typed("string"));
                    }
                    t @ (TypeRef::Named(_) | TypeRef::Builtin(_)) => {
                        let mut inner = self.type_schema(t, &f.origin);
                        let (type_min, type_max) = (inner.min_properties, inner.max_properties);
                        self.apply(&mut inner, &f.validate, &f.origin, &f.rust_name, None);
                        // The field's and the type's counts both hold.
                        inner.min_properties = inner.min_properties.max(type_min);
                        inner.max_properties = tighter_max(inner.max_properties, type_max);
                        // A flattened newtype/transparent map keeps every other key.
                        preserve |= inner.additional_properties.is_some();
                        if inner.type_.as_deref() != Some("object") {
                            self.error(
                                &f.origin,
                                None,
                                format!("flattened field `{}` is not a struct", f.rust_name),
                                "only structs and maps can be `#[serde(flatten)]`ed",
                            );
                            continue;
                        }
                        for (k, v) in inner.properties.map(Arc::unwrap_or_clone).unwrap_or_default() {
                            if properties.insert(k.clone(), v).is_some() {
                                self.error(
                                    &f.origin,
                                    None,
                                    format!("flattened field `{}` repeats property `{k}`", f.rust_name),
                                    "rename one of the two fields",
                                );
                            }
                        }
                        if !matches!(f.ty, TypeRef::Option(_)) && !f.serde.default {
                            required.extend(inner.required.unwrap_or_default());
                        }
                        preserve |= inner.x_preserve_unknown_fields == Some(true);
                        // What holds of the flattened object holds of the
                        // one it is merged into, as controller-gen's `allOf`.
                        embedded |= inner.x_embedded_resource == Some(true);
                        if let Some(map_type) = inner.x_map_type.take() {
                            match &merged.x_map_type {
                                Some(other) if *other != map_type => self.error(
                                    &f.origin,
                                    None,
                                    format!("flattened field `{}` is a `map_type = \"{map_type}\"`, another flattened one `\"{other}\"`", f.rust_name),
                                    "a struct has one map type: give the flattened structs the same one",
                                ),
                                _ => merged.x_map_type = Some(map_type),
                            }
                        }
                        if let Some(rules) = inner.x_validations.take() {
                            merged.x_validations.get_or_insert_with(Vec::new).extend(rules);
                        }
                        // A flattened externally tagged enum that must be
                        // there: exactly one of its variants' keys, here as
                        // in the enum; an optional one: none of them, or
                        // exactly one (the `not` branch, as a proto one-of).
                        let present = !matches!(f.ty, TypeRef::Option(_)) && !f.serde.default;
                        let one_of = inner.one_of.take().map(|branches| {
                            if present {
                                return branches;
                            }
                            let none = JsonSchemaProps { any_of: Some(branches.clone()), ..Default::default() };
                            let mut all = vec![JsonSchemaProps { not: Some(Arc::new(none)), ..Default::default() }];
                            all.extend(branches);
                            all
                        });
                        if let Some(one_of) = one_of {
                            if merged.one_of.is_some() {
                                self.diags.push(
                                    Diagnostic::warning(format!(
                                        "flattened field `{}` is a second flattened enum: the CRD does not check that one of its variants is given",
                                        f.rust_name
                                    ))
                                    .at(f.origin.location())
                                    .help("one struct carries the choice of one flattened enum; nest the other in a field of its own to have it checked"),
                                );
                            } else {
                                merged.one_of = Some(one_of);
                            }
                        }
                        merged.min_properties = merged.min_properties.max(inner.min_properties);
                        merged.max_properties = tighter_max(merged.max_properties, inner.max_properties);
                    }
                    TypeRef::Map(_) | TypeRef::Json | TypeRef::JsonObject => preserve = true,
                    _ => self.error(
                        &f.origin,
                        None,
                        format!("`#[serde(flatten)]` on `{}` has no structural schema", f.rust_name),
                        "flatten a struct, or a `BTreeMap<String, serde_json::Value>` to keep unknown fields",
                    ),
                }
                continue;
            }
            if has_float(&f.ty)
                && f.validate.allow_dangerous_types.is_none()
                && def.validate.allow_dangerous_types.is_none()
            {
                self.diags.push(
                    Diagnostic::warning(format!("`{}` is a floating-point number", f.rust_name))
                        .at(f.origin.location())
                        .note("controller-gen refuses floats unless `crd:allowDangerousTypes=true`: they do not round-trip exactly through JSON, YAML and other languages' clients")
                        .help("use an integer (e.g. in milli-units), a string or a `Quantity`; or keep the float and add `#[validate(allow_dangerous_types)]` to the field or its type"),
                );
            }
            let schema = self.field(f);
            if f.required(def.serde.default) {
                required.push(f.json_name.clone());
            } else if f.validate.immutable.is_some() {
                set_once.push(f);
            }
            if properties.insert(f.json_name.clone(), schema).is_some() {
                self.error(
                    &f.origin,
                    None,
                    format!("two fields are serialized as `{}`", f.json_name),
                    "fix the `#[serde(rename)]`",
                );
            }
        }
        required.sort();
        required.dedup();
        let mut schema = JsonSchemaProps {
            // A struct without fields has no `properties`, as controller-gen
            // writes it (the API server reads both alike: nothing is kept).
            properties: if properties.is_empty() { None } else { Some(Arc::new(properties)) },
            required: if required.is_empty() { None } else { Some(required) },
            ..typed("object")
        };
        if preserve {
            schema.x_preserve_unknown_fields = Some(true);
        }
        schema.x_validations = merged.x_validations;
        schema.one_of = merged.one_of;
        schema.x_map_type.clone_from(&merged.x_map_type);
        if embedded {
            schema.x_embedded_resource = Some(true);
        }
        // A field's own rule does not run when the field is removed:
        // controller-gen's rule on the parent keeps an optional immutable
        // field from being unset once set.
        for f in set_once {
            let span = f.validate.immutable.unwrap_or(f.origin.span);
            let Some(cel) = self.cel_property(f, span, "immutable") else {
                continue;
            };
            let rule = format!("!has(oldSelf.{cel}) || has(self.{cel})");
            schema.x_validations.get_or_insert_with(Vec::new).push(ValidationRule {
                site: self.marker_site(&rule, span, &f.origin),
                message: Some(format!("field {} is immutable once set", f.json_name)),
                rule,
                ..ValidationRule::default()
            });
        }
        self.apply(&mut schema, &def.validate, &def.origin, &def.name, None);
        if let (Some(own), Some(flattened)) = (&def.validate.map_type, &merged.x_map_type)
            && own.value != *flattened
        {
            self.error(
                &def.origin,
                Some(own.span),
                format!(
                    "`map_type = \"{}\"` of `{}`, whose flattened fields are `\"{flattened}\"`",
                    own.value, def.name
                ),
                "a struct has one map type: give it and the structs flattened into it the same one",
            );
        }
        // The struct's own counts and those flattened into it all hold.
        schema.min_properties = schema.min_properties.max(merged.min_properties);
        schema.max_properties = tighter_max(schema.max_properties, merged.max_properties);
        self.one_of_rules(&mut schema, def, fields);
        schema
    }

    /// `at_most_one_of`, `exactly_one_of` and `at_least_one_of` as the CEL
    /// rules controller-gen writes for its `AtMostOneOf`, `ExactlyOneOf` and
    /// `AtLeastOneOf` (same rule, same message), after the struct's own.
    fn one_of_rules(&mut self, schema: &mut JsonSchemaProps, def: &TypeDef, fields: &[Field]) {
        let mut groups: Vec<&crate::markers::OneOf> = def.validate.one_of.iter().collect();
        // controller-gen's order: every AtMostOneOf, then ExactlyOneOf, then AtLeastOneOf.
        groups.sort_by_key(|g| match g.kind {
            crate::markers::OneOfKind::AtMost => 0,
            crate::markers::OneOfKind::Exactly => 1,
            crate::markers::OneOfKind::AtLeast => 2,
        });
        for group in groups {
            let marker = match group.kind {
                crate::markers::OneOfKind::AtMost => "at_most_one_of",
                crate::markers::OneOfKind::Exactly => "exactly_one_of",
                crate::markers::OneOfKind::AtLeast => "at_least_one_of",
            };
            let mut names: Vec<String> = Vec::new();
            let mut cel_names = Vec::new();
            let mut named = 0;
            for name in &group.fields {
                let Some(f) = fields
                    .iter()
                    .find(|f| !f.serde.flatten && (f.rust_name == name.value || f.json_name == name.value))
                else {
                    let known: Vec<&str> =
                        fields.iter().filter(|f| !f.serde.flatten).map(|f| f.rust_name.as_str()).collect();
                    let help = match crate::ident::did_you_mean(&name.value, &known) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("`{}` has: {}", def.name, known.join(", ")),
                    };
                    self.error(
                        &def.origin,
                        Some(name.span),
                        format!("`{marker}` names `{}`, which is not a field of `{}`", name.value, def.name),
                        help,
                    );
                    continue;
                };
                if f.required(def.serde.default) {
                    self.error(
                        &def.origin,
                        Some(name.span),
                        format!("`{}` is in `{marker}` but required", f.rust_name),
                        "make it an `Option<..>` (or `#[serde(default)]`): a field that must be set cannot be one of a choice",
                    );
                }
                // By Rust or JSON name: the same field either way.
                if names.contains(&f.json_name) {
                    self.error(
                        &def.origin,
                        Some(name.span),
                        format!("`{marker}` names `{}` twice", f.rust_name),
                        "name each field once",
                    );
                    continue;
                }
                if let Some(cel) = self.cel_property(f, name.span, marker) {
                    cel_names.push(cel);
                }
                names.push(f.json_name.clone());
                named += 1;
            }
            if cel_names.len() != group.fields.len() || named != group.fields.len() {
                continue;
            }
            let listed = format!("[{}]", names.join(" "));
            let (rule, message) = match group.kind {
                crate::markers::OneOfKind::AtMost => (
                    format!("{} <= 1", sum_of_has(&cel_names)),
                    format!("at most one of the fields in {listed} may be set"),
                ),
                crate::markers::OneOfKind::Exactly => (
                    format!("{} == 1", sum_of_has(&cel_names)),
                    format!("exactly one of the fields in {listed} must be set"),
                ),
                crate::markers::OneOfKind::AtLeast => (
                    cel_names.iter().map(|n| format!("has(self.{n})")).collect::<Vec<_>>().join("||"),
                    format!("at least one of the fields in {listed} must be set"),
                ),
            };
            let span = group.fields.first().map_or(def.origin.span, |n| n.span);
            schema.x_validations.get_or_insert_with(Vec::new).push(ValidationRule {
                site: self.marker_site(&rule, span, &def.origin),
                message: Some(message),
                rule,
                ..ValidationRule::default()
            });
        }
    }

    /// The rule site of a rule a marker writes (`immutable`,
    /// `exactly_one_of`), for the CEL check: reported at the marker.
    fn marker_site(&mut self, rule: &str, span: proc_macro2::Span, origin: &Origin) -> Option<usize> {
        #[cfg(feature = "cel")]
        {
            self.rule_sites.push((rule.to_string(), span, origin.clone()));
            Some(self.rule_sites.len() - 1)
        }
        #[cfg(not(feature = "cel"))]
        {
            let _ = (rule, span, origin);
            None
        }
    }

    /// `f`'s property name as a generated CEL rule writes it, escaped as
    /// the API server declares it; an error where CEL cannot name it.
    fn cel_property(&mut self, f: &Field, span: proc_macro2::Span, marker: &str) -> Option<String> {
        let cel = crate::ident::cel_property(&f.json_name);
        if cel.is_none() {
            self.error(
                &f.origin,
                Some(span),
                format!("`{marker}` needs a CEL rule naming `{}`, which CEL cannot name", f.json_name),
                "serialize the field under a name of ASCII letters, digits, `_`, `.`, `-` or `/` not starting with a digit (`#[serde(rename)]`)",
            );
        }
        cel
    }

    fn field(&mut self, f: &Field) -> JsonSchemaProps {
        if let Some(group) = f.validate.one_of.first() {
            self.error(
                &f.origin,
                Some(group.span),
                format!("a choice of fields on the field `{}`", f.rust_name),
                "`at_most_one_of`, `exactly_one_of` and `at_least_one_of` go on the struct whose fields they name",
            );
        }
        if let Some(span) = f.validate.nullable
            && !matches!(f.ty, TypeRef::Option(_))
        {
            self.error(
                &f.origin,
                Some(span),
                format!("`nullable` on `{}`, which is not an `Option`", f.rust_name),
                "serde cannot read `null` into it; make the field `Option<..>` or remove `nullable`",
            );
        }
        // A named or built-in type brings its own doc; the field's doc wins
        // (controller-gen's rule, which also puts a type's doc on the items
        // of lists and the values of maps of it).
        let mut schema = self.type_schema_at(&f.ty, Some(&f.validate), &f.origin);
        if let Some(doc) = &f.doc {
            schema.description = Some(doc.as_str().into());
        }
        describe_items(&mut schema, &f.item_docs);
        // The field's rules come before its type's, as controller-gen
        // writes them.
        let type_rules = schema.x_validations.take();
        self.apply(&mut schema, &f.validate, &f.origin, &f.rust_name, Some(&f.ty));
        if let Some(span) = f.validate.immutable {
            let rule = "self == oldSelf";
            schema.x_validations.get_or_insert_with(Vec::new).push(ValidationRule {
                site: self.marker_site(rule, span, &f.origin),
                message: Some("field is immutable".into()),
                rule: rule.into(),
                ..ValidationRule::default()
            });
        }
        // A schema the field writes out whole (`schema_json`,
        // `int_or_string`) replaces its type's, rules included.
        let replaced = f.validate.schema_json.is_some() || f.validate.int_or_string.is_some();
        if let Some(type_rules) = type_rules.filter(|_| !replaced) {
            schema.x_validations.get_or_insert_with(Vec::new).extend(type_rules);
        }
        schema
    }

    /// Where a field and its named type both set a limit, both hold (the
    /// API server checks the two schemas controller-gen writes in `allOf`):
    /// the tighter bound is kept; two different patterns, formats or
    /// multiples cannot be one value and are an error.
    fn keep_type_limits(
        &mut self,
        s: &mut JsonSchemaProps,
        before: &JsonSchemaProps,
        ty: &TypeDef,
        user: &Validate,
        origin: &Origin,
        name: &str,
    ) {
        let type_name = ty.name.as_str();
        let tighter_u64 = |field: Option<u64>, ty: Option<u64>, min: bool| match (field, ty) {
            (Some(a), Some(b)) => Some(if min { a.max(b) } else { a.min(b) }),
            (a, b) => a.or(b),
        };
        // `before` is the type's schema: its limits are those of its own
        // markers, of a newtype's or transparent struct's field, and of a
        // type it wraps.
        macro_rules! bound {
            ($key:ident, $min:expr) => {
                if user.$key.is_some() && before.$key.is_some() {
                    s.$key = tighter_u64(s.$key, before.$key, $min);
                }
            };
        }
        bound!(min_length, true);
        bound!(max_length, false);
        bound!(min_items, true);
        bound!(max_items, false);
        bound!(min_properties, true);
        bound!(max_properties, false);
        // A bound and its exclusiveness are one pair: the tighter pair wins
        // (on equal values, exclusive if either is). The marker's own value
        // is compared: `apply` kept the type's bound where it is tighter.
        let number = |n: &Option<serde_json::Number>| n.as_ref().and_then(serde_json::Number::as_f64);
        let marker = |n: &Option<Spanned<serde_json::Number>>| n.as_ref().and_then(|n| n.value.as_f64());
        let field_flag = |b: &Option<Spanned<bool>>| b.as_ref().is_some_and(|b| b.value);
        if user.minimum.is_some() && before.minimum.is_some() {
            let (type_excl, field_excl) = (before.exclusive_minimum == Some(true), field_flag(&user.exclusive_minimum));
            let excl = match number(&before.minimum).zip(marker(&user.minimum)) {
                Some((t, v)) if t > v => {
                    s.minimum.clone_from(&before.minimum);
                    type_excl
                }
                Some((t, v)) if t == v => type_excl || field_excl,
                _ => field_excl,
            };
            s.exclusive_minimum = excl.then_some(true);
        }
        if user.maximum.is_some() && before.maximum.is_some() {
            let (type_excl, field_excl) = (before.exclusive_maximum == Some(true), field_flag(&user.exclusive_maximum));
            let excl = match number(&before.maximum).zip(marker(&user.maximum)) {
                Some((t, v)) if t < v => {
                    s.maximum.clone_from(&before.maximum);
                    type_excl
                }
                Some((t, v)) if t == v => type_excl || field_excl,
                _ => field_excl,
            };
            s.exclusive_maximum = excl.then_some(true);
        }
        // A number's width (`int32`, `double`) comes from the Rust type, and
        // a `format` marker may say another, as on a field of that type.
        let width = matches!(before.format.as_deref(), Some("int32" | "int64" | "float" | "double"));
        let conflicts = [
            ("pattern", user.pattern.as_ref().map(|p| p.span), before.pattern.is_some(), before.pattern != s.pattern),
            (
                "format",
                user.format.as_ref().map(|p| p.span),
                ty.validate.format.is_some() || (before.format.is_some() && !width),
                before.format != s.format,
            ),
            (
                "multiple_of",
                user.multiple_of.as_ref().map(|p| p.span),
                before.multiple_of.is_some(),
                before.multiple_of != s.multiple_of,
            ),
        ];
        for (marker, span, on_type, differ) in conflicts {
            if let Some(span) = span
                && on_type
                && differ
            {
                self.error(
                    origin,
                    Some(span),
                    format!("`{marker}` of `{name}` differs from the `{marker}` of its type `{type_name}`"),
                    format!(
                        "both would have to hold; write one `{marker}` that says both, on the field or on `{type_name}`"
                    ),
                );
            }
        }
        // The values a field allows are some of its type's: one the type
        // does not have (not a variant of a Rust enum) would be accepted by
        // the API server and could not be read.
        if let (Some(values), Some(allowed)) = (&user.enum_values, &before.enum_)
            && let Some(bad) = values.value.iter().find(|value| !allowed.contains(value))
        {
            self.error(
                origin,
                Some(values.span),
                format!("enum value {bad} of `{name}` is not a value of its type `{type_name}`"),
                format!("list only values `{type_name}` has; serde could not read {bad}"),
            );
            s.enum_.clone_from(&before.enum_);
        }
    }

    /// The schema of `ty` at a position whose markers are `v` (a field's,
    /// or its `items(..)` / `values(..)`). Where the markers replace the
    /// schema (`preserve_unknown_fields`, `schema_json`), a type that has
    /// none (an untagged enum of mixed shapes, a recursive type) is free-form
    /// JSON there instead of an error, as controller-gen's `Schemaless`;
    /// a type that has one keeps it.
    fn type_schema_at(&mut self, ty: &TypeRef, v: Option<&Validate>, origin: &Origin) -> JsonSchemaProps {
        let (mark, no_schema) = (self.diags.len(), self.no_schema);
        let schema = match ty {
            TypeRef::Option(inner) => self.type_schema_at(inner, v, origin),
            TypeRef::List(inner) => {
                let items = self.type_schema_at(inner, v.and_then(|v| v.items.as_deref()), origin);
                JsonSchemaProps { items: Some(Arc::new(items)), ..typed("array") }
            }
            TypeRef::Set(inner) => set_schema(self.type_schema_at(inner, v.and_then(|v| v.items.as_deref()), origin)),
            TypeRef::Map(inner) => {
                let values = self.type_schema_at(inner, v.and_then(|v| v.values.as_deref()), origin);
                JsonSchemaProps { additional_properties: Some(Arc::new(values)), ..typed("object") }
            }
            TypeRef::String => typed("string"),
            TypeRef::Bool => typed("boolean"),
            TypeRef::Integer(format, bounds) => JsonSchemaProps {
                minimum: bounds.min.map(Into::into),
                maximum: bounds.max.map(Into::into),
                ..with_format("integer", if *format == NumFormat::Int32 { "int32" } else { "int64" })
            },
            TypeRef::Number(NumFormat::Float) => with_format("number", "float"),
            TypeRef::Number(_) => with_format("number", "double"),
            TypeRef::Json => JsonSchemaProps { x_preserve_unknown_fields: Some(true), ..Default::default() },
            TypeRef::JsonObject => JsonSchemaProps { x_preserve_unknown_fields: Some(true), ..typed("object") },
            TypeRef::Known(k) => known_schema(*k),
            TypeRef::Named(n) => self.named(n, origin),
            TypeRef::Builtin(d) => self.builtin(d, origin),
        };
        if v.is_some_and(Validate::replaces_schema) && self.no_schema > no_schema {
            self.diags.rewind(mark);
            self.no_schema = no_schema;
            return JsonSchemaProps { x_preserve_unknown_fields: Some(true), ..Default::default() };
        }
        schema
    }

    /// The schema of `ty` where no markers apply.
    fn type_schema(&mut self, ty: &TypeRef, origin: &Origin) -> JsonSchemaProps {
        self.type_schema_at(ty, None, origin)
    }

    /// A Kubernetes type from the built-in table, expanded for the run's version.
    fn builtin(&mut self, definition: &str, origin: &Origin) -> JsonSchemaProps {
        match builtin::expand(definition, self.options.builtin) {
            Ok(s) => (*s).clone(),
            Err(e) => {
                let path = builtin::path_of_definition(definition);
                let (message, help) = match &e {
                    ExpandError::Missing { definition: missing, available } => {
                        let version = self.options.builtin.version;
                        let which = if missing == definition {
                            format!("`{path}` does not exist in Kubernetes {version}")
                        } else {
                            format!(
                                "`{path}` uses `{}`, which does not exist in Kubernetes {version}",
                                builtin::path_of_definition(missing)
                            )
                        };
                        let available: Vec<String> = available.iter().map(ToString::to_string).collect();
                        (
                            format!("{which} (selected by {})", self.options.version_reason),
                            if available.is_empty() {
                                "kube-codegen's table has no version with this type".to_string()
                            } else {
                                format!(
                                    "it exists in Kubernetes {}; select one with k8s-openapi's feature (`v1_NN`) or `--kube-version`",
                                    available.join(", ")
                                )
                            },
                        )
                    }
                    ExpandError::Recursive(_) => {
                        self.no_schema += 1;
                        (
                            format!("`{path}` has no CRD schema: {e}"),
                            "CRD schemas cannot be recursive; hold it in a `serde_json::Value` field marked `#[validate(preserve_unknown_fields)]`"
                                .to_string(),
                        )
                    }
                    ExpandError::Invalid(_) => (e.to_string(), "this is a bug in kube-codegen".to_string()),
                };
                self.error(origin, None, message, help);
                typed("object")
            }
        }
    }

    fn named(&mut self, key: &TypeKey, origin: &Origin) -> JsonSchemaProps {
        let name = key.name.as_str();
        if self.stack.contains(key) {
            let chain: Vec<&str> = self.stack.iter().map(|k| k.name.as_str()).collect();
            self.no_schema_error(
                origin,
                format!("type `{name}` contains itself ({} → {name})", chain.join(" → ")),
                "a CRD schema cannot be recursive; break the cycle with `serde_json::Value` and `#[validate(preserve_unknown_fields)]`",
            );
            return JsonSchemaProps { x_preserve_unknown_fields: Some(true), ..typed("object") };
        }
        let model = self.model;
        let Some(def) = model.type_def(key) else {
            self.error(origin, None, format!("type `{name}` has no schema"), "derive `ApiType` on a concrete (non-generic) struct or enum of an API package, or mark the field `#[validate(preserve_unknown_fields)]`");
            return typed("object");
        };
        if let Some(span) = def.validate.immutable {
            self.error(
                &def.origin,
                Some(span),
                format!("`immutable` on the type `{name}`"),
                "`immutable` goes on a field: the fields of this type that must not change",
            );
        }
        self.stack.push(key.clone());
        let schema = match &def.body {
            Body::Struct(fields) if def.serde.transparent && fields.len() == 1 => {
                // Serialized as its one field: the field's markers and the
                // type's apply to that schema, as a tuple newtype's do.
                let mut s = self.type_schema(&fields[0].ty, &fields[0].origin);
                self.apply(&mut s, &fields[0].validate, &fields[0].origin, &def.name, Some(&fields[0].ty));
                self.apply(&mut s, &def.validate, &def.origin, &def.name, Some(&fields[0].ty));
                s
            }
            Body::Struct(fields) => self.struct_schema(def, fields),
            Body::Newtype(inner, field) => {
                // The field's markers, then the type's, as a transparent
                // struct's.
                let mut s = self.type_schema_at(inner, Some(field), &def.origin);
                self.apply(&mut s, field, &def.origin, &def.name, Some(inner));
                self.apply(&mut s, &def.validate, &def.origin, &def.name, Some(inner));
                s
            }
            Body::Enum(variants) => self.enum_schema(def, variants),
            Body::Other => {
                self.error(
                    &def.origin,
                    None,
                    format!("type `{name}` has no CRD schema"),
                    "use a struct with named fields, a newtype or an enum",
                );
                typed("object")
            }
        };
        self.stack.pop();
        let mut schema = schema;
        if let Some(doc) = &def.doc {
            schema.description = Some(doc.as_str().into());
        }
        schema
    }

    fn enum_schema(&mut self, def: &TypeDef, variants: &[Variant]) -> JsonSchemaProps {
        if variants.is_empty() {
            self.error(
                &def.origin,
                None,
                format!("enum `{}` has no variants to read", def.name),
                "no value of a field of this type can be read or written; give it a variant, or drop the field",
            );
            return typed("string");
        }
        let all_unit = variants.iter().all(|v| matches!(v.body, VariantBody::Unit));
        let c = &def.serde;
        let mut schema = if c.untagged {
            self.untagged(def, variants)
        } else if all_unit && c.tag.is_none() {
            JsonSchemaProps { enum_: variant_names(variants), ..typed("string") }
        } else if let (Some(_), Some(_)) = (&c.tag, &c.content) {
            self.no_schema_error(
                &def.origin,
                format!("adjacently tagged enum `{}` has no structural schema", def.name),
                "use an externally tagged enum (no `tag`/`content`) or an internally tagged one (`tag` only)",
            );
            typed("object")
        } else if let Some(tag) = &c.tag {
            self.internally_tagged(def, variants, tag)
        } else {
            self.externally_tagged(def, variants)
        };
        self.apply(&mut schema, &def.validate, &def.origin, &def.name, None);
        schema
    }

    fn variant_object(&mut self, v: &Variant) -> Option<JsonSchemaProps> {
        match &v.body {
            VariantBody::Unit => Some(JsonSchemaProps { properties: Some(Default::default()), ..typed("object") }),
            VariantBody::Newtype(t) => {
                let mut schema = self.type_schema_at(t, Some(&v.validate), &v.origin);
                self.apply(&mut schema, &v.validate, &v.origin, &v.rust_name, Some(t));
                Some(schema)
            }
            VariantBody::Struct(fields) => {
                let fake = TypeDef {
                    name: v.rust_name.clone(),
                    origin: v.origin.clone(),
                    doc: v.doc.clone(),
                    implements_clone: true,
                    derives_api_type: false,
                    derives_debug: false,
                    derives_partial_eq: false,
                    body: Body::Other,
                    validate: Validate::default(),
                    serde: ContainerSerde::default(),
                    rust_fields: Vec::new(),
                    default_fields: Default::default(),
                };
                Some(self.struct_schema(&fake, fields))
            }
            VariantBody::Tuple => {
                self.no_schema_error(
                    &v.origin,
                    format!("tuple variant `{}` has no structural schema", v.rust_name),
                    "use a struct variant `{ .. }` or a newtype variant",
                );
                None
            }
        }
    }

    fn externally_tagged(&mut self, def: &TypeDef, variants: &[Variant]) -> JsonSchemaProps {
        if let Some(unit) = variants.iter().find(|v| matches!(v.body, VariantBody::Unit)) {
            self.error(
                &unit.origin,
                None,
                format!("enum `{}` mixes unit variant `{}` with data variants", def.name, unit.rust_name),
                "serde writes unit variants as strings and data variants as objects, which no structural schema allows; give the variant a `{}` body or split the enum",
            );
        }
        let mut properties = BTreeMap::new();
        let mut one_of = Vec::new();
        for v in variants {
            if matches!(v.body, VariantBody::Unit) {
                continue;
            }
            if let Some(mut s) = self.variant_object(v) {
                if let Some(d) = &v.doc {
                    s.description = Some(d.as_str().into());
                }
                properties.insert(v.json_name.clone(), s);
                one_of.push(JsonSchemaProps { required: Some(vec![v.json_name.clone()]), ..Default::default() });
            }
        }
        JsonSchemaProps {
            one_of: if one_of.is_empty() { None } else { Some(one_of) },
            properties: Some(Arc::new(properties)),
            ..typed("object")
        }
    }

    fn internally_tagged(&mut self, def: &TypeDef, variants: &[Variant], tag: &str) -> JsonSchemaProps {
        let mut properties: BTreeMap<String, JsonSchemaProps> = BTreeMap::new();
        // The fields every variant requires are required whatever the tag.
        let mut everywhere: Option<Vec<String>> = None;
        for v in variants {
            let Some(obj) = self.variant_object(v) else { continue };
            self.lost_in_union(v, &obj, &def.name);
            let required = obj.required.clone().unwrap_or_default();
            everywhere = Some(match everywhere {
                None => required,
                Some(mut all) => {
                    all.retain(|r| required.contains(r));
                    all
                }
            });
            if obj.type_.as_deref() != Some("object") {
                self.error(
                    &v.origin,
                    None,
                    format!("variant `{}` of internally tagged enum `{}` is not an object", v.rust_name, def.name),
                    "internally tagged variants must be structs or unit variants",
                );
                continue;
            }
            for (k, s) in obj.properties.map(Arc::unwrap_or_clone).unwrap_or_default() {
                if k == tag {
                    self.error(
                        &v.origin,
                        None,
                        format!("variant `{}` has a field named like the tag `{tag}`", v.rust_name),
                        "rename the field or the tag",
                    );
                    continue;
                }
                let what = format!("`{}`", def.name);
                self.merge_property(&mut properties, k, s, v, &what);
            }
        }
        properties.insert(tag.to_string(), JsonSchemaProps { enum_: variant_names(variants), ..typed("string") });
        let mut required = vec![tag.to_string()];
        required.extend(everywhere.unwrap_or_default().into_iter().filter(|r| r != tag));
        required.sort();
        JsonSchemaProps { properties: Some(Arc::new(properties)), required: Some(required), ..typed("object") }
    }

    /// Warns of what a variant's own schema says beyond its properties and
    /// bounds (CEL rules, an `enum`, property counts), which the enum's
    /// one schema for all its variants cannot keep.
    fn lost_in_union(&mut self, v: &Variant, schema: &JsonSchemaProps, enum_name: &str) {
        let mut lost = Vec::new();
        if schema.x_validations.is_some() {
            lost.push("CEL rules");
        }
        if schema.enum_.is_some() {
            lost.push("allowed values");
        }
        if schema.min_properties.is_some() || schema.max_properties.is_some() {
            lost.push("property counts");
        }
        if lost.is_empty() {
            return;
        }
        self.diags.push(
            Diagnostic::warning(format!(
                "the {} of variant `{}` are not in the CRD: the variants of `{enum_name}` share one schema",
                lost.join(", "),
                v.rust_name
            ))
            .at(v.origin.location())
            .help("put the markers on the enum's fields or on the field holding the enum, or use an externally tagged enum"),
        );
    }

    /// Adds a variant's property to the union of the variants' properties:
    /// one schema per property, so a second variant's must be the same (or
    /// differ only in its descriptions).
    fn merge_property(
        &mut self,
        properties: &mut BTreeMap<String, JsonSchemaProps>,
        key: String,
        schema: JsonSchemaProps,
        variant: &Variant,
        what: &str,
    ) {
        match properties.get(&key) {
            Some(prev) if prev != &schema => match merged_descriptions(prev, &schema) {
                Some(merged) => {
                    properties.insert(key, merged);
                }
                None => {
                    let differs = differing_keys(prev, &schema);
                    self.error(
                        &variant.origin,
                        None,
                        format!("variants of {what} declare property `{key}` with different schemas ({differs})"),
                        "a structural schema has one schema per property; give the fields distinct names",
                    );
                }
            },
            _ => {
                properties.insert(key, schema);
            }
        }
    }

    fn untagged(&mut self, def: &TypeDef, variants: &[Variant]) -> JsonSchemaProps {
        let mut schemas = Vec::new();
        for v in variants {
            if let Some(s) = self.variant_object(v) {
                self.lost_in_union(v, &s, &def.name);
                schemas.push(s);
            }
        }
        let types: Vec<Option<&str>> = schemas.iter().map(|s| s.type_.as_deref()).collect();
        if types.len() == 2 && types.contains(&Some("integer")) && types.contains(&Some("string")) {
            // The string variant's bounds hold for strings and the integer
            // variant's for numbers (the API server checks each kind of
            // bound on values of its kind only).
            let of = |t: &str| schemas.iter().find(|s| s.type_.as_deref() == Some(t)).cloned().unwrap_or_default();
            let (int, string) = (of("integer"), of("string"));
            return JsonSchemaProps {
                minimum: int.minimum,
                maximum: int.maximum,
                exclusive_minimum: int.exclusive_minimum,
                exclusive_maximum: int.exclusive_maximum,
                multiple_of: int.multiple_of,
                pattern: string.pattern,
                min_length: string.min_length,
                max_length: string.max_length,
                ..int_or_string()
            };
        }
        if !schemas.is_empty() && types.iter().all(|t| *t == Some("object")) {
            // The fields every variant requires are required of any value.
            let mut required: Vec<String> = schemas[0].required.clone().unwrap_or_default();
            for s in &schemas[1..] {
                required.retain(|r| s.required.as_ref().is_some_and(|all| all.contains(r)));
            }
            let mut properties: BTreeMap<String, JsonSchemaProps> = BTreeMap::new();
            for (v, s) in variants.iter().zip(schemas) {
                for (k, p) in s.properties.map(Arc::unwrap_or_clone).unwrap_or_default() {
                    let what = format!("untagged enum `{}`", def.name);
                    self.merge_property(&mut properties, k, p, v, &what);
                }
            }
            return JsonSchemaProps {
                properties: Some(Arc::new(properties)),
                required: (!required.is_empty()).then_some(required),
                ..typed("object")
            };
        }
        self.no_schema_error(
            &def.origin,
            format!("untagged enum `{}` has no structural schema", def.name),
            "untagged enums must be all-object variants or exactly an integer and a string variant; otherwise mark the field `#[validate(preserve_unknown_fields)]`",
        );
        JsonSchemaProps { x_preserve_unknown_fields: Some(true), ..Default::default() }
    }

    /// Applies `#[validate]` markers, checking each fits the schema's type.
    /// Warns of the rules the API server would likely refuse the CRD for
    /// (see [`super::cel_check`]), each checked on the node of the finished
    /// schema that holds it (after flattened fields moved their rules to
    /// the parent, and with the field's own markers, such as
    /// `embedded_resource`), and reported where it was written. A rule
    /// written once and found on several nodes is reported once.
    /// Warnings, not errors: the check covers the names a rule reads, its
    /// parts and its cost, and of its types only a plain field met by a
    /// literal of another type.
    #[cfg(feature = "cel")]
    fn check_rules(&mut self, schema: &JsonSchemaProps) {
        use super::cel_check::Problem;
        /// The problems of each site's rule, on every node that holds it
        /// (a type used twice is checked in both places).
        // `correlatable`: the API server can match the node's value with
        // its old one (not below a list's items, but a list-map's).
        fn visit(node: &JsonSchemaProps, correlatable: bool, found: &mut BTreeMap<usize, Vec<Problem>>) {
            for rule in node.x_validations.iter().flatten() {
                let Some(site) = rule.site else { continue };
                let problems = found.entry(site).or_default();
                let parts =
                    super::cel_check::check_parts(rule.message_expression.as_deref(), rule.field_path.as_deref(), node);
                for problem in super::cel_check::check(&rule.rule, node, correlatable).into_iter().chain(parts) {
                    if !problems.contains(&problem) {
                        problems.push(problem);
                    }
                }
            }
            let children = node.properties.iter().flat_map(|p| p.values());
            let children = children.chain(node.additional_properties.as_deref());
            let children = children.chain(node.any_of.iter().chain(&node.one_of).chain(&node.all_of).flatten());
            for child in children {
                visit(child, correlatable, found);
            }
            if let Some(items) = node.items.as_deref() {
                visit(items, correlatable && node.x_list_type.as_deref() == Some("map"), found);
            }
        }
        let mut found = BTreeMap::new();
        visit(schema, true, &mut found);
        let sites = std::mem::take(&mut self.rule_sites);
        // A type's rules are applied once per use of the type: each place
        // it is written is reported once.
        let mut reported = std::collections::BTreeSet::new();
        for (site, problems) in found {
            let Some((rule, span, origin)) = sites.get(site) else { continue };
            for problem in problems {
                let at = origin.with_span(*span).location();
                if reported.insert((rule.clone(), at.file, at.line, at.column, problem.clone())) {
                    self.report_rule(problem, rule, *span, origin);
                }
            }
        }
        self.check_rule_costs(schema, &sites);
    }

    /// Warns of the rules whose estimated cost the API server would refuse
    /// the CRD for (see [`super::cel_cost`]): one over 10,000,000 times its
    /// node's cardinality, and all of the schema's over 100,000,000
    /// together. Each site is reported once, with its dearest use.
    #[cfg(feature = "cel")]
    fn check_rule_costs(&mut self, schema: &JsonSchemaProps, sites: &[(String, proc_macro2::Span, Origin)]) {
        use super::cel_cost::{RULE_COST_LIMIT, TOTAL_COST_LIMIT, factor};
        let costs = super::cel_cost::rule_costs(schema);
        let mut dearest: BTreeMap<usize, &super::cel_cost::RuleCost> = BTreeMap::new();
        let mut total = 0u64;
        let mut messages: BTreeMap<usize, u64> = BTreeMap::new();
        for cost in &costs {
            // A messageExpression counts as it is, not times the cardinality.
            if let Some(message) = cost.message_cost {
                total = total.saturating_add(message);
                if let Some(site) = cost.site {
                    let entry = messages.entry(site).or_default();
                    *entry = (*entry).max(message);
                }
            }
            let Some(value) = cost.total() else { continue };
            total = total.saturating_add(value);
            let Some(site) = cost.site else { continue };
            let entry = dearest.entry(site).or_insert(cost);
            if entry.total() < Some(value) {
                *entry = cost;
            }
        }
        const HELP: &str = "bound what the rule reads and iterates over: `max_length` on strings (the API server counts 4 bytes a character), `max_items` on lists and `max_properties` on maps, including the lists and maps around the rule's field; or write a cheaper rule (`startsWith` instead of `matches`)";
        // The total without the rules warned about on their own: a schema
        // over its budget only through them gets no second warning.
        let mut rest = total;
        for (site, cost) in &dearest {
            let Some((rule, span, origin)) = sites.get(*site) else { continue };
            let (Some(value), Some(one), Some(times)) = (cost.total(), cost.cost, cost.cardinality) else { continue };
            if value > RULE_COST_LIMIT {
                rest = rest.saturating_sub(value);
                let per = if times > 1 {
                    format!(", {one} per evaluation times {times} places in one object")
                } else {
                    String::new()
                };
                self.warn(
                    origin,
                    Some(*span),
                    format!(
                        "CEL rule `{rule}` is over the API server's cost budget by a factor of {}: its estimated cost is {value}{per}",
                        factor(value, RULE_COST_LIMIT)
                    ),
                    format!("the API server refuses the CRD (estimated rule cost exceeds budget); {HELP}"),
                );
            }
        }
        for (site, message) in &messages {
            let Some((rule, span, origin)) = sites.get(*site) else { continue };
            if *message > RULE_COST_LIMIT {
                rest = rest.saturating_sub(*message);
                self.warn(
                    origin,
                    Some(*span),
                    format!(
                        "the `message_expression` of CEL rule `{rule}` is over the API server's cost budget by a factor of {}: its estimated cost is {message}",
                        factor(*message, RULE_COST_LIMIT)
                    ),
                    format!("the API server refuses the CRD (estimated messageExpression cost exceeds budget); {HELP} (a `string()` of a number has no bound: the API server cannot size it)"),
                );
            }
        }
        if rest > TOTAL_COST_LIMIT
            && let Some((site, _)) =
                dearest.iter().filter(|(_, c)| c.total() <= Some(RULE_COST_LIMIT)).max_by_key(|(_, c)| c.total())
            && let Some((rule, span, origin)) = sites.get(*site)
        {
            self.warn(
                origin,
                Some(*span),
                format!(
                    "the CEL rules of this schema are over the API server's cost budget for all of them by a factor of {}: their estimated cost is {total}, the dearest being `{rule}`",
                    factor(total, TOTAL_COST_LIMIT)
                ),
                format!("the API server refuses the CRD (estimated rule cost total for entire OpenAPIv3 schema exceeds budget); {HELP}"),
            );
        }
    }

    /// Reports one problem of `rule`, where it was written.
    #[cfg(feature = "cel")]
    fn report_rule(
        &mut self,
        problem: super::cel_check::Problem,
        rule: &str,
        span: proc_macro2::Span,
        origin: &Origin,
    ) {
        {
            match problem {
                super::cel_check::Problem::Syntax(message) => self.warn(
                    origin,
                    Some(span),
                    format!("CEL rule `{}` does not parse: {message}", rule),
                    "the API server compiles every rule when the CRD is created, and refuses the CRD for one that does not",
                ),
                super::cel_check::Problem::Undeclared { path, why } => self.warn(
                    origin,
                    Some(span),
                    format!("CEL rule `{rule}` reads `{path}`, which the API server does not declare to CEL: {why}"),
                    "the API server refuses the CRD (undefined field); give the field a type, or leave it out of the rule",
                ),
                super::cel_check::Problem::Uncorrelatable => self.warn(
                    origin,
                    Some(span),
                    format!("CEL rule `{rule}` reads `oldSelf` below the items of a list that is not a list-map"),
                    "the API server refuses the CRD (oldSelf cannot be used on the uncorrelatable portion of the schema): it matches old and new items only in a list-map; make the list `list_type = \"map\"` with `list_map_keys(..)`, or write the rule (or `immutable`) on the list itself",
                ),
                super::cel_check::Problem::FieldPath { why } => self.warn(
                    origin,
                    Some(span),
                    format!("the `field_path` of CEL rule `{rule}` is not a path the API server takes: {why}"),
                    "the API server refuses the CRD (must be a valid path); write `.name` steps from the rule's field to a property it declares",
                ),
                super::cel_check::Problem::InMessage(problem) => {
                    let text = match *problem {
                        super::cel_check::Problem::Syntax(message) => format!("does not parse: {message}"),
                        super::cel_check::Problem::UnknownField { path, .. } => {
                            format!("names `{path}`, which the schema does not declare")
                        }
                        super::cel_check::Problem::Undeclared { path, why } => {
                            format!("reads `{path}`, which the API server does not declare to CEL: {why}")
                        }
                        super::cel_check::Problem::Mismatch { path, path_type, literal, literal_type, op } => {
                            format!("applies `{op}` to `{path}` ({path_type}) and {literal} ({literal_type})")
                        }
                        // Only the rule is checked for these.
                        super::cel_check::Problem::Uncorrelatable
                        | super::cel_check::Problem::FieldPath { .. }
                        | super::cel_check::Problem::InMessage(_) => return,
                    };
                    self.warn(
                        origin,
                        Some(span),
                        format!("the `message_expression` of CEL rule `{rule}` {text}"),
                        "the API server compiles it with the rule and refuses the CRD when it does not compile",
                    )
                }
                super::cel_check::Problem::Mismatch { path, path_type, literal, literal_type, op } => self.warn(
                    origin,
                    Some(span),
                    format!("CEL rule `{rule}` applies `{op}` to `{path}`, of type {path_type}, and {literal}, of type {literal_type}"),
                    format!(
                        "no overload of `{op}` takes a {path_type} and a {literal_type}: the API server refuses the CRD (found no matching overload); write the literal as a {path_type}"
                    ),
                ),
                super::cel_check::Problem::UnknownField { path, field, known } => {
                    let names: Vec<&str> = known.iter().map(String::as_str).collect();
                    let hint = crate::ident::did_you_mean(&field, &names)
                        .map(|m| format!("did you mean `{m}`? "))
                        .unwrap_or_default();
                    self.warn(
                        origin,
                        Some(span),
                        format!("CEL rule `{}` names `{path}`, which the schema does not declare", rule),
                        format!(
                            "{hint}rules name properties by their JSON names ({}); the API server refuses the CRD for an undefined field",
                            known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                        ),
                    )
                }
            }
        }
    }

    /// Writes the markers `v` of the position `name` (of type `ty`, where
    /// known: `rust_ty`) into its schema `s`. Where `ty` is an API type of the tree
    /// with limits of its own, both hold (see `keep_type_limits`).
    fn apply(&mut self, s: &mut JsonSchemaProps, v: &Validate, origin: &Origin, name: &str, rust_ty: Option<&TypeRef>) {
        if v.is_empty() {
            return;
        }
        let model = self.model;
        let type_def = match rust_ty.map(TypeRef::unwrap_option) {
            Some(TypeRef::Named(key)) => model.type_def(key),
            _ => None,
        };
        let before = type_def.map(|_| s.clone());
        if let Some(given) = &v.schema_json {
            match serde_json::from_value::<JsonSchemaProps>(given.value.clone()) {
                Ok(mut schema) => {
                    if schema.description.is_none() {
                        schema.description = s.description.take();
                    }
                    *s = schema;
                }
                Err(e) => self.error(
                    origin,
                    Some(given.span),
                    format!("`schema_json` of `{name}` is not a CRD schema: {e}"),
                    "write an OpenAPI v3 schema object with the keys a CRD accepts (type, properties, items, ...)",
                ),
            }
        }
        if let Some(span) = v.int_or_string {
            let _ = span;
            let description = s.description.take();
            *s = JsonSchemaProps { description, ..int_or_string() };
        }
        let ty = schema_kind(s);
        let numeric = matches!(ty, "integer" | "number");
        // A marker meant for a list's items or a map's values goes in
        // `items(..)` / `values(..)`.
        let container = match ty {
            "array" => Some("items"),
            _ if s.additional_properties.is_some() => Some("values"),
            _ => None,
        };
        let mismatch = |b: &mut Self, span: proc_macro2::Span, marker: &str, wants: &str| {
            // Only markers of scalars are meant for the items.
            let scalar = !["list", "map", "object"].iter().any(|w| wants.contains(w));
            let help = match container.filter(|_| scalar) {
                Some(inner) => format!("for each of its {inner}, write `{inner}({marker} = ..)`; or remove `{marker}`"),
                None => format!("remove `{marker}` or change the field's type"),
            };
            b.error(
                origin,
                Some(span),
                format!("`{marker}` applies to {wants}, but `{name}` is {}", describe(ty)),
                help,
            );
        };
        // Whether the Rust type's own minimum / maximum stayed.
        let mut range_kept = (false, false);
        for (marker, value) in [("minimum", &v.minimum), ("maximum", &v.maximum), ("multiple_of", &v.multiple_of)] {
            if let Some(n) = value {
                if !numeric {
                    mismatch(self, n.span, marker, "numbers");
                    continue;
                }
                // The Rust type's own range (u8, u32, ..) stays when it is
                // tighter, and then without the marker's exclusiveness:
                // `minimum = 0, exclusive_minimum` of a `NonZeroU32` is
                // `minimum: 1`, not `> 1`.
                let user = n.value.as_f64();
                match marker {
                    "minimum" if s.minimum.as_ref().and_then(|m| m.as_f64()) <= user || s.minimum.is_none() => {
                        s.minimum = Some(n.value.clone())
                    }
                    "maximum" if s.maximum.as_ref().and_then(|m| m.as_f64()).is_none_or(|m| Some(m) >= user) => {
                        s.maximum = Some(n.value.clone())
                    }
                    "minimum" => range_kept.0 = true,
                    "maximum" => range_kept.1 = true,
                    _ => s.multiple_of = Some(n.value.clone()),
                }
            }
        }
        for (value, slot, kept) in [
            (&v.exclusive_minimum, &mut s.exclusive_minimum, range_kept.0),
            (&v.exclusive_maximum, &mut s.exclusive_maximum, range_kept.1),
        ] {
            // `false` is the schema's default and written by neither tool.
            if let Some(b) = value.as_ref().filter(|_| !kept) {
                *slot = b.value.then_some(true);
            }
        }
        if let Some(b) = &v.exclusive_minimum
            && b.value
            && s.minimum.is_none()
        {
            self.error(origin, Some(b.span), "`exclusive_minimum` without `minimum`".into(), "add `minimum = ..`");
        }
        if let Some(b) = &v.exclusive_maximum
            && b.value
            && s.maximum.is_none()
        {
            self.error(origin, Some(b.span), "`exclusive_maximum` without `maximum`".into(), "add `maximum = ..`");
        }
        if let (Some(min), Some(max)) = (&v.minimum, &v.maximum)
            && min.value.as_f64() > max.value.as_f64()
        {
            self.error(
                origin,
                Some(min.span),
                format!("`minimum = {}` is greater than `maximum = {}`", min.value, max.value),
                "swap the bounds",
            );
        }
        let stringish = ty == "string" || ty == "int-or-string";
        for (marker, value) in [("min_length", &v.min_length), ("max_length", &v.max_length)] {
            if let Some(n) = value {
                if !stringish {
                    mismatch(self, n.span, marker, "strings");
                } else if marker == "min_length" {
                    s.min_length = Some(n.value);
                } else {
                    s.max_length = Some(n.value);
                }
            }
        }
        if let (Some(min), Some(max)) = (&v.min_length, &v.max_length)
            && min.value > max.value
        {
            self.error(
                origin,
                Some(min.span),
                format!("`min_length = {}` is greater than `max_length = {}`", min.value, max.value),
                "swap the bounds",
            );
        }
        if let Some(p) = &v.pattern {
            if let Some(detail) = go_regex_problem(&p.value) {
                self.error(
                    origin,
                    Some(p.span),
                    format!("`pattern` is not a regular expression: {detail}"),
                    "the API server compiles it as Go's RE2 syntax",
                );
            } else if stringish {
                s.pattern = Some(p.value.as_str().into());
            } else {
                mismatch(self, p.span, "pattern", "strings");
            }
        }
        if let Some(f) = &v.format {
            if matches!(ty, "string" | "integer" | "number") {
                s.format = Some(f.value.as_str().into());
            } else {
                mismatch(self, f.span, "format", "strings and numbers");
            }
        }
        if let Some(values) = &v.enum_values {
            if let Some(bad) = values.value.iter().find(|val| !value_fits(val, ty)) {
                self.error(
                    origin,
                    Some(values.span),
                    format!("enum value {bad} does not fit `{name}`, which is {}", describe(ty)),
                    match container {
                        Some(inner) => format!("for each of its {inner}, write `{inner}(enum_values(..))`"),
                        None => "use values of the field's type".to_string(),
                    },
                );
            } else {
                s.enum_ = Some(values.value.clone());
            }
        }
        for (marker, value) in [("min_items", &v.min_items), ("max_items", &v.max_items)] {
            if let Some(n) = value {
                if ty != "array" {
                    mismatch(self, n.span, marker, "lists");
                } else if marker == "min_items" {
                    s.min_items = Some(n.value);
                } else {
                    s.max_items = Some(n.value);
                }
            }
        }
        if let Some(span) = v.unique_items {
            self.error(
                origin,
                Some(span),
                "`unique_items` is rejected by the API server (uniqueItems: true makes validation quadratic)".into(),
                "use `list_type = \"set\"` for a list of unique scalars",
            );
        }
        for (marker, value) in [("min_properties", &v.min_properties), ("max_properties", &v.max_properties)] {
            if let Some(n) = value {
                if ty != "object" {
                    mismatch(self, n.span, marker, "objects and maps");
                } else if marker == "min_properties" {
                    s.min_properties = Some(n.value);
                } else {
                    s.max_properties = Some(n.value);
                }
            }
        }
        if let Some(d) = &v.default {
            if value_fits(&d.value, ty) {
                s.default = Some(d.value.clone());
            } else {
                self.error(
                    origin,
                    Some(d.span),
                    format!("default {} does not fit `{name}`, which is {}", d.value, describe(ty)),
                    "use a value of the field's type",
                );
            }
        }
        if let Some(x) = &v.example {
            s.example = Some(x.value.clone());
        }
        // Empty texts are left out, as controller-gen's `omitempty` drops them.
        if let Some(t) = v.title.as_ref().filter(|t| !t.value.is_empty()) {
            s.title = Some(t.value.as_str().into());
        }
        if let Some(docs) = &v.external_docs {
            s.external_docs = Some(ExternalDocumentation {
                description: docs.value.description.clone().filter(|d| !d.is_empty()),
                url: Some(docs.value.url.clone()),
            });
        }
        if v.nullable.is_some() {
            s.nullable = Some(true);
        }
        if v.preserve_unknown_fields.is_some() {
            s.x_preserve_unknown_fields = Some(true);
        }
        if let Some(span) = v.embedded_resource {
            if ty != "object" {
                mismatch(self, span, "embedded_resource", "objects");
            } else {
                s.x_embedded_resource = Some(true);
            }
        }
        for r in &v.rules {
            #[cfg(feature = "cel")]
            let site = {
                self.rule_sites.push((r.rule.value.clone(), r.rule.span, origin.clone()));
                Some(self.rule_sites.len() - 1)
            };
            #[cfg(not(feature = "cel"))]
            let site = None;
            s.x_validations.get_or_insert_with(Vec::new).push(ValidationRule {
                site,
                field_path: r.field_path.clone(),
                message: r.message.clone(),
                message_expression: r.message_expression.clone(),
                optional_old_self: r.optional_old_self,
                reason: r.reason.as_ref().map(|r| r.value.clone()),
                rule: r.rule.value.clone(),
            });
        }
        if let Some(mt) = &v.map_type {
            if ty != "object" {
                mismatch(self, mt.span, "map_type", "objects and maps");
            } else {
                s.x_map_type = Some(mt.value.clone());
            }
        }
        if let Some(values) = &v.values {
            match s.additional_properties.as_mut().map(Arc::make_mut) {
                Some(value_schema) => {
                    let value_name = format!("{name}.*");
                    let value_ty = match rust_ty.map(TypeRef::unwrap_option) {
                        Some(TypeRef::Map(inner)) => Some(&**inner),
                        _ => None,
                    };
                    self.apply(value_schema, values, origin, &value_name, value_ty);
                }
                None => {
                    if let Some(span) = values.first_span {
                        mismatch(self, span, "values", "maps");
                    }
                }
            }
        }
        if let Some(items) = &v.items {
            match s.items.as_mut().map(Arc::make_mut) {
                Some(item_schema) => {
                    let item_name = format!("{name}[*]");
                    let item_ty = match rust_ty.map(TypeRef::unwrap_option) {
                        Some(TypeRef::List(inner) | TypeRef::Set(inner)) => Some(&**inner),
                        _ => None,
                    };
                    self.apply(item_schema, items, origin, &item_name, item_ty);
                }
                None => {
                    if let Some(span) = items.first_span {
                        mismatch(self, span, "items", "lists");
                    }
                }
            }
        }
        // After `items(..)`: a set's rule reads the items' own list and map types.
        if let Some(lt) = &v.list_type {
            if ty != "array" {
                mismatch(self, lt.span, "list_type", "lists");
            } else {
                self.list_type(s, lt, v.list_map_keys.as_ref(), origin, name);
            }
        } else if let Some(keys) = &v.list_map_keys {
            self.error(
                origin,
                Some(keys.span),
                "`list_map_keys` needs `list_type = \"map\"`".into(),
                "add `list_type = \"map\"`",
            );
        }
        // The type's own limits are back before the default is checked
        // against them.
        if let (Some(def), Some(before)) = (type_def, &before) {
            self.keep_type_limits(s, before, def, v, origin, name);
        }
        if let (Some(d), Some(value)) = (&v.default, &s.default)
            && let Err((message, help)) = check_default(value, s, name)
        {
            self.error(origin, Some(d.span), message, help);
            s.default = None;
        }
    }

    fn list_type(
        &mut self,
        s: &mut JsonSchemaProps,
        lt: &Spanned<String>,
        keys: Option<&Spanned<Vec<Spanned<String>>>>,
        origin: &Origin,
        name: &str,
    ) {
        let item = s.items.as_deref().cloned().unwrap_or_default();
        // The API server's rule: a set's items are atomic, i.e. not a
        // granular object nor a list of another list type.
        let granular = match item.type_.as_deref() {
            Some("object") => item.x_map_type.as_deref() != Some("atomic"),
            Some("array") => item.x_list_type.as_deref().is_some_and(|t| t != "atomic"),
            _ => false,
        };
        match lt.value.as_str() {
            "set" if granular => {
                self.error(
                    origin,
                    Some(lt.span),
                    format!("`list_type = \"set\"` on `{name}`, whose items are not atomic"),
                    "sets hold scalars, atomic lists or structs with `map_type = \"atomic\"`; use `list_type = \"map\"` with `list_map_keys(..)` for objects",
                );
                return;
            }
            "map" => {
                let Some(keys) = keys else {
                    self.error(
                        origin,
                        Some(lt.span),
                        "`list_type = \"map\"` needs `list_map_keys(..)`".into(),
                        "name the item fields that identify an entry, e.g. `list_map_keys(\"name\")`",
                    );
                    return;
                };
                if item.type_.as_deref() != Some("object") {
                    self.error(
                        origin,
                        Some(lt.span),
                        format!("`list_type = \"map\"` on `{name}`, whose items are not objects"),
                        "map lists hold structs",
                    );
                    return;
                }
                let props = item.properties.clone().unwrap_or_default();
                let required = item.required.clone().unwrap_or_default();
                for k in &keys.value {
                    match props.get(&k.value) {
                        None => self.error(
                            origin,
                            Some(k.span),
                            format!("list map key `{}` is not a field of the items of `{name}`", k.value),
                            format!("items have: {}", props.keys().cloned().collect::<Vec<_>>().join(", ")),
                        ),
                        Some(p) if !matches!(p.type_.as_deref(), Some("string" | "integer" | "number" | "boolean")) => {
                            self.error(
                                origin,
                                Some(k.span),
                                format!("list map key `{}` is not a scalar", k.value),
                                "keys must be strings, numbers or booleans",
                            )
                        }
                        Some(p) if !required.contains(&k.value) && p.default.is_none() => self.error(
                            origin,
                            Some(k.span),
                            format!("list map key `{}` is optional", k.value),
                            "keys must be required or have a default",
                        ),
                        Some(_) => {}
                    }
                }
                s.x_list_map_keys = Some(keys.value.iter().map(|k| k.value.clone()).collect());
            }
            _ => {}
        }
        s.x_list_type = Some(lt.value.clone());
    }
}

/// Whether a type holds a float (directly or in a list or map).
fn has_float(t: &TypeRef) -> bool {
    match t {
        TypeRef::Number(_) => true,
        TypeRef::Option(i) | TypeRef::List(i) | TypeRef::Set(i) | TypeRef::Map(i) => has_float(i),
        _ => false,
    }
}

/// Checks a default value against the schema it sits on (the API server
/// rejects a CRD whose defaults do not validate): enum, bounds, lengths,
/// item counts, and for objects unknown and missing properties. `pattern`
/// is not checked (no regex engine here).
fn check_default(value: &Value, s: &JsonSchemaProps, path: &str) -> Result<(), (String, String)> {
    let bad = |what: String, help: String| Err((format!("default of `{path}` {what}"), help));
    if value.is_null() {
        return if s.nullable == Some(true) {
            Ok(())
        } else {
            bad("is null".into(), "remove the default, or add `nullable`".into())
        };
    }
    // The API server checks a default's type at every level (a whole float
    // is an integer to it).
    let kind = schema_kind(s);
    let fits = match (value, kind) {
        (Value::Number(n), "integer" | "int-or-string") => n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => value_fits(value, kind),
    };
    if !fits {
        return bad(
            format!("{value} is not {}", describe(kind)),
            "write a value of the field's type, as it appears in JSON".into(),
        );
    }
    if let Some(allowed) = &s.enum_
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        let strings: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        let help = match value.as_str().and_then(|v| crate::ident::did_you_mean(v, &strings)) {
            Some(s) => format!("did you mean \"{s}\"? (the default is written as it appears in JSON)"),
            None => format!("use one of {}", list.join(", ")),
        };
        return bad(format!("{value} is not one of {}", list.join(", ")), help);
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = s.minimum.as_ref().and_then(serde_json::Number::as_f64)
            && (n < min || (n == min && s.exclusive_minimum == Some(true)))
        {
            return bad(format!("{value} is below the minimum {min}"), "use a value within the bounds".into());
        }
        if let Some(max) = s.maximum.as_ref().and_then(serde_json::Number::as_f64)
            && (n > max || (n == max && s.exclusive_maximum == Some(true)))
        {
            return bad(format!("{value} is above the maximum {max}"), "use a value within the bounds".into());
        }
    }
    if let Some(text) = value.as_str() {
        let len = text.chars().count() as u64;
        if s.min_length.is_some_and(|m| len < m) || s.max_length.is_some_and(|m| len > m) {
            return bad(
                format!(
                    "{value} has a length outside {}..={}",
                    s.min_length.unwrap_or(0),
                    s.max_length.map_or("".into(), |m| m.to_string())
                ),
                "use a value within the length bounds".into(),
            );
        }
    }
    if let Some(items) = value.as_array() {
        let len = items.len() as u64;
        if s.min_items.is_some_and(|m| len < m) || s.max_items.is_some_and(|m| len > m) {
            return bad(
                format!("has {len} items, outside the item bounds"),
                "use a list within `min_items`/`max_items`".into(),
            );
        }
        if let Some(item_schema) = &s.items {
            for (i, item) in items.iter().enumerate() {
                check_default(item, item_schema, &format!("{path}[{i}]"))?;
            }
        }
    }
    if let Some(obj) = value.as_object() {
        let props = s.properties.as_ref();
        for (k, v) in obj {
            match (props.and_then(|p| p.get(k)), s.additional_properties.as_deref()) {
                (Some(p), _) | (None, Some(p)) => check_default(v, p, &format!("{path}.{k}"))?,
                (None, None) if s.x_preserve_unknown_fields == Some(true) || props.is_none() => {}
                (None, None) => {
                    let known: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                    let help = match crate::ident::did_you_mean(k, &known) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("known properties: {}", known.join(", ")),
                    };
                    return bad(format!("has unknown property `{k}`"), help);
                }
            }
        }
        for r in s.required.iter().flatten() {
            if !obj.contains_key(r) {
                return bad(format!("lacks required property `{r}`"), format!("add `\"{r}\"` to the default"));
            }
        }
    }
    Ok(())
}

/// The schema's type for marker checks: its `type`, or `int-or-string`, or `any`.
fn schema_kind(s: &JsonSchemaProps) -> &'static str {
    if s.x_int_or_string == Some(true) {
        return "int-or-string";
    }
    match s.type_.as_deref() {
        Some("string") => "string",
        Some("integer") => "integer",
        Some("number") => "number",
        Some("boolean") => "boolean",
        Some("array") => "array",
        Some("object") => "object",
        _ => "any",
    }
}

fn describe(ty: &str) -> String {
    match ty {
        "integer" => "an integer".into(),
        "array" => "a list".into(),
        "object" => "an object".into(),
        "any" => "free-form JSON".into(),
        "int-or-string" => "an int-or-string".into(),
        other => format!("a {other}"),
    }
}

fn value_fits(v: &Value, ty: &str) -> bool {
    match (v, ty) {
        (_, "any") => true,
        (Value::String(_), "string" | "int-or-string") => true,
        (Value::Number(n), "integer" | "int-or-string") => n.is_i64() || n.is_u64(),
        (Value::Number(_), "number") => true,
        (Value::Bool(_), "boolean") => true,
        (Value::Array(_), "array") => true,
        (Value::Object(_), "object") => true,
        _ => false,
    }
}

/// Where a JSONPath walk through a schema stopped.
#[derive(Debug)]
pub enum Walk<'s> {
    /// Every step was followed; the node reached.
    Reached(&'s JsonSchemaProps),
    /// The walk stopped at a filter, recursive descent, union, literal or
    /// free-form node: the rest is not checked.
    Unchecked,
    /// Step `step` does not exist: `prefix` is the path that does, and
    /// `candidates` the names that would (properties at that point).
    Missing {
        /// The path up to the failing step (`.status`).
        prefix: String,
        /// The failing step (`conditon`, or `[0]` on a non-list).
        step: String,
        /// The property names available there.
        candidates: Vec<String>,
    },
}

/// Walks parsed JSONPath steps through a schema: fields into properties
/// (or map values), indexes and `[*]` into list items. Anything under a
/// free-form node or the root's `metadata` is accepted.
pub fn walk<'s>(schema: &'s JsonSchemaProps, steps: &[crate::jsonpath::Node]) -> Walk<'s> {
    use crate::jsonpath::Node;
    let mut cur = schema;
    let mut prefix = String::new();
    for step in steps {
        let free_form = cur.x_preserve_unknown_fields == Some(true)
            || (cur.type_.as_deref() == Some("object")
                && cur.properties.is_none()
                && cur.additional_properties.is_none());
        match step {
            Node::Field(name) if name.is_empty() => continue,
            Node::Field(name) => {
                let next = cur.properties.as_ref().and_then(|p| p.get(name)).or(cur.additional_properties.as_deref());
                match next {
                    Some(n) => cur = n,
                    None if free_form => return Walk::Unchecked,
                    None => {
                        return Walk::Missing {
                            prefix,
                            step: name.clone(),
                            candidates: cur.properties.iter().flat_map(|p| p.keys().cloned()).collect(),
                        };
                    }
                }
                prefix.push('.');
                prefix.push_str(name);
            }
            Node::Array(_) | Node::Wildcard if cur.items.is_some() => {
                cur = cur.items.as_deref().unwrap_or(cur);
                prefix.push_str("[*]");
            }
            Node::Wildcard => return Walk::Unchecked,
            Node::Array(_) if free_form => return Walk::Unchecked,
            Node::Array(a) => {
                let step = match (a.single, a.start) {
                    (true, Some(n)) => format!("[{n}]"),
                    _ => "[..]".to_string(),
                };
                return Walk::Missing { prefix, step, candidates: Vec::new() };
            }
            _ => return Walk::Unchecked,
        }
    }
    Walk::Reached(cur)
}

/// Checks the structural-schema rules on a finished schema (defence in depth
/// behind the builder); problems are reported at `origin` with the JSON path.
pub fn check_structural(schema: &JsonSchemaProps, path: &str, origin: &Origin, diags: &mut Diagnostics) {
    let mut segments = Vec::new();
    structural(schema, path, &mut segments, origin, diags);
}

fn structural<'s>(
    schema: &'s JsonSchemaProps,
    root: &str,
    path: &mut Vec<&'s str>,
    origin: &Origin,
    diags: &mut Diagnostics,
) {
    let here = |path: &[&str]| format!("{root}{}", path.concat());
    let special = schema.x_int_or_string == Some(true) || schema.x_preserve_unknown_fields == Some(true);
    if schema.type_.is_none() && !special {
        diags.push(
            Diagnostic::error(format!("schema node `{}` has no type", here(path)))
                .at(origin.location())
                .help("every field needs a type, unless it is int-or-string or preserves unknown fields"),
        );
    }
    if schema.additional_properties.is_some() && schema.properties.as_ref().is_some_and(|p| !p.is_empty()) {
        diags.push(
            Diagnostic::error(format!("schema node `{}` has both properties and additionalProperties", here(path)))
                .at(origin.location())
                .help("the API server allows one or the other"),
        );
    }
    for (k, p) in schema.properties.iter().flat_map(|p| p.iter()) {
        path.push(".");
        path.push(k);
        structural(p, root, path, origin, diags);
        path.truncate(path.len() - 2);
    }
    if let Some(i) = &schema.items {
        path.push("[*]");
        structural(i, root, path, origin, diags);
        path.pop();
    }
    if let Some(ap) = &schema.additional_properties {
        path.push(".*");
        structural(ap, root, path, origin, diags);
        path.pop();
    }
}

/// Why `pattern` is no regular expression to Go's RE2, or `None`. Counted:
/// mistakes both RE2 and Rust's parser refuse (an unclosed group or class,
/// a reversed range, a repetition of nothing, a trailing backslash), and
/// what Rust's parser reads but RE2 refuses: look-around, back-references,
/// possessive or nested repetitions (`a++`, `a**`) and the flags `x`, `u`
/// and `R`. Rust's parser refuses some text RE2 reads, such as a `{` that
/// starts no repetition (a literal in RE2) or `\Q..\E`: those pass.
pub fn go_regex_problem(pattern: &str) -> Option<String> {
    use regex_syntax::ast::ErrorKind as K;
    let pattern = match rust_spelling(pattern) {
        Ok(pattern) => pattern,
        Err(refused) => return Some(refused),
    };
    match regex_syntax::ast::parse::Parser::new().parse(&pattern) {
        Ok(ast) => re2_refuses(&ast),
        Err(e) => {
            let refused = matches!(
                e.kind(),
                K::EscapeUnrecognized
                    | K::UnsupportedBackreference
                    | K::GroupUnclosed
                    | K::GroupUnopened
                    | K::ClassUnclosed
                    | K::ClassRangeInvalid
                    | K::RepetitionMissing
                    | K::EscapeUnexpectedEof
                    | K::UnsupportedLookAround
                    | K::FlagUnrecognized
                    | K::FlagDanglingNegation
                    | K::FlagRepeatedNegation { .. }
                    | K::FlagUnexpectedEof
                    | K::RepetitionCountInvalid
            );
            refused.then(|| e.kind().to_string())
        }
    }
}

/// `pattern` with what RE2 reads and Rust's parser does not written as
/// Rust reads it: quoted text (`\Q..\E`, to the end without `\E`) escaped,
/// octal escapes (`\0`, `\012`, `\12`; a lone `\1` is a back-reference
/// to both) as `\x{..}`, and a `[`, `&&` or `~~` inside a class (literals
/// to RE2) escaped. `Err` for what Rust reads but RE2 refuses before
/// parsing: `\u` and `\U`.
pub(crate) fn rust_spelling(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    // Inside a character class, and whether a `]` there would be its
    // first character (a literal, in both dialects).
    let mut class: Option<bool> = None;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        match (c, class) {
            ('\\', _) => {
                if let Some(quoted) = after.strip_prefix('Q') {
                    let (text, tail) = quoted.split_once("\\E").unwrap_or((quoted, ""));
                    out.push_str(&regex_syntax::escape(text));
                    rest = tail;
                    continue;
                }
                if after.starts_with(['u', 'U']) {
                    return Err(format!("`\\{}` (RE2 writes a code point as `\\x{{..}}`)", &after[..1]));
                }
                let octal = after.bytes().take_while(|b| (b'0'..=b'7').contains(b)).take(3).count();
                if octal > 0 && (after.starts_with('0') || octal >= 2) {
                    let value = u32::from_str_radix(&after[..octal], 8).unwrap_or_default();
                    out.push_str(&format!("\\x{{{value:x}}}"));
                    rest = &after[octal..];
                    continue;
                }
                // Any other escape as written, with its character (so that
                // `\\` is one escape).
                let len = after.chars().next().map_or(0, char::len_utf8);
                out.push('\\');
                out.push_str(&after[..len]);
                if class.is_some() {
                    class = Some(false);
                }
                rest = &after[len..];
                continue;
            }
            ('[', None) => {
                out.push('[');
                let negated = after.starts_with('^');
                if negated {
                    out.push('^');
                }
                class = Some(true);
                rest = if negated { &after[1..] } else { after };
                continue;
            }
            // A `[:alpha:]` class stays; another `[` in a class is a
            // literal to RE2 (a nested class to Rust), as are `&&` and `~~`
            // (set operations to Rust).
            ('[', Some(_)) if after.starts_with(':') => {
                let end = after.find(":]").map_or(after.len(), |i| i + 2);
                out.push('[');
                out.push_str(&after[..end]);
                rest = &after[end..];
            }
            ('[', Some(_)) => {
                out.push_str("\\[");
                rest = after;
            }
            ('&' | '~', Some(_)) if after.starts_with(c) => {
                out.push('\\');
                out.push(c);
                rest = after;
            }
            (']', Some(false)) => {
                out.push(']');
                class = None;
                rest = after;
                continue;
            }
            _ => {
                out.push(c);
                rest = after;
            }
        }
        if class.is_some() {
            class = Some(false);
        }
    }
    Ok(out)
}

/// What RE2 refuses in a pattern Rust's parser read.
fn re2_refuses(ast: &regex_syntax::ast::Ast) -> Option<String> {
    use regex_syntax::ast::{Ast, Flag, Flags, FlagsItemKind, GroupKind};
    let flags = |f: &Flags| {
        f.items.iter().find_map(|item| match item.kind {
            FlagsItemKind::Flag(Flag::IgnoreWhitespace) => {
                Some("the flag `x` (RE2 has `i`, `m`, `s` and `U`)".to_string())
            }
            FlagsItemKind::Flag(Flag::Unicode) => Some("the flag `u` (RE2 has `i`, `m`, `s` and `U`)".to_string()),
            FlagsItemKind::Flag(Flag::CRLF) => Some("the flag `R` (RE2 has `i`, `m`, `s` and `U`)".to_string()),
            _ => None,
        })
    };
    match ast {
        Ast::Repetition(r) if matches!(*r.ast, Ast::Repetition(_)) => Some(
            "a repetition of a repetition (`a++`, `a*+`, `a{2}{3}`): RE2 has no possessive or nested repetitions"
                .into(),
        ),
        Ast::Repetition(r) if repeat_count(&r.op.kind) > 1000 => Some("a repeat count over 1000, RE2's limit".into()),
        Ast::Repetition(r) => re2_refuses(&r.ast),
        Ast::Flags(f) => flags(&f.flags),
        Ast::Group(g) => match &g.kind {
            GroupKind::NonCapturing(f) => flags(f),
            _ => None,
        }
        .or_else(|| re2_refuses(&g.ast)),
        Ast::Concat(c) => c.asts.iter().find_map(re2_refuses),
        Ast::Alternation(a) => a.asts.iter().find_map(re2_refuses),
        _ => None,
    }
}

/// The largest count a repetition writes (`{2,1001}` → 1001).
fn repeat_count(kind: &regex_syntax::ast::RepetitionKind) -> u32 {
    use regex_syntax::ast::{RepetitionKind, RepetitionRange};
    match kind {
        RepetitionKind::Range(RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n)) => *n,
        RepetitionKind::Range(RepetitionRange::Bounded(a, b)) => (*a).max(*b),
        _ => 0,
    }
}

/// The names the variants are read by (`alias`es too), as a string enum's
/// values; `None` (no `enum`) with a `#[serde(other)]` variant, which reads
/// any string.
fn variant_names(variants: &[Variant]) -> Option<Vec<Value>> {
    if variants.iter().any(|v| v.other) {
        return None;
    }
    let mut names: Vec<Value> = Vec::new();
    for name in variants.iter().flat_map(|v| std::iter::once(&v.json_name).chain(&v.aliases)) {
        if !names.iter().any(|n| n == name.as_str()) {
            names.push(Value::String(name.clone()));
        }
    }
    Some(names)
}

/// The schema of a set of `items`: a list, `x-kubernetes-list-type: set`
/// when its items are scalars.
fn set_schema(items: JsonSchemaProps) -> JsonSchemaProps {
    let scalar = matches!(items.type_.as_deref(), Some("string" | "integer" | "number" | "boolean"));
    JsonSchemaProps {
        items: Some(Arc::new(items)),
        x_list_type: if scalar { Some("set".into()) } else { None },
        ..typed("array")
    }
}

/// Puts the doc of a type alias on the items or values it names, level by
/// level (see [`Field::item_docs`](crate::model::Field::item_docs)).
fn describe_items(schema: &mut JsonSchemaProps, docs: &[Option<String>]) {
    let Some((doc, deeper)) = docs.split_first() else { return };
    let inner = match (&mut schema.items, &mut schema.additional_properties) {
        (Some(items), _) => items,
        (None, Some(values)) => values,
        (None, None) => return,
    };
    let inner = Arc::make_mut(inner);
    if let Some(doc) = doc {
        inner.description = Some(doc.as_str().into());
    }
    describe_items(inner, deeper);
}

#[cfg(test)]
mod tests {

    #[test]
    fn patterns_both_regex_dialects_refuse() {
        for bad in ["([a-z", "(a", "a)", "[z-a]", "*a", "a\\"] {
            assert!(go_regex_problem(bad).is_some(), "{bad}");
        }
        // Rust's parser reads these; RE2 (Go's regexp) refuses them.
        for bad in ["^(?=.*[a-z]).+$", "(?x) ^ [a-z]+ $", "^[a-z]++$", "a**", "(?:a{2}){3}{4}", "(?u:a)", "(a)\\1"] {
            assert!(go_regex_problem(bad).is_some(), "{bad}");
        }
        // RE2 reads these (a `{` that starts no repetition is a literal there).
        for ok in [
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            "say {{ x }}",
            "a{",
            "a{1,2}",
            "\\Qa.b\\E",
            "(?P<n>x)",
            "a+?",
            "(?i)a",
            "(?:a+)+",
        ] {
            assert_eq!(go_regex_problem(ok), None, "{ok}");
        }
    }

    use super::*;
    use serde_json::json;

    use crate::diag::SourceFile;

    /// The messages of [`check_structural`] on `schema` (JSON), each with
    /// its line in the kind's file.
    fn structural_errors(schema: Value) -> Vec<(String, usize)> {
        let schema: JsonSchemaProps = serde_json::from_value(schema).unwrap();
        let text = "use x;\n#[genclient]\npub struct Widget;\n";
        let file: syn::File = syn::parse_str(text).unwrap();
        let span = syn::spanned::Spanned::span(&file.items[1]);
        let origin = Origin { file: Arc::new(SourceFile::new("pkg/apis/example/v1/types.rs", text)), span };
        let mut diags = Diagnostics::new();
        check_structural(&schema, "", &origin, &mut diags);
        diags.take().into_iter().map(|d| (d.message, d.location.map_or(0, |l| l.line))).collect()
    }

    #[test]
    fn a_structural_schema_passes() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "ports": {"type": "array", "items": {"type": "integer"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "port": {"x-kubernetes-int-or-string": true},
                "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            }},
        }});
        assert_eq!(structural_errors(schema), []);
    }

    #[test]
    fn nodes_without_a_type_or_with_properties_and_additional_properties_are_errors() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "untyped": {},
                "list": {"type": "array", "items": {"description": "no type"}},
                "map": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {}}},
                "both": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            }},
        }});
        let errors = structural_errors(schema);
        assert_eq!(
            errors,
            [
                ("schema node `.spec.both` has both properties and additionalProperties".to_owned(), 2),
                ("schema node `.spec.list[*]` has no type".to_owned(), 2),
                ("schema node `.spec.map.*.*` has no type".to_owned(), 2),
                ("schema node `.spec.untyped` has no type".to_owned(), 2),
            ]
        );
    }
}
