//! Label and field selectors as the API server parses them from
//! `labelSelector=` / `fieldSelector=` query parameters.

use std::collections::BTreeSet;

use serde_json::Value;

/// One label requirement (apimachinery's `labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    /// `key`
    Exists(String),
    /// `!key`
    DoesNotExist(String),
    /// `key=v`, `key==v`, `key in (a,b)`
    In(String, BTreeSet<String>),
    /// `key!=v`, `key notin (a,b)`: also matches objects without the label.
    NotIn(String, BTreeSet<String>),
    /// `key>n`
    GreaterThan(String, i64),
    /// `key<n`
    LessThan(String, i64),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
}

fn tokenize(input: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = input.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\n' => {
                chars.next();
            }
            '(' | ')' | ',' | '<' | '>' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    ',' => Token::Comma,
                    '<' => Token::Lt,
                    _ => Token::Gt,
                });
            }
            '!' => {
                chars.next();
                if chars.peek() == Some(&'=') {
                    chars.next();
                    tokens.push(Token::NotEq);
                } else {
                    tokens.push(Token::Not);
                }
            }
            '=' => {
                chars.next();
                if chars.peek() == Some(&'=') {
                    chars.next();
                    tokens.push(Token::DoubleEq);
                } else {
                    tokens.push(Token::Eq);
                }
            }
            _ => {
                let mut ident = String::new();
                while let Some(&c) = chars.peek() {
                    if " \t\n(),<>!=".contains(c) {
                        break;
                    }
                    ident.push(c);
                    chars.next();
                }
                tokens.push(Token::Ident(ident));
            }
        }
    }
    tokens
}

/// A label key as the API server's selector parser checks it
/// (`IsQualifiedName`): an optional DNS-1123 subdomain prefix and `/`, then
/// a name of at most 63 characters.
fn valid_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => dns1123_subdomain(prefix) && qualified_name_part(name),
        None => qualified_name_part(key),
    }
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, 1 to 63 characters.
fn qualified_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    !name.is_empty()
        && name.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b))
}

/// Lowercase DNS labels joined by dots, at most 253 characters.
fn dns1123_subdomain(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= 253
        && prefix.split('.').all(|label| {
            let bytes = label.as_bytes();
            !label.is_empty()
                && bytes[0].is_ascii_alphanumeric()
                && bytes[bytes.len() - 1].is_ascii_alphanumeric()
                && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        })
}

/// A label value (`IsValidLabelValue`): empty, or a name part.
fn valid_value(value: &str) -> bool {
    value.is_empty() || qualified_name_part(value)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        token
    }

    fn key(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Token::Ident(key)) if valid_key(&key) => Ok(key),
            Some(Token::Ident(key)) => Err(format!("invalid label key {key:?}")),
            other => Err(format!("expected a label key, found {other:?}")),
        }
    }

    fn value(&mut self) -> Result<String, String> {
        match self.peek() {
            // `key=` selects an empty value.
            None | Some(Token::Comma) | Some(Token::Close) => Ok(String::new()),
            Some(Token::Ident(_)) => match self.next() {
                Some(Token::Ident(v)) if valid_value(&v) => Ok(v),
                other => Err(format!("invalid label value {other:?}")),
            },
            other => Err(format!("expected a label value, found {other:?}")),
        }
    }

    fn set(&mut self) -> Result<BTreeSet<String>, String> {
        if self.next() != Some(Token::Open) {
            return Err("expected '(' after in/notin".to_owned());
        }
        let mut values = BTreeSet::new();
        loop {
            values.insert(self.value()?);
            match self.next() {
                Some(Token::Comma) => continue,
                Some(Token::Close) => return Ok(values),
                other => return Err(format!("expected ',' or ')', found {other:?}")),
            }
        }
    }

    fn number(&mut self) -> Result<i64, String> {
        match self.next() {
            Some(Token::Ident(v)) => v.parse().map_err(|_| format!("{v:?} is not an integer")),
            other => Err(format!("expected an integer, found {other:?}")),
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        if self.peek() == Some(&Token::Not) {
            self.next();
            return Ok(Requirement::DoesNotExist(self.key()?));
        }
        let key = self.key()?;
        match self.peek() {
            None | Some(Token::Comma) => Ok(Requirement::Exists(key)),
            Some(Token::Eq) | Some(Token::DoubleEq) => {
                self.next();
                Ok(Requirement::In(key, BTreeSet::from([self.value()?])))
            }
            Some(Token::NotEq) => {
                self.next();
                Ok(Requirement::NotIn(key, BTreeSet::from([self.value()?])))
            }
            Some(Token::Gt) => {
                self.next();
                Ok(Requirement::GreaterThan(key, self.number()?))
            }
            Some(Token::Lt) => {
                self.next();
                Ok(Requirement::LessThan(key, self.number()?))
            }
            Some(Token::Ident(op)) if op == "in" || op == "notin" => {
                let negate = op == "notin";
                self.next();
                let set = self.set()?;
                Ok(if negate { Requirement::NotIn(key, set) } else { Requirement::In(key, set) })
            }
            other => Err(format!("unexpected {other:?} after label key {key:?}")),
        }
    }
}

impl LabelSelector {
    /// Parses `app=web,tier!=db,env in (a,b),!legacy,gen>3`.
    pub(crate) fn parse(input: &str) -> Result<Self, String> {
        let tokens = tokenize(input);
        if tokens.is_empty() {
            return Ok(Self::default());
        }
        let mut parser = Parser { tokens, pos: 0 };
        let mut requirements = vec![parser.requirement()?];
        while let Some(token) = parser.next() {
            if token != Token::Comma {
                return Err(format!("expected ',' between requirements, found {token:?}"));
            }
            requirements.push(parser.requirement()?);
        }
        Ok(Self(requirements))
    }

    /// Whether an object (its JSON) carries matching `metadata.labels`.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.0.iter().all(|req| match req {
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::DoesNotExist(k) => label(k).is_none(),
            Requirement::In(k, set) => label(k).is_some_and(|v| set.contains(v)),
            Requirement::NotIn(k, set) => label(k).is_none_or(|v| !set.contains(v)),
            Requirement::GreaterThan(k, n) => label(k).and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v > *n),
            Requirement::LessThan(k, n) => label(k).and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v < *n),
        })
    }
}

/// A parsed field selector over `metadata.name` and `metadata.namespace`,
/// the fields every kind supports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses `metadata.name=a,metadata.namespace!=b` (`=`, `==`, `!=`) as
    /// the API server does: terms split at unescaped commas, each term at
    /// its first operator, and values unescaped (`\\`, `\,`, `\=`; a bare
    /// `,` or `=` in a value is an error).
    pub(crate) fn parse(input: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        for term in split_terms(input).into_iter().filter(|t| !t.is_empty()) {
            let Some((field, equal, value)) = split_term(term) else {
                return Err(format!("invalid field selector term {term:?}: expected `field=value` or `field!=value`"));
            };
            if field != "metadata.name" && field != "metadata.namespace" {
                return Err(format!(
                    "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                ));
            }
            terms.push((field.to_owned(), equal, unescape_value(value)?));
        }
        Ok(Self(terms))
    }

    /// Whether the object's name/namespace satisfy every term.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let pointer = if field == "metadata.name" { "/metadata/name" } else { "/metadata/namespace" };
            let actual = obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
            (actual == value) == *equal
        })
    }
}

/// `input` split at commas that are not escaped with a backslash.
fn split_terms(input: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in input.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&input[start..]);
    terms
}

/// `field`, whether the operator is an equality, and the raw value, split
/// at the first operator in the term (`!=`, `==` or `=`).
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    (0..term.len()).filter(|&i| term.is_char_boundary(i)).find_map(|i| {
        let rest = &term[i..];
        [("!=", false), ("==", true), ("=", true)]
            .into_iter()
            .find(|(op, _)| rest.starts_with(op))
            .map(|(op, equal)| (&term[..i], equal, &rest[op.len()..]))
    })
}

/// A field selector value with its escapes resolved.
fn unescape_value(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(e) => return Err(format!("invalid escape sequence `\\{e}` in field selector value {value:?}")),
                None => return Err(format!("field selector value {value:?} ends in a lone backslash")),
            },
            ',' | '=' => {
                return Err(format!("unescaped `{c}` in field selector value {value:?}: write `\\{c}`"));
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front", "gen": "5"}));
        let yes = [
            "",
            "app=web",
            "app==web",
            "app!=db",
            "missing!=x",
            "app in (web, db)",
            "app notin (db)",
            "missing notin (db)",
            "app",
            "!missing",
            "gen>3",
            "gen<6",
            "app=web,tier=front",
            " app = web , tier in (front) ",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).unwrap().matches(&o), "{s} should match");
        }
        let no =
            ["app=db", "app!=web", "app in (db)", "app notin (web)", "missing", "!app", "gen>5", "app=web,tier=back"];
        for s in no {
            assert!(!LabelSelector::parse(s).unwrap().matches(&o), "{s} should not match");
        }
    }

    #[test]
    fn label_syntax_errors() {
        for s in ["app in web", "app in (web", "=web", "app=web,", "app >x", "a b", "app=we b"] {
            assert!(LabelSelector::parse(s).is_err(), "{s} should not parse");
        }
    }

    /// Keys and values are checked as the API server's `labels.Parse` does
    /// (`IsQualifiedName`, `IsValidLabelValue`): 400 where a test would
    /// otherwise pass against the fake with a selector a cluster refuses.
    #[test]
    fn label_keys_and_values_are_checked_as_the_api_server_checks_them() {
        let long = "a".repeat(64);
        let bad_keys = [
            "-k".to_string(),
            "k-".to_string(),
            "a/b/c".to_string(),
            "Example.COM/app".to_string(),
            "/app".to_string(),
            "example.com/".to_string(),
            "ex..com/app".to_string(),
            long.clone(),
            format!("example.com/{long}"),
        ];
        for key in bad_keys {
            assert!(LabelSelector::parse(&format!("{key}=x")).is_err(), "key {key} should be refused");
            assert!(LabelSelector::parse(&key).is_err(), "key {key} should be refused alone");
        }
        for value in ["-x", "x-", "_x", &long] {
            assert!(LabelSelector::parse(&format!("app={value}")).is_err(), "value {value} should be refused");
            assert!(LabelSelector::parse(&format!("app in (a, {value})")).is_err(), "set value {value}");
        }
        let o = obj(json!({"app.kubernetes.io/name": "web-1", "A_b.c": "X.y_z"}));
        for good in ["app.kubernetes.io/name=web-1", "A_b.c=X.y_z", "app.kubernetes.io/name in (web-1, x)", "k="] {
            assert!(LabelSelector::parse(good).is_ok(), "{good} should parse");
        }
        assert!(LabelSelector::parse("A_b.c=X.y_z").unwrap().matches(&o));
    }

    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        assert!(FieldSelector::parse("metadata.name=a").unwrap().matches(&o));
        assert!(FieldSelector::parse("metadata.name==a,metadata.namespace=ns").unwrap().matches(&o));
        assert!(!FieldSelector::parse("metadata.namespace!=ns").unwrap().matches(&o));
        assert!(FieldSelector::parse("spec.x=1").is_err());
        assert!(FieldSelector::parse("").unwrap().matches(&o));
        // As the API server: the first operator splits, values are unescaped.
        let n = json!({"metadata": {"name": "a=b,c\\", "namespace": "ns"}});
        assert!(FieldSelector::parse(r"metadata.name=a\=b\,c\\").unwrap().matches(&n));
        assert!(FieldSelector::parse(r"metadata.name!=a\=b\,c\\,metadata.namespace=ns").unwrap().matches(&o));
        for bad in ["metadata.namespace!=x==", "metadata.name=a=b", r"metadata.name=a\x", r"metadata.name=a\", "name"] {
            assert!(FieldSelector::parse(bad).is_err(), "{bad}");
        }
    }
}
