//! Hub-and-spoke conversion support in `register.rs`: for every version of
//! a kind with a conversion webhook other than the hub (the storage
//! version), the fields it shares with the hub — same JSON name, same
//! schema, same required-ness, found by walking both CRD schemas — as JSON
//! pointers. `codegen_runtime::webhook::conversion::copy_fields` copies
//! them; the user's `Convertible` converts the rest.

use serde_json::Value;

use super::schema::{SchemaBuilder, SchemaOptions};
use crate::diag::Diagnostics;
use crate::model::{Group, Kind, Model, Version};

/// The shared fields of `kind` in `version` with its hub, or `None` when
/// the kind has no conversion webhook, one version, or this version is the
/// hub: (hub version name, JSON pointers).
pub fn hub_common_fields(
    model: &Model,
    group: &Group,
    version: &Version,
    kind: &Kind,
    options: &SchemaOptions,
) -> Option<(String, Vec<String>)> {
    let versions: Vec<(&Version, &Kind)> =
        group.versions.iter().filter_map(|v| v.kinds.iter().find(|k| k.kind == kind.kind).map(|k| (v, k))).collect();
    if versions.len() < 2 || versions.iter().all(|(_, k)| k.conversion_webhook.is_none()) {
        return None;
    }
    let (hub_version, hub_kind) = versions.iter().find(|(_, k)| k.storage.is_some())?;
    if hub_version.name == version.name {
        return None;
    }
    let schema = |v: &Version, k: &Kind| {
        let mut diags = Diagnostics::new();
        let mut value = serde_json::to_value(SchemaBuilder::new(model, v, options, &mut diags).root(k)).ok()?;
        strip_descriptions(&mut value);
        Some(value)
    };
    let (spoke, hub) = (schema(version, kind)?, schema(hub_version, hub_kind)?);
    let mut pointers = Vec::new();
    common(&spoke, &hub, "", true, &mut pointers);
    Some((hub_version.name.clone(), pointers))
}

fn strip_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("description");
            for (key, child) in map.iter_mut() {
                if key != "default" && key != "enum" {
                    strip_descriptions(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

fn required(schema: &Value, name: &str) -> bool {
    schema["required"].as_array().is_some_and(|r| r.iter().any(|n| n == name))
}

/// The JSON pointer escape of one property name.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Adds the pointers of the properties of two object schemas that agree;
/// recurses into properties that are objects on both sides but differ.
fn common(spoke: &Value, hub: &Value, at: &str, root: bool, out: &mut Vec<String>) {
    let (Some(sp), Some(hp)) = (spoke["properties"].as_object(), hub["properties"].as_object()) else { return };
    let mut names: Vec<&String> = sp.keys().filter(|n| hp.contains_key(*n)).collect();
    names.sort();
    for name in names {
        // apiVersion and kind are the conversion's to set.
        if root && (name == "apiVersion" || name == "kind") {
            continue;
        }
        let pointer = format!("{at}/{}", escape(name));
        let (s, h) = (&sp[name], &hp[name]);
        if s == h && required(spoke, name) == required(hub, name) {
            out.push(pointer);
        } else if s["properties"].is_object() && h["properties"].is_object() {
            common(s, h, &pointer, false, out);
        }
    }
}

/// The Rust items for `register.rs`: a constant on the kind.
pub fn register_items(kind: &Kind, hub_version: &str, pointers: &[String]) -> String {
    let list: Vec<String> = pointers.iter().map(|p| format!("{p:?}")).collect();
    format!(
        "\nimpl super::{rust} {{\n\
         /// The fields this version of `{kind}` shares with its hub, `{hub_version}` (the storage version):\n\
         /// same JSON name, same schema, same required-ness, as JSON pointers. Copy them with\n\
         /// `codegen_runtime::webhook::conversion::copy_fields` in the `Convertible` implementation\n\
         /// and convert the rest by hand.\n\
         pub const HUB_COMMON_FIELDS: &'static [&'static str] = &[{}];\n}}\n",
        list.join(", "),
        rust = kind.rust_name,
        kind = kind.kind,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn common_fields_agree_in_name_schema_and_required_ness() {
        let spoke = json!({"type": "object", "required": ["spec"], "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["name", "a/b"], "properties": {
                "name": {"type": "string"},
                "a/b": {"type": "integer"},
                "size": {"type": "integer", "minimum": 1},
                "only": {"type": "string"},
                "nested": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}}}}}}});
        let hub = json!({"type": "object", "required": ["spec"], "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["a/b"], "properties": {
                "name": {"type": "string"},
                "a/b": {"type": "integer"},
                "size": {"type": "integer", "minimum": 0},
                "nested": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}}}}}});
        let mut out = Vec::new();
        common(&spoke, &hub, "", true, &mut out);
        // `name` is required in one version only, `size` has another
        // minimum, `y` another type, `only` is in one version.
        assert_eq!(out, ["/metadata", "/spec/a~1b", "/spec/nested/x"]);
    }
}
