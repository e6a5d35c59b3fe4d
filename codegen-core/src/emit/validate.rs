//! The schema a kind's generated `validate()` checks against: the CRD
//! version's `openAPIV3Schema` as JSON, without what validation does not
//! read (descriptions, examples, external docs); CEL rules stay (the
//! runtime evaluates them with its feature `cel`). The checking itself is the runtime's
//! (`codegen_runtime::validation`), shared by every kind, so that a kind
//! costs its schema text and a two-line method, not a validator of its own.

use serde_json::Value;

use super::schema::{SchemaBuilder, SchemaOptions};
use crate::model::{Kind, Model, Version};

/// The validation schema of `kind` in `version`, as compact JSON. With a
/// status subresource, `status` is left out: a create or update of the
/// object drops it before validating, as the API server does.
pub fn validation_schema(
    model: &Model,
    version: &Version,
    kind: &Kind,
    options: &SchemaOptions,
    status_subresource: bool,
) -> String {
    let mut diags = crate::diag::Diagnostics::new();
    // The CRD's build of this schema has checked its rules and reported.
    let schema = SchemaBuilder::new(model, version, options, &mut diags).without_rule_checks().root(kind);
    let mut value = serde_json::to_value(&schema).unwrap_or(Value::Null);
    strip(&mut value);
    add_rust_patterns(&mut value);
    if status_subresource && let Some(props) = value.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("status");
    }
    value.to_string()
}

/// The key of a validation schema's node that holds its `pattern` as
/// Rust's `regex` reads it, where that differs (`\Q..\E`, octal escapes, a
/// `[` or `&&` inside a class: RE2 syntax the runtime's `regex` spells
/// otherwise). Only in the schema `validate()` checks with, never in a CRD.
pub const RUST_PATTERN_KEY: &str = "x-kube-codegen-rust-pattern";

/// Calls `f` on a schema node and on every schema node below it, following
/// the schema's structure: a property named `description` or `pattern` is a
/// field, and `default`/`enum` values are data.
fn for_each_node(value: &mut Value, f: &mut impl FnMut(&mut serde_json::Map<String, Value>)) {
    let Value::Object(node) = value else { return };
    f(node);
    for (key, child) in node.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "definitions" => {
                if let Value::Object(props) = child {
                    props.values_mut().for_each(|p| for_each_node(p, f));
                }
            }
            "items" | "additionalProperties" | "additionalItems" | "not" => match child {
                Value::Array(schemas) => schemas.iter_mut().for_each(|s| for_each_node(s, f)),
                other => for_each_node(other, f),
            },
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(schemas) = child {
                    schemas.iter_mut().for_each(|s| for_each_node(s, f));
                }
            }
            _ => {}
        }
    }
}

/// Removes the documentation keys of a schema node and of the schema nodes
/// below it.
fn strip(value: &mut Value) {
    for_each_node(value, &mut |node| {
        for key in ["description", "example", "externalDocs", "title"] {
            node.remove(key);
        }
    });
}

/// Adds [`RUST_PATTERN_KEY`] to every node of `schema` (an
/// `openAPIV3Schema` as JSON) whose `pattern` Rust's `regex` spells
/// otherwise, so that the runtime's validation checks it as the API
/// server does.
pub fn add_rust_patterns(schema: &mut Value) {
    for_each_node(schema, &mut |node| {
        let Some(pattern) = node.get("pattern").and_then(Value::as_str) else { return };
        if let Ok(rust) = super::schema::rust_spelling(pattern)
            && rust != pattern
        {
            node.insert(RUST_PATTERN_KEY.into(), Value::String(rust));
        }
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn patterns_rust_spells_otherwise_get_their_rust_spelling() {
        let mut v = json!({"properties": {
            "quoted": {"type": "string", "pattern": "^\\Qa.b\\E[[x]$"},
            "plain": {"type": "string", "pattern": "^[a-z]+$"},
            "pattern": {"type": "object", "properties": {"x": {"pattern": "\\101"}}}}});
        super::add_rust_patterns(&mut v);
        assert_eq!(v["properties"]["quoted"][super::RUST_PATTERN_KEY], "^a\\.b[\\[x]$");
        assert_eq!(v["properties"]["plain"].get(super::RUST_PATTERN_KEY), None);
        // A property named `pattern` is a field.
        assert_eq!(v["properties"]["pattern"].get(super::RUST_PATTERN_KEY), None);
        assert_eq!(v["properties"]["pattern"]["properties"]["x"][super::RUST_PATTERN_KEY], "\\x{41}");
    }

    #[test]
    fn descriptions_go_and_rules_and_data_stay() {
        let mut v = json!({"description": "d", "x-kubernetes-validations": [{"rule": "self > 1"}],
            "properties": {"a": {"type": "object", "description": "x", "default": {"description": "kept"}}}});
        super::strip(&mut v);
        assert_eq!(
            v,
            json!({"x-kubernetes-validations": [{"rule": "self > 1"}],
                "properties": {"a": {"type": "object", "default": {"description": "kept"}}}})
        );
        // A field named `description` keeps its schema.
        let mut v = json!({"properties": {"description": {"type": "string", "maxLength": 3, "description": "d"},
            "list": {"items": {"description": "i", "type": "string"}}}});
        super::strip(&mut v);
        assert_eq!(
            v,
            json!({"properties": {"description": {"type": "string", "maxLength": 3},
                "list": {"items": {"type": "string"}}}})
        );
    }
}
