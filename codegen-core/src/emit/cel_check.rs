//! CEL rules (`#[validate(rule = "..")]`) checked when the CRD is written:
//! a rule that does not parse, or that names a property the schema node
//! does not declare (`self.maxReplica` for `maxReplicas`), makes the API
//! server refuse the whole CRD at install time. controller-gen copies
//! rules unchecked.
//!
//! Only what is certain is reported: a property is unknown only in an
//! object node that declares its properties and keeps no others (no
//! `additionalProperties`, no `x-kubernetes-preserve-unknown-fields`, no
//! embedded resource). Paths start at `self`, `oldSelf` or the variable
//! of a comprehension over a list whose items' schema is known
//! (`self.targets.all(t, t.name != '')`), through index steps into lists
//! and maps (`self.targets[0].name`, `self.routes['a'].port`);
//! anything else is left to the API server, and so are type errors but
//! one: a field of a plain type met by a literal of another type in a
//! comparison or arithmetic (`self.replicas == '3'`, `self.replicas ==
//! 1.0`; an `int` and a `double` may be ordered). The
//! cost budget is [`super::cel_cost`]'s. `tests/tests/cel_rules_oracle.rs`
//! checks the verdicts against kube-apiserver's.

use super::schema::JsonSchemaProps;
use cel::common::ast::{EntryExpr, Expr};

/// What is wrong with a rule.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Problem {
    /// It does not parse: the parser's message.
    Syntax(String),
    /// `path` (`self.spec.maxReplica`) names `field`, which its object
    /// does not declare; `known` are the names it does.
    UnknownField { path: String, field: String, known: Vec<String> },
    /// `path` names a field the API server does not declare to CEL: one
    /// without a type (free-form JSON), or one an object keeps only as an
    /// unknown field (`x-kubernetes-preserve-unknown-fields`).
    Undeclared { path: String, why: &'static str },
    /// The rule reads `oldSelf` where the API server cannot match a value
    /// with its old one: below the items of a list that is not a list-map.
    Uncorrelatable,
    /// `fieldPath` is not a path the API server takes: `why`.
    FieldPath { why: String },
    /// A problem of the rule's `messageExpression`.
    InMessage(Box<Problem>),
    /// `path`, of CEL type `path_type`, meets a literal of another type
    /// (`self.replicas == '3'`) in `op`: no overload takes the two.
    Mismatch { path: String, path_type: &'static str, literal: String, literal_type: &'static str, op: &'static str },
}

/// The names rules give a property: escaped as the API server declares it
/// (`x-y` → `x__dash__y`, ...), and its own name, which the API server
/// resolves too for a reserved word (`namespace` as `__namespace__`).
pub(crate) fn names_in_rules(property: &str) -> Vec<String> {
    let mut names = vec![property.to_string()];
    names.extend(crate::ident::cel_property(property).filter(|escaped| escaped != property));
    names
}

/// The problems of `rule` on the schema node `node`; `correlatable`:
/// whether the API server can match the node's value with its old one (it
/// is not below the items of a list other than a list-map).
pub(crate) fn check(rule: &str, node: &JsonSchemaProps, correlatable: bool) -> Vec<Problem> {
    // The API server's CEL parses optional syntax (`self.?x`, `{?k: v}`).
    let expr = match cel::parser::Parser::new().enable_optional_syntax(true).parse(rule) {
        Ok(expr) => expr,
        Err(e) => return vec![Problem::Syntax(e.to_string())],
    };
    let mut problems = Vec::new();
    let scope = vec![("self".to_string(), Some(node)), ("oldSelf".to_string(), Some(node))];
    walk(&expr.expr, &scope, &mut problems);
    if !correlatable && reads_old_self(&expr.expr) {
        problems.push(Problem::Uncorrelatable);
    }
    problems
}

/// The problems of a rule's `messageExpression` (its syntax and the names
/// it reads) and `fieldPath`.
pub(crate) fn check_parts(
    message_expression: Option<&str>,
    field_path: Option<&str>,
    node: &JsonSchemaProps,
) -> Vec<Problem> {
    let mut problems: Vec<Problem> = message_expression
        .map(|m| check(m, node, true).into_iter().map(|p| Problem::InMessage(Box::new(p))).collect())
        .unwrap_or_default();
    if let Some(why) = field_path.and_then(|p| field_path_problem(p, node)) {
        problems.push(Problem::FieldPath { why });
    }
    problems
}

/// Whether `expr` reads `oldSelf`.
fn reads_old_self(expr: &Expr) -> bool {
    let mut found = false;
    visit(expr, &mut |e| found |= matches!(e, Expr::Ident(name) if name == "oldSelf"));
    found
}

/// Calls `f` on `expr` and every expression in it.
fn visit(expr: &Expr, f: &mut impl FnMut(&Expr)) {
    f(expr);
    match expr {
        Expr::Select(select) => visit(&select.operand.expr, f),
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                visit(&target.expr, f);
            }
            call.args.iter().for_each(|a| visit(&a.expr, f));
        }
        Expr::Comprehension(c) => {
            for part in [&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                visit(&part.expr, f);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|e| visit(&e.expr, f)),
        Expr::Map(map) => {
            for entry in &map.entries {
                if let EntryExpr::MapEntry(e) = &entry.expr {
                    visit(&e.key.expr, f);
                    visit(&e.value.expr, f);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(field) = &entry.expr {
                    visit(&field.value.expr, f);
                }
            }
        }
        _ => {}
    }
}

/// What is wrong with a rule's `fieldPath` on `node`, as the API server
/// reads it: `.name` steps and `['key']` steps from the node, each naming
/// a declared property (or any key of a map), no list index.
fn field_path_problem(path: &str, node: &JsonSchemaProps) -> Option<String> {
    let mut rest = path;
    let mut node = Some(node);
    if !rest.starts_with(['.', '[']) {
        return Some("it starts with `.` (`.spec.replicas`, relative to the rule's field)".into());
    }
    while !rest.is_empty() {
        let (name, after) = if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            (&r[..end], &r[end..])
        } else if let Some(r) = rest.strip_prefix("['") {
            let Some(end) = r.find("']") else {
                return Some("a `['` step is not closed with `']`".into());
            };
            (&r[..end], &r[end + 2..])
        } else if rest.starts_with('[') {
            return Some("it names a list item (a field path may not index a list)".into());
        } else {
            return Some(format!("`{rest}` is not a step (`.name` or `['name']`)"));
        };
        if name.is_empty() {
            return Some("it has an empty step".into());
        }
        node = match node {
            Some(n) if n.additional_properties.is_some() => n.additional_properties.as_deref(),
            Some(n) if n.type_.as_deref() == Some("object") && n.x_preserve_unknown_fields != Some(true) => {
                match n.properties.as_ref().and_then(|p| p.get(name)) {
                    Some(child) => Some(child),
                    None if n.x_embedded_resource == Some(true) => None,
                    None => return Some(format!("`{name}` is not a property of the rule's field")),
                }
            }
            Some(n) if n.type_.as_deref() == Some("array") => {
                return Some("it names a list item (a field path may not index a list)".into());
            }
            _ => None,
        };
        rest = after;
    }
    None
}

/// The names a rule can start a path from: `self`, `oldSelf` and the
/// variables of the comprehensions around (`c` in `self.items.all(c, ..)`),
/// each with the schema node it stands for, if known. The last binding of
/// a name wins.
type Scope<'s> = Vec<(String, Option<&'s JsonSchemaProps>)>;

/// A step of a path that indexes a list or a map (`self.targets[0]`,
/// `self.routes['a']`, `self.routes[?k]`): the items or the values.
const INDEXED: &str = "[]";

/// A chain of field selections and index steps from a name of `scope`,
/// plain or optional (`self.?spec.?x`, `self.targets[0].name`): its names,
/// [`INDEXED`] for an index step. The index expressions are gathered in
/// `indices`.
fn chain<'e>(expr: &'e Expr, scope: &Scope<'_>, indices: &mut Vec<&'e Expr>) -> Option<Vec<String>> {
    use cel::common::ast::operators::{INDEX, OPT_INDEX, OPT_SELECT};
    match expr {
        Expr::Ident(root) if scope.iter().any(|(name, _)| name == root) => Some(vec![root.clone()]),
        Expr::Select(select) => {
            let mut path = chain(&select.operand.expr, scope, indices)?;
            path.push(select.field.clone());
            Some(path)
        }
        Expr::Call(call) if call.func_name == OPT_SELECT && call.target.is_none() => {
            let [operand, field] = call.args.as_slice() else { return None };
            let Expr::Literal(cel::common::ast::LiteralValue::String(field)) = &field.expr else { return None };
            let mut path = chain(&operand.expr, scope, indices)?;
            path.push(field.inner().to_owned());
            Some(path)
        }
        Expr::Call(call) if (call.func_name == INDEX || call.func_name == OPT_INDEX) && call.target.is_none() => {
            let [operand, index] = call.args.as_slice() else { return None };
            let mut path = chain(&operand.expr, scope, indices)?;
            indices.push(&index.expr);
            path.push(INDEXED.to_owned());
            Some(path)
        }
        _ => None,
    }
}

/// `path` as a rule spells it, an index step as `[..]`.
fn spell(path: &[String]) -> String {
    let mut text = String::new();
    for (i, step) in path.iter().enumerate() {
        if step == INDEXED {
            text.push_str("[..]");
        } else {
            if i > 0 {
                text.push('.');
            }
            text.push_str(step);
        }
    }
    text
}

/// The node a path's root stands for.
fn root<'s>(path: &[String], scope: &Scope<'s>) -> Option<&'s JsonSchemaProps> {
    scope.iter().rev().find(|(name, _)| *name == path[0]).and_then(|(_, node)| *node)
}

/// The operators whose operands must be of one type, with how a message
/// names them and whether numbers of different types mix (the API server's
/// CEL compares an `int` with a `double` or a `uint`, but has no `==` or
/// arithmetic across them).
const SAME_TYPE_OPERATORS: [(&str, &str, bool); 11] = {
    use cel::common::ast::operators::*;
    [
        (EQUALS, "==", false),
        (NOT_EQUALS, "!=", false),
        (LESS, "<", true),
        (LESS_EQUALS, "<=", true),
        (GREATER, ">", true),
        (GREATER_EQUALS, ">=", true),
        (ADD, "+", false),
        (SUBSTRACT, "-", false),
        (MULTIPLY, "*", false),
        (DIVIDE, "/", false),
        (MODULO, "%", false),
    ]
};

/// The CEL type the API server declares for a schema node, where it is
/// certain and plain: `int`, `double`, `bool`, or `string` for a string
/// without a `format` (some formats are other types: `date-time` a
/// timestamp, `byte` bytes).
fn cel_type(node: &JsonSchemaProps) -> Option<&'static str> {
    if node.x_int_or_string == Some(true) {
        return None;
    }
    match node.type_.as_deref()? {
        "integer" => Some("int"),
        "number" => Some("double"),
        "boolean" => Some("bool"),
        "string" if node.format.as_deref().is_none_or(str::is_empty) => Some("string"),
        _ => None,
    }
}

/// A literal's CEL type and its text; `None` for `null`.
fn literal(expr: &Expr) -> Option<(&'static str, String)> {
    use cel::common::ast::LiteralValue;
    let Expr::Literal(value) = expr else { return None };
    Some(match value {
        LiteralValue::Boolean(b) => ("bool", b.inner().to_string()),
        LiteralValue::Int(i) => ("int", i.inner().to_string()),
        LiteralValue::UInt(u) => ("uint", format!("{}u", u.inner())),
        LiteralValue::Double(d) => ("double", format!("{:?}", d.inner())),
        LiteralValue::String(text) => ("string", format!("'{}'", text.inner())),
        LiteralValue::Bytes(_) => ("bytes", "b'..'".to_owned()),
        LiteralValue::Null => return None,
    })
}

/// Whether no operator of [`SAME_TYPE_OPERATORS`] takes CEL types `a` and
/// `b` together; `numbers_mix` as there.
fn types_differ(a: &str, b: &str, numbers_mix: bool) -> bool {
    let number = |t: &str| matches!(t, "int" | "uint" | "double");
    a != b && !(numbers_mix && number(a) && number(b))
}

/// Whether a chain takes an optional step (`self.?x`, `m[?k]`): its value
/// is then an optional, not the field's type.
fn optional(expr: &Expr) -> bool {
    use cel::common::ast::operators::{INDEX, OPT_INDEX, OPT_SELECT};
    match expr {
        Expr::Select(select) => select.test || optional(&select.operand.expr),
        Expr::Call(call) if call.func_name == OPT_SELECT || call.func_name == OPT_INDEX => true,
        Expr::Call(call) if call.func_name == INDEX => call.args.first().is_some_and(|a| optional(&a.expr)),
        _ => false,
    }
}

/// [`Problem::Mismatch`] of `call` (`self.replicas == '3'`), if it is one.
fn mismatch(call: &cel::common::ast::CallExpr, scope: &Scope<'_>) -> Option<Problem> {
    let (_, op, numbers_mix) = SAME_TYPE_OPERATORS.iter().find(|(name, ..)| *name == call.func_name)?;
    let [left, right] = call.args.as_slice() else { return None };
    [(left, right), (right, left)].into_iter().find_map(|(operand, other)| {
        let (literal_type, literal) = literal(&other.expr)?;
        if optional(&operand.expr) {
            return None;
        }
        let path = chain(&operand.expr, scope, &mut Vec::new())?;
        let path_type = cel_type(follow(&path, root(&path, scope)?, None)?)?;
        types_differ(path_type, literal_type, *numbers_mix).then(|| Problem::Mismatch {
            path: spell(&path),
            path_type,
            literal,
            literal_type,
            op,
        })
    })
}

fn walk<'s>(expr: &Expr, scope: &Scope<'s>, problems: &mut Vec<Problem>) {
    if let Expr::Call(call) = expr
        && call.target.is_none()
        && let Some(problem) = mismatch(call, scope)
    {
        problems.push(problem);
    }
    let mut indices = Vec::new();
    if let Some(path) = chain(expr, scope, &mut indices) {
        if let Some(node) = root(&path, scope) {
            follow(&path, node, Some(problems));
        }
        for index in indices {
            walk(index, scope, problems);
        }
        return;
    }
    match expr {
        Expr::Select(select) => walk(&select.operand.expr, scope, problems),
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                walk(&target.expr, scope, problems);
            }
            // A call the parser expands no macro for may bind names given
            // as its arguments (`cel.bind(v, ..)`, `optMap(v, ..)`,
            // two-variable comprehensions): they stand for nothing known in
            // its other arguments.
            let named = call.func_name.starts_with(|c: char| c.is_ascii_alphabetic());
            let bound: Vec<String> = call
                .args
                .iter()
                .filter_map(|arg| match &arg.expr {
                    Expr::Ident(name) if named => Some(name.clone()),
                    _ => None,
                })
                .collect();
            let inner;
            let shadowed = if bound.is_empty() {
                scope
            } else {
                inner = scope.iter().cloned().chain(bound.into_iter().map(|name| (name, None))).collect();
                &inner
            };
            // `cel.bind(v, value, body)`: `v` is bound in the body only.
            let binds_in_body = call.func_name == "bind" && call.args.len() == 3;
            for (at, arg) in call.args.iter().enumerate() {
                walk(&arg.expr, if binds_in_body && at == 1 { scope } else { shadowed }, problems);
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range.expr, scope, problems);
            walk(&c.accu_init.expr, scope, problems);
            // The variable stands for a list's items; a map's keys, or
            // anything unknown, are not looked into.
            let range = chain(&c.iter_range.expr, scope, &mut Vec::new())
                .and_then(|path| root(&path, scope).and_then(|node| follow(&path, node, None)));
            let items = range.filter(|n| n.type_.as_deref() == Some("array")).and_then(|n| n.items.as_deref());
            let mut inner = scope.clone();
            match &c.iter_var2 {
                // `all(i, v, ..)` over a list: an index and an item.
                Some(second) => {
                    inner.push((c.iter_var.clone(), None));
                    inner.push((second.clone(), items));
                }
                None => inner.push((c.iter_var.clone(), items)),
            }
            inner.push((c.accu_var.clone(), None));
            for part in [&c.loop_cond, &c.loop_step, &c.result] {
                walk(&part.expr, &inner, problems);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|e| walk(&e.expr, scope, problems)),
        Expr::Map(map) => {
            for entry in &map.entries {
                if let EntryExpr::MapEntry(e) = &entry.expr {
                    walk(&e.key.expr, scope, problems);
                    walk(&e.value.expr, scope, problems);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value.expr, scope, problems);
                }
            }
        }
        _ => {}
    }
}

/// Follows `path` (`["self", "spec", "replicas"]`) from `node`, the node of
/// its root, through the schema: the node it ends at, if the schema says.
/// With `problems`, a name an object that declares all its properties does
/// not declare is reported.
fn follow<'s>(
    path: &[String],
    node: &'s JsonSchemaProps,
    mut problems: Option<&mut Vec<Problem>>,
) -> Option<&'s JsonSchemaProps> {
    let mut node = node;
    for (i, field) in path.iter().enumerate().skip(1) {
        if field == INDEXED {
            // A list's items or a map's values; an index into anything
            // else is the API server's to judge.
            node = match node.type_.as_deref() {
                Some("array") => node.items.as_deref()?,
                Some("object") if node.properties.as_ref().is_none_or(|p| p.is_empty()) => {
                    node.additional_properties.as_deref()?
                }
                _ => return None,
            };
            continue;
        }
        // A resource's own `apiVersion`, `kind` and `metadata` (at the root,
        // or an embedded resource) are the API server's to judge.
        if matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
            return None;
        }
        let object = node.type_.as_deref() == Some("object")
            && node.additional_properties.is_none()
            && node.x_embedded_resource != Some(true);
        let preserving = node.x_preserve_unknown_fields == Some(true);
        let declared = node.properties.as_ref().is_some_and(|p| !p.is_empty());
        if !object || !(declared || preserving) {
            return None;
        }
        static NONE: std::collections::BTreeMap<String, JsonSchemaProps> = std::collections::BTreeMap::new();
        let properties = node.properties.as_deref().unwrap_or(&NONE);
        let found = properties.iter().find(|(name, _)| names_in_rules(name).contains(field));
        match found {
            // A property without a type (free-form JSON) is not declared
            // to CEL.
            Some((_, child))
                if child.type_.is_none()
                    && child.x_int_or_string != Some(true)
                    && child.x_embedded_resource != Some(true) =>
            {
                if let Some(problems) = problems.as_deref_mut() {
                    problems
                        .push(Problem::Undeclared { path: spell(&path[..=i]), why: "it has no type (free-form JSON)" });
                }
                return None;
            }
            Some((_, child)) => node = child,
            None if preserving => {
                if let Some(problems) = problems.as_deref_mut() {
                    problems.push(Problem::Undeclared {
                        path: spell(&path[..=i]),
                        why: "its object keeps it only as an unknown field (`x-kubernetes-preserve-unknown-fields`)",
                    });
                }
                return None;
            }
            None => {
                if let Some(problems) = problems.as_deref_mut() {
                    problems.push(Problem::UnknownField {
                        path: spell(&path[..=i]),
                        field: field.clone(),
                        known: properties.keys().cloned().collect(),
                    });
                }
                return None;
            }
        }
    }
    Some(node)
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
        check(rule, node, true)
            .into_iter()
            .map(|p| match p {
                Problem::Syntax(_) => "syntax".to_string(),
                Problem::UnknownField { path, .. } | Problem::Undeclared { path, .. } => path,
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn old_self_below_a_plain_list_and_field_paths() {
        let spec = object(&[("min", typed("integer")), ("ports", JsonSchemaProps { items: None, ..typed("array") })]);
        assert_eq!(check("self == oldSelf", &spec, false), [Problem::Uncorrelatable]);
        assert!(check("self == oldSelf", &spec, true).is_empty());
        assert!(check("self.min > 0", &spec, false).is_empty());
        let why = |p: &str| field_path_problem(p, &spec);
        assert_eq!(why(".min"), None);
        assert!(why("min").unwrap().contains("starts with"));
        assert!(why(".mni").unwrap().contains("`mni` is not a property"));
        assert!(why(".ports[0]").unwrap().contains("list item"));
        assert!(why(".ports").is_none());
        assert_eq!(why("['min']"), None);
        assert!(why("['min").unwrap().contains("not closed"));
        let parts = check_parts(Some("'too many: ' + string(self.mni)"), Some(".mni"), &spec);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert!(matches!(&parts[0], Problem::InMessage(p) if matches!(**p, Problem::UnknownField { .. })));
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
        // Nothing certain below a map's named keys or a list of unknown
        // items; an object keeping unknown fields does not declare them to
        // CEL.
        assert!(unknown("self.labels.anything == 'a'", &spec).is_empty());
        assert_eq!(unknown("self.free.whatever == 1", &spec), ["self.free.whatever"]);
        assert!(unknown("self.items.all(i, i.name != '')", &spec).is_empty());
        // Comprehension variables stand for a list's items.
        let targets = JsonSchemaProps {
            items: Some(std::sync::Arc::new(object(&[("name", typed("string"))]))),
            ..typed("array")
        };
        let with_list =
            object(&[("targets", targets), ("labels", spec.properties.as_ref().unwrap()["labels"].clone())]);
        assert!(unknown("self.targets.all(t, t.name != '')", &with_list).is_empty());
        assert_eq!(unknown("self.targets.all(t, t.nmae != '')", &with_list), ["t.nmae"]);
        assert_eq!(unknown("self.targets.exists(t, t.?nom.hasValue())", &with_list), ["t.nom"]);
        assert_eq!(unknown("self.targets.all(t, self.targets.exists(u, u.nam == t.name))", &with_list), ["u.nam"]);
        // A map's keys, and a variable shadowing another, are not looked into.
        assert!(unknown("self.labels.all(k, k.size() < 64)", &with_list).is_empty());
        assert!(unknown("self.targets.all(t, self.labels.all(t, t.x == ''))", &with_list).is_empty());
        // Index steps into lists and maps; the index itself is looked into
        // too.
        let routes = JsonSchemaProps {
            additional_properties: Some(std::sync::Arc::new(object(&[("port", typed("integer"))]))),
            ..typed("object")
        };
        let indexed = object(&[
            ("names", JsonSchemaProps { items: Some(std::sync::Arc::new(typed("string"))), ..typed("array") }),
            ("counts", JsonSchemaProps { items: Some(std::sync::Arc::new(typed("integer"))), ..typed("array") }),
            ("targets", with_list.properties.as_ref().unwrap()["targets"].clone()),
            ("routes", routes),
            ("key", typed("string")),
        ]);
        assert!(unknown("self.targets[0].name != '' && self.routes['a'].port > 0", &indexed).is_empty());
        assert_eq!(unknown("self.targets[0].nmae != ''", &indexed), ["self.targets[..].nmae"]);
        assert_eq!(unknown("self.routes[self.kye].port > 0", &indexed), ["self.kye"]);
        assert_eq!(unknown("self.routes[?'a'].?prot.hasValue()", &indexed), ["self.routes[..].prot"]);
        assert_eq!(unknown("self.routes.all(k, self.routes[k].prot > 0)", &indexed), ["self.routes[..].prot"]);
        assert!(unknown("self.key[0] == 'a' && self.routes.all(k, k.size() > 0)", &indexed).is_empty());
        // A plain field met by a literal of another type.
        let mismatches = |rule: &str| {
            check(rule, &indexed, true)
                .into_iter()
                .map(|p| match p {
                    Problem::Mismatch { path, path_type, literal, op, .. } => {
                        format!("{path} {path_type} {op} {literal}")
                    }
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(mismatches("self.key == 1"), ["self.key string == 1"]);
        assert_eq!(mismatches("'a' != self.targets[0].name || self.key + 2 == 'x2'"), ["self.key string + 2"]);
        assert_eq!(mismatches("self.targets.all(t, t.name < true)"), ["t.name string < true"]);
        assert_eq!(mismatches("self.routes['a'].port == '80'"), ["self.routes[..].port int == '80'"]);
        assert_eq!(mismatches("self.routes['a'].port == 80.0"), ["self.routes[..].port int == 80.0"]);
        assert_eq!(mismatches("self.routes['a'].port * 2u > 1"), ["self.routes[..].port int * 2u"]);
        assert_eq!(mismatches("self.names.all(n, n != 1)"), ["n string != 1"]);
        // A name `cel.bind` binds holds in its body, not in its value or
        // outside it.
        assert_eq!(mismatches("self.names.all(n, cel.bind(n, 1, n == 1) && n != 1)"), ["n string != 1"]);
        assert_eq!(mismatches("self.names.all(n, cel.bind(n, n == 1, n))"), ["n string == 1"]);
        for fine in [
            // Names bound by calls the parser expands no macro for.
            "self.names.all(n, self.counts.all(i, n, n != 1))",
            "self.names.all(n, cel.bind(n, 1, n == 1))",
            "self.routes['a'].port <= 80.5",
            "self.routes['a'].port < 2u",
            "self.key == null",
            "self.?key == 'a'",
            "has(self.key) == true",
            "self.key.size() == 1",
        ] {
            assert_eq!(mismatches(fine), Vec::<String>::new(), "{fine}");
        }
        // An embedded resource holds more than its declared properties.
        let embedded = JsonSchemaProps { x_embedded_resource: Some(true), ..spec.clone() };
        assert!(unknown("self.spec.replicas > 0 && self.maxReplica > 0", &embedded).is_empty());
        assert_eq!(unknown("self.minReplicas ||", &spec), ["syntax"]);
        // Optional syntax parses, and its selections are looked up too.
        assert!(unknown("self.?minReplicas.orValue(0) <= self.maxReplicas", &spec).is_empty());
        assert_eq!(unknown("self.?maxReplica.hasValue()", &spec), ["self.maxReplica"]);
    }
}
