//! CEL rules (`#[validate(rule = "..")]`) checked when the CRD is written:
//! a rule that does not parse, or that names a property the schema node
//! does not declare (`self.maxReplica` for `maxReplicas`), makes the API
//! server refuse the whole CRD at install time. controller-gen copies
//! rules unchecked.
//!
//! Only what is certain is reported: a property is unknown only in an
//! object node that declares its properties and keeps no others (no
//! `additionalProperties`, no `x-kubernetes-preserve-unknown-fields`, no
//! embedded resource); paths through lists, maps, comprehension variables
//! and anything else are left to the API server, and so are type errors
//! and the cost budget. `tests/tests/cel_rules_oracle.rs` checks the
//! verdicts against kube-apiserver's.

use super::schema::JsonSchemaProps;
use cel::common::ast::{EntryExpr, Expr};

/// What is wrong with a rule.
#[derive(Clone, Debug)]
pub(crate) enum Problem {
    /// It does not parse: the parser's message.
    Syntax(String),
    /// `path` (`self.spec.maxReplica`) names `field`, which its object
    /// does not declare; `known` are the names it does.
    UnknownField { path: String, field: String, known: Vec<String> },
}

/// The names rules give a property: escaped as the API server declares it
/// (`x-y` → `x__dash__y`, ...), and its own name, which the API server
/// resolves too for a reserved word (`namespace` as `__namespace__`).
fn names_in_rules(property: &str) -> Vec<String> {
    let mut names = vec![property.to_string()];
    names.extend(crate::ident::cel_property(property).filter(|escaped| escaped != property));
    names
}

/// The problems of `rule` on the schema node `node`.
pub(crate) fn check(rule: &str, node: &JsonSchemaProps) -> Vec<Problem> {
    // The API server's CEL parses optional syntax (`self.?x`, `{?k: v}`).
    let expr = match cel::parser::Parser::new().enable_optional_syntax(true).parse(rule) {
        Ok(expr) => expr,
        Err(e) => return vec![Problem::Syntax(e.to_string())],
    };
    let mut problems = Vec::new();
    walk(&expr.expr, node, &mut problems);
    problems
}

/// A chain of field selections from `self` or `oldSelf`, plain or
/// optional (`self.?spec.?x`): its names.
fn chain(expr: &Expr) -> Option<Vec<String>> {
    match expr {
        Expr::Ident(root) if root == "self" || root == "oldSelf" => Some(vec![root.clone()]),
        Expr::Select(select) => {
            let mut path = chain(&select.operand.expr)?;
            path.push(select.field.clone());
            Some(path)
        }
        Expr::Call(call) if call.func_name == cel::common::ast::operators::OPT_SELECT && call.target.is_none() => {
            let [operand, field] = call.args.as_slice() else { return None };
            let Expr::Literal(cel::common::ast::LiteralValue::String(field)) = &field.expr else { return None };
            let mut path = chain(&operand.expr)?;
            path.push(field.inner().to_owned());
            Some(path)
        }
        _ => None,
    }
}

fn walk(expr: &Expr, node: &JsonSchemaProps, problems: &mut Vec<Problem>) {
    if let Some(path) = chain(expr) {
        check_path(&path, node, problems);
        return;
    }
    match expr {
        Expr::Select(select) => walk(&select.operand.expr, node, problems),
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                walk(&target.expr, node, problems);
            }
            for arg in &call.args {
                walk(&arg.expr, node, problems);
            }
        }
        Expr::Comprehension(c) => {
            for part in [&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                walk(&part.expr, node, problems);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|e| walk(&e.expr, node, problems)),
        Expr::Map(map) => {
            for entry in &map.entries {
                if let EntryExpr::MapEntry(e) = &entry.expr {
                    walk(&e.key.expr, node, problems);
                    walk(&e.value.expr, node, problems);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value.expr, node, problems);
                }
            }
        }
        _ => {}
    }
}

/// Follows `path` (`["self", "spec", "replicas"]`) through the schema.
fn check_path(path: &[String], node: &JsonSchemaProps, problems: &mut Vec<Problem>) {
    let mut node = node;
    for (i, field) in path.iter().enumerate().skip(1) {
        // A resource's own `apiVersion`, `kind` and `metadata` (at the root,
        // or an embedded resource) are the API server's to judge.
        if matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
            return;
        }
        let closed = node.type_.as_deref() == Some("object")
            && node.additional_properties.is_none()
            && node.x_preserve_unknown_fields != Some(true)
            && node.x_embedded_resource != Some(true)
            && node.properties.as_ref().is_some_and(|p| !p.is_empty());
        if !closed {
            return;
        }
        let properties = node.properties.as_ref().expect("checked above");
        let found = properties.iter().find(|(name, _)| names_in_rules(name).contains(field));
        match found {
            Some((_, child)) => node = child,
            None => {
                problems.push(Problem::UnknownField {
                    path: path[..=i].join("."),
                    field: field.clone(),
                    known: properties.keys().cloned().collect(),
                });
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn object(properties: &[(&str, JsonSchemaProps)]) -> JsonSchemaProps {
        JsonSchemaProps {
            type_: Some("object".into()),
            properties: Some(std::sync::Arc::new(
                properties.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>(),
            )),
            ..Default::default()
        }
    }

    fn typed(t: &str) -> JsonSchemaProps {
        JsonSchemaProps { type_: Some(t.into()), ..Default::default() }
    }

    fn unknown(rule: &str, node: &JsonSchemaProps) -> Vec<String> {
        check(rule, node)
            .into_iter()
            .map(|p| match p {
                Problem::Syntax(_) => "syntax".to_string(),
                Problem::UnknownField { path, .. } => path,
            })
            .collect()
    }

    #[test]
    fn fields_are_looked_up_where_the_schema_is_certain() {
        let spec = object(&[
            ("minReplicas", typed("integer")),
            ("maxReplicas", typed("integer")),
            ("x-y", typed("string")),
            ("namespace", typed("string")),
            (
                "labels",
                JsonSchemaProps {
                    additional_properties: Some(std::sync::Arc::new(typed("string"))),
                    ..typed("object")
                },
            ),
            ("free", JsonSchemaProps { x_preserve_unknown_fields: Some(true), ..typed("object") }),
            ("items", JsonSchemaProps { items: None, ..typed("array") }),
        ]);
        assert!(unknown("self.minReplicas <= self.maxReplicas", &spec).is_empty());
        assert_eq!(unknown("self.minReplicas <= self.maxReplica", &spec), ["self.maxReplica"]);
        assert_eq!(
            unknown("has(self.mode) && oldSelf.modes == self.minReplicas", &spec),
            ["self.mode", "oldSelf.modes"]
        );
        assert!(unknown("self.x__dash__y == 'a' && self.__namespace__ == self.namespace", &spec).is_empty());
        // Nothing certain below a map, an open object or a list, nor
        // through comprehension variables.
        assert!(unknown("self.labels.anything == 'a' && self.free.whatever", &spec).is_empty());
        assert!(unknown("self.items.all(i, i.name != '')", &spec).is_empty());
        // An embedded resource holds more than its declared properties.
        let embedded = JsonSchemaProps { x_embedded_resource: Some(true), ..spec.clone() };
        assert!(unknown("self.spec.replicas > 0 && self.maxReplica > 0", &embedded).is_empty());
        assert_eq!(unknown("self.minReplicas ||", &spec), ["syntax"]);
        // Optional syntax parses, and its selections are looked up too.
        assert!(unknown("self.?minReplicas.orValue(0) <= self.maxReplicas", &spec).is_empty());
        assert_eq!(unknown("self.?maxReplica.hasValue()", &spec), ["self.maxReplica"]);
    }
}
