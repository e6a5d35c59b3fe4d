//! Kubernetes' own types recognised in a CRD schema: the reverse of
//! [`crate::builtin::expand`]. A schema node that equals the expansion of a
//! built-in definition (descriptions aside) becomes the k8s-openapi type, so
//! an imported `template:` reads as `k8s_openapi::api::core::v1::PodTemplateSpec`
//! and the generator writes the same schema back.
//!
//! Candidates are found by the node's property names (read from the raw
//! table, without expanding anything); only those are expanded and compared.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::builtin::{self, ExpandOptions, KubeVersion};

/// Definitions without properties that still name a useful Rust type. Other
/// property-less definitions (`Duration` is any string, `FieldsV1` and
/// `RawExtension` any object) would claim unrelated fields.
const SCALAR_TYPES: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
];

/// Below this many schema nodes a structural match alone is too weak (many
/// small objects look like `LocalObjectReference`): the descriptions must
/// match too.
const SMALL_TREE: usize = 8;

/// k8s-openapi types that implement no `Default` (a struct holding one
/// cannot derive it).
pub(crate) const NO_DEFAULT: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.api.events.v1.EventSeries",
];

/// The reverse index for one Kubernetes version.
pub(crate) struct BuiltinIndex {
    options: ExpandOptions,
    by_signature: HashMap<String, Vec<&'static str>>,
}

/// A recognised built-in type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Match {
    /// The definition (`io.k8s.api.core.v1.PodTemplateSpec`).
    pub definition: &'static str,
    /// The description the type brings where no field doc replaces it.
    pub description: Option<String>,
}

fn signature(props: Option<&Map<String, Value>>) -> String {
    let mut keys: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
    keys.sort_unstable();
    keys.join(",")
}

impl BuiltinIndex {
    /// Indexes every definition of `version` by its property names.
    pub fn new(version: KubeVersion) -> Self {
        let mut by_signature: HashMap<String, Vec<&'static str>> = HashMap::new();
        for def in builtin::definitions(version) {
            let Some(raw) = builtin::raw(def, version) else { continue };
            let props = raw.get("properties").and_then(Value::as_object);
            if props.is_none_or(Map::is_empty) && !SCALAR_TYPES.contains(&def) {
                continue;
            }
            by_signature.entry(signature(props)).or_default().push(def);
        }
        BuiltinIndex { options: ExpandOptions { version, embedded_object_meta: false }, by_signature }
    }

    /// The description a built-in type brings along (where no field doc replaces it).
    pub fn description(&self, definition: &str) -> Option<String> {
        let expanded = builtin::expand(definition, self.options).ok()?;
        expanded.description.as_deref().map(String::from)
    }

    /// The built-in type whose schema `node` is. `own_description`: whether
    /// a doc comment can give the node its description (a struct field); in
    /// a list's items or a map's values only the type's own description
    /// can appear, so it must be the node's.
    pub fn find(&self, node: &Map<String, Value>, own_description: bool) -> Option<Match> {
        let candidates = self.by_signature.get(&signature(node.get("properties").and_then(Value::as_object)))?;
        let want = canonical(&Value::Object(node.clone()), false);
        let want_described = canonical(&Value::Object(node.clone()), true);
        let node_description = node.get("description").and_then(Value::as_str);
        let mut found: Vec<(bool, Match)> = Vec::new();
        for def in candidates {
            let Ok(expanded) = builtin::expand(def, self.options) else { continue };
            let Ok(expanded) = serde_json::to_value(&*expanded) else { continue };
            if canonical(&expanded, false) != want {
                continue;
            }
            let description = expanded.get("description").and_then(Value::as_str).map(String::from);
            if own_description {
                // The field's doc replaces the type's: without one the type's would show.
                if node_description.is_none() && description.is_some() {
                    continue;
                }
            } else if !same_text(node_description, description.as_deref()) {
                continue;
            }
            let same_descriptions = canonical(&expanded, true) == want_described;
            if !same_descriptions && nodes(&expanded) < SMALL_TREE {
                continue;
            }
            found.push((same_descriptions, Match { definition: def, description }));
        }
        // Identical descriptions first, then Time before MicroTime and the
        // like (the shorter name is the more common type), then by name.
        found.sort_by(|(a_same, a), (b_same, b)| {
            b_same
                .cmp(a_same)
                .then(builtin::short_name(a.definition).len().cmp(&builtin::short_name(b.definition).len()))
                .then(a.definition.cmp(b.definition))
        });
        found.into_iter().next().map(|(_, m)| m)
    }
}

/// `text` with every run of whitespace as one space.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether two descriptions have the same words.
fn same_text(a: Option<&str>, b: Option<&str>) -> bool {
    a.map(words) == b.map(words)
}

/// Counts the schema nodes of a tree.
fn nodes(v: &Value) -> usize {
    let Some(m) = v.as_object() else { return 0 };
    1 + m.get("properties").and_then(Value::as_object).map_or(0, |p| p.values().map(nodes).sum())
        + m.get("items").map_or(0, nodes)
        + m.get("additionalProperties").map_or(0, nodes)
}

/// A schema in a form to compare: `required` sorted, the top-level
/// description left out, nested descriptions kept only with `descriptions`.
pub(crate) fn canonical(v: &Value, descriptions: bool) -> Value {
    fn walk(v: &Value, descriptions: bool, top: bool) -> Value {
        let Some(m) = v.as_object() else { return v.clone() };
        let mut out = Map::new();
        for (k, x) in m {
            match k.as_str() {
                "description" if top || !descriptions => {}
                // Generators wrap descriptions differently (controller-gen
                // keeps Go's line breaks): only the words count.
                "description" => {
                    out.insert(k.clone(), Value::String(words(x.as_str().unwrap_or_default())));
                }
                "properties" => {
                    let props = x
                        .as_object()
                        .map(|p| p.iter().map(|(name, s)| (name.clone(), walk(s, descriptions, false))).collect())
                        .unwrap_or_default();
                    out.insert(k.clone(), Value::Object(props));
                }
                "items" | "additionalProperties" => {
                    out.insert(k.clone(), walk(x, descriptions, false));
                }
                "required" => {
                    let mut r: Vec<Value> = x.as_array().cloned().unwrap_or_default();
                    r.sort_by_key(|a| a.to_string());
                    out.insert(k.clone(), Value::Array(r));
                }
                "anyOf" | "oneOf" => {
                    let list = x.as_array().map(|a| a.iter().map(|s| walk(s, descriptions, false)).collect());
                    out.insert(k.clone(), Value::Array(list.unwrap_or_default()));
                }
                _ => {
                    out.insert(k.clone(), x.clone());
                }
            }
        }
        Value::Object(out)
    }
    walk(v, descriptions, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> BuiltinIndex {
        BuiltinIndex::new(KubeVersion { minor: 37 })
    }

    fn expansion(def: &str) -> Map<String, Value> {
        let opts = ExpandOptions { version: KubeVersion { minor: 37 }, embedded_object_meta: false };
        serde_json::to_value(&*builtin::expand(def, opts).unwrap()).unwrap().as_object().unwrap().clone()
    }

    #[test]
    fn descriptions_match_by_their_words() {
        // controller-gen keeps the Go doc's line breaks where the table's
        // text has spaces: small types must still be found.
        let def = "io.k8s.api.core.v1.SecretKeySelector";
        let mut node = expansion(def);
        let rewrap = |v: &mut Value| {
            if let Some(d) = v.get_mut("description") {
                *d = Value::String(d.as_str().unwrap().replace(' ', "\n"));
            }
        };
        for prop in node.get_mut("properties").unwrap().as_object_mut().unwrap().values_mut() {
            rewrap(prop);
        }
        node.insert("description".into(), "my secret".into());
        assert_eq!(index().find(&node, true).map(|m| m.definition), Some(def));
        rewrap(node.get_mut("properties").unwrap().get_mut("key").unwrap());
        node.get_mut("properties").unwrap()["key"]["description"] = Value::String("other words".into());
        assert_eq!(index().find(&node, true), None, "other words are another type");
    }

    #[test]
    fn finds_a_pod_template_and_a_condition() {
        for def in ["io.k8s.api.core.v1.PodTemplateSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"] {
            let mut node = expansion(def);
            node.insert("description".into(), "my field".into());
            assert_eq!(index().find(&node, true).map(|m| m.definition), Some(def));
            // In a list's items only the type's own description can appear.
            assert_eq!(index().find(&node, false), None);
        }
    }

    #[test]
    fn time_wins_over_micro_time_and_plain_strings_stay_strings() {
        let node: Map<String, Value> =
            serde_json::from_str(r#"{"type": "string", "format": "date-time", "description": "when"}"#).unwrap();
        assert_eq!(index().find(&node, true).map(|m| m.definition), Some("io.k8s.apimachinery.pkg.apis.meta.v1.Time"));
        let node: Map<String, Value> = serde_json::from_str(r#"{"type": "string", "description": "x"}"#).unwrap();
        assert_eq!(index().find(&node, true), None);
    }

    #[test]
    fn small_objects_need_matching_descriptions() {
        let node: Map<String, Value> = serde_json::from_str(
            r#"{"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"name": {"type": "string", "default": ""}}}"#,
        )
        .unwrap();
        assert_eq!(index().find(&node, true), None);
    }
}
