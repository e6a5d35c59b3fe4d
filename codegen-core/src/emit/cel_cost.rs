//! The API server's static cost estimate of CEL rules, so that a rule it
//! would refuse for its cost is a warning when the CRD is written rather
//! than an error when it is installed.
//!
//! When a CRD is created, kube-apiserver estimates the worst-case cost of
//! every rule from the schema alone: a string is as long as its
//! `maxLength` allows (four bytes a character), a list as long as its
//! `maxItems` (or as many of its smallest items as fit into a 3 MiB
//! request), and a comprehension costs its body times the list's length.
//! That cost, times how many times the rule's node can occur in one object
//! (the `maxItems` / `maxProperties` of the lists and maps above it), must
//! stay within 10,000,000 per rule and 100,000,000 for all rules of a
//! version's schema.
//!
//! This is that estimate, constant for constant, for the parts of CEL that
//! CRD rules use. Where it cannot say what the API server would compute (a
//! function it does not know, optional syntax, a type it cannot tell), the
//! rule is not estimated, and so never warned about.
//! `tests/tests/cel_cost_oracle.rs` compares every figure with the API
//! server's own estimator.

use super::schema::JsonSchemaProps;
use cel::common::ast::{EntryExpr, Expr, LiteralValue, operators};

/// The largest request the API server takes, in bytes.
const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;
/// The longest a string without `maxLength` is estimated to be.
const UNBOUNDED_STRING: u64 = MAX_REQUEST_BYTES - 2;
/// The estimated cost one rule may have, times its node's cardinality.
pub const RULE_COST_LIMIT: u64 = 10_000_000;
/// The estimated cost all rules of a version's schema may have together.
pub const TOTAL_COST_LIMIT: u64 = 100_000_000;
/// What the API server's estimator answers for a size it cannot bound.
const UNKNOWN: u64 = u64::MAX;

/// One rule of a schema, with its estimate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleCost {
    /// The rule's node, written as the API server's field paths write it:
    /// `openAPIV3Schema.properties[spec].items`.
    pub path: String,
    /// Its index in that node's `x-kubernetes-validations`.
    pub index: usize,
    /// The rule.
    pub rule: String,
    /// The worst-case cost of one evaluation; `None` when the estimate is
    /// not certain to be the API server's.
    pub cost: Option<u64>,
    /// How many times the node can occur in one object, as the API server
    /// bounds it; `None` when that is not certain.
    pub cardinality: Option<u64>,
    /// The worst-case cost of the rule's `messageExpression`, which the
    /// API server compares with [`RULE_COST_LIMIT`] and adds to the total
    /// as it is (not times the cardinality); `None` without one, or when
    /// not certain.
    pub message_cost: Option<u64>,
    /// Where the generator found the rule (its rule site).
    pub(crate) site: Option<usize>,
}

impl RuleCost {
    /// The figure the API server compares with [`RULE_COST_LIMIT`] and adds
    /// to the schema's total: the cost times the cardinality.
    pub fn total(&self) -> Option<u64> {
        Some(self.cost?.saturating_mul(self.cardinality?))
    }
}

/// The rules of a version's root schema, each with its estimate, in the
/// order of the schema (properties by name, then items, then values).
pub fn rule_costs(root: &JsonSchemaProps) -> Vec<RuleCost> {
    let mut out = Vec::new();
    visit(root, "openAPIV3Schema".into(), true, Some(1), &mut out);
    out
}

/// How the API server words a cost over its limit: `factor of 5.6x`.
pub fn factor(cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    if f > 100.0 {
        "more than 100x".into()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    }
}

fn visit(node: &JsonSchemaProps, path: String, resource: bool, card: Option<u64>, out: &mut Vec<RuleCost>) {
    let resource = resource || node.x_embedded_resource == Some(true);
    for (index, rule) in node.x_validations.iter().flatten().enumerate() {
        // Below an unbounded list or map, the API server counts as many of
        // the node as fit into a request.
        let cardinality = match card {
            Some(c) => Some(c),
            None => min_size(node).map(|m| MAX_REQUEST_BYTES / (m + 1)),
        };
        out.push(RuleCost {
            path: path.clone(),
            index,
            rule: rule.rule.clone(),
            cost: estimate(&rule.rule, node, resource),
            cardinality,
            message_cost: rule.message_expression.as_deref().and_then(|m| estimate(m, node, resource)),
            site: rule.site,
        });
    }
    let ty = node.type_.as_deref();
    let child = |bound: Option<u64>| card.zip(bound).map(|(c, b)| c.saturating_mul(b));
    for (name, prop) in node.properties.iter().flat_map(|p| p.iter()) {
        visit(prop, format!("{path}.properties[{name}]"), false, card, out);
    }
    if let Some(items) = node.items.as_deref() {
        let card = if ty == Some("array") { child(node.max_items) } else { card };
        visit(items, format!("{path}.items"), false, card, out);
    }
    if let Some(values) = node.additional_properties.as_deref() {
        let card = if ty == Some("object") { child(node.max_properties) } else { card };
        visit(values, format!("{path}.additionalProperties"), false, card, out);
    }
}

/// The worst-case cost of one evaluation of `rule` on `node` (`resource`:
/// the node is a resource, whose `metadata` the API server declares), or
/// `None` when not certain.
pub(crate) fn estimate(rule: &str, node: &JsonSchemaProps, resource: bool) -> Option<u64> {
    let expr = cel::parser::Parser::new().parse(rule).ok()?;
    let this = schema_value(node, resource)?;
    let scope = vec![("self".to_string(), this.clone()), ("oldSelf".to_string(), this)];
    cost(&expr.expr, &scope).map(|(c, _)| c)
}

/// The least bytes a value of `node` takes in JSON, as the API server
/// reckons it (to bound lists and maps without `maxItems` /
/// `maxProperties`).
fn min_size(node: &JsonSchemaProps) -> Option<u64> {
    if node.x_int_or_string == Some(true) {
        return Some(1);
    }
    match node.type_.as_deref()? {
        "string" => Some(match node.format.as_deref() {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        }),
        "integer" | "number" => Some(1),
        "boolean" => Some(4),
        "array" => Some(2),
        "object" if node.additional_properties.is_some() => Some(2),
        "object" if node.properties.is_some() => {
            let props = node.properties.as_deref()?;
            let mut size = 2u64;
            for name in node.required.iter().flatten() {
                let Some(prop) = props.get(name) else { continue };
                if prop.default.is_some() {
                    continue;
                }
                size = size.saturating_add(name.len() as u64 + min_size(prop)? + 4);
            }
            Some(size)
        }
        _ => None,
    }
}

/// What the cost of an operation depends on: the type of a value and its
/// size (a string's bytes, a list's items, a map's entries).
#[derive(Clone, Debug)]
struct Value<'s> {
    ty: Ty<'s>,
    /// The largest size the API server's estimator gives it ([`UNKNOWN`]
    /// where it cannot bound it); `None` when not certain what it gives.
    size: Option<u64>,
}

#[derive(Clone, Debug)]
enum Ty<'s> {
    Str,
    Bytes,
    Int,
    Double,
    Bool,
    Null,
    Duration,
    Timestamp,
    /// A list and its items.
    List(Box<Value<'s>>),
    /// A map (string keys) and its values.
    Map(Box<Value<'s>>),
    /// An object with declared properties; `true` for a resource.
    Object(&'s JsonSchemaProps, bool),
    /// A resource's `metadata`.
    Metadata,
    /// An object of the Kubernetes CEL library: a URL, quantity, ...
    Library,
    /// A value of a type not followed further (an int-or-string, the
    /// result of a library function).
    Other,
}

impl<'s> Value<'s> {
    fn of(ty: Ty<'s>, size: Option<u64>) -> Self {
        Value { ty, size }
    }

    /// A scalar result: the estimator sizes scalars as 1.
    fn scalar(ty: Ty<'s>) -> Self {
        Value { ty, size: Some(1) }
    }

    fn is_text(&self) -> bool {
        matches!(self.ty, Ty::Str | Ty::Bytes)
    }

    fn is_number_or_time(&self) -> bool {
        matches!(self.ty, Ty::Int | Ty::Double | Ty::Duration | Ty::Timestamp)
    }
}

/// The value of a node of the schema (`resource`: a resource's root).
fn schema_value(node: &JsonSchemaProps, resource: bool) -> Option<Value<'_>> {
    let resource = resource || node.x_embedded_resource == Some(true);
    if node.x_int_or_string == Some(true) {
        return Some(Value::of(Ty::Other, Some(node.max_length.map_or(UNBOUNDED_STRING, |l| l.saturating_mul(4)))));
    }
    let v = match node.type_.as_deref()? {
        "string" => match node.format.as_deref() {
            Some("byte") => Value::of(Ty::Bytes, Some(node.max_length.unwrap_or(UNBOUNDED_STRING))),
            Some("duration") => Value::of(Ty::Duration, Some(32)),
            Some("date") => Value::of(Ty::Timestamp, Some(12)),
            Some("date-time") => Value::of(Ty::Timestamp, Some(32)),
            _ => {
                let longest_enum = || {
                    let values = node.enum_.as_ref()?;
                    values
                        .iter()
                        .map(|v| v.as_str().map(|s| s.len() as u64))
                        .collect::<Option<Vec<_>>>()?
                        .into_iter()
                        .max()
                };
                let size = match node.max_length {
                    Some(l) => l.saturating_mul(4),
                    None => longest_enum().unwrap_or(UNBOUNDED_STRING),
                };
                Value::of(Ty::Str, Some(size))
            }
        },
        "integer" => Value::of(Ty::Int, Some(0)),
        "number" => Value::of(Ty::Double, Some(0)),
        "boolean" => Value::of(Ty::Bool, Some(0)),
        "array" => {
            let items = node.items.as_deref()?;
            let size = match node.max_items {
                Some(n) => Some(n),
                None => min_size(items).map(|m| (MAX_REQUEST_BYTES - 2) / (m + 1)),
            };
            Value::of(Ty::List(Box::new(schema_value(items, false)?)), size)
        }
        "object" => match node.additional_properties.as_deref() {
            Some(values) => {
                let size = match node.max_properties {
                    Some(n) => Some(n),
                    None => min_size(values).map(|m| (MAX_REQUEST_BYTES - 2) / (m + 6)),
                };
                Value::of(Ty::Map(Box::new(schema_value(values, false)?)), size)
            }
            None if !resource && node.x_preserve_unknown_fields == Some(true) && node.properties.is_none() => {
                return None;
            }
            None => Value::of(Ty::Object(node, resource), Some(0)),
        },
        _ => return None,
    };
    Some(v)
}

/// The names in scope: `self`, `oldSelf` and comprehension variables.
type Scope<'s> = Vec<(String, Value<'s>)>;

/// `x` times a cost factor, rounded up, computed in floating point as the
/// API server's estimator computes it (so `30 × 0.1` is 4, as there).
fn times(x: u64, factor: f64) -> u64 {
    (x as f64 * factor).ceil() as u64
}

/// The cost of `expr` and its value.
fn cost<'s>(expr: &Expr, scope: &Scope<'s>) -> Option<(u64, Value<'s>)> {
    match expr {
        Expr::Literal(lit) => Some((
            0,
            match lit {
                LiteralValue::String(s) => Value::of(Ty::Str, Some(s.inner().chars().count() as u64)),
                LiteralValue::Bytes(b) => Value::of(Ty::Bytes, Some(b.inner().len() as u64)),
                LiteralValue::Int(_) | LiteralValue::UInt(_) => Value::scalar(Ty::Int),
                LiteralValue::Double(_) => Value::scalar(Ty::Double),
                LiteralValue::Boolean(_) => Value::scalar(Ty::Bool),
                LiteralValue::Null => Value::scalar(Ty::Null),
            },
        )),
        Expr::Ident(name) => {
            let (_, v) = scope.iter().rev().find(|(n, _)| n == name)?;
            Some((1, v.clone()))
        }
        Expr::Select(select) => {
            let (c, operand) = cost(&select.operand.expr, scope)?;
            let field = &select.field;
            let value = match &operand.ty {
                Ty::Object(node, resource) => {
                    if *resource && field == "metadata" {
                        Value::of(Ty::Metadata, Some(0))
                    } else if *resource && matches!(field.as_str(), "apiVersion" | "kind") {
                        return None;
                    } else {
                        let props = node.properties.as_deref()?;
                        let (_, prop) =
                            props.iter().find(|(name, _)| super::cel_check::names_in_rules(name).contains(field))?;
                        schema_value(prop, false)?
                    }
                }
                // `metadata.name` is a DNS subdomain: 253 characters.
                Ty::Metadata if field == "name" => Value::of(Ty::Str, Some(253 * 4)),
                Ty::Map(values) => (**values).clone(),
                _ => return None,
            };
            if select.test {
                // `has()`: the operand's cost only.
                return Some((c, Value::scalar(Ty::Bool)));
            }
            Some((c.saturating_add(1), value))
        }
        Expr::List(list) => {
            if !list.optional_indices.is_empty() {
                return None;
            }
            let mut total = 10u64;
            let mut first = None;
            for e in &list.elements {
                let (c, v) = cost(&e.expr, scope)?;
                total = total.saturating_add(c);
                first.get_or_insert(v);
            }
            // What the estimator makes of the items' sizes of a list that
            // is not the schema's is not followed (but in a comprehension).
            let item = first.map_or(Ty::Other, |v| v.ty);
            Some((total, Value::of(Ty::List(Box::new(Value::of(item, None))), Some(list.elements.len() as u64))))
        }
        Expr::Map(map) => {
            let mut total = 30u64;
            for entry in &map.entries {
                let EntryExpr::MapEntry(e) = &entry.expr else { return None };
                if e.optional {
                    return None;
                }
                total = total.saturating_add(cost(&e.key.expr, scope)?.0).saturating_add(cost(&e.value.expr, scope)?.0);
            }
            Some((total, Value::of(Ty::Map(Box::new(Value::of(Ty::Other, None))), Some(map.entries.len() as u64))))
        }
        Expr::Comprehension(c) => {
            if c.iter_var2.is_some() {
                return None;
            }
            let (range_cost, range) = cost(&c.iter_range.expr, scope)?;
            let n = range.size?;
            let var = match &range.ty {
                // A comprehension over a list that is not the schema's
                // sizes its variable as 0.
                Ty::List(items) => Value::of(items.ty.clone(), Some(items.size.unwrap_or(0))),
                // The estimator sizes a map's keys as 0.
                Ty::Map(_) => Value::of(Ty::Str, Some(0)),
                _ => return None,
            };
            let (init_cost, init) = cost(&c.accu_init.expr, scope)?;
            let builds_list = matches!(init.ty, Ty::List(_));
            let accu = match init.ty {
                Ty::List(_) => Value::of(Ty::List(Box::new(Value::of(Ty::Other, None))), None),
                ty => Value::scalar(ty),
            };
            let mut inner = scope.clone();
            inner.push((c.iter_var.clone(), var));
            inner.push((c.accu_var.clone(), accu));
            let (cond, _) = cost(&c.loop_cond.expr, &inner)?;
            let (step, stepped) = cost(&c.loop_step.expr, &inner)?;
            let (result_cost, result) = cost(&c.result.expr, &inner)?;
            let total = range_cost
                .saturating_add(init_cost)
                .saturating_add(result_cost)
                .saturating_add(n.saturating_mul(cond.saturating_add(step)));
            // `map` and `filter` give a list as long as the range, of the
            // items the step adds.
            let value = if builds_list {
                let items = match stepped.ty {
                    Ty::List(items) => Value::of(items.ty, None),
                    _ => Value::of(Ty::Other, None),
                };
                Value::of(Ty::List(Box::new(items)), Some(n))
            } else {
                result
            };
            Some((total, value))
        }
        Expr::Call(call) => {
            let name = call.func_name.as_str();
            // The conditional and the logical operators have no cost of
            // their own; the conditional counts its dearer branch.
            if name == operators::CONDITIONAL {
                let [c, t, f] = call.args.as_slice() else { return None };
                let (cc, _) = cost(&c.expr, scope)?;
                let (tc, tv) = cost(&t.expr, scope)?;
                let (fc, fv) = cost(&f.expr, scope)?;
                let size = match (tv.size, fv.size) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
                return Some((cc.saturating_add(tc.max(fc)), Value::of(tv.ty, size)));
            }
            let target = match &call.target {
                Some(t) => Some(cost(&t.expr, scope)?),
                None => None,
            };
            let mut args_cost = target.as_ref().map_or(0, |(c, _)| *c);
            let mut args = Vec::new();
            for a in &call.args {
                let (c, v) = cost(&a.expr, scope)?;
                args_cost = args_cost.saturating_add(c);
                args.push((v, &a.expr));
            }
            let (own, value) = function(name, target.map(|(_, v)| v), &args)?;
            Some((args_cost.saturating_add(own), value))
        }
        _ => None,
    }
}

/// A function's own cost (its arguments' costs aside) and result.
fn function<'s>(name: &str, target: Option<Value<'s>>, args: &[(Value<'s>, &Expr)]) -> Option<(u64, Value<'s>)> {
    let size = |v: &Value| v.size;
    let tenth = |x: u64| times(x, 0.1);
    let one = |ty| Some((1, Value::scalar(ty)));
    match (name, target.as_ref(), args) {
        (operators::LOGICAL_AND | operators::LOGICAL_OR, None, [_, _]) => Some((0, Value::scalar(Ty::Bool))),
        (operators::LOGICAL_NOT | operators::NOT_STRICTLY_FALSE, None, [_]) => one(Ty::Bool),
        (operators::NEGATE, None, [(v, _)]) if v.is_number_or_time() => one(v.ty.clone()),
        (operators::EQUALS | operators::NOT_EQUALS, None, [(l, _), (r, _)]) => {
            if matches!(l.ty, Ty::Library) || matches!(r.ty, Ty::Library) {
                return one(Ty::Bool);
            }
            Some((tenth(size(l)?.min(size(r)?)), Value::scalar(Ty::Bool)))
        }
        (
            operators::LESS | operators::LESS_EQUALS | operators::GREATER | operators::GREATER_EQUALS,
            None,
            [(l, _), (r, _)],
        ) => {
            if l.is_text() && r.is_text() {
                Some((tenth(size(l)?.min(size(r)?)), Value::scalar(Ty::Bool)))
            } else if l.is_number_or_time() && r.is_number_or_time() {
                one(Ty::Bool)
            } else {
                None
            }
        }
        (operators::ADD, None, [(l, _), (r, _)]) => {
            if l.is_text() && r.is_text() {
                let sum = size(l)?.saturating_add(size(r)?);
                Some((tenth(sum), Value::of(l.ty.clone(), Some(sum))))
            } else if let (Ty::List(left), Ty::List(right)) = (&l.ty, &r.ty) {
                let sum = l.size.zip(r.size).map(|(a, b)| a.saturating_add(b));
                let items = if matches!(left.ty, Ty::Other) { right } else { left };
                Some((1, Value::of(Ty::List(items.clone()), sum)))
            } else if l.is_number_or_time() && r.is_number_or_time() {
                one(l.ty.clone())
            } else {
                None
            }
        }
        (
            operators::SUBSTRACT | operators::MULTIPLY | operators::DIVIDE | operators::MODULO,
            None,
            [(l, _), (r, _)],
        ) if l.is_number_or_time() && r.is_number_or_time() => one(l.ty.clone()),
        (operators::INDEX, None, [(c, _), _]) => match &c.ty {
            Ty::List(items) | Ty::Map(items) => Some((1, (**items).clone())),
            _ => None,
        },
        (operators::IN, None, [_, (c, _)]) => match &c.ty {
            Ty::List(_) => Some((size(c)?, Value::scalar(Ty::Bool))),
            Ty::Map(_) => one(Ty::Bool),
            _ => None,
        },
        ("size", Some(v), []) | ("size", None, [(v, _)]) if v.is_text() || matches!(v.ty, Ty::List(_) | Ty::Map(_)) => {
            one(Ty::Int)
        }
        ("startsWith" | "endsWith", Some(s), [(p, _)]) if s.is_text() => {
            Some((tenth(size(p)?), Value::scalar(Ty::Bool)))
        }
        ("contains", Some(s), [(t, _)]) if s.is_text() => {
            Some((tenth(size(s)?).saturating_mul(tenth(size(t)?)), Value::scalar(Ty::Bool)))
        }
        ("matches", Some(s), [(re, _)]) | ("matches", None, [(s, _), (re, _)]) if s.is_text() => {
            let own = tenth(size(s)?.saturating_add(1)).saturating_mul(times(size(re)?, 0.25));
            Some((own, Value::scalar(Ty::Bool)))
        }
        ("lowerAscii" | "upperAscii" | "trim", Some(s), []) | ("substring", Some(s), [_] | [_, _])
            if matches!(s.ty, Ty::Str) =>
        {
            Some((tenth(size(s)?), Value::of(Ty::Str, s.size)))
        }
        ("indexOf" | "lastIndexOf", Some(s), [_] | [_, _]) if matches!(s.ty, Ty::Str) => {
            Some((tenth(size(s)?), Value::scalar(Ty::Int)))
        }
        ("split", Some(s), [_]) if matches!(s.ty, Ty::Str) => {
            let items = Value::of(Ty::Str, None);
            Some((times(size(s)?, 0.2), Value::of(Ty::List(Box::new(items)), s.size)))
        }
        // With a limit, that many parts, whatever the string's length
        // (other limits are not followed).
        ("split", Some(s), [_, (_, Expr::Literal(LiteralValue::Int(n)))]) if matches!(s.ty, Ty::Str) && **n > 0 => {
            let items = Value::of(Ty::Str, None);
            Some((times(size(s)?, 0.2), Value::of(Ty::List(Box::new(items)), Some(**n as u64))))
        }
        // Replacing with text no longer than what it replaces: no longer
        // than the string (longer replacements are not followed).
        ("replace", Some(s), [(old, _), (new, _)] | [(old, _), (new, _), _]) if matches!(s.ty, Ty::Str) => {
            let result = (size(new)? <= size(old)? && size(old)? > 0).then_some(s.size).flatten();
            Some((times(size(s)?, 0.2), Value::of(Ty::Str, result)))
        }
        ("join", Some(l), []) | ("join", Some(l), [_]) => {
            let Ty::List(items) = &l.ty else { return None };
            if !matches!(items.ty, Ty::Str) {
                return None;
            }
            let sep = match args {
                [(sep, _)] => size(sep)?,
                _ => 0,
            };
            let n = size(l)?;
            let joined = n.saturating_mul(items.size?).saturating_add(sep.saturating_mul(n.saturating_sub(1)));
            Some((tenth(joined), Value::of(Ty::Str, Some(joined))))
        }
        ("isSorted" | "indexOf" | "lastIndexOf", Some(l), _) => {
            let Ty::List(items) = &l.ty else { return None };
            let per = if items.is_text() { 1 + tenth(items.size?) } else { 1 };
            let ty = if name == "isSorted" { Ty::Bool } else { Ty::Int };
            Some((size(l)?.saturating_mul(per), Value::scalar(ty)))
        }
        ("url" | "quantity" | "semver" | "cidr" | "ip", None, [(s, _)]) if matches!(s.ty, Ty::Str) => {
            Some((tenth(size(s)?), Value::of(Ty::Library, Some(UNKNOWN))))
        }
        ("isQuantity" | "isSemver" | "isCIDR" | "isIP", None, [(s, _)]) if matches!(s.ty, Ty::Str) => {
            Some((tenth(size(s)?), Value::scalar(Ty::Bool)))
        }
        ("isURL", None, [(s, _)]) if matches!(s.ty, Ty::Str) => one(Ty::Bool),
        // The accessors of URLs, quantities, versions, IPs and CIDRs.
        (_, Some(Value { ty: Ty::Library, .. }), _) => {
            let ty = match name {
                "compareTo" | "sign" | "asInteger" | "major" | "minor" | "patch" | "prefixLength" | "family" => Ty::Int,
                "isGreaterThan" | "isLessThan" | "isInteger" => Ty::Bool,
                "asApproximateFloat" => Ty::Double,
                "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath" => {
                    return Some((1, Value::of(Ty::Str, Some(UNKNOWN))));
                }
                "add" | "sub" => return Some((1, Value::of(Ty::Library, Some(UNKNOWN)))),
                _ => return None,
            };
            one(ty)
        }
        ("format", Some(s), [(l, _)]) if matches!(s.ty, Ty::Str) && matches!(l.ty, Ty::List(_)) => {
            Some((tenth(size(s)?), Value::of(Ty::Str, Some(UNKNOWN))))
        }
        ("int" | "uint", None, [_]) => one(Ty::Int),
        ("double", None, [_]) => one(Ty::Double),
        ("bool", None, [_]) => one(Ty::Bool),
        ("duration", None, [_]) => one(Ty::Duration),
        ("timestamp", None, [_]) => one(Ty::Timestamp),
        ("string", None, [(v, _)]) if !matches!(v.ty, Ty::Bytes) => Some((1, Value::of(Ty::Str, Some(UNKNOWN)))),
        (
            "getFullYear" | "getMonth" | "getDate" | "getDayOfMonth" | "getDayOfWeek" | "getDayOfYear" | "getHours"
            | "getMinutes" | "getSeconds" | "getMilliseconds",
            Some(v),
            [] | [_],
        ) if matches!(v.ty, Ty::Duration | Ty::Timestamp) => one(Ty::Int),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: serde_json::Value) -> JsonSchemaProps {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn figures_of_the_api_servers_estimator() {
        // Figures kube-apiserver 1.37's estimator gives for these rules
        // (tests/tests/cel_cost_oracle.rs checks many more against it).
        let spec = node(serde_json::json!({
            "type": "object",
            "properties": {
                "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}},
                "s": {"type": "string", "maxLength": 20},
                "u": {"type": "array", "items": {"type": "string"}},
                "m": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 7}},
                "e": {"type": "string", "enum": ["alpha", "beta"]},
            }
        }));
        let cases = [
            ("self == oldSelf", 2),
            ("self.s == oldSelf.s", 12),
            ("self.l.exists_one(x, x == 'a')", 44),
            ("self.s + 'x' == 'yx'", 12),
            ("self.l.all(x, x in ['a', 'b'])", 163),
            ("self.e == 'alpha'", 3),
            ("self.m.all(k, self.m[k] == 'x')", 3_145_723),
            ("self.u.all(x, x.matches('^a'))", 329_857_577_778),
        ];
        for (rule, want) in cases {
            assert_eq!(estimate(rule, &spec, false), Some(want), "{rule}");
        }
        // Not followed: optional syntax, an unknown function.
        assert_eq!(estimate("self.?s.orValue('') == ''", &spec, false), None);
        assert_eq!(estimate("self.s.reverse() == ''", &spec, false), None);
    }

    #[test]
    fn cardinality_multiplies_below_lists_and_maps() {
        let root = node(serde_json::json!({
            "type": "object",
            "properties": {
                "bounded": {"type": "array", "maxItems": 6, "items": {
                    "type": "array", "maxItems": 5, "items": {
                        "type": "string", "maxLength": 8,
                        "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]}}},
                "unbounded": {"type": "array", "items": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}},
                    "x-kubernetes-validations": [{"rule": "self.name.startsWith('a')"}]}}
            }
        }));
        let costs = rule_costs(&root);
        assert_eq!(costs[0].path, "openAPIV3Schema.properties[bounded].items.items");
        assert_eq!((costs[0].cost, costs[0].cardinality), (Some(2), Some(30)));
        // Unbounded: as many as fit into a request (an object with one
        // required 4-letter string takes at least 12 bytes).
        assert_eq!((costs[1].cost, costs[1].cardinality), (Some(3), Some(MAX_REQUEST_BYTES / 13)));
        assert_eq!(factor(55_574_528, RULE_COST_LIMIT), "5.6x");
        assert_eq!(factor(103_809_024, TOTAL_COST_LIMIT), "1.038090x");
        assert_eq!(factor(u64::MAX, RULE_COST_LIMIT), "more than 100x");
    }
}
