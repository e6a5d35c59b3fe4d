//! The attributes the check phase reads besides the markers: serde's
//! container, field and variant attributes, doc comments and derives.

use std::sync::Arc;

use syn::spanned::Spanned as _;

use crate::diag::{Diagnostic, Diagnostics, SourceFile};
use crate::ident::{RenameRule, did_you_mean};
use crate::markers::{self, Validate};
use crate::model::{ContainerSerde, FieldSerde};

use super::marker_errors;

/// The doc comment of an item, one space of indentation removed per line.
pub fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Some(value) = doc_text(&nv.value)
        {
            // A bare `///` is an empty attribute: a blank line of the text (a paragraph break).
            if value.is_empty() {
                lines.push(String::new());
            }
            for line in block_comment_lines(&value) {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_string());
            }
        }
    }
    let text = kubernetes_doc(&lines).join("\n").trim().to_string();
    if text.is_empty() { None } else { Some(text) }
}

/// The text of a doc attribute's value: a string literal, or `concat!` of
/// literals. `None` for other macros (`include_str!`), which are not read.
pub(crate) fn doc_text(value: &syn::Expr) -> Option<String> {
    match value {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
        syn::Expr::Macro(m) if m.mac.path.is_ident("concat") => {
            let parts =
                m.mac.parse_body_with(syn::punctuated::Punctuated::<syn::Lit, syn::Token![,]>::parse_terminated);
            let mut out = String::new();
            for lit in parts.ok()? {
                match lit {
                    syn::Lit::Str(s) => out.push_str(&s.value()),
                    syn::Lit::Char(c) => out.push(c.value()),
                    syn::Lit::Int(i) => out.push_str(i.base10_digits()),
                    syn::Lit::Bool(b) => out.push_str(if b.value { "true" } else { "false" }),
                    _ => return None,
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// The lines of a doc attribute. A block comment (`/** .. */`, one
/// attribute of several lines) loses its blank first and last lines and,
/// when every other line starts with a `*` after its indentation, that
/// `*`, as rustdoc renders it.
pub(crate) fn block_comment_lines(value: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = value.lines().collect();
    if lines.len() < 2 {
        return lines;
    }
    let blank = |l: &str| l.trim().chars().all(|c| c == '*');
    // The text on the line of `/**` itself has no `*` to lose.
    let mut from = 1;
    if lines.first().is_some_and(|l| blank(l)) {
        lines.remove(0);
        from = 0;
    }
    if lines.last().is_some_and(|l| blank(l)) {
        lines.pop();
    }
    let starred = lines.iter().skip(from).all(|l| l.trim().is_empty() || l.trim_start().starts_with('*'));
    if starred {
        for line in lines.iter_mut().skip(from) {
            *line = line.trim_start().strip_prefix('*').unwrap_or("");
        }
    }
    lines
}

/// Kubernetes' conventions for API docs, as controller-gen applies them:
/// runs of blank lines are one, and outside fenced code (```` ``` ```` or
/// `~~~`) a line starting with `TODO` is dropped and one starting with
/// `---` ends the public text.
fn kubernetes_doc(lines: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in lines {
        if line.starts_with("```") || line.starts_with("~~~") {
            in_code = !in_code;
        }
        if !in_code {
            if line.starts_with("TODO") || go_marker(line).is_some() {
                continue;
            }
            if line.starts_with("---") {
                break;
            }
        }
        if line.is_empty() && out.last().is_some_and(|l| l.is_empty()) {
            continue;
        }
        out.push(line);
    }
    out
}

/// A Go marker line of a doc comment (`+optional`,
/// `+kubebuilder:validation:Minimum=1`, `+listType=map`): the marker
/// without its `+`. controller-gen leaves such lines out of descriptions.
pub(crate) fn go_marker(line: &str) -> Option<&str> {
    let marker = line.trim_start().strip_prefix('+')?;
    marker.starts_with(|c: char| c.is_ascii_alphabetic()).then_some(marker.trim_end())
}

/// The Rust spelling of a Go marker (without its `+`), where one is known.
pub(crate) fn rust_spelling_of_go_marker(marker: &str) -> Option<String> {
    let (name, value) = marker.split_once('=').map_or((marker, None), |(n, v)| (n, Some(v)));
    let validation = name.strip_prefix("kubebuilder:validation:");
    let keyed = |key: &str| value.map(|v| format!("#[validate({key} = {v})]"));
    let quoted = |key: &str| value.map(|v| format!("#[validate({key} = {:?})]", v.trim_matches('`').trim_matches('"')));
    match (name, validation) {
        ("optional", _) | (_, Some("Optional")) => Some("an `Option<..>` field, or `#[validate(optional)]`".into()),
        ("required", _) | (_, Some("Required")) => Some("#[validate(required)]".into()),
        (_, Some("Minimum")) => keyed("minimum"),
        (_, Some("Maximum")) => keyed("maximum"),
        (_, Some("MultipleOf")) => keyed("multiple_of"),
        (_, Some("MinLength")) => keyed("min_length"),
        (_, Some("MaxLength")) => keyed("max_length"),
        (_, Some("MinItems")) => keyed("min_items"),
        (_, Some("MaxItems")) => keyed("max_items"),
        (_, Some("MinProperties")) => keyed("min_properties"),
        (_, Some("MaxProperties")) => keyed("max_properties"),
        (_, Some("ExclusiveMinimum")) => Some("#[validate(exclusive_minimum)]".into()),
        (_, Some("ExclusiveMaximum")) => Some("#[validate(exclusive_maximum)]".into()),
        (_, Some("Pattern")) => quoted("pattern"),
        (_, Some("Format")) => quoted("format"),
        (_, Some("Enum")) => value.map(|v| {
            let values: Vec<String> = v.split(';').map(|e| format!("{:?}", e.trim_matches('"'))).collect();
            format!("#[validate(enum_values({}))]", values.join(", "))
        }),
        (_, Some("XValidation")) => Some("#[validate(rule(rule = \"..\", message = \"..\"))]".into()),
        (_, Some("XIntOrString")) => Some("#[validate(int_or_string)]".into()),
        (_, Some("EmbeddedResource")) => Some("#[validate(embedded_resource)]".into()),
        (_, Some("Schemaless")) | ("kubebuilder:pruning:PreserveUnknownFields", _) => {
            Some("#[validate(preserve_unknown_fields)]".into())
        }
        ("kubebuilder:default", _) => keyed("default"),
        ("listType", _) => quoted("list_type"),
        ("listMapKey", _) => value.map(|v| format!("#[validate(list_map_keys({v:?}))]")),
        ("mapType", _) => quoted("map_type"),
        ("kubebuilder:subresource:status", _) => Some("#[resource(subresource(status))]".into()),
        ("kubebuilder:resource:shortName", _) => value.map(|v| {
            let names: Vec<String> = v.split(';').map(|n| format!("{n:?}")).collect();
            format!("#[resource(short_names({}))]", names.join(", "))
        }),
        ("kubebuilder:storageversion", _) => Some("#[resource(storage)]".into()),
        _ if marker.starts_with("kubebuilder:printcolumn") => {
            Some("#[resource(printcolumn(name = \"..\", type = \"..\", json_path = \"..\"))]".into())
        }
        ("genclient", _) => Some("#[genclient]".into()),
        ("kubebuilder:object:root" | "k8s:deepcopy-gen" | "kubebuilder:object:generate", _) => {
            Some("nothing: kube-codegen finds kinds by `#[genclient]` and needs no deepcopy".into())
        }
        _ => None,
    }
}

pub(crate) fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|m| {
            if m.path.segments.last().is_some_and(|s| s.ident == name) {
                found = true;
            }
            Ok(())
        });
        found
    })
}

pub(crate) fn container_serde(
    attrs: &[syn::Attribute],
    file: &Arc<SourceFile>,
    diags: &mut Diagnostics,
) -> ContainerSerde {
    let mut out = ContainerSerde::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|m| {
            let key = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            match key.as_str() {
                "rename_all" | "rename_all_fields" => {
                    let v: syn::LitStr = if m.input.peek(syn::Token![=]) {
                        m.value()?.parse()?
                    } else {
                        let [ser, de] = rename_rules(&m)?;
                        match (ser, de) {
                            (Some(s), Some(d)) if s.value() == d.value() => s,
                            (s, d) => {
                                let span = s.as_ref().or(d.as_ref()).map_or_else(|| m.path.span(), syn::LitStr::span);
                                diags.push(
                                    Diagnostic::error(format!(
                                        "`{key}` with different rules for writing and reading: a CRD schema has one name per field"
                                    ))
                                    .at(file.location(span))
                                    .help(format!("use one rule for both: `#[serde({key} = \"..\")]`")),
                                );
                                return Ok(());
                            }
                        }
                    };
                    match RenameRule::parse(&v.value()) {
                        Some(r) if key == "rename_all" => out.rename_all = Some(r),
                        Some(r) => out.rename_all_fields = Some(r),
                        None => {
                            let names: Vec<&str> = RenameRule::ALL.iter().map(|(n, _)| *n).collect();
                            diags.push(
                                Diagnostic::error(format!("unknown serde rename rule `{}`", v.value()))
                                    .at(file.location(v.span()))
                                    .help_opt(did_you_mean(&v.value(), &names).map(|s| format!("did you mean `{s}`?"))),
                            );
                        }
                    }
                }
                "tag" => out.tag = Some(m.value()?.parse::<syn::LitStr>()?.value()),
                "content" => out.content = Some(m.value()?.parse::<syn::LitStr>()?.value()),
                "untagged" => out.untagged = true,
                "transparent" => out.transparent = true,
                "default" => {
                    out.default = true;
                    skip_meta(&m)?;
                }
                "into" | "from" | "try_from" | "remote" => {
                    diags.push(
                        Diagnostic::error(format!("`#[serde({key} = ..)]` changes the JSON of this type; no schema can be derived from its fields"))
                            .at(file.location(m.path.span()))
                            .help("remove it so the schema can follow the fields, or hold this value in a `serde_json::Value` field marked `#[validate(preserve_unknown_fields)]`"),
                    );
                    skip_meta(&m)?;
                }
                _ => skip_meta(&m)?,
            }
            Ok(())
        });
    }
    out
}

/// Field attributes serde knows (its `#[serde(..)]` on a field).
const SERDE_FIELD_KEYS: &[&str] = &[
    "rename",
    "alias",
    "default",
    "flatten",
    "skip",
    "skip_serializing",
    "skip_deserializing",
    "skip_serializing_if",
    "serialize_with",
    "deserialize_with",
    "with",
    "borrow",
    "bound",
    "getter",
];

/// Variant attributes serde knows.
const SERDE_VARIANT_KEYS: &[&str] = &[
    "rename",
    "alias",
    "rename_all",
    "skip",
    "skip_serializing",
    "skip_deserializing",
    "serialize_with",
    "deserialize_with",
    "with",
    "bound",
    "borrow",
    "other",
    "untagged",
];

/// The `#[serde(..)]` of a field (or, with `variant`, of an enum variant).
pub(crate) fn field_serde(attrs: &[syn::Attribute], variant: bool) -> FieldSerde {
    let mut out = FieldSerde::default();
    let mut renames: [Option<(String, proc_macro2::Span)>; 2] = [None, None];
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let parsed = attr.parse_nested_meta(|m| {
            let key = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            match key.as_str() {
                "rename" => {
                    if m.input.peek(syn::Token![=]) {
                        let name = m.value()?.parse::<syn::LitStr>()?;
                        renames = [Some((name.value(), name.span())), Some((name.value(), name.span()))];
                    } else {
                        m.parse_nested_meta(|inner| {
                            let slot = if inner.path.is_ident("serialize") {
                                0
                            } else if inner.path.is_ident("deserialize") {
                                1
                            } else {
                                return Err(inner.error("expected `serialize` or `deserialize`"));
                            };
                            let name = inner.value()?.parse::<syn::LitStr>()?;
                            renames[slot] = Some((name.value(), name.span()));
                            Ok(())
                        })?;
                    }
                }
                "default" => {
                    out.default = true;
                    if m.input.peek(syn::Token![=]) {
                        // serde takes the path of a function, as a string.
                        m.value()?.parse::<syn::LitStr>()?;
                        out.default_fn = true;
                    }
                }
                "skip" => {
                    out.skip = true;
                    out.skip_deserializing = true;
                }
                "skip_serializing" => out.skip = true,
                "skip_deserializing" => out.skip_deserializing = true,
                "with" | "serialize_with" | "deserialize_with" | "getter" => {
                    if out.custom.is_none() {
                        out.custom = Some((key.clone(), m.path.span()));
                    }
                    skip_meta(&m)?;
                }
                "skip_serializing_if" => {
                    out.skip_serializing_if = true;
                    m.value()?.parse::<syn::LitStr>()?;
                }
                "flatten" => out.flatten = true,
                "alias" => out.aliases.push(m.value()?.parse::<syn::LitStr>()?.value()),
                "other" if variant => out.other = true,
                "rename_all" if variant && !m.input.peek(syn::Token![=]) => {
                    let rules = rename_rules(&m)?;
                    let same = matches!(&rules, [Some(s), Some(d)] if s.value() == d.value());
                    if !same && out.problem.is_none() {
                        out.problem = Some((
                            m.path.span(),
                            "`rename_all` with different rules for writing and reading: a CRD schema has one name per field"
                                .into(),
                            "use one rule for both: `#[serde(rename_all = \"..\")]`".into(),
                        ));
                    }
                }
                "untagged" if variant => {
                    if out.problem.is_none() {
                        out.problem = Some((
                            m.path.span(),
                            "`#[serde(untagged)]` on one variant: serde writes it without its name, which the \
                             enum's schema (a property or value per variant name) does not describe"
                                .into(),
                            "make the whole enum `#[serde(untagged)]`, or remove it from the variant".into(),
                        ));
                    }
                }
                _ => {
                    let known = if variant { SERDE_VARIANT_KEYS } else { SERDE_FIELD_KEYS };
                    if !known.contains(&key.as_str()) {
                        let what = if variant { "variant" } else { "field" };
                        let hint =
                            did_you_mean(&key, known).map_or_else(String::new, |k| format!("; did you mean `{k}`?"));
                        return Err(m.error(format!("unknown serde {what} attribute `{key}`{hint}")));
                    }
                    skip_meta(&m)?
                }
            }
            Ok(())
        });
        if let Err(e) = parsed
            && out.problem.is_none()
        {
            out.problem =
                Some((e.span(), e.to_string(), "serde refuses it too; see serde's attribute reference".into()));
        }
    }
    match renames {
        [Some((written, span)), Some((read, _))] if written != read && out.problem.is_none() => {
            out.problem = Some((
                span,
                format!("written as `{written}` but read as `{read}`: a CRD schema has one name per field"),
                "use one `#[serde(rename = \"..\")]` (and `alias` for other names it may read)".into(),
            ));
            out.rename = Some(written);
        }
        [Some((written, _)), Some(_)] => out.rename = Some(written),
        [Some((one, span)), None] if out.problem.is_none() => {
            out.problem = Some((
                span,
                format!("written as `{one}` but read under its Rust name: a CRD schema has one name per field"),
                "use `#[serde(rename = \"..\")]` for both (and `alias` for other names it may read)".into(),
            ));
        }
        [None, Some((one, span))] if out.problem.is_none() => {
            out.problem = Some((
                span,
                format!("read as `{one}` but written under its Rust name: a CRD schema has one name per field"),
                "use `#[serde(rename = \"..\")]` for both (and `alias` for other names it may read)".into(),
            ));
        }
        _ => {}
    }
    out
}

/// The `serialize` and `deserialize` rules of a `rename_all(..)`.
fn rename_rules(m: &syn::meta::ParseNestedMeta) -> syn::Result<[Option<syn::LitStr>; 2]> {
    let mut rules = [None, None];
    m.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            rules[0] = Some(inner.value()?.parse::<syn::LitStr>()?);
        } else if inner.path.is_ident("deserialize") {
            rules[1] = Some(inner.value()?.parse::<syn::LitStr>()?);
        } else {
            skip_meta(&inner)?;
        }
        Ok(())
    })?;
    Ok(rules)
}

pub(crate) fn skip_meta(m: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if m.input.peek(syn::Token![=]) {
        m.input.parse::<syn::Token![=]>()?;
        m.input.parse::<syn::Expr>()?;
    } else if m.input.peek(syn::token::Paren) {
        m.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

pub(crate) fn validate_markers(attrs: &[syn::Attribute], file: &Arc<SourceFile>, diags: &mut Diagnostics) -> Validate {
    let mut v = Validate::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("validate")) {
        if let Err(errors) = markers::parse_validate_attr(attr, &mut v) {
            marker_errors(diags, file, errors);
        }
    }
    v
}

pub(crate) fn variant_rename_all(attrs: &[syn::Attribute]) -> Option<RenameRule> {
    let mut out = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|m| {
            if m.path.is_ident("rename_all") && m.input.peek(syn::Token![=]) {
                out = RenameRule::parse(&m.value()?.parse::<syn::LitStr>()?.value());
            } else if m.path.is_ident("rename_all") {
                // One rule for both sides is that rule; two are refused by
                // `field_serde`.
                let [ser, de] = rename_rules(&m)?;
                if let (Some(ser), Some(de)) = (ser, de)
                    && ser.value() == de.value()
                {
                    out = RenameRule::parse(&ser.value());
                }
            } else {
                skip_meta(&m)?;
            }
            Ok(())
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_of(item: &str) -> Option<String> {
        let item: syn::ItemStruct = syn::parse_str(item).unwrap();
        doc_comment(&item.attrs)
    }

    #[test]
    fn go_markers_get_their_rust_spelling() {
        let rust = |line: &str| go_marker(line).and_then(rust_spelling_of_go_marker);
        assert_eq!(rust(" +kubebuilder:validation:MaxLength=63").as_deref(), Some("#[validate(max_length = 63)]"));
        assert_eq!(
            rust("+kubebuilder:validation:Pattern=`^[a-z]+$`").as_deref(),
            Some("#[validate(pattern = \"^[a-z]+$\")]")
        );
        assert_eq!(
            rust("+kubebuilder:validation:Enum=bash;zsh").as_deref(),
            Some("#[validate(enum_values(\"bash\", \"zsh\"))]")
        );
        assert_eq!(rust("+listType=map").as_deref(), Some("#[validate(list_type = \"map\")]"));
        assert_eq!(rust("+listMapKey=name").as_deref(), Some("#[validate(list_map_keys(\"name\"))]"));
        assert_eq!(rust("+kubebuilder:default=5").as_deref(), Some("#[validate(default = 5)]"));
        assert_eq!(
            rust("+kubebuilder:resource:shortName=a;b").as_deref(),
            Some("#[resource(short_names(\"a\", \"b\"))]")
        );
        assert_eq!(rust("+kubebuilder:unknown"), None);
        // Not markers: prose, a sum, an empty `+`.
        for line in ["a + b", "+1 for that", "+", " + x"] {
            assert_eq!(go_marker(line), None, "{line}");
        }
    }

    #[test]
    fn block_doc_comments_read_as_rustdoc_renders_them() {
        assert_eq!(doc_of("/** One line. */ struct A;").as_deref(), Some("One line."));
        assert_eq!(doc_of("/** a\n * b */ struct A;").as_deref(), Some("a\nb"));
        assert_eq!(doc_of("/**\n * First.\n *\n * Second.\n */ struct A;").as_deref(), Some("First.\n\nSecond."));
        // Without stars on every line, the lines are kept as written.
        assert_eq!(doc_of("/**\n First.\n Second.\n */ struct A;").as_deref(), Some("First.\nSecond."));
        // Line comments are unchanged.
        assert_eq!(doc_of("/// * a bullet\n/// * another\nstruct A;").as_deref(), Some("* a bullet\n* another"));
    }
}
