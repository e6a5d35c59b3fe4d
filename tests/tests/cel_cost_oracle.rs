//! Differential test of the CEL cost estimate
//! (`codegen_core::emit::cel_cost`) against the API server's own
//! (`tests/go/cel-cost/`, which links kube-apiserver's packages at the
//! version of the test server and runs what a CRD's creation runs).
//!
//! For every rule the estimate gives a figure for, the figure and the
//! node's cardinality must be the API server's, and a rule over the budget
//! must be one the API server refuses for its cost, and the other way
//! round. Rules it cannot follow (optional syntax, functions it does not
//! know) must have no figure rather than a wrong one.

#[path = "../support/go_oracle.rs"]
mod go_oracle;

use std::collections::BTreeMap;

use codegen_core::emit::cel_cost::{RULE_COST_LIMIT, TOTAL_COST_LIMIT, factor, rule_costs};
use codegen_core::emit::schema::JsonSchemaProps;
use serde_json::{Value, json};

/// Each case: a property of `spec` (its schema) and rules on it.
fn cases() -> Vec<(Value, Vec<&'static str>)> {
    let s = |max: Option<u64>| match max {
        Some(m) => json!({"type": "string", "maxLength": m}),
        None => json!({"type": "string"}),
    };
    let list = |items: Value, max: Option<u64>| match max {
        Some(m) => json!({"type": "array", "maxItems": m, "items": items}),
        None => json!({"type": "array", "items": items}),
    };
    let object = |props: Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required});
    vec![
        (
            object(
                json!({
                    "name": s(Some(63)), "free": s(None), "count": {"type": "integer"}, "ratio": {"type": "number"},
                    "on": {"type": "boolean"}, "mode": {"type": "string", "enum": ["Always", "Never", "IfNotPresent"]},
                    "at": {"type": "string", "format": "date-time"}, "day": {"type": "string", "format": "date"},
                    "every": {"type": "string", "format": "duration"}, "raw": {"type": "string", "format": "byte"},
                    "port": {"x-kubernetes-int-or-string": true}, "short": {"x-kubernetes-int-or-string": true, "maxLength": 4},
                    "url": s(Some(200)),
                }),
                &[],
            ),
            vec![
                "self == oldSelf",
                "self.name == oldSelf.name",
                "self.free == oldSelf.free",
                "self.name.startsWith('a') && self.free.endsWith('z')",
                "self.name.contains('--') || self.free.contains('x')",
                "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
                "self.free.matches('^[a-z]+$')",
                "self.free.size() <= 10 && size(self.name) > 0",
                "self.count + 1 > 2 && self.ratio * 2.0 < 10.0 && -self.count < 0",
                "self.count % 2 == 0 && self.count / 2 != 3",
                "!self.on || self.count >= 1",
                "self.mode == 'Always' ? self.count > 0 : self.count == 0",
                "self.mode in ['Always', 'Never']",
                "self.at < timestamp('2030-01-01T00:00:00Z')",
                "self.day >= oldSelf.day",
                "self.every <= duration('1h') && self.every > duration('0s')",
                "self.at.getFullYear() > 2000",
                "self.raw.size() < 100",
                "self.port == 80 || self.port == 'http'",
                "self.short == 'http'",
                "self.name + '-' + self.free != ''",
                "self.name < self.free",
                "self.name.lowerAscii() == self.name && self.name.upperAscii() != ''",
                "self.name.trim() == self.name",
                "self.name.substring(1) != '' && self.name.substring(0, 2) != 'x'",
                "self.name.indexOf('-') != 0 && self.free.lastIndexOf('.') < 0",
                "self.name.split('-').size() < 4",
                "self.name.replace('-', '') != ''",
                "int(self.name) > 0 || double(self.count) > 1.0 || string(self.count) == '1'",
                "string(self.count).matches('^1')",
                "isURL(self.url) && url(self.url).getScheme() == 'https'",
                "url(self.url).getHost() != 'localhost'",
                "isQuantity(self.name) && quantity(self.name).isGreaterThan(quantity('1Gi'))",
                "quantity(self.name).compareTo(quantity('10')) < 0",
                "isSemver(self.name) && semver(self.name).major() > 0",
                "isIP(self.name) && ip(self.name).family() == 4",
                "isCIDR(self.name) && cidr(self.name).prefixLength() < 24",
                "'%s-%d'.format([self.name, self.count]) != ''",
                "has(self.name) && has(self.free)",
                "self.?name.orValue('') != ''",
                "[1, 2, 3].all(x, x > 0) && {'a': 1}.size() == 1",
                "['a', 'b'].exists(x, x == self.name)",
                "self.name.reverse() == self.name",
            ],
        ),
        (
            object(
                json!({
                    "tags": list(s(Some(20)), Some(16)),
                    "many": list(s(None), None),
                    "ports": list(object(json!({"name": s(Some(15)), "port": {"type": "integer"}}), &["port"]), Some(64)),
                    "hosts": list(object(json!({"host": s(None)}), &["host"]), None),
                    "labels": {"type": "object", "additionalProperties": s(Some(63)), "maxProperties": 32},
                    "annotations": {"type": "object", "additionalProperties": s(None)},
                    "matrix": list(list(json!({"type": "integer"}), Some(8)), Some(8)),
                    "when": list(json!({"type": "string", "format": "date-time"}), None),
                }),
                &[],
            ),
            vec![
                "self.tags.all(t, t.size() < 10)",
                "self.tags.exists(t, t == 'x') && self.tags.exists_one(t, t.startsWith('a'))",
                "self.tags.map(t, t.size()).all(n, n < 3)",
                "self.tags.filter(t, t.startsWith('a')).size() < 2",
                "self.tags.all(t, self.tags.exists(u, t == u))",
                "'a' in self.tags && self.tags[0] != ''",
                "self.tags.isSorted() && self.tags.indexOf('x') < 1",
                "self.tags == oldSelf.tags",
                "self.tags + ['x'] != []",
                "self.many.all(t, t.matches('^[a-z]+$'))",
                "self.many.all(t, t.size() < 5)",
                "self.many.size() < 100",
                "self.ports.all(p, p.port > 0 && p.name.size() < 10)",
                "self.ports.map(p, p.port).all(n, n < 65536)",
                "self.ports.exists(p, p.name == 'http')",
                "self.hosts.all(h, h.host.matches('^[a-z.]+$'))",
                "self.hosts.all(h, h.host.startsWith('a'))",
                "self.labels.all(k, self.labels[k].size() < 10)",
                "self.labels.all(k, k.matches('^[a-z/.]+$'))",
                "'app' in self.labels && self.labels['app'] != ''",
                "self.annotations.all(k, self.annotations[k].startsWith('a'))",
                "self.annotations.all(k, self.annotations[k].contains('x'))",
                "self.matrix.all(row, row.all(x, x >= 0))",
                "self.when.all(t, t > timestamp('2000-01-01T00:00:00Z'))",
                // Lists that are not the schema's: literals, `map` and `filter` results.
                "['abc', 'b'].all(x, x.matches('^a')) && ['a'].exists(x, x == self.tags[0])",
                "self.tags.map(t, t + 'a').all(n, n.matches('^a'))",
                "self.tags.filter(t, t.size() > 1).all(n, n == 'abcdefghijklmnopqrstuvwxyz')",
                "self.tags.map(t, [t]).all(l, l.size() < 2)",
                "{'a': 1, 'bb': 2}.all(k, k == 'abcdefghijklmnopqrstuvwxyz')",
                "self.tags.join(',').size() < 5 && self.tags.join().matches('^a')",
                "self.tags.all(t, t.split('-').all(p, p.matches('^a')))",
                "self.tags.all(t, t.replace('-', '').matches('^a'))",
                "self.tags.all(t, t.split('-', 200).all(p, p.size() > 0))",
                "self.tags.all(t, t.split('-', 2).all(p, p.size() > 0))",
                "self.many.all(t, t.split('@', 2).all(p, p.size() > 0))",
                "self.many.all(t, t.split('.').size() < 3)",
                "self.hosts.all(h, url(h.host).getHost().matches('^a'))",
                "self.annotations.all(k, self.annotations[k].matches('^[a-z]+$'))",
            ],
        ),
        // Rules on nodes below lists and maps: the cardinality multiplies.
        (
            list(
                json!({"type": "string", "maxLength": 63, "x-kubernetes-validations": [
                    {"rule": "self.matches('^[a-z]+$')"}, {"rule": "self.startsWith('a')"}]}),
                None,
            ),
            vec![],
        ),
        (
            list(
                list(
                    json!({"type": "string", "maxLength": 8, "x-kubernetes-validations": [
                        {"rule": "self.matches('^[a-z]+$')"}]}),
                    Some(5),
                ),
                Some(6),
            ),
            vec![],
        ),
        (
            list(
                json!({"type": "object", "required": ["name", "size", "at"],
                    "properties": {"name": s(Some(10)), "size": {"type": "integer"},
                        "at": {"type": "string", "format": "date-time"}, "free": s(None)},
                    "x-kubernetes-validations": [
                        {"rule": "self.name.startsWith('a')"}, {"rule": "self.free.contains(self.name)"}]}),
                None,
            ),
            vec!["self.all(x, x.size > 0)"],
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "boolean",
                "x-kubernetes-validations": [{"rule": "self == true"}]}}),
            vec![],
        ),
        (
            json!({"type": "object", "maxProperties": 10, "additionalProperties": {"type": "object",
                "properties": {"v": s(Some(3))},
                "x-kubernetes-validations": [{"rule": "self.v.matches('^[0-9]+$')"}]}}),
            vec![],
        ),
        // Message expressions (`rule ;; messageExpression`): their own
        // cost, not times the cardinality.
        (
            list(object(json!({"n": {"type": "integer"}, "s": s(Some(10)), "free": s(None)}), &["n"]), None),
            vec![
                "self.all(x, x.n > 0) ;; 'n is ' + string(self[0].n)",
                "self.size() < 5 ;; 'too many: ' + self.map(x, x.s).join(', ')",
                "self.size() < 5 ;; 'first: ' + self[0].free",
                "self.size() < 5 ;; 'first: ' + self[0].s.lowerAscii()",
            ],
        ),
        // An embedded resource declares `metadata` (its name) like the root.
        (
            json!({"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true}),
            vec!["self.metadata.name.startsWith('a')", "self.metadata.name.matches('^[a-z]+$')"],
        ),
    ]
}

/// The CRD of the cases (each a property `c<n>` of `spec`), with rules on
/// its root too.
fn crd() -> Value {
    let mut props = serde_json::Map::new();
    for (i, (mut schema, rules)) in cases().into_iter().enumerate() {
        if !rules.is_empty() {
            let list: Vec<Value> = rules
                .iter()
                .map(|r| match r.split_once(" ;; ") {
                    Some((rule, message)) => json!({"rule": rule, "messageExpression": message}),
                    None => json!({"rule": r}),
                })
                .collect();
            schema["x-kubernetes-validations"] = Value::Array(list);
        }
        props.insert(format!("c{i}"), schema);
    }
    let root = json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props}},
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.matches('^[a-z]+$')"},
            {"rule": "self.metadata.name.size() < 20"},
            {"rule": "has(self.spec)"},
        ],
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "costs.oracle.example.com"},
        "spec": {
            "group": "oracle.example.com",
            "names": {"kind": "Cost", "plural": "costs"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": root}}],
        }
    })
}

#[test]
fn estimates_are_the_api_servers() {
    let crd = crd();
    // JSON is YAML: the CRD goes to the oracle as one line.
    let answers = go_oracle::ask("cel-cost", "cel_cost_oracle", [crd.to_string().as_str()]);
    // (node, index) → (cost, cardinality) as the API server estimates them,
    // and the messageExpression's cost.
    let mut server: BTreeMap<(String, usize), Option<(u64, u64)>> = BTreeMap::new();
    let mut messages: BTreeMap<(String, usize), u64> = BTreeMap::new();
    let mut refused_for_cost = Vec::new();
    let mut errors = Vec::new();
    for line in &answers {
        if let Some(rule) = line.strip_prefix("rule ") {
            let parts: Vec<&str> = rule.split(' ').collect();
            let [path, index, cost, card, message] = parts[..] else { panic!("{line}") };
            let figures = cost.parse().ok().zip(card.parse().ok());
            let key = (path.to_string(), index.parse().unwrap());
            if let Ok(message) = message.parse() {
                messages.insert(key.clone(), message);
            }
            server.insert(key, figures);
        } else if let Some(error) = line.strip_prefix("error ") {
            if error.contains("estimated rule cost exceeds budget") {
                refused_for_cost.push(error.to_string());
            }
            errors.push(error.to_string());
        }
    }
    // An error's `factor of ..`, as the API server words it.
    let factor_in =
        |error: &str| error.split("by factor of ").nth(1).and_then(|f| f.split(" (").next()).map(String::from);
    let schema: JsonSchemaProps =
        serde_json::from_value(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()).unwrap();
    let ours = rule_costs(&schema);
    assert_eq!(ours.len(), server.len(), "the same rules: {answers:#?}");
    let mut estimated = 0;
    let mut not_estimated = Vec::new();
    let mut over = 0;
    let mut message_estimated = 0;
    let mut unchecked = Vec::new();
    let mut total = 0u64;
    for rule in &ours {
        let key = (rule.path.clone(), rule.index);
        let theirs = server.get(&key).unwrap_or_else(|| panic!("no figure for {key:?} from the API server"));
        let Some((cost, card)) = theirs else {
            assert_eq!(rule.cost, None, "the API server does not compile `{}`", rule.rule);
            continue;
        };
        match rule.cardinality {
            Some(c) => assert_eq!(c, *card, "cardinality of {key:?}"),
            None => unchecked.push(format!("cardinality of {key:?}")),
        }
        let field = rule.path.replacen("openAPIV3Schema", "spec.validation.openAPIV3Schema", 1);
        if let Some(ours) = rule.message_cost {
            assert_eq!(Some(&ours), messages.get(&key), "the messageExpression cost of `{}`", rule.rule);
            message_estimated += 1;
            total = total.saturating_add(ours);
            // Refused exactly when over the budget, not times the cardinality.
            let needle =
                format!("{field}.x-kubernetes-validations[{}].messageExpression: Forbidden: estimated", rule.index);
            let refused = errors.iter().find(|e| e.starts_with(&needle));
            assert_eq!(ours > RULE_COST_LIMIT, refused.is_some(), "messageExpression of `{}`: {errors:#?}", rule.rule);
            if let Some(error) = refused {
                assert_eq!(factor_in(error), Some(factor(ours, RULE_COST_LIMIT)), "{error}");
            }
        }
        match rule.cost {
            Some(c) => {
                estimated += 1;
                assert_eq!(c, *cost, "the cost of `{}` at {key:?}", rule.rule);
            }
            None => not_estimated.push(rule.rule.clone()),
        }
        // The verdict: refused for its cost exactly when over the budget,
        // by the factor the warning gives.
        let needle = format!("{field}.x-kubernetes-validations[{}].rule:", rule.index);
        let refused = refused_for_cost.iter().find(|e| e.starts_with(&needle));
        match rule.total() {
            Some(value) => {
                total = total.saturating_add(value);
                assert_eq!(value > RULE_COST_LIMIT, refused.is_some(), "verdict on `{}` ({value})", rule.rule);
                if let Some(error) = refused {
                    assert_eq!(factor_in(error), Some(factor(value, RULE_COST_LIMIT)), "{error}");
                    over += 1;
                }
            }
            None => unchecked.push(format!("verdict on `{}`", rule.rule)),
        }
    }
    // The schema's total, of what is estimated, is a lower bound: over the
    // budget, the API server refuses the schema too.
    let total_refused =
        errors.iter().any(|e| e.contains("estimated rule cost total for entire OpenAPIv3 schema exceeds"));
    assert!(total > TOTAL_COST_LIMIT && total_refused, "the cases go over the total budget: {total}");
    assert!(unchecked.len() <= 8, "figures not compared: {unchecked:#?}");
    // What is not followed: optional syntax and `reverse`.
    assert!(estimated >= ours.len() - 4, "only {estimated} of {} estimated; not: {not_estimated:#?}", ours.len());
    assert!(over >= 8, "the cases hold rules over the budget: {over}");
    assert!(message_estimated >= 3, "messageExpressions estimated: {message_estimated}");
}
