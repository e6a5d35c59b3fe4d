//! Where each node of a CRD file sits, so that import's warnings, and the
//! generator's errors in the types it wrote, point into the YAML the user
//! gave rather than at the document's first line.
//!
//! The YAML is read a second time, into a tree of nothing but positions
//! (the values come from the first read): every mapping key and every
//! sequence item gets the line and column it starts at, under its JSON
//! pointer from the document's root (`spec/versions/0/schema`).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use serde_saphyr::Spanned;

/// The positions of one YAML document: JSON pointer → (1-based line,
/// 0-based column) of the key or item that holds the node.
#[derive(Debug, Default)]
pub(crate) struct Spots(BTreeMap<String, (usize, usize)>);

impl Spots {
    /// Whether the node at `pointer` has a position of its own.
    pub fn exact(&self, pointer: &str) -> bool {
        self.0.contains_key(pointer)
    }

    /// The position of the node at `pointer`, or of the nearest node above
    /// it that has one (`None` when not even the root has).
    pub fn find(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut at = pointer;
        loop {
            if let Some(spot) = self.0.get(at) {
                return Some(*spot);
            }
            at = at.rsplit_once('/').map(|(up, _)| up)?;
        }
    }
}

/// The positions of every document of a YAML stream, in the order its
/// reader returns the documents (empty ones skipped); `None` when the
/// stream cannot be read that way.
pub(crate) fn read(text: &str) -> Option<Vec<Spots>> {
    let docs = serde_saphyr::from_multiple_with_options::<Node>(text, super::read::yaml_options(text)).ok()?;
    Some(
        docs.into_iter()
            .map(|doc| {
                let mut spots = Spots::default();
                doc.flatten(String::new(), &mut spots.0);
                spots
            })
            .collect(),
    )
}

/// Escapes one JSON pointer segment (`/` and `~`).
pub(crate) fn segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// One JSON pointer segment read back (the inverse of [`segment`]).
pub(crate) fn unsegment(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The JSON pointer below the document's root of an import path, as
/// import's warnings spell them: `spec.versions[v1].schema.openAPIV3Schema`
/// and then property names, `[*]` for a list's items and `.*` for a map's
/// values (`spec.versions[v1].schema.openAPIV3Schema.spec.ports[*].name`);
/// `schemas` are the versions' names with their root schemas. What cannot
/// be followed ends the pointer at the last node found.
pub(crate) fn pointer(path: &str, schemas: &[(&str, &Map<String, Value>)]) -> String {
    let Some(rest) = path.strip_prefix("spec.versions[") else {
        return path.split('.').map(segment).collect::<Vec<_>>().join("/");
    };
    let Some((index, (_, schema))) =
        schemas.iter().enumerate().find(|(_, (name, _))| rest.strip_prefix(*name).is_some_and(|r| r.starts_with(']')))
    else {
        return "spec/versions".into();
    };
    let mut out = format!("spec/versions/{index}");
    let rest = &rest[schemas[index].0.len() + 1..];
    let Some(mut rest) = rest.strip_prefix(".schema.openAPIV3Schema") else {
        // A key of the version itself: `spec.versions[v1].served`.
        if let Some(key) = rest.strip_prefix('.') {
            out.push('/');
            out.push_str(&segment(key));
        }
        return out;
    };
    out.push_str("/schema/openAPIV3Schema");
    let mut node = *schema;
    while !rest.is_empty() {
        let step = if let Some(r) = rest.strip_prefix("[*]") {
            child(node, &["items"]).map(|(n, p)| (n, p, r))
        } else if let Some(r) = rest.strip_prefix(".*").filter(|r| r.is_empty() || r.starts_with(['.', '['])) {
            child(node, &["additionalProperties"]).map(|(n, p)| (n, p, r))
        } else if let Some(r) = rest.strip_prefix('.') {
            property(node, r)
        } else {
            None
        };
        let Some((next, steps, r)) = step else { break };
        out.push('/');
        out.push_str(&steps);
        node = next;
        rest = r;
    }
    out
}

/// `node[keys..]` as an object, with its pointer segments; looked up in
/// `allOf` branches too (import folds them into the node).
fn child<'v>(node: &'v Map<String, Value>, keys: &[&str]) -> Option<(&'v Map<String, Value>, String)> {
    let direct = keys.iter().try_fold(node, |n, k| n.get(*k).and_then(Value::as_object));
    if let Some(found) = direct {
        return Some((found, keys.iter().map(|k| segment(k)).collect::<Vec<_>>().join("/")));
    }
    let branches = node.get("allOf").and_then(Value::as_array)?;
    branches.iter().enumerate().find_map(|(i, b)| {
        let (found, p) = child(b.as_object()?, keys)?;
        Some((found, format!("allOf/{i}/{p}")))
    })
}

/// The longest property name `rest` starts with (names may hold dots),
/// followed by the end or the next step.
fn property<'v, 'r>(node: &'v Map<String, Value>, rest: &'r str) -> Option<(&'v Map<String, Value>, String, &'r str)> {
    let mut names: Vec<&String> = Vec::new();
    let mut collect = |n: &'v Map<String, Value>| {
        if let Some(props) = n.get("properties").and_then(Value::as_object) {
            names.extend(props.keys());
        }
    };
    collect(node);
    for b in node.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        if let Some(b) = b.as_object() {
            collect(b);
        }
    }
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let name = names
        .into_iter()
        .find(|n| rest.strip_prefix(n.as_str()).is_some_and(|r| r.is_empty() || r.starts_with(['.', '['])))?;
    let (found, p) = child(node, &["properties", name])?;
    Some((found, p, &rest[name.len()..]))
}

/// A YAML node reduced to the positions of what it holds.
enum Node {
    Leaf,
    Map(Vec<(Spanned<Key>, Node)>),
    Seq(Vec<Spanned<Node>>),
}

impl Node {
    fn flatten(self, at: String, out: &mut BTreeMap<String, (usize, usize)>) {
        let mut put = |pointer: String, line: u64, column: u64, node: Node| {
            if line > 0 {
                out.entry(pointer.clone()).or_insert((line as usize, column.saturating_sub(1) as usize));
            }
            node.flatten(pointer, out);
        };
        match self {
            Node::Leaf => {}
            Node::Map(entries) => {
                for (key, value) in entries {
                    let spot = key.referenced;
                    put(format!("{at}/{}", segment(&key.value.0)), spot.line(), spot.column(), value);
                }
            }
            Node::Seq(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    let spot = item.referenced;
                    put(format!("{at}/{i}"), spot.line(), spot.column(), item.value);
                }
            }
        }
    }
}

/// A mapping key as text, whatever scalar it is.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key("null".into()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML node")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<Node>>()? {
                    items.push(item);
                }
                Ok(Node::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<Key>>()? {
                    entries.push((key, map.next_value::<Node>()?));
                }
                Ok(Node::Map(entries))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "\
# a comment
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            allOf:
            - properties:
                example.com/key:
                  type: string
            properties:
              ports:
                type: array
                items:
                  properties:
                    name: {type: string, pattern: 'a'}
              labels:
                additionalProperties:
                  maxLength: 3
---
kind: Second
";

    fn schemas(text: &str) -> Vec<Value> {
        serde_saphyr::from_multiple::<Value>(text).unwrap()
    }

    #[test]
    fn keys_and_items_have_their_lines_and_columns() {
        let docs = read(CRD).unwrap();
        assert_eq!(docs.len(), 2);
        let spots = &docs[0];
        assert_eq!(spots.find("/apiVersion"), Some((2, 0)));
        assert_eq!(spots.find("/spec/versions/0"), Some((6, 4)));
        assert_eq!(spots.find("/spec/versions/0/schema/openAPIV3Schema/properties/spec"), Some((11, 10)));
        // Flow mappings too.
        assert_eq!(
            spots.find(
                "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/ports/items/properties/name/pattern"
            ),
            Some((21, 41))
        );
        // Nothing there: the nearest node above.
        assert_eq!(spots.find("/spec/versions/0/schema/nothing/here"), Some((7, 4)));
        assert_eq!(docs[1].find("/kind"), Some((26, 0)));
    }

    #[test]
    fn import_paths_become_pointers() {
        let doc = &schemas(CRD)[0];
        let schema = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"].as_object().unwrap();
        let schemas = [("v0", schema), ("v1", schema)];
        let root = "spec/versions/1/schema/openAPIV3Schema";
        let cases = [
            ("spec.versions[v1].schema.openAPIV3Schema", root.to_string()),
            (
                "spec.versions[v1].schema.openAPIV3Schema.spec.ports[*].name",
                format!("{root}/properties/spec/properties/ports/items/properties/name"),
            ),
            (
                "spec.versions[v1].schema.openAPIV3Schema.spec.labels.*",
                format!("{root}/properties/spec/properties/labels/additionalProperties"),
            ),
            // A name with a dot and a slash, found in an `allOf` branch.
            (
                "spec.versions[v1].schema.openAPIV3Schema.spec.example.com/key",
                format!("{root}/properties/spec/allOf/0/properties/example.com~1key"),
            ),
            // What is not there ends the pointer.
            ("spec.versions[v1].schema.openAPIV3Schema.spec.nope.name", format!("{root}/properties/spec")),
            ("spec.versions[v0].served", "spec/versions/0/served".into()),
            ("spec.conversion", "spec/conversion".into()),
        ];
        for (path, want) in cases {
            assert_eq!(pointer(path, &schemas), want, "{path}");
        }
        let spots = &read(CRD).unwrap()[0];
        let at = format!("/{}", pointer("spec.versions[v0].schema.openAPIV3Schema.spec.labels.*", &schemas[..1]));
        assert_eq!(spots.find(&at), Some((23, 16)));
    }
}
