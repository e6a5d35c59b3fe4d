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
//! module tree of its `<version>/` package) exactly as the CLI does, once
//! per compilation for all the kinds of the package, and the CRD is the
//! CLI's byte for byte. Generation that fails always leaves a compile error. Every diagnostic comes back with its line and
//! column and is put on the user's token; each error is reported once, by
//! the macro of the type it points into.
//!
//! The spellings are documented in `docs/markers.md`, the modes in
//! `docs/modes.md`.
#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use codegen_core::inline::{self, Analysis, Failure};
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

/// The engine's verdict on one package, shared by every macro of it.
type Verdict = Arc<Result<Analysis, Failure>>;

/// One cached analysis and the state of the files it read.
struct Cached {
    stamps: Vec<(PathBuf, Option<(u64, SystemTime)>)>,
    verdict: Verdict,
}

/// Analyses by package (and compiling crate): rustc loads a proc-macro crate
/// once per compilation, so every kind of a package is served by one
/// analysis. A long-lived host (an IDE's macro server) sees a changed file
/// through the stamps and analyses again.
static CACHE: Mutex<BTreeMap<(PathBuf, Option<std::ffi::OsString>), Cached>> = Mutex::new(BTreeMap::new());

fn stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The analysis of the package of `file`, from the cache while none of its
/// files changed.
fn analyze(file: &Path) -> Verdict {
    let key = (inline::package_key(file), std::env::var_os("CARGO_MANIFEST_DIR"));
    // A panic while the lock was held is already turned into a `Failure`;
    // the map itself is consistent, so a poisoned lock is taken over.
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = cache.get(&key)
        && c.stamps.iter().all(|(p, s)| stamp(p) == *s)
    {
        return c.verdict.clone();
    }
    let verdict = Arc::new(guarded(file, || inline::analyze(file, RUNTIME)));
    let inputs = match &*verdict {
        Ok(a) => &a.inputs,
        Err(f) => &f.inputs,
    };
    let stamps = inputs.iter().map(|p| (p.clone(), stamp(p))).collect();
    cache.insert(key, Cached { stamps, verdict: verdict.clone() });
    verdict
}

/// Runs the engine. The engine parses the files itself, so proc-macro2 is
/// switched to its own (fallback) implementation meanwhile: that gives real
/// line/column positions in those files, where the compiler's parser would
/// give every token the call site's span. A panic becomes a [`Failure`]
/// that the macro reports: it never turns into stubs without an error.
fn guarded(file: &Path, run: impl FnOnce() -> Result<Analysis, Failure> + Send) -> Result<Analysis, Failure> {
    proc_macro2::fallback::force();
    // On a thread with a large stack: syn recurses once per level of
    // nesting in the package's files.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| codegen_core::on_big_stack(run)));
    proc_macro2::fallback::unforce();
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Err(Failure {
            reason: format!(
                "kube-codegen panicked while analysing the package of `{}`: {what}\n\n= note: this is a bug in kube-codegen; please report it with the types of this package",
                file.display()
            ),
            inputs: inline::package_of(file).1,
        })
    })
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
    // Two printer columns of one type repeat `type = "string"` in the
    // kind's `#[resource]` attributes, which clippy's duplicated_attributes
    // takes for a mistake.
    let item = quote!(#[allow(clippy::duplicated_attributes)] #item);
    let name = strukt.ident.to_string();
    let stubs = || parse_code(&inline::stub_code(&name, RUNTIME));
    let Some(file) = source_file() else {
        if parsed.version.is_none() {
            return item.into();
        }
        let e = syn::Error::new(
            strukt.ident.span(),
            "macro mode needs the path of this source file, and the compiler did not give it\n\n= help: generate the code with kube-codegen or build.rs instead (docs/modes.md)",
        )
        .to_compile_error();
        let stubs = stubs();
        return quote!(#e #item #stubs).into();
    };
    let verdict = analyze(&file);
    let analysis = match &*verdict {
        Ok(a) => a,
        // Outside macro mode the compiler reports what does not parse.
        Err(_) if parsed.version.is_none() => return item.into(),
        Err(failure) => {
            let e = syn::Error::new(strukt.ident.span(), &failure.reason).to_compile_error();
            let stubs = stubs();
            return quote!(#e #item #stubs).into();
        }
    };
    let tokens = [&args, &item];
    let mut errors: Vec<syn::Error> =
        analysis.errors_of(&name).map(|d| to_error(d, &tokens, strukt.ident.span())).collect();
    if analysis.is_first_root(&name) {
        errors.extend(analysis.orphan_errors().map(|d| to_error(d, &tokens, strukt.ident.span())));
    }
    if parsed.version.is_some()
        && !analysis.items.iter().any(|i| i.name == name)
        && let Some(why) = analysis.not_generated(&name, MAX_LISTED)
    {
        let e = syn::Error::new(strukt.ident.span(), why).to_compile_error();
        let stubs = stubs();
        return quote!(#e #item #stubs).into();
    }
    if !analysis.inline {
        let errors = combine(errors).map(|e| e.to_compile_error());
        return quote!(#errors #item).into();
    }
    match analysis.kinds.get(&name) {
        Some(kind) if errors.is_empty() => {
            let code = parse_code(&kind.code);
            quote!(#item #code).into()
        }
        _ => {
            if errors.is_empty()
                && let Some(why) = analysis.not_generated(&name, MAX_LISTED)
            {
                errors.push(syn::Error::new(strukt.ident.span(), why));
            }
            let errors = combine(errors).map(|e| e.to_compile_error());
            let stubs = stubs();
            quote!(#errors #item #stubs).into()
        }
    }
}

/// How many of the errors that keep a kind from being generated its
/// message lists.
const MAX_LISTED: usize = 5;

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
    let verdict = source_file().map(|f| analyze(&f));
    // A package that cannot be read is reported by its `#[genclient]` kinds
    // (macro mode needs one).
    let Some(Ok(analysis)) = verdict.as_deref().filter(|v| v.as_ref().is_ok_and(|a| a.inline)) else {
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
    let is_kind = analysis.items.iter().any(|i| i.name == name && i.resource);
    let code = match analysis.kinds.get(&name) {
        Some(kind) if errors.is_empty() => parse_code(&kind.code),
        _ => {
            if is_kind
                && errors.is_empty()
                && let Some(why) = analysis.not_generated(&name, MAX_LISTED)
            {
                errors.push(syn::Error::new(input.ident.span(), why));
            }
            proc_macro2::TokenStream::new()
        }
    };
    let errors = combine(errors).map(|e| e.to_compile_error());
    quote!(#errors #code).into()
}

/// One RBAC rule the marked code needs (kubebuilder's
/// `+kubebuilder:rbac`): `kube-codegen rbac` collects every `#[rbac(...)]`
/// of the controller's sources into `config/rbac/role.yaml`. Lists are
/// `;`-separated; `groups = ""` is the core group.
///
/// ```ignore
/// #[codegen_macros::rbac(groups = "", resources = "configmaps", verbs = "get;list;watch;create;patch")]
/// #[codegen_macros::rbac(groups = "example.k8s.io", resources = "students/status", verbs = "patch")]
/// async fn reconcile(/* ... */) {}
/// ```
///
/// Keys: `groups`, `resources` (subresources as `resource/subresource`),
/// `verbs`, `resource_names`, `urls` (non-resource URLs) and `namespace`
/// (a Role in that namespace instead of the ClusterRole). The item is
/// left as it is; a malformed marker is a compile error.
#[proc_macro_attribute]
pub fn rbac(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = proc_macro2::TokenStream::from(args);
    let item = proc_macro2::TokenStream::from(item);
    let errors = match markers::parse_rbac_args(args.clone(), args.span()) {
        Ok(_) => proc_macro2::TokenStream::new(),
        Err(errors) => errors_to_tokens(&errors),
    };
    quote!(#errors #item).into()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_engine_is_a_failure_with_the_reason() {
        let file = Path::new("src/apis/example/v1/types.rs");
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let verdict = guarded(file, || panic!("index out of bounds: the len is 0 but the index is 3"));
        let formatted = guarded(file, || panic!("{} went wrong", "schema"));
        std::panic::set_hook(previous);
        let failure = verdict.expect_err("a panic is a failure");
        assert!(failure.reason.contains("kube-codegen panicked"), "{}", failure.reason);
        assert!(failure.reason.contains("the len is 0 but the index is 3"), "{}", failure.reason);
        assert!(failure.reason.contains("this is a bug"), "{}", failure.reason);
        assert!(formatted.expect_err("a panic is a failure").reason.contains("schema went wrong"));
    }

    #[test]
    fn a_successful_engine_passes_through() {
        let verdict = guarded(Path::new("x.rs"), || Ok(Analysis { inline: true, ..Analysis::default() }));
        assert!(verdict.is_ok_and(|a| a.inline));
    }

    #[test]
    fn an_unchanged_package_is_analysed_once_and_a_changed_one_again() {
        let dir = std::env::temp_dir().join(format!("kube-codegen-macro-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("types.rs");
        let source = |group: &str| {
            format!(
                "use kube::core::TypeMeta;\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n#[genclient(group = \"{group}\", version = \"v1\")]\n#[derive(Clone, ApiType)]\npub struct Foo {{ #[serde(flatten)] pub types: TypeMeta, pub metadata: ObjectMeta, pub spec: FooSpec }}\n#[derive(Clone, ApiType)]\npub struct FooSpec {{ pub size: i32 }}\n"
            )
        };
        std::fs::write(&file, source("a.example.com")).unwrap();
        let first = analyze(&file);
        let second = analyze(&file);
        assert!(Arc::ptr_eq(&first, &second), "the second kind of a package reuses the analysis");
        let crd = |v: &Verdict| {
            let a = v.as_ref().as_ref().unwrap();
            a.kinds.get("Foo").map(|k| k.crd_yaml.clone()).unwrap_or_else(|| format!("{:?}", a.diagnostics))
        };
        assert!(crd(&first).contains("group: a.example.com"), "{}", crd(&first));
        // A different length changes the stamp even within the clock's resolution.
        std::fs::write(&file, source("bb.example.com")).unwrap();
        let third = analyze(&file);
        assert!(!Arc::ptr_eq(&first, &third), "a changed file is analysed again");
        assert!(crd(&third).contains("group: bb.example.com"), "{}", crd(&third));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
