//! Identifiers in one place: raw identifiers, case conversions (serde's
//! own rules, which no crate reproduces exactly, and Rust's through heck),
//! Kubernetes pluralization (client-go's rules) and "did you mean"
//! suggestions (strsim's edit distance).

use std::collections::BTreeMap;

/// Rust keywords that need the `r#` prefix when used as identifiers.
const RAW_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn", "else", "enum",
    "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move",
    "mut", "override", "priv", "pub", "ref", "return", "static", "struct", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers at all and get a trailing `_`.
const NON_RAW_KEYWORDS: &[&str] = &["crate", "self", "super", "Self"];

/// Renders `name` as a Rust identifier: keywords become raw (`type` →
/// `r#type`); `self`/`super`/`crate`/`Self` get a trailing underscore.
pub fn rust_ident(name: &str) -> String {
    if NON_RAW_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else if RAW_KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// Whether `name` is a Rust keyword (strict or reserved), which a module
/// name cannot be without `r#`.
pub fn is_keyword(name: &str) -> bool {
    RAW_KEYWORDS.contains(&name) || NON_RAW_KEYWORDS.contains(&name)
}

/// Strips the `r#` prefix of a raw identifier.
pub fn unraw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

/// `snake_case` of a Rust type or Kubernetes kind name (`ReplicaSet` →
/// `replica_set`, `HTTPRoute` → `http_route`), by heck.
pub fn snake_case(name: &str) -> String {
    heck::ToSnakeCase::to_snake_case(unraw(name))
}

/// `UpperCamelCase` of a snake or dashed name (`example_v1` → `ExampleV1`), by heck.
pub fn upper_camel(name: &str) -> String {
    heck::ToUpperCamelCase::to_upper_camel_case(unraw(name))
}

/// A serde `rename_all` rule, applied exactly as serde_derive applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

impl RenameRule {
    /// All rules with their serde spellings.
    pub const ALL: &'static [(&'static str, RenameRule)] = &[
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    /// Parses a serde spelling (`"camelCase"`).
    pub fn parse(s: &str) -> Option<RenameRule> {
        Self::ALL.iter().find(|(name, _)| *name == s).map(|(_, r)| *r)
    }

    /// Renames a struct field (written in `snake_case`), as serde does.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Renames an enum variant (written in `PascalCase`), as serde does.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_string(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.apply_to_variant(variant).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.apply_to_variant(variant).replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake.apply_to_variant(variant).replace('_', "-"),
        }
    }
}

/// Plural of a kind, lower-cased, with client-go's rules (gengo's
/// `plural_namer`): exceptions first, then `s/x/z/ch/sh` → `+es`,
/// consonant + `y` → `ies`, `f`/`fe` → `ves`, otherwise `+s`.
pub fn pluralize(kind: &str, exceptions: &BTreeMap<String, String>) -> String {
    if let Some(plural) = exceptions.get(kind) {
        return plural.to_lowercase();
    }
    let lower = kind.to_lowercase();
    plural_of(&lower)
}

/// Plural of a Rust type name keeping its case (`ReplicaSet` → `ReplicaSets`,
/// `Policy` → `Policies`), for accessor names like client-gen's `Students()`.
pub fn plural_type_name(name: &str, exceptions: &BTreeMap<String, String>) -> String {
    if let Some(plural) = exceptions.get(name) {
        return plural.clone();
    }
    let lower = name.to_lowercase();
    let plural = plural_of(&lower);
    // The rules only append or replace a suffix of at most two letters.
    let common = lower.chars().zip(plural.chars()).take_while(|(a, b)| a == b).count();
    let kept: String = name.chars().take(common).collect();
    let tail: String = plural.chars().skip(common).collect();
    kept + &tail
}

fn plural_of(word: &str) -> String {
    let is_vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u');
    if word.is_empty() {
        return String::new();
    }
    if word.ends_with('s') || word.ends_with('x') || word.ends_with('z') || word.ends_with("ch") || word.ends_with("sh")
    {
        return format!("{word}es");
    }
    if let Some(stem) = word.strip_suffix('y') {
        if stem.chars().last().is_some_and(|c| !is_vowel(c)) {
            return format!("{stem}ies");
        }
        return format!("{word}s");
    }
    if let Some(stem) = word.strip_suffix("fe") {
        return format!("{stem}ves");
    }
    if let Some(stem) = word.strip_suffix('f') {
        return format!("{stem}ves");
    }
    format!("{word}s")
}

/// Levenshtein distance, for "did you mean" hints (strsim's).
pub fn edit_distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word_norm = word.to_lowercase().replace(['-', '_'], "");
    candidates
        .iter()
        .map(|c| {
            let c_norm = c.to_lowercase().replace(['-', '_'], "");
            let d = if c_norm == word_norm { 0 } else { edit_distance(word, c) };
            (d, *c)
        })
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// CEL's reserved words, which the API server escapes as `__{word}__`
/// when they name a property.
const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as a CEL rule must write it after `self.`, escaped the
/// way the API server declares it (`__` → `__underscores__`, `.` →
/// `__dot__`, `-` → `__dash__`, `/` → `__slash__`, a reserved word `w` →
/// `__w__`); `None` for names CEL cannot reach (empty, starting with a
/// digit, or with characters other than ASCII letters, digits and `_.-/`).
pub fn cel_property(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if CEL_RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// A DNS-1035 label: lowercase letters, digits and `-`, starting with a
/// letter and ending with a letter or digit, at most 63 characters.
pub(crate) fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A DNS-1123 subdomain: dot-separated labels of lowercase letters, digits
/// and `-`, each starting and ending with a letter or digit.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cel_properties() {
        assert_eq!(cel_property("replicas").as_deref(), Some("replicas"));
        assert_eq!(cel_property("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(cel_property("max-size").as_deref(), Some("max__dash__size"));
        assert_eq!(cel_property("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(cel_property("a__b").as_deref(), Some("a__underscores__b"));
        // Leftmost pairs, as a regular expression replaces them.
        assert_eq!(cel_property("a___b").as_deref(), Some("a__underscores___b"));
        assert_eq!(cel_property("_x").as_deref(), Some("_x"));
        assert_eq!(cel_property("x:y"), None);
        assert_eq!(cel_property("9lives"), None);
        assert_eq!(cel_property("größe"), None);
        assert_eq!(cel_property(""), None);
    }

    #[test]
    fn raw_identifiers() {
        assert_eq!(rust_ident("type"), "r#type");
        assert_eq!(rust_ident("ref"), "r#ref");
        assert_eq!(rust_ident("continue"), "r#continue");
        assert_eq!(rust_ident("self"), "self_");
        assert_eq!(rust_ident("name"), "name");
        assert_eq!(unraw("r#type"), "type");
    }

    #[test]
    fn cases() {
        assert_eq!(snake_case("Student"), "student");
        assert_eq!(snake_case("ReplicaSet"), "replica_set");
        assert_eq!(snake_case("HTTPRoute"), "http_route");
        assert_eq!(snake_case("CronJobV2"), "cron_job_v2");
        assert_eq!(upper_camel("example_v1"), "ExampleV1");
        assert_eq!(upper_camel("auth"), "Auth");
    }

    #[test]
    fn serde_rename_rules_match_serde() {
        assert_eq!(RenameRule::Camel.apply_to_field("user_id"), "userId");
        assert_eq!(RenameRule::Camel.apply_to_field("spec"), "spec");
        assert_eq!(RenameRule::Pascal.apply_to_field("max_replicas"), "MaxReplicas");
        assert_eq!(RenameRule::ScreamingKebab.apply_to_field("a_b"), "A-B");
        assert_eq!(RenameRule::Snake.apply_to_variant("NotReady"), "not_ready");
        assert_eq!(RenameRule::Camel.apply_to_variant("NotReady"), "notReady");
        assert_eq!(RenameRule::Kebab.apply_to_variant("NotReady"), "not-ready");
        assert_eq!(RenameRule::parse("camelCase"), Some(RenameRule::Camel));
        assert_eq!(RenameRule::parse("camelcase"), None);
    }

    #[test]
    fn plurals_follow_client_go() {
        let none = BTreeMap::new();
        assert_eq!(pluralize("Student", &none), "students");
        assert_eq!(pluralize("Policy", &none), "policies");
        assert_eq!(pluralize("Gateway", &none), "gateways");
        assert_eq!(pluralize("Ingress", &none), "ingresses");
        assert_eq!(pluralize("Box", &none), "boxes");
        assert_eq!(pluralize("Patch", &none), "patches");
        assert_eq!(pluralize("Mesh", &none), "meshes");
        assert_eq!(pluralize("Leaf", &none), "leaves");
        assert_eq!(pluralize("Knife", &none), "knives");
        let mut exc = BTreeMap::new();
        exc.insert("Endpoints".to_string(), "Endpoints".to_string());
        assert_eq!(pluralize("Endpoints", &exc), "endpoints");
        assert_eq!(plural_type_name("ReplicaSet", &none), "ReplicaSets");
        assert_eq!(plural_type_name("NetworkPolicy", &none), "NetworkPolicies");
        assert_eq!(plural_type_name("Endpoints", &exc), "Endpoints");
    }

    #[test]
    fn suggestions() {
        let keys = ["no_status", "no_verbs", "readonly", "cluster_scoped"];
        assert_eq!(did_you_mean("no_stauts", &keys), Some("no_status"));
        assert_eq!(did_you_mean("noStatus", &keys), Some("no_status"));
        assert_eq!(did_you_mean("read_only", &keys), Some("readonly"));
        assert_eq!(did_you_mean("banana", &keys), None);
    }
}
