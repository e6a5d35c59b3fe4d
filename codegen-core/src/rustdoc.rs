//! Text from elsewhere (Kubernetes' OpenAPI descriptions, a CRD's
//! descriptions, a user's doc comment read in another module) as doc
//! comments that rustdoc renders without warnings of its own lints.

/// `text` (an OpenAPI description, or a user's doc comment read in another
/// module) as Markdown that rustdoc renders as the same words without a
/// warning of its own lints: bare URLs become autolinks (`bare_urls`), `<`
/// outside one is escaped (`invalid_html_tags`: `<hostname>.<subdomain>`),
/// and brackets are escaped (`broken_intra_doc_links`: `[2]`, or a link to
/// an item that is not in scope here). Code spans are kept as they are.
pub(crate) fn rustdoc_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut in_code = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            if let Some(url) = bare_url(rest, &out) {
                out.push('<');
                out.push_str(url);
                out.push('>');
                rest = &rest[url.len()..];
                continue;
            }
            match c {
                '<' => {
                    // An autolink already: kept.
                    let autolink = rest[1..]
                        .split_once('>')
                        .filter(|(url, _)| url.starts_with("http") && !url.contains(char::is_whitespace))
                        .and_then(|(url, _)| bare_url(url, ""));
                    if let Some(url) = autolink {
                        out.push_str(&rest[..url.len() + 2]);
                        rest = &rest[url.len() + 2..];
                        continue;
                    }
                    out.push_str("&lt;");
                    rest = &rest[1..];
                    continue;
                }
                '[' | ']' => out.push('\\'),
                _ => {}
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The URL at the start of `rest`, without the punctuation that ends the
/// sentence around it, unless it is already a link's target (after `<` or
/// `](` in `before`).
fn bare_url<'a>(rest: &'a str, before: &str) -> Option<&'a str> {
    if !(rest.starts_with("https://") || rest.starts_with("http://")) || before.ends_with('<') || before.ends_with("](")
    {
        return None;
    }
    let end = rest.find(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '`').unwrap_or(rest.len());
    let mut url = &rest[..end];
    loop {
        let trimmed = url.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '"']);
        // A `)` closes the URL's own `(` if it has one left open.
        let opened = |t: &str| t.matches('(').count() > t.matches(')').count();
        let trimmed = match trimmed.strip_suffix(')') {
            Some(t) if !opened(t) => t,
            _ => trimmed,
        };
        if trimmed.len() == url.len() {
            break;
        }
        url = trimmed;
    }
    (url.len() > "https://".len()).then_some(url)
}

/// Whether rustdoc would warn about something in `text` taken as Markdown
/// (what [`rustdoc_text`] changes).
pub(crate) fn warns(text: &str) -> bool {
    rustdoc_text(text) != text
}

/// Whether `text` taken as Markdown holds a code block rustdoc would take
/// for Rust, and so compile as a doctest (and warn about, under
/// `rustdoc::invalid_rust_codeblocks`, when it is not Rust): a fenced block
/// without a language or marked `rust`, or an indented block (four spaces
/// or a tab after a blank line). Descriptions written for Go often have
/// both, with YAML in them. Errs on the side of yes: a list item's
/// indented continuation counts.
pub(crate) fn has_rust_code_block(text: &str) -> bool {
    let mut fence: Option<&str> = None;
    let mut after_blank = true;
    for line in text.lines() {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if let Some(open) = fence {
            if indent < 4
                && trimmed.starts_with(open)
                && trimmed.trim_end().chars().all(|c| c == open.as_bytes()[0] as char)
            {
                fence = None;
                // No paragraph goes on after a block: an indented line next is code.
                after_blank = true;
            }
            continue;
        }
        if indent < 4 && !trimmed.starts_with('\t') {
            for open in ["```", "~~~"] {
                if let Some(info) = trimmed.strip_prefix(open) {
                    let run = open.len() + info.len() - info.trim_start_matches(open.as_bytes()[0] as char).len();
                    let info = trimmed[run..].trim();
                    let language = info.split([',', ' ']).next().unwrap_or_default();
                    let rust = matches!(
                        language,
                        "" | "rust" | "ignore" | "no_run" | "should_panic" | "compile_fail" | "test_harness"
                    ) || language.starts_with("edition");
                    if rust {
                        return true;
                    }
                    fence = Some(&trimmed[..run]);
                }
            }
        } else if after_blank && !trimmed.trim().is_empty() {
            return true;
        }
        // Neither after a heading (`# Example`).
        let heading = trimmed.trim_start_matches('#');
        let level = trimmed.len() - heading.len();
        after_blank = line.trim().is_empty()
            || (indent < 4 && (1..=6).contains(&level) && (heading.is_empty() || heading.starts_with([' ', '\t'])));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_rustdoc_would_compile() {
        for text in [
            "For example:\n\n```\nmatch:\n  path: /foo\n```",
            "```rust\nlet x = 1;\n```",
            "~~~\nkey: value\n~~~",
            "An example:\n\n    key: value\n",
            "An example:\n\n\tpath:\n\t  value: /foo",
            "```yaml\na: b\n```\n\n```\nc\n```",
            "```yaml\na: b\n```\n    key: value",
            "# Example\n    key: value",
        ] {
            assert!(has_rust_code_block(text), "{text:?}");
        }
        for text in [
            "Plain text, `code`, and a list:\n- one\n- two",
            "```yaml\nmatch:\n\n    path: /foo\n```",
            "````text\n```\n````",
            "A line\n    indented right after text is no block.",
            "#hashtag\n    is a paragraph's continuation.",
            "",
        ] {
            assert!(!has_rust_code_block(text), "{text:?}");
        }
    }

    #[test]
    fn descriptions_become_markdown_rustdoc_takes_without_warnings() {
        for (text, doc) in [
            // Bare URLs become autolinks, without the sentence's punctuation.
            (
                "More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names.",
                "More info: <https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names>.",
            ),
            ("(see http://example.com/a_(b)), then", "(see <http://example.com/a_(b)>), then"),
            ("(see https://example.com/x)", "(see <https://example.com/x>)"),
            // Links already written as links stay.
            (
                "<https://example.com> and [docs](https://example.com)",
                "<https://example.com> and \\[docs\\](https://example.com)",
            ),
            // Tags that are not tags, and brackets that are not links.
            (
                "<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>",
                "&lt;hostname>.&lt;subdomain>.&lt;pod namespace>.svc.&lt;cluster domain>",
            ),
            ("a list [2] of [`Foo`]", "a list \\[2\\] of \\[`Foo`\\]"),
            // Code spans are code: nothing in them is escaped.
            ("`<none>` and `https://x.y` and `[a]`", "`<none>` and `https://x.y` and `[a]`"),
            ("plain text, é and 1 < 2", "plain text, é and 1 &lt; 2"),
            ("just https://", "just https://"),
        ] {
            assert_eq!(rustdoc_text(text), doc, "{text}");
        }
    }
}
