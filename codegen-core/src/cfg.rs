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
        let Some((attrs, what)) = item_attrs(item) else { continue };
        match of_attrs(attrs, build) {
            Cfg::False => {
                *item = syn::Item::Verbatim(proc_macro2::TokenStream::new());
                continue;
            }
            Cfg::Unknown(predicate) => {
                undecided.push((item.span().start().line, item.span().end().line));
                let span = attrs.iter().find(|a| a.path().is_ident("cfg")).map_or_else(|| item.span(), |a| a.span());
                diags.push(
                    Diagnostic::warning(format!("kube-codegen cannot evaluate `{predicate}` on {what}: it is read as if the condition held"))
                        .at(file.location(span))
                        .help("keep API types out of conditionally compiled items, or generate with the CLI for each configuration"),
                );
            }
            Cfg::True => {}
        }
        if let syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) = item {
            strip_into(inner, build, file, diags, undecided);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg_of(src: &str) -> Cfg {
        let item: syn::ItemStruct = syn::parse_str(&format!("{src} struct X;")).unwrap();
        of_attrs(&item.attrs, Build::Normal)
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
