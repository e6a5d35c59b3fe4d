//! kube-codegen markers as real Rust attributes, and the macro mode that runs
//! the codegen-core engine inline in a user's crate.
//!
//! **CLI mode** (types under `<apis>/<group>/<version>/`, no `version` in
//! `#[genclient]`): the markers expand to the item unchanged (plus
//! `GROUP_NAME` for [`group_name!`]); they are checked with codegen-core's
//! marker parser, the one the CLI uses, so a misspelled marker is a compile
//! error with a "did you mean".
//!
//! **Macro mode** (`#[genclient(group = "..", version = "..")]`): the
//! attribute also emits, beside the type, everything the kind needs — the
//! `kube::Resource` impls and list type, a typed client, lister and informer
//! accessors, and `crd()` / `CRD_YAML`. A proc macro sees one item, but a CRD
//! needs the nested types' schemas, so the macro hands codegen-core the path
//! of the file the kind is written in; the engine reads that file (or the
//! files of its `<version>/` directory) exactly as the CLI does, and the CRD
//! is the CLI's byte for byte. Every diagnostic comes back with its line and
//! column and is put on the user's token; each error is reported once, by
//! the macro of the type it points into.
//!
//! The spellings are documented in `docs/markers.md`, the modes in
//! `docs/modes.md`.
#![deny(missing_docs)]

use std::path::PathBuf;
use std::str::FromStr;

use codegen_core::emit::inline::{self, Analysis};
use codegen_core::{Diagnostic, markers};
use proc_macro::TokenStream;
use proc_macro2::{Span, TokenTree};
use quote::quote;
use syn::spanned::Spanned;

/// The runtime path generated code uses.
const RUNTIME: &str = "::codegen_runtime";

fn errors_to_tokens(errors: &[markers::MarkerError]) -> proc_macro2::TokenStream {
    markers::to_syn_error(errors).map(|e| e.to_compile_error()).unwrap_or_default()
}

/// The file the macro was invoked in, if the compiler says.
fn source_file() -> Option<PathBuf> {
    Span::call_site().local_file()
}

/// Runs the engine over the package of `file`. The engine parses the files
/// itself, so proc-macro2 is switched to its own (fallback) implementation
/// meanwhile: that gives real line/column positions in those files, where the
/// compiler's parser would give every token the call site's span.
fn analyze(file: &std::path::Path) -> Option<Analysis> {
    proc_macro2::fallback::force();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inline::analyze(file, RUNTIME)));
    proc_macro2::fallback::unforce();
    result.ok().flatten()
}

/// The token of `tokens` starting at `line`:`column` (0-based column).
fn find_token(tokens: proc_macro2::TokenStream, line: usize, column: usize) -> Option<Span> {
    for tt in tokens {
        let start = tt.span().start();
        if start.line == line && start.column == column {
            return Some(match &tt {
                TokenTree::Group(g) => g.span_open(),
                other => other.span(),
            });
        }
        if let TokenTree::Group(g) = tt
            && let Some(span) = find_token(g.stream(), line, column)
        {
            return Some(span);
        }
    }
    None
}

/// A diagnostic as a compile error on the user's token (or on `fallback`).
fn to_error(d: &Diagnostic, tokens: &[&proc_macro2::TokenStream], fallback: Span) -> syn::Error {
    let found =
        d.location.as_ref().and_then(|l| tokens.iter().find_map(|t| find_token((*t).clone(), l.line, l.column)));
    let mut message = d.message.clone();
    if let (None, Some(l)) = (found, &d.location) {
        message.push_str(&format!("\n\n= note: at {}:{}:{}", l.file.display(), l.line, l.column + 1));
    }
    for note in &d.notes {
        message.push_str(&format!("\n\n= note: {note}"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\n\n= help: {help}"));
    }
    syn::Error::new(found.unwrap_or(fallback), message)
}

fn combine(errors: impl IntoIterator<Item = syn::Error>) -> Option<syn::Error> {
    errors.into_iter().reduce(|mut a, b| {
        a.combine(b);
        a
    })
}

fn parse_code(code: &str) -> proc_macro2::TokenStream {
    proc_macro2::TokenStream::from_str(code).unwrap_or_else(|e| {
        syn::Error::new(
            Span::call_site(),
            format!("kube-codegen generated code that does not parse ({e}); this is a bug"),
        )
        .to_compile_error()
    })
}

/// Marks a root type for client generation (Go's `// +genclient`).
///
/// Arguments (all optional): `no_status`, `cluster_scoped` (alias
/// `non_namespaced`), `no_verbs`, `only_verbs(get, list, ..)`,
/// `skip_verbs(..)`, `readonly`, `method(name = "..", verb = "..",
/// subresource = "..", input = "..", result = "..")`, `group = ".."`,
/// `version = ".."`.
///
/// With `version` (macro mode) the kind's code is generated right here:
/// `Kind::crd()`, `Kind::CRD_YAML`, `Kind::client(..)`, `Kind::informer(..)`,
/// `KindList`, `KindClient`, `KindLister`, `KindInformer`, `Kind::new(..)`.
///
/// ```ignore
/// #[genclient(group = "auth.ilinux.io", version = "v1beta1", no_status)]
/// #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]
/// pub struct User { /* types, metadata, spec */ }
/// ```
#[proc_macro_attribute]
pub fn genclient(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = proc_macro2::TokenStream::from(args);
    let item = proc_macro2::TokenStream::from(item);
    let parsed = match markers::parse_genclient_args(args.clone(), args.span()) {
        Ok(g) => g,
        // The item is always emitted so a marker error does not cascade into
        // "cannot find type" errors elsewhere.
        Err(e) => {
            let errors = errors_to_tokens(&e);
            return quote!(#errors #item).into();
        }
    };
    let strukt = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Struct(s)) => s,
        Ok(other) => {
            let e = syn::Error::new(
                other.span(),
                "`#[genclient]` goes on the struct of a kind (a root type with `metadata`)",
            )
            .to_compile_error();
            return quote!(#e #item).into();
        }
        Err(_) => return item.into(),
    };
    let name = strukt.ident.to_string();
    let stubs = || parse_code(&inline::stub_code(&name, RUNTIME));
    let Some(file) = source_file() else {
        if parsed.version.is_none() {
            return item.into();
        }
        let e = syn::Error::new(
            strukt.ident.span(),
            "macro mode needs the path of this source file, and the compiler did not give it\n\n= help: build with cargo (paths must not be remapped), or generate the code with kube-codegen or build.rs (docs/modes.md)",
        )
        .to_compile_error();
        let stubs = stubs();
        return quote!(#e #item #stubs).into();
    };
    let Some(analysis) = analyze(&file) else {
        // The package does not parse: the compiler reports why.
        return if parsed.version.is_some() {
            let stubs = stubs();
            quote!(#item #stubs).into()
        } else {
            item.into()
        };
    };
    let tokens = [&args, &item];
    let mut errors: Vec<syn::Error> =
        analysis.errors_of(&name).map(|d| to_error(d, &tokens, strukt.ident.span())).collect();
    if analysis.is_first_root(&name) {
        errors.extend(analysis.orphan_errors().map(|d| to_error(d, &tokens, strukt.ident.span())));
    }
    let errors = combine(errors).map(|e| e.to_compile_error());
    if !analysis.inline {
        return quote!(#errors #item).into();
    }
    match (&errors, analysis.kinds.get(&name)) {
        (None, Some(kind)) => {
            let code = parse_code(&kind.code);
            quote!(#item #code).into()
        }
        _ => {
            let stubs = stubs();
            quote!(#errors #item #stubs).into()
        }
    }
}

/// Declares an API type (root or nested) and carries its markers:
/// `#[resource(..)]` on root types (CRD names, scope, versions,
/// subresources, printer columns) and `#[validate(..)]` on fields or types.
///
/// Every marker is checked at compile time. In macro mode the derive also
/// reports every schema problem of its type (a field type with no schema, a
/// marker that does not fit the field, a structural-schema violation) at the
/// field or marker; a kind with `#[resource]` but no `#[genclient]` gets its
/// `kube::Resource` impls and `crd()` from here.
#[proc_macro_derive(ApiType, attributes(resource, validate))]
pub fn derive_api_type(input: TokenStream) -> TokenStream {
    let tokens = proc_macro2::TokenStream::from(input);
    let input = match syn::parse2::<syn::DeriveInput>(tokens.clone()) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error().into(),
    };
    let local = markers::check_derive_input(&input).err().unwrap_or_default();
    let analysis = source_file().and_then(|f| analyze(&f)).filter(|a| a.inline);
    let Some(analysis) = analysis else {
        return errors_to_tokens(&local).into();
    };
    let name = input.ident.to_string();
    if analysis.items.iter().any(|i| i.name == name && i.genclient) {
        // `#[genclient]` reports this type's errors and generates its code.
        return TokenStream::new();
    }
    let mut errors: Vec<syn::Error> =
        analysis.errors_of(&name).map(|d| to_error(d, &[&tokens], input.ident.span())).collect();
    // Marker errors the engine does not see (e.g. `#[resource]` on a field).
    let seen: Vec<(usize, usize, String)> = analysis
        .errors_of(&name)
        .filter_map(|d| d.location.as_ref().map(|l| (l.line, l.column, d.message.clone())))
        .collect();
    for e in &local {
        let start = e.span.start();
        if !seen.iter().any(|(l, c, m)| *l == start.line && *c == start.column && *m == e.message) {
            errors.push(e.to_syn_error());
        }
    }
    let errors = combine(errors).map(|e| e.to_compile_error());
    let code = match (&errors, analysis.kinds.get(&name)) {
        (None, Some(kind)) => parse_code(&kind.code),
        _ => proc_macro2::TokenStream::new(),
    };
    quote!(#errors #code).into()
}

/// The API group of a version module (Go's `// +groupName=` in doc.go).
/// Expands to `pub const GROUP_NAME: &str = "<group>";`.
///
/// ```ignore
/// codegen_macros::group_name!("example.k8s.io");
/// ```
#[proc_macro]
pub fn group_name(input: TokenStream) -> TokenStream {
    match markers::parse_group_name(input.into()) {
        Ok(group) => {
            let value = group.value;
            quote! {
                /// The API group of this version module.
                pub const GROUP_NAME: &str = #value;
            }
            .into()
        }
        Err(errors) => {
            let errors = errors_to_tokens(&errors);
            quote! {
                #errors
                /// The API group of this version module.
                pub const GROUP_NAME: &str = "";
            }
            .into()
        }
    }
}
