//! Go's formatting of values, for messages worded as the API server and
//! client-go word them.

use std::fmt::Write as _;

/// Go's `%q` of a string.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if !is_print(c) => {
                let _ = if (c as u32) <= 0xffff {
                    write!(out, "\\u{:04x}", c as u32)
                } else {
                    write!(out, "\\U{:08x}", c as u32)
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint`.
pub(crate) fn is_print(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace() || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{feff}'))
}
