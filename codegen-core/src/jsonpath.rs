//! Kubernetes JSONPath, as client-go's `util/jsonpath` parses it: the
//! grammar the API server uses for printer columns (each column's path is
//! parsed as the template `{<path>}` when the CRD is served, and a path it
//! cannot parse breaks the CRD's table output).
//!
//! Only parsing lives here; [`crate::emit::crd`] walks the parsed steps
//! through the schema up to the first filter or recursive descent.

use std::fmt;

/// One node of a parsed template.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Text outside `{..}`, or a quoted string inside.
    Text(String),
    /// `.name`, `['name']`.
    Field(String),
    /// `.*`.
    Wildcard,
    /// `..`.
    Recursive,
    /// `[n]`, `[start:end:step]`, `[*]`.
    Array(Slice),
    /// `[a,b]`: each alternative's nodes.
    Union(Vec<Vec<Node>>),
    /// `[?(@.a == "x")]`, `[?(@.a)]`.
    Filter {
        /// The left operand's nodes.
        left: Vec<Node>,
        /// The operator (`==`, `!=`, `<`, `<=`, `>`, `>=`; `exists` without one).
        op: String,
        /// The right operand's nodes.
        right: Vec<Node>,
    },
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// A keyword (`range`, `end`) or other bare word.
    Identifier(String),
    /// One `{..}` action.
    Action(Vec<Node>),
}

/// `[start:end:step]`; `None` where a bound is left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    /// Start index.
    pub start: Option<i64>,
    /// End index (exclusive); `[n]` is `start = n, end = n + 1`.
    pub end: Option<i64>,
    /// Step.
    pub step: Option<i64>,
    /// Whether it is a single index `[n]`.
    pub single: bool,
}

/// A parse error at a byte offset of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Byte offset into the parsed text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

/// Parses a printer-column path: the nodes of the action `{<path>}`.
/// Offsets in errors refer to `path`.
pub fn parse_column_path(path: &str) -> Result<Vec<Node>, Error> {
    // Offsets come back in the wrapped text: one more than in `path`, and an
    // error at the closing brace (an action the path leaves open, e.g. with
    // a trailing `\`) is at the end of `path`.
    let nodes = parse_template(&format!("{{{path}}}"))
        .map_err(|e| Error { offset: e.offset.saturating_sub(1).min(path.len()), ..e })?;
    let mut steps = Vec::new();
    for n in nodes {
        match n {
            Node::Action(inner) => steps.extend(inner),
            other => steps.push(other),
        }
    }
    Ok(steps)
}

/// Parses a whole template: text with `{..}` actions.
pub fn parse_template(text: &str) -> Result<Vec<Node>, Error> {
    let mut p = Parser { input: text, pos: 0 };
    let mut out = Vec::new();
    let mut start = 0;
    while p.pos < text.len() {
        if text[p.pos..].starts_with('{') {
            if p.pos > start {
                out.push(Node::Text(text[start..p.pos].to_string()));
            }
            p.pos += 1;
            let mut action = Vec::new();
            p.inside_action(&mut action)?;
            out.push(Node::Action(action));
            start = p.pos;
        } else {
            p.next();
        }
    }
    if p.pos > start {
        out.push(Node::Text(text[start..].to_string()));
    }
    Ok(out)
}

/// Parses the text of an action without its braces (client-go's `parseAction`).
fn parse_action(text: &str, base: usize) -> Result<Vec<Node>, Error> {
    let nodes = parse_template(&format!("{{{text}}}"))
        .map_err(|e| Error { offset: base + e.offset.saturating_sub(1), message: e.message })?;
    match nodes.into_iter().next() {
        Some(Node::Action(inner)) => Ok(inner),
        _ => Ok(Vec::new()),
    }
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

fn is_terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(c, ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'),
    }
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn error(&self, at: usize, message: impl Into<String>) -> Error {
        Error { offset: at, message: message.into() }
    }

    /// Nodes until the closing `}` (consumed).
    fn inside_action(&mut self, out: &mut Vec<Node>) -> Result<(), Error> {
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                return Ok(());
            }
            if rest.starts_with("[?(") {
                self.filter(out)?;
                continue;
            }
            if rest.starts_with("..") {
                if matches!(out.last(), Some(Node::Recursive)) {
                    return Err(self.error(self.pos, "invalid multiple recursive descent"));
                }
                self.pos += 2;
                out.push(Node::Recursive);
                if self.peek().is_some_and(is_alphanumeric) {
                    self.field(out);
                }
                continue;
            }
            let at = self.pos;
            match self.next() {
                None | Some('\r' | '\n') => return Err(self.error(at, "unclosed action: `}` is missing")),
                Some(' ' | '@' | '$') => {}
                Some('[') => self.array(out, at)?,
                Some(q @ ('"' | '\'')) => {
                    let s = self.quoted(q, at)?;
                    out.push(Node::Text(s));
                }
                Some('.') => self.field(out),
                Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                    self.pos = at;
                    self.number(out)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.pos = at;
                    let word = self.until_terminator();
                    out.push(match word.as_str() {
                        "true" => Node::Bool(true),
                        "false" => Node::Bool(false),
                        _ => Node::Identifier(word),
                    });
                }
                Some(c) => {
                    return Err(self.error(at, format!("unrecognized character `{c}` in a JSONPath expression")));
                }
            }
        }
    }

    fn until_terminator(&mut self) -> String {
        let start = self.pos;
        while !is_terminator(self.peek()) {
            self.next();
        }
        self.input[start..self.pos].to_string()
    }

    /// `.name` (after the dot): until an unescaped terminator; `*` is the wildcard.
    fn field(&mut self, out: &mut Vec<Node>) {
        let start = self.pos;
        loop {
            match self.peek() {
                Some('\\') => {
                    self.next();
                    self.next();
                }
                c if is_terminator(c) => break,
                _ => {
                    self.next();
                }
            }
        }
        let value = &self.input[start..self.pos];
        out.push(if value == "*" { Node::Wildcard } else { Node::Field(value.replace('\\', "")) });
    }

    fn number(&mut self, out: &mut Vec<Node>) -> Result<(), Error> {
        let start = self.pos;
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        while self.peek().is_some_and(|c| c == '.' || c.is_ascii_digit()) {
            self.next();
        }
        let text = &self.input[start..self.pos];
        if let Ok(i) = text.parse::<i64>() {
            out.push(Node::Int(i));
        } else if let Ok(f) = text.parse::<f64>() {
            out.push(Node::Float(f));
        } else {
            return Err(self.error(start, format!("cannot parse number `{text}`")));
        }
        Ok(())
    }

    /// A quoted string (the opening quote consumed), Go escapes allowed.
    fn quoted(&mut self, quote: char, start: usize) -> Result<String, Error> {
        let mut out = String::new();
        loop {
            match self.next() {
                None | Some('\n') => return Err(self.error(start, "unterminated quoted string")),
                Some('\\') => match self.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some(c @ ('\\' | '"' | '\'')) => out.push(c),
                    Some(c) => {
                        return Err(self.error(self.pos - c.len_utf8() - 1, format!("unknown escape `\\{c}`")));
                    }
                    None => return Err(self.error(start, "unterminated quoted string")),
                },
                Some(c) if c == quote => return Ok(out),
                Some(c) => out.push(c),
            }
        }
    }

    /// `[..]` (the `[` consumed at `start`): union, `['key']` or a slice.
    fn array(&mut self, out: &mut Vec<Node>, start: usize) -> Result<(), Error> {
        let inner_start = self.pos;
        loop {
            match self.next() {
                None | Some('\n') => return Err(self.error(start, "unterminated `[`: `]` is missing")),
                Some(']') => break,
                _ => {}
            }
        }
        let mut text = &self.input[inner_start..self.pos - 1];
        if text == "*" {
            text = ":";
        }
        if text.contains(',') {
            let mut alternatives = Vec::new();
            let mut offset = inner_start;
            for part in text.split(',') {
                alternatives.push(parse_action(&format!("[{}]", part.trim_matches(' ')), offset.saturating_sub(1))?);
                offset += part.len() + 1;
            }
            out.push(Node::Union(alternatives));
            return Ok(());
        }
        if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') && !text[1..text.len() - 1].contains('\'')
        {
            out.extend(parse_action(&format!(".{}", &text[1..text.len() - 1]), inner_start)?);
            return Ok(());
        }
        out.push(Node::Array(slice(text).ok_or_else(|| {
            self.error(
                inner_start,
                format!("invalid array index `{text}` (expected `[n]`, `[start:end:step]`, `[*]` or `['key']`)"),
            )
        })?));
        Ok(())
    }

    /// `[?(..)]` at the current position.
    fn filter(&mut self, out: &mut Vec<Node>) -> Result<(), Error> {
        let start = self.pos;
        self.pos += 3;
        let inner_start = self.pos;
        let mut quote: Option<char> = None;
        let mut closed_quote = false;
        loop {
            let at = self.pos;
            match self.next() {
                None | Some('\n') => return Err(self.error(start, "unterminated filter: `)]` is missing")),
                Some(c @ ('"' | '\'')) => match quote {
                    None => quote = Some(c),
                    Some(q) if q == c && self.input.as_bytes().get(at.wrapping_sub(1)) != Some(&b'\\') => {
                        closed_quote = true;
                    }
                    Some(_) => {}
                },
                Some(')') if quote.is_none() || closed_quote => break,
                _ => {}
            }
        }
        let inner_end = self.pos - 1;
        if self.next() != Some(']') {
            return Err(self.error(self.pos.saturating_sub(1), "filter not closed: expected `]` after `)`"));
        }
        let text = &self.input[inner_start..inner_end];
        match split_comparison(text) {
            None => out.push(Node::Filter {
                left: parse_action(text, inner_start)?,
                op: "exists".into(),
                right: Vec::new(),
            }),
            Some((left, op, right)) => {
                let op_offset = inner_start + left.len();
                out.push(Node::Filter {
                    left: parse_action(left, inner_start)?,
                    op: op.to_string(),
                    right: parse_action(right, op_offset + op.len())?,
                })
            }
        }
        Ok(())
    }
}

/// client-go's `^([^!<>=]+)([!<>=]+)(.+?)$` over a filter's text.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let op_start = text.find(is_op)?;
    if op_start == 0 {
        return None;
    }
    let op_len = text[op_start..].find(|c| !is_op(c))?;
    let right = &text[op_start + op_len..];
    if right.is_empty() {
        return None;
    }
    Some((&text[..op_start], &text[op_start..op_start + op_len], right))
}

/// client-go's `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$` with its defaults.
fn slice(text: &str) -> Option<Slice> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let num = |s: &str| -> Option<Option<i64>> {
        if s.is_empty() {
            return Some(None);
        }
        let digits = s.strip_prefix('-').unwrap_or(s);
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok().map(Some)
    };
    let start = num(parts[0])?;
    let mut out = Slice { start, ..Default::default() };
    match parts.len() {
        1 => {
            out.end = Some(start.unwrap_or(0) + 1);
            out.single = true;
        }
        _ => {
            out.end = num(parts[1])?;
            if let Some(step) = parts.get(2) {
                out.step = num(step)?;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_at_the_closing_brace_points_at_the_end_of_the_path() {
        // Found by the `jsonpath` fuzz target: a trailing backslash escapes
        // the closing brace of the wrapped action.
        for path in [".a\\", ".metadata.labels.app\\.kubernetes\\"] {
            let e = super::parse_column_path(path).expect_err(path);
            assert!(e.offset <= path.len(), "{path:?}: offset {} of {}", e.offset, path.len());
        }
    }

    use super::*;

    fn f(s: &str) -> Node {
        Node::Field(s.into())
    }

    #[test]
    fn printer_column_paths() {
        assert_eq!(parse_column_path(".spec.replicas").unwrap(), [f("spec"), f("replicas")]);
        assert_eq!(
            parse_column_path(r#".status.conditions[?(@.type=="Ready")].status"#).unwrap(),
            [
                f("status"),
                f("conditions"),
                Node::Filter { left: vec![f("type")], op: "==".into(), right: vec![Node::Text("Ready".into())] },
                f("status")
            ]
        );
        assert_eq!(
            parse_column_path(".spec.containers[0].image").unwrap(),
            [
                f("spec"),
                f("containers"),
                Node::Array(Slice { start: Some(0), end: Some(1), step: None, single: true }),
                f("image")
            ]
        );
        assert_eq!(
            parse_column_path(".spec.ports[*].port").unwrap()[2],
            Node::Array(Slice { start: None, end: None, step: None, single: false })
        );
        assert_eq!(parse_column_path(".metadata.labels['app.kubernetes.io/name']").unwrap()[2], f("app"));
        assert_eq!(parse_column_path(".spec.*").unwrap(), [f("spec"), Node::Wildcard]);
        assert_eq!(parse_column_path("..image").unwrap(), [Node::Recursive, f("image")]);
        assert!(matches!(&parse_column_path(".spec.a[0,1]").unwrap()[2], Node::Union(u) if u.len() == 2));
        assert!(
            matches!(&parse_column_path(".status.x[?(@.ready)]").unwrap()[2], Node::Filter { op, .. } if op == "exists")
        );
        assert!(
            matches!(&parse_column_path(".a[?(@.n > 3)]").unwrap()[1], Node::Filter { op, right, .. } if op == ">" && right == &[Node::Int(3)])
        );
    }

    #[test]
    fn what_client_go_refuses_is_refused() {
        for (path, offset) in [
            (".spec[", 5),
            (".spec[abc]", 6),
            (".spec[?(@.a == \"x\"]", 5),
            (".spec.a[?(@.a)", 14),
            (".spec %", 6),
            ("....a", 2),
        ] {
            let e = parse_column_path(path).expect_err(path);
            assert_eq!(e.offset, offset, "{path}: {e}");
        }
        // A literal is parsed (and evaluates to itself) as client-go does.
        assert_eq!(parse_column_path(".spec 'x'").unwrap()[1], Node::Text("x".into()));
    }

    #[test]
    fn templates_keep_text_around_actions() {
        assert_eq!(
            parse_template("name: {.metadata.name}!").unwrap(),
            [Node::Text("name: ".into()), Node::Action(vec![f("metadata"), f("name")]), Node::Text("!".into())]
        );
        assert!(parse_template("{.a").is_err());
    }
}
