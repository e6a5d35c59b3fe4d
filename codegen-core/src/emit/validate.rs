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

fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in ["description", "example", "externalDocs"] {
                map.remove(key);
            }
            for (key, child) in map.iter_mut() {
                // A default or enum value is data: an object there is not a schema.
                if key != "default" && key != "enum" {
                    strip(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
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
    }
}
