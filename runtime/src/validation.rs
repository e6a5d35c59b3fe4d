//! Local validation: an object checked against its CRD's OpenAPI schema the
//! way kube-apiserver checks a custom resource on create — defaults applied
//! first, then the schema validator (kube-openapi's) with its field paths and
//! messages, then the list-type (`set`/`map`) uniqueness checks — so a
//! controller or webhook can reject an object without a round trip, with
//! the very errors the server would return.
//!
//! Generated kinds call [`validate`] from their `validate()` method (and
//! [`validate_update`] from `validate_update(old)`) with the schema
//! kube-codegen embeds next to them. CEL rules (`x-kubernetes-validations`)
//! are evaluated with the feature `cel`; string `format`s stay server-side
//! only; see docs/validation.md.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::gofmt::go_quote;
use crate::object::same_value;

/// One field error, as the API server reports it in a Status cause.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldError {
    /// The path of the field, e.g. `spec.replicas`, `spec.ports[1].name`.
    pub field: String,
    /// The cause's `reason`, e.g. `FieldValueInvalid`, `FieldValueRequired`.
    pub reason: &'static str,
    /// The cause's `message` (the field error without its path), e.g.
    /// `Invalid value: 0: spec.replicas in body should be greater than or equal to 1`.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every field error of an object, in the order the API server lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The server's aggregate: `[a, b]` for several, `a` for one.
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        if parts.len() == 1 { f.write_str(&parts[0]) } else { write!(f, "[{}]", parts.join(", ")) }
    }
}

impl std::error::Error for FieldErrors {}

/// Checks `object` against `schema`, the JSON text of a CRD version's
/// `openAPIV3Schema` (parsed once per distinct text and kept).
#[inline]
pub fn validate<K: Serialize>(object: &K, schema: &'static str) -> Result<(), FieldErrors> {
    let value = crate::object::to_json_value(object).map_err(|e| {
        FieldErrors(vec![FieldError { field: String::new(), reason: "InternalError", message: e.to_string() }])
    })?;
    validate_value(value, schema)
}

/// Checks `object` as an update of `old`: what [`validate`] checks, plus
/// the CEL transition rules (those reading `oldSelf`, e.g. immutability),
/// and, as the server ratchets, errors at a value the update leaves
/// unchanged are dropped (a missing required field's at its object; never a
/// transition rule's; items only of a list left as it was).
#[inline]
pub fn validate_update<K: Serialize>(object: &K, old: &K, schema: &'static str) -> Result<(), FieldErrors> {
    let to_value = |k: &K| {
        crate::object::to_json_value(k).map_err(|e| {
            FieldErrors(vec![FieldError { field: String::new(), reason: "InternalError", message: e.to_string() }])
        })
    };
    check(to_value(object)?, Some(to_value(old)?), schema)
}

/// [`validate`] on an object already in JSON form.
pub fn validate_value(object: Value, schema: &'static str) -> Result<(), FieldErrors> {
    check(object, None, schema)
}

fn check(mut object: Value, old: Option<Value>, schema: &'static str) -> Result<(), FieldErrors> {
    let errors = admit(&mut object, old, schema);
    if errors.is_empty() { Ok(()) } else { Err(FieldErrors(errors)) }
}

/// Defaults `object` in place and returns its field errors (for a create,
/// or with `old` for an update): what the fake API server stores and answers.
pub(crate) fn admit(object: &mut Value, old: Option<Value>, schema: &'static str) -> Vec<FieldError> {
    let schema = compiled(schema);
    schema.apply_defaults(object);
    let object = &*object;
    let mut errors = Vec::new();
    schema.validate(object, "", &mut errors);
    let mut old = old;
    // List uniqueness, unless the old object broke it somewhere: the server
    // then checks none of the new one's (its strategy's ratcheting).
    let old_unique = old.as_mut().is_none_or(|old| {
        schema.apply_defaults(old);
        let mut old_errors = Vec::new();
        schema.check_list_types(old, "", &mut old_errors);
        old_errors.is_empty()
    });
    if old_unique {
        schema.check_list_types(object, "", &mut errors);
    }
    if let Some(old) = &old {
        // Ratcheting: an error where the object equals the old one is not
        // the update's doing.
        errors.retain(|e| {
            // A missing required field is the error of the object holding
            // it; that of `oneOf` and the like, of the node it names.
            let at = if e.reason == "FieldValueRequired" {
                e.field.rsplit_once('.').map_or("", |(parent, _)| parent).to_string()
            } else if let Some(node) = composite_node(e) {
                node
            } else {
                e.field.clone()
            };
            !unchanged(object, old, &at)
        });
    }
    if schema.has_rules() {
        // The server runs no CEL rule on an object with a blocking error,
        // and says so.
        let blocking = errors.iter().any(|e| {
            matches!(
                e.reason,
                "FieldValueNotSupported"
                    | "FieldValueRequired"
                    | "FieldValueTooLong"
                    | "FieldValueTooMany"
                    | "FieldValueTypeInvalid"
            )
        });
        if blocking {
            errors.push(FieldError {
                field: "<nil>".into(),
                reason: "FieldValueInvalid",
                message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
            });
        } else {
            #[cfg(feature = "cel")]
            schema.check_rules(object, old.as_ref(), "", &mut errors);
        }
    }
    errors
}

/// Whether the value at the field path `field` is the same in both objects.
/// The path is walked against the new object, so that a map key holding
/// dots (`spec.labels.app.kubernetes.io/name`) is one step.
fn unchanged(new: &Value, old: &Value, field: &str) -> bool {
    let (mut a, mut b) = (new, old);
    let mut rest = field;
    loop {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if rest.is_empty() {
            return same_value(a, b);
        }
        let (next, after) = if let Some(bracketed) = rest.strip_prefix('[') {
            let Some(end) = bracketed.find(']') else { return false };
            let inner = &bracketed[..end];
            let next = match (a, inner.parse::<usize>()) {
                // List items are matched only in a list left as it was (the
                // server correlates no items of a changed list but map
                // lists', by key; those are not ratcheted here).
                (Value::Array(_), Ok(i)) if same_value(a, b) => a.get(i).zip(b.get(i)),
                (Value::Array(_), _) => None,
                _ => a.get(inner).zip(b.get(inner)),
            };
            (next, &bracketed[end + 1..])
        } else {
            // The longest key of the object that the path goes on with.
            let Value::Object(map) = a else { return false };
            let Some(key) = map
                .keys()
                .filter(|k| {
                    rest.starts_with(k.as_str()) && matches!(rest.as_bytes().get(k.len()), None | Some(b'.' | b'['))
                })
                .max_by_key(|k| k.len())
            else {
                return false;
            };
            (a.get(key).zip(b.get(key)), &rest[key.len()..])
        };
        match next {
            Some((x, y)) => (a, b) = (x, y),
            None => return false,
        }
        rest = after;
    }
}

fn compiled(text: &'static str) -> Arc<Node> {
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<Node>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = text.as_ptr() as usize;
    if let Some(node) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return node.clone();
    }
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let node = Arc::new(Node::new(&value));
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, node.clone());
    node
}

/// A schema node, with only what validation needs.
#[derive(Debug, Default)]
struct Node {
    ty: Option<String>,
    properties: BTreeMap<String, Node>,
    required: Vec<String>,
    items: Option<Box<Node>>,
    additional: Option<Box<Node>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: bool,
    exclusive_maximum: bool,
    multiple_of: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<(String, Option<regex::Regex>)>,
    enum_values: Option<Vec<Value>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    list_type: Option<String>,
    list_map_keys: Vec<String>,
    default: Option<Value>,
    nullable: bool,
    int_or_string: bool,
    /// `x-kubernetes-embedded-resource`: an object with its own
    /// `apiVersion` and `kind`.
    embedded: bool,
    /// `allOf`, `anyOf`, `oneOf` and `not`: value validations only (a
    /// structural schema has its types outside them).
    all_of: Vec<Node>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
    not: Option<Box<Node>>,
    /// Whether this node or one below it has CEL rules.
    any_rules: bool,
    #[cfg(feature = "cel")]
    rules: Vec<cel_rules::Rule>,
    /// Whether a property at or below this node has a name CEL sees
    /// escaped (or cannot see).
    #[cfg(feature = "cel")]
    escapes: bool,
}

impl Node {
    fn has_rules(&self) -> bool {
        self.any_rules
    }

    fn new(v: &Value) -> Node {
        let mut node = Node::read(v);
        node.any_rules = v.get("x-kubernetes-validations").and_then(Value::as_array).is_some_and(|r| !r.is_empty())
            || node.properties.values().any(|p| p.any_rules)
            || node.items.as_ref().is_some_and(|i| i.any_rules)
            || node.additional.as_ref().is_some_and(|a| a.any_rules);
        #[cfg(feature = "cel")]
        {
            node.escapes =
                node.properties.iter().any(|(k, p)| p.escapes || cel_rules::escape(k).as_deref() != Some(k.as_str()))
                    || node.items.as_ref().is_some_and(|i| i.escapes)
                    || node.additional.as_ref().is_some_and(|a| a.escapes);
        }
        node
    }

    fn read(v: &Value) -> Node {
        let u = |k: &str| v.get(k).and_then(Value::as_u64);
        let f = |k: &str| v.get(k).and_then(Value::as_f64);
        let b = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let nodes =
            |k: &str| v.get(k).and_then(Value::as_array).map(|a| a.iter().map(Node::new).collect()).unwrap_or_default();
        Node {
            ty: s("type"),
            properties: v
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.iter().map(|(k, v)| (k.clone(), Node::new(v))).collect())
                .unwrap_or_default(),
            required: v
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(|k| k.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
            items: v.get("items").filter(|i| i.is_object()).map(|i| Box::new(Node::new(i))),
            additional: v.get("additionalProperties").filter(|a| a.is_object()).map(|a| Box::new(Node::new(a))),
            minimum: f("minimum"),
            maximum: f("maximum"),
            exclusive_minimum: b("exclusiveMinimum"),
            exclusive_maximum: b("exclusiveMaximum"),
            multiple_of: f("multipleOf"),
            min_length: u("minLength"),
            max_length: u("maxLength"),
            pattern: s("pattern").map(|p| {
                // The generator spells RE2-only syntax (`\Q..\E`, octal
                // escapes, `[` in a class) as `regex` reads it, under
                // codegen-core's `emit::validate::RUST_PATTERN_KEY`.
                let rust = s("x-kube-codegen-rust-pattern");
                let re = regex::Regex::new(&re2_ascii_classes(rust.as_deref().unwrap_or(&p))).ok();
                (p, re)
            }),
            enum_values: v.get("enum").and_then(Value::as_array).cloned(),
            min_items: u("minItems"),
            max_items: u("maxItems"),
            min_properties: u("minProperties"),
            max_properties: u("maxProperties"),
            list_type: s("x-kubernetes-list-type"),
            list_map_keys: v
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(|k| k.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
            default: v.get("default").cloned(),
            nullable: b("nullable"),
            embedded: b("x-kubernetes-embedded-resource"),
            int_or_string: b("x-kubernetes-int-or-string"),
            all_of: nodes("allOf"),
            any_of: nodes("anyOf"),
            one_of: nodes("oneOf"),
            not: v.get("not").filter(|n| n.is_object()).map(|n| Box::new(Node::new(n))),
            any_rules: false,
            #[cfg(feature = "cel")]
            rules: v
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map(|r| r.iter().map(cel_rules::Rule::new).collect())
                .unwrap_or_default(),
            #[cfg(feature = "cel")]
            escapes: false,
        }
    }

    /// `value` is none of the enum's values.
    fn not_supported(&self, path: &str, value: &Value) -> FieldError {
        let supported: Vec<String> = self
            .enum_values
            .iter()
            .flatten()
            .map(|v| match v {
                Value::String(s) => go_quote(s),
                other => go_quote(&other.to_string()),
            })
            .collect();
        FieldError {
            field: field(path),
            reason: "FieldValueNotSupported",
            message: format!("Unsupported value: {}: supported values: {}", go_value(value), supported.join(", ")),
        }
    }

    /// Structural defaulting: a missing property with a default gets it
    /// (objects, list items and map values alike), recursively.
    fn apply_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (name, prop) in &self.properties {
                    // A null where null is not allowed is dropped, and then
                    // defaulted like a missing field (the server's pruning
                    // of non-nullable nulls).
                    if map.get(name).is_some_and(Value::is_null) && !prop.nullable {
                        map.remove(name);
                    }
                    if !map.contains_key(name)
                        && let Some(d) = &prop.default
                    {
                        map.insert(name.clone(), d.clone());
                    }
                    if let Some(child) = map.get_mut(name) {
                        prop.apply_defaults(child);
                    }
                }
                if let Some(additional) = &self.additional {
                    // A null map value takes the values' default; without
                    // one, where null is not allowed, it is dropped (the
                    // server's defaulting and pruning of nulls).
                    if additional.default.is_none() && !additional.nullable {
                        map.retain(|name, child| !child.is_null() || self.properties.contains_key(name));
                    }
                    for (name, child) in map.iter_mut() {
                        if !self.properties.contains_key(name) {
                            if child.is_null()
                                && let Some(d) = &additional.default
                            {
                                *child = d.clone();
                            }
                            additional.apply_defaults(child);
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(node) = &self.items {
                    for item in items.iter_mut() {
                        // A null item takes the items' default.
                        if item.is_null()
                            && let Some(d) = &node.default
                        {
                            *item = d.clone();
                        }
                        node.apply_defaults(item);
                    }
                }
            }
            _ => {}
        }
    }

    /// kube-openapi's schema validator, converted to field errors as the
    /// apiextensions server does.
    fn validate(&self, value: &Value, path: &str, out: &mut Vec<FieldError>) {
        if value.is_null() {
            if !self.nullable && self.ty.is_some() {
                out.push(type_error(path, self.ty.as_deref().unwrap_or_default(), value));
            } else if self.enum_values.as_ref().is_some_and(|values| !values.iter().any(Value::is_null)) {
                // A null is checked against the enum too (kube-openapi's
                // validator runs the type and the common validators on it).
                out.push(self.not_supported(path, value));
            }
            return;
        }
        if self.int_or_string {
            if !(value.is_string() || value.is_i64() || value.is_u64()) {
                out.push(invalid(path, value, format!("{} in body must be of type int-or-string", name(path))));
            }
        } else if let Some(ty) = &self.ty
            && !type_matches(ty, value)
        {
            out.push(type_error(path, ty, value));
            return;
        }
        self.validate_composition(value, path, out);
        if let Some(values) = &self.enum_values
            && !values.iter().any(|v| same_value(v, value))
        {
            out.push(self.not_supported(path, value));
        }
        match value {
            Value::Object(map) => self.validate_object(map, path, out),
            Value::Array(items) => {
                let n = items.len() as u64;
                if let Some(min) = self.min_items
                    && n < min
                {
                    out.push(invalid(
                        path,
                        &Value::from(n),
                        format!("{} in body should have at least {min} items", name(path)),
                    ));
                }
                if let Some(max) = self.max_items
                    && n > max
                {
                    out.push(too_many(path, n, max));
                }
                if let Some(node) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        node.validate(item, &format!("{path}[{i}]"), out);
                    }
                }
            }
            Value::String(s) => {
                // kube-openapi stops at a string's first failure: maximum
                // length, minimum length, pattern.
                let len = s.chars().count() as u64;
                if let Some(max) = self.max_length
                    && len > max
                {
                    let unit = if max == 1 { "byte" } else { "bytes" };
                    out.push(FieldError {
                        field: field(path),
                        reason: "FieldValueTooLong",
                        message: format!("Too long: may not be more than {max} {unit}"),
                    });
                } else if let Some(min) = self.min_length
                    && len < min
                {
                    out.push(invalid(
                        path,
                        value,
                        format!("{} in body should be at least {min} chars long", name(path)),
                    ));
                } else if let Some((pattern, re)) = &self.pattern
                    && re.as_ref().is_some_and(|re| !re.is_match(s))
                {
                    out.push(invalid(path, value, format!("{} in body should match '{pattern}'", name(path))));
                }
            }
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or_default();
                // An integer is checked against integer bounds (printed as
                // such), anything else as float64.
                let integer = !n.is_f64();
                let go_float = |f: f64| if integer && f.fract() == 0.0 { format!("{}", f as i64) } else { go_float(f) };
                if let Some(m) = self.multiple_of
                    && m > 0.0
                    && !is_multiple(x, m, integer)
                {
                    out.push(invalid(
                        path,
                        value,
                        format!("{} in body should be a multiple of {}", name(path), go_float(m)),
                    ));
                }
                if let Some(max) = self.maximum {
                    if self.exclusive_maximum && x >= max {
                        out.push(invalid(
                            path,
                            value,
                            format!("{} in body should be less than {}", name(path), go_float(max)),
                        ));
                    } else if !self.exclusive_maximum && x > max {
                        out.push(invalid(
                            path,
                            value,
                            format!("{} in body should be less than or equal to {}", name(path), go_float(max)),
                        ));
                    }
                }
                if let Some(min) = self.minimum {
                    if self.exclusive_minimum && x <= min {
                        out.push(invalid(
                            path,
                            value,
                            format!("{} in body should be greater than {}", name(path), go_float(min)),
                        ));
                    } else if !self.exclusive_minimum && x < min {
                        out.push(invalid(
                            path,
                            value,
                            format!("{} in body should be greater than or equal to {}", name(path), go_float(min)),
                        ));
                    }
                }
            }
            _ => {}
        }
    }

    /// `anyOf`, `oneOf`, `allOf` and `not`, in kube-openapi's order and
    /// words. Where no branch of an `anyOf` or `oneOf` holds, kube-openapi
    /// adds the errors of the branch with the most checks passed; here,
    /// that of the first failing branch (the same for branches of one
    /// shape, such as the `required` of each variant of an enum).
    fn validate_composition(&self, value: &Value, path: &str, out: &mut Vec<FieldError>) {
        let errors_of = |branch: &Node| {
            let mut errors = Vec::new();
            branch.validate(value, path, &mut errors);
            errors
        };
        if !self.any_of.is_empty() {
            let mut first_failure = None;
            let mut held = false;
            for branch in &self.any_of {
                let errors = errors_of(branch);
                if errors.is_empty() {
                    held = true;
                    break;
                }
                first_failure.get_or_insert(errors);
            }
            if !held {
                out.push(composite(path, "must validate at least one schema (anyOf)"));
                out.extend(first_failure.unwrap_or_default());
            }
        }
        if !self.one_of.is_empty() {
            let mut held = 0;
            let mut first_failure = None;
            for branch in &self.one_of {
                let errors = errors_of(branch);
                if errors.is_empty() {
                    held += 1;
                } else if held == 0 {
                    first_failure.get_or_insert(errors);
                }
            }
            if held != 1 {
                let found =
                    if held == 0 { "Found none valid".to_string() } else { format!("Found {held} valid alternatives") };
                out.push(composite(path, &format!("must validate one and only one schema (oneOf). {found}")));
                if held == 0 {
                    out.extend(first_failure.unwrap_or_default());
                }
            }
        }
        if !self.all_of.is_empty() {
            let mut held = 0;
            for branch in &self.all_of {
                let errors = errors_of(branch);
                held += usize::from(errors.is_empty());
                out.extend(errors);
            }
            if held != self.all_of.len() {
                let none = if held == 0 { ". None validated" } else { "" };
                out.push(composite(path, &format!("must validate all the schemas (allOf){none}")));
            }
        }
        if let Some(not) = &self.not
            && errors_of(not).is_empty()
        {
            out.push(composite(path, "must not validate the schema (not)"));
        }
    }

    fn validate_object(&self, map: &Map<String, Value>, path: &str, out: &mut Vec<FieldError>) {
        let n = map.len() as u64;
        if let Some(min) = self.min_properties
            && n < min
        {
            out.push(invalid(
                path,
                &Value::from(n),
                format!("{} in body should have at least {min} properties", name(path)),
            ));
        }
        if let Some(max) = self.max_properties
            && n > max
        {
            out.push(too_many(path, n, max));
        }
        if let Some(additional) = &self.additional {
            for (key, child) in map {
                if !self.properties.contains_key(key) {
                    additional.validate(child, &format!("{path}.{key}"), out);
                }
            }
        }
        for (key, prop) in &self.properties {
            if let Some(child) = map.get(key) {
                let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                prop.validate(child, &child_path, out);
            }
        }
        for key in &self.required {
            if !map.contains_key(key) {
                out.push(FieldError {
                    field: field(&format!("{path}.{key}")),
                    reason: "FieldValueRequired",
                    message: "Required value".into(),
                });
            }
        }
        // An embedded object needs its apiVersion and kind (the server's
        // `validateEmbeddedResource`; their syntax is left to it).
        if self.embedded {
            for key in ["apiVersion", "kind"] {
                let at = field(&format!("{path}.{key}"));
                match map.get(key) {
                    None => out.push(FieldError {
                        field: at,
                        reason: "FieldValueRequired",
                        message: "Required value: must not be empty".into(),
                    }),
                    Some(Value::String(s)) if s.is_empty() => out.push(FieldError {
                        field: at,
                        reason: "FieldValueInvalid",
                        message: "Invalid value: \"\": must not be empty".into(),
                    }),
                    _ => {}
                }
            }
        }
    }

    /// `x-kubernetes-list-type: set` and `map`: no two equal items, no two
    /// items with equal keys (apiextensions' structural list-type check,
    /// run after the schema validator).
    fn check_list_types(&self, value: &Value, path: &str, out: &mut Vec<FieldError>) {
        match value {
            Value::Object(map) => {
                for (key, prop) in &self.properties {
                    if let Some(child) = map.get(key) {
                        let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                        prop.check_list_types(child, &child_path, out);
                    }
                }
                if let Some(additional) = &self.additional {
                    for (key, child) in map {
                        if !self.properties.contains_key(key) {
                            additional.check_list_types(child, &format!("{path}[{key}]"), out);
                        }
                    }
                }
            }
            Value::Array(items) => {
                match self.list_type.as_deref() {
                    // Only the first repeat of a value is reported, as the
                    // server's `listtype` validation counts them.
                    Some("set") => {
                        for (i, item) in items.iter().enumerate() {
                            if items[..i].iter().filter(|earlier| same_value(earlier, item)).count() == 1 {
                                out.push(duplicate(&format!("{path}[{i}]"), item));
                            }
                        }
                    }
                    Some("map") => {
                        let key_of = |item: &Value| -> Map<String, Value> {
                            self.list_map_keys
                                .iter()
                                .filter_map(|k| item.get(k).map(|v| (k.clone(), v.clone())))
                                .collect()
                        };
                        for (i, item) in items.iter().enumerate() {
                            let key = key_of(item);
                            if items[..i].iter().filter(|earlier| key_of(earlier) == key).count() == 1 {
                                out.push(duplicate(&format!("{path}[{i}]"), &Value::Object(key)));
                            }
                        }
                    }
                    _ => {}
                }
                if let Some(node) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        node.check_list_types(item, &format!("{path}[{i}]"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The field path as apiextensions reports it (no leading dot).
fn field(path: &str) -> String {
    path.trim_start_matches('.').to_string()
}

/// The name kube-openapi puts into its messages.
fn name(path: &str) -> String {
    field(path)
}

fn invalid(path: &str, value: &Value, detail: String) -> FieldError {
    FieldError {
        field: field(path),
        reason: "FieldValueInvalid",
        message: format!("Invalid value: {}: {detail}", go_value(value)),
    }
}

/// An error of `anyOf`, `oneOf`, `allOf` or `not`: apiextensions reports
/// it without a field (kube-openapi gives it none), the node's path quoted
/// in the message.
fn composite(path: &str, detail: &str) -> FieldError {
    FieldError {
        field: "<nil>".into(),
        reason: "FieldValueInvalid",
        message: format!("Invalid value: \"\": {} {detail}", go_quote(&name(path))),
    }
}

/// The node path of an error [`composite`] made, read back from its
/// message (the error has no field).
fn composite_node(e: &FieldError) -> Option<String> {
    if e.field != "<nil>" {
        return None;
    }
    let quoted = e.message.strip_prefix("Invalid value: \"\": \"")?;
    let end = quoted.find("\" must ")?;
    Some(quoted[..end].replace("\\\"", "\"").replace("\\\\", "\\"))
}

fn too_many(path: &str, actual: u64, max: u64) -> FieldError {
    let unit = if max == 1 { "item" } else { "items" };
    FieldError {
        field: field(path),
        reason: "FieldValueTooMany",
        message: format!("Too many: {actual}: must have at most {max} {unit}"),
    }
}

fn duplicate(path: &str, value: &Value) -> FieldError {
    FieldError {
        field: field(path),
        reason: "FieldValueDuplicate",
        message: format!("Duplicate value: {}", go_value(value)),
    }
}

fn type_error(path: &str, ty: &str, value: &Value) -> FieldError {
    let detail = match value {
        Value::Null => format!("{} in body must be of type {ty}: \"null\"", name(path)),
        other => format!("{} in body must be of type {ty}: \"{}\"", name(path), json_type(other)),
    };
    FieldError {
        field: field(path),
        reason: "FieldValueTypeInvalid",
        message: format!("Invalid value: {}: {detail}", go_value(value)),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        _ => true,
    }
}

/// A bad value as Go's field error prints it: numbers and booleans plain,
/// strings quoted, anything else as JSON.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or_default()),
        },
        Value::Bool(b) => b.to_string(),
        // Go's json.Marshal of a map sorts its keys, as serde_json's map does.
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): the
/// shortest digits, in exponent form when the exponent is below -4 or at
/// least 6 (`1e+06`, `1.5e-07`).
fn go_float(f: f64) -> String {
    let sci = format!("{f:e}");
    let Some((mantissa, exp)) = sci.split_once('e') else { return sci };
    let exp: i32 = exp.parse().unwrap_or_default();
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// Whether `x` is a multiple of `factor` as kube-openapi decides it:
/// integers exactly, floats as `x / factor` (`1 / factor * x` below 1)
/// within a relative 1e-9 of an integer (go-openapi's
/// `IsFloat64AJSONInteger`).
fn is_multiple(x: f64, factor: f64, integer: bool) -> bool {
    if integer && factor.fract() == 0.0 {
        return (x % factor) == 0.0;
    }
    let mult = if factor < 1.0 { 1.0 / factor * x } else { x / factor };
    if !mult.is_finite() || mult.abs() > 9007199254740991.0 {
        return false;
    }
    let rounded = mult.round();
    if mult == rounded {
        return true;
    }
    rounded != 0.0 && (mult - rounded).abs() < 1e-9 * rounded.abs()
}

/// A schema `pattern` (RE2, as the API server reads it) for the `regex`
/// crate: RE2's `\d`, `\w`, `\s` and `\b` are ASCII-only, the crate's are
/// Unicode, so they are spelled out.
fn re2_ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                let (inside, outside) = match next {
                    'd' => ("0-9", "[0-9]"),
                    'D' => ("", "[^0-9]"),
                    'w' => ("0-9A-Za-z_", "[0-9A-Za-z_]"),
                    'W' => ("", "[^0-9A-Za-z_]"),
                    's' => ("\\t\\n\\f\\r ", "[\\t\\n\\f\\r ]"),
                    'S' => ("", "[^\\t\\n\\f\\r ]"),
                    'b' if !in_class => ("", "(?-u:\\b)"),
                    'B' if !in_class => ("", "(?-u:\\B)"),
                    _ => {
                        out.push(c);
                        out.push(next);
                        continue;
                    }
                };
                if in_class && !inside.is_empty() {
                    out.push_str(inside);
                } else if in_class {
                    // A negated class inside a class: kept as written.
                    out.push(c);
                    out.push(next);
                } else {
                    out.push_str(outside);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // `[]...]` and `[^]...]`: a leading `]` is a literal.
                let rest = chars.as_str();
                let lead = if rest.starts_with('^') { 1 } else { 0 };
                if rest[lead..].starts_with(']') {
                    out.push_str(&rest[..lead + 1]);
                    for _ in 0..=lead {
                        chars.next();
                    }
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `x-kubernetes-validations`: CEL rules, with the `cel` crate (its
/// standard library and string extensions). A rule that calls a function of
/// Kubernetes' own CEL libraries the crate lacks (`quantity`, `isURL`,
/// `ip`, ...) is left to the server.
#[cfg(feature = "cel")]
mod cel_rules {
    use std::sync::{Arc, OnceLock};

    use serde_json::Value;

    use super::{FieldError, Node, field, go_value, same_value};

    /// One rule of a schema node.
    #[derive(Debug)]
    pub(super) struct Rule {
        program: Option<cel::Program>,
        message: Option<String>,
        message_expression: Option<cel::Program>,
        reason: Option<String>,
        field_path: Option<String>,
        uses_old_self: bool,
        optional_old_self: bool,
        text: String,
    }

    fn env() -> Arc<cel::Env> {
        static ENV: OnceLock<Arc<cel::Env>> = OnceLock::new();
        ENV.get_or_init(|| {
            let mut env = cel::Env::stdlib();
            let _ = env.add_extension(cel::extensions::strings);
            Arc::new(env)
        })
        .clone()
    }

    /// CEL's reserved words, which name a property as `__{word}__`.
    const RESERVED: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];

    /// A property name as rules read it, escaped as the API server declares
    /// it (`__` → `__underscores__`, `.` → `__dot__`, `-` → `__dash__`,
    /// `/` → `__slash__`, a reserved word `w` → `__w__`); `None` where CEL
    /// cannot name the property at all.
    pub(super) fn escape(name: &str) -> Option<String> {
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        if RESERVED.contains(&name) {
            return Some(format!("__{name}__"));
        }
        let mut out = String::with_capacity(name.len());
        let mut rest = name;
        while let Some(c) = rest.chars().next() {
            if let Some(after) = rest.strip_prefix("__") {
                out.push_str("__underscores__");
                rest = after;
                continue;
            }
            match c {
                '.' => out.push_str("__dot__"),
                '-' => out.push_str("__dash__"),
                '/' => out.push_str("__slash__"),
                c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
                _ => return None,
            }
            rest = &rest[c.len_utf8()..];
        }
        Some(out)
    }

    impl Node {
        /// Whether `a` and `b` are equal as the API server's CEL compares
        /// values of this node: lists of type `set` or `map` in any order.
        fn same_as(&self, a: &Value, b: &Value) -> bool {
            match (a, b) {
                (Value::Array(x), Value::Array(y)) => {
                    let same = |a: &Value, b: &Value| match &self.items {
                        Some(node) => node.same_as(a, b),
                        None => same_value(a, b),
                    };
                    if x.len() != y.len() {
                        return false;
                    }
                    if !matches!(self.list_type.as_deref(), Some("set" | "map")) {
                        return x.iter().zip(y).all(|(a, b)| same(a, b));
                    }
                    let mut matched = vec![false; y.len()];
                    x.iter().all(|a| {
                        let found = y.iter().enumerate().position(|(j, b)| !matched[j] && same(a, b));
                        found.inspect(|j| matched[*j] = true).is_some()
                    })
                }
                (Value::Object(x), Value::Object(y)) => {
                    x.len() == y.len()
                        && x.iter().all(|(key, v)| {
                            y.get(key).is_some_and(|w| match self.properties.get(key).or(self.additional.as_deref()) {
                                Some(node) => node.same_as(v, w),
                                None => same_value(v, w),
                            })
                        })
                }
                _ => same_value(a, b),
            }
        }

        /// `value` as rules see it: declared properties under their
        /// escaped names (those CEL cannot name left out), map keys as
        /// they are. A reserved word also keeps its own name, which the
        /// API server resolves too (`self.namespace` as `self.__namespace__`).
        fn cel_view(&self, value: &Value) -> Value {
            if !self.escapes {
                return value.clone();
            }
            match value {
                Value::Object(map) => {
                    let mut out = serde_json::Map::new();
                    for (key, child) in map {
                        if let Some(prop) = self.properties.get(key) {
                            if let Some(name) = escape(key) {
                                let child = prop.cel_view(child);
                                if RESERVED.contains(&key.as_str()) {
                                    out.insert(key.clone(), child.clone());
                                }
                                out.insert(name, child);
                            }
                        } else if let Some(additional) = &self.additional {
                            out.insert(key.clone(), additional.cel_view(child));
                        } else {
                            out.insert(key.clone(), child.clone());
                        }
                    }
                    Value::Object(out)
                }
                Value::Array(items) => match &self.items {
                    Some(node) => Value::Array(items.iter().map(|i| node.cel_view(i)).collect()),
                    None => value.clone(),
                },
                _ => value.clone(),
            }
        }
    }

    impl Rule {
        pub(super) fn new(v: &Value) -> Rule {
            let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            let text = s("rule").unwrap_or_default();
            let env = env();
            Rule {
                program: env.compile(&text).ok(),
                message: s("message"),
                message_expression: s("messageExpression").and_then(|m| env.compile(&m).ok()),
                reason: s("reason"),
                field_path: s("fieldPath"),
                uses_old_self: text
                    .match_indices("oldSelf")
                    .any(|(i, _)| !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')),
                optional_old_self: v.get("optionalOldSelf").and_then(Value::as_bool).unwrap_or(false),
                text,
            }
        }
    }

    /// The schema type of a value, as the server names the node in errors.
    fn type_name(v: &Value) -> &'static str {
        match v {
            Value::Object(_) => "object",
            Value::Array(_) => "array",
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_f64() => "number",
            Value::Number(_) => "integer",
            Value::Null => "null",
        }
    }

    impl Node {
        /// The server's CEL pass: every node's rules, `self` the node's
        /// value and `oldSelf` the old object's value at the same place
        /// (through object properties and map values; list items only for
        /// `map` lists, by key).
        pub(super) fn check_rules(&self, value: &Value, old: Option<&Value>, path: &str, out: &mut Vec<FieldError>) {
            for rule in &self.rules {
                self.check_rule(rule, value, old, path, out);
            }
            match value {
                Value::Object(map) => {
                    for (key, prop) in &self.properties {
                        if let Some(child) = map.get(key) {
                            let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                            prop.check_rules(child, old.and_then(|o| o.get(key)), &child_path, out);
                        }
                    }
                    if let Some(additional) = &self.additional {
                        for (key, child) in map {
                            if !self.properties.contains_key(key) {
                                additional.check_rules(
                                    child,
                                    old.and_then(|o| o.get(key)),
                                    &format!("{path}[{key}]"),
                                    out,
                                );
                            }
                        }
                    }
                }
                Value::Array(items) => {
                    if let Some(node) = &self.items {
                        for (i, item) in items.iter().enumerate() {
                            let old_item = (self.list_type.as_deref() == Some("map"))
                                .then(|| {
                                    old.and_then(Value::as_array)?
                                        .iter()
                                        .find(|o| self.list_map_keys.iter().all(|k| o.get(k) == item.get(k)))
                                })
                                .flatten();
                            node.check_rules(item, old_item, &format!("{path}[{i}]"), out);
                        }
                    }
                }
                _ => {}
            }
        }

        fn check_rule(&self, rule: &Rule, value: &Value, old: Option<&Value>, path: &str, out: &mut Vec<FieldError>) {
            let Some(program) = &rule.program else { return };
            if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
                return;
            }
            let mut context = cel::Context::with_env(env());
            let added = if self.escapes {
                context.add_variable("self", self.cel_view(value))
            } else {
                context.add_variable("self", value)
            };
            if added.is_err() {
                return;
            }
            if rule.optional_old_self {
                // `optionalOldSelf`: `oldSelf` is `optional.of(old)`, or
                // `optional.none()` on a create, as the server binds it.
                let held = old.and_then(|old| {
                    let view = if self.escapes { self.cel_view(old) } else { old.clone() };
                    let value = cel::objects::TryIntoValue::try_into_value(view).ok()?;
                    Box::<dyn cel::common::value::Val>::try_from(value).ok()
                });
                let optional = match held {
                    Some(held) => cel::common::types::CelOptional::of(held),
                    None => cel::common::types::CelOptional::none(),
                };
                context.add_variable_as_val("oldSelf", Box::new(optional));
            } else if let Some(old) = old {
                let _ = if self.escapes {
                    context.add_variable("oldSelf", self.cel_view(old))
                } else {
                    context.add_variable("oldSelf", old)
                };
            }
            // `self == oldSelf` (the `immutable` marker): lists of type `set`
            // or `map` are equal in any order, as the server's CEL compares
            // them; the cel crate compares lists in order, so an unchanged
            // `HashSet` written in another order would fail. (Unequal in
            // any order, the rule fails below as it does in order.)
            if rule.text.trim() == "self == oldSelf"
                && !rule.optional_old_self
                && old.is_some_and(|old| self.same_as(value, old))
            {
                return;
            }
            // Ratcheting: a rule that does not read `oldSelf` fails a value
            // the update left unchanged without an error.
            let ratcheted = !rule.uses_old_self && old.is_some_and(|o| same_value(o, value));
            match program.execute(&context) {
                Ok(cel::Value::Bool(true)) => return,
                _ if ratcheted => return,
                Ok(_) => {}
                // A function of Kubernetes' CEL libraries this crate lacks:
                // the server's to check.
                Err(cel::ExecutionError::UndeclaredReference(_)) => return,
                Err(e) => {
                    // As the server reports a rule that cannot be evaluated.
                    let what = match &e {
                        cel::ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
                        other => other.to_string(),
                    };
                    let rule_text = match &rule.message {
                        Some(m) if !m.trim().is_empty() => m.trim(),
                        _ => rule.text.trim(),
                    };
                    out.push(FieldError {
                        field: field(path),
                        reason: "FieldValueInvalid",
                        message: format!(
                            "Invalid value: \"{}\": {what} evaluating rule: {rule_text}",
                            type_name(value)
                        ),
                    });
                    return;
                }
            }
            let detail = rule
                .message_expression
                .as_ref()
                .and_then(|m| match m.execute(&context) {
                    Ok(cel::Value::String(s)) => Some(s.to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| match &rule.message {
                    Some(m) if !m.trim().is_empty() => m.trim().to_string(),
                    _ => format!("failed rule: {}", rule.text.trim()),
                });
            let mut at = field(path);
            if let Some(extra) = &rule.field_path {
                let extra = extra.trim_start_matches('.');
                at = if at.is_empty() { extra.to_string() } else { format!("{at}.{extra}") };
            }
            let omitted = value.is_object() || value.is_array();
            let bad = if omitted { String::new() } else { format!(": {}", go_value(value)) };
            let error = match rule.reason.as_deref() {
                Some("FieldValueForbidden") => {
                    FieldError { field: at, reason: "FieldValueForbidden", message: format!("Forbidden: {detail}") }
                }
                Some("FieldValueRequired") => {
                    FieldError { field: at, reason: "FieldValueRequired", message: format!("Required value: {detail}") }
                }
                Some("FieldValueDuplicate") => FieldError {
                    field: at,
                    reason: "FieldValueDuplicate",
                    message: if omitted { "Duplicate value".into() } else { format!("Duplicate value{bad}") },
                },
                _ => FieldError {
                    field: at,
                    reason: "FieldValueInvalid",
                    message: format!("Invalid value{bad}: {detail}"),
                },
            };
            out.push(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn field_errors_display_as_the_servers_aggregate() {
        let error = |field: &str, message: &str| FieldError {
            field: field.into(),
            reason: "FieldValueInvalid",
            message: message.into(),
        };
        assert_eq!(FieldErrors(vec![error("spec.a", "bad")]).to_string(), "spec.a: bad");
        assert_eq!(
            FieldErrors(vec![error("spec.a", "bad"), error("spec.b", "worse")]).to_string(),
            "[spec.a: bad, spec.b: worse]"
        );
    }

    /// docs/validation.md: a rule calling a function of Kubernetes' own CEL
    /// libraries is left to the server; the other rules still run.
    #[cfg(feature = "cel")]
    #[test]
    fn rules_with_kubernetes_only_functions_are_skipped() {
        let schema = json!({
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": "integer"}, "u": {"type": "string"}},
            "x-kubernetes-validations": [
                {"rule": "quantity(self.q).isGreaterThan(quantity('1'))", "message": "q too small"},
                {"rule": "isURL(self.u)", "message": "u not a URL"},
                {"rule": "self.n > 0", "message": "n must be positive"}
            ]
        });
        let errors = check(schema, json!({"q": "0", "n": 0, "u": "not a url"}));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("n must be positive"), "{errors:?}");
    }

    /// `optionalOldSelf`: `oldSelf` is an optional, empty on a create, as
    /// the server binds it (the plain old value failed every update).
    #[cfg(feature = "cel")]
    #[test]
    fn optional_old_self_is_an_optional() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer",
            "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
                "message": "n may only grow", "optionalOldSelf": true}]}}});
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        assert_eq!(super::check(json!({"n": 3}), None, text), Ok(()));
        assert_eq!(super::check(json!({"n": 6}), Some(json!({"n": 5})), text), Ok(()));
        let errors = super::check(json!({"n": 4}), Some(json!({"n": 5})), text).unwrap_err();
        assert!(errors.0.iter().any(|e| e.field == "n" && e.message.contains("n may only grow")), "{errors:?}");
    }

    /// `self == oldSelf` (the `immutable` marker) holds for a `set` or `map`
    /// list written in another order, as the server's CEL compares them (a
    /// `HashSet` is written in any order).
    #[cfg(feature = "cel")]
    #[test]
    fn immutable_lists_of_type_set_or_map_are_equal_in_any_order() {
        let schema = json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "field is immutable"}]},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "field is immutable"}]},
            "order": {"type": "array", "items": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "field is immutable"}]},
        }});
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        let old = json!({"tags": ["a", "b"], "ports": [{"name": "x", "port": 1}, {"name": "y", "port": 2}],
            "order": ["a", "b"]});
        let reordered = json!({"tags": ["b", "a"], "ports": [{"name": "y", "port": 2}, {"name": "x", "port": 1}],
            "order": ["a", "b"]});
        assert_eq!(super::check(reordered, Some(old.clone()), text), Ok(()));
        let changed = json!({"tags": ["b", "c"], "ports": [{"name": "x", "port": 1}, {"name": "y", "port": 3}],
            "order": ["b", "a"]});
        let errors = super::check(changed, Some(old), text).unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["order", "ports", "tags"], "{errors:?}");
    }

    /// Rules name properties escaped as the API server declares them
    /// (`namespace` as `__namespace__`, `max-size` as `max__dash__size`);
    /// map keys stay as they are.
    #[cfg(feature = "cel")]
    #[test]
    fn rules_read_escaped_property_names() {
        let schema = json!({
            "type": "object",
            "properties": {
                "namespace": {"type": "string"},
                "max-size": {"type": "integer"},
                "a__b": {"type": "object", "properties": {"in": {"type": "integer"}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "x-kubernetes-validations": [
                {"rule": "has(self.__namespace__) == has(self.max__dash__size)", "message": "both or neither"},
                {"rule": "!has(self.namespace) || self.namespace == self.__namespace__", "message": "one namespace"},
                {"rule": "!has(self.a__underscores__b) || self.a__underscores__b.__in__ < 3", "message": "in below 3"},
                {"rule": "!has(self.labels) || !('max-size' in self.labels)", "message": "no max-size label"}
            ]
        });
        assert_eq!(
            check(schema.clone(), json!({"namespace": "a", "max-size": 1, "a__b": {"in": 2}})),
            Vec::<String>::new()
        );
        let errors = check(schema, json!({"namespace": "a", "a__b": {"in": 3}, "labels": {"max-size": "x"}}));
        assert_eq!(
            errors,
            [
                " | FieldValueInvalid | Invalid value: both or neither",
                " | FieldValueInvalid | Invalid value: in below 3",
                " | FieldValueInvalid | Invalid value: no max-size label",
            ],
        );
    }

    fn check(schema: Value, object: Value) -> Vec<String> {
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        match validate_value(object, text) {
            Ok(()) => Vec::new(),
            Err(e) => e.0.iter().map(|e| format!("{} | {} | {}", e.field, e.reason, e.message)).collect(),
        }
    }

    /// kube-openapi's words for `oneOf`, `anyOf`, `allOf` and `not`, which
    /// apiextensions reports without a field
    /// (`tests/tests/e2e_optional_one_of.rs` compares them with the
    /// server's).
    #[test]
    fn compositions_read_like_the_servers() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
            "allOf": [{"properties": {"a": {"maxLength": 1}}}],
            "not": {"required": ["c"]}}}});
        assert!(check(schema.clone(), json!({"spec": {"a": "x"}})).is_empty());
        assert_eq!(
            check(schema.clone(), json!({"spec": {"c": "x"}})),
            [
                "<nil> | FieldValueInvalid | Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found none valid",
                "spec.a | FieldValueRequired | Required value",
                "<nil> | FieldValueInvalid | Invalid value: \"\": \"spec\" must not validate the schema (not)",
            ]
        );
        assert_eq!(
            check(schema.clone(), json!({"spec": {"a": "xy", "b": "y"}})),
            [
                "<nil> | FieldValueInvalid | Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found 2 valid alternatives",
                "spec.a | FieldValueTooLong | Too long: may not be more than 1 byte",
                "<nil> | FieldValueInvalid | Invalid value: \"\": \"spec\" must validate all the schemas (allOf). None validated",
            ]
        );
        // An update that leaves the node as it was is not held to it.
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        let two = json!({"spec": {"a": "x", "b": "y"}});
        assert_eq!(super::check(two.clone(), Some(two.clone()), text), Ok(()));
        let errors = super::check(two, Some(json!({"spec": {"a": "x"}})), text).unwrap_err();
        assert_eq!(errors.0.iter().filter_map(composite_node).collect::<Vec<_>>(), ["spec"], "{errors:?}");
        let any = json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert_eq!(
            check(any, json!({})),
            [
                "<nil> | FieldValueInvalid | Invalid value: \"\": \"\" must validate at least one schema (anyOf)",
                "a | FieldValueRequired | Required value",
            ]
        );
    }

    #[test]
    fn bounds_lengths_patterns_enums_and_required_read_like_the_servers() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["image"], "properties": {
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "image": {"type": "string", "minLength": 1},
            "name": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "tags": {"type": "array", "maxItems": 1, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        }}}});
        let errors = check(schema, json!({"spec": {"replicas": 0, "name": "ABCD", "mode": "c", "tags": ["x", "x"]}}));
        assert_eq!(
            errors,
            [
                "spec.mode | FieldValueNotSupported | Unsupported value: \"c\": supported values: \"a\", \"b\"",
                "spec.name | FieldValueTooLong | Too long: may not be more than 3 bytes",
                "spec.replicas | FieldValueInvalid | Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
                "spec.tags | FieldValueTooMany | Too many: 2: must have at most 1 item",
                "spec.image | FieldValueRequired | Required value",
                "spec.tags[1] | FieldValueDuplicate | Duplicate value: \"x\"",
            ]
        );
    }

    /// As the server's validators: a set's or map list's value repeated is
    /// reported once, at its first repeat; a null where `nullable` allows it
    /// is still checked against an enum.
    #[test]
    fn repeats_are_reported_once_and_a_nullable_null_meets_the_enum() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "mode": {"type": "string", "nullable": true, "enum": ["a", "b"]},
            "free": {"type": "string", "nullable": true},
        }}}});
        assert_eq!(
            check(schema, json!({"spec": {"tags": ["x", "x", "x", "y", "y"], "mode": null, "free": null}})),
            [
                "spec.mode | FieldValueNotSupported | Unsupported value: null: supported values: \"a\", \"b\"",
                "spec.tags[1] | FieldValueDuplicate | Duplicate value: \"x\"",
                "spec.tags[4] | FieldValueDuplicate | Duplicate value: \"y\"",
            ]
        );
    }

    /// Null map values are dropped where null is not allowed, or take the
    /// values' default; null list items take the items' default (the
    /// server's pruning and defaulting of nulls).
    #[test]
    fn nulls_in_maps_and_lists_are_pruned_or_defaulted() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "m": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            "d": {"type": "object", "additionalProperties": {"type": "string", "default": "x", "maxLength": 1}},
            "l": {"type": "array", "items": {"type": "integer", "default": 7, "maximum": 5}},
        }}}});
        assert_eq!(
            check(schema, json!({"spec": {"m": {"a": null, "b": "ok"}, "d": {"k": null}, "l": [1, null]}})),
            ["spec.l[1] | FieldValueInvalid | Invalid value: 7: spec.l[1] in body should be less than or equal to 5"]
        );
    }

    #[test]
    fn defaults_apply_before_validation() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "default": 0, "minimum": 1},
        }}}});
        assert_eq!(
            check(schema, json!({"spec": {}})),
            [
                "spec.size | FieldValueInvalid | Invalid value: 0: spec.size in body should be greater than or equal to 1"
            ]
        );
    }

    #[test]
    fn patterns_read_classes_as_re2_does() {
        let re = |p: &str| regex::Regex::new(&re2_ascii_classes(p)).unwrap();
        assert!(!re(r"^\d+$").is_match("٣")); // Arabic-Indic digit: not an RE2 `\d`
        assert!(re(r"^\d+$").is_match("42"));
        assert!(!re(r"^(\S+\s+){4}\S+$").is_match("a\u{a0}b c d e")); // no-break space
        assert!(re(r"^(\S+\s+){4}\S+$").is_match("*/5 * * * *"));
        assert!(re(r"^[\w-]+$").is_match("a-b_1"));
        assert!(!re(r"^[\w-]+$").is_match("é"));
        assert!(re(r"^[]a]+$").is_match("]a"));
    }

    #[test]
    fn multiples_follow_kube_openapi() {
        assert!(is_multiple(0.3, 0.1, false));
        assert!(!is_multiple(0.35, 0.1, false));
        assert!(is_multiple(15.0, 5.0, true));
        assert!(!is_multiple(7.0, 5.0, true));
    }

    #[test]
    fn nulls_are_dropped_then_defaulted_and_map_keys_are_bracketed() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer", "default": 3, "minimum": 1},
            "note": {"type": "string"},
            "sets": {"type": "object", "additionalProperties":
                {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}},
        }}}});
        assert_eq!(
            check(schema, json!({"spec": {"size": null, "note": null, "sets": {"a": ["x", "x"]}}})),
            ["spec.sets[a][1] | FieldValueDuplicate | Duplicate value: \"x\""]
        );
    }

    #[test]
    fn updates_ratchet_errors_at_unchanged_values() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["a"], "properties": {
            "a": {"type": "integer"},
            "n": {"type": "integer", "maximum": 5},
            "l": {"type": "array", "items": {"type": "integer", "maximum": 5}},
        }}}});
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        let old = json!({"spec": {"n": 9, "l": [9]}});
        // Unchanged: the old errors (n, l[0], the missing a) are not the update's.
        assert_eq!(super::check(old.clone(), Some(old.clone()), text), Ok(()));
        // n changed, still too big; the list changed, so its item is checked;
        // `spec` changed, so its missing `a` counts.
        let errors = super::check(json!({"spec": {"n": 8, "l": [9, 1]}}), Some(old), text).unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.l[0]", "spec.n", "spec.a"]);
    }

    /// Integers are compared exactly: 2^53 + 1 and 2^53 are one `f64`, so an
    /// update from one to the other looked unchanged and kept an error away.
    #[test]
    fn big_integers_are_compared_exactly() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 5},
            "e": {"type": "integer", "enum": [9_007_199_254_740_993_i64]},
        }}}});
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        let old = json!({"spec": {"n": 9_007_199_254_740_993_i64}});
        assert_eq!(super::check(old.clone(), Some(old.clone()), text), Ok(()));
        let errors = super::check(json!({"spec": {"n": 9_007_199_254_740_992_i64}}), Some(old), text).unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.n"], "{errors:?}");
        assert_eq!(check(schema.clone(), json!({"spec": {"e": 9_007_199_254_740_993_i64}})), Vec::<String>::new());
        assert_eq!(check(schema, json!({"spec": {"e": 9_007_199_254_740_992_i64}})).len(), 1);
    }

    /// A map key with dots (a label's `app.kubernetes.io/name`) is one step
    /// of the error's path: an invalid value the update leaves as it was is
    /// not the update's error.
    #[test]
    fn ratcheting_finds_map_keys_with_dots() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}},
            "n": {"type": "integer"},
            "sets": {"type": "object", "additionalProperties":
                {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}},
        }}}});
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        let old = json!({"spec": {"labels": {"app.kubernetes.io/name": "toolong", "app": "x"}, "n": 1,
            "sets": {"a.b": ["x", "x"]}}});
        let update = json!({"spec": {"labels": {"app.kubernetes.io/name": "toolong", "app": "y"}, "n": 2,
            "sets": {"a.b": ["x", "x"]}}});
        assert_eq!(super::check(update, Some(old.clone()), text), Ok(()));
        let changed = json!({"spec": {"labels": {"app.kubernetes.io/name": "toolonger"}, "n": 1,
            "sets": {"a.b": ["x", "x"]}}});
        let errors = super::check(changed, Some(old), text).unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["spec.labels.app.kubernetes.io/name"], "{errors:?}");
        // An old object with a repeated set item: the server checks no list
        // of the update for repeats, changed ones included.
        let old = json!({"spec": {"sets": {"a": ["x", "x"]}}});
        let grown = json!({"spec": {"sets": {"a": ["x", "x", "y"], "b": ["z", "z"]}}});
        assert_eq!(super::check(grown.clone(), Some(old), text), Ok(()));
        let errors = super::check(grown, Some(json!({"spec": {}})), text).unwrap_err();
        assert_eq!(errors.0.len(), 2, "{errors:?}");
    }

    /// An embedded object needs its apiVersion and kind, as the server's
    /// `validateEmbeddedResource` requires them.
    #[test]
    fn an_embedded_object_needs_its_api_version_and_kind() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true},
        }}}});
        assert_eq!(
            check(schema.clone(), json!({"spec": {"template": {"kind": ""}}})),
            [
                "spec.template.apiVersion | FieldValueRequired | Required value: must not be empty",
                "spec.template.kind | FieldValueInvalid | Invalid value: \"\": must not be empty",
            ]
        );
        assert!(check(schema, json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod"}}})).is_empty());
    }

    #[test]
    fn floats_print_like_go() {
        assert_eq!(go_float(1.0), "1");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(100000.0), "100000");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(1.5e-7), "1.5e-07");
        assert_eq!(go_float(0.25), "0.25");
    }
}
