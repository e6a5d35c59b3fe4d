//! `#[cfg(..)]` on the items the engine reads: what it can decide (the
//! target of the machine it runs on, `test`, `any()`/`all()`) it decides,
//! as rustc would for a normal build; what it cannot (`feature = ".."`,
//! `debug_assertions`, custom `--cfg`s) it reports and reads the item anyway.

use syn::spanned::Spanned as _;

use crate::diag::{Diagnostic, Diagnostics, SourceFile};

/// The build whose items the engine reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// A normal build (`cargo build`): what the CLI and build.rs generate for.
    /// `cfg(test)` is false.
    Normal,
    /// Any build of the crate (macro mode: the same macros expand in
    /// `cargo build` and `cargo test`). `cfg(test)` cannot be decided.
    Any,
}

/// The value of a `cfg` predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cfg {
    /// Holds.
    True,
    /// Does not hold: the item is not compiled.
    False,
    /// Cannot be decided here; the predicate as written.
    Unknown(String),
}

fn not(c: Cfg) -> Cfg {
    match c {
        Cfg::True => Cfg::False,
        Cfg::False => Cfg::True,
        u => u,
    }
}

fn host(key: &str, value: &str) -> Option<bool> {
    let v = match key {
        "target_os" => std::env::consts::OS,
        "target_family" => std::env::consts::FAMILY,
        "target_arch" => std::env::consts::ARCH,
        "target_pointer_width" => {
            return Some(value == if cfg!(target_pointer_width = "64") { "64" } else { "32" });
        }
        "target_endian" => {
            return Some(value == if cfg!(target_endian = "little") { "little" } else { "big" });
        }
        _ => return None,
    };
    Some(v == value)
}

/// Evaluates one predicate (`unix`, `feature = "x"`, `not(..)`, `any(..)`, `all(..)`).
pub fn eval(meta: &syn::Meta, build: Build) -> Cfg {
    let text = || quote::ToTokens::to_token_stream(meta).to_string();
    match meta {
        syn::Meta::Path(p) => match p.get_ident().map(|i| i.to_string()).as_deref() {
            Some("unix") => bool_cfg(std::env::consts::FAMILY == "unix"),
            Some("windows") => bool_cfg(std::env::consts::FAMILY == "windows"),
            // Test-only code holds no API types; a normal build leaves it out.
            Some("test") if build == Build::Normal => Cfg::False,
            // Set only while rustdoc documents the crate or collects its
            // doctests (`#[cfg_attr(not(doctest), doc = "..")]` keeps a doc
            // comment out of the doctests, as imported descriptions do):
            // the API is the one the crate builds with, in every mode.
            Some("doc" | "doctest") => Cfg::False,
            _ => Cfg::Unknown(text()),
        },
        syn::Meta::NameValue(nv) => {
            let key = nv.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            let value = match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => s.value(),
                _ => return Cfg::Unknown(text()),
            };
            match host(&key, &value) {
                Some(b) => bool_cfg(b),
                None => Cfg::Unknown(text()),
            }
        }
        syn::Meta::List(list) => {
            let name = list.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            let Ok(args) =
                list.parse_args_with(syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
            else {
                return Cfg::Unknown(text());
            };
            let values: Vec<Cfg> = args.iter().map(|a| eval(a, build)).collect();
            match name.as_str() {
                "not" if values.len() == 1 => not(values.into_iter().next().unwrap_or(Cfg::True)),
                "all" => {
                    if values.contains(&Cfg::False) {
                        Cfg::False
                    } else {
                        values.into_iter().find(|v| matches!(v, Cfg::Unknown(_))).unwrap_or(Cfg::True)
                    }
                }
                "any" => {
                    if values.contains(&Cfg::True) {
                        Cfg::True
                    } else {
                        values.into_iter().find(|v| matches!(v, Cfg::Unknown(_))).unwrap_or(Cfg::False)
                    }
                }
                _ => Cfg::Unknown(text()),
            }
        }
    }
}

fn bool_cfg(b: bool) -> Cfg {
    if b { Cfg::True } else { Cfg::False }
}

/// The combined value of an item's `#[cfg]` attributes.
pub fn of_attrs(attrs: &[syn::Attribute], build: Build) -> Cfg {
    let mut out = Cfg::True;
    for attr in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        let value = match attr.parse_args::<syn::Meta>() {
            Ok(meta) => eval(&meta, build),
            Err(_) => Cfg::Unknown(quote::ToTokens::to_token_stream(&attr.meta).to_string()),
        };
        out = match (out, value) {
            (Cfg::False, _) | (_, Cfg::False) => Cfg::False,
            (Cfg::Unknown(u), _) | (_, Cfg::Unknown(u)) => Cfg::Unknown(u),
            _ => Cfg::True,
        };
    }
    out
}

fn item_attrs(item: &syn::Item) -> Option<(&[syn::Attribute], String)> {
    Some(match item {
        syn::Item::Struct(s) => (&s.attrs, format!("struct `{}`", s.ident)),
        syn::Item::Enum(e) => (&e.attrs, format!("enum `{}`", e.ident)),
        syn::Item::Mod(m) => (&m.attrs, format!("module `{}`", m.ident)),
        syn::Item::Use(u) => (&u.attrs, "a `use` item".to_string()),
        syn::Item::Type(t) => (&t.attrs, format!("type alias `{}`", t.ident)),
        syn::Item::Impl(i) => (&i.attrs, "an `impl` block".to_string()),
        syn::Item::Macro(m) => (&m.attrs, "a macro call".to_string()),
        _ => return None,
    })
}

/// Leaves out the items (inline modules included) whose `cfg` is false, in
/// place so that indexes stay valid, and warns about the ones whose `cfg`
/// cannot be decided (they are read). Returns the lines (first, last) of
/// those undecided items: code there may not be compiled.
pub fn strip(items: &mut [syn::Item], build: Build, file: &SourceFile, diags: &mut Diagnostics) -> Vec<(usize, usize)> {
    let mut undecided = Vec::new();
    strip_into(items, build, file, diags, &mut undecided);
    undecided
}

fn strip_into(
    items: &mut [syn::Item],
    build: Build,
    file: &SourceFile,
    diags: &mut Diagnostics,
    undecided: &mut Vec<(usize, usize)>,
) {
    for item in items {
        if let Some(attrs) = item_attrs_mut(item) {
            expand_cfg_attr(attrs, build, file, diags);
        }
        let Some((attrs, what)) = item_attrs(item) else { continue };
        match decide(attrs, &what, item.span(), build, file, diags) {
            Cfg::False => {
                *item = syn::Item::Verbatim(proc_macro2::TokenStream::new());
                continue;
            }
            Cfg::Unknown(_) => undecided.push((item.span().start().line, item.span().end().line)),
            Cfg::True => {}
        }
        match item {
            syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => {
                strip_into(inner, build, file, diags, undecided);
            }
            syn::Item::Struct(s) => strip_fields(&mut s.fields, build, file, diags),
            syn::Item::Enum(e) => {
                let variants = std::mem::take(&mut e.variants);
                e.variants = variants
                    .into_iter()
                    .filter_map(|mut v| {
                        expand_cfg_attr(&mut v.attrs, build, file, diags);
                        let what = format!("variant `{}`", v.ident);
                        (decide(&v.attrs, &what, v.span(), build, file, diags) != Cfg::False).then(|| {
                            strip_fields(&mut v.fields, build, file, diags);
                            v
                        })
                    })
                    .collect();
            }
            _ => {}
        }
    }
}

/// The mutable attributes of the items whose `cfg_attr`s the engine expands.
fn item_attrs_mut(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    match item {
        syn::Item::Struct(s) => Some(&mut s.attrs),
        syn::Item::Enum(e) => Some(&mut e.attrs),
        syn::Item::Mod(m) => Some(&mut m.attrs),
        _ => None,
    }
}

/// Leaves out the fields whose `cfg` is false (warning about undecided ones,
/// which are read), after expanding their `cfg_attr`s.
fn strip_fields(fields: &mut syn::Fields, build: Build, file: &SourceFile, diags: &mut Diagnostics) {
    let list = match fields {
        syn::Fields::Named(named) => &mut named.named,
        syn::Fields::Unnamed(unnamed) => &mut unnamed.unnamed,
        syn::Fields::Unit => return,
    };
    *list = std::mem::take(list)
        .into_iter()
        .filter_map(|mut f| {
            expand_cfg_attr(&mut f.attrs, build, file, diags);
            let what = f.ident.as_ref().map_or_else(|| "a field".to_string(), |i| format!("field `{i}`"));
            (decide(&f.attrs, &what, f.span(), build, file, diags) != Cfg::False).then_some(f)
        })
        .collect();
}

/// The `cfg` of an item, field or variant (`what`, at `span`) with these
/// attributes; an undecided one is read as if it held, with a warning.
fn decide(
    attrs: &[syn::Attribute],
    what: &str,
    span: proc_macro2::Span,
    build: Build,
    file: &SourceFile,
    diags: &mut Diagnostics,
) -> Cfg {
    let cfg = of_attrs(attrs, build);
    if let Cfg::Unknown(predicate) = &cfg {
        let span = attrs.iter().find(|a| a.path().is_ident("cfg")).map_or(span, |a| a.span());
        diags.push(
            Diagnostic::warning(format!(
                "kube-codegen cannot evaluate `{predicate}` on {what}: it is read as if the condition held"
            ))
            .at(file.location(span))
            .help("keep API types, their fields and variants unconditional, or generate with the CLI for each configuration"),
        );
    }
    cfg
}

/// Replaces each `#[cfg_attr(predicate, a, b)]` by `#[a] #[b]` when the
/// predicate holds (or cannot be decided: then with a warning, as for
/// `cfg`), and removes it when it does not.
fn expand_cfg_attr(attrs: &mut Vec<syn::Attribute>, build: Build, file: &SourceFile, diags: &mut Diagnostics) {
    if !attrs.iter().any(|a| a.path().is_ident("cfg_attr")) {
        return;
    }
    let mut out = Vec::with_capacity(attrs.len());
    for attr in std::mem::take(attrs) {
        if !attr.path().is_ident("cfg_attr") {
            out.push(attr);
            continue;
        }
        let parsed = attr.parse_args_with(|input: syn::parse::ParseStream| {
            let predicate: syn::Meta = input.parse()?;
            input.parse::<syn::Token![,]>()?;
            let inner = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated(input)?;
            Ok((predicate, inner))
        });
        // rustc reports a malformed `cfg_attr`; it is left as written.
        let Ok((predicate, inner)) = parsed else {
            out.push(attr);
            continue;
        };
        let holds = match eval(&predicate, build) {
            Cfg::True => true,
            Cfg::False => false,
            // Attributes that cannot change what is generated (a derive of
            // other traits, lints, schemars'): no warning, and kept.
            Cfg::Unknown(_) if inner.iter().all(|meta| !matters(meta)) => true,
            Cfg::Unknown(written) => {
                diags.push(
                    Diagnostic::warning(format!(
                        "kube-codegen cannot evaluate `{written}` in a `cfg_attr`: its attributes are read as if the condition held"
                    ))
                    .at(file.location(attr.span()))
                    .help("write the attributes unconditionally, or generate with the CLI for each configuration"),
                );
                true
            }
        };
        if holds {
            out.extend(inner.into_iter().map(|meta| syn::Attribute { meta, ..attr.clone() }));
        }
    }
    *attrs = out;
}

/// Whether an attribute can change what kube-codegen generates: serde's
/// and our markers, docs, and the derives generated code relies on (or
/// reads, like `Default` and `PartialEq`).
fn matters(meta: &syn::Meta) -> bool {
    const NO_EFFECT: [&str; 6] = ["allow", "warn", "deny", "expect", "must_use", "schemars"];
    const DERIVES: [&str; 11] =
        ["ApiType", "Clone", "Copy", "Debug", "Default", "Deserialize", "Eq", "Hash", "Ord", "PartialEq", "Serialize"];
    let path = meta.path();
    if path.is_ident("derive") {
        let Ok(list) = meta.require_list() else { return true };
        let Ok(paths) =
            list.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        else {
            return true;
        };
        return paths.iter().any(|p| p.segments.last().is_none_or(|s| DERIVES.iter().any(|d| s.ident == d)));
    }
    !NO_EFFECT.iter().any(|n| path.is_ident(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg_of(src: &str) -> Cfg {
        let item: syn::ItemStruct = syn::parse_str(&format!("{src} struct X;")).unwrap();
        of_attrs(&item.attrs, Build::Normal)
    }

    #[test]
    fn undecidable_attributes_that_change_nothing_are_not_warned_of() {
        let file = SourceFile::new("types.rs", "");
        let warnings = |src: &str| {
            let mut item: syn::ItemStruct = syn::parse_str(&format!("{src} struct X;")).unwrap();
            let mut diags = Diagnostics::new();
            expand_cfg_attr(&mut item.attrs, Build::Normal, &file, &mut diags);
            diags.len()
        };
        assert_eq!(warnings("#[cfg_attr(feature = \"schemars\", derive(schemars::JsonSchema))]"), 0);
        assert_eq!(warnings("#[cfg_attr(feature = \"x\", allow(dead_code), schemars(rename = \"y\"))]"), 0);
        assert_eq!(warnings("#[cfg_attr(feature = \"x\", derive(JsonSchema, PartialEq))]"), 1);
        assert_eq!(warnings("#[cfg_attr(feature = \"x\", serde(rename_all = \"camelCase\"))]"), 1);
        assert_eq!(warnings("#[cfg_attr(feature = \"x\", doc = \"More.\")]"), 1);
    }

    #[test]
    fn decides_what_it_can() {
        assert_eq!(cfg_of("#[cfg(test)]"), Cfg::False);
        assert_eq!(cfg_of("#[cfg(not(test))]"), Cfg::True);
        assert_eq!(cfg_of("#[cfg(any())]"), Cfg::False);
        assert_eq!(cfg_of("#[cfg(all())]"), Cfg::True);
        assert_eq!(cfg_of(&format!("#[cfg(target_os = \"{}\")]", std::env::consts::OS)), Cfg::True);
        assert_eq!(cfg_of("#[cfg(target_os = \"no-such-os\")]"), Cfg::False);
        assert_eq!(cfg_of("#[cfg(all(test, feature = \"x\"))]"), Cfg::False);
        assert_eq!(cfg_of("#[cfg(any(not(test), feature = \"x\"))]"), Cfg::True);
        assert!(matches!(cfg_of("#[cfg(feature = \"x\")]"), Cfg::Unknown(p) if p.contains("feature")));
        assert!(matches!(cfg_of("#[cfg(all(unix, feature = \"x\"))]"), Cfg::Unknown(_) | Cfg::False));
        assert_eq!(cfg_of(""), Cfg::True);
    }

    #[test]
    fn test_is_undecided_for_any_build() {
        let item: syn::ItemStruct = syn::parse_str("#[cfg(test)] struct X;").unwrap();
        assert_eq!(of_attrs(&item.attrs, Build::Any), Cfg::Unknown("test".to_string()));
        let item: syn::ItemStruct = syn::parse_str("#[cfg(any(test, unix, windows))] struct X;").unwrap();
        assert_eq!(of_attrs(&item.attrs, Build::Any), Cfg::True);
    }

    #[test]
    fn strips_false_fields_and_variants_and_expands_cfg_attr() {
        let mut file: syn::File = syn::parse_str(
            "struct S { #[cfg(test)] a: i32, b: i32, #[cfg_attr(all(), serde(rename = \"c2\"), doc = \"C.\")] c: i32, #[cfg_attr(any(), serde(rename = \"x\"))] d: i32, #[cfg(feature = \"f\")] e: i32 }\n\
             enum E { #[cfg(not(test))] A, #[cfg(test)] B(#[cfg(test)] i32) }",
        )
        .unwrap();
        let source = SourceFile::new("x.rs", "");
        let mut diags = Diagnostics::new();
        strip(&mut file.items, Build::Normal, &source, &mut diags);
        let syn::Item::Struct(st) = &file.items[0] else { panic!() };
        let names: Vec<String> = st.fields.iter().map(|f| f.ident.as_ref().unwrap().to_string()).collect();
        assert_eq!(names, ["b", "c", "d", "e"]);
        let c = &st.fields.iter().nth(1).unwrap().attrs;
        assert_eq!(c.len(), 2);
        assert!(c[0].path().is_ident("serde") && c[1].path().is_ident("doc"));
        assert!(st.fields.iter().nth(2).unwrap().attrs.is_empty(), "a false cfg_attr is gone");
        let syn::Item::Enum(en) = &file.items[1] else { panic!() };
        assert_eq!(en.variants.iter().map(|v| v.ident.to_string()).collect::<Vec<_>>(), ["A"]);
        let warnings = diags.sorted();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("on field `e`"), "{}", warnings[0].message);
    }

    #[test]
    fn strips_false_items_and_warns_about_unknown_ones() {
        let mut file: syn::File = syn::parse_str(
            "#[cfg(test)] mod tests { struct A; } mod m { #[cfg(any())] struct B; struct C; } #[cfg(feature = \"x\")] struct D;",
        )
        .unwrap();
        let source = SourceFile::new("x.rs", "");
        let mut diags = Diagnostics::new();
        let undecided = strip(&mut file.items, Build::Normal, &source, &mut diags);
        assert_eq!(undecided.len(), 1);
        assert!(matches!(file.items[0], syn::Item::Verbatim(_)));
        let syn::Item::Mod(m) = &file.items[1] else { panic!("module kept") };
        let inner = &m.content.as_ref().unwrap().1;
        assert!(matches!(inner[0], syn::Item::Verbatim(_)) && matches!(inner[1], syn::Item::Struct(_)));
        assert!(matches!(file.items[2], syn::Item::Struct(_)), "unknown cfg: read");
        let warnings = diags.sorted();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("feature = \"x\""), "{}", warnings[0].message);
    }
}
