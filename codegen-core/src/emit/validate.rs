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
    let schema = SchemaBuilder::new(model, version, options, &mut diags).root(kind);
    let mut value = serde_json::to_value(&schema).unwrap_or(Value::Null);
    strip(&mut value);
    if status_subresource && let Some(props) = value.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("status");
    }
    value.to_string()
}

/// Removes the documentation keys of a schema node and of the schema nodes
/// below it, following the schema's structure: a property named
/// `description` is a field, not documentation, and `default`/`enum` values
/// are data.
fn strip(value: &mut Value) {
    let Value::Object(node) = value else { return };
    for key in ["description", "example", "externalDocs", "title"] {
        node.remove(key);
    }
    for (key, child) in node.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "definitions" => {
                if let Value::Object(props) = child {
                    props.values_mut().for_each(strip);
                }
            }
            "items" | "additionalProperties" | "additionalItems" | "not" => match child {
                Value::Array(schemas) => schemas.iter_mut().for_each(strip),
                other => strip(other),
            },
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(schemas) = child {
                    schemas.iter_mut().for_each(strip);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
