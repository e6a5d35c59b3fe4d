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

#[cfg(test)]
mod tests {
    use super::*;

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
