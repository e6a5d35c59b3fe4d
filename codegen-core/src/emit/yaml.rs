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

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

/// How a node sits in the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// On the line of its key or `- ` (scalars, `{}`, `[]`).
    Inline,
    /// A block mapping: entries on the following lines.
    Map,
    /// A block sequence: `- ` items on the following lines.
    Seq,
}

/// Something the writer can render. Maps emit their entries with
/// [`Emitter::entry`] in key order, sequences their items with
/// [`Emitter::item`], inline nodes their text with [`Emitter::str`] and
/// friends. Types with a fixed set of keys write them in order directly, so
/// no intermediate JSON tree is built for a large schema.
pub trait Emit {
    /// The node's layout.
    fn layout(&self) -> Layout;
    /// Writes the node.
    fn emit(&self, e: &mut Emitter);
}

/// The output and where the writer is in it.
pub struct Emitter {
    out: String,
    /// Indentation of the current block's entries or items.
    level: usize,
    /// Whether the next entry or item is the first of its block (its line
    /// is already indented, or follows `- `).
    first: bool,
}

impl Emitter {
    fn line_start(&mut self) {
        if !self.first {
            indent(&mut self.out, self.level);
        }
        self.first = false;
    }

    fn nested(&mut self, level: usize, v: &dyn Emit) {
        let saved = (self.level, self.first);
        self.level = level;
        self.first = true;
        v.emit(self);
        (self.level, self.first) = saved;
    }

    /// A mapping entry `key: value`.
    pub fn entry(&mut self, key: &str, v: &dyn Emit) {
        self.line_start();
        string(&mut self.out, key, self.level, true);
        self.out.push(':');
        match v.layout() {
            Layout::Map => {
                self.out.push('\n');
                indent(&mut self.out, self.level + 2);
                self.nested(self.level + 2, v);
            }
            Layout::Seq => {
                self.out.push('\n');
                indent(&mut self.out, self.level);
                self.nested(self.level, v);
            }
            Layout::Inline => {
                self.out.push(' ');
                self.nested(self.level + 2, v);
                self.out.push('\n');
            }
        }
    }

    /// A mapping entry whose value may be absent.
    pub fn opt<T: Emit + ?Sized>(&mut self, key: &str, v: Option<&T>) {
        if let Some(v) = v {
            self.entry(key, &Dyn(v));
        }
    }

    /// A sequence item `- value`.
    pub fn item(&mut self, v: &dyn Emit) {
        self.line_start();
        self.out.push_str("- ");
        match v.layout() {
            Layout::Map | Layout::Seq => self.nested(self.level + 2, v),
            Layout::Inline => {
                self.nested(self.level + 2, v);
                self.out.push('\n');
            }
        }
    }

    /// An inline string, quoted or as a literal block when it must be.
    pub fn str(&mut self, s: &str) {
        string(&mut self.out, s, self.level, false);
    }

    /// Inline text written as is (numbers, booleans, `{}`, `[]`).
    pub fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }
}

/// Adapts a sized or unsized `Emit` reference.
struct Dyn<'a, T: ?Sized>(&'a T);

impl<T: Emit + ?Sized> Emit for Dyn<'_, T> {
    fn layout(&self) -> Layout {
        self.0.layout()
    }
    fn emit(&self, e: &mut Emitter) {
        self.0.emit(e)
    }
}

/// Renders a node as a YAML document (no `---`), ending in a newline.
pub fn to_string(node: &dyn Emit) -> String {
    append(String::new(), node)
}

/// Appends the document of `node` to `out` (the header and `---` before
/// it, a CRD of several hundred kilobytes without a copy).
pub fn append(out: String, node: &dyn Emit) -> String {
    let mut e = Emitter { out, level: 0, first: true };
    match node.layout() {
        Layout::Map | Layout::Seq => node.emit(&mut e),
        Layout::Inline => {
            node.emit(&mut e);
            e.out.push('\n');
        }
    }
    e.out
}

fn indent(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

impl Emit for str {
    fn layout(&self) -> Layout {
        Layout::Inline
    }
    fn emit(&self, e: &mut Emitter) {
        e.str(self)
    }
}

impl Emit for &str {
    fn layout(&self) -> Layout {
        Layout::Inline
    }
    fn emit(&self, e: &mut Emitter) {
        e.str(self)
    }
}

impl Emit for String {
    fn layout(&self) -> Layout {
        Layout::Inline
    }
    fn emit(&self, e: &mut Emitter) {
        e.str(self)
    }
}

macro_rules! display_scalars {
    ($($t:ty),*) => {$(
        impl Emit for $t {
            fn layout(&self) -> Layout {
                Layout::Inline
            }
            fn emit(&self, e: &mut Emitter) {
                let _ = write!(e.out, "{self}");
            }
        }
    )*};
}

display_scalars!(bool, i32, i64, u64);

impl Emit for serde_json::Number {
    fn layout(&self) -> Layout {
        Layout::Inline
    }
    /// A float with an exponent gets a `.` in its mantissa and a sign in its
    /// exponent (`1e-7` is written `1.0e-7`): YAML 1.1 readers (PyYAML)
    /// read a float only in that form, and a string otherwise.
    fn emit(&self, e: &mut Emitter) {
        let text = self.to_string();
        match text.find(['e', 'E']) {
            Some(at) if self.is_f64() => {
                let (mantissa, exponent) = (&text[..at], &text[at + 1..]);
                let dot = if mantissa.contains('.') { "" } else { ".0" };
                let sign = if exponent.starts_with(['-', '+']) { "" } else { "+" };
                let _ = write!(e.out, "{mantissa}{dot}e{sign}{exponent}");
            }
            _ => {
                let _ = write!(e.out, "{text}");
            }
        }
    }
}

impl<T: Emit> Emit for Vec<T> {
    fn layout(&self) -> Layout {
        if self.is_empty() { Layout::Inline } else { Layout::Seq }
    }
    fn emit(&self, e: &mut Emitter) {
        if self.is_empty() {
            return e.raw("[]");
        }
        for item in self {
            e.item(item);
        }
    }
}

impl<T: Emit> Emit for BTreeMap<String, T> {
    fn layout(&self) -> Layout {
        if self.is_empty() { Layout::Inline } else { Layout::Map }
    }
    fn emit(&self, e: &mut Emitter) {
        if self.is_empty() {
            return e.raw("{}");
        }
        for (k, v) in self {
            e.entry(k, v);
        }
    }
}

impl<T: Emit + ?Sized> Emit for std::sync::Arc<T> {
    fn layout(&self) -> Layout {
        (**self).layout()
    }
    fn emit(&self, e: &mut Emitter) {
        (**self).emit(e)
    }
}

impl<T: Emit + ?Sized> Emit for Box<T> {
    fn layout(&self) -> Layout {
        (**self).layout()
    }
    fn emit(&self, e: &mut Emitter) {
        (**self).emit(e)
    }
}

impl Emit for Value {
    fn layout(&self) -> Layout {
        match self {
            Value::Object(m) if !m.is_empty() => Layout::Map,
            Value::Array(a) if !a.is_empty() => Layout::Seq,
            _ => Layout::Inline,
        }
    }
    fn emit(&self, e: &mut Emitter) {
        match self {
            Value::Null => e.raw("null"),
            Value::Bool(b) => e.raw(if *b { "true" } else { "false" }),
            Value::Number(n) => n.emit(e),
            Value::String(s) => e.str(s),
            Value::Array(a) if a.is_empty() => e.raw("[]"),
            Value::Object(m) if m.is_empty() => e.raw("{}"),
            Value::Array(a) => {
                for item in a {
                    e.item(item);
                }
            }
            // Keys in byte order whatever the map's own order (serde_json's
            // `preserve_order` may be on in a build).
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                for (k, v) in entries {
                    e.entry(k, v);
                }
            }
        }
    }
}

fn string(out: &mut String, s: &str, level: usize, is_key: bool) {
    let scan = Scan::of(s);
    if scan.plain_safe(s) {
        out.push_str(s);
    } else if !is_key && scan.literal_ok(s) {
        out.push_str(if s.ends_with('\n') { "|" } else { "|-" });
        for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
            out.push('\n');
            if !line.is_empty() {
                indent(out, level);
                out.push_str(line);
            }
        }
    } else if !scan.newline && !scan.unprintable {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    } else {
        double_quoted(out, s);
    }
}

/// What one pass over a string finds (descriptions are long; every check
/// shares this pass).
struct Scan {
    newline: bool,
    tab: bool,
    colon_space: bool,
    space_hash: bool,
    space_before_newline: bool,
    /// A character outside YAML's printable set (newlines aside).
    unprintable: bool,
}

impl Scan {
    fn of(s: &str) -> Scan {
        let bytes = s.as_bytes();
        // Whole-string passes the compiler vectorizes: most strings are
        // printable ASCII, and descriptions are long.
        let ascii_printable = bytes.iter().all(|&b| (0x20..0x7f).contains(&b));
        let newline = !ascii_printable && bytes.contains(&b'\n');
        let tab = !ascii_printable && bytes.contains(&b'\t');
        let unprintable = !ascii_printable
            && (bytes.iter().any(|&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
                || (!s.is_ascii() && s.chars().any(|c| !(c == '\n' || is_printable(c)) || c == '\u{feff}')));
        Scan {
            newline,
            tab,
            colon_space: s.contains(": "),
            space_hash: s.contains(" #"),
            space_before_newline: newline && (s.contains(" \n") || s.contains("\t\n")),
            unprintable,
        }
    }

    fn plain_safe(&self, s: &str) -> bool {
        let Some(first) = s.chars().next() else { return false };
        !(first.is_whitespace()
            || s.ends_with(char::is_whitespace)
            || "-?:,[]{}#&*!|>'\"%@`".contains(first)
            || self.colon_space
            || self.space_hash
            || s.ends_with(':')
            || self.tab
            || self.newline
            || self.unprintable
            || resolves_to_non_string(s))
    }

    /// A multi-line string that a literal block keeps byte for byte: no
    /// line ends in a space, the first line does not start with one (that
    /// would need an indentation indicator), only printable characters, at
    /// most one final newline.
    fn literal_ok(&self, s: &str) -> bool {
        self.newline
            && !self.unprintable
            && !self.space_before_newline
            && !s.starts_with([' ', '\t', '\n'])
            && !s.ends_with("\n\n")
            && !s.trim_end_matches('\n').ends_with([' ', '\t'])
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

/// Whether `s` can be written without quotes and is read back as this
/// string by YAML 1.1 and 1.2 readers alike.
pub fn is_plain_safe(s: &str) -> bool {
    Scan::of(s).plain_safe(s)
}

/// YAML 1.1 and 1.2 implicit types: null, booleans, numbers (in every base
/// and the 1.1 sexagesimal form), infinities, NaN, timestamps, merge and
/// value keys.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "~", "null", "y", "yes", "n", "no", "true", "false", "on", "off", ".nan", ".inf", "-.inf", "+.inf", "<<", "=",
    ];
    if s.len() <= 5 && WORDS.iter().any(|w| w.eq_ignore_ascii_case(s)) {
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
    fn no_yaml_library_is_a_dependency_of_users_builds() {
        let manifest: toml::Table = include_str!("../../Cargo.toml").parse().unwrap();
        let deps = manifest["dependencies"].as_table().unwrap();
        for (name, spec) in deps {
            let optional = spec.get("optional").and_then(toml::Value::as_bool) == Some(true);
            assert!(optional || !name.contains("yaml"), "`{name}` is a normal dependency of codegen-core");
        }
    }

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
