//! Local validation: an object checked against its CRD's OpenAPI schema the
//! way kube-apiserver checks a custom resource on create — defaults applied
//! first, then the schema validator (kube-openapi's) with its field paths and
//! messages, then the list-type (`set`/`map`) uniqueness checks — so a
//! controller or webhook can reject an object without a round trip, with
//! the very errors the server would return.
//!
//! Generated kinds call [`validate`] from their `validate()` method with the
//! schema kube-codegen embeds next to them. What stays server-side only:
//! `x-kubernetes-validations` (CEL rules) and string `format`s; see
//! docs/validation.md.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::{Map, Value};

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
    let value = serde_json::to_value(object).map_err(|e| {
        FieldErrors(vec![FieldError { field: String::new(), reason: "InternalError", message: e.to_string() }])
    })?;
    validate_value(value, schema)
}

/// [`validate`] on an object already in JSON form.
pub fn validate_value(mut object: Value, schema: &'static str) -> Result<(), FieldErrors> {
    let schema = compiled(schema);
    schema.apply_defaults(&mut object);
    let mut errors = Vec::new();
    schema.validate(&object, "", &mut errors);
    schema.check_list_types(&object, "", &mut errors);
    if errors.is_empty() { Ok(()) } else { Err(FieldErrors(errors)) }
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
}

impl Node {
    fn new(v: &Value) -> Node {
        let u = |k: &str| v.get(k).and_then(Value::as_u64);
        let f = |k: &str| v.get(k).and_then(Value::as_f64);
        let b = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
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
                let re = regex::Regex::new(&p).ok();
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
            int_or_string: b("x-kubernetes-int-or-string"),
        }
    }

    /// Structural defaulting: a missing property with a default gets it
    /// (objects, list items and map values alike), recursively.
    fn apply_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (name, prop) in &self.properties {
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
                    for (name, child) in map.iter_mut() {
                        if !self.properties.contains_key(name) {
                            additional.apply_defaults(child);
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(node) = &self.items {
                    items.iter_mut().for_each(|i| node.apply_defaults(i));
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
        if let Some(values) = &self.enum_values
            && !values.iter().any(|v| json_equal(v, value))
        {
            let supported: Vec<String> = values
                .iter()
                .map(|v| match v {
                    Value::String(s) => go_quote(s),
                    other => go_quote(&other.to_string()),
                })
                .collect();
            out.push(FieldError {
                field: field(path),
                reason: "FieldValueNotSupported",
                message: format!("Unsupported value: {}: supported values: {}", go_value(value), supported.join(", ")),
            });
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
                    && (x / m).fract() != 0.0
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
                            additional.check_list_types(child, &format!("{path}[{}]", go_quote(key)), out);
                        }
                    }
                }
            }
            Value::Array(items) => {
                match self.list_type.as_deref() {
                    Some("set") => {
                        for (i, item) in items.iter().enumerate() {
                            if items[..i].iter().any(|earlier| json_equal(earlier, item)) {
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
                            if items[..i].iter().any(|earlier| key_of(earlier) == key) {
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

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
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

/// Go's `%q` of a string (printable ASCII as is, the rest escaped).
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(schema: Value, object: Value) -> Vec<String> {
        let text: &'static str = Box::leak(schema.to_string().into_boxed_str());
        match validate_value(object, text) {
            Ok(()) => Vec::new(),
            Err(e) => e.0.iter().map(|e| format!("{} | {} | {}", e.field, e.reason, e.message)).collect(),
        }
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
