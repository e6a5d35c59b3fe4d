//! A YAML writer for generated manifests that every reader reads the same.
//!
//! The layout is controller-gen's (block mappings with keys in byte order
//! whatever the map's own order, lists
//! at the indentation of their key, multi-line strings as `|-` literal
//! blocks). A string is written plain only when no reader could take it for
//! something else: YAML 1.1 readers (PyYAML, go-yaml v2 and the tools built
//! on them) resolve `yes`, `on`, `y`, `1970-01-01T00:00:00Z`, `0x1F`, `1:20`
//! or `.5` to booleans, timestamps and numbers, YAML 1.2 readers resolve a
//! smaller set; every such string is quoted here.

use std::fmt::Write as _;

use serde_json::Value;

/// Renders a JSON value as a YAML document (no `---`), ending in a newline.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => mapping(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => sequence(&mut out, a, 0),
        other => {
            scalar(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn is_collection(v: &Value) -> bool {
    matches!(v, Value::Object(m) if !m.is_empty()) || matches!(v, Value::Array(a) if !a.is_empty())
}

/// A mapping's entries, each line at `level`. The caller has written the
/// indentation of the first line (or the `- ` of a list item).
fn mapping(out: &mut String, m: &serde_json::Map<String, Value>, level: usize) {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            indent(out, level);
        }
        string(out, k, level, true);
        out.push(':');
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                indent(out, level + 2);
                mapping(out, inner, level + 2);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                indent(out, level);
                sequence(out, items, level);
            }
            _ => {
                out.push(' ');
                scalar(out, v, level + 2);
                out.push('\n');
            }
        }
    }
}

fn sequence(out: &mut String, items: &[Value], level: usize) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            indent(out, level);
        }
        out.push_str("- ");
        if is_collection(item) {
            match item {
                Value::Object(m) => mapping(out, m, level + 2),
                Value::Array(a) => sequence(out, a, level + 2),
                _ => unreachable!("checked by is_collection"),
            }
        } else {
            scalar(out, item, level + 2);
            out.push('\n');
        }
    }
}

/// A scalar (or an empty collection) on the current line; a literal block's
/// lines are indented to `level`.
fn scalar(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => string(out, s, level, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

fn string(out: &mut String, s: &str, level: usize, is_key: bool) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else if !is_key && literal_block_ok(s) {
        out.push_str(if s.ends_with('\n') { "|" } else { "|-" });
        for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
            out.push('\n');
            if !line.is_empty() {
                indent(out, level);
                out.push_str(line);
            }
        }
    } else if s.chars().all(|c| is_printable(c) && c != '\n') {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    } else {
        double_quoted(out, s);
    }
}

fn is_printable(c: char) -> bool {
    match c {
        '\t' => true,
        '\u{20}'..='\u{7e}' => true,
        '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' => false,
        '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}' => true,
        _ => false,
    }
}

fn double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_printable(c) => out.push(c),
            c if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08X}", c as u32);
            }
        }
    }
    out.push('"');
}

/// A multi-line string that a literal block keeps byte for byte: no line
/// ends in a space, the first line does not start with one (that would need
/// an indentation indicator), only printable characters, at most one final
/// newline.
fn literal_block_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\t', '\n'])
        && !s.ends_with("\n\n")
        && !s.contains(" \n")
        && !s.contains("\t\n")
        && !s.trim_end_matches('\n').ends_with([' ', '\t'])
        && s.chars().all(|c| c == '\n' || (is_printable(c) && c != '\u{feff}'))
}

/// Whether `s` can be written without quotes and is read back as this
/// string by YAML 1.1 and 1.2 readers alike.
pub fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    if first.is_whitespace() || s.ends_with(char::is_whitespace) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') || s.contains('\t') {
        return false;
    }
    if !s.chars().all(|c| is_printable(c) && c != '\u{feff}') {
        return false;
    }
    !resolves_to_non_string(s)
}

/// YAML 1.1 and 1.2 implicit types: null, booleans, numbers (in every base
/// and the 1.1 sexagesimal form), infinities, NaN, timestamps, merge and
/// value keys.
fn resolves_to_non_string(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "~", "null", "y", "yes", "n", "no", "true", "false", "on", "off", ".nan", ".inf", "-.inf", "+.inf", "<<", "=",
    ];
    if WORDS.contains(&lower.as_str()) {
        return true;
    }
    // Anything that starts like a number and uses only number characters
    // (digits, signs, `.`, `_`, `:`, exponents, base prefixes and hex digits).
    let starts_numeric = s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'));
    if starts_numeric
        && s.chars().any(|c| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_hexdigit() || matches!(c, '+' | '-' | '.' | '_' | ':' | 'x' | 'X' | 'o' | 'O'))
    {
        return true;
    }
    // Timestamps: `2001-12-14`, `2001-12-14t21:59:43.10-05:00`, ...
    let b = s.as_bytes();
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5].is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layout_matches_controller_gen() {
        let v = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "spec": {
                "names": {"shortNames": ["stu"], "kind": "Student"},
                "versions": [{"name": "v1", "served": true, "schema": {"required": ["a", "b"]}}],
                "empty": {},
                "none": []
            }
        });
        assert_eq!(
            to_string(&v),
            "apiVersion: apiextensions.k8s.io/v1\nspec:\n  empty: {}\n  names:\n    kind: Student\n    shortNames:\n    - stu\n  none: []\n  versions:\n  - name: v1\n    schema:\n      required:\n      - a\n      - b\n    served: true\n"
        );
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        let v = json!({"d": "first line\nsecond line\n\nafter a blank", "e": "ends\n"});
        assert_eq!(to_string(&v), "d: |-\n  first line\n  second line\n\n  after a blank\ne: |\n  ends\n");
        // Trailing spaces or a leading space would not survive a block.
        assert_eq!(to_string(&json!({"d": "a \nb"})), "d: \"a \\nb\"\n");
        assert_eq!(to_string(&json!({"d": " a\nb"})), "d: \" a\\nb\"\n");
    }

    #[test]
    fn strings_other_types_could_be_read_as_are_quoted() {
        for s in [
            "1970-01-01T00:00:00Z",
            "2001-12-14",
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "n",
            "true",
            "null",
            "~",
            "1",
            "-1",
            "1.5",
            ".5",
            "1e3",
            "0x1F",
            "0o17",
            "017",
            "1:20",
            "1_000",
            ".inf",
            "-.Inf",
            ".NaN",
            "<<",
            "=",
            "",
            " padded",
            "- dash",
            "key: value",
            "# comment",
            "a #b",
            "*alias",
            "&anchor",
            "!tag",
            "'quoted'",
            "{a}",
            "[a]",
            "trailing:",
        ] {
            assert!(!is_plain_safe(s), "{s:?} must be quoted");
        }
        for s in ["Ready", "v1", "1h30m", "bash", "^[a-z]+$", "example.com/v1", "a-b", "10Gi", "True-ish"] {
            assert!(is_plain_safe(s), "{s:?} can be plain");
        }
        assert_eq!(to_string(&json!({"default": "1970-01-01T00:00:00Z"})), "default: '1970-01-01T00:00:00Z'\n");
        assert_eq!(to_string(&json!({"enum": ["True", "yes"]})), "enum:\n- 'True'\n- 'yes'\n");
        assert_eq!(to_string(&json!({"on": 1})), "'on': 1\n");
        assert_eq!(to_string(&json!({"q": "it's"})), "q: it's\n");
        assert_eq!(to_string(&json!({"q": "'a'"})), "q: '''a'''\n");
        assert_eq!(to_string(&json!({"c": "bell\u{7}"})), "c: \"bell\\x07\"\n");
    }

    #[test]
    fn output_reads_back_as_the_same_value() {
        let v = json!({
            "a": ["yes", "1.0", "line\nline", {"x": null, "y": [1, 2.5, false]}, [], {}],
            "b": {"c": {"d": "deep"}},
            "ünï": "çödé",
        });
        let back: Value = serde_yaml::from_str(&to_string(&v)).unwrap();
        assert_eq!(back, v);
    }
}
