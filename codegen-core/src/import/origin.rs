//! The generator's errors in types that `import` wrote point into the
//! CRD file: when generating fails after an import, the type files are
//! removed again, so a location in them would name a file that is gone.
//!
//! Each written file remembers the CRD it came from and, for every struct,
//! the schema node it models. An error's line is matched to the struct
//! and field it falls in, the field to its schema property, and, where the
//! error is about one marker (`pattern = ..`), to that keyword of the
//! property in the YAML.

use std::path::{Path, PathBuf};

use syn::spanned::Spanned;

use super::read::Crd;
use super::types::Item;
use crate::diag::Diagnostic;

/// A type file import wrote and the CRD it models.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    pub file: PathBuf,
    pub crd: Crd,
    /// Each struct the file declares.
    pub structs: Vec<Struct>,
}

/// A struct: its name, its node's import path and its fields' (Rust name,
/// JSON name).
type Struct = (String, String, Vec<(String, String)>);

impl Origin {
    /// The structs among `items`, with the paths `paths` gives them.
    pub fn new(file: PathBuf, crd: &Crd, items: &[Item], paths: &std::collections::BTreeMap<String, String>) -> Self {
        let structs = items
            .iter()
            .filter_map(|item| match item {
                Item::Struct { name, fields, .. } => {
                    let fields =
                        fields.iter().map(|f| (crate::ident::unraw(&f.ident).to_string(), f.json.clone())).collect();
                    Some((name.clone(), paths.get(name)?.clone(), fields))
                }
                _ => None,
            })
            .collect();
        Origin { file, crd: crd.clone(), structs }
    }
}

/// Moves each error located in a file of `origins` (whose text as written,
/// formatted, is in `written`) to the CRD node it came from; the Rust line
/// stays as a note.
pub(crate) fn relocate(errors: &mut [Diagnostic], origins: &[Origin], written: &[(PathBuf, String)]) {
    for e in errors {
        let Some(loc) = e.location.as_deref() else { continue };
        let Some(origin) = origins.iter().find(|o| same_file(&o.file, &loc.file)) else { continue };
        let Some((_, text)) = written.iter().find(|(p, _)| p == &origin.file) else { continue };
        let Some(path) = path_at(origin, text, loc.line) else { continue };
        let crd = &origin.crd;
        let mut pointer = crd.pointer(&path);
        if let Some(key) = keyword(&loc.line_text, loc.column)
            && crd.provenance.has(&format!("{pointer}/{key}"))
        {
            pointer = format!("{pointer}/{key}");
        }
        let note = format!(
            "in the type import wrote for `{path}` (`{}:{}`, removed again): `{}`",
            loc.file.display(),
            loc.line,
            loc.line_text.trim()
        );
        e.location = Some(Box::new(crd.provenance.at(&pointer)));
        e.notes.insert(0, note);
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || a.ends_with(b) || b.ends_with(a)
}

/// The import path of what line `line` of `text` declares: a field's
/// property, or the struct's node.
fn path_at(origin: &Origin, text: &str, line: usize) -> Option<String> {
    let file = syn::parse_file(text).ok()?;
    let covers = |span: proc_macro2::Span| span.start().line <= line && line <= span.end().line;
    for item in &file.items {
        let syn::Item::Struct(s) = item else { continue };
        if !covers(s.span()) {
            continue;
        }
        let name = s.ident.to_string();
        let (_, path, fields) = origin.structs.iter().find(|(n, _, _)| *n == name)?;
        for field in &s.fields {
            if !covers(field.span()) {
                continue;
            }
            let ident = field.ident.as_ref().map(|i| crate::ident::unraw(&i.to_string()).to_string())?;
            let (_, json) = fields.iter().find(|(f, _)| *f == ident)?;
            // The root's apiVersion, kind and metadata, and flattened fields,
            // have no property of their own.
            if json.is_empty() {
                return Some(path.clone());
            }
            return Some(format!("{path}.{json}"));
        }
        return Some(path.clone());
    }
    None
}

/// The schema keyword of the marker an error's column falls in:
/// `max_length` in `#[validate(max_length = 3)]` is `maxLength`; a CEL
/// rule's parts are `x-kubernetes-validations`.
fn keyword(line: &str, column: usize) -> Option<String> {
    let before: String = line.chars().take(column).collect();
    let before = before.trim_end().strip_suffix('=')?.trim_end();
    let start = before
        .char_indices()
        .rfind(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let marker = &before[start..];
    if marker.is_empty() {
        return None;
    }
    let spelled = match marker {
        "rule" | "message" | "message_expression" | "reason" | "field_path" | "optional_old_self" => {
            "x-kubernetes-validations"
        }
        "enum_values" => "enum",
        "default_json" => "default",
        "list_type" => "x-kubernetes-list-type",
        "list_map_keys" => "x-kubernetes-list-map-keys",
        "map_type" => "x-kubernetes-map-type",
        "preserve_unknown_fields" => "x-kubernetes-preserve-unknown-fields",
        "embedded_resource" => "x-kubernetes-embedded-resource",
        "int_or_string" => "x-kubernetes-int-or-string",
        _ => "",
    };
    if !spelled.is_empty() {
        return Some(spelled.into());
    }
    // `max_length` → `maxLength`, as serde's `camelCase` renames it.
    Some(crate::ident::RenameRule::Camel.apply_to_field(marker))
}

#[cfg(test)]
mod tests {
    use super::keyword;

    #[test]
    fn markers_name_their_keywords() {
        let line = r#"    #[validate(max_length = 3, pattern = "a(?=b)")]"#;
        let at = |needle: &str| line.find(needle).unwrap();
        assert_eq!(keyword(line, at("3")).as_deref(), Some("maxLength"));
        assert_eq!(keyword(line, at("\"a")).as_deref(), Some("pattern"));
        assert_eq!(keyword(line, at("max")), None);
        assert_eq!(keyword("list_type = \"map\"", 12).as_deref(), Some("x-kubernetes-list-type"));
        // Not an identifier's character, and not one byte long.
        assert_eq!(keyword("é= 1", 3).as_deref(), None);
        assert_eq!(keyword("éx = 1", 5).as_deref(), Some("x"));
        let rule = r#"#[validate(rule = "self.x", message = "m")]"#;
        assert_eq!(keyword(rule, rule.find("\"m\"").unwrap()).as_deref(), Some("x-kubernetes-validations"));
    }
}
